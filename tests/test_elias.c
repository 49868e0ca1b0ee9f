/* Bit writer and reader, Elias gamma, delta and omega codes: known answers as bit strings,
 * a sweep of k = 1..10^6, values around every power of two, random mixes of codes and raw
 * fields against a bit-at-a-time reference, writer overflow (sticky, guard bytes), truncated
 * input in exactly-sized buffers, corrupt codes and the padding check. */
#include "../dqsgd.h"
#include "harness.h"
#include "internals.h"

/* ---- reference: codes as strings of '0'/'1', one bit at a time */
typedef struct bstr {
    char *s;
    size_t n, cap;
} bstr;
static void bs_init(bstr *b) {
    b->cap = 256;
    b->n = 0;
    b->s = (char *)xmalloc(b->cap);
}
static void bs_push(bstr *b, char c) {
    if (b->n + 1 >= b->cap) {
        char *t = (char *)xmalloc(b->cap * 2);
        memcpy(t, b->s, b->n);
        free(b->s);
        b->s = t;
        b->cap *= 2;
    }
    b->s[b->n++] = c;
    b->s[b->n] = 0;
}
static unsigned ref_log2(uint64_t k) {
    unsigned L = 0;
    while (k >>= 1) L++;
    return L;
}
static void ref_bits(bstr *b, uint64_t v, unsigned nb) {
    while (nb-- > 0) bs_push(b, (char)('0' + ((v >> nb) & 1u)));
}
static void ref_gamma(bstr *b, uint64_t k) {
    unsigned L = ref_log2(k), i;
    for (i = 0; i < L; i++) bs_push(b, '0');
    ref_bits(b, k, L + 1);
}
static void ref_delta(bstr *b, uint64_t k) {
    unsigned L = ref_log2(k);
    ref_gamma(b, L + 1);
    ref_bits(b, k, L);
}
static void ref_omega(bstr *b, uint64_t k) {
    uint64_t g[70];
    int n = 0;
    while (k > 1) {
        g[n++] = k;
        k = ref_log2(k);
    }
    while (n-- > 0) ref_bits(b, g[n], ref_log2(g[n]) + 1);
    bs_push(b, '0');
}
/* the first nbits bits of a byte buffer, MSB first */
static void to_bits(const uint8_t *p, size_t nbits, char *out) {
    size_t i;
    for (i = 0; i < nbits; i++) out[i] = (char)('0' + ((p[i / 8] >> (7 - i % 8)) & 1));
    out[nbits] = 0;
}

typedef dq_status (*put_fn)(dq_bitwriter *, uint64_t);
typedef dq_status (*get_fn)(dq_bitreader *, uint64_t *);
typedef unsigned (*len_fn)(uint64_t);
static const put_fn puts_[3] = {dq_elias_gamma_put, dq_elias_delta_put, dq_elias_omega_put};
static const get_fn gets_[3] = {dq_elias_gamma_get, dq_elias_delta_get, dq_elias_omega_get};
static const len_fn lens_[3] = {dq_elias_gamma_len, dq_elias_delta_len, dq_elias_omega_len};
static void (*const refs_[3])(bstr *, uint64_t) = {ref_gamma, ref_delta, ref_omega};
static const char *const names_[3] = {"gamma", "delta", "omega"};

static void test_bit_scans(void) {
    dq_t_rng r = {7};
    unsigned i, j;
    for (i = 0; i < 64; i++) {
        uint64_t x = (uint64_t)1 << i;
        CHECK(dqt_clz64_portable(x) == 63 - i && dqt_ctz64_portable(x) == i);
        CHECK(dqt_clz64(x) == 63 - i && dqt_ctz64(x) == i);
        CHECK(dqt_clz64_portable(x | 1u) == 63 - i && dqt_ctz64_portable(x | ((uint64_t)1 << 63)) == i);
    }
    for (j = 0; j < 100000; j++) {
        uint64_t x = dq_t_next(&r) >> (dq_t_next(&r) % 64);
        if (!x) continue;
        CHECK(dqt_clz64_portable(x) == dqt_clz64(x));
        CHECK(dqt_ctz64_portable(x) == dqt_ctz64(x));
    }
}

