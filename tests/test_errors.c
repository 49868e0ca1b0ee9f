/* test_errors.c - every bad input gives its specific status; nothing reads or writes out of
 * bounds; nothing aborts.
 *
 * Buffers handed to the library are exact-size heap blocks where it matters (messages, inputs)
 * so ASan/valgrind see any over-read; destinations carry canary bytes after their capacity. */
#include "dqsgd.h"
#include "harness.h"
#include "internals.h"

#include <float.h>
#include <limits.h>
#include <math.h>

#define GUARD 64u
#define CANARY 0xA5u

/* ---------------------------------------------------------------- helpers */
static int all_canary(const uint8_t *p, size_t n) {
    size_t i;
    for (i = 0; i < n; i++)
        if (p[i] != CANARY) return 0;
    return 1;
}
static float *canary_floats(size_t n) { /* n floats of canary bytes, exact size */
    float *f = (float *)xmalloc(n * sizeof(float));
    memset(f, CANARY, n * sizeof(float));
    return f;
}
static int floats_canary(const float *f, size_t n) {
    return n == 0 || all_canary((const uint8_t *)(const void *)f, n * sizeof(float));
}
static dq_params defp(void) {
    dq_params p;
    memset(&p, 0, sizeof p);
    return p;
}
static void put_crc(uint8_t *m) { dq_t_st32(m + 44, dqt_crc32c(m, 44)); }
static unsigned rndu(dq_t_rng *r, unsigned m) { return (unsigned)(dq_t_next(r) % m); }
static void fill_gauss(dq_t_rng *r, float *x, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) x[i] = (float)dq_t_gauss(r);
}
static const char *sname(dq_status s) { return dq_strerror(s); }

#define EXPECT(got, want)                                                                                    \
    do {                                                                                                     \
        dq_status g_ = (got), w_ = (want);                                                                   \
        CHECKF(g_ == w_, "got %d (%s), want %d (%s)", (int)g_, sname(g_), (int)w_, sname(w_));               \
    } while (0)
#define EXPECTF(got, want, fmt, ...)                                                                         \
    do {                                                                                                     \
        dq_status g_ = (got), w_ = (want);                                                                   \
        CHECKF(g_ == w_, "got %d (%s), want %d (%s); " fmt, (int)g_, sname(g_), (int)w_, sname(w_), __VA_ARGS__); \
    } while (0)

/* A valid message in an exact-size heap block. */
typedef struct {
    uint8_t *buf;
    size_t len, n;
    float *x;
    dq_params p;
} msg;
static msg make_msg(unsigned bits, uint32_t bucket, dq_rounding rounding, size_t n, uint64_t seed) {
    msg m;
    dq_t_rng r;
    size_t cap = dq_encode_bound(n, bits ? bits : 4u), len = 0;
    uint8_t *tmp = (uint8_t *)xmalloc(cap);
    dq_status st;
    r.s = seed;
    m.p = defp();
    m.p.bits = bits;
    m.p.bucket = bucket;
    m.p.rounding = rounding;
    m.p.seed = seed;
    m.p.step = 3;
    m.p.stream = 1;
    m.n = n;
    m.x = (float *)xmalloc(n * sizeof(float));
    fill_gauss(&r, m.x, n);
    st = dq_encode(&m.p, m.x, n, NULL, tmp, cap, &len);
    if (st != DQ_OK) {
        fprintf(stderr, "make_msg: dq_encode failed: %s\n", dq_strerror(st));
        exit(2);
    }
    m.buf = bdup(tmp, len);
    m.len = len;
    free(tmp);
    return m;
}
static void free_msg(msg *m) {
    free(m->buf);
    free(m->x);
}

/* Run dq_header_read, dq_decode and dq_decode_add on an exact-size copy of buf[0..len) and
 * expect `want` from all three (want_hdr from dq_header_read); outputs must stay untouched on
 * error. out_n floats are given to the decoders. */
static void expect_decode(const uint8_t *buf, size_t len, size_t out_n, dq_status want_hdr, dq_status want,
                          const char *what) {
    uint8_t *m = bdup(buf, len);
    float *out = canary_floats(out_n), *acc = canary_floats(out_n);
    dq_header h;
    EXPECTF(dq_header_read(m, len, &h), want_hdr, "dq_header_read: %s (len %lu)", what, (unsigned long)len);
    EXPECTF(dq_decode(m, len, out, out_n), want, "dq_decode: %s (len %lu)", what, (unsigned long)len);
    EXPECTF(dq_decode_add(m, len, 0.3f, acc, out_n), want, "dq_decode_add: %s (len %lu)", what,
            (unsigned long)len);
    if (want != DQ_OK) {
        CHECKF(floats_canary(out, out_n), "dq_decode wrote to out on error: %s", what);
        CHECKF(floats_canary(acc, out_n), "dq_decode_add wrote to acc on error: %s", what);
    }
    CHECKF(len == 0 || memcmp(m, buf, len) == 0, "decoder modified its source: %s", what);
    free(m);
    free(out);
    free(acc);
}

/* Encode with dst = cap bytes + GUARD canary bytes. Returns the status; checks that nothing
 * beyond what a success may write is touched, that the residual is untouched on any error,
 * and on argument errors that dst and dst_len are untouched. x and res are used through
 * exact-size copies (the caller's arrays are not changed); x may be a 1-element array when the
 * call is expected to fail before reading it (n is then not used to copy). */
static dq_status enc_checked(const dq_params *p, const float *x_in, size_t n, const float *res_in, size_t cap,
                             int header, int argument_error) {
    uint8_t *dst = (uint8_t *)xmalloc(cap + GUARD);
    size_t ncopy = n <= ((size_t)1 << 26) ? n : 1u;
    float *x = fdup(x_in, ncopy), *res = res_in ? fdup(res_in, ncopy) : NULL, *res0 = res;
    size_t len = 12345;
    dq_status st;
    memset(dst, CANARY, cap + GUARD);
    st = header ? dq_encode(p, x, n, res, dst, cap, &len) : dq_encode_block(p, x, n, res, dst, cap, &len);
    if (st == DQ_OK) {
        CHECKF(len <= cap, "dst_len %lu > cap %lu", (unsigned long)len, (unsigned long)cap);
        CHECKF(all_canary(dst + len, cap + GUARD - len), "encoder wrote past dst_len");
    } else {
        CHECKF(len == 12345, "dst_len written on error %s", sname(st));
        CHECKF(all_canary(dst + cap, GUARD), "encoder wrote past dst_cap on error %s", sname(st));
        if (argument_error) {
            CHECKF(all_canary(dst, cap), "dst modified on argument error %s", sname(st));
        }
        if (res)
            CHECKF(memcmp(res, res_in, ncopy * sizeof(float)) == 0, "residual modified on error %d (%s)", (int)st,
                   sname(st));
    }
    CHECKF(memcmp(x, x_in, ncopy * sizeof(float)) == 0, "x modified");
    free(dst);
    free(x);
    free(res0);
    return st;
}

/* Every entry point that validates params must agree on the status. */
static void expect_param_status(const dq_params *p, size_t n, dq_status want, const char *what) {
    float *x = (float *)xmalloc(n * sizeof(float)), *res = (float *)xmalloc(n * sizeof(float));
    float *out = canary_floats(n);
    uint8_t src[4096];
    size_t sz = 777, cap = 4096;
    dq_t_rng r = {5};
    fill_gauss(&r, x, n);
    fill_gauss(&r, res, n);
    memset(src, 0, sizeof src);
    EXPECTF(enc_checked(p, x, n, NULL, cap, 1, 1), want, "dq_encode %s", what);
    EXPECTF(enc_checked(p, x, n, res, cap, 1, 1), want, "dq_encode with residual %s", what);
    EXPECTF(enc_checked(p, x, n, NULL, cap, 0, 1), want, "dq_encode_block %s", what);
    EXPECTF(dq_encode_capacity(p, n, &sz), want, "dq_encode_capacity %s", what);
    EXPECTF(dq_block_size(p, n, &sz), want, "dq_block_size %s", what);
    if (want != DQ_OK) {
        EXPECTF(dq_decode_block(p, src, sizeof src, n, out), want, "dq_decode_block %s", what);
        EXPECTF(dq_decode_add_block(p, src, sizeof src, n, 0.5f, out), want, "dq_decode_add_block %s", what);
        CHECKF(floats_canary(out, n), "block decoder wrote on error: %s", what);
    }
    free(x);
    free(res);
    free(out);
}

