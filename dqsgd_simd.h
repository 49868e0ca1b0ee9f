/* dqsgd_simd.h - SIMD kernels for dqsgd.h, written with SIMDe (simde_ names only).
 *
 * Part of dqsgd.h, not a header of its own: dqsgd.h includes it where the kernels are chosen,
 * when SIMDe is on the include path and DQ_NO_SIMD is not defined. Include dqsgd.h; including
 * this file before it is an error, and after it adds nothing. The kernel set is chosen at
 * compile time from what the compiler targets natively: AVX-512F, AVX2, SSE2, or NEON on
 * little-endian AArch64 (which runs the SSE2 kernels: SIMDe implements those intrinsics with
 * native NEON); anything else uses the scalar reference in dqsgd.h rather than SIMDe's
 * emulation. Every kernel here has a scalar twin in dqsgd.h named with __scalar and produces
 * the same bits; dqsgd.h's kernel list says which kernel each family uses. This file never
 * defines SIMDe configuration macros. Runtime dispatch is not built in: compile one
 * translation unit per ISA instead.
 *
 * This part (src/simd_setup.h) sets the level, includes SIMDe and sets the kernel flags; the
 * kernels follow by ISA (src/simd_sse2.h, simd_avx2.h, simd_avx512.h) and src/simd_end.h
 * closes the file. */
#ifndef DQSGD_H_INCLUDED
#error "dqsgd_simd.h is part of dqsgd.h, which includes it: include dqsgd.h instead"
#endif
#if defined(DQ__SIMD_PART) && !defined(DQSGD_SIMD_H_INCLUDED)
#define DQSGD_SIMD_H_INCLUDED

/* Requested or detected level, from the compiler's target macros. */
#ifndef DQ_SIMD
#if defined(__AVX512F__)
#define DQ_SIMD DQ_SIMD_AVX512
#elif defined(__AVX2__)
#define DQ_SIMD DQ_SIMD_AVX2
#elif defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#define DQ_SIMD DQ_SIMD_SSE2
#elif defined(__aarch64__) && defined(__ARM_NEON) && !defined(__AARCH64EB__)
#define DQ_SIMD DQ_SIMD_NEON
#else
#define DQ_SIMD DQ_SIMD_SCALAR
#endif
#endif

/* Kernel families compiled at each level. NEON (4) is numerically above AVX512 (3) but gets
 * only the SSE2 family, so guards use these rather than comparing levels with >=. */
#if DQ_SIMD != DQ_SIMD_SCALAR && DQ_SIMD != DQ_SIMD_SSE2 && DQ_SIMD != DQ_SIMD_AVX2 && DQ_SIMD != DQ_SIMD_AVX512 && \
    DQ_SIMD != DQ_SIMD_NEON
#error "DQ_SIMD must be DQ_SIMD_SCALAR, DQ_SIMD_SSE2, DQ_SIMD_AVX2, DQ_SIMD_AVX512 or DQ_SIMD_NEON"
#endif
#if DQ_SIMD == DQ_SIMD_SSE2 || DQ_SIMD == DQ_SIMD_AVX2 || DQ_SIMD == DQ_SIMD_AVX512 || DQ_SIMD == DQ_SIMD_NEON
#define DQ__HAS_SSE2_KERNELS 1
#else
#define DQ__HAS_SSE2_KERNELS 0
#endif
#if DQ_SIMD == DQ_SIMD_AVX2 || DQ_SIMD == DQ_SIMD_AVX512
#define DQ__HAS_AVX2_KERNELS 1
#else
#define DQ__HAS_AVX2_KERNELS 0
#endif
#if DQ_SIMD == DQ_SIMD_AVX512
#define DQ__HAS_AVX512_KERNELS 1
#else
#define DQ__HAS_AVX512_KERNELS 0
#endif

/* The rANS decoder's mask-register twin: 256-bit AVX-512VL instructions (vpexpandd). */
#if DQ__HAS_AVX512_KERNELS && defined(__AVX512VL__)
#define DQ__HAS_R32_VL 1
#else
#define DQ__HAS_R32_VL 0
#endif
/* The Elias early-stop pass, 4 words at once: AVX-512VL with VPOPCNTDQ. */
#if DQ__HAS_R32_VL && defined(__AVX512VPOPCNTDQ__)
#define DQ__HAS_GAPS_VL 1
#else
#define DQ__HAS_GAPS_VL 0
#endif

#if DQ_SIMD != DQ_SIMD_SCALAR && !(defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) && \
    !defined(_MSC_VER)
#error "dqsgd SIMD kernels assume a little-endian target; define DQ_NO_SIMD"
#endif

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wdouble-promotion"
#pragma GCC diagnostic ignored "-Wcast-align"
#pragma GCC diagnostic ignored "-Wcast-qual"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wundef"
#pragma GCC diagnostic ignored "-Wfloat-equal"
#pragma GCC diagnostic ignored "-Wunused-function"
#ifndef __cplusplus
#pragma GCC diagnostic ignored "-Wc++-compat"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#endif
#if defined(__clang__)
#pragma GCC diagnostic ignored "-Wold-style-cast"
#endif
#endif
#if DQ_SIMD == DQ_SIMD_AVX512
#include <simde/x86/avx512.h>
#elif DQ_SIMD == DQ_SIMD_AVX2
#include <simde/x86/avx2.h>
#elif DQ_SIMD == DQ_SIMD_SSE2 || DQ_SIMD == DQ_SIMD_NEON
#if defined(__SSE4_2__)
#include <simde/x86/sse4.2.h> /* the crc32 instruction below, and the SSSE3 byte shuffle */
#elif defined(__SSSE3__) || DQ_SIMD == DQ_SIMD_NEON
#include <simde/x86/ssse3.h> /* the byte shuffle of the index decoder */
#else
#include <simde/x86/sse2.h>
#endif
#endif
#if defined(__F16C__) && DQ_SIMD != DQ_SIMD_NEON && DQ_SIMD != DQ_SIMD_SCALAR
#include <simde/x86/f16c.h> /* the fp16 conversions of dqsgd.h's typed codec */
#endif
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic pop
#endif

#if DQ_SIMD != DQ_SIMD_SCALAR
#if !defined(SIMDE_VERSION) || SIMDE_VERSION < HEDLEY_VERSION_ENCODE(0, 7, 2)
#error "dqsgd needs SIMDe 0.7.2 or newer"
#endif
#endif
#if DQ_SIMD == DQ_SIMD_AVX512 && !defined(SIMDE_X86_AVX512F_NATIVE)
#error "DQ_SIMD_AVX512 requested but the compiler does not target AVX-512F (add -mavx512f)"
#endif
#if DQ__HAS_AVX2_KERNELS && !defined(SIMDE_X86_AVX2_NATIVE)
#error "DQ_SIMD_AVX2 requested but the compiler does not target AVX2 (add -mavx2)"
#endif
#if DQ__HAS_SSE2_KERNELS && DQ_SIMD != DQ_SIMD_NEON && !defined(SIMDE_X86_SSE2_NATIVE)
#error "DQ_SIMD_SSE2 requested but the compiler does not target SSE2"
#endif
#if DQ_SIMD == DQ_SIMD_NEON && !defined(SIMDE_ARM_NEON_A64V8_NATIVE)
#error "DQ_SIMD_NEON requested but the compiler does not target AArch64 NEON"
#endif
/* The byte shuffle (SSSE3) of the VARINT index decoder: native on x86 with SSSE3 and on NEON,
 * where SIMDe maps it onto one table lookup. */
#if DQ__HAS_SSE2_KERNELS && (defined(SIMDE_X86_SSSE3_NATIVE) || DQ_SIMD == DQ_SIMD_NEON)
#define DQ__HAS_SSSE3_KERNELS 1
#else
#define DQ__HAS_SSSE3_KERNELS 0
#endif
/* The crc32 instruction (SSE4.2) of the CRC32C kernel: x86 only. */
#if DQ__HAS_SSE2_KERNELS && defined(SIMDE_X86_SSE4_2_NATIVE)
#define DQ__HAS_SSE42_KERNELS 1
#else
#define DQ__HAS_SSE42_KERNELS 0
#endif
/* The F16C conversions (8 lanes, AVX encoding): x86 targets with F16C and AVX. */
#if DQ__HAS_SSE2_KERNELS && DQ_SIMD != DQ_SIMD_NEON && defined(SIMDE_X86_F16C_NATIVE) && \
    defined(SIMDE_X86_AVX_NATIVE)
#define DQ__HAS_F16C_KERNELS 1
#else
#define DQ__HAS_F16C_KERNELS 0
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ================================================================ SSE2 kernels
 * The SSE2 kernel of each family that has one (also the NEON kernels: SIMDe runs
 * these intrinsics on native NEON), then the SSSE3 VARINT decoder and the SSE4.2 CRC32C. In
 * order: the dither round, bucket statistics, error feedback, quantization, packing, block
 * decoding, Elias sizing, two-means, table schemes, shared-scale levels, the sparsifiers' scan,
 * fp16/bf16 conversions, the 32-way rANS chunk decoder. */
#if DQ__HAS_SSE2_KERNELS
/* Lane offsets 0..15, loaded rather than built with setr (which SIMDe 0.7.4 expands into a
 * long mask sequence at 512 bits under GCC). */
static const int32_t dq__lane_ids[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

/* 32-bit lane multiply from two 32x32->64 products (SSE2 has no pmulld). */
static inline simde__m128i dq__mullo__sse2(simde__m128i a, simde__m128i b) {
    simde__m128i ev = simde_mm_mul_epu32(a, b);
    simde__m128i od = simde_mm_mul_epu32(simde_mm_srli_epi64(a, 32), simde_mm_srli_epi64(b, 32));
    ev = simde_mm_shuffle_epi32(ev, SIMDE_MM_SHUFFLE(0, 0, 2, 0));
    od = simde_mm_shuffle_epi32(od, SIMDE_MM_SHUFFLE(0, 0, 2, 0));
    return simde_mm_unpacklo_epi32(ev, od);
}
/* ---- the dither round: dq__draw32 on 4 lanes, the one SSE2 spelling of the generator
 * (doc/FORMAT.md 7.2). idx holds the counters, k0 and k1 the keys in every lane; with hoisted,
 * k0 is dq__draw_hoist's key and the first xorshift is left out. The 24-bit draw is the result
 * >> 8. */
static inline simde__m128i dq__draw__sse2(simde__m128i idx, simde__m128i k0, simde__m128i k1, int hoisted) {
    simde__m128i x = simde_mm_xor_si128(idx, k0);
    if (!hoisted) x = simde_mm_xor_si128(x, simde_mm_srli_epi32(x, 16));
    x = dq__mullo__sse2(x, simde_mm_set1_epi32((int32_t)0x7FEB352D));
    x = simde_mm_xor_si128(x, simde_mm_xor_si128(simde_mm_srli_epi32(x, 15), k1));
    x = dq__mullo__sse2(x, simde_mm_set1_epi32((int32_t)0x846CA68B));
    return simde_mm_xor_si128(x, simde_mm_srli_epi32(x, 16));
}

/* Statistics of x (or x + e) over one bucket; computes only what the norm needs (`what` is
 * one of DQ__ST_*; other masks go to the scalar reference). 16 double lanes as in the scalar twin:
 * SSE2 keeps them in 8 registers of 2. */
static inline void dq__stats__sse2(const float *x, const float *e, size_t n, unsigned what, dq__stats *st) {
    const simde__m128i absm = simde_mm_set1_epi32(0x7FFFFFFF);
    simde__m128d q[8];
    simde__m128i mx = simde_mm_setzero_si128();
    double l16[DQ__SLANES] = {0};
    uint32_t m4[4], mxs = 0;
    size_t i = 0;
    unsigned k;
    if (what != DQ__ST_SQ && what != DQ__ST_ABS && what != DQ__ST_MAX) {
        dq__stats__scalar(x, e, n, what, st);
        return;
    }
    for (k = 0; k < 8; k++) q[k] = simde_mm_setzero_pd();
    for (; i + 16 <= n; i += 16) {
        for (k = 0; k < 4; k++) { /* 4 floats -> lanes 4k .. 4k+3 */
            simde__m128 v = simde_mm_loadu_ps(x + i + 4 * k);
            simde__m128i u;
            if (e) v = simde_mm_add_ps(v, simde_mm_loadu_ps(e + i + 4 * k));
            u = simde_mm_and_si128(simde_mm_castps_si128(v), absm);
            if (what == DQ__ST_MAX) { /* |x| bits fit in 31 bits: the signed compare orders them */
                simde__m128i g = simde_mm_cmpgt_epi32(u, mx);
                mx = simde_mm_or_si128(simde_mm_and_si128(g, u), simde_mm_andnot_si128(g, mx));
            } else {
                simde__m128 f = simde_mm_castsi128_ps(u);
                simde__m128d d0 = simde_mm_cvtps_pd(f), d1 = simde_mm_cvtps_pd(simde_mm_movehl_ps(f, f));
                if (what == DQ__ST_SQ) {
                    d0 = simde_mm_mul_pd(d0, d0);
                    d1 = simde_mm_mul_pd(d1, d1);
                }
                q[2 * k] = simde_mm_add_pd(q[2 * k], d0);
                q[2 * k + 1] = simde_mm_add_pd(q[2 * k + 1], d1);
            }
        }
    }
    for (k = 0; k < 8; k++) simde_mm_storeu_pd(l16 + 2 * k, q[k]);
    simde_mm_storeu_si128((simde__m128i *)m4, mx);
    for (k = 0; k < 4; k++)
        if (m4[k] > mxs) mxs = m4[k];
    dq__stats_end(x, e, i, n, what, l16, mxs, st);
}

static inline void dq__compensate__sse2(const float *x, float *e, size_t n) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4) simde_mm_storeu_ps(e + i, simde_mm_add_ps(simde_mm_loadu_ps(x + i), simde_mm_loadu_ps(e + i)));
    dq__compensate__scalar(x + i, e + i, n - i);
}

