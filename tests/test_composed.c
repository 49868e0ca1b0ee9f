/* Composed messages (doc/FORMAT.md 20.10): sparse selections (top-k, random-k, threshold) whose
 * values are sent quantized, as the body of a QSGD message of the selected values.
 * - the worked examples of the spec, byte for byte;
 * - every scheme at densities from one value to all of them, widths 1..16, every coder (the
 *   default, fixed, Elias, rANS, AUTO) and index coder, buckets, roundings and norms: the values
 *   part is the body of the QSGD message of the gathered values (byte for byte when both have
 *   the room to send their smallest form), the decoders (dq_decode, _add, the typed ones, the
 *   opened message) give that message's decoded values at the selected indices, and the header,
 *   sizes and checksum are as specified;
 * - fused error feedback: residual = c - decoded bit for bit, the message that of c, the
 *   residual untouched when the encode fails;
 * - the error against its formula: selection plus quantization exactly, the ternary form's
 *   ||c||^2 - k mu^2, the stochastic quantization variance and the unbiasedness of rescaled
 *   random-k by Monte Carlo (fixed seeds, bounds in standard errors);
 * - least squares that converges with the error-feedback memory and not without;
 * - every truncation and single-byte change of composed messages, malformed fields, parameter
 *   errors and capacities;
 * - the rate model (dq_rd_sparse_measure) against real encodes: selection error, index bytes,
 *   float32 and 1-bit nearest sizes and errors exactly; widths 2..8 within its measured accuracy
 *   (sizes of the values part, and the quantization error, against Monte Carlo means). */
#include "../dqsgd.h"
#include "harness.h"
#include "internals.h"

#include <float.h>

#define FLIP ((uint64_t)1 << 63) /* the step of the values' QSGD message: FORMAT 20.10 */

static uint32_t fbits(float f) { return dq_t_fbits(f); }
static uint32_t keyof(float f) { return dq_t_fbits(f) & 0x7FFFFFFFu; }
static uint64_t ld64(const uint8_t *p) { return dq_t_ld64(p); }
static uint32_t ld32(const uint8_t *p) { return dq_t_ld32(p); }
static void resign(uint8_t *m) { dq_t_st32(m + 44, dq_t_crc32c(m, 44)); }

static dq_params cparams(dq_scheme scheme, size_t k, unsigned bits, unsigned coder, unsigned icoder) {
    dq_params p;
    memset(&p, 0, sizeof p);
    p.scheme = scheme;
    p.k = k;
    p.bits = bits;
    p.coder = coder;
    p.index_coder = scheme == DQ_SCHEME_RANDK ? 0u : icoder;
    p.seed = 0xC0FFEEu;
    p.step = 11;
    p.stream = 2;
    return p;
}
/* The QSGD params of the values' message (FORMAT 20.10). */
static dq_params qparams(const dq_params *p) {
    dq_params q;
    memset(&q, 0, sizeof q);
    q.scheme = DQ_SCHEME_QSGD;
    q.bits = p->bits;
    q.bucket = p->bucket;
    q.rounding = p->rounding;
    q.norm = p->norm;
    q.coder = p->coder;
    q.checksum = p->checksum;
    q.seed = p->seed;
    q.step = p->step ^ FLIP;
    q.stream = p->stream;
    return q;
}

/* ---- reference selections: indices into idx, the values sent (before quantizing) into w */
static const float *g_c;
static int cmp_rank(const void *a, const void *b) {
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b, ki = keyof(g_c[i]), kj = keyof(g_c[j]);
    if (ki != kj) return ki > kj ? -1 : 1;
    return i < j ? -1 : i > j;
}
static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}
static size_t ref_select(const dq_params *p, const float *c, size_t n, uint32_t *idx, float *w) {
    size_t k = 0, i, j;
    if (p->scheme == DQ_SCHEME_TOPK) {
        uint32_t *all = (uint32_t *)xmalloc(n * sizeof *all);
        for (i = 0; i < n; i++) all[i] = (uint32_t)i;
        g_c = c;
        qsort(all, n, sizeof *all, cmp_rank);
        k = p->k;
        memcpy(idx, all, k * sizeof *idx);
        qsort(idx, k, sizeof *idx, cmp_u32);
        free(all);
        for (j = 0; j < k; j++) w[j] = c[idx[j]];
    } else if (p->scheme == DQ_SCHEME_THRESHOLD) {
        for (i = 0; i < n; i++)
            if (keyof(c[i]) > keyof(p->threshold)) {
                idx[k] = (uint32_t)i;
                w[k++] = c[i];
            }
    } else {
        dqt_sp_strata s;
        dqt_sp_strata_init(&s, n, p->k, p->seed, p->step, p->stream);
        for (j = 0; j < p->k; j++) {
            idx[j] = (uint32_t)dqt_sp_strata_next(&s, (uint32_t)j);
            w[j] = c[idx[j]];
            if (p->unbiased) w[j] = w[j] * (float)s.m;
        }
        k = p->k;
    }
    return k;
}

/* The values part of a composed message m: its offset. */
static size_t values_at(const uint8_t *m) { return m[6] == DQ_SCHEME_RANDK ? 56u : 64u + (size_t)ld64(m + 56); }

/* The QSGD message of a composed message's values (FORMAT 20.10: its header from the sparse
 * header's fields, count k, step XOR 2^63, no checksum; then the values part). Exact size. */
static uint8_t *virtual_qsgd(const uint8_t *m, size_t len, size_t *vlen) {
    size_t at = values_at(m), cs = (ld32(m + 8) >> 16) & 2u ? 4u : 0u, body = len - at - cs;
    uint8_t *v = (uint8_t *)xmalloc(48 + body);
    memcpy(v, m, 48);
    v[6] = DQ_SCHEME_QSGD;
    dq_t_st16(v + 10, ld32(m + 8) >> 16 & 1u); /* the stochastic flag alone */
    dq_t_st64(v + 16, ld64(m + 48));
    dq_t_st64(v + 32, ld64(m + 32) ^ FLIP);
    resign(v);
    memcpy(v + 48, m + at, body);
    *vlen = 48 + body;
    return v;
}

/* Encode with capacity `cap` (0: dq_encode_capacity) and return an exact-size copy. */
static uint8_t *encode(const dq_params *p, const float *x, size_t n, float *e, size_t cap, size_t *len,
                       dq_status *st) {
    uint8_t *buf, *m;
    if (!cap && (*st = dq_encode_capacity(p, n, &cap)) != DQ_OK) return NULL;
    buf = (uint8_t *)xmalloc(cap);
    *st = dq_encode(p, x, n, e, buf, cap, len);
    m = *st == DQ_OK ? bdup(buf, *len) : NULL;
    free(buf);
    return m;
}

/* The checks of one composed message m of x (n elements, no residual) with params p: header,
 * layout and sizes; the values part against the virtual QSGD message and, given `ref` (a QSGD
 * encode of the gathered values with ample room), byte for byte; every decoder. Returns the
 * number of values. */
