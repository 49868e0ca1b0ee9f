/* fuzz_simd.c - every SIMD kernel compiled into this build against its scalar twin, on inputs
 * the fuzzer chooses: stats, compensate, quant, quant_pack, pack_block, decode_block,
 * elias_scan (the families behind dqt_k(), tests/internals.h), and the crc32c kernel. The bytes
 * pick the kernel (byte 0 mod 8: 0 stats, 1 compensate, 2 quant, 3 quant_pack, 4 pack_block,
 * 5 decode_block, 6 crc32c or, with bit 3 of byte 0 set, elias_nz and elias_gaps, 7 quant or, with
 * bit 3 of byte 0 set, elias_scan), lengths 0..1200, element offsets 0..15 and byte offsets 0..63
 * (alignment), widths 1..16, rounding, scale, generator key and index, residual mode, weights,
 * row steps, and values: raw float bit patterns (byte 1 odd) or one of ~30 classes (zeros,
 * subnormals, FLT_MAX, Inf, NaN payloads, exact level and half-level boundaries and their
 * neighbours, stochastic thresholds, values above the top level, x and -x pairs). Past the
 * end of the input the bytes come from a generator seeded with the input, so short inputs
 * still reach long vectors. Results must match bit for bit (memcmp); a mismatch prints the case
 * and aborts. Inputs are exact-size heap blocks (ASan sees any over-read) and outputs carry
 * guard bytes.
 *
 * Preconditions come from the encoder and decoder (see tests/test_simd.c): the quantizer's
 * constants derive from a bucket scale that is 0 or in [2^-100, FLT_MAX] as the encoder
 * derives them (smax = levels, thresh -1 or 0.5, inv = smax/scale or 0.5/scale, step =
 * dqt_step); codes given to pack_block fit in b bits; row steps are non-negative and finite
 * (the decoder validates the scales); the decode weight and accumulator are arbitrary.
 * The tolerated differences are those tests/test_simd.c allows: when two different NaNs meet
 * in one addition (x + e with both NaN, acc + w*v with both NaN), which one comes out depends on
 * operand order the C source does not pin; and the stats sums, once a NaN enters them, may be
 * different NaNs (see stats_nan_in). Such results must still both be NaN.
 *
 * Build: make fuzz (libFuzzer), or the replay driver in make test (tests/fuzz/replay.c). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dqsgd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---------------------------------------------------------------- kernels in this build */
#include "../internals.h"

static void fz_fail(const char *what) {
    fprintf(stderr, "fuzz_simd: %s\n", what);
    fflush(stderr);
    abort();
}

/* The kernel each family selects is the first of its table (or the scalar twin): among those
 * compared. */
static void fz_check_selection(void) {
    if (!dqt_is_selected(stats, DQT_STATS_K) || !dqt_is_selected(compensate, DQT_COMP_K) ||
        !dqt_is_selected(quant, DQT_QUANT_K) || !dqt_is_selected(quant_pack, DQT_QPACK_K) ||
        !dqt_is_selected(pack_block, DQT_PACK_K) || !dqt_is_selected(decode_block, DQT_DEC_K) ||
        !dqt_is_selected(elias_scan, DQT_ESCAN_K) || !dqt_is_selected(crc32c, DQT_CRC_K))
        fz_fail("a selected kernel is not the first of its family's table");
}

