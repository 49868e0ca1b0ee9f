/* test_half.c - fp16 and bf16 (dqsgd.h).
 *
 * Conversions: all 65536 fp16 and bf16 patterns, and 3.7 million float patterns (every sign,
 * exponent and top-10 fraction bits, with the low bits at and around the rounding points) plus
 * random ones, against references computed here in double arithmetic; the public one-value
 * functions, the scalar kernels and every SIMD kernel of this build against them, bit for bit,
 * NaN included, with guard bytes and every tail length. dq_convert() over all dtype pairs,
 * in place, and its errors.
 * Typed codec: dq_encode_typed() against dq_encode() of the widened input, byte for byte, and the
 * residual against the rounded float residual, over schemes, widths, buckets (8, 512, 1000, 4096,
 * whole), rounding, norms, checksum, coders, lengths and dtypes; failure statuses equal to the
 * float path's with the residual untouched; dq_decode_typed() / dq_decode_add_typed() against
 * the rounded float decode, with the output untouched on every failure. */
#include "../dqsgd.h"
#include "harness.h"
#include "internals.h"

#include <float.h>

#define H_F16C DQT_HAS(F16C)

typedef void (*in_fn)(const void *, float *, size_t);
typedef void (*out_fn)(const float *, void *, size_t);
/* The conversion kernels by name: the scalar twins, every SIMD kernel of this build (the tables
 * of tests/internals.h, from dqsgd.h's kernel list: sse2, avx2, avx512, f16c) and the selected
 * ones; NULL where a family has no kernel of that name. hk_build fills it, main calls it first. */
typedef struct {
    const char *name;
    in_fn f16_in, bf16_in;
    out_fn f16_out, bf16_out;
} hkern;
static hkern HK[8];
static hkern *hk_row(const char *name) {
    hkern *k;
    for (k = HK; k->name; k++)
        if (strcmp(k->name, name) == 0) return k;
    if (k + 1 >= HK + sizeof HK / sizeof HK[0]) {
        fprintf(stderr, "test_half: more kernel names than HK holds\n");
        exit(1);
    }
    k->name = name;
    return k;
}
static void hk_build(void) {
    size_t i;
    hkern *k = hk_row("scalar");
    k->f16_in = dqt_scalar(f16_to_f32);
    k->bf16_in = dqt_scalar(bf16_to_f32);
    k->f16_out = dqt_scalar(f32_to_f16);
    k->bf16_out = dqt_scalar(f32_to_bf16);
    for (i = 0; DQT_F16IN_K[i].name; i++) hk_row(DQT_F16IN_K[i].name)->f16_in = DQT_F16IN_K[i].fn;
    for (i = 0; DQT_BF16IN_K[i].name; i++) hk_row(DQT_BF16IN_K[i].name)->bf16_in = DQT_BF16IN_K[i].fn;
    for (i = 0; DQT_F16OUT_K[i].name; i++) hk_row(DQT_F16OUT_K[i].name)->f16_out = DQT_F16OUT_K[i].fn;
    for (i = 0; DQT_BF16OUT_K[i].name; i++) hk_row(DQT_BF16OUT_K[i].name)->bf16_out = DQT_BF16OUT_K[i].fn;
    k = hk_row("selected");
    k->f16_in = dqt_k(f16_to_f32);
    k->bf16_in = dqt_k(bf16_to_f32);
    k->f16_out = dqt_k(f32_to_f16);
    k->bf16_out = dqt_k(f32_to_bf16);
}

static uint32_t fbits(float f) { return dq_t_fbits(f); }
static float bitsf(uint32_t u) { return dq_t_bitsf(u); }
static uint16_t ld16(const void *p, size_t i) {
    uint16_t h;
    memcpy(&h, (const uint8_t *)p + 2u * i, 2);
    return h;
}
static void st16(void *p, size_t i, uint16_t h) { memcpy((uint8_t *)p + 2u * i, &h, 2); }

/* ---------------------------------------------------------------- references (double arithmetic) */

/* Value of an fp16 pattern (finite or Inf) as a double, from its fields. */
static double ref_f16_value(unsigned h) {
    unsigned e = (h >> 10) & 31u, m = h & 1023u;
    double v = e == 0 ? ldexp((double)m, -24) : (e == 31 ? HUGE_VAL : ldexp((double)(1024u + m), (int)e - 25));
    return (h & 0x8000u) ? -v : v;
}
/* The documented NaN policy: quiet bit set, sign and payload kept. */
static uint32_t ref_f16_nan(unsigned h) { return ((uint32_t)(h & 0x8000u) << 16) | 0x7FC00000u | ((uint32_t)(h & 1023u) << 13); }
static uint32_t ref_f16_to_f32(unsigned h) {
    if ((h & 0x7C00u) == 0x7C00u && (h & 1023u)) return ref_f16_nan(h);
    return fbits((float)ref_f16_value(h)); /* exact: every half is a float */
}
static uint32_t ref_bf16_to_f32(unsigned h) {
    unsigned e = (h >> 7) & 255u, m = h & 127u;
    double v;
    if (e == 255 && m) return ((uint32_t)(h & 0x8000u) << 16) | 0x7FC00000u | ((uint32_t)m << 16);
    v = e == 0 ? ldexp((double)m, -133) : (e == 255 ? HUGE_VAL : ldexp((double)(128u + m), (int)e - 134));
    return fbits((float)((h & 0x8000u) ? -v : v));
}
/* Round a >= 0 to an integer multiple of 2^qexp, ties to even (in double: a / 2^qexp is exact). */
static double rne_multiple(double a, int qexp) {
    double k = ldexp(a, -qexp), fl = floor(k), d = k - fl;
    if (d > 0.5 || (d == 0.5 && fmod(fl, 2.0) != 0.0)) fl += 1.0;
    return ldexp(fl, qexp);
}
/* float -> fp16 by arithmetic: quantum 2^(e-11) for a normal result, 2^-24 below 2^-14;
 * overflow when the rounded value exceeds 65504. */
static unsigned ref_f32_to_f16(uint32_t u) {
    float f = bitsf(u);
    unsigned s = (u >> 16) & 0x8000u;
    double a = fabs((double)f), v;
    int e;
    if (f != f) return s | 0x7E00u | ((u >> 13) & 1023u); /* NaN policy */
    if (a == HUGE_VAL) return s | 0x7C00u;
    if (a == 0.0) return s;
    (void)frexp(a, &e); /* a = m 2^e, m in [0.5, 1) */
    v = rne_multiple(a, e - 11 > -24 ? e - 11 : -24);
    if (v > 65504.0) return s | 0x7C00u;
    if (v < ldexp(1.0, -14)) return s | (unsigned)ldexp(v, 24); /* subnormal (or zero) */
    (void)frexp(v, &e);                                         /* v = m 2^e */
    return s | (unsigned)(e + 14) << 10 | (unsigned)(ldexp(v, 11 - e) - 1024.0);
}
/* float -> bf16: quantum 2^(e-8), at least 2^-133; overflow when the rounded value reaches
 * 2^128 (the largest bf16 is (2 - 2^-7) 2^127). */
static unsigned ref_f32_to_bf16(uint32_t u) {
    float f = bitsf(u);
    unsigned s = (u >> 16) & 0x8000u;
    double a = fabs((double)f), v;
    int e;
    if (f != f) return s | 0x7FC0u | ((u >> 16) & 127u);
    if (a == HUGE_VAL) return s | 0x7F80u;
    if (a == 0.0) return s;
    (void)frexp(a, &e);
    v = rne_multiple(a, e - 8 > -133 ? e - 8 : -133);
    if (v >= ldexp(1.0, 128)) return s | 0x7F80u;
    if (v < ldexp(1.0, -126)) return s | (unsigned)ldexp(v, 133);
    (void)frexp(v, &e);
    return s | (unsigned)(e + 126) << 7 | (unsigned)(ldexp(v, 8 - e) - 128.0);
}

