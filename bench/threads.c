/* bench/threads.c - one message encoded and decoded by T threads: the fixed layout against
 * rANS (coder 3) and the default coder.
 *
 *   bench_threads [--n N] [--reps R] [--threads T]
 *
 * For 2 and 4 bits (QSGD, L2 norm per bucket of 512, stochastic rounding, N(0,1) input from the
 * seeded generator of bench_util.h), times encode with one call (dq_encode) and with T threads
 * (default 2) running a job (dq_job_*: each thread quantizes, then codes, its part; the plan and
 * the assembly run on the calling thread), which must give the same bytes; then decode-add of
 * the fixed and rANS messages: one call (dq_decode_add), and T threads that each add a
 * contiguous share with dq_decode_add_range, cut at multiples of the range unit and of a rANS
 * chunk (2^16 symbols), so no chunk is decoded twice. Rows give G elements per second, the
 * speed-up of T threads over one call, and the speed against the fixed layout with the same
 * thread count. Threads are started for each phase (about 0.1 ms a round; it shows at small
 * n). Minimum of R rounds; the rows of one run share the machine's state, so compare them with
 * each other. */
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

typedef struct part {
    dq_job *job;
    size_t j;
    int phase; /* 1: quantize, 2: code */
    const float *x;
    dq_status st;
} part;

static void *run_part(void *arg) {
    part *w = (part *)arg;
    w->st = w->phase == 1 ? dq_job_quantize(w->job, w->j, w->x, NULL) : dq_job_code(w->job, w->j);
    return NULL;
}

/* Seconds for one encode of x with t threads (t = 1: one dq_encode call); *len its size. */
static double encode(const dq_params *p, const float *x, size_t n, unsigned t, uint8_t *dst, size_t cap,
                     uint8_t *work, size_t wsz, size_t *len) {
    pthread_t th[MAX_THREADS];
    part parts[MAX_THREADS];
    dq_job job;
    size_t k;
    int phase;
    double t0 = bench_now();
    dq_status st;
    if (t == 1u) {
        if ((st = dq_encode(p, x, n, NULL, dst, cap, len)) != DQ_OK) die("dq_encode", st);
        return bench_now() - t0;
    }
    if ((st = dq_job_init(&job, p, n, t, dst, cap, work, wsz)) != DQ_OK) die("dq_job_init", st);
    for (phase = 1; phase <= 2; phase++) {
        for (k = 0; k < job.parts; k++) {
            parts[k].job = &job;
            parts[k].j = k;
            parts[k].phase = phase;
            parts[k].x = x;
            if (pthread_create(&th[k], NULL, run_part, &parts[k]) != 0) die("pthread_create", DQ_ERR_PARAM);
        }
        for (k = 0; k < job.parts; k++) {
            pthread_join(th[k], NULL);
            if (parts[k].st != DQ_OK) die(phase == 1 ? "dq_job_quantize" : "dq_job_code", parts[k].st);
        }
        if (phase == 1 && (st = dq_job_plan(&job)) != DQ_OK) die("dq_job_plan", st);
    }
    if ((st = dq_job_finish(&job, len)) != DQ_OK) die("dq_job_finish", st);
    return bench_now() - t0;
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
    static const char *const names[3] = {"fixed", "rans", "default"};
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
    printf("dqsgd %s (%s), n = %lu, one message by T threads, minimum of %lu rounds\n", DQSGD_VERSION_STRING,
           dq_simd_backend(), (unsigned long)n, (unsigned long)reps);
    printf("%-18s %4s %7s %8s %9s %9s %9s\n", "kernel", "bits", "threads", "Gelem/s", "x 1 call", "x fixed", "msg_bpe");
    for (bi = 0; bi < sizeof widths / sizeof widths[0]; bi++) {
        double best[2][2] = {{1e9, 1e9}, {1e9, 1e9}}, enc[3][2] = {{1e9, 1e9}, {1e9, 1e9}, {1e9, 1e9}};
        size_t len[3], unit[2], cap = dq_encode_bound_coded(n, widths[bi]), wsz = 0, l2 = 0;
        uint8_t *msg[3], *other = (uint8_t *)malloc(cap), *work;
        unsigned c, t, tc[2];
        size_t r;
        dq_params p[3];
        dq_status st;
        tc[0] = 1u;
        tc[1] = threads;
        for (c = 0; c < 3; c++) { /* 0: fixed layout, 1: rANS, 2: the default coder */
            size_t w = 0;
            memset(&p[c], 0, sizeof p[c]);
            p[c].scheme = DQ_SCHEME_QSGD;
            p[c].bits = widths[bi];
            p[c].bucket = 512;
            p[c].norm = DQ_NORM_L2;
            p[c].coder = c == 0 ? DQ_CODER_FIXED_ONLY : c == 1 ? DQ_CODER_RANS : DQ_CODER_DEFAULT;
            if ((st = dq_job_work_size(&p[c], n, threads, &w)) != DQ_OK) die("dq_job_work_size", st);
            if (w > wsz) wsz = w;
            msg[c] = (uint8_t *)malloc(cap);
            if (!msg[c]) return 1;
        }
        work = (uint8_t *)malloc(wsz);
        if (!other || !work) return 1;
        for (r = 0; r < reps; r++)
            for (c = 0; c < 3; c++)
                for (t = 0; t < 2; t++) {
                    double dt = encode(&p[c], x, n, tc[t], t ? other : msg[c], cap, work, wsz, t ? &l2 : &len[c]);
                    if (dt < enc[c][t]) enc[c][t] = dt;
                    if (t && (l2 != len[c] || memcmp(other, msg[c], l2) != 0))
                        die("the job's message differs from dq_encode's", DQ_ERR_CORRUPT);
                }
        if (msg[1][8] != DQ_CODER_RANS) die("the rANS message went out fixed", DQ_ERR_PARAM);
        for (c = 0; c < 2; c++) {
            size_t chunk = ((size_t)1 << 16) * (8u / widths[bi]);
            unit[c] = dq_range_align(&p[c], n);
            if (c) unit[c] = unit[c] > chunk ? unit[c] : chunk; /* both powers of two here */
        }
        for (r = 0; r < reps; r++)
            for (c = 0; c < 2; c++)
                for (t = 0; t < 2; t++) {
                    double dt = decode_add(msg[c], len[c], n, unit[c], tc[t], acc);
                    if (dt < best[c][t]) best[c][t] = dt;
                }
        for (c = 0; c < 3; c++)
            for (t = 0; t < 2; t++) {
                char name[32], ratio[16] = "";
                sprintf(name, c ? "encode-%s" : "encode", names[c]);
                if (c) sprintf(ratio, "%.3f", enc[0][t] / enc[c][t]);
                printf("%-18s %4u %7u %8.3f %9.3f %9s %9.4f\n", name, widths[bi], tc[t], (double)n / enc[c][t] * 1e-9,
                       enc[c][0] / enc[c][t], ratio, (double)len[c] * 8.0 / (double)n);
            }
        for (c = 0; c < 2; c++)
            for (t = 0; t < 2; t++) {
                char ratio[16] = "";
                if (c) sprintf(ratio, "%.3f", best[0][t] / best[1][t]);
                printf("%-18s %4u %7u %8.3f %9.3f %9s %9.4f\n", c ? "decode-add-rans" : "decode-add", widths[bi],
                       tc[t], (double)n / best[c][t] * 1e-9, best[c][0] / best[c][t], ratio,
                       (double)len[c] * 8.0 / (double)n);
            }
        for (c = 0; c < 3; c++) free(msg[c]);
        free(other);
        free(work);
    }
    free(x);
    free(acc);
    return 0;
}
