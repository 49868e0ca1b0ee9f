/* test_simd_tab.c - the table-scheme kernels (NUQSGD, natural, TRUNC_NU) of this build against
 * their scalar twins, bit for bit: the quant_tab kernels (sse2, avx2, avx512) against the
 * scalar one (codes and residuals) and the decode_block_tab kernels (sse2, avx2) against the
 * scalar one (tests/internals.h: DQT_QTAB_K, DQT_DECTAB_K, dqt_scalar()); plus the
 * exponential-table check the SIMD kernels use to pick their lookup-free path. A TU compiled at
 * level L has every kernel of level <= L; the scalar build checks only the scalar twins' own
 * consistency (test_simd checks every family's selection).
 *
 * Tables: exponential (dqt_tab_exp), random increasing ones ending in 1 (spread, clustered,
 * tiny and subnormal first levels), power-law ones, and exponential tables with one entry off
 * by one ulp (or tab[0] = -0) so that the check must fall back. Inputs, tables and level
 * tables are exact-size heap blocks (an over-read shows under ASan/valgrind); outputs carry
 * guard bytes before and after. */
#include "dqsgd.h"
#include "harness.h"

#include <float.h>
#include <math.h>

#include "internals.h"

#define GUARD 32u
#define CANARY 0xA5u
#define TABN 128u /* largest table: 2^(8-1) entries */

/* ---------------------------------------------------------------- buffers */
static void *in_block(const void *src, size_t n, size_t off, size_t elsz, void **base) {
    unsigned char *b = (unsigned char *)xmalloc((n + off) * elsz);
    memset(b, 0x5A, off * elsz);
    if (n) memcpy(b + off * elsz, src, n * elsz);
    *base = b;
    return b + off * elsz;
}
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
static size_t diff32(const void *a, const void *b, size_t n) {
    const unsigned char *pa = (const unsigned char *)a, *pb = (const unsigned char *)b;
    size_t i;
    if (n == 0 || memcmp(a, b, n * 4u) == 0) return n;
    for (i = 0; i < n; i++)
        if (memcmp(pa + 4u * i, pb + 4u * i, 4) != 0) return i;
    return n;
}
static uint32_t fb(float f) { return dq_t_fbits(f); }

/* ---------------------------------------------------------------- data */
static uint32_t rnd32(dq_t_rng *r) { return (uint32_t)(dq_t_next(r) >> 32); }
static unsigned rndu(dq_t_rng *r, unsigned m) { return (unsigned)(dq_t_next(r) % m); }
static float rsign(dq_t_rng *r) { return (dq_t_next(r) & 1u) ? -1.0f : 1.0f; }
static unsigned tab_s(unsigned bits) { return (1u << (bits - 1u)) - 1u; }

#define TK_EXP 0     /* tab[l] = 2^(l-s) */
#define TK_RANDOM 1  /* sorted uniform draws */
#define TK_POWER 2   /* (l/s)^p */
#define TK_CLUSTER 3 /* most levels crowded near 0 or near 1, gaps down to one ulp */
#define TK_TINY 4    /* tiny or subnormal first levels */
#define TK_NEAREXP 5 /* exponential with one entry changed (the check must say no) */
#define TK_KINDS 6

/* A valid table (tab[0] = 0 < ... < tab[s] = 1) of the given kind; TK_NEAREXP may break the
 * order by one ulp only where that keeps it increasing. */
