/* Sparse index streams (doc/FORMAT.md 18): known-answer streams, round trips of every
 * coder and AUTO over densities from one index to all of them, n up to 2^32, exact sizes and
 * the bound, AUTO against the explicit coders, the RICE parameter against every parameter
 * (brute force), the VARINT kernel against its scalar twin, every truncation (exactly-sized
 * buffers, for ASan), single-byte corruptions (any status, and a stream that still decodes is
 * re-encoded to the same bytes), argument and format errors. */
#include "../dqsgd.h"
#include "harness.h"
#include "internals.h"

#define NCODERS 5 /* AUTO and the four coders */
static const char *const cname[NCODERS] = {"auto", "gamma", "varint", "bitmap", "rice"};

/* m(n) of FORMAT 18.9: the largest RICE parameter, min(31, bit length of n - 1) */
static unsigned rice_max(uint64_t n) {
    unsigned L = 0;
    while (L < 31u && (n - 1u) >> L) L++;
    return L;
}
/* RICE code bits of a set at parameter r, from the spec: k (1 + r) + sum of (gap - 1) >> r */
static uint64_t rice_bits(const uint32_t *idx, size_t k, unsigned r) {
    uint64_t b = 0, next = 0;
    size_t i;
    for (i = 0; i < k; i++) {
        b += 1u + r + (((uint64_t)idx[i] - next) >> r);
        next = (uint64_t)idx[i] + 1u;
    }
    return b;
}
/* Re-encoding a decoded stream with its own coder (and RICE parameter): the same bytes. */
static int same_again(const uint8_t *m, size_t len, const uint32_t *idx, size_t k, uint64_t n, dq_index_coder c) {
    uint8_t *again = (uint8_t *)xmalloc(len);
    size_t re = 0;
    dq_status st = c == DQ_INDEX_RICE ? dqt_index_encode_rice(idx, k, n, m[10], again, len, &re)
                                      : dq_index_encode(idx, k, n, c, again, len, &re);
    int ok = st == DQ_OK && re == len && memcmp(again, m, len) == 0;
    free(again);
    return ok;
}

/* k distinct sorted indices below n: selection sampling for small n, sort and dedupe above */
static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}
static size_t gen_set(dq_t_rng *r, uint64_t n, size_t k, uint32_t *idx) {
    size_t got = 0;
    if (n <= ((uint64_t)1 << 26)) {
        uint64_t i;
        for (i = 0; i < n && got < k; i++)
            if ((uint64_t)(dq_t_unif(r) * (double)(n - i)) < k - got) idx[got++] = (uint32_t)i;
        return got;
    }
    while (got < k) {
        size_t i, j;
        for (i = got; i < k; i++) idx[i] = (uint32_t)(dq_t_next(r) % n);
        qsort(idx, k, sizeof *idx, cmp_u32);
        for (i = j = 0; i < k; i++)
            if (j == 0 || idx[i] != idx[j - 1]) idx[j++] = idx[i];
        got = j;
    }
    return got;
}
static int valid_set(const uint32_t *idx, size_t k, uint64_t n) {
    size_t i;
    for (i = 0; i < k; i++)
        if (idx[i] >= n || (i && idx[i] <= idx[i - 1])) return 0;
    return 1;
}

/* Encode with `coder`, check size, bound and header, decode with both VARINT kernels.
 * Returns the stream length (0 on failure); the stream is left in *out (caller frees). */
static size_t roundtrip(const uint32_t *idx, size_t k, uint64_t n, dq_index_coder coder, uint8_t **out) {
    size_t size = 0, len = 0, k2 = 0, k3 = 0, bound = dq_index_bound(k, n);
    uint64_t n2 = 0;
    dq_index_coder c2 = DQ_INDEX_AUTO;
    uint8_t *buf;
    uint32_t *dec = (uint32_t *)xmalloc((k + 1) * sizeof *dec), *dec2 = (uint32_t *)xmalloc((k + 1) * sizeof *dec2);
    *out = NULL;
    CHECKF(dq_index_size(idx, k, n, coder, &size) == DQ_OK, "%s k %lu n %llu", cname[coder], (unsigned long)k,
           (unsigned long long)n);
    CHECKF(size <= bound && size >= DQ_INDEX_HEADER_SIZE, "%s: size %lu bound %lu", cname[coder],
           (unsigned long)size, (unsigned long)bound);
    buf = (uint8_t *)xmalloc(size);
    CHECK(dq_index_encode(idx, k, n, coder, buf, size, &len) == DQ_OK && len == size);
    CHECK(dq_index_header(buf, len, &n2, &k2, &c2) == DQ_OK && n2 == n && k2 == k);
    CHECK(coder == DQ_INDEX_AUTO ? c2 != DQ_INDEX_AUTO : c2 == coder);
    CHECK(dq_index_decode(buf, len, dec, k, &k2) == DQ_OK && k2 == k);
    CHECK(k == 0 || memcmp(dec, idx, k * sizeof *idx) == 0);
    CHECK(dqt_index_decode_with(buf, len, dec2, k + 1, &k3, dqt_scalar(svb_decode)) == DQ_OK && k3 == k);
    CHECK(k == 0 || memcmp(dec2, idx, k * sizeof *idx) == 0);
    free(dec);
    free(dec2);
    *out = buf;
    return len;
}