/* ---------------------------------------------------------------- input bytes */
static uint32_t fz_fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static float fz_bitsf(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
/* The splitmix64 finalizer: bytes past the end of the input. */
static uint64_t fz_mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

typedef struct fz_in {
    const uint8_t *p;
    size_t n, i;
    uint64_t s; /* generator state for bytes past the end */
    int classes; /* values: 0 = raw bit patterns, 1 = a class byte, then payload */
} fz_in;

static unsigned fz_u8(fz_in *in) {
    if (in->i < in->n) return in->p[in->i++];
    in->s += 0x9E3779B97F4A7C15u;
    return (unsigned)(fz_mix64(in->s) >> 56);
}
static uint32_t fz_u16(fz_in *in) {
    uint32_t v = fz_u8(in);
    return v | (uint32_t)fz_u8(in) << 8;
}
static uint32_t fz_u32(fz_in *in) {
    uint32_t v = fz_u16(in);
    return v | fz_u16(in) << 16;
}

/* A value: raw bits, or a class chosen for the quantizer with constants inv and smax (exact
 * level boundaries when inv is a power of two). partner: x of the same index, for e. */
static float fz_value(fz_in *in, float inv, float smax, unsigned bits, const float *partner) {
    uint32_t w, sgn;
    float s, lv;
    unsigned c;
    if (!in->classes) return fz_bitsf(fz_u32(in));
    c = fz_u8(in) % 34u;
    if (c >= 30u) return fz_bitsf(fz_u32(in)); /* raw bits */
    w = fz_u32(in);
    sgn = w & 0x80000000u;
    s = sgn ? -1.0f : 1.0f;
    lv = (float)((w >> 8) % ((uint32_t)smax + 1u)); /* an integer level 0..smax */
    if (inv == 0.0f && c >= 10u && c <= 19u) c = 29u;
    switch (c) {
        case 0: return 0.0f;
        case 1: return -0.0f;
        case 2: return fz_bitsf(sgn | 1u); /* smallest subnormal */
        case 3: return fz_bitsf(sgn | ((w & 0x007FFFFFu) ? (w & 0x007FFFFFu) : 1u)); /* subnormal */
        case 4: return s * FLT_MAX;
        case 5: return s * 3e38f;
        case 6: return s * FLT_MIN;
        case 7: return fz_bitsf(sgn | 0x7F800000u); /* Inf */
        case 8: return fz_bitsf(sgn | 0x7F800000u | ((w & 0x007FFFFFu) ? (w & 0x007FFFFFu) : 1u)); /* NaN */
        case 9: return fz_bitsf(sgn | 0x7FC00000u); /* default NaN */
        case 10: return s * (lv / inv); /* r == integer */
        case 11: return s * ((lv + 0.5f) / inv); /* r == integer + 0.5 */
        case 12: return s * nextafterf(lv / inv, FLT_MAX); /* around the boundaries */
        case 13: return s * nextafterf(lv / inv, 0.0f);
        case 14: return s * nextafterf((lv + 0.5f) / inv, FLT_MAX);
        case 15: return s * nextafterf((lv + 0.5f) / inv, 0.0f);
        case 16: return s * ((smax + 1.0f + (float)(w & 1023u)) / inv); /* above the top level */
        case 17: return s * (smax / inv) * 1.0001f;
        case 18: /* on a stochastic threshold: fractional part == m * 2^-24 */
            if (bits == 1) return ((float)(w & 0xFFFFFFu) * 5.96046448e-08f - 0.5f) / inv;
            return s * ((lv + (float)(w & 0xFFFFFFu) * 5.96046448e-08f) / inv);
        case 19: return s * ((float)(w & 63u) * 0.125f / inv); /* small dyadic multiples */
        case 20: return s * 1e30f;
        case 21: return s * 1e-30f;
        case 22: return fz_bitsf(sgn | (0x77000000u + (w & 0x07FFFFFFu))); /* huge: 2^111 .. 2^127 */
        case 23: return fz_bitsf(sgn | (w & 0x00FFFFFFu)); /* subnormal or just above */
        case 24: return partner ? -*partner : s * lv;       /* x + e == +0 */
        case 25: return partner ? *partner : -lv;           /* x + e doubles (may overflow) */
        case 26: return partner ? (*partner == 0.0f ? 1.0f : -*partner * 0.5f) : s * 0.5f;
        default: { /* an ordinary value on the quantizer's scale */
            float base = inv > 0.0f ? smax / inv : 1.0f;
            float u = (float)(w & 0xFFFFu) * (1.0f / 65536.0f);
            if (!(base < FLT_MAX / 4.0f)) base = 1e30f;
            return s * base * u * (c == 27u ? 0.3f : 1.0f);
        }
    }
}

static void fz_values(fz_in *in, float *x, size_t n, float inv, float smax, unsigned bits, const float *partner) {
    size_t i;
    for (i = 0; i < n; i++) x[i] = fz_value(in, inv, smax, bits, partner ? partner + i : NULL);
}

/* ---------------------------------------------------------------- buffers */
#define GUARD 32u
#define CANARY 0xA5u

static void *fz_alloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1u);
    if (!p) fz_fail("out of memory");
    return p;
}
/* Input block: `off` bytes of slack in front, nothing after (reading element n faults under
 * ASan). Returns the element pointer; *base is what to free. */
static void *in_block(const void *src, size_t n, size_t off, size_t elsz, void **base) {
    unsigned char *b = (unsigned char *)fz_alloc(n * elsz + off);
    memset(b, 0x5A, off);
    if (n) memcpy(b + off, src, n * elsz);
    *base = b;
    return b + off;
}
/* Output block with guard bytes around: [GUARD + off bytes][n*elsz][GUARD], initialised from
 * init when given. */
typedef struct {
    unsigned char *base;
    size_t lead, body;
} gbuf;
static void *out_block(gbuf *g, const void *init, size_t n, size_t off, size_t elsz) {
    g->lead = GUARD + off;
    g->body = n * elsz;
    g->base = (unsigned char *)fz_alloc(g->lead + g->body + GUARD);
    memset(g->base, CANARY, g->lead + g->body + GUARD);
    if (init && n) memcpy(g->base + g->lead, init, g->body);
    return g->base + g->lead;
}
static void guard_check(const gbuf *g, const char *kernel) {
    size_t i;
    for (i = 0; i < g->lead + g->body + GUARD; i++) {
        if (i == g->lead) i += g->body;
        if (i < g->lead + g->body + GUARD && g->base[i] != CANARY) {
            fprintf(stderr, "fuzz_simd: %s wrote outside its output\n", kernel);
            abort();
        }
    }
}

