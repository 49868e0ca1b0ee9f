/* ================================================================ fp16 and bf16 conversions
 * dqsgd.h's typed codec (fp16 and bf16), whose scalar twins are there.
 *
 * Each kernel has a scalar twin above (dq__<name>__scalar) and produces the same bits
 * for every input, NaN included (tests/test_half.c compares them on all 65536 half patterns and
 * on millions of float patterns). Conversions:
 *   fp16 -> f32  exact; NaN: quiet bit set, sign and payload kept (payload << 13).
 *   f32 -> fp16  round to nearest even; overflow (|x| >= 65520) gives Inf; NaN: quiet bit set,
 *                sign and the top 10 payload bits kept. This is what F16C's vcvtps2ph/vcvtph2ps
 *                do with the immediate rounding mode 0, so the F16C kernels are twins too.
 *   bf16 -> f32  exact (h << 16); NaN: quiet bit set.
 *   f32 -> bf16  round to nearest even on the bit pattern; NaN: quiet bit set, top 7 payload bits.
 * Families:
 *   sse2   integer ops plus exact int-to-float conversions; also the NEON kernels (SIMDe maps the
 *          SSE2 intrinsics onto native NEON).
 *   avx2   the same at 256 bits.
 *   avx512 the same at 512 bits (AVX-512F only). SIMDe 0.7.4 has no 512-bit vpmovzxwd or
 *          vpmovdw wrappers, so halves are widened by two 256-bit vpmovzxwd and narrowed with the
 *          signed-saturating vpmovsdw on sign-extended values (exact).
 *   f16c   vcvtph2ps / vcvtps2ph on 8 lanes, where the compiler targets F16C (SIMDE_X86_F16C_NATIVE:
 *          -mf16c, -march=x86-64-v3 or newer; clang's -mavx512f implies it, gcc 12's -mavx2 and
 *          -mavx512f do not). Preferred for fp16 over the integer kernels of any width. SIMDe 0.7.4
 *          has no 512-bit vcvtph2ps/vcvtps2ph wrappers, so AVX-512 builds use the 256-bit forms.
 * Also here: dq__hstat_acc, the per-bucket statistics of dqsgd.h's stats kernels with their 16
 * double lanes carried in and out, for buckets that span the typed codec's chunks (SSE2 and AVX2;
 * the AVX-512 level uses AVX2, as dq__k_stats does).
 * Rounding-mode note: the one floating-point operation whose result depends on the rounding mode
 * is the subnormal-half branch of f32 -> fp16 (|x| < 2^-14 is rounded by adding 0.5f, whose ulp
 * is 2^-24); dqsgd requires the default environment (round to nearest) anyway. DAZ/FTZ do not
 * change any result here: the only float inputs that DAZ would zero round to a zero half. */
#if DQ__HAS_SSE2_KERNELS && DQ_SIMD != DQ_SIMD_NEON && defined(SIMDE_X86_F16C_NATIVE) && \
    defined(SIMDE_X86_AVX_NATIVE)
#define DQ__HAS_F16C_KERNELS 1
#else
#define DQ__HAS_F16C_KERNELS 0
#endif

/* <simde/x86/f16c.h> is included above when the target has F16C. */

/* ---- fp16/bf16: SSE2 (also NEON) */
#if DQ__HAS_SSE2_KERNELS

