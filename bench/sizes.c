/* bench/sizes.c - message sizes of the coders against the entropy of the codes.
 *
 *   sizes [--n N] [--d D] [--trials T]      (`make sizes`, ARGS="--n N" to pass options)
 *
 * Table 1: QSGD at bits 1..8, bucket 512, L2 norm, stochastic rounding, fixed seed, on n
 * elements (default 2^20) of two kinds of vector: Gaussian N(0, 1) and Student-t with nu = 3
 * (t = z / sqrt(chi2_3 / 3), chi2_3 a sum of three squared normals), both from a seeded
 * splitmix64 stream (bench_util.h). Every column is in bits per element:
 *   fixed, elias, rans, auto   whole message (header, scales, payload) bytes * 8 / n, sent
 *                              with that dq_params.coder (auto: the smallest);
 *   entropy                    H = -sum_c (k_c/n) log2(k_c/n) over the code values c, k_c the
 *                              count of c among the n codes (what an ideal order-0 coder of the
 *                              codes alone would spend);
 *   scales                     32 / 512, what the per-bucket scales cost on top of the codes.
 * The codes are unpacked from the fixed message's payload (doc/FORMAT.md section 8), and each
 * one is checked against dq_decode() of that message, bit for bit (section 5.3).
 *
 * Table 2: QSGD with the whole-vector bucket at widths s = 2^(b-1) - 1, b = 2..10, on random
 * unit vectors of dimension d (default 2^16; a Gaussian vector divided by its norm), the mean
 * over T trials (default 8) of the Elias payload bits against the bound of QSGD Theorem 3.2
 * with the o(1) dropped, doc/MATHS.md 2.5:
 *   (3 + 1.5 log2(2 (s^2 + d) / (s (s + sqrt d)))) s (s + sqrt d) + 32,
 * where the 32 bits are the norm: they are compared with payload + 32 (the scale). nnz is the
 * mean count of non-zero codes, whose expectation Lemma 3.1 bounds by s (s + sqrt d).
 *
 * Table 3: one coder per message, or one per part. Vectors of n elements whose halves differ:
 * N(0,1) then Student-t(3), and N(0,1) then a sparse half (every 64th element of the first
 * half, zeros between), QSGD as table 1 with the default coder, in bits per element: one
 * message (dq_encode), the halves as the two segments of one segmented message
 * (dq_encode_segments: each segment picks its own coder and table), and the coders each half
 * went out with. Segments cost a 24-byte table entry each and each coded one its frequency
 * table; they decode to the one message's values (same width, bucket boundaries).
 *
 * Every coded message is checked: dq_coded_size() of the fixed message must give its size,
 * and dq_recode() back to the fixed coder must give the fixed message byte for byte. A coder
 * that fails prints n/a, with the reason on stderr; Elias may not be available in a build of
 * dqsgd.h (exit status 0), a failure of rANS or auto is an error (exit status 1). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dqsgd.h"
#include "bench_util.h"

#define SIZES_DEFAULT_N ((size_t)1 << 20)
#define SIZES_DEFAULT_D ((size_t)1 << 16)
#define SIZES_DEFAULT_TRIALS 8u
#define SIZES_BUCKET 512u
#define SIZES_MAX_BITS 10u /* widest message: table 2's b = 10 */
#define SIZES_SEED 42u

static const char *const CODER_NAME[4] = {"fixed", "elias", "rans (coder 2)", "rans"};

typedef struct sizes_ctx {
    uint8_t *fixed, *coded, *tmp; /* the fixed message, a coded one, the coded one re-coded */
    size_t cap, fixed_len;
    uint32_t *codes; /* the codes of the fixed message */
    float *dec;      /* dq_decode() of the fixed message */
    int failed;      /* a coder other than Elias failed */
} sizes_ctx;

static void die(const char *what, const char *detail) {
    fprintf(stderr, "sizes: %s: %s\n", what, detail);
    exit(1);
}

static void *xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1u);
    if (!p) die("malloc", "out of memory");
    return p;
}

