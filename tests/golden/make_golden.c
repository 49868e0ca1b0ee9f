/* make_golden.c - writes the golden files of the wire format (doc/FORMAT.md section 14) into
 * tests/golden/v<DQ_FORMAT_VERSION>. Not run by `make test`; tests/test_golden.c reads what
 * it wrote. From the repository root, with the scalar reference:
 *
 *     cc -std=c99 -ffp-contract=off -O2 -DDQ_NO_SIMD -I. tests/golden/make_golden.c -o /tmp/make_golden
 *     /tmp/make_golden [-n] [DIR]        DIR defaults to tests/golden/v<DQ_FORMAT_VERSION>
 *
 * Frozen files never change. The generator builds every case in memory, compares each one
 * with the file already on disk and refuses (exit 1, nothing written) if any existing file
 * differs; otherwise it writes only the files that are missing, and extends MANIFEST only by
 * appending lines to it. -n checks without writing (exit 1 if anything is missing or differs).
 *
 * Adding cases: append to the end of add_cases() (never reorder, rename or change a case:
 * the manifest must stay a prefix of what the generator writes), re-run, then raise
 * k_min_cases in tests/test_golden.c. A case that needs a new encoder parameter (say a flag)
 * gets a new manifest key that is printed only when it differs from its default, so that the
 * lines already frozen stay byte-identical; teach tests/test_golden.c the key (it rejects
 * keys it does not know). A format change that alters any existing file gets a new format
 * version and a new directory v<N>; the old directory stays and keeps decoding.
 *
 * Inputs are built from integer arithmetic only (an integer hash gives sign, exponent and
 * mantissa bits of each float; small integers are scaled by exact powers of two; TRUNC_NU
 * level tables are integer ratios, make_levels), so the generator reproduces them on any
 * platform without libm. Every message is also decoded by an independent decoder written from
 * doc/FORMAT.md (spec_decode below; the Elias and rANS payloads of coded messages by
 * spec_coded_codes; the magnitudes of every level scheme, uniform, exponential and TRUNC_NU's
 * table, by spec_magnitude) and must agree with dq_decode; error-feedback residuals are
 * checked against the rule of section 6.6; TRUNC and TRUNC_NU messages must carry alpha as
 * every scale and the caller's levels after the scales. A coded message must also equal the
 * fixed message of the same params re-coded (dq_recode both ways), and its AUTO case must be
 * what the coder AUTO chose, forced.
 *
 * Legacy files (legacy_file below; the same one rule as tests/test_golden.c): a frozen coded
 * message this library no longer writes, because its wire coder is no longer written (coder 2,
 * the first rANS layout, manifest coder=rans) or because it is larger than the fixed layout
 * (sent by 0.5), cannot be regenerated; it is verified instead (both decoders agree on it, and
 * it re-codes to the fixed re-encoding), and its other files are regenerated and compared as
 * usual. -n reports how many. Cases marked rans32 (coder=rans32, wire coder 3) must really be
 * sent as coder 3: a case whose rANS form is not smaller than the fixed one is refused. */
#if defined(__unix__) || defined(__APPLE__)
#define _POSIX_C_SOURCE 200809L
#include <sys/stat.h>
#define GOLDEN_MKDIR(d) mkdir((d), 0777)
#else
#define GOLDEN_MKDIR(d) (-1)
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dqsgd.h"

/* The coder that asks dq_encode for the fixed layout whatever n: DQ_CODER_FIXED_ONLY where
 * the library has it (since 0.7, dq_params.coder = 0 asks DQ_CODER_AUTO from DQ_CODER_AUTO_MIN
 * elements on), else 0 (DQ_CODER_FIXED). Frozen coder=fixed cases are re-encoded with it. */
#ifdef DQ_CODER_FIXED_ONLY
#define GOLDEN_ASK_FIXED DQ_CODER_FIXED_ONLY
#else
#define GOLDEN_ASK_FIXED DQ_CODER_FIXED
#endif

/* ---------------------------------------------------------------- inputs from integers */
enum input_kind {
    IN_MIXED,    /* hash-built floats over 2^(eshift-6) .. 2^(eshift+3), 1/64 +0.0, 1/64 -0.0 */
    IN_GRID,     /* ((37 i + iseed) mod 17 - 8) / 8: exact, many ties (FORMAT.md 13.2 for iseed 0) */
    IN_SPECIAL,  /* 40-element regions: mixed, zeros, denormals, flushed, barely kept, huge, ... */
    IN_ZERO,     /* all +0.0 */
    IN_NEGZERO,  /* all -0.0 */
    IN_DENORMAL, /* all subnormal, random signs */
    IN_FMT12,    /* the ten values of FORMAT.md section 12 */
    IN_SPARSE    /* one element in 10 (by hash) as in IN_MIXED, the rest +0.0 */
};

static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static uint64_t hash2(uint32_t seed, size_t i) {
    return mix64(((uint64_t)seed << 32) ^ (0x9E3779B97F4A7C15ull * ((uint64_t)i + 1u)));
}
static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint32_t to_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
/* sign bit from z, biased exponent field e (clamped to 1..254), 23 mantissa bits from z */
static float make_float(uint64_t z, int e) {
    uint32_t sign = (uint32_t)(z >> 63) << 31, mant = (uint32_t)(z >> 20) & 0x7FFFFFu;
    if (e < 1) e = 1;
    if (e > 254) e = 254;
    return from_bits(sign | (uint32_t)e << 23 | mant);
}
static float mixed_val(uint32_t iseed, size_t i, int eshift) {
    uint64_t z = hash2(iseed, i);
    if ((z & 63u) == 0u) return from_bits(0u);
    if ((z & 63u) == 1u) return from_bits(0x80000000u);
    return make_float(z, 127 - 6 + (int)((z >> 8) % 9u) + eshift);
}
static float special_val(uint32_t iseed, size_t i) {
    uint64_t z = hash2(iseed, i);
    uint32_t sign = (uint32_t)(z >> 63) << 31;
    switch ((i / 40u) % 8u) {
    case 0: return mixed_val(iseed, i, 0);
    case 1: return from_bits(0u);                                               /* zero bucket */
    case 2: return from_bits(sign | (((uint32_t)(z >> 20) & 0x7FFFFFu) | 1u)); /* subnormals */
    case 3: return make_float(z, 12 + (int)((z >> 8) % 6u)); /* 2^-115..2^-110: scale flushed to 0 */
    case 4: return make_float(z, 28 + (int)((z >> 8) % 2u)); /* 2^-99..2^-97: scale just kept */
    case 5: return make_float(z, 244 + (int)((z >> 8) % 3u)); /* 2^117..2^120: large scale */
    case 6: return i % 40u == 17u ? from_bits(sign | 0x3FC00000u) : from_bits(0x80000000u); /* -0.0, one 1.5 */
    default: return make_float(z, 67 + (int)((z >> 8) % 80u)); /* 2^-60..2^20 in one bucket */
    }
}
static void make_input(int kind, uint32_t iseed, int eshift, float *x, size_t n) {
    static const float fmt12[10] = {1.5f, -0.625f, 0.125f, -1.75f, 1.0f, 0.5f, -0.375f, 0.75f, -1.125f, -0.25f};
    size_t i;
    for (i = 0; i < n; i++) {
        switch (kind) {
        case IN_MIXED: x[i] = mixed_val(iseed, i, eshift); break;
        case IN_GRID: x[i] = (float)((int)((37u * i + iseed) % 17u) - 8) / 8.0f; break;
        case IN_SPECIAL: x[i] = special_val(iseed, i); break;
        case IN_ZERO: x[i] = from_bits(0u); break;
        case IN_NEGZERO: x[i] = from_bits(0x80000000u); break;
        case IN_DENORMAL: {
            uint64_t z = hash2(iseed, i);
            x[i] = from_bits((uint32_t)(z >> 63) << 31 | (((uint32_t)(z >> 20) & 0x7FFFFFu) | 1u));
            break;
        }
        case IN_SPARSE: x[i] = hash2(iseed ^ 0x5BA45Eu, i) % 10u ? from_bits(0u) : mixed_val(iseed, i, eshift); break;
        default: x[i] = fmt12[i % 10u]; break;
        }
    }
}

/* TRUNC_NU level tables from integers: s levels 0 < l_1 < ... < l_s = 1 (one float division
 * each, so every platform gets the same bits). LV_CUM: cumulative sums of weights 1..16 from
 * the hash, over their total; LV_SQUARE: l^2 / s^2 (dense near 0). The quotients of distinct
 * integers below 2^24 over one divisor at most 2^24 are distinct floats, and the last is 1. */
enum { LV_CUM = 1, LV_SQUARE = 2 };
static void make_levels(int rule, uint32_t iseed, unsigned s, float *lv) {
    uint32_t cum[127], total = 0;
    unsigned l;
    for (l = 1; l <= s; l++) {
        total += rule == LV_SQUARE ? 2u * l - 1u : 1u + (uint32_t)(hash2(iseed ^ 0x1E7E15u, l) % 16u);
        cum[l - 1] = total; /* LV_SQUARE: the sum of the first l odd numbers, l^2 */
    }
    for (l = 0; l < s; l++) lv[l] = (float)cum[l] / (float)total;
}

/* ---------------------------------------------------------------- the cases */
typedef struct gcase {
    char name[48];
    size_t n;
    unsigned bits;
    uint32_t bucket; /* DQ_BUCKET_WHOLE or a multiple of 8 */
    int nearest, maxnorm, ef;
    uint64_t seed, step;
    uint32_t stream;
    int kind, eshift; /* input; the residual (ef) is IN_SPECIAL for special inputs, else IN_MIXED */
    uint32_t iseed;   /* at eshift - 3 with seed iseed + 0x5EED */
    int checksum;     /* payload checksum (flag bit 1); manifest key only when set */
    unsigned coder;   /* DQ_CODER_FIXED, _ELIAS, _RANS, or _AUTO (the manifest names the coder written) */
    unsigned written; /* the coder the message uses (set in main) */
    /* level schemes (library 0.4.0); the manifest prints scheme, alpha and levels */
    unsigned scheme;    /* DQ_SCHEME_*; 0 (the cases before them) = DQ_SCHEME_QSGD */
    uint32_t alpha;     /* TRUNC, TRUNC_NU: bit pattern of dq_params.alpha */
    int lvrule;         /* TRUNC_NU: how levels[] is built (LV_*) */
    const char *note;   /* comment lines the manifest gets before this case, or NULL */
    int rans32;         /* must freeze a coder-3 message (refused otherwise) */
    int legacy;         /* its frozen .dqsg is one this library no longer writes (legacy_file) */
    float *legacy_out;  /* what that file decodes to */
    /* segmented messages (library 0.9.0, FORMAT.md 24): nseg > 0 segments, seg_n[j] elements at
     * seg_b[j] bits, written by dq_encode_segments asking segcoder (GOLDEN_ASK_FIXED, ELIAS, RANS,
     * AUTO, or DQ_CODER_DEFAULT); seg_c[j] is the coder segment j must be sent with (the case is
     * refused otherwise). bits is the widest, coder the header's (fixed); manifest keys segments=
     * (count:bits:coder,...) and segcoder= (the coder asked) */
    unsigned nseg;
    size_t seg_n[16];
    unsigned seg_b[16], seg_c[16];
    unsigned segcoder;
    /* sparse messages (FORMAT.md 20; library 0.11: quantized values 20.10, the RICE index coder
     * 18.9): scheme topk, randk or threshold; bits 32 (float32 values) or 1..16 (composed); the
     * manifest adds k= (topk, randk) or threshold=0xHHHHHHHH, unbiased=1 (randk), index= (the
     * index coder asked, topk and threshold), asked= (the dq_params.coder asked); coder= is the
     * coder the values were sent with. */
    size_t k;
    uint32_t threshold;  /* bit pattern of dq_params.threshold */
    int unbiased;
    unsigned icoder;     /* dq_params.index_coder; the case is refused unless the stream uses sent_icoder */
    unsigned sent_icoder;
    unsigned asked;      /* dq_params.coder (sparse cases) */
} gcase;

#define MAX_CASES 256
static gcase g_cases[MAX_CASES];
static size_t g_ncases;

static void add(const char *name, size_t n, unsigned bits, uint32_t bucket, int nearest, int maxnorm, uint64_t seed,
                uint64_t step, uint32_t stream, int ef, int kind, int eshift, uint32_t iseed) {
    gcase *c;
    if (g_ncases == MAX_CASES || strlen(name) >= sizeof c->name) {
        fprintf(stderr, "make_golden: too many cases or name too long: %s\n", name);
        exit(2);
    }
    c = &g_cases[g_ncases++];
    memset(c, 0, sizeof *c);
    strcpy(c->name, name);
    c->n = n;
    c->bits = bits;
    c->bucket = bucket;
    c->nearest = nearest;
    c->maxnorm = maxnorm;
    c->seed = seed;
    c->step = step;
    c->stream = stream;
    c->ef = ef;
    c->kind = kind;
    c->eshift = eshift;
    c->iseed = iseed;
}

/* A case of a level scheme other than QSGD: seed, step and stream from one number k. */
static void scase(unsigned scheme, const char *name, size_t n, unsigned bits, uint32_t bucket, int nearest,
                  int maxnorm, uint32_t k, int ef, int kind, uint32_t iseed) {
    add(name, n, bits, bucket, nearest, maxnorm, k, k + 1u, k + 2u, ef, kind, 0, iseed);
    g_cases[g_ncases - 1u].scheme = scheme;
}
static const char k_note_schemes[] =
    "# Level schemes (library 0.4.0; FORMAT.md 14): scheme nuqsgd|natural|terngrad|trunc|trunc-nu\n"
    "# (wire 2, 3, 4, 9, 10); norm is then the norm asked (nuqsgd: l2|max) or the scheme's own,\n"
    "# pow2 (natural), clip (terngrad), alpha (trunc, trunc-nu), asked of no encoder. trunc and\n"
    "# trunc-nu add alpha=0xHHHHHHHH, the bit pattern of the float32 dq_params.alpha; trunc-nu\n"
    "# adds levels=0xHHHHHHHH,... its 2^(bits-1)-1 levels as float32 bit patterns, in order.\n";
static const char k_note_twomeans[] =
    "# Two-means 1-bit SGD (FORMAT.md 22): scheme twomeans (wire 5), bits 1, rounding nearest,\n"
    "# norm twomeans (wire 6, the scheme's own); two float32 means per bucket.\n";

