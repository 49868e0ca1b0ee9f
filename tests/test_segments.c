/* Segmented messages (doc/FORMAT.md 24): mixed widths decode bit for bit to what the
 * unsegmented encoder gives each segment's elements at that width, with every coder and every
 * decoder; ranges; residuals; damaged, truncated and lying tables give their status and leave
 * the output untouched; dither indices follow the whole vector, past 2^32 too. */
#include "../dqsgd.h"
#include "harness.h"
#include "internals.h"

#define SEED 0x5E6Du

static dq_params mkp(unsigned coder, uint32_t bucket, unsigned checksum) {
    dq_params p;
    memset(&p, 0, sizeof p);
    p.coder = coder;
    p.bucket = bucket;
    p.checksum = checksum;
    p.seed = SEED;
    p.step = 9;
    p.stream = 2;
    return p;
}

/* Gaussian values with runs of zeros (where Elias wins), so AUTO picks different coders. */
static void fill(float *x, size_t n, uint64_t seed) {
    dq_t_rng r;
    size_t i;
    r.s = seed;
    for (i = 0; i < n; i++) x[i] = (i / 1500u) % 3u == 2u ? 0.0f : (float)dq_t_gauss(&r);
}

/* The values dq_encode() (fixed layout) gives x[0..n) at `bits`. */
static void whole_values(const dq_params *p, unsigned bits, const float *x, size_t n, float *out) {
    dq_params q = *p;
    size_t cap = dq_encode_bound(n, bits), len = 0;
    uint8_t *msg = (uint8_t *)xmalloc(cap);
    q.bits = bits;
    q.coder = DQ_CODER_FIXED_ONLY;
    q.checksum = 0;
    CHECK(dq_encode(&q, x, n, NULL, msg, cap, &len) == DQ_OK);
    CHECK(dq_decode(msg, len, out, n) == DQ_OK);
    free(msg);
}

static int same_bits(const float *a, const float *b, size_t n) {
    size_t i;
    for (i = 0; i < n; i++)
        if (dq_t_fbits(a[i]) != dq_t_fbits(b[i])) return 0;
    return 1;
}

/* Encodes x with the segments; the message in *msg (exact-size copy), its length returned. */
static size_t encode_segs(const dq_params *p, const float *x, const dq_segment *seg, size_t m, float *res,
                          uint8_t **msg) {
    size_t cap = 0, len = 0;
    uint8_t *buf;
    CHECK(dq_segments_capacity(p, seg, m, &cap) == DQ_OK);
    buf = (uint8_t *)xmalloc(cap);
    CHECK(dq_encode_segments(p, x, seg, m, res, buf, cap, &len) == DQ_OK);
    CHECK(len <= cap);
    *msg = bdup(buf, len);
    free(buf);
    return len;
}

/* Segments on bucket boundaries (the last one aside), random widths: each segment's values
 * equal those of the whole vector sent at its width (same scales, same dither indices). */
