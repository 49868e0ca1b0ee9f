/* bench/versus.h - one side of bench/versus.c: the benchmark's rows (bench/bench_rows.h) run
 * by the dqsgd.h that bench/versus_side.c was compiled against. The program links two sides,
 * built from the same source against two versions of the headers; everything of the library
 * is static inline, so each side keeps its own copy. */
#ifndef DQ_BENCH_VERSUS_H
#define DQ_BENCH_VERSUS_H
#include <stddef.h>
#include <stdint.h>

#define VS_ALIGN 4096u /* every buffer starts a page, on both sides alike */

typedef struct vs_buf {
    size_t n;
    const float *x; /* the input, shared by both sides */
    float *res, *acc;
    uint8_t *msg;
    size_t cap, len;
} vs_buf;

typedef struct vs_side {
    const char *(*backend)(void);                /* dq_simd_backend() */
    unsigned (*nrows)(void);
    const char *(*name)(unsigned row);
    unsigned (*bits)(unsigned row);
    int (*is_encoder)(unsigned row);
    int (*setup)(unsigned row, vs_buf *b);       /* buffers, and a decoder's message; 0 on failure */
    int (*run)(unsigned row, vs_buf *b);         /* one timed call; 0 on failure */
    const char *(*error)(void);                  /* what the last failure was */
} vs_side;

extern const vs_side vs_old, vs_new;
#endif
