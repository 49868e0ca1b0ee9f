/* test_simd.c - every SIMD kernel compiled into this build against its scalar twin, bit for bit.
 *
 * Kernel families (dqsgd.h's kernel list; tests/internals.h has a table of each): stats,
 * compensate, quant, quant_pack, pack_block, decode_block, elias_scan, elias_nz, elias_gaps,
 * tm_acc, decode_block_tm; and the selection of every family of the list (test_backend). The
 * other families are compared where they are used: test_simd_tab (table schemes), test_half,
 * test_aggregate, test_sparse, test_sketch, test_index, test_integrity, test_rans32.
 * A TU compiled at level L defines every kernel of level <= L, so the avx512 build compares the
 * SSE2, AVX2 and AVX-512 kernels; the scalar build checks dq_simd_backend() and the selection.
 *
 * Inputs are exact-size heap blocks (the last element is the last byte of the block) so that an
 * over-read shows up under ASan/valgrind; outputs carry guard bytes before and after. */
#include "dqsgd.h"
#include "harness.h"

#include <float.h>
#include <math.h>

/* ---------------------------------------------------------------- kernel tables */
#include "internals.h"
#define T_SSE2 DQT_HAS(SSE2)
#define T_AVX2 DQT_HAS(AVX2)
#define T_AVX512 DQT_HAS(AVX512)
#if defined(DQSGD_SIMD_H_INCLUDED) && defined(DQ_SIMD) && DQ_SIMD == DQ_SIMD_NEON
#define T_NEON 1
#else
#define T_NEON 0
#endif

/* ---------------------------------------------------------------- buffers */
#define GUARD 32u /* guard bytes before and after every output region */
#define CANARY 0xA5u


/* Input block: `off` elements of slack in front, nothing after, so reading element n faults
 * under ASan. Returns the element pointer; *base is what to free. */
static void *in_block(const void *src, size_t n, size_t off, size_t elsz, void **base) {
    unsigned char *b = (unsigned char *)xmalloc((n + off) * elsz);
    memset(b, 0x5A, off * elsz);
    if (n) memcpy(b + off * elsz, src, n * elsz);
    *base = b;
    return b + off * elsz;
}

/* Output block with guard bytes: [GUARD + off*elsz canary][n*elsz][GUARD canary]. */
typedef struct {
    unsigned char *base;
    size_t lead, body;
} gbuf;
static void *out_block(gbuf *g, size_t n, size_t off, size_t elsz) {
    g->lead = GUARD + off * elsz;
    g->body = n * elsz;
    g->base = (unsigned char *)xmalloc(g->lead + g->body + GUARD);
    memset(g->base, CANARY, g->lead + g->body + GUARD);
    return g->base + g->lead;
}
static int guard_ok(const gbuf *g) {
    size_t i;
    for (i = 0; i < g->lead; i++)
        if (g->base[i] != CANARY) return 0;
    for (i = 0; i < GUARD; i++)
        if (g->base[g->lead + g->body + i] != CANARY) return 0;
    return 1;
}

/* Index of the first differing 4-byte element, or n. */
static size_t diff32(const void *a, const void *b, size_t n) {
    const unsigned char *pa = (const unsigned char *)a, *pb = (const unsigned char *)b;
    size_t i;
    if (n == 0 || memcmp(a, b, n * 4u) == 0) return n;
    for (i = 0; i < n; i++)
        if (memcmp(pa + 4u * i, pb + 4u * i, 4) != 0) return i;
    return n;
}
static uint32_t fb(float f) { return dq_t_fbits(f); }
static int same_dbl(double a, double b, int nan_ok) {
    if (memcmp(&a, &b, sizeof a) == 0) return 1;
    return nan_ok && isnan(a) && isnan(b);
}

/* ---------------------------------------------------------------- data */
static float gauss_f(dq_t_rng *r, float sigma) { return (float)dq_t_gauss(r) * sigma; }
static uint32_t rnd32(dq_t_rng *r) { return (uint32_t)(dq_t_next(r) >> 32); }
static unsigned rndu(dq_t_rng *r, unsigned m) { return (unsigned)(dq_t_next(r) % m); }
static float rsign(dq_t_rng *r) { return (dq_t_next(r) & 1u) ? -1.0f : 1.0f; }

/* One adversarial value for a quantizer with constants inv (x*inv = level coordinate) and
 * smax (top level). Exact level boundaries are exact when inv is a power of two. */
static float special(dq_t_rng *r, float inv, float smax, unsigned bits) {
    float s = rsign(r);
    float lv = (float)rndu(r, (unsigned)smax + 1u); /* integer level 0..smax */
    unsigned k = rndu(r, 26);
    if (inv == 0.0f && k >= 8 && k < 20) k = 20;
    switch (k) {
        case 0: return 0.0f;
        case 1: return -0.0f;
        case 2: return s * dq_t_bitsf(1u);                           /* smallest subnormal */
        case 3: return s * dq_t_bitsf(1u + rnd32(r) % 0x007FFFFFu);  /* random subnormal */
        case 4: return s * FLT_MAX;
        case 5: return s * 3e38f;
        case 6: return s * FLT_MIN;
        case 7: return s * nextafterf(FLT_MAX, 0.0f);
        case 8:
        case 9: return s * (lv / inv);                   /* r == integer */
        case 10:
        case 11: return s * ((lv + 0.5f) / inv);         /* r == integer + 0.5 */
        case 12: return s * nextafterf(lv / inv, FLT_MAX); /* just around the boundaries */
        case 13: return s * nextafterf(lv / inv, 0.0f);
        case 14: return s * nextafterf((lv + 0.5f) / inv, FLT_MAX);
        case 15: return s * nextafterf((lv + 0.5f) / inv, 0.0f);
        case 16: /* above the top level: clamps */
            return s * ((smax + 1.0f + (float)rndu(r, 1000)) / inv);
        case 17: return s * (smax / inv) * 1.0001f;
        case 18: /* on a stochastic threshold: fractional part == m * 2^-24 */
            if (bits == 1) return ((float)(rnd32(r) >> 8) * 5.96046448e-08f - 0.5f) / inv;
            return s * ((lv + (float)(rnd32(r) >> 8) * 5.96046448e-08f) / inv);
        case 19: return s * ((float)rndu(r, 64) * 0.125f / inv); /* small dyadic multiples */
        case 20: return s * 1e30f;
        case 21: return s * 1e-30f;
        default: return gauss_f(r, 1.0f) * (inv > 0.0f ? smax / inv * 0.3f : 1.0f);
    }
}

/* Finite data of one of three shapes: gaussian, mixed, all special. */
static void fill_q(dq_t_rng *r, float *x, size_t n, int mode, float inv, float smax, unsigned bits) {
    size_t i;
    float sigma = inv > 0.0f ? smax / inv / 3.0f : 1.0f;
    if (!(sigma < FLT_MAX / 8.0f)) sigma = 1e30f;
    for (i = 0; i < n; i++) {
        if (mode == 0 || (mode == 1 && (dq_t_next(r) & 1u)))
            x[i] = gauss_f(r, sigma);
        else
            x[i] = special(r, inv, smax, bits);
    }
}

/* Sprinkle Inf/NaN (several payloads, both signs). */
static float nonfinite(dq_t_rng *r) {
    static const uint32_t pats[] = {0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u,
                                    0x7F800001u, 0x7FBFFFFFu, 0x7FC12345u, 0xFFFFFFFFu};
    return dq_t_bitsf(pats[rndu(r, 8)]);
}

static int has_nan(const float *x, size_t n) {
    size_t i;
    for (i = 0; i < n; i++)
        if (isnan(x[i])) return 1;
    return 0;
}

/* ---------------------------------------------------------------- stats */
/* Statistics of x (edata NULL) or of x + e (the error-feedback form). NaN results may differ
 * in payload only when the inputs hold NaNs (operand order of x + e is not pinned). */