static void test_values_every_coder(void) {
    static const unsigned coders[] = {DQ_CODER_FIXED_ONLY, DQ_CODER_DEFAULT, DQ_CODER_AUTO, DQ_CODER_ELIAS,
                                      DQ_CODER_RANS};
    enum { M = 7 };
    static const size_t counts[M] = {64, 8192, 640, 12800, 4096, 192, 5001};
    dq_segment seg[M], back[M];
    size_t n = 0, j, c, mm = 0;
    float *x, *got, *want, *acc, *ref;
    uint16_t *h16, *r16;
    dq_t_rng r;
    unsigned seen_coders = 0;
    r.s = 17;
    for (j = 0; j < M; j++) n += counts[j];
    x = (float *)xmalloc(n * 4u);
    got = (float *)xmalloc(n * 4u);
    want = (float *)xmalloc(n * 4u);
    acc = (float *)xmalloc(n * 4u);
    ref = (float *)xmalloc(n * 4u);
    h16 = (uint16_t *)xmalloc(n * 2u);
    r16 = (uint16_t *)xmalloc(n * 2u);
    fill(x, n, 3);
    for (c = 0; c < sizeof coders / sizeof coders[0]; c++) {
        dq_params p = mkp(coders[c], 64, 0);
        size_t len, first = 0, i;
        uint8_t *msg;
        dq_header h;
        dq_message mo;
        for (j = 0; j < M; j++) {
            seg[j].count = counts[j];
            seg[j].bits = 2u + (unsigned)(dq_t_next(&r) % (coders[c] == DQ_CODER_RANS ? 7u : 15u));
        }
        seg[1].bits = 4; /* a dense segment that rANS takes, and a sparse one Elias takes */
        seg[3].bits = 3;
        len = encode_segs(&p, x, seg, M, NULL, &msg);
        CHECK(dq_header_read(msg, len, &h) == DQ_OK);
        CHECK(h.count == n && h.segments == M && h.msg_size == len && h.coder == DQ_CODER_FIXED);
        CHECK((h.flags & DQ_FLAG_SEGMENTS) && !(h.flags & DQ_FLAG_CHECKSUM) == (coders[c] != DQ_CODER_DEFAULT));
        CHECK(dq_segments_read(msg, len, back, M, &mm) == DQ_OK && mm == M);
        for (j = 0; j < M; j++) {
            CHECK(back[j].count == counts[j] && back[j].bits == seg[j].bits && back[j].first == first);
            if (h.bits < seg[j].bits) CHECK(0);
            seen_coders |= 1u << back[j].coder;
            if (coders[c] == DQ_CODER_FIXED_ONLY) CHECK(back[j].coder == DQ_CODER_FIXED);
            first += counts[j];
        }
        CHECK(dq_verify(msg, len) == DQ_OK);
        memset(got, 0, n * 4u);
        CHECK(dq_decode(msg, len, got, n) == DQ_OK);
        for (j = 0, first = 0; j < M; first += counts[j], j++) {
            whole_values(&p, seg[j].bits, x, n, want);
            CHECKF(same_bits(got + first, want + first, counts[j]), "coder %u segment %lu (%u bits)", coders[c],
                   (unsigned long)j, seg[j].bits);
        }
        /* decode_add, the opened message, typed outputs: the same values */
        for (i = 0; i < n; i++) {
            float v = got[i] * 0.75f;
            acc[i] = (float)i * 0.001f;
            ref[i] = acc[i] + v;
        }
        CHECK(dq_decode_add(msg, len, 0.75f, acc, n) == DQ_OK && same_bits(acc, ref, n));
        CHECK(dq_decode_add(msg, len, 0.75f, acc, n - 1) == DQ_ERR_SIZE_MISMATCH);
        CHECK(dq_message_open(msg, len, &mo) == DQ_OK && mo.h.segments == M);
        memset(want, 0, n * 4u);
        CHECK(dq_message_decode(&mo, want, n) == DQ_OK && same_bits(want, got, n));
        CHECK(dq_decode_typed(msg, len, DQ_F16, h16, n) == DQ_OK);
        CHECK(dq_convert(DQ_F32, got, n, DQ_F16, r16) == DQ_OK && memcmp(h16, r16, n * 2u) == 0);
        free(msg);
    }
    CHECKF((seen_coders & 0xBu) == 0xBu, "coders seen: mask %x (fixed, Elias and rANS expected)", seen_coders);
    free(x), free(got), free(want), free(acc), free(ref), free(h16), free(r16);
}

/* Sizes: the fixed layout's exact size and capacity; the default adds the checksum only when a
 * segment is coded; a message of one width on bucket boundaries has the whole message's scales,
 * so its norm is the same sum. */