static inline void dq__quant__sse2(const dq__qctx *q, const float *x, size_t cnt, uint32_t *codes, float *res) {
    const simde__m128i absm = simde_mm_set1_epi32(0x7FFFFFFF), zero = simde_mm_setzero_si128();
    const simde__m128i one = simde_mm_set1_epi32(1), k1 = simde_mm_set1_epi32((int32_t)q->k1h);
    const simde__m128i lane = simde_mm_loadu_si128((const simde__m128i *)dq__lane_ids);
    const simde__m128i shs = simde_mm_cvtsi32_si128((int)q->bits - 1);
    const simde__m128 inv = simde_mm_set1_ps(q->inv), smax = simde_mm_set1_ps(q->smax), step = simde_mm_set1_ps(q->step);
    const simde__m128 neg = simde_mm_set1_ps(q->neg);
    const simde__m128 half = simde_mm_set1_ps(0.5f), ulp24 = simde_mm_set1_ps(5.96046448e-08f);
    const int stoch = q->thresh < 0.0f;
    uint32_t k0h;
    const int hoisted = dq__draw_hoist(q->k0, q->lo, cnt, &k0h);
    const simde__m128i k0 = simde_mm_set1_epi32((int32_t)k0h);
    size_t i = 0;
    dq__qctx rest;
    for (; i + 4 <= cnt; i += 4) {
        simde__m128 xv = simde_mm_loadu_ps(x + i), t, v = simde_mm_setzero_ps();
        simde__m128i xb = simde_mm_castps_si128(xv), code;
        if (stoch) {
            simde__m128i h = simde_mm_add_epi32(simde_mm_set1_epi32((int32_t)(q->lo + (uint32_t)i)), lane);
            t = simde_mm_mul_ps(simde_mm_cvtepi32_ps(simde_mm_srli_epi32(dq__draw__sse2(h, k0, k1, hoisted), 8)), ulp24);
        } else {
            t = half;
        }
        if (q->bits == 1) {
            simde__m128 pp = simde_mm_add_ps(half, simde_mm_mul_ps(xv, inv));
            code = stoch ? simde_mm_andnot_si128(simde_mm_castps_si128(simde_mm_cmplt_ps(t, pp)), one)
                         : simde_mm_srli_epi32(xb, 31);
            if (res) { /* code 1 decodes to neg, code 0 to step */
                simde__m128i m = simde_mm_sub_epi32(zero, code);
                v = simde_mm_castsi128_ps(simde_mm_or_si128(simde_mm_and_si128(m, simde_mm_castps_si128(neg)),
                                                            simde_mm_andnot_si128(m, simde_mm_castps_si128(step))));
            }
        } else {
            simde__m128 r = simde_mm_min_ps(simde_mm_mul_ps(simde_mm_castsi128_ps(simde_mm_and_si128(xb, absm)), inv), smax);
            simde__m128i l = simde_mm_cvttps_epi32(r), sg;
            simde__m128 f = simde_mm_sub_ps(r, simde_mm_cvtepi32_ps(l));
            l = simde_mm_sub_epi32(l, simde_mm_castps_si128(simde_mm_cmplt_ps(t, f)));
            sg = simde_mm_andnot_si128(simde_mm_cmpeq_epi32(l, zero), simde_mm_srli_epi32(xb, 31));
            code = simde_mm_or_si128(l, simde_mm_sll_epi32(sg, shs));
            if (res) {
                v = simde_mm_mul_ps(simde_mm_cvtepi32_ps(l), step);
                v = simde_mm_castsi128_ps(simde_mm_xor_si128(simde_mm_castps_si128(v), simde_mm_slli_epi32(sg, 31)));
            }
        }
        simde_mm_storeu_si128((simde__m128i *)(codes + i), code);
        if (res) simde_mm_storeu_ps(res + i, simde_mm_sub_ps(xv, v));
    }
    rest = *q;
    rest.lo = q->lo + (uint32_t)i;
    dq__quant__scalar(&rest, x + i, cnt - i, codes + i, res ? res + i : NULL);
}

/* Packing: the 8 lanes of a block are two 4-lane halves. */
static inline void dq__pack_block__sse2(const uint32_t *codes, unsigned b, uint8_t *out) {
    simde__m128i lo = simde_mm_setzero_si128(), hi = lo;
    unsigned have = 0, r;
    for (r = 0; r < DQ__ROWS; r++) {
        simde__m128i v0 = simde_mm_loadu_si128((const simde__m128i *)(codes + 8 * r));
        simde__m128i v1 = simde_mm_loadu_si128((const simde__m128i *)(codes + 8 * r + 4));
        simde__m128i sh = simde_mm_cvtsi32_si128((int)have);
        lo = simde_mm_or_si128(lo, simde_mm_sll_epi32(v0, sh));
        hi = simde_mm_or_si128(hi, simde_mm_sll_epi32(v1, sh));
        have += b;
        if (have >= 32) {
            simde__m128i back = simde_mm_cvtsi32_si128((int)(b - (have - 32)));
            simde_mm_storeu_si128((simde__m128i *)out, lo);
            simde_mm_storeu_si128((simde__m128i *)(out + 16), hi);
            out += 32;
            have -= 32;
            lo = simde_mm_srl_epi32(v0, back); /* shift counts >= 32 give 0 */
            hi = simde_mm_srl_epi32(v1, back);
        }
    }
}

static inline void dq__quant_pack__sse2(const dq__qctx *q, const float *x, float *res, uint8_t *out) {
    uint32_t codes[DQ__BLOCK];
    dq__quant__sse2(q, x, DQ__BLOCK, codes, res);
    dq__pack_block__sse2(codes, q->bits, out);
}

static inline void dq__decode_block__sse2(const uint8_t *in, unsigned b, const float *rowstep, float w, int add,
                                          float *out) {
    const simde__m128i mask = simde_mm_set1_epi32((int32_t)((1u << b) - 1u));
    const simde__m128i lmask = simde_mm_set1_epi32(b == 1 ? 0 : (int32_t)((1u << (b - 1)) - 1u));
    const simde__m128i lone = simde_mm_set1_epi32(b == 1 ? 1 : 0), shs = simde_mm_cvtsi32_si128((int)b - 1);
    const simde__m128 wv = simde_mm_set1_ps(w);
    unsigned r;
    for (r = 0; r < DQ__ROWS; r++) {
        unsigned off = r * b, j = off >> 5, s = off & 31u;
        const uint8_t *p = in + 32u * j;
        simde__m128i sh = simde_mm_cvtsi32_si128((int)s);
        simde__m128i v0 = simde_mm_srl_epi32(simde_mm_loadu_si128((const simde__m128i *)p), sh);
        simde__m128i v1 = simde_mm_srl_epi32(simde_mm_loadu_si128((const simde__m128i *)(p + 16)), sh);
        simde__m128 st = simde_mm_set1_ps(rowstep[r]);
        simde__m128 f0, f1;
        if (s + b > 32) {
            simde__m128i up = simde_mm_cvtsi32_si128((int)(32 - s));
            v0 = simde_mm_or_si128(v0, simde_mm_sll_epi32(simde_mm_loadu_si128((const simde__m128i *)(p + 32)), up));
            v1 = simde_mm_or_si128(v1, simde_mm_sll_epi32(simde_mm_loadu_si128((const simde__m128i *)(p + 48)), up));
        }
        v0 = simde_mm_and_si128(v0, mask);
        v1 = simde_mm_and_si128(v1, mask);
        f0 = simde_mm_mul_ps(simde_mm_cvtepi32_ps(simde_mm_or_si128(simde_mm_and_si128(v0, lmask), lone)), st);
        f1 = simde_mm_mul_ps(simde_mm_cvtepi32_ps(simde_mm_or_si128(simde_mm_and_si128(v1, lmask), lone)), st);
        f0 = simde_mm_castsi128_ps(
            simde_mm_xor_si128(simde_mm_castps_si128(f0), simde_mm_slli_epi32(simde_mm_srl_epi32(v0, shs), 31)));
        f1 = simde_mm_castsi128_ps(
            simde_mm_xor_si128(simde_mm_castps_si128(f1), simde_mm_slli_epi32(simde_mm_srl_epi32(v1, shs), 31)));
        if (add) {
            f0 = simde_mm_add_ps(simde_mm_loadu_ps(out + 8 * r), simde_mm_mul_ps(wv, f0));
            f1 = simde_mm_add_ps(simde_mm_loadu_ps(out + 8 * r + 4), simde_mm_mul_ps(wv, f1));
        }
        simde_mm_storeu_ps(out + 8 * r, f0);
        simde_mm_storeu_ps(out + 8 * r + 4, f1);
    }
}

/* Elias sizing scan of a full block (dq__elias_scan__scalar): rows of 8 codes, the non-zero
 * mask from a compare, the level bits from one compare per power of two (SSE2 has no byte
 * shuffle to look them up). */
static inline uint32_t dq__elias_scan__sse2(const uint8_t *in, unsigned b, const uint8_t *lvt, uint32_t *codes,
                                            uint64_t *nz) {
    const simde__m128i mask = simde_mm_set1_epi32((int32_t)((1u << b) - 1u));
    const simde__m128i lmask = simde_mm_set1_epi32((int32_t)((1u << (b - 1u)) - 1u));
    const simde__m128i sgn = simde_mm_set1_epi32((int32_t)(1u << (b - 1u))), zero = simde_mm_setzero_si128();
    simde__m128i acc = zero, bad = zero, thr[15], inc[15];
    uint32_t part[4];
    unsigned r, t;
    for (t = 0; t + 1u < b; t++) {
        thr[t] = simde_mm_set1_epi32((int32_t)((1u << t) - 1u));
        inc[t] = simde_mm_set1_epi32((int32_t)lvt[t + 1u] - (int32_t)lvt[t]);
    }
    uint64_t word = 0;
    for (r = 0; r < DQ__ROWS; r++) {
        unsigned off = r * b, j = off >> 5, s = off & 31u, h;
        const uint8_t *p = in + 32u * j;
        simde__m128i sh = simde_mm_cvtsi32_si128((int)s), v[2];
        v[0] = simde_mm_srl_epi32(simde_mm_loadu_si128((const simde__m128i *)p), sh);
        v[1] = simde_mm_srl_epi32(simde_mm_loadu_si128((const simde__m128i *)(p + 16)), sh);
        if (s + b > 32) {
            simde__m128i up = simde_mm_cvtsi32_si128((int)(32 - s));
            v[0] = simde_mm_or_si128(v[0], simde_mm_sll_epi32(simde_mm_loadu_si128((const simde__m128i *)(p + 32)), up));
            v[1] = simde_mm_or_si128(v[1], simde_mm_sll_epi32(simde_mm_loadu_si128((const simde__m128i *)(p + 48)), up));
        }
        for (h = 0; h < 2; h++) {
            simde__m128i c = simde_mm_and_si128(v[h], mask), l = simde_mm_and_si128(c, lmask);
            unsigned m = (unsigned)simde_mm_movemask_ps(simde_mm_castsi128_ps(simde_mm_cmpeq_epi32(l, zero))) ^ 15u;
            simde_mm_storeu_si128((simde__m128i *)(codes + 8 * r + 4 * h), c);
            bad = simde_mm_or_si128(bad, simde_mm_cmpeq_epi32(c, sgn));
            word |= (uint64_t)m << (8u * (r & 7u) + 4u * h);
            for (t = 0; t + 1u < b; t++)
                acc = simde_mm_add_epi32(acc, simde_mm_and_si128(simde_mm_cmpgt_epi32(l, thr[t]), inc[t]));
        }
        if ((r & 7u) == 7u) { /* a register, not nz[]: no store-to-load chain from row to row */
            nz[r >> 3] = word;
            word = 0;
        }
    }
    if (simde_mm_movemask_epi8(bad)) return UINT32_MAX;
    simde_mm_storeu_si128((simde__m128i *)part, acc);
    return part[0] + part[1] + part[2] + part[3];
}

/* ---- two-means (DQ_SCHEME_TWOMEANS): the statistics (twin: dq__tm_acc__scalar), 16 elements a
 * step into 8 + 8 registers of 2 double lanes; each magnitude goes to its sign group's lane and
 * +0.0 to the other group's (which changes no sum of magnitudes). */
static inline void dq__tm_acc__sse2(const float *x, const float *e, size_t n, double *pos, double *neg,
                                    uint64_t *nneg) {
    const simde__m128i absm = simde_mm_set1_epi32(0x7FFFFFFF);
    simde__m128d qp[8], qn[8];
    uint64_t m = 0;
    size_t i = 0;
    unsigned k;
    for (k = 0; k < 8; k++) {
        qp[k] = simde_mm_loadu_pd(pos + 2 * k);
        qn[k] = simde_mm_loadu_pd(neg + 2 * k);
    }
    for (; i + 16 <= n; i += 16) {
        unsigned bits = 0;
        for (k = 0; k < 4; k++) { /* 4 floats -> lanes 4k .. 4k+3 */
            simde__m128 v = simde_mm_loadu_ps(x + i + 4 * k), f;
            simde__m128i sg;
            simde__m128d d0, d1, s0, s1;
            if (e) v = simde_mm_add_ps(v, simde_mm_loadu_ps(e + i + 4 * k));
            sg = simde_mm_srai_epi32(simde_mm_castps_si128(v), 31);
            f = simde_mm_castsi128_ps(simde_mm_and_si128(simde_mm_castps_si128(v), absm));
            d0 = simde_mm_cvtps_pd(f);
            d1 = simde_mm_cvtps_pd(simde_mm_movehl_ps(f, f));
            s0 = simde_mm_castsi128_pd(simde_mm_unpacklo_epi32(sg, sg)); /* lanes 0, 1 as 64-bit masks */
            s1 = simde_mm_castsi128_pd(simde_mm_unpackhi_epi32(sg, sg)); /* lanes 2, 3 */
            qn[2 * k] = simde_mm_add_pd(qn[2 * k], simde_mm_and_pd(s0, d0));
            qp[2 * k] = simde_mm_add_pd(qp[2 * k], simde_mm_andnot_pd(s0, d0));
            qn[2 * k + 1] = simde_mm_add_pd(qn[2 * k + 1], simde_mm_and_pd(s1, d1));
            qp[2 * k + 1] = simde_mm_add_pd(qp[2 * k + 1], simde_mm_andnot_pd(s1, d1));
            bits |= (unsigned)simde_mm_movemask_ps(v) << (4 * k);
        }
        m += dq__popcount32(bits);
    }
    for (k = 0; k < 8; k++) {
        simde_mm_storeu_pd(pos + 2 * k, qp[k]);
        simde_mm_storeu_pd(neg + 2 * k, qn[k]);
    }
    *nneg += m;
    dq__tm_acc__scalar(x + i, e ? e + i : NULL, n - i, pos, neg, nneg);
}
/* Two-means block decoder (twin: dq__decode_block_tm__scalar): at 1 bit a block is the 8 lane
 * words, row r is bit r of each; a set bit selects the row's negative mean. */
