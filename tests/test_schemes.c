/* The level schemes beside QSGD (doc/FORMAT.md 5.4-5.6, 6.7): NUQSGD's exponential levels,
 * natural compression, TernGrad, truncation with uniform and with non-uniform levels, two-means
 * 1-bit SGD (section 22: exact group means, least-squares optimality, error feedback). Each is
 * checked against the maths with fixed seeds: unbiasedness (a chi-square statistic over the
 * coordinates), the exact expected error against its bound, TernGrad's second moment, the
 * worst case 1/8 of natural compression; plus the rounding rule against an independent
 * double-precision reference, error feedback, coders, ranges, header fields and bad input. */
#include "../dqsgd.h"
#include "harness.h"
#include "internals.h"

#define D 512u

static void gauss_vec(dq_t_rng *r, float *x, size_t n, double sd) {
    size_t i;
    for (i = 0; i < n; i++) x[i] = (float)(sd * dq_t_gauss(r));
}
static dq_params scheme_params(dq_scheme sc, unsigned bits) {
    dq_params p;
    memset(&p, 0, sizeof p);
    p.coder = DQ_CODER_FIXED_ONLY; /* coders are asked for by the tests that compare them */
    p.scheme = sc;
    p.bits = bits;
    p.bucket = DQ_BUCKET_WHOLE;
    p.seed = 7;
    return p;
}
/* Encode then decode; returns the status of the first failing call. */
static dq_status roundtrip(const dq_params *p, const float *x, size_t n, float *res, float *out, uint8_t *msg,
                           size_t *len) {
    dq_status st = dq_encode(p, x, n, res, msg, dq_encode_bound(n, p->bits ? p->bits : 4u), len);
    if (st != DQ_OK) return st;
    return dq_decode(msg, *len, out, n);
}
static float bucket_scale(const uint8_t *msg) { return dq_t_bitsf(dq_t_ld32(msg + DQ_HEADER_SIZE)); }

/* The normalized levels of a scheme: exponential, or the caller's table. */
static void levels_of(unsigned bits, const float *lv, double *tab) {
    unsigned s = (1u << (bits - 1)) - 1u, l;
    tab[0] = 0.0;
    for (l = 1; l <= s; l++) tab[l] = lv ? (double)lv[l - 1] : ldexp(1.0, (int)l - (int)s);
}
/* Exact variance of stochastic rounding of magnitude a (scale sc) between adjacent levels. */
static double tab_var(const double *tab, unsigned s, double sc, double a) {
    double r = sc > 0 ? a / sc : 0.0;
    unsigned j = 0;
    if (r >= 1.0) return 0.0;
    while (j + 1 < s && tab[j + 1] <= r) j++;
    return (r - tab[j]) * (tab[j + 1] - r) * sc * sc;
}

/* Monte Carlo over `steps` dithers: sum_i (mean_i - target_i)^2 / (var_i / steps) is about
 * chi-square with (number of coordinates with var_i > 0) degrees of freedom; returns that
 * statistic, and the mean over steps of ||Q(x) - target||^2 in *mse. */
static double chi2_unbiased(dq_params p, const float *x, const double *target, const double *var, size_t n,
                            unsigned steps, double *mse, size_t *dof) {
    float *out = (float *)xmalloc(n * sizeof(float));
    double *sum = (double *)calloc(n, sizeof(double)), chi = 0.0, se = 0.0;
    uint8_t *msg = (uint8_t *)xmalloc(dq_encode_bound(n, 16));
    size_t len = 0, i;
    unsigned t;
    *dof = 0;
    for (t = 0; t < steps; t++) {
        p.step = t;
        if (roundtrip(&p, x, n, NULL, out, msg, &len) != DQ_OK) {
            chi = 1e300;
            break;
        }
        for (i = 0; i < n; i++) {
            double e = (double)out[i] - target[i];
            sum[i] += (double)out[i];
            se += e * e;
        }
    }
    for (i = 0; i < n && chi < 1e300; i++) {
        double m = sum[i] / steps - target[i];
        if (var[i] > 0) {
            chi += m * m / (var[i] / steps);
            (*dof)++;
        } else if (fabs(m) > 1e-6 * (fabs(target[i]) + 1e-30)) {
            chi = 1e300; /* a deterministic coordinate must decode exactly */
        }
    }
    *mse = se / steps;
    free(out);
    free(sum);
    free(msg);
    return chi;
}
/* chi-square with k degrees of freedom exceeds k + 6 sqrt(2k) with probability < 1e-6 for the
 * k used here (a 6-sigma normal approximation; the tail is lighter for large k). */
static int chi2_ok(double chi, size_t k) { return chi <= (double)k + 6.0 * sqrt(2.0 * (double)k) + 6.0; }

/* NUQSGD: unbiased; the exact expected error stays under the bound of doc/MATHS.md 3,
 * 1/8 + min(2^(1-s) sqrt(d), d 4^(1-s) / 4) with 2^(1-s) (sp) the lowest non-zero level; the
 * Monte Carlo error matches it. */
static void test_nuqsgd_moments(void) {
    dq_t_rng r = {11};
    float x[D];
    double tab[DQT_TAB_MAX], target[D], var[D];
    unsigned bits;
    gauss_vec(&r, x, D, 1.0);
    for (bits = 2; bits <= 8; bits++) {
        dq_params p = scheme_params(DQ_SCHEME_NUQSGD, bits);
        unsigned s = (1u << (bits - 1)) - 1u, steps = 400;
        uint8_t msg[4096];
        float out[D];
        size_t len, i, dof;
        double ev = 0.0, n2 = 0.0, mse, chi, sp = ldexp(1.0, 1 - (int)s), bound, sc;
        CHECK(roundtrip(&p, x, D, NULL, out, msg, &len) == DQ_OK);
        sc = (double)bucket_scale(msg);
        levels_of(bits, NULL, tab);
        for (i = 0; i < D; i++) {
            target[i] = (double)x[i];
            var[i] = tab_var(tab, s, sc, fabs((double)x[i]));
            ev += var[i];
            n2 += (double)x[i] * (double)x[i];
        }
        bound = 0.125 + fmin(sp * sqrt((double)D), (double)D * sp * sp / 4.0);
        CHECKF(ev <= bound * n2, "bits %u: E||Q-x||^2 = %g > %g ||x||^2", bits, ev / n2, bound);
        chi = chi2_unbiased(p, x, target, var, D, steps, &mse, &dof);
        CHECKF(chi2_ok(chi, dof), "bits %u: chi2 %g with %zu dof", bits, chi, dof);
        /* the mean of `steps` squared errors: sd <= sqrt(sum 2 var_i^2 + ...) ~ ev*sqrt(2/D)...; 6 sd */
        CHECKF(fabs(mse - ev) <= 6.0 * ev * sqrt(3.0 / steps) + 1e-12, "bits %u: mse %g expected %g", bits, mse, ev);
        if (dq_t_verbose()) printf("nuqsgd b=%u: omega %.5f bound %.5f chi2 %.1f/%zu\n", bits, ev / n2, bound, chi, dof);
    }
}