static int fz_isnan(float f) { return (fz_fbits(f) & 0x7FFFFFFFu) > 0x7F800000u; }
/* The quiet NaN an operation returns for a NaN operand (x86 keeps sign and payload). */
static uint32_t fz_quiet(float f) { return fz_fbits(f) | 0x00400000u; }
/* Two NaN operands that would give different results depending on their order. */
static int fz_nan_pair(float a, float b) { return fz_isnan(a) && fz_isnan(b) && fz_quiet(a) != fz_quiet(b); }

/* ---------------------------------------------------------------- stats */
/* Whether a NaN enters the stats sums (an element of x, or of x + e, is NaN). The sums are then
 * NaN, and which NaN depends on operand order and on where |.| is taken: the scalar reference
 * squares |x|, the AVX2 kernel squares x (the same for every number, but the sign of a NaN
 * survives; tests/test_simd.c allows NaN payloads to differ the same way). */
static int stats_nan_in(const float *x, const float *e, size_t n) {
    size_t i;
    for (i = 0; i < n; i++)
        if (fz_isnan(e ? x[i] + e[i] : x[i])) return 1;
    return 0;
}
static int same_dbl(double a, double b, int nan_ok) {
    if (memcmp(&a, &b, sizeof a) == 0) return 1;
    return nan_ok && a != a && b != b;
}

static void fz_stats(fz_in *in) {
    static const unsigned masks[] = {DQT_ST(SQ), DQT_ST(ABS), DQT_ST(MAX), DQT_ST(SQ) | DQT_ST(ABS) | DQT_ST(MAX)};
    unsigned a = fz_u8(in), mask = masks[a & 3u];
    int with_e = (a & 4u) != 0;
    size_t n = (a & 8u) ? fz_u8(in) % 80u : fz_u16(in) % 1201u;
    size_t off = fz_u8(in), xoff = (off & 15u) * 4u, eoff = (off >> 4) * 4u, k;
    float *xd = (float *)fz_alloc(n * 4u), *ed = with_e ? (float *)fz_alloc(n * 4u) : NULL;
    void *xb, *eb = NULL;
    const float *x, *e = NULL;
    dqt_stats ref, got;
    int nan_ok;
    fz_values(in, xd, n, 1.0f, 7.0f, 4, NULL);
    if (with_e) fz_values(in, ed, n, 1.0f, 7.0f, 4, xd);
    x = (const float *)in_block(xd, n, xoff, 4, &xb);
    if (with_e) e = (const float *)in_block(ed, n, eoff, 4, &eb);
    nan_ok = stats_nan_in(x, e, n);
    dqt_scalar(stats)(x, e, n, mask, &ref);
    for (k = 0; DQT_STATS_K[k].name; k++) {
        memset(&got, 0x77, sizeof got);
        DQT_STATS_K[k].fn(x, e, n, mask, &got);
        if (!same_dbl(got.sumsq, ref.sumsq, nan_ok) || !same_dbl(got.sumabs, ref.sumabs, nan_ok) ||
            got.maxbits != ref.maxbits) {
            fprintf(stderr,
                    "fuzz_simd: stats__%s mask %u n %lu e %d offs %lu/%lu: sumsq %.17g vs %.17g, sumabs %.17g vs "
                    "%.17g, maxbits %08lx vs %08lx\n",
                    DQT_STATS_K[k].name, mask, (unsigned long)n, with_e, (unsigned long)xoff, (unsigned long)eoff,
                    got.sumsq, ref.sumsq, got.sumabs, ref.sumabs, (unsigned long)got.maxbits,
                    (unsigned long)ref.maxbits);
            abort();
        }
    }
    if ((n && memcmp(x, xd, n * 4u) != 0) || (e && n && memcmp(e, ed, n * 4u) != 0)) fz_fail("stats modified its input");
    free(xd);
    free(ed);
    free(xb);
    free(eb);
}