/* Float patterns: every sign, exponent and top-10 fraction bits (2^19) with the low 13 bits at
 * 0, 1, 0xFFF, 0x1000, 0x1001, 0x1FFF and one random value; then 2^20 random patterns. */
#define NPAT ((size_t)7 << 19)
#define NRND ((size_t)1 << 20)
static uint32_t *float_patterns(size_t *n) {
    static const uint32_t low[6] = {0u, 1u, 0x0FFFu, 0x1000u, 0x1001u, 0x1FFFu};
    uint32_t *p = (uint32_t *)xmalloc((NPAT + NRND) * 4u);
    dq_t_rng r = {12345u};
    size_t i, k = 0;
    for (i = 0; i < ((size_t)1 << 19); i++) {
        unsigned j;
        for (j = 0; j < 6; j++) p[k++] = (uint32_t)(i << 13) | low[j];
        p[k++] = (uint32_t)(i << 13) | (uint32_t)(dq_t_next(&r) & 0x1FFFu);
    }
    for (i = 0; i < NRND; i++) p[k++] = (uint32_t)(dq_t_next(&r) >> 32);
    *n = k;
    return p;
}
/* Patterns around the bf16 rounding points: every upper half with low 16 bits 0, 1, 0x7FFF,
 * 0x8000, 0x8001, 0xFFFF and one random value. */
#define NBPAT ((size_t)7 << 16)
static uint32_t *bf16_patterns(void) {
    static const uint32_t low[6] = {0u, 1u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu};
    uint32_t *p = (uint32_t *)xmalloc(NBPAT * 4u);
    dq_t_rng r = {777u};
    size_t i, k = 0;
    for (i = 0; i < 65536u; i++) {
        unsigned j;
        for (j = 0; j < 6; j++) p[k++] = (uint32_t)(i << 16) | low[j];
        p[k++] = (uint32_t)(i << 16) | (uint32_t)(dq_t_next(&r) & 0xFFFFu);
    }
    return p;
}

/* ---------------------------------------------------------------- conversions */

static void test_selection(void) {
    const hkern *k;
    printf("  [%s] simd %s, half kernels %s:", DQ_TEST_ISA, dq_simd_backend(), DQT_HALF_BACKEND);
    for (k = HK; k->name; k++) printf(" %s", k->name);
    printf("\n");
    /* the selected kernels (each family's first of the kernel list that is compiled in: test_simd)
     * are those the name promises */
    CHECK((H_F16C ? DQT_F16IN_K[0].name && strcmp(DQT_F16IN_K[0].name, "f16c") == 0 : 1));
    /* F16C kernels exactly when the x86 compiler targets F16C */
#if defined(DQSGD_SIMD_H_INCLUDED) && (defined(__x86_64__) || defined(__i386__)) && defined(__F16C__)
    CHECK(H_F16C == 1);
#else
    CHECK(H_F16C == 0);
#endif
    CHECK(dq_dtype_size(DQ_F32) == 4 && dq_dtype_size(DQ_F16) == 2 && dq_dtype_size(DQ_BF16) == 2);
    CHECK(dq_dtype_size((dq_dtype)3) == 0 && dq_dtype_size((dq_dtype)-1) == 0);
}

/* Spot values whose results are known independently of either reference. */
static void test_known_values(void) {
    CHECK(dq_f32_to_f16(1.0f) == 0x3C00u && dq_f32_to_f16(-2.0f) == 0xC000u && dq_f32_to_f16(65504.0f) == 0x7BFFu);
    CHECK(dq_f32_to_f16(65519.99f) == 0x7BFFu && dq_f32_to_f16(65520.0f) == 0x7C00u); /* overflow at the tie */
    CHECK(dq_f32_to_f16(5.96046448e-08f) == 0x0001u && dq_f32_to_f16(2.98023224e-08f) == 0x0000u); /* 2^-24; 2^-25 tie */
    CHECK(dq_f32_to_f16(nextafterf(2.98023224e-08f, 1.0f)) == 0x0001u);
    CHECK(dq_f32_to_f16(1.0f + 4.8828125e-04f) == 0x3C00u); /* 1 + 2^-11: tie to even (down) */
    CHECK(dq_f32_to_f16(1.0f + 3.0f * 4.8828125e-04f) == 0x3C02u); /* 1 + 3 2^-11: tie to even (up) */
    CHECK(dq_f32_to_f16(-0.0f) == 0x8000u && dq_f32_to_f16(HUGE_VALF) == 0x7C00u);
    CHECK(dq_f32_to_f16(bitsf(0x7F800001u)) == 0x7E00u && dq_f32_to_f16(bitsf(0xFFBFFFFFu)) == 0xFFFFu);
    CHECK(fbits(dq_f16_to_f32(0x0001u)) == 0x33800000u && fbits(dq_f16_to_f32(0x7C01u)) == 0x7FC02000u);
    CHECK(fbits(dq_f16_to_f32(0xFBFFu)) == fbits(-65504.0f) && fbits(dq_f16_to_f32(0x03FFu)) == 0x387FC000u);
    CHECK(dq_f32_to_bf16(1.0f) == 0x3F80u && dq_f32_to_bf16(bitsf(0x3F808000u)) == 0x3F80u);
    CHECK(dq_f32_to_bf16(bitsf(0x3F818000u)) == 0x3F82u && dq_f32_to_bf16(bitsf(0x3F808001u)) == 0x3F81u);
    CHECK(dq_f32_to_bf16(FLT_MAX) == 0x7F80u && dq_f32_to_bf16(bitsf(0x7F7F7FFFu)) == 0x7F7Fu);
    CHECK(dq_f32_to_bf16(bitsf(0x7F800001u)) == 0x7FC0u && dq_f32_to_bf16(bitsf(0x00008000u)) == 0x0000u);
    CHECK(fbits(dq_bf16_to_f32(0x7F81u)) == 0x7FC10000u && fbits(dq_bf16_to_f32(0xC0A0u)) == fbits(-5.0f));
}

static void test_half_to_float_exhaustive(void) {
    uint16_t *h = (uint16_t *)xmalloc(65536u * 2u);
    float *out = (float *)xmalloc((65536u + 8u) * 4u);
    size_t i, bad = 0;
    const hkern *k;
    for (i = 0; i < 65536u; i++) h[i] = (uint16_t)i;
    for (i = 0; i < 65536u; i++) {
        uint32_t want = ref_f16_to_f32((unsigned)i), wb = ref_bf16_to_f32((unsigned)i);
        bad += fbits(dq_f16_to_f32((uint16_t)i)) != want;
        bad += fbits(dq_bf16_to_f32((uint16_t)i)) != wb;
    }
    CHECKF(bad == 0, "%lu public conversions differ from the reference", (unsigned long)bad);
    /* scalar kernels, then each SIMD kernel, over all patterns at offsets 0..3 (tails of every length) */
    for (k = HK; k->name; k++) {
        const char *name = k->name;
        in_fn f16 = k->f16_in, bf16 = k->bf16_in;
        unsigned off;
        for (off = 0; off < 4; off++) {
            size_t cnt = 65536u - off, nb16 = 0, nbb = 0;
            if (f16) {
                out[cnt] = -1.0f;
                f16(h + off, out, cnt);
                for (i = 0; i < cnt; i++) nb16 += fbits(out[i]) != ref_f16_to_f32((unsigned)(i + off));
                CHECKF(nb16 == 0 && out[cnt] == -1.0f, "%s fp16 -> f32, offset %u: %lu wrong", name, off,
                       (unsigned long)nb16);
            }
            if (bf16) {
                out[cnt] = -1.0f;
                bf16(h + off, out, cnt);
                for (i = 0; i < cnt; i++) nbb += fbits(out[i]) != ref_bf16_to_f32((unsigned)(i + off));
                CHECKF(nbb == 0 && out[cnt] == -1.0f, "%s bf16 -> f32, offset %u: %lu wrong", name, off,
                       (unsigned long)nbb);
            }
        }
    }
    free(h);
    free(out);
}

