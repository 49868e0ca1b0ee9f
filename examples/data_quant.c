/* data_quant.c - quantized gradients against quantized data (doc/MATHS.md 13) on a synthetic
 * logistic regression. Build: make examples; run: build/data_quant [--steps T] [--budget F]
 *
 * Task. d = 100 features x ~ N(0, I/d) (so ||x|| ~ 1), labels y in {0, 1} drawn with
 * P(y = 1) = sigmoid(w*.x), w* ~ N(0, 9 I): about 80% of the labels agree with sign(w*.x).
 * 4000 training samples split over M = 8 workers (500 each), 2000 test samples. Loss: mean
 * logistic loss + (reg/2)||w||^2, reg = 1e-4. Every method runs T steps of SGD from w = 0 with
 * the same step size (eta = 2) and the same mini-batches: worker m draws B = 16 of its samples
 * per step (with replacement) from a fixed-seed stream.
 *
 * Methods (uplink traffic only: the model broadcast is the same for all and not counted):
 *   float32 grad   each worker sends its mini-batch gradient as 100 float32;
 *   QSGD b-bit     the gradient as a headerless QSGD block (dq_encode_block: one L2 scale,
 *                  b-bit levels, stochastic rounding keyed by (seed, step, worker)), averaged
 *                  by dq_decode_add_block with weight 1/M;
 *   data b-bit     the worker sends samples instead of gradients. For each sample of its
 *                  mini-batch it computes the importance a = |sigmoid(w.x) - y| ||x|| (the
 *                  norm of that sample's loss gradient), picks lambda with dq_gate_lambda so
 *                  that it expects to send budget x B samples, and gates each sample with
 *                  dq_gate (probability min(1, a/lambda), weight 1/p, keyed by (seed, step,
 *                  worker) and the sample id). A gated sample costs its id (12 bits for 4000
 *                  samples) and the gate's q (24 bits; weight = 2^24/q exactly); the first
 *                  time a sample is sent, its features also go, as a QSGD
 *                  block of b bits (dq_sample_encode_block: the dither keyed by the sample id,
 *                  so a sample has one fixed quantized form) plus its label (1 bit). The server
 *                  keeps the decoded samples and computes the gradient itself:
 *                  (1/(M B)) sum over gated samples of weight * (sigmoid(w.xq) - y) xq.
 *                  With budget 1 (--budget 1) every mini-batch sample is sent (lambda = 0).
 *   data 8 unif.   the same with every importance set to 1: a uniform random budget x B of the
 *                  mini-batch, weight 1/budget; shows what the importance gate itself buys.
 * The data methods pay for each distinct sample once and then 36 bits per gated sample, so
 * their traffic does not grow with d after the first epoch; their gradient is unbiased for the
 * quantized data but not for the real data (the loss is not linear in x), which a fine width
 * keeps small. Reported: final loss and accuracy on the real (unquantized) data, test
 * accuracy, total uplink megabits and the part spent on features, distinct samples sent.
 * --dim d changes the dimension (the QSGD gradient traffic grows with d, the per-step part of
 * the data traffic does not). Everything is deterministic (fixed seeds); about a second. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dqsgd.h"

enum { NTRAIN = 4000, NTEST = 2000, M = 8, B = 16, DMAX = 1024, ID_BITS = 12 /* ceil(log2 NTRAIN) */ };
static const double REG = 1e-4, ETA = 2.0;

static int D = 100;
static float *xtr, *xte; /* row i at x + i * D */
static unsigned char ytr[NTRAIN], yte[NTEST];

static unsigned long long rng_next(unsigned long long *s) {
    unsigned long long z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double rng_unif(unsigned long long *s) { return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0); }
