/* ================================================================ AVX-512 kernels
 * The AVX-512F kernels of the families where 512 bits pay (the others run their AVX2 kernel at
 * this level: see the kernel list in dqsgd.h, src/select.h), then two AVX-512VL kernels on
 * 256-bit vectors. In order: the dither round, error feedback, quantization, block decoding,
 * table schemes, the sparsifiers' scan, count-sketch hashes, fp16/bf16 conversions; the Elias
 * early-stop pass and the rANS decoder's expand step (AVX-512VL).
 * The levels are non-negative, so the unsigned conversion (which SIMDe 0.7.4 provides at 512
 * bits) equals the signed one. */

/* GCC's AVX-512 intrinsics create "undefined" pass-through vectors by self-initialization,
 * which g++ -Wall reports as maybe-uninitialized once inlined; the values are never read. */
#if defined(__GNUC__) && !defined(__clang__) && DQ__HAS_AVX512_KERNELS
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#if DQ__HAS_AVX512_KERNELS
/* ---- the dither round: dq__draw32 on 16 lanes (see dq__draw__sse2), ANDed with keep: all ones
 * for the 32-bit draw, 0xFFFFFF00 for the 24-bit draw d as d << 8. The middle and last steps
 * are one ternary-logic operation each (the last with the AND). */
static inline simde__m512i dq__draw__avx512(simde__m512i idx, simde__m512i k0, simde__m512i k1, int hoisted,
                                            simde__m512i keep) {
    simde__m512i x = simde_mm512_xor_si512(idx, k0);
    if (!hoisted) x = simde_mm512_xor_si512(x, simde_mm512_srli_epi32(x, 16));
    x = simde_mm512_mullo_epi32(x, simde_mm512_set1_epi32((int32_t)0x7FEB352D));
    x = simde_mm512_ternarylogic_epi32(x, simde_mm512_srli_epi32(x, 15), k1, 0x96); /* a ^ b ^ c */
    x = simde_mm512_mullo_epi32(x, simde_mm512_set1_epi32((int32_t)0x846CA68B));
    return simde_mm512_ternarylogic_epi32(x, simde_mm512_srli_epi32(x, 16), keep, 0x28); /* (a ^ b) & c */
}

static inline void dq__compensate__avx512(const float *x, float *e, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        simde_mm512_storeu_ps(e + i, simde_mm512_add_ps(simde_mm512_loadu_ps(x + i), simde_mm512_loadu_ps(e + i)));
    dq__compensate__avx2(x + i, e + i, n - i);
}

/* One vector of 16 codes: the constants live in a struct that inlining keeps in registers, so
 * the plain and the fused (quantize + pack) kernels share one body. */
typedef struct dq__q512 {
    simde__m512i absm, zero, one, k0, k1, lane, lmask, dmask;
    simde__m128i sgn; /* shift count 32 - b: the sign bit lands at bit b-1 */
    simde__m512 inv, smax, step, neg, half, two32, magic;
    int stoch, k0x; /* k0x: k0 holds the hoisted key (dq__draw_hoist) */
    unsigned bits;
} dq__q512;
/* The quantizer constants for the `cnt` elements from index q->lo on. */
static inline void dq__q512_init(dq__q512 *c, const dq__qctx *q, size_t cnt) {
    uint32_t k0h;
    c->k0x = dq__draw_hoist(q->k0, q->lo, cnt, &k0h);
    c->absm = simde_mm512_set1_epi32(0x7FFFFFFF);
    c->zero = simde_mm512_setzero_si512();
    c->one = simde_mm512_set1_epi32(1);
    c->k0 = simde_mm512_set1_epi32((int32_t)k0h);
    c->k1 = simde_mm512_set1_epi32((int32_t)q->k1h);
    c->lane = simde_mm512_loadu_si512(dq__lane_ids);
    c->lmask = simde_mm512_set1_epi32(q->bits >= 2 ? (int32_t)((1u << (q->bits - 1)) - 1u) : 0);
    c->dmask = simde_mm512_set1_epi32((int32_t)0xFFFFFF00u);
    c->sgn = simde_mm_cvtsi32_si128(32 - (int)q->bits);
    c->inv = simde_mm512_set1_ps(q->inv);
    c->smax = simde_mm512_set1_ps(q->smax);
    c->step = simde_mm512_set1_ps(q->step);
    c->neg = simde_mm512_set1_ps(q->neg);
    c->half = simde_mm512_set1_ps(0.5f);
    c->two32 = simde_mm512_set1_ps(4294967296.0f);
    c->magic = simde_mm512_set1_ps(8388608.0f);
    c->stoch = q->thresh < 0.0f;
    c->bits = q->bits;
}
/* idx holds the low halves of the 16 element indices. The dither test t < f, t = d * 2^-24
 * with d the 24-bit draw, is evaluated as d * 2^8 < f * 2^32: both sides are exact floats (d * 2^8
 * has at most 24 significant bits, scaling by 2^32 is exact), so the outcome is the same, and
 * d * 2^8 is what the dither round gives with keep = 0xFFFFFF00. */
