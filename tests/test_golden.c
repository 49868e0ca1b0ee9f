/* test_golden.c - the golden files (doc/FORMAT.md section 14): frozen messages with their
 * inputs and decoded outputs, written once by tests/golden/make_golden.c.
 *
 * Usage: test_golden [DIR]   (DIR defaults to tests/golden; `make test` passes it)
 *
 * For every format version 1 .. DQ_FORMAT_VERSION, DIR/v<N>/MANIFEST lists the cases, one a
 * line. For each case:
 *  (a) dq_header_read accepts NAME.dqsg and reports the manifest's parameters and the file size;
 *      trunc and trunc-nu messages carry the manifest's alpha as every scale, and trunc-nu its
 *      levels after the scales;
 *  (b) dq_decode gives NAME.out bit for bit, and so do dq_decode_add with weight 1 onto -0.0
 *      (onto +0.0 too, except that -0.0 comes out +0.0, as IEEE addition says);
 *  (c) for the version this library writes: dq_encode of NAME.in (with residual NAME.res when
 *      ef=1) gives exactly NAME.dqsg (and the residual NAME.resout), dq_encode_block gives it
 *      without the header and dq_decode_block decodes that body to NAME.out; a coded message
 *      (coder=elias|rans|rans32, encoded with that coder forced) is also the fixed message
 *      re-coded (dq_recode both ways, dq_coded_size), and the block API checks use that fixed
 *      body. One rule for frozen files this library no longer writes ("legacy": a wire coder
 *      encoders no longer write, i.e. coder=rans, wire coder 2 of library 0.3 to 0.6; or a coded
 *      form larger than the fixed layout, which 0.5 sent and 0.6 replaced with the fixed one):
 *      instead of byte identity, dq_recode of the file to fixed must be the fixed re-encoding,
 *      and the re-encoding (what dq_recode of that fixed message with the asked coder gives:
 *      coder 3 for rANS, or fixed where that is smaller) must be written by dq_encode and
 *      decode to NAME.out bit for bit;
 *  (d) L2 messages (qsgd, nuqsgd): dq_message_norm2 equals the sum of the squared scales, and
 *      agrees with ||input||^2 to float rounding; other norms give DQ_ERR_PARAM.
 * Segmented and sparse messages have their own runs (run_seg_case, run_sparse_case).
 * Older versions get (a), (b) and (d): a decoder keeps reading every earlier format version.
 * A missing or unreadable file fails its case, and each version must have at least
 * k_min_cases[version] cases, so an empty or missing directory cannot pass.
 * Plain C99 stdio only (no directory listing): the manifest names the files. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dqsgd.h"
#include "harness.h"
#include "internals.h"

/* The coder that asks dq_encode for the fixed layout whatever n: DQ_CODER_FIXED_ONLY where
 * the library has it (since 0.7, dq_params.coder = 0 asks DQ_CODER_AUTO from DQ_CODER_AUTO_MIN
 * elements on), else 0 (DQ_CODER_FIXED). Frozen coder=fixed cases are re-encoded with it. */
#ifdef DQ_CODER_FIXED_ONLY
#define GOLDEN_ASK_FIXED DQ_CODER_FIXED_ONLY
#else
#define GOLDEN_ASK_FIXED DQ_CODER_FIXED
#endif

/* Cases each format version must have, indexed by version. Raise it when make_golden.c adds
 * cases; a new format version needs its own entry and directory. */
static const unsigned long k_min_cases[] = {0, 163};
#define N_MIN_CASES (sizeof k_min_cases / sizeof k_min_cases[0])