/* The last case added asks for `coder` and must be sent as coder 3 (rANS in chunks). */
static void r32(unsigned coder) {
    g_cases[g_ncases - 1u].coder = coder;
    g_cases[g_ncases - 1u].rans32 = 1;
}
static const char k_note_rans32[] =
    "# Coder 3 (library 0.7; FORMAT.md 17.6): coder=rans32 is a message with wire coder 3, rANS in\n"
    "# chunks of 65536 symbols with 32 interleaved states. coder=rans above is wire coder 2 (17.3),\n"
    "# which encoders no longer write: such frozen files are legacy (test_golden.c): they decode as\n"
    "# frozen, and re-encoding gives coder 3, or fixed where that is smaller, with the same values.\n";

/* A segmented case: m segments (counts, widths, the coder each must be sent with), asked with
 * `asked`; n the sum of the counts, bits the widest; seed, step and stream from one number k. */
static void add_seg(const char *name, unsigned asked, unsigned m, const size_t *cnt, const unsigned *bits,
                    const unsigned *coders, uint32_t bucket, int nearest, int maxnorm, uint32_t k, int ef, int kind,
                    uint32_t iseed) {
    size_t n = 0;
    unsigned j, maxb = 0;
    gcase *c;
    for (j = 0; j < m; j++) {
        n += cnt[j];
        if (bits[j] > maxb) maxb = bits[j];
    }
    add(name, n, maxb, bucket, nearest, maxnorm, k, k + 1u, k + 2u, ef, kind, 0, iseed);
    c = &g_cases[g_ncases - 1u];
    if (m > sizeof c->seg_n / sizeof c->seg_n[0]) exit(2);
    c->nseg = m;
    c->segcoder = asked;
    for (j = 0; j < m; j++) {
        c->seg_n[j] = cnt[j];
        c->seg_b[j] = bits[j];
        c->seg_c[j] = coders[j];
    }
}
static const char k_note_segments[] =
    "# Segmented messages (library 0.9.0; FORMAT.md 24): segments=COUNT:BITS:CODER,... the segments in\n"
    "# order (CODER the coder each was sent with: fixed, elias, rans32); segcoder= the dq_params.coder\n"
    "# dq_encode_segments was asked (fixed = DQ_CODER_FIXED_ONLY, elias, rans32, auto, default); bits is\n"
    "# the widest segment, coder the header's (fixed).\n";

/* A sparse case: scheme, n, k (topk, randk) or the threshold's bits, bits (32 or 1..16), the
 * coder asked (sparse->asked) and the one it must be sent with (written), the index coder asked
 * and the one its stream must use; seed, step and stream from one number kk. */
static void add_sp(const char *name, unsigned scheme, size_t n, size_t k, uint32_t tbits, unsigned bits, uint32_t bucket,
                   int nearest, int maxnorm, unsigned asked, unsigned written, unsigned icoder, unsigned sent_icoder,
                   uint32_t kk, int ef, int kind, uint32_t iseed) {
    gcase *c;
    add(name, n, bits, bucket, nearest, maxnorm, kk, kk + 1u, kk + 2u, ef, kind, 0, iseed);
    c = &g_cases[g_ncases - 1u];
    c->scheme = scheme;
    c->k = k;
    c->threshold = tbits;
    c->asked = asked;
    c->written = written;
    c->icoder = icoder;
    c->sent_icoder = sent_icoder;
}
static const char k_note_sparse[] =
    "# Sparse messages (library 0.11; FORMAT.md 14, 18.9, 20): scheme topk|randk|threshold (wire 6, 7, 8);\n"
    "# bits 32 sends float32 values, 1..16 the values quantized as the body of a QSGD message of them\n"
    "# (20.10), whose bucket (values per scale, or whole; 0 with bits 32), rounding and norm (asked:\n"
    "# l2|max) the other keys give; coder= is the coder the values were sent with, asked= the\n"
    "# dq_params.coder asked (fixed = DQ_CODER_FIXED_ONLY, elias, rans32, auto, default). k= (topk,\n"
    "# randk) or threshold=0xHHHHHHHH (the float32 bit pattern); unbiased=1: rescaled random-k;\n"
    "# index= the index coder asked (gamma, varint, bitmap, rice or auto; topk, threshold). The\n"
    "# message is what dq_encode writes into a buffer of dq_encode_capacity() bytes.\n";

#define W DQ_BUCKET_WHOLE
#define ST 0
#define NR 1
#define L2 0
#define MX 1

