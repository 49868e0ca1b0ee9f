/* fuzz_sketch.c - count-sketch messages (doc/FORMAT.md 21) and the sketch API on
 * untrusted bytes.
 * 1. The input as a message: the header reader and the generic decoders must never crash or
 *    read or write out of bounds (ASan); a rejected message leaves the output untouched; a
 *    sketch message that decodes re-encodes to exactly its own bytes (the format has one
 *    encoding per table), dq_decode_add onto zeros gives the same values, the receiver helpers
 *    accept it, and (for small dims) the estimators run on it.
 * 2. The input as a recipe: shape, seed and integer values from the bytes; the table of the
 *    dense vector equals the table of its sparse form and the sum of the tables of two halves
 *    (linearity, bit for bit on integers), and the message round trip is exact.
 * Build: make fuzz (libFuzzer) or the replay driver in make test. */
#include <stdlib.h>
#include <string.h>

#include "dqsgd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_message(const uint8_t *data, size_t size) {
    dq_header h;
    float dummy[2] = {7.0f, 7.0f}, *out, *acc;
    uint8_t *again;
    size_t len = 0, i;
    dq_sketch s;
    dq_status st;
    if (dq_header_read(data, size, &h) != DQ_OK) {
        if (dq_decode(data, size, dummy, 2) == DQ_OK || dummy[0] != 7.0f) abort();
        return;
    }
    if (h.scheme != DQ_SCHEME_SKETCH) return; /* other schemes have their own targets */
    if (h.msg_size > size || h.count > size / 4u) {
        st = dq_decode(data, size, dummy, 0);
        if (st == DQ_OK || dummy[0] != 7.0f) abort();
        if (dq_verify(data, size) == DQ_OK) abort();
        return;
    }
    out = (float *)malloc(h.count * sizeof *out);
    acc = (float *)malloc(h.count * sizeof *acc);
    again = (uint8_t *)malloc(h.msg_size);
    if (!out || !acc || !again) abort();
    for (i = 0; i < h.count; i++) out[i] = acc[i] = 3.0f;
    st = dq_decode(data, size, out, h.count);
    if (st != DQ_OK) {
        for (i = 0; i < h.count; i++)
            if (out[i] != 3.0f) abort(); /* untouched on rejection */
        if (st != DQ_ERR_CHECKSUM && st != DQ_ERR_CORRUPT) abort();
        if (dq_decode_add(data, size, 1.0f, acc, h.count) != st) abort();
    } else {
        if (dq_verify(data, size) != DQ_OK) abort();
        if (dq_sketch_from_message(data, size, acc, h.count, &s) != DQ_OK) abort();
        if (dq_sketch_add_message(&s, data, size, 1.0f) != DQ_OK) abort();
        for (i = 0; i < h.count; i++)
            if (acc[i] != out[i]) abort(); /* 0 + t = t (up to the sign of zero) */
        memcpy(acc, out, h.count * sizeof *acc);
        if (dq_sketch_encode(&s, (h.flags & DQ_FLAG_CHECKSUM) ? 1u : 0u, again, h.msg_size, &len) != DQ_OK ||
            len != h.msg_size || memcmp(again, data, len) != 0)
            abort();
        if (s.dim <= 4096) { /* the estimators on arbitrary tables: memory safety, sorted output */
            uint32_t idx[8];
            float val[8], est[64];
            size_t k = s.dim < 8 ? (size_t)s.dim : 8, cnt = 0, n = s.dim < 64 ? (size_t)s.dim : 64;
            double n2 = 0.0;
            if (dq_sketch_topk(&s, k, idx, val) != DQ_OK) abort();
            for (i = 1; i < k; i++)
                if (idx[i] <= idx[i - 1] || idx[i] >= s.dim) abort();
            st = dq_sketch_heavy(&s, 0.5, idx, val, 8, &cnt);
            if (st != (cnt > 8 ? DQ_ERR_DST_TOO_SMALL : DQ_OK)) abort();
            if (dq_sketch_estimate_range(&s, 0, est, n) != DQ_OK) abort();
            if (dq_sketch_norm2(&s, &n2) != DQ_OK) abort();
        }
    }
    free(out);
    free(acc);
    free(again);
}

static void fuzz_recipe(const uint8_t *data, size_t size) {
    uint32_t rows, cols, dim, i, half, *idx;
    float *x, *v, *t1, *t2, *t3, *dec;
    uint8_t *msg;
    size_t cap, len = 0, k = 0;
    dq_sketch a, b, c;
    if (size < 6) return;
    rows = 1u + data[0] % 8u;
    cols = 1u + data[1] % 64u;
    dim = 1u + (uint32_t)(data[2] | data[3] << 8) % 2000u;
    half = data[5] % (dim + 1u);
    x = (float *)calloc(dim, sizeof *x);
    idx = (uint32_t *)malloc(dim * sizeof *idx);
    v = (float *)malloc(dim * sizeof *v);
    t1 = (float *)malloc((size_t)rows * cols * sizeof *t1);
    t2 = (float *)malloc((size_t)rows * cols * sizeof *t2);
    t3 = (float *)malloc((size_t)rows * cols * sizeof *t3);
    dec = (float *)malloc((size_t)rows * cols * sizeof *dec);
    cap = DQ_SKETCH_ENCODE_BOUND(rows, cols);
    msg = (uint8_t *)malloc(cap);
    if (!x || !idx || !v || !t1 || !t2 || !t3 || !dec || !msg) abort();
    for (i = 0; i < dim && 6u + i < size; i++) x[i] = (float)((int)data[6u + i] - 128); /* exact sums */
    if (dq_sketch_init(&a, rows, cols, dim, data[4], t1, (size_t)rows * cols) != DQ_OK ||
        dq_sketch_init(&b, rows, cols, dim, data[4], t2, (size_t)rows * cols) != DQ_OK ||
        dq_sketch_init(&c, rows, cols, dim, data[4], t3, (size_t)rows * cols) != DQ_OK)
        abort();
    if (dq_sketch_add_dense(&a, 0, x, dim) != DQ_OK) abort();
    /* halves: [0, half) and [half, dim) into b and c, then merged */
    if (dq_sketch_add_dense(&b, 0, x, half) != DQ_OK || dq_sketch_add_dense(&c, half, x + half, dim - half) != DQ_OK ||
        dq_sketch_merge(&b, &c) != DQ_OK)
        abort();
    if (memcmp(t1, t2, (size_t)rows * cols * sizeof *t1) != 0) abort();
    /* sparse form, in reverse order: integer sums do not depend on the order */
    if (dq_sketch_clear(&c) != DQ_OK) abort();
    for (i = dim; i-- > 0;)
        if (x[i] != 0.0f) {
            idx[k] = i;
            v[k++] = x[i];
        }
    if (dq_sketch_add_sparse(&c, idx, v, k) != DQ_OK) abort();
    for (i = 0; i < rows * cols; i++)
        if (t3[i] != t1[i]) abort();
    if (dq_sketch_encode(&a, data[5] & 1u, msg, cap, &len) != DQ_OK ||
        len != dq_sketch_encoded_size(rows, cols) + 4u * (data[5] & 1u))
        abort();
    if (dq_decode(msg, len, dec, (size_t)rows * cols) != DQ_OK ||
        memcmp(dec, t1, (size_t)rows * cols * sizeof *dec) != 0)
        abort();
    free(x);
    free(v);
    free(idx);
    free(t1);
    free(t2);
    free(t3);
    free(dec);
    free(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_message(data, size);
    fuzz_recipe(data, size);
    return 0;
}