static void stats_one(const float *data, const float *edata, size_t n, size_t off, const char *what) {
    dqt_stats ref, got;
    int nan_ok = has_nan(data, n) || (edata && has_nan(edata, n));
    size_t k;
    void *base, *ebase = NULL;
    const float *x = (const float *)in_block(data, n, off, 4, &base);
    const float *e = edata ? (const float *)in_block(edata, n, (off + 1u) & 3u, 4, &ebase) : NULL;
    /* each norm asks for one statistic; any other mask must still match the reference */
    static const unsigned masks[] = {DQT_ST(SQ), DQT_ST(ABS), DQT_ST(MAX), DQT_ST(SQ) | DQT_ST(ABS) | DQT_ST(MAX)};
    unsigned mi;
    for (mi = 0; mi < 4; mi++) {
        dqt_scalar(stats)(x, e, n, masks[mi], &ref);
        for (k = 0; DQT_STATS_K[k].name; k++) {
            memset(&got, 0x77, sizeof got);
            DQT_STATS_K[k].fn(x, e, n, masks[mi], &got);
            CHECKF(same_dbl(got.sumsq, ref.sumsq, nan_ok) && same_dbl(got.sumabs, ref.sumabs, nan_ok) &&
                       got.maxbits == ref.maxbits,
                   "stats__%s mask %u %s%s n=%lu off=%lu: sumsq %.17g vs %.17g, sumabs %.17g vs %.17g, maxbits %08lx "
                   "vs %08lx",
                   DQT_STATS_K[k].name, masks[mi], what, e ? " (x+e)" : "", (unsigned long)n, (unsigned long)off, got.sumsq,
                   ref.sumsq, got.sumabs, ref.sumabs, (unsigned long)got.maxbits, (unsigned long)ref.maxbits);
        }
    }
    CHECK(n == 0 || memcmp(x, data, n * 4u) == 0);
    CHECK(n == 0 || !e || memcmp(e, edata, n * 4u) == 0);
    free(base);
    free(ebase);
}

static void fill_stats(dq_t_rng *r, float *x, size_t n, int mode) {
    size_t i;
    for (i = 0; i < n; i++) {
        switch (mode) {
            case 0: x[i] = gauss_f(r, 1.0f); break;
            case 1: x[i] = special(r, 1.0f, 7.0f, 4); break;
            case 2: /* magnitudes far apart: the double sums depend on association order */
                x[i] = (dq_t_next(r) & 1u) ? rsign(r) * 1e30f : gauss_f(r, 1e-3f);
                break;
            default: x[i] = (rndu(r, 16) == 0) ? nonfinite(r) : special(r, 1.0f, 7.0f, 4); break;
        }
    }
}

static void test_stats(void) {
    dq_t_rng r = {11};
    static const size_t big[] = {1000, 4099, 65537, 100003};
    float *buf = (float *)xmalloc(100003 * sizeof(float)), *ebuf = (float *)xmalloc(100003 * sizeof(float));
    size_t n, off, i;
    int mode;
    if (!DQT_STATS_K[0].name) goto done;
    for (n = 0; n <= 600; n++)
        for (off = 0; off < 4; off++)
            for (mode = 0; mode < 4; mode++) {
                fill_stats(&r, buf, n, mode);
                stats_one(buf, NULL, n, off, "random");
                fill_stats(&r, ebuf, n, (mode + (int)off) % 4);
                for (i = 0; i < n && mode == 1; i++) /* x + e overflowing, cancelling to +0 */
                    if (rndu(&r, 8) == 0) ebuf[i] = rndu(&r, 2) ? -buf[i] : buf[i];
                stats_one(buf, ebuf, n, off, "random");
            }
    for (i = 0; i < sizeof big / sizeof big[0]; i++)
        for (mode = 0; mode < 4; mode++) {
            fill_stats(&r, buf, big[i], mode);
            stats_one(buf, NULL, big[i], (size_t)mode, "large");
            fill_stats(&r, ebuf, big[i], 3 - mode);
            stats_one(buf, ebuf, big[i], (size_t)mode, "large");
        }
    /* uniform buffers */
    for (n = 1; n <= 80; n++) {
        static const float vals[] = {0.0f, -0.0f, FLT_MAX, -FLT_MAX, 1e-45f, 1.0f};
        for (i = 0; i < sizeof vals / sizeof vals[0]; i++) {
            size_t j;
            for (j = 0; j < n; j++) {
                buf[j] = vals[i];
                ebuf[j] = vals[(i + j) % 6u];
            }
            stats_one(buf, NULL, n, n & 3u, "uniform");
            stats_one(buf, ebuf, n, n & 3u, "uniform");
        }
        /* one non-finite value at each position (the max pass must see every element) */
        for (i = 0; i < n; i++) {
            size_t j;
            for (j = 0; j < n; j++) buf[j] = (float)j;
            buf[i] = dq_t_bitsf(i & 1u ? 0x7F800000u : 0xFFC00000u);
            stats_one(buf, NULL, n, i & 3u, "one nonfinite");
            /* the same through e, and x + e overflowing at one position */
            for (j = 0; j < n; j++) {
                ebuf[j] = buf[j];
                buf[j] = (float)j;
            }
            stats_one(buf, ebuf, n, i & 3u, "one nonfinite in e");
            for (j = 0; j < n; j++) ebuf[j] = j == i ? FLT_MAX : -0.5f;
            buf[i] = FLT_MAX;
            stats_one(buf, ebuf, n, i & 3u, "x + e overflows");
        }
    }
done:
    free(buf);
    free(ebuf);
}

/* ---------------------------------------------------------------- compensate */
static void comp_one(const float *xd, const float *ed, size_t n, size_t off, int alias) {
    size_t k, d;
    void *xbase;
    float *eref = (float *)xmalloc(n * 4u + 4u), *xref = (float *)xmalloc(n * 4u + 4u);
    int nan_ok = has_nan(xd, n) || has_nan(ed, n);
    if (n) memcpy(eref, alias ? xd : ed, n * 4u);
    if (n) memcpy(xref, xd, n * 4u);
    dqt_scalar(compensate)(alias ? eref : xref, eref, n);
    for (k = 0; DQT_COMP_K[k].name; k++) {
        gbuf ge;
        float *e = (float *)out_block(&ge, n, (off + 1u) & 3u, 4), *x;
        if (n) memcpy(e, alias ? xd : ed, n * 4u);
        if (alias) {
            x = e;
            xbase = NULL;
        } else {
            x = (float *)in_block(xd, n, off, 4, &xbase);
        }
        DQT_COMP_K[k].fn(x, e, n);
        d = diff32(e, eref, n);
        if (d < n && nan_ok) {
            size_t i;
            d = n;
            for (i = 0; i < n && d == n; i++)
                if (memcmp(e + i, eref + i, 4) != 0 && !(isnan(e[i]) && isnan(eref[i]))) d = i;
        }
        CHECKF(d == n, "compensate__%s n=%lu off=%lu alias=%d at %lu: x=%08lx e=%08lx got %08lx want %08lx",
               DQT_COMP_K[k].name, (unsigned long)n, (unsigned long)off, alias, (unsigned long)d,
               (unsigned long)fb(xd[d < n ? d : 0]), (unsigned long)fb(ed[d < n ? d : 0]),
               (unsigned long)fb(e[d < n ? d : 0]), (unsigned long)fb(eref[d < n ? d : 0]));
        CHECKF(guard_ok(&ge), "compensate__%s wrote outside e[0..%lu)", DQT_COMP_K[k].name, (unsigned long)n);
        if (!alias) CHECK(n == 0 || memcmp(x, xd, n * 4u) == 0);
        free(ge.base);
        free(xbase);
    }
    free(eref);
    free(xref);
}