/* Natural compression: the scale is a power of two, every value decodes to 0 or +-2^k, it is
 * unbiased, and E(C(t) - t)^2 / t^2 = 1/8 exactly at t = (4/3) 2^a (the worst case). */
static void test_natural(void) {
    enum { N = 64 };
    float x[N], out[N];
    double target[N], var[N], tab[DQT_TAB_MAX], rel = 0.0, mse, chi;
    dq_params p = scheme_params(DQ_SCHEME_NATURAL, 8);
    uint8_t msg[1024];
    size_t len = 0, i, dof;
    uint32_t sb;
    for (i = 0; i < N; i++) x[i] = (float)((i & 1 ? -4.0 : 4.0) / 3.0 * ldexp(1.0, (int)i - 40));
    CHECK(roundtrip(&p, x, N, NULL, out, msg, &len) == DQ_OK);
    sb = dq_t_ld32(msg + DQ_HEADER_SIZE);
    CHECK((sb & 0x007FFFFFu) == 0 && dq_t_bitsf(sb) >= fabsf(x[N - 1]) && dq_t_bitsf(sb) < 2.0f * fabsf(x[N - 1]));
    CHECK(msg[7] == 8 && msg[9] == 3);
    for (i = 0; i < N; i++) {
        uint32_t u = dq_t_fbits(out[i]) & 0x7FFFFFFFu;
        CHECKF(u == 0 || (u & 0x007FFFFFu) == 0, "element %zu decodes to %g", i, (double)out[i]);
    }
    levels_of(8, NULL, tab);
    for (i = 0; i < N; i++) {
        target[i] = (double)x[i];
        var[i] = tab_var(tab, 127, (double)dq_t_bitsf(sb), fabs(target[i]));
        CHECKF(fabs(var[i] / (target[i] * target[i]) - 0.125) < 1e-6, "element %zu: omega %g", i,
               var[i] / (target[i] * target[i]));
        rel += var[i] / (target[i] * target[i]);
    }
    chi = chi2_unbiased(p, x, target, var, N, 4000, &mse, &dof);
    CHECKF(chi2_ok(chi, dof), "chi2 %g with %zu dof", chi, dof);
    CHECK(dof == N && fabs(rel / N - 0.125) < 1e-6);
    /* the worst case over t: sample the binade [1, 2) finely */
    {
        double worst = 0.0, at = 0.0, t;
        for (t = 1.0; t < 2.0; t += 1.0 / 4096) {
            double v = tab_var(tab, 127, 2.0, t) / (t * t);
            if (v > worst) {
                worst = v;
                at = t;
            }
        }
        CHECKF(worst <= 0.125 + 1e-12 && fabs(at - 4.0 / 3.0) < 1.0 / 2048, "worst %g at %g", worst, at);
    }
}

/* TernGrad: scale S = min(max|g|, 2.5 rms); values in {-S, 0, S}; unbiased for the clipped
 * g' = clip(g, -S, S); E||Q||^2 = ||g'||_inf ||g'||_1 (doc/MATHS.md 5). */
static void test_terngrad(void) {
    dq_t_rng r = {23};
    float x[D], out[D];
    double target[D], var[D], l1 = 0.0, sq = 0.0, S, mse, chi, e2 = 0.0, se2 = 0.0, rms;
    dq_params p = scheme_params(DQ_SCHEME_TERNGRAD, 0);
    uint8_t msg[4096];
    size_t len = 0, i, dof;
    unsigned t, steps = 2000;
    gauss_vec(&r, x, D, 1.0);
    x[3] = 40.0f; /* outliers make the clip bind */
    x[100] = -25.0f;
    CHECK(roundtrip(&p, x, D, NULL, out, msg, &len) == DQ_OK);
    CHECK(msg[6] == DQ_SCHEME_TERNGRAD && msg[7] == 2 && msg[9] == 4);
    S = (double)bucket_scale(msg);
    for (i = 0; i < D; i++) sq += (double)x[i] * (double)x[i];
    rms = sqrt(sq / D);
    CHECKF(fabs(S - 2.5 * rms) <= 1e-6 * S, "S %g, 2.5 rms %g", S, 2.5 * rms);
    for (i = 0; i < D; i++) {
        double g = (double)x[i], a = fabs(g) < S ? fabs(g) : S;
        target[i] = g < 0 ? -a : a;
        var[i] = a * (S - a);
        l1 += a;
        CHECK(out[i] == 0.0f || fabs(fabs((double)out[i]) - S) == 0.0);
    }
    for (t = 0; t < steps; t++) {
        double q2 = 0.0;
        p.step = t;
        CHECK(roundtrip(&p, x, D, NULL, out, msg, &len) == DQ_OK);
        for (i = 0; i < D; i++) q2 += (double)out[i] * (double)out[i];
        e2 += q2;
        se2 += q2 * q2;
    }
    e2 /= steps;
    se2 = sqrt((se2 / steps - e2 * e2) / steps);
    CHECKF(fabs(e2 - S * l1) <= 6.0 * se2, "E||Q||^2 %g, S ||g'||_1 %g (se %g)", e2, S * l1, se2);
    chi = chi2_unbiased(p, x, target, var, D, steps, &mse, &dof);
    CHECKF(chi2_ok(chi, dof), "chi2 %g with %zu dof", chi, dof);
    p.bits = 3;
    CHECK(dq_encode(&p, x, D, NULL, msg, sizeof msg, &len) == DQ_ERR_BITS);
    p.bits = 2;
    p.norm = DQ_NORM_MAX;
    CHECK(dq_encode(&p, x, D, NULL, msg, sizeof msg, &len) == DQ_ERR_PARAM);
}

/* Truncation: every bucket's scale is alpha; values decode inside [-alpha, alpha], to the
 * uniform levels (TRUNC) or to alpha times the given levels (TRUNC_NU), unbiased for the
 * truncated vector. */