static void make_tab(dq_t_rng *r, unsigned bits, int kind, float *tab) {
    unsigned s = tab_s(bits), l;
    dqt_tab_exp(s, tab);
    switch (kind) {
        case TK_EXP: break;
        case TK_RANDOM:
        case TK_CLUSTER:
        case TK_TINY:
            for (;;) {
                for (l = 1; l < s; l++) {
                    double u = dq_t_unif(r);
                    if (kind == TK_CLUSTER) /* near 0, or a few ulps (2^-24) below 1 */
                        u = (dq_t_next(r) & 1u) ? pow(u, 8.0) : 1.0 - (double)(1u + rndu(r, 4u * s)) * 0x1p-24;
                    tab[l] = (float)u;
                }
                if (kind == TK_TINY) {
                    tab[1] = rndu(r, 2) ? dq_t_bitsf(1u + rnd32(r) % 0x7FFFFFu) : 1e-30f;
                    if (s > 2) tab[2] = rndu(r, 2) ? nextafterf(tab[1], 1.0f) : tab[2] * 1e-20f;
                }
                /* insertion sort of tab[1..s-1], then ties moved down by one ulp, from the top */
                for (l = 2; l < s; l++) {
                    float v = tab[l];
                    unsigned k = l;
                    while (k > 1 && tab[k - 1] > v) {
                        tab[k] = tab[k - 1];
                        k--;
                    }
                    tab[k] = v;
                }
                tab[s] = 1.0f;
                for (l = s - 1u; l >= 1u; l--)
                    if (!(tab[l] < tab[l + 1])) tab[l] = nextafterf(tab[l + 1], 0.0f);
                if (tab[1] > 0.0f) break;
            }
            if (kind == TK_CLUSTER && s > 2) tab[s - 1] = nextafterf(1.0f, 0.0f); /* one-ulp gap below 1 */
            break;
        case TK_POWER: {
            double p = 0.5 + 2.5 * dq_t_unif(r);
            for (l = 1; l < s; l++) tab[l] = (float)pow((double)l / (double)s, p);
            break;
        }
        default: { /* TK_NEAREXP */
            unsigned k = rndu(r, s); /* tab[s] stays 1 (a precondition) */
            if (k == 0)
                tab[0] = -0.0f; /* equal to 0 but not the exponential table's bits */
            else if (rndu(r, 2))
                tab[k] = nextafterf(tab[k], 0.0f); /* still above tab[k-1] (a power of two below) */
            else
                tab[k] = nextafterf(tab[k], 2.0f);
            break;
        }
    }
}

/* One adversarial input for table tab (s levels) and bucket scale: level magnitudes, their
 * neighbours, midpoints, exact stochastic thresholds, above the scale, zeros, subnormals. */
static float tab_special(dq_t_rng *r, const float *tab, unsigned s, float scale) {
    float sg = rsign(r), base = scale > 0.0f ? scale : 1.0f;
    unsigned l = rndu(r, s + 1u), l1 = l < s ? l + 1u : s;
    switch (rndu(r, 20)) {
        case 0: return 0.0f;
        case 1: return -0.0f;
        case 2: return sg * dq_t_bitsf(1u + rnd32(r) % 0x007FFFFFu);
        case 3: return sg * FLT_MIN;
        case 4:
        case 5: return sg * tab[l] * base; /* r on a level (exactly when the scale is 2^k) */
        case 6: return sg * nextafterf(tab[l] * base, FLT_MAX);
        case 7: return sg * nextafterf(tab[l] * base, 0.0f);
        case 8: return sg * (0.5f * (tab[l] + tab[l1])) * base;
        case 9: /* r = tab[l] + m 2^-24 (tab[l+1] - tab[l]): on a stochastic threshold */
            return sg * (tab[l] + (float)(rnd32(r) >> 8) * 5.96046448e-08f * (tab[l1] - tab[l])) * base;
        case 10: return sg * base * (1.0f + (float)rndu(r, 1000)); /* above the scale */
        case 11: return sg * nextafterf(base, FLT_MAX);
        case 12: return sg * nextafterf(base, 0.0f);
        case 13: return sg * FLT_MAX;
        case 14: return sg * ldexpf(1.0f, (int)rndu(r, 280) - 150) * base; /* every binade */
        default: return (float)dq_t_gauss(r) * base * 0.4f;
    }
}
static void fill_tab_input(dq_t_rng *r, float *x, size_t n, int mode, const float *tab, unsigned s, float scale) {
    size_t i;
    float base = scale > 0.0f ? scale : 1.0f;
    for (i = 0; i < n; i++) {
        if (mode == 0 || (mode == 1 && (dq_t_next(r) & 1u)))
            x[i] = (float)dq_t_gauss(r) * base * 0.3f;
        else
            x[i] = tab_special(r, tab, s, scale);
    }
}
static float nonfinite(dq_t_rng *r) {
    static const uint32_t pats[] = {0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u,
                                    0x7F800001u, 0x7FBFFFFFu, 0x7FC12345u, 0xFFFFFFFFu};
    return dq_t_bitsf(pats[rndu(r, 8)]);
}
/* Bucket scales: zero, powers of two (exact level boundaries), ordinary, tiny, huge. */
static float pick_scale(dq_t_rng *r) {
    switch (rndu(r, 10)) {
        case 0: return 0.0f;
        case 1:
        case 2:
        case 3: return ldexpf(1.0f, (int)rndu(r, 60) - 30);
        case 4: return (float)(0.01 + 100.0 * dq_t_unif(r));
        case 5: return DQT_MIN_SCALE;
        case 6: return 1.5e-30f;
        case 7: return dq_t_bitsf(DQT_MAX_SCALE_BITS); /* 2^126 */
        case 8: return 1e37f;
        default: return FLT_MAX; /* inv = 1 / FLT_MAX is subnormal */
    }
}

