/* 32-way rANS chunks (coder 3 draft, doc/FORMAT.md 17.6): the scalar reference round-trips
 * every length, alphabet and table shape; every SIMD twin in this build (tests/internals.h)
 * writes the scalar encoder's bytes and the scalar decoder's symbols, status and state, for
 * valid and corrupt streams and whatever the split of a decode into calls; the encoder's
 * reciprocal is exact; the coded size respects the bound derived below; the fused block decode
 * gives back the fixed payload. Streams handed to decoders are exact-size heap blocks so ASan
 * sees any over-read. */
#include "../dqsgd.h"
#include "harness.h"
#include "internals.h"

#include <stdint.h>

/* ---------------------------------------------------------------- helpers */
typedef struct coded {
    uint8_t *buf;    /* the encoder's buffer, cap bytes */
    size_t cap, len; /* the chunk is buf + cap - len */
} coded;

/* Frequencies from the symbols' counts (the 8-way coder's normalizer). */
static void freqs_of(const uint8_t *sym, size_t m, unsigned A, uint32_t *f) {
    uint64_t cnt[256] = {0};
    size_t i;
    for (i = 0; i < m; i++) cnt[sym[i]]++;
    if (m == 0) { /* any valid table */
        memset(f, 0, A * sizeof *f);
        f[0] = DQT_R32_M;
        return;
    }
    dqt_rans_normalize(cnt, A, (uint64_t)m, f);
}

/* Symbols below A: mode 0 uniform, 1 geometric (p halves per symbol), 2 a rounded Gaussian
 * around A/2 with sigma A/8, 3 only two symbols, 9:1. */
static void gen_syms(dq_t_rng *r, uint8_t *s, size_t m, unsigned A, int mode) {
    size_t i;
    for (i = 0; i < m; i++) {
        unsigned v = 0;
        if (mode == 0) {
            v = (unsigned)(dq_t_next(r) % A);
        } else if (mode == 1) {
            while (v + 1u < A && (dq_t_next(r) & 1u)) v++;
        } else if (mode == 2) {
            double g = (double)A / 2.0 + dq_t_gauss(r) * (double)A / 8.0;
            v = g < 0.0 ? 0u : g >= (double)(A - 1u) ? A - 1u : (unsigned)g;
        } else {
            v = dq_t_next(r) % 10u == 0 ? A - 1u : 0u;
        }
        s[i] = (uint8_t)v;
    }
}

/* The kernels of this build, the scalar reference first: the split decodes of each are compared
 * with the scalar decoder's one call (tests/internals.h: DQT_KERNELS, from the kernel list). */
static const struct {
    const char *name;
    dqt_r32get_fn fn;
} R32GET[] = {{"scalar", dqt_scalar(r32_get)}, DQT_KERNELS(r32_get){NULL, NULL}};
static const struct {
    const char *name;
    dqt_r32enc_fn fn;
} R32ENC[] = {{"scalar", dqt_scalar(r32_encode)}, DQT_KERNELS(r32_encode){NULL, NULL}};

/* Encodes with every encoder twin into buffers of cap bytes; checks they agree with the scalar
 * one (size and chunk bytes) and returns the scalar result. */
static coded encode_all(const uint8_t *sym, size_t m, const dqt_r32_esym *et, size_t cap) {
    coded c;
    size_t k;
    c.cap = cap;
    c.buf = (uint8_t *)xmalloc(cap);
    memset(c.buf, 0x5A, cap);
    c.len = dqt_scalar(r32_encode)(sym, m, et, c.buf, cap);
    for (k = 1; R32ENC[k].name; k++) {
        uint8_t *b = (uint8_t *)xmalloc(cap);
        size_t len = R32ENC[k].fn(sym, m, et, b, cap);
        CHECKF(len == c.len, "%s encoder: %lu bytes, scalar %lu (m %lu)", R32ENC[k].name, (unsigned long)len,
               (unsigned long)c.len, (unsigned long)m);
        if (len == c.len && len)
            CHECKF(!memcmp(b + cap - len, c.buf + cap - len, len), "%s encoder: bytes differ (m %lu)",
                   R32ENC[k].name, (unsigned long)m);
        free(b);
    }
    return c;
}

/* Decodes stream[0..len) as m symbols with decoder twin k, in calls of the sizes split gives
 * (0: one call; else pseudo-random sizes 1..split from seed). */