/* ---------------------------------------------------------------- encode side */
static void test_null(void) {
    dq_params p = defp();
    float x[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, res[16], out[16];
    uint8_t dst[256];
    size_t len = 99, sz = 99;
    dq_header h;
    msg m = make_msg(4, 8, DQ_ROUND_STOCHASTIC, 16, 1);
    memset(res, 0, sizeof res);
    memset(dst, CANARY, sizeof dst);
    EXPECT(dq_encode(NULL, x, 16, NULL, dst, sizeof dst, &len), DQ_ERR_NULL);
    EXPECT(dq_encode(&p, NULL, 16, NULL, dst, sizeof dst, &len), DQ_ERR_NULL);
    EXPECT(dq_encode(&p, x, 16, NULL, NULL, sizeof dst, &len), DQ_ERR_NULL);
    EXPECT(dq_encode(&p, x, 16, NULL, dst, sizeof dst, NULL), DQ_ERR_NULL);
    EXPECT(dq_encode(&p, x, 16, res, dst, sizeof dst, NULL), DQ_ERR_NULL);
    EXPECT(dq_encode(&p, NULL, 0, NULL, dst, sizeof dst, &len), DQ_ERR_NULL); /* NULL wins over EMPTY */
    EXPECT(dq_encode_block(NULL, x, 16, NULL, dst, sizeof dst, &len), DQ_ERR_NULL);
    EXPECT(dq_encode_block(&p, NULL, 16, NULL, dst, sizeof dst, &len), DQ_ERR_NULL);
    EXPECT(dq_encode_block(&p, x, 16, NULL, NULL, sizeof dst, &len), DQ_ERR_NULL);
    EXPECT(dq_encode_block(&p, x, 16, NULL, dst, sizeof dst, NULL), DQ_ERR_NULL);
    CHECK(len == 99);
    CHECK(all_canary(dst, sizeof dst));
    {
        float zero[16];
        memset(zero, 0, sizeof zero);
        CHECK(memcmp(res, zero, sizeof res) == 0);
    }
    EXPECT(dq_encode_capacity(NULL, 16, &sz), DQ_ERR_NULL);
    EXPECT(dq_encode_capacity(&p, 16, NULL), DQ_ERR_NULL);
    EXPECT(dq_block_size(NULL, 16, &sz), DQ_ERR_NULL);
    EXPECT(dq_block_size(&p, 16, NULL), DQ_ERR_NULL);
    CHECK(sz == 99);
    EXPECT(dq_header_read(NULL, m.len, &h), DQ_ERR_NULL);
    EXPECT(dq_header_read(m.buf, m.len, NULL), DQ_ERR_NULL);
    EXPECT(dq_decode(NULL, m.len, out, 16), DQ_ERR_NULL);
    EXPECT(dq_decode(m.buf, m.len, NULL, 16), DQ_ERR_NULL);
    EXPECT(dq_decode_add(NULL, m.len, 1.0f, out, 16), DQ_ERR_NULL);
    EXPECT(dq_decode_add(m.buf, m.len, 1.0f, NULL, 16), DQ_ERR_NULL);
    EXPECT(dq_decode_block(NULL, m.buf + 48, m.len - 48, 16, out), DQ_ERR_NULL);
    EXPECT(dq_decode_block(&m.p, NULL, m.len - 48, 16, out), DQ_ERR_NULL);
    EXPECT(dq_decode_block(&m.p, m.buf + 48, m.len - 48, 16, NULL), DQ_ERR_NULL);
    EXPECT(dq_decode_add_block(NULL, m.buf + 48, m.len - 48, 16, 1.0f, out), DQ_ERR_NULL);
    EXPECT(dq_decode_add_block(&m.p, NULL, m.len - 48, 16, 1.0f, out), DQ_ERR_NULL);
    EXPECT(dq_decode_add_block(&m.p, m.buf + 48, m.len - 48, 16, 1.0f, NULL), DQ_ERR_NULL);
    /* and the valid calls work */
    EXPECT(dq_decode(m.buf, m.len, out, 16), DQ_OK);
    EXPECT(dq_decode_block(&m.p, m.buf + 48, m.len - 48, 16, out), DQ_OK);
    free_msg(&m);
}

static void test_empty(void) {
    dq_params p = defp();
    float x[1] = {1.0f}, res[1] = {0.5f}, out[1] = {7.0f};
    uint8_t src[64];
    memset(src, 0, sizeof src);
    EXPECT(enc_checked(&p, x, 0, NULL, 256, 1, 1), DQ_ERR_EMPTY);
    EXPECT(enc_checked(&p, x, 0, res, 256, 1, 1), DQ_ERR_EMPTY);
    EXPECT(enc_checked(&p, x, 0, NULL, 256, 0, 1), DQ_ERR_EMPTY);
    EXPECT(enc_checked(&p, x, 0, NULL, 0, 1, 1), DQ_ERR_EMPTY);
    EXPECT(dq_decode_block(&p, src, sizeof src, 0, out), DQ_ERR_EMPTY);
    EXPECT(dq_decode_add_block(&p, src, sizeof src, 0, 1.0f, out), DQ_ERR_EMPTY);
    CHECK(res[0] == 0.5f && out[0] == 7.0f);
}

static void test_bits(void) {
    static const unsigned bad[] = {17, 18, 24, 31, 32, 33, 64, 255, 256, 65536, UINT_MAX};
    dq_params p = defp();
    size_t i;
    unsigned b;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char what[64];
        p.bits = bad[i];
        sprintf(what, "bits=%u", bad[i]);
        expect_param_status(&p, 100, DQ_ERR_BITS, what);
        CHECK(dq_encode_bound(100, bad[i]) == 0);
    }
    CHECK(dq_encode_bound(100, 0) == 0);
    for (b = 0; b <= 16; b++) { /* 0 is the default, 4 */
        float x[40];
        uint8_t buf[512];
        size_t len = 0;
        dq_header h;
        dq_t_rng r = {b};
        p.bits = b;
        fill_gauss(&r, x, 40);
        EXPECT(dq_encode(&p, x, 40, NULL, buf, sizeof buf, &len), DQ_OK);
        EXPECT(dq_header_read(buf, len, &h), DQ_OK);
        CHECKF(h.bits == (b ? b : 4u) && buf[7] == (b ? b : 4u), "bits %u encoded as %u", b, h.bits);
        CHECK(h.msg_size == len && len <= dq_encode_bound(40, b ? b : 4u));
    }
}

static void test_bucket(void) {
    static const uint32_t bad[] = {1, 2, 3, 4, 5, 6, 7, 9, 10, 12, 15, 17, 20, 100, 513, 1023, 0x7FFFFFFFu, 0xFFFFFFF9u,
                                   0xFFFFFFFCu, 0xFFFFFFFEu};
    static const uint32_t good[] = {0, 8, 16, 24, 64, 512, 4096, 0xFFFFFFF8u, DQ_BUCKET_WHOLE};
    dq_params p = defp();
    size_t i;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char what[64];
        p.bucket = bad[i];
        sprintf(what, "bucket=%lu", (unsigned long)bad[i]);
        expect_param_status(&p, 100, DQ_ERR_PARAM, what);
    }
    for (i = 0; i < sizeof good / sizeof good[0]; i++) {
        char what[64];
        p.bucket = good[i];
        sprintf(what, "bucket=%lu", (unsigned long)good[i]);
        expect_param_status(&p, 100, DQ_OK, what);
    }
}

static void test_enums(void) {
    static const int bad_round[] = {3, 4, 100, -1, INT_MAX, INT_MIN};
    static const int bad_norm[] = {3 /* DQ_NORM_MEAN: chosen by the encoder, not accepted */, 4, 7, -1, INT_MIN};
    static const int bad_scheme[] = {12, 13, 255, -1, INT_MAX}; /* 5 is DQ_SCHEME_TWOMEANS */
    dq_params p;
    size_t i;
    int v;
    for (i = 0; i < sizeof bad_round / sizeof bad_round[0]; i++) {
        char what[64];
        p = defp();
        p.rounding = (dq_rounding)bad_round[i];
        sprintf(what, "rounding=%d", bad_round[i]);
        expect_param_status(&p, 64, DQ_ERR_PARAM, what);
    }
    for (i = 0; i < sizeof bad_norm / sizeof bad_norm[0]; i++) {
        char what[64];
        p = defp();
        p.norm = (dq_norm)bad_norm[i];
        sprintf(what, "norm=%d", bad_norm[i]);
        expect_param_status(&p, 64, DQ_ERR_PARAM, what);
        p.bits = 1; /* also where the encoder itself would pick MEAN */
        p.rounding = DQ_ROUND_NEAREST;
        expect_param_status(&p, 64, DQ_ERR_PARAM, what);
    }
    for (i = 0; i < sizeof bad_scheme / sizeof bad_scheme[0]; i++) {
        char what[64];
        p = defp();
        p.scheme = (dq_scheme)bad_scheme[i];
        sprintf(what, "scheme=%d", bad_scheme[i]);
        expect_param_status(&p, 64, DQ_ERR_PARAM, what);
    }
    for (v = 0; v <= 2; v++) { /* the valid ones */
        char what[64];
        p = defp();
        p.rounding = (dq_rounding)v;
        p.norm = (dq_norm)v;
        p.scheme = (dq_scheme)(v & 1);
        sprintf(what, "valid enums %d", v);
        expect_param_status(&p, 64, DQ_OK, what);
    }
}