static inline void dq__decode_block_tm__sse2(const uint8_t *in, const float *rowpos, const float *rowneg, float w,
                                             int add, float *out) {
    const simde__m128i w0 = simde_mm_loadu_si128((const simde__m128i *)in);
    const simde__m128i w1 = simde_mm_loadu_si128((const simde__m128i *)(in + 16));
    const simde__m128 wv = simde_mm_set1_ps(w);
    unsigned r;
    for (r = 0; r < DQ__ROWS; r++) {
        simde__m128i sh = simde_mm_cvtsi32_si128((int)(31u - r));
        simde__m128i m0 = simde_mm_srai_epi32(simde_mm_sll_epi32(w0, sh), 31);
        simde__m128i m1 = simde_mm_srai_epi32(simde_mm_sll_epi32(w1, sh), 31);
        simde__m128i p = simde_mm_castps_si128(simde_mm_set1_ps(rowpos[r]));
        simde__m128i ng = simde_mm_castps_si128(simde_mm_set1_ps(rowneg[r]));
        simde__m128 f0 = simde_mm_castsi128_ps(simde_mm_or_si128(simde_mm_and_si128(m0, ng), simde_mm_andnot_si128(m0, p)));
        simde__m128 f1 = simde_mm_castsi128_ps(simde_mm_or_si128(simde_mm_and_si128(m1, ng), simde_mm_andnot_si128(m1, p)));
        if (add) {
            f0 = simde_mm_add_ps(simde_mm_loadu_ps(out + 8 * r), simde_mm_mul_ps(wv, f0));
            f1 = simde_mm_add_ps(simde_mm_loadu_ps(out + 8 * r + 4), simde_mm_mul_ps(wv, f1));
        }
        simde_mm_storeu_ps(out + 8 * r, f0);
        simde_mm_storeu_ps(out + 8 * r + 4, f1);
    }
}

/* ---- table schemes: dq__quant_tab__scalar and dq__decode_block_tab__scalar, vectorized.
 * s = 2^(b-1) - 1 (b = 2..8), so the table tab[0..s] holds N = s + 1 = 2^(b-1) floats, a power
 * of two; the kernels never read past tab[s]. Precondition (dq__tab_ok, and what the scalar
 * binary search needs as well): tab[0] = 0 < tab[1] < ... < tab[s] = 1.
 *
 * Exponential tables (NUQSGD, natural: tab[0] = +0, tab[l] = 2^(l-s)) take a path without
 * lookups. Each call compares the whole table bit for bit with that pattern (N floats, a few
 * vector compares) rather than trusting a flag, so any table that takes the path is exactly
 * the one the proof below is about (a TRUNC_NU table that happens to be exponential too).
 *
 * Why the exponential path gives dq__tab_level's level and f bit for bit. Let r = |x| * inv
 * with 0 <= r < 1 (r >= 1 and NaN take level s in both).
 * (a) r >= tab[1] = 2^(1-s): r is normal (2^(1-s) >= 2^-126 for s <= 127), r = 2^E * m with
 *     1 <= m < 2 and E = expbits(r) - 127, 1-s <= E <= -1. Since tab[E+s] = 2^E <= r < 2^(E+1)
 *     = tab[E+s+1] and tab increases, the scalar's j (largest index with tab[j] <= r) is
 *     j = E + s = expbits(r) + s - 127, and 1 <= j <= s-1. Its f = (r - tab[j]) / (tab[j+1] -
 *     tab[j]): r - 2^E is exact (Sterbenz, 2^E <= r < 2 * 2^E), so is 2^(E+1) - 2^E = 2^E, and
 *     the quotient m - 1 (a multiple of 2^-23 in [0, 1)) is exact too. The kernels form m - 1
 *     as float(bits 0x3F800000 | mantissa(r)) - 1.0f, exact by the same lemma.
 * (b) r < 2^(1-s): j = 0, and f = (r - 0) / (2^(1-s) - 0): both differences are exact, and the
 *     quotient by a power of two, r * 2^(s-1) < 1, is exact as well (a subnormal r scaled up
 *     loses no bits); the kernels multiply by 2^(s-1) (normal for s <= 127), the same value.
 * (a) holds exactly when expbits(r) + s - 127 > 0, which is the kernels' test. Equal j and f
 * give the same level j + (t < f), and tab[level] is rebuilt from its bits: 0 for level 0,
 * (level + 127 - s) << 23 otherwise.
 *
 * Other tables: the scalar's j is the largest index with tab[j] <= r, unique for an increasing
 * table, and 0 <= j <= s-1 since tab[0] <= r < tab[s] = 1. The kernels find it by counting for
 * s <= 7 (j = #{k in 1..s-1: tab[k] <= r}, independent compares, then tab[j] and tab[j+1] are
 * looked up), else by a branchless binary search (j = 0; for step = N/2 .. 1: if tab[j + step]
 * <= r then j += step) that keeps the last candidate <= r (= tab[j]) and the last one > r
 * (= tab[j+1]; there is one, as tab[s] = 1 > r). A table shorter than a lookup register is
 * padded with +Inf, which is never <= r, so the padding changes neither j nor the candidates
 * kept. f = (r - tab[j]) / (tab[j+1] - tab[j]) then has the scalar's operands and order, and
 * tab[level] is one of the two. Lookups: SSE2 loads the lanes' entries one by one; AVX2
 * permutes (N <= 16) or gathers; AVX-512 permutes (N <= 128). */

/* 1 if tab[0..s] is bit for bit the exponential table (s + 1 a power of two >= 2). */
static inline int dq__tab_isexp__sse2(const float *tab, unsigned s) {
    const simde__m128i zero = simde_mm_setzero_si128(), c = simde_mm_set1_epi32((int32_t)(127u - s));
    simde__m128i l = simde_mm_loadu_si128((const simde__m128i *)dq__lane_ids), bad = zero;
    unsigned i;
    if (s < 3u) return dq__fbits(tab[0]) == 0u && dq__fbits(tab[1]) == 127u << 23;
    for (i = 0; i <= s; i += 4u, l = simde_mm_add_epi32(l, simde_mm_set1_epi32(4))) {
        simde__m128i e =
            simde_mm_andnot_si128(simde_mm_cmpeq_epi32(l, zero), simde_mm_slli_epi32(simde_mm_add_epi32(l, c), 23));
        bad = simde_mm_or_si128(bad, simde_mm_xor_si128(e, simde_mm_loadu_si128((const simde__m128i *)(tab + i))));
    }
    return simde_mm_movemask_epi8(simde_mm_cmpeq_epi32(bad, zero)) == 0xFFFF;
}

/* m ? a : b on whole lanes (m all ones or all zeros). */
static inline simde__m128i dq__sel__sse2(simde__m128i m, simde__m128i a, simde__m128i b) {
    return simde_mm_or_si128(simde_mm_and_si128(m, a), simde_mm_andnot_si128(m, b));
}
static inline simde__m128 dq__selps__sse2(simde__m128 m, simde__m128 a, simde__m128 b) {
    return simde_mm_or_ps(simde_mm_and_ps(m, a), simde_mm_andnot_ps(m, b));
}
/* tab[idx] lane by lane (SSE2 has neither gather nor a variable permute). */
static inline simde__m128 dq__tab_look__sse2(const float *tab, simde__m128i idx) {
    uint32_t ix[4];
    simde_mm_storeu_si128((simde__m128i *)ix, idx);
    return simde_mm_set_ps(tab[ix[3]], tab[ix[2]], tab[ix[1]], tab[ix[0]]);
}

typedef struct dq__tq128 {
    simde__m128i absm, zero, k0, k1, lane, shs, sv, c127, sm127, mant, onei, sgnm;
    simde__m128 inv, scale, onef, pw, ulp24, thr, top, lo0, inf;
    const float *tab;
    unsigned s;
    int stoch;
} dq__tq128;
static inline void dq__tq128_init(dq__tq128 *c, const dq__qctx *q) {
    unsigned s = (1u << (q->bits - 1u)) - 1u;
    c->absm = simde_mm_set1_epi32(0x7FFFFFFF);
    c->zero = simde_mm_setzero_si128();
    c->k0 = simde_mm_set1_epi32((int32_t)q->k0);
    c->k1 = simde_mm_set1_epi32((int32_t)q->k1h);
    c->lane = simde_mm_loadu_si128((const simde__m128i *)dq__lane_ids);
    c->shs = simde_mm_cvtsi32_si128((int)q->bits - 1);
    c->sv = simde_mm_set1_epi32((int32_t)s);
    c->c127 = simde_mm_set1_epi32((int32_t)(127u - s));
    c->sm127 = simde_mm_set1_epi32((int32_t)s - 127);
    c->mant = simde_mm_set1_epi32(0x007FFFFF);
    c->onei = simde_mm_set1_epi32(0x3F800000);
    c->sgnm = simde_mm_set1_epi32(INT32_MIN);
    c->inv = simde_mm_set1_ps(q->inv);
    c->scale = simde_mm_set1_ps(q->scale);
    c->onef = simde_mm_set1_ps(1.0f);
    c->pw = simde_mm_castsi128_ps(simde_mm_set1_epi32((int32_t)((s + 126u) << 23))); /* 2^(s-1) */
    c->ulp24 = simde_mm_set1_ps(5.96046448e-08f);
    c->thr = simde_mm_set1_ps(q->thresh);
    c->top = simde_mm_set1_ps(q->tab[s]);
    c->lo0 = simde_mm_set1_ps(q->tab[0]);
    c->inf = simde_mm_castsi128_ps(simde_mm_set1_epi32(0x7F800000));
    c->tab = q->tab;
    c->s = s;
    c->stoch = q->thresh < 0.0f;
}
/* The dither t of 4 elements with indices lo + 0..3, or the threshold. */
static inline simde__m128 dq__tq128_t(const dq__tq128 *c, uint32_t lo) {
    if (c->stoch) {
        simde__m128i h = simde_mm_add_epi32(simde_mm_set1_epi32((int32_t)lo), c->lane);
        return simde_mm_mul_ps(simde_mm_cvtepi32_ps(simde_mm_srli_epi32(dq__draw__sse2(h, c->k0, c->k1, 0), 8)), c->ulp24);
    }
    return c->thr;
}
/* Codes from levels l and magnitudes tv = tab[l]; residuals x - value to res unless NULL. */
static inline simde__m128i dq__tq128_end(const dq__tq128 *c, simde__m128 xv, simde__m128i l, simde__m128 tv,
                                         float *res) {
    simde__m128i sg =
        simde_mm_andnot_si128(simde_mm_cmpeq_epi32(l, c->zero), simde_mm_and_si128(simde_mm_castps_si128(xv), c->sgnm));
    if (res) {
        simde__m128 v = simde_mm_xor_ps(simde_mm_mul_ps(tv, c->scale), simde_mm_castsi128_ps(sg));
        simde_mm_storeu_ps(res, simde_mm_sub_ps(xv, v));
    }
    return simde_mm_or_si128(l, simde_mm_sll_epi32(simde_mm_srli_epi32(sg, 31), c->shs));
}
/* 4 codes from x[0..4) of an exponential table. */
static inline simde__m128i dq__tq128_exp(const dq__tq128 *c, const float *x, uint32_t lo, float *res) {
    simde__m128 xv = simde_mm_loadu_ps(x), t = dq__tq128_t(c, lo), f, fhi;
    simde__m128 r =
        simde_mm_mul_ps(simde_mm_castsi128_ps(simde_mm_and_si128(simde_mm_castps_si128(xv), c->absm)), c->inv);
    simde__m128i rb = simde_mm_castps_si128(r), lt1 = simde_mm_castps_si128(simde_mm_cmplt_ps(r, c->onef)), l;
    simde__m128i j = simde_mm_add_epi32(simde_mm_srli_epi32(rb, 23), c->sm127);
    simde__m128i big = simde_mm_cmpgt_epi32(j, c->zero);
    fhi = simde_mm_sub_ps(simde_mm_castsi128_ps(simde_mm_or_si128(simde_mm_and_si128(rb, c->mant), c->onei)), c->onef);
    f = dq__selps__sse2(simde_mm_castsi128_ps(big), fhi, simde_mm_mul_ps(r, c->pw));
    l = simde_mm_sub_epi32(simde_mm_and_si128(j, big), simde_mm_castps_si128(simde_mm_cmplt_ps(t, f)));
    l = dq__sel__sse2(lt1, l, c->sv);
    return dq__tq128_end(
        c, xv, l,
        simde_mm_castsi128_ps(simde_mm_andnot_si128(simde_mm_cmpeq_epi32(l, c->zero),
                                                    simde_mm_slli_epi32(simde_mm_add_epi32(l, c->c127), 23))),
        res);
}
/* 4 codes from x[0..4) of any table: binary search. */
static inline simde__m128i dq__tq128_gen(const dq__tq128 *c, const float *x, uint32_t lo, float *res) {
    simde__m128 xv = simde_mm_loadu_ps(x), t = dq__tq128_t(c, lo), f, up, vlo = c->lo0, vhi = c->inf;
    simde__m128 r =
        simde_mm_mul_ps(simde_mm_castsi128_ps(simde_mm_and_si128(simde_mm_castps_si128(xv), c->absm)), c->inv);
    simde__m128i lt1 = simde_mm_castps_si128(simde_mm_cmplt_ps(r, c->onef)), j = c->zero, l;
    unsigned st = c->s <= 7u ? 0u : (c->s + 1u) >> 1;
    if (c->s <= 7u) { /* j = #{k in 1..s-1: tab[k] <= r}, then tab[j] and tab[j+1] lane by lane */
        unsigned k;
        uint32_t ix[4];
        for (k = 1; k < c->s; k++)
            j = simde_mm_sub_epi32(j, simde_mm_castps_si128(simde_mm_cmple_ps(simde_mm_set1_ps(c->tab[k]), r)));
        simde_mm_storeu_si128((simde__m128i *)ix, j);
        vlo = simde_mm_set_ps(c->tab[ix[3]], c->tab[ix[2]], c->tab[ix[1]], c->tab[ix[0]]);
        vhi = simde_mm_set_ps(c->tab[ix[3] + 1u], c->tab[ix[2] + 1u], c->tab[ix[1] + 1u], c->tab[ix[0] + 1u]);
    }
    for (; st; st >>= 1) {
        simde__m128i idx = simde_mm_add_epi32(j, simde_mm_set1_epi32((int32_t)st));
        simde__m128 cand = dq__tab_look__sse2(c->tab, idx), m = simde_mm_cmple_ps(cand, r);
        j = dq__sel__sse2(simde_mm_castps_si128(m), idx, j);
        vlo = dq__selps__sse2(m, cand, vlo);
        vhi = dq__selps__sse2(m, vhi, cand);
    }
    f = simde_mm_div_ps(simde_mm_sub_ps(r, vlo), simde_mm_sub_ps(vhi, vlo));
    up = simde_mm_cmplt_ps(t, f);
    l = dq__sel__sse2(lt1, simde_mm_sub_epi32(j, simde_mm_castps_si128(up)), c->sv);
    return dq__tq128_end(c, xv, l, dq__selps__sse2(simde_mm_castsi128_ps(lt1), dq__selps__sse2(up, vhi, vlo), c->top),
                         res);
}

