/* bench/tab.c - throughput of the table schemes (NUQSGD, natural, TRUNC_NU) against a plain
 * memory pass measured in the same run.
 *
 *   tab [--n N] [--reps R]        (defaults: n = 2^24, R = 7)
 *
 * Rows 1-8: dq_encode / dq_decode_add over n floats, bucket 512, stochastic rounding, L2 norm
 * where the scheme has a choice: QSGD 4 bits (for reference), NUQSGD 4 bits, natural 8 bits,
 * TRUNC_NU 4 bits (alpha = 3, levels (j/7)^1.5). gbps = n * 4 bytes / s. Baselines on the same
 * buffers (as bench/bench.c): "read" = sum of squares over x with 8 float accumulators (a read
 * pass), "add" = acc[i] += x[i]. ratio = gbps / read for encoders, gbps / add for decode-add
 * (decode-add / read is printed too).
 * Rows 9-: the kernels alone on an L2-resident slice of 2^14 elements (64 KiB), 256 per call
 * as the encoder calls them: QSGD's dq__k_quant for reference, then this build's
 * dq__k_quant_tab and dq__k_decode_block_tab (add, weight 0.5) against their scalar twins, in
 * Gelem/s, and the speedup.
 * Timing: one warm-up, then R rounds of (kernel, baseline) alternately, minimum of each.
 * Build: cc -std=c99 -ffp-contract=off -O2 -mavx512f (or -mavx2, -msse2, -DDQ_NO_SIMD) -I.
 *        -D_POSIX_C_SOURCE=199309L bench/tab.c -o tab -lm */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 199309L
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dqsgd.h"
#include "bench_util.h"

#define TAB_BUCKET 512u
#define TAB_ALIGN 64u
#define SLICE 16384u /* kernel rows: elements per pass, 64 KiB */

static const float LEVELS[7] = {0.0539949f, 0.152721f, 0.280566f, 0.431959f, 0.603682f, 0.793499f, 1.0f};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static void *alloc_aligned(size_t bytes, void **base) {
    uintptr_t p;
    *base = malloc(bytes + TAB_ALIGN);
    if (!*base) {
        fprintf(stderr, "tab: out of memory\n");
        exit(1);
    }
    p = ((uintptr_t)*base + (TAB_ALIGN - 1u)) & ~(uintptr_t)(TAB_ALIGN - 1u);
    return (void *)p;
}

static volatile float sink;
static float base_sumsq(const float *x, size_t n) {
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f, s4 = 0.0f, s5 = 0.0f, s6 = 0.0f, s7 = 0.0f;
    size_t i = 0;
    for (; i + 8u <= n; i += 8u) {
        s0 += x[i] * x[i];
        s1 += x[i + 1u] * x[i + 1u];
        s2 += x[i + 2u] * x[i + 2u];
        s3 += x[i + 3u] * x[i + 3u];
        s4 += x[i + 4u] * x[i + 4u];
        s5 += x[i + 5u] * x[i + 5u];
        s6 += x[i + 6u] * x[i + 6u];
        s7 += x[i + 7u] * x[i + 7u];
    }
    for (; i < n; i++) s0 += x[i] * x[i];
    return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
}
static void base_add(float *restrict acc, const float *restrict x, size_t n) {
    size_t i = 0;
    for (; i + 8u <= n; i += 8u) {
        acc[i] += x[i];
        acc[i + 1u] += x[i + 1u];
        acc[i + 2u] += x[i + 2u];
        acc[i + 3u] += x[i + 3u];
        acc[i + 4u] += x[i + 4u];
        acc[i + 5u] += x[i + 5u];
        acc[i + 6u] += x[i + 6u];
        acc[i + 7u] += x[i + 7u];
    }
    for (; i < n; i++) acc[i] += x[i];
}

typedef struct ctx {
    size_t n, cap, len;
    float *x, *acc;
    uint8_t *msg;
    dq_params p;
    int what; /* 0 encode, 1 decode-add, 2 read baseline, 3 add baseline */
} ctx;

static void run(ctx *c) {
    dq_status st = DQ_OK;
    switch (c->what) {
        case 0: st = dq_encode(&c->p, c->x, c->n, NULL, c->msg, c->cap, &c->len); break;
        case 1: st = dq_decode_add(c->msg, c->len, 0.5f, c->acc, c->n); break;
        case 2: sink = base_sumsq(c->x, c->n); break;
        default: base_add(c->acc, c->x, c->n); break;
    }
    if (st != DQ_OK) {
        fprintf(stderr, "tab: %s\n", dq_strerror(st));
        exit(1);
    }
}
/* best of reps for what = a, and in the same rounds for what = b */
static void timepair(ctx *c, int a, int b, unsigned reps, double *ta, double *tb) {
    unsigned k;
    *ta = *tb = 1e30;
    c->what = a;
    run(c);
    c->what = b;
    run(c);
    for (k = 0; k < reps; k++) {
        double t0, t1;
        c->what = a;
        t0 = now_s();
        run(c);
        t1 = now_s() - t0;
        if (t1 < *ta) *ta = t1;
        c->what = b;
        t0 = now_s();
        run(c);
        t1 = now_s() - t0;
        if (t1 < *tb) *tb = t1;
    }
}

