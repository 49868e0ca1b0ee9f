/* fuzz_decode.c - untrusted bytes into every decoder: header reader, verify, decode,
 * decode-add, the range decoders, message norm, the coded-message size and re-coder, and the
 * headerless block decoders with parameters taken from the input. Must never crash, read or
 * write out of bounds (ASan), or disagree with itself: a successful decode-add equals
 * acc + w * decode, bit for bit; a message that decodes verifies, and decoding it range by
 * range gives the same floats (a coded message refuses ranges; a segmented message takes ranges
 * by segment and refuses re-coding, fuzz_seg_ranges); a message decodes exactly when
 * it re-codes, and its re-coded form (fixed from coded, AUTO from fixed) has the size
 * dq_coded_size promised and decodes to the same floats. Each input also runs a second time
 * with its header CRC and payload checksum made right, so that mutated fields and payloads
 * reach the decoders past the CRCs (coded messages with the checksum decode in one pass). A
 * decoder that fails, float or typed, leaves its output untouched but for the one documented
 * exception; the opened handle (dq_message_open) agrees with dq_verify and with dq_decode.
 * Build: make fuzz (libFuzzer) or the replay driver in make test. */
#include <stdlib.h>
#include <string.h>

#include "dqsgd.h"
#include "../internals.h"

#define DQ_FUZZ_MAX_COUNT (1u << 20) /* keep allocations small */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* dq_decode_range into part, which a failing range must leave untouched. */
static dq_status range_untouched(const uint8_t *data, size_t size, size_t b, size_t e, float *part) {
    size_t i;
    dq_status st;
    memset(part, 0xA5, (e - b) * sizeof(float));
    st = dq_decode_range(data, size, b, e, part);
    if (st != DQ_OK)
        for (i = 0; i < (e - b) * sizeof(float); i++)
            if (((const uint8_t *)part)[i] != 0xA5) abort();
    return st;
}

/* Decode every aligned range of the message into part; when `whole` decoded, each range must
 * succeed and match it (fixed layout and rANS coder 3; Elias and coder 2 are refused). A range
 * that fails leaves part untouched. */
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
        dq_status st = range_untouched(data, size, b, e, part);
        if (h->coder != DQ_CODER_FIXED && h->coder != DQ_CODER_RANS) {
            if (whole && st != DQ_ERR_PARAM) abort(); /* one stream: read whole */
            continue;
        }
        if (whole && (st != DQ_OK || memcmp(part, whole + b, (e - b) * sizeof(float)) != 0)) abort();
    }
}

/* Segmented messages (doc/FORMAT.md 24): ranges follow the segments. Each segment alone, each
 * pair of neighbours, the whole vector, and within a fixed or rANS segment its aligned pieces
 * (dq_range_align of the segment alone, offset by its first element) must decode, when `whole`
 * decoded, to the same floats; a piece inside an Elias segment is DQ_ERR_PARAM (one stream).
 * A range that fails leaves part untouched. dq_segments_read agrees with the header. */