/* ---------------------------------------------------------------- compensate */
static void fz_compensate(fz_in *in) {
    unsigned a = fz_u8(in);
    int alias = (a & 1u) != 0;
    size_t n = (a & 2u) ? fz_u8(in) % 80u : fz_u16(in) % 1201u;
    size_t off = fz_u8(in), xoff = (off & 15u) * 4u, eoff = (off >> 4) * 4u, k, i;
    float *xd = (float *)fz_alloc(n * 4u), *ed = (float *)fz_alloc(n * 4u), *eref = (float *)fz_alloc(n * 4u);
    fz_values(in, xd, n, 1.0f, 7.0f, 4, NULL);
    fz_values(in, ed, n, 1.0f, 7.0f, 4, xd);
    if (n) memcpy(eref, alias ? xd : ed, n * 4u);
    dqt_scalar(compensate)(alias ? eref : xd, eref, n);
    for (k = 0; DQT_COMP_K[k].name; k++) {
        gbuf ge;
        void *xb = NULL;
        float *e = (float *)out_block(&ge, alias ? xd : ed, n, eoff, 4);
        const float *x = alias ? e : (const float *)in_block(xd, n, xoff, 4, &xb);
        DQT_COMP_K[k].fn(x, e, n);
        for (i = 0; i < n; i++) {
            if (memcmp(e + i, eref + i, 4) == 0) continue;
            if (!alias && fz_nan_pair(xd[i], ed[i]) && fz_isnan(e[i])) continue;
            fprintf(stderr,
                    "fuzz_simd: compensate__%s n %lu alias %d offs %lu/%lu at %lu: x %08lx e %08lx got %08lx want "
                    "%08lx\n",
                    DQT_COMP_K[k].name, (unsigned long)n, alias, (unsigned long)xoff, (unsigned long)eoff,
                    (unsigned long)i, (unsigned long)fz_fbits(xd[i]), (unsigned long)fz_fbits(ed[i]),
                    (unsigned long)fz_fbits(e[i]), (unsigned long)fz_fbits(eref[i]));
            abort();
        }
        guard_check(&ge, DQT_COMP_K[k].name);
        if (!alias && n && memcmp(x, xd, n * 4u) != 0) fz_fail("compensate modified x");
        free(ge.base);
        free(xb);
    }
    free(xd);
    free(ed);
    free(eref);
}

/* ---------------------------------------------------------------- quant, quant_pack */

/* A bucket scale: 0, power-of-two inv, from raw bits, edge values, or (-1) derived from the
 * data afterwards the way the encoder does it. */
static float fz_scale(fz_in *in, unsigned bits) {
    unsigned c = fz_u8(in);
    float lv = bits == 1 ? 0.5f : dqt_levels(bits), s;
    switch (c & 15u) {
        case 0: return 0.0f;
        case 1:
        case 2: return ldexpf(lv, (int)(c >> 4) * 3 - 24); /* inv = 2^k */
        case 3: /* any positive finite float; below 2^-100 the encoder sends 0 */
            s = fz_bitsf(fz_u32(in) & 0x7FFFFFFFu);
            if (!(s <= FLT_MAX)) s = FLT_MAX;
            return s < DQT_MIN_SCALE ? 0.0f : s;
        case 4: return DQT_MIN_SCALE;
        case 5: return 1.5e-30f;
        case 6: return 1e37f;
        case 7: return FLT_MAX;
        case 8: return fz_bitsf(DQT_MAX_SCALE_BITS); /* the largest the encoder accepts */
        case 9: return (float)(0.01 + (double)fz_u16(in) * (100.0 / 65536.0));
        default: return -1.0f;
    }
}
/* The encoder's scale of x for a norm (as it scales a bucket); 1 when the encoder would refuse x. */
static float fz_data_scale(const float *x, size_t n, unsigned bits, int stoch, unsigned norm_sel) {
    dqt_cfg c;
    dqt_stats st;
    float scale;
    memset(&c, 0, sizeof c);
    c.bits = bits;
    c.stochastic = (unsigned)stoch;
    c.norm = bits == 1 && !stoch ? DQT_NORM_WIRE(MEAN) : (norm_sel ? DQT_NORM_WIRE(MAX) : DQT_NORM_WIRE(L2));
    if (n == 0) return 1.0f;
    dqt_scalar(stats)(x, NULL, n,
                      c.norm == DQT_NORM_WIRE(MAX) ? DQT_ST(MAX) : (c.norm == DQT_NORM_WIRE(MEAN) ? DQT_ST(ABS) : DQT_ST(SQ)),
                      &st);
    if (dqt_bucket_scale(&c, &st, n, &scale) != DQ_OK) return 1.0f;
    return scale;
}

static void quant_report(const char *kname, const dqt_qctx *q, const float *x, size_t n, size_t off, int resmode,
                         size_t d, const char *field, uint32_t got, uint32_t want) {
    fprintf(stderr,
            "fuzz_simd: %s %s differs: n %lu off %lu bits %u %s resmode %d at i %lu: x %08lx got %08lx want %08lx "
            "[inv %08lx step %08lx k0 %08lx k1h %08lx lo %08lx]\n",
            kname, field, (unsigned long)n, (unsigned long)off, q->bits, q->thresh < 0.0f ? "stoch" : "nearest", resmode,
            (unsigned long)d, (unsigned long)fz_fbits(x[d]), (unsigned long)got, (unsigned long)want,
            (unsigned long)fz_fbits(q->inv), (unsigned long)fz_fbits(q->step), (unsigned long)q->k0,
            (unsigned long)q->k1h, (unsigned long)q->lo);
    abort();
}
static size_t diff32(const void *a, const void *b, size_t n) {
    const unsigned char *pa = (const unsigned char *)a, *pb = (const unsigned char *)b;
    size_t i;
    if (n == 0 || memcmp(a, b, n * 4u) == 0) return n;
    for (i = 0; i < n; i++)
        if (memcmp(pa + 4u * i, pb + 4u * i, 4) != 0) return i;
    return n;
}

