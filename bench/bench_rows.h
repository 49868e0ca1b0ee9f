/* bench/bench_rows.h - the rows of the throughput benchmark: which kernel, width, rounding,
 * checksum, coder and scheme each times, and the dq_params they make. bench/bench.c times them
 * against a memory pass; bench/versus_side.c times them against another version's headers.
 * Include after dqsgd.h (either version: the rows use only constants every 0.x release has). */
#ifndef DQ_BENCH_ROWS_H
#define DQ_BENCH_ROWS_H

#define BENCH_BUCKET 512u

typedef enum bench_kind { K_ENCODE, K_ENCODE_EF, K_DECODE, K_DECODE_ADD } bench_kind;

typedef struct bench_row {
    const char *name;
    bench_kind kind;
    unsigned bits;
    dq_rounding rounding;
    unsigned checksum; /* 1: messages carry the payload CRC32C */
    unsigned coder;    /* dq_params.coder */
    dq_scheme scheme;  /* 0: QSGD */
} bench_row;

/* DQ_SCHEME_TRUNC*: a fixed threshold (3 sd of the N(0,1) input) and, for TRUNC_NU, levels
 * l_j = (j/7)^1.5: the speed does not depend on how they were chosen. */
#define BENCH_ALPHA 3.0f
static const float BENCH_LEVELS[7] = {0.0539949f, 0.152721f, 0.280566f, 0.431959f, 0.603682f, 0.793499f, 1.0f};

/* Execution order = print order. Decoders use the message of a plain encode with the same
 * bits, rounding, checksum and coder (re-encoded, untimed, when the previous row left
 * something else). */
static const bench_row ROWS[] = {
    {"encode", K_ENCODE, 4u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_QSGD}, /* the headline row */
    {"encode-ef", K_ENCODE_EF, 4u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_QSGD},
    {"decode", K_DECODE, 4u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_QSGD},
    {"decode-add", K_DECODE_ADD, 4u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_QSGD},
    {"encode-nearest", K_ENCODE, 4u, DQ_ROUND_NEAREST, 0u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_QSGD},
    {"encode", K_ENCODE, 2u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_QSGD},
    {"decode-add", K_DECODE_ADD, 2u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_QSGD},
    {"encode", K_ENCODE, 8u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_QSGD},
    {"decode-add", K_DECODE_ADD, 8u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_QSGD},
    {"encode-crc", K_ENCODE, 4u, DQ_ROUND_STOCHASTIC, 1u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_QSGD},
    {"decode-add-crc", K_DECODE_ADD, 4u, DQ_ROUND_STOCHASTIC, 1u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_QSGD},
    {"encode-rans", K_ENCODE, 4u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_RANS, DQ_SCHEME_QSGD},
    {"decode-rans", K_DECODE, 4u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_RANS, DQ_SCHEME_QSGD},
    {"decode-add-rans", K_DECODE_ADD, 4u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_RANS, DQ_SCHEME_QSGD},
    {"encode-rans-crc", K_ENCODE, 4u, DQ_ROUND_STOCHASTIC, 1u, DQ_CODER_RANS, DQ_SCHEME_QSGD},
    {"decode-add-rans-crc", K_DECODE_ADD, 4u, DQ_ROUND_STOCHASTIC, 1u, DQ_CODER_RANS, DQ_SCHEME_QSGD}, /* one pass */
    {"encode-rans", K_ENCODE, 2u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_RANS, DQ_SCHEME_QSGD},
    {"decode-add-rans", K_DECODE_ADD, 2u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_RANS, DQ_SCHEME_QSGD},
    {"encode-rans", K_ENCODE, 8u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_RANS, DQ_SCHEME_QSGD},
    {"decode-add-rans", K_DECODE_ADD, 8u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_RANS, DQ_SCHEME_QSGD},
    {"encode-auto", K_ENCODE, 4u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_AUTO, DQ_SCHEME_QSGD},
    {"decode-add-auto", K_DECODE_ADD, 4u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_AUTO, DQ_SCHEME_QSGD},
    {"encode-default", K_ENCODE, 4u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_DEFAULT, DQ_SCHEME_QSGD},
    {"decode-add-default", K_DECODE_ADD, 4u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_DEFAULT, DQ_SCHEME_QSGD},
    {"encode-default", K_ENCODE, 2u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_DEFAULT, DQ_SCHEME_QSGD},
    {"decode-add-default", K_DECODE_ADD, 2u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_DEFAULT, DQ_SCHEME_QSGD},
    {"encode-elias", K_ENCODE, 4u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_ELIAS, DQ_SCHEME_QSGD},
    {"decode-add-elias", K_DECODE_ADD, 4u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_ELIAS, DQ_SCHEME_QSGD},
    {"encode-nuqsgd", K_ENCODE, 4u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_NUQSGD},
    {"decode-add-nuqsgd", K_DECODE_ADD, 4u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_NUQSGD},
    {"encode-natural", K_ENCODE, 8u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_NATURAL},
    {"decode-add-natural", K_DECODE_ADD, 8u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_NATURAL},
    {"encode-terngrad", K_ENCODE, 2u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_TERNGRAD},
    {"decode-add-terngrad", K_DECODE_ADD, 2u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_TERNGRAD},
    {"encode-sign", K_ENCODE_EF, 1u, DQ_ROUND_NEAREST, 0u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_QSGD},
    {"decode-add-sign", K_DECODE_ADD, 1u, DQ_ROUND_NEAREST, 0u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_QSGD},
    {"encode-twomeans", K_ENCODE_EF, 1u, DQ_ROUND_NEAREST, 0u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_TWOMEANS},
    {"decode-add-twomeans", K_DECODE_ADD, 1u, DQ_ROUND_NEAREST, 0u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_TWOMEANS},
    {"encode-trunc", K_ENCODE, 4u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_TRUNC},
    {"decode-add-trunc", K_DECODE_ADD, 4u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_TRUNC},
    {"encode-trunc-nu", K_ENCODE, 4u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_TRUNC_NU},
    {"decode-add-trunc-nu", K_DECODE_ADD, 4u, DQ_ROUND_STOCHASTIC, 0u, DQ_CODER_FIXED_ONLY, DQ_SCHEME_TRUNC_NU},
};
#define BENCH_NROWS (sizeof ROWS / sizeof ROWS[0])

static int is_encoder(bench_kind k) { return k == K_ENCODE || k == K_ENCODE_EF; }

static void row_params(const bench_row *r, dq_params *p) {
    memset(p, 0, sizeof *p);
    p->bits = r->bits;
    p->bucket = BENCH_BUCKET;
    p->scheme = r->scheme ? r->scheme : DQ_SCHEME_QSGD;
    p->alpha = BENCH_ALPHA;
    p->levels = r->scheme == DQ_SCHEME_TRUNC_NU ? BENCH_LEVELS : NULL;
    p->rounding = r->rounding;
    p->norm = p->scheme == DQ_SCHEME_QSGD || p->scheme == DQ_SCHEME_NUQSGD ? DQ_NORM_L2 : DQ_NORM_DEFAULT;
    p->seed = 42u;
    p->step = 1u;
    p->stream = 0u;
    p->checksum = r->checksum;
    p->coder = r->coder;
}

#endif