static void fuzz_seg_range(const uint8_t *data, size_t size, size_t b, size_t e, int must, const float *whole,
                           float *part) {
    dq_status st = range_untouched(data, size, b, e, part);
    if (whole && must >= 0 && st != (must ? DQ_OK : DQ_ERR_PARAM)) abort();
    if (whole && st == DQ_OK && memcmp(part, whole + b, (e - b) * sizeof(float)) != 0) abort();
}
static void fuzz_seg_ranges(const uint8_t *data, size_t size, const dq_header *h, const float *whole, float *part) {
    dq_segment sg[64];
    size_t m = 0, j, sum = 0;
    unsigned maxb = 0;
    dq_status st = dq_segments_read(data, size, sg, 64, &m);
    if (m != h->segments || (st != DQ_OK && st != DQ_ERR_DST_TOO_SMALL)) abort(); /* the header was valid */
    if (st != DQ_OK) return;
    for (j = 0; j < m; j++) {
        if (sg[j].first != sum || sg[j].count == 0 || sg[j].bits < 2u || sg[j].bits > 16u) abort();
        sum += sg[j].count;
        if (sg[j].bits > maxb) maxb = sg[j].bits;
    }
    if (sum != h->count || maxb != h->bits) abort();
    fuzz_seg_range(data, size, 0, h->count, 1, whole, part);
    for (j = 0; j < m; j++) {
        dq_params p;
        size_t a, b;
        fuzz_seg_range(data, size, sg[j].first, sg[j].first + sg[j].count, 1, whole, part);
        if (j + 1u < m) fuzz_seg_range(data, size, sg[j].first, sg[j + 1u].first + sg[j + 1u].count, 1, whole, part);
        memset(&p, 0, sizeof p);
        p.bits = sg[j].bits;
        p.bucket = h->bucket ? h->bucket : DQ_BUCKET_WHOLE;
        a = dq_range_align(&p, sg[j].count);
        if (a == 0) abort();
        if (a >= sg[j].count) continue;
        for (b = 0; b < sg[j].count; b += a) {
            size_t e = sg[j].count - b < a ? sg[j].count : b + a;
            fuzz_seg_range(data, size, sg[j].first + b, sg[j].first + e, sg[j].coder == DQ_CODER_ELIAS ? 0 : 1, whole,
                           part);
        }
        if (j + 1u < m) /* the segment's last piece and the next segment whole */
            fuzz_seg_range(data, size, sg[j].first + (sg[j].count - 1u) / a * a, sg[j + 1u].first + sg[j + 1u].count,
                           sg[j].coder == DQ_CODER_ELIAS ? 0 : 1, whole, part);
    }
}

/* Re-code the message into `coder`: when dq_coded_size accepts it, the message decoded
 * (`whole`) and dq_recode writes exactly that many bytes, a message that decodes to the same
 * floats; with `must`, a message that decoded must be accepted. */
static void fuzz_recode(const uint8_t *data, size_t size, const dq_header *h, unsigned coder, int must,
                        const float *whole, float *tmp) {
    size_t sz = 0, len = 0;
    dq_status st = dq_coded_size(data, size, coder, &sz), st2;
    uint8_t *buf;
    if (must && whole && st != DQ_OK) abort();
    if (st != DQ_OK) {
        uint8_t one;
        if (dq_recode(data, size, coder, &one, 1, &len) == DQ_OK) abort();
        return;
    }
    if (!whole || sz > (size_t)1 << 26) abort(); /* sized, so it decodes; sizes stay within bounds */
    buf = (uint8_t *)malloc(sz);
    if (!buf) abort();
    st2 = dq_recode(data, size, coder, buf, sz, &len);
    if (st2 != DQ_OK || len != sz) abort();
    if (dq_decode(buf, len, tmp, h->count) != DQ_OK || memcmp(tmp, whole, h->count * sizeof(float)) != 0) abort();
    if (dq_recode(data, size, coder, buf, sz - 1u, &len) != DQ_ERR_DST_TOO_SMALL) abort();
    free(buf);
}

/* A decoder that fails leaves its output untouched (every byte still the canary), with the one
 * exception dqsgd.h states at dq_decode(): a coded message carrying the payload checksum that
 * passes it yet is malformed is DQ_ERR_CORRUPT with the output partly written. Checked for the
 * float and the typed (fp16, bf16) decoders, plain and accumulating. */
