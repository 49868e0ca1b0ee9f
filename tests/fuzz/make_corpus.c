/* make_corpus.c - writes the seed corpus of the fuzz targets into corpus/decode,
 * corpus/roundtrip, corpus/simd, corpus/ckpt and corpus/coders (run from tests/fuzz:
 * cc -I../.. make_corpus.c -lm && ./a.out).
 * Seeds: valid messages over widths, buckets, roundings and lengths (including a tail and
 * several buckets), round-trip inputs (8 parameter bytes, then float32 values), and kernel
 * choices for fuzz_simd.c (its parameter bytes; the values come from its generator, or follow
 * as float32 in raw mode); coded messages (Elias, rANS) for the decoders, and parameter bytes
 * plus values for fuzz_coders.c; messages of the level schemes NUQSGD, NATURAL, TERNGRAD,
 * TRUNC and TRUNC_NU (every coder, valid and damaged, resealed) for the decoders, and their
 * parameter bytes for fuzz_roundtrip.c; segmented messages (fixed, Elias and rANS segments, with and
 * without the checksum, valid and damaged) for the decoders and fuzz_roundtrip.c's segmented mode.
 * New seeds are added after the others, under new names. Some older seeds written by this file
 * have changed since they were committed: to add seeds, run it in a scratch copy of
 * tests/fuzz/corpus and copy only the new files. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dqsgd.h"

static int put_name(const char *dir, const char *file, const void *p, size_t n) {
    char name[96];
    FILE *f;
    snprintf(name, sizeof name, "corpus/%s/%s", dir, file);
    f = fopen(name, "wb");
    if (!f || fwrite(p, 1, n, f) != n) return 1;
    return fclose(f) != 0;
}
static uint32_t crc32c(const uint8_t *p, size_t n) { /* doc/FORMAT.md 3.3, bitwise */
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
/* The header CRC, and the payload checksum when flag bit 1 is set, made right for m[0..len). */
static void reseal(uint8_t *m, size_t len) {
    st32(m + 44, crc32c(m, 44));
    if (m[10] & 2u) st32(m + len - 4, crc32c(m + 48, len - 52));
}
static int put(const char *dir, int k, const void *p, size_t n) {
    char file[32];
    snprintf(file, sizeof file, "seed-%02d", k);
    return put_name(dir, file, p, n);
}