static size_t check_message(const dq_params *p, const float *x, size_t n, const uint8_t *m, size_t len,
                            const uint8_t *ref, size_t ref_len) {
    uint32_t *idx = (uint32_t *)xmalloc((n + 1) * sizeof *idx);
    float *w = (float *)xmalloc((n + 1) * sizeof *w), *vq = (float *)xmalloc((n + 1) * sizeof *vq);
    float *out = (float *)xmalloc(n * sizeof *out), *acc = (float *)xmalloc(n * sizeof *acc);
    float *want = (float *)xmalloc(n * sizeof *want);
    uint16_t *h16 = (uint16_t *)xmalloc(n * sizeof *h16), *w16 = (uint16_t *)xmalloc(n * sizeof *w16);
    size_t k = ref_select(p, x, n, idx, w), at = values_at(m), i, j, vlen = 0;
    unsigned flags = ld32(m + 8) >> 16, cs = flags & 2u ? 4u : 0u;
    dq_header h;
    dq_message msg;
    CHECK(dq_header_read(m, len, &h) == DQ_OK);
    CHECK(h.msg_size == len && h.nnz == k && h.count == n && h.bits == p->bits && h.scheme == (unsigned)p->scheme);
    CHECK(h.payload_size == len - (m[6] == DQ_SCHEME_RANDK ? 56u : 64u) - cs);
    CHECK(ld64(m + 48) == k && m[7] == p->bits);
    CHECK((flags & 1u) == (p->rounding != DQ_ROUND_NEAREST) || k == 0); /* stochastic flag */
    CHECK(((flags >> 2) & 1u) == (p->unbiased != 0) && (flags >> 3) == 0);
    if (cs) CHECK(ld32(m + len - 4) == dq_t_crc32c(m + 48, len - 52));
    CHECK(dq_verify(m, len) == DQ_OK);
    if (p->scheme != DQ_SCHEME_RANDK) { /* the index stream */
        uint32_t *got = (uint32_t *)xmalloc((k + 1) * sizeof *got);
        size_t k2 = 0;
        CHECK(dq_index_decode(m + 64, (size_t)ld64(m + 56), got, k, &k2) == DQ_OK && k2 == k);
        CHECK(k == 0 || memcmp(got, idx, k * sizeof *idx) == 0);
        if (p->index_coder) CHECK(m[64] == p->index_coder);
        free(got);
    }
    for (i = 0; i < n; i++) want[i] = 0.0f;
    if (k == 0) {
        CHECK(m[8] == 0 && len == at + cs);
    } else { /* the values: the virtual QSGD message decodes to them */
        uint8_t *v = virtual_qsgd(m, len, &vlen);
        dq_header vh;
        CHECK(dq_header_read(v, vlen, &vh) == DQ_OK && vh.msg_size == vlen && vh.count == k);
        CHECKF(dq_decode(v, vlen, vq, k) == DQ_OK, "the values part is no QSGD body");
        for (j = 0; j < k; j++) want[idx[j]] = vq[j];
        if (ref) { /* the same bytes as the QSGD encoder's message of the values */
            unsigned rcs = (dq_t_ld16(ref + 10) & 2u) ? 4u : 0u;
            CHECKF(m[7] == ref[7] && m[8] == ref[8] && m[9] == ref[9] && ld32(m + 12) == ld32(ref + 12), "fields");
            CHECKF((flags & 1u) == (dq_t_ld16(ref + 10) & 1u) && cs == rcs, "flags %u / %u", flags, dq_t_ld16(ref + 10));
            CHECKF(ref_len - 48 - rcs == len - at - cs && memcmp(ref + 48, m + at, ref_len - 48 - rcs) == 0,
                   "values part differs from the QSGD body (%lu vs %lu bytes)", (unsigned long)(len - at - cs),
                   (unsigned long)(ref_len - 48 - rcs));
        }
        free(v);
    }
    /* every decoder: the values at the indices, zeros (decode) or untouched (add) elsewhere */
    for (i = 0; i < n; i++) {
        out[i] = 7.0f;
        acc[i] = (float)i * 0.25f - 1.0f;
    }
    CHECK(dq_decode(m, len, out, n) == DQ_OK && memcmp(out, want, n * sizeof *out) == 0);
    CHECK(dq_decode_add(m, len, 0.37f, acc, n) == DQ_OK);
    for (i = 0, j = 0; i < n; i++) {
        float base = (float)i * 0.25f - 1.0f, t = base;
        if (j < k && idx[j] == i) {
            float wv = 0.37f * want[i];
            t = base + wv;
            j++;
        }
        if (fbits(acc[i]) != fbits(t)) {
            CHECKF(0, "decode_add at %lu", (unsigned long)i);
            break;
        }
    }
    CHECK(dq_message_open(m, len, &msg) == DQ_OK && msg.h.nnz == k);
    for (i = 0; i < n; i++) out[i] = 7.0f;
    CHECK(dq_message_decode(&msg, out, n) == DQ_OK && memcmp(out, want, n * sizeof *out) == 0);
    for (i = 0; i < n; i++) acc[i] = 1.0f;
    CHECK(dq_message_decode_add(&msg, 2.0f, acc, n) == DQ_OK);
    for (i = 0; i < n; i++) {
        float t = 2.0f * want[i];
        if (fbits(acc[i]) != fbits(1.0f + t)) {
            CHECKF(0, "message_decode_add at %lu", (unsigned long)i);
            break;
        }
    }
    CHECK(dq_decode_typed(m, len, DQ_F16, h16, n) == DQ_OK);
    CHECK(dq_convert(DQ_F32, want, n, DQ_F16, w16) == DQ_OK && memcmp(h16, w16, n * sizeof *h16) == 0);
    CHECK(dq_decode_range(m, len, 0, n, out) == DQ_ERR_PARAM && dq_message_norm2(m, len, (double *)(void *)acc) == DQ_ERR_PARAM);
    free(idx);
    free(w);
    free(vq);
    free(out);
    free(acc);
    free(want);
    free(h16);
    free(w16);
    return k;
}

/* ---- the worked examples of FORMAT 20.10 */
static void test_known_answers(void) {
    static const float x[8] = {0.5f, -3.0f, 0.0f, 2.0f, -0.0f, 1.0f, -2.0f, 0.25f};
    static const uint8_t head[] = {0x44, 0x51, 0x53, 0x47, 0x01, 0x30, 0x06};
    static const uint8_t tail[] = {0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x00,
                                   0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                   0x00, 0x00};
    static const uint8_t kl_stream[] = {0x02, 0, 0, 0, 0, 0, 0, 0, 0x0D, 0, 0, 0, 0, 0, 0, 0,
                                        0x02, 0x07, 0, 0, 0, 0x02, 0, 0, 0, 0, 0x00, 0x01, 0x01};
    static const uint8_t fields[2][5] = {{0x01, 0x00, 0x02, 0x00, 0x00}, {0x05, 0x00, 0x00, 0x01, 0x00}};
    static const uint8_t crc[2][4] = {{0x62, 0x68, 0xB2, 0x9B}, {0x6E, 0x92, 0x6A, 0x55}};
    static const uint8_t vals[2][6] = {{0x00, 0x00, 0x20, 0x40, 0x01}, {0x5A, 0xC1, 0x66, 0x40, 0x3D, 0x01}};
    static const size_t vlen[2] = {5, 6};
    uint8_t want[83], buf[512];
    float out[8];
    size_t len = 0;
    int v;
    for (v = 0; v < 2; v++) {
        dq_params p = cparams(DQ_SCHEME_TOPK, 2, v ? 5u : 1u, 0, DQ_INDEX_VARINT);
        p.seed = 42;
        p.step = 7;
        p.stream = 0;
        p.bucket = DQ_BUCKET_WHOLE;
        p.rounding = v ? DQ_ROUND_STOCHASTIC : DQ_ROUND_NEAREST;
        memcpy(want, head, 7);
        memcpy(want + 7, fields[v], 5);
        memset(want + 12, 0, 4);
        memcpy(want + 16, tail, sizeof tail);
        memcpy(want + 44, crc[v], 4);
        memcpy(want + 48, kl_stream, sizeof kl_stream);
        memcpy(want + 77, vals[v], vlen[v]);
        CHECK(dq_encode(&p, x, 8, NULL, buf, sizeof buf, &len) == DQ_OK);
        CHECKF(len == 77 + vlen[v] && memcmp(buf, want, len) == 0, "example %d", v);
        CHECK(dq_decode(want, 77 + vlen[v], out, 8) == DQ_OK && out[0] == 0.0f);
        if (v) { /* 13 and 9 steps of scale / 15 */
            float sc = dq_t_bitsf(0x4066C15Au), step = sc / 15.0f;
            CHECK(out[1] == -(13.0f * step) && out[3] == 9.0f * step);
        } else {
            CHECK(out[1] == -2.5f && out[3] == 2.5f);
        }
        check_message(&p, x, 8, want, 77 + vlen[v], NULL, 0);
    }
}

