/* bench/costmodel.c - which aggregation pattern wins where: bytes per worker per step from the
 * cost model of doc/MATHS.md 14, and time per step simulated from codec speeds measured in this run.
 *
 *   costmodel [--d D] [--bits B] [--alpha-us A] [--n N] [--reps R] [--csv]
 *     D: model size in elements (default 2^24); B: bits per element (default 4); A: per-message
 *     latency in microseconds (default 5); N, R: vector length and rounds of the codec timing
 *     (defaults 2^22, 5).
 *
 * Patterns, per worker and step, M workers, message size S(n, b) = dq_encode_capacity() of n
 * elements at b bits (header, one scale per 512-element bucket, codes), c = d / M:
 *   fp32      ring allreduce of float32:      2 (M-1)/M 4d bytes sent (and received),
 *             2 (M-1) messages, (M-1)/M d float adds
 *   allgather ring allgatherv of messages:    (M-1) S(d, b), M-1 messages; encode d,
 *             decode-add M d
 *   sra       alltoallv of chunk messages, then allgatherv of the re-quantized chunks:
 *             (M-1) S(c, b) + (M-1) S(c, b), 2 (M-1) messages; encode d, decode-add d,
 *             encode c (the re-quantization), decode d
 *   shared    ring allreduce (max) of the bucket exponents, then ring allreduce (sum) of the
 *             levels in w = dq_shared_width(b, M) bits: 2 (M-1)/M (d/512 + d w/8), 4 (M-1)
 *             messages; exponents d, encode d, (M-1)/M d integer adds, decode d
 *   (the size exchanges of dqsgd_mpi.h are counted too: 16 bytes per message for allgather,
 *   8 for sra.)
 * Time = latency x messages + bytes sent / bandwidth + compute, with compute from the
 * measured ns per element of each codec call and no overlap of compute and communication (a
 * pessimistic, simple model: real rings pipeline). Each measured rate is the minimum of R
 * timed rounds; the machine's noise moves the compute terms, not the byte counts.
 * Build and run: make bench-costmodel (ARGS="--d D --bits B"). */
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

static const char *prog = "costmodel";

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "%s: out of memory\n", prog);
        exit(1);
    }
    return p;
}
static void ok(dq_status st, const char *what) {
    if (st != DQ_OK) {
        fprintf(stderr, "%s: %s: %s\n", prog, what, dq_strerror(st));
        exit(1);
    }
}

/* ns per element of each step a pattern runs, measured in this process */
typedef struct rates {
    double enc, dadd, dec, fadd, shexp, shenc, shdec, iadd[3]; /* iadd: int8, int16, int32 sums */
} rates;

static volatile float sink;

/* Integer reduction as an MPI_SUM of levels does it: acc += x elementwise. */
#define DEF_IADD(name, T)                                                           \
    static void name(T *restrict acc, const T *restrict x, size_t n) {             \
        size_t i;                                                                   \
        for (i = 0; i < n; i++) acc[i] = (T)(acc[i] + x[i]);                        \
    }
DEF_IADD(iadd8, int8_t)
DEF_IADD(iadd16, int16_t)
DEF_IADD(iadd32, int32_t)