static void params(dq_params *p, dq_scheme sc, unsigned bits) {
    memset(p, 0, sizeof *p);
    p->scheme = sc;
    p->bits = bits;
    p->bucket = TAB_BUCKET;
    p->rounding = DQ_ROUND_STOCHASTIC;
    p->norm = sc == DQ_SCHEME_QSGD || sc == DQ_SCHEME_NUQSGD ? DQ_NORM_L2 : DQ_NORM_DEFAULT;
    p->alpha = 3.0f;
    p->levels = sc == DQ_SCHEME_TRUNC_NU ? LEVELS : NULL;
    p->seed = 42u;
    p->step = 1u;
}

/* ---- kernel rows: seconds per pass over SLICE elements (best of reps, >= 2 ms a sample) */
typedef void (*qfn)(const dq__qctx *, const float *, size_t, uint32_t *, float *);
typedef void (*dfn)(const uint8_t *, unsigned, const float *, const float *, float, int, float *);
static double time_quant(qfn f, const dq__qctx *q0, const float *x, uint32_t *codes, unsigned reps) {
    double best = 1e30;
    unsigned k;
    for (k = 0; k <= reps; k++) {
        long it = 0;
        double t0 = now_s(), t;
        do {
            size_t i;
            dq__qctx q = *q0;
            for (i = 0; i < SLICE; i += DQ__BLOCK) {
                q.lo = (uint32_t)i;
                f(&q, x + i, DQ__BLOCK, codes + i, NULL);
            }
            it++;
            t = now_s() - t0;
        } while (t < 2e-3);
        if (k && t / (double)it < best) best = t / (double)it;
    }
    return best;
}
static double time_dec(dfn f, const uint8_t *in, unsigned b, const float *tab, const float *rowscale, float *out,
                       unsigned reps) {
    double best = 1e30;
    unsigned k;
    for (k = 0; k <= reps; k++) {
        long it = 0;
        double t0 = now_s(), t;
        do {
            size_t i;
            for (i = 0; i < SLICE; i += DQ__BLOCK)
                f(in + (i / DQ__BLOCK) * 32u * b, b, tab, rowscale, 0.5f, 1, out + i);
            it++;
            t = now_s() - t0;
        } while (t < 2e-3);
        if (k && t / (double)it < best) best = t / (double)it;
    }
    return best;
}

