/* bench/half.c - fp16 / bf16 gradients through the codec  against float32.
 *
 *   half [--n N] [--reps R] [--bits B] [--bucket K|whole]   (defaults: n = 2^24, R = 7, B = 4, K = 512)
 *
 * QSGD, B bits, stochastic rounding, L2 scale per K-element bucket. Rows:
 *   encode       dq_encode() of float32 x / dq_encode_typed() of fp16 or bf16 x, no residual;
 *   encode+ef    the same with error feedback, the residual in the dtype of x;
 *   decode_add   dq_decode_add() into a float32 accumulator / dq_decode_add_typed() into fp16
 *                or bf16 (the allgather step), from the message of the float32 x;
 *   convert      dq_convert() from the dtype to float32 and back, the conversions alone.
 * Columns: ms per call; Melem/s; GB/s of the dtype's bytes read and written by the call's own
 * vectors (x, residual read+write, accumulator read+write; the message is not counted); "f32 GB/s",
 * the element rate in float32 bytes (4 n / t), comparable between dtypes; and "vs f32", the
 * float32 row's time over this row's (> 1: the 16-bit path is faster; for convert: the memcpy's
 * time over this row's). The first line is a memcpy of the float32 vector (read + write).
 * Timing: the rows of a group run in alternation, one call each per round, R rounds after a
 * warm-up, best of R for each, so that all see the same machine. Outputs are checked once,
 * untimed, against the float path.
 * Build and run (the lead adds a Makefile target):
 *   cc -std=c99 -O2 -march=native -D_POSIX_C_SOURCE=199309L -I. bench/half.c -o half -lm */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 199309L
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dqsgd.h"
#include "tests/internals.h" /* the half kernels' name */
#include "bench_util.h"

/* CPU time of this (single) thread: on a shared machine it counts what this process ran, not
 * what it waited for; -DDQ_BENCH_CLOCK=CLOCK_MONOTONIC for wall time. */
