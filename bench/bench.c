/* bench/bench.c - throughput benchmark for dqsgd.
 *
 * Built once per ISA level by `make bench` (scalar = -DDQ_NO_SIMD, sse2, avx2, avx512) and run
 * once per build; the first binary prints the header, the others get --no-header so the rows
 * form one table.
 *
 *   bench [--csv] [--no-header] [--n N] [--reps R]
 *
 * One row per kernel: kernel, isa, bits, bucket, n, gbps, baseline_gbps, ratio.
 *   gbps           n * 4 / seconds / 1e9: float32 INPUT bytes per second for every kernel,
 *                  decoders included (a decoder "processes" n floats).
 *   baseline_gbps  same unit, for a plain pass over the same buffers in the same process:
 *                  encoders: sum of squares over x (read pass);
 *                  decoders: acc[i] += x[i] over n floats.
 *   ratio          gbps / baseline_gbps.
 * Timing: one warm-up call of the kernel and of its baseline, then R rounds of (kernel,
 * baseline) alternately; the minimum time of each is reported, so both see the same machine
 * state. Every parameter is QSGD with an L2 norm per bucket; rounding is stochastic unless the
 * kernel name ends in -nearest; -crc rows carry the payload checksum (dq_params.checksum), so
 * they cost the CRC32C pass on top. The input is N(0,1) from a fixed-seed splitmix64 stream.
 * encode-ef passes a residual that carries over from call to call (error feedback in steady
 * state); decode-add uses weight 0.5. Buffers come from malloc, moved up to a 64-byte boundary
 * as a framework's tensors would be, and are touched before timing starts. */
#define _POSIX_C_SOURCE 199309L

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dqsgd.h"

/* The ISA the compiler targets, to notice a build whose kernels fell back (e.g. no SIMDe). */
#if defined(DQ_NO_SIMD)
#define BENCH_TARGET "scalar"
#elif defined(__AVX512F__)
#define BENCH_TARGET "avx512"
#elif defined(__AVX2__)
#define BENCH_TARGET "avx2"
#elif defined(__SSE2__) || defined(_M_X64)
#define BENCH_TARGET "sse2"
#else
#define BENCH_TARGET "scalar"
#endif

#ifdef __VERSION__
#define BENCH_COMPILER __VERSION__
#else
#define BENCH_COMPILER "unknown"
#endif

#define BENCH_DEFAULT_N ((size_t)1 << 24)
#define BENCH_DEFAULT_REPS 7u
#define BENCH_BUCKET 512u
#define BENCH_ALIGN 64u /* cache-line alignment of every buffer (malloc only promises 16) */

typedef enum bench_kind { K_ENCODE, K_ENCODE_EF, K_DECODE, K_DECODE_ADD } bench_kind;

typedef struct bench_row {
    const char *name;
    bench_kind kind;
    unsigned bits;
    dq_rounding rounding;
    unsigned checksum; /* 1: messages carry the payload CRC32C */
} bench_row;

/* Execution order = print order. Decoders use the message of a plain encode with the same
 * bits and rounding (re-encoded, untimed, when the previous row left something else). */
static const bench_row ROWS[] = {
    {"encode", K_ENCODE, 4u, DQ_ROUND_STOCHASTIC, 0u}, /* the headline row */
    {"encode-ef", K_ENCODE_EF, 4u, DQ_ROUND_STOCHASTIC, 0u},
    {"decode", K_DECODE, 4u, DQ_ROUND_STOCHASTIC, 0u},
    {"decode-add", K_DECODE_ADD, 4u, DQ_ROUND_STOCHASTIC, 0u},
    {"encode-nearest", K_ENCODE, 4u, DQ_ROUND_NEAREST, 0u},
    {"encode", K_ENCODE, 2u, DQ_ROUND_STOCHASTIC, 0u},
    {"decode-add", K_DECODE_ADD, 2u, DQ_ROUND_STOCHASTIC, 0u},
    {"encode", K_ENCODE, 8u, DQ_ROUND_STOCHASTIC, 0u},
    {"decode-add", K_DECODE_ADD, 8u, DQ_ROUND_STOCHASTIC, 0u},
    {"encode-crc", K_ENCODE, 4u, DQ_ROUND_STOCHASTIC, 1u},
    {"decode-add-crc", K_DECODE_ADD, 4u, DQ_ROUND_STOCHASTIC, 1u},
};
#define BENCH_NROWS (sizeof ROWS / sizeof ROWS[0])
#define BENCH_MAX_BITS 8u /* largest bits in ROWS: sizes the message buffer */

