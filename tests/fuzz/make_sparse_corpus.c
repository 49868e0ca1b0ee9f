/* make_sparse_corpus.c - writes the seed corpus of tests/fuzz/fuzz_sparse.c into corpus/sparse
 * (run from tests/fuzz: cc -I../.. make_sparse_corpus.c -lm -o /tmp/mksp && /tmp/mksp).
 * Seeds: valid messages of each scheme (top-k with each index coder, with and without the
 * payload checksum; random-k plain and rescaled; threshold with some and with no element
 * kept), which fuzz_decode reads and fuzz_recipe takes as recipes too; and a few recipes
 * (scheme byte, option byte, k or threshold bits, float32 values) with ties, zeros of both
 * signs, a residual, and a NaN. */
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
    printf("%d seeds in corpus/sparse\n", k);
    return r;
}
