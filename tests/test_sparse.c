/* Sparsifier schemes (doc/FORMAT.md "Sparse messages"): top-k against a
 * brute-force sort (ties to the lower index, +0 = -0), the contraction bound, random-k indices
 * against an independent implementation of the spec, its unbiasedness and variance by Monte
 * Carlo, threshold sets and edge thresholds, fused error feedback (residual identity, message
 * equality, least squares with and without memory), exact sizes, every truncation and
 * single-byte corruption of valid messages, malformed fields, parameter errors, and the SIMD
 * scan kernel against its scalar twin. */
#include "../dqsgd.h"
#include "harness.h"
#include "internals.h"

#include <float.h>

static uint32_t keyof(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u & 0x7FFFFFFFu;
}
static uint32_t fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static float bitsf(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint64_t ld64(const uint8_t *p) {
    uint64_t v = 0;
    int i;
    for (i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
static uint32_t ld32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static void st64(uint8_t *p, uint64_t v) {
    int i;
    for (i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void st32(uint8_t *p, uint32_t v) {
    int i;
    for (i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- brute-force top-k: sort by key descending, index ascending */
static const float *g_ref_x;
static int cmp_rank(const void *a, const void *b) {
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b, ki = keyof(g_ref_x[i]), kj = keyof(g_ref_x[j]);
    if (ki != kj) return ki > kj ? -1 : 1;
    return i < j ? -1 : i > j;
}
static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}
static void ref_topk(const float *x, size_t n, size_t k, uint32_t *out) {
    uint32_t *all = (uint32_t *)xmalloc(n * sizeof *all);
    size_t i;
    for (i = 0; i < n; i++) all[i] = (uint32_t)i;
    g_ref_x = x;
    qsort(all, n, sizeof *all, cmp_rank);
    memcpy(out, all, k * sizeof *out);
    qsort(out, k, sizeof *out, cmp_u32);
    free(all);
}

/* ---- data generators */
enum { D_GAUSS, D_INT, D_ZEROS, D_CONST, D_WIDE, D_ASC, D_DESC, D_FEW, D_NKINDS };
static void gen(dq_t_rng *r, int kind, float *x, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        uint64_t u = dq_t_next(r);
        switch (kind) {
            case D_GAUSS: x[i] = (float)dq_t_gauss(r); break;
            case D_INT: x[i] = (float)((int)(u % 17u) - 8); if (x[i] == 0.0f && (u >> 40) & 1u) x[i] = -0.0f; break;
            case D_ZEROS: x[i] = (u & 1u) ? -0.0f : 0.0f; break;
            case D_CONST: x[i] = (u & 1u) ? -1.5f : 1.5f; break;
            case D_WIDE: { /* subnormals to FLT_MAX, both signs */
                static const float v[8] = {1.401298464e-45f, 1e-40f, 1.17549435e-38f, 1e-20f, 1.0f, 3e10f, 1e30f, FLT_MAX};
                x[i] = v[u % 8u] * ((u >> 32) & 1u ? -1.0f : 1.0f);
                if ((u >> 33) % 5u == 0) x[i] = (float)dq_t_gauss(r);
                break;
            }
            case D_ASC: x[i] = (float)i * 0.25f; break;
            case D_DESC: x[i] = -(float)(n - i); break;
            default: x[i] = (float)(u % 3u); break; /* 0, 1, 2 */
        }
    }
}

/* ---- top-k selection */
static int check_topk(const float *x, size_t n, size_t k) {
    uint32_t *a = (uint32_t *)xmalloc(k * sizeof *a), *b = (uint32_t *)xmalloc(k * sizeof *b);
    int ok;
    dq_status st = dq_topk_select(x, n, k, a);
    ref_topk(x, n, k, b);
    ok = st == DQ_OK && memcmp(a, b, k * sizeof *a) == 0;
    free(a);
    free(b);
    return ok;
}

static void test_topk_reference(void) {
    static const size_t ns[] = {1, 2, 3, 63, 64, 65, 130, 1000, 4099, 16384, 16385, 40000};
    dq_t_rng r = {11};
    size_t a, kind;
    for (a = 0; a < sizeof ns / sizeof ns[0]; a++) {
        size_t n = ns[a];
        float *x = (float *)xmalloc(n * sizeof *x);
        for (kind = 0; kind < D_NKINDS; kind++) {
            size_t ks[6], c;
            ks[0] = 1;
            ks[1] = n;
            ks[2] = n > 1 ? n - 1 : 1;
            ks[3] = n / 2 ? n / 2 : 1;
            ks[4] = n / 1000 ? n / 1000 : 1;
            ks[5] = 1 + (size_t)(dq_t_next(&r) % n);
            gen(&r, (int)kind, x, n);
            for (c = 0; c < 6; c++)
                CHECKF(check_topk(x, n, ks[c]), "n %lu kind %lu k %lu", (unsigned long)n, (unsigned long)kind,
                       (unsigned long)ks[c]);
        }
        free(x);
    }
}

/* Inputs built against the sample: the elements at the sampled positions (every n/2048-th,
 * centred) hold the largest or the smallest values, so the bracket from the sample misses the
 * k-th largest and the selection must fall back; and > 2048 equal keys at the boundary, so it
 * must refine to one key value. */
static void test_topk_adversarial(void) {
    const size_t n = 50000, S = 2048;
    float *x = (float *)xmalloc(n * sizeof *x);
    dq_t_rng r = {12};
    size_t t, i, v;
    for (v = 0; v < 4; v++) {
        for (i = 0; i < n; i++) x[i] = (float)dq_t_unif(&r);
        for (t = 0; t < S; t++) {
            size_t p = (size_t)(((uint64_t)(2 * t + 1) * n) / (2 * S));
            x[p] = v == 0 ? 100.0f + (float)t : v == 1 ? 0.0f : v == 2 ? 1e-3f * (float)t : 5.0f;
        }
        CHECKF(check_topk(x, n, 10), "variant %lu", (unsigned long)v);
        CHECKF(check_topk(x, n, 3000), "variant %lu", (unsigned long)v);
        CHECKF(check_topk(x, n, 30000), "variant %lu", (unsigned long)v);
    }
    for (i = 0; i < n; i++) x[i] = (float)(i % 7u == 0) * 2.0f + 1.0f; /* 7143 threes, rest ones */
    CHECK(check_topk(x, n, 5000));
    CHECK(check_topk(x, n, 7143));
    CHECK(check_topk(x, n, 7144));
    for (i = 0; i < n; i++) x[i] = 1.0f + (float)(i % 4096u) * 1.1920929e-7f; /* 4096 adjacent keys */
    CHECK(check_topk(x, n, 25));
    CHECK(check_topk(x, n, 20000));
    free(x);
}

/* ||x - top_k(x)||^2 <= (1 - k/n) ||x||^2, exactly: integer-valued data keeps every sum exact
 * in double, so n * dropped <= (n - k) * total is compared without rounding. */
static void test_topk_contraction(void) {
    dq_t_rng r = {13};
    int it;
    for (it = 0; it < 300; it++) {
        size_t n = 1 + (size_t)(dq_t_next(&r) % 3000u), k = 1 + (size_t)(dq_t_next(&r) % n), i;
        float *x = (float *)xmalloc(n * sizeof *x);
        uint32_t *idx = (uint32_t *)xmalloc(k * sizeof *idx);
        double total = 0.0, kept = 0.0;
        int spread = (int)(dq_t_next(&r) % 3u);
        for (i = 0; i < n; i++) {
            long v = (long)(dq_t_next(&r) % (spread == 0 ? 3u : spread == 1 ? 201u : 65537u));
            x[i] = (float)(v - (spread == 0 ? 1 : spread == 1 ? 100 : 32768));
            total += (double)x[i] * (double)x[i];
        }
        CHECK(dq_topk_select(x, n, k, idx) == DQ_OK);
        for (i = 0; i < k; i++) kept += (double)x[idx[i]] * (double)x[idx[i]];
        CHECKF((double)n * (total - kept) <= (double)(n - k) * total, "n %lu k %lu", (unsigned long)n, (unsigned long)k);
        free(x);
        free(idx);
    }
}

static void test_topk_errors(void) {
    float x[100];
    uint32_t idx[100];
    size_t i, p;
    for (i = 0; i < 100; i++) x[i] = (float)i;
    CHECK(dq_topk_select(NULL, 100, 1, idx) == DQ_ERR_NULL);
    CHECK(dq_topk_select(x, 100, 1, NULL) == DQ_ERR_NULL);
    CHECK(dq_topk_select(x, 0, 0, idx) == DQ_ERR_EMPTY);
    CHECK(dq_topk_select(x, 100, 0, idx) == DQ_ERR_PARAM);
    CHECK(dq_topk_select(x, 100, 101, idx) == DQ_ERR_PARAM);
#if SIZE_MAX > 0xFFFFFFFFu
    CHECK(dq_topk_select(x, (size_t)((uint64_t)1 << 32) + 1u, 1, idx) == DQ_ERR_TOO_LARGE); /* x is not read */
#endif
    for (p = 0; p < 100; p += 33) {
        float bad[2];
        int b;
        bad[0] = (float)NAN;
        bad[1] = (float)INFINITY;
        for (b = 0; b < 4; b++) {
            x[p] = b < 2 ? bad[b] : -bad[b - 2];
            memset(idx, 0xAB, sizeof idx);
            CHECK(dq_topk_select(x, 100, 5, idx) == DQ_ERR_NONFINITE);
            CHECK(idx[0] == 0xABABABABu && idx[99] == 0xABABABABu);
            CHECK(dq_topk_select(x, 100, 100, idx) == DQ_ERR_NONFINITE);
        }
        x[p] = (float)p;
    }
}

/* ---- messages */
static dq_params sparse_params(dq_scheme scheme, size_t k, unsigned coder, unsigned checksum) {
    dq_params p;
    memset(&p, 0, sizeof p);
    p.scheme = scheme;
    p.k = k;
    p.index_coder = coder;
    p.checksum = checksum;
    p.seed = 0x5EEDu;
    p.step = 3;
    p.stream = 1;
    return p;
}
/* encode into a dq_encode_capacity() buffer, return an exact-size copy (NULL on error, *st) */
static uint8_t *encode_msg(const dq_params *p, const float *x, size_t n, float *e, size_t *len, dq_status *st) {
    size_t cap = 0;
    uint8_t *buf, *msg;
    *st = dq_encode_capacity(p, n, &cap);
    if (*st != DQ_OK) return NULL;
    buf = (uint8_t *)xmalloc(cap);
    *st = dq_encode(p, x, n, e, buf, cap, len);
    if (*st != DQ_OK) {
        free(buf);
        return NULL;
    }
    msg = bdup(buf, *len);
    free(buf);
    return msg;
}

/* The stream bound of FORMAT 18.7 for one coder, written again here from the spec; RICE with
 * the parameter the encoder picks: the least, over the parameters 0 .. m(n), of
 * 1 + ceil((k (1 + r) + ceil((n - k) / 2^r)) / 8) (20.7). */
static uint64_t spec_ibound(uint64_t k, uint64_t n, unsigned coder) {
    uint64_t g = k, v = (k + 3) / 4 + k, b = (n + 7) / 8, rb = 1, best;
    unsigned j, m = 0;
    for (j = 1; j <= 32; j++) g += 2 * ((n >> j) < k ? (n >> j) : k);
    for (j = 1; j <= 3; j++) v += (n >> (8 * j)) < k ? (n >> (8 * j)) : k;
    g = (g + 7) / 8;
    while (m < 31 && ((n - 1) >> m)) m++;
    for (j = 0; k && j <= m; j++) {
        uint64_t bits = k * (1 + j) + (n - k + ((uint64_t)1 << j) - 1) / ((uint64_t)1 << j), t = 1 + (bits + 7) / 8;
        if (j == 0 || t < rb) rb = t;
    }
    if (coder == 1) return 10 + g;
    if (coder == 2) return 10 + v;
    if (coder == 3) return 10 + b;
    if (coder == 4) return 10 + rb;
    best = g < v ? g : v;
    best = best < b ? best : b;
    return 10 + (best < rb ? best : rb);
}

/* Parse a TOPK/THRESHOLD message by the spec's offsets and check it against the reference set
 * ref[0..k) of x + e. */
static void check_layout(const uint8_t *m, size_t len, const float *c, size_t n, const uint32_t *ref, size_t k,
                         unsigned coder, unsigned cs) {
    uint64_t slen = ld64(m + 56), n2 = 0;
    size_t k2 = 0, i;
    dq_index_coder c2 = DQ_INDEX_AUTO;
    uint32_t *got = (uint32_t *)xmalloc((k + 1) * sizeof *got);
    CHECK(ld64(m + 48) == k);
    CHECK(m[7] == 32 && m[8] == 0 && m[9] == 0 && ld32(m + 12) == 0 && ld64(m + 16) == n);
    CHECK(len == 64 + slen + 4 * k + 4 * cs);
    CHECK(dq_index_header(m + 64, (size_t)slen, &n2, &k2, &c2) == DQ_OK && n2 == n && k2 == k);
    CHECK(coder == 0 || (unsigned)c2 == coder);
    CHECK(slen <= spec_ibound(k, n, coder));
    CHECK(dq_index_decode(m + 64, (size_t)slen, got, k, &k2) == DQ_OK && k2 == k);
    CHECK(k == 0 || memcmp(got, ref, k * sizeof *got) == 0);
    for (i = 0; i < k; i++) CHECK(ld32(m + 64 + slen + 4 * i) == fbits(c[ref[i]]));
    if (cs) CHECK(ld32(m + len - 4) == dqt_crc32c(m + 48, len - 52));
    free(got);
}

/* Decode and decode-add against the reference set: out = c on the set, zero elsewhere; acc
 * gains w * c on the set and is untouched (bit for bit) elsewhere. */
static void check_decode(const uint8_t *m, size_t len, const float *vals_at, size_t n, const uint32_t *ref, size_t k) {
    float *out = (float *)xmalloc(n * sizeof *out), *acc = (float *)xmalloc(n * sizeof *acc);
    float *want = (float *)xmalloc(n * sizeof *want);
    size_t i, j = 0;
    dq_header h;
    for (i = 0; i < n; i++) {
        out[i] = 7.0f;
        acc[i] = (float)i * 0.5f - 3.0f;
        want[i] = 0.0f;
    }
    for (j = 0; j < k; j++) want[ref[j]] = vals_at[j];
    CHECK(dq_header_read(m, len, &h) == DQ_OK && h.msg_size == len && h.nnz == k && h.count == n);
    CHECK(dq_verify(m, len) == DQ_OK);
    CHECK(dq_decode(m, len, out, n) == DQ_OK);
    CHECK(memcmp(out, want, n * sizeof *out) == 0);
    /* a weight whose products round, and the reference's product in its own statement: built
     * with clang's default contraction on an FMA target, a fused library would differ here */
    CHECK(dq_decode_add(m, len, 0.37f, acc, n) == DQ_OK);
    for (i = 0, j = 0; i < n; i++) {
        float base = (float)i * 0.5f - 3.0f, w = base;
        if (j < k && ref[j] == i) {
            float wv = 0.37f * vals_at[j++];
            w = base + wv;
        }
        if (fbits(acc[i]) != fbits(w)) {
            CHECKF(0, "acc[%lu]", (unsigned long)i);
            break;
        }
    }
    free(out);
    free(acc);
    free(want);
}

static void test_topk_messages(void) {
    static const size_t ns[] = {1, 7, 64, 1000, 20000};
    dq_t_rng r = {14};
    size_t a;
    for (a = 0; a < sizeof ns / sizeof ns[0]; a++) {
        size_t n = ns[a], kk;
        float *x = (float *)xmalloc(n * sizeof *x);
        gen(&r, a % 2 ? D_INT : D_GAUSS, x, n);
        for (kk = 0; kk < 3; kk++) {
            size_t k = kk == 0 ? 1 : kk == 1 ? n : 1 + n / 37, len = 0, bound = 0, i;
            unsigned coder, cs;
            uint32_t *ref = (uint32_t *)xmalloc(k * sizeof *ref);
            float *v = (float *)xmalloc(k * sizeof *v);
            ref_topk(x, n, k, ref);
            for (i = 0; i < k; i++) v[i] = x[ref[i]];
            for (coder = 0; coder <= 4; coder++)
                for (cs = 0; cs <= 1; cs++) {
                    dq_params p = sparse_params(DQ_SCHEME_TOPK, k, coder, cs);
                    dq_status st;
                    uint8_t *m = encode_msg(&p, x, n, NULL, &len, &st);
                    CHECKF(st == DQ_OK, "n %lu k %lu coder %u: %s", (unsigned long)n, (unsigned long)k, coder,
                           dq_strerror(st));
                    if (!m) continue;
                    CHECK(dq_encode_capacity(&p, n, &bound) == DQ_OK);
                    CHECK(bound == 64 + spec_ibound(k, n, coder) + 4 * k + 4 * cs + 4);
                    CHECK(m[6] == DQ_SCHEME_TOPK && (ld32(m + 8) >> 16) == (cs ? 2u : 0u));
                    check_layout(m, len, x, n, ref, k, coder, cs);
                    check_decode(m, len, v, n, ref, k);
                    free(m);
                }
            free(ref);
            free(v);
        }
        free(x);
    }
}

/* The worked examples of the spec, byte for byte: top-k with n = 8, k = 2, VARINT indices (the
 * tie at |2| goes to index 3); rescaled random-k with n = 10, k = 3. */
static void test_known_answer(void) {
    static const float x[8] = {0.5f, -3.0f, 0.0f, 2.0f, -0.0f, 1.0f, -2.0f, 0.25f};
    static const uint8_t want[] = {
        0x44, 0x51, 0x53, 0x47, 0x01, 0x30, 0x06, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* header */
        0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x89, 0x99, 0xD5, 0xA3,
        0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,                                                 /* k */
        0x0D, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,                                                 /* stream length */
        0x02, 0x07, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01,                   /* stream */
        0x00, 0x00, 0x40, 0xC0, 0x00, 0x00, 0x00, 0x40};                                                /* -3, 2 */
    dq_params p = sparse_params(DQ_SCHEME_TOPK, 2, DQ_INDEX_VARINT, 0);
    uint8_t buf[256];
    size_t len = 0;
    p.seed = 42;
    p.step = 7;
    p.stream = 0;
    CHECK(dq_encode(&p, x, 8, NULL, buf, sizeof buf, &len) == DQ_OK);
    CHECK(len == sizeof want && memcmp(buf, want, sizeof want) == 0);
    { /* random-k, rescaled: n = 10, k = 3, strata [0,3) [3,6) [6,10), indices 0, 4, 6 */
        static const float y[10] = {0.5f, -3.0f, 0.0f, 2.0f, -0.0f, 1.0f, -2.0f, 0.25f, 4.0f, -1.0f};
        static const uint8_t want_r[] = {
            0x44, 0x51, 0x53, 0x47, 0x01, 0x30, 0x07, 0x20, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x0A, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x85, 0x00, 0xA3, 0x5F,
            0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,                                          /* k */
            0x00, 0x00, 0xC0, 0x3F, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0xC1};                 /* 1.5, -0, -8 */
        dq_params q = sparse_params(DQ_SCHEME_RANDK, 3, 0, 0);
        q.seed = 42;
        q.step = 7;
        q.stream = 0;
        q.unbiased = 1;
        CHECK(dq_encode(&q, y, 10, NULL, buf, sizeof buf, &len) == DQ_OK);
        CHECK(len == sizeof want_r && memcmp(buf, want_r, sizeof want_r) == 0);
    }
}

/* ---- threshold */
static void test_threshold(void) {
    static const float taus[] = {0.0f, -0.0f, 1.0f, 0.5f, 1.401298464e-45f, FLT_MAX, 2.0f, 1e-30f};
    dq_t_rng r = {15};
    size_t n = 3000, t;
    float *x = (float *)xmalloc(n * sizeof *x);
    uint32_t *ref = (uint32_t *)xmalloc(n * sizeof *ref);
    float *v = (float *)xmalloc(n * sizeof *v);
    int kind;
    for (kind = 0; kind < 3; kind++) {
        gen(&r, kind == 0 ? D_INT : kind == 1 ? D_WIDE : D_GAUSS, x, n);
        x[5] = 1.0f; /* a value equal to a threshold: dropped (strict) */
        x[6] = -0.0f;
        for (t = 0; t < sizeof taus / sizeof taus[0]; t++) {
            dq_params p = sparse_params(DQ_SCHEME_THRESHOLD, 0, (unsigned)(t % 5), (unsigned)(t % 2));
            size_t k = 0, i, len = 0;
            dq_status st;
            uint8_t *m;
            p.threshold = taus[t];
            for (i = 0; i < n; i++)
                if (fabsf(x[i]) > taus[t]) {
                    v[k] = x[i];
                    ref[k++] = (uint32_t)i;
                }
            m = encode_msg(&p, x, n, NULL, &len, &st);
            CHECKF(st == DQ_OK, "tau %g: %s", (double)taus[t], dq_strerror(st));
            if (!m) continue;
            CHECK(m[6] == DQ_SCHEME_THRESHOLD);
            check_layout(m, len, x, n, ref, k, (unsigned)(t % 5), (unsigned)(t % 2));
            check_decode(m, len, v, n, ref, k);
            if (taus[t] == FLT_MAX) CHECK(k == 0 && ld64(m + 48) == 0);
            free(m);
        }
    }
    { /* the size: the worst case (k = n) and exactly what the actual k needs */
        dq_params p = sparse_params(DQ_SCHEME_THRESHOLD, 0, 0, 1);
        size_t bound = 0, k = 0, i, room, len = 0;
        uint8_t *buf;
        float *e = (float *)xmalloc(n * sizeof *e), *e0 = (float *)xmalloc(n * sizeof *e0);
        p.threshold = 1.5f;
        gen(&r, D_GAUSS, x, n);
        for (i = 0; i < n; i++) {
            e[i] = e0[i] = (float)dq_t_gauss(&r) * 0.25f;
            k += fabsf(x[i] + e[i]) > 1.5f;
        }
        CHECK(dq_encode_capacity(&p, n, &bound) == DQ_OK && bound == 64 + spec_ibound(n, n, 0) + 4 * n + 4 + 4);
        room = (size_t)(64 + spec_ibound(k, n, 0) + 4 * k + 4 + 4);
        buf = (uint8_t *)xmalloc(room);
        CHECK(dq_encode(&p, x, n, e, buf, room - 1, &len) == DQ_ERR_DST_TOO_SMALL);
        CHECK(memcmp(e, e0, n * sizeof *e) == 0);
        CHECK(dq_encode(&p, x, n, e, buf, room, &len) == DQ_OK && ld64(buf + 48) == k);
        free(buf);
        free(e);
        free(e0);
    }
    { /* thresholds that are not finite and >= 0 */
        static const float bad[] = {-1.0f, -1e-30f, (float)NAN, (float)INFINITY, -(float)INFINITY};
        dq_params p = sparse_params(DQ_SCHEME_THRESHOLD, 0, 0, 0);
        size_t size = 0, len = 0;
        uint8_t buf[64];
        for (t = 0; t < sizeof bad / sizeof bad[0]; t++) {
            p.threshold = bad[t];
            CHECK(dq_encode_capacity(&p, n, &size) == DQ_ERR_PARAM);
            CHECK(dq_encode(&p, x, n, NULL, buf, sizeof buf, &len) == DQ_ERR_PARAM);
        }
    }
    free(x);
    free(ref);
    free(v);
}

/* ---- random-k: the indices written again from the spec (FORMAT 20.4: stratum j's index is its
 * start plus the 32-bit draw of counter j, scaled to the stratum by a multiply-shift), with the
 * library's generator (tests/internals.h, pinned by FORMAT 13.1's check values in test_quant) */
static uint32_t spec_h32(dqt_key k, uint32_t j) { return dqt_draw32(k.k0, dqt_key_hi(k, 0), j); }
/* stratum j of n elements in k strata: [a, b) with a = floor(j n / k); (j + 1) n < 2^64 below k */
static void spec_stratum(uint64_t n, uint64_t k, uint64_t j, uint64_t *a, uint64_t *b) {
    *a = j * n / k;
    *b = j + 1 == k ? n : (j + 1) * n / k;
}
static void spec_randk(uint64_t n, uint64_t k, uint64_t seed, uint64_t step, uint32_t stream, uint64_t *idx,
                       uint64_t *len) {
    uint64_t j, a, b;
    dqt_key key = dqt_key_make(seed, step, stream);
    for (j = 0; j < k; j++) {
        spec_stratum(n, k, j, &a, &b);
        idx[j] = a + (((uint64_t)spec_h32(key, (uint32_t)j) * (b - a)) >> 32);
        len[j] = b - a;
    }
}

static void test_randk_indices(void) {
    static const size_t cases[][2] = {{1, 1}, {10, 3}, {1000, 7}, {1003, 10}, {65536, 1}, {500, 500}, {100, 99},
                                      {4097, 4096}, {1 << 20, 1000}};
    size_t c;
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t n = cases[c][0], k = cases[c][1], i, j, len = 0;
        float *x = (float *)xmalloc(n * sizeof *x), *out = (float *)xmalloc(n * sizeof *out);
        uint64_t *idx = (uint64_t *)xmalloc(k * sizeof *idx), *ml = (uint64_t *)xmalloc(k * sizeof *ml);
        unsigned resc;
        for (i = 0; i < n; i++) x[i] = (float)(i + 1) * (i % 2 ? -1.0f : 1.0f);
        for (resc = 0; resc <= 1; resc++) {
            dq_params p = sparse_params(DQ_SCHEME_RANDK, k, 0, resc);
            dq_status st;
            uint8_t *m;
            size_t size = 0;
            p.unbiased = resc;
            p.seed = 1000u + c;
            p.step = 77u * c;
            p.stream = (uint32_t)c;
            spec_randk(n, k, p.seed, p.step, p.stream, idx, ml);
            m = encode_msg(&p, x, n, NULL, &len, &st);
            CHECKF(st == DQ_OK, "%s", dq_strerror(st));
            if (!m) continue;
            CHECK(dq_encode_capacity(&p, n, &size) == DQ_OK && size == 56 + 4 * k + 4 * resc && len == size);
            CHECK(m[6] == DQ_SCHEME_RANDK && ld64(m + 48) == k && (ld32(m + 8) >> 16) == (resc ? 6u : 0u));
            for (j = 0; j < k; j++) {
                float want = x[idx[j]];
                if (resc) want = want * (float)ml[j];
                if (ld32(m + 56 + 4 * j) != fbits(want)) {
                    CHECKF(0, "case %lu stratum %lu", (unsigned long)c, (unsigned long)j);
                    break;
                }
            }
            CHECK(dq_decode(m, len, out, n) == DQ_OK);
            for (i = 0, j = 0; i < n; i++) { /* nonzero exactly at the spec's indices */
                int at = j < k && idx[j] == i;
                if ((out[i] != 0.0f) != at) {
                    CHECKF(0, "case %lu element %lu", (unsigned long)c, (unsigned long)i);
                    break;
                }
                j += (size_t)at;
            }
            free(m);
        }
        free(x);
        free(out);
        free(idx);
        free(ml);
    }
    { /* the stratum walk at the largest sizes, against floor(j n / k) */
        static const uint64_t big[][2] = {{(uint64_t)1 << 32, ((uint64_t)1 << 32) - 5}, {(uint64_t)1 << 32, 3},
                                          {((uint64_t)1 << 32) - 1, 65537}, {(uint64_t)1 << 32, (uint64_t)1 << 32}};
        size_t b;
        for (b = 0; b < 4; b++) {
            uint64_t n = big[b][0], k = big[b][1], j, lim = k < 300000 ? k : 300000, a, e;
            dqt_key key = dqt_key_make(9, 8, 7);
            dqt_sp_strata s;
            int bad = 0;
            dqt_sp_strata_init(&s, n, k, 9, 8, 7);
            for (j = 0; j < lim && !bad; j++) {
                size_t i = dqt_sp_strata_next(&s, (uint32_t)j);
                spec_stratum(n, k, j, &a, &e);
                bad = s.m != e - a || (uint64_t)i != a + (((uint64_t)spec_h32(key, (uint32_t)j) * (e - a)) >> 32);
            }
            CHECKF(!bad, "n %llu k %llu stratum %llu", (unsigned long long)n, (unsigned long long)k,
                   (unsigned long long)(j - 1));
        }
    }
}

/* Rescaled random-k is unbiased: over T steps the mean of each decoded coordinate is x_i
 * within 5.5 standard errors (the variance of one draw is (m - 1) x_i^2), and the number of
 * times each coordinate is picked is T / m within 5.5 binomial standard deviations. */
static void test_randk_unbiased(void) {
    const size_t n = 1003, k = 10;
    const unsigned T = 20000;
    float *x = (float *)xmalloc(n * sizeof *x), *out = (float *)xmalloc(n * sizeof *out);
    double *sum = (double *)xmalloc(n * sizeof *sum), *mlen = (double *)xmalloc(n * sizeof *mlen), zmax = 0.0, cmax = 0.0;
    unsigned *cnt = (unsigned *)xmalloc(n * sizeof *cnt), t;
    dq_t_rng r = {16};
    size_t i, j;
    uint8_t buf[64 + 4 * 10];
    for (j = 0; j < k; j++) {
        uint64_t a, b, q;
        spec_stratum(n, k, j, &a, &b);
        for (q = a; q < b; q++) mlen[q] = (double)(b - a);
    }
    for (i = 0; i < n; i++) {
        x[i] = (float)dq_t_gauss(&r) + 0.1f;
        sum[i] = 0.0;
        cnt[i] = 0;
    }
    for (t = 0; t < T; t++) {
        dq_params p = sparse_params(DQ_SCHEME_RANDK, k, 0, 0);
        size_t len = 0;
        p.unbiased = 1;
        p.step = t;
        if (dq_encode(&p, x, n, NULL, buf, sizeof buf, &len) != DQ_OK || dq_decode(buf, len, out, n) != DQ_OK) {
            CHECK(0);
            break;
        }
        for (i = 0; i < n; i++) {
            sum[i] += (double)out[i];
            cnt[i] += out[i] != 0.0f;
        }
    }
    for (i = 0; i < n; i++) {
        double m = mlen[i], mean, se, z, c;
        mean = sum[i] / (double)T;
        se = sqrt((m - 1.0) * (double)x[i] * (double)x[i] / (double)T);
        z = fabs(mean - (double)x[i]) / se;
        c = fabs((double)cnt[i] - (double)T / m) / sqrt((double)T / m * (1.0 - 1.0 / m));
        if (z > zmax) zmax = z;
        if (c > cmax) cmax = c;
    }
    if (dq_t_verbose()) printf("  randk unbiased: max |z| mean %.2f, counts %.2f over %lu coordinates\n", zmax, cmax, (unsigned long)n);
    CHECKF(zmax < 5.5, "max z %.2f", zmax);
    CHECKF(cmax < 5.5, "max count z %.2f", cmax);
    free(x);
    free(out);
    free(sum);
    free(mlen);
    free(cnt);
}

/* Unscaled: E||x - S(x)||^2 = sum_j (1 - 1/m_j) sum_{i in j} x_i^2, which is (1 - k/n)||x||^2
 * when k divides n; rescaled: E||S(x) - x||^2 = sum_j (m_j - 1) sum_{i in j} x_i^2. Monte Carlo
 * means within 5 standard errors (sample standard deviation / sqrt(T)). */
static void test_randk_variance(void) {
    static const size_t cases[][2] = {{1000, 10}, {1003, 10}, {257, 64}};
    dq_t_rng r = {17};
    size_t c;
    for (c = 0; c < 3; c++) {
        size_t n = cases[c][0], k = cases[c][1], i, j;
        const unsigned T = 4000;
        float *x = (float *)xmalloc(n * sizeof *x), *out = (float *)xmalloc(n * sizeof *out);
        uint8_t *buf = (uint8_t *)xmalloc(64 + 4 * k);
        double want[2] = {0.0, 0.0}, norm2 = 0.0;
        unsigned resc, t;
        for (i = 0; i < n; i++) {
            x[i] = (float)dq_t_gauss(&r);
            norm2 += (double)x[i] * (double)x[i];
        }
        for (j = 0; j < k; j++) {
            size_t a = j * n / k, b = (j + 1) * n / k;
            double s = 0.0, m = (double)(b - a);
            for (i = a; i < b; i++) s += (double)x[i] * (double)x[i];
            want[0] += (1.0 - 1.0 / m) * s;
            want[1] += (m - 1.0) * s;
        }
        if (n % k == 0) CHECK(fabs(want[0] - (1.0 - (double)k / (double)n) * norm2) <= 1e-9 * norm2);
        for (resc = 0; resc <= 1; resc++) {
            double s1 = 0.0, s2 = 0.0, mean, se;
            for (t = 0; t < T; t++) {
                dq_params p = sparse_params(DQ_SCHEME_RANDK, k, 0, 0);
                size_t len = 0;
                double d = 0.0;
                p.unbiased = resc;
                p.seed = 99;
                p.step = t;
                if (dq_encode(&p, x, n, NULL, buf, 64 + 4 * k, &len) != DQ_OK || dq_decode(buf, len, out, n) != DQ_OK) {
                    CHECK(0);
                    break;
                }
                for (i = 0; i < n; i++) d += ((double)out[i] - (double)x[i]) * ((double)out[i] - (double)x[i]);
                s1 += d;
                s2 += d * d;
            }
            mean = s1 / T;
            se = sqrt((s2 / T - mean * mean) / T);
            if (dq_t_verbose())
                printf("  randk n %lu k %lu %s: E||x-S(x)||^2 %.4f, formula %.4f, se %.4f\n", (unsigned long)n,
                       (unsigned long)k, resc ? "rescaled" : "unscaled", mean, want[resc], se);
            CHECKF(fabs(mean - want[resc]) < 5.0 * se, "n %lu k %lu resc %u: %.4f vs %.4f (se %.4f)", (unsigned long)n,
                   (unsigned long)k, resc, mean, want[resc], se);
        }
        free(x);
        free(out);
        free(buf);
    }
}

/* ---- fused error feedback: with residual e the message equals the one of c = x + e without
 * it, and afterwards e = c - decoded(c) bit for bit (0 where sent unscaled). */
static void test_ef_identity(void) {
    dq_t_rng r = {18};
    const size_t n = 5000;
    float *x = (float *)xmalloc(n * sizeof *x), *e = (float *)xmalloc(n * sizeof *e);
    float *c = (float *)xmalloc(n * sizeof *c), *dec = (float *)xmalloc(n * sizeof *dec);
    int v;
    for (v = 0; v < 5; v++) {
        dq_scheme sc = v < 2 ? DQ_SCHEME_TOPK : v < 3 ? DQ_SCHEME_THRESHOLD : DQ_SCHEME_RANDK;
        dq_params p = sparse_params(sc, sc == DQ_SCHEME_THRESHOLD ? 0 : (v == 1 ? n : 50), 0, 1);
        size_t i, la = 0, lb = 0;
        dq_status sa, sb;
        uint8_t *ma, *mb;
        p.unbiased = v == 4;
        p.threshold = sc == DQ_SCHEME_THRESHOLD ? 1.0f : 0.0f;
        for (i = 0; i < n; i++) {
            x[i] = (float)dq_t_gauss(&r);
            e[i] = (float)dq_t_gauss(&r) * 0.3f;
            c[i] = x[i] + e[i];
        }
        ma = encode_msg(&p, x, n, e, &la, &sa);
        mb = encode_msg(&p, c, n, NULL, &lb, &sb);
        CHECK(sa == DQ_OK && sb == DQ_OK);
        if (ma && mb) {
            CHECK(la == lb && memcmp(ma, mb, la) == 0);
            CHECK(dq_decode(ma, la, dec, n) == DQ_OK);
            for (i = 0; i < n; i++)
                if (fbits(e[i]) != fbits(c[i] - dec[i])) {
                    CHECKF(0, "variant %d element %lu", v, (unsigned long)i);
                    break;
                }
        }
        free(ma);
        free(mb);
    }
    free(x);
    free(e);
    free(c);
    free(dec);
}

/* Least squares by gradient descent, the update sent as a top-k message (doc/MATHS.md 7:
 * m += lr g; send top_k(m); m -= sent, which is dq_encode with the residual as m).
 * 1. One worker, consistent system A w = b (d = 100, 300 rows), k = 5, lr = 0.1, 1000 steps:
 *    with memory the relative residual ||Aw - b|| / ||b|| reaches the float32 floor of full
 *    gradient descent (< 1e-5; ~1e-7 measured); without memory the update is greedy coordinate
 *    descent on 5 of 100 coordinates, which on this system still converges but ~20x slower, so
 *    after the same 1000 steps it is far away (> 1e-4).
 * 2. Four workers, each with 100 rows of an inconsistent system, the server adding their
 *    decoded messages: without memory the iteration stalls at a biased point (distance to the
 *    least-squares solution > 0.5 after 2000 steps), with memory it reaches the solution up to
 *    an O(lr) neighbourhood (< 0.1 at lr = 0.01). */
#define LS_D 100
static void ls_grad(const float *A, const float *b, size_t r0, size_t r1, size_t rows, const float *w, float *g) {
    size_t i, j;
    for (j = 0; j < LS_D; j++) g[j] = 0.0f;
    for (i = r0; i < r1; i++) {
        double s = 0.0;
        for (j = 0; j < LS_D; j++) s += (double)A[i * LS_D + j] * (double)w[j];
        s -= (double)b[i];
        for (j = 0; j < LS_D; j++) g[j] += (float)(s * (double)A[i * LS_D + j] / (double)rows);
    }
}
static double ls_rel(const float *A, const float *b, size_t rows, const float *w) {
    double num = 0.0, den = 0.0;
    size_t i, j;
    for (i = 0; i < rows; i++) {
        double s = 0.0;
        for (j = 0; j < LS_D; j++) s += (double)A[i * LS_D + j] * (double)w[j];
        num += (s - (double)b[i]) * (s - (double)b[i]);
        den += (double)b[i] * (double)b[i];
    }
    return sqrt(num / den);
}
/* T steps over W workers (rows split evenly); mem: use the residual. Returns w in w. */
static void ls_run(const float *A, const float *b, size_t rows, unsigned W, unsigned T, float lr, size_t k, int mem,
                   float *w) {
    float g[LS_D], *e = (float *)xmalloc(W * LS_D * sizeof *e), upd[LS_D];
    uint8_t buf[64 + 4 * LS_D + 64];
    unsigned t, q;
    size_t j;
    dq_params p = sparse_params(DQ_SCHEME_TOPK, k, 0, 0);
    for (j = 0; j < LS_D; j++) w[j] = 0.0f;
    for (j = 0; j < W * LS_D; j++) e[j] = 0.0f;
    for (t = 0; t < T; t++) {
        for (j = 0; j < LS_D; j++) upd[j] = 0.0f;
        for (q = 0; q < W; q++) {
            size_t len = 0;
            ls_grad(A, b, q * rows / W, (q + 1) * rows / W, rows, w, g);
            for (j = 0; j < LS_D; j++) g[j] = lr * g[j];
            if (dq_encode(&p, g, LS_D, mem ? e + q * LS_D : NULL, buf, sizeof buf, &len) != DQ_OK ||
                dq_decode_add(buf, len, 1.0f, upd, LS_D) != DQ_OK) {
                CHECK(0);
                free(e);
                return;
            }
        }
        for (j = 0; j < LS_D; j++) w[j] -= upd[j];
    }
    free(e);
}
static void test_ef_least_squares(void) {
    const size_t rows = 300;
    float *A = (float *)xmalloc(400 * LS_D * sizeof *A), b[400], ws[LS_D], w[LS_D], wref[LS_D];
    dq_t_rng r = {19};
    size_t i, j;
    double with, without, dw, dwo, nref;
    for (j = 0; j < LS_D; j++) ws[j] = (float)dq_t_gauss(&r);
    for (i = 0; i < rows; i++) {
        double s = 0.0;
        for (j = 0; j < LS_D; j++) {
            A[i * LS_D + j] = (float)dq_t_gauss(&r);
            s += (double)A[i * LS_D + j] * (double)ws[j];
        }
        b[i] = (float)s;
    }
    ls_run(A, b, rows, 1, 1000, 0.1f, 5, 1, w);
    with = ls_rel(A, b, rows, w);
    ls_run(A, b, rows, 1, 1000, 0.1f, 5, 0, w);
    without = ls_rel(A, b, rows, w);
    ls_run(A, b, rows, 1, 1000, 0.1f, LS_D, 0, w); /* k = d: plain gradient descent */
    if (dq_t_verbose())
        printf("  least squares, 1 worker: rel. residual with memory %.3g, without %.3g, full %.3g\n", with, without,
               ls_rel(A, b, rows, w));
    CHECKF(with < 1e-5, "with memory %.3g", with);
    CHECKF(without > 1e-4, "without memory %.3g", without);
    /* 2: inconsistent, 4 workers; the reference solution from full gradient descent */
    for (i = 0; i < 400; i++) {
        for (j = 0; j < LS_D; j++) A[i * LS_D + j] = (float)dq_t_gauss(&r);
        b[i] = (float)dq_t_gauss(&r);
    }
    ls_run(A, b, 400, 4, 1000, 0.1f, LS_D, 0, wref); /* converged: 0.975^1000 < 1e-10 */
    for (j = 0, nref = 0.0; j < LS_D; j++) nref += (double)wref[j] * (double)wref[j];
    ls_run(A, b, 400, 4, 2000, 0.01f, 5, 1, w);
    for (j = 0, dw = 0.0; j < LS_D; j++) dw += ((double)w[j] - (double)wref[j]) * ((double)w[j] - (double)wref[j]);
    ls_run(A, b, 400, 4, 2000, 0.01f, 5, 0, w);
    for (j = 0, dwo = 0.0; j < LS_D; j++) dwo += ((double)w[j] - (double)wref[j]) * ((double)w[j] - (double)wref[j]);
    dw = sqrt(dw / nref);
    dwo = sqrt(dwo / nref);
    if (dq_t_verbose()) printf("  least squares, 4 workers: distance with memory %.3g, without %.3g\n", dw, dwo);
    CHECKF(dw < 0.1, "with memory %.3g", dw);
    CHECKF(dwo > 0.5, "without memory %.3g", dwo);
    free(A);
}

/* ---- failures leave the residual untouched */
static void test_failures(void) {
    const size_t n = 300;
    float x[300], e[300], e0[300];
    uint8_t buf[4096];
    size_t i, len = 0, v, pos;
    dq_t_rng r = {20};
    for (i = 0; i < n; i++) {
        x[i] = (float)dq_t_gauss(&r);
        e[i] = e0[i] = (float)dq_t_gauss(&r);
    }
    for (v = 0; v < 4; v++) {
        dq_scheme sc = v == 0 ? DQ_SCHEME_TOPK : v == 1 ? DQ_SCHEME_THRESHOLD : DQ_SCHEME_RANDK;
        dq_params p = sparse_params(sc, sc == DQ_SCHEME_THRESHOLD ? 0 : 10, 0, 0);
        size_t size = 0;
        p.threshold = sc == DQ_SCHEME_THRESHOLD ? 0.5f : 0.0f;
        p.unbiased = v == 3;
        for (pos = 0; pos < n; pos += 61) { /* NaN, Inf, and x + e overflowing */
            int b;
            dq_status st;
            for (b = 0; b < 3; b++) {
                float keep = x[pos], ke = e[pos];
                x[pos] = b == 0 ? (float)NAN : b == 1 ? -(float)INFINITY : FLT_MAX;
                if (b == 2) e[pos] = e0[pos] = FLT_MAX;
                CHECKF(dq_encode(&p, x, n, e, buf, sizeof buf, &len) == DQ_ERR_NONFINITE, "v %lu pos %lu b %d",
                       (unsigned long)v, (unsigned long)pos, b);
                CHECK(memcmp(e, e0, sizeof e) == 0);
                st = dq_encode(&p, x, n, NULL, buf, sizeof buf, &len);
                CHECK(b == 2 ? st == DQ_OK || (v == 3 && st == DQ_ERR_OVERFLOW) : st == DQ_ERR_NONFINITE);
                x[pos] = keep;
                e[pos] = e0[pos] = ke;
            }
        }
        CHECK(dq_encode_capacity(&p, n, &size) == DQ_OK);
        if (sc != DQ_SCHEME_THRESHOLD) { /* one byte short of the size bound */
            CHECK(dq_encode(&p, x, n, e, buf, size - 1, &len) == DQ_ERR_DST_TOO_SMALL);
            CHECK(memcmp(e, e0, sizeof e) == 0);
        }
    }
    { /* rescaled random-k whose m x overflows float32 */
        dq_params p = sparse_params(DQ_SCHEME_RANDK, 100, 0, 0);
        p.unbiased = 1;
        for (i = 0; i < n; i++) x[i] = 3e38f;
        CHECK(dq_encode(&p, x, n, e, buf, sizeof buf, &len) == DQ_ERR_OVERFLOW);
        CHECK(memcmp(e, e0, sizeof e) == 0);
        p.unbiased = 0;
        CHECK(dq_encode(&p, x, n, NULL, buf, sizeof buf, &len) == DQ_OK);
    }
}

/* Parameters: fields that do not apply must be zero. */
static void test_params(void) {
    float x[16] = {1, 2, 3};
    uint8_t buf[512];
    size_t len = 0, size = 0;
    int f;
    for (f = 0; f < 17; f++) {
        dq_params p = sparse_params(f < 12 ? DQ_SCHEME_TOPK : f < 15 ? DQ_SCHEME_RANDK : DQ_SCHEME_THRESHOLD,
                                    f < 15 ? 2 : 0, 0, 0);
        dq_status want = DQ_ERR_PARAM;
        static const float lv[1] = {1.0f};
        switch (f) {
            case 0: p.bits = 33; want = DQ_ERR_BITS; break;
            case 1: p.bucket = 8; break;
            case 2: p.rounding = DQ_ROUND_NEAREST; break;
            case 3: p.norm = DQ_NORM_MAX; break;
            case 4: p.coder = DQ_CODER_RANS; break;
            case 5: p.alpha = 1.0f; break;
            case 6: p.levels = lv; break;
            case 7: p.unbiased = 1; break;
            case 8: p.threshold = 1.0f; break;
            case 9: p.index_coder = 5; break;
            case 10: p.k = 0; break;
            case 11: p.k = 17; break;
            case 12: p.index_coder = 1; break;
            case 13: p.unbiased = 2; break;
            case 14: p.checksum = 2; break;
            case 15: p.k = 3; break;
            default: p.bits = 32; want = DQ_OK; break; /* the wire width is accepted */
        }
        CHECKF(dq_encode_capacity(&p, 16, &size) == want, "field %d", f);
        CHECKF(dq_encode(&p, x, 16, NULL, buf, sizeof buf, &len) == want, "field %d", f);
    }
    { /* coder: 0 and DQ_CODER_FIXED_ONLY send the same message; every other coder is refused */
        static const unsigned coders[] = {DQ_CODER_ELIAS, DQ_CODER_RANS8, DQ_CODER_RANS, DQ_CODER_AUTO, 4u, 253u};
        static const dq_scheme schemes[] = {DQ_SCHEME_TOPK, DQ_SCHEME_RANDK, DQ_SCHEME_THRESHOLD};
        float y[64];
        uint8_t a[1024], b[1024];
        size_t la = 0, lb = 0, ca = 0, cb = 0, s, c;
        for (f = 0; f < 64; f++) y[f] = (float)((f * 37) % 64) - 31.5f;
        for (s = 0; s < 3; s++) {
            dq_params p = sparse_params(schemes[s], schemes[s] == DQ_SCHEME_THRESHOLD ? 0 : 5, 0, 1);
            if (schemes[s] == DQ_SCHEME_THRESHOLD) p.threshold = 20.0f;
            CHECK(dq_encode_capacity(&p, 64, &ca) == DQ_OK && dq_encode(&p, y, 64, NULL, a, sizeof a, &la) == DQ_OK);
            p.coder = DQ_CODER_FIXED_ONLY;
            CHECK(dq_encode_capacity(&p, 64, &cb) == DQ_OK && dq_encode(&p, y, 64, NULL, b, sizeof b, &lb) == DQ_OK);
            CHECKF(ca == cb && la == lb && memcmp(a, b, la) == 0, "scheme %d: FIXED_ONLY differs from 0", (int)schemes[s]);
            for (c = 0; c < sizeof coders / sizeof coders[0]; c++) {
                p.coder = coders[c];
                CHECKF(dq_encode_capacity(&p, 64, &cb) == DQ_ERR_PARAM && dq_encode(&p, y, 64, NULL, b, sizeof b, &lb) == DQ_ERR_PARAM,
                       "scheme %d coder %u", (int)schemes[s], coders[c]);
            }
        }
    }
    {
        dq_params p = sparse_params(DQ_SCHEME_TOPK, 1, 0, 0);
        CHECK(dq_encode_capacity(&p, 0, &size) == DQ_ERR_EMPTY);
#if SIZE_MAX > 0xFFFFFFFFu
        CHECK(dq_encode_capacity(&p, (size_t)((uint64_t)1 << 32) + 1u, &size) == DQ_ERR_TOO_LARGE);
        CHECK(dq_encode_capacity(&p, (size_t)((uint64_t)1 << 32), &size) == DQ_OK);
#endif
    }
}

/* ---- untrusted messages */
static void resign(uint8_t *m) { st32(m + 44, dqt_crc32c(m, 44)); }

/* Every truncation and every single-byte change of m: a status, never a crash, and the output
 * untouched whenever the status is an error. With the checksum every change is an error. */
static void abuse(const uint8_t *m, size_t len, size_t n, int cs) {
    float *out = (float *)xmalloc(n * sizeof *out);
    size_t cut, pos, i;
    for (cut = 0; cut < len; cut++) {
        uint8_t *t = bdup(m, cut);
        for (i = 0; i < n; i++) out[i] = 9.0f;
        CHECKF(dq_decode(t, cut, out, n) != DQ_OK, "cut %lu", (unsigned long)cut);
        CHECK(dq_decode_add(t, cut, 1.0f, out, n) != DQ_OK);
        for (i = 0; i < n && out[i] == 9.0f; i++) {}
        CHECK(i == n);
        free(t);
    }
    for (pos = 0; pos < len; pos++) {
        static const uint8_t flips[3] = {0x01, 0x80, 0xFF};
        int f;
        for (f = 0; f < 3; f++) {
            uint8_t *t = bdup(m, len);
            dq_status st;
            t[pos] ^= flips[f];
            for (i = 0; i < n; i++) out[i] = 9.0f;
            st = dq_decode(t, len, out, n);
            if (st != DQ_OK) {
                for (i = 0; i < n && out[i] == 9.0f; i++) {}
                CHECKF(i == n, "pos %lu: output touched by a rejected message", (unsigned long)pos);
            }
            if (cs) CHECKF(st != DQ_OK, "pos %lu flip %d decoded", (unsigned long)pos, f);
            (void)dq_verify(t, len);
            free(t);
        }
    }
    free(out);
}

static void test_untrusted(void) {
    dq_t_rng r = {21};
    const size_t n = 200;
    float x[200];
    int v;
    gen(&r, D_INT, x, n);
    for (v = 0; v < 14; v++) {
        int cs = v % 2;
        dq_scheme sc = v < 10 ? DQ_SCHEME_TOPK : v < 12 ? DQ_SCHEME_THRESHOLD : DQ_SCHEME_RANDK;
        dq_params p = sparse_params(sc, sc == DQ_SCHEME_THRESHOLD ? 0 : (v < 4 || v >= 8 ? 7 : 150),
                                    (unsigned)(v / 2 % 5), (unsigned)cs);
        size_t len = 0;
        dq_status st;
        uint8_t *m;
        if (sc == DQ_SCHEME_RANDK) p.index_coder = 0;
        p.threshold = sc == DQ_SCHEME_THRESHOLD ? 3.0f : 0.0f;
        p.unbiased = sc == DQ_SCHEME_RANDK && cs;
        m = encode_msg(&p, x, n, NULL, &len, &st);
        CHECK(st == DQ_OK);
        if (m) abuse(m, len, n, cs);
        free(m);
    }
}

/* Fields a decoder must refuse (the header re-signed so that its CRC passes). */
static void test_malformed(void) {
    static const float x[16] = {1, -5, 2, 0, 8, -3, 0, 4, 1, 1, -9, 2, 0, 0, 7, 6};
    dq_params p = sparse_params(DQ_SCHEME_TOPK, 4, DQ_INDEX_VARINT, 0);
    uint8_t m[512], t[512];
    float out[16];
    size_t len = 0, i;
    dq_header h;
    int f;
    CHECK(dq_encode(&p, x, 16, NULL, m, sizeof m, &len) == DQ_OK);
    for (f = 0; f < 16; f++) {
        size_t tl = len;
        dq_status want = DQ_ERR_CORRUPT;
        memcpy(t, m, len);
        switch (f) {
            case 0: t[7] = 17; break;                               /* bits: 32 or 1..16 */
            case 1: t[8] = 1; break;                                /* coder */
            case 2: t[9] = 1; break;                                /* norm */
            case 3: t[12] = 8; break;                               /* bucket */
            case 4: t[10] |= 1; break;                              /* stochastic flag */
            case 5: t[10] |= 4; break;                              /* rescaled: random-k only */
            case 6: st64(t + 16, ((uint64_t)1 << 32) + 1); break;   /* count above 2^32 */
            case 7: st64(t + 48, 17); break;                        /* k > n */
            case 8: st64(t + 48, 0); break;                         /* k = 0 */
            case 9: st64(t + 56, 9); break;                         /* stream shorter than its header */
            case 10: st64(t + 56, 1000); want = DQ_ERR_CORRUPT; break; /* above every coder's bound */
            case 11: st64(t + 48, 3); want = DQ_ERR_CORRUPT; break; /* the stream says 4 */
            case 12: st32(t + 64 + 1, 16); break;                   /* the stream's n - 1 = 16 */
            case 13: /* a value that is not finite */
                st32(t + len - 4, 0x7FC00000u);
                break;
            case 14: { /* a trailing byte inside the declared stream length */
                size_t sl = (size_t)ld64(m + 56);
                memmove(t + 64 + sl + 1, t + 64 + sl, len - 64 - sl);
                t[64 + sl] = 0;
                st64(t + 56, sl + 1);
                tl = len + 1;
                break;
            }
            default: /* count above the 2^56 the header allows: a common check */
                st64(t + 16, ((uint64_t)1 << 56) + 1);
                want = DQ_ERR_TOO_LARGE;
                break;
        }
        resign(t);
        for (i = 0; i < 16; i++) out[i] = 9.0f;
        CHECKF(dq_decode(t, tl, out, 16) == want, "field %d: %s", f, dq_strerror(dq_decode(t, tl, out, 16)));
        for (i = 0; i < 16 && out[i] == 9.0f; i++) {}
        CHECKF(i == 16, "field %d touched the output", f);
    }
    /* the size fields: truncation before k and before the stream length */
    CHECK(dq_header_read(m, 50, &h) == DQ_ERR_TRUNCATED);
    CHECK(dq_header_read(m, 60, &h) == DQ_ERR_TRUNCATED);
    CHECK(dq_header_read(m, 64, &h) == DQ_OK && h.msg_size == len && h.nnz == 4 && h.payload_size == len - 64);
    CHECK(dq_decode(m, len, out, 15) == DQ_ERR_DST_TOO_SMALL);
    CHECK(dq_decode_add(m, len, 1.0f, out, 17) == DQ_ERR_SIZE_MISMATCH);
    { /* random-k: rescaled flag allowed, k = 0 refused; threshold: k = 0 allowed */
        dq_params q = sparse_params(DQ_SCHEME_RANDK, 3, 0, 0);
        CHECK(dq_encode(&q, x, 16, NULL, m, sizeof m, &len) == DQ_OK);
        memcpy(t, m, len);
        t[10] |= 4;
        resign(t);
        CHECK(dq_decode(t, len, out, 16) == DQ_OK);
        st64(t + 48, 0);
        resign(t);
        CHECK(dq_decode(t, len, out, 16) == DQ_ERR_CORRUPT);
        CHECK(dq_header_read(m, 55, &h) == DQ_ERR_TRUNCATED);
        CHECK(dq_header_read(m, 56, &h) == DQ_OK && h.msg_size == 56 + 12 && h.payload_size == 12);
        q = sparse_params(DQ_SCHEME_THRESHOLD, 0, 0, 0);
        q.threshold = 100.0f;
        CHECK(dq_encode(&q, x, 16, NULL, m, sizeof m, &len) == DQ_OK && ld64(m + 48) == 0);
        for (i = 0; i < 16; i++) out[i] = 9.0f;
        CHECK(dq_decode_add(m, len, 1.0f, out, 16) == DQ_OK && out[3] == 9.0f);
        CHECK(dq_decode(m, len, out, 16) == DQ_OK && out[3] == 0.0f);
    }
}

/* ---- the scan kernels against their scalar twin, bit for bit (masks and stored sums). NaN sums
 * compare as NaN: which operand's payload x + e carries is up to the compiler (it may commute
 * the add), and the library stores sums only once the input is known finite. lo stays at or
 * below 0x7F800000, as in the library, so every NaN key is >= lo. */
static int same_float(float a, float b) { return fbits(a) == fbits(b) || (a != a && b != b); }
static void test_kernel_twin(void) {
    dq_t_rng r = {22};
    float x[64], e[64], a[64], b[64];
    size_t k;
    int it;
    for (it = 0; it < 20000; it++) {
        uint32_t lo;
        int j, mode = it % 3;
        uint64_t ma, mb;
        for (j = 0; j < 64; j++) {
            uint64_t u = dq_t_next(&r);
            x[j] = u % 7 == 0 ? bitsf((uint32_t)(u >> 16)) : (float)dq_t_gauss(&r);
            e[j] = u % 5 == 0 ? bitsf((uint32_t)(u >> 24)) : (float)dq_t_gauss(&r) * 0.1f;
            if (u % 11 == 0) x[j] = -0.0f;
            a[j] = b[j] = 0.0f;
        }
        lo = it % 4 == 0 ? keyof(x[it % 64]) : it % 4 == 1 ? 0x7F800000u : (uint32_t)(dq_t_next(&r) % 0x7F800001u);
        if (lo > 0x7F800000u) lo = 0x7F800000u;
        mb = dqt_scalar(sp_mask64)(x, mode ? e : NULL, mode == 2 ? b : NULL, lo);
        for (k = 0; DQT_SPMASK_K[k].name; k++) { /* every SIMD kernel of this build */
            memset(a, 0, sizeof a);
            ma = DQT_SPMASK_K[k].fn(x, mode ? e : NULL, mode == 2 ? a : NULL, lo);
            for (j = 0; j < 64 && same_float(a[j], b[j]); j++) {}
            if (ma != mb || j < 64) {
                CHECKF(0, "%s: iteration %d mode %d", DQT_SPMASK_K[k].name, it, mode);
                return;
            }
        }
    }
}

int main(void) {
    RUN(test_topk_reference);
    RUN(test_topk_adversarial);
    RUN(test_topk_contraction);
    RUN(test_topk_errors);
    RUN(test_topk_messages);
    RUN(test_known_answer);
    RUN(test_threshold);
    RUN(test_randk_indices);
    RUN(test_randk_unbiased);
    RUN(test_randk_variance);
    RUN(test_ef_identity);
    RUN(test_ef_least_squares);
    RUN(test_failures);
    RUN(test_params);
    RUN(test_untrusted);
    RUN(test_malformed);
    RUN(test_kernel_twin);
    return dq_t_finish();
}