static void test_sizes_and_norm(void) {
    dq_segment seg[3] = {{1024, 5, 0, 0, 0}, {100, 9, 0, 0, 0}, {37, 16, 0, 0, 0}};
    size_t n = 1161, cap = 0, len, j, body = 0;
    float x[1161];
    uint8_t *msg;
    dq_params p = mkp(DQ_CODER_FIXED_ONLY, 8, 0);
    double nm = 0.0, nw = 0.0, ref = 0.0;
    fill(x, n, 5);
    for (j = 0; j < 3; j++) body += 4u * ((seg[j].count + 7u) / 8u) + (seg[j].count * seg[j].bits + 7u) / 8u;
    CHECK(dq_segments_capacity(&p, seg, 3, &cap) == DQ_OK && cap == 56u + 72u + body);
    len = encode_segs(&p, x, seg, 3, NULL, &msg);
    CHECK(len == cap);
    free(msg);
    p.checksum = 1;
    CHECK(dq_segments_capacity(&p, seg, 3, &cap) == DQ_OK && cap == 56u + 72u + body + 4u);
    len = encode_segs(&p, x, seg, 3, NULL, &msg);
    CHECK(len == cap && dq_verify(msg, len) == DQ_OK);
    free(msg);
    p = mkp(DQ_CODER_DEFAULT, 8, 0); /* every segment below DQ_CODER_AUTO_MIN: fixed, no checksum */
    CHECK(dq_segments_capacity(&p, seg, 3, &cap) == DQ_OK && cap == 56u + 72u + body);
    len = encode_segs(&p, x, seg, 3, NULL, &msg);
    CHECK(len == cap);
    free(msg);
    /* norm: one width, segments on bucket boundaries */
    p = mkp(DQ_CODER_FIXED_ONLY, 8, 0);
    for (j = 0; j < 3; j++) seg[j].bits = 6;
    seg[1].count = 96;
    seg[2].count = 41;
    len = encode_segs(&p, x, seg, 3, NULL, &msg);
    CHECK(dq_message_norm2(msg, len, &nm) == DQ_OK);
    {
        uint8_t whole[DQ_ENCODE_BOUND(1161, 6)];
        size_t wl = 0;
        p.bits = 6;
        CHECK(dq_encode(&p, x, n, NULL, whole, sizeof whole, &wl) == DQ_OK);
        CHECK(dq_message_norm2(whole, wl, &nw) == DQ_OK);
    }
    for (j = 0; j < n; j++) ref += (double)x[j] * (double)x[j];
    CHECKF(nm == nw, "%.17g vs %.17g", nm, nw);
    CHECK(fabs(nm - ref) <= 1e-6 * ref);
    CHECK(dq_message_norm2(msg, len - 1u, &nm) == DQ_ERR_TRUNCATED);
    free(msg);
}

/* Error feedback: residual = (x + residual) - decoded, bit for bit; a failure in any segment
 * leaves the whole residual untouched. */
static void test_residual(void) {
    dq_segment seg[3] = {{5000, 3, 0, 0, 0}, {700, 7, 0, 0, 0}, {4500, 2, 0, 0, 0}};
    size_t n = 10200, i, len, cap = 0, dl = 0;
    float *x = (float *)xmalloc(n * 4u), *r = (float *)xmalloc(n * 4u), *r0, *dec = (float *)xmalloc(n * 4u);
    uint8_t *msg, *buf;
    dq_params p = mkp(DQ_CODER_DEFAULT, 512, 0);
    dq_t_rng g;
    g.s = 8;
    fill(x, n, 7);
    for (i = 0; i < n; i++) r[i] = (float)dq_t_gauss(&g) * 0.1f;
    r0 = fdup(r, n);
    len = encode_segs(&p, x, seg, 3, r, &msg);
    CHECK(dq_decode(msg, len, dec, n) == DQ_OK);
    for (i = 0; i < n; i++) {
        float s = x[i] + r0[i], want = s - dec[i];
        if (dq_t_fbits(r[i]) != dq_t_fbits(want)) break;
    }
    CHECKF(i == n, "residual differs at %lu", (unsigned long)i);
    free(msg);
    /* NaN, then an overflow, in the last segment: nothing moves */
    CHECK(dq_segments_capacity(&p, seg, 3, &cap) == DQ_OK);
    buf = (uint8_t *)xmalloc(cap);
    memcpy(r0, r, n * 4u);
    x[n - 3] = (float)NAN;
    CHECK(dq_encode_segments(&p, x, seg, 3, r, buf, cap, &dl) == DQ_ERR_NONFINITE);
    CHECK(memcmp(r, r0, n * 4u) == 0 && dl == 0);
    x[n - 3] = 3e38f;
    x[n - 4] = 3e38f;
    CHECK(dq_encode_segments(&p, x, seg, 3, r, buf, cap, &dl) == DQ_ERR_OVERFLOW);
    CHECK(memcmp(r, r0, n * 4u) == 0 && dl == 0);
    free(buf), free(x), free(r), free(r0), free(dec);
}