/* out_fn over the patterns, compared with the expected 16-bit results; guard after the end. */
static size_t check_out(out_fn fn, const float *x, size_t n, const uint16_t *want, uint16_t *buf) {
    size_t i, bad = 0;
    st16(buf, n, 0xA5A5u);
    fn(x, buf, n);
    for (i = 0; i < n; i++) bad += ld16(buf, i) != want[i];
    return bad + (ld16(buf, n) != 0xA5A5u);
}

static void test_float_to_half(void) {
    size_t n = 0, i, bad16 = 0, badb = 0;
    uint32_t *pat = float_patterns(&n), *bp = bf16_patterns();
    float *x = (float *)xmalloc(n * 4u), *xb = (float *)xmalloc(NBPAT * 4u);
    uint16_t *w16 = (uint16_t *)xmalloc(n * 2u), *wb = (uint16_t *)xmalloc(n * 2u), *wbb = (uint16_t *)xmalloc(NBPAT * 2u);
    uint16_t *buf = (uint16_t *)xmalloc((n + 1u) * 2u);
    const hkern *k;
    for (i = 0; i < n; i++) {
        x[i] = bitsf(pat[i]);
        w16[i] = (uint16_t)ref_f32_to_f16(pat[i]);
        wb[i] = (uint16_t)ref_f32_to_bf16(pat[i]);
        bad16 += dq_f32_to_f16(x[i]) != w16[i];
        badb += dq_f32_to_bf16(x[i]) != wb[i];
    }
    for (i = 0; i < NBPAT; i++) {
        xb[i] = bitsf(bp[i]);
        wbb[i] = (uint16_t)ref_f32_to_bf16(bp[i]);
        badb += dq_f32_to_bf16(xb[i]) != wbb[i];
    }
    CHECKF(bad16 == 0 && badb == 0, "public: %lu fp16, %lu bf16 results differ from the reference",
           (unsigned long)bad16, (unsigned long)badb);
    for (k = HK; k->name; k++) {
        const char *name = k->name;
        out_fn f16 = k->f16_out, bf16 = k->bf16_out;
        if (f16) CHECKF(check_out(f16, x, n, w16, buf) == 0, "%s f32 -> fp16", name);
        if (f16) CHECKF(check_out(f16, x + 3, n - 3, w16 + 3, buf) == 0, "%s f32 -> fp16, offset 3", name);
        if (bf16) CHECKF(check_out(bf16, x, n, wb, buf) == 0, "%s f32 -> bf16", name);
        if (bf16) CHECKF(check_out(bf16, xb + 1, NBPAT - 1, wbb + 1, buf) == 0, "%s f32 -> bf16 (rounding points)", name);
    }
    free(pat);
    free(bp);
    free(x);
    free(xb);
    free(w16);
    free(wb);
    free(wbb);
    free(buf);
}

/* Every kernel at every length 0..80 and start offset 0..3 into exact-size heap blocks: the
 * results equal the scalar twin's and nothing outside [0, n) is written. */
static void test_kernel_lengths(void) {
    dq_t_rng r = {99u};
    const hkern *k;
    size_t n;
    for (n = 0; n <= 80; n++) {
        unsigned off;
        for (off = 0; off < 4; off++) {
            float *x = (float *)xmalloc((n + off) * 4u), *y = (float *)xmalloc((n + off + 2u) * 4u);
            float *ys = (float *)xmalloc((n + 1u) * 4u);
            uint16_t *h = (uint16_t *)xmalloc((n + off) * 2u), *o = (uint16_t *)xmalloc((n + off + 2u) * 2u);
            uint16_t *os = (uint16_t *)xmalloc((n + 1u) * 2u);
            size_t i;
            for (i = 0; i < n + off; i++) {
                uint32_t u = (uint32_t)(dq_t_next(&r) >> 32);
                x[i] = bitsf((i % 3u) ? u : (u & 0x8FFFFFFFu) | 0x38000000u); /* a third near the fp16 range */
                h[i] = (uint16_t)u;
            }
            for (k = HK + 1; k->name; k++) {
                unsigned which;
                for (which = 0; which < 4; which++) {
                    in_fn fin = which == 0 ? k->f16_in : (which == 1 ? k->bf16_in : NULL);
                    out_fn fout = which == 2 ? k->f16_out : (which == 3 ? k->bf16_out : NULL);
                    if (fin) {
                        (which == 0 ? dqt_scalar(f16_to_f32) : dqt_scalar(bf16_to_f32))(h + off, ys, n);
                        memset(y, 0x5A, (n + off + 2u) * 4u);
                        fin(h + off, y + 1, n);
                        CHECKF((n == 0 || memcmp(y + 1, ys, n * 4u) == 0) && fbits(y[0]) == 0x5A5A5A5Au &&
                                   fbits(y[n + 1]) == 0x5A5A5A5Au,
                               "%s in-kernel %u, n %lu off %u", k->name, which, (unsigned long)n, off);
                    }
                    if (fout) {
                        (which == 2 ? dqt_scalar(f32_to_f16) : dqt_scalar(f32_to_bf16))(x + off, os, n);
                        memset(o, 0x5A, (n + off + 2u) * 2u);
                        fout(x + off, o + 1, n);
                        CHECKF((n == 0 || memcmp(o + 1, os, n * 2u) == 0) && o[0] == 0x5A5Au && o[n + 1] == 0x5A5Au,
                               "%s out-kernel %u, n %lu off %u", k->name, which, (unsigned long)n, off);
                    }
                }
            }
            free(x);
            free(y);
            free(ys);
            free(h);
            free(o);
            free(os);
        }
    }
}

static void round_to(dq_dtype t, const float *f, size_t n, void *out) {
    size_t i;
    for (i = 0; i < n; i++) {
        if (t == DQ_F32)
            memcpy((uint8_t *)out + 4u * i, &f[i], 4);
        else
            st16(out, i, t == DQ_F16 ? dq_f32_to_f16(f[i]) : dq_f32_to_bf16(f[i]));
    }
}
static void widen(dq_dtype t, const void *in, size_t n, float *f) {
    size_t i;
    for (i = 0; i < n; i++) {
        if (t == DQ_F32)
            memcpy(&f[i], (const uint8_t *)in + 4u * i, 4);
        else
            f[i] = t == DQ_F16 ? dq_f16_to_f32(ld16(in, i)) : dq_bf16_to_f32(ld16(in, i));
    }
}

static void test_convert_api(void) {
    enum { N = 3000 };
    dq_t_rng r = {5u};
    float *f = (float *)xmalloc(N * 4u), *g = (float *)xmalloc(N * 4u);
    uint8_t *a = (uint8_t *)xmalloc(N * 4u), *b = (uint8_t *)xmalloc(N * 4u), *c = (uint8_t *)xmalloc(N * 4u);
    unsigned from, to;
    size_t i;
    for (i = 0; i < N; i++) {
        uint32_t u = (uint32_t)(dq_t_next(&r) >> 32);
        f[i] = (i % 4u) ? (float)(dq_t_gauss(&r) * 100.0) : bitsf(u);
    }
    for (from = 0; from < 3; from++) {
        for (to = 0; to < 3; to++) {
            round_to((dq_dtype)from, f, N, a); /* source: f rounded to `from` */
            widen((dq_dtype)from, a, N, g);
            round_to((dq_dtype)to, g, N, c); /* expected: round(widen(a)) */
            memset(b, 0xEE, N * 4u);
            CHECK(dq_convert((dq_dtype)from, a, N, (dq_dtype)to, b) == DQ_OK);
            CHECKF(memcmp(b, c, N * dq_dtype_size((dq_dtype)to)) == 0, "convert %u -> %u", from, to);
            CHECK(dq_dtype_size((dq_dtype)to) == 4 || b[N * dq_dtype_size((dq_dtype)to)] == 0xEE);
            if (dq_dtype_size((dq_dtype)to) <= dq_dtype_size((dq_dtype)from)) { /* in place */
                CHECK(dq_convert((dq_dtype)from, a, N, (dq_dtype)to, a) == DQ_OK);
                CHECKF(memcmp(a, c, N * dq_dtype_size((dq_dtype)to)) == 0, "in place %u -> %u", from, to);
            }
        }
    }
    memset(b, 0xEE, 8);
    CHECK(dq_convert(DQ_F32, f, 0, DQ_F16, b) == DQ_OK && b[0] == 0xEE);
    CHECK(dq_convert(DQ_F32, NULL, 4, DQ_F16, b) == DQ_ERR_NULL && dq_convert(DQ_F32, f, 4, DQ_F16, NULL) == DQ_ERR_NULL);
    CHECK(dq_convert((dq_dtype)3, f, 4, DQ_F16, b) == DQ_ERR_PARAM && dq_convert(DQ_F32, f, 4, (dq_dtype)9, b) == DQ_ERR_PARAM);
    CHECK(b[0] == 0xEE);
    free(f);
    free(g);
    free(a);
    free(b);
    free(c);
}