static void test_nonfinite(void) {
    static const uint32_t bad[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0x7FFFFFFFu, 0x7F800000u, 0xFF800000u};
    static const size_t ns[] = {1, 7, 8, 9, 100, 1000, 1001};
    static const unsigned bitsv[] = {1, 4, 16};
    dq_t_rng r = {123};
    float *x = (float *)xmalloc(1001 * sizeof(float)), *res = (float *)xmalloc(1001 * sizeof(float));
    size_t ni, pi, vi, bi;
    for (ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
        size_t n = ns[ni], pos[5];
        pos[0] = 0;
        pos[1] = n / 2;
        pos[2] = n - 1;
        pos[3] = n > 64 * 3 + 5 ? 64 * 3 + 5 : n - 1; /* in a later bucket (bucket 64) */
        pos[4] = n > 700 ? 700 : n / 3;
        for (pi = 0; pi < 5; pi++)
            for (vi = 0; vi < sizeof bad / sizeof bad[0]; vi++)
                for (bi = 0; bi < 3; bi++) {
                    int variant;
                    for (variant = 0; variant < 4; variant++) {
                        dq_params p = defp();
                        size_t cap = 0;
                        char what[96];
                        p.bits = bitsv[bi];
                        p.bucket = variant & 1 ? 64u : (variant == 2 ? DQ_BUCKET_WHOLE : 0u);
                        p.rounding = (vi + bi) & 1u ? DQ_ROUND_NEAREST : DQ_ROUND_STOCHASTIC;
                        p.norm = (pi + vi) & 1u ? DQ_NORM_MAX : DQ_NORM_L2;
                        fill_gauss(&r, x, n);
                        fill_gauss(&r, res, n);
                        if (variant == 3) /* the bad value sits in the residual, x is finite */
                            res[pos[pi]] = dq_t_bitsf(bad[vi]);
                        else
                            x[pos[pi]] = dq_t_bitsf(bad[vi]);
                        sprintf(what, "n=%lu pos=%lu value=%08lx bits=%u variant %d", (unsigned long)n,
                                (unsigned long)pos[pi], (unsigned long)bad[vi], p.bits, variant);
                        dq_encode_capacity(&p, n, &cap);
                        if (variant != 3) {
                            EXPECTF(enc_checked(&p, x, n, NULL, cap, 1, 0), DQ_ERR_NONFINITE, "%s", what);
                            EXPECTF(enc_checked(&p, x, n, NULL, cap - 48u, 0, 0), DQ_ERR_NONFINITE, "block %s",
                                    what);
                        }
                        /* with error feedback: residual untouched, checked by enc_checked */
                        EXPECTF(enc_checked(&p, x, n, res, cap, 1, 0), DQ_ERR_NONFINITE, "residual %s", what);
                        if (pi == 0 && bi == 0)
                            EXPECTF(enc_checked(&p, x, n, res, cap - 48u, 0, 0), DQ_ERR_NONFINITE,
                                    "block residual %s", what);
                    }
                }
    }
    free(x);
    free(res);
}

/* x + residual overflows float although both are finite. */
static void test_feedback_overflow(void) {
    static const size_t where[] = {0, 5, 63, 64, 300, 999};
    dq_t_rng r = {321};
    size_t i, n = 1000, cap = 0;
    float *x = (float *)xmalloc(n * sizeof(float)), *res = (float *)xmalloc(n * sizeof(float));
    for (i = 0; i < sizeof where / sizeof where[0]; i++) {
        int sgn;
        for (sgn = 0; sgn < 2; sgn++) {
            dq_params p = defp();
            p.bucket = 64;
            p.bits = (unsigned)(1 + i * 3);
            fill_gauss(&r, x, n);
            fill_gauss(&r, res, n);
            x[where[i]] = sgn ? -FLT_MAX : 3e38f;
            res[where[i]] = sgn ? -FLT_MAX : 3e38f;
            dq_encode_capacity(&p, n, &cap);
            EXPECTF(enc_checked(&p, x, n, res, cap, 1, 0), DQ_ERR_NONFINITE, "x+e overflow at %lu",
                    (unsigned long)where[i]);
            EXPECTF(enc_checked(&p, x, n, res, cap - 48u, 0, 0), DQ_ERR_NONFINITE, "block x+e overflow at %lu",
                    (unsigned long)where[i]);
            /* without feedback the values are finite, but the bucket scale exceeds 2^126 */
            EXPECT(enc_checked(&p, x, n, NULL, cap, 1, 0), DQ_ERR_OVERFLOW);
        }
    }
    free(x);
    free(res);
}

/* The L2 norm of a bucket overflows float although every element is finite. */
static void test_norm_overflow(void) {
    dq_t_rng r = {77};
    size_t n = 1000, cap = 0, i;
    float *x = (float *)xmalloc(n * sizeof(float));
    dq_params p;
    /* a whole bucket of 3e38 */
    for (i = 0; i < n; i++) x[i] = 3e38f;
    p = defp();
    dq_encode_capacity(&p, n, &cap);
    EXPECT(enc_checked(&p, x, n, NULL, cap, 1, 0), DQ_ERR_OVERFLOW);
    EXPECT(enc_checked(&p, x, n, NULL, cap - 48u, 0, 0), DQ_ERR_OVERFLOW);
    p.bits = 16;
    p.rounding = DQ_ROUND_NEAREST;
    dq_encode_capacity(&p, n, &cap);
    EXPECT(enc_checked(&p, x, n, NULL, cap, 1, 0), DQ_ERR_OVERFLOW);
    /* the max norm and the 1-bit mean norm are capped at 2^126 too */
    p = defp();
    p.norm = DQ_NORM_MAX;
    dq_encode_capacity(&p, n, &cap);
    EXPECT(enc_checked(&p, x, n, NULL, cap, 1, 0), DQ_ERR_OVERFLOW);
    p = defp();
    p.bits = 1;
    p.rounding = DQ_ROUND_NEAREST;
    dq_encode_capacity(&p, n, &cap);
    EXPECT(enc_checked(&p, x, n, NULL, cap, 1, 0), DQ_ERR_OVERFLOW);
    /* ... and a whole bucket of 2^126 is accepted with them */
    for (i = 0; i < n; i++) x[i] = 8.50705917e37f; /* 2^126 */
    EXPECT(enc_checked(&p, x, n, NULL, cap, 1, 0), DQ_OK);
    p = defp();
    p.norm = DQ_NORM_MAX;
    dq_encode_capacity(&p, n, &cap);
    EXPECT(enc_checked(&p, x, n, NULL, cap, 1, 0), DQ_OK);
    /* only a later bucket overflows: two values of 3e38 */
    fill_gauss(&r, x, n);
    x[200] = 3e38f;
    x[201] = -3e38f;
    p = defp();
    p.bucket = 64;
    dq_encode_capacity(&p, n, &cap);
    EXPECT(enc_checked(&p, x, n, NULL, cap, 1, 0), DQ_ERR_OVERFLOW);
    p.bucket = 8; /* 200 and 201 share bucket 25 */
    dq_encode_capacity(&p, n, &cap);
    EXPECT(enc_checked(&p, x, n, NULL, cap, 1, 0), DQ_ERR_OVERFLOW);
    /* a scale of exactly 2^126 is the largest accepted; the next float up is refused */
    p.bucket = 64;
    for (i = 0; i < n; i++) x[i] = (i % 64) ? 0.0f : 8.50705917e37f;
    dq_encode_capacity(&p, n, &cap);
    EXPECT(enc_checked(&p, x, n, NULL, cap, 1, 0), DQ_OK);
    x[64] = dq_t_bitsf(0x7E800001u);
    EXPECT(enc_checked(&p, x, n, NULL, cap, 1, 0), DQ_ERR_OVERFLOW);
    free(x);
}

/* Error feedback: the residual is "updated only when the call returns DQ_OK" (dq_encode
 * documentation), also when a later bucket's norm overflows: every scale must be known before
 * the first bucket is compensated into the residual. (Regression: an earlier version compensated
 * bucket by bucket and left the residual half-updated on DQ_ERR_OVERFLOW.) */