static dq_status decode_with(size_t k, const uint8_t *stream, size_t len, size_t m, const uint32_t *dtab,
                             uint8_t *out, dqt_r32_dec *dend, unsigned split, unsigned long long seed) {
    dqt_r32_dec d;
    dq_t_rng r;
    size_t i = 0;
    dq_status st;
    r.s = seed;
    memset(&d, 0, sizeof d);
    st = dqt_r32_open(&d, stream, len);
    if (st == DQ_OK) {
        while (i < m) {
            size_t c = split ? 1u + (size_t)(dq_t_next(&r) % split) : m - i;
            if (c > m - i) c = m - i;
            R32GET[k].fn(&d, dtab, out + i, c);
            i += c;
        }
        st = dqt_r32_finish(&d);
    }
    if (dend) *dend = d;
    return st;
}

/* Every decoder twin, one call and split into pieces, against the scalar decoder in one call:
 * same status, same m symbols, same final states and position. Returns the scalar status. */
static dq_status decode_all(const uint8_t *chunk, size_t len, size_t m, const uint32_t *dtab, uint8_t *ref,
                            const char *what) {
    uint8_t *stream = bdup(chunk, len), *out = (uint8_t *)xmalloc(m + 1u);
    dqt_r32_dec d0, d1;
    dq_status st0;
    size_t k;
    unsigned sp;
    memset(ref, 0xEE, m + 1u);
    st0 = decode_with(0, stream, len, m, dtab, ref, &d0, 0, 0);
    for (k = 0; R32GET[k].name; k++)
        for (sp = 0; sp < 3; sp++) {
            unsigned split = sp == 0 ? 0u : sp == 1 ? 7u : 100u;
            dq_status st;
            if (k == 0 && sp == 0) continue;
            memset(out, 0xEE, m + 1u);
            st = decode_with(k, stream, len, m, dtab, out, &d1, split, 1234u + sp);
            CHECKF(st == st0, "%s: %s decoder (split %u): status %d, scalar %d (m %lu)", what, R32GET[k].name,
                   split, (int)st, (int)st0, (unsigned long)m);
            CHECKF(!memcmp(out, ref, m + 1u), "%s: %s decoder (split %u): symbols differ (m %lu)", what,
                   R32GET[k].name, split, (unsigned long)m);
            if (st0 == DQ_OK || st0 == st)
                CHECKF(!memcmp(d0.x, d1.x, sizeof d0.x) && d0.p - stream == d1.p - stream && d0.j == d1.j &&
                           d0.bad == d1.bad,
                       "%s: %s decoder (split %u): final state differs (m %lu)", what, R32GET[k].name, split,
                       (unsigned long)m);
        }
    free(stream);
    free(out);
    return st0;
}

/* One round trip through every twin; returns the chunk size. */
static size_t roundtrip(const uint8_t *sym, size_t m, unsigned A, const char *what) {
    uint32_t f[256], *dtab = (uint32_t *)xmalloc(4096u * sizeof(uint32_t));
    dqt_r32_esym et[256];
    uint8_t *dec = (uint8_t *)xmalloc(m + 1u);
    coded c;
    size_t len;
    freqs_of(sym, m, A, f);
    CHECK(dqt_r32_tables(f, A, dtab, et));
    c = encode_all(sym, m, et, DQT_R32_HEAD + 2u * m); /* at most one word a symbol */
    len = c.len;
    CHECKF(len >= DQT_R32_HEAD && (len - DQT_R32_HEAD) % 2u == 0, "%s: m %lu gives %lu bytes", what,
           (unsigned long)m, (unsigned long)len);
    if (len) {
        dq_status st = decode_all(c.buf + c.cap - len, len, m, dtab, dec, what);
        CHECKF(st == DQ_OK, "%s: m %lu: status %d", what, (unsigned long)m, (int)st);
        CHECKF(!memcmp(dec, sym, m), "%s: m %lu: symbols differ", what, (unsigned long)m);
        /* exactly enough room, and one byte less */
        free(c.buf);
        c = encode_all(sym, m, et, len);
        CHECK(c.len == len);
        free(c.buf);
        c = encode_all(sym, m, et, len - 1u);
        CHECK(c.len == 0);
    }
    free(c.buf);
    free(dec);
    free(dtab);
    return len;
}