/* ---------------------------------------------------------------- quant_tab */
static long n_quant_cases, n_dec_cases;

static void quant_report(const char *kname, const dqt_qctx *q, const float *x, size_t n, size_t off, int resmode,
                         size_t d, const char *field, uint32_t got, uint32_t want) {
    CHECKF(0,
           "quant_tab__%s %s differs: n=%lu off=%lu bits=%u %s resmode=%d at i=%lu x=%08lx (%.9g) got %08lx want "
           "%08lx [scale=%08lx inv=%08lx lo=%08lx tab[1]=%08lx]",
           kname, field, (unsigned long)n, (unsigned long)off, q->bits, q->thresh < 0.0f ? "stoch" : "nearest", resmode,
           (unsigned long)d, (unsigned long)fb(x[d]), (double)x[d], (unsigned long)got, (unsigned long)want,
           (unsigned long)fb(q->scale), (unsigned long)fb(q->inv), (unsigned long)q->lo, (unsigned long)fb(q->tab[1]));
}

/* resmode: 0 = res NULL, 1 = separate res buffer, 2 = in place (res == x). */
static void quant_one(const dqt_qctx *q, const float *data, size_t n, size_t off, int resmode) {
    float *xr = (float *)xmalloc(n * 4u + 4u), *rr = (float *)xmalloc(n * 4u + 4u);
    uint32_t *cr = (uint32_t *)xmalloc(n * 4u + 4u);
    size_t k, d, i;
    unsigned s = tab_s(q->bits);
    if (n) memcpy(xr, data, n * 4u);
    dqt_scalar(quant_tab)(q, xr, n, cr, resmode == 0 ? NULL : resmode == 1 ? rr : xr);
    if (resmode == 2 && n) memcpy(rr, xr, n * 4u);
    for (i = 0; i < n; i++) /* codes fit in b bits; a zero level never carries a sign */
        if ((cr[i] >> q->bits) != 0 || ((cr[i] & s) == 0u && cr[i] != 0u)) {
            CHECKF(0, "quant_tab__scalar: code %08lx at %lu", (unsigned long)cr[i], (unsigned long)i);
            break;
        }
    n_quant_cases++;
    for (k = 0; DQT_QTAB_K[k].name; k++) {
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
        DQT_QTAB_K[k].fn(q, x, n, codes, res);
        d = diff32(codes, cr, n);
        if (d < n) quant_report(DQT_QTAB_K[k].name, q, data, n, off, resmode, d, "code", codes[d], cr[d]);
        if (res) {
            d = diff32(res, rr, n);
            if (d < n) quant_report(DQT_QTAB_K[k].name, q, data, n, off, resmode, d, "residual", fb(res[d]), fb(rr[d]));
        }
        if (resmode != 2) CHECKF(n == 0 || memcmp(x, data, n * 4u) == 0, "quant_tab__%s modified x", DQT_QTAB_K[k].name);
        CHECKF(guard_ok(&gc), "quant_tab__%s wrote outside codes[0..%lu)", DQT_QTAB_K[k].name, (unsigned long)n);
        if (gr.base) CHECKF(guard_ok(&gr), "quant_tab__%s wrote outside res[0..%lu)", DQT_QTAB_K[k].name, (unsigned long)n);
        if (gx.base) CHECKF(guard_ok(&gx), "quant_tab__%s wrote outside x[0..%lu)", DQT_QTAB_K[k].name, (unsigned long)n);
        free(gc.base);
        free(gr.base);
        free(gx.base);
        free(xbase);
    }
    free(xr);
    free(rr);
    free(cr);
}