static void test_overflow_keeps_residual(void) {
    dq_t_rng r = {78};
    size_t n = 256, cap = 0;
    float *x = (float *)xmalloc(n * sizeof(float)), *res = (float *)xmalloc(n * sizeof(float));
    dq_params p = defp();
    /* a single bucket */
    memset(res, 0, n * sizeof(float));
    {
        size_t i;
        for (i = 0; i < n; i++) x[i] = 3e38f;
    }
    dq_encode_capacity(&p, n, &cap);
    EXPECT(enc_checked(&p, x, n, res, cap, 1, 0), DQ_ERR_OVERFLOW); /* enc_checked checks res untouched */
    /* a later bucket */
    fill_gauss(&r, x, n);
    fill_gauss(&r, res, n);
    x[100] = 3e38f;
    x[101] = 3e38f;
    p.bucket = 8;
    dq_encode_capacity(&p, n, &cap);
    EXPECT(enc_checked(&p, x, n, res, cap, 1, 0), DQ_ERR_OVERFLOW);
    EXPECT(enc_checked(&p, x, n, res, cap - 48u, 0, 0), DQ_ERR_OVERFLOW);
    free(x);
    free(res);
}

static void test_dst_too_small(void) {
    static const size_t ns[] = {1, 9, 300, 1001};
    static const unsigned bitsv[] = {1, 4, 16, 0};
    static const uint32_t buckets[] = {8, 0, DQ_BUCKET_WHOLE};
    dq_t_rng r = {9};
    float *x = (float *)xmalloc(1001 * sizeof(float)), *res = (float *)xmalloc(1001 * sizeof(float));
    size_t ni, bi, ki;
    for (ni = 0; ni < 4; ni++)
        for (bi = 0; bi < 4; bi++)
            for (ki = 0; ki < 3; ki++) {
                size_t n = ns[ni], exact = 0, body = 0, caps[6], c;
                dq_params p = defp();
                p.bits = bitsv[bi];
                p.bucket = buckets[ki];
                fill_gauss(&r, x, n);
                fill_gauss(&r, res, n);
                EXPECT(dq_encode_capacity(&p, n, &exact), DQ_OK);
                EXPECT(dq_block_size(&p, n, &body), DQ_OK);
                CHECK(exact == body + 48u);
                CHECK(exact <= dq_encode_bound(n, p.bits ? p.bits : 4u));
                CHECK(exact <= DQ_ENCODE_BOUND(n, p.bits ? p.bits : 4u));
                caps[0] = exact - 1;
                caps[1] = exact - 2;
                caps[2] = 0;
                caps[3] = 47;
                caps[4] = 48;
                caps[5] = exact / 2;
                for (c = 0; c < 6; c++) {
                    if (caps[c] >= exact) continue;
                    EXPECTF(enc_checked(&p, x, n, NULL, caps[c], 1, 1), DQ_ERR_DST_TOO_SMALL, "n=%lu cap=%lu",
                            (unsigned long)n, (unsigned long)caps[c]);
                    EXPECTF(enc_checked(&p, x, n, res, caps[c], 1, 1), DQ_ERR_DST_TOO_SMALL, "n=%lu cap=%lu",
                            (unsigned long)n, (unsigned long)caps[c]);
                    if (caps[c] < body)
                        EXPECTF(enc_checked(&p, x, n, NULL, caps[c], 0, 1), DQ_ERR_DST_TOO_SMALL,
                                "block n=%lu cap=%lu", (unsigned long)n, (unsigned long)caps[c]);
                }
                EXPECT(enc_checked(&p, x, n, NULL, body - 1u, 0, 1), DQ_ERR_DST_TOO_SMALL);
                /* exact capacity works and writes nothing beyond it */
                EXPECT(enc_checked(&p, x, n, NULL, exact, 1, 0), DQ_OK);
                EXPECT(enc_checked(&p, x, n, res, exact, 1, 0), DQ_OK);
                EXPECT(enc_checked(&p, x, n, NULL, body, 0, 0), DQ_OK);
                EXPECT(enc_checked(&p, x, n, NULL, exact + 100u, 1, 0), DQ_OK);
            }
    free(x);
    free(res);
}

static void test_too_large(void) {
    dq_params p = defp();
    size_t sz = 0;
    float x[1] = {1.0f}, out[1] = {2.0f};
    uint8_t src[64];
    memset(src, 0, sizeof src);
    CHECK(dq_encode_bound(SIZE_MAX, 4) == 0);
#if SIZE_MAX > 0xFFFFFFFFu
    {
        size_t big = (size_t)DQ_MAX_ELEMS + 1u, expect;
        unsigned bits;
        EXPECT(dq_encode_capacity(&p, big, &sz), DQ_ERR_TOO_LARGE);
        EXPECT(dq_block_size(&p, big, &sz), DQ_ERR_TOO_LARGE);
        EXPECT(dq_encode_capacity(&p, SIZE_MAX, &sz), DQ_ERR_TOO_LARGE);
        EXPECT(dq_block_size(&p, SIZE_MAX, &sz), DQ_ERR_TOO_LARGE);
        CHECK(dq_encode_bound(big, 4) == 0);
        /* the count is rejected before anything is read or the capacity is compared */
        EXPECT(enc_checked(&p, x, big, NULL, 64, 1, 1), DQ_ERR_TOO_LARGE);
        EXPECT(enc_checked(&p, x, big, NULL, 64, 0, 1), DQ_ERR_TOO_LARGE);
        EXPECT(dq_decode_block(&p, src, sizeof src, big, out), DQ_ERR_TOO_LARGE);
        EXPECT(dq_decode_add_block(&p, src, sizeof src, big, 1.0f, out), DQ_ERR_TOO_LARGE);
        CHECK(out[0] == 2.0f);
        /* DQ_MAX_ELEMS itself is accepted and sized exactly */
        for (bits = 1; bits <= 16; bits++) {
            p.bits = bits;
            p.coder = DQ_CODER_DEFAULT; /* AUTO at this size: the fixed size, the checksum the default adds to
                                         * coded forms and one rANS chunk's room (at 9..16 bits: 2^16 codes') */
            EXPECT(dq_encode_capacity(&p, (size_t)DQ_MAX_ELEMS, &sz), DQ_OK);
            expect = 48u + 4u * ((size_t)DQ_MAX_ELEMS / 512u) + (size_t)DQ_MAX_ELEMS / 8u * bits;
            CHECKF(sz == expect + 4u + (bits <= 8u ? 65536u * ((8u / bits) * bits) / 8u : 65536u * bits / 8u),
                   "bits %u: size %lu", bits, (unsigned long)sz);
            p.coder = DQ_CODER_FIXED_ONLY;
            EXPECT(dq_encode_capacity(&p, (size_t)DQ_MAX_ELEMS, &sz), DQ_OK);
            CHECKF(sz == expect, "bits %u: size %lu want %lu", bits, (unsigned long)sz, (unsigned long)expect);
            CHECK(dq_encode_bound((size_t)DQ_MAX_ELEMS, bits) >= sz);
        }
    }
#else
    (void)x;
    (void)out;
    (void)src;
    (void)sz;
    (void)p;
#endif
}

/* ---------------------------------------------------------------- decode side */
static msg std_msgs[6];
static const size_t N_STD = 6;
static void make_std_msgs(void) {
    std_msgs[0] = make_msg(5, 64, DQ_ROUND_STOCHASTIC, 1001, 11); /* tail with 3 padding bits */
    std_msgs[1] = make_msg(3, DQ_BUCKET_WHOLE, DQ_ROUND_NEAREST, 300, 12);
    std_msgs[2] = make_msg(16, 0, DQ_ROUND_STOCHASTIC, 512, 13); /* full blocks only */
    std_msgs[3] = make_msg(1, 8, DQ_ROUND_NEAREST, 7, 14);     /* 1-bit, mean norm */
    std_msgs[4] = make_msg(7, 8, DQ_ROUND_STOCHASTIC, 777, 15);
    std_msgs[5] = make_msg(1, 16, DQ_ROUND_STOCHASTIC, 1, 16);
}

static void test_valid_roundtrip(void) {
    size_t i;
    for (i = 0; i < N_STD; i++) {
        msg *m = &std_msgs[i];
        dq_header h;
        float *out = (float *)xmalloc(m->n * sizeof(float));
        uint8_t *longer = (uint8_t *)xmalloc(m->len + 33u);
        EXPECT(dq_header_read(m->buf, m->len, &h), DQ_OK);
        CHECK(h.count == m->n && h.msg_size == m->len && h.version == 1 && h.header_size == 48 && h.scheme == 1);
        expect_decode(m->buf, m->len, m->n, DQ_OK, DQ_OK, "valid");
        /* bytes past the message are ignored */
        memcpy(longer, m->buf, m->len);
        memset(longer + m->len, 0xFF, 33u);
        EXPECT(dq_decode(longer, m->len + 33u, out, m->n), DQ_OK);
        EXPECT(dq_header_read(longer, m->len + 33u, &h), DQ_OK);
        CHECK(h.msg_size == m->len);
        free(out);
        free(longer);
    }
}