/* ---------------------------------------------------------------- typed encoding */

/* Room for any message of n elements, any scheme, width and coder. */
static size_t big_cap(size_t n) { return dq_encode_bound_coded(n, 8) + dq_encode_bound_coded(n, 16) + 64u; }

static const char *const dname[3] = {"f32", "f16", "bf16"};
static const float trunc_levels[7] = {0.05f, 0.1f, 0.2f, 0.35f, 0.5f, 0.75f, 1.0f}; /* 4-bit TRUNC_NU */

/* Input x (rounded to xt) and residual (rounded to rt): gaussian of scale sd with zeros and
 * repeated values mixed in. */
static void make_input(dq_t_rng *r, dq_dtype xt, dq_dtype rt, size_t n, double sd, void *x, void *res) {
    float *f = (float *)xmalloc(n * 4u + 4u);
    size_t i;
    memset(f, 0, n * 4u + 4u);
    for (i = 0; i < n; i++) {
        unsigned k = (unsigned)(dq_t_next(r) % 16u);
        f[i] = k == 0 ? 0.0f : (k == 1 && i ? f[i - 1] : (float)(dq_t_gauss(r) * sd));
    }
    round_to(xt, f, n, x);
    if (res) {
        for (i = 0; i < n; i++) f[i] = (float)(dq_t_gauss(r) * sd * 0.1);
        round_to(rt, f, n, res);
    }
    free(f);
}

typedef struct {
    dq_params p;
    size_t n;
    dq_dtype xt, rt;
    int has_res;
    double sd;
} enc_case;

static const char *case_str(const enc_case *c) {
    static char s[200];
    snprintf(s, sizeof s, "scheme %d bits %u bucket %u round %d norm %d crc %u coder %u n %lu x %s res %s",
             (int)c->p.scheme, c->p.bits, (unsigned)c->p.bucket, (int)c->p.rounding, (int)c->p.norm, c->p.checksum,
             c->p.coder, (unsigned long)c->n, dname[c->xt], c->has_res ? dname[c->rt] : "none");
    return s;
}

/* Two steps of error feedback through both paths; returns 1 if everything matched. */
static int check_encode_case(const enc_case *c, dq_t_rng *r) {
    size_t n = c->n, cap = big_cap(n), l1 = 0, l2 = 0, xs = dq_dtype_size(c->xt);
    size_t rs = dq_dtype_size(c->rt);
    uint8_t *x = (uint8_t *)xmalloc(n * xs), *res = c->has_res ? (uint8_t *)xmalloc(n * rs) : NULL;
    uint8_t *m1 = (uint8_t *)xmalloc(cap), *m2 = (uint8_t *)xmalloc(cap), *want = (uint8_t *)xmalloc(n * 4u);
    float *xf = (float *)xmalloc(n * 4u), *rf = (float *)xmalloc(n * 4u);
    unsigned step;
    int ok = 1;
    for (step = 0; step < 2 && ok; step++) {
        dq_params p = c->p;
        dq_status s1, s2;
        p.step = step;
        make_input(r, c->xt, c->rt, n, c->sd, x, step == 0 ? res : NULL);
        widen(c->xt, x, n, xf);
        if (res) widen(c->rt, res, n, rf);
        memset(m1, 0x11, cap);
        memset(m2, 0x22, cap);
        s1 = dq_encode(&p, xf, n, res ? rf : NULL, m1, cap, &l1);
        s2 = dq_encode_typed(&p, c->xt, x, n, c->rt, res, m2, cap, &l2);
        if (s1 != s2 || (s1 == DQ_OK && (l1 != l2 || memcmp(m1, m2, l1) != 0))) {
            CHECKF(0, "%s: step %u status %d/%d len %lu/%lu", case_str(c), step, (int)s1, (int)s2, (unsigned long)l1,
                   (unsigned long)l2);
            ok = 0;
        }
        if (ok && s1 == DQ_OK && res) {
            round_to(c->rt, rf, n, want);
            if (memcmp(want, res, n * rs) != 0) {
                CHECKF(0, "%s: step %u residual differs", case_str(c), step);
                ok = 0;
            }
        }
        if (s1 != DQ_OK) break;
    }
    free(x);
    free(res);
    free(m1);
    free(m2);
    free(want);
    free(xf);
    free(rf);
    return ok;
}

static dq_params base_params(dq_scheme sc, unsigned bits, uint32_t bucket) {
    dq_params p;
    memset(&p, 0, sizeof p);
    p.scheme = sc;
    p.bits = bits;
    p.bucket = bucket;
    p.seed = 0xC0FFEEu;
    p.stream = 3;
    if (sc == DQ_SCHEME_TRUNC || sc == DQ_SCHEME_TRUNC_NU) p.alpha = 1.5f;
    if (sc == DQ_SCHEME_TRUNC_NU) p.levels = trunc_levels;
    return p;
}

/* A sparse scheme's params: k kept (top-k, random-k) or a threshold near the 1 - q quantile of
 * |x| for a gaussian of scale sd. */
static dq_params sparse_params(dq_t_rng *r, dq_scheme sc, size_t n, double sd) {
    dq_params p = base_params(sc, 0, 0);
    size_t k = 1u + (size_t)(dq_t_next(r) % (n < 300u ? n : 300u));
    if (dq_t_next(r) % 8u == 0) k = n; /* keep everything: the boundary holds every zero */
    if (sc == DQ_SCHEME_THRESHOLD)
        p.threshold = (float)(sd * (0.5 + (double)(dq_t_next(r) % 5u) * 0.5));
    else
        p.k = k;
    if (sc == DQ_SCHEME_RANDK)
        p.unbiased = (unsigned)(dq_t_next(r) % 2u);
    else
        p.index_coder = (unsigned)(dq_t_next(r) % 4u);
    p.checksum = (unsigned)(dq_t_next(r) % 2u);
    return p;
}