static void test_compensate(void) {
    dq_t_rng r = {22};
    static const size_t big[] = {1000, 4099, 65537};
    float *xd = (float *)xmalloc(65537 * sizeof(float)), *ed = (float *)xmalloc(65537 * sizeof(float));
    size_t n, off, i;
    if (!DQT_COMP_K[0].name) goto done;
    for (n = 0; n <= 600; n++)
        for (off = 0; off < 4; off++) {
            int mode = (int)((n + off) % 4u);
            for (i = 0; i < n; i++) {
                if (mode == 0) {
                    xd[i] = gauss_f(&r, 1.0f);
                    ed[i] = gauss_f(&r, 0.1f);
                } else if (mode == 3 && rndu(&r, 8) == 0) { /* NaN/Inf on one side only */
                    xd[i] = (i & 1u) ? nonfinite(&r) : 1.0f;
                    ed[i] = (i & 1u) ? -2.0f : nonfinite(&r);
                } else { /* includes FLT_MAX + FLT_MAX = Inf, subnormal sums, x + (-x) = +0 */
                    xd[i] = special(&r, 1.0f, 7.0f, 4);
                    ed[i] = rndu(&r, 4) == 0 ? -xd[i] : special(&r, 1.0f, 7.0f, 4);
                }
            }
            comp_one(xd, ed, n, off, 0);
            comp_one(xd, ed, n, off, 1);
        }
    for (i = 0; i < sizeof big / sizeof big[0]; i++) {
        size_t j;
        for (j = 0; j < big[i]; j++) {
            xd[j] = special(&r, 1.0f, 7.0f, 4);
            ed[j] = gauss_f(&r, 1.0f);
        }
        comp_one(xd, ed, big[i], i & 3u, 0);
        comp_one(xd, ed, big[i], i & 3u, 1);
    }
done:
    free(xd);
    free(ed);
}

/* ---------------------------------------------------------------- quant */

/* ---------------------------------------------------------------- quant + pack (fused) */

/* The fused kernels against the scalar composition (quantize then pack): packed bytes and
 * residuals bit for bit, nothing written past the 32*b bytes, every width and rounding, with
 * and without a residual, on Gaussian data and on values at level boundaries. */
static void test_quant_pack(void) {
    dq_t_rng r = {91};
    float x[DQT_BLOCK], rref[DQT_BLOCK], rgot[DQT_BLOCK];
    uint8_t ref[32 * 16 + 8], got[32 * 16 + 8];
    unsigned bits, stoch, withres, k, rep;
    size_t i;
    for (bits = 1; bits <= 16; bits++)
        for (stoch = 0; stoch < 2; stoch++)
            for (withres = 0; withres < 2; withres++)
                for (rep = 0; rep < 3; rep++) {
                    dqt_qctx q;
                    float scale = rep == 2 ? 4.0f : 1.0f + (float)rep;
                    for (i = 0; i < DQT_BLOCK; i++) {
                        if (rep == 2) /* exact levels, half levels, clamped values */
                            x[i] = (float)((int)(i % 19u) - 9) * 0.5f * scale / dqt_levels(bits) * (i % 7u == 0 ? 3.0f : 1.0f);
                        else
                            x[i] = gauss_f(&r, 0.3f);
                    }
                    dqt_qctx_make(&q, bits, scale, (int)stoch, (uint32_t)dq_t_next(&r), (uint32_t)dq_t_next(&r),
                              (uint32_t)dq_t_next(&r));
                    memcpy(rref, x, sizeof x);
                    memset(ref, 0xA5, sizeof ref);
                    dqt_scalar(quant_pack)(&q, withres ? rref : x, withres ? rref : NULL, ref);
                    for (k = 0; DQT_QPACK_K[k].name; k++) {
                        memcpy(rgot, x, sizeof x);
                        memset(got, 0xA5, sizeof got);
                        DQT_QPACK_K[k].fn(&q, withres ? rgot : x, withres ? rgot : NULL, got);
                        CHECKF(memcmp(got, ref, sizeof got) == 0, "quant_pack__%s bits %u stoch %u res %u rep %u",
                               DQT_QPACK_K[k].name, bits, stoch, withres, rep);
                        CHECKF(!withres || memcmp(rgot, rref, sizeof rgot) == 0,
                               "quant_pack__%s residual bits %u stoch %u rep %u", DQT_QPACK_K[k].name, bits, stoch, rep);
                    }
                }
}

static void quant_report(const char *kname, const dqt_qctx *q, const float *x, size_t n, size_t off, int resmode,
                         size_t d, const char *field, uint32_t got, uint32_t want) {
    CHECKF(0,
           "quant__%s %s differs: n=%lu off=%lu bits=%u %s resmode=%d at i=%lu x=%08lx (%.9g) got %08lx want "
           "%08lx [inv=%08lx step=%08lx lo=%08lx]",
           kname, field, (unsigned long)n, (unsigned long)off, q->bits, q->thresh < 0.0f ? "stoch" : "nearest",
           resmode, (unsigned long)d, (unsigned long)fb(x[d]), (double)x[d], (unsigned long)got,
           (unsigned long)want, (unsigned long)fb(q->inv), (unsigned long)fb(q->step), (unsigned long)q->lo);
}

/* resmode: 0 = res NULL, 1 = separate res buffer, 2 = in place (res == x). */
static void quant_one(const dqt_qctx *q, const float *data, size_t n, size_t off, int resmode) {
    float *xr = (float *)xmalloc(n * 4u + 4u), *rr = (float *)xmalloc(n * 4u + 4u);
    uint32_t *cr = (uint32_t *)xmalloc(n * 4u + 4u);
    size_t k, d;
    if (n) memcpy(xr, data, n * 4u);
    dqt_scalar(quant)(q, xr, n, cr, resmode == 0 ? NULL : resmode == 1 ? rr : xr);
    if (resmode == 2 && n) memcpy(rr, xr, n * 4u);
    for (k = 0; DQT_QUANT_K[k].name; k++) {
        gbuf gc, gr, gx;
        void *xbase = NULL;
        float *x, *res = NULL;
        uint32_t *codes = (uint32_t *)out_block(&gc, n, (off + 1u) & 3u, 4);
        gr.base = gx.base = NULL;
        if (resmode == 2) {
            x = (float *)out_block(&gx, n, off, 4);
            if (n) memcpy(x, data, n * 4u);
            res = x;
        } else {
            x = (float *)in_block(data, n, off, 4, &xbase);
            if (resmode == 1) res = (float *)out_block(&gr, n, (off + 2u) & 3u, 4);
        }
        DQT_QUANT_K[k].fn(q, x, n, codes, res);
        d = diff32(codes, cr, n);
        if (d < n) quant_report(DQT_QUANT_K[k].name, q, data, n, off, resmode, d, "code", codes[d], cr[d]);
        if (res) {
            d = diff32(res, rr, n);
            if (d < n) quant_report(DQT_QUANT_K[k].name, q, data, n, off, resmode, d, "residual", fb(res[d]), fb(rr[d]));
        }
        if (resmode != 2) CHECKF(n == 0 || memcmp(x, data, n * 4u) == 0, "quant__%s modified x", DQT_QUANT_K[k].name);
        CHECKF(guard_ok(&gc), "quant__%s wrote outside codes[0..%lu)", DQT_QUANT_K[k].name, (unsigned long)n);
        if (gr.base) CHECKF(guard_ok(&gr), "quant__%s wrote outside res[0..%lu)", DQT_QUANT_K[k].name, (unsigned long)n);
        if (gx.base) CHECKF(guard_ok(&gx), "quant__%s wrote outside x[0..%lu)", DQT_QUANT_K[k].name, (unsigned long)n);
        free(gc.base);
        free(gr.base);
        free(gx.base);
        free(xbase);
    }
    free(xr);
    free(rr);
    free(cr);
}

/* A bucket scale: zero, power-of-two inv (exact boundaries), ordinary, tiny, huge, or (-1) the
 * L2 norm of the data, filled in after the data exist. */