/* 4 halves, zero-extended to 32-bit lanes, to 4 floats. */
static inline simde__m128 dq__h2f__sse2(simde__m128i w) {
    const simde__m128i a = simde_mm_and_si128(w, simde_mm_set1_epi32(0x7FFF));
    const simde__m128i sgn = simde_mm_slli_epi32(simde_mm_xor_si128(w, a), 16);
    /* normal: rebias the exponent; subnormal: a * 2^-24, exact from the integer a */
    const simde__m128i nrm = simde_mm_add_epi32(simde_mm_slli_epi32(a, 13), simde_mm_set1_epi32(0x38000000));
    const simde__m128i sub =
        simde_mm_castps_si128(simde_mm_mul_ps(simde_mm_cvtepi32_ps(a), simde_mm_set1_ps(5.96046448e-08f)));
    const simde__m128i issub = simde_mm_cmplt_epi32(a, simde_mm_set1_epi32(0x0400));
    simde__m128i r = simde_mm_or_si128(simde_mm_and_si128(issub, sub), simde_mm_andnot_si128(issub, nrm));
    /* Inf / NaN: exponent 0x8F + 0x70 = 0xFF; NaN: quiet bit */
    r = simde_mm_add_epi32(r, simde_mm_and_si128(simde_mm_cmpgt_epi32(a, simde_mm_set1_epi32(0x7BFF)),
                                                 simde_mm_set1_epi32(0x38000000)));
    r = simde_mm_or_si128(r, simde_mm_and_si128(simde_mm_cmpgt_epi32(a, simde_mm_set1_epi32(0x7C00)),
                                                simde_mm_set1_epi32(0x00400000)));
    return simde_mm_castsi128_ps(simde_mm_or_si128(r, sgn));
}
/* 4 floats to 4 halves, each sign-extended to its 32-bit lane (so packs_epi32 is exact). */
static inline simde__m128i dq__f2h__sse2(simde__m128 v) {
    const simde__m128i u = simde_mm_castps_si128(v);
    const simde__m128i a = simde_mm_and_si128(u, simde_mm_set1_epi32(0x7FFFFFFF));
    const simde__m128i sgn = simde_mm_and_si128(simde_mm_srai_epi32(u, 31), simde_mm_set1_epi32((int32_t)0xFFFF8000u));
    /* normal halves: rebias, then round to nearest even at bit 13 */
    const simde__m128i t = simde_mm_sub_epi32(a, simde_mm_set1_epi32(0x38000000));
    const simde__m128i odd = simde_mm_and_si128(simde_mm_srli_epi32(t, 13), simde_mm_set1_epi32(1));
    const simde__m128i nrm =
        simde_mm_srli_epi32(simde_mm_add_epi32(simde_mm_add_epi32(t, simde_mm_set1_epi32(0x0FFF)), odd), 13);
    /* subnormal halves (|x| < 2^-14): |x| + 0.5 rounds |x| to a multiple of 2^-24 */
    const simde__m128i sub = simde_mm_sub_epi32(
        simde_mm_castps_si128(simde_mm_add_ps(simde_mm_castsi128_ps(a), simde_mm_set1_ps(0.5f))),
        simde_mm_set1_epi32(0x3F000000));
    const simde__m128i isn = simde_mm_cmpgt_epi32(a, simde_mm_set1_epi32(0x387FFFFF));
    const simde__m128i inf = simde_mm_cmpgt_epi32(a, simde_mm_set1_epi32(0x477FEFFF));
    const simde__m128i nan = simde_mm_cmpgt_epi32(a, simde_mm_set1_epi32(0x7F800000));
    simde__m128i h = simde_mm_or_si128(simde_mm_and_si128(isn, nrm), simde_mm_andnot_si128(isn, sub));
    h = simde_mm_or_si128(simde_mm_andnot_si128(inf, h), simde_mm_and_si128(inf, simde_mm_set1_epi32(0x7C00)));
    h = simde_mm_or_si128(h, simde_mm_and_si128(nan, simde_mm_or_si128(simde_mm_and_si128(simde_mm_srli_epi32(a, 13),
                                                                                        simde_mm_set1_epi32(0x03FF)),
                                                                       simde_mm_set1_epi32(0x0200))));
    return simde_mm_or_si128(h, sgn);
}
/* 4 bf16 in the high halves of 32-bit lanes (low halves zero) to 4 floats. */
static inline simde__m128 dq__b2f__sse2(simde__m128i w) {
    const simde__m128i nan = simde_mm_cmpgt_epi32(simde_mm_and_si128(w, simde_mm_set1_epi32(0x7FFFFFFF)),
                                                  simde_mm_set1_epi32(0x7F800000));
    return simde_mm_castsi128_ps(simde_mm_or_si128(w, simde_mm_and_si128(nan, simde_mm_set1_epi32(0x00400000))));
}
/* 4 floats to 4 bf16, sign-extended in their 32-bit lanes. */
static inline simde__m128i dq__f2b__sse2(simde__m128 v) {
    const simde__m128i u = simde_mm_castps_si128(v);
    const simde__m128i nan = simde_mm_cmpgt_epi32(simde_mm_and_si128(u, simde_mm_set1_epi32(0x7FFFFFFF)),
                                                  simde_mm_set1_epi32(0x7F800000));
    const simde__m128i odd = simde_mm_and_si128(simde_mm_srli_epi32(u, 16), simde_mm_set1_epi32(1));
    const simde__m128i rnd = simde_mm_add_epi32(u, simde_mm_add_epi32(odd, simde_mm_set1_epi32(0x7FFF)));
    const simde__m128i qn = simde_mm_or_si128(u, simde_mm_set1_epi32(0x00400000));
    return simde_mm_srai_epi32(simde_mm_or_si128(simde_mm_and_si128(nan, qn), simde_mm_andnot_si128(nan, rnd)), 16);
}

