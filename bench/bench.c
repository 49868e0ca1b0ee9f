/* bench/bench.c - throughput benchmark for dqsgd.
 *
 * Built once per ISA level by `make bench` (scalar = -DDQ_NO_SIMD, sse2, avx2, avx512) and run
 * once per build; the first binary prints the header, the others get --no-header so the rows
 * form one table.
 *
 *   bench [--csv] [--no-header] [--n N] [--reps R]
 *
 * One row per kernel: kernel, isa, bits, bucket, n, gbps, baseline_gbps, ratio, msg_bpe.
 *   gbps           n * 4 / seconds / 1e9: float32 INPUT bytes per second for every kernel,
 *                  decoders included (a decoder "processes" n floats).
 *   baseline_gbps  same unit, for a plain pass over the same buffers in the same process:
 *                  encoders: sum of squares over x (read pass);
 *                  decoders: acc[i] += x[i] over n floats.
 *   ratio          gbps / baseline_gbps.
 *   msg_bpe        bits per element of the message the row writes or reads: bytes * 8 / n,
 *                  header and scales included.
 * Timing: one warm-up call of the kernel and of its baseline, then R rounds of (kernel,
 * baseline) alternately; the minimum time of each is reported, so both see the same machine
 * state. Every parameter is QSGD with an L2 norm per bucket; rounding is stochastic unless the
 * kernel name ends in -nearest; -crc rows carry the payload checksum (dq_params.checksum), so
 * they cost the CRC32C pass on top. -rans, -auto and -elias rows send the codes with that coder
 * (dq_params.coder; auto = the smallest); -default rows use DQ_CODER_DEFAULT, what a zeroed
 * dq_params sends (AUTO, and the payload checksum on a coded message); their baselines are
 * those of the fixed rows. A row
 * whose coder this build of dqsgd.h cannot run yet (Elias while it lands) prints n/a in the
 * figures, with the reason on stderr. The input is N(0,1) from a fixed-seed splitmix64 stream.
 * encode-ef passes a residual that carries over from call to call (error feedback in steady
 * state); decode-add uses weight 0.5. Buffers come from malloc, moved up to a 64-byte boundary
 * as a framework's tensors would be, and are touched before timing starts. Every message is
 * checked untimed after its encode: its header, its size (dq_encode_capacity() for the fixed
 * coder; for the others dq_coded_size() of the fixed message) and, for coded messages, that it
 * re-codes to the fixed message byte for byte. */
#define _POSIX_C_SOURCE 199309L

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dqsgd.h"
#include "bench_util.h"
#include "bench_rows.h"

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
#define BENCH_ALIGN 64u /* cache-line alignment of every buffer (malloc only promises 16) */


