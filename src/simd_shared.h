/* ================================================================ shared-scale levels
 * dq__shared_q (dqsgd.h has the scalar twin and the rules): 4 or 8 lanes; AVX-512 builds use the
 * AVX2 kernel (the sign-magnitude to signed conversion needs cvtepi32_ps at 512 bits). */
#ifdef __cplusplus
extern "C" {
#endif
#if DQ__HAS_SSE2_KERNELS
static inline void dq__shared_q__sse2(const float *x, float *r, size_t cnt, size_t i0, float inv, float unit,
                                      uint32_t k0, uint32_t k1h, int stoch, int32_t *lv) {
    const simde__m128 vinv = simde_mm_set1_ps(inv), vunit = simde_mm_set1_ps(unit);
    const simde__m128 two24 = simde_mm_set1_ps(16777216.0f), half = simde_mm_set1_ps(0.5f);
    const simde__m128i absm = simde_mm_set1_epi32(0x7FFFFFFF), K0 = simde_mm_set1_epi32((int32_t)k0);
    const simde__m128i K1 = simde_mm_set1_epi32((int32_t)k1h), four = simde_mm_set1_epi32(4);
    simde__m128i idx = simde_mm_add_epi32(simde_mm_set1_epi32((int32_t)(uint32_t)i0), simde_mm_setr_epi32(0, 1, 2, 3));
    size_t j = 0;
    for (; j + 4u <= cnt; j += 4u) {
        simde__m128 v = simde_mm_loadu_ps(x + j), t, f, up;
        simde__m128i bits, lo, s;
        if (r) v = simde_mm_add_ps(v, simde_mm_loadu_ps(r + j));
        bits = simde_mm_castps_si128(v);
        t = simde_mm_mul_ps(simde_mm_castsi128_ps(simde_mm_and_si128(bits, absm)), vinv);
        lo = simde_mm_cvttps_epi32(t);
        f = simde_mm_sub_ps(t, simde_mm_cvtepi32_ps(lo));
        up = stoch ? simde_mm_cmplt_ps(simde_mm_cvtepi32_ps(dq__draw24__sse2(idx, K0, K1)), simde_mm_mul_ps(f, two24))
                   : simde_mm_cmpgt_ps(f, half);
        lo = simde_mm_sub_epi32(lo, simde_mm_castps_si128(up)); /* the mask is -1 where rounding up */
        s = simde_mm_srai_epi32(bits, 31);
        lo = simde_mm_sub_epi32(simde_mm_xor_si128(lo, s), s);
        simde_mm_storeu_si128((simde__m128i *)(void *)(lv + j), lo);
        if (r) simde_mm_storeu_ps(r + j, simde_mm_sub_ps(v, simde_mm_mul_ps(simde_mm_cvtepi32_ps(lo), vunit)));
        idx = simde_mm_add_epi32(idx, four);
    }
    if (j < cnt) dq__shared_q__scalar(x + j, r ? r + j : NULL, cnt - j, i0 + j, inv, unit, k0, k1h, stoch, lv + j);
}
#endif
#if DQ__HAS_AVX2_KERNELS
static inline void dq__shared_q__avx2(const float *x, float *r, size_t cnt, size_t i0, float inv, float unit,
                                      uint32_t k0, uint32_t k1h, int stoch, int32_t *lv) {
    const simde__m256 vinv = simde_mm256_set1_ps(inv), vunit = simde_mm256_set1_ps(unit);
    const simde__m256 two24 = simde_mm256_set1_ps(16777216.0f), half = simde_mm256_set1_ps(0.5f);
    const simde__m256i absm = simde_mm256_set1_epi32(0x7FFFFFFF), K0 = simde_mm256_set1_epi32((int32_t)k0);
    const simde__m256i K1 = simde_mm256_set1_epi32((int32_t)k1h), eight = simde_mm256_set1_epi32(8);
    simde__m256i idx = simde_mm256_add_epi32(simde_mm256_set1_epi32((int32_t)(uint32_t)i0),
                                             simde_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    size_t j = 0;
    for (; j + 8u <= cnt; j += 8u) {
        simde__m256 v = simde_mm256_loadu_ps(x + j), t, f, up;
        simde__m256i bits, lo, s;
        if (r) v = simde_mm256_add_ps(v, simde_mm256_loadu_ps(r + j));
        bits = simde_mm256_castps_si256(v);
        t = simde_mm256_mul_ps(simde_mm256_castsi256_ps(simde_mm256_and_si256(bits, absm)), vinv);
        lo = simde_mm256_cvttps_epi32(t);
        f = simde_mm256_sub_ps(t, simde_mm256_cvtepi32_ps(lo));
        up = stoch ? simde_mm256_cmp_ps(simde_mm256_cvtepi32_ps(dq__draw24__avx2(idx, K0, K1)),
                                        simde_mm256_mul_ps(f, two24), SIMDE_CMP_LT_OQ)
                   : simde_mm256_cmp_ps(f, half, SIMDE_CMP_GT_OQ);
        lo = simde_mm256_sub_epi32(lo, simde_mm256_castps_si256(up));
        s = simde_mm256_srai_epi32(bits, 31);
        lo = simde_mm256_sub_epi32(simde_mm256_xor_si256(lo, s), s);
        simde_mm256_storeu_si256((simde__m256i *)(void *)(lv + j), lo);
        if (r)
            simde_mm256_storeu_ps(r + j, simde_mm256_sub_ps(v, simde_mm256_mul_ps(simde_mm256_cvtepi32_ps(lo), vunit)));
        idx = simde_mm256_add_epi32(idx, eight);
    }
    if (j < cnt) dq__shared_q__scalar(x + j, r ? r + j : NULL, cnt - j, i0 + j, inv, unit, k0, k1h, stoch, lv + j);
}
#endif
#ifdef __cplusplus
}
#endif

#if defined(__GNUC__) && !defined(__clang__) && DQ__HAS_AVX512_KERNELS /* as for the AVX-512 section */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#define DQ__POP_MAYBE_UNINIT
#endif
#ifdef __cplusplus
extern "C" {
#endif