/* The code strings of 1..17, from the definitions (Elias 1975). */
static void test_known_answers(void) {
    static const char *const want[3][17] = {
        {"1", "010", "011", "00100", "00101", "00110", "00111", "0001000", "0001001", "0001010", "0001011",
         "0001100", "0001101", "0001110", "0001111", "000010000", "000010001"},
        {"1", "0100", "0101", "01100", "01101", "01110", "01111", "00100000", "00100001", "00100010", "00100011",
         "00100100", "00100101", "00100110", "00100111", "001010000", "001010001"},
        {"0", "100", "110", "101000", "101010", "101100", "101110", "1110000", "1110010", "1110100", "1110110",
         "1111000", "1111010", "1111100", "1111110", "10100100000", "10100100010"}};
    unsigned c, k;
    for (c = 0; c < 3; c++)
        for (k = 1; k <= 17; k++) {
            uint8_t buf[8];
            char bits[65];
            dq_bitwriter w;
            dq_bitreader rd;
            size_t len = 0, nb = strlen(want[c][k - 1]);
            uint64_t back = 0;
            bstr ref;
            memset(buf, 0xFF, sizeof buf);
            CHECK(dq_bw_init(&w, buf, sizeof buf) == DQ_OK);
            CHECK(puts_[c](&w, k) == DQ_OK);
            CHECK(dq_bw_bits(&w) == nb && lens_[c](k) == nb);
            CHECK(dq_bw_finish(&w, &len) == DQ_OK && len == (nb + 7) / 8);
            to_bits(buf, len * 8, bits);
            CHECKF(strncmp(bits, want[c][k - 1], nb) == 0, "%s(%u) = %.*s, want %s", names_[c], k, (int)nb, bits,
                   want[c][k - 1]);
            CHECKF(strspn(bits + nb, "0") == len * 8 - nb, "%s(%u): padding %s", names_[c], k, bits + nb);
            bs_init(&ref);
            refs_[c](&ref, k);
            CHECK(strcmp(ref.s, want[c][k - 1]) == 0); /* the reference agrees with the table */
            free(ref.s);
            CHECK(dq_br_init(&rd, buf, len) == DQ_OK);
            CHECK(gets_[c](&rd, &back) == DQ_OK && back == k);
            CHECK(dq_br_finish(&rd) == DQ_OK);
        }
}

/* k = 1..10^6 back to back for each code; the length function equals the bits written. */
static void test_sweep(void) {
    enum { N = 1000000 };
    size_t cap = (size_t)N * 6u, len = 0;
    uint8_t *buf = (uint8_t *)xmalloc(cap);
    unsigned c;
    for (c = 0; c < 3; c++) {
        dq_bitwriter w;
        dq_bitreader r;
        uint64_t k, v, bits = 0, bad = 0;
        dq_bw_init(&w, buf, cap);
        for (k = 1; k <= N; k++) {
            uint64_t before = dq_bw_bits(&w);
            puts_[c](&w, k);
            if (dq_bw_bits(&w) - before != lens_[c](k)) bad++;
            bits += lens_[c](k);
        }
        CHECKF(bad == 0, "%s: %lu lengths differ", names_[c], (unsigned long)bad);
        CHECK(dq_bw_bits(&w) == bits);
        CHECK(dq_bw_finish(&w, &len) == DQ_OK && len == (bits + 7) / 8);
        /* read from an exactly-sized copy so ASan sees any over-read */
        {
            uint8_t *exact = (uint8_t *)xmalloc(len);
            memcpy(exact, buf, len);
            dq_br_init(&r, exact, len);
            for (k = 1; k <= N; k++)
                if (gets_[c](&r, &v) != DQ_OK || v != k) bad++;
            CHECKF(bad == 0, "%s: %lu values wrong", names_[c], (unsigned long)bad);
            CHECK(dq_br_finish(&r) == DQ_OK);
            free(exact);
        }
    }
    free(buf);
}

