/* ================================================================ sparse key masks
 * The sparsifiers' 64-element scan (dqsgd.h, sparsifiers).
 * Scalar twin: dq__sp_mask64__scalar. c = x (+ e) is one float add per element, identical in
 * every width; the key test key >= lo is a signed 32-bit compare key > lo - 1, exact because
 * keys are <= 0x7FFFFFFF and lo <= 0x7F800000. SSE2 and AVX2 first OR the 64 compares and
 * build the mask only when one is set (rare: the passes look for the top of the vector);
 * AVX-512 compares into mask registers, which costs nothing to combine. Reached only when
 * dqsgd_simd.h was included. */
#if DQ__HAS_AVX512_KERNELS
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
#elif DQ__HAS_AVX2_KERNELS
static inline uint64_t dq__sp_mask64__avx2(const float *x, const float *e, float *eo, uint32_t lo) {
    const simde__m256i abs = simde_mm256_set1_epi32(0x7FFFFFFF), lim = simde_mm256_set1_epi32((int32_t)lo - 1);
    simde__m256i any = simde_mm256_setzero_si256();
    uint64_t m = 0;
    unsigned v;
    for (v = 0; v < 8u; v++) { /* mostly nothing reaches lo: one test for the 64 */
        simde__m256 c = simde_mm256_loadu_ps(x + 8u * v);
        if (e) c = simde_mm256_add_ps(c, simde_mm256_loadu_ps(e + 8u * v));
        if (eo) simde_mm256_storeu_ps(eo + 8u * v, c);
        any = simde_mm256_or_si256(any, simde_mm256_cmpgt_epi32(simde_mm256_and_si256(simde_mm256_castps_si256(c), abs), lim));
    }
    if (simde_mm256_movemask_epi8(any) == 0) return 0;
    for (v = 0; v < 8u; v++) {
        simde__m256 c = eo ? simde_mm256_loadu_ps(eo + 8u * v) : simde_mm256_loadu_ps(x + 8u * v);
        simde__m256i gt;
        if (e && !eo) c = simde_mm256_add_ps(c, simde_mm256_loadu_ps(e + 8u * v));
        gt = simde_mm256_cmpgt_epi32(simde_mm256_and_si256(simde_mm256_castps_si256(c), abs), lim);
        m |= (uint64_t)(uint32_t)simde_mm256_movemask_ps(simde_mm256_castsi256_ps(gt)) << (8u * v);
    }
    return m;
}
#elif DQ__HAS_SSE2_KERNELS
static inline uint64_t dq__sp_mask64__sse2(const float *x, const float *e, float *eo, uint32_t lo) {
    const simde__m128i abs = simde_mm_set1_epi32(0x7FFFFFFF), lim = simde_mm_set1_epi32((int32_t)lo - 1);
    simde__m128i any = simde_mm_setzero_si128();
    uint64_t m = 0;
    unsigned v;
    for (v = 0; v < 16u; v++) { /* mostly nothing reaches lo: one test for the 64 */
        simde__m128 c = simde_mm_loadu_ps(x + 4u * v);
        if (e) c = simde_mm_add_ps(c, simde_mm_loadu_ps(e + 4u * v));
        if (eo) simde_mm_storeu_ps(eo + 4u * v, c);
        any = simde_mm_or_si128(any, simde_mm_cmpgt_epi32(simde_mm_and_si128(simde_mm_castps_si128(c), abs), lim));
    }
    if (simde_mm_movemask_epi8(any) == 0) return 0;
    for (v = 0; v < 16u; v++) {
        simde__m128 c = eo ? simde_mm_loadu_ps(eo + 4u * v) : simde_mm_loadu_ps(x + 4u * v);
        simde__m128i gt;
        if (e && !eo) c = simde_mm_add_ps(c, simde_mm_loadu_ps(e + 4u * v));
        gt = simde_mm_cmpgt_epi32(simde_mm_and_si128(simde_mm_castps_si128(c), abs), lim);
        m |= (uint64_t)(uint32_t)simde_mm_movemask_ps(simde_mm_castsi128_ps(gt)) << (4u * v);
    }
    return m;
}
#endif

/* ================================================================ count-sketch hashes
 * dq__sk_hash (dqsgd.h, count sketch; scalar twin dq__sk_hash__scalar). SIMD twins (bit-identical): 8 or 16 lanes of the same 32-bit arithmetic; the multiply-shift
 * takes the high halves of two 32x32->64 products (even and odd lanes). */