/* fused: the quant_pack kernels on one block of 256, else the quant kernels on n elements.
 * resmode: 0 = no residual, 1 = separate residual buffer, 2 = in place (res == x, as the
 * encoder calls them with error feedback). */
static void fz_quant(fz_in *in, int fused) {
    unsigned a = fz_u8(in), bits = 1u + (a & 15u);
    int stoch = (a & 16u) == 0, resmode = (int)(fz_u8(in) % 3u);
    unsigned norm_sel = (a >> 5) & 1u;
    size_t n = fused ? DQT_BLOCK : ((a & 64u) ? fz_u8(in) % 80u : fz_u16(in) % 1201u);
    size_t off = fz_u8(in), xoff = (off & 15u) * 4u, roff = (off >> 4) * 4u, k, d;
    float scale = fz_scale(in, bits);
    uint32_t k0 = fz_u32(in), k1h = fz_u32(in), lo;
    float *xd = (float *)fz_alloc(n * 4u), *xr = (float *)fz_alloc(n * 4u), *rr = (float *)fz_alloc(n * 4u);
    uint32_t *cr = (uint32_t *)fz_alloc(n * 4u);
    uint8_t pref[32u * 16u];
    dqt_qctx q;
    switch (fz_u8(in) & 3u) {
        case 0: lo = 0; break;
        case 1: lo = 0xFFFFFFFFu - (uint32_t)(n / 2u); break; /* the index wraps inside the segment */
        default: lo = fz_u32(in); break;
    }
    dqt_qctx_make(&q, bits, scale < 0.0f ? 1.0f : scale, stoch, k0, k1h, lo);
    fz_values(in, xd, n, q.inv, q.smax, bits, NULL);
    if (scale < 0.0f) scale = fz_data_scale(xd, n, bits, stoch, norm_sel);
    dqt_qctx_make(&q, bits, scale, stoch, k0, k1h, lo);
    /* the reference */
    if (n) memcpy(xr, xd, n * 4u);
    if (fused) {
        dqt_scalar(quant_pack)(&q, xr, resmode == 0 ? NULL : resmode == 1 ? rr : xr, pref);
    } else {
        dqt_scalar(quant)(&q, xr, n, cr, resmode == 0 ? NULL : resmode == 1 ? rr : xr);
    }
    if (resmode == 2 && n) memcpy(rr, xr, n * 4u);
    for (k = 0; fused ? DQT_QPACK_K[k].name != NULL : DQT_QUANT_K[k].name != NULL; k++) {
        const char *kname = fused ? DQT_QPACK_K[k].name : DQT_QUANT_K[k].name;
        char label[32];
        gbuf gc = {NULL, 0, 0}, gr = {NULL, 0, 0}, gx = {NULL, 0, 0};
        void *xb = NULL;
        float *x, *res = NULL;
        uint32_t *codes = NULL;
        uint8_t *packed = NULL;
        snprintf(label, sizeof label, "%s__%s", fused ? "quant_pack" : "quant", kname);
        if (fused)
            packed = (uint8_t *)out_block(&gc, NULL, 32u * bits, off & 63u, 1);
        else
            codes = (uint32_t *)out_block(&gc, NULL, n, roff, 4);
        if (resmode == 2) {
            x = (float *)out_block(&gx, xd, n, xoff, 4);
            res = x;
        } else {
            x = (float *)in_block(xd, n, xoff, 4, &xb);
            if (resmode == 1) res = (float *)out_block(&gr, NULL, n, roff ^ 4u, 4);
        }
        if (fused)
            DQT_QPACK_K[k].fn(&q, x, res, packed);
        else
            DQT_QUANT_K[k].fn(&q, x, n, codes, res);
        if (fused) {
            size_t bytes = 32u * bits;
            if (memcmp(packed, pref, bytes) != 0) {
                for (d = 0; d < bytes && packed[d] == pref[d]; d++) {
                }
                fprintf(stderr,
                        "fuzz_simd: %s bits %u %s resmode %d: byte %lu is %02x, scalar %02x [inv %08lx step %08lx "
                        "k0 %08lx k1h %08lx lo %08lx]\n",
                        label, bits, stoch ? "stoch" : "nearest", resmode, (unsigned long)d, packed[d], pref[d],
                        (unsigned long)fz_fbits(q.inv), (unsigned long)fz_fbits(q.step), (unsigned long)q.k0,
                        (unsigned long)q.k1h, (unsigned long)q.lo);
                abort();
            }
        } else if ((d = diff32(codes, cr, n)) < n) {
            quant_report(label, &q, xd, n, xoff, resmode, d, "code", codes[d], cr[d]);
        }
        if (res && (d = diff32(res, rr, n)) < n)
            quant_report(label, &q, xd, n, xoff, resmode, d, "residual", fz_fbits(res[d]), fz_fbits(rr[d]));
        if (resmode != 2 && n && memcmp(x, xd, n * 4u) != 0) fz_fail("quant modified x");
        guard_check(&gc, label);
        if (gr.base) guard_check(&gr, label);
        if (gx.base) guard_check(&gx, label);
        free(gc.base);
        free(gr.base);
        free(gx.base);
        free(xb);
    }
    free(xd);
    free(xr);
    free(rr);
    free(cr);
}

