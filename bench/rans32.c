/* bench/rans32.c - the 32-way rANS chunk kernels (coder 3, doc/FORMAT.md 17.6) against plain
 * memory passes and, when its header is there, htscodecs' rANS 4x16 /
 * 32x16, all in one process. Built for the native ISA by `make bench-rans32`; every kernel the
 * build compiles in runs, beside its scalar twin (the kernel tables of tests/internals.h: an
 * AVX-512 build runs the SSE2, AVX2 and, with AVX-512VL, AVX-512 decoders and the AVX2 encoder).
 *
 *   bench_rans32 [--n N] [--reps R] [--bits B]
 *
 * Symbols: the fixed payload bytes of a real QSGD message (L2 norm, bucket 512, stochastic
 * rounding) of an N(0,1) vector at b = 2, 4 and 8 bits (--bits: one of them). The message is
 * encoded for min(elements, 2^22) elements; longer symbol streams repeat its payload (same
 * statistics). Sizes: n = 2^16 symbols (in cache) and 2^24 (--n: one size). Figures are M
 * symbols per second (n / best time) and ratios to two baselines measured in the same run:
 *   memcpy  copying the n symbol bytes;
 *   fixed   the decode_block kernel over the same bytes as a fixed payload (acc += w * value), the
 *           decode-add a coder-0 message costs per symbol.
 * Each figure is the best of R rounds (default 9); in each round every kernel runs once, in
 * the order printed, so all see the same machine state. Decoders are checked untimed against
 * the symbols. fused-* rows decode a chunk block by block into a 32b-byte buffer (L1) and
 * run the decode_block kernel on it; twopass-* rows decode the whole chunk to memory first. */
#define _POSIX_C_SOURCE 199309L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dqsgd.h"
#include "tests/internals.h" /* the chunk API and its kernels, the decode_block kernel */
#include "bench_util.h"

#if defined(__has_include)
#if __has_include(<htscodecs/rANS_static4x16.h>)
#include <htscodecs/rANS_static4x16.h>
#define BENCH_HTS 1
#endif
#endif
#ifndef BENCH_HTS
#define BENCH_HTS 0
#endif

#define MAXK 32
typedef struct kern {
    char name[40];
    int id;
    double best;
    dqt_r32get_fn get; /* K_DEC: the chunk decoder timed */
    dqt_r32enc_fn enc; /* K_ENC: the chunk encoder timed */
} kern;

typedef struct ctx {
    unsigned b;
    size_t n, cap, len, hlen[3];
    uint8_t *sym, *out, *enc, *hts[3], *blk;
    float *acc;
    uint32_t *dtab;
    dqt_r32_esym et[256];
    float rowstep[32];
} ctx;

enum {
    K_MEMCPY,
    K_FIXED,
    K_DEC, /* one row per r32_get kernel: the scalar twin, then each SIMD kernel compiled in */
    K_FUSED,
    K_FUSED_SCALAR,
    K_TWOPASS,
    K_ENC, /* one row per r32_encode kernel, likewise */
    K_HTS_DEC4,
    K_HTS_DEC32,
    K_HTS_DEC32S,
    K_HTS_ENC4,
    K_HTS_ENC32,
    K_HTS_ENC32S
};

static volatile uint32_t sink;

static dq_status r32_dec(ctx *c, dqt_r32get_fn fn) {
    dqt_r32_dec d;
    dq_status st = dqt_r32_open(&d, c->enc + c->cap - c->len, c->len);
    if (st != DQ_OK) return st;
    fn(&d, c->dtab, c->out, c->n);
    return dqt_r32_finish(&d);
}
/* decode-add through an L1 block buffer; get selects the twin */
static dq_status r32_fused(ctx *c, dqt_r32get_fn fn) {
    dqt_r32_dec d;
    size_t k, nb = c->n / (32u * c->b);
    dq_status st = dqt_r32_open(&d, c->enc + c->cap - c->len, c->len);
    if (st != DQ_OK) return st;
    for (k = 0; k < nb; k++) {
        fn(&d, c->dtab, c->blk, 32u * c->b);
        dqt_k(decode_block)(c->blk, c->b, c->rowstep, 0.5f, 1, c->acc + 256u * k);
    }
    return dqt_r32_finish(&d);
}