static float pick_scale(dq_t_rng *r, unsigned bits) {
    float lv = bits == 1 ? 0.5f : dqt_levels(bits);
    switch (rndu(r, 9)) {
        case 0: return 0.0f;
        case 1:
        case 2: return ldexpf(lv, (int)rndu(r, 40) - 20); /* inv = 2^k */
        case 3: return (float)(0.01 + 100.0 * dq_t_unif(r));
        case 4: return 1.5e-30f;                        /* just above DQT_MIN_SCALE */
        case 5: return 1e37f;
        case 6: return FLT_MAX;                          /* inv may be subnormal */
        default: return -1.0f;
    }
}
static float l2_scale(const float *x, size_t n) {
    dqt_stats st;
    double v;
    float s;
    dqt_scalar(stats)(x, NULL, n, DQT_ST(SQ), &st);
    v = sqrt(st.sumsq);
    if (!(v <= (double)FLT_MAX)) return FLT_MAX;
    s = (float)v;
    return s < DQT_MIN_SCALE ? 0.0f : s;
}

static void quant_case(dq_t_rng *r, float *buf, size_t n, size_t off, unsigned bits, int mode, int all_res) {
    dqt_qctx q;
    float scale = pick_scale(r, bits);
    dqt_key key = dqt_key_make(dq_t_next(r), dq_t_next(r), rnd32(r));
    uint32_t k1h = dqt_key_hi(key, (dq_t_next(r) & 1u) ? 0u : rnd32(r)), lo;
    int stoch, resmode;
    switch (rndu(r, 4)) {
        case 0: lo = 0; break;
        case 1: lo = 0xFFFFFFFFu - (uint32_t)(n / 2u); break; /* index wraps inside the segment */
        default: lo = rnd32(r); break;
    }
    dqt_qctx_make(&q, bits, scale < 0.0f ? 1.0f : scale, 1, key.k0, k1h, lo);
    fill_q(r, buf, n, mode, q.inv, q.smax, bits);
    if (scale < 0.0f) scale = l2_scale(buf, n);
    for (stoch = 1; stoch >= 0; stoch--) {
        dqt_qctx_make(&q, bits, scale, stoch, key.k0, k1h, lo);
        if (all_res) {
            for (resmode = 0; resmode < 3; resmode++) quant_one(&q, buf, n, off, resmode);
        } else {
            quant_one(&q, buf, n, off, (int)((n + off + bits + (unsigned)stoch) % 3u));
        }
    }
}

static void test_quant_lengths(void) {
    dq_t_rng r = {33};
    float *buf = (float *)xmalloc(601 * sizeof(float));
    size_t n, off;
    unsigned bits;
    if (!DQT_QUANT_K[0].name) goto done;
    for (n = 0; n <= 600; n++)
        for (off = 0; off < 4; off++)
            for (bits = 1; bits <= 16; bits++) quant_case(&r, buf, n, off, bits, (int)((n + bits) % 3u), 1);
done:
    free(buf);
}

static void test_quant_large(void) {
    dq_t_rng r = {44};
    static const size_t big[] = {1000, 4099, 65537, 100003};
    float *buf = (float *)xmalloc(100003 * sizeof(float));
    size_t i;
    unsigned bits;
    if (!DQT_QUANT_K[0].name) goto done;
    for (i = 0; i < sizeof big / sizeof big[0]; i++)
        for (bits = 1; bits <= 16; bits++) /* every res mode for the widest and narrowest codes */
            quant_case(&r, buf, big[i], bits & 3u, bits, (int)(bits % 3u), bits <= 2 || bits >= 15);
done:
    free(buf);
}

/* Inf and NaN never reach the quantizer inside the library (the scale check rejects them), but
 * the kernels should still agree. */
static void test_quant_nonfinite(void) {
    dq_t_rng r = {55};
    float buf[300];
    size_t n, i;
    unsigned bits;
    if (!DQT_QUANT_K[0].name) return;
    for (n = 1; n <= 300; n += 7)
        for (bits = 1; bits <= 16; bits++) {
            dqt_qctx q;
            int stoch, resmode;
            float scale = bits & 1u ? 0.0f : (float)(0.5 + dq_t_unif(&r));
            for (i = 0; i < n; i++) buf[i] = rndu(&r, 4) == 0 ? nonfinite(&r) : gauss_f(&r, 1.0f);
            for (stoch = 0; stoch < 2; stoch++)
                for (resmode = 0; resmode < 3; resmode++) {
                    dqt_qctx_make(&q, bits, scale, stoch, rnd32(&r), rnd32(&r), rnd32(&r));
                    quant_one(&q, buf, n, n & 3u, resmode);
                }
        }
}

/* Quant of exactly-on-boundary grids: every level and half level of a power-of-two inv. */
/* The dither's exact edges: with inv = 1, element i gets |x| = f just at, above or below its
 * own draw t = d * 2^-24 (computed with the scalar generator), so any error in the draw's low
 * bits or in the t < f test changes a code. Blocks inside and across a multiple of 2^16. */
static void test_quant_dither_edges(void) {
    static const uint32_t los[] = {0x12340000u, 0x0001FF80u, 0xFFFFFF00u, 0x00000041u};
    float x[DQT_BLOCK];
    uint8_t ref[32 * 8], got[32 * 8];
    unsigned li, bits, k;
    size_t i;
    for (li = 0; li < sizeof los / sizeof los[0]; li++)
        for (bits = 2; bits <= 8; bits += 2) {
            dqt_qctx q;
            dqt_qctx_make(&q, bits, 1.0f, 1, 0x9E3779B9u + li, 0x7F4A7C15u * (li + 1u), los[li]);
            q.inv = 1.0f;
            for (i = 0; i < DQT_BLOCK; i++) {
                float t = (float)dqt_draw24(q.k0, q.k1h, q.lo + (uint32_t)i) * 5.96046448e-08f;
                x[i] = i % 3u == 0 ? t : nextafterf(t, i % 3u == 1 ? 2.0f : -1.0f);
                if (i % 4u == 3u) x[i] = -x[i];
            }
            quant_one(&q, x, DQT_BLOCK, 0, 0);
            quant_one(&q, x, DQT_BLOCK, 1, 1);
            if (los[li] & 0xFFu) continue; /* the fused kernels take whole, aligned blocks */
            memset(ref, 0xA5, sizeof ref);
            dqt_scalar(quant_pack)(&q, x, NULL, ref);
            for (k = 0; DQT_QPACK_K[k].name; k++) {
                memset(got, 0xA5, sizeof got);
                DQT_QPACK_K[k].fn(&q, x, NULL, got);
                CHECKF(memcmp(got, ref, sizeof got) == 0, "quant_pack__%s dither edges bits %u lo %08lx",
                       DQT_QPACK_K[k].name, bits, (unsigned long)los[li]);
            }
        }
}

static void test_quant_grid(void) {
    float *buf = (float *)xmalloc(70000 * sizeof(float));
    unsigned bits;
    if (!DQT_QUANT_K[0].name) goto done;
    for (bits = 1; bits <= 16; bits++) {
        float lv = bits == 1 ? 0.5f : dqt_levels(bits), scale = ldexpf(lv, -3); /* inv = 8 */
        size_t n = 0, l, top = bits == 1 ? 64u : (size_t)dqt_levels(bits) + 2u;
        dqt_qctx q;
        int stoch;
        for (l = 0; l <= top && n + 8 <= 70000; l++) {
            float a = (float)l / 8.0f, h = ((float)l + 0.5f) / 8.0f;
            if (bits == 1) {
                a = ((float)l - 32.0f) / 64.0f / 8.0f; /* p = 0.5 + x*inv covers 0..1 in 1/64 steps */
                h = a + 1.0f / 1024.0f;
            }
            buf[n++] = a;
            buf[n++] = -a;
            buf[n++] = h;
            buf[n++] = -h;
            buf[n++] = nextafterf(a, FLT_MAX);
            buf[n++] = -nextafterf(a, 0.0f);
            buf[n++] = nextafterf(h, 0.0f);
            buf[n++] = -nextafterf(h, FLT_MAX);
        }
        for (stoch = 0; stoch < 2; stoch++) {
            dqt_qctx_make(&q, bits, scale, stoch, 0x12345678u, 0x9ABCDEF0u, 7u);
            quant_one(&q, buf, n, bits & 3u, 1);
            quant_one(&q, buf, n, (bits + 1u) & 3u, 2);
        }
    }
done:
    free(buf);
}