static inline void dq__quant_tab__sse2(const dq__qctx *q, const float *x, size_t cnt, uint32_t *codes, float *res) {
    size_t i = 0;
    dq__qctx rest;
    if (cnt >= 4) {
        dq__tq128 c;
        dq__tq128_init(&c, q);
        if (dq__tab_isexp__sse2(q->tab, c.s))
            for (; i + 4 <= cnt; i += 4)
                simde_mm_storeu_si128((simde__m128i *)(codes + i),
                                      dq__tq128_exp(&c, x + i, q->lo + (uint32_t)i, res ? res + i : NULL));
        else
            for (; i + 4 <= cnt; i += 4)
                simde_mm_storeu_si128((simde__m128i *)(codes + i),
                                      dq__tq128_gen(&c, x + i, q->lo + (uint32_t)i, res ? res + i : NULL));
    }
    rest = *q;
    rest.lo = q->lo + (uint32_t)i;
    dq__quant_tab__scalar(&rest, x + i, cnt - i, codes + i, res ? res + i : NULL);
}

/* Magnitudes tab[l] of levels l (0..s) for the decoders: rebuilt from the bits for an
 * exponential table, else looked up. */
static inline simde__m128 dq__tab_exp_value__sse2(simde__m128i l, simde__m128i c127) {
    return simde_mm_castsi128_ps(simde_mm_andnot_si128(simde_mm_cmpeq_epi32(l, simde_mm_setzero_si128()),
                                                       simde_mm_slli_epi32(simde_mm_add_epi32(l, c127), 23)));
}

static inline void dq__decode_block_tab__sse2(const uint8_t *in, unsigned b, const float *tab, const float *rowscale,
                                              float w, int add, float *out) {
    const unsigned s = (1u << (b - 1u)) - 1u;
    const simde__m128i mask = simde_mm_set1_epi32((int32_t)((1u << b) - 1u)), lmask = simde_mm_set1_epi32((int32_t)s);
    const simde__m128i shs = simde_mm_cvtsi32_si128((int)b - 1), c127 = simde_mm_set1_epi32((int32_t)(127u - s));
    const simde__m128 wv = simde_mm_set1_ps(w);
    const int isexp = dq__tab_isexp__sse2(tab, s);
    unsigned r;
    for (r = 0; r < DQ__ROWS; r++) {
        unsigned off = r * b, j = off >> 5, sh5 = off & 31u;
        const uint8_t *p = in + 32u * j;
        simde__m128i sh = simde_mm_cvtsi32_si128((int)sh5);
        simde__m128i v0 = simde_mm_srl_epi32(simde_mm_loadu_si128((const simde__m128i *)p), sh);
        simde__m128i v1 = simde_mm_srl_epi32(simde_mm_loadu_si128((const simde__m128i *)(p + 16)), sh);
        simde__m128 sc = simde_mm_set1_ps(rowscale[r]), f0, f1;
        if (sh5 + b > 32) {
            simde__m128i upc = simde_mm_cvtsi32_si128((int)(32 - sh5));
            v0 = simde_mm_or_si128(v0, simde_mm_sll_epi32(simde_mm_loadu_si128((const simde__m128i *)(p + 32)), upc));
            v1 = simde_mm_or_si128(v1, simde_mm_sll_epi32(simde_mm_loadu_si128((const simde__m128i *)(p + 48)), upc));
        }
        v0 = simde_mm_and_si128(v0, mask);
        v1 = simde_mm_and_si128(v1, mask);
        if (isexp) {
            f0 = dq__tab_exp_value__sse2(simde_mm_and_si128(v0, lmask), c127);
            f1 = dq__tab_exp_value__sse2(simde_mm_and_si128(v1, lmask), c127);
        } else {
            f0 = dq__tab_look__sse2(tab, simde_mm_and_si128(v0, lmask));
            f1 = dq__tab_look__sse2(tab, simde_mm_and_si128(v1, lmask));
        }
        f0 = simde_mm_mul_ps(f0, sc);
        f1 = simde_mm_mul_ps(f1, sc);
        f0 = simde_mm_castsi128_ps(
            simde_mm_xor_si128(simde_mm_castps_si128(f0), simde_mm_slli_epi32(simde_mm_srl_epi32(v0, shs), 31)));
        f1 = simde_mm_castsi128_ps(
            simde_mm_xor_si128(simde_mm_castps_si128(f1), simde_mm_slli_epi32(simde_mm_srl_epi32(v1, shs), 31)));
        if (add) {
            f0 = simde_mm_add_ps(simde_mm_loadu_ps(out + 8 * r), simde_mm_mul_ps(wv, f0));
            f1 = simde_mm_add_ps(simde_mm_loadu_ps(out + 8 * r + 4), simde_mm_mul_ps(wv, f1));
        }
        simde_mm_storeu_ps(out + 8 * r, f0);
        simde_mm_storeu_ps(out + 8 * r + 4, f1);
    }
}

/* ---- shared-scale levels (twin: dq__shared_q__scalar): 4 lanes */
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
        up = stoch ? simde_mm_cmplt_ps(simde_mm_cvtepi32_ps(simde_mm_srli_epi32(dq__draw__sse2(idx, K0, K1, 0), 8)),
                                       simde_mm_mul_ps(f, two24))
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

/* ---- the sparsifiers' scan (twin: dq__sp_mask64__scalar). c = x (+ e) is one float add per
 * element, identical in every width; the key test key >= lo is a signed 32-bit compare
 * key > lo - 1, exact because keys are <= 0x7FFFFFFF and lo <= 0x7F800000. The 64 compares are
 * ORed first and the mask is built only when one is set (rare: the passes look for the top of
 * the vector). */
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

/* ---- fp16 and bf16 conversions (twins: dq__f16_to_f32__scalar, dq__f32_to_f16__scalar,
 * dq__bf16_to_f32__scalar, dq__f32_to_bf16__scalar), integer operations plus exact
 * int-to-float conversions, and the carried statistics of the typed codec (dq__hstat_acc).
 *   fp16 -> f32  exact; NaN: quiet bit set, sign and payload kept (payload << 13).
 *   f32 -> fp16  round to nearest even; overflow (|x| >= 65520) gives Inf; NaN: quiet bit set,
 *                sign and the top 10 payload bits kept. This is what F16C's vcvtps2ph/vcvtph2ps
 *                do with the immediate rounding mode 0, so the F16C kernels are twins too.
 *   bf16 -> f32  exact (h << 16); NaN: quiet bit set.
 *   f32 -> bf16  round to nearest even on the bit pattern; NaN: quiet bit set, top 7 payload bits.
 * Rounding-mode note: the one floating-point operation whose result depends on the rounding mode
 * is the subnormal-half branch of f32 -> fp16 (|x| < 2^-14 is rounded by adding 0.5f, whose ulp
 * is 2^-24); dqsgd requires the default environment (round to nearest) anyway. DAZ/FTZ do not
 * change any result here: the only float inputs that DAZ would zero round to a zero half. */
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

/* ---- 32-way rANS chunks (coder 3)
 * Twins of dq__r32_get__scalar and dq__r32_encode__scalar. The 32 states are 8 SSE2
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

/* ================================================================ SSSE3: the VARINT index decoder
 * (twin: dq__svb_decode__scalar), where the byte shuffle is native: x86 with SSSE3, and NEON
 * (one table lookup). */
#if DQ__HAS_SSSE3_KERNELS
/* Four values a control byte: the byte's two nibbles each describe two values. For a nibble
 * q (lengths (q & 3) + 1 and (q >> 2) + 1) nib[q] holds the 8 shuffle indices that spread
 * their bytes over two 32-bit lanes (0x80: zero); the high nibble's indices are shifted by
 * the low nibble's byte count (0x80 + 8 keeps the zeroing bit). least[q]: each lane's
 * smallest value for its length, XOR 2^31 (for a signed compare). Full groups run while 16
 * data bytes remain readable; the rest, and the k % 4 tail, go to the scalar twin. */
static inline void dq__svb_decode__ssse3(const uint8_t *ctrl, const uint8_t *data, size_t data_len, size_t k,
                                         uint32_t *out, dq__svb_acc *a) {
    static const uint64_t nib[16] = {
        0x8080800180808000u, 0x8080800280800100u, 0x8080800380020100u, 0x8080800403020100u,
        0x8080020180808000u, 0x8080030280800100u, 0x8080040380020100u, 0x8080050403020100u,
        0x8003020180808000u, 0x8004030280800100u, 0x8005040380020100u, 0x8006050403020100u,
        0x0403020180808000u, 0x0504030280800100u, 0x0605040380020100u, 0x0706050403020100u};
    static const uint64_t least[16] = {
        0x8000000080000000u, 0x8000000080000100u, 0x8000000080010000u, 0x8000000081000000u,
        0x8000010080000000u, 0x8000010080000100u, 0x8000010080010000u, 0x8000010081000000u,
        0x8001000080000000u, 0x8001000080000100u, 0x8001000080010000u, 0x8001000081000000u,
        0x8100000080000000u, 0x8100000080000100u, 0x8100000080010000u, 0x8100000081000000u};
    const simde__m128i zero = simde_mm_setzero_si128(), one = simde_mm_set1_epi32(1);
    const simde__m128i sign = simde_mm_set1_epi32(INT32_MIN);
    simde__m128i prev = simde_mm_set1_epi32((int32_t)a->prev), bad = zero, s0 = zero, s1 = zero;
    uint64_t sums[4];
    size_t g = 0, groups = k / 4u, pos = 0;
    for (; g < groups && data_len - pos >= 16; g++) {
        unsigned c = ctrl[g], lo = c & 15u, hi = c >> 4, nlo = (lo & 3u) + (lo >> 2) + 2u;
        uint64_t mhi = nib[hi] + nlo * 0x0101010101010101u;
        simde__m128i m = simde_mm_set_epi64x((int64_t)mhi, (int64_t)nib[lo]);
        simde__m128i v = simde_mm_shuffle_epi8(simde_mm_loadu_si128((const simde__m128i *)(data + pos)), m);
        simde__m128i mn = simde_mm_set_epi64x((int64_t)least[hi], (int64_t)least[lo]);
        bad = simde_mm_or_si128(bad, simde_mm_cmpgt_epi32(mn, simde_mm_xor_si128(v, sign)));
        s0 = simde_mm_add_epi64(s0, simde_mm_unpacklo_epi32(v, zero));
        s1 = simde_mm_add_epi64(s1, simde_mm_unpackhi_epi32(v, zero));
        pos += nlo + (hi & 3u) + (hi >> 2) + 2u;
        v = simde_mm_add_epi32(v, one); /* gaps */
        v = simde_mm_add_epi32(v, simde_mm_slli_si128(v, 4));
        v = simde_mm_add_epi32(v, simde_mm_slli_si128(v, 8));
        v = simde_mm_add_epi32(v, prev);
        simde_mm_storeu_si128((simde__m128i *)(out + 4u * g), v);
        prev = simde_mm_shuffle_epi32(v, 0xFF);
    }
    simde_mm_storeu_si128((simde__m128i *)sums, s0);
    simde_mm_storeu_si128((simde__m128i *)(sums + 2), s1);
    a->sum += sums[0] + sums[1] + sums[2] + sums[3];
    a->prev = (uint32_t)simde_mm_cvtsi128_si32(prev);
    a->bad |= (uint32_t)(simde_mm_movemask_epi8(bad) != 0);
    dq__svb_decode__scalar(ctrl + g, data + pos, data_len - pos, k - 4u * g, out + 4u * g, a);
}
#endif /* SSSE3 */

/* ================================================================ SSE4.2: CRC32C
 * (twin: dq__crc32c__scalar) The crc32 instruction computes the raw CRC32C register update;
 * eight bytes at a time in one dependency chain (3-cycle latency) gives about 8 bytes per 3
 * cycles, ample beside the codec. */
#if DQ__HAS_SSE42_KERNELS
static inline uint32_t dq__crc32c__sse42(uint32_t c, const uint8_t *p, size_t n) {
    uint64_t c64 = c, w;
    for (; n >= 8; p += 8, n -= 8) {
        memcpy(&w, p, 8); /* x86 is little-endian: the bytes in memory order */
        c64 = simde_mm_crc32_u64(c64, w);
    }
    c = (uint32_t)c64;
    for (; n; p++, n--) c = simde_mm_crc32_u8(c, *p);
    return c;
}
#endif /* SSE4.2 */
/* ================================================================ AVX2 kernels
 * The AVX2 kernel of each family that has one, then the F16C fp16 conversions. In
 * order: packing, the dither round, bucket statistics, error feedback, quantization, block
 * decoding, Elias sizing, two-means, table schemes, shared-scale levels, the sparsifiers' scan,
 * count-sketch hashes, fp16/bf16 conversions, the 32-way rANS chunk kernels. */
