/* Minimal test harness: each RUN(fn) is one test; a test fails if any CHECK in it fails.
 * Every test binary ends with `return dq_t_finish();`, which prints "N passed, M failed".
 * DQ_TEST_ISA names the build (scalar, sse2, avx2, avx512, asan, ...), set by the Makefile. */
#ifndef DQ_TEST_HARNESS_H
#define DQ_TEST_HARNESS_H
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef DQ_TEST_ISA
#define DQ_TEST_ISA "unnamed"
#endif

static int dq_t_passed, dq_t_failed, dq_t_cur_failed;
static const char *dq_t_cur;

#define CHECK(cond)                                                                                   \
    do {                                                                                              \
        if (!(cond)) {                                                                                \
            if (dq_t_cur_failed++ < 5)                                                                \
                fprintf(stderr, "  FAIL [%s] %s:%d in %s: %s\n", DQ_TEST_ISA, __FILE__, __LINE__, dq_t_cur, #cond); \
        }                                                                                             \
    } while (0)
/* CHECKF: like CHECK, with a printf-style explanation on failure. */
#define CHECKF(cond, ...)                                                                             \
    do {                                                                                              \
        if (!(cond)) {                                                                                \
            if (dq_t_cur_failed++ < 5) {                                                              \
                fprintf(stderr, "  FAIL [%s] %s:%d in %s: %s: ", DQ_TEST_ISA, __FILE__, __LINE__, dq_t_cur, #cond); \
                fprintf(stderr, __VA_ARGS__);                                                         \
                fputc('\n', stderr);                                                                  \
            }                                                                                         \
        }                                                                                             \
    } while (0)

#define RUN(fn)                                                   \
    do {                                                          \
        dq_t_cur = #fn;                                           \
        dq_t_cur_failed = 0;                                      \
        fn();                                                     \
        if (dq_t_cur_failed) {                                    \
            dq_t_failed++;                                        \
            fprintf(stderr, "  not ok %s [%s]\n", #fn, DQ_TEST_ISA); \
        } else {                                                  \
            dq_t_passed++;                                        \
        }                                                         \
    } while (0)

static int dq_t_finish(void) {
    printf("%d passed, %d failed\n", dq_t_passed, dq_t_failed);
    return dq_t_failed != 0;
}

/* malloc that never returns NULL (a test cannot go on without memory); 0 bytes gives 1. */
static inline void *xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1u);
    if (!p) {
        fprintf(stderr, "out of memory (%lu bytes)\n", (unsigned long)bytes);
        exit(2);
    }
    return p;
}
/* Exact-size copies (so ASan sees any read past the end). */
static inline uint8_t *bdup(const void *src, size_t n) {
    uint8_t *b = (uint8_t *)xmalloc(n);
    if (n) memcpy(b, src, n);
    return b;
}
static inline float *fdup(const float *x, size_t n) {
    float *f = (float *)xmalloc(n * sizeof(float));
    if (n)
        memcpy(f, x, n * sizeof(float));
    else
        memset(f, 0, 1); /* the 1-byte block of an empty copy is defined too (gcc -O3 checks) */
    return f;
}
/* DQ_TEST_VERBOSE=1 makes statistical tests print their statistics. */
static inline int dq_t_verbose(void) {
    const char *v = getenv("DQ_TEST_VERBOSE");
    return v && v[0] && v[0] != '0';
}

/* Float bits and little-endian bytes (the wire format is little-endian: doc/FORMAT.md), written
 * here rather than borrowed from the library's private helpers (tests/internals.h). */
static inline uint32_t dq_t_fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline float dq_t_bitsf(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline uint32_t dq_t_ld16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static inline uint32_t dq_t_ld32(const uint8_t *p) { return dq_t_ld16(p) | dq_t_ld16(p + 2) << 16; }
static inline uint64_t dq_t_ld64(const uint8_t *p) { return (uint64_t)dq_t_ld32(p) | (uint64_t)dq_t_ld32(p + 4) << 32; }
static inline void dq_t_st16(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
/* CRC-32C, bitwise, straight from doc/FORMAT.md 3.3: independent of the library's tables and
 * hardware paths. */
static inline uint32_t dq_t_crc32c(const uint8_t *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    size_t i;
    int k;
    for (i = 0; i < n; i++) {
        c ^= p[i];
        for (k = 0; k < 8; k++) c = (c >> 1) ^ ((c & 1u) ? 0x82F63B78u : 0u);
    }
    return c ^ 0xFFFFFFFFu;
}
static inline void dq_t_st32(uint8_t *p, uint32_t v) {
    dq_t_st16(p, v);
    dq_t_st16(p + 2, v >> 16);
}
static inline void dq_t_st64(uint8_t *p, uint64_t v) {
    dq_t_st32(p, (uint32_t)v);
    dq_t_st32(p + 4, (uint32_t)(v >> 32));
}

/* Deterministic test data: splitmix64 stream and helpers. */
typedef struct dq_t_rng { unsigned long long s; } dq_t_rng;
static inline unsigned long long dq_t_next(dq_t_rng *r) {
    unsigned long long z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* uniform in [0,1) with 53 bits */
static inline double dq_t_unif(dq_t_rng *r) { return (double)(dq_t_next(r) >> 11) * (1.0 / 9007199254740992.0); }
/* standard normal (Box-Muller, one value per call) */
static inline double dq_t_gauss(dq_t_rng *r) {
    double u1 = dq_t_unif(r), u2 = dq_t_unif(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
#endif