/* 2^p - 1, 2^p, 2^p + 1 for every p, and 2^64 - 1: round trip and length against the reference */
static void test_powers_of_two(void) {
    uint64_t vals[64 * 3 + 1];
    size_t nv = 0, i, len = 0;
    unsigned c, p;
    static uint8_t buf[8192];
    for (p = 0; p < 64; p++) {
        uint64_t x = (uint64_t)1 << p;
        if (x > 1) vals[nv++] = x - 1;
        vals[nv++] = x;
        vals[nv++] = x + 1;
    }
    vals[nv++] = ~(uint64_t)0;
    for (c = 0; c < 3; c++) {
        dq_bitwriter w;
        dq_bitreader r;
        bstr ref;
        char *bits;
        bs_init(&ref);
        dq_bw_init(&w, buf, sizeof buf);
        for (i = 0; i < nv; i++) {
            CHECK(puts_[c](&w, vals[i]) == DQ_OK);
            refs_[c](&ref, vals[i]);
            CHECKF(dq_bw_bits(&w) == ref.n, "%s(%llu)", names_[c], (unsigned long long)vals[i]);
        }
        CHECK(dq_bw_finish(&w, &len) == DQ_OK);
        bits = (char *)xmalloc(len * 8 + 1);
        to_bits(buf, len * 8, bits);
        CHECK(strncmp(bits, ref.s, ref.n) == 0);
        dq_br_init(&r, buf, len);
        for (i = 0; i < nv; i++) {
            uint64_t v = 0;
            CHECKF(gets_[c](&r, &v) == DQ_OK && v == vals[i], "%s: %llu read as %llu", names_[c],
                   (unsigned long long)vals[i], (unsigned long long)v);
            CHECK(lens_[c](vals[i]) == (c == 0 ? 2 * ref_log2(vals[i]) + 1 : lens_[c](vals[i])));
        }
        CHECK(dq_br_finish(&r) == DQ_OK);
        CHECK(lens_[c](0) == 0);
        free(bits);
        free(ref.s);
    }
    CHECK(dq_elias_gamma_len(~(uint64_t)0) == 127 && dq_elias_delta_len(~(uint64_t)0) == 63 + 13);
    CHECK(dq_elias_omega_len(~(uint64_t)0) == 64 + 6 + 3 + 2 + 1);
}

/* Random sequences of raw fields (0..64 bits) and codes, checked against the reference string,
 * read back at several buffer offsets (fast and careful refill paths, any alignment). */