static void measure(size_t n, unsigned bits, unsigned reps, rates *r) {
    float *x = (float *)xmalloc(n * sizeof *x), *acc = (float *)xmalloc(n * sizeof *acc);
    size_t cap = dq_encode_bound(n, bits), len = 0, nb;
    uint8_t *msg = (uint8_t *)xmalloc(cap);
    int32_t *lv = (int32_t *)xmalloc(n * sizeof *lv), *ls = (int32_t *)xmalloc(n * sizeof *ls);
    int8_t *ex;
    dq_params p, sp;
    double best[10];
    unsigned k, rep;
    memset(&p, 0, sizeof p);
    p.bits = bits;
    p.seed = 1;
    sp = p;
    sp.norm = DQ_NORM_MAX;
    nb = dq_shared_buckets(&sp, n);
    ex = (int8_t *)xmalloc(nb);
    bench_fill_gaussian(x, n, 42);
    memset(acc, 0, n * sizeof *acc);
    memset(ls, 0, n * sizeof *ls);
    for (k = 0; k < 10; k++) best[k] = 1e30;
    for (rep = 0; rep <= reps; rep++) { /* round 0 warms up */
        double t[11];
        t[0] = bench_now();
        ok(dq_encode(&p, x, n, NULL, msg, cap, &len), "dq_encode");
        t[1] = bench_now();
        ok(dq_decode_add(msg, len, 0.5f, acc, n), "dq_decode_add");
        t[2] = bench_now();
        ok(dq_decode(msg, len, acc, n), "dq_decode");
        t[3] = bench_now();
        base_add(acc, x, n);
        t[4] = bench_now();
        ok(dq_shared_exponents(&sp, x, n, NULL, ex), "dq_shared_exponents");
        t[5] = bench_now();
        ok(dq_shared_encode(&sp, x, n, NULL, ex, 32, lv), "dq_shared_encode");
        t[6] = bench_now();
        ok(dq_shared_decode(&sp, lv, 32, n, ex, 0.5f, acc), "dq_shared_decode");
        t[7] = bench_now();
        iadd8((int8_t *)ls, (const int8_t *)lv, n);
        t[8] = bench_now();
        iadd16((int16_t *)ls, (const int16_t *)lv, n);
        t[9] = bench_now();
        iadd32(ls, lv, n);
        t[10] = bench_now();
        sink = acc[n / 2] + (float)ls[n / 3];
        if (rep)
            for (k = 0; k < 10; k++)
                if (t[k + 1] - t[k] < best[k]) best[k] = t[k + 1] - t[k];
    }
    for (k = 0; k < 10; k++) best[k] *= 1e9 / (double)n;
    r->enc = best[0], r->dadd = best[1], r->dec = best[2], r->fadd = best[3];
    r->shexp = best[4], r->shenc = best[5], r->shdec = best[6];
    r->iadd[0] = best[7], r->iadd[1] = best[8], r->iadd[2] = best[9];
    free(x), free(acc), free(msg), free(lv), free(ls), free(ex);
}

enum { P_FP32, P_ALLGATHER, P_SRA, P_SHARED, NPAT };
static const char *const pat_name[NPAT] = {"fp32", "allgather", "sra", "shared"};

static double msg_size(size_t n, unsigned bits) {
    dq_params p;
    size_t s = 0;
    if (!n) return 0.0;
    memset(&p, 0, sizeof p);
    p.bits = bits;
    ok(dq_encode_capacity(&p, n, &s), "dq_encode_capacity");
    return (double)s;
}

/* Bytes sent per worker per step, messages per step, compute seconds. Zero bytes and a
 * negative time mean the pattern cannot run (no shared width for this M). */
typedef struct cost {
    double bytes, msgs, compute_s;
} cost;

static cost pattern_cost(int pat, double d, unsigned bits, double M, const rates *r) {
    cost c = {0.0, 0.0, 0.0};
    double f = (M - 1.0) / M, chunk = ceil(d / M);
    switch (pat) {
    case P_FP32:
        c.bytes = 2.0 * f * 4.0 * d;
        c.msgs = 2.0 * (M - 1.0);
        c.compute_s = f * d * r->fadd;
        break;
    case P_ALLGATHER:
        c.bytes = (M - 1.0) * (msg_size((size_t)d, bits) + 16.0); /* size and room, 2 x u64 */
        c.msgs = M - 1.0;
        c.compute_s = d * r->enc + M * d * r->dadd;
        break;
    case P_SRA:
        c.bytes = 2.0 * (M - 1.0) * (msg_size((size_t)chunk, bits) + 8.0);
        c.msgs = 2.0 * (M - 1.0);
        c.compute_s = d * r->enc + d * r->dadd + chunk * r->enc + d * r->dec;
        break;
    default: { /* P_SHARED */
        unsigned w = dq_shared_width(bits, (uint64_t)M);
        if (!w) {
            c.compute_s = -1.0;
            break;
        }
        c.bytes = 2.0 * f * (ceil(d / 512.0) + d * (double)w / 8.0);
        c.msgs = 4.0 * (M - 1.0);
        c.compute_s = d * (r->shexp + r->shenc + r->shdec) + f * d * r->iadd[w == 8 ? 0 : w == 16 ? 1 : 2];
        break;
    }
    }
    c.compute_s *= 1e-9;
    return c;
}