static inline void dq__f16_to_f32__sse2(const void *src, float *dst, size_t n) {
    const uint8_t *s = (const uint8_t *)src;
    const simde__m128i zero = simde_mm_setzero_si128();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        simde__m128i h = simde_mm_loadu_si128((const simde__m128i *)(s + 2u * i));
        simde_mm_storeu_ps(dst + i, dq__h2f__sse2(simde_mm_unpacklo_epi16(h, zero)));
        simde_mm_storeu_ps(dst + i + 4, dq__h2f__sse2(simde_mm_unpackhi_epi16(h, zero)));
    }
    dq__f16_to_f32__scalar(s + 2u * i, dst + i, n - i);
}
static inline void dq__f32_to_f16__sse2(const float *src, void *dst, size_t n) {
    uint8_t *d = (uint8_t *)dst;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        simde__m128i h0 = dq__f2h__sse2(simde_mm_loadu_ps(src + i)), h1 = dq__f2h__sse2(simde_mm_loadu_ps(src + i + 4));
        simde_mm_storeu_si128((simde__m128i *)(d + 2u * i), simde_mm_packs_epi32(h0, h1));
    }
    dq__f32_to_f16__scalar(src + i, d + 2u * i, n - i);
}
static inline void dq__bf16_to_f32__sse2(const void *src, float *dst, size_t n) {
    const uint8_t *s = (const uint8_t *)src;
    const simde__m128i zero = simde_mm_setzero_si128();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        simde__m128i h = simde_mm_loadu_si128((const simde__m128i *)(s + 2u * i));
        simde_mm_storeu_ps(dst + i, dq__b2f__sse2(simde_mm_unpacklo_epi16(zero, h)));
        simde_mm_storeu_ps(dst + i + 4, dq__b2f__sse2(simde_mm_unpackhi_epi16(zero, h)));
    }
    dq__bf16_to_f32__scalar(s + 2u * i, dst + i, n - i);
}
static inline void dq__f32_to_bf16__sse2(const float *src, void *dst, size_t n) {
    uint8_t *d = (uint8_t *)dst;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        simde__m128i h0 = dq__f2b__sse2(simde_mm_loadu_ps(src + i)), h1 = dq__f2b__sse2(simde_mm_loadu_ps(src + i + 4));
        simde_mm_storeu_si128((simde__m128i *)(d + 2u * i), simde_mm_packs_epi32(h0, h1));
    }
    dq__f32_to_bf16__scalar(src + i, d + 2u * i, n - i);
}

/* Carried statistics (twin: dq__hstat_acc__scalar), 16 elements a step into 8 registers of 2
 * double lanes, as dq__stats__sse2 does; the tail continues in the scalar twin. */