/* A grid over QSGD, then random cases over every level and sparse scheme. */
static void test_encode_equiv(void) {
    static const uint32_t buckets[5] = {8u, 512u, 1000u, 4096u, DQ_BUCKET_WHOLE};
    static const size_t lens[8] = {1u, 7u, 256u, 1000u, 2048u, 2049u, 5000u, 9001u};
    dq_t_rng r = {2024u};
    size_t cases = 0, good = 0;
    unsigned bits, bi, li, t;
    /* grid: QSGD at every width 1..8, 16, over buckets and lengths, fp16 and bf16 with residuals */
    for (bits = 1; bits <= 9; bits++) {
        for (bi = 0; bi < 5; bi++) {
            for (li = 0; li < 8; li += (bits % 2u) ? 1u : 2u) {
                enc_case c;
                c.p = base_params(DQ_SCHEME_QSGD, bits == 9 ? 16u : bits, buckets[bi]);
                c.p.rounding = (bits + li) % 3u == 0 ? DQ_ROUND_NEAREST : DQ_ROUND_STOCHASTIC;
                c.p.norm = (bits + bi) % 2u ? DQ_NORM_MAX : DQ_NORM_L2;
                c.p.checksum = (li + bi) % 2u;
                c.n = lens[li];
                c.xt = (li + bits) % 2u ? DQ_F16 : DQ_BF16;
                c.rt = (bi + bits) % 3u == 0 ? DQ_F32 : ((bi + bits) % 3u == 1 ? DQ_F16 : DQ_BF16);
                c.has_res = (bits + li + bi) % 4u != 0;
                c.sd = c.xt == DQ_F16 ? 1.0 : 1e3;
                cases++;
                good += (size_t)check_encode_case(&c, &r);
            }
        }
    }
    /* random: every level scheme, coders, dtypes */
    for (t = 0; t < 260; t++) {
        static const dq_scheme sch[7] = {DQ_SCHEME_QSGD,     DQ_SCHEME_NUQSGD, DQ_SCHEME_NATURAL,   DQ_SCHEME_TERNGRAD,
                                         DQ_SCHEME_TWOMEANS, DQ_SCHEME_TRUNC,  DQ_SCHEME_TRUNC_NU};
        enc_case c;
        dq_scheme sc = sch[dq_t_next(&r) % 7u];
        unsigned b = sc == DQ_SCHEME_TERNGRAD ? 2u : (sc == DQ_SCHEME_TRUNC_NU ? 4u : 2u + (unsigned)(dq_t_next(&r) % 7u));
        if (sc == DQ_SCHEME_TWOMEANS) b = 1u;
        c.p = base_params(sc, b, buckets[dq_t_next(&r) % 5u]);
        c.p.rounding = dq_t_next(&r) % 3u == 0 ? DQ_ROUND_NEAREST : DQ_ROUND_STOCHASTIC;
        if (sc == DQ_SCHEME_QSGD || sc == DQ_SCHEME_NUQSGD) c.p.norm = dq_t_next(&r) % 2u ? DQ_NORM_MAX : DQ_NORM_L2;
        c.p.checksum = (unsigned)(dq_t_next(&r) % 2u);
        c.p.coder = (unsigned)(dq_t_next(&r) % 5u); /* 2: the old rANS id, which asks for rANS */
        if (c.p.coder == 4u) c.p.coder = DQ_CODER_AUTO;
        if ((c.p.coder == DQ_CODER_RANS8 || c.p.coder == DQ_CODER_RANS) && c.p.bits > 8u) c.p.coder = DQ_CODER_ELIAS;
        c.n = lens[dq_t_next(&r) % 8u];
        c.xt = (dq_dtype)(dq_t_next(&r) % 3u);
        c.rt = (dq_dtype)(dq_t_next(&r) % 3u);
        c.has_res = dq_t_next(&r) % 4u != 0;
        if (c.xt == DQ_F32 && (!c.has_res || c.rt == DQ_F32)) c.xt = DQ_F16; /* the typed path proper */
        c.sd = c.xt == DQ_F16 ? 2.0 : 50.0;
        cases++;
        good += (size_t)check_encode_case(&c, &r);
    }
    /* random: the sparse schemes, over chunk boundaries (2048) and ties */
    for (t = 0; t < 240; t++) {
        static const dq_scheme sch[3] = {DQ_SCHEME_TOPK, DQ_SCHEME_RANDK, DQ_SCHEME_THRESHOLD};
        enc_case c;
        c.n = lens[dq_t_next(&r) % 8u];
        c.xt = (dq_dtype)(dq_t_next(&r) % 3u);
        c.rt = (dq_dtype)(dq_t_next(&r) % 3u);
        c.has_res = dq_t_next(&r) % 4u != 0;
        if (c.xt == DQ_F32 && (!c.has_res || c.rt == DQ_F32)) c.xt = DQ_BF16;
        c.sd = c.xt == DQ_F16 ? 2.0 : 50.0;
        c.p = sparse_params(&r, sch[t % 3u], c.n, c.sd);
        cases++;
        good += (size_t)check_encode_case(&c, &r);
    }
    if (dq_t_verbose()) printf("  encode: %lu of %lu cases identical\n", (unsigned long)good, (unsigned long)cases);
    CHECK(good == cases);
}

/* Long vectors: many chunks, whole-vector and 512 buckets. */
static void test_encode_long(void) {
    dq_t_rng r = {31u};
    static const uint32_t buckets[3] = {512u, 5000u, DQ_BUCKET_WHOLE};
    static const dq_scheme sparse[3] = {DQ_SCHEME_TOPK, DQ_SCHEME_RANDK, DQ_SCHEME_THRESHOLD};
    unsigned i;
    for (i = 0; i < 6; i++) { /* QSGD; then sparse: sampled brackets (n >= 8 x 2048), many chunks */
        enc_case c;
        if (i < 3) {
            c.p = base_params(DQ_SCHEME_QSGD, 4, buckets[i]);
            c.n = ((size_t)1 << 19) + 77u;
        } else {
            c.p = base_params(sparse[i - 3], 0, 0);
            c.p.k = i == 5 ? 0u : 5000u;
            c.p.threshold = i == 5 ? 2.5f : 0.0f;
            c.n = ((size_t)1 << 18) + 77u;
        }
        c.xt = i % 3u == 1 ? DQ_BF16 : DQ_F16;
        c.rt = i % 3u == 2 ? DQ_BF16 : DQ_F16;
        c.has_res = 1;
        c.sd = 1.0;
        CHECK(check_encode_case(&c, &r));
    }
}

/* The statistics of a bucket carried across chunks equal the one-pass statistics exactly (the
 * double sums, not only the float scale they round to): data over 60 binades so that the
 * association order shows, cut into pieces at multiples of 8 that do not start on lane 0. */
static void test_stats_carry(void) {
    static const unsigned whats[5] = {DQT_ST(SQ), DQT_ST(ABS), DQT_ST(MAX), DQT_ST(SQ) | DQT_ST(MAX),
                                      DQT_ST(SQ) | DQT_ST(ABS) | DQT_ST(MAX)};
    dq_t_rng r = {606u};
    unsigned t;
    for (t = 0; t < 200; t++) {
        size_t len = 8u * (1u + (size_t)(dq_t_next(&r) % 700u)), pos = 0, i;
        float *x = (float *)xmalloc(len * 4u), *e = (float *)xmalloc(len * 4u);
        int with_e = (int)(t % 2u);
        unsigned what = whats[(t / 2u) % 5u];
        dqt_stats whole, st;
        dqt_hstat acc;
        for (i = 0; i < len; i++) {
            x[i] = (float)ldexp(dq_t_gauss(&r), (int)(dq_t_next(&r) % 60u) - 30);
            e[i] = (float)ldexp(dq_t_gauss(&r), (int)(dq_t_next(&r) % 40u) - 30);
        }
        memset(&acc, 0, sizeof acc);
        while (pos < len) {
            size_t cnt = 8u * (1u + (size_t)(dq_t_next(&r) % 40u));
            if (cnt > len - pos) cnt = len - pos;
            dqt_hstat_add(&acc, what, x + pos, with_e ? e + pos : NULL, pos, cnt);
            pos += cnt;
        }
        dqt_scalar(stats)(x, with_e ? e : NULL, len, DQT_ST(SQ) | DQT_ST(ABS) | DQT_ST(MAX), &whole);
        st.sumsq = dqt_lanes_sum(acc.sq);
        st.sumabs = dqt_lanes_sum(acc.ab);
        if (what & DQT_ST(MAX)) CHECKF(acc.mx == whole.maxbits, "case %u: max", t);
        if (what & DQT_ST(SQ))
            CHECKF(memcmp(&st.sumsq, &whole.sumsq, sizeof(double)) == 0, "case %u (len %lu): sumsq %.17g vs %.17g", t,
                   (unsigned long)len, st.sumsq, whole.sumsq);
        if (what & DQT_ST(ABS))
            CHECKF(memcmp(&st.sumabs, &whole.sumabs, sizeof(double)) == 0, "case %u (len %lu): sumabs %.17g vs %.17g",
                   t, (unsigned long)len, st.sumabs, whole.sumabs);
        free(x);
        free(e);
    }
}