/* Append only: frozen cases are identified by their position in this list and their name. */
static void add_cases(void) {
    static const uint32_t sweep_buckets[5] = {8u, 40u, 64u, 264u, W};
    unsigned b, r, m;
    char name[48];
    /* every width with both roundings and both norms: all four combinations at 1 and 16 bits,
     * (stochastic, nearest) x (l2, max) paired the two ways in turn at 2..15 bits; n = 257..296
     * (a full block and a tail of 1..40 codes), the bucket cycles over 8, 40, 64, 264, whole */
    for (b = 1; b <= 16; b++)
        for (r = 0; r < 2; r++)
            for (m = 0; m < 2; m++) {
                unsigned k = 4u * b + 2u * r + m;
                if (b != 1u && b != 16u && m != ((b + r) & 1u)) continue;
                snprintf(name, sizeof name, "w%02u_%s_%s", b, r ? "nearest" : "stoch", m ? "max" : "l2");
                add(name, 257u + (size_t)((k * 23u) % 40u), b, sweep_buckets[k % 5u], (int)r, (int)m, 1000u + k,
                    7u * k + 1u, 3u + k, 0, IN_MIXED, 0, k);
            }
    /* the worked example and check values of doc/FORMAT.md sections 12 and 13.2 */
    add("format12_nearest", 10, 3, W, NR, L2, 42, 7, 3, 0, IN_FMT12, 0, 0);
    add("format12_stoch", 10, 3, W, ST, L2, 42, 7, 3, 0, IN_FMT12, 0, 0);
    add("format13_A", 300, 5, 64, ST, L2, 1, 2, 3, 0, IN_GRID, 0, 0);
    add("format13_B", 300, 1, W, NR, L2, 1, 2, 3, 0, IN_GRID, 0, 0);
    add("format13_C", 300, 16, 256, NR, MX, 0, 0, 0, 0, IN_GRID, 0, 0);
    add("format13_D", 300, 1, 8, ST, L2, 5, 0, 0, 0, IN_GRID, 0, 0);
    /* buckets */
    add("bucket8", 520, 3, 8, ST, L2, 11, 12, 13, 0, IN_MIXED, 0, 101);
    add("bucket40", 400, 5, 40, NR, L2, 21, 22, 23, 0, IN_MIXED, 0, 102);
    add("bucket264", 600, 6, 264, ST, MX, 31, 32, 33, 0, IN_MIXED, 0, 103);
    add("bucket512_n3000", 3000, 4, 512, ST, L2, 41, 42, 43, 0, IN_MIXED, 0, 104);
    add("bucket512_nearest_max", 1100, 2, 512, NR, MX, 51, 52, 53, 0, IN_MIXED, 0, 105);
    add("bucket_whole", 600, 7, W, ST, L2, 61, 62, 63, 0, IN_MIXED, 0, 106);
    add("bucket_whole_nearest_max", 500, 12, W, NR, MX, 71, 72, 73, 0, IN_MIXED, 0, 107);
    add("bucket_above_n", 100, 4, 512, ST, L2, 81, 82, 83, 0, IN_MIXED, 0, 108);
    /* counts */
    add("count1", 1, 4, 8, ST, L2, 91, 92, 93, 0, IN_MIXED, 0, 109);
    add("count1_b1_nearest", 1, 1, W, NR, L2, 91, 92, 93, 0, IN_MIXED, 0, 110);
    add("count1_b16_max", 1, 16, 512, NR, MX, 91, 92, 93, 0, IN_MIXED, 0, 111);
    add("count7", 7, 5, 8, NR, L2, 94, 95, 96, 0, IN_MIXED, 0, 112);
    add("count7_b1_stoch", 7, 1, W, ST, L2, 94, 95, 96, 0, IN_MIXED, 0, 113);
    add("count256", 256, 7, 256, ST, L2, 97, 98, 99, 0, IN_MIXED, 0, 114);
    add("count512", 512, 9, 512, NR, MX, 97, 98, 99, 0, IN_MIXED, 0, 115);
    add("count768_b16", 768, 16, 64, ST, L2, 97, 98, 99, 0, IN_MIXED, 0, 116);
    /* ties (exact grid input) */
    add("grid_nearest_b2_max", 300, 2, 64, NR, MX, 1, 1, 1, 0, IN_GRID, 0, 5);
    add("grid_nearest_b4", 300, 4, 40, NR, L2, 1, 1, 1, 0, IN_GRID, 0, 9);
    /* zeros, subnormals, scales flushed to zero, tiny and huge scales */
    add("special_b4_stoch", 320, 4, 40, ST, L2, 201, 202, 203, 0, IN_SPECIAL, 0, 201);
    add("special_b3_nearest_max", 320, 3, 40, NR, MX, 204, 205, 206, 0, IN_SPECIAL, 0, 202);
    add("special_b16_nearest", 320, 16, 40, NR, L2, 207, 208, 209, 0, IN_SPECIAL, 0, 203);
    add("special_b1_stoch_bucket8", 320, 1, 8, ST, L2, 210, 211, 212, 0, IN_SPECIAL, 0, 204);
    add("special_b1_nearest", 320, 1, 40, NR, L2, 213, 214, 215, 0, IN_SPECIAL, 0, 205);
    add("special_b8_whole_max", 320, 8, W, ST, MX, 216, 217, 218, 0, IN_SPECIAL, 0, 206);
    add("zeros", 300, 4, 64, ST, L2, 301, 302, 303, 0, IN_ZERO, 0, 0);
    add("negzeros_b1_stoch", 100, 1, 16, ST, L2, 304, 305, 306, 0, IN_NEGZERO, 0, 0);
    add("negzeros_b1_nearest", 100, 1, 16, NR, L2, 304, 305, 306, 0, IN_NEGZERO, 0, 0);
    add("denormals", 300, 6, 8, NR, MX, 307, 308, 309, 0, IN_DENORMAL, 0, 301);
    add("scale_flushed", 300, 5, 40, ST, L2, 310, 311, 312, 0, IN_MIXED, -112, 302);
    add("scale_small", 300, 8, 64, ST, L2, 313, 314, 315, 0, IN_MIXED, -90, 303);
    add("scale_large", 300, 8, 64, NR, MX, 316, 317, 318, 0, IN_MIXED, 110, 304);
    /* the dither key: zero, and large seed, step and stream */
    add("key_zero", 300, 4, 512, ST, L2, 0, 0, 0, 0, IN_MIXED, 0, 401);
    add("key_max", 300, 6, 64, ST, L2, 0xFFFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFEull, 0xFFFFFFFFu, 0, IN_MIXED, 0, 402);
    add("key_large", 300, 2, 40, ST, MX, 0x8000000000000001ull, 0x0123456789ABCDEFull, 0x80000000u, 0, IN_MIXED, 0,
        403);
    add("key_step_2e40", 300, 3, 8, ST, L2, 0, 1ull << 40, 0, 0, IN_MIXED, 0, 404);
    /* error feedback */
    add("ef_b4_stoch", 600, 4, 512, ST, L2, 501, 502, 503, 1, IN_MIXED, 0, 501);
    add("ef_b1_nearest", 400, 1, 64, NR, L2, 504, 505, 506, 1, IN_MIXED, 0, 502);
    add("ef_b1_stoch", 300, 1, 8, ST, L2, 507, 508, 509, 1, IN_MIXED, 0, 503);
    add("ef_b8_nearest_max_whole", 300, 8, W, NR, MX, 510, 511, 512, 1, IN_MIXED, 0, 504);
    add("ef_b2_stoch_special", 320, 2, 40, ST, L2, 513, 514, 515, 1, IN_SPECIAL, 0, 505);
    add("ef_b16_stoch_bucket264", 600, 16, 264, ST, L2, 516, 517, 518, 1, IN_MIXED, 0, 506);
    add("ef_b3_nearest_tail", 263, 3, 8, NR, L2, 519, 520, 521, 1, IN_MIXED, 0, 507);
    /* the payload checksum (flags bit 1, FORMAT.md 3.4), added in library 0.2.0 */
    add("checksum_b4_n3000", 3000, 4, 512, ST, L2, 601, 602, 603, 0, IN_MIXED, 0, 601);
    g_cases[g_ncases - 1u].checksum = 1;
    add("checksum_b1_nearest_tail", 300, 1, 8, NR, L2, 604, 605, 606, 0, IN_MIXED, 0, 602);
    g_cases[g_ncases - 1u].checksum = 1;
    add("checksum_b16_max_whole_ef", 263, 16, W, ST, MX, 607, 608, 609, 1, IN_MIXED, 0, 603);
    g_cases[g_ncases - 1u].checksum = 1;
    /* coders (dq_params.coder, manifest coder=elias|rans), added in library 0.3.0: rANS at 1, 2,
     * 3, 4, 5 and 8 bits, Elias at 2, 4, 9 and 16 on sparse and dense inputs, and two messages
     * written by DQ_CODER_AUTO (a sparse input: Elias; a dense one: rANS) */
    add("coder_rans_b1_n1", 1, 1, 512, ST, L2, 701, 702, 703, 0, IN_MIXED, 0, 701);
    g_cases[g_ncases - 1u].coder = DQ_CODER_RANS;
    add("coder_rans_b2_n100_whole_nearest", 100, 2, W, NR, L2, 704, 705, 706, 0, IN_MIXED, 0, 702);
    g_cases[g_ncases - 1u].coder = DQ_CODER_RANS;
    add("coder_rans_b3_n300", 300, 3, 512, ST, L2, 707, 708, 709, 0, IN_MIXED, 0, 703);
    g_cases[g_ncases - 1u].coder = DQ_CODER_RANS;
    add("coder_rans_b4_n3000_checksum", 3000, 4, 512, ST, L2, 710, 711, 712, 0, IN_MIXED, 0, 704);
    g_cases[g_ncases - 1u].coder = DQ_CODER_RANS;
    g_cases[g_ncases - 1u].checksum = 1;
    add("coder_rans_b5_n3000_whole_max", 3000, 5, W, NR, MX, 713, 714, 715, 0, IN_MIXED, 0, 705);
    g_cases[g_ncases - 1u].coder = DQ_CODER_RANS;
    add("coder_rans_b8_n300_grid", 300, 8, 512, ST, L2, 716, 717, 718, 0, IN_GRID, 0, 3);
    g_cases[g_ncases - 1u].coder = DQ_CODER_RANS;
    add("coder_elias_b2_sparse_n3000", 3000, 2, 512, ST, L2, 719, 720, 721, 0, IN_SPARSE, 0, 706);
    g_cases[g_ncases - 1u].coder = DQ_CODER_ELIAS;
    add("coder_elias_b4_dense_n300_ef", 300, 4, 64, NR, L2, 722, 723, 724, 1, IN_MIXED, 0, 707);
    g_cases[g_ncases - 1u].coder = DQ_CODER_ELIAS;
    add("coder_elias_b9_sparse_n1000_whole", 1000, 9, W, ST, MX, 725, 726, 727, 0, IN_SPARSE, 0, 708);
    g_cases[g_ncases - 1u].coder = DQ_CODER_ELIAS;
    add("coder_elias_b16_dense_n100", 100, 16, 40, ST, L2, 728, 729, 730, 0, IN_MIXED, 0, 709);
    g_cases[g_ncases - 1u].coder = DQ_CODER_ELIAS;
    add("coder_auto_sparse_b6_n3000", 3000, 6, 512, ST, L2, 731, 732, 733, 0, IN_SPARSE, 0, 710);
    g_cases[g_ncases - 1u].coder = DQ_CODER_AUTO;
    add("coder_auto_dense_b3_n3000", 3000, 3, 512, ST, L2, 734, 735, 736, 0, IN_MIXED, 0, 711);
    g_cases[g_ncases - 1u].coder = DQ_CODER_AUTO;
    /* the level schemes (library 0.4.0; manifest scheme=nuqsgd|natural|terngrad|trunc|trunc-nu,
     * norm = the scheme's own for the last four, alpha= and levels= as hex bit patterns): each
     * at several widths, buckets of 8, 40, 512 and the whole vector, both roundings, tails,
     * special inputs (zero buckets, subnormals, scales near both limits), error feedback, the
     * payload checksum, and the Elias, rANS and AUTO coders */
    scase(DQ_SCHEME_NUQSGD, "nuqsgd_b2_stoch_l2_bucket8", 300, 2, 8, ST, L2, 801, 0, IN_MIXED, 801);
    g_cases[g_ncases - 1u].note = k_note_schemes;
    scase(DQ_SCHEME_NUQSGD, "nuqsgd_b4_nearest_max_bucket40", 520, 4, 40, NR, MX, 802, 0, IN_MIXED, 802);
    scase(DQ_SCHEME_NUQSGD, "nuqsgd_b8_stoch_max_whole", 1000, 8, W, ST, MX, 803, 0, IN_MIXED, 803);
    scase(DQ_SCHEME_NUQSGD, "nuqsgd_b3_stoch_ef_bucket512", 3000, 3, 512, ST, L2, 804, 1, IN_MIXED, 804);
    scase(DQ_SCHEME_NUQSGD, "nuqsgd_b6_nearest_special", 320, 6, 40, NR, L2, 805, 0, IN_SPECIAL, 805);
    scase(DQ_SCHEME_NUQSGD, "nuqsgd_b5_elias_sparse", 1000, 5, 512, ST, L2, 806, 0, IN_SPARSE, 806);
    g_cases[g_ncases - 1u].coder = DQ_CODER_ELIAS;
    scase(DQ_SCHEME_NUQSGD, "nuqsgd_b7_rans_checksum", 700, 7, 64, ST, MX, 807, 0, IN_MIXED, 807);
    g_cases[g_ncases - 1u].coder = DQ_CODER_RANS;
    g_cases[g_ncases - 1u].checksum = 1;
    scase(DQ_SCHEME_NUQSGD, "nuqsgd_b4_auto_dense", 3000, 4, 512, ST, L2, 808, 0, IN_MIXED, 808);
    g_cases[g_ncases - 1u].coder = DQ_CODER_AUTO;
    scase(DQ_SCHEME_NATURAL, "natural_b8_stoch_bucket512", 700, 8, 512, ST, L2, 811, 0, IN_MIXED, 811);
    scase(DQ_SCHEME_NATURAL, "natural_b2_nearest_bucket8", 263, 2, 8, NR, L2, 812, 0, IN_MIXED, 812);
    scase(DQ_SCHEME_NATURAL, "natural_b3_stoch_special", 320, 3, 40, ST, L2, 813, 0, IN_SPECIAL, 813);
    scase(DQ_SCHEME_NATURAL, "natural_b5_rans_ef_whole", 600, 5, W, NR, L2, 814, 1, IN_MIXED, 814);
    g_cases[g_ncases - 1u].coder = DQ_CODER_RANS;
    scase(DQ_SCHEME_NATURAL, "natural_b8_elias_sparse_checksum", 1000, 8, 256, ST, L2, 815, 0, IN_SPARSE, 815);
    g_cases[g_ncases - 1u].coder = DQ_CODER_ELIAS;
    g_cases[g_ncases - 1u].checksum = 1;
    scase(DQ_SCHEME_NATURAL, "natural_b6_auto_sparse", 3000, 6, 512, ST, L2, 816, 0, IN_SPARSE, 816);
    g_cases[g_ncases - 1u].coder = DQ_CODER_AUTO;
    scase(DQ_SCHEME_TERNGRAD, "terngrad_stoch_bucket40", 400, 2, 40, ST, L2, 821, 0, IN_MIXED, 821);
    scase(DQ_SCHEME_TERNGRAD, "terngrad_nearest_whole_ef_checksum", 300, 2, W, NR, L2, 822, 1, IN_MIXED, 822);
    g_cases[g_ncases - 1u].checksum = 1;
    scase(DQ_SCHEME_TERNGRAD, "terngrad_stoch_special_bucket8", 320, 2, 8, ST, L2, 823, 0, IN_SPECIAL, 823);
    scase(DQ_SCHEME_TERNGRAD, "terngrad_rans_n3000", 3000, 2, 512, ST, L2, 824, 0, IN_MIXED, 824);
    g_cases[g_ncases - 1u].coder = DQ_CODER_RANS;
    scase(DQ_SCHEME_TRUNC, "trunc_b2_stoch_bucket8", 300, 2, 8, ST, L2, 831, 0, IN_MIXED, 831);
    g_cases[g_ncases - 1u].alpha = 0x3FC00000u; /* 1.5 */
    scase(DQ_SCHEME_TRUNC, "trunc_b9_nearest_whole", 1000, 9, W, NR, L2, 832, 0, IN_MIXED, 832);
    g_cases[g_ncases - 1u].alpha = 0x3F9E0652u; /* about 1.2345, not a short decimal */
    scase(DQ_SCHEME_TRUNC, "trunc_b16_stoch_ef_bucket512", 600, 16, 512, ST, L2, 833, 1, IN_MIXED, 833);
    g_cases[g_ncases - 1u].alpha = 0x40200000u; /* 2.5 */
    scase(DQ_SCHEME_TRUNC, "trunc_b4_stoch_special_alpha_min", 320, 4, 40, ST, L2, 834, 0, IN_SPECIAL, 834);
    g_cases[g_ncases - 1u].alpha = 0x0D800000u; /* 2^-100, the smallest alpha */
    scase(DQ_SCHEME_TRUNC, "trunc_b12_nearest_special_alpha_max", 320, 12, 8, NR, L2, 835, 0, IN_SPECIAL, 835);
    g_cases[g_ncases - 1u].alpha = 0x7E800000u; /* 2^126, the largest alpha */
    scase(DQ_SCHEME_TRUNC, "trunc_b5_elias_sparse_checksum", 1000, 5, 512, ST, L2, 836, 0, IN_SPARSE, 836);
    g_cases[g_ncases - 1u].alpha = 0x3F000000u; /* 0.5 */
    g_cases[g_ncases - 1u].coder = DQ_CODER_ELIAS;
    g_cases[g_ncases - 1u].checksum = 1;
    scase(DQ_SCHEME_TRUNC, "trunc_b8_auto_sparse", 3000, 8, 512, ST, L2, 837, 0, IN_SPARSE, 837);
    g_cases[g_ncases - 1u].alpha = 0x42000000u; /* 32: small levels, which Elias codes in few bits */
    g_cases[g_ncases - 1u].coder = DQ_CODER_AUTO;
    scase(DQ_SCHEME_TRUNC_NU, "trunc_nu_b2_stoch_bucket8", 300, 2, 8, ST, L2, 841, 0, IN_MIXED, 841);
    g_cases[g_ncases - 1u].alpha = 0x3F800000u; /* 1.0; the one level is 1 */
    g_cases[g_ncases - 1u].lvrule = LV_CUM;
    scase(DQ_SCHEME_TRUNC_NU, "trunc_nu_b4_nearest_bucket40", 520, 4, 40, NR, L2, 842, 0, IN_MIXED, 842);
    g_cases[g_ncases - 1u].alpha = 0x40000000u; /* 2.0 */
    g_cases[g_ncases - 1u].lvrule = LV_CUM;
    scase(DQ_SCHEME_TRUNC_NU, "trunc_nu_b8_stoch_whole", 1000, 8, W, ST, L2, 843, 0, IN_MIXED, 843);
    g_cases[g_ncases - 1u].alpha = 0x40490FDBu; /* pi in float */
    g_cases[g_ncases - 1u].lvrule = LV_SQUARE;
    scase(DQ_SCHEME_TRUNC_NU, "trunc_nu_b5_stoch_ef_bucket512", 3000, 5, 512, ST, L2, 844, 1, IN_MIXED, 844);
    g_cases[g_ncases - 1u].alpha = 0x3FE00000u; /* 1.75 */
    g_cases[g_ncases - 1u].lvrule = LV_CUM;
    scase(DQ_SCHEME_TRUNC_NU, "trunc_nu_b3_elias_sparse", 1000, 3, 512, ST, L2, 845, 0, IN_SPARSE, 845);
    g_cases[g_ncases - 1u].alpha = 0x3F400000u; /* 0.75 */
    g_cases[g_ncases - 1u].lvrule = LV_SQUARE;
    g_cases[g_ncases - 1u].coder = DQ_CODER_ELIAS;
    scase(DQ_SCHEME_TRUNC_NU, "trunc_nu_b6_rans_checksum", 700, 6, 64, NR, L2, 846, 0, IN_MIXED, 846);
    g_cases[g_ncases - 1u].alpha = 0x41000000u; /* 8.0, above every input */
    g_cases[g_ncases - 1u].lvrule = LV_CUM;
    g_cases[g_ncases - 1u].coder = DQ_CODER_RANS;
    g_cases[g_ncases - 1u].checksum = 1;
    scase(DQ_SCHEME_TRUNC_NU, "trunc_nu_b4_auto_dense", 3000, 4, 512, ST, L2, 847, 0, IN_MIXED, 847);
    g_cases[g_ncases - 1u].alpha = 0x3E800000u; /* 0.25: most inputs saturate, few distinct codes */
    g_cases[g_ncases - 1u].lvrule = LV_SQUARE;
    g_cases[g_ncases - 1u].coder = DQ_CODER_AUTO;
    scase(DQ_SCHEME_TRUNC_NU, "trunc_nu_b7_n1", 1, 7, W, ST, L2, 848, 0, IN_MIXED, 848);
    g_cases[g_ncases - 1u].alpha = 0x3E800000u; /* 0.25 */
    g_cases[g_ncases - 1u].lvrule = LV_CUM;
    /* two-means 1-bit SGD (library 0.5.0, FORMAT.md 22; manifest scheme=twomeans norm=twomeans,
     * always nearest): buckets of 8, 64, 512 and the whole vector, tails, special inputs (zero
     * buckets, signed zeros, subnormals, flushed means), error feedback, the checksum, rANS, AUTO */
    scase(DQ_SCHEME_TWOMEANS, "twomeans_bucket64", 1000, 1, 64, NR, L2, 851, 0, IN_MIXED, 851);
    g_cases[g_ncases - 1u].note = k_note_twomeans;
    scase(DQ_SCHEME_TWOMEANS, "twomeans_whole_ef_checksum", 600, 1, W, NR, L2, 852, 1, IN_MIXED, 852);
    g_cases[g_ncases - 1u].checksum = 1;
    scase(DQ_SCHEME_TWOMEANS, "twomeans_special_bucket8", 320, 1, 8, NR, L2, 853, 0, IN_SPECIAL, 853);
    scase(DQ_SCHEME_TWOMEANS, "twomeans_special_ef_bucket40", 320, 1, 40, NR, L2, 854, 1, IN_SPECIAL, 854);
    scase(DQ_SCHEME_TWOMEANS, "twomeans_rans_n3000", 3000, 1, 512, NR, L2, 855, 0, IN_MIXED, 855);
    g_cases[g_ncases - 1u].coder = DQ_CODER_RANS;
    scase(DQ_SCHEME_TWOMEANS, "twomeans_auto_sparse", 3000, 1, 256, NR, L2, 856, 0, IN_SPARSE, 856);
    g_cases[g_ncases - 1u].coder = DQ_CODER_AUTO;
    scase(DQ_SCHEME_TWOMEANS, "twomeans_n7", 7, 1, W, NR, L2, 857, 0, IN_MIXED, 857);
    /* coder 3, rANS in chunks of 65536 symbols with 32 interleaved states (library 0.7, FORMAT.md
     * 17.6; manifest coder=rans32): 1, 2, 3, 4, 5 and 8 bits, buckets of 8, 64, 512 and the whole
     * vector, both roundings, the checksum, error feedback, tails that are not whole blocks, two
     * chunks (8 bits, m = n = 66000 symbols: 65536 and a last chunk of 464, not whole groups of
     * 32), and a message DQ_CODER_AUTO wrote. Each n is about the least for which coder 3 is
     * smaller than the fixed layout (132 bytes of length and states per chunk), so that it is
     * really sent: make_golden refuses a rans32 case that comes out fixed. */
    add("rans32_b1_n8000_sparse_nearest", 8000, 1, 512, NR, L2, 901, 902, 903, 0, IN_SPARSE, 0, 901);
    r32(DQ_CODER_RANS);
    g_cases[g_ncases - 1u].note = k_note_rans32;
    add("rans32_b2_n1000_whole", 1000, 2, W, ST, L2, 904, 905, 906, 0, IN_MIXED, 0, 902);
    r32(DQ_CODER_RANS);
    add("rans32_b3_n4000_bucket8_ef_checksum", 4000, 3, 8, NR, L2, 907, 908, 909, 1, IN_MIXED, 0, 903);
    r32(DQ_CODER_RANS);
    g_cases[g_ncases - 1u].checksum = 1;
    add("rans32_b4_n3000_checksum", 3000, 4, 512, ST, L2, 910, 911, 912, 0, IN_MIXED, 0, 904);
    r32(DQ_CODER_RANS);
    g_cases[g_ncases - 1u].checksum = 1;
    add("rans32_b5_n2000_whole_max_nearest", 2000, 5, W, NR, MX, 913, 914, 915, 0, IN_MIXED, 0, 905);
    r32(DQ_CODER_RANS);
    add("rans32_b8_n66000_two_chunks", 66000, 8, 512, ST, L2, 916, 917, 918, 0, IN_GRID, 0, 906);
    r32(DQ_CODER_RANS);
    g_cases[g_ncases - 1u].checksum = 1;
    add("rans32_auto_b4_n3000_grid_max", 3000, 4, 512, ST, MX, 919, 920, 921, 0, IN_GRID, 0, 7);
    r32(DQ_CODER_AUTO);
    scase(DQ_SCHEME_NUQSGD, "rans32_nuqsgd_b6_n2000", 2000, 6, 512, ST, L2, 922, 0, IN_MIXED, 908);
    r32(DQ_CODER_RANS);
    /* segmented messages (library 0.9.0, FORMAT.md 24; manifest segments=, segcoder=): widths
     * 2 to 16 in one message, segments of counts that are not multiples of 8 starting at elements
     * that are not multiples of 256 (the dither index is the element's index in the whole
     * vector), buckets of 8, 16, 64 and the whole vector (restarting at each segment), both
     * roundings and norms, error feedback, the payload checksum, and segments coded with Elias
     * and rANS (forced, AUTO, and the default coder, which codes segments of 4096 elements or
     * more and adds the checksum) beside fixed ones */
    {
        static const size_t n_a[4] = {300, 257, 200, 123};
        static const unsigned b_a[4] = {16, 2, 5, 9}, c_a[4] = {0, 0, 0, 0};
        static const size_t n_b[4] = {100, 77, 256, 31};
        static const unsigned b_b[4] = {3, 12, 4, 8}, c_b[4] = {0, 0, 0, 0};
        static const size_t n_c[4] = {1000, 300, 37, 1500};
        static const unsigned b_c[4] = {6, 16, 9, 2}, c_c[4] = {1, 1, 1, 1};
        static const size_t n_d[3] = {1200, 7, 2500};
        static const unsigned b_d[3] = {3, 8, 2}, c_d[3] = {3, 0, 3};
        static const size_t n_e[3] = {1333, 1, 2047};
        static const unsigned b_e[3] = {8, 13, 4}, c_e[3] = {3, 0, 1};
        static const size_t n_f[2] = {4100, 100};
        static const unsigned b_f[2] = {3, 8}, c_f[2] = {3, 0};
        static const size_t n_g[11] = {1, 7, 9, 255, 257, 13, 100, 513, 3, 64, 77};
        static const unsigned b_g[11] = {2, 3, 4, 5, 6, 7, 8, 10, 11, 14, 15}, c_g[11] = {0};
        add_seg("seg_fixed_b16_b2_b5_b9_bucket8_ef", GOLDEN_ASK_FIXED, 4, n_a, b_a, c_a, 8, ST, L2, 1001, 1,
                IN_MIXED, 1001);
        g_cases[g_ncases - 1u].note = k_note_segments;
        add_seg("seg_fixed_checksum_nearest_max_bucket64", GOLDEN_ASK_FIXED, 4, n_b, b_b, c_b, 64, NR, MX, 1004, 0,
                IN_MIXED, 1002);
        g_cases[g_ncases - 1u].checksum = 1;
        add_seg("seg_elias_sparse_bucket512", DQ_CODER_ELIAS, 4, n_c, b_c, c_c, 512, ST, L2, 1007, 0, IN_SPARSE,
                1003);
        add_seg("seg_rans32_whole_checksum", DQ_CODER_RANS, 3, n_d, b_d, c_d, W, ST, L2, 1010, 0, IN_GRID, 1004);
        g_cases[g_ncases - 1u].checksum = 1;
        add_seg("seg_auto_whole_nearest_ef", DQ_CODER_AUTO, 3, n_e, b_e, c_e, W, NR, L2, 1013, 1, IN_GRID, 1005);
        add_seg("seg_default_n4100_coded_checksum", DQ_CODER_DEFAULT, 2, n_f, b_f, c_f, 512, ST, L2, 1016, 0,
                IN_GRID, 1006);
        g_cases[g_ncases - 1u].checksum = 1; /* the default coder adds it when a segment is coded */
        add_seg("seg_many_odd_counts_bucket16_key_max", GOLDEN_ASK_FIXED, 11, n_g, b_g, c_g, 16, ST, MX, 0, 0,
                IN_MIXED, 1007);
        g_cases[g_ncases - 1u].seed = 0xFFFFFFFFFFFFFFFFull;
        g_cases[g_ncases - 1u].step = 0xFFFFFFFFFFFFFFFEull;
        g_cases[g_ncases - 1u].stream = 0xFFFFFFFFu;
    }
    /* sparse messages (library 0.11): composed values, the RICE index coder */
    add_sp("sparse_topk_b2_rans32", DQ_SCHEME_TOPK, 20000, 4000, 0, 2, 512, ST, L2, DQ_CODER_RANS, DQ_CODER_RANS,
           DQ_INDEX_AUTO, DQ_INDEX_RICE, 2001, 0, IN_GRID, 2001);
    g_cases[g_ncases - 1u].note = k_note_sparse;
    add_sp("sparse_threshold_b4_fixed_bucket64_ef_checksum", DQ_SCHEME_THRESHOLD, 3000, 0, 0x40000000u, 4, 64, ST, L2,
           GOLDEN_ASK_FIXED, DQ_CODER_FIXED, DQ_INDEX_VARINT, DQ_INDEX_VARINT, 2004, 1, IN_MIXED, 2002);
    g_cases[g_ncases - 1u].checksum = 1;
    add_sp("sparse_randk_b3_unbiased_ef", DQ_SCHEME_RANDK, 2500, 300, 0, 3, W, ST, L2, DQ_CODER_DEFAULT, DQ_CODER_FIXED,
           0, 0, 2007, 1, IN_MIXED, 2003);
    g_cases[g_ncases - 1u].unbiased = 1;
    add_sp("sparse_topk_ternary_whole_rice_ef", DQ_SCHEME_TOPK, 5000, 50, 0, 1, W, NR, L2, DQ_CODER_DEFAULT,
           DQ_CODER_FIXED, DQ_INDEX_RICE, DQ_INDEX_RICE, 2010, 1, IN_MIXED, 2004);
    add_sp("sparse_topk_f32_rice", DQ_SCHEME_TOPK, 3000, 30, 0, 32, 0, ST, L2, DQ_CODER_DEFAULT, DQ_CODER_FIXED,
           DQ_INDEX_RICE, DQ_INDEX_RICE, 2013, 0, IN_MIXED, 2005);
    add_sp("sparse_topk_b5_default_k5000_auto_rice", DQ_SCHEME_TOPK, 20000, 5000, 0, 5, 512, ST, L2, DQ_CODER_DEFAULT,
           DQ_CODER_RANS, DQ_INDEX_AUTO, DQ_INDEX_RICE, 2016, 0, IN_MIXED, 2006);
    g_cases[g_ncases - 1u].checksum = 1; /* the default coder adds it to the coded values */
    add_sp("sparse_topk_b16_elias_nearest_max", DQ_SCHEME_TOPK, 1000, 300, 0, 16, 8, NR, MX, DQ_CODER_ELIAS,
           DQ_CODER_ELIAS, DQ_INDEX_GAMMA, DQ_INDEX_GAMMA, 2019, 0, IN_SPARSE, 2007);
    add_sp("sparse_threshold_b6_none_sent", DQ_SCHEME_THRESHOLD, 700, 0, 0x7F7FFFFFu, 6, 16, NR, MX, DQ_CODER_AUTO,
           DQ_CODER_FIXED, DQ_INDEX_BITMAP, DQ_INDEX_BITMAP, 2022, 1, IN_MIXED, 2008);
    add_sp("sparse_randk_b1_stochastic_bucket8", DQ_SCHEME_RANDK, 999, 100, 0, 1, 8, ST, MX, GOLDEN_ASK_FIXED,
           DQ_CODER_FIXED, 0, 0, 0xFFFFFFF0u, 0, IN_SPECIAL, 2009);
    /* new cases go here, at the end */
}