static uint32_t rd32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Student-t, nu = 3: z / sqrt(chi2_3 / 3), from four normal pairs per two elements. */
static void fill_student3(float *x, size_t n, uint64_t seed) {
    uint64_t s = seed;
    size_t i;
    for (i = 0; i < n; i += 2) {
        double z[2], g[6], chi[2];
        unsigned k;
        bench_normal_pair(&s, &z[0], &z[1]);
        for (k = 0; k < 3u; k++) bench_normal_pair(&s, &g[2u * k], &g[2u * k + 1u]);
        chi[0] = g[0] * g[0] + g[1] * g[1] + g[2] * g[2];
        chi[1] = g[3] * g[3] + g[4] * g[4] + g[5] * g[5];
        x[i] = (float)(z[0] / sqrt(chi[0] / 3.0));
        if (i + 1 < n) x[i + 1] = (float)(z[1] / sqrt(chi[1] / 3.0));
    }
}

/* A Gaussian vector divided by its L2 norm: uniform on the unit sphere. */
static void fill_unit(float *x, size_t n, uint64_t seed) {
    double ss = 0.0, inv;
    size_t i;
    bench_fill_gaussian(x, n, seed);
    for (i = 0; i < n; i++) ss += (double)x[i] * (double)x[i];
    inv = 1.0 / sqrt(ss);
    for (i = 0; i < n; i++) x[i] = (float)((double)x[i] * inv);
}

static void qsgd_params(dq_params *p, unsigned bits, uint32_t bucket, uint64_t seed, unsigned coder) {
    memset(p, 0, sizeof *p);
    p->bits = bits;
    p->bucket = bucket;
    p->scheme = DQ_SCHEME_QSGD;
    p->rounding = DQ_ROUND_STOCHASTIC;
    p->norm = DQ_NORM_L2;
    p->seed = seed;
    p->step = 1u;
    p->coder = coder;
}

/* The codes of the fixed message c->fixed (doc/FORMAT.md section 8) into c->codes, each
 * checked against dq_decode() (section 5.3): the decoded value must be level * (scale / s)
 * with the code's sign, bit for bit. */
static void unpack_codes(sizes_ctx *c, size_t n) {
    dq_header h;
    const uint8_t *scales, *pay;
    size_t nb, i, full, k;
    unsigned b, m;
    uint32_t mask, s;
    if (dq_header_read(c->fixed, c->fixed_len, &h) != DQ_OK || h.coder != DQ_CODER_FIXED || h.count != n)
        die("unpack", "not a fixed message of n elements");
    b = h.bits;
    mask = (1u << b) - 1u;
    s = b >= 2u ? (1u << (b - 1u)) - 1u : 1u;
    nb = h.bucket == 0u ? 1u : (n + h.bucket - 1u) / h.bucket;
    scales = c->fixed + DQ_HEADER_SIZE;
    pay = scales + 4u * nb;
    full = n / 256u;
    for (k = 0; k < full; k++) { /* 8.1: lane L = m mod 8, row r = m div 8, b words per lane */
        const uint8_t *blk = pay + 32u * b * k;
        for (m = 0; m < 256u; m++) {
            unsigned lane = m % 8u, p = (m / 8u) * b, j = p / 32u, off = p % 32u;
            uint64_t w = rd32(blk + 4u * (8u * j + lane));
            if (off + b > 32u) w |= (uint64_t)rd32(blk + 4u * (8u * (j + 1u) + lane)) << 32;
            c->codes[256u * k + m] = (uint32_t)(w >> off) & mask;
        }
    }
    for (i = 256u * full; i < n; i++) { /* 8.2: the tail, an LSB-first bit stream */
        size_t bit = (i - 256u * full) * b;
        const uint8_t *t = pay + 32u * b * full + bit / 8u;
        uint64_t w = 0;
        unsigned q, have = (unsigned)((c->fixed + c->fixed_len) - t);
        for (q = 0; q < 4u && q < have; q++) w |= (uint64_t)t[q] << (8u * q);
        c->codes[i] = (uint32_t)(w >> (bit % 8u)) & mask;
    }
    if (dq_decode(c->fixed, c->fixed_len, c->dec, n) != DQ_OK) die("dq_decode", "the fixed message");
    for (i = 0; i < n; i++) {
        uint32_t code = c->codes[i], sign = code >> (b >= 2u ? b - 1u : 0u), bits_got, bits_want;
        float scale, step, v;
        uint32_t sb = rd32(scales + 4u * (h.bucket == 0u ? 0u : i / h.bucket));
        memcpy(&scale, &sb, 4u);
        step = b >= 2u ? scale / (float)s : scale;
        v = (float)(b >= 2u ? code & s : 1u) * step;
        if (sign) v = -v;
        memcpy(&bits_got, &c->dec[i], 4u);
        memcpy(&bits_want, &v, 4u);
        if (bits_got != bits_want) die("unpack", "a code disagrees with dq_decode()");
    }
}

