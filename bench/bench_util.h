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

#endif
