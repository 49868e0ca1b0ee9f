/* fuzz_decode.c - untrusted bytes into every decoder: header reader, verify, decode,
 * decode-add, the range decoders, message norm, and the headerless block decoders with
 * parameters taken from the input. Must never crash, read or write out of bounds (ASan), or
 * disagree with itself: a successful decode-add equals acc + w * decode, bit for bit; a
 * message that decodes verifies, and decoding it range by range gives the same floats.
 * Build: make fuzz (libFuzzer) or the replay driver in make test. */
#include <stdlib.h>
#include <string.h>

#include "dqsgd.h"

#define DQ_FUZZ_MAX_COUNT (1u << 20) /* keep allocations small */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Decode every aligned range of the message into part; when `whole` decoded, each range must
 * succeed and match it. */
static void fuzz_ranges(const uint8_t *data, size_t size, const dq_header *h, const float *whole, float *part) {
    dq_params p;
    size_t a, b;
    memset(&p, 0, sizeof p);
    p.bits = h->bits;
    p.bucket = h->bucket ? h->bucket : DQ_BUCKET_WHOLE;
    a = dq_range_align(&p, h->count);
    if (a == 0) abort(); /* the header was valid */
    for (b = 0; b < h->count; b += a) {
        size_t e = h->count - b < a ? h->count : b + a;
        dq_status st = dq_decode_range(data, size, b, e, part);
        if (whole && (st != DQ_OK || memcmp(part, whole + b, (e - b) * sizeof(float)) != 0)) abort();
    }
}

static void fuzz_message(const uint8_t *data, size_t size) {
    dq_header h;
    double n2;
    float *out, *acc;
    size_t i;
    dq_status vst = dq_verify(data, size);
    if (dq_header_read(data, size, &h) != DQ_OK || h.count > DQ_FUZZ_MAX_COUNT) return;
    out = (float *)malloc(h.count * sizeof(float));
    acc = (float *)malloc(h.count * sizeof(float));
    if (!out || !acc) abort();
    for (i = 0; i < h.count; i++) acc[i] = (float)i * 0.25f;
    if (dq_decode(data, size, out, h.count) == DQ_OK) {
        if (vst != DQ_OK) abort();
        if (dq_decode_add(data, size, 0.5f, acc, h.count) != DQ_OK) abort(); /* same validation */
        for (i = 0; i < h.count; i++) {
            float want = (float)i * 0.25f + 0.5f * out[i];
            if (memcmp(&want, &acc[i], sizeof want) != 0) abort();
        }
    } else if (dq_decode_add(data, size, 0.5f, acc, h.count) == DQ_OK) {
        abort(); /* decode failed but decode-add accepted the same bytes */
    }
    fuzz_ranges(data, size, &h, vst == DQ_OK && dq_decode(data, size, out, h.count) == DQ_OK ? out : NULL, acc);
    (void)dq_message_norm2(data, size, &n2);
    free(out);
    free(acc);
}

/* The block API trusts its parameters; take them from the first 4 bytes. */
static void fuzz_block(const uint8_t *data, size_t size) {
    dq_params p;
    size_t n;
    float *out;
    if (size < 4) return;
    memset(&p, 0, sizeof p);
    p.bits = data[0] % 18u; /* 0 (default) .. 17 (invalid) */
    p.bucket = data[1] == 0 ? DQ_BUCKET_WHOLE : (uint32_t)data[1] * 4u; /* some not multiples of 8 */
    n = (size_t)data[2] * 7u + (data[3] & 7u);
    out = (float *)malloc((n ? n : 1u) * sizeof(float));
    if (!out) abort();
    (void)dq_decode_block(&p, data + 4, size - 4, n, out);
    (void)dq_decode_add_block(&p, data + 4, size - 4, n, 1.0f, out);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_message(data, size);
    fuzz_block(data, size);
    return 0;
}