static inline simde__m512i dq__q512_codes(const dq__q512 *c, const float *x, simde__m512i idx, float *res) {
    simde__m512 xv = simde_mm512_loadu_ps(x), td = c->half, v = simde_mm512_setzero_ps();
    simde__m512i xb = simde_mm512_castps_si512(xv), code;
    if (c->stoch) td = simde_mm512_cvtepu32_ps(dq__draw__avx512(idx, c->k0, c->k1, c->k0x, c->dmask));
    if (c->bits == 1) {
        simde__m512 t = c->stoch ? simde_mm512_mul_ps(td, simde_mm512_set1_ps(2.3283064365386963e-10f)) : c->half;
        simde__m512 pp = simde_mm512_add_ps(c->half, simde_mm512_mul_ps(xv, c->inv));
        simde__mmask16 plus = simde_mm512_cmp_ps_mask(t, pp, SIMDE_CMP_LT_OQ);
        code = c->stoch ? simde_mm512_mask_mov_epi32(c->one, plus, c->zero) : simde_mm512_srli_epi32(xb, 31);
        if (res) /* code 1 decodes to neg, code 0 to step */
            v = simde_mm512_mask_mov_ps(c->step, simde_mm512_cmpeq_epi32_mask(code, c->one), c->neg);
    } else {
        simde__m512 r = simde_mm512_min_ps(
            simde_mm512_mul_ps(simde_mm512_castsi512_ps(simde_mm512_and_si512(xb, c->absm)), c->inv), c->smax);
        /* trunc(r) + 2^23 is exact (r < 2^16) and its low mantissa bits are the integer level
         * (SIMDe 0.7.4 has no 512-bit cvttps_epi32); the exponent bits above them are cleared
         * by the final select with lmask, since a level fits in bits 0..b-2 */
        simde__m512 tr = simde_mm512_roundscale_ps(r, SIMDE_MM_FROUND_TO_ZERO | SIMDE_MM_FROUND_NO_EXC);
        simde__m512 f = simde_mm512_sub_ps(r, tr);
        simde__mmask16 up = c->stoch ? simde_mm512_cmp_ps_mask(td, simde_mm512_mul_ps(f, c->two32), SIMDE_CMP_LT_OQ)
                                     : simde_mm512_cmp_ps_mask(c->half, f, SIMDE_CMP_LT_OQ),
                       nz;
        simde__m512i lm = simde_mm512_castps_si512(simde_mm512_add_ps(tr, c->magic)), sg;
        lm = simde_mm512_mask_add_epi32(lm, up, lm, c->one);
        nz = simde_mm512_test_epi32_mask(lm, c->lmask);
        /* the sign goes to bit b-1 of nonzero levels only: x >> (32 - b) is the sign there and
         * the top b-1 bits of x below it, which lmask's select drops */
        sg = simde_mm512_maskz_srl_epi32(nz, xb, c->sgn);
        code = simde_mm512_ternarylogic_epi32(c->lmask, lm, sg, 0xCA); /* lmask ? lm : sg */
        if (res) { /* a zero level keeps +0 whatever the sign, as in the scalar reference */
            simde__m512 lf = simde_mm512_mask_add_ps(tr, up, tr, simde_mm512_set1_ps(1.0f)); /* exact */
            v = simde_mm512_mul_ps(lf, c->step);
            v = simde_mm512_castsi512_ps(simde_mm512_mask_xor_epi32(simde_mm512_castps_si512(v), nz,
                                                                    simde_mm512_castps_si512(v),
                                                                    simde_mm512_andnot_si512(c->absm, xb)));
        }
    }
    if (res) simde_mm512_storeu_ps(res, simde_mm512_sub_ps(xv, v));
    return code;
}

/* dq__q512_codes for stochastic rounding, b >= 2, the hoisted key and no residual. */
static inline simde__m512i dq__q512_codes_sk(const dq__q512 *c, const float *x, simde__m512i idx) {
    simde__m512i xb = simde_mm512_loadu_si512(x), lm, sg;
    simde__m512 r, tr, td = simde_mm512_cvtepu32_ps(dq__draw__avx512(idx, c->k0, c->k1, 1, c->dmask));
    simde__mmask16 up, nz;
    r = simde_mm512_min_ps(simde_mm512_mul_ps(simde_mm512_castsi512_ps(simde_mm512_and_si512(xb, c->absm)), c->inv), c->smax);
    tr = simde_mm512_roundscale_ps(r, SIMDE_MM_FROUND_TO_ZERO | SIMDE_MM_FROUND_NO_EXC);
    up = simde_mm512_cmp_ps_mask(td, simde_mm512_mul_ps(simde_mm512_sub_ps(r, tr), c->two32), SIMDE_CMP_LT_OQ);
    lm = simde_mm512_castps_si512(simde_mm512_add_ps(tr, c->magic));
    lm = simde_mm512_mask_add_epi32(lm, up, lm, c->one);
    nz = simde_mm512_test_epi32_mask(lm, c->lmask);
    sg = simde_mm512_maskz_srl_epi32(nz, xb, c->sgn);
    return simde_mm512_ternarylogic_epi32(c->lmask, lm, sg, 0xCA);
}
static inline void dq__quant__avx512(const dq__qctx *q, const float *x, size_t cnt, uint32_t *codes, float *res) {
    dq__q512 c;
    size_t i = 0;
    dq__qctx rest;
    simde__m512i idx = simde_mm512_add_epi32(simde_mm512_set1_epi32((int32_t)q->lo), simde_mm512_loadu_si512(dq__lane_ids));
    dq__q512_init(&c, q, cnt);
    for (; i + 16 <= cnt; i += 16, idx = simde_mm512_add_epi32(idx, simde_mm512_set1_epi32(16)))
        simde_mm512_storeu_si512(codes + i, dq__q512_codes(&c, x + i, idx, res ? res + i : NULL));
    rest = *q;
    rest.lo = q->lo + (uint32_t)i;
    dq__quant__avx2(&rest, x + i, cnt - i, codes + i, res ? res + i : NULL);
}

/* Quantize and pack one full block of 256 elements inside one bucket; each vector holds rows
 * 2k and 2k+1, which enter the 8-lane accumulator one after the other. */