static void test_truncated(void) {
    size_t i, L;
    for (i = 0; i < N_STD; i++) {
        msg *m = &std_msgs[i];
        size_t body = m->len - 48u;
        for (L = 0; L < m->len; L++) {
            char what[64];
            sprintf(what, "msg %lu truncated", (unsigned long)i);
            expect_decode(m->buf, L, m->n, L < 48 ? DQ_ERR_TRUNCATED : DQ_OK, DQ_ERR_TRUNCATED, what);
        }
        /* headerless: too short src */
        for (L = 0; L < body; L++) {
            uint8_t *b = bdup(m->buf + 48, L);
            float *out = canary_floats(m->n);
            EXPECTF(dq_decode_block(&m->p, b, L, m->n, out), DQ_ERR_TRUNCATED, "block len %lu of %lu",
                    (unsigned long)L, (unsigned long)body);
            EXPECTF(dq_decode_add_block(&m->p, b, L, m->n, 0.5f, out), DQ_ERR_TRUNCATED, "block len %lu",
                    (unsigned long)L);
            CHECK(floats_canary(out, m->n));
            free(b);
            free(out);
        }
        {
            uint8_t *b = bdup(m->buf + 48, body);
            float *out = canary_floats(m->n), *ref = (float *)xmalloc(m->n * sizeof(float));
            EXPECT(dq_decode_block(&m->p, b, body, m->n, out), DQ_OK);
            EXPECT(dq_decode(m->buf, m->len, ref, m->n), DQ_OK);
            CHECK(memcmp(out, ref, m->n * sizeof(float)) == 0);
            free(b);
            free(out);
            free(ref);
        }
    }
}

static void test_magic_version_size(void) {
    msg *m = &std_msgs[0];
    uint8_t *b = bdup(m->buf, m->len);
    size_t i;
    static const uint8_t vals[] = {0, 1, 2, 47, 49, 64, 0x80, 0xFF};
    for (i = 0; i < 4; i++) {
        size_t v;
        for (v = 0; v < sizeof vals / sizeof vals[0]; v++) {
            if (vals[v] == m->buf[i]) continue;
            memcpy(b, m->buf, m->len);
            b[i] = vals[v];
            expect_decode(b, m->len, m->n, DQ_ERR_BAD_MAGIC, DQ_ERR_BAD_MAGIC, "bad magic");
            put_crc(b);
            expect_decode(b, m->len, m->n, DQ_ERR_BAD_MAGIC, DQ_ERR_BAD_MAGIC, "bad magic, crc ok");
            expect_decode(b, 8, m->n, DQ_ERR_BAD_MAGIC, DQ_ERR_BAD_MAGIC, "bad magic, 8 bytes");
            expect_decode(b, 7, m->n, DQ_ERR_TRUNCATED, DQ_ERR_TRUNCATED, "bad magic, 7 bytes");
        }
    }
    for (i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        if (vals[i] == DQ_FORMAT_VERSION) continue;
        memcpy(b, m->buf, m->len);
        b[4] = vals[i];
        expect_decode(b, m->len, m->n, DQ_ERR_VERSION, DQ_ERR_VERSION, "version");
        put_crc(b);
        expect_decode(b, m->len, m->n, DQ_ERR_VERSION, DQ_ERR_VERSION, "version, crc ok");
        expect_decode(b, 8, m->n, DQ_ERR_VERSION, DQ_ERR_VERSION, "version, 8 bytes");
    }
    for (i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        if (vals[i] == 48) continue;
        memcpy(b, m->buf, m->len);
        b[5] = vals[i];
        expect_decode(b, m->len, m->n, DQ_ERR_CORRUPT, DQ_ERR_CORRUPT, "header size");
        put_crc(b);
        expect_decode(b, m->len, m->n, DQ_ERR_CORRUPT, DQ_ERR_CORRUPT, "header size, crc ok");
        expect_decode(b, 8, m->n, DQ_ERR_CORRUPT, DQ_ERR_CORRUPT, "header size, 8 bytes");
    }
    free(b);
}

static void test_header_bitflips(void) {
    size_t i, bit;
    for (i = 0; i < N_STD; i += 2) {
        msg *m = &std_msgs[i];
        uint8_t *b = bdup(m->buf, m->len);
        for (bit = 0; bit < 48u * 8u; bit++) {
            size_t byte = bit / 8u;
            dq_status want = byte < 4 ? DQ_ERR_BAD_MAGIC : byte == 4 ? DQ_ERR_VERSION : byte == 5 ? DQ_ERR_CORRUPT
                                                                                                : DQ_ERR_CHECKSUM;
            char what[64];
            memcpy(b, m->buf, m->len);
            b[byte] = (uint8_t)(b[byte] ^ (1u << (bit % 8u)));
            sprintf(what, "msg %lu bit %lu flipped", (unsigned long)i, (unsigned long)bit);
            expect_decode(b, m->len, m->n, want, want, what);
            CHECK(want != DQ_OK);
        }
        free(b);
    }
}

/* Patch `width` bytes LE at `off`, optionally recompute the checksum, and expect `want`. */
static void field_case(const msg *m, size_t off, unsigned width, uint64_t v, dq_status want, const char *name) {
    uint8_t *b = bdup(m->buf, m->len);
    char what[96];
    unsigned k;
    for (k = 0; k < width; k++) b[off + k] = (uint8_t)(v >> (8u * k));
    sprintf(what, "%s = %llu (crc recomputed)", name, (unsigned long long)v);
    put_crc(b);
    expect_decode(b, m->len, m->n, want, want, what);
    if (memcmp(b, m->buf, 44) != 0) { /* and with the old checksum it is a checksum error */
        memcpy(b + 44, m->buf + 44, 4);
        sprintf(what, "%s = %llu (stale crc)", name, (unsigned long long)v);
        expect_decode(b, m->len, m->n, DQ_ERR_CHECKSUM, DQ_ERR_CHECKSUM, what);
    }
    free(b);
}

static void test_header_fields(void) {
    size_t i;
    for (i = 0; i < N_STD; i++) {
        const msg *m = &std_msgs[i];
        static const uint64_t scheme_bad[] = {0, 5, 12, 0xFF};
        static const uint64_t bits_bad[] = {0, 17, 32, 0xFF};
        static const uint64_t coder_bad[] = {4, 0x7F, 0xFF}; /* 1 (Elias), 2 and 3 (rANS) are coders now */
        static const uint64_t norm_bad[] = {3, 4, 0xFF};
        static const uint64_t flags_bad[] = {4, 6, 7, 0x100, 0x8000, 0xFFFF, 0xFFFC};
        static const uint64_t bucket_bad[] = {1, 4, 7, 9, 12, 65, 0xFFFFFFFFu, 0xFFFFFFFCu, 0x80000001u};
        static const uint64_t seeds[] = {0, 1, 0xFFFFFFFFFFFFFFFFu};
        size_t k;
        for (k = 0; k < sizeof scheme_bad / sizeof scheme_bad[0]; k++) field_case(m, 6, 1, scheme_bad[k], DQ_ERR_CORRUPT, "scheme");
        for (k = 0; k < sizeof bits_bad / sizeof bits_bad[0]; k++) field_case(m, 7, 1, bits_bad[k], DQ_ERR_CORRUPT, "bits");
        for (k = 0; k < sizeof coder_bad / sizeof coder_bad[0]; k++) field_case(m, 8, 1, coder_bad[k], DQ_ERR_CORRUPT, "coder");
        for (k = 0; k < sizeof norm_bad / sizeof norm_bad[0]; k++) field_case(m, 9, 1, norm_bad[k], DQ_ERR_CORRUPT, "norm");
        for (k = 0; k < sizeof flags_bad / sizeof flags_bad[0]; k++) field_case(m, 10, 2, flags_bad[k], DQ_ERR_CORRUPT, "flags");
        for (k = 0; k < sizeof bucket_bad / sizeof bucket_bad[0]; k++) field_case(m, 12, 4, bucket_bad[k], DQ_ERR_CORRUPT, "bucket");
        field_case(m, 16, 8, 0, DQ_ERR_CORRUPT, "count");
        field_case(m, 16, 8, DQ_MAX_ELEMS + 1u, DQ_ERR_TOO_LARGE, "count");
        field_case(m, 16, 8, (uint64_t)1 << 63, DQ_ERR_TOO_LARGE, "count");
        field_case(m, 16, 8, 0xFFFFFFFFFFFFFFFFu, DQ_ERR_TOO_LARGE, "count");
        /* fields that do not change how the body decodes */
        for (k = 0; k < 3; k++) field_case(m, 9, 1, k, DQ_OK, "norm");
        for (k = 0; k < 2; k++) field_case(m, 10, 2, k, DQ_OK, "flags");
        for (k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
            field_case(m, 24, 8, seeds[k], DQ_OK, "seed");
            field_case(m, 32, 8, seeds[k], DQ_OK, "step");
            field_case(m, 40, 4, seeds[k] & 0xFFFFFFFFu, DQ_OK, "stream");
        }
        /* count = DQ_MAX_ELEMS: a valid header, but no buffer is big enough */
        {
            uint8_t *b = bdup(m->buf, m->len);
            float *out = canary_floats(m->n);
            dq_header h;
            dq_t_st64(b + 16, DQ_MAX_ELEMS);
            put_crc(b);
            EXPECT(dq_header_read(b, m->len, &h), DQ_OK);
            CHECK(h.count == (size_t)DQ_MAX_ELEMS && h.msg_size > m->len);
            EXPECT(dq_decode(b, m->len, out, m->n), DQ_ERR_DST_TOO_SMALL);
            EXPECT(dq_decode_add(b, m->len, 1.0f, out, m->n), DQ_ERR_SIZE_MISMATCH);
            CHECK(floats_canary(out, m->n));
            /* one more element than the body holds */
            dq_t_st64(b + 16, (uint64_t)m->n + 256u);
            put_crc(b);
            free(out);
            out = canary_floats(m->n + 256u);
            EXPECT(dq_decode(b, m->len, out, m->n + 256u), DQ_ERR_TRUNCATED);
            EXPECT(dq_decode_add(b, m->len, 1.0f, out, m->n + 256u), DQ_ERR_TRUNCATED);
            CHECK(floats_canary(out, m->n + 256u));
            free(out);
            free(b);
        }
    }
}