/* ---------------------------------------------------------------- pack / unpack */
static void fill_codes(dq_t_rng *r, uint32_t *c, unsigned b, int pat) {
    uint32_t mask = (uint32_t)((1u << b) - 1u);
    unsigned i;
    for (i = 0; i < DQT_BLOCK; i++) {
        switch (pat) {
            case 0: c[i] = mask; break;
            case 1: c[i] = 0; break;
            case 2: c[i] = (i & 1u) ? mask : 0u; break;
            case 3: c[i] = (uint32_t)1u << (i % b); break;
            case 4: c[i] = i == (unsigned)rndu(r, DQT_BLOCK) ? mask : 0u; break;
            default: c[i] = rnd32(r) & mask; break;
        }
    }
}

static void test_pack(void) {
    dq_t_rng r = {66};
    uint32_t codes[DQT_BLOCK], back[DQT_BLOCK];
    uint8_t ref[32 * 16 + GUARD];
    unsigned b;
    int trial;
    for (b = 1; b <= 16; b++)
        for (trial = 0; trial < 200; trial++) {
            size_t nbytes = 32u * b, k, off = (size_t)trial & 3u;
            void *cbase;
            const uint32_t *cin;
            fill_codes(&r, codes, b, trial < 10 ? trial % 5 : 5);
            cin = (const uint32_t *)in_block(codes, DQT_BLOCK, off, 4, &cbase);
            memset(ref, 0xEE, sizeof ref);
            dqt_scalar(pack_block)(cin, b, ref);
            for (k = nbytes; k < sizeof ref && ref[k] == 0xEE; k++) {
            }
            CHECKF(k == sizeof ref, "pack_block__scalar wrote past 32*b bytes (b=%u)", b);
            /* unpack(pack(codes)) == codes */
            memset(back, 0xFF, sizeof back);
            dqt_scalar(unpack_block)(ref, b, back);
            CHECKF(memcmp(back, codes, sizeof codes) == 0, "unpack(pack(codes)) != codes (scalar, b=%u trial %d)", b,
                   trial);
            for (k = 0; DQT_PACK_K[k].name; k++) {
                gbuf go;
                uint8_t *out = (uint8_t *)out_block(&go, nbytes, ((size_t)trial >> 2) & 3u, 1);
                size_t d;
                DQT_PACK_K[k].fn(cin, b, out);
                for (d = 0; d < nbytes && out[d] == ref[d]; d++) {
                }
                CHECKF(d == nbytes, "pack_block__%s b=%u trial %d: byte %lu is %02x, scalar %02x", DQT_PACK_K[k].name, b,
                       trial, (unsigned long)d, d < nbytes ? out[d] : 0u, d < nbytes ? ref[d] : 0u);
                CHECKF(guard_ok(&go), "pack_block__%s b=%u wrote outside its 32*b bytes", DQT_PACK_K[k].name, b);
                memset(back, 0xFF, sizeof back);
                dqt_scalar(unpack_block)(out, b, back);
                CHECKF(memcmp(back, codes, sizeof codes) == 0, "unpack(pack__%s(codes)) != codes (b=%u)",
                       DQT_PACK_K[k].name, b);
                free(go.base);
            }
            CHECK(memcmp(cin, codes, sizeof codes) == 0);
            free(cbase);
        }
}

/* The headerless tail coder (scalar only, shared by every build): round trip, zero padding. */
static void test_pack_tail(void) {
    dq_t_rng r = {77};
    uint32_t codes[DQT_BLOCK], back[DQT_BLOCK];
    uint8_t out[32 * 16 + 1];
    unsigned b;
    size_t cnt, nb, i;
    for (b = 1; b <= 16; b++)
        for (cnt = 0; cnt < DQT_BLOCK; cnt++) {
            uint32_t mask = (uint32_t)((1u << b) - 1u);
            for (i = 0; i < cnt; i++) codes[i] = rnd32(&r) & mask;
            nb = (cnt * b + 7u) / 8u;
            memset(out, 0xEE, sizeof out);
            dqt_pack_tail(codes, cnt, b, out);
            CHECKF(out[nb] == 0xEE, "pack_tail wrote past %lu bytes (b=%u cnt=%lu)", (unsigned long)nb, b,
                   (unsigned long)cnt);
            CHECK(dqt_unpack_tail(out, cnt, b, back) == 1);
            CHECKF(cnt == 0 || memcmp(back, codes, cnt * 4u) == 0, "tail round trip b=%u cnt=%lu", b,
                   (unsigned long)cnt);
            if ((cnt * b) % 8u) { /* a padding bit set must be reported */
                out[nb - 1u] = (uint8_t)(out[nb - 1u] | 0x80u);
                CHECK(dqt_unpack_tail(out, cnt, b, back) == 0);
            }
        }
}

/* ---------------------------------------------------------------- decode_block */
static float pick_step(dq_t_rng *r) {
    switch (rndu(r, 8)) {
        case 0: return 0.0f;
        case 1: return dq_t_bitsf(1u + rnd32(r) % 0x7FFFFFu); /* subnormal */
        case 2: return FLT_MAX / 3.0f;
        case 3: return FLT_MAX;
        case 4: return 1e-30f;
        default: return (float)(1e-3 + dq_t_unif(r));
    }
}

static void test_decode_block(void) {
    dq_t_rng r = {88};
    static const float weights[] = {0.3f, 1.0f, -2.5f, 0.0f, -0.0f, 1e-20f};
    uint8_t raw[32 * 16];
    uint32_t codes[DQT_BLOCK];
    float rowstep[DQT_ROWS], acc0[DQT_BLOCK], ref[DQT_BLOCK];
    unsigned b;
    int trial;
    if (!DQT_DEC_K[0].name) return;
    for (b = 1; b <= 16; b++)
        for (trial = 0; trial < 120; trial++) {
            size_t nbytes = 32u * b, i, k, off = (size_t)trial & 3u;
            int add = trial & 1;
            float w = weights[(trial >> 1) % 6];
            void *ibase, *sbase;
            const uint8_t *in;
            const float *rs;
            int same = rndu(&r, 3) == 0;
            if (trial < 8) { /* structured codes, packed by the scalar packer */
                fill_codes(&r, codes, b, trial % 5);
                dqt_scalar(pack_block)(codes, b, raw);
            } else { /* any bytes form valid codes */
                for (i = 0; i < nbytes; i++) raw[i] = (uint8_t)rnd32(&r);
            }
            for (i = 0; i < DQT_ROWS; i++) rowstep[i] = (same && i) ? rowstep[0] : pick_step(&r);
            if (trial % 6 == 5) { /* equal steps but one row (the kernels' equal-steps test) */
                for (i = 1; i < DQT_ROWS; i++) rowstep[i] = rowstep[0];
                rowstep[1u + rndu(&r, DQT_ROWS - 1u)] = -rowstep[0] == rowstep[0] ? 1.0f : -rowstep[0];
            }
            for (i = 0; i < DQT_BLOCK; i++)
                acc0[i] = rndu(&r, 3) == 0 ? special(&r, 1.0f, 7.0f, 4) : gauss_f(&r, 1.0f);
            in = (const uint8_t *)in_block(raw, nbytes, off * 4u + (size_t)((trial >> 2) & 3), 1, &ibase);
            rs = (const float *)in_block(rowstep, DQT_ROWS, (off + 1u) & 3u, 4, &sbase);
            memcpy(ref, acc0, sizeof ref);
            dqt_scalar(decode_block)(in, b, rs, w, add, ref);
            /* the scalar twin agrees with decode_value on the unpacked codes */
            dqt_scalar(unpack_block)(in, b, codes);
            for (i = 0; i < DQT_BLOCK; i++) {
                float v = dqt_decode_value(codes[i], b, rowstep[i / 8u]), want = add ? acc0[i] + w * v : v;
                if (memcmp(&want, ref + i, 4) != 0) {
                    CHECKF(0, "decode_block__scalar b=%u i=%lu: %08lx vs %08lx", b, (unsigned long)i,
                           (unsigned long)fb(ref[i]), (unsigned long)fb(want));
                    break;
                }
            }
            for (k = 0; DQT_DEC_K[k].name; k++) {
                gbuf go;
                float *out = (float *)out_block(&go, DQT_BLOCK, (off + 2u) & 3u, 4);
                size_t d;
                memcpy(out, acc0, sizeof acc0);
                DQT_DEC_K[k].fn(in, b, rs, w, add, out);
                d = diff32(out, ref, DQT_BLOCK);
                CHECKF(d == DQT_BLOCK,
                       "decode_block__%s b=%u add=%d w=%g trial %d at %lu: code %lx step %08lx got %08lx want %08lx",
                       DQT_DEC_K[k].name, b, add, (double)w, trial, (unsigned long)d,
                       (unsigned long)codes[d % DQT_BLOCK], (unsigned long)fb(rowstep[(d % DQT_BLOCK) / 8u]),
                       (unsigned long)fb(out[d % DQT_BLOCK]), (unsigned long)fb(ref[d % DQT_BLOCK]));
                CHECKF(guard_ok(&go), "decode_block__%s wrote outside out[0..256)", DQT_DEC_K[k].name);
                free(go.base);
            }
            free(ibase);
            free(sbase);
        }
}