/* The example of FORMAT_index.md: n = 20, indices 0, 3, 4, 19, in each coder; and k = 0. */
static void test_known_answers(void) {
    static const uint32_t idx[4] = {0, 3, 4, 19};
    static const uint8_t head[10] = {0, 0x13, 0, 0, 0, 4, 0, 0, 0, 0};
    static const uint8_t body_g[] = {0xB8, 0xF0}, body_v[] = {0x00, 0x00, 0x02, 0x00, 0x0E}, body_b[] = {0x19, 0x00, 0x08};
    static const uint8_t body_r[] = {0x02, 0x9A, 0x0C}; /* parameter 2: 100 110 100 000110 and a pad bit */
    static const uint8_t *const bodies[NCODERS] = {body_g, body_g, body_v, body_b, body_r};
    static const size_t blen[NCODERS] = {2, 2, 5, 3, 3};
    uint8_t buf[32], want[32];
    uint32_t out[4];
    size_t len = 0, k = 0;
    unsigned c;
    for (c = 0; c < NCODERS; c++) {
        memcpy(want, head, 10);
        want[0] = (uint8_t)(c ? c : 1); /* AUTO picks gamma here: 12 bytes against 13, 13 and 15 */
        memcpy(want + 10, bodies[c], blen[c]);
        CHECK(dq_index_encode(idx, 4, 20, (dq_index_coder)c, buf, sizeof buf, &len) == DQ_OK);
        CHECKF(len == 10 + blen[c] && memcmp(buf, want, len) == 0, "%s", cname[c]);
        CHECK(dq_index_decode(want, 10 + blen[c], out, 4, &k) == DQ_OK && k == 4 && memcmp(out, idx, sizeof idx) == 0);
    }
    for (c = 1; c < NCODERS; c++) { /* empty: header only, an all-zero bitmap, RICE's parameter 0 */
        memset(want, 0, sizeof want);
        want[0] = (uint8_t)c;
        want[1] = 0x13;
        CHECK(dq_index_encode(NULL, 0, 20, (dq_index_coder)c, buf, sizeof buf, &len) == DQ_OK);
        CHECK(len == (c == 3 ? 13u : c == 4 ? 11u : 10u) && memcmp(buf, want, len) == 0);
        k = 99;
        CHECK(dq_index_decode(buf, len, NULL, 0, &k) == DQ_OK && k == 0);
    }
    CHECK(dq_index_encode(NULL, 0, 20, DQ_INDEX_AUTO, buf, sizeof buf, &len) == DQ_OK && len == 10 &&
          buf[0] == DQ_INDEX_VARINT); /* a tie of gamma and varint goes to varint */
}

/* Several n and densities, every coder and AUTO; AUTO is the smallest explicit size. */
static void test_roundtrip_random(void) {
    static const uint64_t ns[] = {1, 2, 3, 7, 8, 9, 31, 100, 1000, 4099, 65539, 1u << 20};
    static const double dens[] = {0.0, 1e-4, 1e-3, 1e-2, 0.05, 0.1, 0.3, 0.5, 0.9, 0.99, 1.0};
    dq_t_rng r = {2024};
    uint32_t *idx = (uint32_t *)xmalloc(((size_t)1 << 20) * sizeof *idx);
    size_t a, b, picks[NCODERS] = {0, 0, 0, 0, 0};
    for (a = 0; a < sizeof ns / sizeof *ns; a++)
        for (b = 0; b < sizeof dens / sizeof *dens; b++) {
            uint64_t n = ns[a];
            size_t k = (size_t)(dens[b] * (double)n + 0.5), best = (size_t)-1, sizes[NCODERS];
            unsigned c;
            if (b == 1 && k == 0) k = 1; /* one index */
            k = gen_set(&r, n, k, idx);
            for (c = 0; c < NCODERS; c++) {
                uint8_t *s = NULL;
                sizes[c] = roundtrip(idx, k, n, (dq_index_coder)c, &s);
                if (c && sizes[c] < best) best = sizes[c];
                if (c == 0 && s) picks[s[0]]++;
                free(s);
            }
            CHECKF(sizes[0] == best, "n %llu k %lu: auto %lu, smallest %lu", (unsigned long long)n, (unsigned long)k,
                   (unsigned long)sizes[0], (unsigned long)best);
        }
    CHECK(picks[1] && picks[2] && picks[3] && picks[4]); /* each coder wins somewhere */
    if (dq_t_verbose())
        printf("auto picks: gamma %lu, varint %lu, bitmap %lu, rice %lu\n", (unsigned long)picks[1],
               (unsigned long)picks[2], (unsigned long)picks[3], (unsigned long)picks[4]);
    free(idx);
}