/* ---------------------------------------------------------------- tests */
static void test_tables(void) {
    uint32_t f[256], dtab[4096];
    dqt_r32_esym et[256];
    unsigned s;
    memset(f, 0, sizeof f);
    f[3] = 4096;
    CHECK(dqt_r32_tables(f, 4, dtab, et));
    CHECK(dtab[0] == 3u + (4095u << 8) && dtab[4095] == 3u + (4095u << 8) + (4095u << 20));
    f[3] = 4095;
    CHECK(!dqt_r32_tables(f, 4, dtab, et)); /* sums to 4095 */
    f[0] = 2;
    CHECK(!dqt_r32_tables(f, 4, dtab, et)); /* 4097 */
    f[3] = 4097;
    f[0] = 0;
    CHECK(!dqt_r32_tables(f, 256, NULL, NULL)); /* one above 4096 */
    CHECK(!dqt_r32_tables(f, 257, NULL, NULL));
    for (s = 0; s < 256; s++) f[s] = 16;
    CHECK(dqt_r32_tables(f, 256, dtab, NULL));
    for (s = 0; s < 4096; s++) CHECK(dtab[s] == (s / 16u | 15u << 8 | (s % 16u) << 20));
}

/* The encoder step's quotient: for every f and states x below f 2^20 (the only ones it sees;
 * every 32-bit x for the check of the formula itself) at the edges of each quotient and at
 * random, q = floor(x / f), and the new state is (x div f) M + x mod f + c. */
static void test_reciprocal(void) {
    dq_t_rng r = {77};
    uint32_t f[2] = {0, 0}, fs;
    dqt_r32_esym et[2];
    unsigned bad = 0;
    for (fs = 1; fs <= 4096u; fs++) {
        unsigned i;
        f[0] = fs;
        f[1] = 4096u - fs;
        if (!dqt_r32_tables(f, fs == 4096u ? 1u : 2u, NULL, et)) {
            bad++;
            continue;
        }
        for (i = 0; i < 600u; i++) {
            uint64_t lim = fs == 4096u ? (uint64_t)1 << 32 : (uint64_t)fs << 20;
            uint64_t x64 = i < 200u   ? (dq_t_next(&r) % (lim >> 16 ? lim >> 16 : 1u)) * fs + (i % 2u ? fs - 1u : 0u)
                           : i < 400u ? lim - 1u - (uint64_t)(i - 200u)
                                      : dq_t_next(&r) % lim;
            uint32_t x = (uint32_t)(x64 < 16u * (uint64_t)fs ? 16u * fs : x64), xs = x, want;
            size_t w = 8;
            uint8_t buf[8];
            if ((uint64_t)x >= lim) continue;
            want = (uint32_t)(((uint64_t)(x / fs) << 12) + x % fs);
            if (!dqt_r32_put1(&xs, et, buf, &w) || w != 8 || xs != want) bad++;
        }
    }
    CHECKF(bad == 0, "%u wrong quotients", bad);
}

static void test_small(void) {
    static const unsigned alph[] = {2, 3, 16, 64, 200, 256};
    dq_t_rng r = {1};
    uint8_t s[201];
    size_t m, a;
    int mode;
    for (a = 0; a < sizeof alph / sizeof alph[0]; a++)
        for (mode = 0; mode < 4; mode++)
            for (m = 0; m <= 200; m++) {
                gen_syms(&r, s, m, alph[a], mode);
                roundtrip(s, m, alph[a], "small");
            }
}

static void test_large(void) {
    static const size_t ms[] = {4096, 4097, 65536 + 31, 300001};
    static const unsigned alph[] = {2, 16, 256};
    dq_t_rng r = {2};
    size_t i, a;
    int mode;
    for (i = 0; i < sizeof ms / sizeof ms[0]; i++)
        for (a = 0; a < 3; a++)
            for (mode = 0; mode < 4; mode++) {
                uint8_t *s = (uint8_t *)xmalloc(ms[i]);
                gen_syms(&r, s, ms[i], alph[a], mode);
                roundtrip(s, ms[i], alph[a], "large");
                free(s);
            }
}

/* f_s = 4096: the states never move and no word is written; 128 bytes of 2^16. */
static void test_single_symbol(void) {
    uint8_t s[1000];
    size_t m;
    unsigned v;
    for (v = 0; v < 256; v += 51) {
        memset(s, (int)v, sizeof s);
        for (m = 1; m <= 1000; m += 333) CHECK(roundtrip(s, m, 256, "single") == DQT_R32_HEAD);
    }
}