typedef struct op {
    int kind; /* 0..2 code, 3 raw field */
    unsigned nb;
    uint64_t v;
} op;
static uint64_t rand_val(dq_t_rng *r) {
    uint64_t v = dq_t_next(r) >> (dq_t_next(r) % 64);
    return v ? v : 1;
}
static void test_mixed(void) {
    enum { OPS = 3000 };
    static op ops[OPS];
    static uint8_t buf[OPS * 20 + 16];
    dq_t_rng rng = {12345};
    unsigned round;
    for (round = 0; round < 40; round++) {
        dq_bitwriter w;
        bstr ref;
        size_t i, len = 0, off;
        unsigned nops = 1 + (unsigned)(dq_t_next(&rng) % OPS);
        char *bits;
        bs_init(&ref);
        dq_bw_init(&w, buf, sizeof buf);
        for (i = 0; i < nops; i++) {
            op *o = &ops[i];
            o->kind = (int)(dq_t_next(&rng) % 4);
            if (o->kind == 3) {
                o->nb = (unsigned)(dq_t_next(&rng) % 65);
                o->v = dq_t_next(&rng); /* high bits beyond nb must be ignored */
                dq_bw_put(&w, o->v, o->nb);
                ref_bits(&ref, o->v, o->nb);
                o->v = o->nb ? o->v & (~(uint64_t)0 >> (64 - o->nb)) : 0;
            } else {
                o->v = round & 1 ? rand_val(&rng) : 1 + dq_t_next(&rng) % 40;
                puts_[o->kind](&w, o->v);
                refs_[o->kind](&ref, o->v);
            }
        }
        CHECK(dq_bw_bits(&w) == ref.n);
        CHECK(dq_bw_finish(&w, &len) == DQ_OK && len == (ref.n + 7) / 8);
        bits = (char *)xmalloc(len * 8 + 1);
        to_bits(buf, len * 8, bits);
        CHECK(strncmp(bits, ref.s, ref.n) == 0 && strspn(bits + ref.n, "0") == len * 8 - ref.n);
        for (off = 0; off < 3; off++) {
            uint8_t *copy = (uint8_t *)xmalloc(len + off);
            dq_bitreader r;
            size_t bad = 0;
            memcpy(copy + off, buf, len);
            dq_br_init(&r, copy + off, len);
            for (i = 0; i < nops; i++) {
                const op *o = &ops[i];
                uint64_t v = 0;
                if (o->kind == 3) {
                    if (o->nb <= 56 && dq_br_peek(&r, o->nb) != o->v) bad++;
                    v = dq_br_get(&r, o->nb);
                } else if (gets_[o->kind](&r, &v) != DQ_OK) {
                    bad++;
                }
                if (v != o->v) bad++;
            }
            CHECKF(bad == 0, "round %u offset %lu: %lu mismatches", round, (unsigned long)off, (unsigned long)bad);
            CHECK(dq_br_bits_left(&r) < 8 && dq_br_finish(&r) == DQ_OK && !dq_br_overrun(&r));
            free(copy);
        }
        free(bits);
        free(ref.s);
    }
}

/* Every capacity below the size: DQ_ERR_DST_TOO_SMALL, nothing stored at or past cap, and the
 * bytes below cap are either the stream's or untouched. At the size: DQ_OK, same bytes. */
