/* make_sparse_corpus.c - writes the seed corpus of tests/fuzz/fuzz_sparse.c into corpus/sparse
 * (run from tests/fuzz: cc -I../.. make_sparse_corpus.c -lm -o /tmp/mksp && /tmp/mksp).
 * Seeds: valid messages of each scheme (top-k with each index coder, with and without the
 * payload checksum; random-k plain and rescaled; threshold with some and with no element
 * kept), which fuzz_decode reads and fuzz_recipe takes as recipes too; and a few recipes
 * (scheme byte, option byte, k or threshold bits, float32 values) with ties, zeros of both
 * signs, a residual, and a NaN. Then (library 0.11, appended so that the earlier seeds keep
 * their names and bytes): composed messages (quantized values at 1 to 16 bits with fixed, Elias
 * and rANS values, the ternary form, rescaled random-k, k = 0), RICE index streams, and
 * recipes for composed messages. The committed seed-00 and seed-01 (index coder AUTO) are as
 * library 0.10 wrote them; since 0.11 AUTO picks RICE there, so this program writes other (as
 * valid) bytes for them. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dqsgd.h"

static int put(int k, const void *p, size_t n) {
    char name[64];
    FILE *f;
    snprintf(name, sizeof name, "corpus/sparse/seed-%02d", k);
    f = fopen(name, "wb");
    if (!f || fwrite(p, 1, n, f) != n) return 1;
    return fclose(f) != 0;
}

static int recipe(int k, unsigned scheme, unsigned opt, uint32_t kr, const float *v, size_t nv) {
    uint8_t b[6 + 4 * 64];
    b[0] = (uint8_t)scheme;
    b[1] = (uint8_t)opt;
    memcpy(b + 2, &kr, 4);
    memcpy(b + 6, v, 4 * nv);
    return put(k, b, 6 + 4 * nv);
}

int main(void) {
    static float x[200];
    static uint8_t m[4096];
    size_t i, len;
    int k = 0, r = 0;
    unsigned c, cs;
    dq_params p;
    for (i = 0; i < 200; i++) x[i] = (float)(sin(0.37 * (double)i) * (1.0 + (double)(i % 7)));
    x[10] = x[11] = 6.5f; /* a tie */
    x[12] = -0.0f;
    for (c = 0; c <= 3; c++)
        for (cs = 0; cs <= 1; cs++) {
            memset(&p, 0, sizeof p);
            p.scheme = DQ_SCHEME_TOPK;
            p.k = c == 3 ? 150 : 9;
            p.index_coder = c;
            p.checksum = cs;
            p.seed = 5;
            if (dq_encode(&p, x, 200, NULL, m, sizeof m, &len) != DQ_OK) return 1;
            r |= put(k++, m, len);
        }
    for (cs = 0; cs <= 1; cs++) {
        memset(&p, 0, sizeof p);
        p.scheme = DQ_SCHEME_RANDK;
        p.k = 13;
        p.unbiased = cs;
        p.checksum = cs;
        p.seed = 77;
        p.step = 3;
        if (dq_encode(&p, x, 200, NULL, m, sizeof m, &len) != DQ_OK) return 1;
        r |= put(k++, m, len);
    }
    for (cs = 0; cs <= 1; cs++) {
        memset(&p, 0, sizeof p);
        p.scheme = DQ_SCHEME_THRESHOLD;
        p.threshold = cs ? 100.0f : 4.0f; /* with cs: nothing kept, k = 0 */
        p.checksum = cs;
        if (dq_encode(&p, x, 200, NULL, m, sizeof m, &len) != DQ_OK) return 1;
        r |= put(k++, m, len);
    }
    { /* recipes */
        static const float ties[16] = {1, -1, 2, 2, -2, 0, -0.0f, 3, 3, -3, 1, 0, 0, 2, -3, 1};
        float nan[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        float thr = 1.5f;
        uint32_t tb;
        nan[5] = (float)NAN;
        memcpy(&tb, &thr, 4);
        r |= recipe(k++, 0, 0x00, 4, ties, 16);         /* top-k, k = 5 */
        r |= recipe(k++, 0, 0x2D, 2, ties, 16);         /* top-k, residual, VARINT, checksum */
        r |= recipe(k++, 1, 0x03, 3, ties, 16);         /* random-k rescaled */
        r |= recipe(k++, 1, 0x22, 1, ties, 16);         /* random-k rescaled with a residual */
        r |= recipe(k++, 2, 0x0C, tb, ties, 16);        /* threshold 1.5, BITMAP */
        r |= recipe(k++, 2, 0x20, tb, ties, 16);        /* threshold with a residual */
        r |= recipe(k++, 0, 0x00, 2, nan, 8);           /* NaN: refused */
        r |= recipe(k++, 0, 0x10, 0, ties, 16);         /* k = 0: refused */
    }
    { /* composed messages and RICE streams */
        static const struct {
            dq_scheme sc;
            size_t k;
            unsigned bits, coder, icoder, rounding;
            uint32_t bucket;
        } cm[] = {{DQ_SCHEME_TOPK, 40, 2, DQ_CODER_FIXED_ONLY, DQ_INDEX_RICE, 0, 8},
                  {DQ_SCHEME_TOPK, 150, 6, DQ_CODER_RANS, DQ_INDEX_AUTO, 0, 64},
                  {DQ_SCHEME_TOPK, 120, 9, DQ_CODER_ELIAS, DQ_INDEX_GAMMA, DQ_ROUND_NEAREST, 16},
                  {DQ_SCHEME_TOPK, 20, 1, DQ_CODER_DEFAULT, DQ_INDEX_RICE, DQ_ROUND_NEAREST, DQ_BUCKET_WHOLE},
                  {DQ_SCHEME_RANDK, 30, 3, DQ_CODER_AUTO, 0, 0, 8},
                  {DQ_SCHEME_THRESHOLD, 0, 4, DQ_CODER_DEFAULT, DQ_INDEX_VARINT, 0, 24},
                  {DQ_SCHEME_THRESHOLD, 1, 16, DQ_CODER_FIXED_ONLY, DQ_INDEX_BITMAP, DQ_ROUND_NEAREST, 8}};
        size_t c;
        for (c = 0; c < sizeof cm / sizeof cm[0]; c++)
            for (cs = 0; cs <= 1; cs++) {
                memset(&p, 0, sizeof p);
                p.scheme = cm[c].sc;
                p.k = cm[c].sc == DQ_SCHEME_THRESHOLD ? 0 : cm[c].k;
                p.threshold = cm[c].sc != DQ_SCHEME_THRESHOLD ? 0.0f : cm[c].k ? 1e30f : 4.0f;
                p.bits = cm[c].bits;
                p.coder = cm[c].coder;
                p.index_coder = cm[c].icoder;
                p.rounding = (dq_rounding)cm[c].rounding;
                p.bucket = cm[c].bucket;
                p.unbiased = cm[c].sc == DQ_SCHEME_RANDK && cs;
                p.checksum = cs;
                p.seed = 9 + c;
                p.step = 4;
                if (dq_encode(&p, x, 200, NULL, m, sizeof m, &len) != DQ_OK) return 1;
                r |= put(k++, m, len);
            }
        memset(&p, 0, sizeof p); /* float32 values, RICE stream */
        p.scheme = DQ_SCHEME_TOPK;
        p.k = 25;
        p.index_coder = DQ_INDEX_RICE;
        if (dq_encode(&p, x, 200, NULL, m, sizeof m, &len) != DQ_OK) return 1;
        r |= put(k++, m, len);
        { /* recipes: byte 0 = scheme + 3 (width + 17 coder) */
            static const float ties[16] = {1, -1, 2, 2, -2, 0, -0.0f, 3, 3, -3, 1, 0, 0, 2, -3, 1};
            float thr = 1.5f;
            uint32_t tb;
            memcpy(&tb, &thr, 4);
            r |= recipe(k++, 0 + 3 * (2 + 17 * 1), 0x00, 4, ties, 16);  /* top-k 2 bits fixed */
            r |= recipe(k++, 1 + 3 * (3 + 17 * 3), 0x23, 3, ties, 16);  /* random-k rescaled 3 bits rANS, residual */
            r |= recipe(k++, 2 + 3 * (1 + 17 * 0), 0xC0, tb, ties, 16); /* threshold ternary, whole bucket */
            r |= recipe(k++, 0 + 3 * (16 + 17 * 2), 0x30, 5, ties, 16); /* top-k 16 bits Elias, residual */
            r |= recipe(k++, 0 + 3 * (4 + 17 * 4), 0x10, 7, ties, 16);  /* top-k 4 bits AUTO, RICE */
        }
    }
    printf("%d seeds in corpus/sparse\n", k);
    return r;
}