/* Empirical entropy of the codes, bits per element. */
static double code_entropy(const uint32_t *codes, size_t n, unsigned b) {
    static size_t cnt[1u << SIZES_MAX_BITS];
    double h = 0.0;
    size_t i;
    unsigned v;
    memset(cnt, 0, sizeof cnt);
    for (i = 0; i < n; i++) cnt[codes[i]]++;
    for (v = 0; v < (1u << b); v++)
        if (cnt[v]) {
            double q = (double)cnt[v] / (double)n;
            h -= q * log2(q);
        }
    return h;
}

/* Encode x with the fixed coder into c->fixed. */
static void encode_fixed(sizes_ctx *c, const dq_params *p, const float *x, size_t n) {
    dq_params q = *p;
    dq_status st;
    q.coder = DQ_CODER_FIXED_ONLY;
    st = dq_encode(&q, x, n, NULL, c->fixed, c->cap, &c->fixed_len);
    if (st != DQ_OK) die("dq_encode (fixed)", dq_strerror(st));
}

/* NULL if the coded message c->coded[0..len) checks out against c->fixed, else what is wrong. */
static const char *check_coded(sizes_ctx *c, unsigned coder, size_t len) {
    dq_header h;
    size_t want, tmp_len;
    if (dq_header_read(c->coded, len, &h) != DQ_OK || h.msg_size != len) return "the message does not parse";
    if (coder == DQ_CODER_AUTO ? h.coder > DQ_CODER_RANS : (h.coder != coder && h.coder != DQ_CODER_FIXED))
        return "the header names another coder"; /* a forced coder larger than fixed sends fixed */
    if (dq_coded_size(c->fixed, c->fixed_len, coder, &want) != DQ_OK) return "dq_coded_size failed";
    if (want != len) return "the size differs from dq_coded_size()";
    if (dq_recode(c->coded, len, DQ_CODER_FIXED, c->tmp, c->cap, &tmp_len) != DQ_OK) return "dq_recode to fixed failed";
    if (tmp_len != c->fixed_len || memcmp(c->tmp, c->fixed, tmp_len) != 0)
        return "it does not re-code to the fixed message";
    return NULL;
}

/* x encoded with `coder` into c->coded (after encode_fixed with the same params): 1 and *h
 * on success (2 when a forced coder was larger, so the fixed layout went out); 0 (n/a) after a
 * note on stderr. */
static int encode_coded(sizes_ctx *c, const dq_params *p, const float *x, size_t n, unsigned coder, dq_header *h) {
    dq_params q = *p;
    size_t len = 0;
    const char *err;
    dq_status st;
    q.coder = coder;
    st = dq_encode(&q, x, n, NULL, c->coded, c->cap, &len);
    err = st != DQ_OK ? dq_strerror(st) : check_coded(c, coder, len);
    if (err == NULL && dq_header_read(c->coded, len, h) == DQ_OK)
        return coder != DQ_CODER_AUTO && h->coder == DQ_CODER_FIXED ? 2 : 1;
    fprintf(stderr, "sizes: note: %s, bits %u, n %zu: %s: n/a\n", coder == DQ_CODER_AUTO ? "auto" : CODER_NAME[coder],
            p->bits, n, err ? err : "dq_header_read failed");
    if (coder != DQ_CODER_ELIAS) c->failed = 1;
    return 0;
}


