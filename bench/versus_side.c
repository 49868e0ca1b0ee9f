/* bench/versus_side.c - one side of bench/versus.c (see bench/versus.h): compiled once per
 * version of the headers, with -DVS_SIDE=vs_old or vs_new and that version first on the
 * include path. */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */
#include <stdlib.h>
#include <string.h>

#include "dqsgd.h"
#include "bench_rows.h"
#include "versus.h"

#ifndef VS_SIDE
#error "define VS_SIDE (vs_old or vs_new)"
#endif

static const char *vs_err = "";

static const char *vs_backend(void) { return dq_simd_backend(); }
static unsigned vs_nrows(void) { return (unsigned)BENCH_NROWS; }
static const char *vs_name(unsigned r) { return ROWS[r].name; }
static unsigned vs_bits(unsigned r) { return ROWS[r].bits; }
static int vs_is_encoder(unsigned r) { return is_encoder(ROWS[r].kind); }
static const char *vs_error(void) { return vs_err; }

static int vs_status(dq_status st) {
    if (st == DQ_OK) return 1;
    vs_err = dq_strerror(st);
    return 0;
}

static int vs_run(unsigned r, vs_buf *b) {
    dq_params p;
    row_params(&ROWS[r], &p);
    switch (ROWS[r].kind) {
        case K_ENCODE:
            return vs_status(dq_encode(&p, b->x, b->n, NULL, b->msg, b->cap, &b->len));
        case K_ENCODE_EF:
            return vs_status(dq_encode(&p, b->x, b->n, b->res, b->msg, b->cap, &b->len));
        case K_DECODE:
            return vs_status(dq_decode(b->msg, b->len, b->acc, b->n));
        case K_DECODE_ADD:
            return vs_status(dq_decode_add(b->msg, b->len, 0.5f, b->acc, b->n));
    }
    return 0;
}

/* Room for the row's message, the residual and accumulator cleared; a decoder's message is the
 * plain encode of x with the row's parameters. */
static int vs_setup(unsigned r, vs_buf *b) {
    dq_params p;
    size_t cap = dq_encode_bound_coded(b->n, ROWS[r].bits);
    if (!cap) return vs_status(DQ_ERR_TOO_LARGE);
    if (cap > b->cap) {
        void *m = NULL;
        free(b->msg);
        b->msg = NULL;
        if (posix_memalign(&m, VS_ALIGN, cap) != 0) return vs_status(DQ_ERR_TOO_LARGE);
        b->msg = (uint8_t *)m;
        b->cap = cap;
    }
    memset(b->res, 0, b->n * sizeof *b->res);
    memset(b->acc, 0, b->n * sizeof *b->acc);
    if (is_encoder(ROWS[r].kind)) return 1;
    row_params(&ROWS[r], &p);
    return vs_status(dq_encode(&p, b->x, b->n, NULL, b->msg, b->cap, &b->len));
}

const vs_side VS_SIDE = {vs_backend, vs_nrows, vs_name, vs_bits, vs_is_encoder, vs_setup, vs_run, vs_error};
