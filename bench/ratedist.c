/* bench/ratedist.c - rate-distortion table: bits per element against relative error, for every
 * scheme dq_encode() takes, on two kinds of vector.
 *
 *   ratedist [--n N] [--seeds S]      (`make bench-ratedist`, ARGS="--n N" to pass options)
 *
 * Vectors (n elements, default 2^20, from the seeded splitmix64 stream of bench_util.h):
 * Gaussian N(0, 1), and Student-t with nu = 3 (t = z / sqrt(chi2_3 / 3), chi2_3 a sum of three
 * squared normals; a heavy tail, density ~ |g|^-4).
 *
 * Columns:
 *   bits/elem   the whole message (header, scales or alpha and levels, payload, index stream)
 *               as dq_encode() reports it: *len * 8 / n;
 *   rel. MSE    ||Q(x) - x||^2 / ||x||^2 of dq_decode(dq_encode(x)), the mean over S seeds
 *               (default 3: the dither seed; deterministic schemes give the same value);
 *   exact       for DQ_SCHEME_TRUNC / _TRUNC_NU: the expected relative error from
 *               dq_trunc_mse() (the Monte Carlo column must agree with it to a few 1/sqrt(S n)).
 * DQ_SCHEME_TRUNC / _TRUNC_NU take alpha (and the levels) from dq_trunc_solve() on the vector,
 * DQ_TRUNC_SEARCH. A scheme or width this build of dqsgd.h does not take (dq_encode() returns
 * DQ_ERR_PARAM or DQ_ERR_BITS) is listed once on stderr and left out of the table.
 *
 * The rows come from one table (`rows` below): a new scheme is one line. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dqsgd.h"
#include "bench_util.h"

typedef struct row {
    const char *name;  /* table label */
    dq_scheme scheme;
    unsigned bits;
    dq_norm norm;
    dq_rounding rounding;
    unsigned coder;    /* DQ_CODER_FIXED_ONLY, DQ_CODER_AUTO, or 0 for the sparse rows */
    double kfrac;      /* TOPK / RANDK: k = kfrac * n */
    unsigned trunc_nu; /* 0: not a TRUNC scheme; 1: TRUNC (uniform); 2: TRUNC_NU */
} row;

#define R_Q(b) {"QSGD L2", DQ_SCHEME_QSGD, b, DQ_NORM_L2, DQ_ROUND_STOCHASTIC, DQ_CODER_FIXED_ONLY, 0.0, 0}
#define R_QM(b) {"QSGD max", DQ_SCHEME_QSGD, b, DQ_NORM_MAX, DQ_ROUND_STOCHASTIC, DQ_CODER_FIXED_ONLY, 0.0, 0}
#define R_NU(b) {"NUQSGD", DQ_SCHEME_NUQSGD, b, DQ_NORM_DEFAULT, DQ_ROUND_STOCHASTIC, DQ_CODER_FIXED_ONLY, 0.0, 0}
#define R_T(b) {"TRUNC", DQ_SCHEME_TRUNC, b, DQ_NORM_DEFAULT, DQ_ROUND_STOCHASTIC, DQ_CODER_FIXED_ONLY, 0.0, 1}
#define R_TN(b) {"TRUNC_NU", DQ_SCHEME_TRUNC_NU, b, DQ_NORM_DEFAULT, DQ_ROUND_STOCHASTIC, DQ_CODER_FIXED_ONLY, 0.0, 2}