static void test_trunc(void) {
    dq_t_rng r = {31};
    float x[D], out[D], lv[7];
    double target[D], var[D], tab[DQT_TAB_MAX], mse, chi;
    uint8_t msg[4096];
    size_t len = 0, i, dof, l;
    int nu;
    gauss_vec(&r, x, D, 1.0);
    for (l = 0; l < 7; l++) lv[l] = (float)pow((double)(l + 1) / 7.0, 1.5);
    lv[6] = 1.0f;
    for (nu = 0; nu <= 1; nu++) {
        dq_params p = scheme_params(nu ? DQ_SCHEME_TRUNC_NU : DQ_SCHEME_TRUNC, 4);
        p.alpha = 1.5f;
        p.levels = nu ? lv : NULL;
        p.bucket = 64;
        CHECK(roundtrip(&p, x, D, NULL, out, msg, &len) == DQ_OK);
        CHECK(len == DQ_HEADER_SIZE + 4u * (D / 64u) + (nu ? 28u : 0u) + D / 2u);
        CHECK(bucket_scale(msg) == 1.5f && msg[9] == 5);
        for (i = 0; i < D; i++) {
            double a = fabs((double)x[i]) < 1.5 ? fabs((double)x[i]) : 1.5;
            target[i] = x[i] < 0 ? -a : a;
            CHECK(fabsf(out[i]) <= 1.5f);
            if (nu) {
                levels_of(4, lv, tab);
                var[i] = tab_var(tab, 7, 1.5, a);
            } else {
                double st = 1.5 / 7.0, f = a / st - floor(a / st);
                var[i] = a >= 1.5 ? 0.0 : f * (1.0 - f) * st * st;
            }
        }
        chi = chi2_unbiased(p, x, target, var, D, 1000, &mse, &dof);
        CHECKF(chi2_ok(chi, dof), "%s: chi2 %g with %zu dof", nu ? "trunc-nu" : "trunc", chi, dof);
        p.alpha = 0.0f;
        CHECK(dq_encode(&p, x, D, NULL, msg, sizeof msg, &len) == DQ_ERR_PARAM);
        p.alpha = NAN;
        CHECK(dq_encode(&p, x, D, NULL, msg, sizeof msg, &len) == DQ_ERR_PARAM);
    }
    { /* bad level tables */
        dq_params p = scheme_params(DQ_SCHEME_TRUNC_NU, 4);
        float bad[7];
        p.alpha = 1.0f;
        CHECK(dq_encode(&p, x, D, NULL, msg, sizeof msg, &len) == DQ_ERR_PARAM); /* NULL levels */
        memcpy(bad, lv, sizeof bad);
        bad[6] = 0.999f;
        p.levels = bad;
        CHECK(dq_encode(&p, x, D, NULL, msg, sizeof msg, &len) == DQ_ERR_PARAM);
        memcpy(bad, lv, sizeof bad);
        bad[3] = bad[2];
        CHECK(dq_encode(&p, x, D, NULL, msg, sizeof msg, &len) == DQ_ERR_PARAM);
        bad[3] = -bad[2];
        CHECK(dq_encode(&p, x, D, NULL, msg, sizeof msg, &len) == DQ_ERR_PARAM);
        p.bits = 9;
        p.levels = lv;
        CHECK(dq_encode(&p, x, D, NULL, msg, sizeof msg, &len) == DQ_ERR_BITS);
    }
    { /* a corrupted level table is refused and the output is untouched */
        dq_params p = scheme_params(DQ_SCHEME_TRUNC_NU, 4);
        float canary[D];
        p.alpha = 1.0f;
        p.levels = lv;
        CHECK(dq_encode(&p, x, D, NULL, msg, sizeof msg, &len) == DQ_OK);
        dq_t_st32(msg + DQ_HEADER_SIZE + 4u + 8u, dq_t_fbits(0.0f)); /* level 3 = 0 */
        for (i = 0; i < D; i++) canary[i] = out[i] = 123.0f;
        CHECK(dq_decode(msg, len, out, D) == DQ_ERR_CORRUPT);
        CHECK(dq_verify(msg, len) == DQ_ERR_CORRUPT);
        CHECK(memcmp(out, canary, sizeof out) == 0);
    }
}

/* The table rule against an independent reference in double: the interval from log2, the
 * fraction from the two levels, the draw from the generator (FORMAT 7). */
static void test_rule_reference(void) {
    dq_t_rng r = {41};
    enum { N = 3000 };
    float x[N], out[N];
    uint8_t *msg = (uint8_t *)xmalloc(dq_encode_bound(N, 8));
    unsigned bits;
    size_t len = 0, i;
    for (i = 0; i < N; i++) x[i] = (float)(dq_t_gauss(&r) * pow(10.0, 6.0 * dq_t_unif(&r) - 5.0));
    x[5] = 0.0f;
    x[6] = -0.0f;
    x[7] = 1e-38f;
    for (bits = 2; bits <= 8; bits++) {
        int stoch;
        for (stoch = 0; stoch <= 1; stoch++) {
            dq_params p = scheme_params(DQ_SCHEME_NUQSGD, bits);
            dqt_key key = dqt_key_make(p.seed, 3, 0);
            unsigned s = (1u << (bits - 1)) - 1u, bad = 0;
            float sc;
            p.step = 3;
            p.rounding = stoch ? DQ_ROUND_STOCHASTIC : DQ_ROUND_NEAREST;
            p.norm = DQ_NORM_MAX;
            CHECK(dq_encode(&p, x, N, NULL, msg, dq_encode_bound(N, bits), &len) == DQ_OK);
            CHECK(dq_decode(msg, len, out, N) == DQ_OK);
            sc = bucket_scale(msg);
            for (i = 0; i < N; i++) {
                float rr = fabsf(x[i]) * (1.0f / sc);
                double t = stoch ? dqt_draw24(key.k0, dqt_key_hi(key, 0), (uint32_t)i) * ldexp(1.0, -24) : 0.5;
                int e = rr > 0 ? (int)floor(log2((double)rr)) : -1000;
                double lo, hi, want;
                if (rr >= 1.0f) {
                    lo = hi = 1.0;
                } else if (e + (int)s >= 1) {
                    lo = ldexp(1.0, e);
                    hi = 2.0 * lo;
                } else {
                    lo = 0.0;
                    hi = ldexp(1.0, 1 - (int)s);
                }
                want = hi > lo && t < ((double)rr - lo) / (hi - lo) ? hi : lo;
                want *= (double)sc;
                if (x[i] < 0 && want > 0) want = -want;
                if ((double)out[i] != want) bad++;
            }
            CHECKF(bad == 0, "bits %u stoch %d: %u elements differ from the reference", bits, stoch, bad);
        }
    }
    free(msg);
}

/* Error feedback: residual = (x + e) - decoded, bit for bit, for every table scheme. */
static void test_error_feedback(void) {
    dq_t_rng r = {53};
    enum { N = 1000 };
    float x[N], e[N], e0[N], out[N], lv[7] = {0.05f, 0.1f, 0.2f, 0.35f, 0.5f, 0.75f, 1.0f};
    uint8_t *msg = (uint8_t *)xmalloc(dq_encode_bound(N, 8));
    static const dq_scheme sc[] = {DQ_SCHEME_NUQSGD, DQ_SCHEME_NATURAL, DQ_SCHEME_TERNGRAD, DQ_SCHEME_TRUNC,
                                   DQ_SCHEME_TRUNC_NU, DQ_SCHEME_TWOMEANS};
    size_t k, i, len = 0;
    gauss_vec(&r, x, N, 1.0);
    for (k = 0; k < sizeof sc / sizeof sc[0]; k++) {
        dq_params p = scheme_params(sc[k], sc[k] == DQ_SCHEME_TERNGRAD ? 2u : sc[k] == DQ_SCHEME_TWOMEANS ? 1u : 4u);
        unsigned bad = 0;
        p.bucket = 128;
        p.alpha = 2.0f;
        p.levels = lv;
        gauss_vec(&r, e, N, 0.1);
        memcpy(e0, e, sizeof e);
        CHECK(dq_encode(&p, x, N, e, msg, dq_encode_bound(N, 8), &len) == DQ_OK);
        CHECK(dq_decode(msg, len, out, N) == DQ_OK);
        for (i = 0; i < N; i++)
            if (dq_t_fbits(e[i]) != dq_t_fbits((x[i] + e0[i]) - out[i])) bad++;
        CHECKF(bad == 0, "scheme %d: %u residuals differ", (int)sc[k], bad);
    }
    free(msg);
}

