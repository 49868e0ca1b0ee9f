/* fuzz_index.c - the sparse index streams (doc/FORMAT.md 18) on untrusted bytes.
 * 1. The input as a stream: the header reader and the decoder must never crash or read or
 *    write out of bounds (ASan); the VARINT kernel and its scalar twin return the same status
 *    and indices; a stream that decodes holds strictly increasing indices below n, is no
 *    larger than the bound, and encodes back to exactly the input bytes with its coder (the
 *    format has one encoding per set and coder; RICE: per set, coder and parameter), and AUTO
 *    is no larger.
 * 2. The input as a recipe: n from bytes 0..4, then one gap per byte pair; the set is encoded
 *    with every coder (the bitmap for n <= 2^20) and AUTO, and each stream must have its exact
 *    size, fit the bound and decode to the set with both kernels; RICE also with the parameter
 *    of byte 4 (when it is valid for n), never with fewer bits than the encoder's choice.
 * Build: make fuzz (libFuzzer) or the replay driver in make test. */
#include <stdlib.h>
#include <string.h>

#include "dqsgd.h"
#include "../internals.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_stream(const uint8_t *data, size_t size) {
    uint64_t n = 0;
    size_t k = 0, k1 = 0, k2 = 0, i, len = 0, auto_size = 0;
    dq_index_coder c = DQ_INDEX_AUTO;
    uint32_t *a, *b;
    uint8_t *again;
    dq_status s1, s2;
    if (dq_index_header(data, size, &n, &k, &c) != DQ_OK) {
        if (dq_index_decode(data, size, NULL, 0, &k1) == DQ_OK) abort(); /* same header checks */
        return;
    }
    if (k > 8 * size) abort(); /* the header promises this bound on allocations */
    a = (uint32_t *)malloc((k ? k : 1) * sizeof *a);
    b = (uint32_t *)malloc((k ? k : 1) * sizeof *b);
    again = (uint8_t *)malloc(size);
    if (!a || !b || !again) abort();
    s1 = dq_index_decode(data, size, a, k, &k1);
    s2 = dqt_index_decode_with(data, size, b, k, &k2, dqt_scalar(svb_decode));
    if (s1 != s2) abort();
    if (s1 == DQ_OK) {
        if (k1 != k || k2 != k || (k && memcmp(a, b, k * sizeof *a) != 0)) abort();
        for (i = 0; i < k; i++)
            if (a[i] >= n || (i && a[i] <= a[i - 1])) abort();
        if (size > dq_index_bound(k, n)) abort();
        if ((c == DQ_INDEX_RICE ? dqt_index_encode_rice(a, k, n, data[10], again, size, &len)
                                : dq_index_encode(a, k, n, c, again, size, &len)) != DQ_OK ||
            len != size || memcmp(again, data, size) != 0)
            abort();
        if (dq_index_size(a, k, n, DQ_INDEX_AUTO, &auto_size) != DQ_OK || auto_size > size) abort();
    } else if (s1 != DQ_ERR_CORRUPT && s1 != DQ_ERR_TRUNCATED) {
        abort(); /* the buffer was large enough and the header valid */
    }
    free(a);
    free(b);
    free(again);
}

static void fuzz_recipe(const uint8_t *data, size_t size) {
    uint64_t n, next = 0;
    size_t k = 0, i, best = (size_t)-1, auto_size = 0;
    uint32_t *idx, *out;
    unsigned c;
    if (size < 5) return;
    n = 1u + (((uint64_t)data[0] | (uint64_t)data[1] << 8 | (uint64_t)data[2] << 16 | (uint64_t)data[3] << 24) >>
              (data[4] % 32u));
    idx = (uint32_t *)malloc((size / 2 + 1) * sizeof *idx);
    out = (uint32_t *)malloc((size / 2 + 1) * sizeof *out);
    if (!idx || !out) abort();
    for (i = 5; i + 1 < size; i += 2) { /* gap - 1 = data[i] << (data[i + 1] % 33) */
        uint64_t x = next + ((uint64_t)data[i] << (data[i + 1] % 33u));
        if (x >= n) break;
        idx[k++] = (uint32_t)x;
        next = x + 1;
    }
    for (c = 0; c < 5; c++) {
        size_t size_c = 0, len = 0, k2 = 0, bound = dq_index_bound(k, n);
        uint8_t *s;
        if (dq_index_size(idx, k, n, (dq_index_coder)c, &size_c) != DQ_OK) abort();
        if (size_c > bound) abort();
        if (c && size_c < best) best = size_c;
        if (c == 0) auto_size = size_c;
        if (c == DQ_INDEX_BITMAP && n > ((uint64_t)1 << 20)) continue;
        s = (uint8_t *)malloc(size_c);
        if (!s) abort();
        if (dq_index_encode(idx, k, n, (dq_index_coder)c, s, size_c, &len) != DQ_OK || len != size_c) abort();
        if (dq_index_decode(s, len, out, k, &k2) != DQ_OK || k2 != k || (k && memcmp(out, idx, k * sizeof *idx)))
            abort();
        if (dqt_index_decode_with(s, len, out, k, &k2, dqt_scalar(svb_decode)) != DQ_OK || k2 != k ||
            (k && memcmp(out, idx, k * sizeof *idx)))
            abort();
        free(s);
    }
    if (auto_size != best) abort();
    { /* RICE at the recipe's parameter: a valid stream, never smaller than the encoder's choice */
        size_t len = 0, k2 = 0, rsize = 0, cap = dq_index_bound(k, n);
        uint8_t *s;
        if (dq_index_size(idx, k, n, DQ_INDEX_RICE, &rsize) != DQ_OK) abort();
        if (cap > ((size_t)1 << 20)) cap = (size_t)1 << 20;
        s = (uint8_t *)malloc(cap);
        if (!s) abort();
        if (dqt_index_encode_rice(idx, k, n, data[4] % 32u, s, cap, &len) == DQ_OK) {
            if (len < rsize || dq_index_decode(s, len, out, k, &k2) != DQ_OK || k2 != k ||
                (k && memcmp(out, idx, k * sizeof *idx)))
                abort();
        }
        free(s);
    }
    free(idx);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_stream(data, size);
    fuzz_recipe(data, size);
    return 0;
}