/* Ranges cut at segment boundaries and at each segment's own alignment decode what the whole
 * decode gives; misaligned cuts are DQ_ERR_RANGE, a partial Elias segment DQ_ERR_PARAM. */
static void test_ranges(void) {
    dq_segment seg[4] = {{9000, 4, 0, 0, 0}, {300, 11, 0, 0, 0}, {20000, 2, 0, 0, 0}, {777, 5, 0, 0, 0}};
    size_t n = 30077, len, j, mm = 0;
    float *x = (float *)xmalloc(n * 4u), *all = (float *)xmalloc(n * 4u), *part = (float *)xmalloc(n * 4u);
    uint8_t *msg;
    dq_segment back[4];
    unsigned c;
    fill(x, n, 9);
    for (c = 0; c < 2; c++) {
        dq_params p = mkp(c ? DQ_CODER_RANS : DQ_CODER_FIXED_ONLY, 256, 0);
        size_t cuts[64], nc = 0, k, first = 0;
        dq_t_rng r;
        if (c) seg[1].bits = 8;
        r.s = 23 + c;
        len = encode_segs(&p, x, seg, 4, NULL, &msg);
        CHECK(dq_decode(msg, len, all, n) == DQ_OK);
        CHECK(dq_segments_read(msg, len, back, 4, &mm) == DQ_OK);
        if (c) CHECK(back[0].coder == DQ_CODER_RANS && back[2].coder == DQ_CODER_RANS);
        cuts[nc++] = 0;
        for (j = 0; j < 4; first += seg[j].count, j++) { /* random aligned cuts inside each segment */
            dq_params q = p;
            size_t a, t;
            q.bits = seg[j].bits;
            a = dq_range_align(&q, seg[j].count);
            for (t = 0; t < 3; t++) {
                size_t at = first + a * (size_t)(dq_t_next(&r) % (seg[j].count / a + 1u));
                if (at > cuts[nc - 1] && at < first + seg[j].count) cuts[nc++] = at;
            }
            if (j == 1) continue; /* a range over the end of one segment and into the next */
            cuts[nc++] = first + seg[j].count;
        }
        for (k = 0; k + 1 < nc; k++) {
            size_t b = cuts[k], e = cuts[k + 1], i;
            memset(part, 0xFF, n * 4u);
            CHECKF(dq_decode_range(msg, len, b, e, part) == DQ_OK, "range %lu..%lu", (unsigned long)b,
                   (unsigned long)e);
            CHECK(same_bits(part, all + b, e - b));
            for (i = 0; i < e - b; i++) part[i] = 1.0f;
            CHECK(dq_decode_add_range(msg, len, b, e, 2.0f, part) == DQ_OK);
            for (i = 0; i < e - b; i++) {
                float v = all[b + i] * 2.0f, want = 1.0f + v;
                if (dq_t_fbits(part[i]) != dq_t_fbits(want)) break;
            }
            CHECK(i == e - b);
        }
        CHECK(dq_decode_range(msg, len, 0, n, part) == DQ_OK && same_bits(part, all, n));
        CHECK(dq_decode_range(msg, len, 1, 9000, part) == DQ_ERR_RANGE);
        CHECK(dq_decode_range(msg, len, 0, 8999, part) == DQ_ERR_RANGE);
        CHECK(dq_decode_range(msg, len, 9000, 9001, part) == DQ_ERR_RANGE);
        CHECK(dq_decode_range(msg, len, 5, 5, part) == DQ_ERR_RANGE);
        CHECK(dq_decode_range(msg, len, 0, n + 1, part) == DQ_ERR_RANGE);
        free(msg);
    }
    { /* Elias segments are one stream each: whole ones decode, partial ones are refused */
        dq_params p = mkp(DQ_CODER_ELIAS, 256, 0);
        for (j = 0; j < n; j++) x[j] = j % 97u == 0u ? (float)j : 0.0f;
        len = encode_segs(&p, x, seg, 4, NULL, &msg);
        CHECK(dq_segments_read(msg, len, back, 4, &mm) == DQ_OK && back[2].coder == DQ_CODER_ELIAS);
        CHECK(dq_decode(msg, len, all, n) == DQ_OK);
        CHECK(dq_decode_range(msg, len, 9300, 29300, part) == DQ_OK && same_bits(part, all + 9300, 20000));
        CHECK(dq_decode_range(msg, len, 9300, 9556, part) == DQ_ERR_PARAM);
        free(msg);
    }
    free(x), free(all), free(part);
}