static void test_bad_scales(void) {
    static const uint32_t bad[] = {0x80000000u, 0x80000001u, 0xBF800000u, 0xFF7FFFFFu, 0x7F800000u,
                                   0xFF800000u, 0x7FC00000u, 0x7F800001u, 0xFFC00000u, 0xFFFFFFFFu,
                                   0x7E800001u, 0x7F7FFFFFu};
    static const uint32_t good[] = {0u, 1u, 0x00800000u, 0x3F800000u, 0x7E800000u};
    size_t i;
    for (i = 0; i < N_STD; i++) {
        const msg *m = &std_msgs[i];
        dq_header h;
        size_t nb, which[3], w, v;
        dq_header_read(m->buf, m->len, &h);
        nb = h.bucket ? (m->n + h.bucket - 1u) / h.bucket : 1u;
        which[0] = 0;
        which[1] = nb / 2u;
        which[2] = nb - 1u;
        for (w = 0; w < 3; w++) {
            uint8_t *b = bdup(m->buf, m->len);
            for (v = 0; v < sizeof bad / sizeof bad[0]; v++) {
                char what[80];
                memcpy(b, m->buf, m->len);
                dq_t_st32(b + 48 + 4u * which[w], bad[v]);
                sprintf(what, "msg %lu scale %lu = %08lx", (unsigned long)i, (unsigned long)which[w],
                        (unsigned long)bad[v]);
                expect_decode(b, m->len, m->n, DQ_OK, DQ_ERR_CORRUPT, what);
                {
                    float *out = canary_floats(m->n);
                    EXPECTF(dq_decode_block(&m->p, b + 48, m->len - 48u, m->n, out), DQ_ERR_CORRUPT, "block %s", what);
                    EXPECTF(dq_decode_add_block(&m->p, b + 48, m->len - 48u, m->n, 1.0f, out), DQ_ERR_CORRUPT,
                            "block add %s", what);
                    CHECK(floats_canary(out, m->n));
                    free(out);
                }
            }
            for (v = 0; v < sizeof good / sizeof good[0]; v++) {
                memcpy(b, m->buf, m->len);
                dq_t_st32(b + 48 + 4u * which[w], good[v]);
                expect_decode(b, m->len, m->n, DQ_OK, DQ_OK, "good scale");
            }
            free(b);
        }
    }
}

/* Nonzero bits after the last code of the tail. */
static void test_padding(void) {
    static const size_t ns[] = {1, 3, 5, 255, 257, 1001};
    unsigned bits;
    size_t ni;
    int tested = 0;
    for (bits = 1; bits <= 16; bits++)
        for (ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
            size_t n = ns[ni], tail = n % 256u, pad = (8u - (tail * bits) % 8u) % 8u, k;
            msg m;
            uint8_t *b;
            if (!pad) continue;
            m = make_msg(bits, 8, DQ_ROUND_STOCHASTIC, n, 100u + bits);
            b = bdup(m.buf, m.len);
            for (k = 0; k < pad; k++) {
                char what[80];
                memcpy(b, m.buf, m.len);
                b[m.len - 1u] = (uint8_t)(b[m.len - 1u] | (0x80u >> k));
                sprintf(what, "bits %u n %lu padding bit %lu", bits, (unsigned long)n, (unsigned long)(7u - k));
                expect_decode(b, m.len, n, DQ_OK, DQ_ERR_CORRUPT, what);
                {
                    float *out = canary_floats(n);
                    EXPECTF(dq_decode_block(&m.p, b + 48, m.len - 48u, n, out), DQ_ERR_CORRUPT, "block %s", what);
                    CHECK(floats_canary(out, n));
                    free(out);
                }
                tested++;
            }
            /* a code bit of the same byte is fine */
            memcpy(b, m.buf, m.len);
            b[m.len - 1u] = (uint8_t)(b[m.len - 1u] ^ 1u);
            expect_decode(b, m.len, n, DQ_OK, DQ_OK, "code bit in last byte");
            free(b);
            free_msg(&m);
        }
    CHECK(tested > 100);
}

static void test_output_sizes(void) {
    size_t i;
    for (i = 0; i < N_STD; i++) {
        const msg *m = &std_msgs[i];
        size_t n = m->n;
        float *out = canary_floats(n + 16u), *ref = (float *)xmalloc(n * sizeof(float));
        EXPECT(dq_decode(m->buf, m->len, out, n - 1u), DQ_ERR_DST_TOO_SMALL);
        EXPECT(dq_decode(m->buf, m->len, out, 0), DQ_ERR_DST_TOO_SMALL);
        CHECK(floats_canary(out, n + 16u));
        EXPECT(dq_decode_add(m->buf, m->len, 1.0f, out, n - 1u), DQ_ERR_SIZE_MISMATCH);
        EXPECT(dq_decode_add(m->buf, m->len, 1.0f, out, n + 1u), DQ_ERR_SIZE_MISMATCH);
        EXPECT(dq_decode_add(m->buf, m->len, 1.0f, out, 0), DQ_ERR_SIZE_MISMATCH);
        EXPECT(dq_decode_add(m->buf, m->len, 1.0f, out, SIZE_MAX), DQ_ERR_SIZE_MISMATCH);
        CHECK(floats_canary(out, n + 16u));
        /* a larger out works and only count floats are written */
        EXPECT(dq_decode(m->buf, m->len, out, n + 16u), DQ_OK);
        CHECK(floats_canary(out + n, 16u));
        EXPECT(dq_decode(m->buf, m->len, ref, n), DQ_OK);
        CHECK(memcmp(out, ref, n * sizeof(float)) == 0);
        free(out);
        free(ref);
    }
}

static void test_block_params(void) {
    const msg *m = &std_msgs[0];
    dq_params p = m->p;
    float *out = canary_floats(m->n);
    p.bits = 17;
    EXPECT(dq_decode_block(&p, m->buf + 48, m->len - 48u, m->n, out), DQ_ERR_BITS);
    p = m->p;
    p.bucket = 12;
    EXPECT(dq_decode_block(&p, m->buf + 48, m->len - 48u, m->n, out), DQ_ERR_PARAM);
    p = m->p;
    p.norm = DQ_NORM_MEAN;
    EXPECT(dq_decode_add_block(&p, m->buf + 48, m->len - 48u, m->n, 1.0f, out), DQ_ERR_PARAM);
    p = m->p;
    p.bits = 16; /* wider codes need more bytes than are there */
    EXPECT(dq_decode_block(&p, m->buf + 48, m->len - 48u, m->n, out), DQ_ERR_TRUNCATED);
    CHECK(floats_canary(out, m->n));
    free(out);
}

