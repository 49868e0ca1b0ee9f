/* fuzz_coders.c - fuzzer-chosen params and values through every coder (dqsgd.h "Coded
 * messages"). Each input is encoded with the fixed coder and with the chosen one: Elias or
 * rANS (forced, dst_cap = dq_encode_bound_coded), or AUTO three times (dst_cap = exactly the
 * fixed size, that plus a fuzzer-chosen slack, and dq_encode_bound_coded). Every buffer is
 * allocated to exactly the dst_cap passed, so ASan sees any write past it.
 * Checks, aborting on any violation:
 *  - a coder the width does not allow is DQ_ERR_PARAM everywhere (encode, sizes, recode);
 *  - every encode returns the status of the fixed encode, and leaves the same residual;
 *  - a forced coder refuses dst_cap < dq_encode_bound_coded() without writing dst, and writes
 *    the fixed message where its own would be larger;
 *  - no message is larger than the fixed one, nor than dq_encode_bound(n, bits);
 *  - coded messages decode (and decode-add) to the fixed message's floats, bit for bit;
 *  - AUTO is never larger than fixed nor than with less room, and sends the bytes of the coder
 *    it names; with the roomy cap it is the smallest coder (ties to the lower id) and equals
 *    dq_coded_size(fixed, AUTO) and dq_recode(fixed, AUTO);
 *  - dq_coded_size(fixed, coder) is the coded size, dq_recode(fixed -> coder) gives the bytes
 *    dq_encode wrote, dq_recode(coded -> fixed) gives back the fixed bytes, and one byte less
 *    of room is DQ_ERR_DST_TOO_SMALL; coded -> the other coder is DQ_ERR_PARAM.
 * Input: 8 parameter bytes, then values: byte 0 bits - 1, 1 bucket (odd: whole, else
 * 8 (1 + b mod 64)), 2 nearest | max norm << 1 | checksum << 2 | coder << 3 (0 Elias, 1 rANS,
 * 2-3 AUTO), 3-5 seed, step, stream, 6 int8 values | repeat << 1 (the values 1, 2, 8 or 32
 * times), 7 error feedback | slack / 4 << 1; then float32 values, or one int8 per element. */
#include <stdlib.h>
#include <string.h>

#include "dqsgd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) abort();                                                                         \
    } while (0)

static int coder_ok(unsigned coder, unsigned bits) {
    return !((coder == DQ_CODER_ELIAS && bits < 2u) || (coder == DQ_CODER_RANS && bits > 8u));
}

/* m[0..len) verifies and decodes to want[0..n) bit for bit, and decode-add agrees. */
static void check_decodes(const uint8_t *m, size_t len, const float *want, size_t n, float *tmp) {
    size_t i;
    CHECK(dq_verify(m, len) == DQ_OK);
    CHECK(dq_decode(m, len, tmp, n) == DQ_OK);
    CHECK(memcmp(tmp, want, n * sizeof(float)) == 0);
    for (i = 0; i < n; i++) tmp[i] = -0.0f; /* -0 + v == v */
    CHECK(dq_decode_add(m, len, 1.0f, tmp, n) == DQ_OK);
    CHECK(memcmp(tmp, want, n * sizeof(float)) == 0);
}

/* dq_coded_size(src, coder) is want_len, and dq_recode(src -> coder) into exactly want_len
 * bytes gives want[0..want_len); one byte less is DQ_ERR_DST_TOO_SMALL. */
static void check_recode(const uint8_t *src, size_t src_len, unsigned coder, const uint8_t *want, size_t want_len) {
    uint8_t *buf = (uint8_t *)malloc(want_len);
    size_t len = 0, sz = 0;
    CHECK(buf != NULL);
    CHECK(dq_coded_size(src, src_len, coder, &sz) == DQ_OK && sz == want_len);
    CHECK(dq_recode(src, src_len, coder, buf, want_len, &len) == DQ_OK);
    CHECK(len == want_len && memcmp(buf, want, len) == 0);
    CHECK(dq_recode(src, src_len, coder, buf, want_len - 1u, &len) == DQ_ERR_DST_TOO_SMALL);
    free(buf);
}

/* dq_encode(p) into exactly dst_cap bytes: the status of the fixed encode stF, its residual
 * rF (when r0 is given); on success a message that decodes to yF, of the coder its header
 * names, of that coder's bytes, no larger than the fixed message mF. Into *out (NULL: freed);
 * returns the size, 0 on failure. */