/* ---------------------------------------------------------------- independent decoder
 * Written from doc/FORMAT.md sections 4, 5 and 8 without the library's code. */
static uint32_t ld32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t ld64(const uint8_t *p) { return (uint64_t)ld32(p) | (uint64_t)ld32(p + 4) << 32; }

static uint32_t spec_crc32c(const uint8_t *p, size_t n) { /* FORMAT.md 3.3, bitwise */
    uint32_t c = 0xFFFFFFFFu;
    size_t i;
    int k;
    for (i = 0; i < n; i++) {
        c ^= p[i];
        for (k = 0; k < 8; k++) c = (c >> 1) ^ ((c & 1u) ? 0x82F63B78u : 0u);
    }
    return c ^ 0xFFFFFFFFu;
}

/* Code i of a fixed payload of n codes of b bits (FORMAT.md 8). */
static uint32_t spec_code(const uint8_t *payload, uint64_t n, unsigned b, uint64_t i) {
    uint64_t F = n / 256;
    uint32_t code = 0;
    unsigned e;
    if (i < 256 * F) { /* lane bit stream: bit p of S_L is bit p%32 of W[L][p/32] */
        uint64_t k = i / 256, mm = i % 256, L = mm % 8, r = mm / 8;
        const uint8_t *blk = payload + 32 * b * k;
        for (e = 0; e < b; e++) {
            uint64_t p = r * b + e, j = p / 32;
            code |= (ld32(blk + 4 * (8 * j + L)) >> (p % 32) & 1u) << e;
        }
    } else { /* plain LSB-first bit stream */
        const uint8_t *tail = payload + 32 * b * F;
        uint64_t t = i - 256 * F;
        for (e = 0; e < b; e++) {
            uint64_t p = t * b + e;
            code |= (uint32_t)(tail[p / 8] >> (p % 8) & 1u) << e;
        }
    }
    return code;
}

/* The codes of a coded payload pay[0..L) into codes[0..n): Elias (coder 1) or rANS (coder 2,
 * one stream; coder 3, chunks of 32 interleaved states: FORMAT.md 17.3, 17.6),
 * read bit by bit from their description (dqsgd.h, "coders"), not with the library's code.
 * Returns nonzero on any malformation. */
static uint64_t spec_bit(const uint8_t *pay, uint64_t L, uint64_t *pos, int *bad) { /* MSB first */
    uint64_t q = (*pos)++;
    if (q >= 8 * L) {
        *bad = 1;
        return 0;
    }
    return (uint64_t)(pay[q / 8] >> (7 - q % 8) & 1u);
}
static uint64_t spec_omega(const uint8_t *pay, uint64_t L, uint64_t *pos, int *bad) {
    uint64_t v = 1;
    while (!*bad && spec_bit(pay, L, pos, bad)) { /* a group: 1 then v more bits */
        uint64_t g = 1, t;
        if (v > 62) {
            *bad = 1;
            return 0;
        }
        for (t = 0; t < v; t++) g = g << 1 | spec_bit(pay, L, pos, bad);
        v = g;
    }
    return v;
}
static int spec_coded_codes(unsigned coder, unsigned b, const uint8_t *pay, uint64_t L, uint64_t n, uint32_t *codes) {
    uint64_t i;
    int bad = 0;
    for (i = 0; i < n; i++) codes[i] = 0;
    if (coder == 1) { /* omega(nnz + 1), then per non-zero: omega(gap), sign bit, omega(level) */
        uint64_t pos = 0, cnt = spec_omega(pay, L, &pos, &bad) - 1, at = 0, smax = (1u << (b - 1)) - 1u, k;
        if (b < 2 || cnt > n) return 1;
        for (k = 0; k < cnt && !bad; k++) {
            uint64_t gap = spec_omega(pay, L, &pos, &bad), sign = spec_bit(pay, L, &pos, &bad), lvl;
            lvl = spec_omega(pay, L, &pos, &bad);
            if (gap > n - at || lvl > smax) return 1;
            at += gap;
            codes[at - 1] = (uint32_t)(lvl | sign << (b - 1));
        }
        if (bad || 8 * L - pos >= 8) return 1; /* the stream fills the payload, */
        while (pos < 8 * L)
            if (spec_bit(pay, L, &pos, &bad)) return 1; /* zero-padded */
        return 0;
    }
    if (coder == 2 || coder == 3) { /* symbols of g = 8/b codes; table; the states and words */
        unsigned g = b <= 8 ? 8 / b : 1, A = 1u << (g * b), s, t;
        uint32_t f[256], cum[256], x[32], sum = 0;
        uint64_t at = A / 8, nsym = (n + g - 1) / g, m, nbytes = (n * b + 7) / 8;
        uint8_t *sym;
        if (b > 8 || L < at) return 1;
        for (s = 0; s < A; s++) { /* bitmap of the symbols present, then f - 1 as LEB128 */
            f[s] = 0;
            cum[s] = sum;
            if (!(pay[s / 8] >> (s % 8) & 1u)) continue;
            if (at >= L) return 1;
            f[s] = pay[at++];
            if (f[s] & 0x80u) {
                if (at >= L || pay[at] == 0 || pay[at] > 31) return 1; /* canonical, at most 4095 */
                f[s] = (f[s] & 0x7Fu) | (uint32_t)pay[at++] << 7;
            }
            f[s] += 1;
            sum += f[s];
        }
        if (sum != 4096) return 1;
        sym = (uint8_t *)malloc(nsym ? nsym : 1);
        if (!sym) return 1;
        /* coder 2 (FORMAT.md 17.3): one stream, 8 states. Coder 3 (17.6): chunks of 65536
         * symbols, each a u32 length then 32 states and its words. Symbol m uses state m mod ways of
         * its stream; a state that falls below 2^16 takes the stream's next u16 word. */
        for (m = 0; m < nsym;) {
            unsigned ways = coder == 2 ? 8 : 32;
            uint64_t end = coder == 2 ? nsym : (m + 65536 < nsym ? m + 65536 : nsym), j, send;
            if (coder == 2) {
                send = L;
            } else {
                if (L - at < 4 || ld32(pay + at) > L - at - 4) break;
                send = at + 4 + ld32(pay + at);
                at += 4;
            }
            if (send - at < 4 * ways || (send - at) % 2) break;
            for (t = 0; t < ways; t++, at += 4) x[t] = ld32(pay + at);
            for (j = 0; m < end; m++, j++) { /* symbol m from state j mod ways */
                uint32_t *xs = &x[j % ways], slot = *xs & 4095u;
                for (s = 0; s < A; s++)
                    if (f[s] && slot >= cum[s] && slot < cum[s] + f[s]) break;
                if (s == A || *xs < 65536u) break;
                sym[m] = (uint8_t)s;
                *xs = f[s] * (*xs >> 12) + slot - cum[s];
                if (*xs < 65536u) {
                    if (send - at < 2) break;
                    *xs = *xs << 16 | (uint32_t)pay[at] | (uint32_t)pay[at + 1] << 8;
                    at += 2;
                }
            }
            if (m < end) break;
            for (t = 0; t < ways; t++)
                if (x[t] != 65536u) break; /* every state back at its start, */
            if (t < ways || at != send) break; /* every word of the stream read */
        }
        if (m < nsym || at != L) { /* a stream broke off, or bytes are left after the last chunk */
            free(sym);
            return 1;
        }
        if (8 % b == 0) { /* b = 1, 2, 4, 8: the symbols are the fixed payload's bytes */
            for (i = n * b; i < 8 * nbytes; i++)
                if (sym[i / 8] >> (i % 8) & 1u) {
                    free(sym);
                    return 1; /* padding */
                }
            for (i = 0; i < n; i++) codes[i] = spec_code(sym, n, b, i);
        } else { /* b = 3, 5, 6, 7: g consecutive codes, the first in the low bits */
            for (i = 0; i < g * nsym; i++) {
                uint32_t c = (uint32_t)(sym[i / g] >> (b * (i % g))) & ((1u << b) - 1u);
                if (i < n) {
                    codes[i] = c;
                } else if (c) {
                    free(sym);
                    return 1;
                }
            }
        }
        free(sym);
        return 0;
    }
    return 1;
}

