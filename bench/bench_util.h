/* bench/bench_util.h - what bench/bench.c and bench/sizes.c share: the seeded input generator
 * and the option parsing. Each program is one translation unit; everything here is static. */
#ifndef DQ_BENCH_UTIL_H
#define DQ_BENCH_UTIL_H

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- wall-clock seconds, for programs that define _POSIX_C_SOURCE >= 199309L first */
#if defined(_POSIX_C_SOURCE) && _POSIX_C_SOURCE >= 199309L
#include <time.h>
static inline double bench_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
#endif

/* ---- deterministic input: N(0, 1) by Box-Muller over a splitmix64 stream */
static inline uint64_t bench_splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* Two independent N(0, 1) draws from two outputs of the stream. */
static inline void bench_normal_pair(uint64_t *s, double *a, double *b) {
    const double two_pi = 6.283185307179586476925286766559;
    /* u1 in (0, 1] so log(u1) is finite; u2 in [0, 1) */
    double u1 = ((double)(bench_splitmix64(s) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
    double u2 = (double)(bench_splitmix64(s) >> 11) * (1.0 / 9007199254740992.0);
    double r = sqrt(-2.0 * log(u1));
    *a = r * cos(two_pi * u2);
    *b = r * sin(two_pi * u2);
}

static inline void bench_fill_gaussian(float *x, size_t n, uint64_t seed) {
    uint64_t s = seed;
    size_t i;
    for (i = 0; i < n; i += 2) {
        double a, b;
        bench_normal_pair(&s, &a, &b);
        x[i] = (float)a;
        if (i + 1 < n) x[i + 1] = (float)b;
    }
}

/* ---- options: "--opt VALUE" or "--opt=VALUE"; bad values exit(2) with "prog: ..." */
static inline unsigned long long bench_parse_count(const char *prog, const char *opt, const char *s) {
    char *end;
    unsigned long long v;
    if (!s || *s == '\0' || *s == '-') {
        fprintf(stderr, "%s: %s needs a positive integer\n", prog, opt);
        exit(2);
    }
    errno = 0;
    v = strtoull(s, &end, 0);
    if (errno != 0 || *end != '\0' || v == 0) {
        fprintf(stderr, "%s: %s: bad value '%s'\n", prog, opt, s);
        exit(2);
    }
    return v;
}

/* The value of option opt at argv[*i] (advancing *i past a separate value), or NULL if
 * argv[*i] is not opt. */
static inline const char *bench_opt_value(const char *prog, int argc, char **argv, int *i, const char *opt) {
    size_t len = strlen(opt);
    const char *a = argv[*i];
    if (strncmp(a, opt, len) != 0) return NULL;
    if (a[len] == '=') return a + len + 1;
    if (a[len] != '\0') return NULL;
    if (*i + 1 >= argc) {
        fprintf(stderr, "%s: %s needs a value\n", prog, opt);
        exit(2);
    }
    return argv[++*i];
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
static inline float base_sumsq(const float *x, size_t n) {
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
static inline void base_add(float *restrict acc, const float *restrict x, size_t n) {
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

#endif
