/* make_corpus.c - writes the seed corpus of the fuzz targets into corpus/decode and
 * corpus/roundtrip (run from tests/fuzz: cc -I../.. make_corpus.c -lm && ./a.out).
 * Seeds: valid messages over widths, buckets, roundings and lengths (including a tail and
 * several buckets), and round-trip inputs (8 parameter bytes, then float32 values). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dqsgd.h"

static int put(const char *dir, int k, const void *p, size_t n) {
    char name[64];
    FILE *f;
    snprintf(name, sizeof name, "corpus/%s/seed-%02d", dir, k);
    f = fopen(name, "wb");
    if (!f || fwrite(p, 1, n, f) != n) return 1;
    return fclose(f) != 0;
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
    return r;
}