/* ---------------------------------------------------------------- random bytes */
static int known_status(dq_status s) {
#define DQ_T_KNOWN(name, value, text) if (s == name) return 1;
    DQ_STATUS_LIST(DQ_T_KNOWN)
#undef DQ_T_KNOWN
    return 0;
}

static void test_random_bytes(void) {
    dq_t_rng r = {2024};
    long iter, decoded_ok = 0, hdr_ok = 0;
    const long iters = 100000;
    for (iter = 0; iter < iters; iter++) {
        unsigned kind = rndu(&r, 8);
        size_t len, i, cnt = 0, want_size = 0;
        uint8_t *b;
        dq_header h;
        dq_status sh, sd, sa;
        if (kind < 2) { /* pure noise */
            len = rndu(&r, 8) == 0 ? rndu(&r, 4000) : rndu(&r, 120);
            b = (uint8_t *)xmalloc(len);
            for (i = 0; i < len; i++) b[i] = (uint8_t)dq_t_next(&r);
            if (kind == 1 && len >= 4) memcpy(b, "DQSG", 4);
        } else { /* a plausible header with its checksum, random body */
            uint8_t hd[48];
            unsigned bits = rndu(&r, 16) == 0 ? rndu(&r, 256) : 1u + rndu(&r, 16);
            uint32_t bucket = rndu(&r, 4) == 0 ? 0u : 8u * (1u + rndu(&r, 40));
            uint64_t count = rndu(&r, 32) == 0 ? dq_t_next(&r) >> rndu(&r, 64) : 1u + rndu(&r, kind == 7 ? 3000 : 300);
            size_t body;
            for (i = 0; i < 48; i++) hd[i] = (uint8_t)dq_t_next(&r);
            memcpy(hd, "DQSG", 4);
            hd[4] = DQ_FORMAT_VERSION;
            hd[5] = 48;
            hd[6] = (uint8_t)(rndu(&r, 32) ? 1u : (unsigned)dq_t_next(&r));
            hd[7] = (uint8_t)bits;
            hd[8] = (uint8_t)(rndu(&r, 32) ? 0u : (unsigned)dq_t_next(&r));
            hd[9] = (uint8_t)(rndu(&r, 32) ? rndu(&r, 3) : rndu(&r, 256));
            dq_t_st16(hd + 10, rndu(&r, 32) ? rndu(&r, 2) : (uint32_t)dq_t_next(&r) & 0xFFFFu);
            if (rndu(&r, 32) == 0) bucket = (uint32_t)dq_t_next(&r);
            dq_t_st32(hd + 12, bucket);
            dq_t_st64(hd + 16, count);
            if (rndu(&r, 64)) dq_t_st32(hd + 44, dqt_crc32c(hd, 44));
            /* the body size the header implies, when it is small */
            body = 0;
            if (bits >= 1 && bits <= 16 && count >= 1u && count <= 4096u) {
                size_t bk = bucket ? bucket : (size_t)count, nbk = ((size_t)count + bk - 1u) / bk;
                body = 4u * nbk + ((size_t)count * bits + 7u) / 8u;
            }
            switch (rndu(&r, 4)) {
                case 0: len = 48u + body; break;
                case 1: len = 48u + body - (body ? rndu(&r, (unsigned)(body < 16u ? body : 16u) + 1u) : 0u); break;
                case 2: len = 48u + body + rndu(&r, 16); break;
                default: len = rndu(&r, 48u + (unsigned)body + 16u); break;
            }
            b = (uint8_t *)xmalloc(len);
            for (i = 0; i < len; i++) b[i] = (uint8_t)dq_t_next(&r);
            memcpy(b, hd, len < 48u ? len : 48u);
            if (kind >= 5 && len > 48) { /* plausible scales: small non-negative floats */
                size_t nsc = bucket ? ((size_t)(count < 4096u ? count : 4096u) + bucket - 1u) / bucket : 1u;
                for (i = 0; i < nsc && 48u + 4u * i + 4u <= len; i++)
                    dq_t_st32(b + 48 + 4u * i, rndu(&r, 8) ? 0x3F000000u + rndu(&r, 0x01000000u) : (uint32_t)dq_t_next(&r));
            }
            if (kind >= 5 && body && len >= 48u + body && rndu(&r, 2)) { /* zero the tail's padding bits */
                size_t tailbits = (size_t)(count % 256u) * bits;
                if (tailbits % 8u) b[48u + body - 1u] = (uint8_t)(b[48u + body - 1u] & ((1u << (tailbits % 8u)) - 1u));
            }
            if (kind == 4 && len) { /* one flipped bit */
                size_t at = rndu(&r, (unsigned)len);
                b[at] = (uint8_t)(b[at] ^ (1u << rndu(&r, 8)));
            }
            want_size = 48u + body;
        }
        sh = dq_header_read(b, len, &h);
        CHECKF(known_status(sh), "unknown status %d", (int)sh);
        if (sh == DQ_OK) {
            hdr_ok++;
            cnt = h.count;
            CHECK(cnt >= 1 && h.bits >= 1 && h.bits <= 16 && h.msg_size > 48u);
            if (want_size > 48u && cnt <= 4096u) CHECKF(h.msg_size == want_size, "msg_size %lu want %lu", (unsigned long)h.msg_size, (unsigned long)want_size);
        }
        if (sh == DQ_OK && cnt <= 4096u) {
            float *out = (float *)xmalloc(cnt * sizeof(float)), *acc = (float *)xmalloc(cnt * sizeof(float));
            float *acc0 = (float *)xmalloc(cnt * sizeof(float));
            for (i = 0; i < cnt; i++) acc0[i] = (float)dq_t_gauss(&r);
            memcpy(acc, acc0, cnt * sizeof(float));
            memset(out, CANARY, cnt * sizeof(float));
            sd = dq_decode(b, len, out, cnt);
            sa = dq_decode_add(b, len, 0.3f, acc, cnt);
            CHECKF(sd == sa, "decode %d vs decode_add %d", (int)sd, (int)sa);
            if (len < h.msg_size)
                EXPECT(sd, DQ_ERR_TRUNCATED);
            else
                CHECKF(sd == DQ_OK || sd == DQ_ERR_CORRUPT, "status %d (%s)", (int)sd, sname(sd));
            if (sd == DQ_OK && sa == DQ_OK) {
                decoded_ok++;
                for (i = 0; i < cnt; i++) {
                    float want = acc0[i] + 0.3f * out[i];
                    if (memcmp(&want, acc + i, 4) != 0) {
                        CHECKF(0, "decode_add != acc + w*decode at %lu", (unsigned long)i);
                        break;
                    }
                    if (isnan(out[i])) { /* scales are finite and non-negative: no NaN can come out */
                        CHECKF(0, "decoded NaN at %lu", (unsigned long)i);
                        break;
                    }
                }
            } else {
                CHECK(floats_canary(out, cnt));
                CHECK(cnt == 0 || memcmp(acc, acc0, cnt * sizeof(float)) == 0);
            }
            free(out);
            free(acc);
            free(acc0);
        } else {
            /* any count: a one-float output is too small unless count is 1 (the array is
             * larger only so that gcc -O3 does not warn about the unreachable block path) */
            float one[256];
            one[0] = 5.0f;
            sd = dq_decode(b, len, one, 1);
            sa = dq_decode_add(b, len, 1.0f, one, 1);
            if (sh != DQ_OK) {
                EXPECT(sd, sh);
                EXPECT(sa, sh);
            } else {
                EXPECT(sd, DQ_ERR_DST_TOO_SMALL);
                EXPECT(sa, DQ_ERR_SIZE_MISMATCH);
            }
            CHECK(one[0] == 5.0f);
        }
        free(b);
    }
    /* the generator must reach the decoders, not just the header checks */
    if (getenv("DQ_T_VERBOSE")) printf("random: %ld valid headers, %ld decoded\n", hdr_ok, decoded_ok);
    CHECKF(hdr_ok > iters / 4 && decoded_ok > iters / 25, "valid headers %ld, decoded %ld", hdr_ok, decoded_ok);
}

/* ---------------------------------------------------------------- strerror */
/* At the largest accepted scale (2^126) every width and rounding decodes to finite values and
 * leaves finite residuals. Regression: a norm near FLT_MAX used to be accepted, and
 * levels * (scale / levels) rounded up to +Inf on decode (x = {FLT_MAX, 0, ...}, 8 bits). */