/* ---------------------------------------------------------------- pack_block */
static void fz_pack(fz_in *in) {
    unsigned a = fz_u8(in), b = 1u + (a & 15u), pat = (a >> 4) & 7u, i;
    uint32_t mask = (uint32_t)((1u << b) - 1u), codes[DQT_BLOCK];
    size_t off = fz_u8(in), coff = (off & 15u) * 4u, ooff = off >> 2, k, bytes = 32u * b, d;
    uint8_t ref[32u * 16u];
    void *cb;
    const uint32_t *cin;
    uint32_t one = fz_u8(in);
    for (i = 0; i < DQT_BLOCK; i++) {
        switch (pat) {
            case 0: codes[i] = mask; break;
            case 1: codes[i] = 0; break;
            case 2: codes[i] = (i & 1u) ? mask : 0u; break;
            case 3: codes[i] = (uint32_t)1u << (i % b); break;
            case 4: codes[i] = i == one ? mask : 0u; break;
            default: codes[i] = fz_u32(in) & mask; break;
        }
    }
    cin = (const uint32_t *)in_block(codes, DQT_BLOCK, coff, 4, &cb);
    dqt_scalar(pack_block)(cin, b, ref);
    for (k = 0; DQT_PACK_K[k].name; k++) {
        gbuf go;
        uint8_t *out = (uint8_t *)out_block(&go, NULL, bytes, ooff, 1);
        DQT_PACK_K[k].fn(cin, b, out);
        if (memcmp(out, ref, bytes) != 0) {
            for (d = 0; d < bytes && out[d] == ref[d]; d++) {
            }
            fprintf(stderr, "fuzz_simd: pack_block__%s b %u pattern %u offs %lu/%lu: byte %lu is %02x, scalar %02x\n",
                    DQT_PACK_K[k].name, b, pat, (unsigned long)coff, (unsigned long)ooff, (unsigned long)d, out[d],
                    ref[d]);
            abort();
        }
        guard_check(&go, DQT_PACK_K[k].name);
        free(go.base);
    }
    if (memcmp(cin, codes, sizeof codes) != 0) fz_fail("pack_block modified its codes");
    free(cb);
}

/* ---------------------------------------------------------------- decode_block */
/* A row step as the decoder can produce it (step of a scale in [0, 2^126], subnormal
 * scales included) or the edge values tests/test_simd.c uses; always non-negative, finite. */
static float fz_step(fz_in *in, unsigned b) {
    unsigned c = fz_u8(in);
    switch (c & 7u) {
        case 0: return 0.0f;
        case 1: return fz_bitsf(1u + fz_u32(in) % 0x007FFFFFu);
        case 2: return FLT_MAX / 3.0f;
        case 3: return FLT_MAX;
        case 4: return (c & 8u) ? 1e-30f : dqt_step(b, fz_bitsf(DQT_MAX_SCALE_BITS));
        case 5: {
            float s = fz_bitsf(fz_u32(in) & 0x7FFFFFFFu);
            return s <= FLT_MAX ? s : FLT_MAX;
        }
        default: return dqt_step(b, fz_bitsf(fz_u32(in) % (DQT_MAX_SCALE_BITS + 1u)));
    }
}
static float fz_weight(fz_in *in) {
    static const float w[] = {0.3f, 1.0f, -2.5f, 0.0f, -0.0f, 1e-20f, 0.125f, -1.0f, FLT_MAX, 1e30f, 1.0f / 3.0f};
    unsigned c = fz_u8(in);
    if (c < 11u * 16u) return w[c % 11u];
    if (c < 240u) return fz_bitsf(fz_u32(in)); /* any bits: NaN and Inf included */
    switch (c & 3u) {
        case 0: return fz_bitsf(0x7F800000u);
        case 1: return fz_bitsf(0xFF800000u);
        case 2: return fz_bitsf(0x7FC00000u);
        default: return fz_bitsf(0xFFA12345u);
    }
}

