/* make_index_corpus.c - writes the seed corpus of tests/fuzz/fuzz_index.c into corpus/index
 * (run from tests/fuzz: cc -I../.. make_index_corpus.c -o /tmp/mkidx && /tmp/mkidx).
 * Seeds: valid streams of each coder over small, sparse, dense, empty and n = 2^32 sets
 * (fuzz_stream decodes them; fuzz_recipe reads the same bytes as n and gaps), a few recipes
 * (n bytes, a shift, then gap bytes) written for fuzz_recipe, then (library 0.11) RICE streams
 * of the same sets and of parameters other than the encoder's (0, the largest m(n), one
 * between), appended so that the earlier seeds keep their names and bytes. */
#include <stdio.h>
#include <string.h>

#include "dqsgd.h"
#include "../internals.h"

static int put(int k, const void *p, size_t n) {
    char name[64];
    FILE *f;
    snprintf(name, sizeof name, "corpus/index/seed-%02d", k);
    f = fopen(name, "wb");
    if (!f || fwrite(p, 1, n, f) != n) return 1;
    return fclose(f) != 0;
}

int main(void) {
    static uint32_t idx[400];
    static uint8_t s[2048];
    static const uint32_t small[4] = {0, 3, 4, 19}, far[3] = {0, 0x80000000u, 0xFFFFFFFFu};
    unsigned c, i;
    size_t len;
    int k = 0, r = 0;
    uint32_t x = 1;
    for (c = 1; c <= 3; c++) {
        if (dq_index_encode(small, 4, 20, (dq_index_coder)c, s, sizeof s, &len) != DQ_OK) return 1;
        r |= put(k++, s, len);
        if (dq_index_encode(NULL, 0, 20, (dq_index_coder)c, s, sizeof s, &len) != DQ_OK) return 1;
        r |= put(k++, s, len);
        for (i = 0; i < 60; i++) { /* sparse: 60 of 5000, irregular gaps */
            x = x * 1103515245u + 12345u;
            idx[i] = (i ? idx[i - 1] : 0u) + 1u + (x >> 16) % 160u;
        }
        if (dq_index_encode(idx, 60, 10000, (dq_index_coder)c, s, sizeof s, &len) != DQ_OK) return 1;
        r |= put(k++, s, len);
        for (i = 0; i < 200; i++) idx[i] = i + i / 3u; /* dense: 200 of 300 */
        if (dq_index_encode(idx, 200, 300, (dq_index_coder)c, s, sizeof s, &len) != DQ_OK) return 1;
        r |= put(k++, s, len);
        if (c != 3) { /* n = 2^32 (a bitmap would take 512 MiB) */
            if (dq_index_encode(far, 3, (uint64_t)1 << 32, (dq_index_coder)c, s, sizeof s, &len) != DQ_OK) return 1;
            r |= put(k++, s, len);
        }
    }
    { /* recipes: n = 2^32 >> shift, then (gap byte, shift byte) pairs */
        static const uint8_t r1[] = {0xFF, 0xFF, 0xFF, 0xFF, 0, 1, 0, 2, 8, 3, 16, 255, 31, 7, 32, 1, 0};
        static const uint8_t r2[] = {0x00, 0x10, 0x00, 0x00, 4, 0, 0, 0, 0, 1, 0, 0, 0, 5, 1, 9, 0, 200, 1};
        static const uint8_t r3[] = {0x40, 0x00, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        r |= put(k++, r1, sizeof r1);
        r |= put(k++, r2, sizeof r2);
        r |= put(k++, r3, sizeof r3);
    }
    { /* RICE (coder 4) */
        static const uint32_t geo[12] = {3, 40, 41, 300, 1000, 1001, 1002, 2500, 4000, 4095, 7000, 9999};
        if (dq_index_encode(small, 4, 20, DQ_INDEX_RICE, s, sizeof s, &len) != DQ_OK) return 1;
        r |= put(k++, s, len);
        if (dq_index_encode(NULL, 0, 20, DQ_INDEX_RICE, s, sizeof s, &len) != DQ_OK) return 1;
        r |= put(k++, s, len);
        x = 1;
        for (i = 0; i < 60; i++) {
            x = x * 1103515245u + 12345u;
            idx[i] = (i ? idx[i - 1] : 0u) + 1u + (x >> 16) % 160u;
        }
        if (dq_index_encode(idx, 60, 10000, DQ_INDEX_RICE, s, sizeof s, &len) != DQ_OK) return 1;
        r |= put(k++, s, len);
        for (i = 0; i < 200; i++) idx[i] = i + i / 3u;
        if (dq_index_encode(idx, 200, 300, DQ_INDEX_RICE, s, sizeof s, &len) != DQ_OK) return 1;
        r |= put(k++, s, len);
        if (dq_index_encode(far, 3, (uint64_t)1 << 32, DQ_INDEX_RICE, s, sizeof s, &len) != DQ_OK) return 1;
        r |= put(k++, s, len);
        for (c = 0; c <= 14; c += 7) { /* n = 10000: m(n) = 14 */
            if (dqt_index_encode_rice(geo, 12, 10000, c, s, sizeof s, &len) != DQ_OK) return 1;
            r |= put(k++, s, len);
        }
    }
    printf("%d seeds in corpus/index\n", k);
    return r;
}