#if DQ__HAS_AVX2_KERNELS
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wcast-align"
#endif
static inline void dq__sk_hash__avx2(uint32_t k0, uint32_t k1, uint32_t cols, uint32_t first, size_t cnt,
                                         uint32_t *out) {
    const simde__m256i vk0 = simde_mm256_set1_epi32((int32_t)k0), vk1 = simde_mm256_set1_epi32((int32_t)k1);
    const simde__m256i m1 = simde_mm256_set1_epi32((int32_t)0x7FEB352D),
                       m2 = simde_mm256_set1_epi32((int32_t)0x846CA68Bu);
    const simde__m256i vc = simde_mm256_set1_epi32((int32_t)cols), eight = simde_mm256_set1_epi32(8);
    simde__m256i idx =
        simde_mm256_add_epi32(simde_mm256_set1_epi32((int32_t)first), simde_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    size_t t = 0;
    for (; t + 8u <= cnt; t += 8u) {
        simde__m256i x = simde_mm256_xor_si256(idx, vk0), lo, hi;
        x = simde_mm256_xor_si256(x, simde_mm256_srli_epi32(x, 16));
        x = simde_mm256_mullo_epi32(x, m1);
        x = simde_mm256_xor_si256(x, simde_mm256_xor_si256(simde_mm256_srli_epi32(x, 15), vk1));
        x = simde_mm256_mullo_epi32(x, m2);
        x = simde_mm256_xor_si256(x, simde_mm256_srli_epi32(x, 16));
        lo = simde_mm256_srli_epi64(simde_mm256_mul_epu32(x, vc), 32); /* even lanes */
        hi = simde_mm256_mul_epu32(simde_mm256_srli_epi64(x, 32), vc); /* odd lanes, high half in place */
        lo = simde_mm256_blend_epi32(lo, hi, 0xAA);
        simde_mm256_storeu_si256((simde__m256i *)(void *)(out + t),
                                 simde_mm256_or_si256(lo, simde_mm256_slli_epi32(x, 31)));
        idx = simde_mm256_add_epi32(idx, eight);
    }
    dq__sk_hash__scalar(k0, k1, cols, first + (uint32_t)t, cnt - t, out + t);
}
#if DQ__HAS_AVX512_KERNELS
static inline void dq__sk_hash__avx512(uint32_t k0, uint32_t k1, uint32_t cols, uint32_t first, size_t cnt,
                                           uint32_t *out) {
    const simde__m512i vk0 = simde_mm512_set1_epi32((int32_t)k0), vk1 = simde_mm512_set1_epi32((int32_t)k1);
    const simde__m512i m1 = simde_mm512_set1_epi32((int32_t)0x7FEB352D),
                       m2 = simde_mm512_set1_epi32((int32_t)0x846CA68Bu);
    const simde__m512i vc = simde_mm512_set1_epi32((int32_t)cols), sixteen = simde_mm512_set1_epi32(16);
    simde__m512i idx =
        simde_mm512_add_epi32(simde_mm512_set1_epi32((int32_t)first),
                              simde_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    size_t t = 0;
    for (; t + 16u <= cnt; t += 16u) {
        simde__m512i x = simde_mm512_xor_si512(idx, vk0), lo, hi;
        x = simde_mm512_xor_si512(x, simde_mm512_srli_epi32(x, 16));
        x = simde_mm512_mullo_epi32(x, m1);
        x = simde_mm512_xor_si512(x, simde_mm512_xor_si512(simde_mm512_srli_epi32(x, 15), vk1));
        x = simde_mm512_mullo_epi32(x, m2);
        x = simde_mm512_xor_si512(x, simde_mm512_srli_epi32(x, 16));
        lo = simde_mm512_srli_epi64(simde_mm512_mul_epu32(x, vc), 32);
        hi = simde_mm512_mul_epu32(simde_mm512_srli_epi64(x, 32), vc);
        lo = simde_mm512_mask_blend_epi32((simde__mmask16)0xAAAAu, lo, hi);
        simde_mm512_storeu_si512((void *)(out + t), simde_mm512_or_si512(lo, simde_mm512_slli_epi32(x, 31)));
        idx = simde_mm512_add_epi32(idx, sixteen);
    }
    dq__sk_hash__scalar(k0, k1, cols, first + (uint32_t)t, cnt - t, out + t);
}
#endif /* AVX-512 */
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif /* AVX2 */