/* Coders and ranges carry the table schemes: the same floats whatever the coder, and a
 * message encoded in ranges equals the one-call message byte for byte. */
static void test_coders_ranges(void) {
    dq_t_rng r = {67};
    enum { N = 5000 };
    float x[N], ref[N], out[N], lv[7] = {0.05f, 0.1f, 0.2f, 0.35f, 0.5f, 0.75f, 1.0f};
    size_t cap = dq_encode_bound_coded(N, 8);
    uint8_t *msg = (uint8_t *)xmalloc(cap), *m2 = (uint8_t *)xmalloc(cap), *m3 = (uint8_t *)xmalloc(cap);
    static const dq_scheme sc[] = {DQ_SCHEME_NUQSGD, DQ_SCHEME_NATURAL, DQ_SCHEME_TERNGRAD, DQ_SCHEME_TRUNC_NU};
    size_t k, len = 0, len2 = 0, len3 = 0;
    unsigned coder;
    gauss_vec(&r, x, N, 1.0);
    for (k = 0; k < sizeof sc / sizeof sc[0]; k++) {
        dq_params p = scheme_params(sc[k], sc[k] == DQ_SCHEME_TERNGRAD ? 2u : 4u);
        size_t a, pos;
        p.bucket = 256;
        p.alpha = 2.0f;
        p.levels = lv;
        p.checksum = 1;
        CHECK(dq_encode(&p, x, N, NULL, msg, cap, &len) == DQ_OK);
        CHECK(dq_decode(msg, len, ref, N) == DQ_OK);
        for (coder = DQ_CODER_ELIAS; coder <= DQ_CODER_RANS + 1u; coder++) { /* 2 asks for rANS too */
            dq_params q = p;
            q.coder = coder == DQ_CODER_RANS + 1u ? DQ_CODER_AUTO : coder;
            CHECK(dq_encode(&q, x, N, NULL, m2, cap, &len2) == DQ_OK);
            CHECK(dq_decode(m2, len2, out, N) == DQ_OK);
            CHECKF(memcmp(out, ref, sizeof out) == 0, "scheme %d coder %u", (int)sc[k], coder);
            CHECK(dq_recode(m2, len2, DQ_CODER_FIXED, m3, cap, &len3) == DQ_OK);
            CHECK(len3 == len && memcmp(m3, msg, len) == 0);
        }
        a = dq_range_align(&p, N);
        memset(m2, 0xAB, cap);
        for (pos = 0; pos < N; pos += a)
            CHECK(dq_encode_range(&p, N, pos, pos + a < N ? pos + a : N, x + pos, NULL, m2, cap) == DQ_OK);
        CHECK(dq_encode_finish(m2, len) == DQ_OK);
        CHECKF(memcmp(m2, msg, len) == 0, "scheme %d: ranges differ", (int)sc[k]);
        CHECK(dq_decode_range(msg, len, a, 2 * a, out) == DQ_OK);
        CHECK(memcmp(out, ref + a, a * sizeof(float)) == 0);
    }
    free(msg);
    free(m2);
    free(m3);
}

/* Header fields: the scheme and norm bytes are checked per scheme (CRC recomputed so the
 * field check, not the CRC, is what refuses). */
static void test_header_fields(void) {
    enum { N = 300 };
    float x[N], out[N];
    uint8_t msg[1024];
    size_t len = 0, i;
    dq_header h;
    dq_params p = scheme_params(DQ_SCHEME_NUQSGD, 4);
    static const struct { unsigned off, val; } bad[] = {{9, 2}, {9, 3}, {9, 6}, {7, 1}, {7, 9}, {6, 5}, {6, 12}};
    for (i = 0; i < N; i++) x[i] = (float)i - 150.0f;
    CHECK(dq_encode(&p, x, N, NULL, msg, sizeof msg, &len) == DQ_OK);
    CHECK(dq_header_read(msg, len, &h) == DQ_OK);
    CHECK(h.scheme == DQ_SCHEME_NUQSGD && h.norm == DQ_NORM_L2 && h.nnz == N);
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t m[1024];
        memcpy(m, msg, len);
        m[bad[i].off] = (uint8_t)bad[i].val;
        dq_t_st32(m + 44, dqt_crc32c(m, 44));
        CHECKF(dq_header_read(m, len, &h) == DQ_ERR_CORRUPT, "byte %u = %u", bad[i].off, bad[i].val);
        CHECK(dq_decode(m, len, out, N) == DQ_ERR_CORRUPT);
    }
    p = scheme_params(DQ_SCHEME_NATURAL, 0);
    CHECK(dq_encode(&p, x, N, NULL, msg, sizeof msg, &len) == DQ_OK);
    CHECK(dq_header_read(msg, len, &h) == DQ_OK && h.bits == 8 && h.norm == DQ_NORM_POW2);
    p.norm = DQ_NORM_MAX;
    CHECK(dq_encode(&p, x, N, NULL, msg, sizeof msg, &len) == DQ_ERR_PARAM);
}

/* Error feedback makes a biased compressor converge (doc/MATHS.md 6): least
 * squares with a consistent, ill-conditioned system (column scales over a decade) and full
 * gradients. Scaled sign (1 bit, nearest: the mean norm) with memory reaches the solution to
 * 1e-4 within 3000 steps (measured: 3.4e-5); without memory the same run is still above 1e-2
 * (measured: 2.9e-2): every coordinate moves by the same mean |g|, so the flat directions
 * crawl while the steep ones oscillate. Two-means 1-bit SGD behaves the same way (two step
 * sizes instead of one; measured figures at test_ef_least_squares). */