static inline void dq__hstat_acc__sse2(const float *x, const float *e, size_t n, unsigned what, double *sq, double *ab,
                                       uint32_t *mx) {
    const simde__m128i absm = simde_mm_set1_epi32(0x7FFFFFFF);
    simde__m128d qs[8], qa[8];
    simde__m128i m = simde_mm_setzero_si128();
    uint32_t m4[4];
    size_t i = 0;
    unsigned k;
    for (k = 0; k < 8; k++) {
        qs[k] = simde_mm_loadu_pd(sq + 2 * k);
        qa[k] = simde_mm_loadu_pd(ab + 2 * k);
    }
    for (; i + 16 <= n; i += 16) {
        for (k = 0; k < 4; k++) { /* 4 floats -> lanes 4k .. 4k+3 */
            simde__m128 v = simde_mm_loadu_ps(x + i + 4 * k);
            simde__m128i u;
            if (e) v = simde_mm_add_ps(v, simde_mm_loadu_ps(e + i + 4 * k));
            u = simde_mm_and_si128(simde_mm_castps_si128(v), absm);
            if (what & DQ__ST_MAX) { /* |x| bits fit in 31 bits: the signed compare orders them */
                simde__m128i g = simde_mm_cmpgt_epi32(u, m);
                m = simde_mm_or_si128(simde_mm_and_si128(g, u), simde_mm_andnot_si128(g, m));
            }
            if (what & (DQ__ST_SQ | DQ__ST_ABS)) {
                simde__m128 f = simde_mm_castsi128_ps(u);
                simde__m128d d0 = simde_mm_cvtps_pd(f), d1 = simde_mm_cvtps_pd(simde_mm_movehl_ps(f, f));
                if (what & DQ__ST_ABS) {
                    qa[2 * k] = simde_mm_add_pd(qa[2 * k], d0);
                    qa[2 * k + 1] = simde_mm_add_pd(qa[2 * k + 1], d1);
                }
                if (what & DQ__ST_SQ) {
                    qs[2 * k] = simde_mm_add_pd(qs[2 * k], simde_mm_mul_pd(d0, d0));
                    qs[2 * k + 1] = simde_mm_add_pd(qs[2 * k + 1], simde_mm_mul_pd(d1, d1));
                }
            }
        }
    }
    for (k = 0; k < 8; k++) {
        if (what & DQ__ST_SQ) simde_mm_storeu_pd(sq + 2 * k, qs[k]);
        if (what & DQ__ST_ABS) simde_mm_storeu_pd(ab + 2 * k, qa[k]);
    }
    simde_mm_storeu_si128((simde__m128i *)m4, m);
    if (what & DQ__ST_MAX)
        for (k = 0; k < 4; k++)
            if (m4[k] > *mx) *mx = m4[k];
    dq__hstat_acc__scalar(x + i, e ? e + i : NULL, n - i, what, sq, ab, mx);
}
#endif /* SSE2 */

/* ---- fp16/bf16: AVX2 */
#if DQ__HAS_AVX2_KERNELS