static const row rows[] = {
    {"scaled sign", DQ_SCHEME_QSGD, 1, DQ_NORM_DEFAULT, DQ_ROUND_NEAREST, DQ_CODER_FIXED_ONLY, 0.0, 0},
    {"QSGD L2 1-bit", DQ_SCHEME_QSGD, 1, DQ_NORM_L2, DQ_ROUND_STOCHASTIC, DQ_CODER_FIXED_ONLY, 0.0, 0},
    {"TernGrad", DQ_SCHEME_TERNGRAD, 2, DQ_NORM_DEFAULT, DQ_ROUND_STOCHASTIC, DQ_CODER_FIXED_ONLY, 0.0, 0},
    R_Q(2), R_Q(3), R_Q(4), R_Q(6), R_Q(8),
    R_QM(2), R_QM(3), R_QM(4), R_QM(6), R_QM(8),
    R_NU(2), R_NU(3), R_NU(4), R_NU(6), R_NU(8),
    {"natural", DQ_SCHEME_NATURAL, 8, DQ_NORM_DEFAULT, DQ_ROUND_STOCHASTIC, DQ_CODER_FIXED_ONLY, 0.0, 0},
    {"natural", DQ_SCHEME_NATURAL, 4, DQ_NORM_DEFAULT, DQ_ROUND_STOCHASTIC, DQ_CODER_FIXED_ONLY, 0.0, 0},
    R_T(2), R_T(3), R_T(4), R_T(6), R_T(8),
    R_TN(2), R_TN(3), R_TN(4), R_TN(6), R_TN(8),
    {"QSGD max, auto coder", DQ_SCHEME_QSGD, 4, DQ_NORM_MAX, DQ_ROUND_STOCHASTIC, DQ_CODER_AUTO, 0.0, 0},
    {"TRUNC, auto coder", DQ_SCHEME_TRUNC, 4, DQ_NORM_DEFAULT, DQ_ROUND_STOCHASTIC, DQ_CODER_AUTO, 0.0, 1},
    {"TRUNC_NU, auto coder", DQ_SCHEME_TRUNC_NU, 4, DQ_NORM_DEFAULT, DQ_ROUND_STOCHASTIC, DQ_CODER_AUTO, 0.0, 2},
    {"top-k 1%", DQ_SCHEME_TOPK, 0, DQ_NORM_DEFAULT, DQ_ROUND_DEFAULT, DQ_CODER_DEFAULT, 0.01, 0},
    {"top-k 10%", DQ_SCHEME_TOPK, 0, DQ_NORM_DEFAULT, DQ_ROUND_DEFAULT, DQ_CODER_DEFAULT, 0.10, 0},
    {"rand-k 10%", DQ_SCHEME_RANDK, 0, DQ_NORM_DEFAULT, DQ_ROUND_DEFAULT, DQ_CODER_DEFAULT, 0.10, 0},
};
#define NROWS (sizeof rows / sizeof rows[0])

static void fill_student3(float *x, size_t n, uint64_t seed) {
    uint64_t s = seed;
    size_t i;
    for (i = 0; i < n; i++) {
        double z, a, b, c;
        bench_normal_pair(&s, &z, &a);
        bench_normal_pair(&s, &b, &c);
        x[i] = (float)(z / sqrt((a * a + b * b + c * c) / 3.0));
    }
}