/* The magnitude of level `level` (1..s) times the bucket's scale, for the level schemes
 * (scheme byte): uniform l * (scale / s) for QSGD (1), TernGrad (4) and TRUNC (9); exponential
 * 2^(l-s) * scale for NUQSGD (2) and NATURAL (3), the power of two built by halving 1.0 (exact
 * down to 2^-126, s <= 127); levels[l-1] * scale for TRUNC_NU (10), whose every scale is alpha.
 * Each product and quotient is one float operation. */
static float spec_magnitude(unsigned scheme, unsigned b, uint32_t s, uint32_t level, float scale, const float *lv) {
    float p = 1.0f;
    uint32_t k;
    if (b == 1) return scale; /* QSGD only: code 0 is +scale, 1 is -scale */
    if (level == 0) return 0.0f;
    if (scheme == 2 || scheme == 3) {
        for (k = level; k < s; k++) p *= 0.5f;
        return p * scale;
    }
    if (scheme == 10) return lv[level - 1] * scale;
    return (float)level * (scale / (float)s);
}

static int spec_decode(const uint8_t *m, size_t len, float *out, size_t n_expect);

/* A segmented message (flags bit 3, FORMAT.md 24): the table (m, its CRC, 24-byte entries), then
 * each body decoded as the lone message it is the body of (24.2: the header's fields with the
 * entry's count, width and coder, no checksum), into out + first_j; the bodies fill the message
 * up to the optional checksum over bytes 48 .. the end of the last body. */
static int spec_decode_segments(const uint8_t *m, size_t len, float *out, size_t n_expect) {
    uint64_t n = ld64(m + 16), nseg, off, first = 0, j, k;
    unsigned ck = (m[10] >> 1) & 1u, maxb = 0;
    if (len < 56 || m[6] != 1u || m[8] != 0u || (m[10] & 0xF4u) != 0u || m[11] != 0u || n != n_expect) return 1;
    nseg = ld32(m + 48);
    if (nseg == 0 || nseg > n || (len - 56) / 24 < nseg) return 1;
    if (ld32(m + 52) != spec_crc32c(m + 56, 24 * nseg)) return 1;
    off = 56 + 24 * nseg;
    for (j = 0; j < nseg; j++) {
        const uint8_t *e = m + 56 + 24 * j;
        uint64_t cnt = ld64(e), size = ld64(e + 8);
        unsigned b = e[16], coder = e[17];
        uint8_t *lone;
        int bad;
        for (k = 18; k < 24; k++)
            if (e[k]) return 1;
        if (cnt == 0 || cnt > n - first || b < 2 || b > 16 || (coder != 0 && coder != 1 && coder != 3) ||
            (coder == 3 && b > 8) || size > len - off)
            return 1;
        lone = (uint8_t *)malloc(48 + size);
        if (!lone) exit(2);
        memcpy(lone, m, 48);
        lone[7] = (uint8_t)b;
        lone[8] = (uint8_t)coder;
        lone[10] = (uint8_t)(m[10] & 1u); /* stochastic kept; no checksum, no table */
        for (k = 0; k < 8; k++) lone[16 + k] = (uint8_t)(cnt >> (8 * k));
        memcpy(lone + 48, m + off, size);
        bad = spec_decode(lone, 48 + size, out + first, cnt);
        free(lone);
        if (bad) return 1;
        first += cnt;
        off += size;
        if (b > maxb) maxb = b;
    }
    if (first != n || maxb != m[7] || len != off + 4 * ck) return 1;
    return ck && ld32(m + off) != spec_crc32c(m + 48, off - 48);
}

static int spec_decode(const uint8_t *m, size_t len, float *out, size_t n_expect) {
    unsigned b, ck, coder, scheme, bmin = 1, bmax = 16;
    uint64_t n, B, nb, F, T, i, tail_bytes, q, L = 0, off = 48, ntab = 0;
    const uint8_t *scales, *payload;
    uint32_t s, *codes = NULL;
    float lv[127];
    if (len < 48 || memcmp(m, "DQSG", 4) != 0) return 1;
    if (m[10] & 8u) return spec_decode_segments(m, len, out, n_expect);
    b = m[7];
    ck = (m[10] >> 1) & 1u;
    coder = m[8];
    scheme = m[6];
    n = ld64(m + 16);
    B = ld32(m + 12);
    if (n != n_expect || coder > 3) return 1;
    switch (scheme) { /* the widths each level scheme takes */
    case 1: break;
    case 2: case 3: case 10: bmin = 2; bmax = 8; break;
    case 4: bmin = bmax = 2; break;
    case 9: bmin = 2; break;
    case 5: bmax = 1; break; /* two-means: two scales per bucket (FORMAT.md 22) */
    default: return 1;
    }
    if (b < bmin || b > bmax) return 1;
    if (B == 0) B = n;
    nb = (n + B - 1) / B;
    s = b >= 2 ? (1u << (b - 1)) - 1u : 1u;
    if (scheme == 10) ntab = s; /* TRUNC_NU: s float32 levels follow the scales */
    if (scheme == 5) ntab = nb; /* two-means: nb negative means follow the scales */
    if (coder) { /* coded: u64 payload length, then the scales (and levels) and the coded payload */
        if (len < 56) return 1;
        L = ld64(m + 48);
        off = 56;
        if (len != 56 + 4 * nb + 4 * ntab + L + 4 * ck) return 1;
    } else if (len != 48 + 4 * nb + 4 * ntab + (n * b + 7) / 8 + 4 * ck) {
        return 1;
    }
    if (ck && ld32(m + len - 4) != spec_crc32c(m + 48, len - 52)) return 1; /* FORMAT.md 3.4 */
    scales = m + off;
    for (q = 0; q < ntab && scheme == 10; q++) { /* 0 < l_1 < ... < l_s = 1: positive floats order as their bits */
        uint32_t u = ld32(scales + 4 * nb + 4 * q);
        if (u == 0 || u > 0x3F800000u || (q && u <= ld32(scales + 4 * nb + 4 * q - 4))) return 1;
        lv[q] = from_bits(u);
    }
    if (scheme == 10 && to_bits(lv[ntab - 1]) != 0x3F800000u) return 1;
    payload = scales + 4 * nb + 4 * ntab;
    if (coder) {
        codes = (uint32_t *)malloc(4 * n);
        if (!codes || spec_coded_codes(coder, b, payload, L, n, codes)) {
            free(codes);
            return 1;
        }
    } else {
        F = n / 256;
        T = n % 256;
        tail_bytes = (T * b + 7) / 8;
        for (q = T * b; q < 8 * tail_bytes; q++) /* padding must be zero */
            if (payload[32 * b * F + q / 8] >> (q % 8) & 1u) return 1;
    }
    for (i = 0; i < n; i++) {
        uint32_t code = codes ? codes[i] : spec_code(payload, n, b, i), u = ld32(scales + 4 * (i / B)), sign;
        float v;
        if (u > 0x7E800000u) {
            free(codes);
            return 1;
        }
        if (scheme == 5) { /* code 0: the non-negative mean; 1: the negative mean, sign bit set */
            uint32_t un = ld32(scales + 4 * (nb + i / B));
            if ((un ^ 0x80000000u) > 0x7E800000u) {
                free(codes);
                return 1;
            }
            out[i] = from_bits(code ? un : u);
            continue;
        }
        sign = code >> (b - 1);
        v = spec_magnitude(scheme, b, s, b >= 2 ? code & s : 1u, from_bits(u), lv);
        out[i] = sign ? -v : v;
    }
    free(codes);
    return 0;
}

/* ---------------------------------------------------------------- files */
typedef struct gfile {
    char path[600];
    uint8_t *data;
    size_t len;
} gfile;
static gfile g_files[6 * MAX_CASES];
static size_t g_nfiles;

static void put(const char *dir, const char *name, const char *ext, const void *data, size_t len) {
    gfile *f = &g_files[g_nfiles++];
    int k = snprintf(f->path, sizeof f->path, "%s/%s%s", dir, name, ext);
    if (k < 0 || (size_t)k >= sizeof f->path) {
        fprintf(stderr, "make_golden: path too long\n");
        exit(2);
    }
    f->data = (uint8_t *)malloc(len ? len : 1u);
    if (!f->data) exit(2);
    memcpy(f->data, data, len);
    f->len = len;
}
static void put_floats(const char *dir, const char *name, const char *ext, const float *x, size_t n) {
    uint8_t *b = (uint8_t *)malloc(4 * n);
    size_t i;
    if (!b) exit(2);
    for (i = 0; i < n; i++) {
        uint32_t u = to_bits(x[i]);
        b[4 * i] = (uint8_t)u;
        b[4 * i + 1] = (uint8_t)(u >> 8);
        b[4 * i + 2] = (uint8_t)(u >> 16);
        b[4 * i + 3] = (uint8_t)(u >> 24);
    }
    put(dir, name, ext, b, 4 * n);
    free(b);
}
/* Whole file, or NULL when it cannot be opened. */
static uint8_t *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t cap = 0, got;
    *len = 0;
    if (!f) return NULL;
    for (;;) {
        if (*len == cap) {
            uint8_t *nb = (uint8_t *)realloc(buf, cap = cap ? 2 * cap : 65536u);
            if (!nb) exit(2);
            buf = nb;
        }
        got = fread(buf + *len, 1, cap - *len, f);
        *len += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        fprintf(stderr, "make_golden: read error on %s\n", path);
        exit(2);
    }
    fclose(f);
    return buf;
}
static int write_file(const char *path, const uint8_t *data, size_t len, const char *mode) {
    FILE *f = fopen(path, mode);
    if (!f) return 1;
    if (fwrite(data, 1, len, f) != len) {
        fclose(f);
        return 1;
    }
    return fclose(f) != 0;
}

/* ---------------------------------------------------------------- coded messages
 * A coded case's message msg[0..len) (written with c->coder, residual res0 -> res) must be the
 * fixed message of the same params and input re-coded: dq_recode both ways, the same residual.
 * AUTO must have written a coder (the case is meant to be coded) and the same bytes as that
 * coder forced, which is what the manifest records and test_golden.c re-encodes with. */
static dq_status check_coded(const gcase *c, const dq_params *pc, const float *x, const float *res0, const float *res,
                             const uint8_t *msg, size_t len) {
    size_t n = c->n, capc = dq_encode_bound_coded(n, c->bits), flen = 0, rlen = 0, i;
    uint8_t *fixed = (uint8_t *)malloc(dq_encode_bound(n, c->bits)), *re = (uint8_t *)malloc(capc);
    float *r = (float *)malloc(4 * n);
    dq_params p = *pc;
    dq_status st = DQ_OK;
    if (!fixed || !re || !r) exit(2);
    if (c->written != DQ_CODER_ELIAS && c->written != DQ_CODER_RANS) {
        fprintf(stderr, "make_golden: %s: wrote coder %u, not a coded message\n", c->name, c->written);
        exit(1);
    }
    for (i = 0; i < 2 && st == DQ_OK; i++) { /* the fixed coder, then the coder written, forced */
        p.coder = i ? c->written : GOLDEN_ASK_FIXED;
        memcpy(r, res0, 4 * n);
        st = dq_encode(&p, x, n, c->ef ? r : NULL, i ? re : fixed, i ? capc : dq_encode_bound(n, c->bits),
                       i ? &rlen : &flen);
        if (st == DQ_OK && c->ef && memcmp(r, res, 4 * n) != 0) st = DQ_ERR_SIZE_MISMATCH;
    }
    if (st == DQ_OK && (rlen != len || memcmp(re, msg, len) != 0)) {
        fprintf(stderr, "make_golden: %s: coder %u forced differs from the message written\n", c->name, c->written);
        exit(1);
    }
    if (st == DQ_OK) st = dq_recode(fixed, flen, c->written, re, capc, &rlen);
    if (st == DQ_OK && (rlen != len || memcmp(re, msg, len) != 0)) st = DQ_ERR_CORRUPT;
    if (st == DQ_OK) st = dq_recode(msg, len, DQ_CODER_FIXED, re, capc, &rlen);
    if (st == DQ_OK && (rlen != flen || memcmp(re, fixed, flen) != 0)) st = DQ_ERR_CORRUPT;
    if (st == DQ_OK && len >= flen && c->coder == DQ_CODER_AUTO) st = DQ_ERR_SIZE_MISMATCH; /* AUTO: smaller */
    free(fixed);
    free(re);
    free(r);
    return st;
}

