/* bench/sketch.c - throughput of the count sketch (doc/MATHS.md 12).
 *
 *   sketch [--n N] [--rows R] [--cols C] [--k K] [--reps R]
 *          (defaults: n = 2^24, rows = 5, cols = 2^16, k = 1000, reps = 7)
 *
 * One row per operation: milliseconds per call, GB/s, and the ratio to a plain memory pass
 * over the n input floats measured alternately with it (as bench/bench.c does: R rounds of
 * (operation, baseline), the minimum of each reported, so both see the same machine state).
 * The baseline is bench.c's encoder baseline: a sum of squares of x with eight float
 * accumulators (one read pass, memory-bound at n = 2^24).
 *   hash          the hash kernel alone (the backend's, and the scalar twin), one row over n
 *                 coordinates, as GB/s of the float32 input those coordinates would be
 *   accumulate    dq_sketch_add_dense() of the whole vector (rows scattered read-modify-writes
 *                 per element), GB/s of float32 input; the table is not cleared between calls
 *   merge         dq_sketch_merge() of two tables (the server's sum), GB/s of one table
 *   encode        dq_sketch_encode() with the checksum, GB/s of table
 *   decode_add    dq_decode_add() of that message into a table, GB/s of table
 *   norm2         dq_sketch_norm2(), GB/s of table
 *   estimate      dq_sketch_estimate_range() over all n coordinates (unsketch to dense)
 *   topk          dq_sketch_topk(k) over all n coordinates (the one-round unsketch)
 *   heavy         dq_sketch_heavy() at eps = 0.01
 * (estimate, topk, heavy: GB/s of the n-float vector they reconstruct.)
 * Input: N(0, 1) floats from a fixed seed (bench_util.h) with 100 planted large coordinates.
 * Build and run: make bench-sketch (ARGS="--n N ..."), or cc -O2 -march=native -I. bench/sketch.c -lm. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 199309L
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "dqsgd.h"
#include "tests/internals.h" /* the hash kernel and its scalar twin */

typedef struct job {
    int what;
    dq_sketch *s, *s2;
    const float *x;
    size_t n, k, cap, len;
    uint32_t *idx, *hb;
    float *val, *est;
    uint8_t *msg;
    double sink;
} job;

enum { HASH, HASH_SCALAR, ACCUM, MERGE, ENCODE, DECODE_ADD, NORM2, ESTIMATE, TOPK, HEAVY, NJOBS };
static const char *const names[NJOBS] = {"hash",       "hash (scalar)", "accumulate", "merge", "encode",
                                         "decode_add", "norm2",         "estimate",   "topk",  "heavy"};

static void fail(const char *what, dq_status st) {
    fprintf(stderr, "bench_sketch: %s: %s\n", what, dq_strerror(st));
    exit(1);
}

static void run(job *j) {
    dq_status st = DQ_OK;
    switch (j->what) {
    case HASH:
    case HASH_SCALAR: {
        size_t b;
        for (b = 0; b < j->n; b += 4096) {
            size_t cnt = j->n - b < 4096 ? j->n - b : 4096;
            if (j->what == HASH)
                dqt_k(sk_hash)(0x12345678u, 0x9ABCDEF0u, j->s->cols, (uint32_t)b, cnt, j->hb);
            else
                dqt_scalar(sk_hash)(0x12345678u, 0x9ABCDEF0u, j->s->cols, (uint32_t)b, cnt, j->hb);
            j->sink += (double)j->hb[cnt - 1];
        }
        break;
    }
    case ACCUM:
        st = dq_sketch_add_dense(j->s, 0, j->x, j->n);
        break;
    case MERGE:
        st = dq_sketch_merge(j->s2, j->s);
        break;
    case ENCODE:
        st = dq_sketch_encode(j->s, 1, j->msg, j->cap, &j->len);
        break;
    case DECODE_ADD:
        st = dq_decode_add(j->msg, j->len, 1.0f, j->s2->table, (size_t)j->s2->rows * j->s2->cols);
        break;
    case NORM2:
        st = dq_sketch_norm2(j->s, &j->sink);
        break;
    case ESTIMATE:
        st = dq_sketch_estimate_range(j->s, 0, j->est, j->n);
        break;
    case TOPK:
        st = dq_sketch_topk(j->s, j->k, j->idx, j->val);
        break;
    case HEAVY: {
        size_t cnt = 0;
        st = dq_sketch_heavy(j->s, 0.01, j->idx, j->val, j->n, &cnt);
        j->sink += (double)cnt;
        break;
    }
    default:
        break;
    }
    if (st != DQ_OK) fail(names[j->what], st);
}

static volatile float sink_f;

/* seconds per call of j and of the baseline: `reps` alternating rounds, the minimum of each; a
 * round repeats a call until it takes 2 ms */
static void timeit(job *j, int reps, double *t_op, double *t_base) {
    int r;
    *t_op = *t_base = 1e30;
    run(j); /* warm-up */
    sink_f = base_sumsq(j->x, j->n);
    for (r = 0; r < reps; r++) {
        long it = 0;
        double t0 = bench_now(), t;
        do {
            run(j);
            it++;
            t = bench_now() - t0;
        } while (t < 2e-3);
        if (t / (double)it < *t_op) *t_op = t / (double)it;
        it = 0;
        t0 = bench_now();
        do {
            sink_f = base_sumsq(j->x, j->n);
            it++;
            t = bench_now() - t0;
        } while (t < 2e-3);
        if (t / (double)it < *t_base) *t_base = t / (double)it;
    }
}