/* ---- equivalence with QSGD across schemes, densities, widths, coders */
static void gen(dq_t_rng *r, int kind, float *x, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        double g = dq_t_gauss(r);
        x[i] = kind == 0 ? (float)g : kind == 1 ? (float)(g * exp(3.0 * dq_t_gauss(r))) : (float)((int)(g * 3.0)) * 0.5f;
    }
}
/* One case: encode with capacity and with ample room, compare with the QSGD reference. */
static void one_case(const dq_params *p, const float *x, size_t n) {
    dq_params q = qparams(p);
    size_t cap = 0, len = 0, len2 = 0, ref_len = 0, k, bound;
    uint32_t *idx = (uint32_t *)xmalloc((n + 1) * sizeof *idx);
    float *w = (float *)xmalloc((n + 1) * sizeof *w);
    uint8_t *m, *m2, *ref = NULL, *rbuf;
    dq_status st;
    k = ref_select(p, x, n, idx, w);
    CHECK(dq_encode_capacity(p, n, &cap) == DQ_OK);
    m = encode(p, x, n, NULL, cap, &len, &st);
    CHECKF(st == DQ_OK, "scheme %d k %lu bits %u coder %u: %s", (int)p->scheme, (unsigned long)k, p->bits, p->coder,
           dq_strerror(st));
    if (!m) goto out;
    CHECK(len <= cap);
    /* ample room: both may send the smallest form of the values */
    bound = k ? dq_encode_bound_coded(k, p->bits) : 0;
    m2 = encode(p, x, n, NULL, cap + bound, &len2, &st);
    CHECK(st == DQ_OK);
    if (k) {
        rbuf = (uint8_t *)xmalloc(bound + 64);
        CHECK(dq_encode(&q, w, k, NULL, rbuf, bound + 64, &ref_len) == DQ_OK);
        ref = bdup(rbuf, ref_len);
        free(rbuf);
    }
    if (m2) {
        check_message(p, x, n, m2, len2, ref, ref_len);
        free(m2);
    }
    check_message(p, x, n, m, len, NULL, 0);
    free(m);
    free(ref);
out:
    free(idx);
    free(w);
}

static void test_equals_qsgd(void) {
    static const size_t ns[] = {1, 7, 300, 5000};
    static const unsigned coders[] = {DQ_CODER_DEFAULT, DQ_CODER_FIXED_ONLY, DQ_CODER_ELIAS, DQ_CODER_RANS,
                                      DQ_CODER_AUTO};
    static const uint32_t buckets[] = {0, DQ_BUCKET_WHOLE, 8, 64};
    dq_t_rng r = {101};
    size_t a, cases = 0;
    for (a = 0; a < sizeof ns / sizeof ns[0]; a++) {
        size_t n = ns[a], d;
        float *x = (float *)xmalloc(n * sizeof *x);
        gen(&r, (int)(a % 3), x, n);
        for (d = 0; d < 3; d++) { /* one value, a few percent, all of them */
            size_t k = d == 0 ? 1 : d == 1 ? 1 + n / 37 : n;
            unsigned b;
            for (b = 1; b <= 16; b++) {
                unsigned variant = (unsigned)(a * 48 + d * 16 + b);
                unsigned coder = coders[variant % 5];
                int sc = (int)(variant % 3);
                dq_params p = cparams(sc == 0 ? DQ_SCHEME_TOPK : sc == 1 ? DQ_SCHEME_RANDK : DQ_SCHEME_THRESHOLD, k, b,
                                      coder, variant % 5);
                if ((coder == DQ_CODER_ELIAS && b == 1) || (coder == DQ_CODER_RANS && b > 8)) p.coder = DQ_CODER_AUTO;
                p.bucket = buckets[(variant / 5) % 4];
                p.rounding = variant % 7 < 3 ? DQ_ROUND_NEAREST : DQ_ROUND_DEFAULT;
                p.norm = variant % 4 == 1 ? DQ_NORM_MAX : DQ_NORM_DEFAULT;
                p.checksum = variant % 6 == 5;
                p.unbiased = sc == 1 && variant % 2;
                if (sc == 2) { /* a threshold that keeps about k */
                    float *t = fdup(x, n);
                    size_t i;
                    for (i = 0; i < n; i++) t[i] = fabsf(t[i]);
                    g_c = t;
                    qsort(t, n, sizeof *t, cmp_u32); /* non-negative floats order as their bits */
                    p.threshold = d == 2 ? 0.0f : t[n - k];
                    p.k = 0;
                    free(t);
                }
                one_case(&p, x, n);
                cases++;
            }
        }
        free(x);
    }
    if (dq_t_verbose()) printf("  %lu composed cases\n", (unsigned long)cases);
}

/* Every width with every coder it allows, top-k at 5% of 20000 Gaussian values (the forced
 * coders and AUTO send Elias, rANS and the fixed layout here); the default coder codes from
 * DQ_CODER_AUTO_MIN values on, with the checksum. */
static void test_widths_coders(void) {
    static const unsigned coders[] = {DQ_CODER_DEFAULT, DQ_CODER_FIXED_ONLY, DQ_CODER_ELIAS, DQ_CODER_RANS,
                                      DQ_CODER_AUTO};
    const size_t n = 20000;
    dq_t_rng r = {102};
    float *x = (float *)xmalloc(n * sizeof *x);
    unsigned b, c, seen[4] = {0, 0, 0, 0};
    gen(&r, 0, x, n);
    for (b = 1; b <= 16; b++)
        for (c = 0; c < 5; c++) {
            dq_params p = cparams(DQ_SCHEME_TOPK, 1000, b, coders[c], DQ_INDEX_RICE);
            size_t len = 0;
            dq_status st;
            uint8_t *m;
            if ((coders[c] == DQ_CODER_ELIAS && b == 1) || (coders[c] == DQ_CODER_RANS && b > 8)) continue;
            p.bucket = b % 4 == 3 ? 64 : 0;
            one_case(&p, x, n);
            m = encode(&p, x, n, NULL, 0, &len, &st);
            if (m) seen[m[8]]++;
            free(m);
        }
    CHECK(seen[0] && seen[1] && seen[3] && !seen[2]); /* fixed, Elias and rANS all sent; never coder 2 */
    if (dq_t_verbose()) printf("  coders sent: fixed %u, elias %u, rans %u\n", seen[0], seen[1], seen[3]);
    {
        /* the default coder from DQ_CODER_AUTO_MIN values: a coded form with the checksum */
        dq_params p = cparams(DQ_SCHEME_TOPK, 5000, 4, DQ_CODER_DEFAULT, 0);
        size_t len = 0;
        dq_status st;
        uint8_t *m = encode(&p, x, n, NULL, 0, &len, &st);
        CHECK(m && m[8] == DQ_CODER_RANS && (dq_t_ld16(m + 10) & 2u));
        free(m);
    }
    free(x);
}