/* Re-seals a message after a deliberate edit: the table's CRC, then the header's. */
static void reseal(uint8_t *msg) {
    size_t m = dq_t_ld32(msg + 48);
    dq_t_st32(msg + 52, dqt_crc32c(msg + 56, 24u * m));
    dq_t_st32(msg + 44, dqt_crc32c(msg, 44));
}

/* Every single-bit flip and every truncation of small messages: a status or a valid decode,
 * never a crash (ASan), and a rejected message leaves out untouched. With the checksum every
 * flip past the header is caught. Tables that lie (re-sealed) are DQ_ERR_CORRUPT. */
static void test_damage(void) {
    dq_segment seg[3] = {{300, 3, 0, 0, 0}, {17, 9, 0, 0, 0}, {600, 5, 0, 0, 0}};
    size_t n = 917, len, bit, caught, k;
    float x[917], out[917], keep[917];
    unsigned ck;
    fill(x, n, 11);
    for (ck = 0; ck < 2; ck++) {
        dq_params p = mkp(DQ_CODER_FIXED_ONLY, 64, ck);
        uint8_t *msg;
        len = encode_segs(&p, x, seg, 3, NULL, &msg);
        for (k = 0; k < n; k++) keep[k] = (float)k;
        caught = 0;
        for (bit = 0; bit < 8u * len; bit++) {
            dq_status st;
            msg[bit / 8u] ^= (uint8_t)(1u << (bit % 8u));
            memcpy(out, keep, sizeof out);
            st = dq_decode(msg, len, out, n);
            if (st != DQ_OK) {
                caught++;
                if (memcmp(out, keep, sizeof out) != 0) {
                    CHECKF(0, "bit %lu: status %d with out written", (unsigned long)bit, (int)st);
                    break;
                }
            } else if (ck || bit < 8u * (56u + 72u)) { /* header and table are always protected */
                CHECKF(0, "bit %lu (checksum %u) decoded", (unsigned long)bit, ck);
                break;
            }
            msg[bit / 8u] ^= (uint8_t)(1u << (bit % 8u));
        }
        if (ck) CHECK(caught == 8u * len);
        for (k = 0; k < len; k++) {
            dq_status st = dq_decode(msg, k, out, n);
            if (st != DQ_ERR_TRUNCATED) {
                CHECKF(0, "length %lu: status %d", (unsigned long)k, (int)st);
                break;
            }
        }
        free(msg);
    }
    { /* lying tables, re-sealed: each is DQ_ERR_CORRUPT */
        dq_params p = mkp(DQ_CODER_FIXED_ONLY, 64, 0);
        uint8_t *msg, *bad;
        int e;
        len = encode_segs(&p, x, seg, 3, NULL, &msg);
        bad = (uint8_t *)xmalloc(len);
        for (e = 0; e < 12; e++) {
            dq_status st;
            memcpy(bad, msg, len);
            switch (e) {
            case 0: dq_t_st64(bad + 56, 301); break;                       /* counts no longer sum */
            case 1: dq_t_st64(bad + 56, 299); dq_t_st64(bad + 80, 18); break; /* sums, sizes lie */
            case 2: bad[56 + 16] = 17; break;                              /* width */
            case 3: bad[56 + 16] = 1; break;
            case 4: bad[56 + 17] = 2; break;                               /* the old rANS coder */
            case 5: bad[56 + 17] = 4; break;
            case 6: bad[56 + 23] = 1; break;                               /* reserved byte */
            case 7: dq_t_st64(bad + 56 + 8, dq_t_ld64(bad + 56 + 8) + 1u); break; /* body size */
            case 8: dq_t_st32(bad + 48, 0); break;                         /* no segments */
            case 9: bad[7] = 8; break;                                     /* header width not the widest */
            case 10: bad[8] = 3; break;                                    /* header coder */
            default: bad[6] = 2; break;                                    /* not QSGD */
            }
            reseal(bad);
            memcpy(out, keep, sizeof out);
            st = dq_decode(bad, len, out, n);
            CHECKF(st == DQ_ERR_CORRUPT, "case %d: status %d", e, (int)st);
            CHECK(memcmp(out, keep, sizeof out) == 0);
        }
        free(bad);
        free(msg);
    }
    { /* a coded body whose own length disagrees with its entry */
        dq_segment big[2] = {{5000, 4, 0, 0, 0}, {100, 6, 0, 0, 0}};
        float *y = (float *)xmalloc(5100u * 4u), *o = (float *)xmalloc(5100u * 4u);
        dq_params p = mkp(DQ_CODER_RANS, 64, 0);
        uint8_t *msg;
        dq_segment back[2];
        size_t mm = 0;
        fill(y, 5100, 12);
        len = encode_segs(&p, y, big, 2, NULL, &msg);
        CHECK(dq_segments_read(msg, len, back, 2, &mm) == DQ_OK && back[0].coder == DQ_CODER_RANS);
        dq_t_st64(msg + 56 + 48, dq_t_ld64(msg + 56 + 48) - 1u); /* the first body's length field */
        for (k = 0; k < 5100; k++) o[k] = 7.0f;
        CHECK(dq_decode(msg, len, o, 5100) == DQ_ERR_CORRUPT);
        for (k = 0; k < 5100; k++)
            if (o[k] != 7.0f) break;
        CHECK(k == 5100);
        free(msg), free(y), free(o);
    }
}