/* ---------------------------------------------------------------- legacy coded files
 * One rule, as in tests/test_golden.c: a frozen coded .dqsg that this library no longer writes
 * is legacy: its wire coder is one encoders no longer write (2, the first rANS layout of library
 * 0.3 to 0.6, FORMAT.md 17.3), or it is larger than the fixed layout (library 0.5 still sent a
 * forced coder so; 0.6 sends the fixed one). It cannot be regenerated, so it is verified
 * instead: the independent decoder and dq_decode agree on it, and dq_recode of it to fixed is
 * the fixed re-encoding; main then checks that the message written today decodes to the same
 * values, and writes and compares .in, .out (.res, .resout) as for every case. Its manifest
 * line keeps the coder it was written with. Returns nonzero after a message on a failure;
 * with no file (a new case) or a file this library writes, c->legacy stays 0. */
static int legacy_file(const char *dir, gcase *c, const dq_params *pc, const float *x, const float *res0,
                       size_t *count) {
    char path[600];
    size_t len = 0, n = c->n, fsize = 0, flen = 0, rlen = 0;
    uint8_t *old, *fixed, *re;
    float *r = (float *)malloc(4 * n), *ref = (float *)malloc(4 * n), *out = (float *)malloc(4 * n);
    dq_params p = *pc;
    int k = snprintf(path, sizeof path, "%s/%s.dqsg", dir, c->name), bad;
    c->legacy = 0;
    if (k < 0 || (size_t)k >= sizeof path || !r || !ref || !out) exit(2);
    p.coder = GOLDEN_ASK_FIXED;
    old = slurp(path, &len);
    if (!old || dq_encode_capacity(&p, n, &fsize) != DQ_OK || len < 56 || old[8] == DQ_CODER_FIXED ||
        old[8] > DQ_CODER_RANS || (old[8] != DQ_CODER_RANS8 && len <= fsize)) {
        free(old);
        free(r);
        free(ref);
        free(out);
        return 0;
    }
    c->legacy = 1;
    c->written = old[8];
    fixed = (uint8_t *)malloc(fsize);
    re = (uint8_t *)malloc(fsize);
    if (!fixed || !re) exit(2);
    memcpy(r, res0, 4 * n);
    bad = dq_encode(&p, x, n, c->ef ? r : NULL, fixed, fsize, &flen) != DQ_OK || flen != fsize;
    bad = bad || dq_decode(old, len, out, n) != DQ_OK || spec_decode(old, len, ref, n) != 0 ||
          memcmp(ref, out, 4 * n) != 0;
    bad = bad || dq_recode(old, len, DQ_CODER_FIXED, re, fsize, &rlen) != DQ_OK || rlen != fsize ||
          memcmp(re, fixed, fsize) != 0;
    if (bad) {
        fprintf(stderr, "make_golden: %s: the legacy coder-%u file %s does not decode as the fixed re-encoding\n",
                c->name, old[8], path);
        return 1;
    }
    c->legacy_out = out;
    ++*count;
    free(old);
    free(fixed);
    free(re);
    free(r);
    free(ref);
    return 0;
}

/* TRUNC and TRUNC_NU: every scale is alpha, and TRUNC_NU's table after the scales is the
 * caller's levels, bit for bit; other schemes: nothing follows the scales. */
static int check_scheme_body(const gcase *c, const uint8_t *msg, const float *levels, unsigned nlev) {
    size_t B = c->bucket == DQ_BUCKET_WHOLE ? c->n : c->bucket, nb = (c->n + B - 1) / B, k;
    const uint8_t *scales = msg + (c->written ? 56 : 48);
    if (msg[6] != (c->scheme ? c->scheme : 1u)) return 1;
    if (c->scheme == DQ_SCHEME_TRUNC || c->scheme == DQ_SCHEME_TRUNC_NU)
        for (k = 0; k < nb; k++)
            if (ld32(scales + 4 * k) != c->alpha) return 1;
    for (k = 0; k < nlev; k++)
        if (ld32(scales + 4 * nb + 4 * k) != to_bits(levels[k])) return 1;
    return 0;
}

/* ---------------------------------------------------------------- segmented messages
 * Independent of the library's encoder, given each bucket's scale as sent: every element's
 * value is what FORMAT.md 5.3, 6.2 to 6.4 and 7 give for c = x (+ residual) with the dither
 * drawn at its index in the whole vector, first_j + t (24.3). msg passed spec_decode. */
static uint32_t spec_draw(uint64_t seed, uint64_t step, uint32_t stream, uint64_t i) { /* FORMAT.md 7 */
    uint64_t z = mix64(seed + 0x9E3779B97F4A7C15ull);
    uint32_t k0, k1, h, kh;
    z = mix64(z ^ (step + 0x3C6EF372FE94F82Aull));
    z = mix64(z ^ ((uint64_t)stream + 0xDAA66D2C7DDF743Full));
    k0 = (uint32_t)z;
    k1 = (uint32_t)(z >> 32);
    kh = k1 ^ ((uint32_t)(i >> 32) * 0x9E3779B9u);
    h = (uint32_t)i ^ k0;
    h ^= h >> 16;
    h *= 0x7FEB352Du;
    h = h ^ (h >> 15) ^ kh;
    h *= 0x846CA68Bu;
    h ^= h >> 16;
    return h >> 8;
}
static int spec_requant_segments(const uint8_t *m, const float *cin, const float *out) {
    uint64_t nseg = ld32(m + 48), off = 56 + 24 * nseg, first = 0, j, t, B0 = ld32(m + 12);
    uint64_t seed = ld64(m + 24), step = ld64(m + 32);
    uint32_t stream = ld32(m + 40);
    int stoch = m[10] & 1u;
    for (j = 0; j < nseg; j++) {
        const uint8_t *e = m + 56 + 24 * j, *sc = m + off + (e[17] ? 8u : 0u);
        uint64_t cnt = ld64(e), B = B0 ? B0 : cnt;
        unsigned b = e[16];
        float smax = (float)((1u << (b - 1)) - 1u);
        for (t = 0; t < cnt; t++) {
            float scale = from_bits(ld32(sc + 4 * (t / B))), inv = scale == 0.0f ? 0.0f : smax / scale;
            float x = cin[first + t], r = from_bits(to_bits(x) & 0x7FFFFFFFu) * inv, f, th, v;
            uint32_t l;
            th = stoch ? (float)spec_draw(seed, step, stream, first + t) * (1.0f / 16777216.0f) : 0.5f;
            if (!(r < smax)) r = smax;
            l = (uint32_t)r;
            f = r - (float)l;
            if (th < f) l++;
            v = (float)l * (scale / smax);
            if (l > 0 && (to_bits(x) >> 31)) v = -v;
            if (to_bits(v) != to_bits(out[first + t])) return 1;
        }
        first += cnt;
        off += ld64(e + 8);
    }
    return 0;
}

/* A segmented case: dq_encode_segments of x (residual res0 -> res), into a buffer of
 * dq_segments_capacity bytes that replaces *msgp; the table read back must be the case's
 * segments with the coders it asks, the checksum flag as the case says; the decoders agree
 * (dq_decode, spec_decode), the values follow from the scales (spec_requant_segments), and the
 * residual follows FORMAT.md 6.6. Returns nonzero after a message. */
static int seg_case(gcase *c, dq_params *p, const float *x, const float *res0, float *res, uint8_t **msgp,
                    size_t *lenp, float *out, float *ref) {
    dq_segment sg[16], back[16];
    size_t cap = 0, len = 0, m = 0, j, first = 0, i, n = c->n;
    float *cin = (float *)malloc(4 * n);
    uint8_t *msg;
    dq_status st;
    if (!cin) exit(2);
    memset(sg, 0, sizeof sg);
    for (j = 0; j < c->nseg; j++) {
        sg[j].count = c->seg_n[j];
        sg[j].bits = c->seg_b[j];
    }
    p->coder = c->segcoder;
    p->bits = 0; /* not used: each segment has its own */
    st = dq_segments_capacity(p, sg, c->nseg, &cap);
    free(*msgp);
    *msgp = msg = (uint8_t *)malloc(cap ? cap : 1u);
    if (!msg) exit(2);
    if (st == DQ_OK) st = dq_encode_segments(p, x, sg, c->nseg, c->ef ? res : NULL, msg, cap, &len);
    if (st == DQ_OK) st = dq_segments_read(msg, len, back, 16, &m);
    if (st == DQ_OK) st = dq_decode(msg, len, out, n);
    if (st != DQ_OK) {
        fprintf(stderr, "make_golden: %s: %s\n", c->name, dq_strerror(st));
        return 1;
    }
    if (m != c->nseg || msg[8] != DQ_CODER_FIXED || msg[7] != c->bits || !(msg[10] & 8u) ||
        ((msg[10] >> 1) & 1u) != (unsigned)c->checksum) {
        fprintf(stderr, "make_golden: %s: the header or the segment count is not what the case asks\n", c->name);
        return 1;
    }
    for (j = 0; j < m; first += c->seg_n[j], j++)
        if (back[j].count != c->seg_n[j] || back[j].bits != c->seg_b[j] || back[j].first != first ||
            back[j].coder != c->seg_c[j]) {
            fprintf(stderr, "make_golden: %s: segment %lu is %lu elements at %u bits, coder %u (case: coder %u)\n",
                    c->name, (unsigned long)j, (unsigned long)back[j].count, back[j].bits, back[j].coder,
                    c->seg_c[j]);
            return 1;
        }
    if (spec_decode(msg, len, ref, n) != 0 || memcmp(ref, out, 4 * n) != 0) {
        fprintf(stderr, "make_golden: %s: dq_decode disagrees with the decoder written from FORMAT.md\n", c->name);
        return 1;
    }
    for (i = 0; i < n; i++) cin[i] = c->ef ? x[i] + res0[i] : x[i];
    if (spec_requant_segments(msg, cin, out) != 0) {
        fprintf(stderr, "make_golden: %s: the values are not FORMAT.md 6 and 7's for the scales sent\n", c->name);
        return 1;
    }
    if (c->ef)
        for (i = 0; i < n; i++)
            if (to_bits(cin[i] - out[i]) != to_bits(res[i])) {
                fprintf(stderr, "make_golden: %s: residual %lu breaks section 6.6\n", c->name, (unsigned long)i);
                return 1;
            }
    free(cin);
    *lenp = len;
    return 0;
}


/* ---------------------------------------------------------------- sparse messages
 * Independent of the library, from doc/FORMAT.md: the index streams of section 18 (GAMMA,
 * VARINT, BITMAP, RICE), random-k's strata (20.4), the values (float32, or the body of the QSGD
 * message of 20.10, read by spec_decode), the selection each scheme makes (20.3), and every
 * quantized value recomputed from the scales sent, the rounding rules (6.4, 6.5) and the dither
 * of (seed, step XOR 2^63, stream) at the value's position j (20.10). */
static int is_sparse(unsigned scheme) {
    return scheme == DQ_SCHEME_TOPK || scheme == DQ_SCHEME_RANDK || scheme == DQ_SCHEME_THRESHOLD;
}
static uint32_t spec_hash32(uint64_t seed, uint64_t step, uint32_t stream, uint32_t j) { /* 7.2 before >> 8 */
    uint64_t z = mix64(seed + 0x9E3779B97F4A7C15ull);
    uint32_t k0, k1, h;
    z = mix64(z ^ (step + 0x3C6EF372FE94F82Aull));
    z = mix64(z ^ ((uint64_t)stream + 0xDAA66D2C7DDF743Full));
    k0 = (uint32_t)z;
    k1 = (uint32_t)(z >> 32);
    h = j ^ k0;
    h ^= h >> 16;
    h *= 0x7FEB352Du;
    h = h ^ (h >> 15) ^ k1;
    h *= 0x846CA68Bu;
    h ^= h >> 16;
    return h;
}
/* Random-k's index j of n with k strata (20.4): a_j = floor(j n / k). */
static uint64_t spec_stratum(uint64_t n, uint64_t k, uint64_t j, uint64_t seed, uint64_t step, uint32_t stream,
                             uint64_t *m) {
    uint64_t a = (j * n) / k, b = j + 1 == k ? n : ((j + 1) * n) / k; /* j n < 2^64: j < k <= n <= 2^32 */
    *m = b - a;
    return a + (((uint64_t)spec_hash32(seed, step, stream, (uint32_t)j) * *m) >> 32);
}
/* The k indices of the index stream s[0..L) for n (FORMAT.md 18), which must use exactly L bytes. */
static int spec_index(const uint8_t *s, uint64_t L, uint64_t n, uint64_t k, uint32_t *idx, unsigned *coder) {
    uint64_t i, next = 0, pos = 0, bits;
    const uint8_t *body = s + 10;
    int bad = 0;
    if (L < 10 || (uint64_t)ld32(s + 1) + 1u != n || (ld64(s + 5) & 0xFFFFFFFFFFull) != k) return 1;
    *coder = s[0];
    L -= 10;
    if (s[0] == 1 || s[0] == 4) { /* GAMMA: z zeros, then z + 1 bits; RICE: q zeros, a one, r bits */
        unsigned r = s[0] == 4 ? body[0] : 0u;
        const uint8_t *b = s[0] == 4 ? body + 1 : body;
        uint64_t BL = s[0] == 4 ? L - 1u : L, z, g, t;
        if (s[0] == 4 && (L < 1 || r > 31)) return 1;
        for (i = 0; i < k; i++) {
            for (z = 0; !bad && !spec_bit(b, BL, &pos, &bad); z++)
                if (z > 64u + n) return 1;
            if (s[0] == 1) {
                for (g = 1, t = 0; t < z; t++) g = g << 1 | spec_bit(b, BL, &pos, &bad);
            } else {
                for (g = z, t = 0; t < r; t++) g = g << 1 | spec_bit(b, BL, &pos, &bad);
                g += 1u; /* the gap is v + 1 */
            }
            if (bad || g > n - next) return 1;
            next += g;
            idx[i] = (uint32_t)(next - 1u);
        }
        bits = 8 * BL;
        if (bits - pos >= 8) return 1;
        while (pos < bits)
            if (spec_bit(b, BL, &pos, &bad)) return 1;
        return 0;
    }
    if (s[0] == 2) { /* VARINT: ceil(k/4) control bytes of 2-bit lengths, then the values gap - 1 */
        uint64_t c = (k + 3) / 4, at = c;
        for (i = 0; i < k; i++) {
            unsigned len = (body[i / 4] >> (2 * (i % 4)) & 3u) + 1u, e;
            uint64_t v = 0;
            if (at + len > L) return 1;
            for (e = 0; e < len; e++) v |= (uint64_t)body[at + e] << (8 * e);
            at += len;
            if (v + 1u > n - next) return 1;
            next += v + 1u;
            idx[i] = (uint32_t)(next - 1u);
        }
        return at != L;
    }
    if (s[0] == 3) { /* BITMAP: bit i of byte i / 8, LSB first */
        uint64_t cnt = 0;
        if (L != (n + 7) / 8) return 1;
        for (i = 0; i < 8 * L; i++)
            if (body[i / 8] >> (i % 8) & 1u) {
                if (i >= n || cnt == k) return 1;
                idx[cnt++] = (uint32_t)i;
            }
        return cnt != k;
    }
    return 1;
}
/* A sparse message: out[0..n) (the values at the indices, zeros elsewhere), and the indices
 * and values themselves in idx, vals (room for n); *kout, *icoder (0 for random-k). */