/* ---- error feedback */
static void test_ef_identity(void) {
    static const dq_scheme schemes[] = {DQ_SCHEME_TOPK, DQ_SCHEME_THRESHOLD, DQ_SCHEME_RANDK, DQ_SCHEME_RANDK,
                                        DQ_SCHEME_THRESHOLD};
    const size_t n = 3000;
    dq_t_rng r = {103};
    float *x = (float *)xmalloc(n * sizeof *x), *e = (float *)xmalloc(n * sizeof *e), *c = (float *)xmalloc(n * sizeof *c);
    float *dec = (float *)xmalloc(n * sizeof *dec);
    size_t s, i;
    unsigned b;
    for (s = 0; s < 5; s++) /* the last: a threshold nothing passes, k = 0 */
        for (b = 1; b <= 16; b += 3) {
            dq_params p = cparams(schemes[s], 40, b, b % 2 ? DQ_CODER_AUTO : DQ_CODER_DEFAULT, (unsigned)(b % 5));
            size_t len = 0, len2 = 0, bad = 0;
            dq_status st;
            uint8_t *m, *m2;
            p.unbiased = s == 3;
            p.rounding = b % 3 ? DQ_ROUND_STOCHASTIC : DQ_ROUND_NEAREST;
            p.bucket = b < 8 ? 16 : 0;
            if (schemes[s] == DQ_SCHEME_THRESHOLD) {
                p.k = 0;
                p.threshold = s == 4 ? 1e30f : 1.8f;
            }
            gen(&r, 0, x, n);
            for (i = 0; i < n; i++) {
                e[i] = (float)dq_t_gauss(&r) * 0.5f;
                c[i] = x[i] + e[i];
            }
            m = encode(&p, x, n, e, 0, &len, &st);
            CHECK(st == DQ_OK);
            m2 = encode(&p, c, n, NULL, 0, &len2, &st);
            CHECK(m && m2 && len == len2 && memcmp(m, m2, len) == 0); /* the message of c */
            if (m && dq_decode(m, len, dec, n) == DQ_OK)
                for (i = 0; i < n; i++) bad += fbits(e[i]) != fbits(c[i] - dec[i]);
            else
                bad++;
            CHECKF(bad == 0, "scheme %d bits %u: %lu residuals differ from c - decoded", (int)schemes[s], b,
                   (unsigned long)bad);
            free(m);
            free(m2);
        }
    { /* 16-bit residual and input: the float path's message, the residual rounded */
        dq_params p = cparams(DQ_SCHEME_TOPK, 50, 3, DQ_CODER_AUTO, 0);
        uint16_t *xh = (uint16_t *)xmalloc(n * sizeof *xh), *eh = (uint16_t *)xmalloc(n * sizeof *eh);
        uint16_t *eh2 = (uint16_t *)xmalloc(n * sizeof *eh2);
        float *xf = (float *)xmalloc(n * sizeof *xf), *ef = (float *)xmalloc(n * sizeof *ef);
        size_t cap = 0, la = 0, lb = 0;
        uint8_t *a, *bb;
        gen(&r, 0, x, n);
        for (i = 0; i < n; i++) e[i] = (float)dq_t_gauss(&r) * 0.5f;
        dq_convert(DQ_F32, x, n, DQ_BF16, xh);
        dq_convert(DQ_F32, e, n, DQ_F16, eh);
        dq_convert(DQ_BF16, xh, n, DQ_F32, xf);
        dq_convert(DQ_F16, eh, n, DQ_F32, ef);
        CHECK(dq_encode_capacity(&p, n, &cap) == DQ_OK);
        a = (uint8_t *)xmalloc(cap);
        bb = (uint8_t *)xmalloc(cap);
        CHECK(dq_encode_typed(&p, DQ_BF16, xh, n, DQ_F16, eh, a, cap, &la) == DQ_OK);
        CHECK(dq_encode(&p, xf, n, ef, bb, cap, &lb) == DQ_OK);
        CHECK(la == lb && memcmp(a, bb, la) == 0);
        dq_convert(DQ_F32, ef, n, DQ_F16, eh2);
        CHECK(memcmp(eh, eh2, n * sizeof *eh) == 0);
        free(xh);
        free(eh);
        free(eh2);
        free(xf);
        free(ef);
        free(a);
        free(bb);
    }
    free(x);
    free(e);
    free(c);
    free(dec);
}

/* Failures leave the residual untouched: NaN, Inf, a bucket scale above 2^126, a rescale that
 * overflows, too little room. */
static void test_failures(void) {
    const size_t n = 500;
    float x[500], e[500], e0[500];
    size_t i, s, len = 0, cap = 0;
    uint8_t *buf = (uint8_t *)xmalloc(1 << 16);
    dq_t_rng r = {104};
    for (s = 0; s < 3; s++) {
        dq_scheme sc = s == 0 ? DQ_SCHEME_TOPK : s == 1 ? DQ_SCHEME_THRESHOLD : DQ_SCHEME_RANDK;
        dq_params p = cparams(sc, sc == DQ_SCHEME_THRESHOLD ? 0 : 50, 4, DQ_CODER_DEFAULT, 0);
        p.threshold = sc == DQ_SCHEME_THRESHOLD ? 1.0f : 0.0f;
        p.bucket = DQ_BUCKET_WHOLE;
        for (i = 0; i < n; i++) {
            x[i] = (float)dq_t_gauss(&r);
            e[i] = e0[i] = (float)dq_t_gauss(&r);
        }
        x[7] = (float)NAN;
        CHECK(dq_encode(&p, x, n, e, buf, 1 << 16, &len) == DQ_ERR_NONFINITE && memcmp(e, e0, sizeof e) == 0);
        x[7] = 1.0f;
        for (i = 0; i < n; i++) x[i] = i % 2 ? 5e37f : -5e37f; /* the L2 norm of the sent values passes 2^126 */
        for (i = 0; i < n; i++) e[i] = e0[i] = 0.5f;
        CHECKF(dq_encode(&p, x, n, e, buf, 1 << 16, &len) == DQ_ERR_OVERFLOW, "scheme %d", (int)sc);
        CHECK(memcmp(e, e0, sizeof e) == 0);
        p.norm = DQ_NORM_MAX; /* the max norm fits: 5e37 < 2^126 = 8.5e37 */
        CHECK(dq_encode(&p, x, n, e, buf, 1 << 16, &len) == DQ_OK);
        for (i = 0; i < n; i++) {
            x[i] = (float)dq_t_gauss(&r);
            e[i] = e0[i] = (float)dq_t_gauss(&r);
        }
        p.norm = DQ_NORM_DEFAULT;
        if (sc != DQ_SCHEME_THRESHOLD) {
            CHECK(dq_encode_capacity(&p, n, &cap) == DQ_OK);
            CHECK(dq_encode(&p, x, n, e, buf, cap - 1, &len) == DQ_ERR_DST_TOO_SMALL && memcmp(e, e0, sizeof e) == 0);
            CHECK(dq_encode(&p, x, n, e, buf, cap, &len) == DQ_OK);
        }
    }
    { /* rescaled random-k whose m x overflows float32 */
        dq_params p = cparams(DQ_SCHEME_RANDK, 100, 2, DQ_CODER_DEFAULT, 0);
        p.unbiased = 1;
        for (i = 0; i < n; i++) {
            x[i] = 3e38f;
            e[i] = e0[i] = 0.0f;
        }
        CHECK(dq_encode(&p, x, n, e, buf, 1 << 16, &len) == DQ_ERR_OVERFLOW && memcmp(e, e0, sizeof e) == 0);
    }
    free(buf);
}

/* ---- errors against their formulas */
/* Top-k: ||c - decode||^2 is the selection error plus the quantization error of the values,
 * exactly (disjoint supports); the ternary form's quantization error is
 * sum w^2 - k mu^2 + k (s - mu)^2 with mu the mean |w| and s the float scale, |s - mu| within
 * float rounding of mu. */
static void test_ternary(void) {
    static const size_t ns[] = {100, 4099, 50000};
    dq_t_rng r = {105};
    size_t a;
    for (a = 0; a < 3; a++) {
        size_t n = ns[a], k = 1 + n / 50, i, j, len = 0;
        float *x = (float *)xmalloc(n * sizeof *x), *out = (float *)xmalloc(n * sizeof *out);
        uint32_t *idx = (uint32_t *)xmalloc(n * sizeof *idx);
        float *w = (float *)xmalloc(n * sizeof *w);
        dq_params p = cparams(DQ_SCHEME_TOPK, k, 1, DQ_CODER_DEFAULT, 0);
        double norm2 = 0.0, sel = 0.0, sw2 = 0.0, sabs = 0.0, err = 0.0, mu, sc, want;
        dq_status st;
        uint8_t *m;
        p.rounding = DQ_ROUND_NEAREST;
        p.bucket = DQ_BUCKET_WHOLE;
        gen(&r, 1, x, n);
        ref_select(&p, x, n, idx, w);
        m = encode(&p, x, n, NULL, 0, &len, &st);
        CHECK(st == DQ_OK && m && m[7] == 1 && m[9] == 2); /* 1 bit, norm 2: the mean */
        if (!m) continue;
        CHECK(dq_decode(m, len, out, n) == DQ_OK);
        sc = (double)dq_t_bitsf(ld32(m + values_at(m) + (m[8] ? 8u : 0u)));
        for (i = 0; i < n; i++) {
            double d = (double)out[i] - (double)x[i];
            norm2 += (double)x[i] * (double)x[i];
            err += d * d;
        }
        for (j = 0; j < k; j++) {
            sw2 += (double)w[j] * (double)w[j];
            sabs += fabs((double)w[j]);
            CHECK(fabs((double)out[idx[j]]) == sc && (out[idx[j]] < 0.0f) == (w[j] < 0.0f));
        }
        sel = norm2 - sw2;
        mu = sabs / (double)k;
        want = sel + sw2 - (double)k * mu * mu + (double)k * (sc - mu) * (sc - mu);
        if (dq_t_verbose())
            printf("  ternary n %lu k %lu: error %.6g, ||c||^2 - k mu^2 %.6g, selection %.6g\n", (unsigned long)n,
                   (unsigned long)k, err, norm2 - (double)k * mu * mu, sel);
        CHECKF(fabs(err - want) <= 1e-9 * norm2, "error %.9g formula %.9g", err, want);
        CHECKF(fabs(sc - mu) <= 6e-8 * mu, "scale %.9g mean %.9g", sc, mu); /* float rounding, and double sums */
        CHECK(err <= norm2 - (double)k * mu * mu + 1e-6 * norm2);
        free(x);
        free(out);
        free(idx);
        free(w);
        free(m);
    }
}