#define DEC 1.0 /* decades spanned by the column scales */
#define LR 0.04 /* about 1/L for this system */
static double ls_run(dq_scheme scheme, int memory, unsigned steps) {
    enum { M = 200, DIM = 50 };
    static float A[M * DIM];
    float xs[DIM], x[DIM], g[DIM], e[DIM], delta[DIM], r[M];
    uint8_t msg[256];
    dq_t_rng rng = {97};
    dq_params p = scheme_params(scheme, 1);
    double err = 0.0, nx = 0.0;
    size_t len, i, j;
    unsigned t;
    p.rounding = DQ_ROUND_NEAREST;
    for (i = 0; i < M * DIM; i++) /* columns scaled over two decades: an ill-conditioned system */
        A[i] = (float)(dq_t_gauss(&rng) * pow(10.0, DEC * ((double)(i % DIM) / (DIM - 1) - 0.5)));
    for (j = 0; j < DIM; j++) {
        xs[j] = (float)dq_t_gauss(&rng);
        x[j] = e[j] = 0.0f;
    }
    for (t = 0; t < steps; t++) {
        for (i = 0; i < M; i++) { /* r = A x - A xs */
            double a = 0.0;
            for (j = 0; j < DIM; j++) a += (double)A[i * DIM + j] * (double)(x[j] - xs[j]);
            r[i] = (float)a;
        }
        for (j = 0; j < DIM; j++) { /* g = lr * A^T r / M */
            double a = 0.0;
            for (i = 0; i < M; i++) a += (double)A[i * DIM + j] * (double)r[i];
            g[j] = (float)(LR * a / M);
        }
        p.step = t;
        if (dq_encode(&p, g, DIM, memory ? e : NULL, msg, sizeof msg, &len) != DQ_OK ||
            dq_decode(msg, len, delta, DIM) != DQ_OK)
            return 1e300;
        for (j = 0; j < DIM; j++) x[j] -= delta[j];
    }
    for (j = 0; j < DIM; j++) {
        err += (double)(x[j] - xs[j]) * (double)(x[j] - xs[j]);
        nx += (double)xs[j] * (double)xs[j];
    }
    return sqrt(err / nx);
}
static void test_ef_least_squares(void) {
    static const dq_scheme sc[] = {DQ_SCHEME_QSGD, DQ_SCHEME_TWOMEANS};
    size_t k;
    for (k = 0; k < 2; k++) {
        double with = ls_run(sc[k], 1, 3000), without = ls_run(sc[k], 0, 3000);
        if (dq_t_verbose())
            printf("%s, least squares: relative error %.3g with memory, %.3g without\n",
                   k ? "two-means" : "scaled sign", with, without);
        CHECKF(with < 1e-4, "scheme %d with memory: %g", (int)sc[k], with);
        CHECKF(without > 1e-2, "scheme %d without memory: %g", (int)sc[k], without);
    }
}

/* ---- two-means 1-bit SGD (doc/FORMAT.md 22) */

/* The two means of one bucket as doc/FORMAT.md 22.2 defines them, written independently of the
 * library: magnitudes in double into 16 lanes per sign group, the fixed combination, the double
 * division, float rounding, the 2^-100 flush; *neg gets the sign bit. */
static double tm_lanes(const double *l) {
    double a[8];
    unsigned k;
    for (k = 0; k < 8; k++) a[k] = l[k] + l[k + 8];
    return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}
static void tm_ref(const float *c, size_t len, float *pos, float *neg) {
    double lp[16] = {0}, ln[16] = {0}, vp, vn;
    size_t j, m = 0;
    for (j = 0; j < len; j++) {
        double a = fabs((double)c[j]);
        if (signbit(c[j])) {
            ln[j % 16] += a;
            m++;
        } else {
            lp[j % 16] += a;
        }
    }
    vp = len - m ? tm_lanes(lp) / (double)(len - m) : 0.0;
    vn = m ? tm_lanes(ln) / (double)m : 0.0;
    *pos = (float)vp < 7.88860905e-31f ? 0.0f : (float)vp;
    *neg = -((float)vn < 7.88860905e-31f ? 0.0f : (float)vn);
}
/* ||c - Q||^2 over one bucket in double, Q = pos on the non-negative group, neg on the other. */
static double tm_err(const float *c, size_t len, double pos, double neg) {
    double e = 0.0;
    size_t j;
    for (j = 0; j < len; j++) {
        double d = (double)c[j] - (signbit(c[j]) ? neg : pos);
        e += d * d;
    }
    return e;
}
/* Test data: Gaussian (mean mu), with a zero bucket, an all-positive bucket, signed zeros. */
static void tm_data(dq_t_rng *r, float *x, size_t n, double mu) {
    size_t i;
    for (i = 0; i < n; i++) x[i] = (float)(mu + dq_t_gauss(r));
    for (i = 64; i < 128 && i < n; i++) x[i] = (i & 1) ? -0.0f : 0.0f; /* bucket 1 (of 64): zeros */
    for (i = 128; i < 192 && i < n; i++) x[i] = fabsf(x[i]);          /* bucket 2: no negatives */
    if (n > 300) {
        x[300] = -0.0f;
        x[301] = 0.0f;
        x[302] = 1e-40f; /* a subnormal */
    }
}

/* (1) Every decoded value is its group's mean, bit for bit as recomputed here; the message's
 * two scales are those means; dq_decode_add adds them; the residual is c - v. */
static void test_twomeans_values(void) {
    dq_t_rng r = {501};
    enum { N = 1000, B = 64 };
    float x[N], e[N], e0[N], c[N], out[N], acc[N];
    uint8_t msg[2048];
    size_t len = 0, i, k, nb = (N + B - 1) / B, bad = 0, badm = 0, bade = 0, bada = 0;
    dq_params p = scheme_params(DQ_SCHEME_TWOMEANS, 0);
    p.bucket = B;
    tm_data(&r, x, N, 0.3);
    gauss_vec(&r, e, N, 0.1);
    for (i = 64; i < 192; i++) /* keep bucket 1 zeros of both signs and bucket 2 non-negative */
        e[i] = i < 128 ? ((i & 1) ? -0.0f : 0.0f) : fabsf(e[i]);
    memcpy(e0, e, sizeof e);
    for (i = 0; i < N; i++) c[i] = x[i] + e0[i];
    CHECK(dq_encode(&p, x, N, e, msg, sizeof msg, &len) == DQ_OK);
    CHECK(len == DQ_HEADER_SIZE + 8u * nb + (N + 7u) / 8u);
    CHECK(dq_decode(msg, len, out, N) == DQ_OK);
    for (i = 0; i < N; i++) acc[i] = (float)i * 0.25f;
    CHECK(dq_decode_add(msg, len, 0.75f, acc, N) == DQ_OK);
    for (k = 0; k < nb; k++) {
        size_t b0 = k * B, len_k = N - b0 < B ? N - b0 : B;
        float pos, neg;
        tm_ref(c + b0, len_k, &pos, &neg);
        if (dq_t_fbits(pos) != dq_t_ld32(msg + DQ_HEADER_SIZE + 4u * k) ||
            dq_t_fbits(neg) != dq_t_ld32(msg + DQ_HEADER_SIZE + 4u * (nb + k)))
            badm++;
        for (i = b0; i < b0 + len_k; i++) {
            float v = signbit(c[i]) ? neg : pos, a = (float)i * 0.25f + 0.75f * v;
            if (dq_t_fbits(out[i]) != dq_t_fbits(v)) bad++;
            if (dq_t_fbits(e[i]) != dq_t_fbits(c[i] - v)) bade++;
            if (dq_t_fbits(acc[i]) != dq_t_fbits(a)) bada++;
        }
    }
    CHECKF(badm == 0, "%lu buckets with other means", (unsigned long)badm);
    CHECKF(bad == 0, "%lu values differ from their group mean", (unsigned long)bad);
    CHECKF(bade == 0, "%lu residuals differ from c - v", (unsigned long)bade);
    CHECKF(bada == 0, "%lu decode_add values differ", (unsigned long)bada);
    /* the zero bucket: +0 and -0 (both groups non-empty, both means 0) */
    CHECK(dq_t_ld32(msg + DQ_HEADER_SIZE + 4u) == 0u && dq_t_ld32(msg + DQ_HEADER_SIZE + 4u * (nb + 1u)) == 0x80000000u);
    /* the all-positive bucket: an empty negative group is -0 */
    CHECK(dq_t_ld32(msg + DQ_HEADER_SIZE + 8u) != 0u && dq_t_ld32(msg + DQ_HEADER_SIZE + 4u * (nb + 2u)) == 0x80000000u);
}

