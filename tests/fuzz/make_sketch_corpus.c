/* make_sketch_corpus.c - writes the seed corpus of tests/fuzz/fuzz_sketch.c into corpus/sketch
 * (run from tests/fuzz: cc -I../.. make_sketch_corpus.c -lm -o /tmp/mksk && /tmp/mksk).
 * Seeds: valid sketch messages of several shapes, with and without the payload checksum, with
 * negative zero and extreme finite cells (fuzz_message decodes them; fuzz_recipe reads the same
 * bytes as a shape and values), and a few recipes (rows, cols, dim, seed, split, values). */
#include <stdio.h>
#include <string.h>

#include "dqsgd.h"

static int put(int k, const void *p, size_t n) {
    char name[64];
    FILE *f;
    snprintf(name, sizeof name, "corpus/sketch/seed-%02d", k);
    f = fopen(name, "wb");
    if (!f || fwrite(p, 1, n, f) != n) return 1;
    return fclose(f) != 0;
}

int main(void) {
    static const unsigned shapes[5][3] = {{1, 1, 1}, {3, 4, 10}, {5, 16, 300}, {2, 7, 4096}, {32, 2, 50}};
    static float tab[32 * 16], x[4096];
    static uint8_t m[64 + 4 * 32 * 16 + 4];
    size_t len, i;
    unsigned s, ck;
    int k = 0, r = 0;
    for (s = 0; s < 5; s++) {
        dq_sketch sk;
        for (i = 0; i < shapes[s][2]; i++) x[i] = (float)((int)(i * 37u % 11u) - 5) * 0.75f;
        if (dq_sketch_init(&sk, shapes[s][0], shapes[s][1], shapes[s][2], 42u + s, tab, sizeof tab / sizeof tab[0]) !=
                DQ_OK ||
            dq_sketch_add_dense(&sk, 0, x, shapes[s][2]) != DQ_OK)
            return 1;
        if (s == 2) {
            tab[1] = -0.0f;
            tab[2] = 3.4028235e38f;
            tab[3] = 1e-45f;
        }
        for (ck = 0; ck < 2; ck++) {
            if (dq_sketch_encode(&sk, ck, m, sizeof m, &len) != DQ_OK) return 1;
            r |= put(k++, m, len);
        }
    }
    { /* recipes: rows, cols, dim lo, dim hi, seed, split, then values (byte - 128) */
        static const uint8_t r1[] = {4, 9, 40, 0, 7, 13, 128, 129, 127, 0, 255, 128, 200, 60, 1, 2, 3, 4, 5, 6, 7, 8};
        static const uint8_t r2[] = {0, 0, 0, 0, 0, 0, 5};
        static const uint8_t r3[] = {7, 63, 0xCF, 0x07, 99, 255, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120};
        r |= put(k++, r1, sizeof r1);
        r |= put(k++, r2, sizeof r2);
        r |= put(k++, r3, sizeof r3);
    }
    printf("%d seeds in corpus/sketch\n", k);
    return r;
}