/* k = 0, one index at 0 or n - 1, all dense; n = 2^32 with large gaps (no 512 MiB bitmap) */
static void test_edges(void) {
    static const uint64_t ns[] = {1, 2, 7, 8, 9, 64, 65, 1000};
    uint32_t *idx = (uint32_t *)xmalloc(1001 * sizeof *idx);
    const uint64_t big = DQ_INDEX_MAX_N;
    size_t a, i, size = 0;
    unsigned c;
    uint8_t *s;
    for (a = 0; a < sizeof ns / sizeof *ns; a++) {
        uint64_t n = ns[a];
        for (c = 0; c < NCODERS; c++) {
            roundtrip(NULL, 0, n, (dq_index_coder)c, &s);
            free(s);
            idx[0] = 0;
            roundtrip(idx, 1, n, (dq_index_coder)c, &s);
            free(s);
            idx[0] = (uint32_t)(n - 1);
            roundtrip(idx, 1, n, (dq_index_coder)c, &s);
            free(s);
            for (i = 0; i < n; i++) idx[i] = (uint32_t)i;
            roundtrip(idx, (size_t)n, n, (dq_index_coder)c, &s);
            if (c == 0) CHECK(s && s[0] == DQ_INDEX_BITMAP); /* gamma ties, bitmap wins the tie */
            free(s);
        }
    }
    /* n = 2^32 (every coder but the 512 MiB bitmap) */
    for (c = 0; c < NCODERS; c++) {
        if (c == DQ_INDEX_BITMAP) continue;
        static const uint32_t sets[3][3] = {{0xFFFFFFFFu, 0, 0}, {0, 0xFFFFFFFFu, 0}, {0, 0x80000000u, 0xFFFFFFFFu}};
        static const size_t ks[3] = {1, 2, 3};
        for (a = 0; a < 3; a++) {
            roundtrip(sets[a], ks[a], big, (dq_index_coder)c, &s);
            free(s);
        }
        roundtrip(NULL, 0, big, (dq_index_coder)c, &s);
        free(s);
    }
    {
        dq_t_rng r = {77};
        size_t k = gen_set(&r, big, 1000, idx);
        for (c = 0; c < NCODERS; c++) {
            if (c == DQ_INDEX_BITMAP) continue;
            roundtrip(idx, k, big, (dq_index_coder)c, &s);
            free(s);
        }
    }
    idx[0] = 0xFFFFFFFFu; /* gap 2^32: a 65-bit gamma code, a 4-byte varint */
    CHECK(dq_index_size(idx, 1, big, DQ_INDEX_GAMMA, &size) == DQ_OK && size == 10 + 9);
    CHECK(dq_index_size(idx, 1, big, DQ_INDEX_VARINT, &size) == DQ_OK && size == 10 + 1 + 4);
    CHECK(dq_index_size(idx, 1, big, DQ_INDEX_BITMAP, &size) == DQ_OK && size == 10 + ((size_t)1 << 29));
    /* RICE: 2^32 - 1 at parameter 31 is 1 zero, the one and 31 bits: 33 bits, 5 bytes */
    CHECK(dq_index_size(idx, 1, big, DQ_INDEX_RICE, &size) == DQ_OK && size == 10 + 1 + 5);
    CHECK(dq_index_bound(1, big) == 10 + 1 + ((size_t)1 << 29)); /* RICE at parameter 0: 2^32 bits */
    free(idx);
}

/* The VARINT kernel against its scalar twin: all 256 control bytes, lengths, non-minimal
 * values, tails, and the sums and flags they return. */
static void test_kernel_vs_scalar(void) {
    enum { K = 1030 };
    static uint8_t ctrl[K / 4 + 1], data[4 * K];
    static uint32_t o1[K], o2[K];
    dq_t_rng r = {31337};
    unsigned round;
    printf("varint kernel: %s\n", dqt_k(svb_decode) == dqt_scalar(svb_decode) ? "scalar" : "ssse3 shuffle");
    for (round = 0; round < 400; round++) {
        size_t k = round < 4 ? (size_t)round : (size_t)(dq_t_next(&r) % K), i, pos = 0;
        unsigned mode = round % 4; /* 0 canonical, 1 random (some non-minimal), 2 large, 3 below 256 */
        dqt_svb_acc a1, a2;
        uint32_t prev0;
        memset(ctrl, 0, sizeof ctrl);
        for (i = 0; i < k; i++) {
            /* the first rounds give group g the control byte g % 256 */
            unsigned L = (round < 8 ? (unsigned)(i / 4 % 256) >> (2 * (i % 4)) : (unsigned)dq_t_next(&r)) & 3u, b;
            uint32_t v = (uint32_t)dq_t_next(&r);
            v &= L == 3 ? 0xFFFFFFFFu : (1u << (8 * (L + 1))) - 1u;
            if (mode == 3) v &= 0xFF;
            if (mode == 0 && L && v < (1u << (8 * L))) v |= 1u << (8 * L);
            if (mode == 2) v |= L == 3 ? 0xF0000000u : 0u;
            ctrl[i / 4] |= (uint8_t)(L << (2 * (i % 4)));
            for (b = 0; b <= L; b++) data[pos++] = (uint8_t)(v >> (8 * b));
        }
        prev0 = (uint32_t)dq_t_next(&r);
        a2.prev = prev0;
        a2.bad = 0;
        a2.sum = round;
        memset(o2, 0xAB, sizeof o2);
        {
            uint8_t *exact = (uint8_t *)xmalloc(pos); /* data in an exactly-sized buffer */
            size_t j;
            memcpy(exact, data, pos);
            dqt_scalar(svb_decode)(ctrl, exact, pos, k, o2, &a2);
            for (j = 0; DQT_SVB_K[j].name; j++) { /* every SIMD kernel of this build */
                a1.prev = prev0;
                a1.bad = 0;
                a1.sum = round;
                memset(o1, 0xAB, sizeof o1);
                DQT_SVB_K[j].fn(ctrl, exact, pos, k, o1, &a1);
                CHECKF(memcmp(o1, o2, sizeof o1) == 0, "%s: round %u k %lu", DQT_SVB_K[j].name, round, (unsigned long)k);
                CHECKF(a1.prev == a2.prev && a1.sum == a2.sum && a1.bad == a2.bad,
                       "%s: round %u: prev %u/%u sum %llu/%llu bad %u/%u", DQT_SVB_K[j].name, round, (unsigned)a1.prev,
                       (unsigned)a2.prev, (unsigned long long)a1.sum, (unsigned long long)a2.sum, (unsigned)a1.bad,
                       (unsigned)a2.bad);
            }
            free(exact);
        }
        if (mode == 0) CHECK(a2.bad == 0);
        if (mode == 3 && k > 40) CHECK(a2.bad != 0); /* small values in long fields */
    }
}