static void run(ctx *c, const kern *kn) {
    size_t k, nb = c->n / (32u * c->b);
    int id = kn->id;
    switch (id) {
    case K_MEMCPY:
        memcpy(c->out, c->sym, c->n);
        break;
    case K_FIXED:
        for (k = 0; k < nb; k++)
            dqt_k(decode_block)(c->sym + 32u * c->b * k, c->b, c->rowstep, 0.5f, 1, c->acc + 256u * k);
        break;
    case K_DEC:
        sink += (uint32_t)r32_dec(c, kn->get);
        break;
    case K_FUSED:
        sink += (uint32_t)r32_fused(c, dqt_k(r32_get));
        break;
    case K_FUSED_SCALAR:
        sink += (uint32_t)r32_fused(c, dqt_scalar(r32_get));
        break;
    case K_TWOPASS:
        sink += (uint32_t)r32_dec(c, dqt_k(r32_get));
        for (k = 0; k < nb; k++)
            dqt_k(decode_block)(c->out + 32u * c->b * k, c->b, c->rowstep, 0.5f, 1, c->acc + 256u * k);
        break;
    case K_ENC:
        sink += (uint32_t)kn->enc(c->sym, c->n, c->et, c->enc, c->cap);
        break;
#if BENCH_HTS
    case K_HTS_DEC4:
    case K_HTS_DEC32:
    case K_HTS_DEC32S: {
        int v = id - K_HTS_DEC4;
        unsigned int osz = (unsigned int)c->n;
        rans_set_cpu(v == 2 ? 0 : -1);
        if (!rans_uncompress_to_4x16(c->hts[v], (unsigned int)c->hlen[v], c->out, &osz) || osz != c->n) sink += 1u;
        break;
    }
    case K_HTS_ENC4:
    case K_HTS_ENC32:
    case K_HTS_ENC32S: {
        int v = id - K_HTS_ENC4;
        unsigned int osz = rans_compress_bound_4x16((unsigned int)c->n, v ? RANS_ORDER_X32 : 0);
        rans_set_cpu(v == 2 ? 0 : -1);
        if (!rans_compress_to_4x16(c->sym, (unsigned int)c->n, c->out + c->n, &osz, v ? RANS_ORDER_X32 : 0))
            sink += 1u;
        break;
    }
#endif
    default:
        break;
    }
}

/* The same symbols back, and the same status, from every decoder (untimed). */
static int check(ctx *c, const kern *kn) {
    memset(c->out, 0xEE, c->n);
    run(c, kn);
    return memcmp(c->out, c->sym, c->n) == 0;
}

/* Appends a row: its name (name-isa when isa is set) and what it runs. */
static kern *add(kern *ks, size_t *nk, int id, const char *name, const char *isa) {
    kern *k = &ks[(*nk)++];
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s%s%s", name, isa ? "-" : "", isa ? isa : "");
    k->id = id;
    k->best = 1e30;
    return k;
}