static inline void dq__quant_pack__avx512(const dq__qctx *q, const float *x, float *res, uint8_t *out) {
    dq__q512 c;
    simde__m256i acc = simde_mm256_setzero_si256();
    unsigned have = 0, b = q->bits, i;
    simde__m512i idx = simde_mm512_add_epi32(simde_mm512_set1_epi32((int32_t)q->lo), simde_mm512_loadu_si512(dq__lane_ids));
    const simde__m512i step16 = simde_mm512_set1_epi32(16);
    dq__q512_init(&c, q, DQ__BLOCK);
    if ((32u % b) == 0) {
        /* b divides 32: word j of every lane holds rows j*32/b .. exactly, so each word is an
         * OR of codes at constant shifts (row 2k in the low half, 2k+1 in the high half) and no
         * bit carries from one word to the next: the words are independent chains. */
        const simde__m512i sh0 = simde_mm512_mask_set1_epi32(simde_mm512_setzero_si512(), 0xFF00u, (int)b);
        const simde__m512i sh2 = simde_mm512_set1_epi32((int)(2u * b));
        unsigned j, k, per = 16u / b; /* vectors (row pairs) per word */
        for (j = 0, i = 0; j < b; j++, out += 32) {
            simde__m512i w = simde_mm512_setzero_si512(), sh = sh0;
            if (c.stoch && c.k0x && !res && b >= 2u) { /* the common case, without the tests per vector */
                const dq__q512 cc = c;
                for (k = 0; k < per; k++, i += 16, idx = simde_mm512_add_epi32(idx, step16), sh = simde_mm512_add_epi32(sh, sh2))
                    w = simde_mm512_or_si512(w, simde_mm512_sllv_epi32(dq__q512_codes_sk(&cc, x + i, idx), sh));
            } else {
                for (k = 0; k < per; k++, i += 16, idx = simde_mm512_add_epi32(idx, step16), sh = simde_mm512_add_epi32(sh, sh2))
                    w = simde_mm512_or_si512(w, simde_mm512_sllv_epi32(dq__q512_codes(&c, x + i, idx, res ? res + i : NULL), sh));
            }
            simde_mm256_storeu_si256((simde__m256i *)out, simde_mm256_or_si256(simde_mm512_castsi512_si256(w),
                                                                               simde_mm512_extracti64x4_epi64(w, 1)));
        }
        return;
    }
    for (i = 0; i < DQ__BLOCK; i += 16, idx = simde_mm512_add_epi32(idx, step16)) {
        simde__m512i code = dq__q512_codes(&c, x + i, idx, res ? res + i : NULL);
        dq__pack_row__avx2(&acc, &have, simde_mm512_castsi512_si256(code), b, &out);
        dq__pack_row__avx2(&acc, &have, simde_mm512_extracti64x4_epi64(code, 1), b, &out);
    }
}

/* Decoded values of 16 codes (see dq__decode_block__avx512). */
static inline simde__m512 dq__decode_vals__avx512(simde__m512i code, simde__m512i lmask, simde__m512i lone, simde__m512 stepv,
                                                  simde__m512i shsg, simde__m512i sgnm) {
    simde__m512 v = simde_mm512_cvtepu32_ps(simde_mm512_ternarylogic_epi32(code, lmask, lone, 0xEA)); /* (a & b) | c */
    v = simde_mm512_mul_ps(v, stepv);
    return simde_mm512_castsi512_ps(simde_mm512_ternarylogic_epi32(simde_mm512_castps_si512(v),
                                                                   simde_mm512_sllv_epi32(code, shsg), sgnm, 0x78)); /* a ^ (b & c) */
}
/* Decode one packed block, two rows per vector. When b divides 32 both rows of a pair lie in
 * one 32-byte word row (rows j*32/b ..): one broadcast load and a per-half shift give 16 codes,
 * with no carry between words. Other widths use the AVX2 kernel. The value of a code is
 * (float)level * step with the code's sign bit moved to bit 31 and xored in; when every row has
 * the same step and b <= 4, those of codes 0..15 (code k & (2^b - 1)) are computed once and each
 * code is one permute. */
static inline void dq__decode_block__avx512(const uint8_t *in, unsigned b, const float *rowstep, float w, int add,
                                            float *out) {
    simde__m512i shv, code;
    simde__m512 v, tabv = simde_mm512_setzero_ps(), stepv;
    const simde__m512 wv = simde_mm512_set1_ps(w);
    const simde__m512i mask = simde_mm512_set1_epi32((int32_t)((1u << b) - 1u));
    const simde__m512i lmask = simde_mm512_set1_epi32(b == 1 ? 0 : (int32_t)((1u << (b - 1)) - 1u));
    const simde__m512i lone = simde_mm512_set1_epi32(b == 1 ? 1 : 0);
    const simde__m512i shsg = simde_mm512_set1_epi32(32 - (int)b), sgnm = simde_mm512_set1_epi32((int32_t)0x80000000u);
    const simde__m512i sh2 = simde_mm512_set1_epi32(2 * (int)b);
    unsigned r, j, k, per, uniform, table;
    if (32u % b != 0) {
        dq__decode_block__avx2(in, b, rowstep, w, add, out);
        return;
    }
    per = 32u / b; /* rows per word */
    uniform = dq__rows_uniform(rowstep);
    table = uniform && b <= 4u;
    stepv = simde_mm512_set1_ps(rowstep[0]);
    if (table) /* the values of codes 0..15, by the computing path below */
        tabv = dq__decode_vals__avx512(simde_mm512_and_si512(simde_mm512_loadu_si512(dq__lane_ids), mask), lmask, lone,
                                       stepv, shsg, sgnm);
    for (j = 0, r = 0; j < b; j++) {
        const simde__m512i word = simde_mm512_broadcast_i64x4(simde_mm256_loadu_si256((const simde__m256i *)(in + 32u * j)));
        shv = simde_mm512_mask_set1_epi32(simde_mm512_setzero_si512(), 0xFF00u, (int)b);
        for (k = 0; k < per; k += 2, r += 2, shv = simde_mm512_add_epi32(shv, sh2)) {
            /* the bits above the code: dropped by lmask and the sign shift, and by the permute,
             * which reads 4 index bits of a table that repeats with period 2^b */
            code = simde_mm512_srlv_epi32(word, shv);
            if (table) {
                v = simde_mm512_permutexvar_ps(code, tabv);
            } else {
                if (!uniform)
                    stepv = simde_mm512_mask_mov_ps(simde_mm512_set1_ps(rowstep[r]), 0xFF00u,
                                                    simde_mm512_set1_ps(rowstep[r + 1]));
                v = dq__decode_vals__avx512(code, lmask, lone, stepv, shsg, sgnm);
            }
            if (add) v = simde_mm512_add_ps(simde_mm512_loadu_ps(out + 8 * r), simde_mm512_mul_ps(wv, v));
            simde_mm512_storeu_ps(out + 8 * r, v);
        }
    }
}

/* ---- table schemes (see the SSE2 section for the method and the exactness argument) */
static inline int dq__tab_isexp__avx512(const float *tab, unsigned s) {
    const simde__m512i c = simde_mm512_set1_epi32((int32_t)(127u - s));
    simde__m512i l = simde_mm512_loadu_si512(dq__lane_ids);
    simde__mmask16 ok = 0xFFFFu;
    unsigned i;
    if (s < 15u) return dq__tab_isexp__avx2(tab, s);
    for (i = 0; i <= s; i += 16u, l = simde_mm512_add_epi32(l, simde_mm512_set1_epi32(16))) {
        simde__m512i e = simde_mm512_maskz_mov_epi32(simde_mm512_test_epi32_mask(l, l),
                                                     simde_mm512_slli_epi32(simde_mm512_add_epi32(l, c), 23));
        ok = (simde__mmask16)(ok & simde_mm512_cmpeq_epi32_mask(e, simde_mm512_loadu_si512(tab + i)));
    }
    return ok == 0xFFFFu;
}