/* (2) Least squares: for the sign partition, the two means minimize ||c - Q||^2 over every pair of
 * values; moving either by 0.1 % raises the error strictly, by one float step not at all below
 * it (the float mean is the float nearest the exact optimum, and the error is quadratic around
 * it). Scaled sign (1-bit QSGD, nearest: one shared magnitude ||c||_1 / d per bucket, the same
 * partition) can never do better, bucket by bucket. */
static void test_twomeans_least_squares(void) {
    static const double mus[] = {0.0, 0.5, 2.0};
    enum { N = 4096 };
    size_t m;
    for (m = 0; m < 3; m++) {
        dq_t_rng r = {601 + m};
        static const uint32_t buckets[] = {64, 512, DQ_BUCKET_WHOLE};
        size_t bk;
        float x[N], o1[N], o2[N];
        uint8_t msg[N], msg2[N];
        gauss_vec(&r, x, N, 1.0);
        for (bk = 0; bk < 3; bk++) {
            dq_params p = scheme_params(DQ_SCHEME_TWOMEANS, 1), q = scheme_params(DQ_SCHEME_QSGD, 1);
            size_t len = 0, len2 = 0, b, B = buckets[bk] == DQ_BUCKET_WHOLE ? N : buckets[bk], worse = 0, notmin = 0;
            double etm = 0.0, ess = 0.0, nx = 0.0;
            size_t i;
            float xs[N];
            for (i = 0; i < N; i++) xs[i] = x[i] + (float)mus[m];
            p.bucket = q.bucket = buckets[bk];
            q.rounding = DQ_ROUND_NEAREST;
            CHECK(dq_encode(&p, xs, N, NULL, msg, sizeof msg, &len) == DQ_OK);
            CHECK(dq_encode(&q, xs, N, NULL, msg2, sizeof msg2, &len2) == DQ_OK);
            CHECK(dq_decode(msg, len, o1, N) == DQ_OK && dq_decode(msg2, len2, o2, N) == DQ_OK);
            for (b = 0; b < N; b += B) {
                float pos = 0.0f, neg = -0.0f; /* an empty group's value is never used */
                double e0, e1 = 0.0, e2 = 0.0;
                size_t nneg = 0;
                int t;
                for (i = b; i < b + B; i++) {
                    if (signbit(xs[i])) {
                        neg = o1[i];
                        nneg++;
                    } else {
                        pos = o1[i];
                    }
                    e1 += ((double)xs[i] - (double)o1[i]) * ((double)xs[i] - (double)o1[i]);
                    e2 += ((double)xs[i] - (double)o2[i]) * ((double)xs[i] - (double)o2[i]);
                    nx += (double)xs[i] * (double)xs[i];
                }
                e0 = tm_err(xs + b, B, (double)pos, (double)neg);
                if (e0 != e1) notmin++; /* every element decodes to its group's value */
                for (t = 0; t < 4; t++) { /* 0.1 %: strictly worse; one float step: not better */
                    double f = (t & 1) ? 1.001 : 0.999;
                    double pp = t < 2 ? (double)pos * f : (double)pos, nn = t < 2 ? (double)neg : (double)neg * f;
                    float up = t < 2 ? nextafterf(pos, (t & 1) ? 1e30f : -1e30f) : pos;
                    float un = t < 2 ? neg : nextafterf(neg, (t & 1) ? 1e30f : -1e30f);
                    if ((t < 2 ? pos != 0.0f && nneg < B : neg != 0.0f && nneg > 0) && !(tm_err(xs + b, B, pp, nn) > e0))
                        notmin++;
                    /* one float step: equal up to the rounding of the sums (the float mean may sit
                     * half a step from the exact one) */
                    if (tm_err(xs + b, B, (double)up, (double)un) < e0 * (1.0 - 1e-12)) notmin++;
                }
                if (e1 > e2) worse++;
                etm += e1;
                ess += e2;
            }
            CHECKF(notmin == 0, "mu %g bucket %lu: %lu checks of minimality failed", mus[m], (unsigned long)B,
                   (unsigned long)notmin);
            CHECKF(worse == 0, "mu %g bucket %lu: two-means worse than scaled sign in %lu buckets", mus[m],
                   (unsigned long)B, (unsigned long)worse);
            if (mus[m] > 0.0) CHECKF(etm < 0.99 * ess, "mu %g: %g vs %g", mus[m], etm, ess);
            if (dq_t_verbose())
                printf("N(%g,1), bucket %lu: ||x-Q||^2/||x||^2 two-means %.4f, scaled sign %.4f\n", mus[m],
                       (unsigned long)B, etm / nx, ess / nx);
        }
    }
}