/* The carried-statistics kernels against their scalar twin: every length 0..100 and longer
 * ones, each `what`, lanes already holding sums, NaN and Inf among the values; only the
 * requested statistics may change. */
typedef void (*hacc_fn)(const float *, const float *, size_t, unsigned, double *, double *, uint32_t *);
/* Lanes equal bit for bit, or both NaN: which of two NaNs an add propagates depends on the
 * operand order the compiler picks for the scalar twin (a NaN sum only says "non-finite"). */
static int lanes_same(const double *a, const double *b) {
    unsigned l;
    for (l = 0; l < DQT_SLANES; l++)
        if (memcmp(&a[l], &b[l], sizeof(double)) != 0 && !(a[l] != a[l] && b[l] != b[l])) return 0;
    return 1;
}
static void test_stats_kernels(void) {
    static const struct {
        const char *name;
        hacc_fn fn;
    } K[] = {DQT_KERNELS(hstat_acc){"selected", dqt_k(hstat_acc)}};
    dq_t_rng r = {909u};
    size_t n, i, k;
    for (n = 0; n < 140; n += (n < 100 ? 1u : 13u)) {
        float *x = (float *)xmalloc(n * 4u + 4u), *e = (float *)xmalloc(n * 4u + 4u);
        unsigned what;
        for (i = 0; i < n; i++) {
            unsigned c = (unsigned)(dq_t_next(&r) % 50u);
            x[i] = c == 0 ? bitsf(0x7F800000u | (uint32_t)(dq_t_next(&r) & 0x807FFFFFu)) /* Inf, NaN */
                          : (float)ldexp(dq_t_gauss(&r), (int)(dq_t_next(&r) % 50u) - 25);
            e[i] = (float)dq_t_gauss(&r);
        }
        for (what = 1; what < 8; what++) {
            for (k = 0; k < sizeof K / sizeof K[0]; k++) {
                double s0[DQT_SLANES], a0[DQT_SLANES], s1[DQT_SLANES], a1[DQT_SLANES];
                uint32_t m0 = (uint32_t)(dq_t_next(&r) >> 40), m1 = m0;
                unsigned l;
                int with_e = (int)((n + what) % 2u);
                for (l = 0; l < DQT_SLANES; l++) s0[l] = s1[l] = dq_t_unif(&r), a0[l] = a1[l] = dq_t_unif(&r);
                dqt_scalar(hstat_acc)(x, with_e ? e : NULL, n, what, s0, a0, &m0);
                K[k].fn(x, with_e ? e : NULL, n, what, s1, a1, &m1);
                CHECKF(lanes_same(s0, s1) && lanes_same(a0, a1) && m0 == m1,
                       "%s n %lu what %u", K[k].name, (unsigned long)n, what);
            }
        }
        free(x);
        free(e);
    }
}

/* Non-finite input or residual, and scale overflow: the float path's status, residual untouched. */
static void test_encode_failures(void) {
    static const uint32_t buckets[3] = {512u, 1000u, DQ_BUCKET_WHOLE};
    static const size_t where[4] = {0u, 700u, 4500u, 8999u};
    dq_t_rng r = {8u};
    const size_t n = 9000u;
    size_t cap = big_cap(n), l1 = 7, l2 = 7;
    uint8_t *m1 = (uint8_t *)xmalloc(cap), *m2 = (uint8_t *)xmalloc(cap);
    uint16_t *x = (uint16_t *)xmalloc(n * 2u), *res = (uint16_t *)xmalloc(n * 2u), *keep = (uint16_t *)xmalloc(n * 2u);
    float *xf = (float *)xmalloc(n * 4u), *rf = (float *)xmalloc(n * 4u);
    unsigned bi, wi, kind, coder;
    for (coder = 0; coder < 2; coder++) {
        for (bi = 0; bi < 3; bi++) {
            for (wi = 0; wi < 4; wi++) {
                for (kind = 0; kind < 6; kind++) {
                    /* 0: fp16 Inf in x, 1: fp16 NaN in residual, 2: bf16 x + r overflows to Inf,
                     * 3: bf16 scale above 2^126, 4: bf16 NaN in x (max norm), 5: fp16 -Inf, no residual */
                    dq_dtype t = (kind == 2 || kind == 3 || kind == 4) ? DQ_BF16 : DQ_F16;
                    dq_params p = base_params(DQ_SCHEME_QSGD, 4, buckets[bi]);
                    dq_status s1, s2;
                    int with_res = kind != 5;
                    size_t j, w = where[wi];
                    if (kind == 4) p.norm = DQ_NORM_MAX;
                    if (coder) p.coder = DQ_CODER_AUTO;
                    make_input(&r, t, t, n, 1.0, x, res);
                    if (kind == 0) x[w] = 0x7C00u;
                    if (kind == 1) res[w] = 0xFE01u;
                    if (kind == 2) x[w] = res[w] = 0x7F7Fu;
                    if (kind == 3)
                        for (j = w - w % 512u; j < w - w % 512u + 512u && j < n; j++) x[j] = 0x7E96u; /* 1e38 */
                    if (kind == 4) x[w] = 0x7FC1u;
                    if (kind == 5) x[w] = 0xFC00u;
                    widen(t, x, n, xf);
                    widen(t, res, n, rf);
                    memcpy(keep, res, n * 2u);
                    s1 = dq_encode(&p, xf, n, with_res ? rf : NULL, m1, cap, &l1);
                    s2 = dq_encode_typed(&p, t, x, n, t, with_res ? res : NULL, m2, cap, &l2);
                    CHECKF(s1 != DQ_OK && s1 == s2, "kind %u bucket %u at %lu: %d / %d", kind, (unsigned)buckets[bi],
                           (unsigned long)w, (int)s1, (int)s2);
                    CHECK(memcmp(keep, res, n * 2u) == 0 && l2 == 7);
                }
            }
        }
    }
    free(m1);
    free(m2);
    free(x);
    free(res);
    free(keep);
    free(xf);
    free(rf);
}

