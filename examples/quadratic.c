/* quadratic.c - DQSGD against fixed-width QSGD at equal bits, on the quadratic where the DQSGD
 * bound is tight (doc/MATHS.md 9.2). Build: make examples; run: build/quadratic --help
 *
 * Problem. F(w) = 1/2 sum_i h_i (w_i - w*_i)^2 in d dimensions, h_i log-spaced from mu to
 * L = mu * kappa (kappa = 1: isotropic). Exact gradients g = h * (w - w*). N workers quantize the
 * same g independently with the real codec (dq_encode: QSGD, L2 scale per bucket, stochastic
 * rounding, stream = worker, step = n, seed = repetition) and the server adds the decoded
 * messages with weight 1/N; w <- w - eta * mean. alpha = 1 - mu * eta. One step contracts the
 * gap F - F* by alpha^2 here, and that is the contraction dq_sched_params.alpha asks for.
 *
 * Methods, all at the same bit budget per worker (the bits of a fixed run at width b):
 *   fixed     every step at b bits (QSGD);
 *   dqsgd     dq_sched P2 (budget = T * message bits at b), contraction alpha^2, window 1,
 *             period 1, the norm reported after each step = ||g_n||, prior ||g_0||;
 *   greedy    dq_alloc_bits over the T steps, weights alpha^(2(T-1-n)) G_n^2 from a pilot
 *             full-precision run: the exact weights of this problem (doc/MATHS.md 9.2, 9.5);
 *   dqsgd-pl  dqsgd with contraction alpha = 1 - mu eta, the value of the mu-PL bound, which
 *             under-weights late steps here: shows what a loose contraction costs.
 *
 * Prediction (isotropic only). With e_n = w_n - w*, xi_n = mean - g_n and E[xi_n | past] = 0,
 *     e_{n+1} = (1 - eta mu) e_n - eta xi_n,
 *     E||e_{n+1}||^2 = alpha^2 E||e_n||^2 + eta^2 E||xi_n||^2,   E||xi_n||^2 = E V_n / N,
 *     V_n = E||Q(g_n) - g_n||^2 = sum_buckets (scale/s)^2 sum_i f_i (1 - f_i) <= B/(4 s^2) ||g_n||^2,
 * f_i the fractional part of s |g_i| / scale. So F_{n+1} = alpha^2 F_n + (mu eta^2 / 2N) E V_n
 * exactly. "pred" runs this recursion with E V_n replaced by the mean over the repetitions of the
 * exact V_n of the simulated g_n (so it agrees with the simulation up to Monte-Carlo error);
 * "bound" runs F_{n+1} = F_n (alpha^2 + (mu eta)^2 B / (4 N s_n^2)) (the variance bound, with
 * ||g_n||^2 = 2 mu F_n), a pure prediction with no simulation input (mean of 1/s_n^2 for dqsgd).
 * "quant" is the quantization part F(w_T) - F(w_T of the noiseless run) estimated as
 * 1/2 sum h (w_T - w_T^noiseless)^2, whose mean is exactly that part but with far less variance. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dqsgd.h"

typedef struct cfg {
    size_t d;
    unsigned T, N, seeds;
    double mu, kappa, eta;
    uint32_t bucket;
    unsigned long long seed;
    const char *csv;
} cfg;

enum { M_FIXED, M_DQSGD, M_GREEDY, M_DQSGD_PL, M_COUNT };
static const char *const method_name[M_COUNT] = {"fixed", "dqsgd", "greedy", "dqsgd-pl"};
static const unsigned widths_ref[5] = {2, 3, 4, 6, 8};

typedef struct result {
    double mF, sdF, minF, maxF, mQ, seQ, spent, budget, pred, bound;
    unsigned wmin, wmax, wfirst, wlast;
} result;

/* splitmix64 for the problem data (the codec has its own dither generator) */
static unsigned long long rng_next(unsigned long long *s) {
    unsigned long long z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double rng_gauss(unsigned long long *s) {
    double u1 = (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
    double u2 = (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
static void *xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1u);
    if (!p) {
        fprintf(stderr, "quadratic: out of memory\n");
        exit(2);
    }
    return p;
}
static int check(dq_status st, const char *what) {
    if (st != DQ_OK) fprintf(stderr, "quadratic: %s: %s\n", what, dq_strerror(st));
    return st != DQ_OK;
}
static double levels(unsigned b) { return ldexp(1.0, (int)b - 1) - 1.0; }

/* Exact conditional variance E||Q(g) - g||^2 of one message (double arithmetic on the codec's
 * float scale), and the bound B/(4 s^2) ||g||^2 the optimizer uses. */
static double exact_var(const float *g, size_t d, size_t bucket, unsigned bits) {
    double s = levels(bits), V = 0.0;
    size_t lo, i;
    for (lo = 0; lo < d; lo += bucket) {
        size_t hi = lo + bucket < d ? lo + bucket : d;
        double ss = 0.0, sum = 0.0;
        float scale;
        for (i = lo; i < hi; i++) ss += (double)g[i] * (double)g[i];
        scale = (float)sqrt(ss);
        if (scale == 0.0f) continue;
        for (i = lo; i < hi; i++) {
            double x = s * fabs((double)g[i]) / (double)scale, f = x - floor(x);
            sum += f * (1.0 - f);
        }
        V += ((double)scale / s) * ((double)scale / s) * sum;
    }
    return V;
}

typedef struct problem {
    cfg c;
    double *h, *wstar, *e0, *G, alpha, F0, FT_det, *eT_det;
    size_t B; /* effective bucket */
} problem;

/* One method at one budget: K repetitions. plan = widths per step for fixed/greedy (NULL for dqsgd). */
static int run_method(const problem *P, int method, const unsigned *plan, double budget, result *res) {
    const cfg *c = &P->c;
    size_t d = c->d, i, cap = dq_encode_bound(d, 16), len = 0;
    unsigned T = c->T, k, n, m;
    double *w = (double *)xmalloc(d * sizeof(double));
    float *g = (float *)xmalloc(d * sizeof(float)), *acc = (float *)xmalloc(d * sizeof(float));
    uint8_t *msg = (uint8_t *)xmalloc(cap);
    double *Vsum = (double *)xmalloc(T * sizeof(double)), *inv_s2 = (double *)xmalloc(T * sizeof(double));
    double sF = 0, sF2 = 0, sQ = 0, sQ2 = 0, spent_tot = 0;
    int fail = 0;
    memset(Vsum, 0, T * sizeof(double));
    memset(inv_s2, 0, T * sizeof(double));
    res->minF = HUGE_VAL;
    res->maxF = -HUGE_VAL;
    res->wmin = 99;
    res->wmax = 0;
    for (k = 0; k < c->seeds && !fail; k++) {
        dq_sched S;
        double F = 0.0, Q = 0.0, spent = 0.0;
        if (method == M_DQSGD || method == M_DQSGD_PL) {
            dq_sched_params p;
            memset(&p, 0, sizeof p);
            p.mode = DQ_SCHED_DQSGD;
            p.steps = T;
            p.dim = d;
            p.bucket = c->bucket;
            p.alpha = method == M_DQSGD_PL ? P->alpha : P->alpha * P->alpha;
            p.norm_prior = P->G[0];
            p.budget_bits = budget;
            if (check(dq_sched_init(&S, &p), "dq_sched_init")) {
                fail = 1;
                break;
            }
        }
        for (i = 0; i < d; i++) w[i] = P->wstar[i] + P->e0[i];
        for (n = 0; n < T; n++) {
            double ss = 0.0;
            unsigned b = 2;
            for (i = 0; i < d; i++) {
                g[i] = (float)(P->h[i] * (w[i] - P->wstar[i]));
                ss += (double)g[i] * (double)g[i];
                acc[i] = 0.0f;
            }
            if (method == M_DQSGD || method == M_DQSGD_PL) {
                if (check(dq_sched_next(&S, &b), "dq_sched_next")) {
                    fail = 1;
                    break;
                }
            } else {
                b = plan[n];
            }
            if (b < res->wmin) res->wmin = b;
            if (b > res->wmax) res->wmax = b;
            if (k == 0 && n == 0) res->wfirst = b;
            if (k == 0 && n + 1u == T) res->wlast = b;
            inv_s2[n] += 1.0 / (levels(b) * levels(b));
            Vsum[n] += exact_var(g, d, P->B, b);
            for (m = 0; m < c->N; m++) {
                dq_params q;
                memset(&q, 0, sizeof q);
                q.bits = b;
                q.bucket = c->bucket;
                q.rounding = DQ_ROUND_STOCHASTIC;
                q.norm = DQ_NORM_L2;
                q.seed = c->seed + k;
                q.step = n;
                q.stream = m;
                if (check(dq_encode(&q, g, d, NULL, msg, cap, &len), "dq_encode") ||
                    check(dq_decode_add(msg, len, 1.0f / (float)c->N, acc, d), "dq_decode_add")) {
                    fail = 1;
                    break;
                }
            }
            if (fail) break;
            spent += 8.0 * (double)len; /* one worker's message, header included */
            for (i = 0; i < d; i++) w[i] -= c->eta * (double)acc[i];
            if ((method == M_DQSGD || method == M_DQSGD_PL) && check(dq_sched_update(&S, sqrt(ss), 0.0, 8.0 * (double)len), "dq_sched_update")) {
                fail = 1;
                break;
            }
        }
        for (i = 0; i < d; i++) {
            double e = w[i] - P->wstar[i], z = e - P->eT_det[i];
            F += 0.5 * P->h[i] * e * e;
            Q += 0.5 * P->h[i] * z * z;
        }
        sF += F;
        sF2 += F * F;
        sQ += Q;
        sQ2 += Q * Q;
        spent_tot += spent;
        if (F < res->minF) res->minF = F;
        if (F > res->maxF) res->maxF = F;
    }
    if (!fail) {
        double K = (double)c->seeds, a2 = P->alpha * P->alpha, pe = P->F0, pb = P->F0;
        res->mF = sF / K;
        res->sdF = K > 1 ? sqrt(fmax(0.0, (sF2 - K * res->mF * res->mF) / (K - 1.0))) : 0.0;
        res->mQ = sQ / K;
        res->seQ = K > 1 ? sqrt(fmax(0.0, (sQ2 - K * res->mQ * res->mQ) / (K - 1.0)) / K) : 0.0;
        res->spent = spent_tot / K;
        res->budget = budget;
        for (n = 0; n < T; n++) {
            pe = a2 * pe + c->mu * c->eta * c->eta / (2.0 * c->N) * Vsum[n] / K;
            pb = pb * (a2 + c->mu * c->mu * c->eta * c->eta * (double)P->B / (4.0 * c->N) * inv_s2[n] / K);
        }
        res->pred = pe;
        res->bound = pb;
    }
    free(w);
    free(g);
    free(acc);
    free(msg);
    free(Vsum);
    free(inv_s2);
    return fail;
}

static void usage(void) {
    printf("usage: quadratic [options]\n"
           "  --d N        dimensions (1024)          --T N       steps (200)\n"
           "  --workers N  workers (8)                --seeds K   repetitions per method (20)\n"
           "  --mu X       smallest curvature (1)     --kappa X   condition number; 1 = isotropic (1)\n"
           "  --eta X      step size (default 1/L for kappa > 1, 0.05/mu when isotropic: 1/L would\n"
           "               give alpha = 0 there)\n"
           "  --bucket N   elements per scale, multiple of 8 (512)\n"
           "  --seed S     base seed (1)              --csv PATH  also write the table as CSV\n");
}

static int parse(int argc, char **argv, cfg *c) {
    int i;
    c->d = 1024;
    c->T = 200;
    c->N = 8;
    c->seeds = 20;
    c->mu = 1.0;
    c->kappa = 1.0;
    c->eta = 0.0;
    c->bucket = 512;
    c->seed = 1;
    c->csv = NULL;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage();
            exit(0);
        }
        if (!v) {
            fprintf(stderr, "quadratic: %s needs a value (see --help)\n", a);
            return 1;
        }
        i++;
        if (!strcmp(a, "--d")) c->d = (size_t)strtoull(v, NULL, 10);
        else if (!strcmp(a, "--T")) c->T = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--workers")) c->N = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--seeds")) c->seeds = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--mu")) c->mu = strtod(v, NULL);
        else if (!strcmp(a, "--kappa")) c->kappa = strtod(v, NULL);
        else if (!strcmp(a, "--eta")) c->eta = strtod(v, NULL);
        else if (!strcmp(a, "--bucket")) c->bucket = (uint32_t)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--seed")) c->seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--csv")) c->csv = v;
        else {
            fprintf(stderr, "quadratic: unknown option %s (see --help)\n", a);
            return 1;
        }
    }
    if (c->eta == 0.0) c->eta = c->kappa > 1.0 ? 1.0 / (c->mu * c->kappa) : 0.05 / c->mu;
    if (c->d < 1 || c->T < 1 || c->N < 1 || c->seeds < 1 || !(c->mu > 0) || !(c->kappa >= 1) ||
        !(c->eta > 0 && c->eta * c->mu * c->kappa <= 1.0) || c->bucket == 0 || c->bucket % 8u) {
        fprintf(stderr, "quadratic: invalid options (need d, T, workers, seeds >= 1, mu > 0, kappa >= 1, "
                        "0 < eta <= 1/L, bucket a multiple of 8)\n");
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    problem P;
    cfg *c = &P.c;
    result res[5][M_COUNT];
    unsigned *plan, iw, mth, n;
    size_t i;
    unsigned long long rs;
    double L, *ecur, *wts;
    void *work;
    FILE *csv = NULL;
    int iso;
    if (parse(argc, argv, c)) return 1;
    iso = c->kappa == 1.0;
    L = c->mu * c->kappa;
    P.alpha = 1.0 - c->mu * c->eta;
    P.B = c->bucket < c->d ? c->bucket : c->d;
    P.h = (double *)xmalloc(c->d * sizeof(double));
    P.wstar = (double *)xmalloc(c->d * sizeof(double));
    P.e0 = (double *)xmalloc(c->d * sizeof(double));
    P.eT_det = (double *)xmalloc(c->d * sizeof(double));
    P.G = (double *)xmalloc(c->T * sizeof(double));
    ecur = (double *)xmalloc(c->d * sizeof(double));
    wts = (double *)xmalloc(c->T * sizeof(double));
    plan = (unsigned *)xmalloc(c->T * sizeof(unsigned));
    work = xmalloc(dq_alloc_workspace_size(c->T));
    rs = c->seed * 0x2545F4914F6CDD1Dull + 7u;
    P.F0 = 0.0;
    for (i = 0; i < c->d; i++) {
        P.h[i] = c->d > 1 ? c->mu * pow(c->kappa, (double)i / (double)(c->d - 1u)) : c->mu;
        P.wstar[i] = rng_gauss(&rs);
        P.e0[i] = rng_gauss(&rs);
        P.F0 += 0.5 * P.h[i] * P.e0[i] * P.e0[i];
        ecur[i] = P.e0[i];
    }
    /* pilot: the full-precision run, its gradient norms and its final point */
    for (n = 0; n < c->T; n++) {
        double ss = 0.0;
        for (i = 0; i < c->d; i++) ss += (P.h[i] * ecur[i]) * (P.h[i] * ecur[i]);
        P.G[n] = sqrt(ss);
        for (i = 0; i < c->d; i++) ecur[i] -= c->eta * P.h[i] * ecur[i];
    }
    P.FT_det = 0.0;
    for (i = 0; i < c->d; i++) {
        P.eT_det[i] = ecur[i];
        P.FT_det += 0.5 * P.h[i] * ecur[i] * ecur[i];
    }
    printf("quadratic: d=%zu T=%u workers=%u seeds=%u bucket=%u  %s: mu=%g L=%g eta=%g alpha=1-mu*eta=%.6g\n", c->d,
           c->T, c->N, c->seeds, (unsigned)c->bucket, iso ? "isotropic" : "diagonal", c->mu, L, c->eta, P.alpha);
    printf("F(w_0)-F* = %.6g, full precision F(w_T)-F* = %.6g; codec backend %s\n\n", P.F0, P.FT_det, dq_simd_backend());

    for (iw = 0; iw < 5; iw++) {
        unsigned b = widths_ref[iw];
        double budget = (double)c->T * dq_message_bits(c->d, b, c->bucket), used = 0.0;
        for (mth = 0; mth < M_COUNT; mth++) {
            const unsigned *pl = NULL;
            if (mth == M_FIXED) {
                for (n = 0; n < c->T; n++) plan[n] = b;
                pl = plan;
            } else if (mth == M_GREEDY) {
                for (n = 0; n < c->T; n++) {
                    double e = 2.0 * (double)(c->T - 1u - n);
                    wts[n] = pow(P.alpha, e) * P.G[n] * P.G[n];
                }
                { /* every step has d elements: the dims array is d repeated */
                    size_t *dims = (size_t *)xmalloc(c->T * sizeof(size_t));
                    dq_status st;
                    for (n = 0; n < c->T; n++) dims[n] = c->d;
                    st = dq_alloc_bits(wts, dims, c->T, c->bucket, budget, 2, 16, work, dq_alloc_workspace_size(c->T),
                                       plan, &used);
                    free(dims);
                    if (check(st, "dq_alloc_bits")) return 1;
                }
                pl = plan;
            }
            if (run_method(&P, (int)mth, pl, budget, &res[iw][mth])) return 1;
        }
    }

    if (c->csv) {
        csv = fopen(c->csv, "w");
        if (!csv) {
            perror(c->csv);
            return 1;
        }
        fprintf(csv, "problem,d,T,workers,seeds,mu,kappa,eta,alpha,budget_width,method,budget_bits,spent_bits,"
                     "width_min,width_max,width_first,width_last,mean_F,sd_F,min_F,max_F,mean_quant,se_quant,"
                     "pred_exact_var,pred_bound,F_full_precision\n");
    }
    printf("budget = T x message bits at width b (per worker, headers and scales included). F = F(w_T) - F*\n");
    printf("over %u seeds: mean, sd, [min, max]. quant = F(w_T) - F(noiseless w_T), mean +- se.\n", c->seeds);
    if (iso) printf("pred: exact recursion with the mean exact variance; bound: recursion with B/(4s^2)||g||^2.\n");
    printf("\n%-3s %-9s %9s %7s %-7s %-12s %-11s %-23s %-21s%s\n", "b", "method", "bits/wkr", "of bdg", "widths",
           "mean F", "sd F", "[min, max] F", "quant (+- se)", iso ? "  pred         bound" : "");
    for (iw = 0; iw < 5; iw++) {
        for (mth = 0; mth < M_COUNT; mth++) {
            const result *r = &res[iw][mth];
            char wbuf[16], mm[48], qb[48];
            snprintf(wbuf, sizeof wbuf, "%u..%u", r->wmin, r->wmax);
            snprintf(mm, sizeof mm, "[%.4g, %.4g]", r->minF, r->maxF);
            snprintf(qb, sizeof qb, "%.4g +- %.2g", r->mQ, r->seQ);
            printf("%-3u %-9s %9.4g %7.4f %-7s %-12.6g %-11.3g %-23s %-21s", widths_ref[iw], method_name[mth], r->spent,
                   r->spent / r->budget, wbuf, r->mF, r->sdF, mm, qb);
            if (iso) printf("  %-12.6g %-12.6g", r->pred, r->bound);
            printf("\n");
            if (csv)
                fprintf(csv, "%s,%zu,%u,%u,%u,%g,%g,%g,%.10g,%u,%s,%.0f,%.1f,%u,%u,%u,%u,%.10g,%.6g,%.10g,%.10g,%.10g,%.6g,%.10g,"
                             "%.10g,%.10g\n",
                        iso ? "isotropic" : "diagonal", c->d, c->T, c->N, c->seeds, c->mu, c->kappa, c->eta, P.alpha,
                        widths_ref[iw], method_name[mth], r->budget, r->spent, r->wmin, r->wmax, r->wfirst, r->wlast, r->mF,
                        r->sdF, r->minF, r->maxF, r->mQ, r->seQ, iso ? r->pred : nan(""), iso ? r->bound : nan(""),
                        P.FT_det);
        }
        printf("\n");
    }
    /* verdict: each adaptive method against the fixed width with the same budget, on the
     * quantization part (same noiseless part for all, so the comparison is at equal bits) */
    printf("quant part relative to fixed at the same budget (<1: better than fixed; +- 2 se):\n");
    for (iw = 0; iw < 5; iw++) {
        const result *f = &res[iw][M_FIXED];
        printf("  b=%u:", widths_ref[iw]);
        for (mth = M_DQSGD; mth < M_COUNT; mth++) {
            const result *r = &res[iw][mth];
            double ratio = f->mQ > 0 ? r->mQ / f->mQ : 1.0;
            double se = f->mQ > 0 ? ratio * sqrt((r->seQ / fmax(r->mQ, 1e-300)) * (r->seQ / fmax(r->mQ, 1e-300)) +
                                                 (f->seQ / f->mQ) * (f->seQ / f->mQ))
                                  : 0.0;
            printf("  %s %.3f +- %.3f", method_name[mth], ratio, 2.0 * se);
        }
        printf("\n");
    }
    if (csv) {
        fclose(csv);
        printf("CSV written to %s\n", c->csv);
    }
    free(P.h);
    free(P.wstar);
    free(P.e0);
    free(P.eT_det);
    free(P.G);
    free(ecur);
    free(wts);
    free(plan);
    free(work);
    return 0;
}