#if DQ__HAS_AVX2_KERNELS
/* Add one row of 8 codes to the lane accumulator; a full 32-bit word per lane is stored. */
static inline void dq__pack_row__avx2(simde__m256i *acc, unsigned *have, simde__m256i v, unsigned b, uint8_t **out) {
    *acc = simde_mm256_or_si256(*acc, simde_mm256_sll_epi32(v, simde_mm_cvtsi32_si128((int)*have)));
    *have += b;
    if (*have >= 32) {
        simde_mm256_storeu_si256((simde__m256i *)*out, *acc);
        *out += 32;
        *have -= 32;
        *acc = simde_mm256_srl_epi32(v, simde_mm_cvtsi32_si128((int)(b - *have))); /* >= 32 gives 0 */
    }
}

/* ---- the dither round: dq__draw32 on 8 lanes (see dq__draw__sse2) */
static inline simde__m256i dq__draw__avx2(simde__m256i idx, simde__m256i k0, simde__m256i k1, int hoisted) {
    simde__m256i x = simde_mm256_xor_si256(idx, k0);
    if (!hoisted) x = simde_mm256_xor_si256(x, simde_mm256_srli_epi32(x, 16));
    x = simde_mm256_mullo_epi32(x, simde_mm256_set1_epi32((int32_t)0x7FEB352D));
    x = simde_mm256_xor_si256(x, simde_mm256_xor_si256(simde_mm256_srli_epi32(x, 15), k1));
    x = simde_mm256_mullo_epi32(x, simde_mm256_set1_epi32((int32_t)0x846CA68B));
    return simde_mm256_xor_si256(x, simde_mm256_srli_epi32(x, 16));
}

static inline void dq__stats__avx2(const float *x, const float *e, size_t n, unsigned what, dq__stats *st) {
    const simde__m256i absm = simde_mm256_set1_epi32(0x7FFFFFFF);
    simde__m256d q0 = simde_mm256_setzero_pd(), q1 = q0, q2 = q0, q3 = q0;
    simde__m256i mx = simde_mm256_setzero_si256();
    double l16[DQ__SLANES] = {0};
    uint32_t m8[8], mxs = 0;
    size_t i = 0;
    if (what != DQ__ST_SQ && what != DQ__ST_ABS && what != DQ__ST_MAX) {
        dq__stats__scalar(x, e, n, what, st);
        return;
    }
    for (; i + 16 <= n; i += 16) {
        simde__m256 v0 = simde_mm256_loadu_ps(x + i), v1 = simde_mm256_loadu_ps(x + i + 8);
        if (e) {
            v0 = simde_mm256_add_ps(v0, simde_mm256_loadu_ps(e + i));
            v1 = simde_mm256_add_ps(v1, simde_mm256_loadu_ps(e + i + 8));
        }
        if (what == DQ__ST_MAX) {
            mx = simde_mm256_max_epu32(mx, simde_mm256_and_si256(simde_mm256_castps_si256(v0), absm));
            mx = simde_mm256_max_epu32(mx, simde_mm256_and_si256(simde_mm256_castps_si256(v1), absm));
        } else {
            simde__m256d d0, d1, d2, d3;
            /* |x| for the squares too: a NaN keeps its sign through the multiply, and the
             * scalar twin squares |x| (bit-identical statistics even for NaN input) */
            v0 = simde_mm256_castsi256_ps(simde_mm256_and_si256(simde_mm256_castps_si256(v0), absm));
            v1 = simde_mm256_castsi256_ps(simde_mm256_and_si256(simde_mm256_castps_si256(v1), absm));
            d0 = simde_mm256_cvtps_pd(simde_mm256_castps256_ps128(v0)); /* lanes 0..3 */
            d1 = simde_mm256_cvtps_pd(simde_mm256_extractf128_ps(v0, 1)); /* lanes 4..7 */
            d2 = simde_mm256_cvtps_pd(simde_mm256_castps256_ps128(v1)); /* lanes 8..11 */
            d3 = simde_mm256_cvtps_pd(simde_mm256_extractf128_ps(v1, 1)); /* lanes 12..15 */
            if (what == DQ__ST_SQ) {
                d0 = simde_mm256_mul_pd(d0, d0);
                d1 = simde_mm256_mul_pd(d1, d1);
                d2 = simde_mm256_mul_pd(d2, d2);
                d3 = simde_mm256_mul_pd(d3, d3);
            }
            q0 = simde_mm256_add_pd(q0, d0);
            q1 = simde_mm256_add_pd(q1, d1);
            q2 = simde_mm256_add_pd(q2, d2);
            q3 = simde_mm256_add_pd(q3, d3);
        }
    }
    simde_mm256_storeu_pd(l16, q0);
    simde_mm256_storeu_pd(l16 + 4, q1);
    simde_mm256_storeu_pd(l16 + 8, q2);
    simde_mm256_storeu_pd(l16 + 12, q3);
    simde_mm256_storeu_si256((simde__m256i *)m8, mx);
    for (unsigned k = 0; k < 8; k++)
        if (m8[k] > mxs) mxs = m8[k];
    dq__stats_end(x, e, i, n, what, l16, mxs, st);
}

static inline void dq__compensate__avx2(const float *x, float *e, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        simde_mm256_storeu_ps(e + i, simde_mm256_add_ps(simde_mm256_loadu_ps(x + i), simde_mm256_loadu_ps(e + i)));
    dq__compensate__scalar(x + i, e + i, n - i);
}

typedef struct dq__q256 {
    simde__m256i absm, zero, one, k0, k1, lane;
    simde__m256i sbit; /* bit b-1 */
    simde__m128i shs, sgn; /* b-1; 32-b */
    simde__m256 inv, smax, step, neg, half, ulp24;
    int stoch, k0x; /* k0x: k0 holds the hoisted key (dq__draw_hoist) */
    unsigned bits;
} dq__q256;
/* The quantizer constants for the `cnt` elements from index q->lo on. */
static inline void dq__q256_init(dq__q256 *c, const dq__qctx *q, size_t cnt) {
    uint32_t k0h;
    c->k0x = dq__draw_hoist(q->k0, q->lo, cnt, &k0h);
    c->absm = simde_mm256_set1_epi32(0x7FFFFFFF);
    c->zero = simde_mm256_setzero_si256();
    c->one = simde_mm256_set1_epi32(1);
    c->k0 = simde_mm256_set1_epi32((int32_t)k0h);
    c->k1 = simde_mm256_set1_epi32((int32_t)q->k1h);
    c->lane = simde_mm256_loadu_si256((const simde__m256i *)dq__lane_ids);
    c->shs = simde_mm_cvtsi32_si128((int)q->bits - 1);
    c->sgn = simde_mm_cvtsi32_si128(32 - (int)q->bits);
    c->sbit = simde_mm256_set1_epi32((int32_t)(1u << (q->bits - 1)));
    c->inv = simde_mm256_set1_ps(q->inv);
    c->smax = simde_mm256_set1_ps(q->smax);
    c->step = simde_mm256_set1_ps(q->step);
    c->neg = simde_mm256_set1_ps(q->neg);
    c->half = simde_mm256_set1_ps(0.5f);
    c->ulp24 = simde_mm256_set1_ps(5.96046448e-08f);
    c->stoch = q->thresh < 0.0f;
    c->bits = q->bits;
}
/* One row of 8 codes (see dq__q512_codes). */
static inline simde__m256i dq__q256_codes(const dq__q256 *c, const float *x, uint32_t lo, float *res) {
    simde__m256 xv = simde_mm256_loadu_ps(x), t, v = simde_mm256_setzero_ps();
    simde__m256i xb = simde_mm256_castps_si256(xv), code;
    if (c->stoch) {
        simde__m256i h = dq__draw__avx2(simde_mm256_add_epi32(simde_mm256_set1_epi32((int32_t)lo), c->lane), c->k0, c->k1,
                                        c->k0x);
        t = simde_mm256_mul_ps(simde_mm256_cvtepi32_ps(simde_mm256_srli_epi32(h, 8)), c->ulp24);
    } else {
        t = c->half;
    }
    if (c->bits == 1) {
        simde__m256 pp = simde_mm256_add_ps(c->half, simde_mm256_mul_ps(xv, c->inv));
        code = c->stoch ? simde_mm256_andnot_si256(simde_mm256_castps_si256(simde_mm256_cmp_ps(t, pp, SIMDE_CMP_LT_OQ)), c->one)
                        : simde_mm256_srli_epi32(xb, 31);
        if (res) /* code 1 decodes to neg, code 0 to step */
            v = simde_mm256_blendv_ps(c->step, c->neg, simde_mm256_castsi256_ps(simde_mm256_slli_epi32(code, 31)));
    } else {
        simde__m256 r = simde_mm256_min_ps(
            simde_mm256_mul_ps(simde_mm256_castsi256_ps(simde_mm256_and_si256(xb, c->absm)), c->inv), c->smax);
        simde__m256i l = simde_mm256_cvttps_epi32(r), sg;
        simde__m256 f = simde_mm256_sub_ps(r, simde_mm256_cvtepi32_ps(l));
        l = simde_mm256_sub_epi32(l, simde_mm256_castps_si256(simde_mm256_cmp_ps(t, f, SIMDE_CMP_LT_OQ)));
        sg = simde_mm256_andnot_si256(simde_mm256_cmpeq_epi32(l, c->zero), simde_mm256_srli_epi32(xb, 31));
        code = simde_mm256_or_si256(l, simde_mm256_sll_epi32(sg, c->shs));
        if (res) {
            v = simde_mm256_mul_ps(simde_mm256_cvtepi32_ps(l), c->step);
            v = simde_mm256_castsi256_ps(
                simde_mm256_xor_si256(simde_mm256_castps_si256(v), simde_mm256_slli_epi32(sg, 31)));
        }
    }
    if (res) simde_mm256_storeu_ps(res, simde_mm256_sub_ps(xv, v));
    return code;
}

/* dq__q256_codes for stochastic rounding, b >= 2, the hoisted key and no residual; idx holds
 * the low halves of the 8 element indices. The sign goes to bit b-1 by one shift of x and a
 * mask, and psignd (by the level, never negative) clears it where the level is 0. */
static inline simde__m256i dq__q256_codes_sk(const dq__q256 *c, const float *x, simde__m256i idx) {
    simde__m256i xb = simde_mm256_loadu_si256((const simde__m256i *)x), h = dq__draw__avx2(idx, c->k0, c->k1, 1), l;
    simde__m256 r, t, f;
    t = simde_mm256_mul_ps(simde_mm256_cvtepi32_ps(simde_mm256_srli_epi32(h, 8)), c->ulp24);
    r = simde_mm256_min_ps(simde_mm256_mul_ps(simde_mm256_castsi256_ps(simde_mm256_and_si256(xb, c->absm)), c->inv), c->smax);
    l = simde_mm256_cvttps_epi32(r);
    f = simde_mm256_sub_ps(r, simde_mm256_cvtepi32_ps(l));
    l = simde_mm256_sub_epi32(l, simde_mm256_castps_si256(simde_mm256_cmp_ps(t, f, SIMDE_CMP_LT_OQ)));
    return simde_mm256_or_si256(
        l, simde_mm256_sign_epi32(simde_mm256_and_si256(simde_mm256_srl_epi32(xb, c->sgn), c->sbit), l));
}
static inline void dq__quant__avx2(const dq__qctx *q, const float *x, size_t cnt, uint32_t *codes, float *res) {
    dq__q256 c;
    size_t i = 0;
    dq__qctx rest;
    dq__q256_init(&c, q, cnt);
    for (; i + 8 <= cnt; i += 8)
        simde_mm256_storeu_si256((simde__m256i *)(codes + i),
                                 dq__q256_codes(&c, x + i, q->lo + (uint32_t)i, res ? res + i : NULL));
    rest = *q;
    rest.lo = q->lo + (uint32_t)i;
    dq__quant__scalar(&rest, x + i, cnt - i, codes + i, res ? res + i : NULL);
}

static inline void dq__quant_pack__avx2(const dq__qctx *q, const float *x, float *res, uint8_t *out) {
    dq__q256 c;
    simde__m256i acc = simde_mm256_setzero_si256();
    unsigned have = 0, b = q->bits, i;
    dq__q256_init(&c, q, DQ__BLOCK);
    if ((32u % b) == 0) { /* b divides 32: independent words (see dq__quant_pack__avx512) */
        unsigned j, k, per = 32u / b; /* rows per word */
        const simde__m256i sb = simde_mm256_set1_epi32((int)b), eight = simde_mm256_set1_epi32(8);
        for (j = 0, i = 0; j < b; j++, out += 32) {
            simde__m256i w = simde_mm256_setzero_si256(), sh = simde_mm256_setzero_si256();
            if (c.stoch && c.k0x && !res && b >= 2u) { /* the common case, without the tests per vector */
                const dq__q256 cc = c;
                simde__m256i idx = simde_mm256_add_epi32(simde_mm256_set1_epi32((int32_t)(q->lo + i)), cc.lane);
                for (k = 0; k < per; k++, i += 8, sh = simde_mm256_add_epi32(sh, sb), idx = simde_mm256_add_epi32(idx, eight))
                    w = simde_mm256_or_si256(w, simde_mm256_sllv_epi32(dq__q256_codes_sk(&cc, x + i, idx), sh));
            } else {
                for (k = 0; k < per; k++, i += 8, sh = simde_mm256_add_epi32(sh, sb))
                    w = simde_mm256_or_si256(w, simde_mm256_sllv_epi32(dq__q256_codes(&c, x + i, q->lo + i, res ? res + i : NULL), sh));
            }
            simde_mm256_storeu_si256((simde__m256i *)out, w);
        }
        return;
    }
    for (i = 0; i < DQ__BLOCK; i += 8) {
        dq__pack_row__avx2(&acc, &have, dq__q256_codes(&c, x + i, q->lo + i, res ? res + i : NULL), b, &out);
    }
}

