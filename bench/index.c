/* bench/index.c - throughput of the sparse index coders (doc/FORMAT.md section 18).
 *
 *   index [--n N] [--reps R]        (defaults: n = 2^24, R = 7)
 *
 * For k/n = 1e-4, 1e-3, 1e-2 and 1e-1 (indices drawn by selection sampling from a fixed-seed
 * splitmix64 stream), one row per coder: the stream's bytes per index (header included), its
 * bits per index against log2(C(n, k)) / k (the fewest any code can spend on a uniformly
 * drawn set), then encode and decode throughput in indices per second and in GB/s of uint32
 * index input (k * 4 bytes / seconds), and the same-run baseline: memcpy of the k-index array,
 * in GB/s. "varint-scalar" decodes the VARINT stream with the scalar twin of the SIMD kernel.
 * Timing: every figure is the best of R samples; a sample repeats the call until it takes at
 * least 2 ms and divides. Outputs are checked untimed against the input.
 * Build and run: make bench-index (ARGS="--n N --reps R"). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 199309L
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dqsgd.h"
#include "tests/internals.h" /* the scalar varint decoder, for the varint-scalar row */

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

typedef struct job {
    int what; /* 0 memcpy, 1 encode, 2 decode, 3 decode with the scalar VARINT kernel */
    dq_index_coder coder;
    const uint32_t *idx;
    size_t k;
    uint64_t n;
    uint8_t *stream;
    size_t cap, len;
    uint32_t *out;
} job;

static void run(job *j) {
    size_t k2 = 0;
    dq_status st = DQ_OK;
    if (j->what == 0)
        memcpy(j->out, j->idx, j->k * sizeof *j->idx);
    else if (j->what == 1)
        st = dq_index_encode(j->idx, j->k, j->n, j->coder, j->stream, j->cap, &j->len);
    else if (j->what == 2)
        st = dq_index_decode(j->stream, j->len, j->out, j->k, &k2);
    else
        st = dqt_index_decode_with(j->stream, j->len, j->out, j->k, &k2, dqt_scalar(svb_decode));
    if (st != DQ_OK) {
        fprintf(stderr, "bench_index: %s\n", dq_strerror(st));
        exit(1);
    }
}
/* seconds per call: best of reps samples of at least 2 ms each */
static double timeit(job *j, int reps) {
    double best = 1e30;
    int r;
    run(j); /* warm-up */
    for (r = 0; r < reps; r++) {
        long it = 0;
        double t0 = now(), t;
        do {
            run(j);
            it++;
            t = now() - t0;
        } while (t < 2e-3);
        if (t / (double)it < best) best = t / (double)it;
    }
    return best;
}

int main(int argc, char **argv) {
    static const double dens[4] = {1e-4, 1e-3, 1e-2, 1e-1};
    static const char *const names[6] = {"auto", "gamma", "varint", "bitmap", "rice", "varint-scalar"};
    static const char *const auto_names[5] = {"", "auto=gamma", "auto=varint", "auto=bitmap", "auto=rice"};
    uint64_t n = (uint64_t)1 << 24, seed = 42;
    int reps = 7, a, d;
    uint32_t *idx, *out;
    uint8_t *stream;
    for (a = 1; a + 1 < argc; a += 2) {
        if (strcmp(argv[a], "--n") == 0) n = strtoull(argv[a + 1], NULL, 0);
        else if (strcmp(argv[a], "--reps") == 0) reps = atoi(argv[a + 1]);
    }
    if (n == 0 || n > DQ_INDEX_MAX_N || reps < 1) {
        fprintf(stderr, "usage: bench_index [--n N (1..2^32)] [--reps R]\n");
        return 2;
    }
    idx = (uint32_t *)malloc((size_t)(n / 10 + 16) * sizeof *idx);
    out = (uint32_t *)malloc((size_t)(n / 10 + 16) * sizeof *out);
    stream = (uint8_t *)malloc(dq_index_bound((size_t)(n / 10 + 16), n));
    if (!idx || !out || !stream) return 1;
    printf("dqsgd index coders: n = %llu, best of %d, backend %s, varint kernel %s\n", (unsigned long long)n, reps,
           dq_simd_backend(), dqt_k(svb_decode) == dqt_scalar(svb_decode) ? "scalar" : "ssse3-shuffle");
    printf("%-7s %-13s %8s %8s %8s %10s %8s %10s %8s %8s\n", "k/n", "coder", "B/index", "b/index", "entropy",
           "enc Mi/s", "enc GB/s", "dec Mi/s", "dec GB/s", "memcpy");
    for (d = 0; d < 4; d++) {
        size_t k = 0, want = (size_t)(dens[d] * (double)n + 0.5);
        uint64_t i;
        job j;
        double tcopy, ent;
        int c;
        for (i = 0; i < n && k < want; i++) /* selection sampling: exactly `want` indices */
            if ((double)(splitmix(&seed) >> 11) * (1.0 / 9007199254740992.0) * (double)(n - i) < (double)(want - k))
                idx[k++] = (uint32_t)i;
        memset(&j, 0, sizeof j);
        j.idx = idx;
        j.k = k;
        j.n = n;
        j.stream = stream;
        j.cap = dq_index_bound(k, n);
        j.out = out;
        if (k == 0) continue;
        tcopy = timeit(&j, reps);
        /* log2 C(n, k) / k from lgamma: the entropy of a uniform k-subset, per index */
        ent = (lgamma((double)n + 1.0) - lgamma((double)k + 1.0) - lgamma((double)(n - k) + 1.0)) / log(2.0) / (double)k;
        for (c = 0; c < 6; c++) {
            double te, td;
            j.coder = (dq_index_coder)(c == 5 ? DQ_INDEX_VARINT : c);
            j.what = 1;
            te = timeit(&j, reps);
            j.what = c == 5 ? 3 : 2;
            td = timeit(&j, reps);
            memset(out, 0, k * sizeof *out);
            run(&j);
            if (memcmp(out, idx, k * sizeof *idx) != 0) {
                fprintf(stderr, "bench_index: %s decoded wrong\n", names[c]);
                return 1;
            }
            printf("%-7g %-13s %8.3f %8.2f %8.2f %10.1f %8.2f %10.1f %8.2f %8.2f\n", dens[d],
                   c == 0 ? auto_names[stream[0] <= 4 ? stream[0] : 0] : names[c], (double)j.len / (double)k,
                   8.0 * (double)j.len / (double)k, ent, (double)k / te * 1e-6, (double)k * 4.0 / te * 1e-9,
                   (double)k / td * 1e-6, (double)k * 4.0 / td * 1e-9, (double)k * 4.0 / tcopy * 1e-9);
        }
    }
    free(idx);
    free(out);
    free(stream);
    return 0;
}