/* 8 halves in 32-bit lanes to 8 floats; selects with blendv (see the SSE2 twin for the steps). */
static inline simde__m256 dq__h2f__avx2(simde__m256i w) {
    const simde__m256i a = simde_mm256_and_si256(w, simde_mm256_set1_epi32(0x7FFF));
    const simde__m256i sgn = simde_mm256_slli_epi32(simde_mm256_xor_si256(w, a), 16);
    const simde__m256i nrm = simde_mm256_add_epi32(simde_mm256_slli_epi32(a, 13), simde_mm256_set1_epi32(0x38000000));
    const simde__m256i sub = simde_mm256_castps_si256(
        simde_mm256_mul_ps(simde_mm256_cvtepi32_ps(a), simde_mm256_set1_ps(5.96046448e-08f)));
    const simde__m256i issub = simde_mm256_cmpgt_epi32(simde_mm256_set1_epi32(0x0400), a);
    simde__m256i r = simde_mm256_blendv_epi8(nrm, sub, issub);
    r = simde_mm256_add_epi32(r, simde_mm256_and_si256(simde_mm256_cmpgt_epi32(a, simde_mm256_set1_epi32(0x7BFF)),
                                                       simde_mm256_set1_epi32(0x38000000)));
    r = simde_mm256_or_si256(r, simde_mm256_and_si256(simde_mm256_cmpgt_epi32(a, simde_mm256_set1_epi32(0x7C00)),
                                                      simde_mm256_set1_epi32(0x00400000)));
    return simde_mm256_castsi256_ps(simde_mm256_or_si256(r, sgn));
}
static inline simde__m256i dq__f2h__avx2(simde__m256 v) {
    const simde__m256i u = simde_mm256_castps_si256(v);
    const simde__m256i a = simde_mm256_and_si256(u, simde_mm256_set1_epi32(0x7FFFFFFF));
    const simde__m256i sgn =
        simde_mm256_and_si256(simde_mm256_srai_epi32(u, 31), simde_mm256_set1_epi32((int32_t)0xFFFF8000u));
    const simde__m256i t = simde_mm256_sub_epi32(a, simde_mm256_set1_epi32(0x38000000));
    const simde__m256i odd = simde_mm256_and_si256(simde_mm256_srli_epi32(t, 13), simde_mm256_set1_epi32(1));
    const simde__m256i nrm =
        simde_mm256_srli_epi32(simde_mm256_add_epi32(simde_mm256_add_epi32(t, simde_mm256_set1_epi32(0x0FFF)), odd), 13);
    const simde__m256i sub = simde_mm256_sub_epi32(
        simde_mm256_castps_si256(simde_mm256_add_ps(simde_mm256_castsi256_ps(a), simde_mm256_set1_ps(0.5f))),
        simde_mm256_set1_epi32(0x3F000000));
    const simde__m256i nanh = simde_mm256_or_si256(
        simde_mm256_and_si256(simde_mm256_srli_epi32(a, 13), simde_mm256_set1_epi32(0x03FF)), simde_mm256_set1_epi32(0x7E00));
    simde__m256i h = simde_mm256_blendv_epi8(sub, nrm, simde_mm256_cmpgt_epi32(a, simde_mm256_set1_epi32(0x387FFFFF)));
    h = simde_mm256_blendv_epi8(h, simde_mm256_set1_epi32(0x7C00),
                                simde_mm256_cmpgt_epi32(a, simde_mm256_set1_epi32(0x477FEFFF)));
    h = simde_mm256_blendv_epi8(h, nanh, simde_mm256_cmpgt_epi32(a, simde_mm256_set1_epi32(0x7F800000)));
    return simde_mm256_or_si256(h, sgn);
}
static inline simde__m256 dq__b2f__avx2(simde__m256i w) {
    const simde__m256i nan = simde_mm256_cmpgt_epi32(simde_mm256_and_si256(w, simde_mm256_set1_epi32(0x7FFFFFFF)),
                                                     simde_mm256_set1_epi32(0x7F800000));
    return simde_mm256_castsi256_ps(
        simde_mm256_or_si256(w, simde_mm256_and_si256(nan, simde_mm256_set1_epi32(0x00400000))));
}
static inline simde__m256i dq__f2b__avx2(simde__m256 v) {
    const simde__m256i u = simde_mm256_castps_si256(v);
    const simde__m256i nan = simde_mm256_cmpgt_epi32(simde_mm256_and_si256(u, simde_mm256_set1_epi32(0x7FFFFFFF)),
                                                     simde_mm256_set1_epi32(0x7F800000));
    const simde__m256i odd = simde_mm256_and_si256(simde_mm256_srli_epi32(u, 16), simde_mm256_set1_epi32(1));
    const simde__m256i rnd = simde_mm256_add_epi32(u, simde_mm256_add_epi32(odd, simde_mm256_set1_epi32(0x7FFF)));
    const simde__m256i qn = simde_mm256_or_si256(u, simde_mm256_set1_epi32(0x00400000));
    return simde_mm256_srai_epi32(simde_mm256_blendv_epi8(rnd, qn, nan), 16);
}
/* Two vectors of 8 sign-extended 16-bit values to 16 halves in order (packs works per 128-bit
 * lane: qwords 0,2,1,3 put them back in order). */
static inline simde__m256i dq__pack16__avx2(simde__m256i a, simde__m256i b) {
    return simde_mm256_permute4x64_epi64(simde_mm256_packs_epi32(a, b), 0xD8);
}