static inline void dq__pack_block__avx2(const uint32_t *codes, unsigned b, uint8_t *out) {
    simde__m256i acc = simde_mm256_setzero_si256();
    unsigned have = 0, r;
    for (r = 0; r < DQ__ROWS; r++)
        dq__pack_row__avx2(&acc, &have, simde_mm256_loadu_si256((const simde__m256i *)(codes + 8 * r)), b, &out);
}

/* Whether all 32 row steps have the bits of rowstep[0]. The first and last are compared alone
 * first: a block that spans buckets usually differs there, and its caller stored the steps one
 * by one, which a vector load would wait on (no store forwarding into a wider load). */
static inline int dq__rows_uniform(const float *rowstep) {
    const simde__m256i s0 = simde_mm256_set1_epi32((int32_t)dq__fbits(rowstep[0]));
    simde__m256i d;
    if (dq__fbits(rowstep[DQ__ROWS - 1]) != dq__fbits(rowstep[0])) return 0;
    d = simde_mm256_or_si256(simde_mm256_xor_si256(simde_mm256_loadu_si256((const simde__m256i *)rowstep), s0),
                             simde_mm256_xor_si256(simde_mm256_loadu_si256((const simde__m256i *)(rowstep + 8)), s0));
    d = simde_mm256_or_si256(d, simde_mm256_xor_si256(simde_mm256_loadu_si256((const simde__m256i *)(rowstep + 16)), s0));
    d = simde_mm256_or_si256(d, simde_mm256_xor_si256(simde_mm256_loadu_si256((const simde__m256i *)(rowstep + 24)), s0));
    return simde_mm256_testz_si256(d, d);
}
/* Decoded values of 8 codes, as in the scalar dq__decode_value. */
static inline simde__m256 dq__decode_vals__avx2(simde__m256i v, simde__m256i lmask, simde__m256i lone, simde__m256 stepv,
                                                simde__m128i shs) {
    simde__m256 f = simde_mm256_mul_ps(simde_mm256_cvtepi32_ps(simde_mm256_or_si256(simde_mm256_and_si256(v, lmask), lone)), stepv);
    return simde_mm256_castsi256_ps(
        simde_mm256_xor_si256(simde_mm256_castps_si256(f), simde_mm256_slli_epi32(simde_mm256_srl_epi32(v, shs), 31)));
}
/* b divides 32: row r is at bits (r % (32/b)) * b of word r / (32/b), never split. With equal
 * row steps and b <= 4 the value of a code is a permute of the values of levels 0..7 (the sign
 * bit, at or above bit 3 when b = 4 and ignored by the permute for the level, then xored in;
 * for b <= 3 the table entry already drops it: entry k is the value of level k & lmask). */
static inline void dq__decode_block_p2__avx2(const uint8_t *in, unsigned b, const float *rowstep, float w, int add,
                                             float *out) {
    const simde__m256i lmask = simde_mm256_set1_epi32(b == 1 ? 0 : (int32_t)((1u << (b - 1)) - 1u));
    const simde__m256i lone = simde_mm256_set1_epi32(b == 1 ? 1 : 0);
    const simde__m256i sgnm = simde_mm256_set1_epi32((int32_t)0x80000000u), sb = simde_mm256_set1_epi32((int)b);
    const simde__m128i shs = simde_mm_cvtsi32_si128((int)b - 1), shsg = simde_mm_cvtsi32_si128(32 - (int)b);
    const simde__m256 wv = simde_mm256_set1_ps(w);
    const unsigned per = 32u / b, table = b <= 4u && dq__rows_uniform(rowstep);
    simde__m256 tab = simde_mm256_setzero_ps(), v;
    unsigned j, k, r;
    if (table)
        tab = dq__decode_vals__avx2(simde_mm256_and_si256(simde_mm256_loadu_si256((const simde__m256i *)dq__lane_ids), lmask),
                                    lmask, lone, simde_mm256_set1_ps(rowstep[0]), shs);
    for (j = 0, r = 0; j < b; j++) {
        const simde__m256i word = simde_mm256_loadu_si256((const simde__m256i *)(in + 32u * j));
        simde__m256i sh = simde_mm256_setzero_si256(), code;
        for (k = 0; k < per; k++, r++, sh = simde_mm256_add_epi32(sh, sb)) {
            /* the bits above the code are dropped by lmask, the permute and the sign shifts */
            code = simde_mm256_srlv_epi32(word, sh);
            if (table)
                v = simde_mm256_castsi256_ps(simde_mm256_xor_si256(
                    simde_mm256_castps_si256(simde_mm256_permutevar8x32_ps(tab, code)),
                    simde_mm256_and_si256(simde_mm256_sll_epi32(code, shsg), sgnm)));
            else
                v = dq__decode_vals__avx2(code, lmask, lone, simde_mm256_set1_ps(rowstep[r]), shs);
            if (add) v = simde_mm256_add_ps(simde_mm256_loadu_ps(out + 8 * r), simde_mm256_mul_ps(wv, v));
            simde_mm256_storeu_ps(out + 8 * r, v);
        }
    }
}
static inline void dq__decode_block__avx2(const uint8_t *in, unsigned b, const float *rowstep, float w, int add,
                                          float *out) {
    const simde__m256i mask = simde_mm256_set1_epi32((int32_t)((1u << b) - 1u));
    const simde__m256i lmask = simde_mm256_set1_epi32(b == 1 ? 0 : (int32_t)((1u << (b - 1)) - 1u));
    const simde__m256i lone = simde_mm256_set1_epi32(b == 1 ? 1 : 0);
    const simde__m128i shs = simde_mm_cvtsi32_si128((int)b - 1);
    const simde__m256 wv = simde_mm256_set1_ps(w);
    unsigned r;
    if (32u % b == 0) {
        dq__decode_block_p2__avx2(in, b, rowstep, w, add, out);
        return;
    }
    for (r = 0; r < DQ__ROWS; r++) {
        unsigned off = r * b, j = off >> 5, s = off & 31u;
        const uint8_t *p = in + 32u * j;
        simde__m256i v = simde_mm256_srl_epi32(simde_mm256_loadu_si256((const simde__m256i *)p), simde_mm_cvtsi32_si128((int)s));
        simde__m256 f;
        if (s + b > 32)
            v = simde_mm256_or_si256(v, simde_mm256_sll_epi32(simde_mm256_loadu_si256((const simde__m256i *)(p + 32)),
                                                              simde_mm_cvtsi32_si128((int)(32 - s))));
        v = simde_mm256_and_si256(v, mask);
        f = simde_mm256_mul_ps(simde_mm256_cvtepi32_ps(simde_mm256_or_si256(simde_mm256_and_si256(v, lmask), lone)),
                               simde_mm256_set1_ps(rowstep[r]));
        f = simde_mm256_castsi256_ps(simde_mm256_xor_si256(simde_mm256_castps_si256(f),
                                                           simde_mm256_slli_epi32(simde_mm256_srl_epi32(v, shs), 31)));
        if (add) f = simde_mm256_add_ps(simde_mm256_loadu_ps(out + 8 * r), simde_mm256_mul_ps(wv, f));
        simde_mm256_storeu_ps(out + 8 * r, f);
    }
}

/* Elias sizing scan of a full block (see the SSE2 section). */
static inline uint32_t dq__elias_scan__avx2(const uint8_t *in, unsigned b, const uint8_t *lvt, uint32_t *codes,
                                            uint64_t *nz) {
    const simde__m256i mask = simde_mm256_set1_epi32((int32_t)((1u << b) - 1u));
    const simde__m256i lmask = simde_mm256_set1_epi32((int32_t)((1u << (b - 1u)) - 1u));
    const simde__m256i sgn = simde_mm256_set1_epi32((int32_t)(1u << (b - 1u))), zero = simde_mm256_setzero_si256();
    const simde__m256i e0 = simde_mm256_set1_epi8((char)126);
    simde__m256i acc = zero, bad = zero, tab;
    uint64_t word = 0;
    uint8_t bytab[32];
    uint32_t part[8];
    unsigned r, v;
    /* the bits by level for b <= 5 (a level is its own index), else by bit length */
    for (v = 0; v < 16; v++) {
        unsigned len = 0;
        while (v >> len) len++;
        bytab[v] = bytab[v + 16u] = b <= 5u ? lvt[len] : lvt[v];
    }
    tab = simde_mm256_loadu_si256((const simde__m256i *)bytab);
    for (r = 0; r < DQ__ROWS; r++) {
        unsigned off = r * b, j = off >> 5, s = off & 31u, m;
        const uint8_t *p = in + 32u * j;
        simde__m256i v8 = simde_mm256_srl_epi32(simde_mm256_loadu_si256((const simde__m256i *)p), simde_mm_cvtsi32_si128((int)s));
        simde__m256i l, idx;
        if (s + b > 32)
            v8 = simde_mm256_or_si256(v8, simde_mm256_sll_epi32(simde_mm256_loadu_si256((const simde__m256i *)(p + 32)),
                                                                simde_mm_cvtsi32_si128((int)(32 - s))));
        v8 = simde_mm256_and_si256(v8, mask);
        l = simde_mm256_and_si256(v8, lmask);
        simde_mm256_storeu_si256((simde__m256i *)(codes + 8 * r), v8);
        bad = simde_mm256_or_si256(bad, simde_mm256_cmpeq_epi32(v8, sgn));
        m = (unsigned)simde_mm256_movemask_ps(simde_mm256_castsi256_ps(simde_mm256_cmpeq_epi32(l, zero))) ^ 255u;
        word |= (uint64_t)m << (8u * (r & 7u));
        if ((r & 7u) == 7u) { /* a register, not nz[]: no store-to-load chain from row to row */
            nz[r >> 3] = word;
            word = 0;
        }
        /* b > 5: the bit length from the float exponent, 127 + len - 1, as one byte; 0 for 0 */
        idx = b <= 5u ? l
                      : simde_mm256_subs_epu8(simde_mm256_srli_epi32(simde_mm256_castps_si256(simde_mm256_cvtepi32_ps(l)), 23),
                                              e0);
        acc = simde_mm256_add_epi32(acc, simde_mm256_shuffle_epi8(tab, idx));
    }
    if (simde_mm256_movemask_epi8(bad)) return UINT32_MAX;
    simde_mm256_storeu_si256((simde__m256i *)part, acc);
    return part[0] + part[1] + part[2] + part[3] + part[4] + part[5] + part[6] + part[7];
}

/* The non-zero masks of a full block (dq__elias_nz__scalar). For b in {2, 4, 8} a 32-byte group
 * holds 32 / b whole rows, and ((v & L) + L) & H (L, H: every code's level mask, top bit) sets
 * the top bit of each code with a non-zero level (no carry crosses codes); row k's flags are
 * shifted to the sign bits and taken by movemask. Other b: a row at a time, as the scan. */
static inline void dq__elias_nz__avx2(const uint8_t *in, unsigned b, uint64_t *nz) {
    const simde__m256i zero = simde_mm256_setzero_si256();
    uint32_t lm1 = (1u << (b - 1u)) - 1u;
    uint64_t word = 0;
    unsigned r;
    if (b == 2u || b == 4u || b == 8u) {
        unsigned rpg = 32u / b, j, k;
        uint32_t lm = 0, hb = 0;
        simde__m256i L, H;
        for (k = 0; k < rpg; k++) {
            lm |= lm1 << (k * b);
            hb |= (1u << (b - 1u)) << (k * b);
        }
        L = simde_mm256_set1_epi32((int32_t)lm);
        H = simde_mm256_set1_epi32((int32_t)hb);
        for (j = 0; j < b; j++) {
            simde__m256i v = simde_mm256_loadu_si256((const simde__m256i *)(in + 32u * j));
            v = simde_mm256_and_si256(simde_mm256_add_epi32(simde_mm256_and_si256(v, L), L), H);
            for (k = 0; k < rpg; k++) {
                simde__m256i t = simde_mm256_sll_epi32(v, simde_mm_cvtsi32_si128((int)(32u - b * (k + 1u))));
                r = j * rpg + k;
                word |= (uint64_t)(unsigned)simde_mm256_movemask_ps(simde_mm256_castsi256_ps(t)) << (8u * (r & 7u));
                if ((r & 7u) == 7u) {
                    nz[r >> 3] = word;
                    word = 0;
                }
            }
        }
        return;
    }
    for (r = 0; r < DQ__ROWS; r++) {
        unsigned off = r * b, j = off >> 5, s = off & 31u, m;
        const uint8_t *p = in + 32u * j;
        simde__m256i v = simde_mm256_srl_epi32(simde_mm256_loadu_si256((const simde__m256i *)p), simde_mm_cvtsi32_si128((int)s));
        if (s + b > 32)
            v = simde_mm256_or_si256(v, simde_mm256_sll_epi32(simde_mm256_loadu_si256((const simde__m256i *)(p + 32)),
                                                              simde_mm_cvtsi32_si128((int)(32 - s))));
        v = simde_mm256_and_si256(v, simde_mm256_set1_epi32((int32_t)lm1));
        m = (unsigned)simde_mm256_movemask_ps(simde_mm256_castsi256_ps(simde_mm256_cmpeq_epi32(v, zero))) ^ 255u;
        word |= (uint64_t)m << (8u * (r & 7u));
        if ((r & 7u) == 7u) {
            nz[r >> 3] = word;
            word = 0;
        }
    }
}


/* ---- two-means (see the SSE2 section): statistics in 4 + 4 registers of 4 double lanes, and
 * the block decoder */
