/* Coders (doc/FORMAT.md 17): a coded message decodes to the fixed message's values bit for
 * bit, with the same scales and residual; sizes are exact and consistent between dq_encode,
 * dq_coded_size and dq_recode; AUTO sends the smallest form and never more than fixed, even in
 * a tight buffer; rANS is within 2% of the empirical code entropy; the in-place encoder
 * survives adversarial symbol orders; errors leave outputs untouched; bytes are pinned.
 *
 * TEST_ELIAS switches the DQ_CODER_ELIAS cases on (1) or off (0). Buffers given to decoders
 * are exact-size heap blocks so ASan sees any over-read. */
#ifndef TEST_ELIAS
#define TEST_ELIAS 1
#endif
#include "../dqsgd.h"
#include "harness.h"

#include <stdint.h>

#define CANARY 0xA5u

/* ---------------------------------------------------------------- helpers */
static dq_params mkp(unsigned bits, uint32_t bucket, dq_rounding r, dq_norm nm, unsigned checksum, unsigned coder) {
    dq_params p;
    memset(&p, 0, sizeof p);
    p.bits = bits;
    p.bucket = bucket;
    p.rounding = r;
    p.norm = nm;
    p.seed = 0xC0DE5EEDu;
    p.step = 11;
    p.stream = 2;
    p.checksum = checksum;
    p.coder = coder;
    return p;
}
static float *canary_floats(size_t n) {
    float *f = (float *)xmalloc(n * sizeof(float));
    memset(f, CANARY, n * sizeof(float));
    return f;
}
static int all_byte(const void *p, size_t n, unsigned v) {
    const uint8_t *b = (const uint8_t *)p;
    size_t i;
    for (i = 0; i < n; i++)
        if (b[i] != v) return 0;
    return 1;
}
static uint64_t ld64(const uint8_t *p) {
    uint64_t v = 0;
    int i;
    for (i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
static void st64(uint8_t *p, uint64_t v) {
    unsigned i;
    for (i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8u * i));
}
static void fix_hcrc(uint8_t *m) {
    uint32_t c = dq_t_crc32c(m, 44);
    unsigned i;
    for (i = 0; i < 4; i++) m[44 + i] = (uint8_t)(c >> (8u * i));
}
static uint64_t fnv1a(const uint8_t *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325u;
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3u;
    return h;
}
/* Elias omega length and the coded-payload bounds, from doc/FORMAT.md 17.1. */
static uint64_t omega_len(uint64_t k) {
    uint64_t len = 1;
    while (k > 1u) {
        uint64_t d = 0;
        while (d < 64u && (k >> d) != 0) d++;
        len += d;
        k = d - 1u;
    }
    return len;
}
static uint64_t spec_bound(unsigned coder, uint64_t n, unsigned b) {
    if (coder == DQ_CODER_ELIAS)
        return (n * (4u + omega_len(((uint64_t)1 << (b - 1u)) - 1u)) + omega_len(n + 1u) + 7u) / 8u;
    { /* coder 3: table, then per chunk of 65536 symbols a length, 32 states, a word per symbol */
        uint64_t g = 8u / b, A = (uint64_t)1 << (g * b), m = (n + g - 1u) / g;
        return A / 8u + 2u * A + (m + 65535u) / 65536u * (4u + 128u) + 2u * m;
    }
}
/* Recomputes the payload checksum of a coded message (bytes 48 .. len-5) at len-4. */
static void reseal(uint8_t *m, size_t len) {
    uint32_t c = dq_t_crc32c(m + 48, len - 52u);
    unsigned i;
    for (i = 0; i < 4; i++) m[len - 4u + i] = (uint8_t)(c >> (8u * i));
}
static size_t nbuckets_of(const dq_header *h) { return h->bucket ? (h->count - 1u) / h->bucket + 1u : 1u; }
static const char *coder_name(unsigned c) {
    if (c == DQ_CODER_FIXED) return "fixed";
    if (c == DQ_CODER_ELIAS) return "elias";
    if (c == DQ_CODER_RANS) return "rans";
    return c == DQ_CODER_AUTO ? "auto" : "?";
}
static int coder_ok(unsigned coder, unsigned b) { /* the forced coders this width takes */
    if (coder == DQ_CODER_RANS) return b <= 8u;
    if (coder == DQ_CODER_ELIAS) return TEST_ELIAS && b >= 2u;
    return 1;
}
static uint8_t *encode_new(const dq_params *p, const float *x, size_t n, float *res, size_t cap, size_t *len) {
    uint8_t *m = (uint8_t *)xmalloc(cap);
    dq_status st;
    memset(m, CANARY, cap);
    *len = 0;
    st = dq_encode(p, x, n, res, m, cap, len);
    CHECKF(st == DQ_OK, "encode (bits %u coder %s n %lu cap %lu): %s", p->bits, coder_name(p->coder), (unsigned long)n,
           (unsigned long)cap, dq_strerror(st));
    return m;
}

/* Inputs. */
enum { K_GAUSS, K_ZERO, K_PM1, K_ONES, K_SPARSE, K_HEAVY, K_VSPARSE, K_UNIF, NKIND };
static const char *const kind_name[NKIND] = {"gauss", "zero", "pm1", "ones", "sparse", "heavy", "vsparse", "unif"};
static void gen(int kind, float *x, size_t n, uint64_t seed) {
    dq_t_rng r;
    size_t i;
    r.s = seed * 0x9E3779B97F4A7C15u + (uint64_t)kind;
    for (i = 0; i < n; i++) {
        double g = dq_t_gauss(&r);
        switch (kind) {
            case K_GAUSS: x[i] = (float)g; break;
            case K_ZERO: x[i] = 0.0f; break;
            case K_PM1: x[i] = (dq_t_next(&r) & 1u) ? 1.0f : -1.0f; break;
            case K_ONES: x[i] = 1.0f; break;
            case K_SPARSE: x[i] = dq_t_unif(&r) < 0.02 ? (float)(10.0 * g) : 0.0f; break;
            case K_HEAVY: x[i] = (float)(g * g * g); break;
            case K_VSPARSE: x[i] = i == n / 2 ? -3.5f : 0.0f; break;
            default: x[i] = (float)(2.0 * dq_t_unif(&r) - 1.0); break;
        }
    }
}
static void gen_res(float *r, size_t n, uint64_t seed) {
    dq_t_rng g;
    size_t i;
    g.s = seed ^ 0xABCDEF;
    for (i = 0; i < n; i++) r[i] = (float)(0.05 * dq_t_gauss(&g));
}

/* The message m equals the fixed message fm re-coded with `coder`, byte for byte. */
static int same_as_recode(const uint8_t *fm, size_t flen, const uint8_t *m, size_t len, unsigned coder) {
    uint8_t *r = (uint8_t *)xmalloc(len);
    size_t rl = 0;
    int same = dq_recode(fm, flen, coder, r, len, &rl) == DQ_OK && rl == len && memcmp(r, m, len) == 0;
    free(r);
    return same;
}

/* Encodes x (residual res0 or none) with params p0 under `coder` and compares everything with
 * the fixed-coder message. Returns the coded length (0 after an encode failure); *picked gets
 * the coder on the wire. */
static size_t check_coded(const dq_params *p0, unsigned coder, const float *x, size_t n, const float *res0,
                          const char *what, unsigned *picked) {
    dq_params p = *p0;
    unsigned b = p.bits ? p.bits : DQ_BITS_DEFAULT;
    size_t fcap = dq_encode_bound(n, b), ccap = dq_encode_bound_coded(n, b), flen = 0, clen = 0, len = 0, s = 0, sc, i;
    uint8_t *fm, *cm, *rb;
    float *rf = res0 ? fdup(res0, n) : NULL, *rc = res0 ? fdup(res0, n) : NULL;
    float *of = canary_floats(n), *oc = canary_floats(n), *af = (float *)xmalloc(n * sizeof(float)),
          *ac = (float *)xmalloc(n * sizeof(float));
    dq_header hf, hc;
    dq_status st;
    double n2f = -1.0, n2c = -2.0;
    *picked = 0xFFFFu;
    p.coder = DQ_CODER_FIXED_ONLY;
    fm = encode_new(&p, x, n, rf, fcap, &flen);
    p.coder = coder;
    cm = encode_new(&p, x, n, rc, ccap, &clen);
    if (!clen || !flen || dq_header_read(fm, flen, &hf) != DQ_OK) {
        CHECKF(0, "%s: no message", what);
        clen = 0;
        goto done;
    }
    sc = 4u * nbuckets_of(&hf);
    if (res0) CHECKF(memcmp(rf, rc, n * sizeof(float)) == 0, "%s: residual differs from the fixed coder's", what);
    st = dq_header_read(cm, clen, &hc);
    CHECKF(st == DQ_OK, "%s: header_read %s", what, dq_strerror(st));
    if (st != DQ_OK) goto done;
    *picked = hc.coder;
    CHECKF(hc.msg_size == clen, "%s: msg_size %lu, encode wrote %lu", what, (unsigned long)hc.msg_size,
           (unsigned long)clen);
    if (coder == DQ_CODER_AUTO) {
        CHECKF(clen <= flen, "%s: auto %lu > fixed %lu", what, (unsigned long)clen, (unsigned long)flen);
        CHECK(hc.coder == DQ_CODER_FIXED || hc.coder == DQ_CODER_RANS || hc.coder == DQ_CODER_ELIAS);
        CHECK(hc.coder != DQ_CODER_RANS || b <= 8u);
        CHECK(hc.coder != DQ_CODER_ELIAS || b >= 2u);
    } else { /* forced: that coder, or the fixed message where it would be larger */
        CHECKF(hc.coder == coder || hc.coder == DQ_CODER_FIXED, "%s: coder on the wire %u", what, hc.coder);
    }
    CHECKF(clen <= flen && clen <= dq_encode_bound(n, b), "%s: %lu bytes, fixed %lu, bound %lu", what,
           (unsigned long)clen, (unsigned long)flen, (unsigned long)dq_encode_bound(n, b));
    /* header: the fixed one but for the coder byte and the CRC */
    CHECK(memcmp(cm, fm, 8) == 0 && memcmp(cm + 9, fm + 9, 35) == 0 && cm[8] == hc.coder);
    if (hc.coder == DQ_CODER_FIXED) {
        CHECKF(clen == flen && memcmp(cm, fm, flen) == 0, "%s: fixed choice differs from the fixed message", what);
    } else {
        size_t crc = (hf.flags & DQ_FLAG_CHECKSUM) ? 4u : 0u;
        CHECKF(ld64(cm + 48) == hc.payload_size && clen == 56u + sc + hc.payload_size + crc,
               "%s: length field %llu, payload_size %lu, len %lu", what, (unsigned long long)ld64(cm + 48),
               (unsigned long)hc.payload_size, (unsigned long)clen);
        CHECKF(memcmp(cm + 56, fm + 48, sc) == 0, "%s: scales differ", what);
    }
    CHECK(dq_verify(cm, clen) == DQ_OK);
    /* decoded values and decode_add, bit for bit */
    st = dq_decode(fm, flen, of, n);
    CHECK(st == DQ_OK);
    st = dq_decode(cm, clen, oc, n);
    CHECKF(st == DQ_OK, "%s: decode %s", what, dq_strerror(st));
    CHECKF(memcmp(of, oc, n * sizeof(float)) == 0, "%s: decoded values differ", what);
    for (i = 0; i < n; i++) af[i] = ac[i] = (float)i * 0.001f - 0.5f;
    CHECK(dq_decode_add(fm, flen, 0.37f, af, n) == DQ_OK);
    st = dq_decode_add(cm, clen, 0.37f, ac, n);
    CHECKF(st == DQ_OK && memcmp(af, ac, n * sizeof(float)) == 0, "%s: decode_add differs (%s)", what,
           dq_strerror(st));
    /* exact sizes: coded_size == recode length == encode length; recode bytes == encode bytes */
    st = dq_coded_size(fm, flen, coder, &s);
    CHECKF(st == DQ_OK && s == clen, "%s: coded_size(fixed, %s) = %lu (%s), encode wrote %lu", what,
           coder_name(coder), (unsigned long)s, dq_strerror(st), (unsigned long)clen);
    rb = (uint8_t *)xmalloc(clen + flen + 64u);
    memset(rb, CANARY, clen + flen + 64u);
    st = dq_recode(fm, flen, coder, rb, clen, &len);
    CHECKF(st == DQ_OK && len == clen && memcmp(rb, cm, clen) == 0, "%s: recode(fixed -> %s): %s len %lu vs %lu", what,
           coder_name(coder), dq_strerror(st), (unsigned long)len, (unsigned long)clen);
    CHECK(all_byte(rb + clen, flen + 64u, CANARY));
    if (hc.coder != DQ_CODER_FIXED) {
        st = dq_coded_size(cm, clen, DQ_CODER_FIXED, &s);
        CHECKF(st == DQ_OK && s == flen, "%s: coded_size(coded, fixed) = %lu (%s)", what, (unsigned long)s,
               dq_strerror(st));
        st = dq_coded_size(cm, clen, hc.coder, &s);
        CHECKF(st == DQ_OK && s == clen, "%s: coded_size(coded, own) = %lu (%s)", what, (unsigned long)s,
               dq_strerror(st));
        memset(rb, CANARY, clen + flen + 64u);
        len = 0;
        st = dq_recode(cm, clen, DQ_CODER_FIXED, rb, flen, &len);
        CHECKF(st == DQ_OK && len == flen && memcmp(rb, fm, flen) == 0, "%s: recode(coded -> fixed): %s", what,
               dq_strerror(st));
        CHECK(all_byte(rb + flen, clen + 64u, CANARY));
        st = dq_recode(cm, clen, hc.coder, rb, clen, &len); /* same coder: a copy */
        CHECK(st == DQ_OK && len == clen && memcmp(rb, cm, clen) == 0);
    }
    free(rb);
    /* the scale-derived norm */
    if (dq_message_norm2(fm, flen, &n2f) == DQ_OK) {
        st = dq_message_norm2(cm, clen, &n2c);
        CHECKF(st == DQ_OK && memcmp(&n2f, &n2c, sizeof n2f) == 0, "%s: norm2 %.17g vs %.17g", what, n2f, n2c);
    } else {
        CHECK(dq_message_norm2(cm, clen, &n2c) == DQ_ERR_PARAM);
    }
    /* AUTO in a buffer of exactly the fixed size */
    if (coder == DQ_CODER_AUTO) {
        float *rt = res0 ? fdup(res0, n) : NULL;
        size_t tlen = 0;
        uint8_t *tm = encode_new(&p, x, n, rt, flen, &tlen);
        dq_header ht;
        if (tlen && dq_header_read(tm, tlen, &ht) == DQ_OK) {
            CHECKF(tlen <= flen && tlen >= clen, "%s: tight auto %lu, roomy %lu, fixed %lu", what, (unsigned long)tlen,
                   (unsigned long)clen, (unsigned long)flen);
            if (ht.coder != DQ_CODER_FIXED) /* the roomy choice, or a larger coder whose room fitted */
                CHECKF((ht.coder == hc.coder && tlen == clen && memcmp(tm, cm, clen) == 0) ||
                           (ht.coder != hc.coder && tlen >= clen && same_as_recode(fm, flen, tm, tlen, ht.coder)),
                       "%s: tight auto picked %s (%lu), roomy %s (%lu)", what, coder_name(ht.coder),
                       (unsigned long)tlen, coder_name(hc.coder), (unsigned long)clen);
            else
                CHECK(tlen == flen && memcmp(tm, fm, flen) == 0);
            if (res0) CHECK(memcmp(rt, rf, n * sizeof(float)) == 0);
            st = dq_decode(tm, tlen, oc, n);
            CHECK(st == DQ_OK && memcmp(of, oc, n * sizeof(float)) == 0);
        }
        free(tm);
        free(rt);
    }
done:
    free(fm);
    free(cm);
    free(rf);
    free(rc);
    free(of);
    free(oc);
    free(af);
    free(ac);
    return clen;
}

/* ---------------------------------------------------------------- 1, 2, 9: round trips and sizes */
static void test_roundtrip(void) {
    static const size_t ns[] = {1, 7, 255, 256, 257, 513, 3001};
    static const int kinds[] = {K_GAUSS, K_ZERO, K_PM1, K_ONES, K_SPARSE};
    static const uint32_t buckets[] = {8, 512, DQ_BUCKET_WHOLE};
    static const unsigned coders[] = {DQ_CODER_RANS, DQ_CODER_ELIAS, DQ_CODER_AUTO};
    unsigned b, idx = 0, cases = 0, ci, picked;
    size_t ki, ni;
    char what[160];
    for (b = 1; b <= 16; b++)
        for (ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++)
            for (ni = 0; ni < sizeof ns / sizeof ns[0]; ni++, idx++) {
                size_t n = ns[ni];
                int kind = kinds[ki];
                uint32_t bucket = buckets[idx % 3u];
                unsigned checksum = (idx / 3u) % 2u, ef = (idx / 2u) % 2u, v = (idx / 5u) % 3u;
                dq_rounding rnd = v == 2u ? DQ_ROUND_NEAREST : DQ_ROUND_STOCHASTIC;
                dq_norm nm = v == 1u ? DQ_NORM_MAX : DQ_NORM_L2;
                float *x = (float *)xmalloc(n * sizeof(float)), *r = NULL;
                dq_params p;
                if (kind == K_PM1 || kind == K_ONES) { /* every code at the top level */
                    rnd = DQ_ROUND_NEAREST;
                    nm = DQ_NORM_MAX;
                }
                gen(kind, x, n, idx);
                if (ef) {
                    r = (float *)xmalloc(n * sizeof(float));
                    if (kind == K_GAUSS || kind == K_SPARSE)
                        gen_res(r, n, idx);
                    else
                        memset(r, 0, n * sizeof(float)); /* keeps the codes degenerate */
                }
                p = mkp(b, bucket, rnd, nm, checksum, 0);
                for (ci = 0; ci < 3; ci++) {
                    if (!coder_ok(coders[ci], b)) continue;
                    sprintf(what, "b %u %s n %lu bucket %lu crc %u ef %u rnd %d norm %d coder %s", b, kind_name[kind],
                            (unsigned long)n, (unsigned long)bucket, checksum, ef, (int)rnd, (int)nm,
                            coder_name(coders[ci]));
                    check_coded(&p, coders[ci], x, n, r, what, &picked);
                    cases++;
                }
                free(x);
                free(r);
            }
    if (dq_t_verbose()) printf("  roundtrip: %u coded encodes compared with fixed\n", cases);
}

/* ---------------------------------------------------------------- 3: AUTO is the smallest */
static void test_auto_smallest(void) {
    static const size_t ns[] = {1, 2, 3, 5, 8, 9, 16, 24, 33, 64, 100, 255, 256, 257, 1000, 4099};
    static const int kinds[] = {K_GAUSS, K_SPARSE, K_VSPARSE, K_ZERO, K_HEAVY, K_UNIF};
    static const uint32_t buckets[] = {8, 512, DQ_BUCKET_WHOLE, 64};
    unsigned b, idx = 0, cases = 0, picks[4] = {0, 0, 0, 0}, settled = 0;
    size_t ki, ni;
    for (b = 1; b <= 16; b++)
        for (ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++)
            for (ni = 0; ni < sizeof ns / sizeof ns[0]; ni++, idx++) {
                size_t n = ns[ni], flen = 0, alen = 0, tlen = 0, mlen = 0, best, s = 0, k;
                int kind = kinds[ki];
                unsigned checksum = idx % 2u;
                dq_params p = mkp(b, buckets[(idx / 2u) % 4u], (idx / 8u) % 2u ? DQ_ROUND_NEAREST : DQ_ROUND_STOCHASTIC,
                                  (idx / 16u) % 2u ? DQ_NORM_MAX : DQ_NORM_L2, checksum, DQ_CODER_FIXED_ONLY);
                float *x = (float *)xmalloc(n * sizeof(float));
                uint8_t *fm, *am, *tm, *mm;
                dq_header h;
                dq_status st;
                gen(kind, x, n, 1000u + idx);
                fm = encode_new(&p, x, n, NULL, dq_encode_bound(n, b), &flen);
                best = flen;
                for (k = 0; k < 2; k++) { /* the forced coders' exact sizes */
                    unsigned fc = k ? DQ_CODER_RANS : DQ_CODER_ELIAS;
                    if (!coder_ok(fc, b)) continue;
                    st = dq_coded_size(fm, flen, fc, &s);
                    CHECK(st == DQ_OK);
                    if (st == DQ_OK && s < best) best = s;
                }
                p.coder = DQ_CODER_AUTO;
                am = encode_new(&p, x, n, NULL, dq_encode_bound_coded(n, b), &alen);
                tm = encode_new(&p, x, n, NULL, flen, &tlen);
                mm = encode_new(&p, x, n, NULL, flen + 1u + (size_t)(idx % 61u), &mlen);
#if TEST_ELIAS
                CHECKF(alen == best, "b %u %s n %lu: auto %lu, best forced %lu", b, kind_name[kind], (unsigned long)n,
                       (unsigned long)alen, (unsigned long)best);
#else
                CHECKF(alen <= best, "b %u %s n %lu: auto %lu, best forced %lu", b, kind_name[kind], (unsigned long)n,
                       (unsigned long)alen, (unsigned long)best);
#endif
                st = dq_coded_size(fm, flen, DQ_CODER_AUTO, &s);
                CHECKF(st == DQ_OK && s == alen, "b %u %s n %lu: coded_size(auto) %lu, encode %lu", b, kind_name[kind],
                       (unsigned long)n, (unsigned long)s, (unsigned long)alen);
                CHECKF(tlen <= flen && tlen >= alen && mlen <= flen && mlen >= alen,
                       "b %u %s n %lu: tight %lu, mid %lu, roomy %lu, fixed %lu", b, kind_name[kind], (unsigned long)n,
                       (unsigned long)tlen, (unsigned long)mlen, (unsigned long)alen, (unsigned long)flen);
                if (tlen && dq_header_read(tm, tlen, &h) == DQ_OK && h.coder != DQ_CODER_FIXED)
                    CHECKF((tlen == alen && memcmp(tm, am, alen) == 0) ||
                               (tlen >= alen && same_as_recode(fm, flen, tm, tlen, h.coder)),
                           "b %u %s n %lu: tight auto chose %s (%lu), roomy %lu", b, kind_name[kind],
                           (unsigned long)n, coder_name(h.coder), (unsigned long)tlen, (unsigned long)alen);
                if (mlen && dq_header_read(mm, mlen, &h) == DQ_OK && h.coder != DQ_CODER_FIXED)
                    CHECK((mlen == alen && memcmp(mm, am, alen) == 0) ||
                          (mlen >= alen && same_as_recode(fm, flen, mm, mlen, h.coder)));
                if (tlen > alen && tlen < flen) settled++;
                if (alen && dq_header_read(am, alen, &h) == DQ_OK) picks[h.coder < 4u ? h.coder : 0]++;
                {
                    float *o1 = canary_floats(n), *o2 = canary_floats(n);
                    CHECK(dq_decode(fm, flen, o1, n) == DQ_OK);
                    CHECK(dq_decode(tm, tlen, o2, n) == DQ_OK && memcmp(o1, o2, n * sizeof(float)) == 0);
                    CHECK(dq_decode(am, alen, o2, n) == DQ_OK && memcmp(o1, o2, n * sizeof(float)) == 0);
                    free(o1);
                    free(o2);
                }
                cases++;
                free(x);
                free(fm);
                free(am);
                free(tm);
                free(mm);
            }
    if (dq_t_verbose())
        printf("  auto: %u inputs; roomy picks fixed %u, elias %u, rans %u; tight settled for a larger coder %u\n",
               cases, picks[0], picks[1], picks[3], settled);
}

/* ---------------------------------------------------------------- 4: rANS near the entropy */
/* Code i of a fixed payload of n codes of b bits, read per doc/FORMAT.md 8 (independently). */
static unsigned code_at(const uint8_t *pay, unsigned b, size_t n, size_t i) {
    size_t k = i / 256u, m = i % 256u;
    const uint8_t *blk = pay + k * 32u * b;
    unsigned v = 0, t;
    if (k * 256u + 256u <= n) {
        unsigned lane = (unsigned)(m % 8u), row = (unsigned)(m / 8u);
        for (t = 0; t < b; t++) {
            unsigned pos = row * b + t, j = pos / 32u, q = pos % 32u;
            v |= (unsigned)((blk[4u * (8u * j + lane) + q / 8u] >> (q % 8u)) & 1u) << t;
        }
    } else {
        for (t = 0; t < b; t++) {
            size_t pos = m * b + t;
            v |= (unsigned)((blk[pos / 8u] >> (pos % 8u)) & 1u) << t;
        }
    }
    return v;
}
/* Bytes of a rANS table (bitmap of A symbols, then a 1- or 2-byte LEB128 of f - 1 per symbol);
 * 0 if the frequencies do not sum to 4096. */
static size_t rans_table_bytes(const uint8_t *t, size_t len, unsigned A) {
    size_t pos = A / 8u;
    unsigned s, sum = 0;
    for (s = 0; s < A; s++) {
        unsigned v;
        if (!((t[s / 8u] >> (s % 8u)) & 1u)) continue;
        if (pos >= len) return 0;
        v = t[pos++];
        if (v & 0x80u) {
            if (pos >= len) return 0;
            v = (v & 0x7Fu) | (unsigned)t[pos++] << 7;
        }
        sum += v + 1u;
    }
    return sum == 4096u ? pos : 0u;
}
static void test_rans_entropy(void) {
    const size_t n = (size_t)1 << 16;
    float *x = (float *)xmalloc(n * sizeof(float));
    unsigned b;
    char line[300];
    int at = 0;
    gen(K_GAUSS, x, n, 424242u);
    at += sprintf(line + at, "  rans bits / code entropy (n 2^16, bucket 512, L2, stochastic):");
    for (b = 2; b <= 4; b++) {
        dq_params p = mkp(b, 512, DQ_ROUND_STOCHASTIC, DQ_NORM_L2, 0, DQ_CODER_FIXED_ONLY);
        size_t flen = 0, clen = 0, i, tb, sc = 4u * (n / 512u);
        uint8_t *fm = encode_new(&p, x, n, NULL, dq_encode_bound(n, b), &flen), *cm;
        unsigned long cnt[256];
        unsigned A = 1u << ((8u / b) * b), c;
        double H = 0.0, bits, ratio;
        dq_header h;
        memset(cnt, 0, sizeof cnt);
        for (i = 0; i < n; i++) cnt[code_at(fm + 48 + sc, b, n, i)]++;
        for (c = 0; c < (1u << b); c++)
            if (cnt[c]) H -= (double)cnt[c] * log2((double)cnt[c] / (double)n);
        p.coder = DQ_CODER_RANS;
        cm = encode_new(&p, x, n, NULL, dq_encode_bound_coded(n, b), &clen);
        if (clen && dq_header_read(cm, clen, &h) == DQ_OK) {
            tb = rans_table_bytes(cm + 56 + sc, h.payload_size, A);
            CHECKF(tb > 0 && tb <= A / 8u + 2u * A, "b %u: bad table", b);
            bits = 8.0 * (double)(h.payload_size + 8u);
            /* 8 (length) + one chunk: its u32 length and 32 states (n b / 8 <= 65536 symbols) */
            ratio = (bits - 8.0 * (double)tb - 8.0 * 140.0) / H;
            CHECKF(bits <= 1.02 * H + 8.0 * (double)tb + 8.0 * 140.0,
                   "b %u: rANS %.0f bits, entropy %.0f bits, table %lu bytes (ratio %.4f)", b, bits, H,
                   (unsigned long)tb, ratio);
            at += sprintf(line + at, " b%u %.4f (all %.4f)", b, ratio, bits / H);
        }
        free(fm);
        free(cm);
    }
    printf("%s\n", line);
    free(x);
}

/* ---------------------------------------------------------------- 5: adversarial symbol orders */
/* Codes chosen per element, sent through max-norm nearest rounding: x = sign * level / s. */
enum { P_ZERO_THEN_RAND, P_RAND_THEN_ZERO, P_ALT, P_ALT_BLOCKS, P_HUGE_PER_BUCKET, P_TAIL_RAND, P_LAST1PCT, NPAT };
static const char *const pat_name[NPAT] = {"zeros|random", "random|zeros", "alternating", "alt-blocks",
                                           "huge/bucket",  "tail-random",  "last-1%-random"};
static void gen_pattern(int pat, float *x, size_t n, unsigned b, uint32_t bucket, uint64_t seed) {
    dq_t_rng r;
    size_t i, bk = bucket == DQ_BUCKET_WHOLE ? n : bucket;
    float s = b == 1 ? 1.0f : (float)((1u << (b - 1u)) - 1u);
    r.s = seed;
    for (i = 0; i < n; i++) {
        int rnd;
        switch (pat) {
            case P_ZERO_THEN_RAND: rnd = i >= n / 2; break;
            case P_RAND_THEN_ZERO: rnd = i < n / 2; break;
            case P_ALT: rnd = -1; x[i] = i % 2u ? 1.0f : 0.0f; break;
            case P_ALT_BLOCKS: rnd = (i / 256u) % 2u; break;
            case P_HUGE_PER_BUCKET: /* one huge value per bucket, the rest far below one step */
                rnd = -1;
                x[i] = i % bk == (i / bk) % bk ? 1e30f : 1e-3f * (float)dq_t_gauss(&r);
                break;
            case P_TAIL_RAND: rnd = i + 37u >= n; break;
            default: rnd = i >= n - n / 100u; break;
        }
        if (rnd == 1) {
            unsigned lvl = b == 1 ? 1u : (unsigned)(dq_t_next(&r) % ((uint64_t)s + 1u));
            x[i] = (dq_t_next(&r) & 1u ? -1.0f : 1.0f) * (float)lvl / s;
        } else if (rnd == 0) {
            x[i] = 0.0f;
        }
    }
}
static void test_inplace_adversarial(void) {
    static const size_t ns[] = {4096, 4099, 12000};
    static const uint32_t buckets[] = {8, 512, DQ_BUCKET_WHOLE};
    static const size_t extra[] = {0, 1, 40};
    unsigned b, idx = 0, coded = 0, total = 0;
    int pat;
    size_t ni, e;
    for (b = 1; b <= 10; b++)
        for (pat = 0; pat < NPAT; pat++)
            for (ni = 0; ni < sizeof ns / sizeof ns[0]; ni++, idx++) {
                size_t n = ns[ni], flen = 0;
                uint32_t bucket = buckets[idx % 3u];
                unsigned checksum = (idx / 3u) % 2u;
                dq_params p = mkp(b, bucket, pat == P_HUGE_PER_BUCKET ? DQ_ROUND_STOCHASTIC : DQ_ROUND_NEAREST,
                                  pat == P_HUGE_PER_BUCKET ? DQ_NORM_L2 : DQ_NORM_MAX, checksum, DQ_CODER_FIXED_ONLY);
                float *x = (float *)xmalloc(n * sizeof(float)), *o1 = canary_floats(n), *o2 = canary_floats(n);
                uint8_t *fm;
                gen_pattern(pat, x, n, b, bucket, 77u + idx);
                fm = encode_new(&p, x, n, NULL, dq_encode_bound(n, b), &flen);
                CHECK(dq_decode(fm, flen, o1, n) == DQ_OK);
                p.coder = DQ_CODER_AUTO;
                for (e = 0; e < sizeof extra / sizeof extra[0]; e++) {
                    size_t len = 0;
                    dq_status st;
                    uint8_t *m = (uint8_t *)xmalloc(flen + extra[e] + 16u);
                    dq_header h;
                    memset(m, CANARY, flen + extra[e] + 16u);
                    st = dq_encode(&p, x, n, NULL, m, flen + extra[e], &len);
                    CHECKF(st == DQ_OK && len <= flen, "b %u %s n %lu room %lu: %s len %lu fixed %lu", b, pat_name[pat],
                           (unsigned long)n, (unsigned long)extra[e], dq_strerror(st), (unsigned long)len,
                           (unsigned long)flen);
                    CHECK(all_byte(m + flen + extra[e], 16u, CANARY));
                    if (st == DQ_OK && dq_header_read(m, len, &h) == DQ_OK) {
                        uint8_t *ex = bdup(m, len);
                        coded += h.coder != DQ_CODER_FIXED;
                        total++;
                        st = dq_decode(ex, len, o2, n);
                        CHECKF(st == DQ_OK && memcmp(o1, o2, n * sizeof(float)) == 0,
                               "b %u %s n %lu room %lu: decode %s", b, pat_name[pat], (unsigned long)n,
                               (unsigned long)extra[e], dq_strerror(st));
                        if (h.coder != DQ_CODER_FIXED) { /* the same bytes as re-coding the fixed message */
                            size_t s = 0, rl = 0;
                            uint8_t *rb = (uint8_t *)xmalloc(len);
                            CHECK(dq_coded_size(fm, flen, h.coder, &s) == DQ_OK && s == len);
                            CHECK(dq_recode(fm, flen, h.coder, rb, len, &rl) == DQ_OK && rl == len &&
                                  memcmp(rb, m, len) == 0);
                            free(rb);
                        }
                        free(ex);
                    }
                    free(m);
                }
                if (b <= 8u) { /* forced rANS with its bound */
                    unsigned picked;
                    char what[120];
                    sprintf(what, "adversarial b %u %s n %lu", b, pat_name[pat], (unsigned long)n);
                    p.coder = DQ_CODER_FIXED_ONLY;
                    check_coded(&p, DQ_CODER_RANS, x, n, NULL, what, &picked);
                }
#if TEST_ELIAS
                if (b >= 2u) {
                    unsigned picked;
                    char what[120];
                    sprintf(what, "adversarial b %u %s n %lu", b, pat_name[pat], (unsigned long)n);
                    p.coder = DQ_CODER_FIXED_ONLY;
                    check_coded(&p, DQ_CODER_ELIAS, x, n, NULL, what, &picked);
                }
#endif
                free(x);
                free(o1);
                free(o2);
                free(fm);
            }
    if (dq_t_verbose()) printf("  adversarial: %u tight/near-tight auto encodes, %u coded\n", total, coded);
}

/* ---------------------------------------------------------------- 6: forced coder, short buffer */
static void test_forced_too_small(void) {
    static const size_t ns[] = {1, 100, 1000, 4099};
    static const unsigned bits[] = {1, 2, 3, 8, 9, 16};
    size_t ni, bi;
    unsigned coder, ef;
    for (bi = 0; bi < sizeof bits / sizeof bits[0]; bi++)
        for (ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
            for (coder = DQ_CODER_ELIAS; coder <= DQ_CODER_RANS; coder += DQ_CODER_RANS - DQ_CODER_ELIAS)
                for (ef = 0; ef < 2; ef++) {
                    unsigned b = bits[bi];
                    size_t n = ns[ni], bound = dq_encode_bound_coded(n, b), len = 12345, fsz = 0, sz = 0;
                    dq_params p = mkp(b, 8, DQ_ROUND_STOCHASTIC, DQ_NORM_L2, ef, coder);
                    float *x = (float *)xmalloc(n * sizeof(float)), *r = (float *)xmalloc(n * sizeof(float)), *r0;
                    uint8_t *m = (uint8_t *)xmalloc(bound);
                    dq_status st;
                    if (!coder_ok(coder, b)) {
                        free(x);
                        free(r);
                        free(m);
                        continue;
                    }
                    gen(K_GAUSS, x, n, n + b);
                    gen_res(r, n, n);
                    r0 = fdup(r, n);
                    CHECK(bound > dq_encode_bound(n, b));
                    CHECK(dq_encode_capacity(&p, n, &sz) == DQ_OK && sz == bound);
                    memset(m, CANARY, bound);
                    st = dq_encode(&p, x, n, ef ? r : NULL, m, bound - 1u, &len);
                    CHECKF(st == DQ_ERR_DST_TOO_SMALL, "b %u n %lu %s: %s", b, (unsigned long)n, coder_name(coder),
                           dq_strerror(st));
                    CHECK(all_byte(m, bound, CANARY) && len == 12345);
                    CHECK(memcmp(r, r0, n * sizeof(float)) == 0);
                    p.coder = DQ_CODER_FIXED_ONLY;
                    CHECK(dq_encode_capacity(&p, n, &fsz) == DQ_OK);
                    p.coder = coder;
                    st = dq_encode(&p, x, n, ef ? r : NULL, m, fsz, &len); /* the fixed size is not enough either */
                    CHECK(st == DQ_ERR_DST_TOO_SMALL && all_byte(m, bound, CANARY) && len == 12345);
                    CHECK(memcmp(r, r0, n * sizeof(float)) == 0);
                    /* AUTO needs only the fixed size (one byte less fails untouched); its capacity adds
                     * the room of one rANS chunk: its fixed bytes, at most 2^16 symbols'; at 9..16
                     * bits, for Elias, the bytes of 2^16 codes; at most the fixed payload */
                    p.coder = DQ_CODER_AUTO;
                    {
                        size_t pay = (n * b + 7u) / 8u;
                        size_t chunk = b <= 8u ? (size_t)65536u * ((8u / b) * b) / 8u : (size_t)65536u * b / 8u;
                        size_t room = pay < chunk ? pay : chunk;
                        CHECK(dq_encode_capacity(&p, n, &sz) == DQ_OK && sz == fsz + room);
                    }
                    st = dq_encode(&p, x, n, ef ? r : NULL, m, fsz - 1u, &len);
                    CHECK(st == DQ_ERR_DST_TOO_SMALL && all_byte(m, bound, CANARY) && len == 12345);
                    CHECK(memcmp(r, r0, n * sizeof(float)) == 0);
                    st = dq_encode(&p, x, n, ef ? r : NULL, m, bound - 1u, &len);
                    CHECK(st == DQ_OK && len <= fsz);
                    /* and the bound itself is enough for the forced coder */
                    p.coder = coder;
                    memcpy(r, r0, n * sizeof(float));
                    st = dq_encode(&p, x, n, ef ? r : NULL, m, bound, &len);
                    CHECK(st == DQ_OK && len <= bound);
                    free(x);
                    free(r);
                    free(r0);
                    free(m);
                }
}

/* ---------------------------------------------------------------- 7: corruption */
/* Every truncation and every single-byte change of one coded message. */
static void corrupt_sweep(const uint8_t *msg, size_t len, size_t n, const char *what) {
    static const unsigned xors[] = {0x01, 0x80, 0xFF, 0x10};
    float *out = canary_floats(n), *ref = canary_floats(n), *acc = (float *)xmalloc(n * sizeof(float)),
          *acc0 = (float *)xmalloc(n * sizeof(float));
    uint8_t *fixedbuf;
    dq_header h;
    size_t L, off, i, s, flen, sc, rl;
    int has_crc;
    unsigned v, ok_count = 0, resealed_ok = 0;
    dq_status st;
    if (dq_header_read(msg, len, &h) != DQ_OK) {
        CHECK(0);
        return;
    }
    has_crc = (h.flags & DQ_FLAG_CHECKSUM) != 0;
    sc = 4u * nbuckets_of(&h);
    CHECK(dq_coded_size(msg, len, DQ_CODER_FIXED, &flen) == DQ_OK);
    fixedbuf = (uint8_t *)xmalloc(flen);
    for (i = 0; i < n; i++) acc0[i] = (float)i * 0.25f;
    /* truncations: exact-size buffers of every shorter length */
    for (L = 0; L < len; L++) {
        uint8_t *t = bdup(msg, L);
        const void *tp = L ? (const void *)t : (const void *)msg; /* L = 0: any pointer */
        double nn;
        memset(out, CANARY, n * sizeof(float));
        memcpy(acc, acc0, n * sizeof(float));
        st = dq_decode(tp, L, out, n);
        CHECKF(st == DQ_ERR_TRUNCATED, "%s: truncated to %lu: %s", what, (unsigned long)L, dq_strerror(st));
        CHECK(all_byte(out, n * sizeof(float), CANARY));
        CHECK(dq_decode_add(tp, L, 0.5f, acc, n) == DQ_ERR_TRUNCATED && memcmp(acc, acc0, n * sizeof(float)) == 0);
        CHECK(dq_verify(tp, L) == DQ_ERR_TRUNCATED);
        CHECK(dq_coded_size(tp, L, DQ_CODER_FIXED, &s) == DQ_ERR_TRUNCATED);
        CHECK(dq_recode(tp, L, DQ_CODER_FIXED, fixedbuf, flen, &rl) == DQ_ERR_TRUNCATED);
        st = dq_message_norm2(tp, L, &nn);
        CHECK(st == DQ_ERR_TRUNCATED || (st == DQ_OK && L >= 56u + sc) || (st == DQ_ERR_PARAM && L >= 48u));
        free(t);
    }
    /* single-byte changes at every offset */
    for (off = 0; off < len; off++)
        for (v = 0; v < sizeof xors / sizeof xors[0]; v++) {
            uint8_t *t = bdup(msg, len);
            dq_status st2, st3;
            t[off] = (uint8_t)(t[off] ^ xors[v]);
            memset(out, CANARY, n * sizeof(float));
            memcpy(acc, acc0, n * sizeof(float));
            st = dq_decode(t, len, out, n);
            st2 = dq_decode_add(t, len, 0.5f, acc, n);
            CHECKF(st == st2, "%s: byte %lu ^ %02x: decode %s, decode_add %s", what, (unsigned long)off, xors[v],
                   dq_strerror(st), dq_strerror(st2));
            if (off < 56u || has_crc) /* header, length field, or anything under the payload CRC */
                CHECKF(st != DQ_OK, "%s: byte %lu ^ %02x accepted", what, (unsigned long)off, xors[v]);
            if (has_crc && off >= 56u)
                CHECKF(st == DQ_ERR_CHECKSUM, "%s: byte %lu ^ %02x: %s", what, (unsigned long)off, xors[v],
                       dq_strerror(st));
            if (st != DQ_OK) {
                CHECKF(all_byte(out, n * sizeof(float), CANARY), "%s: byte %lu ^ %02x: %s but out written", what,
                       (unsigned long)off, xors[v], dq_strerror(st));
                CHECKF(memcmp(acc, acc0, n * sizeof(float)) == 0, "%s: byte %lu ^ %02x: %s but acc written", what,
                       (unsigned long)off, xors[v], dq_strerror(st));
            }
            /* with the payload CRC resealed the checksum no longer catches it: the one-pass decoder must
             * still reject what the validating re-coder rejects (output may then be partial) */
            if (has_crc && off >= 56u && off < len - 4u) {
                dq_status st4, st5;
                reseal(t, len);
                memset(out, CANARY, n * sizeof(float));
                st4 = dq_decode(t, len, out, n);
                st5 = dq_recode(t, len, DQ_CODER_FIXED, fixedbuf, flen, &rl);
                CHECKF(st4 == st5 && (st4 == DQ_OK || st4 == DQ_ERR_CORRUPT),
                       "%s: byte %lu ^ %02x resealed: decode %s, recode %s", what, (unsigned long)off, xors[v],
                       dq_strerror(st4), dq_strerror(st5));
                if (st4 == DQ_OK && st5 == DQ_OK) {
                    resealed_ok++;
                    CHECK(rl == flen && dq_decode(fixedbuf, rl, ref, n) == DQ_OK &&
                          memcmp(ref, out, n * sizeof(float)) == 0);
                }
                free(t);
                continue;
            }
            /* recode agrees with decode, and its fixed message decodes to the same values */
            st3 = dq_recode(t, len, DQ_CODER_FIXED, fixedbuf, flen, &rl);
            CHECKF((st3 == DQ_OK) == (st == DQ_OK), "%s: byte %lu ^ %02x: decode %s, recode %s", what,
                       (unsigned long)off, xors[v], dq_strerror(st), dq_strerror(st3));
            if (st == DQ_OK && st3 == DQ_OK) {
                ok_count++;
                CHECK(rl == flen && dq_decode(fixedbuf, rl, ref, n) == DQ_OK &&
                      memcmp(ref, out, n * sizeof(float)) == 0);
            }
            free(t);
        }
    if (dq_t_verbose())
        printf("  %s: %lu bytes, %u single-byte changes decoded (%u after resealing the CRC)\n", what,
               (unsigned long)len, ok_count, resealed_ok);
    free(out);
    free(ref);
    free(acc);
    free(acc0);
    free(fixedbuf);
}
static void test_corruption(void) {
    static const struct {
        unsigned bits;
        size_t n;
        uint32_t bucket;
        unsigned coder;
    } cs[] = {{2, 1000, 8, DQ_CODER_RANS},        {3, 1300, 512, DQ_CODER_RANS}, {8, 700, DQ_BUCKET_WHOLE, DQ_CODER_RANS},
              {1, 3000, DQ_BUCKET_WHOLE, DQ_CODER_RANS}, {5, 900, 8, DQ_CODER_RANS},
              {4, 200, 64, DQ_CODER_ELIAS},     {12, 50, 8, DQ_CODER_ELIAS}};
    size_t i;
    unsigned crc;
    for (i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (crc = 0; crc < 2; crc++) {
            size_t n = cs[i].n, len = 0;
            /* 1 bit: nearest (scaled sign), whose codes of a sparse input compress */
            dq_params p = mkp(cs[i].bits, cs[i].bucket, cs[i].bits == 1u ? DQ_ROUND_NEAREST : DQ_ROUND_STOCHASTIC,
                              DQ_NORM_L2, crc, cs[i].coder);
            float *x = (float *)xmalloc(n * sizeof(float));
            uint8_t *m;
            char what[80];
            if (!coder_ok(cs[i].coder, cs[i].bits)) {
                free(x);
                continue;
            }
            /* sparse input, so that the coded form is smaller than fixed and is what gets sent */
            gen(K_SPARSE, x, n, 5u + i);
            x[n / 3] = 2.0f;
            m = encode_new(&p, x, n, NULL, dq_encode_bound_coded(n, cs[i].bits), &len);
            sprintf(what, "%s b %u n %lu crc %u", coder_name(cs[i].coder), cs[i].bits, (unsigned long)n, crc);
            CHECKF(len > 8 && m[8] == cs[i].coder, "%s: not sent coded", what);
            if (len > 8 && m[8] == cs[i].coder) {
                uint8_t *ex = bdup(m, len);
                corrupt_sweep(ex, len, n, what);
                free(ex);
            }
            free(m);
            free(x);
        }
}

/* Header fields of a coded message, with the header CRC recomputed. */
static dq_status decode_status(const uint8_t *m, size_t len, size_t n) {
    float *out = canary_floats(n);
    dq_status st = dq_decode(m, len, out, n);
    if (st != DQ_OK) CHECK(all_byte(out, n * sizeof(float), CANARY));
    free(out);
    return st;
}
/* Coder 3 in ranges: every aligned range of a three-chunk message decodes (and adds) to the
 * slice of the whole decode, bit for bit; a damaged chunk fails the ranges that need it or lie
 * after it (their offsets pass through its length) with out untouched, not the ranges before
 * it; Elias messages are one stream and are refused. */
static void test_rans_ranges(void) {
    const size_t n = 300001u; /* 4 bits: chunks of 131072 elements, the third partial */
    dq_params p = mkp(4, 512, DQ_ROUND_STOCHASTIC, DQ_NORM_L2, 0, DQ_CODER_RANS);
    size_t cap = dq_encode_bound_coded(n, 4), len = 0, a, t, i, sc = 4u * ((n + 511u) / 512u), pos, L0;
    float *x = (float *)xmalloc(n * sizeof(float)), *whole = (float *)xmalloc(n * sizeof(float));
    float *out = (float *)xmalloc(n * sizeof(float)), *acc = (float *)xmalloc(n * sizeof(float));
    float *ref = (float *)xmalloc(n * sizeof(float));
    uint8_t *m, *bad;
    uint64_t s = 5u;
    unsigned ok_before = 0, failed_after = 0;
    gen(K_GAUSS, x, n, 77u);
    m = encode_new(&p, x, n, NULL, cap, &len);
    CHECK(len > 8 && m[8] == DQ_CODER_RANS);
    CHECK(dq_decode(m, len, whole, n) == DQ_OK);
    a = dq_range_align(&p, n);
    for (t = 0; t < 120; t++) {
        size_t b0, b1, c;
        s = s * 6364136223846793005u + 1442695040888963407u;
        b0 = a * (size_t)((s >> 33) % (n / a + 1u));
        if (b0 >= n) b0 = n - n % a == n ? n - a : n - n % a;
        c = t % 4u == 0 ? n : b0 + a * (1u + (size_t)((s >> 13) % 400u));
        b1 = c < n ? c : n;
        memset(out, CANARY, n * sizeof(float));
        CHECKF(dq_decode_range(m, len, b0, b1, out) == DQ_OK && memcmp(out, whole + b0, (b1 - b0) * sizeof(float)) == 0,
               "range %lu..%lu", (unsigned long)b0, (unsigned long)b1);
        CHECK(all_byte(out + (b1 - b0), (n - (b1 - b0)) * sizeof(float), CANARY));
        for (i = 0; i < b1 - b0; i++) {
            float w = 0.5f * whole[b0 + i];
            acc[i] = (float)(i % 13u) - 6.0f;
            ref[i] = acc[i] + w;
        }
        CHECK(dq_decode_add_range(m, len, b0, b1, 0.5f, acc) == DQ_OK &&
              memcmp(acc, ref, (b1 - b0) * sizeof(float)) == 0);
    }
    /* chunk 1's length one word longer: chunk 0 still decodes, nothing from chunk 1 on does */
    bad = bdup(m, len);
    pos = 56u + sc + rans_table_bytes(m + 56u + sc, (size_t)ld64(m + 48) , 256u);
    L0 = (size_t)m[pos] | (size_t)m[pos + 1u] << 8 | (size_t)m[pos + 2u] << 16 | (size_t)m[pos + 3u] << 24;
    bad[pos + 4u + L0] = (uint8_t)(bad[pos + 4u + L0] + 2u);
    for (t = 0; t < n; t += 3u * a) {
        size_t b1 = t + a < n ? t + a : n;
        dq_status st;
        memset(out, CANARY, n * sizeof(float));
        st = dq_decode_range(bad, len, t, b1, out);
        if (b1 <= 131072u) {
            ok_before += st == DQ_OK && memcmp(out, whole + t, (b1 - t) * sizeof(float)) == 0;
            CHECK(st == DQ_OK);
        } else {
            failed_after += st == DQ_ERR_CORRUPT && all_byte(out, n * sizeof(float), CANARY);
            CHECKF(st == DQ_ERR_CORRUPT, "damaged chunk 1, range %lu..%lu: %s", (unsigned long)t, (unsigned long)b1,
                   dq_strerror(st));
        }
    }
    CHECK(ok_before > 0 && failed_after > 0);
    CHECK(dq_decode(bad, len, out, n) == DQ_ERR_CORRUPT);
    free(bad);
    free(m);
    /* Elias: one stream */
    p.coder = DQ_CODER_ELIAS;
    m = encode_new(&p, x, n, NULL, cap, &len);
    CHECK(len > 8 && (m[8] != DQ_CODER_ELIAS || dq_decode_range(m, len, 0, a, out) == DQ_ERR_PARAM));
    free(m);
    free(x);
    free(whole);
    free(out);
    free(acc);
    free(ref);
}

static void test_header_fields(void) {
    static const struct {
        unsigned coder, bits;
    } cs[] = {{DQ_CODER_RANS, 1}, {DQ_CODER_RANS, 4}, {DQ_CODER_RANS, 7},
              {DQ_CODER_ELIAS, 2}, {DQ_CODER_ELIAS, 7}, {DQ_CODER_ELIAS, 13}};
    unsigned crc, b, coder;
    size_t ci;
    for (crc = 0; crc < 2; crc++)
        for (ci = 0; ci < sizeof cs / sizeof cs[0]; ci++) {
            /* rANS pays only on longer inputs (a chunk costs 132 bytes), 1-bit rANS on long ones */
            const size_t n = cs[ci].bits == 1u ? 3000u : (cs[ci].coder == DQ_CODER_RANS ? 1500u : 300u);
            dq_params p;
            float *x;
            coder = cs[ci].coder;
            b = cs[ci].bits;
            if (!coder_ok(coder, b)) continue;
            p = mkp(b, 512, b == 1u ? DQ_ROUND_NEAREST : DQ_ROUND_STOCHASTIC, DQ_NORM_L2, crc, coder);
            x = (float *)xmalloc(n * sizeof(float));
            size_t len = 0, sc = 4u * ((n + 511u) / 512u); /* one scale per 512 */
            uint8_t *m, *t;
            unsigned v;
            uint64_t actual, bound, lens[6];
            dq_header h;
            dq_status st;
            size_t k;
            gen(K_SPARSE, x, n, 99u + b); /* coded smaller than fixed, so sent coded */
            m = encode_new(&p, x, n, NULL, dq_encode_bound_coded(n, b), &len);
            CHECKF(!len || m[8] == coder, "%s b %u: not sent coded", coder_name(coder), b);
            if (!len || m[8] != coder) {
                free(x);
                free(m);
                continue;
            }
            t = bdup(m, len);
            CHECK(decode_status(t, len, n) == DQ_OK);
            if (coder == DQ_CODER_RANS) { /* read as the first rANS layout, the payload does not decode */
                memcpy(t, m, len);
                t[8] = (uint8_t)DQ_CODER_RANS8;
                fix_hcrc(t);
                st = decode_status(t, len, n);
                CHECKF(st == DQ_ERR_CORRUPT, "coder byte 2: %s", dq_strerror(st));
            }
            for (v = 4; v <= 255; v++) { /* unknown coders, and AUTO (params only) */
                memcpy(t, m, len);
                t[8] = (uint8_t)v;
                fix_hcrc(t);
                CHECKF(dq_header_read(t, len, &h) == DQ_ERR_CORRUPT, "coder byte %u", v);
                st = decode_status(t, len, n);
                CHECKF(st == DQ_ERR_CORRUPT, "coder byte %u: %s", v, dq_strerror(st));
                CHECK(dq_verify(t, len) == DQ_ERR_CORRUPT);
            }
            for (v = 9; v <= 16 && coder == DQ_CODER_RANS; v++) { /* rANS above 8 bits */
                memcpy(t, m, len);
                t[7] = (uint8_t)v;
                fix_hcrc(t);
                st = decode_status(t, len, n);
                CHECKF(st == DQ_ERR_CORRUPT, "rans with bits %u: %s", v, dq_strerror(st));
            }
            if (b == 1) { /* Elias at 1 bit */
                memcpy(t, m, len);
                t[8] = (uint8_t)DQ_CODER_ELIAS;
                fix_hcrc(t);
                CHECK(decode_status(t, len, n) == DQ_ERR_CORRUPT);
            }
            if (coder == DQ_CODER_ELIAS) { /* Elias at 1 bit */
                memcpy(t, m, len);
                t[7] = 1;
                fix_hcrc(t);
                CHECK(decode_status(t, len, n) == DQ_ERR_CORRUPT);
            }
            /* the length field (not covered by the header CRC) */
            memcpy(t, m, len);
            actual = ld64(m + 48);
            bound = spec_bound(coder, n, b);
            CHECK(actual < bound);
            lens[0] = ~(uint64_t)0;
            lens[1] = (uint64_t)1 << 40;
            lens[2] = bound + 1u;
            lens[3] = (uint64_t)1 << 63;
            for (k = 0; k < 4; k++) {
                st64(t + 48, lens[k]);
                CHECKF(dq_header_read(t, len, &h) == DQ_ERR_CORRUPT, "length %llu", (unsigned long long)lens[k]);
                st = decode_status(t, len, n);
                CHECKF(st == DQ_ERR_CORRUPT, "length %llu: %s", (unsigned long long)lens[k], dq_strerror(st));
            }
            lens[0] = bound;
            lens[1] = actual + 1u;
            lens[2] = actual + 2u;
            lens[3] = bound - 1u;
            for (k = 0; k < 4; k++) { /* within the bound but past the buffer */
                st64(t + 48, lens[k]);
                CHECK(dq_header_read(t, len, &h) == DQ_OK && h.payload_size == lens[k]);
                st = decode_status(t, len, n);
                CHECKF(st == DQ_ERR_TRUNCATED, "length %llu (actual %llu): %s", (unsigned long long)lens[k],
                       (unsigned long long)actual, dq_strerror(st));
                CHECK(dq_verify(t, len) == DQ_ERR_TRUNCATED);
            }
            lens[0] = 0;
            lens[1] = actual - 2u;
            lens[2] = 1;
            for (k = 0; k < 3; k++) { /* shorter than written */
                st64(t + 48, lens[k]);
                st = decode_status(t, len, n);
                CHECKF(st == DQ_ERR_CORRUPT || st == DQ_ERR_CHECKSUM, "length %llu (actual %llu): %s",
                       (unsigned long long)lens[k], (unsigned long long)actual, dq_strerror(st));
            }
            /* a bigger buffer with bound-sized length: the payload parse must reject it */
            {
                size_t big = 56u + sc + (size_t)bound + (crc ? 4u : 0u);
                uint8_t *g = (uint8_t *)xmalloc(big);
                memset(g, 0, big);
                memcpy(g, m, len);
                st64(g + 48, bound);
                st = decode_status(g, big, n);
                CHECKF(st == DQ_ERR_CORRUPT || st == DQ_ERR_CHECKSUM, "length = bound, zero-padded: %s",
                       dq_strerror(st));
                free(g);
            }
            free(t);
            free(m);
            free(x);
        }
}

/* ---------------------------------------------------------------- 8: API misuse */
static void test_api_misuse(void) {
    const size_t n = 1000;
    float *x = (float *)xmalloc(n * sizeof(float)), *out = canary_floats(n);
    size_t cap = dq_encode_bound_coded(n, 16), len = 0, s = 0, flen = 0;
    uint8_t *m = (uint8_t *)xmalloc(cap), *cm, *d = (uint8_t *)xmalloc(cap);
    dq_params p = mkp(4, 512, DQ_ROUND_STOCHASTIC, DQ_NORM_L2, 0, DQ_CODER_FIXED_ONLY);
    static const unsigned bad_coders[] = {4, 5, 127, 128, 253, 256, 0xFFFFFFFFu};
    unsigned coder, b;
    size_t i, clen = 0;
    gen(K_GAUSS, x, n, 3u);
    for (coder = 1; coder <= 4; coder++) { /* ranges and blocks take the fixed coder only */
        p.coder = coder == 4 ? DQ_CODER_AUTO : coder;
        memset(m, CANARY, cap);
        CHECK(dq_encode_range(&p, n, 0, n, x, NULL, m, cap) == DQ_ERR_PARAM);
        CHECK(dq_encode_block(&p, x, n, NULL, m, cap, &len) == DQ_ERR_PARAM);
        CHECK(all_byte(m, cap, CANARY));
        CHECK(dq_block_size(&p, n, &s) == DQ_ERR_PARAM);
        CHECK(dq_decode_block(&p, m, cap, n, out) == DQ_ERR_PARAM);
        CHECK(dq_decode_add_block(&p, m, cap, n, 1.0f, out) == DQ_ERR_PARAM);
        CHECK(all_byte(out, n * sizeof(float), CANARY));
    }
    for (i = 0; i < sizeof bad_coders / sizeof bad_coders[0]; i++) {
        p.coder = bad_coders[i];
        len = 777;
        memset(m, CANARY, cap);
        CHECKF(dq_encode(&p, x, n, NULL, m, cap, &len) == DQ_ERR_PARAM, "coder %u", bad_coders[i]);
        CHECK(len == 777 && all_byte(m, cap, CANARY));
        CHECK(dq_encode_capacity(&p, n, &s) == DQ_ERR_PARAM);
    }
    p.bits = 1;
    p.coder = DQ_CODER_ELIAS;
    CHECK(dq_encode(&p, x, n, NULL, m, cap, &len) == DQ_ERR_PARAM && dq_encode_capacity(&p, n, &s) == DQ_ERR_PARAM);
    for (b = 9; b <= 16; b++) {
        p.bits = b;
        p.coder = DQ_CODER_RANS;
        memset(m, CANARY, cap);
        CHECKF(dq_encode(&p, x, n, NULL, m, cap, &len) == DQ_ERR_PARAM, "rans bits %u", b);
        CHECK(all_byte(m, cap, CANARY) && dq_encode_capacity(&p, n, &s) == DQ_ERR_PARAM);
        p.coder = DQ_CODER_AUTO; /* AUTO takes every width */
        CHECK(dq_encode(&p, x, n, NULL, m, cap, &len) == DQ_OK);
    }
    CHECK(dq_encode_bound_coded(n, 0) == 0 && dq_encode_bound_coded(n, 17) == 0);
    CHECK(dq_encode_bound_coded(0, 4) > 0);
    /* a coded message and its fixed form */
    p = mkp(4, 512, DQ_ROUND_STOCHASTIC, DQ_NORM_L2, 1, DQ_CODER_RANS);
    cm = encode_new(&p, x, n, NULL, cap, &clen);
    p.coder = DQ_CODER_FIXED_ONLY;
    CHECK(dq_encode(&p, x, n, NULL, m, cap, &flen) == DQ_OK);
    CHECK(cm[8] == DQ_CODER_RANS && dq_decode_range(cm, clen, 0, n, out) == DQ_OK); /* coder 3 reads in ranges */
    {
        float *o2 = canary_floats(n);
        CHECK(dq_decode(m, flen, o2, n) == DQ_OK && memcmp(out, o2, n * sizeof(float)) == 0);
        free(o2);
    }
    memset(out, CANARY, n * sizeof(float));
    CHECK(dq_recode(cm, clen, DQ_CODER_ELIAS, d, cap, &len) == DQ_ERR_PARAM); /* coded -> other coded */
    CHECK(dq_coded_size(cm, clen, DQ_CODER_ELIAS, &s) == DQ_ERR_PARAM);
    for (i = 0; i < sizeof bad_coders / sizeof bad_coders[0]; i++) {
        if (bad_coders[i] == DQ_CODER_AUTO) continue;
        CHECK(dq_recode(m, flen, bad_coders[i], d, cap, &len) == DQ_ERR_PARAM);
        CHECK(dq_coded_size(m, flen, bad_coders[i], &s) == DQ_ERR_PARAM);
        CHECK(dq_recode(cm, clen, bad_coders[i], d, cap, &len) == DQ_ERR_PARAM);
    }
    CHECK(dq_recode(m, flen, DQ_CODER_RANS, d, clen - 1u, &len) == DQ_ERR_DST_TOO_SMALL);
    CHECK(dq_recode(cm, clen, DQ_CODER_FIXED, d, flen - 1u, &len) == DQ_ERR_DST_TOO_SMALL);
    CHECK(dq_recode(cm, clen, DQ_CODER_RANS, d, clen - 1u, &len) == DQ_ERR_DST_TOO_SMALL);
    CHECK(dq_coded_size(NULL, clen, DQ_CODER_FIXED, &s) == DQ_ERR_NULL);
    CHECK(dq_coded_size(cm, clen, DQ_CODER_FIXED, NULL) == DQ_ERR_NULL);
    CHECK(dq_recode(NULL, clen, DQ_CODER_FIXED, d, cap, &len) == DQ_ERR_NULL);
    CHECK(dq_recode(cm, clen, DQ_CODER_FIXED, NULL, cap, &len) == DQ_ERR_NULL);
    CHECK(dq_recode(cm, clen, DQ_CODER_FIXED, d, cap, NULL) == DQ_ERR_NULL);
    /* dq_encode_finish on a coded message recomputes the same payload checksum */
    memcpy(d, cm, clen);
    d[clen - 1u] ^= 0xFFu;
    CHECK(dq_verify(d, clen) == DQ_ERR_CHECKSUM);
    CHECK(dq_encode_finish(d, clen) == DQ_OK && memcmp(d, cm, clen) == 0);
    /* params with a 1-bit Elias or a 9-bit rANS re-code */
    p = mkp(1, 512, DQ_ROUND_STOCHASTIC, DQ_NORM_L2, 0, DQ_CODER_FIXED_ONLY);
    CHECK(dq_encode(&p, x, n, NULL, m, cap, &flen) == DQ_OK);
    CHECK(dq_recode(m, flen, DQ_CODER_ELIAS, d, cap, &len) == DQ_ERR_PARAM);
    CHECK(dq_coded_size(m, flen, DQ_CODER_ELIAS, &s) == DQ_ERR_PARAM);
    p.bits = 9;
    CHECK(dq_encode(&p, x, n, NULL, m, cap, &flen) == DQ_OK);
    CHECK(dq_recode(m, flen, DQ_CODER_RANS, d, cap, &len) == DQ_ERR_PARAM);
    CHECK(dq_coded_size(m, flen, DQ_CODER_RANS, &s) == DQ_ERR_PARAM);
    free(x);
    free(out);
    free(m);
    free(cm);
    free(d);
}

/* ---------------------------------------------------------------- 9: message norm */
static void test_norm2(void) {
    static const uint32_t buckets[] = {8, 512, DQ_BUCKET_WHOLE};
    size_t bi, coded = 0;
    unsigned b;
    for (bi = 0; bi < 3; bi++)
        for (b = 1; b <= 8; b++) {
            const size_t n = 777;
            float *x = (float *)xmalloc(n * sizeof(float));
            dq_params p = mkp(b, buckets[bi], DQ_ROUND_STOCHASTIC, DQ_NORM_L2, b % 2u, DQ_CODER_FIXED_ONLY);
            size_t flen = 0, clen = 0, sc;
            uint8_t *fm, *cm;
            double a = -1.0, c = -2.0, ref = 0.0;
            dq_header h;
            size_t i;
            gen(K_HEAVY, x, n, 31u * b);
            fm = encode_new(&p, x, n, NULL, dq_encode_bound(n, b), &flen);
            p.coder = DQ_CODER_RANS;
            cm = encode_new(&p, x, n, NULL, dq_encode_bound_coded(n, b), &clen);
            CHECK(dq_message_norm2(fm, flen, &a) == DQ_OK && dq_message_norm2(cm, clen, &c) == DQ_OK);
            CHECKF(memcmp(&a, &c, sizeof a) == 0, "b %u: %.17g vs %.17g", b, a, c);
            for (i = 0; i < n; i++) ref += (double)x[i] * (double)x[i];
            CHECKF(fabs(c - ref) <= 1e-5 * ref, "b %u: %.17g vs sum of squares %.17g", b, c, ref);
            coded += clen > 8 && cm[8] == DQ_CODER_RANS;
            if (dq_header_read(cm, clen, &h) == DQ_OK && h.coder == DQ_CODER_RANS) { /* scales end at 56 + 4 nb */
                sc = 4u * nbuckets_of(&h);
                CHECK(dq_message_norm2(cm, 56u + sc - 1u, &c) == DQ_ERR_TRUNCATED);
                CHECK(dq_message_norm2(cm, 56u + sc, &c) == DQ_OK && memcmp(&a, &c, sizeof a) == 0);
            }
            p = mkp(b, buckets[bi], DQ_ROUND_STOCHASTIC, DQ_NORM_MAX, 0, DQ_CODER_RANS);
            free(cm);
            cm = encode_new(&p, x, n, NULL, dq_encode_bound_coded(n, b), &clen);
            CHECK(dq_message_norm2(cm, clen, &c) == DQ_ERR_PARAM);
            free(x);
            free(fm);
            free(cm);
        }
    CHECKF(coded >= 12, "rANS sent in %lu of 24 configs", (unsigned long)coded); /* where it pays */
}

/* ---------------------------------------------------------------- 10: pinned bytes */
static void test_pinned_hashes(void) {
    static const struct {
        unsigned bits, coder, checksum, ef;
        uint32_t bucket;
        dq_rounding rnd;
        dq_norm nm;
        size_t n;
        int kind;
        uint64_t hash;
    } cs[] = {
        {3, DQ_CODER_RANS, 0, 0, 512, DQ_ROUND_STOCHASTIC, DQ_NORM_L2, 3001, K_GAUSS, 0xc9003051254066d4u},
        {4, DQ_CODER_AUTO, 1, 1, 256, DQ_ROUND_STOCHASTIC, DQ_NORM_MAX, 5000, K_HEAVY, 0x4fd2b0ffe9db7de7u},
        {8, DQ_CODER_RANS, 0, 0, DQ_BUCKET_WHOLE, DQ_ROUND_NEAREST, DQ_NORM_L2, 1000, K_GAUSS, 0xbb65432c55700ebau},
        /* 0.5 pinned K_UNIF here: 1-bit rANS of uniform data is larger than fixed, which 0.6 sends instead */
        {1, DQ_CODER_RANS, 1, 0, 8, DQ_ROUND_NEAREST, DQ_NORM_L2, 3000, K_SPARSE, 0x8bb3bf134acce652u},
#if TEST_ELIAS
        {6, DQ_CODER_ELIAS, 1, 0, 512, DQ_ROUND_STOCHASTIC, DQ_NORM_L2, 2000, K_SPARSE, 0x0c5a722d876c666eu},
#endif
        /* 0.7 re-pinned the rANS rows above (coder 2 -> coder 3) and added three chunks of 2^16
         * symbols; its input depends on its row (seed 2024 + row) */
        {4, DQ_CODER_RANS, 1, 1, 512, DQ_ROUND_STOCHASTIC, DQ_NORM_L2, 300001, K_GAUSS,
         TEST_ELIAS ? 0x4476804cfc6a40e7u : 0xaad4e8737ddb4952u},
    };
    size_t i;
    for (i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        size_t n = cs[i].n, len = 0;
        dq_params p = mkp(cs[i].bits, cs[i].bucket, cs[i].rnd, cs[i].nm, cs[i].checksum, cs[i].coder);
        float *x = (float *)xmalloc(n * sizeof(float)), *r = (float *)xmalloc(n * sizeof(float));
        uint8_t *m;
        uint64_t h, hr;
        gen(cs[i].kind, x, n, 2024u + i);
        gen_res(r, n, i);
        m = encode_new(&p, x, n, cs[i].ef ? r : NULL, dq_encode_bound_coded(n, cs[i].bits), &len);
        h = fnv1a(m, len);
        CHECKF(len > 8 && (cs[i].coder == DQ_CODER_AUTO || m[8] == cs[i].coder), "config %lu: not sent coded",
               (unsigned long)i);
        hr = fnv1a((const uint8_t *)r, n * sizeof(float));
        CHECKF(h == cs[i].hash, "config %lu (%s b %u n %lu): message hash 0x%016llxu, len %lu (pinned 0x%016llxu)",
               (unsigned long)i, coder_name(cs[i].coder), cs[i].bits, (unsigned long)n, (unsigned long long)h,
               (unsigned long)len, (unsigned long long)cs[i].hash);
        if (dq_t_verbose() || h != cs[i].hash)
            printf("  pinned %lu: msg 0x%016llx len %lu residual 0x%016llx\n", (unsigned long)i,
                   (unsigned long long)h, (unsigned long)len, (unsigned long long)hr);
        free(x);
        free(r);
        free(m);
    }
}

#if TEST_ELIAS
/* ---------------------------------------------------------------- Elias: negative zero
 * A fixed message may hold code 2^(b-1) (sign set, level 0; decoders accept it as -0.0) that
 * the Elias layout cannot express. Re-coding it must fail cleanly or keep the values. */
/* A dq_encode_capacity() buffer lets the default coder and AUTO send the smallest form at every
 * width: at 9..16 bits (where rANS does not apply) Elias, on a sparse vector, as with
 * dq_encode_bound_coded() room; 0.10.0 gave no room there and sent the fixed layout (a sparse
 * 2^20 vector at 10 bits: 1,318,960 bytes instead of about 58,000). */
static void test_capacity_admits_smallest(void) {
    size_t n = (size_t)1 << 20, big = dq_encode_bound_coded(n, 16), cap, len, len_big;
    float *x = (float *)xmalloc(n * sizeof(float));
    uint8_t *m = (uint8_t *)xmalloc(big), *r = (uint8_t *)xmalloc(big);
    unsigned b, c, kind;
    static const unsigned coders[] = {DQ_CODER_DEFAULT, DQ_CODER_AUTO};
    for (kind = 0; kind < 2; kind++) {
        gen(kind ? K_SPARSE : K_VSPARSE, x, n, 7u);
        for (b = 2; b <= 16; b += (b < 8u ? 2u : 1u))
            for (c = 0; c < 2; c++) {
                dq_params p = mkp(b, 0, DQ_ROUND_STOCHASTIC, DQ_NORM_L2, 0, coders[c]);
                CHECK(dq_encode_capacity(&p, n, &cap) == DQ_OK && cap <= big);
                CHECK(dq_encode(&p, x, n, NULL, m, cap, &len) == DQ_OK);
                CHECK(dq_encode(&p, x, n, NULL, r, big, &len_big) == DQ_OK);
                CHECKF(len == len_big && memcmp(m, r, len) == 0 && m[8] != DQ_CODER_FIXED,
                       "%s b %u coder %u: %lu bytes (coder %u) with the capacity, %lu (coder %u) with the bound",
                       kind_name[kind ? K_SPARSE : K_VSPARSE], b, coders[c], (unsigned long)len, m[8],
                       (unsigned long)len_big, r[8]);
                if (b > 8u) CHECK(m[8] == DQ_CODER_ELIAS);
            }
    }
    free(x);
    free(m);
    free(r);
}

/* The default coder's checksum rule, as documented: a coded form goes out only when its
 * payload plus the 4 checksum bytes is smaller than the fixed payload, else the fixed layout
 * without a checksum; a buffer without the 4 bytes gets AUTO's choice unchecked. */
static void test_default_checksum_rule(void) {
    size_t n = DQ_CODER_AUTO_MIN, big = dq_encode_bound_coded(n, 8) + 64, len, la, cap, fixed_len;
    float *x = (float *)xmalloc(n * sizeof(float));
    uint8_t *m = (uint8_t *)xmalloc(big), *a = (uint8_t *)xmalloc(big);
    int kind, seen_fixed = 0, seen_coded = 0;
    unsigned b;
    for (kind = 0; kind < NKIND; kind++)
        for (b = 1; b <= 8; b++) {
            dq_params p = mkp(b, 0, DQ_ROUND_STOCHASTIC, DQ_NORM_L2, 0, DQ_CODER_DEFAULT), q = p;
            dq_header h;
            gen(kind, x, n, 3u);
            q.coder = DQ_CODER_FIXED_ONLY;
            CHECK(dq_encode(&q, x, n, NULL, m, big, &fixed_len) == DQ_OK);
            q.coder = DQ_CODER_AUTO;
            CHECK(dq_encode(&q, x, n, NULL, a, big, &la) == DQ_OK); /* AUTO, unchecked */
            CHECK(dq_encode(&p, x, n, NULL, m, big, &len) == DQ_OK && dq_header_read(m, len, &h) == DQ_OK);
            if (a[8] != DQ_CODER_FIXED && la + 4u < fixed_len) {
                CHECKF(h.coder == a[8] && (h.flags & DQ_FLAG_CHECKSUM) && len == la + 4u, "%s b %u", kind_name[kind], b);
                seen_coded++;
            } else {
                CHECKF(h.coder == DQ_CODER_FIXED && !(h.flags & DQ_FLAG_CHECKSUM) && len == fixed_len, "%s b %u: coder %u, %lu bytes",
                       kind_name[kind], b, h.coder, (unsigned long)len);
                seen_fixed++;
            }
            /* no room for the 4 bytes: AUTO's message, unchecked */
            CHECK(dq_encode_capacity(&p, n, &cap) == DQ_OK);
            if (la + 4u > fixed_len && la <= fixed_len) {
                CHECK(dq_encode(&p, x, n, NULL, m, fixed_len, &len) == DQ_OK && len == la && memcmp(m, a, la) == 0);
            }
        }
    CHECKF(seen_fixed > 4 && seen_coded > 4, "both sides exercised: %d fixed, %d coded", seen_fixed, seen_coded);
    free(x);
    free(m);
    free(a);
}

static void test_elias_negative_zero(void) {
    float x[16], o1[16], o2[16];
    dq_params p = mkp(4, 8, DQ_ROUND_NEAREST, DQ_NORM_MAX, 0, DQ_CODER_FIXED_ONLY);
    size_t flen = 0, s = 0, len = 0, i;
    uint8_t fm[256], *d;
    dq_status st, st2;
    for (i = 0; i < 16; i++) x[i] = i == 0 || i == 9 ? 1.0f : 0.0f;
    CHECK(dq_encode(&p, x, 16, NULL, fm, sizeof fm, &flen) == DQ_OK);
    fm[48 + 8 + 1] = 0x08; /* code 2: -0 */
    CHECK(dq_decode(fm, flen, o1, 16) == DQ_OK);
    st = dq_coded_size(fm, flen, DQ_CODER_ELIAS, &s);
    if (st == DQ_OK) {
        d = (uint8_t *)xmalloc(s);
        st2 = dq_recode(fm, flen, DQ_CODER_ELIAS, d, s, &len);
        CHECKF(st2 == DQ_OK && len == s, "coded_size %lu, recode %s len %lu", (unsigned long)s, dq_strerror(st2),
               (unsigned long)len);
        if (st2 == DQ_OK) {
            uint8_t *ex = bdup(d, len);
            CHECK(dq_decode(ex, len, o2, 16) == DQ_OK && memcmp(o1, o2, sizeof o1) == 0);
            free(ex);
        }
        free(d);
    } else {
        d = (uint8_t *)xmalloc(1024);
        CHECK(dq_recode(fm, flen, DQ_CODER_ELIAS, d, 1024, &len) == st);
        free(d);
    }
}
#endif

/* ---------------------------------------------------------------- AUTO in a tight buffer
 * The planner's room rule (FORMAT 17.5): with dst_cap anywhere from the fixed message's size
 * to dq_encode_bound_coded(), AUTO sends the smallest form whose in-place write fits. So its
 * size never grows with the room, and every message decodes to the fixed message's values and
 * equals that message re-coded (dq_recode) with the coder it carries. Vectors whose parts
 * differ make the choice move with the room (a dense head over a sparse tail, a zero head over
 * a dense tail), beside a Gaussian; the choices (coder and size at every room) are pinned. They
 * include one the lower-bound rule decides: at 8 bits on the Gaussian, with 5 to 22 KB of room,
 * Elias's lower bound exceeds rANS's upper bound, so the fixed layout goes out although rANS's
 * write does not fit there and Elias's (21% smaller than fixed) would. */
static void room_vector(int pat, float *x, size_t n, uint64_t seed) {
    dq_t_rng r;
    size_t i;
    r.s = seed;
    for (i = 0; i < n; i++) {
        double g = dq_t_gauss(&r);
        if (pat == 0)
            x[i] = i < n / 5 || dq_t_unif(&r) < 0.02 ? (float)g : 0.0f;
        else if (pat == 1)
            x[i] = i < n / 5 * 4 ? 0.0f : (float)(g * (double)(1u + i % 7u));
        else
            x[i] = (float)g;
    }
}
static void test_room_sweep(void) {
    static const unsigned bits[] = {3, 4, 8, 10};
    const size_t n = 300001; /* several rANS chunks at every width */
    float *x = (float *)xmalloc(n * sizeof(float)), *ref = canary_floats(n), *out = canary_floats(n);
    uint64_t h = 0xcbf29ce484222325u;
    unsigned bi, moved = 0;
    int pat, step;
    for (bi = 0; bi < sizeof bits / sizeof bits[0]; bi++)
        for (pat = 0; pat < 3; pat++) {
            unsigned b = bits[bi], first = 0;
            dq_params p = mkp(b, 512, DQ_ROUND_STOCHASTIC, pat == 1 ? DQ_NORM_MAX : DQ_NORM_L2, 0, DQ_CODER_FIXED_ONLY);
            size_t flen = 0, cap_auto = 0, bound = dq_encode_bound_coded(n, b), prev = (size_t)-1;
            uint8_t *fm;
            room_vector(pat, x, n, 41u + bi * 3u + (unsigned)pat);
            fm = encode_new(&p, x, n, NULL, dq_encode_bound(n, b), &flen);
            CHECK(dq_decode(fm, flen, ref, n) == DQ_OK);
            p.coder = DQ_CODER_AUTO;
            CHECK(dq_encode_capacity(&p, n, &cap_auto) == DQ_OK && cap_auto > flen && cap_auto < bound);
            for (step = 0; step <= 16; step++) { /* 12 steps up to the capacity, 4 more up to the bound */
                size_t cap = step <= 12 ? flen + (cap_auto - flen) / 12u * (size_t)step
                                        : cap_auto + (bound - cap_auto) / 4u * (size_t)(step - 12),
                       len = 0;
                uint8_t *m = encode_new(&p, x, n, NULL, cap, &len), info[9];
                unsigned coder = len ? m[8] : 255u;
                CHECKF(len && len <= prev && len <= flen, "b %u pattern %d step %d: %lu bytes after %lu (fixed %lu)", b,
                       pat, step, (unsigned long)len, (unsigned long)prev, (unsigned long)flen);
                if (len) {
                    uint8_t *ex = bdup(m, len);
                    CHECK(dq_decode(ex, len, out, n) == DQ_OK && memcmp(out, ref, n * sizeof(float)) == 0);
                    CHECKF(coder == DQ_CODER_FIXED || same_as_recode(fm, flen, m, len, coder), "b %u pattern %d step %d",
                           b, pat, step);
                    free(ex);
                }
                if (step == 0) first = coder;
                moved += step == 16 && coder != first;
                info[0] = (uint8_t)step;
                info[1] = (uint8_t)coder;
                info[2] = (uint8_t)len;
                info[3] = (uint8_t)(len >> 8);
                info[4] = (uint8_t)(len >> 16);
                info[5] = (uint8_t)(len >> 24);
                info[6] = (uint8_t)b;
                info[7] = (uint8_t)pat;
                info[8] = 0;
                h ^= fnv1a(info, sizeof info);
                h *= 0x100000001b3u;
                if (dq_t_verbose()) printf("  room b %u pattern %d step %d cap %lu: coder %u, %lu bytes\n", b, pat, step,
                                           (unsigned long)cap, coder, (unsigned long)len);
                prev = len ? len : prev;
                free(m);
            }
            free(fm);
        }
    CHECKF(moved >= 4, "the choice moved with the room in %u sweeps", moved);
    CHECKF(h == 0x8dcc9d91ae155d11ull, "room sweep choices: hash 0x%016llxu", (unsigned long long)h);
    free(x);
    free(ref);
    free(out);
}

/* ---------------------------------------------------------------- the receiver's bound
 * Every message the library writes at n elements and b bits fits dq_encode_bound(n, b) (and
 * the constant DQ_ENCODE_BOUND), whatever the scheme, coder, bucket, norm, checksum and data;
 * no coded message is larger than the fixed one; dq_encode_capacity() is the exact size for
 * the fixed coder and enough for the others. The widest case of the 0.5 defect is in the list:
 * n 100000, 8 bits, bucket 512, max norm, Gaussian, Elias wrote 153,918 > 150,560 bytes. A
 * forced coder must still be sent where it pays (Gaussian, L2, bucket 512, 2..8 bits). */
static void bound_case(dq_params p, const float *x, size_t n, int must_code, size_t *cases, size_t *fell) {
    unsigned b = p.bits, coder = p.coder;
    size_t bound = dq_encode_bound(n, b), cap = 0, fcap = 0, len = 0, flen = 0;
    uint8_t *m, *fm;
    dq_status st;
    dq_params pf = p;
    char what[120];
    sprintf(what, "scheme %u b %u %s bucket %lu norm %u crc %u n %lu", (unsigned)p.scheme, b, coder_name(coder),
            (unsigned long)p.bucket, (unsigned)p.norm, p.checksum, (unsigned long)n);
    pf.coder = DQ_CODER_FIXED_ONLY;
    CHECKF(bound == DQ_ENCODE_BOUND(n, b), "%s: function %lu, macro %lu", what, (unsigned long)bound,
           (unsigned long)DQ_ENCODE_BOUND(n, b));
    st = dq_encode_capacity(&p, n, &cap);
    CHECKF(st == DQ_OK && dq_encode_capacity(&pf, n, &fcap) == DQ_OK, "%s: capacity %s", what, dq_strerror(st));
    if (st != DQ_OK) return;
    m = (uint8_t *)xmalloc(cap);
    fm = (uint8_t *)xmalloc(fcap);
    st = dq_encode(&p, x, n, NULL, m, cap, &len);
    CHECKF(st == DQ_OK, "%s: encode into its capacity %lu: %s", what, (unsigned long)cap, dq_strerror(st));
    CHECK(dq_encode(&pf, x, n, NULL, fm, fcap, &flen) == DQ_OK && flen == fcap); /* fixed: exact */
    if (st == DQ_OK) {
        (*cases)++;
        CHECKF(len <= bound && len <= flen && len <= cap, "%s: %lu bytes, fixed %lu, bound %lu, capacity %lu", what,
               (unsigned long)len, (unsigned long)flen, (unsigned long)bound, (unsigned long)cap);
        CHECKF(m[8] == coder || m[8] == DQ_CODER_FIXED || coder == DQ_CODER_AUTO || coder == DQ_CODER_DEFAULT,
               "%s: coder %u on the wire", what, m[8]);
        if (coder == DQ_CODER_DEFAULT && m[8] != DQ_CODER_FIXED) /* coded by the default: checked */
            CHECKF(m[10] & DQ_FLAG_CHECKSUM, "%s: the default sent coder %u without the checksum", what, m[8]);
        if (coder == DQ_CODER_DEFAULT && m[8] == DQ_CODER_FIXED) /* not coded: what was asked */
            CHECKF(len == flen && memcmp(m, fm, flen) == 0, "%s: the default's fixed form differs", what);
        if ((coder == DQ_CODER_ELIAS || coder == DQ_CODER_RANS) && m[8] == DQ_CODER_FIXED) {
            (*fell)++;
            CHECKF(len == flen && memcmp(m, fm, flen) == 0, "%s: fell back, but not to the fixed message", what);
            CHECKF(!must_code, "%s: %s not sent where it pays", what, coder_name(coder));
        }
    }
    free(m);
    free(fm);
}
static void test_bound_sweep(void) {
    static const unsigned coders[] = {DQ_CODER_FIXED_ONLY, DQ_CODER_ELIAS, DQ_CODER_RANS, DQ_CODER_AUTO, DQ_CODER_DEFAULT};
    static const unsigned widths[] = {1, 2, 3, 4, 5, 8, 12, 16};
    static const uint32_t buckets[] = {8, 512, DQ_BUCKET_WHOLE};
    static const size_t ns[] = {1, 257, 4099};
    static const int kinds[] = {K_GAUSS, K_ZERO, K_PM1, K_SPARSE, K_HEAVY, K_UNIF};
    static const dq_scheme others[] = {DQ_SCHEME_NUQSGD, DQ_SCHEME_NATURAL, DQ_SCHEME_TERNGRAD, DQ_SCHEME_TWOMEANS};
    size_t ni, ki, wi, bi, ci, i, cases = 0, fell = 0;
    unsigned nm;
    for (ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
        for (ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++) {
            size_t n = ns[ni];
            float *x = (float *)xmalloc(n * sizeof(float));
            gen(kinds[ki], x, n, 7u * ni + ki);
            for (wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
                for (bi = 0; bi < 3; bi++)
                    for (ci = 0; ci < sizeof coders / sizeof coders[0]; ci++)
                        for (nm = DQ_NORM_L2; nm <= DQ_NORM_MAX; nm++) {
                            unsigned b = widths[wi];
                            dq_params p = mkp(b, buckets[bi], DQ_ROUND_STOCHASTIC, (dq_norm)nm, (ci + nm) & 1u,
                                              coders[ci]);
                            if (!coder_ok(coders[ci], b)) continue;
                            bound_case(p, x, n, kinds[ki] == K_GAUSS && n == 4099 && buckets[bi] == 512 &&
                                                    nm == DQ_NORM_L2 && b >= 2 && b <= 8,
                                       &cases, &fell);
                        }
            for (i = 0; i < sizeof others / sizeof others[0]; i++) /* the other level schemes, default widths */
                for (ci = 0; ci < sizeof coders / sizeof coders[0]; ci++) {
                    dq_params p = mkp(0, 8, DQ_ROUND_DEFAULT, DQ_NORM_DEFAULT, 1, coders[ci]);
                    p.scheme = others[i];
                    p.bits = others[i] == DQ_SCHEME_NATURAL ? 8u : others[i] == DQ_SCHEME_TWOMEANS ? 1u : 2u;
                    if (!coder_ok(coders[ci], p.bits)) continue;
                    bound_case(p, x, n, 0, &cases, &fell);
                }
            free(x);
        }
    { /* the example, and bucket 8 (61 KB over the bound in 0.5) */
        const size_t n = 100000;
        float *x = (float *)xmalloc(n * sizeof(float));
        gen(K_GAUSS, x, n, 100000u);
        for (bi = 0; bi < 2; bi++)
            for (ci = 1; ci < 3; ci++)
                bound_case(mkp(8, bi ? 8u : 512u, DQ_ROUND_STOCHASTIC, DQ_NORM_MAX, 0, coders[ci]), x, n, 0, &cases,
                           &fell);
        free(x);
    }
    if (dq_t_verbose()) printf("  bound sweep: %lu messages, %lu forced coders sent fixed\n", (unsigned long)cases,
                               (unsigned long)fell);
    CHECK(cases > 2000 && fell > 0 && fell < cases);
}

/* The default coder checks what it codes: a coded default message carries the payload
 * checksum (so it decodes in one pass) and the same values as DQ_CODER_AUTO's; without room for
 * the 4 bytes, or when the fixed form goes out, no checksum is added. */
static void test_default_checksum(void) {
    const size_t n = 65536;
    float *x = (float *)xmalloc(n * sizeof(float)), *a = (float *)xmalloc(n * sizeof(float)),
          *d = (float *)xmalloc(n * sizeof(float));
    dq_params p = mkp(4, 512, DQ_ROUND_STOCHASTIC, DQ_NORM_L2, 0, DQ_CODER_DEFAULT), pa = p, pf = p;
    size_t cap = 0, fcap = 0, len = 0, alen = 0, flen = 0;
    uint8_t *m, *am, *fm;
    gen(K_GAUSS, x, n, 31u);
    pa.coder = DQ_CODER_AUTO;
    pf.coder = DQ_CODER_FIXED_ONLY;
    CHECK(dq_encode_capacity(&p, n, &cap) == DQ_OK && dq_encode_capacity(&pf, n, &fcap) == DQ_OK);
    m = (uint8_t *)xmalloc(cap);
    am = (uint8_t *)xmalloc(cap);
    fm = (uint8_t *)xmalloc(cap);
    CHECK(dq_encode(&p, x, n, NULL, m, cap, &len) == DQ_OK && dq_encode(&pa, x, n, NULL, am, cap, &alen) == DQ_OK);
    CHECKF(m[8] == DQ_CODER_RANS && (m[10] & DQ_FLAG_CHECKSUM) && !(am[10] & DQ_FLAG_CHECKSUM) && len == alen + 4u,
           "default: coder %u flags %u, %lu bytes; AUTO %lu", m[8], m[10], (unsigned long)len, (unsigned long)alen);
    CHECK(dq_verify(m, len) == DQ_OK);
    CHECK(dq_decode(m, len, d, n) == DQ_OK && dq_decode(am, alen, a, n) == DQ_OK && memcmp(a, d, n * 4u) == 0);
    /* a buffer of exactly the fixed size: no room for the checksum, so none, and still sent */
    CHECK(dq_encode(&p, x, n, NULL, fm, fcap, &flen) == DQ_OK && !(fm[10] & DQ_FLAG_CHECKSUM));
    CHECK(dq_decode(fm, flen, d, n) == DQ_OK && memcmp(a, d, n * 4u) == 0);
    /* incompressible codes: the fixed form, unchecked, byte for byte FIXED_ONLY's */
    gen(K_UNIF, x, n, 32u);
    p.bits = pf.bits = 8; /* 255 codes near-uniform: the table costs more than they save */
    p.rounding = pf.rounding = DQ_ROUND_NEAREST;
    p.norm = pf.norm = DQ_NORM_MAX;
    p.bucket = pf.bucket = DQ_BUCKET_WHOLE;
    CHECK(dq_encode_capacity(&p, n, &cap) == DQ_OK);
    free(m);
    free(fm);
    m = (uint8_t *)xmalloc(cap);
    fm = (uint8_t *)xmalloc(cap);
    CHECK(dq_encode(&p, x, n, NULL, m, cap, &len) == DQ_OK && dq_encode(&pf, x, n, NULL, fm, cap, &flen) == DQ_OK);
    CHECKF(m[8] == DQ_CODER_FIXED && len == flen && memcmp(m, fm, len) == 0, "fixed default: coder %u, %lu vs %lu",
           m[8], (unsigned long)len, (unsigned long)flen);
    free(x);
    free(a);
    free(d);
    free(m);
    free(am);
    free(fm);
}

int main(void) {
    RUN(test_roundtrip);
    RUN(test_default_checksum);
    RUN(test_auto_smallest);
    RUN(test_rans_entropy);
    RUN(test_inplace_adversarial);
    RUN(test_forced_too_small);
    RUN(test_corruption);
    RUN(test_header_fields);
    RUN(test_api_misuse);
    RUN(test_rans_ranges);
    RUN(test_norm2);
    RUN(test_pinned_hashes);
    RUN(test_bound_sweep);
#if TEST_ELIAS
    RUN(test_elias_negative_zero);
    RUN(test_capacity_admits_smallest);
    RUN(test_default_checksum_rule);
    RUN(test_room_sweep);
#endif
    return dq_t_finish();
}