static void test_encode_errors(void) {
    const size_t n = 600u;
    dq_params p = base_params(DQ_SCHEME_QSGD, 4, 512u), q;
    uint16_t x[600], res[600], keep[600];
    float xf[600], rf[600];
    uint8_t m1[1200], m2[1200];
    size_t len = 5, l1 = 0, size = 0;
    dq_t_rng r = {1u};
    make_input(&r, DQ_F16, DQ_F16, n, 1.0, x, res);
    widen(DQ_F16, x, n, xf);
    widen(DQ_F16, res, n, rf);
    memcpy(keep, res, sizeof res);
    CHECK(dq_encode_typed(&p, DQ_F16, x, n, DQ_F16, res, m2, sizeof m2, NULL) == DQ_ERR_NULL);
    CHECK(dq_encode_typed(NULL, DQ_F16, x, n, DQ_F16, res, m2, sizeof m2, &len) == DQ_ERR_NULL);
    CHECK(dq_encode_typed(&p, DQ_F16, NULL, n, DQ_F16, res, m2, sizeof m2, &len) == DQ_ERR_NULL);
    CHECK(dq_encode_typed(&p, DQ_F16, x, n, DQ_F16, res, NULL, sizeof m2, &len) == DQ_ERR_NULL);
    CHECK(dq_encode_typed(&p, (dq_dtype)3, x, n, DQ_F16, res, m2, sizeof m2, &len) == DQ_ERR_PARAM);
    CHECK(dq_encode_typed(&p, DQ_F16, x, n, (dq_dtype)3, NULL, m2, sizeof m2, &len) == DQ_ERR_PARAM);
    CHECK(dq_encode_typed(&p, DQ_F16, x, 0, DQ_F16, res, m2, sizeof m2, &len) == DQ_ERR_EMPTY);
    q = p;
    q.bits = 17;
    CHECK(dq_encode_typed(&q, DQ_F16, x, n, DQ_F16, res, m2, sizeof m2, &len) == dq_encode(&q, xf, n, rf, m1, sizeof m1, &l1));
    q = p;
    q.bucket = 12;
    CHECK(dq_encode_typed(&q, DQ_BF16, x, n, DQ_F16, res, m2, sizeof m2, &len) == DQ_ERR_PARAM);
    CHECK(dq_encode_capacity(&p, n, &size) == DQ_OK);
    CHECK(dq_encode_typed(&p, DQ_F16, x, n, DQ_F16, res, m2, size - 1u, &len) == DQ_ERR_DST_TOO_SMALL);
    q = p;
    q.coder = DQ_CODER_RANS; /* a forced coder needs dq_encode_bound_coded() */
    CHECK(dq_encode_typed(&q, DQ_F16, x, n, DQ_F16, res, m2, size, &len) == DQ_ERR_DST_TOO_SMALL);
    CHECK(dq_encode(&q, xf, n, rf, m1, size, &l1) == DQ_ERR_DST_TOO_SMALL);
    q = base_params(DQ_SCHEME_TOPK, 17, 0); /* sparse schemes: the float path's checks and statuses */
    q.k = 10; /* (widths 1..16 quantize the values since 0.11: 17 is no width) */
    CHECK(dq_encode_typed(&q, DQ_F16, x, n, DQ_F16, res, m2, sizeof m2, &len) == DQ_ERR_BITS);
    q.bits = 0;
    CHECK(dq_encode_capacity(&q, n, &size) == DQ_OK);
    CHECK(dq_encode_typed(&q, DQ_F16, x, n, DQ_F16, res, m2, size - 1u, &len) == DQ_ERR_DST_TOO_SMALL);
    x[n / 2] = 0x7C00u; /* +Inf: found by the first pass, before the residual is written */
    CHECK(dq_encode_typed(&q, DQ_F16, x, n, DQ_F16, res, m2, sizeof m2, &len) == DQ_ERR_NONFINITE);
    q.scheme = DQ_SCHEME_RANDK;
    CHECK(dq_encode_typed(&q, DQ_F16, x, n, DQ_BF16, res, m2, sizeof m2, &len) == DQ_ERR_NONFINITE);
    CHECK(memcmp(keep, res, sizeof res) == 0 && len == 5);
    make_input(&r, DQ_F16, DQ_F16, n, 1.0, x, NULL);
    CHECK(dq_encode_capacity(&p, n, &size) == DQ_OK);
    /* exactly the size is enough */
    CHECK(dq_encode_typed(&p, DQ_F16, x, n, DQ_F16, res, m2, size, &len) == DQ_OK && len == size);
    /* float x with float or no residual is dq_encode() itself */
    CHECK(dq_encode_typed(&p, DQ_F32, xf, n, DQ_F32, rf, m2, sizeof m2, &len) == DQ_OK);
}

/* ---------------------------------------------------------------- typed decoding */

/* out = round(dq_decode), acc = round(dq_decode_add(widen(acc))) for each dtype and weights. */
static int check_decode(const uint8_t *msg, size_t len, size_t n, dq_t_rng *r, const char *what) {
    float *f = (float *)xmalloc(n * 4u), *acc = (float *)xmalloc(n * 4u);
    uint8_t *want = (uint8_t *)xmalloc(n * 4u + 8u), *got = (uint8_t *)xmalloc(n * 4u + 8u), *a0 = (uint8_t *)xmalloc(n * 4u);
    static const float weights[3] = {1.0f, 0.25f, -0.7f};
    int ok = 1;
    unsigned t, wi;
    dq_status s1 = dq_decode(msg, len, f, n), s2;
    for (t = 0; t < 3; t++) {
        size_t es = dq_dtype_size((dq_dtype)t);
        memset(got, 0xCD, n * es + 8u);
        s2 = dq_decode_typed(msg, len, (dq_dtype)t, got, n);
        round_to((dq_dtype)t, f, n, want);
        if (s1 != s2 || (s1 == DQ_OK && memcmp(want, got, n * es) != 0) || got[n * es] != 0xCD) {
            CHECKF(0, "%s: decode to %s: status %d/%d", what, dname[t], (int)s1, (int)s2);
            ok = 0;
        }
        for (wi = 0; wi < 3; wi++) {
            size_t i;
            for (i = 0; i < n; i++) acc[i] = (float)dq_t_gauss(r);
            round_to((dq_dtype)t, acc, n, a0);
            widen((dq_dtype)t, a0, n, acc);
            memcpy(got, a0, n * es);
            s1 = dq_decode_add(msg, len, weights[wi], acc, n);
            s2 = dq_decode_add_typed(msg, len, weights[wi], (dq_dtype)t, got, n);
            round_to((dq_dtype)t, acc, n, want);
            if (s1 != s2 || (s1 == DQ_OK && memcmp(want, got, n * es) != 0)) {
                CHECKF(0, "%s: decode_add to %s, weight %g: status %d/%d", what, dname[t], (double)weights[wi], (int)s1,
                       (int)s2);
                ok = 0;
            }
        }
    }
    free(f);
    free(acc);
    free(want);
    free(got);
    free(a0);
    return ok;
}

static void test_decode_equiv(void) {
    static const uint32_t buckets[5] = {8u, 512u, 1000u, 4096u, DQ_BUCKET_WHOLE};
    static const size_t lens[6] = {1u, 255u, 2048u, 2300u, 5000u, 9001u};
    static const dq_scheme sch[6] = {DQ_SCHEME_QSGD, DQ_SCHEME_NUQSGD, DQ_SCHEME_NATURAL,
                                     DQ_SCHEME_TERNGRAD, DQ_SCHEME_TRUNC, DQ_SCHEME_TRUNC_NU};
    dq_t_rng r = {4242u};
    unsigned t;
    for (t = 0; t < 150; t++) {
        dq_scheme sc = t < 60 ? DQ_SCHEME_QSGD : sch[dq_t_next(&r) % 6u];
        unsigned b = sc == DQ_SCHEME_TERNGRAD ? 2u : (sc == DQ_SCHEME_TRUNC_NU ? 4u : 1u + (unsigned)(dq_t_next(&r) % 8u));
        dq_params p;
        size_t n = lens[dq_t_next(&r) % 6u], cap, len = 0;
        float *x;
        uint8_t *msg;
        char what[160];
        if (sc != DQ_SCHEME_QSGD && b < 2u) b = 2u;
        if (t % 20u == 19u) {
            b = 16u;
            sc = DQ_SCHEME_QSGD;
        }
        p = base_params(sc, b, buckets[dq_t_next(&r) % 5u]);
        p.rounding = t % 3u ? DQ_ROUND_STOCHASTIC : DQ_ROUND_NEAREST;
        p.checksum = (t / 3u) % 2u;
        p.coder = (unsigned)(dq_t_next(&r) % 5u); /* 2: the old rANS id, which asks for rANS */
        if (p.coder == 4u) p.coder = DQ_CODER_AUTO;
        if (((p.coder == DQ_CODER_RANS8 || p.coder == DQ_CODER_RANS) && b > 8u) || (p.coder == DQ_CODER_ELIAS && b == 1u))
            p.coder = DQ_CODER_AUTO;
        cap = big_cap(n);
        x = (float *)xmalloc(n * 4u);
        msg = (uint8_t *)xmalloc(cap);
        make_input(&r, DQ_F32, DQ_F32, n, 3.0, x, NULL);
        snprintf(what, sizeof what, "scheme %d bits %u bucket %u coder %u crc %u n %lu", (int)sc, b, (unsigned)p.bucket,
                 p.coder, p.checksum, (unsigned long)n);
        {
            dq_status se = dq_encode(&p, x, n, NULL, msg, cap, &len);
            CHECKF(se == DQ_OK, "%s: %s", what, dq_strerror(se));
        }
        CHECK(check_decode(msg, len, n, &r, what));
        free(x);
        free(msg);
    }
    for (t = 0; t < 60; t++) { /* sparse messages */
        static const dq_scheme sp[3] = {DQ_SCHEME_TOPK, DQ_SCHEME_RANDK, DQ_SCHEME_THRESHOLD};
        size_t n = lens[dq_t_next(&r) % 6u], cap = big_cap(n), len = 0;
        dq_params p = sparse_params(&r, sp[t % 3u], n, 3.0);
        float *x = (float *)xmalloc(n * 4u);
        uint8_t *msg = (uint8_t *)xmalloc(cap);
        char what[160];
        make_input(&r, DQ_F32, DQ_F32, n, 3.0, x, NULL);
        snprintf(what, sizeof what, "sparse scheme %d k %lu n %lu", (int)p.scheme, (unsigned long)p.k, (unsigned long)n);
        CHECK(dq_encode(&p, x, n, NULL, msg, cap, &len) == DQ_OK);
        CHECK(check_decode(msg, len, n, &r, what));
        free(x);
        free(msg);
    }
    { /* a count-sketch message: its table as the vector */
        float tab[3 * 700], x[5000];
        dq_sketch s;
        uint8_t msg[3 * 700 * 4 + 256];
        size_t len = 0;
        make_input(&r, DQ_F32, DQ_F32, 5000u, 3.0, x, NULL);
        CHECK(dq_sketch_init(&s, 3, 700, 5000u, 99u, tab, 3u * 700u) == DQ_OK);
        CHECK(dq_sketch_add_dense(&s, 0, x, 5000u) == DQ_OK);
        CHECK(dq_sketch_encode(&s, 1, msg, sizeof msg, &len) == DQ_OK);
        CHECK(check_decode(msg, len, 3u * 700u, &r, "sketch"));
    }
}

