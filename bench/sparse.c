/* bench/sparse.c - throughput of the sparsifiers: top-k, random-k, threshold (doc/FORMAT.md
 * "Sparse messages").
 *
 *   sparse [--n N] [--reps R] [--csv]        (defaults: n = 2^24, R = 7)
 *
 * One row per kernel: gbps = n * 4 bytes of float32 input / seconds, for decoders too, and
 * baseline_gbps for a plain pass over the same buffers measured in the same process, as in
 * bench/bench.c: encoders against a sum of squares over x (a read pass, 8 float accumulators),
 * decoders against acc[i] += x[i]. ratio = gbps / baseline_gbps. msg_bpe = message bits per
 * element (header included). k = n/1000 for top-k and random-k; the threshold is 3.2905 (the
 * N(0,1) input then keeps about n/1000). -ef rows pass a residual, restored (untimed) before
 * every call to the same N(0, 0.1^2) state, so that each call is one step of error feedback
 * rather than a residual that grows without bound on an input that never changes. -unb is
 * rescaled (unbiased) random-k; -crc rows carry the payload checksum. decode-add uses weight
 * 0.5. "select" is dq_topk_select (indices only).
 * Composed rows (quantized values, doc/FORMAT.md 20.10), "topk-qB-D": top-k at density D (0.1%
 * or 1%) with B-bit values (q1: the ternary form, nearest rounding and one scale; q2, q4:
 * stochastic, 512 values a scale), the default coder and AUTO index coder; "topk-f32-D" is the
 * float32 form at the same density, for its bytes. k = D n for these rows.
 * Timing: one warm-up call of the kernel and of its baseline, then R rounds of (kernel,
 * baseline) alternately; the minimum of each. Every message is checked untimed: its header,
 * its size against dq_encode_capacity(), and its decode against the input.
 * Build and run: make bench-sparse (ARGS="--n N --reps R"). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 199309L
#endif

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dqsgd.h"
#include "bench_util.h"

#define ALIGN 64u

typedef enum { ENC, ENC_EF, DEC, DEC_ADD, SELECT } kind;
typedef struct row {
    const char *name;
    kind what;
    dq_scheme scheme;
    unsigned unbiased, checksum;
    unsigned bits, permille; /* composed rows: the width (0: float32) and k = permille n / 1000 */
} row;
static const row ROWS[] = {
    {"topk-encode", ENC, DQ_SCHEME_TOPK, 0, 0, 0, 0},
    {"topk-encode-ef", ENC_EF, DQ_SCHEME_TOPK, 0, 0, 0, 0},
    {"topk-encode-crc", ENC, DQ_SCHEME_TOPK, 0, 1, 0, 0},
    {"topk-decode", DEC, DQ_SCHEME_TOPK, 0, 0, 0, 0},
    {"topk-decode-add", DEC_ADD, DQ_SCHEME_TOPK, 0, 0, 0, 0},
    {"topk-select", SELECT, DQ_SCHEME_TOPK, 0, 0, 0, 0},
    {"randk-encode", ENC, DQ_SCHEME_RANDK, 0, 0, 0, 0},
    {"randk-encode-ef", ENC_EF, DQ_SCHEME_RANDK, 0, 0, 0, 0},
    {"randk-encode-unb", ENC, DQ_SCHEME_RANDK, 1, 0, 0, 0},
    {"randk-decode", DEC, DQ_SCHEME_RANDK, 0, 0, 0, 0},
    {"randk-decode-add", DEC_ADD, DQ_SCHEME_RANDK, 0, 0, 0, 0},
    {"thresh-encode", ENC, DQ_SCHEME_THRESHOLD, 0, 0, 0, 0},
    {"thresh-encode-ef", ENC_EF, DQ_SCHEME_THRESHOLD, 0, 0, 0, 0},
    {"thresh-decode", DEC, DQ_SCHEME_THRESHOLD, 0, 0, 0, 0},
    {"thresh-decode-add", DEC_ADD, DQ_SCHEME_THRESHOLD, 0, 0, 0, 0},
    {"topk-f32-0.1%", ENC, DQ_SCHEME_TOPK, 0, 0, 0, 1},
    {"topk-q1-0.1%", ENC, DQ_SCHEME_TOPK, 0, 0, 1, 1},
    {"topk-q1-0.1%-ef", ENC_EF, DQ_SCHEME_TOPK, 0, 0, 1, 1},
    {"topk-q1-0.1%-dadd", DEC_ADD, DQ_SCHEME_TOPK, 0, 0, 1, 1},
    {"topk-q2-0.1%", ENC, DQ_SCHEME_TOPK, 0, 0, 2, 1},
    {"topk-q2-0.1%-dadd", DEC_ADD, DQ_SCHEME_TOPK, 0, 0, 2, 1},
    {"topk-q4-0.1%", ENC, DQ_SCHEME_TOPK, 0, 0, 4, 1},
    {"topk-q4-0.1%-dadd", DEC_ADD, DQ_SCHEME_TOPK, 0, 0, 4, 1},
    {"topk-f32-1%", ENC, DQ_SCHEME_TOPK, 0, 0, 0, 10},
    {"topk-q1-1%", ENC, DQ_SCHEME_TOPK, 0, 0, 1, 10},
    {"topk-q1-1%-ef", ENC_EF, DQ_SCHEME_TOPK, 0, 0, 1, 10},
    {"topk-q1-1%-dadd", DEC_ADD, DQ_SCHEME_TOPK, 0, 0, 1, 10},
    {"topk-q2-1%", ENC, DQ_SCHEME_TOPK, 0, 0, 2, 10},
    {"topk-q2-1%-dadd", DEC_ADD, DQ_SCHEME_TOPK, 0, 0, 2, 10},
    {"topk-q4-1%", ENC, DQ_SCHEME_TOPK, 0, 0, 4, 10},
    {"topk-q4-1%-dadd", DEC_ADD, DQ_SCHEME_TOPK, 0, 0, 4, 10},
};
#define NROWS (sizeof ROWS / sizeof ROWS[0])