/* Corrupt streams: every twin reports the scalar status and writes its symbols; the scalar
 * status is DQ_ERR_CORRUPT for each mutation here (fixed seeds). */
static void test_corrupt(void) {
    dq_t_rng r = {3};
    static const size_t ms[] = {1, 31, 32, 100, 320, 1000, 4096, 5000};
    uint32_t f[256], *dtab = (uint32_t *)xmalloc(4096u * sizeof(uint32_t));
    dqt_r32_esym et[256];
    size_t i;
    unsigned undetected = 0, cases = 0;
    for (i = 0; i < sizeof ms / sizeof ms[0]; i++) {
        size_t m = ms[i], len, t;
        uint8_t *s = (uint8_t *)xmalloc(m), *dec = (uint8_t *)xmalloc(m + 3u), *mut;
        coded c;
        gen_syms(&r, s, m, 16, 2);
        freqs_of(s, m, 16, f);
        CHECK(dqt_r32_tables(f, 16, dtab, et));
        c = encode_all(s, m, et, DQT_R32_HEAD + 2u * m + 4u);
        len = c.len;
        mut = (uint8_t *)xmalloc(len + 4u);
        for (t = 0; t < 40; t++) {
            size_t mlen = len, mm = m;
            dq_status st;
            int kind = (int)(t % 8u);
            memcpy(mut, c.buf + c.cap - len, len);
            if (kind == 0 || kind == 1) { /* a flipped bit in a word or in a state */
                size_t lo = kind == 0 ? DQT_R32_HEAD : 0, hi = kind == 0 ? len : DQT_R32_HEAD;
                size_t at;
                if (hi == lo) continue;
                at = lo + (size_t)(dq_t_next(&r) % (hi - lo));
                mut[at] = (uint8_t)(mut[at] ^ (1u << (dq_t_next(&r) % 8u)));
            } else if (kind == 2) { /* one word short */
                if (len == DQT_R32_HEAD) continue;
                mlen -= 2;
            } else if (kind == 3) { /* one byte short: odd */
                mlen -= 1;
            } else if (kind == 4) { /* an extra word */
                mut[len] = 0x12;
                mut[len + 1] = 0x34;
                mlen += 2;
            } else if (kind == 5) { /* a state below 2^16 */
                size_t k = (size_t)(dq_t_next(&r) % 32u);
                mut[4 * k + 2] = 0;
                mut[4 * k + 3] = 0;
            } else if (kind == 6) { /* one symbol more or less than encoded */
                unsigned v, one = 0;
                for (v = 0; v < 16u; v++) one |= f[v] == DQT_R32_M;
                if (one) continue; /* a one-symbol table codes no information: any m decodes */
                mm = t % 16u < 8u ? m + 1u : m - 1u;
            } else { /* a final state off by one: the head state +1 */
                size_t k = (size_t)(dq_t_next(&r) % 32u);
                uint32_t x = dq_t_ld32(mut + 4 * k);
                dq_t_st32(mut + 4 * k, x == 0xFFFFFFFFu ? x - 1u : x + 1u);
            }
            cases++;
            st = decode_all(mut, mlen, mm, dtab, dec, "corrupt");
            if (st != DQ_ERR_CORRUPT) {
                undetected++;
                if (dq_t_verbose()) printf("  undetected: m %lu kind %d\n", (unsigned long)m, kind);
            }
        }
        free(mut);
        free(c.buf);
        free(dec);
        free(s);
    }
    CHECKF(undetected == 0, "%u of %u corruptions decoded as valid", undetected, cases);
    free(dtab);
}

/* A missing word that would have been 0: the states end at 2^16 and every word present is
 * read, so only the missing-word flag tells. Searches (fixed seed) for a chunk whose last word
 * (the encoder's first) is 0 and drops it. */
static void test_missing_zero_word(void) {
    dq_t_rng r = {8};
    uint32_t f[256], dtab[4096];
    dqt_r32_esym et[256];
    uint8_t s[64], buf[128 + 2 * 64], dec[65];
    unsigned t, found = 0;
    memset(f, 0, sizeof f);
    f[0] = 1; /* symbol 0 is rare: one of them makes its state emit a word */
    f[1] = 4095;
    CHECK(dqt_r32_tables(f, 2, dtab, et));
    for (t = 0; t < 2000000u && found < 3u; t++) {
        size_t len, k;
        memset(s, 1, sizeof s);
        for (k = 0; k < 3; k++) s[dq_t_next(&r) % 64u] = 0;
        len = dqt_scalar(r32_encode)(s, 64, et, buf, sizeof buf);
        if (len <= DQT_R32_HEAD || buf[sizeof buf - 1] || buf[sizeof buf - 2]) continue;
        found++;
        CHECK(decode_all(buf + sizeof buf - len, len, 64, dtab, dec, "zero word") == DQ_OK);
        CHECK(decode_all(buf + sizeof buf - len, len - 2u, 64, dtab, dec, "zero word dropped") == DQ_ERR_CORRUPT);
    }
    CHECKF(found == 3u, "found %u chunks ending in a zero word", found);
}