/* Every failure leaves out / acc untouched, with the float path's status. */
static void test_decode_failures(void) {
    const size_t n = 5000u;
    dq_t_rng r = {77u};
    float *x = (float *)xmalloc(n * 4u), *f = (float *)xmalloc(n * 4u);
    size_t cap = big_cap(n), len = 0, i;
    uint8_t *msg = (uint8_t *)xmalloc(cap), *bad = (uint8_t *)xmalloc(cap);
    uint16_t *out = (uint16_t *)xmalloc(n * 2u), *keep = (uint16_t *)xmalloc(n * 2u);
    unsigned coder, crc, mut;
    make_input(&r, DQ_F32, DQ_F32, n, 1.0, x, NULL);
    for (i = 0; i < n; i++) out[i] = (uint16_t)(dq_t_next(&r) >> 48);
    memcpy(keep, out, n * 2u);
    for (coder = 0; coder < 3; coder++) {
        for (crc = 0; crc < 2; crc++) {
            dq_params p = base_params(DQ_SCHEME_QSGD, 4, 1000u);
            p.coder = coder;
            p.checksum = crc;
            CHECK(dq_encode(&p, x, n, NULL, msg, cap, &len) == DQ_OK);
            for (mut = 0; mut < 40; mut++) {
                dq_status s1, s2, s3;
                size_t at;
                memcpy(bad, msg, len);
                if (mut == 0) { /* the last bucket's scale: NaN */
                    at = (coder ? DQ_HEADER_SIZE + 8u : DQ_HEADER_SIZE) + 4u * 4u;
                    bad[at] = bad[at + 1] = bad[at + 2] = bad[at + 3] = 0xFF;
                } else if (mut == 1) { /* the tail padding of a fixed payload, or a byte of a coded one */
                    at = len - 1u - (crc ? 4u : 0u);
                    bad[at] ^= 0x80u;
                } else { /* a random byte after the header */
                    at = DQ_HEADER_SIZE + (size_t)(dq_t_next(&r) % (len - DQ_HEADER_SIZE));
                    bad[at] ^= (uint8_t)(1u + dq_t_next(&r) % 255u);
                }
                s1 = dq_decode(bad, len, f, n);
                s2 = dq_decode_typed(bad, len, DQ_F16, out, n);
                s3 = dq_decode_add_typed(bad, len, 0.5f, DQ_BF16, out, n);
                CHECKF(s1 == s2 && s1 == s3, "coder %u crc %u mutation %u: %d %d %d", coder, crc, mut, (int)s1, (int)s2,
                       (int)s3);
                if (s2 != DQ_OK) CHECKF(memcmp(out, keep, n * 2u) == 0, "coder %u crc %u mutation %u: out written", coder,
                                        crc, mut);
                if (s2 == DQ_OK || s3 == DQ_OK) memcpy(out, keep, n * 2u);
            }
            CHECK(dq_decode_typed(msg, len - 1u, DQ_F16, out, n) == DQ_ERR_TRUNCATED);
            CHECK(dq_decode_typed(msg, len, DQ_F16, out, n - 1u) == DQ_ERR_DST_TOO_SMALL);
            CHECK(dq_decode_add_typed(msg, len, 1.0f, DQ_F16, out, n + 1u) == DQ_ERR_SIZE_MISMATCH);
            CHECK(dq_decode_typed(NULL, len, DQ_F16, out, n) == DQ_ERR_NULL);
            CHECK(dq_decode_add_typed(msg, len, 1.0f, DQ_BF16, NULL, n) == DQ_ERR_NULL);
            CHECK(dq_decode_typed(msg, len, (dq_dtype)5, out, n) == DQ_ERR_PARAM);
            CHECK(memcmp(out, keep, n * 2u) == 0);
        }
    }
    for (mut = 0; mut < 3; mut++) { /* sparse messages: every corruption with the float path's status */
        dq_params p = base_params(mut == 0 ? DQ_SCHEME_TOPK : (mut == 1 ? DQ_SCHEME_RANDK : DQ_SCHEME_THRESHOLD), 0, 0);
        unsigned t;
        p.k = mut == 2 ? 0u : 50u;
        p.threshold = mut == 2 ? 2.0f : 0.0f;
        CHECK(dq_encode(&p, x, n, NULL, msg, cap, &len) == DQ_OK);
        for (t = 0; t < 300; t++) {
            dq_status s1, s2, s3;
            size_t at = DQ_HEADER_SIZE + (size_t)(dq_t_next(&r) % (len - DQ_HEADER_SIZE));
            memcpy(bad, msg, len);
            bad[at] ^= (uint8_t)(1u + dq_t_next(&r) % 255u);
            s1 = dq_decode(bad, len, f, n);
            s2 = dq_decode_typed(bad, len, DQ_F16, out, n);
            s3 = dq_decode_add_typed(bad, len, 0.5f, DQ_BF16, out, n);
            CHECKF(s1 == s2 && s1 == s3, "sparse %u mutation %u: %d %d %d", mut, t, (int)s1, (int)s2, (int)s3);
            if (s2 != DQ_OK && s3 != DQ_OK) CHECKF(memcmp(out, keep, n * 2u) == 0, "sparse %u mutation %u: written", mut, t);
            memcpy(out, keep, n * 2u);
        }
        CHECK(dq_decode_typed(msg, len, DQ_F16, out, n - 1u) == DQ_ERR_DST_TOO_SMALL);
        CHECK(dq_decode_add_typed(msg, len, 1.0f, DQ_BF16, out, n - 1u) == DQ_ERR_SIZE_MISMATCH);
        CHECK(memcmp(out, keep, n * 2u) == 0);
    }
    free(x);
    free(f);
    free(msg);
    free(bad);
    free(out);
    free(keep);
}

int main(void) {
    hk_build();
    RUN(test_selection);
    RUN(test_known_values);
    RUN(test_half_to_float_exhaustive);
    RUN(test_float_to_half);
    RUN(test_kernel_lengths);
    RUN(test_convert_api);
    RUN(test_encode_equiv);
    RUN(test_encode_long);
    RUN(test_stats_carry);
    RUN(test_stats_kernels);
    RUN(test_encode_failures);
    RUN(test_encode_errors);
    RUN(test_decode_equiv);
    RUN(test_decode_failures);
    return dq_t_finish();
}