static void test_overflow(void) {
    enum { GUARD = 32 };
    uint8_t full[512];
    dq_t_rng rng = {99};
    size_t need = 0, cap, i;
    uint64_t vals[100];
    dq_bitwriter w;
    for (i = 0; i < 100; i++) vals[i] = (rand_val(&rng) >> (dq_t_next(&rng) % 50)) | 1u;
    dq_bw_init(&w, full, sizeof full);
    for (i = 0; i < 100; i++) dq_elias_delta_put(&w, vals[i]);
    dq_bw_put(&w, 5, 3);
    CHECK(dq_bw_finish(&w, &need) == DQ_OK && need > 100);
    for (cap = 0; cap <= need; cap++) {
        uint8_t *b = (uint8_t *)xmalloc(cap + GUARD);
        size_t len = 12345, bad = 0;
        memset(b, 0xA5, cap + GUARD);
        CHECK(dq_bw_init(&w, cap ? b : NULL, cap) == DQ_OK);
        for (i = 0; i < 100; i++) CHECK(dq_elias_delta_put(&w, vals[i]) == DQ_OK);
        dq_bw_put(&w, 5, 3);
        CHECK(dq_bw_bits(&w) <= need * 8 && dq_bw_bits(&w) > need * 8 - 8);
        if (cap < need) {
            CHECK(dq_bw_finish(&w, &len) == DQ_ERR_DST_TOO_SMALL && len == 12345);
            CHECK(dq_bw_finish(&w, &len) == DQ_ERR_DST_TOO_SMALL); /* sticky */
            dq_bw_put(&w, 1, 1);
            CHECK(dq_bw_finish(&w, &len) == DQ_ERR_DST_TOO_SMALL);
        } else {
            CHECK(dq_bw_finish(&w, &len) == DQ_OK && len == need && memcmp(b, full, need) == 0);
        }
        /* (early-exit loops: clang 14 -O3 -mavx512f crashes vectorizing a byte-count loop) */
        for (i = 0; i < cap && !bad; i++) bad = b[i] != full[i] && b[i] != 0xA5;
        for (i = cap; i < cap + GUARD && !bad; i++) bad = b[i] != 0xA5;
        CHECKF(bad == 0, "cap %lu: %lu bytes wrong", (unsigned long)cap, (unsigned long)bad);
        free(b);
    }
    /* a counting writer gives the size */
    CHECK(dq_bw_init(&w, NULL, 0) == DQ_OK);
    for (i = 0; i < 100; i++) dq_elias_delta_put(&w, vals[i]);
    dq_bw_put(&w, 5, 3);
    CHECK((dq_bw_bits(&w) + 7) / 8 == need);
    /* argument errors */
    CHECK(dq_bw_init(NULL, full, 1) == DQ_ERR_NULL && dq_bw_init(&w, NULL, 1) == DQ_ERR_NULL);
    dq_bw_init(&w, full, sizeof full);
    CHECK(dq_elias_gamma_put(&w, 0) == DQ_ERR_PARAM && dq_elias_delta_put(&w, 0) == DQ_ERR_PARAM &&
          dq_elias_omega_put(&w, 0) == DQ_ERR_PARAM && dq_bw_bits(&w) == 0);
    CHECK(dq_elias_gamma_put(NULL, 1) == DQ_ERR_NULL);
    dq_bw_put(&w, 0, 65);
    CHECK(dq_bw_bits(&w) == 0 && dq_bw_finish(&w, &need) == DQ_ERR_PARAM);
}

/* Every truncation of a stream, in a buffer of exactly that size: the codes that fit decode,
 * the first that does not returns DQ_ERR_TRUNCATED, and so does every later call. */
static void test_truncated(void) {
    uint8_t full[2048];
    uint64_t vals[200], ends[3][200];
    dq_t_rng rng = {5};
    size_t len[3], i, t;
    unsigned c;
    for (i = 0; i < 200; i++) vals[i] = rand_val(&rng);
    for (c = 0; c < 3; c++) {
        dq_bitwriter w;
        dq_bw_init(&w, full, sizeof full);
        for (i = 0; i < 200; i++) {
            puts_[c](&w, vals[i]);
            ends[c][i] = dq_bw_bits(&w);
        }
        CHECK(dq_bw_finish(&w, &len[c]) == DQ_OK);
        for (t = 0; t < len[c]; t++) {
            uint8_t *b = (uint8_t *)xmalloc(t);
            dq_bitreader r;
            size_t bad = 0;
            memcpy(b, full, t);
            dq_br_init(&r, t ? b : NULL, t);
            for (i = 0; i < 200; i++) {
                uint64_t v = 777;
                dq_status st = gets_[c](&r, &v);
                if (ends[c][i] <= 8 * t) {
                    if (st != DQ_OK || v != vals[i]) bad++;
                } else if (st != DQ_ERR_TRUNCATED || v != 777) {
                    bad++;
                }
            }
            CHECKF(bad == 0, "%s cut at %lu: %lu wrong", names_[c], (unsigned long)t, (unsigned long)bad);
            CHECK(dq_br_overrun(&r) && dq_br_finish(&r) == DQ_ERR_TRUNCATED && dq_br_bits_left(&r) == 0);
            free(b);
        }
    }
    { /* raw reads past the end return zero bits */
        uint8_t one = 0xFF;
        dq_bitreader r;
        dq_br_init(&r, &one, 1);
        CHECK(dq_br_peek(&r, 12) == 0xFF0 && !dq_br_overrun(&r));
        CHECK(dq_br_get(&r, 3) == 7 && dq_br_get(&r, 6) == 0 && dq_br_overrun(&r));
        CHECK(dq_br_get(&r, 1) == 0 && dq_br_bits_left(&r) == 0);
        dq_br_init(&r, &one, 1);
        CHECK(dq_br_get(&r, 65) == 0 && dq_br_overrun(&r));
        CHECK(dq_br_init(&r, NULL, 1) == DQ_ERR_NULL && dq_br_init(NULL, &one, 1) == DQ_ERR_NULL);
        CHECK(dq_br_init(&r, NULL, 0) == DQ_OK && dq_br_finish(&r) == DQ_OK);
        CHECK(dq_elias_gamma_get(&r, NULL) == DQ_ERR_NULL && dq_elias_omega_get(NULL, NULL) == DQ_ERR_NULL);
    }
}