/* Arbitrary bytes: the twins agree whatever they are given. */
static void test_garbage(void) {
    dq_t_rng r = {4};
    uint32_t f[256], *dtab = (uint32_t *)xmalloc(4096u * sizeof(uint32_t));
    uint8_t buf[2048], dec[700];
    unsigned t, s;
    for (s = 0; s < 256; s++) f[s] = s < 64u ? 64u : 0u;
    CHECK(dqt_r32_tables(f, 256, dtab, NULL));
    for (t = 0; t < 300; t++) {
        size_t len = DQT_R32_HEAD + 2u * (size_t)(dq_t_next(&r) % 900u), m = (size_t)(dq_t_next(&r) % 700u), i;
        for (i = 0; i < len; i++) buf[i] = (uint8_t)dq_t_next(&r);
        if (t % 2u)
            for (i = 0; i < 32; i++) buf[4 * i + 3] = (uint8_t)(buf[4 * i + 3] | 1u); /* states >= 2^24 */
        (void)decode_all(buf, len, m, dtab, dec, "garbage");
    }
    free(dtab);
}

/* Size bound. Writing W words and the 32 states, 8 L = 1024 + 16 W. Per lane, log2 X goes from
 * 16 to log2 X_end >= 16 and loses exactly 16 per word, so 16 W <= sum over symbols of the
 * step's gain log2(x' / x) (x after the renormalization). x' <= (x / f) M + f - 1 + c < (x + f)
 * M / f and x >= 16 f there (x >= 2^16, or x >= 2^20 f / 2^16 after a word), so the gain is
 * below log2(M / f) + log2(17 / 16): 8 L <= 1024 + sum_j log2(M / f_{s_j}) + m log2(17/16).
 * The first sum is m (H + D), H the empirical entropy and D = KL(p || f / M) <= log2(1 + chi2)
 * with chi2 = sum_s (p_s - q_s)^2 / q_s: the 12-bit table's per-symbol cost, computed from the
 * table. Both inequalities are exact; the test also prints how close the sizes come. */
static void test_entropy_bound(void) {
    static const size_t ms[] = {1000, 65536, 1u << 20};
    static const unsigned alph[] = {4, 16, 256};
    dq_t_rng r = {5};
    size_t i, a;
    int mode;
    for (i = 0; i < 3; i++)
        for (a = 0; a < 3; a++)
            for (mode = 0; mode < 3; mode++) {
                size_t m = ms[i], j, len;
                uint8_t *s = (uint8_t *)xmalloc(m);
                uint64_t cnt[256] = {0};
                uint32_t f[256];
                double H = 0, cross = 0, chi2 = 0, bound;
                unsigned k;
                gen_syms(&r, s, m, alph[a], mode);
                for (j = 0; j < m; j++) cnt[s[j]]++;
                freqs_of(s, m, alph[a], f);
                for (k = 0; k < alph[a]; k++) {
                    double p = (double)cnt[k] / (double)m, q = (double)f[k] / 4096.0;
                    if (!cnt[k]) continue;
                    H -= p * log2(p);
                    cross += p * log2(1.0 / q);
                    chi2 += (p - q) * (p - q) / q;
                }
                len = roundtrip(s, m, alph[a], "entropy");
                bound = 1024.0 + (double)m * (cross + log2(17.0 / 16.0));
                CHECKF((double)len * 8.0 <= bound, "m %lu A %u mode %d: %lu bytes, bound %.0f bits", (unsigned long)m,
                       alph[a], mode, (unsigned long)len, bound);
                CHECKF(cross <= H + log2(1.0 + chi2) + 1e-9, "cross-entropy %.6f above H %.6f + table cost", cross,
                       H);
                if (dq_t_verbose())
                    printf("  m %7lu A %3u mode %d: H %.4f, table +%.5f (bound %.5f), coded %.4f bits/sym\n",
                           (unsigned long)m, alph[a], mode, H, cross - H, log2(1.0 + chi2),
                           ((double)len * 8.0 - 1024.0) / (double)m);
                free(s);
            }
}