/* Every truncation of streams of each coder is DQ_ERR_TRUNCATED (read from a buffer of exactly
 * that size); one byte more is DQ_ERR_CORRUPT. */
static void test_truncation(void) {
    static const double dens[] = {0.002, 0.05, 0.5, 1.0};
    dq_t_rng r = {8};
    uint32_t idx[600], out[600];
    size_t d;
    unsigned c;
    for (d = 0; d < 4; d++)
        for (c = 1; c < NCODERS; c++) {
            uint64_t n = 600;
            size_t k = gen_set(&r, n, (size_t)(dens[d] * 600), idx), len, t, bad = 0, kk = 0;
            uint8_t *s = NULL, *longer;
            len = roundtrip(idx, k, n, (dq_index_coder)c, &s);
            for (t = 0; t < len; t++) {
                uint8_t *cut = (uint8_t *)xmalloc(t);
                dq_status st;
                memcpy(cut, s, t);
                st = dq_index_decode(t ? cut : NULL, t, out, 600, &kk);
                if (st != DQ_ERR_TRUNCATED) bad++;
                if (t < 10 && dq_index_header(t ? cut : NULL, t, NULL, NULL, NULL) != DQ_ERR_TRUNCATED) bad++;
                free(cut);
            }
            CHECKF(bad == 0, "%s k %lu: %lu truncations not reported", cname[c], (unsigned long)k, (unsigned long)bad);
            longer = (uint8_t *)xmalloc(len + 1);
            memcpy(longer, s, len);
            longer[len] = 0;
            CHECK(dq_index_decode(longer, len + 1, out, 600, &kk) == DQ_ERR_CORRUPT);
            free(longer);
            free(s);
        }
}

/* Corrupt single bytes: the decoders return some status; the two kernels agree; whatever
 * still decodes is a valid set that encodes back to exactly the same bytes. */
static void test_corruption(void) {
    static const double dens[] = {0.003, 0.02, 0.2, 0.7};
    dq_t_rng r = {4242};
    uint32_t *idx = (uint32_t *)xmalloc(3000 * sizeof *idx), *o1 = (uint32_t *)xmalloc(3000 * sizeof *o1),
             *o2 = (uint32_t *)xmalloc(3000 * sizeof *o2);
    size_t d, accepted = 0, tried = 0;
    unsigned c;
    for (d = 0; d < 4; d++)
        for (c = 1; c < NCODERS; c++) {
            uint64_t n = 1000 + d * 500;
            size_t k = gen_set(&r, n, (size_t)(dens[d] * (double)n), idx), len, pos, bad = 0;
            uint8_t *s = NULL, *m;
            len = roundtrip(idx, k, n, (dq_index_coder)c, &s);
            m = (uint8_t *)xmalloc(len);
            for (pos = 0; pos < len; pos++) {
                unsigned t;
                for (t = 0; t < (pos < 12 || len < 64 ? 8u : 2u); t++) {
                    uint8_t x = pos < 12 || len < 64 ? (uint8_t)(1u << t) : (uint8_t)(dq_t_next(&r) | 1u);
                    size_t k1 = 0, k2 = 0, cap = 3000;
                    dq_status s1, s2;
                    memcpy(m, s, len);
                    m[pos] ^= x;
                    s1 = dqt_index_decode_with(m, len, o1, cap, &k1, dqt_k(svb_decode));
                    s2 = dqt_index_decode_with(m, len, o2, cap, &k2, dqt_scalar(svb_decode));
                    tried++;
                    if (s1 != s2 || (s1 == DQ_OK && (k1 != k2 || memcmp(o1, o2, k1 * sizeof *o1) != 0))) bad++;
                    if (s1 == DQ_OK) {
                        uint64_t n2 = 0;
                        dq_index_coder c2 = DQ_INDEX_AUTO;
                        accepted++;
                        dq_index_header(m, len, &n2, NULL, &c2);
                        if (!valid_set(o1, k1, n2)) bad++;
                        if (!same_again(m, len, o1, k1, n2, c2)) bad++;
                    } else if (s1 != DQ_ERR_CORRUPT && s1 != DQ_ERR_TRUNCATED && s1 != DQ_ERR_DST_TOO_SMALL) {
                        bad++;
                    }
                }
            }
            CHECKF(bad == 0, "%s k %lu: %lu bad outcomes", cname[c], (unsigned long)k, (unsigned long)bad);
            free(m);
            free(s);
        }
    if (dq_t_verbose()) printf("corruptions: %lu tried, %lu still valid\n", (unsigned long)tried, (unsigned long)accepted);
    free(idx);
    free(o1);
    free(o2);
}

