/* ================================================================ rANS, 32 ways (coder 3)
 * Twins of dq__r32_get__scalar and dq__r32_encode__scalar (dqsgd.h). The 32 states are 8 SSE2
 * vectors or 4 AVX2 vectors; a group of 32 symbols is one step of every state. A decoder group
 * reads at most 32 words (64 bytes) and an encoder group writes at most 64 bytes, so the vector
 * loops run while that much is left and hand the rest (and any group a call starts or ends in
 * the middle of) to the scalar twin, which carries the same state: the bytes out are the same
 * for every input, corrupt or not. Renormalization moves the words of the lanes that need one,
 * in increasing lane order: the decoder expands consecutive words into those lanes, the encoder
 * compresses those lanes' low halves into consecutive words, with these tables:
 *   dq__r32_exp8[m]: for lane i (3 bits at 3i) the rank of i among the set bits of m below i;
 *   dq__r32_cmp8[m]: right-justified compress: position p (3 bits at 3p) takes lane number
 *                    k-th set bit of m, k = p - (8 - popcount m), for p >= 8 - popcount m;
 *   dq__r32_pop8[m]: popcount of m. */
#ifdef __cplusplus
extern "C" {
#endif
#if DQ__HAS_SSE2_KERNELS
static const uint32_t dq__r32_exp8[128] = { /* bit 7 of m is below no lane: index m & 127 */
    0x000000u, 0x249248u, 0x249240u, 0x492488u, 0x249200u, 0x492448u, 0x492440u, 0x6DB688u,
    0x249000u, 0x492248u, 0x492240u, 0x6DB488u, 0x492200u, 0x6DB448u, 0x6DB440u, 0x924688u,
    0x248000u, 0x491248u, 0x491240u, 0x6DA488u, 0x491200u, 0x6DA448u, 0x6DA440u, 0x923688u,
    0x491000u, 0x6DA248u, 0x6DA240u, 0x923488u, 0x6DA200u, 0x923448u, 0x923440u, 0xB6C688u,
    0x240000u, 0x489248u, 0x489240u, 0x6D2488u, 0x489200u, 0x6D2448u, 0x6D2440u, 0x91B688u,
    0x489000u, 0x6D2248u, 0x6D2240u, 0x91B488u, 0x6D2200u, 0x91B448u, 0x91B440u, 0xB64688u,
    0x488000u, 0x6D1248u, 0x6D1240u, 0x91A488u, 0x6D1200u, 0x91A448u, 0x91A440u, 0xB63688u,
    0x6D1000u, 0x91A248u, 0x91A240u, 0xB63488u, 0x91A200u, 0xB63448u, 0xB63440u, 0xDAC688u,
    0x200000u, 0x449248u, 0x449240u, 0x692488u, 0x449200u, 0x692448u, 0x692440u, 0x8DB688u,
    0x449000u, 0x692248u, 0x692240u, 0x8DB488u, 0x692200u, 0x8DB448u, 0x8DB440u, 0xB24688u,
    0x448000u, 0x691248u, 0x691240u, 0x8DA488u, 0x691200u, 0x8DA448u, 0x8DA440u, 0xB23688u,
    0x691000u, 0x8DA248u, 0x8DA240u, 0xB23488u, 0x8DA200u, 0xB23448u, 0xB23440u, 0xD6C688u,
    0x440000u, 0x689248u, 0x689240u, 0x8D2488u, 0x689200u, 0x8D2448u, 0x8D2440u, 0xB1B688u,
    0x689000u, 0x8D2248u, 0x8D2240u, 0xB1B488u, 0x8D2200u, 0xB1B448u, 0xB1B440u, 0xD64688u,
    0x688000u, 0x8D1248u, 0x8D1240u, 0xB1A488u, 0x8D1200u, 0xB1A448u, 0xB1A440u, 0xD63688u,
    0x8D1000u, 0xB1A248u, 0xB1A240u, 0xD63488u, 0xB1A200u, 0xD63448u, 0xD63440u, 0xFAC688u,
};
static const uint8_t dq__r32_pop8[256] = {
    0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 1, 2, 2, 3, 2, 3, 3, 4, 2, 3, 3, 4, 3, 4, 4, 5,
    1, 2, 2, 3, 2, 3, 3, 4, 2, 3, 3, 4, 3, 4, 4, 5, 2, 3, 3, 4, 3, 4, 4, 5, 3, 4, 4, 5, 4, 5, 5, 6,
    1, 2, 2, 3, 2, 3, 3, 4, 2, 3, 3, 4, 3, 4, 4, 5, 2, 3, 3, 4, 3, 4, 4, 5, 3, 4, 4, 5, 4, 5, 5, 6,
    2, 3, 3, 4, 3, 4, 4, 5, 3, 4, 4, 5, 4, 5, 5, 6, 3, 4, 4, 5, 4, 5, 5, 6, 4, 5, 5, 6, 5, 6, 6, 7,
    1, 2, 2, 3, 2, 3, 3, 4, 2, 3, 3, 4, 3, 4, 4, 5, 2, 3, 3, 4, 3, 4, 4, 5, 3, 4, 4, 5, 4, 5, 5, 6,
    2, 3, 3, 4, 3, 4, 4, 5, 3, 4, 4, 5, 4, 5, 5, 6, 3, 4, 4, 5, 4, 5, 5, 6, 4, 5, 5, 6, 5, 6, 6, 7,
    2, 3, 3, 4, 3, 4, 4, 5, 3, 4, 4, 5, 4, 5, 5, 6, 3, 4, 4, 5, 4, 5, 5, 6, 4, 5, 5, 6, 5, 6, 6, 7,
    3, 4, 4, 5, 4, 5, 5, 6, 4, 5, 5, 6, 5, 6, 6, 7, 4, 5, 5, 6, 5, 6, 6, 7, 5, 6, 6, 7, 6, 7, 7, 8,
};

/* 4 lanes: x = f (x >> 12) + bias from the table entries, then the renormalization of the
 * lanes that fell below 2^16 (words loaded one per lane at their rank; in the vector loop at
 * least 8 bytes are readable past p). Returns the symbols in the low byte of each lane. */
static inline simde__m128i dq__r32_step__sse2(simde__m128i *xp, const uint32_t *tab, const uint8_t **pp) {
    const simde__m128i m12 = simde_mm_set1_epi32(0xFFF), zero = simde_mm_setzero_si128();
    simde__m128i x = *xp, e, f, need, wv;
    uint32_t sl[4], r;
    const uint8_t *p = *pp;
    unsigned mask;
    simde_mm_storeu_si128((simde__m128i *)sl, simde_mm_and_si128(x, m12));
    e = simde_mm_setr_epi32((int32_t)tab[sl[0]], (int32_t)tab[sl[1]], (int32_t)tab[sl[2]], (int32_t)tab[sl[3]]);
    f = simde_mm_add_epi32(simde_mm_and_si128(simde_mm_srli_epi32(e, 8), m12), simde_mm_set1_epi32(1));
    x = dq__mullo__sse2(f, simde_mm_srli_epi32(x, 12));
    x = simde_mm_add_epi32(x, simde_mm_srli_epi32(e, 20));
    need = simde_mm_cmpeq_epi32(simde_mm_srli_epi32(x, 16), zero);
    mask = (unsigned)simde_mm_movemask_ps(simde_mm_castsi128_ps(need));
    r = dq__r32_exp8[mask & 127u];
    wv = simde_mm_setr_epi32((int32_t)dq__ld16(p + 2u * (r & 7u)), (int32_t)dq__ld16(p + 2u * (r >> 3 & 7u)),
                             (int32_t)dq__ld16(p + 2u * (r >> 6 & 7u)), (int32_t)dq__ld16(p + 2u * (r >> 9 & 7u)));
    wv = simde_mm_or_si128(simde_mm_slli_epi32(x, 16), wv);
    *xp = simde_mm_or_si128(simde_mm_and_si128(need, wv), simde_mm_andnot_si128(need, x));
    *pp = p + 2u * dq__r32_pop8[mask];
    return simde_mm_and_si128(e, simde_mm_set1_epi32(0xFF));
}
static inline void dq__r32_get__sse2(dq__r32_dec *d, const uint32_t *tab, uint8_t *out, size_t cnt) {
    size_t i = 0, head = (DQ__R32_WAYS - d->j % DQ__R32_WAYS) % DQ__R32_WAYS;
    if (head) {
        i = head < cnt ? head : cnt;
        dq__r32_get__scalar(d, tab, out, i);
    }
    if (cnt - i >= DQ__R32_WAYS && d->end - d->p >= 64) {
        simde__m128i x[8], s[8];
        const uint8_t *p = d->p;
        size_t i0 = i;
        unsigned k;
        for (k = 0; k < 8; k++) x[k] = simde_mm_loadu_si128((const simde__m128i *)(d->x + 4u * k));
        for (; cnt - i >= DQ__R32_WAYS && d->end - p >= 64; i += DQ__R32_WAYS) {
            for (k = 0; k < 8; k++) s[k] = dq__r32_step__sse2(x + k, tab, &p);
            for (k = 0; k < 2; k++) {
                simde__m128i a = simde_mm_packs_epi32(s[4 * k], s[4 * k + 1]);
                simde__m128i b = simde_mm_packs_epi32(s[4 * k + 2], s[4 * k + 3]);
                simde_mm_storeu_si128((simde__m128i *)(out + i + 16u * k), simde_mm_packus_epi16(a, b));
            }
        }
        for (k = 0; k < 8; k++) simde_mm_storeu_si128((simde__m128i *)(d->x + 4u * k), x[k]);
        d->p = p;
        d->j += i - i0;
    }
    dq__r32_get__scalar(d, tab, out + i, cnt - i);
}
#endif /* SSE2 */

#if DQ__HAS_AVX2_KERNELS
static const uint32_t dq__r32_cmp8[256] = {
    0x000000u, 0x000000u, 0x200000u, 0x200000u, 0x400000u, 0x400000u, 0x440000u, 0x440000u,
    0x600000u, 0x600000u, 0x640000u, 0x640000u, 0x680000u, 0x680000u, 0x688000u, 0x688000u,
    0x800000u, 0x800000u, 0x840000u, 0x840000u, 0x880000u, 0x880000u, 0x888000u, 0x888000u,
    0x8C0000u, 0x8C0000u, 0x8C8000u, 0x8C8000u, 0x8D0000u, 0x8D0000u, 0x8D1000u, 0x8D1000u,
    0xA00000u, 0xA00000u, 0xA40000u, 0xA40000u, 0xA80000u, 0xA80000u, 0xA88000u, 0xA88000u,
    0xAC0000u, 0xAC0000u, 0xAC8000u, 0xAC8000u, 0xAD0000u, 0xAD0000u, 0xAD1000u, 0xAD1000u,
    0xB00000u, 0xB00000u, 0xB08000u, 0xB08000u, 0xB10000u, 0xB10000u, 0xB11000u, 0xB11000u,
    0xB18000u, 0xB18000u, 0xB19000u, 0xB19000u, 0xB1A000u, 0xB1A000u, 0xB1A200u, 0xB1A200u,
    0xC00000u, 0xC00000u, 0xC40000u, 0xC40000u, 0xC80000u, 0xC80000u, 0xC88000u, 0xC88000u,
    0xCC0000u, 0xCC0000u, 0xCC8000u, 0xCC8000u, 0xCD0000u, 0xCD0000u, 0xCD1000u, 0xCD1000u,
    0xD00000u, 0xD00000u, 0xD08000u, 0xD08000u, 0xD10000u, 0xD10000u, 0xD11000u, 0xD11000u,
    0xD18000u, 0xD18000u, 0xD19000u, 0xD19000u, 0xD1A000u, 0xD1A000u, 0xD1A200u, 0xD1A200u,
    0xD40000u, 0xD40000u, 0xD48000u, 0xD48000u, 0xD50000u, 0xD50000u, 0xD51000u, 0xD51000u,
    0xD58000u, 0xD58000u, 0xD59000u, 0xD59000u, 0xD5A000u, 0xD5A000u, 0xD5A200u, 0xD5A200u,
    0xD60000u, 0xD60000u, 0xD61000u, 0xD61000u, 0xD62000u, 0xD62000u, 0xD62200u, 0xD62200u,
    0xD63000u, 0xD63000u, 0xD63200u, 0xD63200u, 0xD63400u, 0xD63400u, 0xD63440u, 0xD63440u,
    0xE00000u, 0xE00000u, 0xE40000u, 0xE40000u, 0xE80000u, 0xE80000u, 0xE88000u, 0xE88000u,
    0xEC0000u, 0xEC0000u, 0xEC8000u, 0xEC8000u, 0xED0000u, 0xED0000u, 0xED1000u, 0xED1000u,
    0xF00000u, 0xF00000u, 0xF08000u, 0xF08000u, 0xF10000u, 0xF10000u, 0xF11000u, 0xF11000u,
    0xF18000u, 0xF18000u, 0xF19000u, 0xF19000u, 0xF1A000u, 0xF1A000u, 0xF1A200u, 0xF1A200u,
    0xF40000u, 0xF40000u, 0xF48000u, 0xF48000u, 0xF50000u, 0xF50000u, 0xF51000u, 0xF51000u,
    0xF58000u, 0xF58000u, 0xF59000u, 0xF59000u, 0xF5A000u, 0xF5A000u, 0xF5A200u, 0xF5A200u,
    0xF60000u, 0xF60000u, 0xF61000u, 0xF61000u, 0xF62000u, 0xF62000u, 0xF62200u, 0xF62200u,
    0xF63000u, 0xF63000u, 0xF63200u, 0xF63200u, 0xF63400u, 0xF63400u, 0xF63440u, 0xF63440u,
    0xF80000u, 0xF80000u, 0xF88000u, 0xF88000u, 0xF90000u, 0xF90000u, 0xF91000u, 0xF91000u,
    0xF98000u, 0xF98000u, 0xF99000u, 0xF99000u, 0xF9A000u, 0xF9A000u, 0xF9A200u, 0xF9A200u,
    0xFA0000u, 0xFA0000u, 0xFA1000u, 0xFA1000u, 0xFA2000u, 0xFA2000u, 0xFA2200u, 0xFA2200u,
    0xFA3000u, 0xFA3000u, 0xFA3200u, 0xFA3200u, 0xFA3400u, 0xFA3400u, 0xFA3440u, 0xFA3440u,
    0xFA8000u, 0xFA8000u, 0xFA9000u, 0xFA9000u, 0xFAA000u, 0xFAA000u, 0xFAA200u, 0xFAA200u,
    0xFAB000u, 0xFAB000u, 0xFAB200u, 0xFAB200u, 0xFAB400u, 0xFAB400u, 0xFAB440u, 0xFAB440u,
    0xFAC000u, 0xFAC000u, 0xFAC200u, 0xFAC200u, 0xFAC400u, 0xFAC400u, 0xFAC440u, 0xFAC440u,
    0xFAC600u, 0xFAC600u, 0xFAC640u, 0xFAC640u, 0xFAC680u, 0xFAC680u, 0xFAC688u, 0xFAC688u,
};

/* 8 lanes of the decoder: as dq__r32_step__sse2 with a gather, and the words of the lanes that
 * need one expanded from 8 consecutive words (16 bytes readable at p in the vector loop). */
static inline simde__m256i dq__r32_step__avx2(simde__m256i *xp, const uint32_t *tab, const uint8_t **pp) {
    const simde__m256i m12 = simde_mm256_set1_epi32(0xFFF);
    const simde__m256i sh3 = simde_mm256_setr_epi32(0, 3, 6, 9, 12, 15, 18, 21);
    simde__m256i x = *xp, e, f, need, wv, idx;
    const uint8_t *p = *pp;
    unsigned mask;
    e = simde_mm256_i32gather_epi32((const int32_t *)tab, simde_mm256_and_si256(x, m12), 4);
    f = simde_mm256_add_epi32(simde_mm256_and_si256(simde_mm256_srli_epi32(e, 8), m12), simde_mm256_set1_epi32(1));
    x = simde_mm256_mullo_epi32(f, simde_mm256_srli_epi32(x, 12));
    x = simde_mm256_add_epi32(x, simde_mm256_srli_epi32(e, 20));
    need = simde_mm256_cmpeq_epi32(simde_mm256_srli_epi32(x, 16), simde_mm256_setzero_si256());
    mask = (unsigned)simde_mm256_movemask_ps(simde_mm256_castsi256_ps(need));
    wv = simde_mm256_cvtepu16_epi32(simde_mm_loadu_si128((const simde__m128i *)p));
    idx = simde_mm256_srlv_epi32(simde_mm256_set1_epi32((int32_t)dq__r32_exp8[mask & 127u]), sh3);
    wv = simde_mm256_or_si256(simde_mm256_slli_epi32(x, 16), simde_mm256_permutevar8x32_epi32(wv, idx));
    *xp = simde_mm256_blendv_epi8(x, wv, need);
    *pp = p + 2u * dq__r32_pop8[mask];
    return simde_mm256_and_si256(e, simde_mm256_set1_epi32(0xFF));
}
/* The 32-state decoder loop over a step kernel (four 8-lane states a round, the scalar twin for
 * the head and tail); one definition for every ISA's step. */
#define DQ__R32_GET_DEF(name, step)                                                                  \
    static inline void name(dq__r32_dec *d, const uint32_t *tab, uint8_t *out, size_t cnt) { \
        size_t i = 0, head = (DQ__R32_WAYS - d->j % DQ__R32_WAYS) % DQ__R32_WAYS; \
        if (head) { \
            i = head < cnt ? head : cnt; \
            dq__r32_get__scalar(d, tab, out, i); \
        } \
        if (cnt - i >= DQ__R32_WAYS && d->end - d->p >= 64) { \
            const simde__m256i order = simde_mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7); \
            simde__m256i x0 = simde_mm256_loadu_si256((const simde__m256i *)d->x); \
            simde__m256i x1 = simde_mm256_loadu_si256((const simde__m256i *)(d->x + 8)); \
            simde__m256i x2 = simde_mm256_loadu_si256((const simde__m256i *)(d->x + 16)); \
            simde__m256i x3 = simde_mm256_loadu_si256((const simde__m256i *)(d->x + 24)); \
            const uint8_t *p = d->p; \
            size_t i0 = i; \
            for (; cnt - i >= DQ__R32_WAYS && d->end - p >= 64; i += DQ__R32_WAYS) { \
                simde__m256i s0 = step(&x0, tab, &p); \
                simde__m256i s1 = step(&x1, tab, &p); \
                simde__m256i s2 = step(&x2, tab, &p); \
                simde__m256i s3 = step(&x3, tab, &p); \
                /* in-lane packs leave dwords s0[0..3] s1[0..3] s2[0..3] s3[0..3] s0[4..7] ...: reorder */ \
                simde__m256i a = simde_mm256_packs_epi32(s0, s1), b = simde_mm256_packs_epi32(s2, s3); \
                a = simde_mm256_permutevar8x32_epi32(simde_mm256_packus_epi16(a, b), order); \
                simde_mm256_storeu_si256((simde__m256i *)(out + i), a); \
            } \
            simde_mm256_storeu_si256((simde__m256i *)d->x, x0); \
            simde_mm256_storeu_si256((simde__m256i *)(d->x + 8), x1); \
            simde_mm256_storeu_si256((simde__m256i *)(d->x + 16), x2); \
            simde_mm256_storeu_si256((simde__m256i *)(d->x + 24), x3); \
            d->p = p; \
            d->j += i - i0; \
        } \
        dq__r32_get__scalar(d, tab, out + i, cnt - i); \
    }