typedef struct ctx {
    size_t n, k, cap, len;
    float *x, *res, *res0, *acc;
    uint8_t *msg;
    uint32_t *idx;
} ctx;

static volatile float sink;

static void die(const char *what, const char *why) {
    fprintf(stderr, "bench_sparse [%s]: %s: %s\n", dq_simd_backend(), what, why);
    exit(1);
}
static void *alloc64(size_t bytes, void **base) {
    uintptr_t p;
    *base = malloc(bytes + ALIGN);
    if (!*base) die("malloc", "out of memory");
    p = ((uintptr_t)*base + (ALIGN - 1u)) & ~(uintptr_t)(ALIGN - 1u);
    return (void *)p;
}


static dq_params params(const ctx *c, const row *r) {
    dq_params p;
    memset(&p, 0, sizeof p);
    p.scheme = r->scheme;
    p.k = r->scheme == DQ_SCHEME_THRESHOLD ? 0 : r->permille ? c->n * r->permille / 1000u : c->k;
    p.bits = r->bits;
    if (r->bits == 1) { /* the ternary form */
        p.rounding = DQ_ROUND_NEAREST;
        p.bucket = DQ_BUCKET_WHOLE;
    }
    p.threshold = r->scheme == DQ_SCHEME_THRESHOLD ? 3.2905f : 0.0f;
    p.unbiased = r->unbiased;
    p.checksum = r->checksum;
    p.seed = 42;
    p.step = 1;
    return p;
}

static dq_status run(ctx *c, const row *r) {
    dq_params p = params(c, r);
    switch (r->what) {
        case ENC: return dq_encode(&p, c->x, c->n, NULL, c->msg, c->cap, &c->len);
        case ENC_EF: return dq_encode(&p, c->x, c->n, c->res, c->msg, c->cap, &c->len);
        case DEC: return dq_decode(c->msg, c->len, c->acc, c->n);
        case DEC_ADD: return dq_decode_add(c->msg, c->len, 0.5f, c->acc, c->n);
        default: return dq_topk_select(c->x, c->n, c->k, c->idx);
    }
}
static int is_enc(const row *r) { return r->what == ENC || r->what == ENC_EF || r->what == SELECT; }