static int spec_decode_sparse(const uint8_t *m, size_t len, float *out, size_t n, uint32_t *idx, float *vals,
                              uint64_t *kout, unsigned *icoder) {
    unsigned scheme = m[6], b = m[7], ck = (m[10] >> 1) & 1u;
    uint64_t k, at, L = 0, j, V, mj;
    if (len < 56 || memcmp(m, "DQSG", 4) != 0 || !is_sparse(scheme) || ld64(m + 16) != n) return 1;
    k = ld64(m + 48);
    if (k > n) return 1;
    *icoder = 0;
    if (scheme == DQ_SCHEME_RANDK) {
        at = 56;
        for (j = 0; j < k; j++) idx[j] = (uint32_t)spec_stratum(n, k, j, ld64(m + 24), ld64(m + 32), ld32(m + 40), &mj);
    } else {
        if (len < 64) return 1;
        L = ld64(m + 56);
        at = 64 + L;
        if (at > len || spec_index(m + 64, L, n, k, idx, icoder)) return 1;
    }
    if (b == 32) {
        V = 4 * k;
        if (len != at + V + 4 * ck) return 1;
        for (j = 0; j < k; j++) vals[j] = from_bits(ld32(m + at + 4 * j));
    } else if (k == 0) {
        V = 0;
        if (m[8] != 0 || len != at + 4 * ck) return 1;
    } else { /* the QSGD message of the values: 20.10 */
        uint8_t *q;
        int bad;
        if (len < at + 4 * ck) return 1;
        V = len - at - 4 * ck;
        q = (uint8_t *)malloc(48 + V);
        if (!q) exit(2);
        memcpy(q, m, 48);
        q[6] = 1;
        q[10] = (uint8_t)(m[10] & 1u);
        q[11] = 0;
        for (j = 0; j < 8; j++) q[16 + j] = (uint8_t)(k >> (8 * j));
        q[39] = (uint8_t)(q[39] ^ 0x80u); /* step XOR 2^63: the top byte of the u64 at 32 */
        j = spec_crc32c(q, 44);
        q[44] = (uint8_t)j;
        q[45] = (uint8_t)(j >> 8);
        q[46] = (uint8_t)(j >> 16);
        q[47] = (uint8_t)(j >> 24);
        memcpy(q + 48, m + at, V);
        bad = spec_decode(q, 48 + V, vals, k);
        free(q);
        if (bad) return 1;
    }
    if (ck && ld32(m + len - 4) != spec_crc32c(m + 48, len - 52)) return 1;
    for (j = 0; j < n; j++) out[j] = 0.0f;
    for (j = 0; j < k; j++) out[idx[j]] = vals[j];
    *kout = k;
    return 0;
}
/* The selection of FORMAT.md 20.3 from c, as the message says it was made (its scheme, k,
 * key), must be idx[0..k); then each value must be 20.5's (float32) or its quantized form
 * (20.10) given the scales sent. */
static const float *g_sel_c;
static int cmp_sel(const void *a, const void *b) {
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    uint32_t ki = to_bits(g_sel_c[i]) & 0x7FFFFFFFu, kj = to_bits(g_sel_c[j]) & 0x7FFFFFFFu;
    if (ki != kj) return ki > kj ? -1 : 1;
    return i < j ? -1 : i > j;
}
static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}
static int spec_check_sparse(const gcase *c, const uint8_t *m, size_t len, const float *cin, const uint32_t *idx,
                             const float *vals, uint64_t k) {
    uint64_t n = c->n, j, want_k = 0, mj = 1;
    uint32_t *sel = (uint32_t *)malloc(4 * n);
    unsigned b = m[7];
    int bad = 0;
    if (!sel) exit(2);
    if (c->scheme == DQ_SCHEME_TOPK) {
        for (j = 0; j < n; j++) sel[j] = (uint32_t)j;
        g_sel_c = cin;
        qsort(sel, n, 4, cmp_sel);
        want_k = c->k;
        qsort(sel, want_k, 4, cmp_u32);
    } else if (c->scheme == DQ_SCHEME_THRESHOLD) {
        for (j = 0; j < n; j++)
            if ((to_bits(cin[j]) & 0x7FFFFFFFu) > (c->threshold & 0x7FFFFFFFu)) sel[want_k++] = (uint32_t)j;
    } else {
        want_k = c->k;
        for (j = 0; j < want_k; j++) sel[j] = idx[j]; /* the strata were read from the spec */
    }
    if (k != want_k || memcmp(sel, idx, 4 * k) != 0) bad = 1;
    for (j = 0; j < k && !bad; j++) {
        float w = cin[idx[j]], v;
        if (c->scheme == DQ_SCHEME_RANDK) {
            (void)spec_stratum(n, k, j, c->seed, c->step, c->stream, &mj);
            if (c->unbiased) w = w * (float)mj;
        }
        if (b == 32) {
            v = w;
        } else { /* the value's bucket scale as sent, the rounding rule, the dither at j */
            uint64_t B = ld32(m + 12) ? ld32(m + 12) : k;
            const uint8_t *sc = m + (c->scheme == DQ_SCHEME_RANDK ? 56 : 64 + ld64(m + 56)) + (m[8] ? 8u : 0u);
            float scale = from_bits(ld32(sc + 4 * (j / B)));
            float th = (m[10] & 1u) ? (float)spec_draw(c->seed, c->step ^ 0x8000000000000000ull, c->stream, j) *
                                          (1.0f / 16777216.0f)
                                    : 0.5f;
            if (b == 1) {
                float inv = scale == 0.0f ? 0.0f : 0.5f / scale, pr;
                int neg;
                if (m[10] & 1u) {
                    pr = w * inv;
                    pr = 0.5f + pr;
                    neg = !(th < pr);
                } else {
                    neg = (int)(to_bits(w) >> 31);
                }
                v = neg ? -scale : scale;
            } else {
                float smax = (float)((1u << (b - 1)) - 1u), inv = scale == 0.0f ? 0.0f : smax / scale;
                float r = from_bits(to_bits(w) & 0x7FFFFFFFu) * inv, f;
                uint32_t l;
                if (!(r < smax)) r = smax;
                l = (uint32_t)r;
                f = r - (float)l;
                if (th < f) l++;
                v = (float)l * (scale / smax);
                if (l > 0 && (to_bits(w) >> 31)) v = -v;
            }
        }
        if (to_bits(v) != to_bits(vals[j])) bad = 1;
    }
    free(sel);
    (void)len;
    return bad;
}
/* A sparse case: dq_encode into dq_encode_capacity() bytes (residual res0 -> res); the coder
 * the values went out with and the index stream's coder are the case's; both decoders agree;
 * the selection and the values follow from the spec; the residual is c - decoded (20.5). */
static int sparse_case(gcase *c, dq_params *p, const float *x, const float *res0, float *res, uint8_t **msgp,
                       size_t *lenp, float *out, float *ref) {
    size_t cap = 0, len = 0, n = c->n, i;
    uint32_t *idx = (uint32_t *)malloc(4 * n + 4);
    float *vals = (float *)malloc(4 * n + 4), *cin = (float *)malloc(4 * n);
    uint64_t k = 0;
    unsigned icoder = 0, written = c->written;
    uint8_t *msg;
    dq_status st;
    if (!idx || !vals || !cin) exit(2);
    p->bits = c->bits == 32 ? 0u : c->bits; /* 0: float32 values, as a zeroed dq_params asks */
    p->rounding = c->nearest ? DQ_ROUND_NEAREST : DQ_ROUND_DEFAULT;
    p->norm = c->maxnorm ? DQ_NORM_MAX : DQ_NORM_DEFAULT;
    p->coder = c->asked;
    p->k = c->scheme == DQ_SCHEME_THRESHOLD ? 0 : c->k;
    p->threshold = c->scheme == DQ_SCHEME_THRESHOLD ? from_bits(c->threshold) : 0.0f;
    p->unbiased = (unsigned)c->unbiased;
    p->index_coder = c->icoder;
    if (c->bits == 32) p->bucket = 0;
    st = dq_encode_capacity(p, n, &cap);
    free(*msgp);
    *msgp = msg = (uint8_t *)malloc(cap ? cap : 1u);
    if (!msg) exit(2);
    if (st == DQ_OK) st = dq_encode(p, x, n, c->ef ? res : NULL, msg, cap, &len);
    if (st == DQ_OK) st = dq_decode(msg, len, out, n);
    if (st != DQ_OK) {
        fprintf(stderr, "make_golden: %s: %s\n", c->name, dq_strerror(st));
        return 1;
    }
    if (spec_decode_sparse(msg, len, ref, n, idx, vals, &k, &icoder) != 0 || memcmp(ref, out, 4 * n) != 0) {
        fprintf(stderr, "make_golden: %s: dq_decode disagrees with the decoder written from FORMAT.md\n", c->name);
        return 1;
    }
    if (msg[8] != written || icoder != c->sent_icoder || ((msg[10] >> 1) & 1u) != (unsigned)c->checksum ||
        msg[7] != c->bits) {
        fprintf(stderr, "make_golden: %s: values sent with coder %u (case: %u), index coder %u (case: %u), checksum %u\n",
                c->name, msg[8], written, icoder, c->sent_icoder, (msg[10] >> 1) & 1u);
        return 1;
    }
    for (i = 0; i < n; i++) cin[i] = c->ef ? x[i] + res0[i] : x[i];
    if (spec_check_sparse(c, msg, len, cin, idx, vals, k) != 0) {
        fprintf(stderr, "make_golden: %s: the selection or the values are not FORMAT.md 20's\n", c->name);
        return 1;
    }
    if (c->ef)
        for (i = 0; i < n; i++)
            if (to_bits(cin[i] - out[i]) != to_bits(res[i])) {
                fprintf(stderr, "make_golden: %s: residual %lu breaks section 20.5\n", c->name, (unsigned long)i);
                return 1;
            }
    free(idx);
    free(vals);
    free(cin);
    *lenp = len;
    return 0;
}