/* Table lookups from registers, N = s + 1 <= 128 entries: one permute (N <= 16, padded with
 * +Inf to 16), one two-source permute (N = 32), or 2 / 4 of them and blends on index bits 5, 6. */
typedef struct dq__tlook512 {
    simde__m512 t[8];
    simde__m512i b5, b6;
    unsigned nreg;
} dq__tlook512;
static inline void dq__tlook512_init(dq__tlook512 *L, const float *tab, unsigned s) {
    uint32_t pad[DQ__BLOCK / 2u];
    unsigned n = s + 1u, k;
    L->nreg = n <= 16u ? 1u : n / 16u;
    for (k = n; k < 16u; k++) pad[k] = 0x7F800000u; /* +Inf: above any r */
    memcpy(pad, tab, 4u * n);
    for (k = 0; k < 8u; k++)
        L->t[k] = k < L->nreg ? simde_mm512_loadu_ps((const float *)(pad + 16u * k)) : simde_mm512_setzero_ps();
    L->b5 = simde_mm512_set1_epi32(32);
    L->b6 = simde_mm512_set1_epi32(64);
}
static inline simde__m512 dq__tlook512_get(const dq__tlook512 *L, simde__m512i idx) {
    simde__m512 a, b;
    simde__mmask16 k5;
    if (L->nreg == 1u) return simde_mm512_permutexvar_ps(idx, L->t[0]);
    a = simde_mm512_permutex2var_ps(L->t[0], idx, L->t[1]);
    if (L->nreg == 2u) return a;
    k5 = simde_mm512_test_epi32_mask(idx, L->b5);
    a = simde_mm512_mask_blend_ps(k5, a, simde_mm512_permutex2var_ps(L->t[2], idx, L->t[3]));
    if (L->nreg == 4u) return a;
    b = simde_mm512_mask_blend_ps(k5, simde_mm512_permutex2var_ps(L->t[4], idx, L->t[5]),
                                  simde_mm512_permutex2var_ps(L->t[6], idx, L->t[7]));
    return simde_mm512_mask_blend_ps(simde_mm512_test_epi32_mask(idx, L->b6), a, b);
}

typedef struct dq__tq512 {
    simde__m512i absm, zero, one, k0, k1, sv, c127, sm127, mant, onei, sgnm, shs;
    simde__m512i dmask;
    simde__m512 inv, scale, onef, pw, ulp32, thr, top, lo0, inf;
    dq__tlook512 look;
    float lv[8]; /* s <= 7: tab[0..s], then +Inf */
    unsigned s;
    int stoch;
} dq__tq512;
static inline void dq__tq512_init(dq__tq512 *c, const dq__qctx *q, int isexp) {
    unsigned s = (1u << (q->bits - 1u)) - 1u;
    c->absm = simde_mm512_set1_epi32(0x7FFFFFFF);
    c->zero = simde_mm512_setzero_si512();
    c->one = simde_mm512_set1_epi32(1);
    c->k0 = simde_mm512_set1_epi32((int32_t)q->k0);
    c->k1 = simde_mm512_set1_epi32((int32_t)q->k1h);
    c->sv = simde_mm512_set1_epi32((int32_t)s);
    c->c127 = simde_mm512_set1_epi32((int32_t)(127u - s));
    c->sm127 = simde_mm512_set1_epi32((int32_t)s - 127);
    c->mant = simde_mm512_set1_epi32(0x007FFFFF);
    c->onei = simde_mm512_set1_epi32(0x3F800000);
    c->sgnm = simde_mm512_set1_epi32(INT32_MIN);
    c->shs = simde_mm512_set1_epi32((int)q->bits - 1);
    c->inv = simde_mm512_set1_ps(q->inv);
    c->scale = simde_mm512_set1_ps(q->scale);
    c->onef = simde_mm512_set1_ps(1.0f);
    c->pw = simde_mm512_castsi512_ps(simde_mm512_set1_epi32((int32_t)((s + 126u) << 23))); /* 2^(s-1) */
    c->dmask = simde_mm512_set1_epi32((int32_t)0xFFFFFF00u);
    c->ulp32 = simde_mm512_set1_ps(2.3283064365386963e-10f); /* 2^-32 */
    c->thr = simde_mm512_set1_ps(q->thresh);
    c->top = simde_mm512_set1_ps(q->tab[s]);
    c->lo0 = simde_mm512_set1_ps(q->tab[0]);
    c->inf = simde_mm512_castsi512_ps(simde_mm512_set1_epi32(0x7F800000));
    if (!isexp) dq__tlook512_init(&c->look, q->tab, s);
    if (!isexp && s <= 7u) simde_mm256_storeu_ps(c->lv, simde_mm512_castps512_ps256(c->look.t[0]));
    c->s = s;
    c->stoch = q->thresh < 0.0f;
}
/* The dither t of 16 elements (idx: low halves of their indices), or the threshold; d << 8
 * (24 significant bits) converts exactly, so t = (d << 8) * 2^-32 = d * 2^-24 exactly. */