/* One random case: table kind, scale, key, lo (sometimes wrapping inside the segment), data
 * shape; both roundings; every res mode or one. The table is an exact-size heap copy. */
static void quant_case(dq_t_rng *r, float *buf, size_t n, size_t off, unsigned bits, int kind, int all_res) {
    float tabv[TABN];
    unsigned s = tab_s(bits);
    void *tbase;
    const float *tab;
    dqt_qctx q;
    float scale = pick_scale(r);
    uint32_t k0 = rnd32(r), k1h = rnd32(r), lo;
    int stoch, resmode;
    switch (rndu(r, 4)) {
        case 0: lo = 0; break;
        case 1: lo = 0xFFFFFFFFu - (uint32_t)(n / 2u); break;
        default: lo = rnd32(r); break;
    }
    make_tab(r, bits, kind, tabv);
    tab = (const float *)in_block(tabv, s + 1u, 0, 4, &tbase);
    fill_tab_input(r, buf, n, (int)((n + bits + (unsigned)kind) % 3u), tab, s, scale);
    for (stoch = 1; stoch >= 0; stoch--) {
        dqt_qtab_make(&q, bits, tab, scale, stoch, k0, k1h, lo);
        if (all_res)
            for (resmode = 0; resmode < 3; resmode++) quant_one(&q, buf, n, off, resmode);
        else
            quant_one(&q, buf, n, off, (int)((n + off + bits + (unsigned)stoch) % 3u));
    }
    free(tbase);
}

static void test_quant_tab_lengths(void) {
    dq_t_rng r = {101};
    float *buf = (float *)xmalloc(300 * sizeof(float));
    size_t n, off;
    unsigned bits;
    if (!DQT_QTAB_K[0].name) goto done;
    for (n = 0; n <= 300; n++)
        for (off = 0; off < 4; off++)
            for (bits = 2; bits <= 8; bits++) quant_case(&r, buf, n, off, bits, (int)((n + off) % TK_KINDS), n < 40);
done:
    free(buf);
}

static void test_quant_tab_kinds(void) {
    dq_t_rng r = {102};
    static const size_t sizes[] = {256, 1000, 4099};
    float *buf = (float *)xmalloc(4099 * sizeof(float));
    size_t i;
    unsigned bits;
    int kind, rep;
    if (!DQT_QTAB_K[0].name) goto done;
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (bits = 2; bits <= 8; bits++)
            for (kind = 0; kind < TK_KINDS; kind++)
                for (rep = 0; rep < 4; rep++) quant_case(&r, buf, sizes[i], (size_t)rep, bits, kind, rep == 0);
done:
    free(buf);
}

/* Every binade of r and both ends of each, for the exponential path's exponent arithmetic:
 * with scale 1 (inv 1) and 2^k, x = +-2^e * {1, 1 + ulp, 2 - ulp, random mantissa}. */