/* Stochastic rounding at b bits: over dither draws (steps), the mean quantization error of the
 * sent values is sum scale^2 f (1 - f) / s^2 (FORMAT 20.10), and the total error is the
 * selection error plus it; within 5 standard errors of the Monte Carlo mean. */
static void test_quant_variance(void) {
    const size_t n = 2000, k = 100;
    const unsigned T = 1500;
    dq_t_rng r = {106};
    float *x = (float *)xmalloc(n * sizeof *x), *out = (float *)xmalloc(n * sizeof *out);
    uint32_t *idx = (uint32_t *)xmalloc(n * sizeof *idx);
    float *w = (float *)xmalloc(n * sizeof *w);
    unsigned b;
    gen(&r, 0, x, n);
    for (b = 2; b <= 6; b += 2) {
        dq_params p = cparams(DQ_SCHEME_TOPK, k, b, DQ_CODER_FIXED_ONLY, 0);
        double want = 0.0, sel = 0.0, s1 = 0.0, s2 = 0.0, mean, se, smax = (double)((1u << (b - 1)) - 1u);
        size_t i, j, len = 0;
        unsigned t;
        uint8_t buf[4096];
        p.bucket = 16;
        ref_select(&p, x, n, idx, w);
        CHECK(dq_encode(&p, x, n, NULL, buf, sizeof buf, &len) == DQ_OK);
        for (i = 0; i < n; i++) sel += (double)x[i] * (double)x[i];
        for (j = 0; j < k; j++) sel -= (double)w[j] * (double)w[j];
        for (j = 0; j < k; j++) { /* the scales do not depend on the dither */
            double sc = (double)dq_t_bitsf(ld32(buf + values_at(buf) + 4u * (j / 16))), u, f;
            u = fabs((double)w[j]) * smax / sc;
            f = u - floor(u);
            want += sc * sc * f * (1.0 - f) / (smax * smax);
        }
        for (t = 0; t < T; t++) {
            double d = 0.0;
            p.step = 1000 + t;
            if (dq_encode(&p, x, n, NULL, buf, sizeof buf, &len) != DQ_OK || dq_decode(buf, len, out, n) != DQ_OK) {
                CHECK(0);
                break;
            }
            for (i = 0; i < n; i++) d += ((double)out[i] - (double)x[i]) * ((double)out[i] - (double)x[i]);
            d -= sel;
            s1 += d;
            s2 += d * d;
        }
        mean = s1 / T;
        se = sqrt((s2 / T - mean * mean) / T);
        if (dq_t_verbose())
            printf("  %u bits: E quantization error %.5g, formula %.5g (se %.2g), selection %.5g\n", b, mean, want, se, sel);
        CHECKF(fabs(mean - want) < 5.0 * se, "%u bits: %.6g vs %.6g (se %.3g)", b, mean, want, se);
    }
    free(x);
    free(out);
    free(idx);
    free(w);
}

/* Rescaled random-k with stochastic rounding is unbiased: the mean of the decoded vectors over
 * steps is c, coordinate by coordinate within 5.5 standard errors (sample variance), and the
 * sum of the squared z-scores is within 6 standard deviations of its chi-square mean. */
static void test_randk_unbiased(void) {
    const size_t n = 403, k = 10;
    const unsigned T = 20000;
    dq_t_rng r = {107};
    float *x = (float *)xmalloc(n * sizeof *x), *out = (float *)xmalloc(n * sizeof *out);
    double *s1 = (double *)xmalloc(n * sizeof *s1), *s2 = (double *)xmalloc(n * sizeof *s2), zmax = 0.0, chi = 0.0;
    size_t i, len = 0;
    unsigned t;
    uint8_t buf[1024];
    for (i = 0; i < n; i++) {
        x[i] = (float)dq_t_gauss(&r) + 0.2f;
        s1[i] = s2[i] = 0.0;
    }
    for (t = 0; t < T; t++) {
        dq_params p = cparams(DQ_SCHEME_RANDK, k, 3, DQ_CODER_FIXED_ONLY, 0);
        p.unbiased = 1;
        p.step = t;
        p.bucket = DQ_BUCKET_WHOLE;
        if (dq_encode(&p, x, n, NULL, buf, sizeof buf, &len) != DQ_OK || dq_decode(buf, len, out, n) != DQ_OK) {
            CHECK(0);
            break;
        }
        for (i = 0; i < n; i++) {
            s1[i] += (double)out[i];
            s2[i] += (double)out[i] * (double)out[i];
        }
    }
    for (i = 0; i < n; i++) {
        double mean = s1[i] / T, var = s2[i] / T - mean * mean, z = (mean - (double)x[i]) / sqrt(var / T);
        chi += z * z;
        if (fabs(z) > zmax) zmax = fabs(z);
    }
    if (dq_t_verbose()) printf("  randk rescaled 3 bits: max |z| %.2f, chi^2 %.1f over %lu\n", zmax, chi, (unsigned long)n);
    CHECKF(zmax < 5.5, "max |z| %.2f", zmax);
    CHECKF(fabs(chi - (double)n) < 6.0 * sqrt(2.0 * (double)n), "chi^2 %.1f over %lu", chi, (unsigned long)n);
    free(x);
    free(out);
    free(s1);
    free(s2);
}

/* ---- least squares: W workers, each with its rows of an inconsistent system, send their
 * compressed gradient steps; the sum updates w. At the solution the workers' gradients are not
 * zero, only their sum is, so without memory the compressed steps do not cancel there and w
 * settles elsewhere; with the error-feedback memory (a contractive compressor: top-k with the
 * max-norm 2-bit or the ternary values) it reaches the solution. */
