/* fuzz_sparse.c - the sparse messages (top-k, random-k, threshold), float32 and composed
 * (quantized values, doc/FORMAT.md 20.10), on untrusted bytes.
 * 1. The input as a message, as given and again with its header CRC and payload checksum made
 *    right (so mutated fields reach the decoder), if it is one of these schemes (the other
 *    schemes have their own targets): header reader, verify, decode, decode-add
 *    must never crash or read or write out of bounds (ASan; outputs are exact-size heap
 *    buffers); decode and decode-add agree on the status; a rejected message leaves both
 *    outputs untouched; an accepted one decodes to at most nnz finite nonzeros, and decode-add
 *    gives acc + 0.5 * decode bit for bit; an accepted composed message's values part, under a
 *    QSGD header of its fields, is accepted by the QSGD decoder and gives the values decoded at
 *    the indices (its index stream, or random-k's strata).
 * 2. The input as a recipe: byte 0 picks the scheme (byte 0 mod 3) and, as byte 0 / 3, the
 *    width (mod 17: 0 float32 values, else 1..16 bits) and the values' coder (/ 17: default,
 *    fixed, Elias, rANS, AUTO, default); byte 1 the options (checksum, rescaling, index coder,
 *    k mode, residual; bit 6 a whole bucket, else 8 to 64 values by byte 2; bit 7 nearest
 *    rounding), bytes 2..5 k (or the threshold's bits; bit 3 of byte 2: the max norm), the rest
 *    float32 values (x, and with a residual its second half as e). The selection must agree
 *    with a brute-force reference: top-k by sorting (ties to the lower index), threshold by
 *    scanning, random-k one kept element per stratum; float32 values are c (c * m rescaled),
 *    quantized ones what the QSGD message of the gathered values decodes to; the residual must
 *    become c - decoded bit for bit, and stay untouched when the encode fails (NaN or Inf in
 *    x + e, a scale or rescale beyond the float range, an invalid parameter).
 * Build: make fuzz (libFuzzer) or the replay driver in make test. */
#include <stdlib.h>
#include <string.h>

#include "dqsgd.h"
#include "../internals.h"