static inline void dq__f16_to_f32__avx2(const void *src, float *dst, size_t n) {
    const uint8_t *s = (const uint8_t *)src;
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        simde_mm256_storeu_ps(dst + i, dq__h2f__avx2(simde_mm256_cvtepu16_epi32(
                                           simde_mm_loadu_si128((const simde__m128i *)(s + 2u * i)))));
    dq__f16_to_f32__scalar(s + 2u * i, dst + i, n - i);
}
static inline void dq__f32_to_f16__avx2(const float *src, void *dst, size_t n) {
    uint8_t *d = (uint8_t *)dst;
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        simde_mm256_storeu_si256((simde__m256i *)(d + 2u * i),
                                 dq__pack16__avx2(dq__f2h__avx2(simde_mm256_loadu_ps(src + i)),
                                                  dq__f2h__avx2(simde_mm256_loadu_ps(src + i + 8))));
    dq__f32_to_f16__scalar(src + i, d + 2u * i, n - i);
}
static inline void dq__bf16_to_f32__avx2(const void *src, float *dst, size_t n) {
    const uint8_t *s = (const uint8_t *)src;
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        simde_mm256_storeu_ps(dst + i, dq__b2f__avx2(simde_mm256_slli_epi32(
                                           simde_mm256_cvtepu16_epi32(simde_mm_loadu_si128((const simde__m128i *)(s + 2u * i))),
                                           16)));
    dq__bf16_to_f32__scalar(s + 2u * i, dst + i, n - i);
}
static inline void dq__f32_to_bf16__avx2(const float *src, void *dst, size_t n) {
    uint8_t *d = (uint8_t *)dst;
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        simde_mm256_storeu_si256((simde__m256i *)(d + 2u * i),
                                 dq__pack16__avx2(dq__f2b__avx2(simde_mm256_loadu_ps(src + i)),
                                                  dq__f2b__avx2(simde_mm256_loadu_ps(src + i + 8))));
    dq__f32_to_bf16__scalar(src + i, d + 2u * i, n - i);
}

/* Carried statistics, 16 elements a step into 4 registers of 4 double lanes (dq__stats__avx2). */
static inline void dq__hstat_acc__avx2(const float *x, const float *e, size_t n, unsigned what, double *sq, double *ab,
                                       uint32_t *mx) {
    const simde__m256i absm = simde_mm256_set1_epi32(0x7FFFFFFF);
    simde__m256d qs[4], qa[4];
    simde__m256i m = simde_mm256_setzero_si256();
    uint32_t m8[8];
    size_t i = 0;
    unsigned k;
    for (k = 0; k < 4; k++) {
        qs[k] = simde_mm256_loadu_pd(sq + 4 * k);
        qa[k] = simde_mm256_loadu_pd(ab + 4 * k);
    }
    for (; i + 16 <= n; i += 16) {
        simde__m256 v0 = simde_mm256_loadu_ps(x + i), v1 = simde_mm256_loadu_ps(x + i + 8);
        simde__m256i u0, u1;
        if (e) {
            v0 = simde_mm256_add_ps(v0, simde_mm256_loadu_ps(e + i));
            v1 = simde_mm256_add_ps(v1, simde_mm256_loadu_ps(e + i + 8));
        }
        u0 = simde_mm256_and_si256(simde_mm256_castps_si256(v0), absm);
        u1 = simde_mm256_and_si256(simde_mm256_castps_si256(v1), absm);
        if (what & DQ__ST_MAX) m = simde_mm256_max_epu32(m, simde_mm256_max_epu32(u0, u1));
        if (what & (DQ__ST_SQ | DQ__ST_ABS)) {
            simde__m256 f0 = simde_mm256_castsi256_ps(u0), f1 = simde_mm256_castsi256_ps(u1);
            simde__m256d d[4];
            d[0] = simde_mm256_cvtps_pd(simde_mm256_castps256_ps128(f0)); /* lanes 0..3 */
            d[1] = simde_mm256_cvtps_pd(simde_mm256_extractf128_ps(f0, 1)); /* lanes 4..7 */
            d[2] = simde_mm256_cvtps_pd(simde_mm256_castps256_ps128(f1));   /* lanes 8..11 */
            d[3] = simde_mm256_cvtps_pd(simde_mm256_extractf128_ps(f1, 1)); /* lanes 12..15 */
            for (k = 0; k < 4; k++) {
                if (what & DQ__ST_ABS) qa[k] = simde_mm256_add_pd(qa[k], d[k]);
                if (what & DQ__ST_SQ) qs[k] = simde_mm256_add_pd(qs[k], simde_mm256_mul_pd(d[k], d[k]));
            }
        }
    }
    for (k = 0; k < 4; k++) {
        if (what & DQ__ST_SQ) simde_mm256_storeu_pd(sq + 4 * k, qs[k]);
        if (what & DQ__ST_ABS) simde_mm256_storeu_pd(ab + 4 * k, qa[k]);
    }
    simde_mm256_storeu_si256((simde__m256i *)m8, m);
    if (what & DQ__ST_MAX)
        for (k = 0; k < 8; k++)
            if (m8[k] > *mx) *mx = m8[k];
    dq__hstat_acc__scalar(x + i, e ? e + i : NULL, n - i, what, sq, ab, mx);
}
#endif /* AVX2 */

