/* bench/threads.c - one message decoded by two threads: the fixed layout against rANS (coder 3).
 *
 *   bench_threads [--n N] [--reps R] [--threads T]
 *
 * For 2 and 4 bits (QSGD, L2 norm per bucket of 512, stochastic rounding, N(0,1) input from the
 * seeded generator of bench_util.h), encodes one message with the fixed layout and one with
 * rANS, then times decode-add of each: one call (dq_decode_add), and T threads (default 2) that
 * each add a contiguous share with dq_decode_add_range. Shares are cut at multiples of the
 * range unit and of a rANS chunk (2^16 symbols), so no chunk is decoded twice. Rows give G
 * elements per second and the speed-up of T threads over one call of the same message; the
 * rANS rows also give their speed against the fixed layout with the same thread count.
 * Encoding a coded message in ranges is not offered by the library (its frequency table needs
 * every chunk's counts first), so the encoder is timed whole, for reference. Minimum of R
 * rounds; the rows of one run share the machine's state, so compare them with each other. */
#define _POSIX_C_SOURCE 199309L

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dqsgd.h"
#include "bench_util.h"

#define MAX_THREADS 16

typedef struct job {
    const uint8_t *msg;
    size_t len, begin, end;
    float *acc;
    dq_status st;
} job;

static void *run_range(void *arg) {
    job *j = (job *)arg;
    j->st = dq_decode_add_range(j->msg, j->len, j->begin, j->end, 0.5f, j->acc + j->begin);
    return NULL;
}

static void die(const char *what, dq_status st) {
    fprintf(stderr, "bench_threads: %s: %s\n", what, dq_strerror(st));
    exit(1);
}

/* Seconds for one decode-add of msg into acc with t threads (t = 1: one whole call). */
static double decode_add(const uint8_t *msg, size_t len, size_t n, size_t unit, unsigned t, float *acc) {
    pthread_t th[MAX_THREADS];
    job jobs[MAX_THREADS];
    size_t units = (n + unit - 1u) / unit, k;
    double t0 = bench_now();
    dq_status st;
    if (t == 1u) {
        if ((st = dq_decode_add(msg, len, 0.5f, acc, n)) != DQ_OK) die("dq_decode_add", st);
        return bench_now() - t0;
    }
    for (k = 0; k < t; k++) {
        jobs[k].msg = msg;
        jobs[k].len = len;
        jobs[k].begin = units * k / t * unit;
        jobs[k].end = k + 1u == t ? n : units * (k + 1u) / t * unit;
        jobs[k].acc = acc;
        if (jobs[k].begin < jobs[k].end) pthread_create(&th[k], NULL, run_range, &jobs[k]);
    }
    for (k = 0; k < t; k++)
        if (jobs[k].begin < jobs[k].end) {
            pthread_join(th[k], NULL);
            if (jobs[k].st != DQ_OK) die("dq_decode_add_range", jobs[k].st);
        }
    return bench_now() - t0;
}

int main(int argc, char **argv) {
    size_t n = (size_t)1 << 24, reps = 5;
    unsigned threads = 2, bi;
    int i;
    static const unsigned widths[] = {2, 4};
    float *x, *acc;
    for (i = 1; i < argc; i++) {
        const char *v;
        if ((v = bench_opt_value("bench_threads", argc, argv, &i, "--n")) != NULL)
            n = (size_t)bench_parse_count("bench_threads", "--n", v);
        else if ((v = bench_opt_value("bench_threads", argc, argv, &i, "--reps")) != NULL)
            reps = (size_t)bench_parse_count("bench_threads", "--reps", v);
        else if ((v = bench_opt_value("bench_threads", argc, argv, &i, "--threads")) != NULL)
            threads = (unsigned)bench_parse_count("bench_threads", "--threads", v);
        else {
            fprintf(stderr, "usage: bench_threads [--n N] [--reps R] [--threads T]\n");
            return 2;
        }
    }
    if (threads < 2u || threads > MAX_THREADS) {
        fprintf(stderr, "bench_threads: --threads must be 2..%d\n", MAX_THREADS);
        return 2;
    }
    x = (float *)malloc(n * sizeof *x);
    acc = (float *)calloc(n, sizeof *acc);
    if (!x || !acc) return 1;
    bench_fill_gaussian(x, n, 1u);
    printf("dqsgd %s (%s), n = %lu, decode-add of one message, minimum of %lu rounds\n", DQSGD_VERSION_STRING,
           dq_simd_backend(), (unsigned long)n, (unsigned long)reps);
    printf("%-18s %4s %7s %8s %9s %9s %9s\n", "kernel", "bits", "threads", "Gelem/s", "x 1 call", "x fixed", "msg_bpe");
    for (bi = 0; bi < sizeof widths / sizeof widths[0]; bi++) {
        double best[2][2] = {{1e9, 1e9}, {1e9, 1e9}}, enc[2] = {1e9, 1e9};
        size_t len[2], unit[2];
        uint8_t *msg[2];
        unsigned c, t, tc[2];
        size_t r;
        tc[0] = 1u;
        tc[1] = threads;
        for (c = 0; c < 2; c++) { /* 0: fixed layout, 1: rANS */
            dq_params p;
            size_t cap, chunk = ((size_t)1 << 16) * (8u / widths[bi]);
            dq_status st;
            memset(&p, 0, sizeof p);
            p.scheme = DQ_SCHEME_QSGD;
            p.bits = widths[bi];
            p.bucket = 512;
            p.norm = DQ_NORM_L2;
            p.coder = c ? DQ_CODER_RANS : DQ_CODER_FIXED_ONLY;
            cap = dq_encode_bound_coded(n, p.bits);
            msg[c] = (uint8_t *)malloc(cap);
            if (!msg[c]) return 1;
            unit[c] = dq_range_align(&p, n);
            if (c) unit[c] = unit[c] > chunk ? unit[c] : chunk; /* both powers of two here */
            for (r = 0; r < reps; r++) {
                double t0 = bench_now(), dt;
                if ((st = dq_encode(&p, x, n, NULL, msg[c], cap, &len[c])) != DQ_OK) die("dq_encode", st);
                dt = bench_now() - t0;
                if (dt < enc[c]) enc[c] = dt;
            }
            if (c && msg[c][8] != DQ_CODER_RANS) die("the rANS message went out fixed", DQ_ERR_PARAM);
        }
        for (r = 0; r < reps; r++)
            for (c = 0; c < 2; c++)
                for (t = 0; t < 2; t++) {
                    double dt = decode_add(msg[c], len[c], n, unit[c], tc[t], acc);
                    if (dt < best[c][t]) best[c][t] = dt;
                }
        for (c = 0; c < 2; c++) {
            printf("%-18s %4u %7s %8.3f %9s %9s %9.4f\n", c ? "encode-rans" : "encode", widths[bi], "1",
                   (double)n / enc[c] * 1e-9, "", "", (double)len[c] * 8.0 / (double)n);
            for (t = 0; t < 2; t++) {
                char ratio[16] = "";
                if (c) sprintf(ratio, "%.3f", best[0][t] / best[1][t]);
                printf("%-18s %4u %7u %8.3f %9.3f %9s %9.4f\n", c ? "decode-add-rans" : "decode-add", widths[bi],
                       tc[t], (double)n / best[c][t] * 1e-9, best[c][0] / best[c][t], ratio,
                       (double)len[c] * 8.0 / (double)n);
            }
        }
        free(msg[0]);
        free(msg[1]);
    }
    free(x);
    free(acc);
    return 0;
}