#define FUZZ_MAX_COUNT (1u << 20) /* keep allocations small */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t fb(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
/* little-endian stores and loads (the wire format) */
static void fz_st32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static uint64_t fz_ld64(const uint8_t *p) {
    uint64_t v = 0;
    unsigned i;
    for (i = 8; i-- > 0;) v = v << 8 | p[i];
    return v;
}
static void fz_st64(uint8_t *p, uint64_t v) {
    unsigned i;
    for (i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* The indices of an accepted sparse message m (n elements, k values) into idx. */
static void indices_of(const uint8_t *m, size_t n, size_t k, uint32_t *idx) {
    size_t k2 = 0, j;
    if (m[6] == DQ_SCHEME_RANDK) {
        dqt_sp_strata s;
        dqt_sp_strata_init(&s, n, k, fz_ld64(m + 24), fz_ld64(m + 32), (uint32_t)(m[40] | m[41] << 8 | m[42] << 16 | (uint32_t)m[43] << 24));
        for (j = 0; j < k; j++) idx[j] = (uint32_t)dqt_sp_strata_next(&s, (uint32_t)j);
    } else if (dq_index_decode(m + 64, (size_t)fz_ld64(m + 56), idx, k, &k2) != DQ_OK || k2 != k) {
        abort(); /* the message was accepted: its stream is valid */
    }
}
/* An accepted composed message m[0..len) (n elements, k >= 1 values, decoded to dec): its values
 * part under a QSGD header of its fields (count k, step XOR 2^63, no checksum) decodes, and to
 * dec at the indices. */
static void check_values(const uint8_t *m, size_t len, size_t n, size_t k, const float *dec) {
    size_t at = m[6] == DQ_SCHEME_RANDK ? 56u : 64u + (size_t)fz_ld64(m + 56), cs = (m[10] & 2u) ? 4u : 0u, j;
    size_t vlen = len - cs - at;
    uint8_t *q = (uint8_t *)malloc(48 + vlen);
    uint32_t *idx = (uint32_t *)malloc((k + 1) * sizeof *idx);
    float *v = (float *)malloc(k * sizeof *v);
    if (!q || !idx || !v) abort();
    memcpy(q, m, 48);
    q[6] = DQ_SCHEME_QSGD;
    q[10] = (uint8_t)(m[10] & 1u);
    q[11] = 0;
    fz_st64(q + 16, k);
    fz_st64(q + 32, fz_ld64(m + 32) ^ ((uint64_t)1 << 63));
    fz_st32(q + 44, dqt_crc32c(q, 44));
    memcpy(q + 48, m + at, vlen);
    if (dq_decode(q, 48 + vlen, v, k) != DQ_OK) abort(); /* the sparse decoder took what QSGD refuses */
    indices_of(m, n, k, idx);
    for (j = 0; j < k; j++)
        if (fb(v[j]) != fb(dec[idx[j]])) abort();
    free(q);
    free(idx);
    free(v);
}

static void fuzz_decode(const uint8_t *data, size_t size) {
    dq_header h;
    float *out, *acc;
    size_t i, nz = 0;
    dq_status s1, s2;
    if (dq_header_read(data, size, &h) != DQ_OK) return;
    (void)dq_verify(data, size);
    if (h.count > FUZZ_MAX_COUNT || h.scheme < DQ_SCHEME_TOPK || h.scheme > DQ_SCHEME_THRESHOLD) return;
    out = (float *)malloc(h.count * sizeof *out);
    acc = (float *)malloc(h.count * sizeof *acc);
    if (!out || !acc) abort();
    for (i = 0; i < h.count; i++) {
        out[i] = 7.0f;
        acc[i] = (float)i - 3.5f;
    }
    s1 = dq_decode(data, size, out, h.count);
    s2 = dq_decode_add(data, size, 0.5f, acc, h.count);
    if (s1 != s2) abort();
    for (i = 0; i < h.count; i++) {
        if (s1 != DQ_OK) {
            if (fb(out[i]) != fb(7.0f) || fb(acc[i]) != fb((float)i - 3.5f)) abort(); /* untouched */
            continue;
        }
        if (out[i] != out[i] || out[i] - out[i] != 0.0f) abort(); /* NaN or Inf */
        nz += out[i] != 0.0f;
        if (fb(acc[i]) != fb(((float)i - 3.5f) + 0.5f * out[i])) abort();
    }
    if (s1 == DQ_OK && nz > h.nnz) abort();
    if (s1 == DQ_OK && h.bits <= 16u && h.nnz) check_values(data, h.msg_size, h.count, h.nnz, out);
    free(out);
    free(acc);
}

/* a copy with the header CRC and, when flagged, the payload checksum recomputed */
static void fuzz_resigned(const uint8_t *data, size_t size) {
    uint8_t *m;
    dq_header h;
    if (size < DQ_HEADER_SIZE) return;
    m = (uint8_t *)malloc(size);
    if (!m) abort();
    memcpy(m, data, size);
    fz_st32(m + 44, dqt_crc32c(m, 44));
    if (dq_header_read(m, size, &h) == DQ_OK && (h.flags & DQ_FLAG_CHECKSUM) && h.msg_size <= size &&
        h.msg_size >= DQ_HEADER_SIZE + 4u)
        fz_st32(m + h.msg_size - 4u, dqt_crc32c(m + DQ_HEADER_SIZE, h.msg_size - DQ_HEADER_SIZE - 4u));
    fuzz_decode(m, size);
    free(m);
}

/* ---- recipes */
static const float *g_x;
static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}
static int cmp_rank(const void *a, const void *b) {
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    uint32_t ki = fb(g_x[i]) & 0x7FFFFFFFu, kj = fb(g_x[j]) & 0x7FFFFFFFu;
    if (ki != kj) return ki > kj ? -1 : 1;
    return i < j ? -1 : i > j;
}

static void fuzz_recipe(const uint8_t *data, size_t size) {
    dq_params p;
    size_t n, i, cap = 0, len = 0, k = 0;
    unsigned opt, fin = 1;
    int ef;
    float *x, *e = NULL, *e0 = NULL, *c, *dec;
    uint8_t *msg;
    uint32_t kr;
    dq_status st;
    if (size < 10) return;
    opt = data[1];
    ef = (opt >> 5) & 1;
    n = (size - 6) / 4 / (ef ? 2u : 1u);
    if (n == 0) return;
    memset(&p, 0, sizeof p);
    p.scheme = (dq_scheme)(DQ_SCHEME_TOPK + data[0] % 3u);
    p.bits = (unsigned)(data[0] / 3u) % 17u; /* 0: float32 values */
    if (p.bits) {
        static const unsigned coders[6] = {DQ_CODER_DEFAULT, DQ_CODER_FIXED_ONLY, DQ_CODER_ELIAS, DQ_CODER_RANS,
                                           DQ_CODER_AUTO, DQ_CODER_DEFAULT};
        p.coder = coders[(data[0] / 3u) / 17u];
        p.bucket = (opt >> 6) & 1u ? DQ_BUCKET_WHOLE : 8u * (1u + (data[2] & 7u));
        p.rounding = opt >> 7 ? DQ_ROUND_NEAREST : DQ_ROUND_STOCHASTIC;
        p.norm = (data[2] >> 3) & 1u ? DQ_NORM_MAX : DQ_NORM_L2;
    }
    p.checksum = opt & 1u;
    p.unbiased = p.scheme == DQ_SCHEME_RANDK ? (opt >> 1) & 1u : 0u;
    p.index_coder = p.scheme == DQ_SCHEME_RANDK ? 0u : (opt >> 2) & 3u;
    p.seed = data[0];
    p.step = opt;
    memcpy(&kr, data + 2, 4);
    if (p.scheme == DQ_SCHEME_THRESHOLD)
        memcpy(&p.threshold, &kr, 4);
    else
        p.k = (opt >> 4) & 1u ? kr : 1u + kr % n;
    x = (float *)malloc(n * sizeof *x);
    c = (float *)malloc(n * sizeof *c);
    dec = (float *)malloc(n * sizeof *dec);
    if (!x || !c || !dec) abort();
    memcpy(x, data + 6, n * 4);
    if (ef) {
        e = (float *)malloc(n * sizeof *e);
        e0 = (float *)malloc(n * sizeof *e0);
        if (!e || !e0) abort();
        memcpy(e, data + 6 + 4 * n, n * 4);
        memcpy(e0, e, n * 4);
    }
    for (i = 0; i < n; i++) {
        c[i] = ef ? x[i] + e[i] : x[i];
        if ((fb(c[i]) & 0x7F800000u) == 0x7F800000u) fin = 0;
    }
    st = dq_encode_capacity(&p, n, &cap);
    if (st != DQ_OK) {
        uint8_t one[64];
        if (st != DQ_ERR_PARAM) abort();
        if (dq_encode(&p, x, n, e, one, sizeof one, &len) != DQ_ERR_PARAM) abort();
        goto done;
    }
    msg = (uint8_t *)malloc(cap);
    if (!msg) abort();
    st = dq_encode(&p, x, n, e, msg, cap, &len);
    if (!fin) {
        if (st != DQ_ERR_NONFINITE) abort();
    } else if (st == DQ_ERR_OVERFLOW) {
        if (!p.unbiased && !p.bits) abort(); /* only m * c, or a scale of quantized values, can overflow */
    } else if (st != DQ_OK || len > cap) {
        abort();
    }
    if (st != DQ_OK) {
        if (ef && memcmp(e, e0, n * 4) != 0) abort(); /* untouched on failure */
        free(msg);
        goto done;
    }
    if (dq_decode(msg, len, dec, n) != DQ_OK) abort();
    if (ef)
        for (i = 0; i < n; i++)
            if (fb(e[i]) != fb(c[i] - dec[i])) abort();
    if (p.bits) { /* composed: the selection from the message, the values from the QSGD decoder */
        size_t kk = (size_t)fz_ld64(msg + 48), j;
        uint32_t *idx = (uint32_t *)malloc((kk + 1) * sizeof *idx);
        if (!idx) abort();
        if (kk) {
            check_values(msg, len, n, kk, dec);
            indices_of(msg, n, kk, idx);
        }
        for (i = 0; i < n; i++) c[i] = 0.0f; /* reused: 1 where sent */
        for (j = 0; j < kk; j++) c[idx[j]] = 1.0f;
        for (i = 0; i < n; i++)
            if (c[i] == 0.0f && fb(dec[i]) != 0u) abort(); /* zero off the set */
        for (i = 0; i < n; i++) c[i] = ef ? x[i] + e0[i] : x[i];
        if (p.scheme == DQ_SCHEME_TOPK) {
            uint32_t *ord = (uint32_t *)malloc(n * sizeof *ord);
            if (!ord) abort();
            for (i = 0; i < n; i++) ord[i] = (uint32_t)i;
            g_x = c;
            qsort(ord, n, sizeof *ord, cmp_rank);
            if (kk != p.k) abort();
            qsort(ord, kk, sizeof *ord, cmp_u32);
            if (memcmp(ord, idx, kk * sizeof *idx) != 0) abort();
            free(ord);
        } else if (p.scheme == DQ_SCHEME_THRESHOLD) {
            for (i = 0, j = 0; i < n; i++)
                if ((fb(c[i]) & 0x7FFFFFFFu) > (fb(p.threshold) & 0x7FFFFFFFu) && (j >= kk || idx[j++] != i)) abort();
            if (j != kk) abort();
        }
        free(idx);
        free(msg);
        goto done;
    }
    if (p.scheme == DQ_SCHEME_TOPK) {
        uint32_t *ord = (uint32_t *)malloc(n * sizeof *ord), *sel = (uint32_t *)malloc(p.k * sizeof *sel);
        char *keep = (char *)calloc(n, 1);
        if (!ord || !sel || !keep) abort();
        for (i = 0; i < n; i++) ord[i] = (uint32_t)i;
        g_x = c;
        qsort(ord, n, sizeof *ord, cmp_rank);
        for (i = 0; i < p.k; i++) keep[ord[i]] = 1;
        for (i = 0; i < n; i++)
            if (fb(dec[i]) != fb(keep[i] ? c[i] : 0.0f)) abort();
        if (!ef) {
            if (dq_topk_select(x, n, p.k, sel) != DQ_OK) abort();
            for (i = 0; i < p.k; i++)
                if (!keep[sel[i]] || (i && sel[i] <= sel[i - 1])) abort();
        }
        free(ord);
        free(sel);
        free(keep);
    } else if (p.scheme == DQ_SCHEME_THRESHOLD) {
        for (i = 0; i < n; i++) {
            int kept = (fb(c[i]) & 0x7FFFFFFFu) > (fb(p.threshold) & 0x7FFFFFFFu);
            if (fb(dec[i]) != fb(kept ? c[i] : 0.0f)) abort();
            k += (size_t)kept;
        }
        if (len != 64u + (size_t)fz_ld64(msg + 56) + 4u * k + 4u * p.checksum) abort();
    } else { /* one element per stratum [floor(j n / k), floor((j + 1) n / k)) */
        size_t j;
        if (len != cap) abort();
        for (j = 0; j < p.k; j++) {
            size_t a = (size_t)((uint64_t)j * n / p.k), b = (size_t)((uint64_t)(j + 1) * n / p.k), got = 0;
            for (i = a; i < b; i++) {
                float want = p.unbiased ? c[i] * (float)(b - a) : c[i];
                if (dec[i] != 0.0f || fb(dec[i]) == fb(want)) { /* the kept element, or a zero value kept */
                    if (fb(dec[i]) == fb(want)) got++;
                    else abort();
                }
            }
            if (got == 0) abort();
        }
    }
    free(msg);
done:
    free(x);
    free(c);
    free(dec);
    free(e);
    free(e0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_decode(data, size);
    fuzz_resigned(data, size);
    fuzz_recipe(data, size);
    return 0;
}