static size_t put_string(uint8_t *buf, size_t cap, const char *bits) {
    dq_bitwriter w;
    size_t len = 0;
    dq_bw_init(&w, buf, cap);
    for (; *bits; bits++)
        if (*bits == '0' || *bits == '1') dq_bw_put(&w, (uint64_t)(*bits - '0'), 1);
    dq_bw_finish(&w, &len);
    return len;
}
static void test_corrupt(void) {
    uint8_t buf[64];
    char s[300];
    dq_bitreader r;
    uint64_t v = 0;
    size_t len, i;
    /* gamma: 70 zeros; 64 zeros and a 1; 63 zeros then the largest value; 63 zeros cut short */
    memset(s, '0', 70);
    s[70] = 0;
    len = put_string(buf, sizeof buf, s);
    dq_br_init(&r, buf, len);
    CHECK(dq_elias_gamma_get(&r, &v) == DQ_ERR_CORRUPT);
    memset(s, '0', 64);
    strcpy(s + 64, "1");
    dq_br_init(&r, buf, put_string(buf, sizeof buf, s));
    CHECK(dq_elias_gamma_get(&r, &v) == DQ_ERR_CORRUPT);
    memset(s, '0', 63);
    memset(s + 63, '1', 64);
    s[127] = 0;
    len = put_string(buf, sizeof buf, s);
    dq_br_init(&r, buf, len);
    CHECK(dq_elias_gamma_get(&r, &v) == DQ_OK && v == ~(uint64_t)0 && dq_br_finish(&r) == DQ_OK);
    dq_br_init(&r, buf, 8); /* 63 zeros and the first bit, then the end */
    CHECK(dq_elias_gamma_get(&r, &v) == DQ_ERR_TRUNCATED);
    /* delta: a length field of 65 (gamma(65) = 6 zeros, 1000001) */
    len = put_string(buf, sizeof buf, "000000 1000001 0000");
    dq_br_init(&r, buf, len);
    CHECK(dq_elias_delta_get(&r, &v) == DQ_ERR_CORRUPT);
    /* delta of 2^64 - 1: gamma(64) then 63 ones */
    strcpy(s, "000000 1000000 ");
    memset(s + 15, '1', 63);
    s[78] = 0;
    dq_br_init(&r, buf, put_string(buf, sizeof buf, s));
    CHECK(dq_elias_delta_get(&r, &v) == DQ_OK && v == ~(uint64_t)0);
    /* omega: 64 = 10 110 1000000 0; a 1 instead of the final 0 starts a 65-bit group */
    dq_br_init(&r, buf, put_string(buf, sizeof buf, "10 110 1000000 0"));
    CHECK(dq_elias_omega_get(&r, &v) == DQ_OK && v == 64 && dq_br_finish(&r) == DQ_OK);
    dq_br_init(&r, buf, put_string(buf, sizeof buf, "10 110 1000000 1 0000000"));
    CHECK(dq_elias_omega_get(&r, &v) == DQ_ERR_CORRUPT);
    /* omega: a 64-bit group (value 63 before it) is fine: 2^64 - 1 = 10 101 111111 1{63} 0 */
    strcpy(s, "10 101 111111 ");
    memset(s + 14, '1', 64);
    strcpy(s + 78, " 0");
    dq_br_init(&r, buf, put_string(buf, sizeof buf, s));
    CHECK(dq_elias_omega_get(&r, &v) == DQ_OK && v == ~(uint64_t)0);
    /* random bytes: any status, never a crash; OK only with a value whose code was consumed */
    {
        dq_t_rng rng = {3};
        unsigned c, t;
        for (t = 0; t < 20000; t++) {
            size_t n = (size_t)(dq_t_next(&rng) % 24);
            uint8_t *b = (uint8_t *)xmalloc(n);
            uint64_t before;
            dq_status st;
            for (i = 0; i < n; i++) b[i] = (uint8_t)(dq_t_next(&rng) >> (dq_t_next(&rng) % 2 ? 0 : 5));
            c = t % 3;
            dq_br_init(&r, n ? b : NULL, n);
            before = dq_br_bits_left(&r);
            st = gets_[c](&r, &v);
            CHECK(st == DQ_OK || st == DQ_ERR_TRUNCATED || st == DQ_ERR_CORRUPT);
            if (st == DQ_OK) CHECK(before - dq_br_bits_left(&r) == lens_[c](v));
            free(b);
        }
    }
}

