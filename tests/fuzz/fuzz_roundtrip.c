/* fuzz_roundtrip.c - fuzzer-chosen params and floats through encode and decode, for every
 * level scheme (QSGD, NUQSGD, NATURAL, TERNGRAD, TRUNC, TRUNC_NU), coder, error feedback and
 * the payload checksum. Checks:
 *  - the status is ok exactly when the params and input are valid: DQ_ERR_BITS for a width
 *    the scheme does not take, DQ_ERR_PARAM for a norm asked of a scheme that picks its own, a
 *    coder the width does not allow, a bad alpha or level table; then NONFINITE (or the
 *    OVERFLOW of an earlier bucket) for a non-finite input, and OVERFLOW only for a computed
 *    scale (never for TRUNC*, whose scale is alpha);
 *  - the size equals dq_encode_capacity (fixed; AUTO never more), dq_coded_size (coded), and the
 *    layout's own count (header, length field, scales, TRUNC_NU levels, payload, checksum),
 *    within the bound; encoding twice gives the same bytes and residual;
 *  - the header reads back (scheme, width, count, size), the message verifies, TRUNC* scales
 *    are alpha and TRUNC_NU's levels follow them;
 *  - every decoded element is within one level gap of its (compensated, clipped at the scale)
 *    input when stochastic, half a gap when nearest, plus a few ulps of the scale: gap
 *    scale / s for uniform levels, max(|x|, 2^(1-s) scale) for exponential levels, the widest
 *    gap of the table times alpha for TRUNC_NU;
 *  - error feedback leaves residual = compensated - decoded bit for bit, and a failed encode
 *    leaves it untouched;
 *  - coders agree: a coded message is the fixed message re-coded (dq_recode both ways, same
 *    floats); ranges agree: the fixed message built range by range (last range first) is the
 *    same bytes and residual, and decoding it range by range gives the same floats; a job of
 *    1 + (byte 3 mod 4) parts gives the same bytes and residual.
 * Input: 8 parameter bytes, then float32 values.
 *  byte 0: bits: QSGD 1 + b mod 16; other schemes a width they take (b < 128; NATURAL and
 *          TERNGRAD with bit 6 set: 0, the default), or 1 + b mod 16 as given (b >= 128);
 *  byte 1: bucket: odd = whole, else 8 (1 + b mod 64);
 *  byte 2: bit 0 nearest, bit 1 max norm (QSGD, NUQSGD), bit 2 two-means (scheme 5, instead of
 *          byte 6's scheme; byte 0 < 128: bits 1, or 0 with bit 6 set); bit 3 a segmented
 *          message instead (fuzz_segments below, its own reading of the bytes);
 *  bytes 3-5: seed, step, stream;
 *  byte 6: bits 0-2 scheme: 0 QSGD, 1 NUQSGD, 2 NATURAL, 3 TERNGRAD, 4 TRUNC, 5 TRUNC_NU,
 *          6 TRUNC with a bad alpha, 7 TRUNC_NU with a bad level table; bits 3-4 coder (fixed,
 *          Elias, rANS, AUTO); bit 5 checksum; bit 6 error feedback (residual from the data);
 *          bit 7 ask byte 2's norm of every scheme (only QSGD and NUQSGD take one);
 *  byte 7: alpha 2^(b mod 64 - 32) (1 + (b >> 6) / 4), 2^-100 for 0xFE, 2^126 for 0xFF; the
 *          kind of damage for schemes 6 and 7.
 * TRUNC_NU levels come from the data bytes: cumulative sums of 1 + byte^2 over their total. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dqsgd.h"
#include "../internals.h" /* the dither generator (dqt_draw_at) */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) abort();                                                                         \
    } while (0)