static void fz_decode(fz_in *in) {
    unsigned a = fz_u8(in), b = 1u + (a & 15u), r;
    int add = (a & 16u) != 0, same = (a & 32u) != 0;
    size_t off = fz_u8(in), ioff = off & 63u, ooff = ((off >> 6) | ((size_t)(a >> 6) << 2)) * 4u, i, k;
    size_t bytes = 32u * b;
    uint8_t raw[32u * 16u];
    float rowstep[DQT_ROWS], acc0[DQT_BLOCK], ref[DQT_BLOCK], w = fz_weight(in);
    uint32_t codes[DQT_BLOCK];
    void *ib, *sb;
    const uint8_t *inb;
    const float *rs;
    for (i = 0; i < bytes; i++) raw[i] = (uint8_t)fz_u8(in); /* any bytes are valid codes */
    for (r = 0; r < DQT_ROWS; r++) rowstep[r] = (same && r) ? rowstep[0] : fz_step(in, b);
    if (add) fz_values(in, acc0, DQT_BLOCK, 1.0f, 7.0f, 4, NULL);
    else
        memset(acc0, 0x6B, sizeof acc0);
    inb = (const uint8_t *)in_block(raw, bytes, ioff, 1, &ib);
    rs = (const float *)in_block(rowstep, DQT_ROWS, (off & 3u) * 4u, 4, &sb);
    memcpy(ref, acc0, sizeof ref);
    dqt_scalar(decode_block)(inb, b, rs, w, add, ref);
    dqt_scalar(unpack_block)(inb, b, codes);
    for (k = 0; DQT_DEC_K[k].name; k++) {
        gbuf go;
        float *out = (float *)out_block(&go, acc0, DQT_BLOCK, ooff, 4);
        DQT_DEC_K[k].fn(inb, b, rs, w, add, out);
        for (i = 0; i < DQT_BLOCK; i++) {
            float t;
            if (memcmp(out + i, ref + i, 4) == 0) continue;
            /* acc + w*v with two different NaNs: either may come out */
            t = w * dqt_decode_value(codes[i], b, rowstep[i / DQT_LANES]);
            if (add && fz_nan_pair(acc0[i], t) && fz_isnan(out[i]) && fz_isnan(ref[i])) continue;
            fprintf(stderr,
                    "fuzz_simd: decode_block__%s b %u add %d w %08lx offs %lu/%lu at %lu: code %lx step %08lx acc "
                    "%08lx got %08lx want %08lx\n",
                    DQT_DEC_K[k].name, b, add, (unsigned long)fz_fbits(w), (unsigned long)ioff, (unsigned long)ooff,
                    (unsigned long)i, (unsigned long)codes[i], (unsigned long)fz_fbits(rowstep[i / DQT_LANES]),
                    (unsigned long)fz_fbits(acc0[i]), (unsigned long)fz_fbits(out[i]),
                    (unsigned long)fz_fbits(ref[i]));
            abort();
        }
        guard_check(&go, DQT_DEC_K[k].name);
        free(go.base);
    }
    if (memcmp(inb, raw, bytes) != 0 || memcmp(rs, rowstep, sizeof rowstep) != 0) fz_fail("decode_block modified its input");
    free(ib);
    free(sb);
}

/* ---------------------------------------------------------------- crc32c */
/* The CRC32C register update (the crc32c kernel: SSE4.2 or the table) against its scalar twin:
 * any start value, length 0..4999 and byte offset 0..63. */
static void fz_crc(fz_in *in) {
    uint32_t c = fz_u32(in), got, want;
    unsigned a = fz_u8(in);
    size_t n = (a & 1u) ? fz_u8(in) % 40u : fz_u16(in) % 5000u, off = a >> 2, i;
    uint8_t *blk = (uint8_t *)fz_alloc(off + n); /* nothing after the last byte */
    const uint8_t *p = blk + off;
    memset(blk, 0x5A, off);
    for (i = 0; i < n; i++) blk[off + i] = (uint8_t)fz_u8(in);
    want = dqt_scalar(crc32c)(c, p, n);
    for (i = 0; DQT_CRC_K[i].name; i++) {
        got = DQT_CRC_K[i].fn(c, p, n);
        if (got != want) {
            fprintf(stderr, "fuzz_simd: crc32c__%s start %08lx n %lu off %lu: %08lx, scalar %08lx\n", DQT_CRC_K[i].name,
                    (unsigned long)c, (unsigned long)n, (unsigned long)off, (unsigned long)got, (unsigned long)want);
            abort();
        }
    }
    free(blk);
}

/* ---------------------------------------------------------------- entry */
/* ---------------------------------------------------------------- elias_scan */
/* A packed block of width 2..16 from the bytes (raw, or codes of a pattern packed by the
 * scalar packer, negative zeros included); every kernel against the scalar twin: the return
 * (bits, or UINT32_MAX for a negative zero), the codes and, unless refused, the mask. */