#ifndef DQ_BENCH_CLOCK
#define DQ_BENCH_CLOCK CLOCK_THREAD_CPUTIME_ID
#endif
static double now(void) {
    struct timespec t;
    clock_gettime(DQ_BENCH_CLOCK, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct job {
    int what; /* 0 memcpy, 1 encode, 2 decode_add, 3 convert there and back */
    dq_params p;
    dq_dtype t;
    int ef;
    size_t n;
    const void *x; /* input of dtype t */
    void *res;     /* residual of dtype t (ef) */
    void *acc;     /* accumulator of dtype t */
    float *tmp;    /* float scratch (memcpy, convert) */
    uint8_t *msg;  /* encode output */
    const uint8_t *src; /* decode input */
    size_t cap, len, src_len;
} job;

static void run(job *j) {
    dq_status st = DQ_OK;
    if (j->what == 0) {
        memcpy(j->tmp, j->x, j->n * 4u);
    } else if (j->what == 1) {
        st = dq_encode_typed(&j->p, j->t, j->x, j->n, j->t, j->ef ? j->res : NULL, j->msg, j->cap, &j->len);
    } else if (j->what == 2) {
        st = dq_decode_add_typed(j->src, j->src_len, 0.25f, j->t, j->acc, j->n);
    } else {
        st = dq_convert(j->t, j->x, j->n, DQ_F32, j->tmp);
        if (st == DQ_OK) st = dq_convert(DQ_F32, j->tmp, j->n, j->t, j->acc);
    }
    if (st != DQ_OK) {
        fprintf(stderr, "bench_half: %s\n", dq_strerror(st));
        exit(1);
    }
}
/* Untimed, before each call: error feedback starts from a zero residual, so repeated steps on
 * the same x cannot grow it (with a constant gradient the residual of a coarse quantizer grows
 * step by step, until an fp16 residual overflows). */
static void prep(job *j) {
    if (j->what == 1 && j->ef) memset(j->res, 0, j->n * dq_dtype_size(j->t));
}
static double timeit(job *j, int reps) {
    double best = 1e30;
    int r;
    prep(j);
    run(j);
    for (r = 0; r < reps; r++) {
        double t0, t;
        prep(j);
        t0 = now();
        run(j);
        t = now() - t0;
        if (t < best) best = t;
    }
    return best;
}
/* The jobs of one row group in alternation (one call each per round, R rounds after a warm-up
 * of each), so that all see the same machine; the best time of each. */
static void time_group(job *jobs, int k, int reps, double *best) {
    int r, i;
    for (i = 0; i < k; i++) {
        prep(&jobs[i]);
        run(&jobs[i]);
        best[i] = 1e30;
    }
    for (r = 0; r < reps; r++) {
        for (i = 0; i < k; i++) {
            double t0, t;
            prep(&jobs[i]);
            t0 = now();
            run(&jobs[i]);
            t = now() - t0;
            if (t < best[i]) best[i] = t;
        }
    }
}

/* bytes the call moves through its own vectors */
static double bytes_of(const job *j) {
    double es = (double)dq_dtype_size(j->t), n = (double)j->n;
    if (j->what == 0) return 8.0 * n;
    if (j->what == 1) return n * es * (j->ef ? 3.0 : 1.0);
    if (j->what == 2) return 2.0 * n * es;
    return n * (2.0 * es + 8.0);
}

static void row(const char *what, const job *j, double t, double tref) {
    double n = (double)j->n;
    static const char *const dn[3] = {"f32", "f16", "bf16"};
    printf("%-11s %-5s %9.2f %9.1f %8.2f %9.2f %7.2f\n", what, dn[j->t], t * 1e3, n / t * 1e-6, bytes_of(j) / t * 1e-9,
           4.0 * n / t * 1e-9, tref / t);
}

int main(int argc, char **argv) {
    size_t n = (size_t)1 << 24, i, cap;
    int reps = 7, a;
    unsigned bits = 4;
    uint32_t bucket = 512;
    float *x, *tmp, *accf;
    void *x16[3], *res[3], *acc[3];
    uint8_t *msg, *ref, *chk;
    size_t ref_len = 0, chk_len = 0;
    job j;
    double tcopy;
    unsigned t, g;
    for (a = 1; a < argc; a++) {
        const char *v;
        if ((v = bench_opt_value("half", argc, argv, &a, "--n")) != NULL)
            n = (size_t)bench_parse_count("half", "--n", v);
        else if ((v = bench_opt_value("half", argc, argv, &a, "--reps")) != NULL)
            reps = (int)bench_parse_count("half", "--reps", v);
        else if ((v = bench_opt_value("half", argc, argv, &a, "--bits")) != NULL)
            bits = (unsigned)bench_parse_count("half", "--bits", v);
        else if ((v = bench_opt_value("half", argc, argv, &a, "--bucket")) != NULL)
            bucket = strcmp(v, "whole") == 0 ? DQ_BUCKET_WHOLE : (uint32_t)bench_parse_count("half", "--bucket", v);
        else {
            fprintf(stderr, "usage: half [--n N] [--reps R] [--bits B] [--bucket K|whole]\n");
            return 2;
        }
    }
    cap = dq_encode_bound(n, bits);
    x = (float *)malloc(n * 4u);
    tmp = (float *)malloc(n * 4u);
    accf = (float *)malloc(n * 4u);
    msg = (uint8_t *)malloc(cap);
    ref = (uint8_t *)malloc(cap);
    chk = (uint8_t *)malloc(cap);
    if (!x || !tmp || !accf || !msg || !ref || !chk || cap == 0) return 1;
    for (t = 0; t < 3; t++) {
        x16[t] = malloc(n * 4u);
        res[t] = calloc(n, 4u);
        acc[t] = calloc(n, 4u);
        if (!x16[t] || !res[t] || !acc[t]) return 1;
    }
    bench_fill_gaussian(x, n, 42);
    for (t = 0; t < 3; t++) dq_convert(DQ_F32, x, n, (dq_dtype)t, x16[t]);

    memset(&j, 0, sizeof j);
    j.p.bits = bits;
    j.p.bucket = bucket;
    j.p.seed = 1;
    j.n = n;
    j.cap = cap;
    j.msg = msg;
    j.tmp = tmp;

    /* correctness, untimed: the typed message equals the float message of the widened input */
    for (t = 1; t < 3; t++) {
        dq_convert((dq_dtype)t, x16[t], n, DQ_F32, tmp);
        if (dq_encode(&j.p, tmp, n, NULL, ref, cap, &ref_len) != DQ_OK ||
            dq_encode_typed(&j.p, (dq_dtype)t, x16[t], n, (dq_dtype)t, NULL, chk, cap, &chk_len) != DQ_OK ||
            ref_len != chk_len || memcmp(ref, chk, ref_len) != 0) {
            fprintf(stderr, "bench_half: typed message differs from the float message\n");
            return 1;
        }
    }
    if (dq_encode(&j.p, x, n, NULL, ref, cap, &ref_len) != DQ_OK) return 1;
    j.src = ref;
    j.src_len = ref_len;

    printf("dqsgd fp16/bf16: n = %lu, QSGD %u bits, bucket %s%.0u, stochastic | backend %s, half kernels %s | best of %d\n",
           (unsigned long)n, bits, bucket == DQ_BUCKET_WHOLE ? "whole" : "", bucket == DQ_BUCKET_WHOLE ? 0u : (unsigned)bucket,
           dq_simd_backend(), DQT_HALF_BACKEND, reps);
    j.what = 0;
    j.x = x;
    j.t = DQ_F32;
    tcopy = timeit(&j, reps);
    printf("memcpy of the float32 vector: %.2f ms, %.2f GB/s (read + write)\n", tcopy * 1e3, bytes_of(&j) / tcopy * 1e-9);
    printf("%-11s %-5s %9s %9s %8s %9s %7s\n", "op", "dtype", "ms", "Melem/s", "GB/s", "f32 GB/s", "vs f32");
    for (g = 0; g < 4; g++) { /* encode, encode+ef, decode_add, convert */
        static const char *const gname[4] = {"encode", "encode+ef", "decode_add", "convert"};
        job jobs[3];
        double best[3];
        for (t = 0; t < 3; t++) {
            jobs[t] = j;
            jobs[t].what = g < 2 ? 1 : g;
            jobs[t].t = (dq_dtype)t;
            jobs[t].x = t == 0 ? (const void *)x : x16[t];
            jobs[t].ef = g == 1;
            jobs[t].res = res[t];
            jobs[t].acc = acc[t];
        }
        if (g == 3) { /* the conversions: fp16 and bf16 only, relative to the memcpy */
            time_group(jobs + 1, 2, reps, best + 1);
            for (t = 1; t < 3; t++) row(gname[g], &jobs[t], best[t], tcopy);
        } else {
            time_group(jobs, 3, reps, best);
            for (t = 0; t < 3; t++) row(gname[g], &jobs[t], best[t], best[0]);
        }
    }
    /* decode_add check, untimed: typed accumulator = rounded float accumulator */
    for (t = 1; t < 3; t++) {
        dq_convert(DQ_F32, x, n, (dq_dtype)t, acc[t]);
        dq_convert((dq_dtype)t, acc[t], n, DQ_F32, accf);
        if (dq_decode_add(ref, ref_len, 0.25f, accf, n) != DQ_OK ||
            dq_decode_add_typed(ref, ref_len, 0.25f, (dq_dtype)t, acc[t], n) != DQ_OK)
            return 1;
        dq_convert(DQ_F32, accf, n, (dq_dtype)t, tmp);
        if (memcmp(tmp, acc[t], n * 2u) != 0) {
            fprintf(stderr, "bench_half: typed decode_add differs from the float path\n");
            return 1;
        }
    }
    for (i = 0; i < 3; i++) {
        free(x16[i]);
        free(res[i]);
        free(acc[i]);
    }
    free(x);
    free(tmp);
    free(accf);
    free(msg);
    free(ref);
    free(chk);
    return 0;
}