int main(int argc, char **argv) {
    size_t n = (size_t)1 << 22;
    double d = 16777216.0, alpha = 5e-6;
    unsigned bits = 4, reps = 5, csv = 0, li, pat;
    static const double gbit[3] = {1.0, 10.0, 100.0};
    rates r;
    double M;
    int i;
    for (i = 1; i < argc; i++) {
        const char *v;
        if (!strcmp(argv[i], "--csv")) {
            csv = 1;
        } else if ((v = bench_opt_value(prog, argc, argv, &i, "--d"))) {
            d = (double)bench_parse_count(prog, "--d", v);
        } else if ((v = bench_opt_value(prog, argc, argv, &i, "--bits"))) {
            bits = (unsigned)bench_parse_count(prog, "--bits", v);
        } else if ((v = bench_opt_value(prog, argc, argv, &i, "--alpha-us"))) {
            alpha = 1e-6 * (double)bench_parse_count(prog, "--alpha-us", v);
        } else if ((v = bench_opt_value(prog, argc, argv, &i, "--n"))) {
            n = (size_t)bench_parse_count(prog, "--n", v);
        } else if ((v = bench_opt_value(prog, argc, argv, &i, "--reps"))) {
            reps = (unsigned)bench_parse_count(prog, "--reps", v);
        } else {
            fprintf(stderr, "usage: %s [--d D] [--bits B] [--alpha-us A] [--n N] [--reps R] [--csv]\n", prog);
            return 2;
        }
    }
    if (bits < 2 || bits > 16 || !n || !reps || d < 1.0) {
        fprintf(stderr, "%s: need 2 <= bits <= 16, n, reps, d >= 1\n", prog);
        return 2;
    }
    measure(n, bits, reps, &r);
    if (csv) {
        printf("kind,M,gbit,pattern,bytes_sent,time_ms\n");
    } else {
        printf("dqsgd cost model: d = %.0f elements, %u bits, latency %.1f us per message, codec %s\n", d, bits,
               alpha * 1e6, dq_simd_backend());
        printf("measured ns/element (n = %zu, min of %u): encode %.3f, decode-add %.3f, decode %.3f, float add %.3f,\n"
               "  shared exponents %.3f, shared encode %.3f, shared decode %.3f, int add 8/16/32 %.3f/%.3f/%.3f\n\n",
               n, reps, r.enc, r.dadd, r.dec, r.fadd, r.shexp, r.shenc, r.shdec, r.iadd[0], r.iadd[1], r.iadd[2]);
        printf("bytes sent per worker per step (MB; received is the same)\n%6s", "M");
        for (pat = 0; pat < NPAT; pat++) printf(" %11s", pat_name[pat]);
        printf("  shared width\n");
    }
    for (M = 2; M <= 1024; M *= 2) {
        if (!csv) printf("%6.0f", M);
        for (pat = 0; pat < NPAT; pat++) {
            cost c = pattern_cost((int)pat, d, bits, M, &r);
            if (csv)
                printf("bytes,%.0f,,%s,%.0f,\n", M, pat_name[pat], c.bytes);
            else if (c.compute_s < 0)
                printf(" %11s", "-");
            else
                printf(" %11.3f", c.bytes / 1e6);
        }
        if (!csv) printf("  %u\n", dq_shared_width(bits, (uint64_t)M));
    }
    for (li = 0; li < 3; li++) {
        double beta = gbit[li] * 1e9 / 8.0;
        if (!csv) {
            printf("\ntime per step (ms) at %.0f Gbit/s\n%6s", gbit[li], "M");
            for (pat = 0; pat < NPAT; pat++) printf(" %11s", pat_name[pat]);
            printf("  fastest\n");
        }
        for (M = 2; M <= 1024; M *= 2) {
            double best = 1e300;
            unsigned win = 0;
            if (!csv) printf("%6.0f", M);
            for (pat = 0; pat < NPAT; pat++) {
                cost c = pattern_cost((int)pat, d, bits, M, &r);
                double t = c.msgs * alpha + c.bytes / beta + c.compute_s;
                if (c.compute_s < 0) {
                    if (!csv) printf(" %11s", "-");
                    continue;
                }
                if (t < best) best = t, win = pat;
                if (csv)
                    printf("time,%.0f,%.0f,%s,%.0f,%.4f\n", M, gbit[li], pat_name[pat], c.bytes, t * 1e3);
                else
                    printf(" %11.2f", t * 1e3);
            }
            if (!csv) printf("  %s\n", pat_name[win]);
        }
    }
    return 0;
}