static inline simde__m512 dq__tq512_t(const dq__tq512 *c, simde__m512i idx) {
    if (c->stoch) return simde_mm512_mul_ps(simde_mm512_cvtepu32_ps(dq__draw__avx512(idx, c->k0, c->k1, 0, c->dmask)), c->ulp32);
    return c->thr;
}
/* Codes from levels l and magnitudes tv = tab[l]; residuals x - value to res unless NULL. */
static inline simde__m512i dq__tq512_end(const dq__tq512 *c, simde__m512 xv, simde__m512i l, simde__m512 tv,
                                         float *res) {
    simde__m512i sg = simde_mm512_maskz_mov_epi32(simde_mm512_test_epi32_mask(l, l),
                                                  simde_mm512_and_si512(simde_mm512_castps_si512(xv), c->sgnm));
    if (res) {
        simde__m512 v = simde_mm512_castsi512_ps(
            simde_mm512_xor_si512(simde_mm512_castps_si512(simde_mm512_mul_ps(tv, c->scale)), sg));
        simde_mm512_storeu_ps(res, simde_mm512_sub_ps(xv, v));
    }
    return simde_mm512_or_si512(l, simde_mm512_sllv_epi32(simde_mm512_srli_epi32(sg, 31), c->shs));
}
/* 16 codes from x[0..16) of an exponential table. */
static inline simde__m512i dq__tq512_exp(const dq__tq512 *c, const float *x, simde__m512i idx, float *res) {
    simde__m512 xv = simde_mm512_loadu_ps(x), t = dq__tq512_t(c, idx), f, fhi;
    simde__m512 r = simde_mm512_mul_ps(
        simde_mm512_castsi512_ps(simde_mm512_and_si512(simde_mm512_castps_si512(xv), c->absm)), c->inv);
    simde__m512i rb = simde_mm512_castps_si512(r), l;
    simde__m512i j = simde_mm512_add_epi32(simde_mm512_srli_epi32(rb, 23), c->sm127);
    simde__mmask16 lt1 = simde_mm512_cmp_ps_mask(r, c->onef, SIMDE_CMP_LT_OQ),
                   big = simde_mm512_cmpgt_epi32_mask(j, c->zero);
    fhi = simde_mm512_sub_ps(
        simde_mm512_castsi512_ps(simde_mm512_or_si512(simde_mm512_and_si512(rb, c->mant), c->onei)), c->onef);
    f = simde_mm512_mask_blend_ps(big, simde_mm512_mul_ps(r, c->pw), fhi);
    l = simde_mm512_maskz_mov_epi32(big, j);
    l = simde_mm512_mask_add_epi32(l, simde_mm512_cmp_ps_mask(t, f, SIMDE_CMP_LT_OQ), l, c->one);
    l = simde_mm512_mask_blend_epi32(lt1, c->sv, l);
    return dq__tq512_end(
        c, xv, l,
        simde_mm512_castsi512_ps(simde_mm512_maskz_mov_epi32(
            simde_mm512_test_epi32_mask(l, l), simde_mm512_slli_epi32(simde_mm512_add_epi32(l, c->c127), 23))),
        res);
}
/* One step of the binary search (see dq__ts256_step); N <= 16: one permute. */
static inline void dq__ts512_step(const dq__tlook512 *L, simde__m512 r, int32_t st, simde__m512i *j, simde__m512 *vlo,
                                  simde__m512 *vhi) {
    simde__m512i id = simde_mm512_add_epi32(*j, simde_mm512_set1_epi32(st));
    simde__m512 cand = L->nreg == 1u ? simde_mm512_permutexvar_ps(id, L->t[0]) : dq__tlook512_get(L, id);
    simde__mmask16 m = simde_mm512_cmp_ps_mask(cand, r, SIMDE_CMP_LE_OQ);
    *j = simde_mm512_mask_blend_epi32(m, *j, id);
    *vlo = simde_mm512_mask_blend_ps(m, *vlo, cand);
    *vhi = simde_mm512_mask_blend_ps(m, cand, *vhi);
}
/* 16 codes from x[0..16) of any table: binary search; tables of N <= 16 entries are searched as
 * 16 (the +Inf padding is above every r < 1), in four steps whatever N. */
static inline simde__m512i dq__tq512_gen(const dq__tq512 *c, const float *x, simde__m512i idx, float *res) {
    simde__m512 xv = simde_mm512_loadu_ps(x), t = dq__tq512_t(c, idx), f, tv, vlo = c->lo0, vhi = c->inf;
    simde__m512 r = simde_mm512_mul_ps(
        simde_mm512_castsi512_ps(simde_mm512_and_si512(simde_mm512_castps_si512(xv), c->absm)), c->inv);
    simde__m512i j = c->zero, l;
    simde__mmask16 lt1 = simde_mm512_cmp_ps_mask(r, c->onef, SIMDE_CMP_LT_OQ), up;
    if (c->s <= 7u) { /* j = #{k in 1..6: tab[k] <= r} (padding never counts), independent compares */
        simde__m512i ja = simde_mm512_maskz_mov_epi32(
            simde_mm512_cmp_ps_mask(simde_mm512_set1_ps(c->lv[1]), r, SIMDE_CMP_LE_OQ), c->one);
        simde__m512i jb = simde_mm512_maskz_mov_epi32(
            simde_mm512_cmp_ps_mask(simde_mm512_set1_ps(c->lv[2]), r, SIMDE_CMP_LE_OQ), c->one);
        ja = simde_mm512_mask_add_epi32(ja, simde_mm512_cmp_ps_mask(simde_mm512_set1_ps(c->lv[3]), r, SIMDE_CMP_LE_OQ),
                                        ja, c->one);
        jb = simde_mm512_mask_add_epi32(jb, simde_mm512_cmp_ps_mask(simde_mm512_set1_ps(c->lv[4]), r, SIMDE_CMP_LE_OQ),
                                        jb, c->one);
        ja = simde_mm512_mask_add_epi32(ja, simde_mm512_cmp_ps_mask(simde_mm512_set1_ps(c->lv[5]), r, SIMDE_CMP_LE_OQ),
                                        ja, c->one);
        jb = simde_mm512_mask_add_epi32(jb, simde_mm512_cmp_ps_mask(simde_mm512_set1_ps(c->lv[6]), r, SIMDE_CMP_LE_OQ),
                                        jb, c->one);
        j = simde_mm512_add_epi32(ja, jb);
        vlo = simde_mm512_permutexvar_ps(j, c->look.t[0]);
        vhi = simde_mm512_permutexvar_ps(simde_mm512_add_epi32(j, c->one), c->look.t[0]);
    } else if (c->look.nreg == 1u) {
        dq__ts512_step(&c->look, r, 8, &j, &vlo, &vhi);
        dq__ts512_step(&c->look, r, 4, &j, &vlo, &vhi);
        dq__ts512_step(&c->look, r, 2, &j, &vlo, &vhi);
        dq__ts512_step(&c->look, r, 1, &j, &vlo, &vhi);
    } else {
        unsigned st;
        for (st = (c->s + 1u) >> 1; st; st >>= 1) dq__ts512_step(&c->look, r, (int32_t)st, &j, &vlo, &vhi);
    }
    f = simde_mm512_div_ps(simde_mm512_sub_ps(r, vlo), simde_mm512_sub_ps(vhi, vlo));
    up = simde_mm512_cmp_ps_mask(t, f, SIMDE_CMP_LT_OQ);
    l = simde_mm512_mask_blend_epi32(lt1, c->sv, simde_mm512_mask_add_epi32(j, up, j, c->one));
    tv = simde_mm512_mask_blend_ps(lt1, c->top, simde_mm512_mask_blend_ps(up, vlo, vhi));
    return dq__tq512_end(c, xv, l, tv, res);
}