/* The Elias sizing scan: the scalar twin against the layout's definition (public omega
 * lengths), every SIMD kernel against it bit for bit (codes, mask, bits), negative zeros. */
static void test_elias_scan(void) {
    dq_t_rng r = {91};
    uint8_t raw[32 * 16], lvt[16];
    uint32_t codes[DQT_BLOCK], got[DQT_BLOCK], ref[DQT_BLOCK];
    uint64_t nz[4], rnz[4];
    unsigned b, L;
    int trial;
    lvt[0] = 0;
    for (L = 1; L < 16; L++) lvt[L] = (uint8_t)(1u + dq_elias_omega_len((uint64_t)1 << (L - 1u)));
    for (b = 2; b <= 16; b++)
        for (trial = 0; trial < 120; trial++) {
            uint32_t smax = (1u << (b - 1u)) - 1u, want = 0, rbits;
            uint64_t wnz[4] = {0, 0, 0, 0};
            size_t i, k;
            int negz = 0;
            if (trial < 10) {
                fill_codes(&r, codes, b, trial % 5);
            } else { /* sparse levels, as QSGD writes them */
                unsigned keep = 1u + rndu(&r, 8);
                for (i = 0; i < DQT_BLOCK; i++)
                    codes[i] = rndu(&r, keep) ? 0u : (rnd32(&r) & ((1u << b) - 1u));
            }
            if (trial % 7 == 3) codes[rndu(&r, DQT_BLOCK)] = smax + 1u; /* a negative zero */
            for (i = 0; i < DQT_BLOCK; i++) {
                uint32_t l = codes[i] & smax;
                if (codes[i] == smax + 1u) negz = 1;
                if (!l) continue;
                wnz[i / 64u] |= (uint64_t)1 << (i % 64u);
                want += 1u + dq_elias_omega_len(l);
            }
            if (negz) want = UINT32_MAX;
            dqt_scalar(pack_block)(codes, b, raw);
            rbits = dqt_scalar(elias_scan)(raw, b, lvt, ref, rnz);
            CHECKF(rbits == want, "elias_scan__scalar b=%u trial %d: %lu bits, want %lu", b, trial,
                   (unsigned long)rbits, (unsigned long)want);
            CHECKF(memcmp(ref, codes, sizeof ref) == 0, "elias_scan__scalar b=%u trial %d: codes differ", b, trial);
            CHECKF(negz || memcmp(rnz, wnz, sizeof wnz) == 0, "elias_scan__scalar b=%u trial %d: mask differs", b,
                   trial);
            for (k = 0; DQT_ESCAN_K[k].name; k++) {
                uint32_t bits;
                memset(got, 0xA5, sizeof got);
                memset(nz, 0xA5, sizeof nz);
                bits = DQT_ESCAN_K[k].fn(raw, b, lvt, got, nz);
                CHECKF(bits == rbits, "elias_scan__%s b=%u trial %d: %lu bits, scalar %lu", DQT_ESCAN_K[k].name, b,
                       trial, (unsigned long)bits, (unsigned long)rbits);
                CHECKF(memcmp(got, ref, sizeof ref) == 0, "elias_scan__%s b=%u trial %d: codes differ",
                       DQT_ESCAN_K[k].name, b, trial);
                CHECKF(negz || memcmp(nz, rnz, sizeof nz) == 0, "elias_scan__%s b=%u trial %d: mask differs",
                       DQT_ESCAN_K[k].name, b, trial);
            }
            /* the masks alone: the scan's, negative zeros (level 0) included */
            memset(nz, 0xA5, sizeof nz);
            dqt_scalar(elias_nz)(raw, b, nz);
            CHECKF(memcmp(nz, wnz, sizeof nz) == 0, "elias_nz__scalar b=%u trial %d: mask differs", b, trial);
            for (k = 0; DQT_ENZ_K[k].name; k++) {
                memset(nz, 0xA5, sizeof nz);
                DQT_ENZ_K[k].fn(raw, b, nz);
                CHECKF(memcmp(nz, wnz, sizeof nz) == 0, "elias_nz__%s b=%u trial %d: mask differs", DQT_ENZ_K[k].name,
                       b, trial);
            }
        }
}

/* The early-stop pass: the scalar twin against gaps measured one by one (cnt[k]: the non-zeros
 * whose gap to the one before, or to index -1, is 2^k or more), every SIMD kernel against it bit
 * for bit, the state carried across two calls. */
static void test_elias_gaps(void) {
    dq_t_rng r = {57};
    uint32_t codes[DQT_BLOCK];
    unsigned b;
    int trial;
    for (b = 2; b <= 16; b++)
        for (trial = 0; trial < 40; trial++) {
            size_t nblk = 1u + rndu(&r, 9), cut = rndu(&r, (uint32_t)nblk + 1u), i, k, j;
            uint8_t *raw = (uint8_t *)malloc(nblk * 32u * b);
            uint64_t want[7] = {0, 0, 0, 0, 0, 0, 0}, ref[7] = {0, 0, 0, 0, 0, 0, 0}, rst[6];
            long last = -1;
            unsigned keep = trial % 4 == 0 ? 1u : 1u + rndu(&r, trial % 4 == 1 ? 200u : 8u);
            if (!raw) {
                CHECK(raw != NULL);
                return;
            }
            for (k = 0; k < nblk; k++) {
                for (i = 0; i < DQT_BLOCK; i++) {
                    uint32_t c = rndu(&r, keep) ? 0u : (rnd32(&r) & ((1u << b) - 1u));
                    if (c & ((1u << (b - 1u)) - 1u)) {
                        long at = (long)(k * DQT_BLOCK + i);
                        want[0]++;
                        for (j = 1; j <= 6; j++) want[j] += (unsigned long)(at - last) >= (1ul << j);
                        last = at;
                    }
                    codes[i] = c;
                }
                dqt_scalar(pack_block)(codes, b, raw + k * 32u * b);
            }
            rst[0] = (uint64_t)1 << 63;
            for (j = 1; j < 6; j++) rst[j] = 0;
            dqt_scalar(elias_gaps)(raw, b, cut, rst, ref);
            dqt_scalar(elias_gaps)(raw + cut * 32u * b, b, nblk - cut, rst, ref);
            CHECKF(memcmp(ref, want, sizeof want) == 0, "elias_gaps__scalar b=%u trial %d: counts differ", b, trial);
            for (k = 0; DQT_EGAPS_K[k].name; k++) {
                uint64_t got[7] = {0, 0, 0, 0, 0, 0, 0}, st[6];
                st[0] = (uint64_t)1 << 63;
                for (j = 1; j < 6; j++) st[j] = 0;
                DQT_EGAPS_K[k].fn(raw, b, cut, st, got);
                DQT_EGAPS_K[k].fn(raw + cut * 32u * b, b, nblk - cut, st, got);
                CHECKF(memcmp(got, ref, sizeof ref) == 0 && memcmp(st, rst, sizeof st) == 0,
                       "elias_gaps__%s b=%u trial %d: counts or state differ", DQT_EGAPS_K[k].name, b, trial);
            }
            free(raw);
        }
}