/* (4) Header fields, parameters, sizes, coders, ranges, the block and typed APIs. */
static void test_twomeans_api(void) {
    dq_t_rng r = {701};
    enum { N = 5000 };
    static float x[N], e1[N], e2[N], out[N], ref[N];
    static uint16_t xh[N], eh[N];
    size_t cap = dq_encode_bound_coded(N, 1), len = 0, len2 = 0, sz = 0, a, pos, i;
    uint8_t *msg = (uint8_t *)xmalloc(cap), *m2 = (uint8_t *)xmalloc(cap);
    dq_params p = scheme_params(DQ_SCHEME_TWOMEANS, 0);
    dq_header h;
    gauss_vec(&r, x, N, 1.0);
    p.bucket = 256;
    p.checksum = 1;
    CHECK(dq_encode(&p, x, N, NULL, msg, cap, &len) == DQ_OK);
    CHECK(dq_encode_capacity(&p, N, &sz) == DQ_OK && sz == len);
    CHECK(len == 48u + 8u * 20u + N / 8u + 4u && len <= dq_encode_bound(N, 1) && len <= DQ_ENCODE_BOUND(N, 1));
    CHECK(dq_header_read(msg, len, &h) == DQ_OK);
    CHECK(h.scheme == 5u && h.bits == 1u && h.coder == 0u && h.norm == DQ_NORM_TWOMEANS && h.bucket == 256u);
    CHECK(h.flags == DQ_FLAG_CHECKSUM && h.count == N && h.nnz == N && h.msg_size == len && h.payload_size == N / 8u);
    CHECK(msg[9] == 6u && msg[6] == 5u && msg[7] == 1u);
    CHECK(dq_decode(msg, len, ref, N) == DQ_OK);
    CHECK(dq_message_norm2(msg, len, &(double){0}) == DQ_ERR_PARAM);
    /* parameters: 1 bit only, nearest only, no norm, no Elias */
    p.bits = 1;
    p.rounding = DQ_ROUND_NEAREST;
    CHECK(dq_encode(&p, x, N, NULL, m2, cap, &len2) == DQ_OK && len2 == len && memcmp(m2, msg, len) == 0);
    p.bits = 2;
    CHECK(dq_encode(&p, x, N, NULL, m2, cap, &len2) == DQ_ERR_BITS);
    p.bits = 4;
    CHECK(dq_encode_capacity(&p, N, &sz) == DQ_ERR_BITS);
    p.bits = 0;
    p.rounding = DQ_ROUND_STOCHASTIC;
    CHECK(dq_encode(&p, x, N, NULL, m2, cap, &len2) == DQ_ERR_PARAM);
    p.rounding = DQ_ROUND_DEFAULT;
    p.norm = DQ_NORM_MAX;
    CHECK(dq_encode(&p, x, N, NULL, m2, cap, &len2) == DQ_ERR_PARAM);
    p.norm = DQ_NORM_DEFAULT;
    p.coder = DQ_CODER_ELIAS;
    CHECK(dq_encode(&p, x, N, NULL, m2, cap, &len2) == DQ_ERR_PARAM);
    /* rANS and AUTO: the same values; recoding back gives the fixed message */
    for (p.coder = DQ_CODER_RANS;; p.coder = DQ_CODER_AUTO) {
        size_t len3 = 0;
        uint8_t *m3 = (uint8_t *)xmalloc(cap);
        CHECK(dq_encode(&p, x, N, NULL, m2, cap, &len2) == DQ_OK);
        CHECK(dq_decode(m2, len2, out, N) == DQ_OK && memcmp(out, ref, sizeof out) == 0);
        CHECK(dq_recode(m2, len2, DQ_CODER_FIXED, m3, cap, &len3) == DQ_OK && len3 == len && memcmp(m3, msg, len) == 0);
        CHECK(dq_recode(msg, len, DQ_CODER_ELIAS, m3, cap, &len3) == DQ_ERR_PARAM);
        free(m3);
        if (p.coder == DQ_CODER_AUTO) break;
    }
    p.coder = 0;
    /* ranges: the one-call message, and the decoded range */
    a = dq_range_align(&p, N);
    CHECK(a == 256u);
    memset(m2, 0xAB, cap);
    for (pos = 0; pos < N; pos += a)
        CHECK(dq_encode_range(&p, N, pos, pos + a < N ? pos + a : N, x + pos, NULL, m2, cap) == DQ_OK);
    CHECK(dq_encode_finish(m2, len) == DQ_OK && memcmp(m2, msg, len) == 0);
    CHECK(dq_decode_range(msg, len, a, 3 * a, out) == DQ_OK && memcmp(out, ref + a, 2 * a * sizeof(float)) == 0);
    /* the block API: the message without its header and checksum */
    p.checksum = 0;
    CHECK(dq_encode_block(&p, x, N, NULL, m2, cap, &len2) == DQ_OK && len2 == len - 52u);
    CHECK(memcmp(m2, msg + 48, len2) == 0);
    CHECK(dq_decode_block(&p, m2, len2, N, out) == DQ_OK && memcmp(out, ref, sizeof out) == 0);
    /* typed input: the message of the widened values, also with a whole-vector bucket that spans
     * the typed codec's chunks (statistics carried across them) and error feedback */
    p.bucket = DQ_BUCKET_WHOLE;
    for (i = 0; i < N; i++) {
        xh[i] = dq_f32_to_bf16(x[i]);
        eh[i] = dq_f32_to_bf16(x[N - 1 - i] * 0.1f);
        e1[i] = dq_bf16_to_f32(eh[i]);
        out[i] = dq_bf16_to_f32(xh[i]);
    }
    CHECK(dq_encode(&p, out, N, e1, msg, cap, &len) == DQ_OK);
    CHECK(dq_encode_typed(&p, DQ_BF16, xh, N, DQ_BF16, eh, m2, cap, &len2) == DQ_OK);
    CHECK(len2 == len && memcmp(m2, msg, len) == 0);
    for (i = 0; i < N; i++) e2[i] = dq_bf16_to_f32(dq_f32_to_bf16(e1[i]));
    for (i = 0; i < N && dq_t_fbits(e2[i]) == dq_t_fbits(dq_bf16_to_f32(eh[i])); i++) continue;
    CHECKF(i == N, "typed residual differs at %lu", (unsigned long)i);
    free(msg);
    free(m2);
}

/* The example of doc/FORMAT.md 22.5, byte for byte. */
static void test_twomeans_example(void) {
    static const float x[10] = {1.5f, -0.5f, 0.0f, -0.0f, 2.5f, -1.0f, 0.25f, 3.0f, -2.0f, 0.75f};
    static const uint8_t want[58] = {0x44, 0x51, 0x53, 0x47, 0x01, 0x30, 0x05, 0x01, 0x00, 0x06, 0x00, 0x00, 0x00, 0x00,
                                     0x00, 0x00, 0x0A, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                     0, 0, 0, 0, 0, 0, 0x62, 0x79, 0xC9, 0x2A, 0xAB, 0xAA, 0xAA, 0x3F, 0x00, 0x00,
                                     0x60, 0xBF, 0x2A, 0x01};
    uint8_t msg[128];
    float out[10];
    size_t len = 0, i;
    dq_params p;
    memset(&p, 0, sizeof p);
    p.scheme = DQ_SCHEME_TWOMEANS;
    p.bucket = DQ_BUCKET_WHOLE;
    CHECK(dq_encode(&p, x, 10, NULL, msg, sizeof msg, &len) == DQ_OK && len == 58u && memcmp(msg, want, 58) == 0);
    CHECK(dq_decode(msg, len, out, 10) == DQ_OK);
    for (i = 0; i < 10 && out[i] == (signbit(x[i]) ? -0.875f : dq_t_bitsf(0x3FAAAAABu)); i++) continue;
    CHECK(i == 10);
}