static inline void dq__quant_tab__avx512(const dq__qctx *q, const float *x, size_t cnt, uint32_t *codes, float *res) {
    size_t i = 0;
    dq__qctx rest;
    int isexp = 0;
    if (cnt >= 8) isexp = dq__tab_isexp__avx512(q->tab, (1u << (q->bits - 1u)) - 1u);
    if (cnt >= 16) {
        dq__tq512 c;
        simde__m512i idx =
            simde_mm512_add_epi32(simde_mm512_set1_epi32((int32_t)q->lo), simde_mm512_loadu_si512(dq__lane_ids));
        const simde__m512i sixteen = simde_mm512_set1_epi32(16);
        dq__tq512_init(&c, q, isexp);
        if (isexp)
            for (; i + 16 <= cnt; i += 16, idx = simde_mm512_add_epi32(idx, sixteen))
                simde_mm512_storeu_si512(codes + i, dq__tq512_exp(&c, x + i, idx, res ? res + i : NULL));
        else
            for (; i + 16 <= cnt; i += 16, idx = simde_mm512_add_epi32(idx, sixteen))
                simde_mm512_storeu_si512(codes + i, dq__tq512_gen(&c, x + i, idx, res ? res + i : NULL));
    }
    rest = *q;
    rest.lo = q->lo + (uint32_t)i;
    if (cnt - i >= 8) i += dq__quant_tab_run__avx2(&rest, isexp, x + i, cnt - i, codes + i, res ? res + i : NULL);
    rest.lo = q->lo + (uint32_t)i;
    dq__quant_tab__scalar(&rest, x + i, cnt - i, codes + i, res ? res + i : NULL);
}

/* ---- the sparsifiers' scan (see the SSE2 section): compares into mask registers, which cost
 * nothing to combine */
static inline uint64_t dq__sp_mask64__avx512(const float *x, const float *e, float *eo, uint32_t lo) {
    const simde__m512i abs = simde_mm512_set1_epi32(0x7FFFFFFF), lim = simde_mm512_set1_epi32((int32_t)lo - 1);
    uint64_t m = 0;
    unsigned v;
    for (v = 0; v < 4u; v++) {
        simde__m512 c = simde_mm512_loadu_ps(x + 16u * v);
        simde__m512i key;
        if (e) c = simde_mm512_add_ps(c, simde_mm512_loadu_ps(e + 16u * v));
        if (eo) simde_mm512_storeu_ps(eo + 16u * v, c);
        key = simde_mm512_and_si512(simde_mm512_castps_si512(c), abs);
        m |= (uint64_t)simde_mm512_cmpgt_epi32_mask(key, lim) << (16u * v);
    }
    return m;
}

/* ---- count-sketch hashes (see the AVX2 section): 16 lanes */
static inline void dq__sk_hash__avx512(uint32_t k0, uint32_t k1, uint32_t cols, uint32_t first, size_t cnt,
                                       uint32_t *out) {
    uint32_t k0h;
    const int hoisted = dq__draw_hoist(k0, first, cnt, &k0h);
    const simde__m512i vk0 = simde_mm512_set1_epi32((int32_t)k0h), vk1 = simde_mm512_set1_epi32((int32_t)k1);
    const simde__m512i all = simde_mm512_set1_epi32(-1);
    const simde__m512i vc = simde_mm512_set1_epi32((int32_t)cols), sixteen = simde_mm512_set1_epi32(16);
    simde__m512i idx = simde_mm512_add_epi32(simde_mm512_set1_epi32((int32_t)first), simde_mm512_loadu_si512(dq__lane_ids));
    size_t t = 0;
    for (; t + 16u <= cnt; t += 16u) {
        simde__m512i x = dq__draw__avx512(idx, vk0, vk1, hoisted, all), lo, hi;
        lo = simde_mm512_srli_epi64(simde_mm512_mul_epu32(x, vc), 32);
        hi = simde_mm512_mul_epu32(simde_mm512_srli_epi64(x, 32), vc);
        lo = simde_mm512_mask_blend_epi32((simde__mmask16)0xAAAAu, lo, hi);
        simde_mm512_storeu_si512((void *)(out + t), simde_mm512_or_si512(lo, simde_mm512_slli_epi32(x, 31)));
        idx = simde_mm512_add_epi32(idx, sixteen);
    }
    dq__sk_hash__scalar(k0, k1, cols, first + (uint32_t)t, cnt - t, out + t);
}

/* ---- fp16 and bf16 conversions (see the SSE2 section). SIMDe 0.7.4 has no 512-bit vpmovzxwd
 * or vpmovdw wrappers, so halves are widened by two 256-bit vpmovzxwd and narrowed with the
 * signed-saturating vpmovsdw on sign-extended values (exact). */