/* Element 0 of a segment draws with its index in the vector, past 2^32 too, where the draws'
 * high word changes inside a block (FORMAT 7.2): 2-bit stochastic codes against the model. */
static void test_dither_index(void) {
    const uint64_t first = ((uint64_t)1 << 32) - 100u;
    enum { N = 300 };
    float x[N], out[N], scale, step;
    uint8_t msg[DQ_ENCODE_BOUND(N, 2)];
    size_t len = 0, i, agree0 = 0;
    dq_params p = mkp(DQ_CODER_FIXED_ONLY, DQ_BUCKET_WHOLE, 0);
    p.bits = 2;
    p.norm = DQ_NORM_MAX; /* levels spread over [0, 1], so the draws decide many of them */
    fill(x, N, 13);
    CHECK(dqt_lv_encode_at(&p, first, DQ_F32, x, N, DQ_F32, NULL, msg, sizeof msg, &len) == DQ_OK);
    CHECK(dq_decode(msg, len, out, N) == DQ_OK);
    scale = dq_t_bitsf(dq_t_ld32(msg + 48));
    step = scale; /* s = 1 at 2 bits */
    for (i = 0; i < N; i++) {
        float inv = 1.0f / scale, rr = fabsf(x[i]) * inv, f;
        unsigned l, l0;
        if (!(rr < 1.0f)) rr = 1.0f;
        l = (unsigned)rr;
        f = rr - (float)l;
        l0 = l + (dqt_draw_at(p.seed, p.step, p.stream, i) < f ? 1u : 0u);
        l += dqt_draw_at(p.seed, p.step, p.stream, first + i) < f ? 1u : 0u;
        CHECKF(fabsf(out[i]) == (float)l * step, "element %lu: %g, model level %u", (unsigned long)i, (double)out[i], l);
        agree0 += l == l0;
    }
    CHECKF(agree0 < N * 17u / 20u, "%lu of %d levels equal those of index i", (unsigned long)agree0, N);
}