DQ__R32_GET_DEF(dq__r32_get__avx2, dq__r32_step__avx2)

#if DQ__HAS_R32_VL
/* AVX-512VL (256-bit) decoder: as dq__r32_get__avx2, the lanes that need a word found as a
 * mask register and fed by vpexpandd, which takes the movemask, table and permute round trip
 * (the longest part of a state's step) off the chain from one step to the next. */
static inline simde__m256i dq__r32_step__avx512(simde__m256i *xp, const uint32_t *tab, const uint8_t **pp) {
    const simde__m256i m12 = simde_mm256_set1_epi32(0xFFF);
    simde__m256i x = *xp, e, f, wv;
    simde__mmask8 ok;
    e = simde_mm256_i32gather_epi32((const int32_t *)tab, simde_mm256_and_si256(x, m12), 4);
    f = simde_mm256_add_epi32(simde_mm256_and_si256(simde_mm256_srli_epi32(e, 8), m12), simde_mm256_set1_epi32(1));
    x = simde_mm256_mullo_epi32(f, simde_mm256_srli_epi32(x, 12));
    x = simde_mm256_add_epi32(x, simde_mm256_srli_epi32(e, 20));
    ok = simde_mm256_test_epi32_mask(x, simde_mm256_set1_epi32((int32_t)0xFFFF0000u)); /* x >= 2^16 */
    wv = simde_mm256_maskz_expand_epi32((simde__mmask8)~ok,
                                        simde_mm256_cvtepu16_epi32(simde_mm_loadu_si128((const simde__m128i *)*pp)));
    *xp = simde_mm256_mask_mov_epi32(simde_mm256_or_si256(simde_mm256_slli_epi32(x, 16), wv), ok, x);
    *pp += 2u * (8u - dq__r32_pop8[ok]);
    return simde_mm256_and_si256(e, simde_mm256_set1_epi32(0xFF));
}
DQ__R32_GET_DEF(dq__r32_get__avx512, dq__r32_step__avx512)
#endif /* DQ__HAS_R32_VL */