/* untimed: the message of a plain encode of r's scheme is in msg, has its size and decodes to
 * a vector that agrees with x wherever it is nonzero (rescaled random-k: a multiple of it) */
static void verify(ctx *c, const row *r) {
    dq_params p = params(c, r);
    dq_header h;
    size_t bound = 0, i, nz = 0;
    if (dq_header_read(c->msg, c->len, &h) != DQ_OK || h.msg_size != c->len || h.scheme != (unsigned)r->scheme ||
        h.count != c->n)
        die(r->name, "header does not match");
    if (dq_encode_capacity(&p, c->n, &bound) != DQ_OK || c->len > bound) die(r->name, "size above dq_encode_capacity()");
    if (r->scheme == DQ_SCHEME_RANDK && c->len != bound) die(r->name, "random-k size differs from dq_encode_capacity()");
    if (r->what != ENC) return;
    if (dq_decode(c->msg, c->len, c->acc, c->n) != DQ_OK) die(r->name, "decode failed");
    for (i = 0; i < c->n; i++)
        if (c->acc[i] != 0.0f) {
            nz++;
            if (!r->unbiased && !r->bits && c->acc[i] != c->x[i]) die(r->name, "decoded value differs from the input");
            if (r->bits && (c->acc[i] < 0.0f) != (c->x[i] < 0.0f)) die(r->name, "decoded value of the wrong sign");
        }
    if (r->bits ? nz > h.nnz : nz != h.nnz && r->scheme != DQ_SCHEME_THRESHOLD) die(r->name, "wrong number of values");
}

static void measure(ctx *c, const row *r, unsigned reps, double *tk, double *tb) {
    double bk = 1e30, bb = 1e30;
    unsigned i;
    dq_status st;
    if (!is_enc(r)) { /* decoders read a plain encode of the same scheme */
        row e = *r;
        e.what = ENC;
        if ((st = run(c, &e)) != DQ_OK) die(r->name, dq_strerror(st));
        verify(c, &e);
    }
    if (r->what == ENC_EF) memcpy(c->res, c->res0, c->n * sizeof *c->res);
    if ((st = run(c, r)) != DQ_OK) die(r->name, dq_strerror(st));
    if (r->what != SELECT) verify(c, r);
    if (is_enc(r))
        sink = base_sumsq(c->x, c->n);
    else
        base_add(c->acc, c->x, c->n);
    for (i = 0; i < reps; i++) {
        double t0, t1;
        if (r->what == ENC_EF) memcpy(c->res, c->res0, c->n * sizeof *c->res);
        t0 = bench_now();
        st = run(c, r);
        t1 = bench_now();
        if (st != DQ_OK) die(r->name, dq_strerror(st));
        if (t1 - t0 < bk) bk = t1 - t0;
        t0 = bench_now();
        if (is_enc(r))
            sink = base_sumsq(c->x, c->n);
        else
            base_add(c->acc, c->x, c->n);
        t1 = bench_now();
        if (t1 - t0 < bb) bb = t1 - t0;
    }
    *tk = bk;
    *tb = bb;
}