/* Misuse: statuses before anything is written. */
static void test_errors(void) {
    dq_segment seg[2] = {{100, 4, 0, 0, 0}, {50, 6, 0, 0, 0}}, back[2];
    float x[150];
    uint8_t buf[2048], copy[2048];
    size_t len = 0, cap = 0, m = 0;
    dq_params p = mkp(DQ_CODER_FIXED_ONLY, 8, 0);
    fill(x, 150, 15);
    CHECK(dq_encode_segments(NULL, x, seg, 2, NULL, buf, sizeof buf, &len) == DQ_ERR_NULL);
    CHECK(dq_encode_segments(&p, NULL, seg, 2, NULL, buf, sizeof buf, &len) == DQ_ERR_NULL);
    CHECK(dq_encode_segments(&p, x, NULL, 2, NULL, buf, sizeof buf, &len) == DQ_ERR_NULL);
    CHECK(dq_encode_segments(&p, x, seg, 0, NULL, buf, sizeof buf, &len) == DQ_ERR_EMPTY);
    CHECK(dq_encode_segments(&p, x, seg, DQ_SEGMENTS_MAX + 1u, NULL, buf, sizeof buf, &len) == DQ_ERR_PARAM);
    seg[1].bits = 1;
    CHECK(dq_encode_segments(&p, x, seg, 2, NULL, buf, sizeof buf, &len) == DQ_ERR_BITS);
    seg[1].bits = 17;
    CHECK(dq_encode_segments(&p, x, seg, 2, NULL, buf, sizeof buf, &len) == DQ_ERR_BITS);
    seg[1].bits = 12;
    seg[0].count = 0;
    CHECK(dq_encode_segments(&p, x, seg, 2, NULL, buf, sizeof buf, &len) == DQ_ERR_EMPTY);
    seg[0].count = 100;
    p.coder = DQ_CODER_RANS; /* 12 bits */
    CHECK(dq_encode_segments(&p, x, seg, 2, NULL, buf, sizeof buf, &len) == DQ_ERR_PARAM);
    p.coder = DQ_CODER_FIXED_ONLY;
    p.scheme = DQ_SCHEME_TERNGRAD;
    CHECK(dq_segments_capacity(&p, seg, 2, &cap) == DQ_ERR_PARAM);
    p.scheme = DQ_SCHEME_QSGD;
    CHECK(dq_segments_capacity(&p, seg, 2, &cap) == DQ_OK);
    memset(buf, 0xA5, sizeof buf);
    memcpy(copy, buf, sizeof buf);
    CHECK(dq_encode_segments(&p, x, seg, 2, NULL, buf, cap - 1u, &len) == DQ_ERR_DST_TOO_SMALL);
    CHECK(memcmp(buf, copy, sizeof buf) == 0);
    CHECK(dq_encode_segments(&p, x, seg, 2, NULL, buf, cap, &len) == DQ_OK && len == cap);
    CHECK(dq_segments_read(buf, len, back, 1, &m) == DQ_ERR_DST_TOO_SMALL && m == 2);
    CHECK(dq_recode(buf, len, DQ_CODER_RANS, copy, sizeof copy, &m) == DQ_ERR_PARAM);
    CHECK(dq_coded_size(buf, len, DQ_CODER_FIXED, &m) == DQ_ERR_PARAM);
    CHECK(dq_encode_finish(buf, len) == DQ_OK);
    { /* an unsegmented message reads as one segment */
        dq_params q = mkp(DQ_CODER_FIXED_ONLY, 8, 1);
        size_t l2 = 0;
        q.bits = 7;
        CHECK(dq_encode(&q, x, 150, NULL, copy, sizeof copy, &l2) == DQ_OK);
        CHECK(dq_segments_read(copy, l2, back, 2, &m) == DQ_OK && m == 1);
        CHECK(back[0].count == 150 && back[0].bits == 7 && back[0].coder == 0 && back[0].size == l2 - 52u);
    }
}

int main(void) {
    RUN(test_values_every_coder);
    RUN(test_sizes_and_norm);
    RUN(test_residual);
    RUN(test_ranges);
    RUN(test_damage);
    RUN(test_dither_index);
    RUN(test_errors);
    return dq_t_finish();
}
