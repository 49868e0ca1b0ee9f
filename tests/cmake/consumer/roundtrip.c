/* roundtrip.c - a program that takes dqsgd through CMake (tests/cmake/test_cmake.sh): it encodes
 * and decodes a vector, checks what came back, and prints a digest of the bytes it produced.
 * roundtrip.cpp compiles this file as C++. Written in the common subset of C99 and C++11.
 *
 * Prints "backend <name>" (dq_simd_backend: shows whether SIMDe reached the compiler), "version
 * <DQSGD_VERSION_STRING>" and "digest <hex>": FNV-1a over every message and every decode-add
 * result. The library's determinism contract makes the digest the same for every ISA, compiler
 * and language, so the test compares it with this file built as ISO C99 on the scalar
 * reference: a consumer built with GCC's default GNU mode on an FMA target differs there unless
 * the CMake target turned FP contraction off. Exits 0 when every check passed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dqsgd.h"

#define N 3001u /* not a multiple of any block or bucket */

static int failures = 0;

static void check(int ok, const char *what) {
    if (!ok) {
        printf("FAIL: %s\n", what);
        failures++;
    }
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t len) {
    const unsigned char *b = (const unsigned char *)p;
    size_t i;
    for (i = 0; i < len; i++) {
        h ^= b[i];
        h *= 0x100000001b3u;
    }
    return h;
}

/* x[i]: exact binary fractions from an integer generator (no libm), magnitudes 2^-3 .. 2^2 */
static void fill(float *x, size_t n) {
    uint32_t s = 12345u;
    size_t i;
    for (i = 0; i < n; i++) {
        int32_t mant;
        s = s * 1664525u + 1013904223u;
        mant = (int32_t)(s >> 16) - 32768; /* -2^15 .. 2^15 - 1 */
        x[i] = (float)mant / (float)(1u << (13u + (s >> 8) % 6u));
    }
}

/* Encode x with p, decode it, and decode-add it with a weight whose products round; check that
 * decode-add equals decode and the loop (the header's promise) and fold both into the digest. */
static uint64_t run(const dq_params *p, const float *x, float *out, float *acc, uint64_t h, const char *name) {
    size_t cap = 0, len = 0, i;
    unsigned char *msg;
    int same = 1;
    char what[96];
    snprintf(what, sizeof what, "%s: dq_encode_capacity", name);
    check(dq_encode_capacity(p, N, &cap) == DQ_OK && cap > 0, what);
    msg = (unsigned char *)malloc(cap ? cap : 1);
    if (!msg) exit(2);
    snprintf(what, sizeof what, "%s: dq_encode", name);
    check(dq_encode(p, x, N, NULL, msg, cap, &len) == DQ_OK, what);
    snprintf(what, sizeof what, "%s: dq_decode", name);
    check(dq_decode(msg, len, out, N) == DQ_OK, what);
    for (i = 0; i < N; i++) acc[i] = (float)i * 0.25f - 3.0f;
    snprintf(what, sizeof what, "%s: dq_decode_add", name);
    check(dq_decode_add(msg, len, 0.37f, acc, N) == DQ_OK, what);
    for (i = 0; i < N; i++) {
        float wv = 0.37f * out[i]; /* the product in its own statement, as the header computes it */
        float want = ((float)i * 0.25f - 3.0f) + wv;
        if (memcmp(&want, &acc[i], sizeof want) != 0) same = 0;
    }
    snprintf(what, sizeof what, "%s: decode_add differs from decode and acc += w * out", name);
    check(same, what);
    h = fnv1a(h, msg, len);
    h = fnv1a(h, acc, N * sizeof *acc);
    free(msg);
    return h;
}

int main(void) {
    static float x[N], out[N], acc[N];
    float maxabs = 0.0f, maxerr = 0.0f;
    uint64_t h = 0xcbf29ce484222325u;
    dq_params p;
    size_t i;

    fill(x, N);
    for (i = 0; i < N; i++) maxabs = x[i] > maxabs ? x[i] : -x[i] > maxabs ? -x[i] : maxabs;

    /* QSGD, 4 bits, nearest rounding, max-norm scale: every error is at most half a level, and
     * a level is at most max|x| / 7; 1e-6 relative covers the float rounding of the decode */
    memset(&p, 0, sizeof p);
    p.bits = 4;
    p.rounding = DQ_ROUND_NEAREST;
    p.norm = DQ_NORM_MAX;
    h = run(&p, x, out, acc, h, "qsgd nearest");
    for (i = 0; i < N; i++) {
        float d = out[i] > x[i] ? out[i] - x[i] : x[i] - out[i];
        maxerr = d > maxerr ? d : maxerr;
    }
    check(maxerr <= maxabs * (0.5f / 7.0f + 1e-6f), "qsgd nearest: an error above half a level");

    /* the defaults (stochastic QSGD, L2 scales, the default coder), then schemes whose
     * decode-add a fused multiply-add changes: two-means (1 bit) and top-k */
    memset(&p, 0, sizeof p);
    p.seed = 2024;
    p.step = 3;
    p.stream = 1;
    h = run(&p, x, out, acc, h, "defaults");
    memset(&p, 0, sizeof p);
    p.scheme = DQ_SCHEME_TWOMEANS;
    p.rounding = DQ_ROUND_NEAREST;
    h = run(&p, x, out, acc, h, "two-means");
    memset(&p, 0, sizeof p);
    p.scheme = DQ_SCHEME_TOPK;
    p.k = 300;
    h = run(&p, x, out, acc, h, "top-k");

    printf("backend %s\n", dq_simd_backend());
    printf("version %s\n", DQSGD_VERSION_STRING);
    printf("digest %08lx%08lx\n", (unsigned long)(h >> 32), (unsigned long)(h & 0xffffffffu));
    check(dq_version_number() == DQSGD_VERSION_NUMBER, "dq_version_number");
    printf("%s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