/* dq_br_finish: exact end with zero padding only */
static void test_padding(void) {
    uint8_t b[3];
    dq_bitreader r;
    uint64_t v;
    b[0] = 0x40; /* gamma(2) = 010, then 00000 */
    dq_br_init(&r, b, 1);
    CHECK(dq_elias_gamma_get(&r, &v) == DQ_OK && v == 2 && dq_br_bits_left(&r) == 5 && dq_br_finish(&r) == DQ_OK);
    b[0] = 0x41; /* a padding bit set */
    dq_br_init(&r, b, 1);
    CHECK(dq_elias_gamma_get(&r, &v) == DQ_OK && dq_br_finish(&r) == DQ_ERR_CORRUPT);
    b[0] = 0x40;
    b[1] = 0; /* a trailing zero byte */
    dq_br_init(&r, b, 2);
    CHECK(dq_elias_gamma_get(&r, &v) == DQ_OK && dq_br_finish(&r) == DQ_ERR_CORRUPT);
    b[0] = 0x80; /* gamma(1) and 7 zero bits; exactly a byte */
    dq_br_init(&r, b, 1);
    CHECK(dq_elias_gamma_get(&r, &v) == DQ_OK && v == 1 && dq_br_finish(&r) == DQ_OK);
    b[0] = 0x01;
    b[1] = 0x00; /* 8 raw bits then a full byte of zeros: 8 bits left is a trailing byte */
    dq_br_init(&r, b, 2);
    CHECK(dq_br_get(&r, 8) == 1 && dq_br_finish(&r) == DQ_ERR_CORRUPT);
    /* skip and peek keep the reader consistent across refills */
    b[0] = 0xA5;
    b[1] = 0x5A;
    b[2] = 0xFF;
    dq_br_init(&r, b, 3);
    dq_br_skip(&r, 4);
    CHECK(dq_br_peek(&r, 8) == 0x55 && dq_br_get(&r, 12) == 0x55A && dq_br_bits_left(&r) == 8);
    CHECK(dq_br_get(&r, 7) == 0x7F && dq_br_finish(&r) == DQ_ERR_CORRUPT);
}

int main(void) {
    RUN(test_bit_scans);
    RUN(test_known_answers);
    RUN(test_sweep);
    RUN(test_powers_of_two);
    RUN(test_mixed);
    RUN(test_overflow);
    RUN(test_truncated);
    RUN(test_corrupt);
    RUN(test_padding);
    return dq_t_finish();
}