typedef struct bench_ctx {
    size_t n;
    float *x;   /* input gradient, never modified */
    float *res; /* error-feedback residual */
    float *acc; /* decode output / decode-add accumulator / add-baseline destination */
    uint8_t *msg;
    uint8_t *ref, *tmp; /* checks of coded messages: the fixed message, and msg re-coded to it */
    size_t cap, len;    /* cap: of msg, ref and tmp, enough for every row */
    /* what msg holds: a plain encode with these params, or nothing (msg_ok == 0) */
    int msg_ok;
    unsigned msg_bits, msg_checksum, msg_coder;
    dq_scheme msg_scheme;
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

/* After an encode (untimed): NULL if msg is what r's params promise, else what is wrong. The
 * header must match the params; a fixed message must have the size dq_encode_capacity() gives;
 * a coded one the size dq_coded_size() gives for the fixed message of the same params (made
 * into ref), and it must re-code (dq_recode) to that fixed message byte for byte. */
static const char *verify_message(bench_ctx *c, const bench_row *r) {
    dq_params p;
    dq_header h;
    size_t want, ref_len, tmp_len;
    int def = r->coder == DQ_CODER_DEFAULT; /* AUTO, and the checksum on coded forms */
    row_params(r, &p);
    if (dq_header_read(c->msg, c->len, &h) != DQ_OK) return "dq_header_read: the message does not parse";
    if (h.count != c->n || h.bits != r->bits || h.scheme != (unsigned)p.scheme || h.bucket != BENCH_BUCKET || h.msg_size != c->len ||
        ((h.flags & DQ_FLAG_STOCHASTIC) != 0) != (r->rounding != DQ_ROUND_NEAREST) ||
        ((h.flags & DQ_FLAG_CHECKSUM) != 0) != (r->checksum != 0 || (def && h.coder != DQ_CODER_FIXED)) ||
        (r->coder == DQ_CODER_AUTO || def ? h.coder > DQ_CODER_RANS
                                          : h.coder != (r->coder == DQ_CODER_FIXED_ONLY ? DQ_CODER_FIXED : r->coder)))
        return "dq_header_read: header does not match the encode parameters";
    if (r->coder == DQ_CODER_FIXED_ONLY) {
        check(dq_encode_capacity(&p, c->n, &want), "dq_encode_capacity");
        return c->len == want ? NULL : "dq_encode: message length differs from dq_encode_capacity()";
    }
    if (r->kind != K_ENCODE) die(r->name, "a coded row must be a plain encode");
    p.coder = DQ_CODER_FIXED_ONLY;
    p.checksum = (h.flags & DQ_FLAG_CHECKSUM) ? 1u : 0u;
    check(dq_encode(&p, c->x, c->n, NULL, c->ref, c->cap, &ref_len), "dq_encode (fixed reference)");
    if (dq_coded_size(c->ref, ref_len, def ? DQ_CODER_AUTO : r->coder, &want) != DQ_OK) return "dq_coded_size failed";
    if (c->len != want) return "dq_encode: message length differs from dq_coded_size()";
    if (dq_recode(c->msg, c->len, DQ_CODER_FIXED, c->tmp, c->cap, &tmp_len) != DQ_OK)
        return "dq_recode to the fixed coder failed";
    if (tmp_len != ref_len || memcmp(c->tmp, c->ref, ref_len) != 0)
        return "the message does not re-code to the fixed message";
    return NULL;
}

/* A row that failed: fatal, except for an Elias row (the coder may not have landed in this
 * build of dqsgd.h), which is reported as n/a with the reason on stderr. Returns 0. */
static int unavailable(bench_ctx *c, const bench_row *r, const char *what, const char *detail) {
    c->msg_ok = 0; /* msg may hold anything now */
    if (r->coder != DQ_CODER_ELIAS) die(what, detail);
    fprintf(stderr, "bench [%s]: note: %s (%u bits): %s: %s: reported as n/a\n", dq_simd_backend(), r->name, r->bits,
            what, detail);
    return 0;
}

static void note_message(bench_ctx *c, const bench_row *r) {
    /* encode-ef's message is not a plain encode of x */
    c->msg_ok = r->kind == K_ENCODE;
    c->msg_bits = r->bits;
    c->msg_rounding = r->rounding;
    c->msg_checksum = r->checksum;
    c->msg_coder = r->coder;
    c->msg_scheme = r->scheme;
}

/* Make msg hold a plain encode with r's bits, rounding, checksum and coder (untimed).
 * Returns 0 if that failed (an Elias row: n/a). */
static int ensure_message(bench_ctx *c, const bench_row *r) {
    bench_row enc;
    dq_status st;
    const char *err;
    if (c->msg_ok && c->msg_bits == r->bits && c->msg_rounding == r->rounding && c->msg_checksum == r->checksum &&
        c->msg_coder == r->coder && c->msg_scheme == r->scheme)
        return 1;
    enc = *r;
    enc.kind = K_ENCODE;
    st = run_kernel(c, &enc);
    if (st != DQ_OK) return unavailable(c, r, "dq_encode (message for decoding)", dq_strerror(st));
    if ((err = verify_message(c, &enc)) != NULL) return unavailable(c, r, "message for decoding", err);
    note_message(c, &enc);
    return 1;
}

/* Warm up once, then R alternating rounds; best (minimum) time of each. Returns 0 when the
 * row is not available (see unavailable()); *bpe is then untouched. */
static int measure(bench_ctx *c, const bench_row *r, unsigned reps, double *t_kernel, double *t_base, double *bpe) {
    unsigned k;
    double bk = HUGE_VAL, bb = HUGE_VAL;
    dq_status st;
    const char *err;
    if (!is_encoder(r->kind) && !ensure_message(c, r)) return 0;
    st = run_kernel(c, r);
    if (st != DQ_OK) return unavailable(c, r, r->name, dq_strerror(st));
    /* check the warm-up's message now, before R timed calls of a kernel that may be broken */
    if (is_encoder(r->kind) && (err = verify_message(c, r)) != NULL) return unavailable(c, r, r->name, err);
    run_baseline(c, r);
    for (k = 0; k < reps; k++) {
        double t0, t1, t2, t3;
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
        if ((err = verify_message(c, r)) != NULL) die(r->name, err);
        note_message(c, r);
    }
    *t_kernel = bk;
    *t_base = bb;
    *bpe = (double)c->len * 8.0 / (double)c->n;
    return 1;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: bench [--csv] [--no-header] [--n N] [--reps R]\n"
            "  --csv        print CSV: kernel,isa,bits,bucket,n,gbps,baseline_gbps,ratio,msg_bpe\n"
            "               (msg_bpe: message bits per element; n/a in the last four columns of a row\n"
            "               whose coder this build cannot run)\n"
            "  --no-header  omit the header (CSV header line, or the table's title and column names)\n"
            "  --n N        elements per vector (default %zu)\n"
            "  --reps R     timed rounds per kernel and baseline, best of R reported (default %u)\n",
            BENCH_DEFAULT_N, BENCH_DEFAULT_REPS);
}