int main(int argc, char **argv) {
    static const struct {
        const char *name;
        dq_scheme sc;
        unsigned bits;
    } rows[4] = {{"qsgd", DQ_SCHEME_QSGD, 4u},
                 {"nuqsgd", DQ_SCHEME_NUQSGD, 4u},
                 {"natural", DQ_SCHEME_NATURAL, 8u},
                 {"trunc-nu", DQ_SCHEME_TRUNC_NU, 4u}};
    size_t n = (size_t)1 << 24;
    unsigned reps = 7u, r;
    int i;
    void *bx, *bacc, *bmsg;
    ctx c;
    for (i = 1; i < argc; i++) {
        const char *v;
        if ((v = bench_opt_value("tab", argc, argv, &i, "--n")) != NULL)
            n = (size_t)bench_parse_count("tab", "--n", v);
        else if ((v = bench_opt_value("tab", argc, argv, &i, "--reps")) != NULL)
            reps = (unsigned)bench_parse_count("tab", "--reps", v);
        else {
            fprintf(stderr, "usage: tab [--n N] [--reps R]\n");
            return 2;
        }
    }
    if (n < SLICE) n = SLICE;
    memset(&c, 0, sizeof c);
    c.n = n;
    c.cap = dq_encode_bound(n, 8u);
    c.x = (float *)alloc_aligned(n * sizeof(float), &bx);
    c.acc = (float *)alloc_aligned(n * sizeof(float), &bacc);
    c.msg = (uint8_t *)alloc_aligned(c.cap, &bmsg);
    bench_fill_gaussian(c.x, n, 0x5EED0001u);
    memset(c.acc, 0, n * sizeof(float));
    memset(c.msg, 0, c.cap);

    printf("dqsgd table schemes | backend %s | n = %zu | bucket %u | stochastic | best of %u\n", dq_simd_backend(), n,
           TAB_BUCKET, reps);
    printf("%-20s %4s %8s %9s %8s %7s %9s\n", "row", "bits", "gbps", "base_gbps", "ratio", "/read", "msg_bpe");
    for (r = 0; r < 4; r++) {
        double te, tr, td, ta, bytes = (double)n * 4.0;
        char name[40];
        params(&c.p, rows[r].sc, rows[r].bits);
        timepair(&c, 0, 2, reps, &te, &tr);
        snprintf(name, sizeof name, "encode-%s", rows[r].name);
        printf("%-20s %4u %8.2f %9.2f %8.3f %7s %9.4f\n", name, rows[r].bits, bytes / te * 1e-9, bytes / tr * 1e-9,
               tr / te, "", (double)c.len * 8.0 / (double)n);
        timepair(&c, 1, 3, reps, &td, &ta);
        snprintf(name, sizeof name, "decode-add-%s", rows[r].name);
        printf("%-20s %4u %8.2f %9.2f %8.3f %7.3f %9s\n", name, rows[r].bits, bytes / td * 1e-9, bytes / ta * 1e-9,
               ta / td, tr / td, "");
        fflush(stdout);
    }

    printf("kernels alone, %u elements per pass (L2): Gelem/s of this build's kernel vs the scalar twin\n", SLICE);
    printf("%-20s %4s %8s %8s %8s\n", "kernel", "bits", "simd", "scalar", "speedup");
    { /* QSGD's uniform quantizer, for reference */
        uint32_t *codes = (uint32_t *)malloc(SLICE * sizeof(uint32_t));
        dq__qctx q;
        double t1, t0;
        if (!codes) return 1;
        memset(&q, 0, sizeof q);
        q.bits = 4u;
        q.smax = 7.0f;
        q.thresh = -1.0f;
        q.k0 = 0x12345678u;
        q.k1h = 0x9ABCDEF0u;
        dq__qctx_scale(&q, 4.0f);
        t1 = time_quant(dq__k_quant, &q, c.x, codes, reps);
        t0 = time_quant(dq__quant__scalar, &q, c.x, codes, reps);
        printf("quant-%-14s %4u %8.3f %8.3f %8.2f\n", "qsgd", 4u, SLICE / t1 * 1e-9, SLICE / t0 * 1e-9, t0 / t1);
        free(codes);
    }
    for (r = 1; r < 4; r++) {
        static const unsigned widths[3] = {4u, 8u, 4u};
        unsigned b = widths[r - 1u], s = (1u << (b - 1u)) - 1u, rr;
        float tab[128], rowscale[DQ__ROWS];
        uint32_t *codes = (uint32_t *)malloc(SLICE * sizeof(uint32_t));
        uint8_t *packed = (uint8_t *)malloc(SLICE / 8u * b + 64u);
        float *out = (float *)malloc(SLICE * sizeof(float));
        dq__qctx q;
        double t1, t0;
        if (!codes || !packed || !out) return 1;
        dq__tab_exp(s, tab);
        if (rows[r].sc == DQ_SCHEME_TRUNC_NU) memcpy(tab + 1, LEVELS, sizeof LEVELS);
        memset(&q, 0, sizeof q);
        q.bits = b;
        q.thresh = -1.0f;
        q.k0 = 0x12345678u;
        q.k1h = 0x9ABCDEF0u;
        q.tab = tab;
        q.scale = 4.0f;
        q.inv = 0.25f;
        t1 = time_quant(dq__k_quant_tab, &q, c.x, codes, reps);
        t0 = time_quant(dq__quant_tab__scalar, &q, c.x, codes, reps);
        printf("quant_tab-%-10s %4u %8.3f %8.3f %8.2f\n", rows[r].name, b, SLICE / t1 * 1e-9, SLICE / t0 * 1e-9,
               t0 / t1);
        for (rr = 0; rr < DQ__ROWS; rr++) rowscale[rr] = 4.0f;
        for (rr = 0; rr < SLICE / DQ__BLOCK; rr++)
            dq__pack_block__scalar(codes + rr * DQ__BLOCK, b, packed + rr * 32u * b);
        memset(out, 0, SLICE * sizeof(float));
        t1 = time_dec(dq__k_decode_block_tab, packed, b, tab, rowscale, out, reps);
        t0 = time_dec(dq__decode_block_tab__scalar, packed, b, tab, rowscale, out, reps);
        printf("decode_tab-%-9s %4u %8.3f %8.3f %8.2f\n", rows[r].name, b, SLICE / t1 * 1e-9, SLICE / t0 * 1e-9,
               t0 / t1);
        fflush(stdout);
        free(codes);
        free(packed);
        free(out);
    }
    free(bx);
    free(bacc);
    free(bmsg);
    return 0;
}