typedef struct bench_ctx {
    size_t n;
    float *x;   /* input gradient, never modified */
    float *res; /* error-feedback residual */
    float *acc; /* decode output / decode-add accumulator / add-baseline destination */
    uint8_t *msg;
    size_t cap, len;
    /* what msg holds: a plain encode with these params, or nothing (msg_ok == 0) */
    int msg_ok;
    unsigned msg_bits, msg_checksum;
    dq_rounding msg_rounding;
    float weight;
} bench_ctx;

/* Written by the read baseline so the compiler must compute the sum. */
static volatile float bench_sink;

static void die(const char *what, const char *detail) {
    fprintf(stderr, "bench [%s]: %s: %s\n", dq_simd_backend(), what, detail);
    exit(1);
}

static void check(dq_status st, const char *what) {
    if (st != DQ_OK) die(what, dq_strerror(st));
}

static double now_s(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) die("clock_gettime", strerror(errno));
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* malloc with the returned pointer moved up to a BENCH_ALIGN boundary; *base is what to free. */
static void *alloc_aligned(size_t bytes, void **base) {
    uintptr_t p;
    if (bytes > SIZE_MAX - BENCH_ALIGN) die("malloc", "size overflow");
    *base = malloc(bytes + BENCH_ALIGN);
    if (!*base) die("malloc", strerror(errno));
    p = (uintptr_t)*base;
    p = (p + (BENCH_ALIGN - 1u)) & ~(uintptr_t)(BENCH_ALIGN - 1u);
    return (void *)p;
}