int main(int argc, char **argv) {
    int csv = 0, header = 1, i;
    size_t n = BENCH_DEFAULT_N, r;
    unsigned reps = BENCH_DEFAULT_REPS;
    const char *isa = dq_simd_backend();
    void *bx, *bres, *bacc, *bmsg, *bref, *btmp;
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
        } else if ((v = bench_opt_value("bench", argc, argv, &i, "--n")) != NULL) {
            unsigned long long nv = bench_parse_count("bench", "--n", v);
            if (nv > (unsigned long long)(SIZE_MAX / 4u - BENCH_ALIGN) || nv > (unsigned long long)DQ_MAX_ELEMS) {
                fprintf(stderr, "bench: --n %llu is too large\n", nv);
                return 2;
            }
            n = (size_t)nv;
        } else if ((v = bench_opt_value("bench", argc, argv, &i, "--reps")) != NULL) {
            unsigned long long rv = bench_parse_count("bench", "--reps", v);
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
    for (r = 0; r < BENCH_NROWS; r++) { /* room for every row's message */
        size_t b = ROWS[r].coder == DQ_CODER_FIXED_ONLY ? dq_encode_bound(n, ROWS[r].bits)
                                                   : dq_encode_bound_coded(n, ROWS[r].bits);
        if (b == 0) die("dq_encode_bound", "n or bits out of range");
        if (b > c.cap) c.cap = b;
    }
    c.x = (float *)alloc_aligned(n * sizeof(float), &bx);
    c.res = (float *)alloc_aligned(n * sizeof(float), &bres);
    c.acc = (float *)alloc_aligned(n * sizeof(float), &bacc);
    c.msg = (uint8_t *)alloc_aligned(c.cap, &bmsg);
    c.ref = (uint8_t *)alloc_aligned(c.cap, &bref);
    c.tmp = (uint8_t *)alloc_aligned(c.cap, &btmp);
    /* touch every page now so no timed call pays first-touch page faults */
    bench_fill_gaussian(c.x, n, 0x5EED0001u);
    memset(c.res, 0, n * sizeof(float));
    memset(c.acc, 0, n * sizeof(float));
    memset(c.msg, 0, c.cap);
    memset(c.ref, 0, c.cap);
    memset(c.tmp, 0, c.cap);

    if (header) {
        if (csv) {
            printf("kernel,isa,bits,bucket,n,gbps,baseline_gbps,ratio,msg_bpe\n");
        } else {
            printf("dqsgd %s throughput | backend: %s (this build) | compiler: %s | n = %zu (%.1f MiB of float32) | best of %u\n",
                   DQSGD_VERSION_STRING, isa, BENCH_COMPILER, n,
                   (double)n * 4.0 / (1024.0 * 1024.0), reps);
            printf("QSGD, L2 norm per bucket, stochastic rounding unless -nearest. gbps = n*4 bytes / s for every\n"
                   "kernel. Baselines, same buffers: encoders = sum of squares over x (8 float accumulators),\n"
                   "decoders = acc[i] += x[i]. ratio = gbps / baseline_gbps. msg_bpe = message bytes*8/n.\n"
                   "-rans/-auto/-elias: codes sent with that coder (auto: the smallest); -default: a zeroed dq_params\n"
                   "(auto, and the checksum on coded messages); n/a: coder not available.\n");
            printf("%-16s  %-6s  %4s  %6s  %10s  %7s  %13s  %6s  %7s\n", "kernel", "isa", "bits", "bucket", "n", "gbps",
                   "baseline_gbps", "ratio", "msg_bpe");
        }
        fflush(stdout);
    }

    for (r = 0; r < BENCH_NROWS; r++) {
        const bench_row *row = &ROWS[r];
        double tk, tb, gk, gb, bpe, bytes = (double)n * 4.0;
        if (!measure(&c, row, reps, &tk, &tb, &bpe)) {
            if (csv)
                printf("%s,%s,%u,%u,%zu,n/a,n/a,n/a,n/a\n", row->name, isa, row->bits, BENCH_BUCKET, n);
            else
                printf("%-16s  %-6s  %4u  %6u  %10zu  %7s  %13s  %6s  %7s\n", row->name, isa, row->bits, BENCH_BUCKET,
                       n, "n/a", "n/a", "n/a", "n/a");
            fflush(stdout);
            continue;
        }
        gk = bytes / tk / 1e9;
        gb = bytes / tb / 1e9;
        if (csv)
            printf("%s,%s,%u,%u,%zu,%.3f,%.3f,%.3f,%.4f\n", row->name, isa, row->bits, BENCH_BUCKET, n, gk,
                   gb, gk / gb, bpe);
        else
            printf("%-16s  %-6s  %4u  %6u  %10zu  %7.2f  %13.2f  %6.3f  %7.4f\n", row->name, isa, row->bits,
                   BENCH_BUCKET, n, gk, gb, gk / gb, bpe);
        fflush(stdout);
    }

    free(bx);
    free(bres);
    free(bacc);
    free(bmsg);
    free(bref);
    free(btmp);
    return 0;
}
