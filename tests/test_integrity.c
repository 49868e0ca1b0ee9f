/* The payload checksum (flag bit 1): sizes, round trips, every single-bit flip of small
 * messages detected; the CRC32C kernel against its scalar twin. */
#include "../dqsgd.h"
#include "harness.h"
#include "internals.h"

static dq_params mkp(unsigned bits, uint32_t bucket, unsigned checksum) {
    dq_params p;
    memset(&p, 0, sizeof p);
    p.bits = bits;
    p.bucket = bucket;
    p.seed = 1;
    p.step = 2;
    p.stream = 3;
    p.checksum = checksum;
    return p;
}
static void fill(float *x, size_t n, unsigned long long seed) {
    dq_t_rng r;
    size_t i;
    r.s = seed;
    for (i = 0; i < n; i++) x[i] = (float)dq_t_gauss(&r);
}


static void test_crc_kernel(void) {
    static const uint8_t check[] = "123456789";
    uint8_t buf[600];
    size_t off, n, i;
    for (i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)(i * 131u + (i >> 3));
    CHECK(dqt_crc32c(check, 9) == 0xE3069283u);
    CHECK(dq_t_crc32c(check, 9) == 0xE3069283u);
    for (off = 0; off < 9; off++)
        for (n = 0; n + off <= 520; n++) {
            uint32_t s = dqt_scalar(crc32c)(0x12345678u, buf + off, n);
            for (i = 0; DQT_CRC_K[i].name; i++) { /* every SIMD kernel of this build */
                uint32_t k = DQT_CRC_K[i].fn(0x12345678u, buf + off, n);
                CHECKF(k == s, "%s: offset %lu length %lu: kernel %08x scalar %08x", DQT_CRC_K[i].name,
                       (unsigned long)off, (unsigned long)n, (unsigned)k, (unsigned)s);
            }
            if (n < 80) CHECK(dqt_crc32c(buf + off, n) == dq_t_crc32c(buf + off, n));
        }
    printf("crc32c kernel: %s\n", dqt_k(crc32c) == dqt_scalar(crc32c) ? "scalar" : "hardware");
}

static void test_sizes_and_roundtrip(void) {
    enum { N = 5000 };
    static float x[N], o1[N], o2[N];
    static uint8_t m0[DQ_ENCODE_BOUND(N, 16)], m1[DQ_ENCODE_BOUND(N, 16)];
    unsigned b;
    for (b = 1; b <= 16; b++) {
        size_t n, s0 = 0, s1 = 0, l0 = 0, l1 = 0;
        for (n = 1; n <= N; n = n * 3u + 1u) {
            dq_params p0 = mkp(b, 512, 0), p1 = mkp(b, 512, 1);
            dq_header h;
            fill(x, n, b * 1000u + n);
            CHECK(dq_encode_capacity(&p0, n, &s0) == DQ_OK && dq_encode_capacity(&p1, n, &s1) == DQ_OK);
            CHECK(s1 == s0 + 4u && s1 <= dq_encode_bound(n, b) && s1 <= DQ_ENCODE_BOUND(n, b));
            CHECK(dq_encode(&p0, x, n, NULL, m0, sizeof m0, &l0) == DQ_OK && l0 == s0);
            CHECK(dq_encode(&p1, x, n, NULL, m1, sizeof m1, &l1) == DQ_OK && l1 == s1);
            /* the same body; only the flag, the header CRC and the trailer differ */
            CHECK(memcmp(m0 + DQ_HEADER_SIZE, m1 + DQ_HEADER_SIZE, s0 - DQ_HEADER_SIZE) == 0);
            CHECK(dq_t_ld16(m1 + 10) == (dq_t_ld16(m0 + 10) | DQ_FLAG_CHECKSUM));
            CHECK(dq_t_ld32(m1 + s1 - 4u) == dq_t_crc32c(m1 + DQ_HEADER_SIZE, s0 - DQ_HEADER_SIZE));
            CHECK(dq_header_read(m1, l1, &h) == DQ_OK && h.msg_size == s1 && (h.flags & DQ_FLAG_CHECKSUM));
            CHECK(dq_verify(m1, l1) == DQ_OK && dq_verify(m0, l0) == DQ_OK);
            CHECK(dq_decode(m0, l0, o1, n) == DQ_OK && dq_decode(m1, l1, o2, n) == DQ_OK);
            CHECK(memcmp(o1, o2, n * sizeof(float)) == 0);
            /* the trailer is part of the message: one byte short is truncated */
            CHECK(dq_decode(m1, l1 - 1u, o2, n) == DQ_ERR_TRUNCATED);
            CHECK(dq_verify(m1, l1 - 1u) == DQ_ERR_TRUNCATED);
        }
    }
}