static inline void dq__tm_acc__avx2(const float *x, const float *e, size_t n, double *pos, double *neg,
                                    uint64_t *nneg) {
    const simde__m256i absm = simde_mm256_set1_epi32(0x7FFFFFFF);
    simde__m256d qp[4], qn[4];
    uint64_t m = 0;
    size_t i = 0;
    unsigned k;
    for (k = 0; k < 4; k++) {
        qp[k] = simde_mm256_loadu_pd(pos + 4 * k);
        qn[k] = simde_mm256_loadu_pd(neg + 4 * k);
    }
    for (; i + 16 <= n; i += 16) {
        simde__m256 v0 = simde_mm256_loadu_ps(x + i), v1 = simde_mm256_loadu_ps(x + i + 8), f0, f1;
        simde__m256i s0, s1;
        simde__m256d d[4], sg[4];
        if (e) {
            v0 = simde_mm256_add_ps(v0, simde_mm256_loadu_ps(e + i));
            v1 = simde_mm256_add_ps(v1, simde_mm256_loadu_ps(e + i + 8));
        }
        s0 = simde_mm256_srai_epi32(simde_mm256_castps_si256(v0), 31);
        s1 = simde_mm256_srai_epi32(simde_mm256_castps_si256(v1), 31);
        f0 = simde_mm256_castsi256_ps(simde_mm256_and_si256(simde_mm256_castps_si256(v0), absm));
        f1 = simde_mm256_castsi256_ps(simde_mm256_and_si256(simde_mm256_castps_si256(v1), absm));
        d[0] = simde_mm256_cvtps_pd(simde_mm256_castps256_ps128(f0)); /* lanes 0..3 */
        d[1] = simde_mm256_cvtps_pd(simde_mm256_extractf128_ps(f0, 1)); /* lanes 4..7 */
        d[2] = simde_mm256_cvtps_pd(simde_mm256_castps256_ps128(f1)); /* lanes 8..11 */
        d[3] = simde_mm256_cvtps_pd(simde_mm256_extractf128_ps(f1, 1)); /* lanes 12..15 */
        sg[0] = simde_mm256_castsi256_pd(simde_mm256_cvtepi32_epi64(simde_mm256_castsi256_si128(s0)));
        sg[1] = simde_mm256_castsi256_pd(simde_mm256_cvtepi32_epi64(simde_mm256_extracti128_si256(s0, 1)));
        sg[2] = simde_mm256_castsi256_pd(simde_mm256_cvtepi32_epi64(simde_mm256_castsi256_si128(s1)));
        sg[3] = simde_mm256_castsi256_pd(simde_mm256_cvtepi32_epi64(simde_mm256_extracti128_si256(s1, 1)));
        for (k = 0; k < 4; k++) {
            qn[k] = simde_mm256_add_pd(qn[k], simde_mm256_and_pd(sg[k], d[k]));
            qp[k] = simde_mm256_add_pd(qp[k], simde_mm256_andnot_pd(sg[k], d[k]));
        }
        m += dq__popcount32((uint32_t)simde_mm256_movemask_ps(v0) | (uint32_t)simde_mm256_movemask_ps(v1) << 8);
    }
    for (k = 0; k < 4; k++) {
        simde_mm256_storeu_pd(pos + 4 * k, qp[k]);
        simde_mm256_storeu_pd(neg + 4 * k, qn[k]);
    }
    *nneg += m;
    dq__tm_acc__scalar(x + i, e ? e + i : NULL, n - i, pos, neg, nneg);
}
static inline void dq__decode_block_tm__avx2(const uint8_t *in, const float *rowpos, const float *rowneg, float w,
                                             int add, float *out) {
    const simde__m256i wd = simde_mm256_loadu_si256((const simde__m256i *)in);
    const simde__m256 wv = simde_mm256_set1_ps(w);
    unsigned r;
    for (r = 0; r < DQ__ROWS; r++) { /* bit r of each lane word to the sign bit: blendv's selector */
        simde__m256 sel = simde_mm256_castsi256_ps(simde_mm256_sll_epi32(wd, simde_mm_cvtsi32_si128((int)(31u - r))));
        simde__m256 f = simde_mm256_blendv_ps(simde_mm256_set1_ps(rowpos[r]), simde_mm256_set1_ps(rowneg[r]), sel);
        if (add) f = simde_mm256_add_ps(simde_mm256_loadu_ps(out + 8 * r), simde_mm256_mul_ps(wv, f));
        simde_mm256_storeu_ps(out + 8 * r, f);
    }
}

/* ---- table schemes (see the SSE2 section for the method and the exactness argument) */
static inline int dq__tab_isexp__avx2(const float *tab, unsigned s) {
    const simde__m256i zero = simde_mm256_setzero_si256(), c = simde_mm256_set1_epi32((int32_t)(127u - s));
    simde__m256i l = simde_mm256_loadu_si256((const simde__m256i *)dq__lane_ids), bad = zero;
    unsigned i;
    if (s < 7u) return dq__tab_isexp__sse2(tab, s);
    for (i = 0; i <= s; i += 8u, l = simde_mm256_add_epi32(l, simde_mm256_set1_epi32(8))) {
        simde__m256i e = simde_mm256_andnot_si256(simde_mm256_cmpeq_epi32(l, zero),
                                                  simde_mm256_slli_epi32(simde_mm256_add_epi32(l, c), 23));
        bad = simde_mm256_or_si256(bad,
                                   simde_mm256_xor_si256(e, simde_mm256_loadu_si256((const simde__m256i *)(tab + i))));
    }
    return simde_mm256_testz_si256(bad, bad);
}

/* Table lookups for N = s + 1 entries: one permute (N <= 8, from a copy padded with +Inf), two
 * permutes and a blend on index bit 3 (N = 16), or a gather (N >= 32). */
typedef struct dq__tlook256 {
    simde__m256 t0, t1;
    const float *tab;
    unsigned n;
} dq__tlook256;
static inline void dq__tlook256_init(dq__tlook256 *L, const float *tab, unsigned s) {
    L->tab = tab;
    L->n = s + 1u;
    if (L->n <= 8u) {
        uint32_t pad[8] = {0x7F800000u, 0x7F800000u, 0x7F800000u, 0x7F800000u,
                           0x7F800000u, 0x7F800000u, 0x7F800000u, 0x7F800000u}; /* +Inf: above any r */
        memcpy(pad, tab, 4u * L->n);
        L->t0 = L->t1 = simde_mm256_loadu_ps((const float *)pad);
    } else if (L->n == 16u) {
        L->t0 = simde_mm256_loadu_ps(tab);
        L->t1 = simde_mm256_loadu_ps(tab + 8);
    } else {
        L->t0 = L->t1 = simde_mm256_setzero_ps();
    }
}
static inline simde__m256 dq__tlook256_get(const dq__tlook256 *L, simde__m256i idx) {
    if (L->n <= 8u) return simde_mm256_permutevar8x32_ps(L->t0, idx);
    if (L->n == 16u)
        return simde_mm256_blendv_ps(simde_mm256_permutevar8x32_ps(L->t0, idx),
                                     simde_mm256_permutevar8x32_ps(L->t1, idx),
                                     simde_mm256_castsi256_ps(simde_mm256_slli_epi32(idx, 28)));
    return simde_mm256_i32gather_ps(L->tab, idx, 4);
}

typedef struct dq__tq256 {
    simde__m256i absm, zero, k0, k1, lane, sv, c127, sm127, mant, onei, sgnm;
    simde__m128i shs;
    simde__m256 inv, scale, onef, pw, ulp24, thr, top, lo0, inf;
    dq__tlook256 look;
    float lv[8]; /* s <= 7: tab[0..s], then +Inf */
    unsigned s;
    int stoch;
} dq__tq256;
static inline void dq__tq256_init(dq__tq256 *c, const dq__qctx *q, int isexp) {
    unsigned s = (1u << (q->bits - 1u)) - 1u;
    c->absm = simde_mm256_set1_epi32(0x7FFFFFFF);
    c->zero = simde_mm256_setzero_si256();
    c->k0 = simde_mm256_set1_epi32((int32_t)q->k0);
    c->k1 = simde_mm256_set1_epi32((int32_t)q->k1h);
    c->lane = simde_mm256_loadu_si256((const simde__m256i *)dq__lane_ids);
    c->sv = simde_mm256_set1_epi32((int32_t)s);
    c->c127 = simde_mm256_set1_epi32((int32_t)(127u - s));
    c->sm127 = simde_mm256_set1_epi32((int32_t)s - 127);
    c->mant = simde_mm256_set1_epi32(0x007FFFFF);
    c->onei = simde_mm256_set1_epi32(0x3F800000);
    c->sgnm = simde_mm256_set1_epi32(INT32_MIN);
    c->shs = simde_mm_cvtsi32_si128((int)q->bits - 1);
    c->inv = simde_mm256_set1_ps(q->inv);
    c->scale = simde_mm256_set1_ps(q->scale);
    c->onef = simde_mm256_set1_ps(1.0f);
    c->pw = simde_mm256_castsi256_ps(simde_mm256_set1_epi32((int32_t)((s + 126u) << 23))); /* 2^(s-1) */
    c->ulp24 = simde_mm256_set1_ps(5.96046448e-08f);
    c->thr = simde_mm256_set1_ps(q->thresh);
    c->top = simde_mm256_set1_ps(q->tab[s]);
    c->lo0 = simde_mm256_set1_ps(q->tab[0]);
    c->inf = simde_mm256_castsi256_ps(simde_mm256_set1_epi32(0x7F800000));
    if (!isexp) dq__tlook256_init(&c->look, q->tab, s);
    if (!isexp && s <= 7u) simde_mm256_storeu_ps(c->lv, c->look.t0);
    c->s = s;
    c->stoch = q->thresh < 0.0f;
}
/* The dither t of 8 elements with indices lo + 0..7, or the threshold. */
static inline simde__m256 dq__tq256_t(const dq__tq256 *c, uint32_t lo) {
    if (c->stoch) {
        simde__m256i h = simde_mm256_add_epi32(simde_mm256_set1_epi32((int32_t)lo), c->lane);
        return simde_mm256_mul_ps(simde_mm256_cvtepi32_ps(simde_mm256_srli_epi32(dq__draw__avx2(h, c->k0, c->k1, 0), 8)),
                                  c->ulp24);
    }
    return c->thr;
}
/* Codes from levels l and magnitudes tv = tab[l]; residuals x - value to res unless NULL. */
static inline simde__m256i dq__tq256_end(const dq__tq256 *c, simde__m256 xv, simde__m256i l, simde__m256 tv,
                                         float *res) {
    simde__m256i sg = simde_mm256_andnot_si256(simde_mm256_cmpeq_epi32(l, c->zero),
                                               simde_mm256_and_si256(simde_mm256_castps_si256(xv), c->sgnm));
    if (res) {
        simde__m256 v = simde_mm256_xor_ps(simde_mm256_mul_ps(tv, c->scale), simde_mm256_castsi256_ps(sg));
        simde_mm256_storeu_ps(res, simde_mm256_sub_ps(xv, v));
    }
    return simde_mm256_or_si256(l, simde_mm256_sll_epi32(simde_mm256_srli_epi32(sg, 31), c->shs));
}
/* 8 codes from x[0..8) of an exponential table. */
static inline simde__m256i dq__tq256_exp(const dq__tq256 *c, const float *x, uint32_t lo, float *res) {
    simde__m256 xv = simde_mm256_loadu_ps(x), t = dq__tq256_t(c, lo), f, fhi, lt1;
    simde__m256 r = simde_mm256_mul_ps(
        simde_mm256_castsi256_ps(simde_mm256_and_si256(simde_mm256_castps_si256(xv), c->absm)), c->inv);
    simde__m256i rb = simde_mm256_castps_si256(r), l;
    simde__m256i j = simde_mm256_add_epi32(simde_mm256_srli_epi32(rb, 23), c->sm127);
    simde__m256i big = simde_mm256_cmpgt_epi32(j, c->zero);
    lt1 = simde_mm256_cmp_ps(r, c->onef, SIMDE_CMP_LT_OQ);
    fhi = simde_mm256_sub_ps(
        simde_mm256_castsi256_ps(simde_mm256_or_si256(simde_mm256_and_si256(rb, c->mant), c->onei)), c->onef);
    f = simde_mm256_blendv_ps(simde_mm256_mul_ps(r, c->pw), fhi, simde_mm256_castsi256_ps(big));
    l = simde_mm256_sub_epi32(simde_mm256_and_si256(j, big),
                              simde_mm256_castps_si256(simde_mm256_cmp_ps(t, f, SIMDE_CMP_LT_OQ)));
    l = simde_mm256_castps_si256(
        simde_mm256_blendv_ps(simde_mm256_castsi256_ps(c->sv), simde_mm256_castsi256_ps(l), lt1));
    return dq__tq256_end(
        c, xv, l,
        simde_mm256_castsi256_ps(simde_mm256_andnot_si256(
            simde_mm256_cmpeq_epi32(l, c->zero), simde_mm256_slli_epi32(simde_mm256_add_epi32(l, c->c127), 23))),
        res);
}
/* One step of the binary search: j += st where tab[j + st] <= r, keeping tab[j] and the last
 * candidate above r. */
static inline void dq__ts256_step(const dq__tlook256 *L, simde__m256 r, int32_t st, simde__m256i *j, simde__m256 *vlo,
                                  simde__m256 *vhi) {
    simde__m256i idx = simde_mm256_add_epi32(*j, simde_mm256_set1_epi32(st));
    simde__m256 cand = dq__tlook256_get(L, idx), m = simde_mm256_cmp_ps(cand, r, SIMDE_CMP_LE_OQ);
    *j =
        simde_mm256_castps_si256(simde_mm256_blendv_ps(simde_mm256_castsi256_ps(*j), simde_mm256_castsi256_ps(idx), m));
    *vlo = simde_mm256_blendv_ps(*vlo, cand, m);
    *vhi = simde_mm256_blendv_ps(cand, *vhi, m);
}
/* 8 codes from x[0..8) of any table: binary search. Tables of N <= 8 entries are searched as 8
 * (the +Inf padding is above every r < 1), so the steps do not depend on N below 16. */