static void fz_elias_scan(fz_in *in) {
    unsigned a = fz_u8(in), b = 2u + (a & 15u) % 15u, pat = (a >> 4) & 3u, i, L;
    uint32_t codes[DQT_BLOCK], ref[DQT_BLOCK], got[DQT_BLOCK], mask = (uint32_t)((1u << b) - 1u), rbits, bits;
    uint64_t rnz[4], nz[4];
    size_t bytes = 32u * b, k;
    uint8_t lvt[16], raw[32u * 16u];
    const uint8_t *blk;
    void *bb;
    lvt[0] = 0;
    for (L = 1; L < 16; L++) lvt[L] = (uint8_t)(1u + dq_elias_omega_len((uint64_t)1 << (L - 1u)));
    if (pat == 0) { /* raw bytes: any bit pattern is a valid block */
        for (i = 0; i < bytes; i++) raw[i] = (uint8_t)fz_u8(in);
    } else { /* sparse levels with a chance of negative zeros */
        unsigned keep = 1u + fz_u8(in) % 8u, negz = fz_u8(in) % 64u;
        for (i = 0; i < DQT_BLOCK; i++) {
            codes[i] = fz_u8(in) % keep ? 0u : fz_u32(in) & mask;
            if (pat == 3 && i == negz) codes[i] = 1u << (b - 1u);
        }
        dqt_scalar(pack_block)(codes, b, raw);
    }
    blk = (const uint8_t *)in_block(raw, bytes, fz_u8(in) & 63u, 1, &bb);
    rbits = dqt_scalar(elias_scan)(blk, b, lvt, ref, rnz);
    for (k = 0; DQT_ESCAN_K[k].name; k++) {
        memset(got, 0xA5, sizeof got);
        memset(nz, 0xA5, sizeof nz);
        bits = DQT_ESCAN_K[k].fn(blk, b, lvt, got, nz);
        if (bits != rbits || memcmp(got, ref, sizeof ref) != 0 || (rbits != UINT32_MAX && memcmp(nz, rnz, sizeof nz) != 0)) {
            fprintf(stderr, "fuzz_simd: elias_scan__%s b %u pattern %u: bits %lu, scalar %lu\n", DQT_ESCAN_K[k].name, b,
                    pat, (unsigned long)bits, (unsigned long)rbits);
            abort();
        }
    }
    free(bb);
}

/* ---------------------------------------------------------------- elias_nz, elias_gaps */
/* Up to four packed blocks of width 2..16 from the bytes, and a carried state from them: the
 * mask kernels and the gap-count kernels against their scalar twins (masks, counts, state). */
static void fz_elias_masks(fz_in *in) {
    unsigned a = fz_u8(in), b = 2u + (a & 15u) % 15u, nblk = 1u + ((a >> 4) & 3u), i;
    size_t bytes = 32u * b * nblk, k;
    uint8_t raw[4u * 32u * 16u];
    uint64_t rnz[4], nz[4], st0[6], rst[6], gst[6], rcnt[7], gcnt[7];
    const uint8_t *blk;
    void *bb;
    for (i = 0; i < bytes; i++) raw[i] = (uint8_t)fz_u8(in);
    for (i = 0; i < 6; i++) st0[i] = (uint64_t)fz_u32(in) << 32 | fz_u32(in);
    blk = (const uint8_t *)in_block(raw, bytes, fz_u8(in) & 63u, 1, &bb);
    dqt_scalar(elias_nz)(blk, b, rnz);
    for (k = 0; DQT_ENZ_K[k].name; k++) {
        memset(nz, 0xA5, sizeof nz);
        DQT_ENZ_K[k].fn(blk, b, nz);
        if (memcmp(nz, rnz, sizeof nz) != 0) {
            fprintf(stderr, "fuzz_simd: elias_nz__%s b %u: masks differ\n", DQT_ENZ_K[k].name, b);
            abort();
        }
    }
    memcpy(rst, st0, sizeof rst);
    memset(rcnt, 0, sizeof rcnt);
    dqt_scalar(elias_gaps)(blk, b, nblk, rst, rcnt);
    for (k = 0; DQT_EGAPS_K[k].name; k++) {
        memcpy(gst, st0, sizeof gst);
        memset(gcnt, 0, sizeof gcnt);
        DQT_EGAPS_K[k].fn(blk, b, nblk, gst, gcnt);
        if (memcmp(gst, rst, sizeof gst) != 0 || memcmp(gcnt, rcnt, sizeof gcnt) != 0) {
            fprintf(stderr, "fuzz_simd: elias_gaps__%s b %u blocks %u: counts or state differ\n", DQT_EGAPS_K[k].name, b,
                    nblk);
            abort();
        }
    }
    free(bb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int checked;
    fz_in in;
    uint64_t h = 0xCBF29CE484222325u;
    size_t i;
    unsigned sel;
    if (!checked) {
        fz_check_selection();
        checked = 1;
    }
    if (size < 2) return 0;
    for (i = 0; i < size; i++) h = (h ^ data[i]) * 0x100000001B3u;
    in.p = data + 2;
    in.n = size - 2;
    in.i = 0;
    in.s = h;
    in.classes = (data[1] & 1u) == 0;
    sel = data[0] % 8u;
    switch (sel) {
        case 0: fz_stats(&in); break;
        case 1: fz_compensate(&in); break;
        case 2: fz_quant(&in, 0); break;
        case 7: /* half the quant inputs of old go to the Elias scan */
            if (data[0] & 8u)
                fz_elias_scan(&in);
            else
                fz_quant(&in, 0);
            break;
        case 3: fz_quant(&in, 1); break;
        case 4: fz_pack(&in); break;
        case 5: fz_decode(&in); break;
        case 6: /* half the crc inputs go to the Elias mask and gap-count kernels */
            if (data[0] & 8u)
                fz_elias_masks(&in);
            else
                fz_crc(&in);
            break;
        default: fz_crc(&in); break;
    }
    return 0;
}