static void test_max_scale_finite(void) {
    float x[16], res[16], out[16];
    uint8_t buf[256];
    unsigned bits, rnd, k;
    size_t len = 0, i;
    for (bits = 1; bits <= 16; bits++)
        for (rnd = 1; rnd <= 2; rnd++)
            for (k = 0; k < 3; k++) {
                dq_params p = defp();
                p.bits = bits;
                p.bucket = 8;
                p.rounding = (dq_rounding)rnd;
                p.norm = k == 2 ? DQ_NORM_MAX : DQ_NORM_L2;
                for (i = 0; i < 16; i++) {
                    x[i] = (i % 8 == 0) ? (k == 1 ? -4.25352959e37f : 4.25352959e37f) : (i % 3 ? -3e37f : 0.0f); /* 2^125 */
                    res[i] = 0.0f;
                }
                x[0] = 8.50705917e37f; /* the first bucket's L2 norm is exactly 2^126 only with zeros */
                for (i = 1; i < 8; i++) x[i] = 0.0f;
                CHECKF(dq_encode(&p, x, 16, res, buf, sizeof buf, &len) == DQ_OK, "bits %u rnd %u k %u", bits, rnd, k);
                CHECK(dq_decode(buf, len, out, 16) == DQ_OK);
                for (i = 0; i < 16; i++) {
                    CHECKF((dq_t_fbits(out[i]) & 0x7F800000u) != 0x7F800000u, "decoded[%lu] not finite, bits %u",
                           (unsigned long)i, bits);
                    CHECKF((dq_t_fbits(res[i]) & 0x7F800000u) != 0x7F800000u, "residual[%lu] not finite, bits %u",
                           (unsigned long)i, bits);
                }
                x[0] = 3.40282347e38f; /* FLT_MAX: its norm is refused, residual untouched ... */
                for (i = 0; i < 16; i++) res[i] = 0.0f;
                if (bits == 1 && rnd == DQ_ROUND_NEAREST) {
                    /* ... except by scaled sign, whose scale is the mean |x| (FLT_MAX / 8 here) and
                     * whose value has the sign of x, so |x - v| <= max(|x|, |v|) stays finite */
                    CHECK(dq_encode(&p, x, 16, res, buf, sizeof buf, &len) == DQ_OK);
                    for (i = 0; i < 16; i++) CHECK((dq_t_fbits(res[i]) & 0x7F800000u) != 0x7F800000u);
                } else {
                    CHECK(dq_encode(&p, x, 16, res, buf, sizeof buf, &len) == DQ_ERR_OVERFLOW);
                    for (i = 0; i < 16; i++) CHECK(dq_t_fbits(res[i]) == 0u);
                }
            }
}

/* Statuses the API comments name for the scheduler's warm start, segments and job parts. */
static void test_documented_statuses(void) {
    dq_sched_params q;
    dq_sched s;
    dq_segment seg[2];
    dq_params p;
    dq_job job;
    float x[600] = {0};
    static uint8_t dst[8192], work[1 << 16];
    size_t size = 0, b = 0, e = 0, wsz = 0;
    memset(&q, 0, sizeof q);
    q.mode = DQ_SCHED_FIXED;
    q.steps = 10;
    q.dim = 100;
    CHECK(dq_sched_init(&s, &q) == DQ_OK);
    q.warm_bits = 8; /* without warm_steps */
    CHECK(dq_sched_init(&s, &q) == DQ_ERR_PARAM);
    q.warm_steps = 11; /* more than steps */
    CHECK(dq_sched_init(&s, &q) == DQ_ERR_PARAM);
    q.warm_steps = 10;
    CHECK(dq_sched_init(&s, &q) == DQ_OK);
    q.warm_bits = 17;
    CHECK(dq_sched_init(&s, &q) == DQ_ERR_BITS);
    q.warm_bits = 1;
    CHECK(dq_sched_init(&s, &q) == DQ_ERR_BITS);
    q.warm_bits = 0; /* 16 */
    q.bits_max = 4;
    CHECK(dq_sched_init(&s, &q) == DQ_OK && s.p.warm_bits == 16u);
    q.steps = 0;
    CHECK(dq_sched_init(&s, &q) == DQ_ERR_EMPTY);

    memset(&p, 0, sizeof p);
    memset(seg, 0, sizeof seg);
    seg[0].count = 300;
    seg[0].bits = 4;
    seg[1].count = 300;
    seg[1].bits = 8;
    CHECK(dq_segments_capacity(&p, seg, 2, &size) == DQ_OK);
    CHECK(dq_segments_capacity(&p, seg, 0, &size) == DQ_ERR_EMPTY);
    CHECK(dq_encode_segments(&p, x, seg, 0, NULL, dst, sizeof dst, &size) == DQ_ERR_EMPTY);
    seg[1].count = 0;
    CHECK(dq_segments_capacity(&p, seg, 2, &size) == DQ_ERR_EMPTY);
    CHECK(dq_encode_segments(&p, x, seg, 2, NULL, dst, sizeof dst, &size) == DQ_ERR_EMPTY);
    seg[1].count = 300;
    seg[1].bits = 1;
    CHECK(dq_segments_capacity(&p, seg, 2, &size) == DQ_ERR_BITS);
    seg[1].bits = 8;
    p.scheme = DQ_SCHEME_NUQSGD;
    CHECK(dq_segments_capacity(&p, seg, 2, &size) == DQ_ERR_PARAM);
    p.scheme = DQ_SCHEME_DEFAULT;
    p.checksum = 2;
    CHECK(dq_segments_capacity(&p, seg, 2, &size) == DQ_ERR_PARAM);
    p.checksum = 0;

    p.bits = 4;
    CHECK(dq_job_work_size(&p, 600, 2, &wsz) == DQ_OK && wsz <= sizeof work);
    CHECK(dq_job_init(&job, &p, 600, 2, dst, sizeof dst, work, sizeof work) == DQ_OK);
    CHECK(dq_job_range(&job, job.parts, &b, &e) == DQ_ERR_PARAM);
    CHECK(dq_job_quantize(&job, job.parts, x, NULL) == DQ_ERR_PARAM);
    CHECK(dq_job_quantize(&job, job.parts + 7u, x, NULL) == DQ_ERR_PARAM);
}

static void test_strerror(void) {
    struct {
        dq_status code;
        const char *text;
    } list[] = {
#define DQ_T_ENTRY(name, value, text) {name, text},
        DQ_STATUS_LIST(DQ_T_ENTRY)
#undef DQ_T_ENTRY
    };
    static const int unknown[] = {1, 2, 100, -19, -20, -50, -98, -99, -100, -1000, INT_MAX, INT_MIN};
    size_t n = sizeof list / sizeof list[0], i, j;
    CHECK(n == 19); /* codes are appended, never renumbered: update with the list */
    for (i = 0; i < n; i++) {
        const char *s = dq_strerror(list[i].code);
        CHECKF(s != NULL && s[0] != '\0', "code %d has no text", (int)list[i].code);
        if (!s) continue;
        CHECKF(strcmp(s, list[i].text) == 0, "code %d: '%s'", (int)list[i].code, s);
        CHECK((int)list[i].code == -(int)i); /* pinned values 0, -1, ..., -18 */
        for (j = 0; j < i; j++) {
            const char *t = dq_strerror(list[j].code);
            CHECKF(t == NULL || strcmp(s, t) != 0, "codes %d and %d share '%s'", (int)list[i].code,
                   (int)list[j].code, s);
        }
    }
    for (i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *s = dq_strerror((dq_status)unknown[i]);
        CHECKF(s != NULL && s[0] != '\0', "unknown code %d", unknown[i]);
        if (!s) continue;
        for (j = 0; j < n; j++) CHECKF(strcmp(s, list[j].text) != 0, "unknown code %d reads as '%s'", unknown[i], s);
    }
}

int main(void) {
    size_t i;
    RUN(test_strerror);
    RUN(test_documented_statuses);
    RUN(test_null);
    RUN(test_empty);
    RUN(test_bits);
    RUN(test_bucket);
    RUN(test_enums);
    RUN(test_nonfinite);
    RUN(test_feedback_overflow);
    RUN(test_norm_overflow);
    RUN(test_overflow_keeps_residual);
    RUN(test_max_scale_finite);
    RUN(test_dst_too_small);
    RUN(test_too_large);
    make_std_msgs();
    RUN(test_valid_roundtrip);
    RUN(test_truncated);
    RUN(test_magic_version_size);
    RUN(test_header_bitflips);
    RUN(test_header_fields);
    RUN(test_bad_scales);
    RUN(test_padding);
    RUN(test_output_sizes);
    RUN(test_block_params);
    RUN(test_random_bytes);
    for (i = 0; i < N_STD; i++) free_msg(&std_msgs[i]);
    return dq_t_finish();
}