static void test_quant_tab_binades(void) {
    float *x = (float *)xmalloc(256u * 8u * sizeof(float));
    float tabv[TABN];
    dq_t_rng r = {103};
    unsigned bits, e;
    if (!DQT_QTAB_K[0].name) goto done;
    for (bits = 2; bits <= 8; bits++) {
        size_t n = 0;
        int sc, stoch;
        for (e = 0; e < 255u; e++) {
            uint32_t m = rnd32(&r) & 0x7FFFFFu;
            x[n++] = dq_t_bitsf(e << 23);
            x[n++] = -dq_t_bitsf(e << 23 | 1u);
            x[n++] = dq_t_bitsf(e << 23 | 0x7FFFFFu);
            x[n++] = -dq_t_bitsf(e << 23 | m);
            x[n++] = dq_t_bitsf(e << 23 | (m >> 1));
            x[n++] = dq_t_bitsf(e << 23 | 0x400000u);
            x[n++] = -dq_t_bitsf(e << 23 | 0x7FFFFEu);
            x[n++] = dq_t_bitsf(e << 23 | (m | 1u));
        }
        dqt_tab_exp(tab_s(bits), tabv);
        for (sc = 0; sc < 3; sc++)
            for (stoch = 0; stoch < 2; stoch++) {
                dqt_qctx q;
                float scale = sc == 0 ? 1.0f : sc == 1 ? 0.0078125f : 1e-3f;
                dqt_qtab_make(&q, bits, tabv, scale, stoch, rnd32(&r), rnd32(&r), rnd32(&r));
                quant_one(&q, x, n, bits & 3u, 1);
            }
    }
done:
    free(x);
}

/* Inf and NaN never reach the kernels inside the library, but the twins should still agree. */
static void test_quant_tab_nonfinite(void) {
    dq_t_rng r = {104};
    float buf[200], tabv[TABN];
    size_t n, i;
    unsigned bits;
    if (!DQT_QTAB_K[0].name) return;
    for (n = 1; n <= 200; n += 13)
        for (bits = 2; bits <= 8; bits++) {
            dqt_qctx q;
            int stoch;
            float scale = (n & 1u) ? 0.0f : (float)(0.5 + dq_t_unif(&r));
            make_tab(&r, bits, (int)(n % TK_KINDS), tabv);
            for (i = 0; i < n; i++) buf[i] = rndu(&r, 4) == 0 ? nonfinite(&r) : (float)dq_t_gauss(&r);
            for (stoch = 0; stoch < 2; stoch++) {
                dqt_qtab_make(&q, bits, tabv, scale, stoch, rnd32(&r), rnd32(&r), rnd32(&r));
                quant_one(&q, buf, n, n & 3u, (int)(n % 3u));
            }
        }
}

/* The lookup-free path's precondition: exactly the exponential table passes. */
static int is_exp_table(const float *tab, unsigned s) {
    float e[TABN];
    unsigned k;
    dqt_tab_exp(s, e);
    for (k = 0; k <= s; k++)
        if (fb(e[k]) != fb(tab[k])) return 0;
    return 1;
}
static void isexp_check(const float *tab, unsigned bits, int want, int rep) {
    unsigned s = tab_s(bits);
    (void)tab;
    (void)s;
    (void)want;
    (void)rep;
#if DQT_HAS(SSE2)
    CHECKF(dqt_kernel(tab_isexp, sse2)(tab, s) == want, "isexp__sse2 bits %u case %d: want %d", bits, rep, want);
#endif
#if DQT_HAS(AVX2)
    CHECKF(dqt_kernel(tab_isexp, avx2)(tab, s) == want, "isexp__avx2 bits %u case %d: want %d", bits, rep, want);
#endif
#if DQT_HAS(AVX512)
    CHECKF(dqt_kernel(tab_isexp, avx512)(tab, s) == want, "isexp__avx512 bits %u case %d: want %d", bits, rep, want);
#endif
}
static void test_tab_isexp(void) {
    dq_t_rng r = {105};
    float tabv[TABN];
    unsigned bits, k;
    int rep;
    for (bits = 2; bits <= 8; bits++) {
        unsigned s = tab_s(bits);
        for (rep = 0; rep < 40; rep++) {
            void *tb;
            const float *tab;
            make_tab(&r, bits, rep == 0 ? TK_EXP : rep < 30 ? TK_NEAREXP : (int)rndu(&r, TK_KINDS), tabv);
            tab = (const float *)in_block(tabv, s + 1u, 0, 4, &tb);
            isexp_check(tab, bits, is_exp_table(tabv, s), rep);
            free(tb);
        }
        for (k = 0; k <= s; k++) { /* each entry changed in turn, tab[s] included */
            dqt_tab_exp(s, tabv);
            tabv[k] = k == 0 ? -0.0f : nextafterf(tabv[k], 0.0f);
            isexp_check(tabv, bits, 0, 1000 + (int)k);
            tabv[k] = k == 0 ? dq_t_bitsf(1u) : nextafterf(dq_t_bitsf(fb(tabv[k]) + 1u), 2.0f);
            isexp_check(tabv, bits, 0, 2000 + (int)k);
        }
    }
}