/* ---------------------------------------------------------------- files (C99 stdio) */
/* Whole file; NULL if it cannot be opened or read. */
static uint8_t *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t cap = 0, got;
    *len = 0;
    if (!f) return NULL;
    for (;;) {
        if (*len == cap) {
            uint8_t *nb;
            cap = cap ? 2u * cap : 16384u;
            nb = (uint8_t *)realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        got = fread(buf + *len, 1, cap - *len, f);
        *len += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    return buf;
}
static uint32_t ld32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static float f32(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint32_t u32(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
/* float32 little-endian file of exactly n values; NULL (after a failed CHECK) otherwise */
static float *read_floats(const char *path, size_t n) {
    size_t len, i;
    uint8_t *b = read_all(path, &len);
    float *x;
    CHECKF(b != NULL, "cannot read %s", path);
    if (!b) return NULL;
    CHECKF(len == 4u * n, "%s: %lu bytes, expected %lu (n = %lu)", path, (unsigned long)len, (unsigned long)(4u * n),
           (unsigned long)n);
    if (len != 4u * n) {
        free(b);
        return NULL;
    }
    x = (float *)xmalloc(4u * n);
    for (i = 0; i < n; i++) x[i] = f32(ld32(b + 4u * i));
    free(b);
    return x;
}
/* a[0..n) and b[0..n) bit for bit; reports the first difference */
static void check_same(const char *what, const float *a, const float *b, size_t n) {
    size_t i;
    for (i = 0; i < n; i++)
        if (u32(a[i]) != u32(b[i])) break;
    CHECKF(i == n, "%s: element %lu is 0x%08lX, expected 0x%08lX", what, (unsigned long)i,
           i < n ? (unsigned long)u32(a[i]) : 0ul, i < n ? (unsigned long)u32(b[i]) : 0ul);
}

/* ---------------------------------------------------------------- manifest */
typedef struct gcase {
    char name[64];
    size_t n;
    unsigned scheme, coder, bits;
    uint32_t bucket; /* DQ_BUCKET_WHOLE or the bucket */
    int nearest, ef, checksum;
    dq_norm norm; /* l2|max: asked of the encoder; pow2|clip|alpha: the scheme's own, asked of none */
    uint64_t seed, step;
    uint32_t stream;
    uint32_t alpha;       /* trunc, trunc-nu: the float32 bit pattern of dq_params.alpha */
    unsigned nlev;        /* trunc-nu: the levels, 2^(bits-1)-1 of them */
    float levels[127];
    /* segmented (FORMAT.md 24): segments=COUNT:BITS:CODER,... and segcoder=, the coder asked */
    unsigned nseg, segcoder;
    size_t seg_n[64];
    unsigned seg_b[64], seg_c[64];
    /* sparse (FORMAT.md 20; scheme topk|randk|threshold): k= or threshold=, unbiased=, index=,
     * asked= (the dq_params.coder asked; coder= is the coder the values were sent with) */
    size_t k;
    uint32_t threshold;
    int unbiased;
    unsigned icoder, asked;
} gcase;

enum {
    K_N = 1 << 0,
    K_SCHEME = 1 << 1,
    K_CODER = 1 << 2,
    K_BITS = 1 << 3,
    K_BUCKET = 1 << 4,
    K_ROUNDING = 1 << 5,
    K_NORM = 1 << 6,
    K_SEED = 1 << 7,
    K_STEP = 1 << 8,
    K_STREAM = 1 << 9,
    K_EF = 1 << 10,
    K_ALL = (1 << 11) - 1, /* keys added later get a default and are not required: */
    K_CHECKSUM = 1 << 11,
    K_ALPHA = 1 << 12, /* trunc, trunc-nu (and only they) */
    K_LEVELS = 1 << 13, /* trunc-nu (and only it) */
    K_SEGMENTS = 1 << 14, /* segmented messages: segments= and segcoder= together */
    K_SEGCODER = 1 << 15,
    K_K = 1 << 16, /* sparse messages (library 0.11): k= or threshold=, asked=, and */
    K_THRESHOLD = 1 << 17,
    K_UNBIASED = 1 << 18, /* randk only */
    K_INDEX = 1 << 19,    /* topk and threshold */
    K_ASKED = 1 << 20
};

static int parse_u64(const char *s, uint64_t max, uint64_t *v) {
    char *end;
    unsigned long long x;
    if (*s < '0' || *s > '9') return 0;
    errno = 0;
    x = strtoull(s, &end, 10);
    if (errno || *end || x > max) return 0;
    *v = (uint64_t)x;
    return 1;
}

/* "0x" and exactly 8 hex digits: a float32 bit pattern (alpha=, levels=). */
static int parse_hex32(const char *s, size_t len, uint32_t *v) {
    size_t i;
    uint32_t x = 0;
    if (len != 10 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return 0;
    for (i = 2; i < 10; i++) {
        char ch = s[i];
        unsigned d = ch >= '0' && ch <= '9' ? (unsigned)(ch - '0')
                     : ch >= 'a' && ch <= 'f' ? (unsigned)(ch - 'a' + 10)
                     : ch >= 'A' && ch <= 'F' ? (unsigned)(ch - 'A' + 10)
                                              : 16u;
        if (d > 15u) return 0;
        x = x << 4 | d;
    }
    *v = x;
    return 1;
}
/* levels=0xHHHHHHHH,0xHHHHHHHH,...: 1 to 127 bit patterns, in order */
static int parse_levels(const char *s, gcase *c) {
    c->nlev = 0;
    for (;;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        uint32_t u;
        if (c->nlev == 127u || !parse_hex32(s, len, &u)) return 0;
        c->levels[c->nlev++] = f32(u);
        if (!e) return 1;
        s = e + 1;
    }
}
/* the wire coder names of the manifest (coder=, and each segment's) */
static int coder_of(const char *s, size_t len, unsigned *coder) {
    if (len == 5 && !strncmp(s, "fixed", 5))
        *coder = DQ_CODER_FIXED;
    else if (len == 5 && !strncmp(s, "elias", 5))
        *coder = DQ_CODER_ELIAS;
    else if (len == 6 && !strncmp(s, "rans32", 6))
        *coder = DQ_CODER_RANS;
    else
        return 0;
    return 1;
}
/* segments=COUNT:BITS:CODER,...: 1 to 64 segments, counts >= 1, widths 2..16, coders fixed,
 * elias or rans32 (the coder each segment was sent with) */
static int parse_segments(const char *s, gcase *c) {
    c->nseg = 0;
    for (;;) {
        const char *e = strchr(s, ','), *end = e ? e : s + strlen(s);
        char *q;
        unsigned long long cnt, b;
        if (c->nseg == 64u || *s < '0' || *s > '9') return 0;
        errno = 0;
        cnt = strtoull(s, &q, 10);
        if (errno || *q != ':' || cnt < 1u || cnt > (unsigned long long)(SIZE_MAX / 4u)) return 0;
        s = q + 1;
        if (*s < '0' || *s > '9') return 0;
        b = strtoull(s, &q, 10);
        if (errno || *q != ':' || b < 2u || b > 16u) return 0;
        s = q + 1;
        if (s > end || !coder_of(s, (size_t)(end - s), &c->seg_c[c->nseg])) return 0;
        c->seg_n[c->nseg] = (size_t)cnt;
        c->seg_b[c->nseg++] = (unsigned)b;
        if (!e) return 1;
        s = e + 1;
    }
}
static const struct {
    const char *name;
    unsigned scheme;
} k_schemes[] = {{"qsgd", DQ_SCHEME_QSGD},         {"nuqsgd", DQ_SCHEME_NUQSGD}, {"natural", DQ_SCHEME_NATURAL},
                 {"terngrad", DQ_SCHEME_TERNGRAD}, {"trunc", DQ_SCHEME_TRUNC},   {"trunc-nu", DQ_SCHEME_TRUNC_NU},
                 {"twomeans", DQ_SCHEME_TWOMEANS}, {"topk", DQ_SCHEME_TOPK},     {"randk", DQ_SCHEME_RANDK},
                 {"threshold", DQ_SCHEME_THRESHOLD}};
static int is_sparse(unsigned scheme) {
    return scheme == DQ_SCHEME_TOPK || scheme == DQ_SCHEME_RANDK || scheme == DQ_SCHEME_THRESHOLD;
}
static const struct {
    const char *name;
    dq_norm norm;
} k_norms[] = {{"l2", DQ_NORM_L2},     {"max", DQ_NORM_MAX},     {"pow2", DQ_NORM_POW2},
               {"clip", DQ_NORM_CLIP}, {"alpha", DQ_NORM_ALPHA}, {"twomeans", DQ_NORM_TWOMEANS}};
/* The norm the manifest gives a scheme: the one asked (qsgd, nuqsgd: l2 or max), else its own. */
static int norm_fits(unsigned scheme, dq_norm norm) {
    switch (scheme) {
    case DQ_SCHEME_NATURAL: return norm == DQ_NORM_POW2;
    case DQ_SCHEME_TERNGRAD: return norm == DQ_NORM_CLIP;
    case DQ_SCHEME_TRUNC:
    case DQ_SCHEME_TRUNC_NU: return norm == DQ_NORM_ALPHA;
    case DQ_SCHEME_TWOMEANS: return norm == DQ_NORM_TWOMEANS;
    default: return norm == DQ_NORM_L2 || norm == DQ_NORM_MAX;
    }
}

/* One manifest line into c; 0 with a message in err on any problem. */
static int parse_case(char *line, gcase *c, char *err, size_t errlen) {
    char *tok = strtok(line, " \t");
    unsigned seen = 0;
    size_t i;
    memset(c, 0, sizeof *c);
    if (!tok || strlen(tok) >= sizeof c->name) {
        snprintf(err, errlen, "bad case name");
        return 0;
    }
    for (i = 0; tok[i]; i++) {
        char ch = tok[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
              ch == '-')) {
            snprintf(err, errlen, "bad character in case name %s", tok);
            return 0;
        }
    }
    strcpy(c->name, tok);
    while ((tok = strtok(NULL, " \t")) != NULL) {
        char *val = strchr(tok, '=');
        uint64_t v = 0;
        unsigned key;
        int ok = 1;
        if (!val) {
            snprintf(err, errlen, "%s: token '%s' is not key=value", c->name, tok);
            return 0;
        }
        *val++ = '\0';
        if (!strcmp(tok, "n")) {
            key = K_N;
            ok = parse_u64(val, (uint64_t)SIZE_MAX / 4u, &v) && v >= 1u;
            c->n = (size_t)v;
        } else if (!strcmp(tok, "scheme")) {
            size_t j;
            key = K_SCHEME;
            for (j = 0; j < sizeof k_schemes / sizeof k_schemes[0]; j++)
                if (!strcmp(val, k_schemes[j].name)) break;
            ok = j < sizeof k_schemes / sizeof k_schemes[0];
            c->scheme = ok ? k_schemes[j].scheme : 0u;
        } else if (!strcmp(tok, "coder")) {
            key = K_CODER;
            /* the wire coder of the frozen message: rans is coder 2 (library 0.3 to 0.6, read but no
             * longer written), rans32 coder 3 (0.7, FORMAT.md 17.6) */
            ok = !strcmp(val, "fixed") || !strcmp(val, "elias") || !strcmp(val, "rans") || !strcmp(val, "rans32");
            c->coder = !strcmp(val, "elias")    ? DQ_CODER_ELIAS
                       : !strcmp(val, "rans")   ? DQ_CODER_RANS8
                       : !strcmp(val, "rans32") ? DQ_CODER_RANS
                                                : DQ_CODER_FIXED;
        } else if (!strcmp(tok, "bits")) { /* 32: float32 values (sparse), checked below */
            key = K_BITS;
            ok = parse_u64(val, 32u, &v) && v >= 1u && (v <= 16u || v == 32u);
            c->bits = (unsigned)v;
        } else if (!strcmp(tok, "bucket")) { /* 0: none (sparse float32 values), checked below */
            key = K_BUCKET;
            if (!strcmp(val, "whole")) {
                c->bucket = DQ_BUCKET_WHOLE;
            } else {
                ok = parse_u64(val, 0xFFFFFFF8u, &v) && v % 8u == 0u;
                c->bucket = (uint32_t)v;
            }
        } else if (!strcmp(tok, "rounding")) {
            key = K_ROUNDING;
            ok = !strcmp(val, "stochastic") || !strcmp(val, "nearest");
            c->nearest = !strcmp(val, "nearest");
        } else if (!strcmp(tok, "norm")) {
            size_t j;
            key = K_NORM;
            for (j = 0; j < sizeof k_norms / sizeof k_norms[0]; j++)
                if (!strcmp(val, k_norms[j].name)) break;
            ok = j < sizeof k_norms / sizeof k_norms[0];
            c->norm = ok ? k_norms[j].norm : DQ_NORM_DEFAULT;
        } else if (!strcmp(tok, "seed")) {
            key = K_SEED;
            ok = parse_u64(val, UINT64_MAX, &c->seed);
        } else if (!strcmp(tok, "step")) {
            key = K_STEP;
            ok = parse_u64(val, UINT64_MAX, &c->step);
        } else if (!strcmp(tok, "stream")) {
            key = K_STREAM;
            ok = parse_u64(val, UINT32_MAX, &v);
            c->stream = (uint32_t)v;
        } else if (!strcmp(tok, "ef")) {
            key = K_EF;
            ok = parse_u64(val, 1u, &v);
            c->ef = (int)v;
        } else if (!strcmp(tok, "checksum")) {
            key = K_CHECKSUM;
            ok = parse_u64(val, 1u, &v);
            c->checksum = (int)v;
        } else if (!strcmp(tok, "alpha")) {
            key = K_ALPHA;
            ok = parse_hex32(val, strlen(val), &c->alpha);
        } else if (!strcmp(tok, "levels")) {
            key = K_LEVELS;
            ok = parse_levels(val, c);
        } else if (!strcmp(tok, "segments")) {
            key = K_SEGMENTS;
            ok = parse_segments(val, c);
        } else if (!strcmp(tok, "segcoder")) { /* the dq_params.coder dq_encode_segments was asked */
            key = K_SEGCODER;
            ok = 1;
            if (!strcmp(val, "fixed"))
                c->segcoder = GOLDEN_ASK_FIXED;
            else if (!strcmp(val, "elias"))
                c->segcoder = DQ_CODER_ELIAS;
            else if (!strcmp(val, "rans32"))
                c->segcoder = DQ_CODER_RANS;
            else if (!strcmp(val, "auto"))
                c->segcoder = DQ_CODER_AUTO;
            else if (!strcmp(val, "default"))
                c->segcoder = DQ_CODER_DEFAULT;
            else
                ok = 0;
        } else if (!strcmp(tok, "k")) {
            key = K_K;
            ok = parse_u64(val, (uint64_t)SIZE_MAX / 4u, &v) && v >= 1u;
            c->k = (size_t)v;
        } else if (!strcmp(tok, "threshold")) {
            key = K_THRESHOLD;
            ok = parse_hex32(val, strlen(val), &c->threshold);
        } else if (!strcmp(tok, "unbiased")) {
            key = K_UNBIASED;
            ok = parse_u64(val, 1u, &v);
            c->unbiased = (int)v;
        } else if (!strcmp(tok, "index")) {
            static const char *const names[5] = {"auto", "gamma", "varint", "bitmap", "rice"};
            unsigned j;
            key = K_INDEX;
            for (j = 0; j < 5u && strcmp(val, names[j]); j++) {}
            ok = j < 5u;
            c->icoder = j;
        } else if (!strcmp(tok, "asked")) { /* the dq_params.coder the sparse message was asked */
            key = K_ASKED;
            ok = 1;
            if (!strcmp(val, "fixed"))
                c->asked = GOLDEN_ASK_FIXED;
            else if (!strcmp(val, "elias"))
                c->asked = DQ_CODER_ELIAS;
            else if (!strcmp(val, "rans32"))
                c->asked = DQ_CODER_RANS;
            else if (!strcmp(val, "auto"))
                c->asked = DQ_CODER_AUTO;
            else if (!strcmp(val, "default"))
                c->asked = DQ_CODER_DEFAULT;
            else
                ok = 0;
        } else { /* a key from a newer make_golden.c: this test must learn what it means */
            snprintf(err, errlen, "%s: unknown key '%s' (teach tests/test_golden.c)", c->name, tok);
            return 0;
        }
        if (!ok || (seen & key)) {
            snprintf(err, errlen, "%s: bad or repeated value %s=%s", c->name, tok, val);
            return 0;
        }
        seen |= key;
    }
    if ((seen & K_ALL) != K_ALL) {
        snprintf(err, errlen, "%s: missing keys (mask 0x%X of 0x%X)", c->name, seen, (unsigned)K_ALL);
        return 0;
    }
    if (!norm_fits(c->scheme, c->norm)) {
        snprintf(err, errlen, "%s: norm does not fit the scheme", c->name);
        return 0;
    }
    if (!(seen & K_ALPHA) != !(c->scheme == DQ_SCHEME_TRUNC || c->scheme == DQ_SCHEME_TRUNC_NU)) {
        snprintf(err, errlen, "%s: alpha= goes with scheme trunc and trunc-nu, and only there", c->name);
        return 0;
    }
    if (!(seen & K_LEVELS) != (c->scheme != DQ_SCHEME_TRUNC_NU) ||
        (c->scheme == DQ_SCHEME_TRUNC_NU && (c->bits < 2u || c->bits > 8u || c->nlev != (1u << (c->bits - 1u)) - 1u))) {
        snprintf(err, errlen, "%s: levels= goes with scheme trunc-nu, 2^(bits-1)-1 of them", c->name);
        return 0;
    }
    if (is_sparse(c->scheme)) { /* k= (topk, randk) or threshold=, asked=; index= but for randk; unbiased= randk */
        if (!(seen & K_ASKED) || !(seen & K_K) != (c->scheme == DQ_SCHEME_THRESHOLD) ||
            !(seen & K_THRESHOLD) != (c->scheme != DQ_SCHEME_THRESHOLD) ||
            ((seen & K_INDEX) && c->scheme == DQ_SCHEME_RANDK) || ((seen & K_UNBIASED) && c->scheme != DQ_SCHEME_RANDK) ||
            (c->bits == 32u && (c->bucket != 0 || c->nearest || c->norm != DQ_NORM_L2 || c->coder != DQ_CODER_FIXED)) ||
            (c->bits != 32u && c->bucket == 0)) {
            snprintf(err, errlen, "%s: the keys of a sparse case do not fit together", c->name);
            return 0;
        }
    } else if ((seen & (K_K | K_THRESHOLD | K_UNBIASED | K_INDEX | K_ASKED)) || c->bits > 16u || c->bucket == 0) {
        snprintf(err, errlen, "%s: k=, threshold=, unbiased=, index=, asked=, bits=32 and bucket=0 are for sparse cases",
                 c->name);
        return 0;
    }
    if (!(seen & K_SEGMENTS) != !(seen & K_SEGCODER)) {
        snprintf(err, errlen, "%s: segments= and segcoder= go together", c->name);
        return 0;
    }
    if (seen & K_SEGMENTS) { /* QSGD, header coder fixed, the counts sum to n, bits the widest */
        size_t sum = 0;
        unsigned maxb = 0;
        for (i = 0; i < c->nseg; i++) {
            sum += c->seg_n[i];
            if (c->seg_b[i] > maxb) maxb = c->seg_b[i];
        }
        if (c->scheme != DQ_SCHEME_QSGD || c->coder != DQ_CODER_FIXED || sum != c->n || maxb != c->bits) {
            snprintf(err, errlen, "%s: segments= needs scheme qsgd, coder fixed, counts summing to n, bits the widest",
                     c->name);
            return 0;
        }
    }
    return 1;
}

/* ---------------------------------------------------------------- one case */
static char g_label[160];
static void case_begin(const char *label) {
    snprintf(g_label, sizeof g_label, "%s", label);
    dq_t_cur = g_label;
    dq_t_cur_failed = 0;
}
static void case_end(void) { /* as RUN() in harness.h */
    if (dq_t_cur_failed) {
        dq_t_failed++;
        fprintf(stderr, "  not ok %s [%s]\n", dq_t_cur, DQ_TEST_ISA);
    } else {
        dq_t_passed++;
    }
}

static void path_of(char *buf, size_t cap, const char *dir, const char *name, const char *ext) {
    int k = snprintf(buf, cap, "%s/%s%s", dir, name, ext);
    CHECKF(k >= 0 && (size_t)k < cap, "path too long: %s/%s%s", dir, name, ext);
}

/* msg decodes to want[0..n) bit for bit through dq_decode (nothing written past count),
 * dq_decode_add with weight 1 onto -0.0, and dq_message_open + dq_message_decode; out has
 * room for n + 1 floats. */
static void check_decodes(const char *what, const uint8_t *msg, size_t len, const float *want, size_t n, float *out) {
    char lbl[96];
    dq_message m;
    dq_status st;
    size_t i;
    out[n] = 12345.0f; /* sentinel: nothing past count is written */
    st = dq_decode(msg, len, out, n + 1u);
    CHECKF(st == DQ_OK, "%s: dq_decode: %s", what, dq_strerror(st));
    snprintf(lbl, sizeof lbl, "%s: dq_decode vs .out", what);
    if (st == DQ_OK) check_same(lbl, out, want, n);
    CHECK(u32(out[n]) == u32(12345.0f));
    for (i = 0; i < n; i++) out[i] = -0.0f; /* -0 + v == v for every v, -0.0 included */
    st = dq_decode_add(msg, len, 1.0f, out, n);
    CHECKF(st == DQ_OK, "%s: dq_decode_add: %s", what, dq_strerror(st));
    snprintf(lbl, sizeof lbl, "%s: dq_decode_add onto -0.0 vs .out", what);
    if (st == DQ_OK) check_same(lbl, out, want, n);
    st = dq_message_open(msg, len, &m);
    CHECKF(st == DQ_OK, "%s: dq_message_open: %s", what, dq_strerror(st));
    if (st == DQ_OK) {
        st = dq_message_decode(&m, out, n);
        CHECKF(st == DQ_OK, "%s: dq_message_decode: %s", what, dq_strerror(st));
        snprintf(lbl, sizeof lbl, "%s: dq_message_decode vs .out", what);
        if (st == DQ_OK) check_same(lbl, out, want, n);
    }
}


/* dq_message_norm2 against ||input||^2: each scale is its bucket norm rounded to float (2^-23
 * relative on the square); buckets below 2^-100 were sent as 0 (< 2^-200 each). */
static void check_norm2(double got, double exact, size_t nb) {
    double tol = 2.5 * 5.9604644775390625e-08 * exact + (double)nb * 6.2230152778611417e-61;
    CHECKF(got - exact <= tol && exact - got <= tol, "norm2 %.17g, ||input||^2 %.17g", got, exact);
}

/* A case's files: the message, the input, the decoded output and, with error feedback, the
 * residual before and after. Returns 0 (having failed a CHECK) when one is missing. */
static int load_case(const char *dir, const gcase *c, size_t n, uint8_t **msg, size_t *len, float **x, float **want,
                     float **res, float **resout) {
    char path[1024];
    path_of(path, sizeof path, dir, c->name, ".dqsg");
    *msg = read_all(path, len);
    CHECKF(*msg != NULL, "cannot read %s", path);
    path_of(path, sizeof path, dir, c->name, ".in");
    *x = read_floats(path, n);
    path_of(path, sizeof path, dir, c->name, ".out");
    *want = read_floats(path, n);
    if (c->ef) {
        path_of(path, sizeof path, dir, c->name, ".res");
        *res = read_floats(path, n);
        path_of(path, sizeof path, dir, c->name, ".resout");
        *resout = read_floats(path, n);
    }
    return *msg && *x && *want && (!c->ef || (*res && *resout));
}

/* ---------------------------------------------------------------- segmented cases
 * A segmented message (FORMAT.md 24): (a) the header (flag bit 3, the widest width, coder 0,
 * segments), the table read from its bytes as 24.1 and 24.2 lay it out (m, the CRC of the
 * entries, each entry's count, size, width, coder and zero bytes; the sizes add up to the file)
 * is the manifest's, and dq_segments_read agrees; (b) every decoder gives NAME.out, and so do
 * ranges: each segment alone, pairs across a boundary, and the whole vector; (c) dq_encode_segments
 * of NAME.in (and NAME.res) with the coder asked gives NAME.dqsg (and NAME.resout) byte for byte,
 * and a segment whose dither indices are those of a lone message (the first, or every segment
 * when rounding to nearest) has the body of the lone message dq_encode writes for its elements;
 * (d) the L2 norm is the sum of the squared scales of every segment. */
static void run_seg_case(const char *dir, unsigned ver, const gcase *c) {
    char lbl[96];
    size_t n = c->n, len = 0, i, j, m = 0, off, first, nb = 0, cap = 0, blen = 0;
    uint8_t *msg, *buf = NULL;
    float *x = NULL, *want = NULL, *res = NULL, *resout = NULL, *out = NULL, *r = NULL;
    size_t sfirst[64], soff[64]; /* each segment's first element and body offset, from the bytes */
    dq_segment seg[64], back[64];
    dq_header h;
    dq_status st;
    dq_params p;
    unsigned ck = c->checksum ? 1u : 0u;

    if (!load_case(dir, c, n, &msg, &len, &x, &want, &res, &resout)) goto done;

    /* (a) the header, then the table from the bytes */
    st = dq_header_read(msg, len, &h);
    CHECKF(st == DQ_OK, "dq_header_read: %s", dq_strerror(st));
    if (st != DQ_OK) goto done;
    CHECKF(h.version == ver, "version %u in directory v%u", h.version, ver);
    CHECKF(h.scheme == DQ_SCHEME_QSGD && h.coder == DQ_CODER_FIXED && h.bits == c->bits, "scheme %u coder %u bits %u",
           h.scheme, h.coder, h.bits);
    CHECKF(h.norm == c->norm, "norm %d, expected %d", (int)h.norm, (int)c->norm);
    CHECKF(h.flags == ((c->nearest ? 0u : DQ_FLAG_STOCHASTIC) | (ck ? DQ_FLAG_CHECKSUM : 0u) | DQ_FLAG_SEGMENTS),
           "flags 0x%X", h.flags);
    CHECKF(h.bucket == (c->bucket == DQ_BUCKET_WHOLE ? 0u : c->bucket), "bucket %lu", (unsigned long)h.bucket);
    CHECK(h.seed == c->seed && h.step == c->step && h.stream == c->stream);
    CHECKF(h.count == n && h.msg_size == len && h.segments == c->nseg, "count %lu, msg_size %lu, %lu segments",
           (unsigned long)h.count, (unsigned long)h.msg_size, (unsigned long)h.segments);
    CHECK(dq_verify(msg, len) == DQ_OK);
    if (h.count != n || h.msg_size != len || h.segments != c->nseg || len < 56u + 24u * c->nseg) goto done;
    CHECKF(dq_t_ld32(msg + 48) == c->nseg, "m = %lu", (unsigned long)dq_t_ld32(msg + 48));
    CHECK(dq_t_ld32(msg + 52) == dq_t_crc32c(msg + 56, 24u * c->nseg));
    off = 56u + 24u * c->nseg;
    first = 0;
    for (j = 0; j < c->nseg; j++) {
        const uint8_t *e = msg + 56u + 24u * j;
        uint64_t size = dq_t_ld64(e + 8);
        size_t bk = c->bucket == DQ_BUCKET_WHOLE ? c->seg_n[j] : c->bucket, nbj = (c->seg_n[j] - 1u) / bk + 1u;
        CHECKF(dq_t_ld64(e) == c->seg_n[j] && e[16] == c->seg_b[j] && e[17] == c->seg_c[j],
               "entry %lu: count %lu, width %u, coder %u", (unsigned long)j, (unsigned long)dq_t_ld64(e), e[16], e[17]);
        for (i = 18; i < 24; i++) CHECKF(e[i] == 0, "entry %lu: byte %lu is not zero", (unsigned long)j, (unsigned long)i);
        if (c->seg_c[j] == DQ_CODER_FIXED) /* 24.2: a fixed body is the scales and the packed codes */
            CHECKF(size == 4u * nbj + (c->seg_n[j] * c->seg_b[j] + 7u) / 8u, "entry %lu: size %lu", (unsigned long)j,
                   (unsigned long)size);
        else if (size >= 8u + 4u * nbj && size <= len - off) /* a coded body: its length field, scales, payload */
            CHECKF(dq_t_ld64(msg + off) == size - 8u - 4u * nbj, "entry %lu: the length field", (unsigned long)j);
        CHECK(size <= len - off);
        if (size > len - off) goto done;
        sfirst[j] = first;
        soff[j] = (size_t)off;
        first += c->seg_n[j];
        off += (size_t)size;
        nb += nbj;
    }
    CHECKF(off + 4u * ck == len, "the bodies end at %lu, the file has %lu bytes", (unsigned long)off,
           (unsigned long)len);
    if (ck) CHECK(dq_t_ld32(msg + off) == dq_t_crc32c(msg + 48, off - 48u));
    st = dq_segments_read(msg, len, back, 64, &m);
    CHECKF(st == DQ_OK && m == c->nseg, "dq_segments_read: %s, %lu segments", dq_strerror(st), (unsigned long)m);
    for (j = 0; j < c->nseg && st == DQ_OK; j++)
        CHECKF(back[j].count == c->seg_n[j] && back[j].bits == c->seg_b[j] && back[j].coder == c->seg_c[j] &&
                   back[j].first == sfirst[j] &&
                   back[j].size == (j + 1u < c->nseg ? soff[j + 1u] : len - 4u * ck) - soff[j],
               "dq_segments_read: segment %lu", (unsigned long)j);

    /* (b) the decoders, whole and in ranges */
    out = (float *)xmalloc(4u * (n + 1u));
    check_decodes(".dqsg", msg, len, want, n, out);
    for (j = 0; j <= c->nseg; j++) { /* each segment, then two across a boundary; j = nseg: everything */
        size_t b = j < c->nseg ? sfirst[j] : 0u, e = j < c->nseg ? b + c->seg_n[j] : n;
        for (i = 0; i < 2; i++) {
            if (i == 1 && j + 1u >= c->nseg) break;
            if (i == 1) e += c->seg_n[j + 1u];
            st = dq_decode_range(msg, len, b, e, out);
            snprintf(lbl, sizeof lbl, "dq_decode_range [%lu, %lu) vs .out", (unsigned long)b, (unsigned long)e);
            CHECKF(st == DQ_OK, "%s: %s", lbl, dq_strerror(st));
            if (st == DQ_OK) check_same(lbl, out, want + b, e - b);
        }
    }

    /* (c) re-encode */
    memset(&p, 0, sizeof p);
    p.scheme = DQ_SCHEME_QSGD;
    p.bucket = c->bucket;
    p.rounding = c->nearest ? DQ_ROUND_NEAREST : DQ_ROUND_STOCHASTIC;
    p.norm = c->norm;
    p.seed = c->seed;
    p.step = c->step;
    p.stream = c->stream;
    p.checksum = ck;
    p.coder = c->segcoder;
    if (ver == (unsigned)DQ_FORMAT_VERSION) {
        memset(seg, 0, sizeof seg);
        for (j = 0; j < c->nseg; j++) {
            seg[j].count = c->seg_n[j];
            seg[j].bits = c->seg_b[j];
        }
        st = dq_segments_capacity(&p, seg, c->nseg, &cap);
        CHECKF(st == DQ_OK && cap >= len, "dq_segments_capacity: %s, %lu bytes", dq_strerror(st), (unsigned long)cap);
        if (st != DQ_OK || cap < len) goto done;
        buf = (uint8_t *)xmalloc(cap);
        r = (float *)xmalloc(4u * n);
        if (c->ef) memcpy(r, res, 4u * n);
        st = dq_encode_segments(&p, x, seg, c->nseg, c->ef ? r : NULL, buf, cap, &blen);
        CHECKF(st == DQ_OK, "dq_encode_segments: %s", dq_strerror(st));
        if (st == DQ_OK) {
            for (i = 0; i < len && i < blen; i++)
                if (buf[i] != msg[i]) break;
            CHECKF(blen == len && i == len, "dq_encode_segments wrote %lu bytes, differing from .dqsg at byte %lu",
                   (unsigned long)blen, (unsigned long)i);
            if (c->ef) check_same("residual after dq_encode_segments vs .resout", r, resout, n);
        }
        for (j = 0; j < c->nseg; j++) { /* lone messages where the dither indices agree */
            dq_params q = p;
            size_t qcap, qlen = 0, body = (j + 1u < c->nseg ? soff[j + 1u] : len - 4u * ck) - soff[j];
            uint8_t *lone;
            if (j > 0 && !c->nearest) continue;
            q.bits = c->seg_b[j];
            q.checksum = 0;
            q.coder = c->seg_c[j] == DQ_CODER_FIXED ? GOLDEN_ASK_FIXED : c->seg_c[j];
            qcap = dq_encode_bound_coded(c->seg_n[j], c->seg_b[j]);
            lone = (uint8_t *)xmalloc(qcap);
            if (c->ef) memcpy(r, res, 4u * n);
            st = dq_encode(&q, x + sfirst[j], c->seg_n[j], c->ef ? r + sfirst[j] : NULL, lone, qcap, &qlen);
            CHECKF(st == DQ_OK, "segment %lu alone: dq_encode: %s", (unsigned long)j, dq_strerror(st));
            if (st == DQ_OK) {
                CHECKF(qlen == DQ_HEADER_SIZE + body && memcmp(lone + DQ_HEADER_SIZE, msg + soff[j], body) == 0,
                       "segment %lu: the body differs from the lone message's (%lu bytes, body %lu)",
                       (unsigned long)j, (unsigned long)qlen, (unsigned long)body);
                if (c->ef) check_same("segment alone: residual vs .resout", r + sfirst[j], resout + sfirst[j],
                                      c->seg_n[j]);
            }
            free(lone);
        }
    }

    /* (d) the message norm: every segment's scales (coded bodies: after the length field) */
    {
        double got = -1.0, sum = 0.0, exact = 0.0;
        st = dq_message_norm2(msg, len, &got);
        if (c->norm == DQ_NORM_L2) {
            CHECKF(st == DQ_OK, "dq_message_norm2: %s", dq_strerror(st));
            for (j = 0; j < c->nseg; j++) {
                size_t bk = c->bucket == DQ_BUCKET_WHOLE ? c->seg_n[j] : c->bucket, k;
                const uint8_t *sc = msg + soff[j] + (c->seg_c[j] == DQ_CODER_FIXED ? 0u : 8u);
                for (k = 0; k < (c->seg_n[j] - 1u) / bk + 1u; k++) {
                    double s = (double)f32(ld32(sc + 4u * k));
                    sum += s * s;
                }
            }
            CHECKF(got - sum <= 1e-12 * sum && sum - got <= 1e-12 * sum, "norm2 %.17g, squared scales %.17g", got,
                   sum);
            for (i = 0; i < n; i++) {
                float ci = c->ef ? x[i] + res[i] : x[i];
                exact += (double)ci * (double)ci;
            }
            check_norm2(got, exact, nb);
        } else {
            CHECKF(st == DQ_ERR_PARAM, "dq_message_norm2 on a non-L2 message: %s", dq_strerror(st));
        }
    }
done:
    free(msg);
    free(buf);
    free(x);
    free(want);
    free(res);
    free(resout);
    free(out);
    free(r);
}


/* ---------------------------------------------------------------- sparse cases
 * A sparse message (FORMAT.md 20): (a) the header (scheme, the width, the coder the values went
 * with, the norm: the one asked, the mean for 1-bit nearest, L2 as reported for float32 values;
 * the flags, bucket, count, key), k and the sizes; the index stream decodes (dq_index_decode)
 * to the positions .out is taken from and uses the coder asked; a composed message's values
 * part, under a QSGD header of its fields (count k, step XOR 2^63), decodes to the values .out
 * holds there (FORMAT.md 20.10); (b) every decoder gives .out (decode-add onto +0.0: -0.0 comes
 * out +0.0); (c) dq_encode of .in (and .res) into dq_encode_capacity() bytes gives .dqsg (and
 * .resout); (d) neither ranges nor dq_message_norm2 take sparse messages. */
static void run_sparse_case(const char *dir, unsigned ver, const gcase *c) {
    size_t n = c->n, len = 0, i, k, at, cap = 0, blen = 0;
    uint8_t *msg = NULL, *buf = NULL;
    float *x = NULL, *want = NULL, *res = NULL, *resout = NULL, *out = NULL, *r = NULL;
    int cm = c->bits != 32u;
    unsigned ck = c->checksum ? 1u : 0u;
    dq_norm wnorm = cm && c->bits == 1u && c->nearest ? DQ_NORM_MEAN : c->norm;
    dq_header h;
    dq_status st;
    dq_params p;
    if (!load_case(dir, c, n, &msg, &len, &x, &want, &res, &resout)) goto done;
    st = dq_header_read(msg, len, &h);
    CHECKF(st == DQ_OK, "dq_header_read: %s", dq_strerror(st));
    if (st != DQ_OK) goto done;
    k = h.nnz;
    CHECKF(h.version == ver && h.scheme == c->scheme && h.bits == c->bits && h.coder == c->coder,
           "version %u scheme %u bits %u coder %u", h.version, h.scheme, h.bits, h.coder);
    CHECKF(h.norm == wnorm, "norm %d, expected %d", (int)h.norm, (int)wnorm);
    CHECKF(h.flags == ((cm && !c->nearest ? DQ_FLAG_STOCHASTIC : 0u) | (ck ? DQ_FLAG_CHECKSUM : 0u) |
                       (c->unbiased ? DQ_FLAG_RESCALED : 0u)),
           "flags 0x%X", h.flags);
    CHECKF(h.bucket == (c->bucket == DQ_BUCKET_WHOLE ? 0u : c->bucket), "bucket %lu", (unsigned long)h.bucket);
    CHECK(h.count == n && h.seed == c->seed && h.step == c->step && h.stream == c->stream && h.msg_size == len);
    CHECK(c->scheme == DQ_SCHEME_THRESHOLD || k == c->k);
    CHECK(dq_verify(msg, len) == DQ_OK && dq_t_ld64(msg + 48) == k);
    if (h.msg_size != len || h.count != n) goto done;
    at = c->scheme == DQ_SCHEME_RANDK ? 56u : 64u + (size_t)dq_t_ld64(msg + 56);
    CHECK(h.payload_size == len - 4u * ck - (c->scheme == DQ_SCHEME_RANDK ? 56u : 64u));
    if (ck) CHECK(dq_t_ld32(msg + len - 4) == dq_t_crc32c(msg + 48, len - 52));
    if (!cm) CHECK(len == at + 4u * k + 4u * ck);
    if (c->scheme != DQ_SCHEME_RANDK && at <= len) { /* the index stream: where .out's values are */
        uint32_t *idx = (uint32_t *)xmalloc((k + 1u) * sizeof *idx);
        float *vals = (float *)xmalloc((k + 1u) * sizeof *vals);
        size_t k2 = 0, j;
        st = dq_index_decode(msg + 64, at - 64u, idx, k, &k2);
        CHECKF(st == DQ_OK && k2 == k, "dq_index_decode: %s", dq_strerror(st));
        CHECKF(c->icoder == 0 || msg[64] == c->icoder, "index coder %u, asked %u", msg[64], c->icoder);
        for (j = 0, i = 0; st == DQ_OK && i < n; i++) { /* zeros off the set */
            if (j < k && idx[j] == i) {
                j++;
                continue;
            }
            if (u32(want[i]) != 0u) break;
        }
        CHECKF(st != DQ_OK || i == n, ".out is not zero at %lu, off the index set", (unsigned long)i);
        if (st == DQ_OK && cm && k) { /* the values part is the body of the QSGD message of the values */
            size_t vlen = len - at - 4u * ck;
            uint8_t *q = (uint8_t *)xmalloc(DQ_HEADER_SIZE + vlen);
            memcpy(q, msg, DQ_HEADER_SIZE);
            q[6] = DQ_SCHEME_QSGD;
            dq_t_st16(q + 10, dq_t_ld16(msg + 10) & DQ_FLAG_STOCHASTIC);
            dq_t_st64(q + 16, k);
            dq_t_st64(q + 32, dq_t_ld64(msg + 32) ^ ((uint64_t)1 << 63));
            dq_t_st32(q + 44, dq_t_crc32c(q, 44));
            memcpy(q + DQ_HEADER_SIZE, msg + at, vlen);
            st = dq_decode(q, DQ_HEADER_SIZE + vlen, vals, k);
            CHECKF(st == DQ_OK, "the values under a QSGD header: %s", dq_strerror(st));
            for (j = 0; st == DQ_OK && j < k; j++)
                if (u32(vals[j]) != u32(want[idx[j]])) break;
            CHECKF(st != DQ_OK || j == k, "value %lu differs from .out", (unsigned long)j);
            free(q);
        }
        free(idx);
        free(vals);
    }
    /* (b) the decoders */
    out = (float *)xmalloc(4u * (n + 1u));
    out[n] = 12345.0f;
    CHECK(dq_decode(msg, len, out, n + 1u) == DQ_OK && u32(out[n]) == u32(12345.0f));
    check_same("dq_decode vs .out", out, want, n);
    for (i = 0; i < n; i++) out[i] = 0.0f;
    CHECK(dq_decode_add(msg, len, 1.0f, out, n) == DQ_OK);
    for (i = 0; i < n; i++)
        if (u32(out[i]) != u32(0.0f + want[i])) break;
    CHECKF(i == n, "dq_decode_add onto +0.0: element %lu", (unsigned long)i);
    {
        dq_message m;
        CHECK(dq_message_open(msg, len, &m) == DQ_OK && dq_message_decode(&m, out, n) == DQ_OK);
        check_same("dq_message_decode vs .out", out, want, n);
    }
    /* (c) re-encode */
    memset(&p, 0, sizeof p);
    p.scheme = (dq_scheme)c->scheme;
    p.bits = cm ? c->bits : 0u;
    p.bucket = c->bucket;
    p.rounding = c->nearest ? DQ_ROUND_NEAREST : DQ_ROUND_DEFAULT;
    p.norm = c->norm == DQ_NORM_MAX ? DQ_NORM_MAX : DQ_NORM_DEFAULT;
    p.seed = c->seed;
    p.step = c->step;
    p.stream = c->stream;
    p.checksum = ck;
    p.coder = c->asked;
    p.k = c->k;
    p.threshold = f32(c->threshold);
    p.unbiased = (unsigned)c->unbiased;
    p.index_coder = c->icoder;
    if (ver == (unsigned)DQ_FORMAT_VERSION) {
        st = dq_encode_capacity(&p, n, &cap);
        CHECKF(st == DQ_OK && cap >= len, "dq_encode_capacity: %s, %lu bytes", dq_strerror(st), (unsigned long)cap);
        if (st != DQ_OK || cap < len) goto done;
        buf = (uint8_t *)xmalloc(cap);
        r = (float *)xmalloc(4u * n);
        if (c->ef) memcpy(r, res, 4u * n);
        st = dq_encode(&p, x, n, c->ef ? r : NULL, buf, cap, &blen);
        CHECKF(st == DQ_OK, "dq_encode: %s", dq_strerror(st));
        if (st == DQ_OK) {
            for (i = 0; i < len && i < blen; i++)
                if (buf[i] != msg[i]) break;
            CHECKF(blen == len && i == len, "dq_encode wrote %lu bytes, differing from .dqsg at byte %lu",
                   (unsigned long)blen, (unsigned long)i);
            if (c->ef) check_same("residual after dq_encode vs .resout", r, resout, n);
        }
    }
    /* (d) */
    {
        double got = 0.0;
        CHECK(dq_decode_range(msg, len, 0, n, out) == DQ_ERR_PARAM && dq_message_norm2(msg, len, &got) == DQ_ERR_PARAM);
    }
done:
    free(msg);
    free(buf);
    free(x);
    free(want);
    free(res);
    free(resout);
    free(out);
    free(r);
}

/* A segment may not carry a coder encoders no longer send (FORMAT 24.2: 0, 1 or 3). The legacy
 * file's body, spliced as the one segment of a message dq_encode_segments wrote for the same
 * elements (entry size and coder byte set, table and header CRCs resealed), is DQ_ERR_CORRUPT;
 * the same splice of the body this library writes instead (`now`, coder 3 or fixed) decodes to
 * NAME.out, so the refusal is the coder's, not the splice's. */
static size_t splice_segment(const uint8_t *seg, const uint8_t *lone, size_t len, uint8_t *out) {
    size_t body = len - DQ_HEADER_SIZE, head = DQ_HEADER_SIZE + 8u + 24u; /* m, table CRC, one entry */
    memcpy(out, seg, head);
    dq_t_st64(out + 56 + 8, body);
    out[56 + 17] = lone[8];
    memcpy(out + head, lone + DQ_HEADER_SIZE, body);
    dq_t_st32(out + 52, dqt_crc32c(out + 56, 24u));
    dq_t_st32(out + 44, dqt_crc32c(out, 44u));
    return head + body;
}
static void check_legacy_segment(const gcase *c, const dq_params *p, const float *x, size_t n, const uint8_t *msg,
                                 size_t len, const uint8_t *now, size_t nlen, const float *want, float *out) {
    dq_segment seg;
    dq_params q = *p;
    size_t cap, slen = 0, blen;
    uint8_t *sm, *spliced;
    dq_status st;
    if (c->checksum || c->bits < 2 || c->scheme != DQ_SCHEME_QSGD) return; /* a segment's body: no checksum */
    memset(&seg, 0, sizeof seg);
    seg.count = n;
    seg.bits = c->bits;
    q.coder = DQ_CODER_RANS;
    CHECK(dq_segments_capacity(&q, &seg, 1, &cap) == DQ_OK);
    sm = (uint8_t *)xmalloc(cap);
    spliced = (uint8_t *)xmalloc(cap + len + nlen);
    st = dq_encode_segments(&q, x, &seg, 1, NULL, sm, cap, &slen);
    CHECKF(st == DQ_OK && dq_t_ld32(sm + 48) == 1u, "dq_encode_segments: %s", dq_strerror(st));
    if (st == DQ_OK) {
        blen = splice_segment(sm, msg, len, spliced);
        st = dq_decode(spliced, blen, out, n);
        CHECKF(st == DQ_ERR_CORRUPT, "a segment with the legacy coder %u: status %s", msg[8], dq_strerror(st));
        blen = splice_segment(sm, now, nlen, spliced);
        check_decodes("the same segment with this library's coder", spliced, blen, want, n, out);
    }
    free(spliced);
    free(sm);
}

static void run_case(const char *dir, unsigned ver, const gcase *c) {
    size_t n = c->n, len = 0, i, nb, blen, off = c->coder ? DQ_HEADER_SIZE + 8u : DQ_HEADER_SIZE;
    uint8_t *msg, *buf = NULL, *fixed = NULL, *recoded = NULL;
    float *x = NULL, *want = NULL, *res = NULL, *resout = NULL, *out = NULL, *cin = NULL;
    dq_header h;
    dq_status st;
    dq_params p;
    /* 1-bit nearest QSGD writes the mean norm (scaled sign), whatever was asked */
    dq_norm wnorm = c->scheme == DQ_SCHEME_QSGD && c->bits == 1u && c->nearest ? DQ_NORM_MEAN : c->norm;
    uint32_t B;
    if (c->nseg) {
        run_seg_case(dir, ver, c);
        return;
    }
    if (is_sparse(c->scheme)) {
        run_sparse_case(dir, ver, c);
        return;
    }

    if (!load_case(dir, c, n, &msg, &len, &x, &want, &res, &resout)) goto done;

    /* (a) the header says what the manifest says */
    st = dq_header_read(msg, len, &h);
    CHECKF(st == DQ_OK, "dq_header_read: %s", dq_strerror(st));
    if (st != DQ_OK) goto done;
    CHECKF(h.version == ver, "version %u in directory v%u", h.version, ver);
    CHECK(h.header_size == DQ_HEADER_SIZE);
    CHECKF(h.scheme == c->scheme && h.coder == c->coder, "scheme %u coder %u", h.scheme, h.coder);
    CHECKF(h.bits == c->bits, "bits %u", h.bits);
    CHECKF(h.norm == wnorm, "norm %d, expected %d", (int)h.norm, (int)wnorm);
    CHECKF(h.flags == ((c->nearest ? 0u : DQ_FLAG_STOCHASTIC) | (c->checksum ? DQ_FLAG_CHECKSUM : 0u)), "flags 0x%X",
           h.flags);
    CHECK(dq_verify(msg, len) == DQ_OK);
    CHECKF(h.bucket == (c->bucket == DQ_BUCKET_WHOLE ? 0u : c->bucket), "bucket %lu", (unsigned long)h.bucket);
    CHECKF(h.count == n, "count %lu", (unsigned long)h.count);
    CHECK(h.seed == c->seed && h.step == c->step && h.stream == c->stream);
    CHECKF(h.msg_size == len, "msg_size %lu, file %lu bytes", (unsigned long)h.msg_size, (unsigned long)len);
    if (h.count != n || h.msg_size != len) goto done;
    B = c->bucket == DQ_BUCKET_WHOLE ? (uint32_t)0 : c->bucket;
    nb = B ? (n - 1u) / B + 1u : 1u;
    CHECK(len >= off + 4u * (nb + c->nlev)); /* the scales and levels are in the file */
    if (len < off + 4u * (nb + c->nlev)) goto done;
    if (c->scheme == DQ_SCHEME_TRUNC || c->scheme == DQ_SCHEME_TRUNC_NU) { /* every scale is alpha */
        for (i = 0; i < nb; i++)
            if (ld32(msg + off + 4u * i) != c->alpha) break;
        CHECKF(i == nb, "scale %lu is not alpha 0x%08lX", (unsigned long)i, (unsigned long)c->alpha);
    }
    for (i = 0; i < c->nlev; i++) /* trunc-nu: the levels follow the scales */
        if (ld32(msg + off + 4u * (nb + i)) != u32(c->levels[i])) break;
    CHECKF(i == c->nlev, "level %lu differs from the manifest", (unsigned long)i);

    /* (b) decode, decode-add */
    out = (float *)xmalloc(4u * (n + 1u));
    check_decodes(".dqsg", msg, len, want, n, out);
    for (i = 0; i < n; i++) out[i] = 0.0f;
    st = dq_decode_add(msg, len, 1.0f, out, n);
    CHECKF(st == DQ_OK, "dq_decode_add: %s", dq_strerror(st));
    for (i = 0; i < n && st == DQ_OK; i++) {
        float w = 0.0f + want[i];
        if (u32(out[i]) != u32(w)) {
            CHECKF(0, "dq_decode_add onto +0.0: element %lu is 0x%08lX, expected 0x%08lX", (unsigned long)i,
                   (unsigned long)u32(out[i]), (unsigned long)u32(w));
            break;
        }
    }

    /* (c) re-encode with the version this library writes */
    memset(&p, 0, sizeof p);
    p.scheme = (dq_scheme)c->scheme;
    p.bits = c->bits;
    p.bucket = c->bucket;
    p.rounding = c->nearest ? DQ_ROUND_NEAREST : DQ_ROUND_STOCHASTIC;
    p.norm = c->norm == DQ_NORM_L2 || c->norm == DQ_NORM_MAX ? c->norm : DQ_NORM_DEFAULT; /* others: chosen */
    p.alpha = f32(c->alpha); /* 0 unless trunc, trunc-nu */
    p.levels = c->nlev ? c->levels : NULL;
    p.seed = c->seed;
    p.step = c->step;
    p.stream = c->stream;
    p.checksum = (unsigned)c->checksum;
    p.coder = c->coder ? c->coder : GOLDEN_ASK_FIXED;
    if (ver == (unsigned)DQ_FORMAT_VERSION) {
        float *r = c->ef ? (float *)xmalloc(4u * n) : NULL;
        size_t cap = c->coder ? dq_encode_bound_coded(n, c->bits) : dq_encode_bound(n, c->bits), size = 0, body;
        const uint8_t *fmsg = msg; /* the fixed message: msg, or the fixed re-encoding */
        const uint8_t *wmsg = msg; /* what dq_encode must write: msg, or for a legacy file its re-coding */
        size_t fsize = 0, wlen = len;
        buf = (uint8_t *)xmalloc(cap);
        if (c->coder) { /* coded: the fixed re-encoding, the file re-coded to it and back */
            dq_params pf = p;
            size_t flen = 0, rlen = 0;
            int legacy; /* the one rule (top of the file): a coded file this library no longer writes */
            pf.coder = GOLDEN_ASK_FIXED;
            CHECK(dq_encode_capacity(&pf, n, &fsize) == DQ_OK);
            legacy = c->coder == DQ_CODER_RANS8 || len > fsize;
            fixed = (uint8_t *)xmalloc(fsize);
            recoded = (uint8_t *)xmalloc(cap);
            if (r) memcpy(r, res, 4u * n);
            st = dq_encode(&pf, x, n, r, fixed, fsize, &flen);
            CHECKF(st == DQ_OK && flen == fsize, "dq_encode, fixed: %s", dq_strerror(st));
            if (st != DQ_OK) goto block;
            if (r) check_same("residual after dq_encode (fixed) vs .resout", r, resout, n);
            fmsg = fixed;
            st = dq_recode(msg, len, DQ_CODER_FIXED, recoded, cap, &rlen);
            CHECKF(st == DQ_OK && rlen == fsize && memcmp(recoded, fixed, fsize) == 0,
                   "dq_recode of .dqsg to fixed (%s, %lu bytes) is not the fixed re-encoding (%lu bytes)",
                   dq_strerror(st), (unsigned long)rlen, (unsigned long)fsize);
            CHECK(dq_coded_size(msg, len, DQ_CODER_FIXED, &size) == DQ_OK && size == fsize);
            st = dq_recode(fixed, fsize, c->coder, recoded, cap, &rlen);
            CHECKF(st == DQ_OK, "dq_recode from fixed: %s", dq_strerror(st));
            if (st != DQ_OK) goto block;
            CHECK(dq_coded_size(fixed, fsize, c->coder, &size) == DQ_OK && size == rlen);
            if (legacy) { /* the message this library writes instead: the asked coder, or fixed */
                unsigned asked = c->coder == DQ_CODER_RANS8 ? DQ_CODER_RANS : c->coder;
                CHECKF((recoded[8] == asked && rlen <= fsize) || (recoded[8] == DQ_CODER_FIXED && rlen == fsize),
                       "legacy: the re-coding has coder %u and %lu bytes (asked %u, fixed %lu bytes)", recoded[8],
                       (unsigned long)rlen, asked, (unsigned long)fsize);
                CHECKF(rlen != len || memcmp(recoded, msg, len) != 0, "legacy, but this library writes the file");
                check_decodes("legacy: the re-encoding", recoded, rlen, want, n, out);
                if (c->coder == DQ_CODER_RANS8) check_legacy_segment(c, &p, x, n, msg, len, recoded, rlen, want, out);
                wmsg = recoded;
                wlen = rlen;
            } else {
                CHECKF(rlen == len && memcmp(recoded, msg, len) == 0, "dq_recode from fixed differs from .dqsg");
                CHECK(dq_coded_size(msg, len, c->coder, &size) == DQ_OK && size == len);
            }
        } else {
            CHECK(dq_encode_capacity(&p, n, &size) == DQ_OK && size == len);
        }
        if (r) memcpy(r, res, 4u * n);
        st = dq_encode(&p, x, n, r, buf, cap, &blen);
        CHECKF(st == DQ_OK, "dq_encode: %s", dq_strerror(st));
        if (st == DQ_OK) {
            CHECKF(blen == wlen, "dq_encode wrote %lu bytes (coder %u), expected %lu%s", (unsigned long)blen, buf[8],
                   (unsigned long)wlen, wmsg == msg ? " (.dqsg)" : " (legacy file re-coded)");
            for (i = 0; i < wlen && i < blen; i++)
                if (buf[i] != wmsg[i]) break;
            CHECKF(i == wlen && blen == wlen, "dq_encode differs from the expected message at byte %lu",
                   (unsigned long)i);
            if (r) check_same("residual after dq_encode vs .resout", r, resout, n);
        }
    block:
        /* the headerless API: the same body (without the checksum), decoded the same way */
        p.checksum = 0;
        p.coder = GOLDEN_ASK_FIXED;
        CHECK(dq_encode_capacity(&p, n, &body) == DQ_OK);
        body -= DQ_HEADER_SIZE;
        if (r) memcpy(r, res, 4u * n);
        st = dq_encode_block(&p, x, n, r, buf, cap, &blen);
        CHECKF(st == DQ_OK, "dq_encode_block: %s", dq_strerror(st));
        if (st == DQ_OK) {
            CHECK(blen == body && memcmp(buf, fmsg + DQ_HEADER_SIZE, blen) == 0);
            if (r) check_same("residual after dq_encode_block vs .resout", r, resout, n);
        }
        st = dq_decode_block(&p, fmsg + DQ_HEADER_SIZE, body, n, out);
        CHECKF(st == DQ_OK, "dq_decode_block: %s", dq_strerror(st));
        if (st == DQ_OK) check_same("dq_decode_block vs .out", out, want, n);
        free(r);
    }

    /* (d) the message norm */
    {
        double got = -1.0, sum = 0.0, exact = 0.0;
        st = dq_message_norm2(msg, len, &got);
        if (wnorm == DQ_NORM_L2) {
            CHECKF(st == DQ_OK, "dq_message_norm2: %s", dq_strerror(st));
            for (i = 0; i < nb; i++) {
                double s = (double)f32(ld32(msg + off + 4u * i)); /* coded: after the payload length */
                sum += s * s;
            }
            CHECKF(got - sum <= 1e-12 * sum && sum - got <= 1e-12 * sum, "norm2 %.17g, squared scales %.17g", got,
                   sum);
            cin = (float *)xmalloc(4u * n);
            for (i = 0; i < n; i++) {
                cin[i] = c->ef ? x[i] + res[i] : x[i]; /* what was quantized (FORMAT.md 6.6) */
                exact += (double)cin[i] * (double)cin[i];
            }
            check_norm2(got, exact, nb);
        } else {
            CHECKF(st == DQ_ERR_PARAM, "dq_message_norm2 on a non-L2 message: %s", dq_strerror(st));
        }
    }
done:
    free(msg);
    free(buf);
    free(fixed);
    free(recoded);
    free(x);
    free(want);
    free(res);
    free(resout);
    free(out);
    free(cin);
}

/* ---------------------------------------------------------------- one version directory */
#define MAX_CASES 4096
static gcase g_cases[MAX_CASES];

static void run_version(const char *root, unsigned ver) {
    char dir[900], path[1024], label[160], err[256];
    uint8_t *man;
    size_t len, pos = 0, ncases = 0, i, j;
    unsigned long lineno = 0;
    snprintf(label, sizeof label, "v%u/MANIFEST", ver);
    case_begin(label);
    snprintf(dir, sizeof dir, "%s/v%u", root, ver);
    path_of(path, sizeof path, dir, "MANIFEST", "");
    man = read_all(path, &len);
    CHECKF(man != NULL, "cannot read %s: every format version this library decodes needs golden files", path);
    while (man && pos < len) {
        char line[4096]; /* a trunc-nu line at 8 bits lists 127 levels */
        size_t e = pos, l;
        while (e < len && man[e] != '\n') e++;
        l = e - pos;
        if (l && man[pos + l - 1] == '\r') l--;
        lineno++;
        if (l >= sizeof line) {
            CHECKF(0, "%s:%lu: line too long", path, lineno);
            break;
        }
        memcpy(line, man + pos, l);
        line[l] = '\0';
        pos = e + 1;
        if (l == 0 || line[0] == '#') continue;
        if (ncases == MAX_CASES) {
            CHECKF(0, "%s: more than %d cases", path, MAX_CASES);
            break;
        }
        if (!parse_case(line, &g_cases[ncases], err, sizeof err)) {
            CHECKF(0, "%s:%lu: %s", path, lineno, err);
            continue;
        }
        for (j = 0; j < ncases; j++)
            if (!strcmp(g_cases[j].name, g_cases[ncases].name)) break;
        CHECKF(j == ncases, "%s:%lu: case %s listed twice", path, lineno, g_cases[ncases].name);
        ncases++;
    }
    CHECKF(ver < N_MIN_CASES, "no minimum case count for format version %u in k_min_cases", ver);
    if (ver < N_MIN_CASES)
        CHECKF(ncases >= k_min_cases[ver], "%s: %lu cases, at least %lu expected", path, (unsigned long)ncases,
               k_min_cases[ver]);
    free(man);
    case_end();
    if (dq_t_verbose()) printf("golden: %s: %lu cases\n", dir, (unsigned long)ncases);
    for (i = 0; i < ncases; i++) {
        snprintf(label, sizeof label, "v%u/%.63s", ver, g_cases[i].name);
        case_begin(label);
        run_case(dir, ver, &g_cases[i]);
        case_end();
    }
}

int main(int argc, char **argv) {
    const char *root = argc > 1 ? argv[1] : "tests/golden";
    unsigned ver;
    char path[1024];
    FILE *f;
    for (ver = 1; ver <= (unsigned)DQ_FORMAT_VERSION; ver++) run_version(root, ver);
    /* golden files of a version this library does not know would go untested */
    case_begin("no_newer_version");
    snprintf(path, sizeof path, "%s/v%u/MANIFEST", root, (unsigned)DQ_FORMAT_VERSION + 1u);
    f = fopen(path, "rb");
    CHECKF(f == NULL, "%s exists, but this library writes format version %u", path, (unsigned)DQ_FORMAT_VERSION);
    if (f) fclose(f);
    case_end();
    return dq_t_finish();
}