/* ---------------------------------------------------------------- main */
static char g_manifest[256 * 1024];
static size_t g_mlen;
static void mcat(const char *str) {
    size_t k = strlen(str);
    if (k >= sizeof g_manifest - g_mlen) exit(2);
    memcpy(g_manifest + g_mlen, str, k + 1u);
    g_mlen += k;
}
static void mcat_k(const char *t, int k) { /* t from snprintf(t, 256, ...) returning k */
    if (k < 0 || k >= 256) exit(2);
    mcat(t);
}
static const char *scheme_name(unsigned scheme) {
    switch (scheme) {
    case DQ_SCHEME_NUQSGD: return "nuqsgd";
    case DQ_SCHEME_NATURAL: return "natural";
    case DQ_SCHEME_TERNGRAD: return "terngrad";
    case DQ_SCHEME_TRUNC: return "trunc";
    case DQ_SCHEME_TRUNC_NU: return "trunc-nu";
    case DQ_SCHEME_TWOMEANS: return "twomeans";
    case DQ_SCHEME_TOPK: return "topk";
    case DQ_SCHEME_RANDK: return "randk";
    case DQ_SCHEME_THRESHOLD: return "threshold";
    default: return "qsgd";
    }
}
/* The manifest's norm: asked of the encoder (qsgd, nuqsgd), else the scheme's own. */
static const char *norm_name(const gcase *c) {
    switch (c->scheme) {
    case DQ_SCHEME_NATURAL: return "pow2";
    case DQ_SCHEME_TERNGRAD: return "clip";
    case DQ_SCHEME_TRUNC:
    case DQ_SCHEME_TRUNC_NU: return "alpha";
    case DQ_SCHEME_TWOMEANS: return "twomeans";
    default: return c->maxnorm ? "max" : "l2";
    }
}
static void mprintf_line(const gcase *c, const float *levels, unsigned nlev) {
    static const char *const coder_names[4] = {"fixed", "elias", "rans", "rans32"};
    char t[256];
    int k;
    unsigned l;
    if (c->note) mcat(c->note);
    k = snprintf(t, sizeof t, "%s n=%lu scheme=%s coder=%s bits=%u bucket=", c->name, (unsigned long)c->n,
                 scheme_name(c->scheme), coder_names[c->written], c->bits);
    mcat_k(t, k);
    if (c->bucket == DQ_BUCKET_WHOLE) {
        mcat("whole");
    } else {
        k = snprintf(t, sizeof t, "%lu", (unsigned long)c->bucket);
        mcat_k(t, k);
    }
    k = snprintf(t, sizeof t, " rounding=%s norm=%s seed=%llu step=%llu stream=%lu ef=%d%s",
                 c->nearest ? "nearest" : "stochastic", norm_name(c), (unsigned long long)c->seed,
                 (unsigned long long)c->step, (unsigned long)c->stream, c->ef, c->checksum ? " checksum=1" : "");
    mcat_k(t, k);
    if (c->scheme == DQ_SCHEME_TRUNC || c->scheme == DQ_SCHEME_TRUNC_NU) {
        k = snprintf(t, sizeof t, " alpha=0x%08lX", (unsigned long)c->alpha);
        mcat_k(t, k);
    }
    for (l = 0; l < nlev; l++) {
        k = snprintf(t, sizeof t, "%s0x%08lX", l ? "," : " levels=", (unsigned long)to_bits(levels[l]));
        mcat_k(t, k);
    }
    for (l = 0; l < c->nseg; l++) {
        k = snprintf(t, sizeof t, "%s%lu:%u:%s", l ? "," : " segments=", (unsigned long)c->seg_n[l], c->seg_b[l],
                     coder_names[c->seg_c[l]]);
        mcat_k(t, k);
    }
    if (is_sparse(c->scheme)) {
        static const char *const index_names[5] = {"auto", "gamma", "varint", "bitmap", "rice"};
        if (c->scheme == DQ_SCHEME_THRESHOLD)
            k = snprintf(t, sizeof t, " threshold=0x%08lX", (unsigned long)c->threshold);
        else
            k = snprintf(t, sizeof t, " k=%lu", (unsigned long)c->k);
        mcat_k(t, k);
        if (c->unbiased) mcat(" unbiased=1");
        if (c->scheme != DQ_SCHEME_RANDK) {
            k = snprintf(t, sizeof t, " index=%s", index_names[c->icoder]);
            mcat_k(t, k);
        }
        k = snprintf(t, sizeof t, " asked=%s",
                     c->asked == DQ_CODER_ELIAS   ? "elias"
                     : c->asked == DQ_CODER_RANS  ? "rans32"
                     : c->asked == DQ_CODER_AUTO  ? "auto"
                     : c->asked == DQ_CODER_DEFAULT ? "default"
                                                    : "fixed");
        mcat_k(t, k);
    }
    if (c->nseg) {
        k = snprintf(t, sizeof t, " segcoder=%s",
                     c->segcoder == DQ_CODER_ELIAS  ? "elias"
                     : c->segcoder == DQ_CODER_RANS ? "rans32"
                     : c->segcoder == DQ_CODER_AUTO ? "auto"
                     : c->segcoder == DQ_CODER_DEFAULT ? "default"
                                                       : "fixed");
        mcat_k(t, k);
    }
    mcat("\n");
}

#define MANIFEST_HEAD \
    "# dqsgd golden messages, wire format version %d (doc/FORMAT.md section 14).\n" \
    "# Frozen: written by tests/golden/make_golden.c, which only appends lines; never edit one.\n" \
    "# One case per line: NAME key=value ... Files: NAME.in (input), NAME.dqsg (message),\n" \
    "# NAME.out (dq_decode output), and with ef=1 NAME.res / NAME.resout (residual before/after);\n" \
    "# floats are float32 little-endian. Keys: n elements; scheme qsgd; coder fixed; bits 1..16;\n" \
    "# bucket: elements per scale or whole; rounding stochastic|nearest; norm: the norm asked of\n" \
    "# the encoder, l2|max (1-bit nearest always writes the mean norm); seed, step, stream: the\n" \
    "# dither key, decimal; ef: 1 = error feedback. Keys added later default to what v1 did.\n"

int main(int argc, char **argv) {
    char dir[512];
    int dry = 0, ai = 1, bad = 0, k;
    size_t ci, fi, written = 0, kept = 0, missing = 0, legacy_verified = 0;
    if (ai < argc && !strcmp(argv[ai], "-n")) {
        dry = 1;
        ai++;
    }
    if (ai < argc && argv[ai][0] == '-') {
        fprintf(stderr, "usage: %s [-n] [DIR]   (DIR defaults to tests/golden/v%d)\n", argv[0], DQ_FORMAT_VERSION);
        return 2;
    }
    if (ai < argc)
        k = snprintf(dir, sizeof dir, "%s", argv[ai]);
    else
        k = snprintf(dir, sizeof dir, "tests/golden/v%d", DQ_FORMAT_VERSION);
    if (k < 0 || (size_t)k >= sizeof dir) return 2;
    if (strcmp(dq_simd_backend(), "scalar") != 0)
        fprintf(stderr, "make_golden: note: built with the %s kernels; the scalar reference (-DDQ_NO_SIMD) "
                        "defines the bytes\n", dq_simd_backend());

    add_cases();
    k = snprintf(g_manifest, sizeof g_manifest, MANIFEST_HEAD, DQ_FORMAT_VERSION);
    if (k < 0 || (size_t)k >= sizeof g_manifest) return 2;
    g_mlen = (size_t)k;
    for (ci = 0; ci < g_ncases; ci++) {
        gcase *c = &g_cases[ci];
        size_t n = c->n, cap = is_sparse(c->scheme) ? 1u
                               : c->coder          ? dq_encode_bound_coded(n, c->bits)
                                                   : dq_encode_bound(n, c->bits);
        size_t len = 0, size = 0, i, j;
        float *x = (float *)malloc(4 * n), *res = (float *)malloc(4 * n), *res0 = (float *)malloc(4 * n);
        float *out = (float *)malloc(4 * n), *ref = (float *)malloc(4 * n);
        uint8_t *msg = (uint8_t *)malloc(cap);
        dq_params p;
        dq_status st;
        float levels[127];
        unsigned nlev;
        if (!x || !res || !res0 || !out || !ref || !msg) return 2;
        for (j = 0; j < ci; j++)
            if (!strcmp(g_cases[j].name, c->name)) {
                fprintf(stderr, "make_golden: duplicate case name %s\n", c->name);
                return 2;
            }
        make_input(c->kind, c->iseed, c->eshift, x, n);
        if (c->ef) make_input(c->kind == IN_SPECIAL ? IN_SPECIAL : IN_MIXED, c->iseed + 0x5EEDu, c->eshift - 3, res0, n);
        memcpy(res, res0, 4 * n);
        memset(&p, 0, sizeof p);
        p.scheme = c->scheme ? (dq_scheme)c->scheme : DQ_SCHEME_QSGD;
        p.bits = c->bits;
        p.bucket = c->bucket;
        p.rounding = c->nearest ? DQ_ROUND_NEAREST : DQ_ROUND_STOCHASTIC;
        if (p.scheme == DQ_SCHEME_QSGD || p.scheme == DQ_SCHEME_NUQSGD) /* the others choose their norm */
            p.norm = c->maxnorm ? DQ_NORM_MAX : DQ_NORM_L2;
        nlev = 0;
        if (p.scheme == DQ_SCHEME_TRUNC || p.scheme == DQ_SCHEME_TRUNC_NU) p.alpha = from_bits(c->alpha);
        if (p.scheme == DQ_SCHEME_TRUNC_NU) {
            nlev = (1u << (c->bits - 1)) - 1u;
            make_levels(c->lvrule, c->iseed, nlev, levels);
            p.levels = levels;
        }
        p.seed = c->seed;
        p.step = c->step;
        p.stream = c->stream;
        p.checksum = (unsigned)c->checksum;
        p.coder = c->coder ? c->coder : GOLDEN_ASK_FIXED;
        if (is_sparse(c->scheme)) { /* sparse (FORMAT.md 20) */
            if (sparse_case(c, &p, x, res0, res, &msg, &len, out, ref) != 0) return 1;
            put(dir, c->name, ".dqsg", msg, len);
            goto files;
        }
        if (c->nseg) { /* segmented (FORMAT.md 24) */
            if (seg_case(c, &p, x, res0, res, &msg, &len, out, ref) != 0) return 1;
            c->written = msg[8];
            put(dir, c->name, ".dqsg", msg, len);
            goto files;
        }
        if (c->coder && legacy_file(dir, c, &p, x, res0, &legacy_verified) != 0) return 1;
        st = dq_encode(&p, x, n, c->ef ? res : NULL, msg, cap, &len);
        if (c->legacy) { /* the frozen .dqsg was verified above; .in, .out (.res, .resout) as usual */
            if (st == DQ_OK) st = dq_decode(msg, len, out, n);
            if (st == DQ_OK && (spec_decode(msg, len, ref, n) != 0 || memcmp(ref, out, 4 * n) != 0 ||
                                memcmp(out, c->legacy_out, 4 * n) != 0))
                st = DQ_ERR_CORRUPT;
            if (st != DQ_OK) {
                fprintf(stderr, "make_golden: %s: the re-encoding of a legacy case: %s\n", c->name, dq_strerror(st));
                return 1;
            }
            free(c->legacy_out);
            c->legacy_out = NULL;
            goto files;
        }
        c->written = st == DQ_OK ? msg[8] : 0u;
        if (st == DQ_OK && (c->coder == DQ_CODER_RANS || c->rans32) && c->written != DQ_CODER_RANS) {
            /* a new rANS case must freeze coder 3 (FORMAT.md 17.6): make n larger or the input
             * more compressible (a forced coder larger than fixed is sent fixed; AUTO may pick another) */
            fprintf(stderr, "make_golden: %s: asked for coder %u, wrote coder %u: not a coder-3 case\n", c->name,
                    c->coder, c->written);
            return 1;
        }
        if (st == DQ_OK && c->coder) /* coded: the exact size comes from the codes */
            st = dq_coded_size(msg, len, c->written, &size);
        else if (st == DQ_OK)
            st = dq_encode_capacity(&p, n, &size);
        if (st == DQ_OK && size != len) st = DQ_ERR_SIZE_MISMATCH;
        if (st == DQ_OK) st = dq_decode(msg, len, out, n);
        if (st == DQ_OK && c->coder) st = check_coded(c, &p, x, res0, res, msg, len);
        if (st != DQ_OK) {
            fprintf(stderr, "make_golden: %s: %s\n", c->name, dq_strerror(st));
            return 1;
        }
        if (spec_decode(msg, len, ref, n) != 0 || memcmp(ref, out, 4 * n) != 0) {
            fprintf(stderr, "make_golden: %s: dq_decode disagrees with the decoder written from FORMAT.md\n",
                    c->name);
            return 1;
        }
        if (check_scheme_body(c, msg, levels, nlev) != 0) {
            fprintf(stderr, "make_golden: %s: the message does not carry alpha or the levels asked\n", c->name);
            return 1;
        }
        if (c->ef)
            for (i = 0; i < n; i++) {
                float want = (x[i] + res0[i]) - out[i]; /* FORMAT.md 6.6, in float */
                if (to_bits(want) != to_bits(res[i])) {
                    fprintf(stderr, "make_golden: %s: residual %lu breaks section 6.6\n", c->name, (unsigned long)i);
                    return 1;
                }
            }
        put(dir, c->name, ".dqsg", msg, len);
    files:
        put_floats(dir, c->name, ".in", x, n);
        put_floats(dir, c->name, ".out", out, n);
        if (c->ef) {
            put_floats(dir, c->name, ".res", res0, n);
            put_floats(dir, c->name, ".resout", res, n);
        }
        mprintf_line(c, levels, nlev);
        free(x);
        free(res);
        free(res0);
        free(out);
        free(ref);
        free(msg);
    }

    /* pass 1: nothing that exists may differ */
    for (fi = 0; fi < g_nfiles; fi++) {
        size_t len;
        uint8_t *old = slurp(g_files[fi].path, &len);
        if (!old) {
            missing++;
            continue;
        }
        if (len != g_files[fi].len || memcmp(old, g_files[fi].data, len) != 0) {
            fprintf(stderr, "make_golden: %s exists with different bytes: frozen files never change "
                            "(a format change needs a new format version and directory)\n", g_files[fi].path);
            bad = 1;
        } else {
            kept++;
        }
        free(old);
    }
    {
        char mpath[600];
        size_t olen;
        uint8_t *old;
        k = snprintf(mpath, sizeof mpath, "%s/MANIFEST", dir);
        if (k < 0 || (size_t)k >= sizeof mpath) return 2;
        old = slurp(mpath, &olen);
        if (old && (olen > g_mlen || memcmp(old, g_manifest, olen) != 0)) {
            fprintf(stderr, "make_golden: %s is not a prefix of the manifest this generator writes: cases "
                            "may only be appended\n", mpath);
            bad = 1;
        }
        if (bad) {
            fprintf(stderr, "make_golden: refused, nothing written\n");
            return 1;
        }
        if (dry) {
            int stale = missing > 0 || !old || olen != g_mlen;
            printf("make_golden -n: %lu cases, %lu files identical, %lu missing, manifest %s; %lu legacy "
                   "messages verified\n",
                   (unsigned long)g_ncases, (unsigned long)kept, (unsigned long)missing,
                   !old ? "missing" : olen == g_mlen ? "identical" : "would be extended",
                   (unsigned long)legacy_verified);
            free(old);
            return stale;
        }
        /* pass 2: add what is missing */
        (void)GOLDEN_MKDIR(dir); /* usually exists already */
        for (fi = 0; fi < g_nfiles; fi++) {
            size_t len;
            uint8_t *cur = slurp(g_files[fi].path, &len);
            if (cur) {
                free(cur);
                continue;
            }
            if (write_file(g_files[fi].path, g_files[fi].data, g_files[fi].len, "wb") != 0) {
                fprintf(stderr, "make_golden: cannot write %s (does the directory exist?)\n", g_files[fi].path);
                return 1;
            }
            written++;
        }
        if (!old || olen < g_mlen) {
            if (write_file(mpath, (const uint8_t *)g_manifest + (old ? olen : 0u), g_mlen - (old ? olen : 0u),
                           old ? "ab" : "wb") != 0) {
                fprintf(stderr, "make_golden: cannot write %s\n", mpath);
                return 1;
            }
        }
        printf("make_golden: %s: %lu cases, %lu files written, %lu already identical, manifest %s; %lu legacy "
               "messages verified\n", dir,
               (unsigned long)g_ncases, (unsigned long)written, (unsigned long)kept,
               !old ? "written" : olen == g_mlen ? "unchanged" : "extended", (unsigned long)legacy_verified);
        free(old);
    }
    for (fi = 0; fi < g_nfiles; fi++) free(g_files[fi].data);
    return 0;
}