int main(void) {
    static const unsigned bits[] = {1, 2, 3, 4, 8, 16};
    static const uint32_t buckets[] = {8, 512, DQ_BUCKET_WHOLE};
    static const size_t lens[] = {1, 10, 300};
    static float x[300];
    static uint8_t m[2048];
    size_t i, len;
    int k = 0, r = 0;
    for (i = 0; i < 300; i++) x[i] = (float)(sin(0.37 * (double)i) * (1.0 + (double)(i % 7)));
    for (i = 0; i < 6; i++) {
        dq_params p;
        memset(&p, 0, sizeof p);
        p.bits = bits[i];
        p.bucket = buckets[i % 3];
        p.rounding = i & 1 ? DQ_ROUND_NEAREST : DQ_ROUND_STOCHASTIC;
        p.seed = 7;
        if (dq_encode(&p, x, lens[i % 3], NULL, m, sizeof m, &len) != DQ_OK) return 1;
        r |= put("decode", k++, m, len);
    }
    for (i = 0; i < 6; i++) {
        uint8_t in[8 + 4 * 40];
        memset(in, 0, 8);
        in[0] = (uint8_t)(bits[i] - 1u);
        in[1] = (uint8_t)(i * 3u);
        in[2] = (uint8_t)i;
        in[3] = 9;
        memcpy(in + 8, x + 7 * i, 4 * 40);
        r |= put("roundtrip", k++, in, sizeof in);
    }
    /* fuzz_simd.c: byte 0 = kernel (0 stats, 1 compensate, 2 quant, 3 quant_pack, 4 pack_block,
     * 5 decode_block, 6 crc32c), byte 1 bit 0 = raw values; the rest as its fz_* functions read. */
    {
#define S(...) {sizeof((const uint8_t[]){__VA_ARGS__}), {__VA_ARGS__}}
        static const struct {
            size_t n;
            uint8_t b[16];
        } simd[] = {
            S(0, 0, 0x00, 0x2C, 0x01, 0x00),             /* stats: sum of squares, n 300 */
            S(0, 0, 0x0D, 0x4F, 0x35),                   /* sum of |x + e|, n 79, offsets 5/3 */
            S(0, 0, 0x06, 0xA1, 0x04, 0x7F),             /* max of x + e, n 1185 */
            S(0, 1, 0x0B, 0x21, 0x10),                   /* all three, raw bits, n 33 */
            S(1, 0, 0x00, 0x58, 0x02, 0x12),             /* compensate, n 600 */
            S(1, 0, 0x03, 0x11, 0x00),                   /* in place (x == e), n 17 */
            S(1, 1, 0x02, 0x40, 0xF3),                   /* raw bits, n 64 */
            S(2, 0, 0x40, 0x00, 0x4F, 0x00, 0x0A),       /* quant: 1 bit stochastic, L2 scale of the data */
            S(2, 0, 0x51, 0x02, 0x21, 0x31, 0x01),       /* 2 bits nearest, in place, inv = 2^k */
            S(2, 0, 0x43, 0x01, 0x3F, 0x07, 0x09),       /* 4 bits, separate residual, scale in (0, 100) */
            S(2, 0, 0x57, 0x00, 0x10, 0x11, 0x07),       /* 8 bits nearest, scale FLT_MAX */
            S(2, 0, 0x2F, 0x02, 0x00, 0x02, 0x0F, 0x0A), /* 16 bits, max norm of the data, n 512 */
            S(2, 0, 0x50, 0x02, 0x08, 0x40, 0x0B),       /* 1 bit nearest: mean scale (scaled sign) */
            S(2, 0, 0x45, 0x01, 0x30, 0x99, 0x05, 1, 2, 3, 4, 5, 6, 7, 8, 0x01), /* index wraps */
            S(2, 1, 0x4B, 0x00, 0x20, 0x00, 0x03, 0x00, 0x00, 0x80, 0x3F),      /* raw values, raw scale 1 */
            S(3, 0, 0x00, 0x00, 0x00, 0x0A),             /* quant_pack: 1 bit stochastic, data scale */
            S(3, 0, 0x12, 0x02, 0x11, 0x01),             /* 3 bits nearest, in place */
            S(3, 0, 0x03, 0x01, 0x26, 0x08),             /* 4 bits, separate residual, scale 2^126 */
            S(3, 0, 0x17, 0x02, 0x3C, 0x02),             /* 8 bits nearest, inv = 2^k */
            S(3, 0, 0x2F, 0x00, 0x0F, 0x0C),             /* 16 bits, max norm */
            S(3, 1, 0x0B, 0x02, 0x00, 0x07),             /* 12 bits, raw values, scale FLT_MAX */
            S(4, 0, 0x50, 0x00, 0x00),                   /* pack_block: 1 bit, random codes */
            S(4, 0, 0x32, 0x25, 0x07),                   /* 3 bits, one bit per code */
            S(4, 0, 0x66, 0x13, 0x09),                   /* 7 bits */
            S(4, 0, 0x0F, 0x00, 0x00),                   /* 16 bits, all ones */
            S(4, 0, 0x4C, 0x31, 0xC8),                   /* 13 bits, one code set */
            S(5, 0, 0x10, 0x00, 0x00),                   /* decode_block: 1 bit, add, w 0.3 */
            S(5, 0, 0x03, 0x05, 0x01),                   /* 4 bits, decode, w 1 */
            S(5, 0, 0x3A, 0x22, 0xF0),                   /* 11 bits, add, one step, w Inf */
            S(5, 0, 0xDF, 0xC1, 0xE0),                   /* 16 bits, add, any w, misaligned */
            S(5, 1, 0x17, 0x00, 0xF2),                   /* 8 bits, add, w NaN, raw accumulator */
            S(6, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x87, 0x13), /* crc32c: 4999 bytes */
            S(6, 0, 0x00, 0x00, 0x00, 0x00, 0x0D, 0x25),       /* 37 bytes at offset 3 */
        };
#undef S
        /* sum of squares of 16 raw values, the first a NaN with the sign bit set: the AVX2 kernel
         * once squared x, not |x|, and returned -NaN where the scalar one returns +NaN */
        uint8_t nan_sign[5 + 64] = {0, 1, 0x08, 16, 0};
        const float one = 1.0f;
        size_t s;
        for (s = 0; s < 16; s++) memcpy(nan_sign + 5 + 4 * s, &one, 4);
        nan_sign[5 + 2] = 0xC0;
        nan_sign[5 + 3] = 0xFF; /* 0xFFC00000 little-endian */
        for (s = 0; s < sizeof simd / sizeof simd[0]; s++) r |= put("simd", k++, simd[s].b, simd[s].n);
        r |= put_name("simd", "regress-stats-nan-sign", nan_sign, sizeof nan_sign);
        { /* elias_scan (byte 0 = 7 with bit 3 set): raw bytes at 5 bits; sparse codes with a
           * negative zero at 9 bits; sparse codes at 16 bits, misaligned */
            static const uint8_t e5[] = {15, 0, 0x03, 0x00}, e9[] = {15, 0, 0x37, 0x03, 0x05, 0x00},
                                 e16[] = {15, 0, 0x2E, 0x02, 0x00, 0x21};
            r |= put_name("simd", "elias-scan-raw-b5", e5, sizeof e5);
            r |= put_name("simd", "elias-scan-negzero-b9", e9, sizeof e9);
            r |= put_name("simd", "elias-scan-sparse-b16", e16, sizeof e16);
        }
    }
    { /* a message with the payload checksum (flags bit 1) */
        dq_params p;
        memset(&p, 0, sizeof p);
        p.bits = 3;
        p.bucket = 64;
        p.checksum = 1;
        r |= dq_encode(&p, x, 300, NULL, m, sizeof m, &len) != DQ_OK || put_name("decode", "checksum", m, len);
    }
    { /* checkpoints: a residual, scheduler states of two modes, one mid-run */
        static uint8_t ck[DQ_SCHED_SAVE_SIZE];
        dq_sched_params sp;
        dq_sched s;
        size_t len = 0, j;
        unsigned b = 0;
        r |= dq_residual_save(x, 10, ck, sizeof ck, &len) != DQ_OK || put("ckpt", 0, ck, len);
        memset(&sp, 0, sizeof sp);
        sp.steps = 100;
        sp.dim = 1000;
        sp.window = 4;
        sp.norm_prior = 1.0;
        sp.budget_bits = 100.0 * dq_message_bits(1000, 4, 0);
        r |= dq_sched_init(&s, &sp) != DQ_OK || dq_sched_save(&s, ck, sizeof ck, &len) != DQ_OK || put("ckpt", 1, ck, len);
        for (j = 0; j < 7; j++)
            r |= dq_sched_next(&s, &b) != DQ_OK || dq_sched_update(&s, 1.0 / (double)(j + 1), 0.0, 4000.0) != DQ_OK;
        r |= dq_sched_save(&s, ck, sizeof ck, &len) != DQ_OK || put("ckpt", 2, ck, len);
        memset(&sp, 0, sizeof sp);
        sp.mode = DQ_SCHED_INCREASING;
        sp.steps = 10;
        sp.dim = 50;
        r |= dq_sched_init(&s, &sp) != DQ_OK || dq_sched_update(&s, 2.0, 0.7, 100.0) != DQ_OK ||
             dq_sched_save(&s, ck, sizeof ck, &len) != DQ_OK || put("ckpt", 3, ck, len);
        /* seeds 1 to 3 are committed as library 0.8 wrote them (no warm start, 2200-byte body),
         * which the loader still reads; this one has the warm start of 0.9 */
        memset(&sp, 0, sizeof sp);
        sp.mode = DQ_SCHED_RD;
        sp.steps = 50;
        sp.dim = 700;
        sp.window = 8;
        sp.budget_bits = 50.0 * dq_message_bits(700, 6, 0);
        sp.warm_steps = 5;
        sp.warm_bits = 12;
        r |= dq_sched_init(&s, &sp) != DQ_OK || dq_sched_next(&s, &b) != DQ_OK || b != 12u ||
             dq_sched_update(&s, 3.0, 0.0, dq_message_bits(700, 12, 0)) != DQ_OK ||
             dq_sched_save(&s, ck, sizeof ck, &len) != DQ_OK || put("ckpt", 4, ck, len);
    }
    { /* coded messages for fuzz_decode (Elias = 1, rANS = 2): widths, counts, checksums, a
       * sparse input (every fifth element kept) and a dense one (the same formula over 1000) */
        static const struct {
            unsigned coder, bits, ck, nearest, sparse;
            uint32_t bucket;
            size_t n;
        } cs[] = {
            {1, 2, 0, 0, 0, 512, 1},   {1, 4, 1, 1, 0, 8, 7},     {1, 9, 0, 0, 1, 64, 100},
            {1, 16, 1, 0, 0, DQ_BUCKET_WHOLE, 300}, {1, 3, 0, 0, 1, 512, 1000}, {1, 8, 0, 1, 1, 40, 300},
            {2, 1, 0, 0, 0, 512, 1},   {2, 2, 0, 1, 0, 8, 7},     {2, 3, 1, 0, 0, 64, 100},
            {2, 4, 0, 0, 1, 512, 300}, {2, 5, 1, 0, 0, 512, 1000}, {2, 8, 0, 0, 0, DQ_BUCKET_WHOLE, 300},
            {2, 6, 0, 1, 1, 256, 1000}, {2, 7, 1, 1, 0, 40, 100},
        };
        static float y[1000];
        static uint8_t cm[16384];
        char file[48];
        for (i = 0; i < 1000; i++) y[i] = (float)(sin(0.37 * (double)i) * (1.0 + (double)(i % 7)));
        for (i = 0; i < sizeof cs / sizeof cs[0]; i++) {
            static float z[1000];
            dq_params p;
            size_t j;
            memset(&p, 0, sizeof p);
            p.bits = cs[i].bits;
            p.bucket = cs[i].bucket;
            p.rounding = cs[i].nearest ? DQ_ROUND_NEAREST : DQ_ROUND_STOCHASTIC;
            p.checksum = cs[i].ck;
            p.coder = cs[i].coder;
            p.seed = 11u + i;
            for (j = 0; j < cs[i].n; j++) z[j] = cs[i].sparse && j % 5u ? 0.0f : y[j];
            if (dq_encode_bound_coded(cs[i].n, p.bits) > sizeof cm) return 1;
            snprintf(file, sizeof file, "coded-%s-b%u-n%lu%s", cs[i].coder == 1 ? "elias" : "rans", cs[i].bits,
                     (unsigned long)cs[i].n, cs[i].ck ? "-ck" : "");
            r |= dq_encode(&p, z, cs[i].n, NULL, cm, sizeof cm, &len) != DQ_OK || put_name("decode", file, cm, len);
        }
    }
    { /* fuzz_coders.c: byte 0 bits - 1, 1 bucket (odd: whole), 2 rounding | norm << 1 | checksum << 2 |
       * coder << 3 (0 Elias, 1 rANS, 2-3 AUTO), 3-5 key, 6 int8 values | repeat << 1 (1, 2, 8, 32),
       * 7 error feedback; then float32 values, or one int8 per element */
        static const struct {
            const char *name;
            uint8_t b[8];
            int ints; /* int8 values: sparse pattern; else 40 floats of x */
        } fc[] = {
            {"seed-elias-b4", {3, 8, 0x01, 1, 2, 3, 0, 0}, 0},
            {"seed-elias-b16-ck-ef", {15, 1, 0x04, 4, 5, 6, 0, 1}, 0},
            {"seed-elias-b2-sparse", {1, 0, 0x01, 7, 8, 9, 0x05, 0}, 1},
            {"seed-rans-b3-ck", {2, 3, 0x0C, 1, 1, 1, 0x03, 0}, 1},
            {"seed-rans-b8-whole", {7, 1, 0x08, 2, 2, 2, 0x03, 0}, 1},
            {"seed-rans-b1-nearest", {0, 16, 0x09, 3, 3, 3, 0x07, 0}, 1},
            {"seed-auto-b2-ef", {1, 64, 0x10, 4, 4, 4, 0x07, 1}, 1},
            {"seed-auto-b8-max", {7, 4, 0x12, 5, 5, 5, 0, 0}, 0},
            {"seed-auto-b12", {11, 0, 0x18, 6, 6, 6, 0x01, 0}, 1},
            {"seed-invalid-elias-b1", {0, 8, 0x00, 0, 0, 0, 0, 0}, 0},
            {"seed-invalid-rans-b12", {11, 8, 0x08, 0, 0, 0, 0, 0}, 0},
        };
        uint8_t in[8 + 4 * 40];
        size_t s, j;
        for (s = 0; s < sizeof fc / sizeof fc[0]; s++) {
            memcpy(in, fc[s].b, 8);
            if (fc[s].ints)
                for (j = 0; j < 4 * 40; j++) in[8 + j] = j % 9u ? 0u : (uint8_t)(37u * j + 5u);
            else
                memcpy(in + 8, x + 3 * s, 4 * 40);
            r |= put_name("coders", fc[s].name, in, sizeof in);
        }
    }
    { /* level schemes (dq_scheme 2, 3, 4, 5, 9, 10) for fuzz_decode: each scheme at a few widths,
       * counts and buckets, with every coder and the checksum; then damaged copies, resealed
       * (header CRC and payload checksum made right) so that the damage reaches the checks
       * behind them: levels out of order, above 1, NaN, a last level below 1, a width or norm
       * the scheme refuses, an unassigned scheme, TRUNC_NU read as TRUNC, a negative scale,
       * padding bits, a message cut in its level table, and one bit flipped under the checksum
       * (not resealed). */
        static const struct {
            const char *name;
            unsigned scheme, bits, coder, ck, nearest, maxnorm;
            uint32_t bucket;
            size_t n;
            float alpha;
        } ls[] = {
            {"nuqsgd-b2-n1", 2, 2, 0, 0, 0, 0, 512, 1, 0},
            {"nuqsgd-b4-n300-max", 2, 4, 0, 0, 1, 1, 64, 300, 0},
            {"nuqsgd-b8-n1000-ck", 2, 8, 0, 1, 0, 0, DQ_BUCKET_WHOLE, 1000, 0},
            {"nuqsgd-elias-b5-n300", 2, 5, 1, 0, 0, 0, 40, 300, 0},
            {"nuqsgd-rans-b3-n1000-ck", 2, 3, 2, 1, 0, 1, 512, 1000, 0},
            {"natural-b8-n300", 3, 8, 0, 0, 0, 0, 512, 300, 0},
            {"natural-b3-n7-ck", 3, 3, 0, 1, 1, 0, 8, 7, 0},
            {"natural-elias-b6-n1000-ck", 3, 6, 1, 1, 0, 0, 256, 1000, 0},
            {"natural-rans-b4-n300", 3, 4, 2, 0, 1, 0, DQ_BUCKET_WHOLE, 300, 0},
            {"terngrad-n300", 4, 2, 0, 0, 0, 0, 40, 300, 0},
            {"terngrad-n1000-nearest-ck", 4, 2, 0, 1, 1, 0, 512, 1000, 0},
            {"terngrad-elias-n300", 4, 2, 1, 0, 0, 0, 8, 300, 0},
            {"terngrad-rans-n1000-ck", 4, 2, 2, 1, 0, 0, 512, 1000, 0},
            {"trunc-b2-n300", 9, 2, 0, 0, 0, 0, 8, 300, 1.5f},
            {"trunc-b16-n300-ck", 9, 16, 0, 1, 1, 0, 512, 300, 0.25f},
            {"trunc-b9-n1-whole", 9, 9, 0, 0, 0, 0, DQ_BUCKET_WHOLE, 1, 3.0f},
            {"trunc-elias-b12-n1000", 9, 12, 1, 0, 0, 0, 512, 1000, 6.0f},
            {"trunc-rans-b5-n300-ck", 9, 5, 2, 1, 1, 0, 64, 300, 2.0f},
            {"trunc-nu-b2-n300", 10, 2, 0, 0, 0, 0, 40, 300, 1.0f},
            {"trunc-nu-b4-n1000-ck", 10, 4, 0, 1, 1, 0, 512, 1000, 2.5f},
            {"trunc-nu-b8-n300-whole", 10, 8, 0, 0, 0, 0, DQ_BUCKET_WHOLE, 300, 4.0f},
            {"trunc-nu-b7-n1", 10, 7, 0, 0, 0, 0, 8, 1, 0.5f},
            {"trunc-nu-elias-b5-n300-ck", 10, 5, 1, 1, 0, 0, 64, 300, 3.0f},
            {"trunc-nu-rans-b3-n1000", 10, 3, 2, 0, 1, 0, 512, 1000, 2.0f},
            {"twomeans-n300", 5, 1, 0, 0, 1, 0, 64, 300, 0},
            {"twomeans-n1000-whole-ck", 5, 1, 0, 1, 1, 0, DQ_BUCKET_WHOLE, 1000, 0},
            {"twomeans-rans-n1000-ck", 5, 1, 2, 1, 1, 0, 512, 1000, 0},
        };
        static float y[1000], lv[127];
        static uint8_t lm[8192], d[8192];
        char file[64];
        size_t j, len2, nb;
        for (i = 0; i < 1000; i++) y[i] = (float)(sin(0.37 * (double)i) * (1.0 + (double)(i % 7)));
        for (i = 0; i < sizeof ls / sizeof ls[0]; i++) {
            dq_params p;
            unsigned sl = ls[i].bits >= 2u && ls[i].bits <= 8u ? (1u << (ls[i].bits - 1u)) - 1u : 0u;
            size_t off = ls[i].coder ? 56u : 48u;
            memset(&p, 0, sizeof p);
            p.scheme = (dq_scheme)ls[i].scheme;
            p.bits = ls[i].bits;
            p.bucket = ls[i].bucket;
            p.rounding = ls[i].nearest ? DQ_ROUND_NEAREST : DQ_ROUND_STOCHASTIC;
            p.norm = ls[i].maxnorm ? DQ_NORM_MAX : DQ_NORM_DEFAULT;
            p.checksum = ls[i].ck;
            p.coder = ls[i].coder;
            p.seed = 21u + i;
            p.alpha = ls[i].alpha;
            for (j = 0; j < sl; j++) lv[j] = (float)((j + 1u) * (j + 2u)) / (float)(sl * (sl + 1u)); /* last 1 */
            p.levels = ls[i].scheme == 10u ? lv : NULL;
            if (dq_encode_bound_coded(ls[i].n, p.bits) > sizeof lm) return 1;
            snprintf(file, sizeof file, "scheme-%s", ls[i].name);
            r |= dq_encode(&p, y, ls[i].n, NULL, lm, sizeof lm, &len) != DQ_OK || put_name("decode", file, lm, len);
            nb = ls[i].bucket == DQ_BUCKET_WHOLE ? 1u : (ls[i].n + ls[i].bucket - 1u) / ls[i].bucket;
            /* damaged copies of some: each a fresh copy, resealed */
#define DAMAGED(tag, edit)                                                                 \
    do {                                                                                   \
        memcpy(d, lm, len);                                                                \
        len2 = len;                                                                        \
        edit;                                                                              \
        reseal(d, len2);                                                                   \
        snprintf(file, sizeof file, "bad-%s-%s", ls[i].name, tag);                         \
        r |= put_name("decode", file, d, len2);                                            \
    } while (0)
            if (ls[i].scheme == 10u && sl >= 3u) {
                uint8_t *t = d + off + 4u * nb;
                DAMAGED("levels-swapped", { uint8_t u[4]; memcpy(u, t, 4); memcpy(t, t + 4, 4); memcpy(t + 4, u, 4); });
                DAMAGED("level-above-1", st32(t + 4u * (sl - 1u), 0x3F800001u));
                DAMAGED("last-level-below-1", st32(t + 4u * (sl - 1u), 0x3F7FFFFFu));
                DAMAGED("level-nan", st32(t + 4u, 0x7FC00000u));
                DAMAGED("level-zero", st32(t, 0u));
                DAMAGED("as-trunc", d[6] = 9u);
                DAMAGED("cut-in-levels", len2 = off + 4u * nb + 4u * (sl / 2u));
            }
            if (ls[i].scheme == 2u && ls[i].bits == 8u) DAMAGED("bits9", d[7] = 9u);
            if (ls[i].scheme == 4u && ls[i].coder == 0u) DAMAGED("bits3", d[7] = 3u);
            if (ls[i].scheme == 3u && ls[i].coder == 0u) DAMAGED("norm-l2", d[9] = 0u);
            if (ls[i].scheme == 2u && ls[i].coder == 0u) DAMAGED("norm-pow2", d[9] = 3u);
            if (ls[i].scheme == 5u) { /* two-means: the second scale array, flags, norm, width */
                DAMAGED("neg-mean-positive", st32(d + off + 4u * nb, 0x3F800000u));
                DAMAGED("neg-mean-plus-zero", st32(d + off + 4u * nb, 0u));
                DAMAGED("neg-mean-nan", st32(d + off + 4u * (2u * nb - 1u), 0xFFC00000u));
                DAMAGED("pos-mean-negative", st32(d + off, 0xBF800000u));
                DAMAGED("stochastic-flag", d[10] |= 1u);
                DAMAGED("as-qsgd", d[6] = 1u);
                DAMAGED("norm-mean", d[9] = 2u);
                DAMAGED("bits2", d[7] = 2u);
                DAMAGED("cut-in-neg-means", len2 = off + 4u * nb + 2u);
            }
            if (ls[i].scheme == 9u && ls[i].coder == 0u) {
                DAMAGED("scheme5", d[6] = 5u);
                DAMAGED("scale-negative", st32(d + off, 0xBFC00000u));
                DAMAGED("as-trunc-nu", d[6] = 10u);
            }
            if (ls[i].coder == 0u && ls[i].n % 256u && (ls[i].n * ls[i].bits) % 8u)
                DAMAGED("padding", d[len2 - 1u - 4u * ls[i].ck] |= 0x80u);
            if (ls[i].ck) { /* one payload bit flipped, checksum left stale: the resealed pass decodes it */
                memcpy(d, lm, len);
                d[len - 5u] ^= 0x10u;
                snprintf(file, sizeof file, "bad-%s-flip", ls[i].name);
                r |= put_name("decode", file, d, len);
            }
#undef DAMAGED
        }
    }
    { /* fuzz_roundtrip.c: the level schemes (byte 6 scheme | coder << 3 | checksum << 5 | error
       * feedback << 6 | norm asked << 7; byte 7 alpha or the damage), then 40 float32 values */
        static const struct {
            const char *name;
            uint8_t b[8];
        } rt[] = {
            {"scheme-nuqsgd-b4", {2, 8, 0, 1, 2, 3, 0x01, 0}},
            {"scheme-nuqsgd-b8-nearest-max-elias-ef", {6, 1, 3, 4, 5, 6, 0x49, 0}},
            {"scheme-natural-default-rans", {0x40, 16, 0, 7, 8, 9, 0x12, 0}},
            {"scheme-natural-b3-nearest-whole-ck", {1, 1, 1, 1, 1, 1, 0x22, 0}},
            {"scheme-terngrad-bucket8-ef", {0, 0, 0, 2, 2, 2, 0x43, 0}},
            {"scheme-terngrad-nearest-auto-ck", {0, 5, 1, 3, 3, 3, 0x3B, 0}},
            {"scheme-trunc-b2-alpha1", {0, 8, 0, 4, 4, 4, 0x04, 32}},
            {"scheme-trunc-b16-nearest-ef-alpha-min", {14, 64, 1, 5, 5, 5, 0x44, 0xFE}},
            {"scheme-trunc-b9-elias-ck-alpha1.5", {7, 1, 0, 6, 6, 6, 0x2C, 160}},
            {"scheme-trunc-nu-b5", {3, 40, 0, 7, 7, 7, 0x05, 33}},
            {"scheme-trunc-nu-b8-nearest-rans-ck-ef-alpha-max", {6, 24, 1, 8, 8, 8, 0x75, 0xFF}},
            {"scheme-trunc-nu-b2-auto", {0, 2, 0, 9, 9, 9, 0x1D, 31}},
            {"invalid-trunc-alpha-nan", {3, 8, 0, 0, 0, 0, 0x06, 2}},
            {"invalid-trunc-alpha-below-min", {3, 8, 0, 0, 0, 0, 0x06, 4}},
            {"invalid-trunc-nu-levels-equal", {2, 8, 0, 0, 0, 0, 0x07, 1}},
            {"invalid-trunc-nu-levels-null", {2, 8, 0, 0, 0, 0, 0x07, 3}},
            {"invalid-natural-norm-max", {4, 8, 2, 0, 0, 0, 0x82, 0}},
            {"invalid-nuqsgd-bits9", {136, 8, 0, 0, 0, 0, 0x01, 0}},
            {"invalid-trunc-nu-rans-b12", {139, 8, 0, 0, 0, 0, 0x15, 0}},
            {"scheme-twomeans-bucket8", {0, 8, 5, 1, 2, 3, 0x00, 0}},
            {"scheme-twomeans-default-whole-rans-ck-ef", {0x40, 1, 5, 4, 5, 6, 0x70, 0}},
            {"scheme-twomeans-auto-ef", {0, 16, 5, 7, 8, 9, 0x58, 0}},
            {"invalid-twomeans-stochastic", {0, 8, 4, 0, 0, 0, 0x00, 0}},
            {"invalid-twomeans-bits2", {129, 8, 5, 0, 0, 0, 0x00, 0}},
            {"invalid-twomeans-elias", {0, 8, 5, 0, 0, 0, 0x08, 0}},
            {"invalid-twomeans-norm-max", {0, 8, 7, 0, 0, 0, 0x80, 0}},
        };
        uint8_t in[8 + 4 * 40];
        size_t s;
        for (s = 0; s < sizeof rt / sizeof rt[0]; s++) {
            memcpy(in, rt[s].b, 8);
            memcpy(in + 8, x + 5 * s, 4 * 40);
            r |= put_name("roundtrip", rt[s].name, in, sizeof in);
        }
    }
    { /* segmented messages (doc/FORMAT.md 24) for fuzz_decode: fixed segments of widths 2..16 at
       * odd counts and starts, with and without the checksum, Elias and rANS segments (forced and
       * AUTO), the whole-vector bucket, eleven segments; then damaged copies with the header CRC,
       * the table CRC and the checksum made right (an entry's width 17, a reserved byte, counts
       * that do not add up, rANS at 12 bits, the header's bits not the widest, a coded body's
       * length field, padding); some also go to the sparse and sketch corpora, whose targets read
       * every header. And fuzz_roundtrip.c's segmented mode (byte 2 bit 3). */
        static const struct {
            const char *name;
            unsigned coder, ck, nearest, maxnorm, sparse, m;
            uint32_t bucket;
            size_t n[11];
            unsigned b[11];
        } sg[] = {
            {"seg-fixed-b16-b2-b5-b9", DQ_CODER_FIXED_ONLY, 0, 0, 0, 0, 4, 8, {300, 257, 200, 123}, {16, 2, 5, 9}},
            {"seg-fixed-ck-nearest-max", DQ_CODER_FIXED_ONLY, 1, 1, 1, 0, 3, 64, {100, 77, 31}, {3, 12, 8}},
            {"seg-elias-sparse", DQ_CODER_ELIAS, 0, 0, 0, 1, 3, 512, {700, 37, 900}, {6, 16, 2}},
            {"seg-elias-sparse-ck", DQ_CODER_ELIAS, 1, 1, 0, 1, 2, 64, {1000, 600}, {9, 3}},
            {"seg-rans-whole", DQ_CODER_RANS, 0, 0, 0, 0, 3, DQ_BUCKET_WHOLE, {1200, 7, 2500}, {3, 8, 2}},
            {"seg-rans-ck", DQ_CODER_RANS, 1, 0, 0, 1, 2, 512, {2000, 1500}, {4, 2}},
            {"seg-auto-ck", DQ_CODER_AUTO, 1, 1, 0, 1, 3, DQ_BUCKET_WHOLE, {1333, 1, 2047}, {8, 13, 4}},
            {"seg-eleven-whole", DQ_CODER_FIXED_ONLY, 0, 0, 1, 0, 11, DQ_BUCKET_WHOLE,
             {1, 7, 9, 255, 257, 13, 100, 513, 3, 64, 77}, {2, 3, 4, 5, 6, 7, 8, 10, 11, 14, 15}},
        };
        static float y[4000];
        static uint8_t sm[32768], d[32768];
        char file[64];
        size_t k, j, len2;
        for (i = 0; i < 4000; i++) y[i] = (float)(sin(0.37 * (double)i) * (1.0 + (double)(i % 7)));
        for (k = 0; k < sizeof sg / sizeof sg[0]; k++) {
            static float z[4000];
            dq_segment seg[11];
            dq_params p;
            size_t cap = 0, n = 0, off;
            unsigned mm = sg[k].m;
            memset(&p, 0, sizeof p);
            memset(seg, 0, sizeof seg);
            p.bucket = sg[k].bucket;
            p.rounding = sg[k].nearest ? DQ_ROUND_NEAREST : DQ_ROUND_STOCHASTIC;
            p.norm = sg[k].maxnorm ? DQ_NORM_MAX : DQ_NORM_DEFAULT;
            p.checksum = sg[k].ck;
            p.coder = sg[k].coder;
            p.seed = 31u + k;
            for (j = 0; j < mm; j++) {
                seg[j].count = sg[k].n[j];
                seg[j].bits = sg[k].b[j];
                n += seg[j].count;
            }
            for (j = 0; j < n; j++) z[j] = sg[k].sparse && j % 7u ? 0.0f : y[j];
            if (dq_segments_capacity(&p, seg, mm, &cap) != DQ_OK || cap > sizeof sm) return 1;
            if (dq_encode_segments(&p, z, seg, mm, NULL, sm, cap, &len) != DQ_OK) return 1;
            r |= put_name("decode", sg[k].name, sm, len);
            if (k < 3) {
                r |= put_name("sparse", sg[k].name, sm, len);
                r |= put_name("sketch", sg[k].name, sm, len);
            }
            /* damaged copies, resealed: entries, then the table CRC, then the header and checksum */
#define SEGBAD(tag, edit)                                                                  \
    do {                                                                                   \
        memcpy(d, sm, len);                                                                \
        len2 = len;                                                                        \
        edit;                                                                              \
        st32(d + 52, crc32c(d + 56, 24u * mm));                                            \
        reseal(d, len2);                                                                   \
        snprintf(file, sizeof file, "bad-%s-%s", sg[k].name, tag);                         \
        r |= put_name("decode", file, d, len2);                                            \
    } while (0)
            off = 56u + 24u * mm; /* the first body */
            if (k == 0) {
                SEGBAD("width17", d[56 + 24 + 16] = 17u);
                SEGBAD("reserved", d[56 + 24 * 2 + 20] = 1u);
                SEGBAD("counts-short", d[56] = (uint8_t)(d[56] - 1u));
                SEGBAD("bits-not-widest", d[7] = 15u);
                SEGBAD("width-swapped", { d[56 + 16] = 2u; d[56 + 24 + 16] = 16u; });
                SEGBAD("m-zero", d[48] = 0u);
                SEGBAD("scale-negative", st32(d + off, 0xBF800000u));
                SEGBAD("padding", d[off + 4u * ((300u + 7u) / 8u) + 300u * 16u / 8u + 4u * ((257u + 7u) / 8u) +
                                    (257u * 2u + 7u) / 8u - 1u] |= 0x80u);
            }
            if (k == 4) {
                SEGBAD("rans-b12", d[56 + 16] = 12u);
                SEGBAD("length-field", d[off] ^= 1u);
                SEGBAD("as-elias", d[56 + 17] = 1u);
            }
            if (sg[k].ck) { /* one body bit flipped, checksum stale: the resealed pass decodes it */
                memcpy(d, sm, len);
                d[len - 5u] ^= 0x10u;
                snprintf(file, sizeof file, "bad-%s-flip", sg[k].name);
                r |= put_name("decode", file, d, len);
            }
#undef SEGBAD
        }
    }
    { /* fuzz_roundtrip.c, segmented (byte 2 bit 3): byte 2 bits 4-7 segments - 1, bit 2 one invalid
       * segment; byte 6 bits 0-2 coder (fixed only, Elias, rANS, AUTO, default), bit 5 checksum,
       * bit 6 error feedback; bytes 0 and 7 the split's seed; then float32 values */
        static const struct {
            const char *name;
            uint8_t b[8];
        } rs[] = {
            {"seg-fixed-4", {1, 8, 0x38, 1, 2, 3, 0x00, 7}},
            {"seg-fixed-16-nearest-max-ck-ef", {2, 16, 0xFB, 4, 5, 6, 0x60, 9}},
            {"seg-elias-3-whole", {3, 1, 0x28, 7, 8, 9, 0x01, 11}},
            {"seg-rans-2-ck", {4, 64, 0x18, 1, 1, 1, 0x22, 13}},
            {"seg-auto-5-ef", {5, 0, 0x49, 2, 2, 2, 0x43, 15}},
            {"seg-default-1", {6, 24, 0x08, 3, 3, 3, 0x04, 17}},
            {"seg-invalid-segment", {7, 8, 0x3C, 0, 0, 0, 0x00, 19}},
        };
        static float v[200];
        uint8_t in[8 + 4 * 200];
        size_t s;
        for (i = 0; i < 200; i++) v[i] = (float)(sin(0.37 * (double)i) * (1.0 + (double)(i % 7))) * (i % 5u ? 1.0f : 0.0f);
        for (s = 0; s < sizeof rs / sizeof rs[0]; s++) {
            memcpy(in, rs[s].b, 8);
            memcpy(in + 8, v, 4 * 200);
            r |= put_name("roundtrip", rs[s].name, in, sizeof in);
        }
    }
    return r;
}