/* 8 lanes of the encoder on symbols sym[0..8): the words of the lanes with x >= f 2^20 go,
 * right-justified in lane order, to the 16 bytes below offset *w (the bytes below the new *w
 * are garbage that later words or the states overwrite); then x = x + q (M - f) + bias. */
static inline void dq__r32_put8__avx2(simde__m256i *xp, const uint8_t *sym, const dq__r32_esym *et, uint8_t *buf,
                                      size_t *w) {
    const simde__m256i sh3 = simde_mm256_setr_epi32(0, 3, 6, 9, 12, 15, 18, 21);
    simde__m256i x = *xp, sv, rcp, info, f, big, wv, t, od, q;
    simde__m128i w16;
    unsigned mask;
    sv = simde_mm256_cvtepu8_epi32(simde_mm_loadl_epi64((const simde__m128i *)sym));
    rcp = simde_mm256_i32gather_epi32((const int32_t *)(const void *)et, sv, 8);
    info = simde_mm256_i32gather_epi32((const int32_t *)(const void *)et + 1, sv, 8);
    f = simde_mm256_and_si256(info, simde_mm256_set1_epi32(0x1FFF));
    big = simde_mm256_cmpgt_epi32(simde_mm256_srli_epi32(x, 20), simde_mm256_sub_epi32(f, simde_mm256_set1_epi32(1)));
    mask = (unsigned)simde_mm256_movemask_ps(simde_mm256_castsi256_ps(big));
    wv = simde_mm256_and_si256(x, simde_mm256_set1_epi32(0xFFFF));
    wv = simde_mm256_permutevar8x32_epi32(
        wv, simde_mm256_srlv_epi32(simde_mm256_set1_epi32((int32_t)dq__r32_cmp8[mask]), sh3));
    w16 = simde_mm_packus_epi32(simde_mm256_castsi256_si128(wv), simde_mm256_extracti128_si256(wv, 1));
    simde_mm_storeu_si128((simde__m128i *)(buf + *w - 16u), w16);
    *w -= 2u * dq__r32_pop8[mask];
    x = simde_mm256_srlv_epi32(x, simde_mm256_and_si256(big, simde_mm256_set1_epi32(16)));
    /* t = (x * rcp) >> 32 per lane: even lanes, then odd lanes, from 32x32->64 products */
    t = simde_mm256_srli_epi64(simde_mm256_mul_epu32(x, rcp), 32);
    od = simde_mm256_mul_epu32(simde_mm256_srli_epi64(x, 32), simde_mm256_srli_epi64(rcp, 32));
    t = simde_mm256_blend_epi32(t, od, 0xAA);
    q = simde_mm256_add_epi32(t, simde_mm256_srli_epi32(simde_mm256_sub_epi32(x, t), 1));
    q = simde_mm256_srlv_epi32(q, simde_mm256_and_si256(simde_mm256_srli_epi32(info, 13), simde_mm256_set1_epi32(15)));
    t = simde_mm256_mullo_epi32(q, simde_mm256_sub_epi32(simde_mm256_set1_epi32(4096), f));
    x = simde_mm256_add_epi32(x, t);
    *xp = simde_mm256_add_epi32(x, simde_mm256_srli_epi32(info, 17));
}
static inline size_t dq__r32_encode__avx2(const uint8_t *sym, size_t m, const dq__r32_esym *et, uint8_t *buf,
                                          size_t cap) {
    uint32_t x[DQ__R32_WAYS];
    size_t w = cap, g = m / DQ__R32_WAYS;
    unsigned k;
    for (k = 0; k < DQ__R32_WAYS; k++) x[k] = DQ__R32_L;
    if (!dq__r32_put_range(x, sym, m, g * DQ__R32_WAYS, et, buf, &w)) return 0;
    if (g && w >= 64) {
        simde__m256i x0 = simde_mm256_loadu_si256((const simde__m256i *)x);
        simde__m256i x1 = simde_mm256_loadu_si256((const simde__m256i *)(x + 8));
        simde__m256i x2 = simde_mm256_loadu_si256((const simde__m256i *)(x + 16));
        simde__m256i x3 = simde_mm256_loadu_si256((const simde__m256i *)(x + 24));
        for (; g && w >= 64; g--) {
            const uint8_t *s = sym + (g - 1u) * DQ__R32_WAYS;
            dq__r32_put8__avx2(&x3, s + 24, et, buf, &w);
            dq__r32_put8__avx2(&x2, s + 16, et, buf, &w);
            dq__r32_put8__avx2(&x1, s + 8, et, buf, &w);
            dq__r32_put8__avx2(&x0, s, et, buf, &w);
        }
        simde_mm256_storeu_si256((simde__m256i *)x, x0);
        simde_mm256_storeu_si256((simde__m256i *)(x + 8), x1);
        simde_mm256_storeu_si256((simde__m256i *)(x + 16), x2);
        simde_mm256_storeu_si256((simde__m256i *)(x + 24), x3);
    }
    if (!dq__r32_put_range(x, sym, g * DQ__R32_WAYS, 0, et, buf, &w)) return 0;
    return dq__r32_put_states(x, buf, w, cap);
}
#endif /* AVX2 */
#ifdef __cplusplus
}
#endif