static void bench_one(unsigned b, size_t n, unsigned reps) {
    static kern ks[MAXK];
    ctx c;
    size_t nel = n * 8u / b, mel = nel < ((size_t)1 << 22) ? nel : ((size_t)1 << 22), i, nk = 0;
    float *x = (float *)malloc(mel * sizeof(float));
    dq_params p;
    dq_header h;
    uint8_t *msg;
    uint64_t cnt[256] = {0};
    uint32_t f[256];
    size_t cap;
    double H = 0;
    unsigned r, s;
    memset(&c, 0, sizeof c);
    c.b = b;
    c.n = n;
    memset(&p, 0, sizeof p);
    p.coder = DQ_CODER_FIXED_ONLY; /* its payload bytes are the symbols */
    p.bits = b;
    p.bucket = 512;
    p.rounding = DQ_ROUND_STOCHASTIC;
    p.norm = DQ_NORM_L2;
    p.seed = 42;
    bench_fill_gaussian(x, mel, 0x5EEDu + b);
    cap = dq_encode_bound(mel, b);
    msg = (uint8_t *)malloc(cap);
    if (!x || !msg || dq_encode(&p, x, mel, NULL, msg, cap, &cap) != DQ_OK || dq_header_read(msg, cap, &h) != DQ_OK) {
        fprintf(stderr, "bench_rans32: encode failed\n");
        exit(1);
    }
    c.sym = (uint8_t *)malloc(n);
    c.out = (uint8_t *)malloc(3u * n + 4096u);
    c.cap = 128u + 2u * n + 64u;
    c.enc = (uint8_t *)malloc(c.cap);
    c.acc = (float *)calloc(nel + 256u, sizeof(float));
    c.dtab = (uint32_t *)malloc(4096u * sizeof(uint32_t));
    c.blk = (uint8_t *)malloc(256);
    if (!c.sym || !c.out || !c.enc || !c.acc || !c.dtab || !c.blk) exit(1);
    for (i = 0; i < n; i += h.payload_size) {
        size_t k = n - i < h.payload_size ? n - i : h.payload_size;
        memcpy(c.sym + i, msg + h.msg_size - h.payload_size, k);
    }
    for (i = 0; i < 32; i++) c.rowstep[i] = 0.125f;
    for (i = 0; i < n; i++) cnt[c.sym[i]]++;
    for (s = 0; s < 256; s++)
        if (cnt[s]) H -= (double)cnt[s] / (double)n * log2((double)cnt[s] / (double)n);
    dqt_rans_normalize(cnt, 256, n, f);
    dqt_r32_tables(f, 256, c.dtab, c.et);
    c.len = dqt_scalar(r32_encode)(c.sym, n, c.et, c.enc, c.cap);
#if BENCH_HTS
    for (i = 0; i < 3; i++) {
        unsigned int osz = rans_compress_bound_4x16((unsigned int)n, i ? RANS_ORDER_X32 : 0);
        c.hts[i] = (uint8_t *)malloc(osz);
        rans_set_cpu(i == 2 ? 0 : -1);
        if (!c.hts[i] || !rans_compress_to_4x16(c.sym, (unsigned int)n, c.hts[i], &osz, i ? RANS_ORDER_X32 : 0)) exit(1);
        c.hlen[i] = osz;
    }
#endif
    add(ks, &nk, K_MEMCPY, "memcpy", NULL);
    add(ks, &nk, K_FIXED, "fixed-decode-add", NULL);
    add(ks, &nk, K_DEC, "r32-decode", "scalar")->get = dqt_scalar(r32_get);
    for (i = sizeof DQT_R32GET_K / sizeof DQT_R32GET_K[0] - 1; i-- > 0;) /* the table is best first */
        add(ks, &nk, K_DEC, "r32-decode", DQT_R32GET_K[i].name)->get = DQT_R32GET_K[i].fn;
    add(ks, &nk, K_FUSED, "r32-fused-decode-add", NULL);
    add(ks, &nk, K_FUSED_SCALAR, "r32-fused-decode-add-scalar", NULL);
    add(ks, &nk, K_TWOPASS, "r32-twopass-decode-add", NULL);
#if BENCH_HTS
    add(ks, &nk, K_HTS_DEC4, "hts-4x16-decode", NULL);
    add(ks, &nk, K_HTS_DEC32, "hts-32x16-decode-simd", NULL);
    add(ks, &nk, K_HTS_DEC32S, "hts-32x16-decode-scalar", NULL);
#endif
    add(ks, &nk, K_ENC, "r32-encode", "scalar")->enc = dqt_scalar(r32_encode);
    for (i = sizeof DQT_R32ENC_K / sizeof DQT_R32ENC_K[0] - 1; i-- > 0;)
        add(ks, &nk, K_ENC, "r32-encode", DQT_R32ENC_K[i].name)->enc = DQT_R32ENC_K[i].fn;
#if BENCH_HTS
    add(ks, &nk, K_HTS_ENC4, "hts-4x16-encode", NULL);
    add(ks, &nk, K_HTS_ENC32, "hts-32x16-encode-simd", NULL);
    add(ks, &nk, K_HTS_ENC32S, "hts-32x16-encode-scalar", NULL);
#endif
    /* untimed checks */
    for (i = 0; i < nk; i++) {
        int id = ks[i].id;
        if (id == K_DEC || id == K_HTS_DEC4 || id == K_HTS_DEC32 || id == K_HTS_DEC32S)
            if (!check(&c, &ks[i])) fprintf(stderr, "bench_rans32: %s does not give the symbols back\n", ks[i].name);
    }
    {
        uint8_t *ref = (uint8_t *)malloc(c.len);
        if (!ref) exit(1);
        memcpy(ref, c.enc + c.cap - c.len, c.len);
        for (i = 0; i < nk; i++)
            if (ks[i].id == K_ENC) {
                run(&c, &ks[i]);
                if (memcmp(ref, c.enc + c.cap - c.len, c.len))
                    fprintf(stderr, "bench_rans32: %s bytes differ\n", ks[i].name);
            }
        free(ref);
    }
    for (r = 0; r < reps; r++)
        for (i = 0; i < nk; i++) {
            double t0 = bench_now(), t;
            run(&c, &ks[i]);
            t = bench_now() - t0;
            if (t < ks[i].best) ks[i].best = t;
        }
    printf("\nb = %u, n = %lu symbols (%s), entropy %.3f bits/symbol; sizes: fixed %lu, r32 %lu (%.3f bits/sym)",
           b, (unsigned long)n, n <= ((size_t)1 << 16) ? "in cache" : "memory", H, (unsigned long)n,
           (unsigned long)c.len, (double)c.len * 8.0 / (double)n);
#if BENCH_HTS
    printf(", hts 4x16 %lu, 32x16 %lu", (unsigned long)c.hlen[0], (unsigned long)c.hlen[1]);
#endif
    printf("\n%-30s %10s %10s %10s\n", "kernel", "Msym/s", "/memcpy", "/fixed");
    for (i = 0; i < nk; i++) {
        double ms = (double)n / ks[i].best / 1e6;
        printf("%-30s %10.1f %10.4f %10.3f\n", ks[i].name, ms, ks[0].best / ks[i].best, ks[1].best / ks[i].best);
    }
    fflush(stdout);
    free(x);
    free(msg);
    free(c.sym);
    free(c.out);
    free(c.enc);
    free(c.acc);
    free(c.dtab);
    free(c.blk);
    for (i = 0; i < 3; i++) free(c.hts[i]);
}