static float f32(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint32_t ld32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The widths a scheme takes; 0 is its default. */
static unsigned eff_bits(unsigned scheme, unsigned bits) {
    if (bits) return bits;
    return scheme == DQ_SCHEME_TERNGRAD ? 2u : scheme == DQ_SCHEME_NATURAL ? 8u : scheme == DQ_SCHEME_TWOMEANS ? 1u : 4u;
}
static int bits_ok(unsigned scheme, unsigned b) {
    switch (scheme) {
    case DQ_SCHEME_QSGD: return b >= 1u && b <= 16u;
    case DQ_SCHEME_TERNGRAD: return b == 2u;
    case DQ_SCHEME_TWOMEANS: return b == 1u;
    case DQ_SCHEME_TRUNC: return b >= 2u && b <= 16u;
    default: return b >= 2u && b <= 8u;
    }
}

/* s levels 0 < l_1 < ... < l_s = 1 from the data: cumulative sums of 1 + byte^2 (at most
 * 127 x 65026 < 2^24, so every sum and quotient is distinct and exact enough) over the total. */
static void make_levels(const uint8_t *d, size_t dn, unsigned s, float *lv) {
    uint32_t cum[127], total = 0;
    unsigned l;
    for (l = 0; l < s; l++) {
        uint32_t b = dn ? d[l % dn] : 0u;
        total += 1u + b * b;
        cum[l] = total;
    }
    for (l = 0; l < s; l++) lv[l] = (float)cum[l] / (float)total;
}

/* Encode p by ranges of dq_range_align, the last range first, then finish: the same bytes as
 * m[0..len) and, with r0, the same residual as rw. */
static void check_ranges(const dq_params *p, const float *x, size_t n, const float *r0, const float *rw,
                         const uint8_t *m, size_t len, const float *y) {
    size_t a = dq_range_align(p, n), nr, k;
    uint8_t *buf = (uint8_t *)malloc(len);
    float *r = r0 ? (float *)malloc(n * sizeof(float)) : NULL, *part = (float *)malloc(n * sizeof(float));
    CHECK(a != 0 && buf != NULL && part != NULL && (!r0 || r != NULL));
    if (r) memcpy(r, r0, n * sizeof(float));
    memset(buf, 0xA5, len);
    nr = (n + a - 1u) / a;
    for (k = nr; k-- > 0;) {
        size_t b = k * a, e = b + a < n ? b + a : n;
        CHECK(dq_encode_range(p, n, b, e, x + b, r ? r + b : NULL, buf, len) == DQ_OK);
        CHECK(dq_decode_range(m, len, b, e, part + b) == DQ_OK);
    }
    CHECK(dq_encode_finish(buf, len) == DQ_OK);
    CHECK(memcmp(buf, m, len) == 0);
    CHECK(memcmp(part, y, n * sizeof(float)) == 0);
    if (r) CHECK(memcmp(r, rw, n * sizeof(float)) == 0);
    free(buf);
    free(r);
    free(part);
}

/* A job (dq_job_*) with up to 4 parts, each phase run last part first, gives m's bytes and
 * residual. */
static void check_job(const dq_params *p, const float *x, size_t n, const float *r0, const float *rw,
                      const uint8_t *m, size_t len, size_t parts) {
    size_t cap = 0, wsz = 0, got = 0, j;
    uint8_t *dst, *work;
    float *r = r0 ? (float *)malloc(n * sizeof(float)) : NULL;
    dq_job job;
    CHECK(dq_encode_capacity(p, n, &cap) == DQ_OK && dq_job_work_size(p, n, parts, &wsz) == DQ_OK);
    dst = (uint8_t *)malloc(cap);
    work = (uint8_t *)malloc(wsz);
    CHECK(dst != NULL && work != NULL && (!r0 || r != NULL));
    if (r) memcpy(r, r0, n * sizeof(float));
    CHECK(dq_job_init(&job, p, n, parts, dst, cap, work, wsz) == DQ_OK && job.parts >= 1u && job.parts <= parts);
    for (j = job.parts; j-- > 0;) CHECK(dq_job_quantize(&job, j, x, r) == DQ_OK);
    CHECK(dq_job_plan(&job) == DQ_OK);
    for (j = job.parts; j-- > 0;) CHECK(dq_job_code(&job, j) == DQ_OK);
    CHECK(dq_job_finish(&job, &got) == DQ_OK && got == len && memcmp(dst, m, len) == 0);
    if (r) CHECK(memcmp(r, rw, n * sizeof(float)) == 0);
    free(dst);
    free(work);
    free(r);
}

/* A coded message m (coder written at m[8]) is the fixed message of the same params
 * re-coded, both ways, and decodes to y. */
static void check_coded(const dq_params *pf, const float *x, size_t n, const float *r0, const uint8_t *m, size_t len,
                        const float *y) {
    size_t flen = 0, fsize = 0, rlen = 0, cap = dq_encode_bound_coded(n, m[7]);
    uint8_t *fixed, *re = (uint8_t *)malloc(cap);
    float *r = r0 ? (float *)malloc(n * sizeof(float)) : NULL, *z = (float *)malloc(n * sizeof(float));
    CHECK(dq_encode_capacity(pf, n, &fsize) == DQ_OK);
    fixed = (uint8_t *)malloc(fsize);
    CHECK(fixed != NULL && re != NULL && z != NULL && (!r0 || r != NULL));
    if (r) memcpy(r, r0, n * sizeof(float));
    CHECK(dq_encode(pf, x, n, r, fixed, fsize, &flen) == DQ_OK && flen == fsize);
    CHECK(dq_decode(fixed, flen, z, n) == DQ_OK && memcmp(z, y, n * sizeof(float)) == 0);
    CHECK(dq_recode(m, len, DQ_CODER_FIXED, re, cap, &rlen) == DQ_OK && rlen == flen && memcmp(re, fixed, flen) == 0);
    CHECK(dq_recode(fixed, flen, m[8], re, cap, &rlen) == DQ_OK && rlen == len && memcmp(re, m, len) == 0);
    free(fixed);
    free(re);
    free(r);
    free(z);
}

/* ---- segmented messages (byte 2 bit 3; doc/FORMAT.md 24), dq_encode_segments:
 *  byte 0 and byte 7: seed of the split (counts and widths 2..16); byte 1: bucket as above;
 *  byte 2: bit 0 nearest, bit 1 max norm, bit 2 one invalid segment (count 0, width 1 or 17),
 *          bits 4-7 segments - 1 (at most n);
 *  bytes 3-5: seed, step, stream; byte 6: bits 0-2 coder (0 fixed only, 1 Elias, 2 rANS,
 *          3 AUTO, 4 the default, 5-7 fixed only), bit 5 checksum, bit 6 error feedback.
 * Checks: the status (EMPTY, BITS, or PARAM for rANS above 8 bits, at the first segment that
 * has one; NONFINITE or OVERFLOW for a non-finite input); a failure leaves the residual
 * untouched; the size is within dq_segments_capacity and is the table's sum; the header and
 * dq_segments_read give back the segments (counts, widths, first elements, the coders the
 * coder asked allows); each segment's scales are those of a lone message of its elements, and
 * each value is what FORMAT.md 5 to 7 give for that scale with the dither drawn at the
 * element's index in the whole vector; the residual is compensated - decoded; the first
 * segment's body is the lone message's; each segment decodes alone as a range. The draws are
 * the library's generator (tests/internals.h); seg_mix, splitmix64's finalizer, only picks the
 * split. */
static uint64_t seg_mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static void fuzz_segments(const uint8_t *data, size_t size) {
    static const unsigned coders[8] = {DQ_CODER_FIXED_ONLY, DQ_CODER_ELIAS, DQ_CODER_RANS,       DQ_CODER_AUTO,
                                       DQ_CODER_DEFAULT,    DQ_CODER_FIXED_ONLY, DQ_CODER_FIXED_ONLY,
                                       DQ_CODER_FIXED_ONLY};
    dq_segment seg[16], back[16];
    dq_params p;
    dq_header h;
    dq_status st, expect = DQ_OK;
    size_t n, m, i, j, cap = 0, len = 0, mm = 0, off, first;
    uint64_t rng;
    float *x, *y, *c, *r0 = NULL, *r = NULL, *tmp;
    uint8_t *msg;
    int ef, finite = 1, bad, coded = 0;
    unsigned asked, maxb = 0;
    memset(&p, 0, sizeof p);
    p.bucket = (data[1] & 1u) ? DQ_BUCKET_WHOLE : 8u * (1u + data[1] % 64u);
    p.rounding = (data[2] & 1u) ? DQ_ROUND_NEAREST : DQ_ROUND_STOCHASTIC;
    p.norm = (data[2] & 2u) ? DQ_NORM_MAX : DQ_NORM_L2;
    p.seed = data[3];
    p.step = data[4];
    p.stream = data[5];
    asked = coders[data[6] & 7u];
    p.coder = asked;
    p.checksum = (data[6] >> 5) & 1u;
    ef = (data[6] >> 6) & 1;
    bad = (data[2] >> 2) & 1;
    rng = (uint64_t)data[0] << 8 | data[7];
    m = 1u + (size_t)(data[2] >> 4);
    data += 8;
    size -= 8;
    n = size / 4u;
    if (n == 0) return;
    if (m > n) m = n;
    /* the split: m - 1 distinct cut points in 1 .. n - 1, as counts; widths 2..16 */
    memset(seg, 0, sizeof seg);
    {
        size_t left = n;
        for (j = 0; j < m; j++) {
            size_t rest = m - 1u - j, cnt;
            rng = seg_mix(rng + 0x9E3779B97F4A7C15ull);
            cnt = rest ? 1u + (size_t)(rng % (uint64_t)(left - rest)) : left;
            if (rest && (rng >> 40) % 3u == 0u) cnt = 1u + (size_t)((rng >> 20) % (uint64_t)(left - rest)) % 300u;
            seg[j].count = cnt;
            seg[j].bits = 2u + (unsigned)((rng >> 32) % 15u);
            left -= cnt;
        }
    }
    if (bad) { /* one invalid segment */
        rng = seg_mix(rng + 1u);
        j = (size_t)(rng % m);
        switch ((rng >> 32) % 3u) {
        case 0: seg[j].count = 0; break;
        case 1: seg[j].bits = 1; break;
        default: seg[j].bits = 17; break;
        }
    }
    for (j = 0; j < m && expect == DQ_OK; j++) { /* the library's order: the first segment with a fault */
        if (seg[j].count == 0)
            expect = DQ_ERR_EMPTY;
        else if (seg[j].bits < 2u || seg[j].bits > 16u)
            expect = DQ_ERR_BITS;
        else if (asked == DQ_CODER_RANS && seg[j].bits > 8u)
            expect = DQ_ERR_PARAM;
    }
    for (j = 0; j < m; j++)
        if (seg[j].bits > maxb && seg[j].bits <= 16u) maxb = seg[j].bits;
    x = (float *)malloc(n * sizeof(float));
    y = (float *)malloc(n * sizeof(float));
    c = (float *)malloc(n * sizeof(float));
    tmp = (float *)malloc(n * sizeof(float));
    CHECK(x && y && c && tmp);
    memcpy(x, data, n * sizeof(float));
    if (ef) {
        r0 = (float *)malloc(n * sizeof(float));
        r = (float *)malloc(n * sizeof(float));
        CHECK(r0 && r);
        for (i = 0; i < n; i++) r0[i] = x[n - 1u - i] * 0.125f;
        memcpy(r, r0, n * sizeof(float));
    }
    for (i = 0; i < n; i++) {
        c[i] = ef ? x[i] + r0[i] : x[i];
        if (!isfinite(c[i])) finite = 0;
    }
    st = dq_segments_capacity(&p, seg, m, &cap);
    if (expect != DQ_OK) {
        uint8_t one[64];
        CHECK(st == expect);
        CHECK(dq_encode_segments(&p, x, seg, m, r, one, sizeof one, &len) == expect);
        if (ef) CHECK(memcmp(r, r0, n * sizeof(float)) == 0);
        goto out;
    }
    CHECK(st == DQ_OK && cap >= 56u + 24u * m);
    msg = (uint8_t *)malloc(cap);
    CHECK(msg != NULL);
    st = dq_encode_segments(&p, x, seg, m, r, msg, cap, &len);
    if (!finite)
        CHECK(st == DQ_ERR_NONFINITE || st == DQ_ERR_OVERFLOW);
    else
        CHECK(st == DQ_OK || st == DQ_ERR_OVERFLOW);
    if (st != DQ_OK) {
        if (ef) CHECK(memcmp(r, r0, n * sizeof(float)) == 0); /* untouched */
        free(msg);
        goto out;
    }
    CHECK(len <= cap && dq_header_read(msg, len, &h) == DQ_OK && dq_verify(msg, len) == DQ_OK);
    CHECK(h.count == n && h.msg_size == len && h.segments == m && h.bits == maxb && h.coder == DQ_CODER_FIXED);
    CHECK((h.flags & DQ_FLAG_SEGMENTS) && ((h.flags & DQ_FLAG_STOCHASTIC) != 0) == (p.rounding != DQ_ROUND_NEAREST));
    CHECK(dq_segments_read(msg, len, back, 16, &mm) == DQ_OK && mm == m);
    CHECK(dq_decode(msg, len, y, n) == DQ_OK);
    off = 56u + 24u * m;
    first = 0;
    for (j = 0; j < m; j++) {
        dq_params q = p;
        size_t qcap, qlen = 0, bk, t;
        unsigned b = seg[j].bits;
        float smax = (float)((1u << (b - 1u)) - 1u);
        uint8_t *lone;
        const uint8_t *sc;
        CHECK(back[j].count == seg[j].count && back[j].bits == b && back[j].first == first);
        CHECK(back[j].size == (size_t)ld32(msg + 56u + 24u * j + 8u) && back[j].coder == msg[56u + 24u * j + 17u]);
        if (asked == DQ_CODER_FIXED_ONLY || asked == DQ_CODER_DEFAULT) /* small inputs: the default is fixed */
            CHECK(back[j].coder == DQ_CODER_FIXED || (asked == DQ_CODER_DEFAULT && seg[j].count >= DQ_CODER_AUTO_MIN));
        else if (asked != DQ_CODER_AUTO)
            CHECK(back[j].coder == DQ_CODER_FIXED || back[j].coder == asked);
        /* the lone message of this segment's elements, with the coder the segment was sent with */
        q.bits = b;
        q.checksum = 0;
        q.coder = back[j].coder == DQ_CODER_FIXED ? DQ_CODER_FIXED_ONLY : back[j].coder;
        qcap = dq_encode_bound_coded(seg[j].count, b);
        lone = (uint8_t *)malloc(qcap);
        CHECK(lone != NULL);
        CHECK(dq_encode(&q, c + first, seg[j].count, NULL, lone, qcap, &qlen) == DQ_OK);
        CHECK(lone[8] == DQ_CODER_FIXED || lone[8] == q.coder);
        sc = msg + off + (back[j].coder ? 8u : 0u);
        bk = p.bucket == DQ_BUCKET_WHOLE ? seg[j].count : p.bucket;
        /* the scales do not depend on the dither; the codes (so the coded size, and whether a
         * forced coder is smaller than fixed) do, unless the dither indices agree */
        CHECK(memcmp(sc, lone + (lone[8] ? 56u : 48u), 4u * ((seg[j].count - 1u) / bk + 1u)) == 0);
        if (j == 0 || p.rounding == DQ_ROUND_NEAREST) /* the same dither indices: the same body */
            CHECK(qlen == DQ_HEADER_SIZE + back[j].size && lone[8] == back[j].coder &&
                  memcmp(lone + DQ_HEADER_SIZE, msg + off, back[j].size) == 0);
        free(lone);
        for (t = 0; t < seg[j].count; t++) { /* FORMAT.md 5.3, 6.2-6.4, 7.2 at index first + t */
            float scale = f32(ld32(sc + 4u * (t / bk))), inv = scale == 0.0f ? 0.0f : smax / scale, v, f, th;
            float cx = c[first + t], a = fabsf(cx), rr = a * inv;
            uint32_t l;
            th = p.rounding == DQ_ROUND_NEAREST ? 0.5f : dqt_draw_at(p.seed, p.step, p.stream, first + t);
            if (!(rr < smax)) rr = smax;
            l = (uint32_t)rr;
            f = rr - (float)l;
            if (th < f) l++;
            v = (float)l * (scale / smax);
            if (l > 0u && signbit(cx)) v = -v;
            CHECK(memcmp(&v, &y[first + t], sizeof v) == 0);
            if (ef) {
                float e = cx - v;
                CHECK(memcmp(&e, &r[first + t], sizeof e) == 0);
            }
        }
        /* the segment alone as a range */
        memset(tmp, 0xA5, seg[j].count * sizeof(float));
        CHECK(dq_decode_range(msg, len, first, first + seg[j].count, tmp) == DQ_OK);
        CHECK(memcmp(tmp, y + first, seg[j].count * sizeof(float)) == 0);
        coded |= back[j].coder != DQ_CODER_FIXED;
        off += back[j].size;
        first += seg[j].count;
    }
    CHECK(len == off + ((h.flags & DQ_FLAG_CHECKSUM) ? 4u : 0u));
    /* the checksum: asked, or added by the default coder when a segment is coded */
    CHECK(((h.flags & DQ_FLAG_CHECKSUM) != 0) == (p.checksum || (asked == DQ_CODER_DEFAULT && coded)));
    free(msg);
out:
    free(x);
    free(y);
    free(c);
    free(tmp);
    free(r0);
    free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const unsigned schemes[8] = {DQ_SCHEME_QSGD,  DQ_SCHEME_NUQSGD,   DQ_SCHEME_NATURAL, DQ_SCHEME_TERNGRAD,
                                        DQ_SCHEME_TRUNC, DQ_SCHEME_TRUNC_NU, DQ_SCHEME_TRUNC,   DQ_SCHEME_TRUNC_NU};
    static const unsigned coders[4] = {DQ_CODER_FIXED_ONLY, DQ_CODER_ELIAS, DQ_CODER_RANS, DQ_CODER_AUTO};
    dq_params p;
    size_t n, i, cap, len = 0, len2 = 0, want = 0, nb, bk, ntab = 0, off;
    float *x, *y, *c, *r0 = NULL, *r = NULL, *r2 = NULL, lv[127];
    uint8_t *m, *m2;
    dq_header h;
    dq_status st, expect = DQ_OK;
    unsigned scheme, b, s;
    int finite = 1, ef, nearest, bad_alpha, bad_levels, tm;
    if (size < 8) return 0;
    if (data[2] & 8u) { /* segmented messages */
        fuzz_segments(data, size);
        return 0;
    }
    tm = (data[2] & 4u) != 0;
    scheme = tm ? (unsigned)DQ_SCHEME_TWOMEANS : schemes[data[6] & 7u];
    bad_alpha = !tm && (data[6] & 7u) == 6u;
    bad_levels = !tm && (data[6] & 7u) == 7u;
    memset(&p, 0, sizeof p);
    p.scheme = (dq_scheme)scheme;
    if (tm && data[0] < 128u)
        p.bits = (data[0] & 0x40u) ? 0u : 1u;
    else if (scheme == DQ_SCHEME_QSGD || data[0] >= 128u || bad_alpha || bad_levels)
        p.bits = 1u + data[0] % 16u;
    else if ((scheme == DQ_SCHEME_NATURAL || scheme == DQ_SCHEME_TERNGRAD) && (data[0] & 0x40u))
        p.bits = 0; /* the scheme's default */
    else
        p.bits = scheme == DQ_SCHEME_TERNGRAD ? 2u : 2u + data[0] % (scheme == DQ_SCHEME_TRUNC ? 15u : 7u);
    if ((bad_alpha || bad_levels) && !bits_ok(scheme, p.bits)) p.bits = 2u + data[0] % 7u; /* reach alpha */
    p.bucket = (data[1] & 1u) ? DQ_BUCKET_WHOLE : 8u * (1u + data[1] % 64u);
    nearest = (data[2] & 1u) != 0;
    p.rounding = nearest ? DQ_ROUND_NEAREST : DQ_ROUND_STOCHASTIC;
    if (scheme == DQ_SCHEME_QSGD || scheme == DQ_SCHEME_NUQSGD || (data[6] & 0x80u))
        p.norm = (data[2] & 2u) ? DQ_NORM_MAX : DQ_NORM_L2;
    p.seed = data[3];
    p.step = data[4];
    p.stream = data[5];
    p.coder = coders[(data[6] >> 3) & 3u];
    p.checksum = (data[6] >> 5) & 1u;
    ef = (data[6] >> 6) & 1;
    b = eff_bits(scheme, p.bits);
    s = b >= 2u && b <= 16u ? (1u << (b - 1u)) - 1u : 1u;
    if (scheme == DQ_SCHEME_TRUNC || scheme == DQ_SCHEME_TRUNC_NU) {
        static const uint32_t bad[7] = {0x00000000u, 0xBF800000u, 0x7FC00000u, 0x7F800000u,
                                        0x0D7FFFFFu, 0x7E800001u, 0x00000001u};
        uint8_t a = data[7];
        p.alpha = a == 0xFEu ? f32(0x0D800000u) : a == 0xFFu ? f32(0x7E800000u)
                                                              : f32((95u + a % 64u) << 23 | (uint32_t)(a >> 6) << 21);
        if (bad_alpha) p.alpha = f32(bad[a % 7u]); /* 0, -1, NaN, Inf, below 2^-100, above 2^126, subnormal */
    }
    data += 8;
    size -= 8;
    if (scheme == DQ_SCHEME_TRUNC_NU && b >= 2u && b <= 8u) {
        ntab = s;
        make_levels(data, size, s, lv);
        p.levels = lv;
        if (bad_levels) {
            switch (data[-1] % 4u) {
            case 0: /* the last level is not 1 */
                for (i = 0; i < s; i++) lv[i] *= 0.5f;
                break;
            case 1: /* two equal levels (or, with one level, a level above 1) */
                if (s > 1u)
                    lv[s / 2u] = lv[s / 2u - 1u];
                else
                    lv[0] = 2.0f;
                break;
            case 2: lv[(s - 1u) / 2u] = f32(0x7FC00000u); break;
            default: p.levels = NULL; break;
            }
        }
    }
    n = size / 4u;
    if (n == 0) return 0;
    if (tm) ntab = (p.bucket == DQ_BUCKET_WHOLE ? 1u : (n - 1u) / p.bucket + 1u); /* the negative means */
    /* the expected parameter status, in the library's order */
    if (!bits_ok(scheme, b))
        expect = DQ_ERR_BITS;
    else if (tm && !nearest) /* two-means rounds to nearest only */
        expect = DQ_ERR_PARAM;
    else if (p.norm != DQ_NORM_DEFAULT && scheme != DQ_SCHEME_QSGD && scheme != DQ_SCHEME_NUQSGD)
        expect = DQ_ERR_PARAM;
    else if ((p.coder == DQ_CODER_ELIAS && b < 2u) || (p.coder == DQ_CODER_RANS && b > 8u))
        expect = DQ_ERR_PARAM;
    else if (bad_alpha || bad_levels)
        expect = DQ_ERR_PARAM;
    x = (float *)malloc(n * sizeof(float));
    y = (float *)malloc(n * sizeof(float));
    c = (float *)malloc(n * sizeof(float));
    cap = dq_encode_bound_coded(n, b >= 1u && b <= 16u ? b : 16u);
    m = (uint8_t *)malloc(cap);
    m2 = (uint8_t *)malloc(cap);
    CHECK(x && y && c && m && m2 && cap != 0);
    memcpy(x, data, n * sizeof(float));
    if (ef) { /* a residual from the data, an eighth of the input reversed */
        r0 = (float *)malloc(n * sizeof(float));
        r = (float *)malloc(n * sizeof(float));
        r2 = (float *)malloc(n * sizeof(float));
        CHECK(r0 && r && r2);
        for (i = 0; i < n; i++) r0[i] = x[n - 1u - i] * 0.125f;
        memcpy(r, r0, n * sizeof(float));
        memcpy(r2, r0, n * sizeof(float));
    }
    for (i = 0; i < n; i++) {
        c[i] = ef ? x[i] + r0[i] : x[i]; /* what is quantized (FORMAT.md 6.6) */
        if (!isfinite(c[i])) finite = 0;
    }
    st = dq_encode(&p, x, n, r, m, cap, &len);
    if (expect != DQ_OK) {
        CHECK(st == expect);
    } else if (!finite) {
        /* buckets are checked in order: a non-finite input fails, with DQ_ERR_NONFINITE or with
         * the DQ_ERR_OVERFLOW of an earlier bucket whose scale exceeds 2^126 */
        CHECK(st == DQ_ERR_NONFINITE || st == DQ_ERR_OVERFLOW);
    } else {
        CHECK(st == DQ_OK || (st == DQ_ERR_OVERFLOW && scheme != DQ_SCHEME_TRUNC && scheme != DQ_SCHEME_TRUNC_NU));
    }
    if (st != DQ_OK && ef) CHECK(memcmp(r, r0, n * sizeof(float)) == 0); /* untouched */
    if (st == DQ_OK) {
        const uint8_t *sc;
        double gap = 0.0, smax = (double)s;
        CHECK(dq_header_read(m, len, &h) == DQ_OK && h.count == n && h.msg_size == len && len <= cap);
        CHECK(h.scheme == scheme && h.bits == b && dq_verify(m, len) == DQ_OK);
        CHECK(p.coder == DQ_CODER_AUTO || h.coder == p.coder || h.coder == DQ_CODER_FIXED);
        CHECK(len <= dq_encode_bound(n, b)); /* the receiver's bound, every coder */
        bk = h.bucket ? h.bucket : n;
        nb = (n - 1u) / bk + 1u;
        off = h.coder == DQ_CODER_FIXED ? DQ_HEADER_SIZE : DQ_HEADER_SIZE + 8u;
        /* the layout's size: header (and length), scales, levels, payload, checksum */
        want = off + 4u * (nb + ntab) + (h.coder == DQ_CODER_FIXED ? (n * b + 7u) / 8u : (size_t)ld32(m + 48)) +
               (p.checksum ? 4u : 0u);
        CHECK(want == len && (h.coder == DQ_CODER_FIXED || ld32(m + 52) == 0u));
        CHECK(dq_encode_capacity(&p, n, &want) == DQ_OK);
        if (p.coder == DQ_CODER_FIXED)
            CHECK(want == len && len <= dq_encode_bound(n, b));
        else
            CHECK(len <= want); /* forced coders: the room they need; AUTO: the fixed size */
        if (h.coder != DQ_CODER_FIXED) CHECK(dq_coded_size(m, len, h.coder, &want) == DQ_OK && want == len);
        CHECK(dq_encode(&p, x, n, r2, m2, cap, &len2) == DQ_OK && len2 == len && memcmp(m, m2, len) == 0);
        if (ef) CHECK(memcmp(r, r2, n * sizeof(float)) == 0);
        CHECK(dq_decode(m, len, y, n) == DQ_OK);
        sc = m + off;
        if (scheme == DQ_SCHEME_TRUNC || scheme == DQ_SCHEME_TRUNC_NU)
            for (i = 0; i < nb; i++) CHECK(f32(ld32(sc + 4u * i)) == p.alpha);
        for (i = 0; i < ntab && !tm; i++) { /* the levels, and the widest gap between them */
            double g = (double)lv[i] - (i ? (double)lv[i - 1] : 0.0);
            CHECK(f32(ld32(sc + 4u * (nb + i))) == lv[i]);
            if (g > gap) gap = g;
        }
        for (i = 0; i < n; i++) {
            double scale = (double)f32(ld32(sc + 4u * (i / bk))), a = fabs((double)c[i]), v, g, tol;
            double clip = a < scale ? a : scale, signed_clip = c[i] < 0.0f ? -clip : clip;
            float e = c[i] - y[i]; /* FORMAT.md 6.6, in float */
            if (ef) CHECK(memcmp(&r[i], &e, sizeof e) == 0);
            if (tm) { /* the group's mean: scale i / bk, or the negative mean nb + i / bk (sign bit set) */
                uint32_t u = ld32(sc + 4u * (signbit(c[i]) ? nb + i / bk : i / bk));
                CHECK(memcmp(&y[i], &u, 4) == 0 && (u >> 31) == (signbit(c[i]) ? 1u : 0u));
                continue;
            }
            if (scale == 0.0) { /* flushed bucket: everything decodes to 0 */
                CHECK(y[i] == 0.0f);
                continue;
            }
            if (scheme == DQ_SCHEME_QSGD && b == 1u) {
                if (nearest) continue; /* scaled sign: biased by design */
                g = 2.0 * scale;
            } else if (scheme == DQ_SCHEME_NUQSGD || scheme == DQ_SCHEME_NATURAL) {
                v = ldexp(1.0, 1 - (int)s); /* the lowest level */
                g = (clip / scale > v ? clip / scale : v) * scale;
            } else if (scheme == DQ_SCHEME_TRUNC_NU) {
                g = gap * scale;
            } else {
                g = scale / smax;
            }
            tol = (nearest && b > 1u ? 0.5 : 1.0) * g + 8.0 * 5.96e-8 * scale;
            if (fabs((double)y[i] - signed_clip) > tol) abort();
        }
        check_job(&p, x, n, r0, r, m, len, 1u + (size_t)(data[3] & 3u));
        if (h.coder != DQ_CODER_FIXED) {
            dq_params pf = p;
            pf.coder = DQ_CODER_FIXED_ONLY;
            check_coded(&pf, x, n, r0, m, len, y);
        } else if (n <= 4096u) {
            dq_params pr = p;
            pr.coder = DQ_CODER_FIXED_ONLY;
            check_ranges(&pr, x, n, r0, r, m, len, y);
        }
    }
    free(x);
    free(y);
    free(c);
    free(m);
    free(m2);
    free(r0);
    free(r);
    free(r2);
    return 0;
}