static size_t check_encode(const dq_params *p, const float *x, size_t n, const float *r0, const float *rF,
                           dq_status stF, const uint8_t *mF, size_t lenF, const float *yF, size_t dst_cap, float *tmp,
                           uint8_t **out) {
    uint8_t *m = (uint8_t *)malloc(dst_cap);
    float *r = NULL;
    size_t len = 0, sz = 0;
    dq_header h;
    dq_status st;
    CHECK(m != NULL);
    if (r0) {
        r = (float *)malloc(n * sizeof(float));
        CHECK(r != NULL);
        memcpy(r, r0, n * sizeof(float));
    }
    st = dq_encode(p, x, n, r, m, dst_cap, &len);
    CHECK(st == stF);
    if (st == DQ_OK) {
        if (r) CHECK(memcmp(r, rF, n * sizeof(float)) == 0);
        CHECK(dq_header_read(m, len, &h) == DQ_OK && h.msg_size == len && h.count == n);
        /* a forced coder is sent unless it is larger than fixed; nothing exceeds the receiver's bound */
        CHECK(coder_ok(h.coder, p->bits) &&
              (p->coder == DQ_CODER_AUTO || h.coder == p->coder || h.coder == DQ_CODER_FIXED));
        CHECK(len <= lenF && len <= dq_encode_bound(n, p->bits));
        check_decodes(m, len, yF, n, tmp);
        if (h.coder == DQ_CODER_FIXED) {
            CHECK(len == lenF && memcmp(m, mF, lenF) == 0);
            if (p->coder != DQ_CODER_AUTO) check_recode(mF, lenF, p->coder, m, len); /* forced, fell back */
        } else {
            check_recode(mF, lenF, h.coder, m, len); /* fixed -> coder: dq_encode's bytes */
            check_recode(m, len, DQ_CODER_FIXED, mF, lenF); /* and back */
            CHECK(dq_coded_size(m, len, h.coder, &sz) == DQ_OK && sz == len);
        }
    }
    free(r);
    if (out && st == DQ_OK) {
        *out = m;
    } else {
        free(m);
    }
    return st == DQ_OK ? len : 0u;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const unsigned reps[4] = {1, 2, 8, 32};
    static const unsigned coders[4] = {DQ_CODER_ELIAS, DQ_CODER_RANS, DQ_CODER_AUTO, DQ_CODER_AUTO};
    dq_params p;
    dq_status stF, st;
    size_t n, m, i, capF, capC, lenF = 0, len = 0, sz = 0, fsz = 0;
    unsigned coder, other, rep, bytes_mode, ef, slack;
    float *x, *r0 = NULL, *rF = NULL, *yF, *tmp;
    uint8_t *mF, *mC = NULL;
    if (size < 9) return 0;
    memset(&p, 0, sizeof p);
    p.bits = 1u + data[0] % 16u;
    p.bucket = (data[1] & 1u) ? DQ_BUCKET_WHOLE : 8u * (1u + data[1] % 64u);
    p.rounding = (data[2] & 1u) ? DQ_ROUND_NEAREST : DQ_ROUND_STOCHASTIC;
    p.norm = (data[2] & 2u) ? DQ_NORM_MAX : DQ_NORM_L2;
    p.checksum = (data[2] >> 2) & 1u;
    coder = coders[(data[2] >> 3) & 3u];
    p.seed = data[3];
    p.step = data[4];
    p.stream = data[5];
    bytes_mode = data[6] & 1u;       /* one int8 per element: sparse and skewed inputs come easily */
    rep = reps[(data[6] >> 1) & 3u]; /* the values repeated: longer messages, more blocks */
    ef = data[7] & 1u;               /* error feedback, the residual a fixed pattern */
    slack = 4u * (data[7] >> 1u);    /* AUTO's middle dst_cap: the fixed size + slack */
    data += 8;
    size -= 8;
    m = bytes_mode ? size : size / 4u;
    if (m == 0) return 0;
    n = m * rep;
    x = (float *)malloc(n * sizeof(float));
    yF = (float *)malloc(n * sizeof(float));
    tmp = (float *)malloc(n * sizeof(float));
    CHECK(x && yF && tmp);
    for (i = 0; i < n; i++) {
        if (bytes_mode)
            x[i] = (float)(int8_t)data[i % m];
        else
            memcpy(&x[i], data + 4u * (i % m), 4);
    }
    if (ef) {
        r0 = (float *)malloc(n * sizeof(float));
        rF = (float *)malloc(n * sizeof(float));
        CHECK(r0 && rF);
        for (i = 0; i < n; i++) r0[i] = (float)((int)(i % 7u) - 3) * 0.0625f;
        memcpy(rF, r0, n * sizeof(float));
    }

    /* the fixed message */
    p.coder = DQ_CODER_FIXED_ONLY;
    capF = dq_encode_bound(n, p.bits);
    capC = dq_encode_bound_coded(n, p.bits);
    CHECK(capF != 0 && capC > capF);
    mF = (uint8_t *)malloc(capF);
    CHECK(mF != NULL);
    stF = dq_encode(&p, x, n, rF, mF, capF, &lenF);
    CHECK(dq_encode_capacity(&p, n, &fsz) == DQ_OK);
    if (stF == DQ_OK) {
        CHECK(fsz == lenF);
        CHECK(dq_decode(mF, lenF, yF, n) == DQ_OK);
        CHECK(dq_coded_size(mF, lenF, DQ_CODER_FIXED, &sz) == DQ_OK && sz == lenF);
    }

    p.coder = coder;
    if (!coder_ok(coder, p.bits)) { /* Elias at 1 bit, rANS above 8 bits */
        mC = (uint8_t *)malloc(capC);
        CHECK(mC != NULL);
        CHECK(dq_encode(&p, x, n, NULL, mC, capC, &len) == DQ_ERR_PARAM);
        CHECK(dq_encode_capacity(&p, n, &sz) == DQ_ERR_PARAM);
        if (stF == DQ_OK) {
            CHECK(dq_coded_size(mF, lenF, coder, &sz) == DQ_ERR_PARAM);
            CHECK(dq_recode(mF, lenF, coder, mC, capC, &len) == DQ_ERR_PARAM);
        }
    } else if (coder != DQ_CODER_AUTO) { /* forced: the bound; one byte less is refused, dst untouched */
        CHECK(dq_encode_capacity(&p, n, &sz) == DQ_OK && sz == capC);
        mC = (uint8_t *)malloc(capC);
        CHECK(mC != NULL);
        memset(mC, 0xA5, capC);
        CHECK(dq_encode(&p, x, n, NULL, mC, capC - 1u, &len) == DQ_ERR_DST_TOO_SMALL);
        for (i = 0; i < capC; i++) CHECK(mC[i] == 0xA5);
        free(mC);
        mC = NULL;
        len = check_encode(&p, x, n, r0, rF, stF, mF, lenF, yF, capC, tmp, &mC);
        if (len && mC[8] != DQ_CODER_FIXED) { /* sent coded (not the fixed fallback) */
            uint8_t *o = (uint8_t *)malloc(capC);
            CHECK(o != NULL);
            st = dq_recode(mC, len, DQ_CODER_AUTO, o, capC, &sz); /* AUTO from coded: refused, or a copy */
            CHECK(st == DQ_ERR_PARAM || (st == DQ_OK && sz == len && memcmp(o, mC, len) == 0));
            CHECK(dq_coded_size(mC, len, DQ_CODER_AUTO, &sz) == st && (st != DQ_OK || sz == len));
            other = coder == DQ_CODER_ELIAS ? DQ_CODER_RANS : DQ_CODER_ELIAS;
            CHECK(dq_recode(mC, len, other, o, capC, &sz) == DQ_ERR_PARAM); /* coded -> coded */
            CHECK(dq_coded_size(mC, len, other, &sz) == DQ_ERR_PARAM);
            free(o);
        }
    } else { /* AUTO: exactly the fixed size, a little more, the roomy bound */
        size_t base = fsz, lenA1, lenA3, lenA2, best = lenF, pay = (n * p.bits + 7u) / 8u;
        size_t chunk = p.bits <= 8u ? (size_t)65536u * ((8u / p.bits) * p.bits) / 8u : (size_t)65536u * p.bits / 8u;
        unsigned k, cbest = DQ_CODER_FIXED;
        dq_header h;
        /* AUTO's capacity: the fixed size and the room of one rANS chunk (at 9..16 bits, of 2^16
         * codes for Elias), at most the fixed payload */
        CHECK(dq_encode_capacity(&p, n, &sz) == DQ_OK && sz == base + (pay < chunk ? pay : chunk));
        lenA1 = check_encode(&p, x, n, r0, rF, stF, mF, lenF, yF, base, tmp, NULL);
        lenA3 = check_encode(&p, x, n, r0, rF, stF, mF, lenF, yF, base + slack, tmp, NULL);
        lenA2 = check_encode(&p, x, n, r0, rF, stF, mF, lenF, yF, capC, tmp, &mC);
        CHECK(lenA2 <= lenA3 && lenA3 <= lenA1); /* more room never costs bytes */
        if (lenA2) { /* the smallest coder for this message */
            for (k = DQ_CODER_ELIAS; k <= DQ_CODER_RANS; k += DQ_CODER_RANS - DQ_CODER_ELIAS) {
                if (!coder_ok(k, p.bits)) {
                    CHECK(dq_coded_size(mF, lenF, k, &sz) == DQ_ERR_PARAM);
                    continue;
                }
                CHECK(dq_coded_size(mF, lenF, k, &sz) == DQ_OK);
                if (sz < best) {
                    best = sz;
                    cbest = k;
                }
            }
            CHECK(dq_header_read(mC, lenA2, &h) == DQ_OK);
            CHECK(lenA2 == best && h.coder == cbest);
            check_recode(mF, lenF, DQ_CODER_AUTO, mC, lenA2);
        }
    }
    free(x);
    free(yF);
    free(tmp);
    free(r0);
    free(rF);
    free(mF);
    free(mC);
    return 0;
}