int main(int argc, char **argv) {
    size_t n = (size_t)1 << 20, cap, i, r;
    unsigned seeds = 3, v, sd;
    float *x, *y, lv[128];
    uint8_t *msg;
    void *work;
    int a, skipped[NROWS];
    const char *prog = argv[0];
    for (a = 1; a < argc; a++) {
        const char *val;
        if ((val = bench_opt_value(prog, argc, argv, &a, "--n")) != NULL)
            n = (size_t)bench_parse_count(prog, "--n", val);
        else if ((val = bench_opt_value(prog, argc, argv, &a, "--seeds")) != NULL)
            seeds = (unsigned)bench_parse_count(prog, "--seeds", val);
        else {
            fprintf(stderr, "usage: %s [--n N] [--seeds S]\n", prog);
            return 2;
        }
    }
    x = (float *)malloc(n * sizeof *x);
    y = (float *)malloc(n * sizeof *y);
    cap = dq_encode_bound_coded(n, 16) + dq_encode_bound(n, 16) + 12u * n + 4096u; /* any scheme, sparse included */
    msg = (uint8_t *)malloc(cap);
    work = malloc(dq_trunc_workspace_size(n));
    if (!x || !y || !msg || !work) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return 2;
    }
    memset(skipped, 0, sizeof skipped);
    printf("n = %lu, %u seed(s); rel. MSE = ||Q(x) - x||^2 / ||x||^2 (Monte Carlo); exact = dq_trunc_mse\n\n",
           (unsigned long)n, seeds);
    printf("| vector | scheme | bits | param | bits/elem | rel. MSE | exact |\n");
    printf("|---|---|---:|---|---:|---:|---:|\n");
    for (v = 0; v < 2; v++) {
        double xx = 0.0;
        if (v == 0)
            bench_fill_gaussian(x, n, 12345u);
        else
            fill_student3(x, n, 54321u);
        for (i = 0; i < n; i++) xx += (double)x[i] * (double)x[i];
        for (r = 0; r < NROWS; r++) {
            const row *w = &rows[r];
            dq_params p;
            dq_status st = DQ_OK;
            double err = 0.0, exact = -1.0;
            size_t len = 0;
            char param[64];
            if (skipped[r]) continue;
            memset(&p, 0, sizeof p);
            p.scheme = w->scheme;
            p.bits = w->bits;
            p.norm = w->norm;
            p.rounding = w->rounding;
            p.coder = w->coder;
            param[0] = '\0';
            if (w->kfrac > 0.0) {
                p.k = (size_t)(w->kfrac * (double)n);
                if (p.k == 0) p.k = 1;
                snprintf(param, sizeof param, "k = %lu", (unsigned long)p.k);
            }
            if (w->trunc_nu) {
                dq_trunc_params tp;
                dq_trunc_info inf;
                double tv, tb;
                memset(&tp, 0, sizeof tp);
                tp.bits = w->bits;
                tp.nonuniform = w->trunc_nu == 2u;
                st = dq_trunc_solve(&tp, x, n, work, dq_trunc_workspace_size(n), &p.alpha, lv, 128, &inf);
                if (st == DQ_OK) st = dq_trunc_mse(x, n, p.alpha, w->bits, w->trunc_nu == 2u ? lv : NULL, &tv, &tb);
                if (st != DQ_OK) {
                    fprintf(stderr, "%s: dq_trunc_solve: %s\n", prog, dq_strerror(st));
                    return 1;
                }
                p.levels = w->trunc_nu == 2u ? lv : NULL;
                exact = (tv + tb) / xx;
                snprintf(param, sizeof param, "alpha = %.4g", (double)p.alpha);
            }
            for (sd = 0; sd < seeds && st == DQ_OK; sd++) {
                double e = 0.0;
                p.seed = 1000u + sd;
                st = dq_encode(&p, x, n, NULL, msg, cap, &len);
                if (st == DQ_OK) st = dq_decode(msg, len, y, n);
                if (st != DQ_OK) break;
                for (i = 0; i < n; i++) {
                    double d = (double)y[i] - (double)x[i];
                    e += d * d;
                }
                err += e / xx;
            }
            if (st == DQ_ERR_PARAM || st == DQ_ERR_BITS) {
                fprintf(stderr, "%s: skipped %s (bits %u): %s\n", prog, w->name, w->bits, dq_strerror(st));
                skipped[r] = 1;
                continue;
            }
            if (st != DQ_OK) {
                fprintf(stderr, "%s: %s (bits %u): %s\n", prog, w->name, w->bits, dq_strerror(st));
                return 1;
            }
            printf("| %s | %s | %u | %s | %.4f | %.5g |", v == 0 ? "Gaussian" : "Student-t 3", w->name, w->bits,
                   param, (double)len * 8.0 / (double)n, err / seeds);
            if (exact >= 0.0)
                printf(" %.5g |\n", exact);
            else
                printf(" |\n");
        }
    }
    free(x);
    free(y);
    free(msg);
    free(work);
    return 0;
}