/* ---- deterministic input: N(0, 1) by Box-Muller over a splitmix64 stream */
static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}
static void fill_gaussian(float *x, size_t n, uint64_t seed) {
    const double two_pi = 6.283185307179586476925286766559;
    uint64_t s = seed;
    size_t i;
    for (i = 0; i < n; i += 2) {
        /* u1 in (0, 1] so log(u1) is finite; u2 in [0, 1) */
        double u1 = ((double)(splitmix64(&s) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
        double u2 = (double)(splitmix64(&s) >> 11) * (1.0 / 9007199254740992.0);
        double r = sqrt(-2.0 * log(u1));
        x[i] = (float)(r * cos(two_pi * u2));
        if (i + 1 < n) x[i + 1] = (float)(r * sin(two_pi * u2));
    }
}

/* ---- baselines: what a plain loop over the same bytes costs on this machine
 * Encoder baseline: sum of squares of x, a plain read pass. We chose EIGHT independent float
 * accumulators (element i goes to accumulator i % 8), not one and not four: with
 * -ffp-contract=off and no -ffast-math a single accumulator is one serial chain of dependent
 * adds (one add per ~4-cycle FP-add latency, ~3 GB/s here), an artificially slow baseline.
 * Eight chains hide the latency; GCC -O2 turns them into one 8-lane vector accumulator (two
 * with SSE2), each lane still summed in index order, so the pass runs at ~27 GB/s from cache
 * and is memory-bound (~11 GB/s) at n = 2^24, as a fair "read it once" reference should be.
 * The result goes to a volatile sink so the loop cannot be dropped. */
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

/* Decoder baseline: acc[i] += x[i], read x, read-modify-write acc. Unrolled by eight only so
 * that GCC -O2 (whose "very cheap" vectorizer leaves the rolled loop scalar) emits one vector
 * add per eight elements; the scalar loop is core-bound (~7 GB/s from cache, ~4.9 GB/s at
 * n = 2^24, against ~6 GB/s memory-bound for this version). Same operations, same order. */
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

static int is_encoder(bench_kind k) { return k == K_ENCODE || k == K_ENCODE_EF; }

static void row_params(const bench_row *r, dq_params *p) {
    memset(p, 0, sizeof *p);
    p->bits = r->bits;
    p->bucket = BENCH_BUCKET;
    p->scheme = DQ_SCHEME_QSGD;
    p->rounding = r->rounding;
    p->norm = DQ_NORM_L2;
    p->seed = 42u;
    p->step = 1u;
    p->stream = 0u;
    p->checksum = r->checksum;
}

static dq_status run_kernel(bench_ctx *c, const bench_row *r) {
    dq_params p;
    row_params(r, &p);
    switch (r->kind) {
        case K_ENCODE:
            return dq_encode(&p, c->x, c->n, NULL, c->msg, c->cap, &c->len);
        case K_ENCODE_EF:
            return dq_encode(&p, c->x, c->n, c->res, c->msg, c->cap, &c->len);
        case K_DECODE:
            return dq_decode(c->msg, c->len, c->acc, c->n);
        case K_DECODE_ADD:
            return dq_decode_add(c->msg, c->len, c->weight, c->acc, c->n);
    }
    return DQ_ERR_PARAM;
}

static void run_baseline(bench_ctx *c, const bench_row *r) {
    if (is_encoder(r->kind))
        bench_sink = base_sumsq(c->x, c->n);
    else
        base_add(c->acc, c->x, c->n);
}

/* After an encode: the message must be exactly what dq_encoded_size() promised and parse back
 * with the right parameters. Untimed. */
static void verify_message(const bench_ctx *c, const bench_row *r) {
    dq_params p;
    dq_header h;
    size_t want;
    row_params(r, &p);
    check(dq_encoded_size(&p, c->n, &want), "dq_encoded_size");
    if (c->len != want) die("dq_encode", "message length differs from dq_encoded_size()");
    check(dq_header_read(c->msg, c->len, &h), "dq_header_read");
    if (h.count != c->n || h.bits != r->bits || h.bucket != BENCH_BUCKET || h.msg_size != c->len ||
        ((h.flags & DQ_FLAG_STOCHASTIC) != 0) != (r->rounding != DQ_ROUND_NEAREST) ||
        ((h.flags & DQ_FLAG_CHECKSUM) != 0) != (r->checksum != 0))
        die("dq_header_read", "header does not match the encode parameters");
}

/* Make msg hold a plain encode with r's bits and rounding (untimed). */
static void ensure_message(bench_ctx *c, const bench_row *r) {
    bench_row enc;
    if (c->msg_ok && c->msg_bits == r->bits && c->msg_rounding == r->rounding && c->msg_checksum == r->checksum)
        return;
    enc = *r;
    enc.kind = K_ENCODE;
    check(run_kernel(c, &enc), "dq_encode (message for decoding)");
    verify_message(c, &enc);
    c->msg_ok = 1;
    c->msg_bits = r->bits;
    c->msg_rounding = r->rounding;
    c->msg_checksum = r->checksum;
}

/* Warm up once, then R alternating rounds; best (minimum) time of each. */
static void measure(bench_ctx *c, const bench_row *r, unsigned reps, double *t_kernel, double *t_base) {
    unsigned k;
    double bk = HUGE_VAL, bb = HUGE_VAL;
    if (!is_encoder(r->kind)) ensure_message(c, r);
    check(run_kernel(c, r), r->name);
    run_baseline(c, r);
    for (k = 0; k < reps; k++) {
        double t0, t1, t2, t3;
        dq_status st;
        t0 = now_s();
        st = run_kernel(c, r);
        t1 = now_s();
        check(st, r->name);
        t2 = now_s();
        run_baseline(c, r);
        t3 = now_s();
        if (t1 - t0 < bk) bk = t1 - t0;
        if (t3 - t2 < bb) bb = t3 - t2;
    }
    if (is_encoder(r->kind)) {
        verify_message(c, r);
        /* msg now holds this encode; encode-ef's message is not a plain encode of x */
        c->msg_ok = r->kind == K_ENCODE;
        c->msg_bits = r->bits;
        c->msg_rounding = r->rounding;
        c->msg_checksum = r->checksum;
    }
    *t_kernel = bk;
    *t_base = bb;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: bench [--csv] [--no-header] [--n N] [--reps R]\n"
            "  --csv        print CSV: kernel,isa,bits,bucket,n,gbps,baseline_gbps,ratio\n"
            "  --no-header  omit the header (CSV header line, or the table's title and column names)\n"
            "  --n N        elements per vector (default %zu)\n"
            "  --reps R     timed rounds per kernel and baseline, best of R reported (default %u)\n",
            BENCH_DEFAULT_N, BENCH_DEFAULT_REPS);
}

static unsigned long long parse_count(const char *opt, const char *s) {
    char *end;
    unsigned long long v;
    if (!s || *s == '\0' || *s == '-') {
        fprintf(stderr, "bench: %s needs a positive integer\n", opt);
        exit(2);
    }
    errno = 0;
    v = strtoull(s, &end, 0);
    if (errno != 0 || *end != '\0' || v == 0) {
        fprintf(stderr, "bench: %s: bad value '%s'\n", opt, s);
        exit(2);
    }
    return v;
}

/* Accepts "--opt VALUE" and "--opt=VALUE"; returns the value or NULL if argv[*i] is not opt. */
static const char *opt_value(int argc, char **argv, int *i, const char *opt) {
    size_t len = strlen(opt);
    const char *a = argv[*i];
    if (strncmp(a, opt, len) != 0) return NULL;
    if (a[len] == '=') return a + len + 1;
    if (a[len] != '\0') return NULL;
    if (*i + 1 >= argc) {
        fprintf(stderr, "bench: %s needs a value\n", opt);
        exit(2);
    }
    return argv[++*i];
}

int main(int argc, char **argv) {
    int csv = 0, header = 1, i;
    size_t n = BENCH_DEFAULT_N, r;
    unsigned reps = BENCH_DEFAULT_REPS;
    const char *isa = dq_simd_backend();
    void *bx, *bres, *bacc, *bmsg;
    bench_ctx c;

    for (i = 1; i < argc; i++) {
        const char *v;
        if (strcmp(argv[i], "--csv") == 0) {
            csv = 1;
        } else if (strcmp(argv[i], "--no-header") == 0) {
            header = 0;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if ((v = opt_value(argc, argv, &i, "--n")) != NULL) {
            unsigned long long nv = parse_count("--n", v);
            if (nv > (unsigned long long)(SIZE_MAX / 4u - BENCH_ALIGN) || nv > (unsigned long long)DQ_MAX_ELEMS) {
                fprintf(stderr, "bench: --n %llu is too large\n", nv);
                return 2;
            }
            n = (size_t)nv;
        } else if ((v = opt_value(argc, argv, &i, "--reps")) != NULL) {
            unsigned long long rv = parse_count("--reps", v);
            if (rv > 1000000u) {
                fprintf(stderr, "bench: --reps %llu is too large\n", rv);
                return 2;
            }
            reps = (unsigned)rv;
        } else {
            fprintf(stderr, "bench: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (strcmp(isa, BENCH_TARGET) != 0)
        fprintf(stderr, "bench: note: built for %s but the kernels are %s (is SIMDe installed?)\n", BENCH_TARGET, isa);

    memset(&c, 0, sizeof c);
    c.n = n;
    c.weight = 0.5f;
    c.cap = dq_encode_bound(n, BENCH_MAX_BITS);
    if (c.cap == 0) die("dq_encode_bound", "n or bits out of range");
    c.x = (float *)alloc_aligned(n * sizeof(float), &bx);
    c.res = (float *)alloc_aligned(n * sizeof(float), &bres);
    c.acc = (float *)alloc_aligned(n * sizeof(float), &bacc);
    c.msg = (uint8_t *)alloc_aligned(c.cap, &bmsg);
    /* touch every page now so no timed call pays first-touch page faults */
    fill_gaussian(c.x, n, 0x5EED0001u);
    memset(c.res, 0, n * sizeof(float));
    memset(c.acc, 0, n * sizeof(float));
    memset(c.msg, 0, c.cap);

    if (header) {
        if (csv) {
            printf("kernel,isa,bits,bucket,n,gbps,baseline_gbps,ratio\n");
        } else {
            printf("dqsgd %s throughput | backend: %s (this build) | compiler: %s | n = %zu (%.1f MiB of float32) | best of %u\n",
                   DQSGD_VERSION_STRING, isa, BENCH_COMPILER, n,
                   (double)n * 4.0 / (1024.0 * 1024.0), reps);
            printf("QSGD, L2 norm per bucket, stochastic rounding unless -nearest. gbps = n*4 bytes / s for every\n"
                   "kernel. Baselines, same buffers: encoders = sum of squares over x (8 float accumulators),\n"
                   "decoders = acc[i] += x[i]. ratio = gbps / baseline_gbps.\n");
            printf("%-14s  %-6s  %4s  %6s  %10s  %7s  %13s  %6s\n", "kernel", "isa", "bits", "bucket", "n", "gbps",
                   "baseline_gbps", "ratio");
        }
        fflush(stdout);
    }

    for (r = 0; r < BENCH_NROWS; r++) {
        const bench_row *row = &ROWS[r];
        double tk, tb, gk, gb, bytes = (double)n * 4.0;
        measure(&c, row, reps, &tk, &tb);
        gk = bytes / tk / 1e9;
        gb = bytes / tb / 1e9;
        if (csv)
            printf("%s,%s,%u,%u,%zu,%.3f,%.3f,%.3f\n", row->name, isa, row->bits, BENCH_BUCKET, n, gk,
                   gb, gk / gb);
        else
            printf("%-14s  %-6s  %4u  %6u  %10zu  %7.2f  %13.2f  %6.3f\n", row->name, isa, row->bits, BENCH_BUCKET, n,
                   gk, gb, gk / gb);
        fflush(stdout);
    }

    free(bx);
    free(bres);
    free(bacc);
    free(bmsg);
    return 0;
}