static int all_canary(const void *p, size_t n) {
    const uint8_t *b = (const uint8_t *)p;
    size_t i;
    for (i = 0; i < n; i++)
        if (b[i] != 0xA5u) return 0;
    return 1;
}
static void fuzz_untouched(const uint8_t *data, size_t size, const dq_header *h) {
    static const dq_dtype types[3] = {DQ_F32, DQ_F16, DQ_BF16}; /* DQ_F32: dq_decode, dq_decode_add */
    size_t n = h->count, k, m = 0;
    void *o = malloc(n * sizeof(float));
    int coded = h->coder != DQ_CODER_FIXED; /* a segmented message: any coded segment (FORMAT 24.4) */
    if (!o) abort();
    if (h->flags & DQ_FLAG_SEGMENTS) {
        dq_segment *sg = (dq_segment *)malloc(h->segments * sizeof *sg);
        if (!sg) abort();
        if (dq_segments_read(data, size, sg, h->segments, &m) != DQ_OK || m != h->segments) abort();
        for (k = 0; k < m; k++) coded |= sg[k].coder != DQ_CODER_FIXED;
        free(sg);
    }
    for (k = 0; k < 6; k++) {
        dq_dtype t = types[k / 2];
        size_t bytes = n * dq_dtype_size(t);
        dq_status st;
        memset(o, 0xA5, bytes);
        st = k % 2 ? dq_decode_add_typed(data, size, 0.5f, t, o, n) : dq_decode_typed(data, size, t, o, n);
        if (st != DQ_OK && !all_canary(o, bytes) &&
            !(st == DQ_ERR_CORRUPT && coded && (h->flags & DQ_FLAG_CHECKSUM)))
            abort();
    }
    free(o);
}

/* The opened handle: dq_message_open agrees with dq_verify and dq_header_read, and its decoders
 * with dq_decode and dq_decode_add, status and bits. */
static void fuzz_handle(const uint8_t *data, size_t size, const dq_header *h, dq_status vst, float *tmp) {
    dq_message m;
    dq_status st = dq_message_open(data, size, &m), st1;
    size_t n = h->count, i;
    float *ref;
    if (st != vst) abort();
    if (st != DQ_OK) return;
    if (memcmp(&m.h, h, sizeof *h) != 0) abort();
    ref = (float *)malloc(n * sizeof(float));
    if (!ref) abort();
    st = dq_decode(data, size, ref, n);
    st1 = dq_message_decode(&m, tmp, n);
    if (st1 != st || (st == DQ_OK && memcmp(ref, tmp, n * sizeof(float)) != 0)) abort();
    if (st == DQ_OK) {
        for (i = 0; i < n; i++) ref[i] = tmp[i] = (float)i * 0.125f;
        if (dq_decode_add(data, size, 0.75f, ref, n) != DQ_OK || dq_message_decode_add(&m, 0.75f, tmp, n) != DQ_OK ||
            memcmp(ref, tmp, n * sizeof(float)) != 0)
            abort();
        if (dq_message_decode_add(&m, 0.75f, tmp, n + 1u) != DQ_ERR_SIZE_MISMATCH) abort();
        if (n > 1u && dq_message_decode(&m, tmp, n - 1u) != DQ_ERR_DST_TOO_SMALL) abort();
    }
    free(ref);
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
    if (h.scheme == DQ_SCHEME_TOPK || h.scheme == DQ_SCHEME_RANDK || h.scheme == DQ_SCHEME_THRESHOLD ||
        h.scheme == DQ_SCHEME_SKETCH) { /* sparse and sketch messages: no ranges, no re-coding */
        size_t sz;
        if (dq_decode_range(data, size, 0, h.count, acc) == DQ_OK) abort();
        if (dq_coded_size(data, size, DQ_CODER_FIXED, &sz) == DQ_OK) abort();
    } else if (h.flags & DQ_FLAG_SEGMENTS) { /* ranges by segment; no re-coding (DQ_ERR_PARAM) */
        const float *whole = vst == DQ_OK && dq_decode(data, size, out, h.count) == DQ_OK ? out : NULL;
        size_t sz;
        uint8_t one;
        fuzz_seg_ranges(data, size, &h, whole, acc);
        if (dq_coded_size(data, size, DQ_CODER_FIXED, &sz) == DQ_OK) abort();
        if (dq_recode(data, size, DQ_CODER_FIXED, &one, 1, &sz) == DQ_OK) abort();
        if (whole && (dq_coded_size(data, size, DQ_CODER_AUTO, &sz) != DQ_ERR_PARAM ||
                      dq_recode(data, size, DQ_CODER_FIXED, &one, 1, &sz) != DQ_ERR_PARAM))
            abort();
    } else {
        const float *whole = vst == DQ_OK && dq_decode(data, size, out, h.count) == DQ_OK ? out : NULL;
        fuzz_ranges(data, size, &h, whole, acc);
        fuzz_recode(data, size, &h, DQ_CODER_FIXED, 1, whole, acc); /* coded -> fixed (fixed: a copy) */
        if (h.coder == DQ_CODER_FIXED) {
            fuzz_recode(data, size, &h, DQ_CODER_AUTO, 1, whole, acc);
            /* forced: Elias cannot send a "negative zero" code, which decoders accept */
            fuzz_recode(data, size, &h, DQ_CODER_ELIAS, 0, whole, acc);
            fuzz_recode(data, size, &h, DQ_CODER_RANS, h.bits <= 8u, whole, acc);
        }
    }
    fuzz_untouched(data, size, &h);
    fuzz_handle(data, size, &h, vst, acc);
    (void)dq_message_norm2(data, size, &n2);
    free(out);
    free(acc);
}