static inline simde__m256i dq__tq256_gen(const dq__tq256 *c, const float *x, uint32_t lo, float *res) {
    simde__m256 xv = simde_mm256_loadu_ps(x), t = dq__tq256_t(c, lo), f, up, lt1, vlo = c->lo0, vhi = c->inf;
    simde__m256 r = simde_mm256_mul_ps(
        simde_mm256_castsi256_ps(simde_mm256_and_si256(simde_mm256_castps_si256(xv), c->absm)), c->inv);
    simde__m256i j = c->zero, l;
    lt1 = simde_mm256_cmp_ps(r, c->onef, SIMDE_CMP_LT_OQ);
    if (c->s <= 7u) { /* j = #{k in 1..6: tab[k] <= r} (padding never counts), independent compares */
        simde__m256i ja =
            simde_mm256_castps_si256(simde_mm256_cmp_ps(simde_mm256_set1_ps(c->lv[1]), r, SIMDE_CMP_LE_OQ));
        simde__m256i jb =
            simde_mm256_castps_si256(simde_mm256_cmp_ps(simde_mm256_set1_ps(c->lv[2]), r, SIMDE_CMP_LE_OQ));
        ja = simde_mm256_add_epi32(
            ja, simde_mm256_castps_si256(simde_mm256_cmp_ps(simde_mm256_set1_ps(c->lv[3]), r, SIMDE_CMP_LE_OQ)));
        jb = simde_mm256_add_epi32(
            jb, simde_mm256_castps_si256(simde_mm256_cmp_ps(simde_mm256_set1_ps(c->lv[4]), r, SIMDE_CMP_LE_OQ)));
        ja = simde_mm256_add_epi32(
            ja, simde_mm256_castps_si256(simde_mm256_cmp_ps(simde_mm256_set1_ps(c->lv[5]), r, SIMDE_CMP_LE_OQ)));
        jb = simde_mm256_add_epi32(
            jb, simde_mm256_castps_si256(simde_mm256_cmp_ps(simde_mm256_set1_ps(c->lv[6]), r, SIMDE_CMP_LE_OQ)));
        j = simde_mm256_sub_epi32(c->zero, simde_mm256_add_epi32(ja, jb));
        vlo = simde_mm256_permutevar8x32_ps(c->look.t0, j);
        vhi = simde_mm256_permutevar8x32_ps(c->look.t0, simde_mm256_sub_epi32(j, simde_mm256_cmpeq_epi32(j, j)));
    } else if (c->look.n <= 16u) {
        if (c->look.n == 16u) dq__ts256_step(&c->look, r, 8, &j, &vlo, &vhi);
        dq__ts256_step(&c->look, r, 4, &j, &vlo, &vhi);
        dq__ts256_step(&c->look, r, 2, &j, &vlo, &vhi);
        dq__ts256_step(&c->look, r, 1, &j, &vlo, &vhi);
    } else {
        unsigned st;
        for (st = c->look.n >> 1; st; st >>= 1) dq__ts256_step(&c->look, r, (int32_t)st, &j, &vlo, &vhi);
    }
    f = simde_mm256_div_ps(simde_mm256_sub_ps(r, vlo), simde_mm256_sub_ps(vhi, vlo));
    up = simde_mm256_cmp_ps(t, f, SIMDE_CMP_LT_OQ);
    l = simde_mm256_sub_epi32(j, simde_mm256_castps_si256(up));
    l = simde_mm256_castps_si256(
        simde_mm256_blendv_ps(simde_mm256_castsi256_ps(c->sv), simde_mm256_castsi256_ps(l), lt1));
    return dq__tq256_end(c, xv, l, simde_mm256_blendv_ps(c->top, simde_mm256_blendv_ps(vlo, vhi, up), lt1), res);
}
/* Whole vectors of 8 from x, given the table check; returns how many elements were done. */
static inline size_t dq__quant_tab_run__avx2(const dq__qctx *q, int isexp, const float *x, size_t cnt, uint32_t *codes,
                                             float *res) {
    dq__tq256 c;
    size_t i = 0;
    dq__tq256_init(&c, q, isexp);
    if (isexp)
        for (; i + 8 <= cnt; i += 8)
            simde_mm256_storeu_si256((simde__m256i *)(codes + i),
                                     dq__tq256_exp(&c, x + i, q->lo + (uint32_t)i, res ? res + i : NULL));
    else
        for (; i + 8 <= cnt; i += 8)
            simde_mm256_storeu_si256((simde__m256i *)(codes + i),
                                     dq__tq256_gen(&c, x + i, q->lo + (uint32_t)i, res ? res + i : NULL));
    return i;
}
static inline void dq__quant_tab__avx2(const dq__qctx *q, const float *x, size_t cnt, uint32_t *codes, float *res) {
    size_t i = 0;
    dq__qctx rest;
    if (cnt >= 8)
        i = dq__quant_tab_run__avx2(q, dq__tab_isexp__avx2(q->tab, (1u << (q->bits - 1u)) - 1u), x, cnt, codes, res);
    rest = *q;
    rest.lo = q->lo + (uint32_t)i;
    dq__quant_tab__scalar(&rest, x + i, cnt - i, codes + i, res ? res + i : NULL);
}

static inline void dq__decode_block_tab__avx2(const uint8_t *in, unsigned b, const float *tab, const float *rowscale,
                                              float w, int add, float *out) {
    const unsigned s = (1u << (b - 1u)) - 1u;
    const simde__m256i mask = simde_mm256_set1_epi32((int32_t)((1u << b) - 1u)),
                       lmask = simde_mm256_set1_epi32((int32_t)s);
    const simde__m256i c127 = simde_mm256_set1_epi32((int32_t)(127u - s)), zero = simde_mm256_setzero_si256();
    const simde__m128i shs = simde_mm_cvtsi32_si128((int)b - 1);
    const simde__m256 wv = simde_mm256_set1_ps(w);
    /* small tables permute (as cheap as rebuilding the value); large exponential ones rebuild */
    const int isexp = s >= 31u && dq__tab_isexp__avx2(tab, s);
    dq__tlook256 look;
    unsigned r;
    dq__tlook256_init(&look, tab, s);
    for (r = 0; r < DQ__ROWS; r++) {
        unsigned off = r * b, j = off >> 5, sh5 = off & 31u;
        const uint8_t *p = in + 32u * j;
        simde__m256i v =
            simde_mm256_srl_epi32(simde_mm256_loadu_si256((const simde__m256i *)p), simde_mm_cvtsi32_si128((int)sh5));
        simde__m256i l;
        simde__m256 f;
        if (sh5 + b > 32)
            v = simde_mm256_or_si256(v, simde_mm256_sll_epi32(simde_mm256_loadu_si256((const simde__m256i *)(p + 32)),
                                                              simde_mm_cvtsi32_si128((int)(32 - sh5))));
        v = simde_mm256_and_si256(v, mask);
        l = simde_mm256_and_si256(v, lmask);
        if (isexp)
            f = simde_mm256_castsi256_ps(simde_mm256_andnot_si256(
                simde_mm256_cmpeq_epi32(l, zero), simde_mm256_slli_epi32(simde_mm256_add_epi32(l, c127), 23)));
        else
            f = dq__tlook256_get(&look, l);
        f = simde_mm256_mul_ps(f, simde_mm256_set1_ps(rowscale[r]));
        f = simde_mm256_castsi256_ps(simde_mm256_xor_si256(simde_mm256_castps_si256(f),
                                                           simde_mm256_slli_epi32(simde_mm256_srl_epi32(v, shs), 31)));
        if (add) f = simde_mm256_add_ps(simde_mm256_loadu_ps(out + 8 * r), simde_mm256_mul_ps(wv, f));
        simde_mm256_storeu_ps(out + 8 * r, f);
    }
}

/* ---- shared-scale levels (twin: dq__shared_q__scalar): 8 lanes; AVX-512 builds use this one
 * (the sign-magnitude to signed conversion needs cvtepi32_ps at 512 bits) */
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
        up = stoch ? simde_mm256_cmp_ps(simde_mm256_cvtepi32_ps(simde_mm256_srli_epi32(dq__draw__avx2(idx, K0, K1, 0), 8)),
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

/* ---- the sparsifiers' scan (see the SSE2 section) */
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

/* ---- count-sketch hashes (twin: dq__sk_hash__scalar): 8 lanes of the same 32-bit arithmetic;
 * the multiply-shift takes the high halves of two 32x32->64 products (even and odd lanes) */
static inline void dq__sk_hash__avx2(uint32_t k0, uint32_t k1, uint32_t cols, uint32_t first, size_t cnt,
                                     uint32_t *out) {
    uint32_t k0h;
    const int hoisted = dq__draw_hoist(k0, first, cnt, &k0h);
    const simde__m256i vk0 = simde_mm256_set1_epi32((int32_t)k0h), vk1 = simde_mm256_set1_epi32((int32_t)k1);
    const simde__m256i vc = simde_mm256_set1_epi32((int32_t)cols), eight = simde_mm256_set1_epi32(8);
    simde__m256i idx =
        simde_mm256_add_epi32(simde_mm256_set1_epi32((int32_t)first), simde_mm256_loadu_si256((const simde__m256i *)dq__lane_ids));
    size_t t = 0;
    for (; t + 8u <= cnt; t += 8u) {
        simde__m256i x = dq__draw__avx2(idx, vk0, vk1, hoisted), lo, hi;
        lo = simde_mm256_srli_epi64(simde_mm256_mul_epu32(x, vc), 32); /* even lanes */
        hi = simde_mm256_mul_epu32(simde_mm256_srli_epi64(x, 32), vc); /* odd lanes, high half in place */
        lo = simde_mm256_blend_epi32(lo, hi, 0xAA);
        simde_mm256_storeu_si256((simde__m256i *)(void *)(out + t),
                                 simde_mm256_or_si256(lo, simde_mm256_slli_epi32(x, 31)));
        idx = simde_mm256_add_epi32(idx, eight);
    }
    dq__sk_hash__scalar(k0, k1, cols, first + (uint32_t)t, cnt - t, out + t);
}

/* ---- fp16 and bf16 conversions (see the SSE2 section) */
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

/* ---- 32-way rANS chunks (see the SSE2 section): the 8-lane decoder and encoder */
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

/* The rANS kernels read their tables with scalar loads, not gathers: on the Xeon (Cascade Lake)
 * the benchmarks ran on, one 8-lane vpgatherdd took about 23 cycles (microcode that mitigates
 * Gather Data Sampling makes gathers slow on most Intel server parts), eight loads and inserts
 * about 11, and the coders ran 2x (decode) to 3x (encode) faster without them (bench/rans32.c).
 * tab[slot] of 8 decoder lanes: */
static inline simde__m256i dq__r32_slots__avx2(const uint32_t *tab, simde__m256i slot) {
    uint32_t sl[8];
    simde_mm256_storeu_si256((simde__m256i *)sl, slot);
    return simde_mm256_setr_epi32((int32_t)tab[sl[0]], (int32_t)tab[sl[1]], (int32_t)tab[sl[2]], (int32_t)tab[sl[3]],
                                  (int32_t)tab[sl[4]], (int32_t)tab[sl[5]], (int32_t)tab[sl[6]], (int32_t)tab[sl[7]]);
}
/* 8 lanes of the decoder: as dq__r32_step__sse2, and the words of the lanes that
 * need one expanded from 8 consecutive words (16 bytes readable at p in the vector loop). */
static inline simde__m256i dq__r32_step__avx2(simde__m256i *xp, const uint32_t *tab, const uint8_t **pp) {
    const simde__m256i m12 = simde_mm256_set1_epi32(0xFFF);
    const simde__m256i sh3 = simde_mm256_setr_epi32(0, 3, 6, 9, 12, 15, 18, 21);
    simde__m256i x = *xp, e, f, need, wv, idx;
    const uint8_t *p = *pp;
    unsigned mask;
    e = dq__r32_slots__avx2(tab, simde_mm256_and_si256(x, m12));
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
/* The encoder constants of symbols a, b, c, d as four (rcp, info) pairs. */
static inline simde__m256i dq__r32_esym4__avx2(const dq__r32_esym *et, unsigned a, unsigned b, unsigned c, unsigned d) {
    uint64_t ea, eb, ec, ed;
    memcpy(&ea, et + a, 8);
    memcpy(&eb, et + b, 8);
    memcpy(&ec, et + c, 8);
    memcpy(&ed, et + d, 8);
    return simde_mm256_setr_epi64x((int64_t)ea, (int64_t)eb, (int64_t)ec, (int64_t)ed);
}
/* 8 lanes of the encoder on symbols sym[0..8): the words of the lanes with x >= f 2^20 go,
 * right-justified in lane order, to the 16 bytes below offset *w (the bytes below the new *w
 * are garbage that later words or the states overwrite); then x = x + q (M - f) + bias. */
static inline void dq__r32_put8__avx2(simde__m256i *xp, const uint8_t *sym, const dq__r32_esym *et, uint8_t *buf,
                                      size_t *w) {
    const simde__m256i sh3 = simde_mm256_setr_epi32(0, 3, 6, 9, 12, 15, 18, 21);
    simde__m256i x = *xp, rcp, info, f, big, wv, t, od, q;
    simde__m256 lo, hi;
    simde__m128i w16;
    unsigned mask;
    /* pairs of symbols 0 1 4 5 and 2 3 6 7: the in-lane shuffles of their even (rcp) and odd
     * (info) words give lanes 0..7 in order */
    lo = simde_mm256_castsi256_ps(dq__r32_esym4__avx2(et, sym[0], sym[1], sym[4], sym[5]));
    hi = simde_mm256_castsi256_ps(dq__r32_esym4__avx2(et, sym[2], sym[3], sym[6], sym[7]));
    rcp = simde_mm256_castps_si256(simde_mm256_shuffle_ps(lo, hi, 0x88));
    info = simde_mm256_castps_si256(simde_mm256_shuffle_ps(lo, hi, 0xDD));
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

/* ================================================================ F16C: fp16 conversions
 * vcvtph2ps / vcvtps2ph on 8 lanes (twins: dq__f16_to_f32__scalar, dq__f32_to_f16__scalar),
 * where the compiler targets F16C (-mf16c, -march=x86-64-v3 or newer; clang's -mavx512f implies
 * it, gcc 12's -mavx2 and -mavx512f do not). Preferred for fp16 over the integer kernels of any
 * width. SIMDe 0.7.4 has no 512-bit vcvtph2ps/vcvtps2ph wrappers, so AVX-512 builds use these. */
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
/* ================================================================ end of dqsgd_simd.h
 * Closes the C linkage block and the include guard that src/simd_setup.h opens. */
#ifdef __cplusplus
}
#endif

#endif /* DQ__SIMD_PART && !DQSGD_SIMD_H_INCLUDED */