/* Flip every bit of every byte after the header (scales, payload, checksum) of small messages:
 * the decoders and dq_verify report DQ_ERR_CHECKSUM and leave the output untouched. Header
 * flips are covered by the header CRC (test_errors). */
static void test_every_bit_flip(void) {
    static const size_t sizes[] = {1, 8, 33, 256, 300};
    static const unsigned widths[] = {1, 2, 4, 7, 16};
    float x[300], out[300];
    uint8_t m[DQ_ENCODE_BOUND(300, 16)];
    size_t si, wi, byte, i, flips = 0, caught = 0;
    for (si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
            size_t n = sizes[si], len = 0;
            dq_params p = mkp(widths[wi], 64, 1);
            fill(x, n, 7u + si * 10u + wi);
            CHECK(dq_encode(&p, x, n, NULL, m, sizeof m, &len) == DQ_OK);
            for (byte = DQ_HEADER_SIZE; byte < len; byte++) {
                int bit;
                for (bit = 0; bit < 8; bit++) {
                    dq_status v, d;
                    m[byte] ^= (uint8_t)(1u << bit);
                    for (i = 0; i < n; i++) out[i] = 42.0f;
                    v = dq_verify(m, len);
                    d = dq_decode_add(m, len, 1.0f, out, n);
                    flips++;
                    caught += v == DQ_ERR_CHECKSUM && d == DQ_ERR_CHECKSUM;
                    CHECKF(v == DQ_ERR_CHECKSUM && d == DQ_ERR_CHECKSUM, "n %lu bits %u byte %lu bit %d: %d %d",
                           (unsigned long)n, widths[wi], (unsigned long)byte, bit, (int)v, (int)d);
                    for (i = 0; i < n; i++) CHECK(out[i] == 42.0f);
                    m[byte] ^= (uint8_t)(1u << bit);
                }
            }
            CHECK(dq_verify(m, len) == DQ_OK);
        }
    printf("payload bit flips detected: %lu of %lu\n", (unsigned long)caught, (unsigned long)flips);
}

/* Without the checksum a payload flip goes unnoticed (why the flag exists); the range decoders
 * skip the checksum by contract, dq_verify is how a range reader checks it. */
static void test_without_and_ranges(void) {
    float x[1024], out[1024];
    uint8_t m[DQ_ENCODE_BOUND(1024, 4)];
    size_t len = 0;
    dq_params p0 = mkp(4, 512, 0), p1 = mkp(4, 512, 1);
    fill(x, 1024, 3);
    CHECK(dq_encode(&p0, x, 1024, NULL, m, sizeof m, &len) == DQ_OK);
    m[len - 1u] ^= 1u;
    CHECK(dq_verify(m, len) == DQ_OK && dq_decode(m, len, out, 1024) == DQ_OK);
    CHECK(dq_encode(&p1, x, 1024, NULL, m, sizeof m, &len) == DQ_OK);
    m[len - 10u] ^= 1u;
    CHECK(dq_decode(m, len, out, 1024) == DQ_ERR_CHECKSUM);
    CHECK(dq_decode_range(m, len, 0, 512, out) == DQ_OK); /* documented: ranges do not verify */
    CHECK(dq_verify(m, len) == DQ_ERR_CHECKSUM);
    /* headerless blocks have no framing to carry the checksum */
    {
        size_t sz = 0;
        CHECK(dq_block_size(&p1, 1024, &sz) == DQ_ERR_PARAM);
        CHECK(dq_encode_block(&p1, x, 1024, NULL, m, sizeof m, &len) == DQ_ERR_PARAM);
        CHECK(dq_decode_block(&p1, m, sizeof m, 1024, out) == DQ_ERR_PARAM);
        p1.checksum = 2;
        CHECK(dq_encode_capacity(&p1, 1024, &sz) == DQ_ERR_PARAM);
    }
}

int main(void) {
    RUN(test_crc_kernel);
    RUN(test_sizes_and_roundtrip);
    RUN(test_every_bit_flip);
    RUN(test_without_and_ranges);
    return dq_t_finish();
}