/* (5) Malformed messages and inputs: each gives its status and leaves the output untouched. */
static void test_twomeans_bad(void) {
    enum { N = 300 };
    float x[N], out[N], e[N], e0[N];
    uint8_t msg[1024];
    size_t len = 0, i, k, nb = 3;
    dq_params p = scheme_params(DQ_SCHEME_TWOMEANS, 1);
    dq_header h;
    static const struct { unsigned neg; uint32_t v; dq_status want; } sc[] = {
        {0, 0x80000000u, DQ_ERR_CORRUPT}, /* -0 as the non-negative mean */
        {0, 0xBF800000u, DQ_ERR_CORRUPT}, /* negative */
        {0, 0x7FC00000u, DQ_ERR_CORRUPT}, /* NaN */
        {0, 0x7F800000u, DQ_ERR_CORRUPT}, /* +Inf */
        {0, 0x7E800001u, DQ_ERR_CORRUPT}, /* above 2^126 */
        {0, 0x7E800000u, DQ_OK},          /* 2^126 */
        {0, 0x00000000u, DQ_OK},
        {1, 0x00000000u, DQ_ERR_CORRUPT}, /* +0 as the negative mean */
        {1, 0x3F800000u, DQ_ERR_CORRUPT}, /* positive */
        {1, 0xFFC00000u, DQ_ERR_CORRUPT}, /* NaN */
        {1, 0xFF800000u, DQ_ERR_CORRUPT}, /* -Inf */
        {1, 0xFE800001u, DQ_ERR_CORRUPT}, /* below -2^126 */
        {1, 0xFE800000u, DQ_OK},          /* -2^126 */
        {1, 0x80000001u, DQ_OK},          /* a negative subnormal */
    };
    static const struct { unsigned off, val; } hb[] = {{7, 2}, {7, 4}, {9, 2}, {9, 0}, {9, 5}, {9, 7}, {10, 1}};
    for (i = 0; i < N; i++) x[i] = (float)i - 150.5f;
    p.bucket = 128;
    CHECK(dq_encode(&p, x, N, NULL, msg, sizeof msg, &len) == DQ_OK);
    CHECK(len == 48u + 8u * nb + 38u);
    for (k = 0; k < sizeof sc / sizeof sc[0]; k++) {
        size_t b;
        for (b = 0; b < nb; b++) {
            uint8_t m[1024];
            float acc[N];
            memcpy(m, msg, len);
            dq_t_st32(m + 48u + 4u * (sc[k].neg * nb + b), sc[k].v);
            for (i = 0; i < N; i++) out[i] = acc[i] = 7.0f;
            CHECKF(dq_decode(m, len, out, N) == sc[k].want, "scale %08lx slot %lu", (unsigned long)sc[k].v,
                   (unsigned long)(sc[k].neg * nb + b));
            CHECK(dq_decode_add(m, len, 1.0f, acc, N) == sc[k].want);
            /* ranges of 256 (lcm(256, 128)): [0, 256) holds buckets 0 and 1, [256, 300) bucket 2 */
            CHECK(dq_decode_range(m, len, b < 2 ? 0u : 256u, b < 2 ? 256u : N, out) == sc[k].want);
            if (sc[k].want != DQ_OK) {
                for (i = 0; i < N && out[i] == 7.0f && acc[i] == 7.0f; i++) continue;
                CHECKF(i == N, "output written on a rejected message (%08lx)", (unsigned long)sc[k].v);
                CHECK(dq_decode_range(m, len, b < 2 ? 256u : 0u, b < 2 ? N : 256u, out) == DQ_OK); /* the other range */
            } else if (sc[k].v != 0u) {
                float v = dq_t_bitsf(sc[k].v);
                CHECK(dq_decode(m, len, out, N) == DQ_OK);
                for (i = 128u * b; i < (b == 2 ? N : 128u * (b + 1u)) && (dq_t_fbits(out[i]) == sc[k].v) == ((x[i] < 0) == (int)sc[k].neg); i++)
                    continue;
                CHECKF(i == (b == 2 ? N : 128u * (b + 1u)), "value %g not decoded in bucket %lu", (double)v, (unsigned long)b);
            }
        }
    }
    for (k = 0; k < sizeof hb / sizeof hb[0]; k++) { /* header fields, CRC recomputed */
        uint8_t m[1024];
        memcpy(m, msg, len);
        m[hb[k].off] = (uint8_t)hb[k].val;
        dq_t_st32(m + 44, dqt_crc32c(m, 44));
        CHECKF(dq_header_read(m, len, &h) == DQ_ERR_CORRUPT, "byte %u = %u", hb[k].off, hb[k].val);
        CHECK(dq_decode(m, len, out, N) == DQ_ERR_CORRUPT);
    }
    { /* 1-bit QSGD bytes under scheme 5 are refused (their norm byte), and padding is checked */
        uint8_t m[1024];
        memcpy(m, msg, len);
        m[len - 1] |= 0x80u;
        CHECK(dq_decode(m, len, out, N) == DQ_ERR_CORRUPT);
        CHECK(dq_decode(msg, len - 1, out, N) == DQ_ERR_TRUNCATED);
        CHECK(dq_decode(msg, 48u + 8u * nb, out, N) == DQ_ERR_TRUNCATED);
    }
    /* inputs: NaN / Inf refused, the residual untouched; means above 2^126 overflow */
    for (i = 0; i < N; i++) e[i] = e0[i] = 0.125f * (float)(i % 7);
    x[200] = NAN;
    CHECK(dq_encode(&p, x, N, e, msg, sizeof msg, &len) == DQ_ERR_NONFINITE);
    x[200] = -INFINITY;
    CHECK(dq_encode(&p, x, N, e, msg, sizeof msg, &len) == DQ_ERR_NONFINITE);
    CHECK(memcmp(e, e0, sizeof e) == 0);
    for (i = 0; i < N; i++) x[i] = (float)i - 150.5f;
    x[290] = -3e38f;
    CHECK(dq_encode(&p, x, N, e, msg, sizeof msg, &len) == DQ_ERR_OVERFLOW);
    CHECK(memcmp(e, e0, sizeof e) == 0);
    x[290] = -8e37f; /* 2^126 = 8.5e37: the mean of one element is that element */
    for (i = 256; i < N; i++) x[i] = i == 290 ? -8e37f : 1.0f;
    CHECK(dq_encode(&p, x, N, NULL, msg, sizeof msg, &len) == DQ_OK);
    CHECK(dq_decode(msg, len, out, N) == DQ_OK && out[290] == -8e37f && out[291] == 1.0f);
}

int main(void) {
    RUN(test_nuqsgd_moments);
    RUN(test_natural);
    RUN(test_terngrad);
    RUN(test_trunc);
    RUN(test_rule_reference);
    RUN(test_error_feedback);
    RUN(test_coders_ranges);
    RUN(test_header_fields);
    RUN(test_ef_least_squares);
    RUN(test_twomeans_values);
    RUN(test_twomeans_least_squares);
    RUN(test_twomeans_api);
    RUN(test_twomeans_example);
    RUN(test_twomeans_bad);
    return dq_t_finish();
}