int main(int argc, char **argv) {
    static const unsigned bits[3] = {4, 2, 8};
    size_t ns[2] = {(size_t)1 << 16, (size_t)1 << 24}, nn = 2;
    unsigned reps = 9, only = 0, i, j;
    int a;
    for (a = 1; a < argc; a++) {
        const char *v;
        if ((v = bench_opt_value(argv[0], argc, argv, &a, "--n")) != NULL) {
            ns[0] = (size_t)bench_parse_count(argv[0], "--n", v);
            nn = 1;
        } else if ((v = bench_opt_value(argv[0], argc, argv, &a, "--reps")) != NULL) {
            reps = (unsigned)bench_parse_count(argv[0], "--reps", v);
        } else if ((v = bench_opt_value(argv[0], argc, argv, &a, "--bits")) != NULL) {
            only = (unsigned)bench_parse_count(argv[0], "--bits", v);
        } else {
            fprintf(stderr, "usage: %s [--n N] [--reps R] [--bits 2|4|8]\n", argv[0]);
            return 2;
        }
    }
    printf("rans32 bench: backend %s, reps %u (best of), htscodecs %s\n", dq_simd_backend(), reps,
           BENCH_HTS ? "linked" : "not available");
    for (i = 0; i < 3; i++)
        if (!only || bits[i] == only)
            for (j = 0; j < nn; j++) bench_one(bits[i], ns[j] - ns[j] % 256u, reps);
    return 0;
}