/* 16 halves at s, zero-extended to 32-bit lanes. */
static inline simde__m512i dq__ld16x16__avx512(const uint8_t *s) {
    simde__m256i lo = simde_mm256_cvtepu16_epi32(simde_mm_loadu_si128((const simde__m128i *)s));
    simde__m256i hi = simde_mm256_cvtepu16_epi32(simde_mm_loadu_si128((const simde__m128i *)(s + 16)));
    return simde_mm512_inserti64x4(simde_mm512_castsi256_si512(lo), hi, 1);
}
static inline simde__m512 dq__h2f__avx512(simde__m512i w) {
    const simde__m512i a = simde_mm512_and_si512(w, simde_mm512_set1_epi32(0x7FFF));
    const simde__m512i sgn = simde_mm512_slli_epi32(simde_mm512_xor_si512(w, a), 16);
    const simde__m512i nrm = simde_mm512_add_epi32(simde_mm512_slli_epi32(a, 13), simde_mm512_set1_epi32(0x38000000));
    /* a < 2^15: the unsigned conversion (which SIMDe 0.7.4 has at 512 bits) is the signed one */
    const simde__m512i sub = simde_mm512_castps_si512(
        simde_mm512_mul_ps(simde_mm512_cvtepu32_ps(a), simde_mm512_set1_ps(5.96046448e-08f)));
    simde__m512i r = simde_mm512_mask_mov_epi32(nrm, simde_mm512_cmpgt_epi32_mask(simde_mm512_set1_epi32(0x0400), a), sub);
    r = simde_mm512_mask_add_epi32(r, simde_mm512_cmpgt_epi32_mask(a, simde_mm512_set1_epi32(0x7BFF)), r,
                                   simde_mm512_set1_epi32(0x38000000));
    r = simde_mm512_mask_or_epi32(r, simde_mm512_cmpgt_epi32_mask(a, simde_mm512_set1_epi32(0x7C00)), r,
                                  simde_mm512_set1_epi32(0x00400000));
    return simde_mm512_castsi512_ps(simde_mm512_or_si512(r, sgn));
}
/* 16 floats to 16 halves, sign-extended in 32-bit lanes (for the saturating narrow). */
static inline simde__m512i dq__f2h__avx512(simde__m512 v) {
    const simde__m512i u = simde_mm512_castps_si512(v);
    const simde__m512i a = simde_mm512_and_si512(u, simde_mm512_set1_epi32(0x7FFFFFFF));
    const simde__m512i t = simde_mm512_sub_epi32(a, simde_mm512_set1_epi32(0x38000000));
    const simde__m512i odd = simde_mm512_and_si512(simde_mm512_srli_epi32(t, 13), simde_mm512_set1_epi32(1));
    const simde__m512i nrm =
        simde_mm512_srli_epi32(simde_mm512_add_epi32(simde_mm512_add_epi32(t, simde_mm512_set1_epi32(0x0FFF)), odd), 13);
    const simde__m512i sub = simde_mm512_sub_epi32(
        simde_mm512_castps_si512(simde_mm512_add_ps(simde_mm512_castsi512_ps(a), simde_mm512_set1_ps(0.5f))),
        simde_mm512_set1_epi32(0x3F000000));
    const simde__m512i nanh = simde_mm512_or_si512(
        simde_mm512_and_si512(simde_mm512_srli_epi32(a, 13), simde_mm512_set1_epi32(0x03FF)), simde_mm512_set1_epi32(0x7E00));
    simde__m512i h = simde_mm512_mask_mov_epi32(sub, simde_mm512_cmpgt_epi32_mask(a, simde_mm512_set1_epi32(0x387FFFFF)), nrm);
    h = simde_mm512_mask_mov_epi32(h, simde_mm512_cmpgt_epi32_mask(a, simde_mm512_set1_epi32(0x477FEFFF)),
                                   simde_mm512_set1_epi32(0x7C00));
    h = simde_mm512_mask_mov_epi32(h, simde_mm512_cmpgt_epi32_mask(a, simde_mm512_set1_epi32(0x7F800000)), nanh);
    /* negative: the sign, extended over the upper 17 bits */
    return simde_mm512_mask_or_epi32(h, simde_mm512_cmpgt_epi32_mask(simde_mm512_setzero_si512(), u), h,
                                     simde_mm512_set1_epi32((int32_t)0xFFFF8000u));
}
static inline simde__m512 dq__b2f__avx512(simde__m512i w) {
    const simde__mmask16 nan = simde_mm512_cmpgt_epi32_mask(simde_mm512_and_si512(w, simde_mm512_set1_epi32(0x7FFFFFFF)),
                                                             simde_mm512_set1_epi32(0x7F800000));
    return simde_mm512_castsi512_ps(simde_mm512_mask_or_epi32(w, nan, w, simde_mm512_set1_epi32(0x00400000)));
}
static inline simde__m512i dq__f2b__avx512(simde__m512 v) {
    const simde__m512i u = simde_mm512_castps_si512(v);
    const simde__mmask16 nan = simde_mm512_cmpgt_epi32_mask(simde_mm512_and_si512(u, simde_mm512_set1_epi32(0x7FFFFFFF)),
                                                             simde_mm512_set1_epi32(0x7F800000));
    const simde__m512i odd = simde_mm512_and_si512(simde_mm512_srli_epi32(u, 16), simde_mm512_set1_epi32(1));
    simde__m512i r = simde_mm512_add_epi32(u, simde_mm512_add_epi32(odd, simde_mm512_set1_epi32(0x7FFF)));
    r = simde_mm512_mask_or_epi32(r, nan, u, simde_mm512_set1_epi32(0x00400000));
    r = simde_mm512_srli_epi32(r, 16);
    /* sign-extend the 16-bit result (no 512-bit srai_epi32 in SIMDe 0.7.4): the rounding never
     * carries into the sign bit, so bit 15 is the sign of u */
    return simde_mm512_mask_or_epi32(r, simde_mm512_cmpgt_epi32_mask(simde_mm512_setzero_si512(), u), r,
                                     simde_mm512_set1_epi32((int32_t)0xFFFF0000u));
}

static inline void dq__f16_to_f32__avx512(const void *src, float *dst, size_t n) {
    const uint8_t *s = (const uint8_t *)src;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) simde_mm512_storeu_ps(dst + i, dq__h2f__avx512(dq__ld16x16__avx512(s + 2u * i)));
    dq__f16_to_f32__avx2(s + 2u * i, dst + i, n - i);
}
static inline void dq__f32_to_f16__avx512(const float *src, void *dst, size_t n) {
    uint8_t *d = (uint8_t *)dst;
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        simde_mm256_storeu_si256((simde__m256i *)(d + 2u * i),
                                 simde_mm512_cvtsepi32_epi16(dq__f2h__avx512(simde_mm512_loadu_ps(src + i))));
    dq__f32_to_f16__avx2(src + i, d + 2u * i, n - i);
}
static inline void dq__bf16_to_f32__avx512(const void *src, float *dst, size_t n) {
    const uint8_t *s = (const uint8_t *)src;
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        simde_mm512_storeu_ps(dst + i, dq__b2f__avx512(simde_mm512_slli_epi32(dq__ld16x16__avx512(s + 2u * i), 16)));
    dq__bf16_to_f32__avx2(s + 2u * i, dst + i, n - i);
}
static inline void dq__f32_to_bf16__avx512(const float *src, void *dst, size_t n) {
    uint8_t *d = (uint8_t *)dst;
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        simde_mm256_storeu_si256((simde__m256i *)(d + 2u * i),
                                 simde_mm512_cvtsepi32_epi16(dq__f2b__avx512(simde_mm512_loadu_ps(src + i))));
    dq__f32_to_bf16__avx2(src + i, d + 2u * i, n - i);
}
#endif /* AVX-512 */