/* ---------------------------------------------------------------- two-means */
/* Statistics: lanes and count carried in (random non-negative lanes, as a bucket cut into
 * pieces carries them), every length 0..300 and a few long ones, x and x + e, signed zeros,
 * subnormals, huge and tiny magnitudes; NaN/Inf only need a non-finite sum in the same group. */
static void test_tm_acc(void) {
    dq_t_rng r = {131};
    static const size_t big[] = {1000, 4099, 65537};
    float *buf = (float *)xmalloc(65537 * sizeof(float)), *ebuf = (float *)xmalloc(65537 * sizeof(float));
    size_t n, i, k, t;
    if (!DQT_TMACC_K[0].name) goto done;
    for (t = 0; t < 300 + 3 * 4; t++) {
        int mode = (int)(t % 4), nonfin;
        double p0[16], n0[16], pr[16], nr[16];
        uint64_t c0 = dq_t_next(&r) >> 40, cr;
        void *xb, *eb = NULL;
        const float *x, *e;
        n = t < 300 ? t : big[(t - 300) / 4];
        fill_stats(&r, buf, n, mode);
        fill_stats(&r, ebuf, n, mode == 3 ? 0 : mode);
        for (i = 0; i < n; i++)
            if (rndu(&r, 9) == 0) buf[i] = (dq_t_next(&r) & 1u) ? -0.0f : 0.0f;
        nonfin = mode == 3 && (has_nan(buf, n) || has_nan(ebuf, n));
        for (i = 0; i < 16; i++) {
            p0[i] = rndu(&r, 4) ? dq_t_unif(&r) * 100.0 : 0.0;
            n0[i] = rndu(&r, 4) ? dq_t_unif(&r) * 1e-20 : 0.0;
        }
        x = (const float *)in_block(buf, n, t & 3u, 4, &xb);
        e = (t & 4u) ? (const float *)in_block(ebuf, n, (t + 1u) & 3u, 4, &eb) : NULL;
        memcpy(pr, p0, sizeof pr);
        memcpy(nr, n0, sizeof nr);
        cr = c0;
        dqt_scalar(tm_acc)(x, e, n, pr, nr, &cr);
        for (k = 0; DQT_TMACC_K[k].name; k++) {
            double pg[16], ng[16];
            uint64_t cg = c0;
            int same = 1;
            memcpy(pg, p0, sizeof pg);
            memcpy(ng, n0, sizeof ng);
            DQT_TMACC_K[k].fn(x, e, n, pg, ng, &cg);
            for (i = 0; i < 16; i++)
                same &= same_dbl(pg[i], pr[i], nonfin) && same_dbl(ng[i], nr[i], nonfin) &&
                        (!nonfin || (isfinite(pg[i]) == isfinite(pr[i]) && isfinite(ng[i]) == isfinite(nr[i])));
            CHECKF(same && cg == cr, "tm_acc__%s n=%lu mode %d e=%d: lanes or count (%llu vs %llu) differ",
                   DQT_TMACC_K[k].name, (unsigned long)n, mode, e != NULL, (unsigned long long)cg, (unsigned long long)cr);
        }
        /* the scalar twin against its definition: magnitudes by sign bit, lane j % 16 */
        if (!nonfin) {
            double pd[16], nd[16];
            uint64_t cd = c0;
            memcpy(pd, p0, sizeof pd);
            memcpy(nd, n0, sizeof nd);
            for (i = 0; i < n; i++) {
                float v = e ? x[i] + e[i] : x[i];
                if (signbit(v)) {
                    nd[i % 16] += fabs((double)v);
                    cd++;
                } else {
                    pd[i % 16] += (double)v;
                }
            }
            CHECK(memcmp(pd, pr, sizeof pd) == 0 && memcmp(nd, nr, sizeof nd) == 0 && cd == cr);
        }
        free(xb);
        free(eb);
    }
done:
    free(buf);
    free(ebuf);
}

/* The block decoder: any 32 bytes, any row values (signed zeros, subnormals, huge), add or not. */
static void test_decode_block_tm(void) {
    dq_t_rng r = {137};
    static const float weights[] = {0.3f, 1.0f, -2.5f, 0.0f, -0.0f, 1e-20f};
    uint8_t raw[32];
    uint32_t codes[DQT_BLOCK];
    float rp[DQT_ROWS], rn[DQT_ROWS], acc0[DQT_BLOCK], ref[DQT_BLOCK];
    int trial;
    size_t i, k;
    for (trial = 0; trial < 200; trial++) {
        int add = trial & 1;
        float w = weights[(trial >> 1) % 6];
        void *ibase;
        const uint8_t *in;
        for (i = 0; i < 32; i++) raw[i] = trial < 4 ? (uint8_t)(trial == 0 ? 0 : trial == 1 ? 0xFF : 0x5A) : (uint8_t)rnd32(&r);
        for (i = 0; i < DQT_ROWS; i++) {
            rp[i] = pick_step(&r);
            rn[i] = -pick_step(&r);
        }
        for (i = 0; i < DQT_BLOCK; i++) acc0[i] = rndu(&r, 3) == 0 ? special(&r, 1.0f, 7.0f, 4) : gauss_f(&r, 1.0f);
        in = (const uint8_t *)in_block(raw, 32, (size_t)trial & 3u, 1, &ibase);
        memcpy(ref, acc0, sizeof ref);
        dqt_scalar(decode_block_tm)(in, rp, rn, w, add, ref);
        dqt_scalar(unpack_block)(in, 1u, codes);
        for (i = 0; i < DQT_BLOCK; i++) { /* code 1 (bit r of lane word i % 8): the row's negative mean */
            unsigned bit = (unsigned)(raw[4u * (i % 8u) + (i / 8u) / 8u] >> ((i / 8u) % 8u)) & 1u;
            float v = bit ? rn[i / 8u] : rp[i / 8u], want = add ? acc0[i] + w * v : v;
            if (codes[i] != bit || memcmp(&want, ref + i, 4) != 0) {
                CHECKF(0, "decode_block_tm__scalar trial %d i=%lu", trial, (unsigned long)i);
                break;
            }
        }
        for (k = 0; DQT_DECTM_K[k].name; k++) {
            gbuf go;
            float *out = (float *)out_block(&go, DQT_BLOCK, (size_t)(trial + 2) & 3u, 4);
            size_t d;
            memcpy(out, acc0, sizeof acc0);
            DQT_DECTM_K[k].fn(in, rp, rn, w, add, out);
            d = diff32(out, ref, DQT_BLOCK);
            CHECKF(d == DQT_BLOCK, "decode_block_tm__%s add=%d trial %d at %lu", DQT_DECTM_K[k].name, add, trial,
                   (unsigned long)d);
            CHECKF(guard_ok(&go), "decode_block_tm__%s wrote outside out[0..256)", DQT_DECTM_K[k].name);
            free(go.base);
        }
        free(ibase);
    }
}

/* The 1-bit quantizers with two-means constants: code 1 decodes to q.neg (any negative value,
 * not -step), so the residuals of every kernel match the scalar twin's. */