/* ---------------------------------------------------------------- decode_block_tab */
static float pick_rowscale(dq_t_rng *r) {
    switch (rndu(r, 8)) {
        case 0: return 0.0f;
        case 1: return dq_t_bitsf(1u + rnd32(r) % 0x7FFFFFu);
        case 2: return dq_t_bitsf(DQT_MAX_SCALE_BITS);
        case 3: return FLT_MAX;
        case 4: return 1e-30f;
        case 5: return ldexpf(1.0f, (int)rndu(r, 60) - 30);
        default: return (float)(1e-3 + dq_t_unif(r));
    }
}

static void test_decode_block_tab(void) {
    dq_t_rng r = {106};
    static const float weights[] = {1.0f, 0.3f, -2.5f, 0.0f, -0.0f, 1e-20f, 0.5f};
    uint8_t raw[32 * 8];
    uint32_t codes[DQT_BLOCK];
    float rowscale[DQT_ROWS], acc0[DQT_BLOCK], ref[DQT_BLOCK], tabv[TABN];
    unsigned b;
    int trial;
    for (b = 2; b <= 8; b++)
        for (trial = 0; trial < 168; trial++) {
            size_t nbytes = 32u * b, i, k, off = (size_t)trial & 3u;
            unsigned s = tab_s(b);
            int add = trial & 1;
            float w = weights[(trial >> 1) % 7];
            void *ibase, *sbase, *tbase;
            const uint8_t *in;
            const float *rs, *tab;
            make_tab(&r, b, (trial >> 2) % TK_KINDS, tabv);
            if (trial % 5 == 0) { /* every code value in turn, both signs */
                for (i = 0; i < DQT_BLOCK; i++) codes[i] = (uint32_t)(i + (size_t)trial) & ((1u << b) - 1u);
                dqt_scalar(pack_block)(codes, b, raw);
            } else {
                for (i = 0; i < nbytes; i++) raw[i] = (uint8_t)rnd32(&r);
            }
            for (i = 0; i < DQT_ROWS; i++) rowscale[i] = (rndu(&r, 3) == 0 && i) ? rowscale[i - 1] : pick_rowscale(&r);
            for (i = 0; i < DQT_BLOCK; i++)
                acc0[i] = rndu(&r, 4) == 0 ? tab_special(&r, tabv, s, 1.0f) : (float)dq_t_gauss(&r);
            in = (const uint8_t *)in_block(raw, nbytes, off * 4u + (size_t)((trial >> 2) & 3), 1, &ibase);
            rs = (const float *)in_block(rowscale, DQT_ROWS, (off + 1u) & 3u, 4, &sbase);
            tab = (const float *)in_block(tabv, s + 1u, 0, 4, &tbase);
            memcpy(ref, acc0, sizeof ref);
            dqt_scalar(decode_block_tab)(in, b, tab, rs, w, add, ref);
            dqt_scalar(unpack_block)(in, b, codes);
            for (i = 0; i < DQT_BLOCK; i++) { /* the scalar twin agrees with tab_value */
                float v = dqt_tab_value(codes[i], b, tabv, rowscale[i / 8u]), t = w * v, want = add ? acc0[i] + t : v;
                if (memcmp(&want, ref + i, 4) != 0) {
                    CHECKF(0, "decode_block_tab__scalar b=%u i=%lu: %08lx vs %08lx", b, (unsigned long)i,
                           (unsigned long)fb(ref[i]), (unsigned long)fb(want));
                    break;
                }
            }
            n_dec_cases++;
            for (k = 0; DQT_DECTAB_K[k].name; k++) {
                gbuf go;
                float *out = (float *)out_block(&go, DQT_BLOCK, (off + 2u) & 3u, 4);
                size_t d;
                memcpy(out, acc0, sizeof acc0);
                DQT_DECTAB_K[k].fn(in, b, tab, rs, w, add, out);
                d = diff32(out, ref, DQT_BLOCK);
                CHECKF(d == DQT_BLOCK,
                       "decode_block_tab__%s b=%u add=%d w=%g trial %d at %lu: code %lx scale %08lx got %08lx want "
                       "%08lx",
                       DQT_DECTAB_K[k].name, b, add, (double)w, trial, (unsigned long)d,
                       (unsigned long)codes[d % DQT_BLOCK], (unsigned long)fb(rowscale[(d % DQT_BLOCK) / 8u]),
                       (unsigned long)fb(out[d % DQT_BLOCK]), (unsigned long)fb(ref[d % DQT_BLOCK]));
                CHECKF(guard_ok(&go), "decode_block_tab__%s wrote outside out[0..256)", DQT_DECTAB_K[k].name);
                free(go.base);
            }
            CHECK(memcmp(tab, tabv, 4u * (s + 1u)) == 0);
            free(ibase);
            free(sbase);
            free(tbase);
        }
}