static void table_sizes(sizes_ctx *c, size_t n) {
    static const char *const KIND[2] = {"gaussian", "student-t3"};
    float *x = (float *)xmalloc(n * sizeof(float));
    unsigned b, kind;
    printf("QSGD, bucket %u, L2 norm, stochastic rounding, seed %u, n = %zu: bits per element\n\n", SIZES_BUCKET,
           SIZES_SEED, n);
    printf("| bits | kind | fixed | elias | rans | auto | entropy | scales |\n");
    printf("|---:|---|---:|---:|---:|---:|---:|---:|\n");
    for (b = 1; b <= 8u; b++)
        for (kind = 0; kind < 2u; kind++) {
            dq_params p;
            dq_header h;
            unsigned coder;
            if (kind == 0)
                bench_fill_gaussian(x, n, 0x5EED0001u);
            else
                fill_student3(x, n, 0x5EED0002u);
            qsgd_params(&p, b, SIZES_BUCKET, SIZES_SEED, DQ_CODER_FIXED_ONLY);
            encode_fixed(c, &p, x, n);
            unpack_codes(c, n);
            printf("| %u | %s | %.4f |", b, KIND[kind], (double)c->fixed_len * 8.0 / (double)n);
            for (coder = 0; coder < 3u; coder++) { /* Elias, rANS, AUTO */
                static const unsigned coders[3] = {DQ_CODER_ELIAS, DQ_CODER_RANS, DQ_CODER_AUTO};
                unsigned cd = coders[coder];
                if (cd == DQ_CODER_ELIAS && b < 2u) { /* Elias needs b >= 2 */
                    printf(" - |");
                    continue;
                }
                switch (encode_coded(c, &p, x, n, cd, &h)) {
                    case 1: printf(" %.4f |", (double)h.msg_size * 8.0 / (double)n); break;
                    case 2: printf(" %.4f (fixed) |", (double)h.msg_size * 8.0 / (double)n); break;
                    default: printf(" n/a |");
                }
            }
            printf(" %.4f | %.4f |\n", code_entropy(c->codes, n, b), 32.0 / (double)SIZES_BUCKET);
            fflush(stdout);
        }
    printf("\n-: Elias needs b >= 2. (fixed): the forced coder's form was larger, so the fixed layout was sent.\n"
           "Messages include the 48-byte header and, when coded, the 8-byte payload length.\n\n");
    free(x);
}

static void table_elias(sizes_ctx *c, size_t d, unsigned trials) {
    float *x = (float *)xmalloc(d * sizeof(float));
    double sd = sqrt((double)d);
    unsigned b, t;
    printf("QSGD, whole-vector bucket, L2 norm, stochastic rounding, random unit vectors, d = %zu, mean of %u\n\n", d,
           trials);
    printf("| bits | s | nnz | s(s+sqrt d) | elias payload bits | payload + 32 | Thm 3.2 bound | ratio |\n");
    printf("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (b = 2; b <= SIZES_MAX_BITS; b++) {
        double s = (double)((1u << (b - 1u)) - 1u), nnz = 0.0, bits = 0.0, ksparse = s * (s + sd);
        double bound = (3.0 + 1.5 * log2(2.0 * (s * s + (double)d) / ksparse)) * ksparse + 32.0;
        int ok = 1;
        for (t = 0; t < trials; t++) {
            dq_params p;
            dq_header h;
            size_t i;
            fill_unit(x, d, 0xD1A5u + t);
            qsgd_params(&p, b, DQ_BUCKET_WHOLE, SIZES_SEED + t, DQ_CODER_FIXED_ONLY);
            encode_fixed(c, &p, x, d);
            unpack_codes(c, d);
            for (i = 0; i < d; i++) nnz += (c->codes[i] & ((1u << (b - 1u)) - 1u)) != 0u;
            if (ok && encode_coded(c, &p, x, d, DQ_CODER_ELIAS, &h))
                bits += (double)h.payload_size * 8.0;
            else
                ok = 0;
        }
        nnz /= trials;
        bits /= trials;
        printf("| %u | %.0f | %.1f | %.0f |", b, s, nnz, ksparse);
        if (ok)
            printf(" %.1f | %.1f | %.1f | %.3f |\n", bits, bits + 32.0, bound, (bits + 32.0) / bound);
        else
            printf(" n/a | n/a | %.1f | n/a |\n", bound);
        fflush(stdout);
    }
    printf("\nThe payload excludes the 48-byte header, the 8-byte payload length and the 32-bit scale; ratio =\n"
           "(payload + 32) / bound. The bound is for the expectation and drops the theorem's o(1) term.\n");
    free(x);
}