/* The fused block decode: random codes of every width b <= 8 and lengths with and without a
 * tail; the fixed payload's symbols as one chunk; dqt_r32_block gives back each block's bytes;
 * a non-zero code past the end (b in 3, 5, 6, 7) or padding bit makes the chunk corrupt. */
static void test_blocks(void) {
    static const size_t ns[] = {256, 1000, 4096 + 255, 20000};
    dq_t_rng r = {6};
    unsigned b;
    size_t ni;
    for (b = 1; b <= 8; b++)
        for (ni = 0; ni < 4; ni++) {
            size_t n = ns[ni], nb = (n + 255u) / 256u, k, m = 0, plen = (n * b + 7u) / 8u, len, off = 0;
            unsigned A = 1u << dqt_sym_bits(b);
            uint32_t *codes = (uint32_t *)xmalloc(256u * nb * sizeof(uint32_t)), f[256];
            uint32_t *dtab = (uint32_t *)xmalloc(4096u * sizeof(uint32_t));
            uint8_t *pay = (uint8_t *)xmalloc(plen), *sym = (uint8_t *)xmalloc(256u * nb);
            uint8_t buf[256], out[256];
            dqt_r32_esym et[256];
            dqt_r32_dec d;
            coded c;
            int variant;
            for (k = 0; k < n; k++) codes[k] = (uint32_t)(dq_t_next(&r) % (1u << b)) & (k % 3u ? 1u : 0xFFu);
            for (k = 0; k + 256u <= n; k += 256u) dqt_scalar(pack_block)(codes + k, b, pay + k * b / 8u);
            if (n % 256u) dqt_pack_tail(codes + (n / 256u) * 256u, n % 256u, b, pay + (n / 256u) * 32u * b);
            for (k = 0; k < nb; k++) m += dqt_block_syms(b, n, pay, k, sym + m);
            for (variant = 0; variant < 2; variant++) {
                if (variant == 1) { /* a non-zero code or padding bit past the end */
                    if (n % 256u == 0 || (dqt_sym_bytes(b) && (n * b) % 8u == 0) ||
                        (!dqt_sym_bytes(b) && n % dqt_sym_group(b) == 0))
                        break;
                    sym[m - 1u] = (uint8_t)(sym[m - 1u] | (A >> 1));
                }
                freqs_of(sym, m, A, f);
                CHECK(dqt_r32_tables(f, A, dtab, et));
                c = encode_all(sym, m, et, DQT_R32_HEAD + 2u * m);
                len = c.len;
                CHECK(dqt_r32_open(&d, c.buf + c.cap - len, len) == DQ_OK);
                for (k = 0; k < nb; k++) {
                    size_t bytes = k + 1u < nb || n % 256u == 0 ? 32u * b : (n % 256u * b + 7u) / 8u;
                    const uint8_t *blk = dqt_r32_block(&d, dtab, b, n, k, buf, out);
                    if (variant == 0)
                        CHECKF(!memcmp(blk, pay + off, bytes), "b %u n %lu block %lu differs", b, (unsigned long)n,
                               (unsigned long)k);
                    off += bytes;
                }
                CHECKF(dqt_r32_finish(&d) == (variant ? DQ_ERR_CORRUPT : DQ_OK), "b %u n %lu variant %d", b,
                       (unsigned long)n, variant);
                free(c.buf);
            }
            free(codes);
            free(dtab);
            free(pay);
            free(sym);
        }
}

int main(void) {
    size_t k;
    printf("rans32 twins [%s build]: decode", DQ_TEST_ISA);
    for (k = 0; R32GET[k].name; k++) printf(" %s", R32GET[k].name);
    printf(", encode");
    for (k = 0; R32ENC[k].name; k++) printf(" %s", R32ENC[k].name);
    printf("\n");
    fflush(stdout);
    RUN(test_tables);
    RUN(test_reciprocal);
    RUN(test_single_symbol);
    RUN(test_small);
    RUN(test_large);
    RUN(test_corrupt);
    RUN(test_missing_zero_word);
    RUN(test_garbage);
    RUN(test_entropy_bound);
    RUN(test_blocks);
    return dq_t_finish();
}