/* ================================================================ AVX-512VL */
#if DQ__HAS_GAPS_VL
/* dq__elias_gaps__scalar with a block's 4 words in the 4 lanes: each word's predecessor comes
 * from the lane below (lane 0: the previous block's lane 3) through one vpermt2q per level;
 * the counts stay in vector lanes until the end. */
static inline void dq__elias_gaps__avx512(const uint8_t *in, unsigned b, size_t nblk, uint64_t *st, uint64_t *cnt) {
    const simde__m256i up = simde_mm256_setr_epi64x(7, 0, 1, 2); /* lane i takes a[i - 1], lane 0 b[3] */
    simde__m256i pm = simde_mm256_set1_epi64x((long long)st[0]), pt[6], c[7], m, p, t;
    uint64_t nz[4], part[4];
    size_t k;
    unsigned j;
    for (j = 1; j <= 5; j++) pt[j] = simde_mm256_set1_epi64x((long long)st[j]);
    for (j = 0; j < 7; j++) c[j] = simde_mm256_setzero_si256();
    for (k = 0; k < nblk; k++) {
        if (b == 2u || b == 4u || b == 8u) { /* as dq__elias_nz__avx2, each row's flags by vptestmd */
            const uint8_t *q = in + k * DQ__BLOCK_BYTES(b);
            uint32_t lm = 0;
            unsigned rpg = 32u / b, g, r, row = 0;
            simde__m256i L;
            for (r = 0; r < rpg; r++) lm |= ((1u << (b - 1u)) - 1u) << (r * b);
            L = simde_mm256_set1_epi32((int32_t)lm);
            nz[0] = nz[1] = nz[2] = nz[3] = 0;
            for (g = 0; g < b; g++) {
                simde__m256i v = simde_mm256_loadu_si256((const simde__m256i *)(q + 32u * g));
                v = simde_mm256_add_epi32(simde_mm256_and_si256(v, L), L);
                for (r = 0; r < rpg; r++, row++) {
                    simde__mmask8 f = simde_mm256_test_epi32_mask(v, simde_mm256_set1_epi32((int32_t)(1u << (r * b + b - 1u))));
                    nz[row >> 3] |= (uint64_t)f << (8u * (row & 7u));
                }
            }
        } else {
            dq__elias_nz__avx2(in + k * DQ__BLOCK_BYTES(b), b, nz);
        }
        m = simde_mm256_loadu_si256((const simde__m256i *)nz);
        p = simde_mm256_permutex2var_epi64(m, up, pm);
        c[0] = simde_mm256_add_epi64(c[0], simde_mm256_popcnt_epi64(m));
        t = simde_mm256_or_si256(simde_mm256_slli_epi64(m, 1), simde_mm256_srli_epi64(p, 63));
#define DQ__GAPS_LEVEL(J, H)                                                                                       \
    c[J - 1] = simde_mm256_add_epi64(c[J - 1], simde_mm256_popcnt_epi64(simde_mm256_andnot_si256(t, m)));       \
    {                                                                                                              \
        simde__m256i q = simde_mm256_permutex2var_epi64(t, up, pt[J - 1]);                                        \
        pt[J - 1] = t;                                                                                             \
        t = simde_mm256_or_si256(simde_mm256_or_si256(t, simde_mm256_slli_epi64(t, H)),                           \
                                 simde_mm256_or_si256(simde_mm256_srli_epi64(q, 64 - H),                           \
                                                      simde_mm256_or_si256(simde_mm256_slli_epi64(m, H),           \
                                                                           simde_mm256_srli_epi64(p, 64 - H))));   \
    }
        DQ__GAPS_LEVEL(2, 2)
        DQ__GAPS_LEVEL(3, 4)
        DQ__GAPS_LEVEL(4, 8)
        DQ__GAPS_LEVEL(5, 16)
        DQ__GAPS_LEVEL(6, 32)
#undef DQ__GAPS_LEVEL
        c[6] = simde_mm256_add_epi64(c[6], simde_mm256_popcnt_epi64(simde_mm256_andnot_si256(t, m)));
        pm = m;
    }
    simde_mm256_storeu_si256((simde__m256i *)part, pm);
    st[0] = part[3];
    for (j = 1; j <= 5; j++) {
        simde_mm256_storeu_si256((simde__m256i *)part, pt[j]);
        st[j] = part[3];
    }
    for (j = 0; j < 7; j++) {
        simde_mm256_storeu_si256((simde__m256i *)part, c[j]);
        cnt[j] += part[0] + part[1] + part[2] + part[3];
    }
}
#endif /* DQ__HAS_GAPS_VL */

#if DQ__HAS_R32_VL
/* AVX-512VL (256-bit) decoder: as dq__r32_get__avx2, the lanes that need a word found as a
 * mask register and fed by vpexpandd, which takes the movemask, table and permute round trip
 * (the longest part of a state's step) off the chain from one step to the next. */
static inline simde__m256i dq__r32_step__avx512(simde__m256i *xp, const uint32_t *tab, const uint8_t **pp) {
    const simde__m256i m12 = simde_mm256_set1_epi32(0xFFF);
    simde__m256i x = *xp, e, f, wv;
    simde__mmask8 ok;
    e = dq__r32_slots__avx2(tab, simde_mm256_and_si256(x, m12));
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
#if defined(__GNUC__) && !defined(__clang__) && DQ__HAS_AVX512_KERNELS
#pragma GCC diagnostic pop
#endif