static void table_halves(sizes_ctx *c, size_t n) {
    static const unsigned widths[3] = {2, 4, 8};
    static const char *const names[2] = {"N(0,1), then t(3)", "N(0,1), then sparse 1/64"};
    size_t h = n / 2u / SIZES_BUCKET * SIZES_BUCKET, i, len, slen, m = 0;
    float *x;
    unsigned kind, wi;
    if (h == 0) return;
    x = (float *)xmalloc(2u * h * sizeof(float));
    printf("\nTable 3: halves of different kinds, the default coder, n = %zu: bits per element\n\n", 2u * h);
    printf("| bits | vector | one message | two segments | saved | coders of the halves |\n");
    printf("|---:|---|---:|---:|---:|---|\n");
    for (kind = 0; kind < 2u; kind++) {
        bench_fill_gaussian(x, h, SIZES_SEED);
        if (kind == 0)
            fill_student3(x + h, h, SIZES_SEED + 1u);
        else
            for (i = 0; i < h; i++) x[h + i] = i % 64u ? 0.0f : x[i];
        for (wi = 0; wi < 3u; wi++) {
            dq_params p;
            dq_segment seg[2];
            dq_status st;
            qsgd_params(&p, widths[wi], SIZES_BUCKET, SIZES_SEED, DQ_CODER_DEFAULT);
            if ((st = dq_encode(&p, x, 2u * h, NULL, c->fixed, c->cap, &len)) != DQ_OK) die("dq_encode", dq_strerror(st));
            memset(seg, 0, sizeof seg);
            seg[0].count = seg[1].count = h;
            seg[0].bits = seg[1].bits = widths[wi];
            if ((st = dq_encode_segments(&p, x, seg, 2, NULL, c->coded, c->cap, &slen)) != DQ_OK ||
                (st = dq_segments_read(c->coded, slen, seg, 2, &m)) != DQ_OK)
                die("dq_encode_segments", dq_strerror(st));
            printf("| %u | %s | %.4f | %.4f | %.1f%% | %s, %s |\n", widths[wi], names[kind], 8.0 * (double)len / (double)(2u * h),
                   8.0 * (double)slen / (double)(2u * h), 100.0 * (1.0 - (double)slen / (double)len),
                   CODER_NAME[seg[0].coder], CODER_NAME[seg[1].coder]);
        }
    }
    free(x);
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: sizes [--n N] [--d D] [--trials T]\n"
            "  --n N       elements per vector of the coder table (default %zu)\n"
            "  --d D       dimension of the unit vectors of the Elias table (default %zu)\n"
            "  --trials T  unit vectors per width in the Elias table (default %u)\n",
            SIZES_DEFAULT_N, SIZES_DEFAULT_D, SIZES_DEFAULT_TRIALS);
}

static size_t parse_size(const char *opt, const char *v) {
    unsigned long long nv = bench_parse_count("sizes", opt, v);
    if (nv > (unsigned long long)(SIZE_MAX / 8u) || nv > (unsigned long long)DQ_MAX_ELEMS) {
        fprintf(stderr, "sizes: %s %llu is too large\n", opt, nv);
        exit(2);
    }
    return (size_t)nv;
}

int main(int argc, char **argv) {
    size_t n = SIZES_DEFAULT_N, d = SIZES_DEFAULT_D, big;
    unsigned trials = SIZES_DEFAULT_TRIALS, b;
    sizes_ctx c;
    int i;
    for (i = 1; i < argc; i++) {
        const char *v;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if ((v = bench_opt_value("sizes", argc, argv, &i, "--n")) != NULL) {
            n = parse_size("--n", v);
        } else if ((v = bench_opt_value("sizes", argc, argv, &i, "--d")) != NULL) {
            d = parse_size("--d", v);
        } else if ((v = bench_opt_value("sizes", argc, argv, &i, "--trials")) != NULL) {
            unsigned long long tv = bench_parse_count("sizes", "--trials", v);
            if (tv > 1000000u) {
                fprintf(stderr, "sizes: --trials %llu is too large\n", tv);
                return 2;
            }
            trials = (unsigned)tv;
        } else {
            fprintf(stderr, "sizes: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    memset(&c, 0, sizeof c);
    big = n > d ? n : d;
    for (b = 1; b <= SIZES_MAX_BITS; b++) { /* room for every message, whatever the coder */
        size_t cap = dq_encode_bound_coded(big, b);
        if (cap == 0) die("dq_encode_bound_coded", "n or d out of range");
        if (cap > c.cap) c.cap = cap;
    }
    c.fixed = (uint8_t *)xmalloc(c.cap);
    c.coded = (uint8_t *)xmalloc(c.cap);
    c.tmp = (uint8_t *)xmalloc(c.cap);
    c.codes = (uint32_t *)xmalloc(big * sizeof(uint32_t));
    c.dec = (float *)xmalloc(big * sizeof(float));
    printf("dqsgd %s coded message sizes (backend %s)\n\n", DQSGD_VERSION_STRING, dq_simd_backend());
    table_sizes(&c, n);
    table_elias(&c, d, trials);
    table_halves(&c, n);
    free(c.fixed);
    free(c.coded);
    free(c.tmp);
    free(c.codes);
    free(c.dec);
    return c.failed;
}