int main(int argc, char **argv) {
    const char *prog = "bench_sketch";
    size_t n = (size_t)1 << 24, k = 1000, i, cells;
    unsigned long long rows = 5, cols = 1u << 16;
    int reps = 7, a;
    float *x, *t1, *t2;
    dq_sketch s, s2;
    job j;
    for (a = 1; a < argc; a++) {
        const char *v;
        if ((v = bench_opt_value(prog, argc, argv, &a, "--n")) != NULL)
            n = (size_t)bench_parse_count(prog, "--n", v);
        else if ((v = bench_opt_value(prog, argc, argv, &a, "--rows")) != NULL)
            rows = bench_parse_count(prog, "--rows", v);
        else if ((v = bench_opt_value(prog, argc, argv, &a, "--cols")) != NULL)
            cols = bench_parse_count(prog, "--cols", v);
        else if ((v = bench_opt_value(prog, argc, argv, &a, "--k")) != NULL)
            k = (size_t)bench_parse_count(prog, "--k", v);
        else if ((v = bench_opt_value(prog, argc, argv, &a, "--reps")) != NULL)
            reps = (int)bench_parse_count(prog, "--reps", v);
        else {
            fprintf(stderr, "usage: %s [--n N] [--rows R] [--cols C] [--k K] [--reps R]\n", prog);
            return 2;
        }
    }
    if (rows > DQ_SKETCH_MAX_ROWS || cols > DQ_SKETCH_MAX_COLS || (uint64_t)n > DQ_SKETCH_MAX_DIM || k > n) {
        fprintf(stderr, "%s: rows <= %u, cols <= %u, n <= 2^32, k <= n\n", prog, DQ_SKETCH_MAX_ROWS,
                DQ_SKETCH_MAX_COLS);
        return 2;
    }
    cells = (size_t)rows * (size_t)cols;
    x = (float *)malloc(n * sizeof *x);
    t1 = (float *)malloc(cells * sizeof *t1);
    t2 = (float *)malloc(cells * sizeof *t2);
    memset(&j, 0, sizeof j);
    j.idx = (uint32_t *)malloc(n * sizeof *j.idx);
    j.val = (float *)malloc(n * sizeof *j.val);
    j.est = (float *)malloc(n * sizeof *j.est);
    j.hb = (uint32_t *)malloc(4096 * sizeof *j.hb);
    j.cap = DQ_SKETCH_ENCODE_BOUND(rows, cols);
    j.msg = (uint8_t *)malloc(j.cap);
    if (!x || !t1 || !t2 || !j.idx || !j.val || !j.est || !j.hb || !j.msg) return 1;
    bench_fill_gaussian(x, n, 42);
    for (i = 0; i < 100; i++) x[(i * 2654435761u) % n] = 1000.0f;
    if (dq_sketch_init(&s, (uint32_t)rows, (uint32_t)cols, n, 7, t1, cells) != DQ_OK ||
        dq_sketch_init(&s2, (uint32_t)rows, (uint32_t)cols, n, 7, t2, cells) != DQ_OK)
        return 1;
    j.s = &s;
    j.s2 = &s2;
    j.x = x;
    j.n = n;
    j.k = k;
    printf("dqsgd count sketch: n = %lu, rows = %llu, cols = %llu (table %.2f MiB), k = %lu, best of %d, backend %s\n",
           (unsigned long)n, rows, cols, (double)cells * 4.0 / 1048576.0, (unsigned long)k, reps, dq_simd_backend());
    printf("%-14s %10s %10s %10s %8s  %s\n", "operation", "ms", "GB/s", "base GB/s", "ratio", "bytes counted");
    for (j.what = HASH; j.what < NJOBS; j.what++) {
        double bytes, t, tb;
        const char *note;
        timeit(&j, reps, &t, &tb);
        switch (j.what) {
        case HASH:
        case HASH_SCALAR:
            bytes = (double)n * 4.0;
            note = "n coordinates, one row (as float32 input)";
            break;
        case ACCUM:
            bytes = (double)n * 4.0;
            note = "float32 input";
            break;
        case ESTIMATE:
        case TOPK:
        case HEAVY:
            bytes = (double)n * 4.0;
            note = "n estimates (as float32)";
            break;
        default:
            bytes = (double)cells * 4.0;
            note = "table";
            break;
        }
        printf("%-14s %10.3f %10.3f %10.2f %8.4f  %s\n", names[j.what], t * 1e3, bytes / t * 1e-9,
               (double)n * 4.0 / tb * 1e-9, (bytes / t) / ((double)n * 4.0 / tb), note);
    }
    if (j.sink == 12345.678) printf("(sink)\n");
    free(x);
    free(t1);
    free(t2);
    free(j.idx);
    free(j.val);
    free(j.est);
    free(j.hb);
    free(j.msg);
    return 0;
}