static void test_encode_errors(void) {
    uint32_t idx[5] = {1, 5, 9, 12, 40};
    uint8_t buf[128];
    size_t len = 777, size = 0, cap;
    unsigned c;
    CHECK(dq_index_encode(idx, 5, 41, DQ_INDEX_AUTO, buf, sizeof buf, &len) == DQ_OK && len < sizeof buf);
    len = 777;
    CHECK(dq_index_encode(idx, 5, 40, DQ_INDEX_AUTO, buf, sizeof buf, &len) == DQ_ERR_PARAM); /* 40 >= n */
    CHECK(dq_index_encode(idx, 5, 0, DQ_INDEX_AUTO, buf, sizeof buf, &len) == DQ_ERR_EMPTY);
    CHECK(dq_index_encode(idx, 5, DQ_INDEX_MAX_N + 1, DQ_INDEX_AUTO, buf, sizeof buf, &len) == DQ_ERR_TOO_LARGE);
    CHECK(dq_index_encode(idx, 5, 4, DQ_INDEX_AUTO, buf, sizeof buf, &len) == DQ_ERR_PARAM); /* k > n */
    CHECK(dq_index_encode(idx, 5, 41, (dq_index_coder)5, buf, sizeof buf, &len) == DQ_ERR_PARAM);
    CHECK(dq_index_encode(NULL, 5, 41, DQ_INDEX_AUTO, buf, sizeof buf, &len) == DQ_ERR_NULL);
    CHECK(dq_index_encode(idx, 5, 41, DQ_INDEX_AUTO, NULL, sizeof buf, &len) == DQ_ERR_NULL);
    CHECK(dq_index_encode(idx, 5, 41, DQ_INDEX_AUTO, buf, sizeof buf, NULL) == DQ_ERR_NULL);
    CHECK(dq_index_size(idx, 5, 41, DQ_INDEX_AUTO, NULL) == DQ_ERR_NULL);
    idx[2] = 5; /* duplicate */
    CHECK(dq_index_encode(idx, 5, 41, DQ_INDEX_GAMMA, buf, sizeof buf, &len) == DQ_ERR_PARAM);
    CHECK(dq_index_size(idx, 5, 41, DQ_INDEX_BITMAP, &size) == DQ_ERR_PARAM);
    idx[2] = 4; /* unsorted */
    CHECK(dq_index_encode(idx, 5, 41, DQ_INDEX_VARINT, buf, sizeof buf, &len) == DQ_ERR_PARAM);
    idx[2] = 9;
    CHECK(len == 777);
    for (c = 0; c < NCODERS; c++) { /* every capacity below the size: DST_TOO_SMALL, dst untouched */
        CHECK(dq_index_size(idx, 5, 41, (dq_index_coder)c, &size) == DQ_OK);
        for (cap = 0; cap < size; cap++) {
            size_t i, bad = 0;
            memset(buf, 0x5A, sizeof buf);
            CHECK(dq_index_encode(idx, 5, 41, (dq_index_coder)c, cap ? buf : NULL, cap, &len) == DQ_ERR_DST_TOO_SMALL);
            for (i = 0; i < sizeof buf && !bad; i++) bad = buf[i] != 0x5A;
            CHECK(!bad && len == 777);
        }
    }
}