/* GCC's AVX-512 intrinsics self-initialize "undefined" vectors (see dqsgd_simd.h); g++ reports
 * the pass-through of vpmovsdw as -Wuninitialized. The values are never read. */
#if defined(__GNUC__) && !defined(__clang__) && DQ__HAS_AVX512_KERNELS
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#define DQ__HALF_POP_MAYBE_UNINIT
#endif

/* ---- fp16/bf16: AVX-512F */
#if DQ__HAS_AVX512_KERNELS

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
#ifdef DQ__HALF_POP_MAYBE_UNINIT
#pragma GCC diagnostic pop
#undef DQ__HALF_POP_MAYBE_UNINIT
#endif

/* ---- fp16/bf16: F16C (8 lanes) */
#if DQ__HAS_F16C_KERNELS
static inline void dq__f16_to_f32__f16c(const void *src, float *dst, size_t n) {
    const uint8_t *s = (const uint8_t *)src;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        simde__m256 a = simde_mm256_cvtph_ps(simde_mm_loadu_si128((const simde__m128i *)(s + 2u * i)));
        simde__m256 b = simde_mm256_cvtph_ps(simde_mm_loadu_si128((const simde__m128i *)(s + 2u * i + 16u)));
        simde_mm256_storeu_ps(dst + i, a);
        simde_mm256_storeu_ps(dst + i + 8, b);
    }
    for (; i + 8 <= n; i += 8)
        simde_mm256_storeu_ps(dst + i, simde_mm256_cvtph_ps(simde_mm_loadu_si128((const simde__m128i *)(s + 2u * i))));
    dq__f16_to_f32__scalar(s + 2u * i, dst + i, n - i);
}
/* Immediate 0 (round to nearest even, whatever MXCSR says) with exceptions suppressed. */
#define DQ__F16C_RNE (SIMDE_MM_FROUND_TO_NEAREST_INT | SIMDE_MM_FROUND_NO_EXC)
static inline void dq__f32_to_f16__f16c(const float *src, void *dst, size_t n) {
    uint8_t *d = (uint8_t *)dst;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        simde__m128i a = simde_mm256_cvtps_ph(simde_mm256_loadu_ps(src + i), DQ__F16C_RNE);
        simde__m128i b = simde_mm256_cvtps_ph(simde_mm256_loadu_ps(src + i + 8), DQ__F16C_RNE);
        simde_mm_storeu_si128((simde__m128i *)(d + 2u * i), a);
        simde_mm_storeu_si128((simde__m128i *)(d + 2u * i + 16u), b);
    }
    for (; i + 8 <= n; i += 8)
        simde_mm_storeu_si128((simde__m128i *)(d + 2u * i), simde_mm256_cvtps_ph(simde_mm256_loadu_ps(src + i), DQ__F16C_RNE));
    dq__f32_to_f16__scalar(src + i, d + 2u * i, n - i);
}
#endif /* F16C */
#ifdef __cplusplus
}
#endif
#ifdef DQ__POP_MAYBE_UNINIT
#pragma GCC diagnostic pop
#undef DQ__POP_MAYBE_UNINIT
#endif