static void test_quant_tm(void) {
    dq_t_rng r = {139};
    float x[DQT_BLOCK + 37], rref[DQT_BLOCK + 37], rgot[DQT_BLOCK + 37];
    uint32_t cref[DQT_BLOCK + 37], cgot[DQT_BLOCK + 37];
    uint8_t pref[32], pgot[32];
    int trial;
    size_t i, k, n;
    for (trial = 0; trial < 60; trial++) {
        dqt_qctx q;
        dqt_qctx_make(&q, 1, pick_step(&r), 0, rnd32(&r), rnd32(&r), rnd32(&r));
        q.neg = -pick_step(&r);
        n = trial < 30 ? DQT_BLOCK : (size_t)trial + DQT_BLOCK - 23u;
        for (i = 0; i < n; i++) x[i] = rndu(&r, 7) == 0 ? ((dq_t_next(&r) & 1u) ? -0.0f : 0.0f) : gauss_f(&r, 2.0f);
        memcpy(rref, x, sizeof x);
        dqt_scalar(quant)(&q, rref, n, cref, rref);
        for (i = 0; i < n; i++) { /* the definition: sign bit, x - (code ? neg : step) */
            float v = signbit(x[i]) ? q.neg : q.step, d = x[i] - v;
            if (cref[i] != (signbit(x[i]) ? 1u : 0u) || dq_t_fbits(rref[i]) != dq_t_fbits(d)) break;
        }
        CHECKF(i == n, "quant__scalar two-means trial %d at %lu", trial, (unsigned long)i);
        for (k = 0; DQT_QUANT_K[k].name; k++) {
            memcpy(rgot, x, sizeof x);
            DQT_QUANT_K[k].fn(&q, rgot, n, cgot, rgot);
            CHECKF(memcmp(cgot, cref, n * 4u) == 0 && diff32(rgot, rref, n) == n, "quant__%s two-means trial %d",
                   DQT_QUANT_K[k].name, trial);
        }
        if (n != DQT_BLOCK) continue;
        memcpy(rref, x, sizeof x);
        dqt_scalar(quant_pack)(&q, rref, rref, pref);
        for (k = 0; DQT_QPACK_K[k].name; k++) {
            memcpy(rgot, x, sizeof x);
            DQT_QPACK_K[k].fn(&q, rgot, rgot, pgot);
            CHECKF(memcmp(pgot, pref, 32) == 0 && diff32(rgot, rref, n) == n, "quant_pack__%s two-means trial %d",
                   DQT_QPACK_K[k].name, trial);
        }
    }
}

/* ---------------------------------------------------------------- backend */
static void test_backend(void) {
    const char *isa = DQ_TEST_ISA, *be = dq_simd_backend();
    const char *expect = T_AVX512 ? "avx512" : T_AVX2 ? "avx2" : T_NEON ? "neon" : T_SSE2 ? "sse2" : "scalar";
    CHECK(be != NULL && be[0] != '\0');
    if (!be) return;
    CHECKF(strcmp(be, expect) == 0, "dq_simd_backend()=%s but this TU defines the %s kernels", be, expect);
    if (!strcmp(isa, "scalar") || !strcmp(isa, "sse2") || !strcmp(isa, "avx2") || !strcmp(isa, "avx512"))
        CHECKF(strcmp(isa, be) == 0, "build %s reports backend %s", isa, be);
    if (!strcmp(isa, "arm-scalar") || !strcmp(isa, "arm-neon"))
        CHECKF(strcmp(isa + 4, be) == 0, "build %s reports backend %s", isa, be);
    /* each family's kernel is the first of its list that this build compiles in: the selection
     * and the tables come from the one kernel list, and agree */
#define SELECTED(fam, table) CHECKF(dqt_is_selected(fam, table), "the selected " #fam " kernel is not %s", \
                                    (table)[0].name ? (table)[0].name : "the scalar twin")
    SELECTED(stats, DQT_STATS_K);
    SELECTED(compensate, DQT_COMP_K);
    SELECTED(quant, DQT_QUANT_K);
    SELECTED(quant_pack, DQT_QPACK_K);
    SELECTED(pack_block, DQT_PACK_K);
    SELECTED(decode_block, DQT_DEC_K);
    SELECTED(quant_tab, DQT_QTAB_K);
    SELECTED(decode_block_tab, DQT_DECTAB_K);
    SELECTED(tm_acc, DQT_TMACC_K);
    SELECTED(decode_block_tm, DQT_DECTM_K);
    SELECTED(shared_q, DQT_SHQ_K);
    SELECTED(elias_scan, DQT_ESCAN_K);
    SELECTED(elias_nz, DQT_ENZ_K);
    SELECTED(elias_gaps, DQT_EGAPS_K);
    SELECTED(sp_mask64, DQT_SPMASK_K);
    SELECTED(sk_hash, DQT_SKHASH_K);
    SELECTED(hstat_acc, DQT_HSTAT_K);
    SELECTED(f16_to_f32, DQT_F16IN_K);
    SELECTED(f32_to_f16, DQT_F16OUT_K);
    SELECTED(bf16_to_f32, DQT_BF16IN_K);
    SELECTED(f32_to_bf16, DQT_BF16OUT_K);
    SELECTED(r32_get, DQT_R32GET_K);
    SELECTED(r32_encode, DQT_R32ENC_K);
    SELECTED(crc32c, DQT_CRC_K);
    SELECTED(svb_decode, DQT_SVB_K);
#undef SELECTED
    /* the widest level's kernels are the ones the backend name promises */
    if (T_AVX512) CHECK(DQT_QUANT_K[0].name && strcmp(DQT_QUANT_K[0].name, "avx512") == 0);
    else if (T_AVX2) CHECK(DQT_QUANT_K[0].name && strcmp(DQT_QUANT_K[0].name, "avx2") == 0);
    else if (T_SSE2) CHECK(DQT_QUANT_K[0].name && strcmp(DQT_QUANT_K[0].name, "sse2") == 0);
    else CHECK(DQT_QUANT_K[0].name == NULL);
}

static void print_family(const char *fam, const char *const *names) {
    printf(" %s:", fam);
    if (!names[0]) printf(" -");
    for (; *names; names++) printf(" %s", *names);
}

static void announce(void) {
    const char *n[5];
    size_t k;
    const char *sets = T_AVX512 ? "sse2 avx2 avx512" : T_AVX2 ? "sse2 avx2" : T_SSE2 ? "sse2" : NULL;
    if (sets)
        printf("compared: %s vs scalar [%s build, backend %s] --", sets, DQ_TEST_ISA, dq_simd_backend());
    else
        printf("compared: none (no SIMD kernels in this build; backend %s) --", dq_simd_backend());
    for (k = 0; DQT_STATS_K[k].name; k++) n[k] = DQT_STATS_K[k].name;
    n[k] = NULL;
    print_family("stats", n);
    for (k = 0; DQT_COMP_K[k].name; k++) n[k] = DQT_COMP_K[k].name;
    n[k] = NULL;
    print_family("compensate", n);
    for (k = 0; DQT_QUANT_K[k].name; k++) n[k] = DQT_QUANT_K[k].name;
    n[k] = NULL;
    print_family("quant", n);
    for (k = 0; DQT_PACK_K[k].name; k++) n[k] = DQT_PACK_K[k].name;
    n[k] = NULL;
    print_family("pack", n);
    for (k = 0; DQT_DEC_K[k].name; k++) n[k] = DQT_DEC_K[k].name;
    n[k] = NULL;
    print_family("decode", n);
    printf("\n");
    fflush(stdout);
}

int main(void) {
    announce();
    RUN(test_backend);
    RUN(test_stats);
    RUN(test_compensate);
    RUN(test_quant_lengths);
    RUN(test_quant_large);
    RUN(test_quant_grid);
    RUN(test_quant_dither_edges);
    RUN(test_quant_nonfinite);
    RUN(test_quant_pack);
    RUN(test_pack);
    RUN(test_pack_tail);
    RUN(test_decode_block);
    RUN(test_elias_scan);
    RUN(test_elias_gaps);
    RUN(test_tm_acc);
    RUN(test_decode_block_tm);
    RUN(test_quant_tm);
    return dq_t_finish();
}