/* ---------------------------------------------------------------- through the API
 * dq_encode with the selected kernels against a payload built here from the scalar twins
 * (dqt_scalar(quant_tab) per bucket segment, the scalar packers) with the message's own
 * bucket scales; then dq_decode and dq_decode_add against dqt_tab_value of those codes.
 * NUQSGD (4 bits), natural (8 bits), TRUNC_NU (4 bits), both roundings, uneven n. */
static void api_case(dq_t_rng *r, int sc, int nearest, size_t n, size_t bucket) {
    size_t len = 0, i, nb = (n + bucket - 1u) / bucket, cap = dq_encode_bound(n, 8);
    unsigned bits = sc == 1 ? 8u : 4u, s = tab_s(bits), j;
    dq_params p;
    dqt_key key;
    float lv[7], tab[TABN];
    float *x = (float *)xmalloc(n * sizeof(float)), *out = (float *)xmalloc(n * sizeof(float));
    float *acc = (float *)xmalloc(n * sizeof(float)), *acc0 = (float *)xmalloc(n * sizeof(float));
    uint32_t *codes = (uint32_t *)xmalloc((n + DQT_BLOCK) * sizeof(uint32_t));
    uint8_t *msg = (uint8_t *)xmalloc(cap), *pay = (uint8_t *)xmalloc(cap), *payload;
    memset(&p, 0, sizeof p);
    p.coder = DQ_CODER_FIXED_ONLY; /* the payload is read below */
    p.scheme = sc == 0 ? DQ_SCHEME_NUQSGD : sc == 1 ? DQ_SCHEME_NATURAL : DQ_SCHEME_TRUNC_NU;
    p.bits = bits;
    p.bucket = (uint32_t)bucket;
    p.rounding = nearest ? DQ_ROUND_NEAREST : DQ_ROUND_STOCHASTIC;
    p.seed = dq_t_next(r);
    p.step = rndu(r, 1000);
    dqt_tab_exp(s, tab);
    if (sc == 2) {
        for (j = 0; j < 7; j++) lv[j] = (float)pow((double)(j + 1) / 7.0, 1.5);
        lv[6] = 1.0f;
        p.alpha = 1.5f;
        p.levels = lv;
        memcpy(tab + 1, lv, sizeof lv);
    }
    for (i = 0; i < n; i++) x[i] = (float)dq_t_gauss(r) * (rndu(r, 50) == 0 ? 20.0f : 1.0f);
    CHECK(dq_encode(&p, x, n, NULL, msg, cap, &len) == DQ_OK);
    key = dqt_key_make(p.seed, p.step, p.stream);
    for (i = 0; i < n; i += bucket) { /* the codes, from the scalar twin */
        dqt_qctx q;
        size_t cnt = n - i < bucket ? n - i : bucket;
        float scale = dq_t_bitsf(dq_t_ld32(msg + DQ_HEADER_SIZE + 4u * (i / bucket)));
        dqt_qtab_make(&q, bits, tab, scale, !nearest, key.k0, dqt_key_hi(key, 0), (uint32_t)i);
        dqt_scalar(quant_tab)(&q, x + i, cnt, codes + i, NULL);
    }
    payload = msg + DQ_HEADER_SIZE + 4u * (nb + (sc == 2 ? s : 0u));
    for (i = 0; i < n; i += DQT_BLOCK) {
        if (n - i >= DQT_BLOCK)
            dqt_scalar(pack_block)(codes + i, bits, pay + (i / DQT_BLOCK) * 32u * bits);
        else
            dqt_pack_tail(codes + i, n - i, bits, pay + (i / DQT_BLOCK) * 32u * bits);
    }
    CHECKF(memcmp(pay, payload, (n * bits + 7u) / 8u) == 0, "scheme %d nearest %d n=%lu: payload differs", sc, nearest,
           (unsigned long)n);
    for (i = 0; i < n; i++) acc[i] = acc0[i] = (float)dq_t_gauss(r);
    CHECK(dq_decode(msg, len, out, n) == DQ_OK);
    CHECK(dq_decode_add(msg, len, 0.75f, acc, n) == DQ_OK);
    for (i = 0; i < n; i++) {
        float scale = dq_t_bitsf(dq_t_ld32(msg + DQ_HEADER_SIZE + 4u * (i / bucket)));
        float v = dqt_tab_value(codes[i], bits, tab, scale), t = 0.75f * v, want = acc0[i] + t;
        if (memcmp(&v, out + i, 4) != 0 || memcmp(&want, acc + i, 4) != 0) {
            CHECKF(0, "scheme %d n=%lu: decode(_add) at %lu: %08lx %08lx want %08lx %08lx", sc, (unsigned long)n,
                   (unsigned long)i, (unsigned long)fb(out[i]), (unsigned long)fb(acc[i]), (unsigned long)fb(v),
                   (unsigned long)fb(want));
            break;
        }
    }
    free(x);
    free(out);
    free(acc);
    free(acc0);
    free(codes);
    free(msg);
    free(pay);
}
static void test_api_schemes(void) {
    static const size_t ns[] = {1, 7, 255, 256, 1000, 4096 + 77};
    static const size_t buckets[] = {8, 128, 512};
    dq_t_rng r = {107};
    size_t ni, bi;
    int sc, nearest;
    for (ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
        for (bi = 0; bi < sizeof buckets / sizeof buckets[0]; bi++)
            for (sc = 0; sc < 3; sc++)
                for (nearest = 0; nearest < 2; nearest++) api_case(&r, sc, nearest, ns[ni], buckets[bi]);
}

int main(void) {
    size_t k;
    printf("table kernels vs scalar [%s build, backend %s] -- quant_tab:", DQ_TEST_ISA, dq_simd_backend());
    if (!DQT_QTAB_K[0].name) printf(" -");
    for (k = 0; DQT_QTAB_K[k].name; k++) printf(" %s", DQT_QTAB_K[k].name);
    printf(" decode_block_tab:");
    if (!DQT_DECTAB_K[0].name) printf(" -");
    for (k = 0; DQT_DECTAB_K[k].name; k++) printf(" %s", DQT_DECTAB_K[k].name);
    printf("\n");
    fflush(stdout);
    RUN(test_tab_isexp);
    RUN(test_quant_tab_lengths);
    RUN(test_quant_tab_kinds);
    RUN(test_quant_tab_binades);
    RUN(test_quant_tab_nonfinite);
    RUN(test_decode_block_tab);
    RUN(test_api_schemes);
    printf("quant_tab cases: %ld (each against %lu kernels), decode_block_tab cases: %ld\n", n_quant_cases,
           (unsigned long)(sizeof DQT_QTAB_K / sizeof DQT_QTAB_K[0] - 1u), n_dec_cases);
    return dq_t_finish();
}