int main(int argc, char **argv) {
    ctx c;
    void *b1, *b2, *b3, *b4, *b5, *b6;
    unsigned reps = 7;
    int i, csv = 0;
    size_t r, j;
    uint64_t s = 0x5EED0002u;
    memset(&c, 0, sizeof c);
    c.n = (size_t)1 << 24;
    for (i = 1; i < argc; i++) {
        const char *v;
        if (strcmp(argv[i], "--csv") == 0)
            csv = 1;
        else if ((v = bench_opt_value("sparse", argc, argv, &i, "--n")) != NULL)
            c.n = (size_t)bench_parse_count("sparse", "--n", v);
        else if ((v = bench_opt_value("sparse", argc, argv, &i, "--reps")) != NULL)
            reps = (unsigned)bench_parse_count("sparse", "--reps", v);
        else {
            fprintf(stderr, "usage: sparse [--n N (1000..2^28)] [--reps R] [--csv]\n");
            return 2;
        }
    }
    if (c.n < 1000 || c.n > ((size_t)1 << 28) || reps > 10000) {
        fprintf(stderr, "sparse: --n must be 1000..2^28, --reps at most 10000\n");
        return 2;
    }
    c.k = c.n / 1000;
    for (r = 0; r < NROWS; r++) { /* room for every row */
        dq_params p = params(&c, &ROWS[r]);
        size_t b = 0;
        if (dq_encode_capacity(&p, c.n, &b) != DQ_OK) die("dq_encode_capacity", ROWS[r].name);
        if (b > c.cap) c.cap = b;
    }
    c.x = (float *)alloc64(c.n * sizeof(float), &b1);
    c.res = (float *)alloc64(c.n * sizeof(float), &b2);
    c.res0 = (float *)alloc64(c.n * sizeof(float), &b3);
    c.acc = (float *)alloc64(c.n * sizeof(float), &b4);
    c.msg = (uint8_t *)alloc64(c.cap, &b5);
    c.idx = (uint32_t *)alloc64(c.k * sizeof(uint32_t), &b6);
    bench_fill_gaussian(c.x, c.n, 0x5EED0001u);
    bench_fill_gaussian(c.res0, c.n, s);
    for (j = 0; j < c.n; j++) c.res0[j] *= 0.1f;
    memcpy(c.res, c.res0, c.n * sizeof(float));
    memset(c.acc, 0, c.n * sizeof(float));
    memset(c.msg, 0, c.cap);
    memset(c.idx, 0, c.k * sizeof(uint32_t));
    if (csv) {
        printf("kernel,isa,n,k,gbps,baseline_gbps,ratio,msg_bpe\n");
    } else {
        printf("dqsgd %s sparsifiers | backend: %s | n = %zu, k = n/1000 = %zu, threshold 3.2905 | best of %u\n",
               DQSGD_VERSION_STRING, dq_simd_backend(), c.n, c.k, reps);
        printf("gbps = n*4 bytes / s. Baselines, same run: encoders = sum of squares over x, decoders = acc[i] += x[i].\n");
        printf("%-18s  %-6s  %10s  %8s  %7s  %13s  %6s  %7s\n", "kernel", "isa", "n", "k", "gbps", "baseline_gbps",
               "ratio", "msg_bpe");
    }
    for (r = 0; r < NROWS; r++) {
        double tk = 0, tb = 0, gk, gb, bpe;
        dq_header h;
        measure(&c, &ROWS[r], reps, &tk, &tb);
        gk = (double)c.n * 4.0 / tk * 1e-9;
        gb = (double)c.n * 4.0 / tb * 1e-9;
        bpe = ROWS[r].what == SELECT ? 32.0 * (double)c.k / (double)c.n : (double)c.len * 8.0 / (double)c.n;
        if (dq_header_read(c.msg, c.len, &h) != DQ_OK) die(ROWS[r].name, "header");
        if (csv)
            printf("%s,%s,%zu,%zu,%.3f,%.3f,%.3f,%.4f\n", ROWS[r].name, dq_simd_backend(), c.n, h.nnz, gk, gb, gk / gb,
                   bpe);
        else
            printf("%-18s  %-6s  %10zu  %8zu  %7.2f  %13.2f  %6.3f  %7.4f\n", ROWS[r].name, dq_simd_backend(), c.n,
                   ROWS[r].what == SELECT ? c.k : h.nnz, gk, gb, gk / gb, bpe);
        fflush(stdout);
    }
    free(b1);
    free(b2);
    free(b3);
    free(b4);
    free(b5);
    free(b6);
    return 0;
}