#define LS_D 40
#define LS_ROWS 400
#define LS_W 4
static void ls_run(const float *A, const float *b, unsigned T, float lr, const dq_params *p, int mem, float *w) {
    float g[LS_D], upd[LS_D], *e = (float *)xmalloc(LS_W * LS_D * sizeof *e);
    uint8_t buf[4096];
    unsigned t, q;
    size_t i, j;
    for (j = 0; j < LS_D; j++) w[j] = 0.0f;
    for (j = 0; j < LS_W * LS_D; j++) e[j] = 0.0f;
    for (t = 0; t < T; t++) {
        for (j = 0; j < LS_D; j++) upd[j] = 0.0f;
        for (q = 0; q < LS_W; q++) {
            size_t len = 0;
            dq_params pq = *p;
            for (j = 0; j < LS_D; j++) g[j] = 0.0f;
            for (i = q * LS_ROWS / LS_W; i < (q + 1) * LS_ROWS / LS_W; i++) {
                double s = 0.0;
                for (j = 0; j < LS_D; j++) s += (double)A[i * LS_D + j] * (double)w[j];
                s -= (double)b[i];
                for (j = 0; j < LS_D; j++) g[j] += (float)(s * (double)A[i * LS_D + j] / (double)LS_ROWS);
            }
            for (j = 0; j < LS_D; j++) g[j] = lr * g[j];
            pq.step = t;
            pq.stream = q;
            if (!p->k) { /* the uncompressed reference */
                for (j = 0; j < LS_D; j++) upd[j] += g[j];
                continue;
            }
            if (dq_encode(&pq, g, LS_D, mem ? e + q * LS_D : NULL, buf, sizeof buf, &len) != DQ_OK ||
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
static double ls_dist(const float *w, const float *wref) {
    double d = 0.0, nr = 0.0;
    size_t j;
    for (j = 0; j < LS_D; j++) {
        d += ((double)w[j] - (double)wref[j]) * ((double)w[j] - (double)wref[j]);
        nr += (double)wref[j] * (double)wref[j];
    }
    return sqrt(d / nr);
}
static void test_least_squares(void) {
    float *A = (float *)xmalloc(LS_ROWS * LS_D * sizeof *A), b[LS_ROWS], w[LS_D], wref[LS_D];
    dq_t_rng r = {108};
    size_t i, v;
    dq_params full;
    memset(&full, 0, sizeof full);
    for (i = 0; i < LS_ROWS * LS_D; i++) A[i] = (float)dq_t_gauss(&r);
    for (i = 0; i < LS_ROWS; i++) b[i] = (float)dq_t_gauss(&r);
    ls_run(A, b, 1000, 0.1f, &full, 0, wref); /* gradient descent: converged (0.975^1000 < 1e-10) */
    for (v = 0; v < 2; v++) {
        dq_params p = cparams(DQ_SCHEME_TOPK, 5, v ? 1u : 2u, DQ_CODER_DEFAULT, 0);
        double with, without;
        p.rounding = DQ_ROUND_NEAREST;
        p.bucket = DQ_BUCKET_WHOLE;
        p.norm = v ? DQ_NORM_DEFAULT : DQ_NORM_MAX; /* 1 bit nearest: the mean (ternary) */
        ls_run(A, b, 3000, 0.01f, &p, 1, w);
        with = ls_dist(w, wref);
        ls_run(A, b, 3000, 0.01f, &p, 0, w);
        without = ls_dist(w, wref);
        if (dq_t_verbose())
            printf("  least squares, %d workers, top-5 of %d %s: distance with memory %.3g, without %.3g\n", LS_W, LS_D,
                   v ? "ternary" : "2 bits max-norm", with, without);
        CHECKF(with < 0.05, "%s with memory %.3g", v ? "ternary" : "2 bits", with);
        CHECKF(without > 0.3, "%s without memory %.3g", v ? "ternary" : "2 bits", without);
    }
    free(A);
}

/* ---- untrusted messages */
/* Every truncation and every single-byte change (three flips) of m: a status, never a crash (ASan),
 * the output untouched whenever the status is an error; with the checksum every change is an
 * error. */
static void abuse(const uint8_t *m, size_t len, size_t n, int cs) {
    float *out = (float *)xmalloc(n * sizeof *out);
    size_t cut, pos, i, touched = 0, accepted = 0;
    for (cut = 0; cut < len; cut++) {
        uint8_t *t = bdup(m, cut);
        dq_header h;
        for (i = 0; i < n; i++) out[i] = 9.0f;
        CHECKF(dq_decode(t, cut, out, n) != DQ_OK, "cut %lu", (unsigned long)cut);
        CHECK(dq_decode_add(t, cut, 1.0f, out, n) != DQ_OK);
        for (i = 0; i < n && out[i] == 9.0f; i++) {}
        touched += i != n;
        (void)dq_header_read(t, cut, &h);
        free(t);
    }
    for (pos = 0; pos < len; pos++) {
        static const uint8_t flips[3] = {0x01, 0x80, 0xFF};
        int f;
        for (f = 0; f < 3; f++) {
            uint8_t *t = bdup(m, len);
            dq_status st;
            t[pos] ^= flips[f];
            if (pos < 44) resign(t); /* header fields reach the checks past the CRC */
            for (i = 0; i < n; i++) out[i] = 9.0f;
            st = dq_decode(t, len, out, n);
            if (st != DQ_OK) {
                for (i = 0; i < n && out[i] == 9.0f; i++) {}
                touched += i != n;
            } else {
                accepted++;
                for (i = 0; i < n; i++)
                    if (out[i] != out[i] || out[i] - out[i] != 0.0f) touched++; /* a NaN or Inf accepted */
                if (t[7] <= 16 && ld64(t + 48) && t[6] == m[6]) { /* composed: its values' QSGD message is valid too */
                    size_t vl = 0;
                    uint8_t *vm = virtual_qsgd(t, len, &vl);
                    size_t kk = (size_t)ld64(t + 48);
                    float *vo = (float *)xmalloc(kk * sizeof *vo);
                    CHECKF(dq_decode(vm, vl, vo, kk) == DQ_OK, "pos %lu: values accepted, QSGD refuses them",
                           (unsigned long)pos);
                    free(vo);
                    free(vm);
                }
            }
            if (cs && pos >= 48) CHECKF(st != DQ_OK, "pos %lu flip %d decoded", (unsigned long)pos, f);
            (void)dq_verify(t, len);
            free(t);
        }
    }
    CHECKF(touched == 0, "%lu rejected messages touched the output (or accepted a non-finite value)",
           (unsigned long)touched);
    (void)accepted;
    free(out);
}
static void test_untrusted(void) {
    /* scheme, k (0: threshold 3, 1: threshold 1e30, nothing kept), bits, coder asked and sent, data */
    static const struct {
        dq_scheme sc;
        size_t k;
        unsigned bits, coder, sent;
        int kind;
    } cases[] = {{DQ_SCHEME_TOPK, 20, 3, DQ_CODER_FIXED_ONLY, 0, 2},  {DQ_SCHEME_TOPK, 300, 4, DQ_CODER_ELIAS, 1, 1},
                 {DQ_SCHEME_TOPK, 600, 6, DQ_CODER_RANS, 3, 0},        {DQ_SCHEME_RANDK, 600, 7, DQ_CODER_RANS, 3, 0},
                 {DQ_SCHEME_RANDK, 40, 1, DQ_CODER_FIXED_ONLY, 0, 0},  {DQ_SCHEME_THRESHOLD, 0, 2, DQ_CODER_AUTO, 1, 1},
                 {DQ_SCHEME_THRESHOLD, 1, 5, DQ_CODER_DEFAULT, 0, 2}};
    const size_t n = 2000;
    dq_t_rng r = {109};
    float *x = (float *)xmalloc(n * sizeof *x);
    size_t v;
    for (v = 0; v < 2 * sizeof cases / sizeof cases[0]; v++) {
        unsigned cs = (unsigned)(v % 2);
        size_t c = v / 2, len = 0;
        dq_params p = cparams(cases[c].sc, cases[c].sc == DQ_SCHEME_THRESHOLD ? 0 : cases[c].k, cases[c].bits,
                              cases[c].coder, (unsigned)(v % 5));
        dq_status st;
        uint8_t *m;
        gen(&r, cases[c].kind, x, n);
        p.checksum = cs;
        p.threshold = cases[c].sc != DQ_SCHEME_THRESHOLD ? 0.0f : cases[c].k ? 1e30f : 3.0f;
        p.unbiased = cases[c].sc == DQ_SCHEME_RANDK && cs;
        p.bucket = v % 4 < 2 ? 64 : 0;
        m = encode(&p, x, n, NULL, 0, &len, &st);
        CHECK(st == DQ_OK);
        if (!m) continue;
        CHECKF(m[8] == cases[c].sent, "case %lu sent coder %u", (unsigned long)c, m[8]);
        abuse(m, len, n, (int)cs);
        free(m);
    }
    free(x);
}

/* Fields a decoder must refuse in a composed message (the header re-signed). */
static void test_malformed(void) {
    const size_t n = 64;
    float x[64], out[64];
    uint8_t m[2048], t[2048];
    size_t len = 0, i, at;
    dq_header h;
    int f;
    dq_t_rng r = {110};
    dq_params p = cparams(DQ_SCHEME_TOPK, 9, 3, DQ_CODER_FIXED_ONLY, DQ_INDEX_VARINT);
    gen(&r, 0, x, n);
    p.bucket = 8;
    CHECK(dq_encode(&p, x, n, NULL, m, sizeof m, &len) == DQ_OK && m[8] == 0);
    at = values_at(m);
    for (f = 0; f < 14; f++) {
        size_t tl = len;
        dq_status want = DQ_ERR_CORRUPT;
        memcpy(t, m, len);
        switch (f) {
            case 0: t[7] = 17; break;                    /* a width neither 32 nor 1..16 */
            case 1: t[8] = 2; break;                     /* coder 2: never in a composed message */
            case 2: t[8] = 4; break;                     /* no such coder */
            case 3: t[7] = 1; t[8] = 1; break;           /* Elias needs 2 bits */
            case 4: t[7] = 9; t[8] = 3; break;           /* rANS at most 8 */
            case 5: t[9] = 3; break;                     /* norm 3 */
            case 6: t[12] = 12; break;                   /* bucket not a multiple of 8 */
            case 7: t[10] |= 8; break;                   /* flag bit 3 */
            case 8: t[10] |= 4; break;                   /* rescaled: random-k only */
            case 9: dq_t_st32(t + at, 0x80000000u); break; /* a negative scale */
            case 10: dq_t_st32(t + at, 0x7F800000u); break; /* an infinite scale */
            case 11: t[len - 1] |= 0x80; break;          /* 9 codes of 3 bits: 27 bits, the 28th is padding */
            case 12: t[8] = 3; want = DQ_ERR_TRUNCATED; tl = at + 4; break; /* coded: the length cut */
            default: t[8] = 3; dq_t_st64(t + at, 1u << 20); break; /* a coded length above rANS's bound */
        }
        if (f < 9 || f >= 12) resign(t);
        /* header fields: refused by the header reader itself, not only by the payload's decoder */
        if (f < 9) CHECKF(dq_header_read(t, tl, &h) == DQ_ERR_CORRUPT, "field %d: the header reader took it", f);
        for (i = 0; i < n; i++) out[i] = 9.0f;
        CHECKF(dq_decode(t, tl, out, n) == want, "field %d: %s", f, dq_strerror(dq_decode(t, tl, out, n)));
        for (i = 0; i < n && out[i] == 9.0f; i++) {}
        CHECKF(i == n, "field %d touched the output", f);
    }
    /* k = 0 with a coder other than 0 */
    {
        dq_params q = cparams(DQ_SCHEME_THRESHOLD, 0, 4, DQ_CODER_DEFAULT, 0);
        q.threshold = 1e30f;
        CHECK(dq_encode(&q, x, n, NULL, m, sizeof m, &len) == DQ_OK && ld64(m + 48) == 0 && m[8] == 0 && m[7] == 4);
        CHECK(dq_decode(m, len, out, n) == DQ_OK);
        memcpy(t, m, len);
        t[8] = 1;
        resign(t);
        CHECK(dq_decode(t, len, out, n) == DQ_ERR_CORRUPT && dq_header_read(t, len, &h) == DQ_ERR_CORRUPT);
    }
    /* header sizes: a coded message's length field */
    {
        dq_params q = cparams(DQ_SCHEME_RANDK, 30, 2, DQ_CODER_RANS, 0);
        float y[64];
        for (i = 0; i < 64; i++) y[i] = (float)(i % 5) - 2.0f;
        CHECK(dq_encode(&q, y, 64, NULL, m, sizeof m, &len) == DQ_OK);
        if (m[8] == DQ_CODER_RANS) {
            CHECK(dq_header_read(m, 63, &h) == DQ_ERR_TRUNCATED);
            CHECK(dq_header_read(m, 64, &h) == DQ_OK && h.msg_size == len && h.payload_size == len - 56);
            memcpy(t, m, len); /* coder 2 in the same layout: refused, never in a composed message */
            t[8] = DQ_CODER_RANS8;
            resign(t);
            CHECK(dq_header_read(t, len, &h) == DQ_ERR_CORRUPT);
        }
    }
}

/* ---- parameters and capacities */
static void test_params(void) {
    float x[64];
    uint8_t buf[4096];
    size_t len = 0, size = 0, i;
    int f;
    for (i = 0; i < 64; i++) x[i] = (float)i - 20.0f;
    for (f = 0; f < 14; f++) {
        dq_params p = cparams(DQ_SCHEME_TOPK, 5, 4, DQ_CODER_DEFAULT, 0);
        dq_status want = DQ_ERR_PARAM;
        switch (f) {
            case 0: p.bits = 17; want = DQ_ERR_BITS; break;
            case 1: p.bits = 31; want = DQ_ERR_BITS; break;
            case 2: p.bucket = 12; break;
            case 3: p.norm = DQ_NORM_MEAN; break;
            case 4: p.rounding = (dq_rounding)3; break;
            case 5: p.bits = 1; p.coder = DQ_CODER_ELIAS; break;
            case 6: p.bits = 9; p.coder = DQ_CODER_RANS; break;
            case 7: p.coder = 7; break;
            case 8: p.alpha = 1.0f; break;
            case 9: p.checksum = 2; break;
            case 10: p.unbiased = 1; break; /* top-k */
            case 11: p.bits = 16; p.coder = DQ_CODER_ELIAS; want = DQ_OK; break;
            case 12: p.bits = 1; p.rounding = DQ_ROUND_NEAREST; p.bucket = DQ_BUCKET_WHOLE; want = DQ_OK; break;
            default: p.bits = 8; p.coder = DQ_CODER_RANS8; p.norm = DQ_NORM_MAX; want = DQ_OK; break;
        }
        CHECKF(dq_encode_capacity(&p, 64, &size) == want, "field %d", f);
        CHECKF(dq_encode(&p, x, 64, NULL, buf, sizeof buf, &len) == want, "field %d", f);
    }
}

/* dq_encode_capacity() against FORMAT 20.7: the QSGD capacity of k values, 48 bytes fewer, plus
 * the index bound, the gathered values and the index list; the message within it. */
static uint64_t spec_ibound(uint64_t k, uint64_t n, unsigned coder) { /* FORMAT 18.7, 20.7 */
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
    if (coder) return 10 + (coder == 1 ? g : coder == 2 ? v : coder == 3 ? b : rb);
    best = g < v ? g : v;
    best = best < b ? best : b;
    return 10 + (best < rb ? best : rb);
}
static void test_capacity(void) {
    static const size_t ns[] = {10, 1000, 70000};
    static const unsigned coders[] = {DQ_CODER_DEFAULT, DQ_CODER_FIXED_ONLY, DQ_CODER_ELIAS, DQ_CODER_AUTO};
    dq_t_rng r = {111};
    size_t a;
    for (a = 0; a < 3; a++) {
        size_t n = ns[a], c;
        float *x = (float *)xmalloc(n * sizeof *x);
        gen(&r, 1, x, n);
        for (c = 0; c < 4; c++) {
            int s;
            for (s = 0; s < 3; s++) {
                dq_scheme sc = s == 0 ? DQ_SCHEME_TOPK : s == 1 ? DQ_SCHEME_RANDK : DQ_SCHEME_THRESHOLD;
                size_t k = sc == DQ_SCHEME_THRESHOLD ? n : 1 + n / 10, cap = 0, qcap = 0, len = 0;
                dq_params p = cparams(sc, sc == DQ_SCHEME_THRESHOLD ? 0 : k, 5, coders[c], (unsigned)((c + (size_t)s) % 5u));
                dq_params q = qparams(&p);
                uint64_t want;
                dq_status st;
                uint8_t *m;
                p.checksum = c == 1;
                q.checksum = p.checksum;
                if (sc == DQ_SCHEME_THRESHOLD) p.threshold = 0.5f;
                CHECK(dq_encode_capacity(&p, n, &cap) == DQ_OK && dq_encode_capacity(&q, k, &qcap) == DQ_OK);
                want = sc == DQ_SCHEME_RANDK ? 8 + qcap + 4 * (uint64_t)k + 4
                                             : 64 + spec_ibound(k, n, p.index_coder) - 48 + qcap + 8 * (uint64_t)k + 4;
                CHECKF(cap == want, "n %lu scheme %d coder %u: capacity %lu, spec %llu", (unsigned long)n, (int)sc,
                       coders[c], (unsigned long)cap, (unsigned long long)want);
                m = encode(&p, x, n, NULL, cap, &len, &st); /* fits whatever the data */
                CHECK(st == DQ_OK && len <= cap);
                free(m);
            }
        }
        free(x);
    }
}

/* ---- the rate model against real encodes. Gaussian and heavy-tailed (x e^(2 z)) vectors, 2^18
 * elements, densities 0.2%, 1%, 5% (k from 524 to 13107: fixed and coded values):
 * exact: k, the index stream's bytes, the float32 message (size; its error is the selection
 * error), the 1-bit nearest message with one scale (size and error);
 * widths 2..8, stochastic rounding, buckets of 512: the message size against the mean over T
 * dither seeds within 1.5% of the values part (measured within 0.9% on these and Student-t
 * vectors at 2^20), and the quantization error within 5 standard errors of the Monte Carlo mean
 * plus 1.2% of the predicted value (dq_rd_measure's accuracy up to 16 bits). */
static void test_rd_sparse(void) {
    static const double dens[3] = {0.002, 0.01, 0.05};
    const size_t n = (size_t)1 << 18;
    const unsigned T = 24;
    float *x = (float *)xmalloc(n * sizeof *x), *out = (float *)xmalloc(n * sizeof *out);
    size_t wsz = dq_rd_sparse_work_size(n, n / 20 + 1), i, j;
    void *wk = xmalloc(wsz);
    int kind;
    double worst_bits = 0.0, worst_whole = 0.0, worst_err = 0.0, worst_rest = 0.0; /* rest: but 0.2% at 2 bits */
    for (kind = 0; kind < 2; kind++) {
        dq_t_rng r = {112u + (unsigned)kind};
        dq_rd_sparse rs[3], rn[3];
        dq_params p = cparams(DQ_SCHEME_TOPK, 0, 0, DQ_CODER_DEFAULT, 0);
        for (i = 0; i < n; i++) x[i] = (float)(dq_t_gauss(&r) * (kind ? exp(2.0 * dq_t_gauss(&r)) : 1.0));
        CHECK(dq_rd_sparse_measure(&p, x, NULL, n, dens, 3, wk, wsz, rs) == DQ_OK);
        p.rounding = DQ_ROUND_NEAREST;
        p.bucket = DQ_BUCKET_WHOLE;
        CHECK(dq_rd_sparse_measure(&p, x, NULL, n, dens, 3, wk, wsz, rn) == DQ_OK);
        for (j = 0; j < 3; j++) {
            unsigned b;
            for (b = 0; b <= 8; b++) {
                dq_params q = cparams(DQ_SCHEME_TOPK, rs[j].k, b, DQ_CODER_DEFAULT, 0);
                double s1 = 0.0, s2 = 0.0, sb = 0.0, mean, se, pe, pb, vpart;
                const dq_rd_sparse *o = b == 1 ? &rn[j] : &rs[j];
                unsigned t, reps = b >= 2 ? T : 1u;
                size_t cap = 0, len = 0;
                uint8_t *buf;
                if (b == 1) {
                    q.rounding = DQ_ROUND_NEAREST;
                    q.bucket = DQ_BUCKET_WHOLE;
                }
                CHECK(dq_encode_capacity(&q, n, &cap) == DQ_OK);
                buf = (uint8_t *)xmalloc(cap);
                for (t = 0; t < reps; t++) {
                    double e = 0.0;
                    q.step = 77 + t;
                    if (dq_encode(&q, x, n, NULL, buf, cap, &len) != DQ_OK || dq_decode(buf, len, out, n) != DQ_OK) {
                        CHECK(0);
                        break;
                    }
                    for (i = 0; i < n; i++) e += ((double)out[i] - (double)x[i]) * ((double)out[i] - (double)x[i]);
                    s1 += e;
                    s2 += e * e;
                    sb += 8.0 * (double)len;
                }
                mean = s1 / reps;
                sb /= reps;
                pe = o->err[b];
                pb = o->bits[b];
                CHECK(o->k == (size_t)(dens[j] * (double)n + 0.5) && o->index_bytes == (size_t)ld64(buf + 56));
                if (b <= 1) { /* exact */
                    CHECKF(pb == sb, "kind %d density %g width %u: %.0f bits predicted, %.0f sent", kind, dens[j], b,
                           pb, sb);
                    CHECKF(fabs(pe - mean) <= 1e-9 * mean, "kind %d density %g width %u: error %.9g, real %.9g", kind,
                           dens[j], b, pe, mean);
                    if (b == 0) CHECK(fabs(o->sel_err - mean) <= 1e-9 * mean);
                } else {
                    se = sqrt((s2 / reps - mean * mean) / reps);
                    vpart = sb - 8.0 * (double)(64 + o->index_bytes);
                    if (fabs(pb - sb) / vpart > worst_bits) worst_bits = fabs(pb - sb) / vpart;
                    if (fabs(pb - sb) / sb > worst_whole) worst_whole = fabs(pb - sb) / sb;
                    if (fabs(pe - mean) / (pe - o->sel_err) > worst_err) worst_err = fabs(pe - mean) / (pe - o->sel_err);
                    if ((j || b > 2) && fabs(pe - mean) / (pe - o->sel_err) > worst_rest)
                        worst_rest = fabs(pe - mean) / (pe - o->sel_err);
                    CHECKF(fabs(pb - sb) <= 0.015 * vpart, "kind %d density %g width %u: %.0f bits predicted, %.0f mean",
                           kind, dens[j], b, pb, sb);
                    CHECKF(fabs(pe - mean) <= 5.0 * se + 0.012 * (pe - o->sel_err),
                           "kind %d density %g width %u: error %.6g predicted, %.6g mean (se %.3g)", kind, dens[j], b, pe,
                           mean, se);
                }
                free(buf);
            }
        }
    }
    if (dq_t_verbose())
        printf("  rate model: worst size error %.3f%% of the values part (%.3f%% of the message), worst error %.3f%% "
               "of the quantization error (%.3f%% but at 0.2%% and 2 bits)\n",
               100.0 * worst_bits, 100.0 * worst_whole, 100.0 * worst_err, 100.0 * worst_rest);
    { /* with a residual: the model of x + residual */
        dq_rd_sparse a, b2;
        dq_params p = cparams(DQ_SCHEME_TOPK, 0, 0, DQ_CODER_DEFAULT, DQ_INDEX_VARINT);
        float *e = (float *)xmalloc(n * sizeof *e), *c = (float *)xmalloc(n * sizeof *c);
        dq_t_rng r = {114};
        double d = 0.01;
        for (i = 0; i < n; i++) {
            e[i] = (float)dq_t_gauss(&r) * 0.3f;
            c[i] = x[i] + e[i];
        }
        CHECK(dq_rd_sparse_measure(&p, x, e, n, &d, 1, wk, wsz, &a) == DQ_OK);
        CHECK(dq_rd_sparse_measure(&p, c, NULL, n, &d, 1, wk, wsz, &b2) == DQ_OK);
        CHECK(memcmp(&a, &b2, sizeof a) == 0);
        CHECK(dq_rd_sparse_measure(&p, x, e, n, &d, 1, wk, dq_rd_sparse_work_size(n, a.k) - 1u, &a) == DQ_ERR_WORKSPACE);
        CHECK(dq_rd_sparse_measure(&p, x, e, n, &d, 1, wk, dq_rd_sparse_work_size(n, a.k), &a) == DQ_OK);
        d = 0.0;
        CHECK(dq_rd_sparse_measure(&p, x, e, n, &d, 1, wk, wsz, &a) == DQ_ERR_PARAM);
        d = 0.01;
        p.scheme = DQ_SCHEME_RANDK;
        CHECK(dq_rd_sparse_measure(&p, x, e, n, &d, 1, wk, wsz, &a) == DQ_ERR_PARAM);
        p.scheme = DQ_SCHEME_TOPK;
        c[5] = (float)NAN;
        CHECK(dq_rd_sparse_measure(&p, c, NULL, n, &d, 1, wk, wsz, &a) == DQ_ERR_NONFINITE);
        free(e);
        free(c);
    }
    free(x);
    free(out);
    free(wk);
}

int main(void) {
    RUN(test_known_answers);
    RUN(test_equals_qsgd);
    RUN(test_widths_coders);
    RUN(test_ef_identity);
    RUN(test_failures);
    RUN(test_ternary);
    RUN(test_quant_variance);
    RUN(test_randk_unbiased);
    RUN(test_least_squares);
    RUN(test_untrusted);
    RUN(test_malformed);
    RUN(test_params);
    RUN(test_capacity);
    RUN(test_rd_sparse);
    return dq_t_finish();
}