/* The block API trusts its parameters; take them from the first 4 bytes. Byte 3's top bits
 * pick the scheme: QSGD, NUQSGD, TRUNC (alpha 1) or TRUNC_NU (levels l / s, alpha 1). */
static void fuzz_block(const uint8_t *data, size_t size) {
    static const dq_scheme schemes[4] = {DQ_SCHEME_QSGD, DQ_SCHEME_NUQSGD, DQ_SCHEME_TRUNC, DQ_SCHEME_TRUNC_NU};
    float lv[127];
    dq_params p;
    size_t n;
    float *out;
    unsigned l, s;
    if (size < 4) return;
    memset(&p, 0, sizeof p);
    p.bits = data[0] % 18u; /* 0 (default) .. 17 (invalid) */
    p.scheme = schemes[data[3] >> 6];
    p.alpha = 1.0f;
    s = p.bits >= 2u && p.bits <= 8u ? (1u << (p.bits - 1u)) - 1u : 7u; /* 7: the default 4 bits */
    for (l = 0; l < s; l++) lv[l] = (float)(l + 1u) / (float)s;
    p.levels = lv;
    p.bucket = data[1] == 0 ? DQ_BUCKET_WHOLE : (uint32_t)data[1] * 4u; /* some not multiples of 8 */
    n = (size_t)data[2] * 7u + (data[3] & 7u);
    p.coder = (data[3] >> 3) & 7u; /* 0 fixed, 1 Elias, 2 rANS, 3 AUTO, 4..7 invalid: blocks are fixed only */
    if (p.coder == 3u) p.coder = DQ_CODER_AUTO;
    out = (float *)malloc((n ? n : 1u) * sizeof(float));
    if (!out) abort();
    if (dq_decode_block(&p, data + 4, size - 4, n, out) == DQ_OK && p.coder != DQ_CODER_FIXED) abort();
    if (dq_decode_add_block(&p, data + 4, size - 4, n, 1.0f, out) == DQ_OK && p.coder != DQ_CODER_FIXED) abort();
    free(out);
}

/* CRC32C (doc/FORMAT.md 3.3), bitwise. */
static uint32_t crc32c(const uint8_t *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    int k;
    while (n--) {
        c ^= *p++;
        for (k = 0; k < 8; k++) c = (c >> 1) ^ ((c & 1u) ? 0x82F63B78u : 0u);
    }
    return c ^ 0xFFFFFFFFu;
}
static void st32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* The input with its header CRC, and its payload checksum when it has one, set right. */
static void fuzz_resealed(const uint8_t *data, size_t size) {
    uint8_t *m;
    dq_header h;
    if (size < DQ_HEADER_SIZE || memcmp(data, "DQSG", 4) != 0) return;
    m = (uint8_t *)malloc(size);
    if (!m) abort();
    memcpy(m, data, size);
    st32(m + 44, crc32c(m, 44));
    if (dq_header_read(m, size, &h) == DQ_OK && (h.flags & DQ_FLAG_CHECKSUM) && h.msg_size <= size)
        st32(m + h.msg_size - 4u, crc32c(m + DQ_HEADER_SIZE, h.msg_size - DQ_HEADER_SIZE - 4u));
    if (memcmp(m, data, size) != 0) fuzz_message(m, size);
    free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_message(data, size);
    fuzz_block(data, size);
    fuzz_resealed(data, size);
    return 0;
}