static void test_decode_errors(void) {
    static const uint32_t idx[4] = {0, 3, 4, 19};
    uint8_t s[64], m[64];
    uint32_t out[8];
    size_t len = 0, k = 0;
    uint64_t n = 0;
    dq_index_coder c = DQ_INDEX_AUTO;
    /* header */
    CHECK(dq_index_encode(idx, 4, 20, DQ_INDEX_VARINT, s, sizeof s, &len) == DQ_OK && len == 15);
    CHECK(dq_index_header(s, len, &n, &k, &c) == DQ_OK && n == 20 && k == 4 && c == DQ_INDEX_VARINT);
    CHECK(dq_index_header(s, len, NULL, NULL, NULL) == DQ_OK);
    CHECK(dq_index_header(NULL, 10, &n, &k, &c) == DQ_ERR_NULL);
    memcpy(m, s, len);
    m[0] = 0;
    CHECK(dq_index_header(m, len, &n, &k, &c) == DQ_ERR_CORRUPT && dq_index_decode(m, len, out, 8, &k) == DQ_ERR_CORRUPT);
    m[0] = 5;
    CHECK(dq_index_header(m, len, &n, &k, &c) == DQ_ERR_CORRUPT);
    m[0] = 4; /* RICE needs 1 + ceil(4 / 8) body bytes: there are 5 */
    CHECK(dq_index_header(m, len, &n, &k, &c) == DQ_OK && c == DQ_INDEX_RICE);
    CHECK(dq_index_header(m, 11, &n, &k, &c) == DQ_ERR_TRUNCATED);
    memcpy(m, s, len);
    m[5] = 21; /* k > n */
    CHECK(dq_index_header(m, len, &n, &k, &c) == DQ_ERR_CORRUPT);
    m[5] = 5; /* k = 5 needs 2 + 5 body bytes: 5 are there */
    CHECK(dq_index_header(m, len, &n, &k, &c) == DQ_ERR_TRUNCATED);
    memcpy(m, s, len);
    m[9] = 1; /* k = 2^32 + 4 > n */
    CHECK(dq_index_header(m, len, &n, &k, &c) == DQ_ERR_CORRUPT);
    /* capacity and pointers: nothing written */
    memset(out, 0xEE, sizeof out);
    CHECK(dq_index_decode(s, len, out, 3, &k) == DQ_ERR_DST_TOO_SMALL && out[0] == 0xEEEEEEEEu);
    CHECK(dq_index_decode(s, len, NULL, 0, &k) == DQ_ERR_DST_TOO_SMALL);
    CHECK(dq_index_decode(s, len, out, 8, NULL) == DQ_ERR_NULL && dq_index_decode(s, len, NULL, 8, &k) == DQ_ERR_NULL);
    /* varint: non-minimal length (value 2 in two bytes), unused control bits, index >= n */
    {
        static const uint8_t nonmin[] = {2, 0x13, 0, 0, 0, 2, 0, 0, 0, 0, 0x04, 0x00, 0x02, 0x00};
        static const uint8_t unused[] = {2, 0x13, 0, 0, 0, 2, 0, 0, 0, 0, 0x10, 0x00, 0x02};
        static const uint8_t beyond[] = {2, 0x13, 0, 0, 0, 2, 0, 0, 0, 0, 0x00, 0x05, 0x0E}; /* 5, 20 */
        static const uint8_t ok[] = {2, 0x13, 0, 0, 0, 2, 0, 0, 0, 0, 0x00, 0x05, 0x0D};     /* 5, 19 */
        /* n = 2^32: gaps 2^32 - 1 + 1 twice would wrap to the same index */
        static const uint8_t wrap[] = {2, 0xFF, 0xFF, 0xFF, 0xFF, 2, 0, 0, 0, 0, 0x0F, 0xFF, 0xFF, 0xFF, 0xFF,
                                       0xFF, 0xFF, 0xFF, 0xFF};
        CHECK(dq_index_decode(nonmin, sizeof nonmin, out, 8, &k) == DQ_ERR_CORRUPT);
        CHECK(dqt_index_decode_with(nonmin, sizeof nonmin, out, 8, &k, dqt_scalar(svb_decode)) == DQ_ERR_CORRUPT);
        CHECK(dq_index_decode(unused, sizeof unused, out, 8, &k) == DQ_ERR_CORRUPT);
        CHECK(dq_index_decode(beyond, sizeof beyond, out, 8, &k) == DQ_ERR_CORRUPT);
        CHECK(dq_index_decode(ok, sizeof ok, out, 8, &k) == DQ_OK && k == 2 && out[0] == 5 && out[1] == 19);
        CHECK(dq_index_decode(wrap, sizeof wrap, out, 8, &k) == DQ_ERR_CORRUPT);
    }
    /* gamma: a gap past n, a padding bit, a 64-zero prefix */
    {
        static const uint8_t gap[] = {1, 0x13, 0, 0, 0, 1, 0, 0, 0, 0, 0x0A, 0x80}; /* gamma(21) = 0000 10101 */
        static const uint8_t pad[] = {1, 0x13, 0, 0, 0, 4, 0, 0, 0, 0, 0xB8, 0xF1};
        static const uint8_t zeros[] = {1, 0x13, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80};
        CHECK(dq_index_decode(gap, sizeof gap, out, 8, &k) == DQ_ERR_CORRUPT);
        CHECK(dq_index_decode(pad, sizeof pad, out, 8, &k) == DQ_ERR_CORRUPT);
        CHECK(dq_index_decode(zeros, sizeof zeros, out, 8, &k) == DQ_ERR_CORRUPT);
    }
    /* RICE: the parameter above m(n), zeros past n, a remainder past n, the end inside the zeros
     * or the remainder, a padding bit, a trailing byte, a code after the index n - 1 */
    {
        static const uint8_t ok[] = {4, 0x13, 0, 0, 0, 4, 0, 0, 0, 0, 0x02, 0x9A, 0x0C};
        uint8_t b[16];
        memcpy(b, ok, sizeof ok);
        CHECK(dq_index_decode(b, sizeof ok, out, 8, &k) == DQ_OK && k == 4 && out[3] == 19);
        b[10] = 5; /* m(20) = 5: valid, but these bits then decode to other gaps (11 bits too few) */
        CHECK(dq_index_decode(b, sizeof ok, out, 8, &k) == DQ_ERR_TRUNCATED);
        b[10] = 6;
        CHECK(dq_index_decode(b, sizeof ok, out, 8, &k) == DQ_ERR_CORRUPT);
        b[10] = 2;
        b[12] = 0x0D; /* padding */
        CHECK(dq_index_decode(b, sizeof ok, out, 8, &k) == DQ_ERR_CORRUPT);
        b[12] = 0x0C;
        b[13] = 0; /* a trailing byte */
        CHECK(dq_index_decode(b, sizeof ok + 1, out, 8, &k) == DQ_ERR_CORRUPT);
    }
    {
        /* n = 20, k = 1, r = 0: 20 zeros (a gap of at least 21) */
        static const uint8_t zeros[] = {4, 0x13, 0, 0, 0, 1, 0, 0, 0, 0, 0x00, 0x00, 0x00, 0x08};
        /* n = 20, k = 1, r = 0: 8 zeros, then the end (at most 19 may come) */
        static const uint8_t cut[] = {4, 0x13, 0, 0, 0, 1, 0, 0, 0, 0, 0x00, 0x00};
        /* n = 18, k = 1, r = 2: q = 4 (the most allowed), rem 2: v = 18 > 17 */
        static const uint8_t rem[] = {4, 0x11, 0, 0, 0, 1, 0, 0, 0, 0, 0x02, 0x0C};
        static const uint8_t rem_ok[] = {4, 0x11, 0, 0, 0, 1, 0, 0, 0, 0, 0x02, 0x0A}; /* v = 17 */
        /* n = 20, k = 2, r = 5: 1 00000 (index 0), then 1 and one of five remainder bits, the end */
        static const uint8_t rem_cut[] = {4, 0x13, 0, 0, 0, 2, 0, 0, 0, 0, 0x05, 0x82};
        /* n = 2, k = 2, r = 0: index 1 (code 01), then a second code with no room left */
        static const uint8_t full[] = {4, 0x01, 0, 0, 0, 2, 0, 0, 0, 0, 0x00, 0x40};
        /* n = 20, k = 1, r = 0: 80 zeros, past the refills of the fast path: CORRUPT at the 20th */
        static const uint8_t long_zeros[] = {4, 0x13, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        CHECK(dq_index_decode(zeros, sizeof zeros, out, 8, &k) == DQ_ERR_CORRUPT);
        CHECK(dq_index_decode(cut, sizeof cut, out, 8, &k) == DQ_ERR_TRUNCATED);
        CHECK(dq_index_decode(long_zeros, sizeof long_zeros, out, 8, &k) == DQ_ERR_CORRUPT); /* not TRUNCATED */
        CHECK(dq_index_decode(rem, sizeof rem, out, 8, &k) == DQ_ERR_CORRUPT);
        CHECK(dq_index_decode(rem_ok, sizeof rem_ok, out, 8, &k) == DQ_OK && k == 1 && out[0] == 17);
        CHECK(dq_index_decode(rem_cut, sizeof rem_cut, out, 8, &k) == DQ_ERR_TRUNCATED);
        CHECK(dq_index_decode(full, sizeof full, out, 8, &k) == DQ_ERR_CORRUPT);
    }
    /* bitmap: a padding bit, one index too many or too few */
    {
        uint8_t b[13] = {3, 0x13, 0, 0, 0, 4, 0, 0, 0, 0, 0x19, 0x00, 0x08};
        CHECK(dq_index_decode(b, 13, out, 8, &k) == DQ_OK && k == 4);
        b[12] = 0x18;
        CHECK(dq_index_decode(b, 13, out, 8, &k) == DQ_ERR_CORRUPT); /* bit 20 >= n */
        b[12] = 0x0C;
        CHECK(dq_index_decode(b, 13, out, 4, &k) == DQ_ERR_CORRUPT); /* 5 set bits, k = 4 */
        b[12] = 0x00;
        CHECK(dq_index_decode(b, 13, out, 8, &k) == DQ_ERR_CORRUPT); /* 3 set bits */
    }
}

/* The bound covers every coder on adversarial sets (equal gaps) and is monotonic. */
static void test_bound(void) {
    static const uint64_t ns[] = {1, 2, 5, 8, 100, 257, 4096, 65537, 1000003};
    uint32_t *idx = (uint32_t *)xmalloc(1000003 * sizeof *idx);
    size_t a, kk, bad = 0;
    for (a = 0; a < sizeof ns / sizeof *ns; a++) {
        uint64_t n = ns[a];
        for (kk = 0; kk <= n; kk = kk < 16 ? kk + 1 : kk * 3 + 1) {
            size_t i, size = 0, b = dq_index_bound(kk, n);
            unsigned c, shift;
            for (shift = 0; shift < 3; shift++) { /* equal gaps, aligned to the end or the start */
                for (i = 0; i < kk; i++)
                    idx[i] = shift == 0 ? (uint32_t)((n / kk) * (i + 1) - 1)
                                        : shift == 1 ? (uint32_t)((n * i) / kk) : (uint32_t)(n - kk + i);
                for (c = 1; c < NCODERS; c++)
                    if (dq_index_size(idx, kk, n, (dq_index_coder)c, &size) != DQ_OK || size > b) bad++;
                for (c = 0; c <= rice_max(n); c++) /* RICE at every parameter a decoder accepts */
                    if (10u + 1u + (rice_bits(idx, kk, c) + 7u) / 8u > b) bad++;
            }
            if (dq_index_bound(kk, n + 1) < b || (kk < n && dq_index_bound(kk + 1, n) < b)) bad++;
        }
        CHECK(dq_index_bound(n + 1, n) == 0);
    }
    CHECKF(bad == 0, "%lu sizes above the bound or non-monotonic steps", (unsigned long)bad);
    CHECK(dq_index_bound(0, 0) == 0 && dq_index_bound(1, DQ_INDEX_MAX_N + 1) == 0);
    CHECK(dq_index_bound(0, 1) == 11 && dq_index_bound(1, 1) == 12); /* varint: a control byte and a value */
    free(idx);
}

/* The RICE parameter is the one with the fewest bits of every parameter a decoder accepts (the
 * smallest on ties), on sets from uniform to clustered and with lone huge gaps; each parameter
 * round-trips through its own stream, and m(n) + 1 is refused. */
static void test_rice_param(void) {
    static const uint64_t ns[] = {1, 2, 3, 20, 255, 256, 257, 1000, 65536, 1000003, (uint64_t)1 << 31, DQ_INDEX_MAX_N};
    dq_t_rng r = {99};
    uint32_t *idx = (uint32_t *)xmalloc(4096 * sizeof *idx), *out = (uint32_t *)xmalloc(4096 * sizeof *out);
    const size_t cap = (size_t)1 << 20; /* parameters whose stream is longer are sized, not written */
    uint8_t *s = (uint8_t *)xmalloc(cap);
    size_t a, bad = 0, cases = 0;
    unsigned shape;
    for (a = 0; a < sizeof ns / sizeof *ns; a++)
        for (shape = 0; shape < 6; shape++) {
            uint64_t n = ns[a], best = 0, bits;
            size_t k = 0, i, len = 0, kk = 0;
            unsigned rr, pick = 0, m = rice_max(n);
            if (shape == 0) { /* uniform at a density drawn from 1e-4 .. 0.5 */
                double d = pow(10.0, -4.0 + 3.7 * dq_t_unif(&r));
                k = (size_t)(d * (double)n);
                if (k > 4096) k = 4096;
                k = gen_set(&r, n, k, idx);
            } else if (shape == 1) { /* equal gaps */
                k = n < 64 ? (size_t)n : 64;
                for (i = 0; i < k; i++) idx[i] = (uint32_t)((n / k) * i);
            } else if (shape == 2) { /* one index at the end: a lone gap of n */
                k = 1;
                idx[0] = (uint32_t)(n - 1u);
            } else if (shape == 3 && n >= 64) { /* a dense cluster and one far index */
                k = 33;
                for (i = 0; i < 32; i++) idx[i] = (uint32_t)i;
                idx[32] = (uint32_t)(n - 1u);
            } else if (shape == 4) { /* geometric gaps at mean about 2^(shape of the draw) */
                uint64_t next = 0, mean = 1u + (dq_t_next(&r) % 4096u);
                while (k < 4096) {
                    uint64_t g = 1u + (uint64_t)(-log(1.0 - dq_t_unif(&r)) * (double)mean);
                    if (next + g > n) break;
                    next += g;
                    idx[k++] = (uint32_t)(next - 1u);
                }
            } else if (shape == 5) { /* k = 0 */
                k = 0;
            } else {
                continue;
            }
            cases++;
            for (rr = 0; rr <= m; rr++) { /* brute force over every parameter */
                bits = rice_bits(idx, k, rr);
                if (rr == 0 || bits < best) {
                    best = bits;
                    pick = rr;
                }
                if (11u + (bits + 7u) / 8u > cap) {
                    if (11u + (bits + 7u) / 8u > dq_index_bound(k, n)) bad++;
                    continue;
                }
                if (dqt_index_encode_rice(idx, k, n, rr, s, cap, &len) != DQ_OK ||
                    len != 11u + (size_t)((bits + 7u) / 8u) || len > dq_index_bound(k, n) ||
                    dq_index_decode(s, len, out, 4096, &kk) != DQ_OK || kk != k ||
                    (k && memcmp(out, idx, k * sizeof *idx) != 0)) {
                    if (bad++ < 5)
                        printf("n %llu shape %u k %lu r %u: len %lu bits %llu bound %lu dec %d\n", (unsigned long long)n,
                               shape, (unsigned long)k, rr, (unsigned long)len, (unsigned long long)bits,
                               (unsigned long)dq_index_bound(k, n), (int)dq_index_decode(s, len, out, 4096, &kk));
                }
            }
            if (dqt_index_encode_rice(idx, k, n, m + 1u, s, cap, &len) != DQ_ERR_PARAM) bad++;
            if (dq_index_encode(idx, k, n, DQ_INDEX_RICE, s, cap, &len) != DQ_OK || s[10] != pick ||
                len != 11u + (size_t)((best + 7u) / 8u))
                bad++;
            else if (m < 31u) { /* the parameter m(n) + 1 in the same bytes: refused first */
                s[10] = (uint8_t)(m + 1u);
                if (dq_index_decode(s, len, out, 4096, &kk) != DQ_ERR_CORRUPT) bad++;
            }
        }
    CHECKF(bad == 0, "%lu of %lu cases: parameter, size, bound or round trip wrong", (unsigned long)bad,
           (unsigned long)cases);
    free(idx);
    free(out);
    free(s);
}

/* RICE at parameter 0: a 64-bit code (63 zeros, the one) after a run of 1-bit codes and one code of
 * each length 1..48, so it starts at every reader state. Near the end of the body the reader
 * fills its 64-bit buffer a byte at a time, so some of these codes take all 64 buffered bits;
 * every stream must decode to its set. */
static void test_rice_full_buffer_code(void) {
    uint32_t idx[160], out[160];
    uint8_t s[64];
    size_t p, c, q, i, k, kk = 0, len = 0, bad = 0, cases = 0;
    for (p = 0; p < 72; p++)          /* gaps of 1 first: 1 bit each */
        for (c = 1; c <= 48; c++)     /* then one gap of c: c bits */
            for (q = 0; q < 16; q++) { /* the gap of 64, then q gaps of 1 */
                uint64_t next = 0;
                k = 0;
                for (i = 0; i < p; i++) idx[k++] = (uint32_t)next++;
                next += c;
                idx[k++] = (uint32_t)(next - 1u);
                next += 64u;
                idx[k++] = (uint32_t)(next - 1u);
                for (i = 0; i < q; i++) idx[k++] = (uint32_t)next++;
                cases++;
                if (dqt_index_encode_rice(idx, k, next, 0, s, sizeof s, &len) != DQ_OK ||
                    dq_index_decode(s, len, out, 160, &kk) != DQ_OK || kk != k ||
                    memcmp(out, idx, k * sizeof *idx) != 0)
                    bad++;
            }
    CHECKF(bad == 0, "%lu of %lu sets decoded wrong", (unsigned long)bad, (unsigned long)cases);
}

int main(void) {
    RUN(test_known_answers);
    RUN(test_roundtrip_random);
    RUN(test_edges);
    RUN(test_rice_param);
    RUN(test_rice_full_buffer_code);
    RUN(test_kernel_vs_scalar);
    RUN(test_truncation);
    RUN(test_corruption);
    RUN(test_encode_errors);
    RUN(test_decode_errors);
    RUN(test_bound);
    return dq_t_finish();
}