static double rng_gauss(unsigned long long *s) {
    double u1 = rng_unif(s), u2 = rng_unif(s);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
static double sigmoid(double z) { return z >= 0 ? 1.0 / (1.0 + exp(-z)) : exp(z) / (1.0 + exp(z)); }
static double dot(const double *w, const float *x) {
    double s = 0.0;
    int i;
    for (i = 0; i < D; i++) s += w[i] * (double)x[i];
    return s;
}
static double norm(const float *x) {
    double s = 0.0;
    int i;
    for (i = 0; i < D; i++) s += (double)x[i] * (double)x[i];
    return sqrt(s);
}

static void make_data(void) {
    unsigned long long s = 20240531ull;
    double wstar[DMAX];
    int i, j;
    xtr = (float *)malloc((size_t)NTRAIN * (size_t)D * sizeof *xtr);
    xte = (float *)malloc((size_t)NTEST * (size_t)D * sizeof *xte);
    if (!xtr || !xte) exit(1);
    for (j = 0; j < D; j++) wstar[j] = 3.0 * rng_gauss(&s);
    for (i = 0; i < NTRAIN + NTEST; i++) {
        float *x = i < NTRAIN ? xtr + (size_t)i * (size_t)D : xte + (size_t)(i - NTRAIN) * (size_t)D;
        unsigned char *y = i < NTRAIN ? &ytr[i] : &yte[i - NTRAIN];
        for (j = 0; j < D; j++) x[j] = (float)(rng_gauss(&s) / sqrt((double)D));
        *y = rng_unif(&s) < sigmoid(dot(wstar, x)) ? 1u : 0u;
    }
}

/* mean logistic loss + reg/2 ||w||^2 and accuracy over a data set */
static void evaluate(const double *w, const float *x, const unsigned char *y, int n, double *loss, double *acc) {
    double l = 0.0, r = 0.0;
    int i, right = 0;
    for (i = 0; i < n; i++) {
        double z = dot(w, x + (size_t)i * (size_t)D);
        l += (z > 0 ? z : 0.0) - z * (double)y[i] + log1p(exp(-fabs(z)));
        right += (z > 0) == (y[i] == 1u);
    }
    for (i = 0; i < D; i++) r += w[i] * w[i];
    *loss = l / n + 0.5 * REG * r;
    *acc = (double)right / n;
}

typedef struct method {
    const char *name;
    int kind;      /* 0 float32 gradient, 1 QSGD gradient, 2 data (importance gate), 3 data (uniform gate) */
    unsigned bits; /* QSGD width of the gradient or of the data */
} method;

typedef struct result {
    double loss, acc, test_acc, mbits, feat_mbits;
    long distinct;
} result;

static void fail(const char *what, dq_status st) {
    fprintf(stderr, "data_quant: %s: %s\n", what, dq_strerror(st));
    exit(1);
}

static result run(const method *me, unsigned steps, double budget) {
    static float cache[NTRAIN * DMAX];
    static unsigned char have[NTRAIN];
    double w[DMAX], grad[DMAX];
    float gw[DMAX], acc[DMAX];
    uint8_t buf[8192];
    unsigned long long batch_rng[M];
    double bits = 0.0, feat_bits = 0.0;
    dq_params p;
    size_t len = 0;
    unsigned t;
    int m, i, j;
    result res;
    memset(w, 0, sizeof w);
    memset(have, 0, sizeof have);
    memset(&p, 0, sizeof p);
    p.bits = me->bits;
    p.bucket = DQ_BUCKET_WHOLE; /* one L2 scale per gradient or sample */
    p.seed = 7;
    for (m = 0; m < M; m++) batch_rng[m] = 1000u + (unsigned)m;
    res.distinct = 0;
    for (t = 0; t < steps; t++) {
        memset(grad, 0, sizeof grad);
        memset(acc, 0, sizeof acc);
        for (m = 0; m < M; m++) {
            int batch[B];
            for (i = 0; i < B; i++) batch[i] = m * (NTRAIN / M) + (int)(rng_next(&batch_rng[m]) % (NTRAIN / M));
            if (me->kind <= 1) { /* worker computes its mini-batch gradient */
                double g[DMAX];
                memset(g, 0, sizeof g);
                for (i = 0; i < B; i++) {
                    const float *x = xtr + (size_t)batch[i] * (size_t)D;
                    double r = sigmoid(dot(w, x)) - (double)ytr[batch[i]];
                    for (j = 0; j < D; j++) g[j] += r * (double)x[j] / B;
                }
                for (j = 0; j < D; j++) gw[j] = (float)g[j];
                if (me->kind == 0) {
                    for (j = 0; j < D; j++) grad[j] += (double)gw[j] / M;
                    bits += 32.0 * D;
                } else {
                    dq_status st;
                    p.step = t;
                    p.stream = (uint32_t)m;
                    if ((st = dq_encode_block(&p, gw, (size_t)D, NULL, buf, sizeof buf, &len)) != DQ_OK)
                        fail("encode", st);
                    if ((st = dq_decode_add_block(&p, buf, len, (size_t)D, 1.0f / M, acc)) != DQ_OK) fail("decode", st);
                    bits += 8.0 * (double)len;
                }
            } else { /* worker gates samples; the server computes the gradient from its copies */
                double dl[B], xn[B], a[B], lam = 0.0;
                dq_gate_params g;
                dq_status st;
                for (i = 0; i < B; i++) { /* l'(w.x) = sigmoid(w.x) - y; the sample's gradient is l' x */
                    const float *x = xtr + (size_t)batch[i] * (size_t)D;
                    dl[i] = sigmoid(dot(w, x)) - (double)ytr[batch[i]];
                    xn[i] = norm(x);
                    a[i] = fabs(dl[i]) * xn[i];
                    if (me->kind == 3) dl[i] = xn[i] = a[i] = 1.0; /* uniform: every sample equally important */
                }
                if (budget < 1.0 && (st = dq_gate_lambda(a, B, budget * B, &lam)) != DQ_OK) fail("lambda", st);
                memset(&g, 0, sizeof g);
                g.lambda = lam;
                g.seed = 11;
                g.stream = (uint32_t)m;
                for (i = 0; i < B; i++) {
                    int send = 0, id = batch[i];
                    double wt = 0.0, r;
                    if ((st = dq_gate(&g, t, (uint64_t)id, dl[i], xn[i], &send, &wt)) != DQ_OK) fail("gate", st);
                    if (!send) continue;
                    bits += ID_BITS + 24.0; /* the id and q (weight = 2^24 / q, exact) */
                    if (!have[id]) {        /* first time: the features (QSGD block) and the label */
                        if ((st = dq_sample_encode_block(&p, (uint64_t)id, xtr + (size_t)id * (size_t)D, (size_t)D, buf,
                                                         sizeof buf, &len)) != DQ_OK)
                            fail("sample encode", st);
                        if ((st = dq_decode_block(&p, buf, len, (size_t)D, cache + (size_t)id * (size_t)D)) != DQ_OK)
                            fail("sample decode", st);
                        bits += 8.0 * (double)len + 1.0;
                        feat_bits += 8.0 * (double)len + 1.0;
                        have[id] = 1;
                        res.distinct++;
                    }
                    r = sigmoid(dot(w, cache + (size_t)id * (size_t)D)) - (double)ytr[id];
                    for (j = 0; j < D; j++)
                        grad[j] += wt * r * (double)cache[(size_t)id * (size_t)D + (size_t)j] / (M * B);
                }
            }
        }
        for (j = 0; j < D; j++) {
            double gj = me->kind == 1 ? (double)acc[j] : grad[j];
            w[j] -= ETA * (gj + REG * w[j]);
        }
    }
    evaluate(w, xtr, ytr, NTRAIN, &res.loss, &res.acc);
    {
        double tl;
        evaluate(w, xte, yte, NTEST, &tl, &res.test_acc);
    }
    res.mbits = bits * 1e-6;
    res.feat_mbits = feat_bits * 1e-6;
    return res;
}

int main(int argc, char **argv) {
    static const method methods[] = {{"float32 grad", 0, 32}, {"QSGD 2-bit", 1, 2},  {"QSGD 4-bit", 1, 4},
                                     {"QSGD 8-bit", 1, 8},    {"data 2-bit", 2, 2},  {"data 4-bit", 2, 4},
                                     {"data 8-bit", 2, 8},    {"data 8 unif.", 3, 8}};
    unsigned steps = 2000;
    double budget = 0.25, loss_opt = 0.0, acc_opt = 0.0;
    size_t k;
    int a;
    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--steps") == 0 && a + 1 < argc)
            steps = (unsigned)strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--budget") == 0 && a + 1 < argc)
            budget = strtod(argv[++a], NULL);
        else if (strcmp(argv[a], "--dim") == 0 && a + 1 < argc)
            D = atoi(argv[++a]);
        else {
            fprintf(stderr, "usage: data_quant [--steps T (2000)] [--budget F in (0, 1] (0.25)] [--dim d (100)]\n");
            return 2;
        }
    }
    if (steps == 0 || !(budget > 0.0 && budget <= 1.0) || D < 8 || D > DMAX) {
        fprintf(stderr, "data_quant: steps >= 1, budget in (0, 1], dim in 8..%d\n", DMAX);
        return 2;
    }
    make_data();
    { /* reference: the minimizer of the regularized loss on the real data, by Newton's method */
        static double w[DMAX], g[DMAX], h[DMAX * DMAX];
        unsigned t;
        int i, j, l;
        memset(w, 0, sizeof w);
        for (t = 0; t < 12; t++) {
            memset(g, 0, sizeof g);
            memset(h, 0, sizeof h);
            for (i = 0; i < NTRAIN; i++) {
                const float *x = xtr + (size_t)i * (size_t)D;
                double sg = sigmoid(dot(w, x)), r = sg - (double)ytr[i], c = sg * (1.0 - sg) / NTRAIN;
                for (j = 0; j < D; j++) {
                    g[j] += r * (double)x[j] / NTRAIN;
                    for (l = 0; l <= j; l++) h[j * D + l] += c * (double)x[j] * (double)x[l];
                }
            }
            for (j = 0; j < D; j++) {
                g[j] += REG * w[j];
                h[j * D + j] += REG;
            }
            for (j = 0; j < D; j++) /* Cholesky of the lower triangle, in place */
                for (l = 0; l <= j; l++) {
                    double v = h[j * D + l];
                    for (i = 0; i < l; i++) v -= h[j * D + i] * h[l * D + i];
                    h[j * D + l] = l == j ? sqrt(v) : v / h[l * D + l];
                }
            for (j = 0; j < D; j++) { /* solve L L^T s = g; w -= s */
                for (i = 0; i < j; i++) g[j] -= h[j * D + i] * g[i];
                g[j] /= h[j * D + j];
            }
            for (j = D; j-- > 0;) {
                for (i = j + 1; i < D; i++) g[j] -= h[i * D + j] * g[i];
                g[j] /= h[j * D + j];
            }
            for (j = 0; j < D; j++) w[j] -= g[j];
        }
        evaluate(w, xtr, ytr, NTRAIN, &loss_opt, &acc_opt);
    }
    printf("logistic regression, d = %d, %d training samples on %d workers, batch %d per worker, %u steps,\n"
           "eta %.1f; data methods gate to %.0f%% of each mini-batch in expectation (uplink bits only)\n",
           D, NTRAIN, M, B, steps, ETA, budget * 100.0);
    printf("minimum of the training loss (Newton): %.4f, train accuracy there %.3f\n\n", loss_opt, acc_opt);
    printf("%-13s %10s %9s %9s %11s %11s %9s\n", "method", "train loss", "train acc", "test acc", "uplink Mbit",
           "features", "samples");
    for (k = 0; k < sizeof methods / sizeof methods[0]; k++) {
        result r = run(&methods[k], steps, budget);
        if (methods[k].kind >= 2)
            printf("%-13s %10.4f %9.3f %9.3f %11.3f %11.3f %9ld\n", methods[k].name, r.loss, r.acc, r.test_acc, r.mbits,
                   r.feat_mbits, r.distinct);
        else
            printf("%-13s %10.4f %9.3f %9.3f %11.3f %11s %9s\n", methods[k].name, r.loss, r.acc, r.test_acc, r.mbits,
                   "-", "-");
    }
    printf("\nfeatures: the one-time cost of the distinct samples sent (QSGD block + label bit); the rest of a\n"
           "data method's traffic is %d bits per gated sample per step (a %d-bit id and the gate's 24-bit q).\n",
           ID_BITS + 24, ID_BITS);
    return 0;
}
