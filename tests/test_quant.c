/* test_quant.c - the quantizer's statistics and exactness, wire sizes, decode/accumulate
 * identities, determinism, and a frozen hash table that pins the bytes on every ISA build.
 *
 * Statistical tests use fixed seeds; every acceptance bound is derived from the maths and the
 * derivation is stated next to it. Independent repetitions vary params.step (the dither key is
 * (seed, step, stream, index)), so one input is quantized K times with independent dither.
 *
 * The generator of the dither is checked against the check values of doc/FORMAT.md 13.1 (the other
 * tests draw from it through tests/internals.h).
 *
 * Environment: DQ_TEST_VERBOSE=1 prints the statistics of each case; DQ_PRINT_HASHES=1 prints
 * the frozen-hash table as computed by this build (to regenerate it from the scalar build). */
#include <math.h>
#include <stdint.h>
#include "dqsgd.h"
#include "harness.h"
#include "internals.h" /* the dither generator, for its check values */

#define UNIT_RO 5.9604644775390625e-08 /* u = 2^-24, unit roundoff of float32 */
#define MIN_SCALE_D 7.8886090522101181e-31 /* 2^-100: smaller bucket scales are sent as 0 */

static const dq_rounding k_rounds[2] = {DQ_ROUND_STOCHASTIC, DQ_ROUND_NEAREST};
static const dq_norm k_norms[2] = {DQ_NORM_L2, DQ_NORM_MAX};

/* ---------------------------------------------------------------- helpers */
static int verbose(void) { return dq_t_verbose(); }
static float *falloc(size_t n) { return (float *)xmalloc(n * sizeof(float)); }
static double *dalloc(size_t n) {
    double *d = (double *)xmalloc(n * sizeof(double));
    size_t i;
    for (i = 0; i < n; i++) d[i] = 0.0;
    return d;
}
static uint8_t *balloc(size_t n) { return (uint8_t *)xmalloc(n); }

static unsigned levels(unsigned b) { return b == 1u ? 1u : (1u << (b - 1u)) - 1u; }
static size_t eff_bucket(uint32_t bucket, size_t n) { return bucket == DQ_BUCKET_WHOLE ? n : (size_t)bucket; }
static uint32_t fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
/* Scale of bucket bi: little-endian float32 right after the 48-byte header. */
static float msg_scale(const uint8_t *msg, size_t bi) {
    const uint8_t *q = msg + DQ_HEADER_SIZE + 4u * bi;
    uint32_t u = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static dq_params mkp(unsigned bits, dq_rounding rnd, dq_norm norm, uint32_t bucket, uint64_t seed, uint64_t step,
                     uint32_t stream) {
    dq_params p;
    memset(&p, 0, sizeof p);
    p.coder = DQ_CODER_FIXED_ONLY; /* sizes and frozen hashes of the fixed layout */
    p.bits = bits;
    p.rounding = rnd;
    p.norm = norm;
    p.bucket = bucket;
    p.scheme = DQ_SCHEME_QSGD;
    p.seed = seed;
    p.step = step;
    p.stream = stream;
    return p;
}

/* dq_encode that must succeed; returns the length (0 after a failed CHECK). */
static size_t enc(const dq_params *p, const float *x, size_t n, float *res, uint8_t *buf, size_t cap) {
    size_t len = 0;
    dq_status st = dq_encode(p, x, n, res, buf, cap, &len);
    CHECKF(st == DQ_OK, "dq_encode: %s (bits %u, n %zu)", dq_strerror(st), p->bits, n);
    return st == DQ_OK ? len : 0u;
}
static void dec(const uint8_t *msg, size_t len, float *out, size_t n) {
    dq_status st = dq_decode(msg, len, out, n);
    CHECKF(st == DQ_OK, "dq_decode: %s", dq_strerror(st));
    if (st != DQ_OK) memset(out, 0, n * sizeof(float));
}

/* Gaussian test data with per-element magnitudes spread over 2^-2..2^2 (libm; not frozen). */
static void gen_gauss(float *x, size_t n, uint64_t seed) {
    dq_t_rng r;
    size_t i;
    r.s = seed;
    for (i = 0; i < n; i++) {
        int k = (int)(dq_t_next(&r) % 5u) - 2;
        x[i] = (float)ldexp(dq_t_gauss(&r), k);
    }
}
/* Portable data built from integers only (exact on every platform, no libm rounding), for the
 * frozen hashes: 24-bit signed mantissa times 2^e, e in [-30, -15], about 1/64 exact zeros. */
static float port_val(dq_t_rng *r) {
    uint64_t z = dq_t_next(r);
    int32_t m = (int32_t)(uint32_t)(z >> 40) - (int32_t)0x800000;
    int e = (int)((z >> 8) & 15u) - 30;
    if ((z & 63u) == 0u) return 0.0f;
    return ldexpf((float)m, e);
}
static void gen_port(float *x, size_t n, uint64_t seed) {
    dq_t_rng r;
    size_t i;
    r.s = seed;
    for (i = 0; i < n; i++) x[i] = port_val(&r);
}

/* Per-coordinate law of the stochastic quantizer, from the scales in msg: decoded takes two
 * values delta apart, the upper one with probability prob.
 * b >= 2: delta = step = scale/s, prob = frac(|x|/step) (the level above |x| is taken with
 * probability equal to the fractional position; the sign is applied after);
 * b == 1: the points are -m, +m (delta = 2m) and prob = P(+m) = (1 + x/m)/2. */
static void two_point_model(unsigned bits, uint32_t bucket, const float *x, size_t n, const uint8_t *msg,
                            double *delta, double *prob) {
    size_t B = eff_bucket(bucket, n), i;
    double s = (double)levels(bits);
    for (i = 0; i < n; i++) {
        double scale = (double)msg_scale(msg, i / B);
        if (scale == 0.0) {
            delta[i] = 0.0;
            prob[i] = 0.0;
        } else if (bits == 1u) {
            double pr = 0.5 * (1.0 + (double)x[i] / scale);
            delta[i] = 2.0 * scale;
            prob[i] = pr < 0.0 ? 0.0 : (pr > 1.0 ? 1.0 : pr);
        } else {
            double step = scale / s, r = fabs((double)x[i]) / step;
            if (r > s) r = s;
            delta[i] = step;
            prob[i] = r - floor(r);
        }
    }
}
/* Bias of one stochastic draw from float rounding (not randomness), bounded generously:
 * b >= 2: inv = fl(s/scale), r = fl(|x| inv), step = fl(scale/s), fl(l step) are 4 roundings
 * of relative u each (< 2^-21 |x| together) and the 24-bit dither adds < 2^-24 step;
 * b == 1: p = fl(0.5 + fl(x fl(0.5/m))) is within 2^-23 of (1+x/m)/2, times the gap 2m. */
static double draw_bias(double ax, double delta) { return ax * 4.76837158203125e-07 + delta * 2.384185791015625e-07; }

/* ---------------------------------------------------------------- 0. the dither generator
 * doc/FORMAT.md 13.1: the keys of (0, 0, 0) and (42, 7, 3), and the 24-bit draws of (42, 7, 3) at
 * element indices on both sides of 2^32 and beyond (the key's high-index half), through the
 * 64-bit helper and the 32-bit draw it comes from. */
static void test_generator_check_values(void) {
    static const struct {
        uint64_t i;
        uint32_t d;
    } draws[] = {{0u, 9655258u},       {1u, 14641642u},          {2u, 14738346u},
                 {255u, 555311u},      {256u, 2055047u},         {0xFFFFFFFFull, 4302964u},
                 {0x100000000ull, 9166105u}, {0x100000001ull, 5531424u}, {((uint64_t)1 << 40) + 5u, 12996276u}};
    dqt_key z = dqt_key_make(0, 0, 0), k = dqt_key_make(42, 7, 3);
    size_t j;
    CHECKF(z.k0 == 0xBF4F6F16u && z.k1 == 0x1E35CDB4u, "key (0, 0, 0): %08x %08x", (unsigned)z.k0, (unsigned)z.k1);
    CHECKF(k.k0 == 0xCE0846D9u && k.k1 == 0x662C9547u, "key (42, 7, 3): %08x %08x", (unsigned)k.k0, (unsigned)k.k1);
    for (j = 0; j < sizeof draws / sizeof draws[0]; j++) {
        uint64_t i = draws[j].i;
        uint32_t d = dqt_draw24_at(42, 7, 3, i), h = dqt_draw32(k.k0, dqt_key_hi(k, (uint32_t)(i >> 32)), (uint32_t)i);
        CHECKF(d == draws[j].d && h >> 8 == d, "draw at %llu: %lu (32-bit %08lx), FORMAT.md 13.1 says %lu",
               (unsigned long long)i, (unsigned long)d, (unsigned long)h, (unsigned long)draws[j].d);
    }
    CHECK(dqt_draw_at(42, 7, 3, 0) == 9655258.0f / 16777216.0f);
}

/* ---------------------------------------------------------------- 1. unbiasedness
 * K independent quantizations of one input (params.step = 1000 + k). For coordinate i the sum of
 * decoded values minus K x_i is delta_i (C_i - K p_i) + bias, C_i ~ Binomial(K, p_i).
 * (a) per coordinate, Bernstein's inequality for K draws bounded by 1:
 *     P(|C - Kp| >= t) <= 2 exp(-t^2 / (2 (Kpq + t/3))); with L = ln(2M/alpha) and
 *     t = L/3 + sqrt(L^2/9 + 2 L Kpq) all M coordinate checks of this test pass together with
 *     probability >= 1 - alpha (Bonferroni). alpha = 1e-6, M = 30 cases x 1100 coordinates
 *     (L = 24.9: about 7.1 standard errors when Kpq is large, and valid for small Kpq too).
 * (b) aggregate: z_i = (C_i - K p_i)/sqrt(K p_i q_i) has E z^2 = 1 and Var z^2 = 2 + (1-6pq)/(Kpq)
 *     (binomial excess kurtosis), independent over i. S = sum z_i^2 over coordinates with
 *     Kpq >= 5 (fixed by the input, not the outcome) is a sum of ~1000 independent terms: by the
 *     CLT accept |S - dof| <= 6 sqrt(sum Var z^2) (the chi-square-like skew of sqrt(8/dof) moves
 *     a 6-sigma tail by < 0.6 sigma). */
static double bernstein_t(double L, double kpq) { return L / 3.0 + sqrt(L * L / 9.0 + 2.0 * L * kpq); }
#define UB_D 1100u
#define UB_K 1000u
#define UB_CASES 30.0
static void unbiased_case(unsigned bits, dq_norm norm, uint32_t bucket, uint64_t seed) {
    const size_t d = UB_D;
    const unsigned K = UB_K;
    const double L = log(2.0 * UB_CASES * (double)UB_D / 1e-6);
    float *x = falloc(d), *out = falloc(d);
    double *sum = dalloc(d), *delta = dalloc(d), *prob = dalloc(d);
    size_t cap = dq_encode_bound(d, bits), len = 0, i, dof = 0, bad = 0;
    uint8_t *msg = balloc(cap);
    dq_params p = mkp(bits, DQ_ROUND_STOCHASTIC, norm, bucket, 0xC0FFEEu + seed, 0, 7u);
    double S = 0.0, V = 0.0, worst = 0.0;
    unsigned k;
    gen_gauss(x, d, seed);
    for (k = 0; k < K; k++) {
        p.step = 1000u + k;
        len = enc(&p, x, d, NULL, msg, cap);
        if (!len) break;
        if (k == 0) two_point_model(bits, bucket, x, d, msg, delta, prob);
        dec(msg, len, out, d);
        for (i = 0; i < d; i++) sum[i] += (double)out[i];
    }
    for (i = 0; i < d; i++) {
        double pq = prob[i] * (1.0 - prob[i]), kpq = (double)K * pq;
        double D = sum[i] - (double)K * (double)x[i];
        double lim = delta[i] * bernstein_t(L, kpq) + (double)K * draw_bias(fabs((double)x[i]), delta[i]);
        if (fabs(D) > lim) {
            if (bad++ < 3)
                CHECKF(0, "bits %u norm %d bucket %u coord %zu: |sum - Kx| = %g > %g (x %g, p %g, delta %g)", bits,
                       (int)norm, (unsigned)bucket, i, fabs(D), lim, (double)x[i], prob[i], delta[i]);
        }
        if (lim > 0.0 && fabs(D) / lim > worst) worst = fabs(D) / lim;
        if (kpq >= 5.0) {
            S += D * D / (delta[i] * delta[i] * kpq);
            V += 2.0 + (1.0 - 6.0 * pq) / kpq;
            dof++;
        }
    }
    CHECKF(dof >= d / 4u, "bits %u: only %zu coordinates with Kpq >= 5 (test would be weak)", bits, dof);
    CHECKF(fabs(S - (double)dof) <= 6.0 * sqrt(V), "bits %u norm %d bucket %u: S = %.1f, dof %zu, 6 sd = %.1f", bits,
           (int)norm, (unsigned)bucket, S, dof, 6.0 * sqrt(V));
    if (verbose())
        printf("  unbiased b=%2u norm=%d bucket=%10u: S=%8.1f dof=%4zu (S-dof)/sd=%+6.2f worst|D|/lim=%.3f\n", bits,
               (int)norm, (unsigned)bucket, S, dof, (S - (double)dof) / sqrt(V), worst);
    free(x);
    free(out);
    free(sum);
    free(delta);
    free(prob);
    free(msg);
}
static void test_unbiased(void) {
    static const unsigned widths[5] = {1, 2, 3, 4, 8};
    static const uint32_t buckets[3] = {512u, 64u, DQ_BUCKET_WHOLE};
    unsigned w, nm, bk;
    for (w = 0; w < 5; w++)
        for (nm = 0; nm < 2; nm++)
            for (bk = 0; bk < 3; bk++) unbiased_case(widths[w], k_norms[nm], buckets[bk], 100u * w + 10u * nm + bk);
}

/* ---------------------------------------------------------------- 2. variance
 * e_k = ||Q_k(x) - x||^2 for K independent draws. Its expectation is exactly
 * E = sum_i delta_i^2 p_i q_i (= (scale/s)^2 sum f(1-f) per bucket for b >= 2, sum m^2 - x^2 for
 * b == 1), computed from the input and the scales on the wire. The e_k are iid, so by the CLT
 * the sample mean is within 5 standard errors (sample sd / sqrt K; two-sided p ~ 6e-7) of E,
 * widened by the float-rounding bias: |(Y+eps)^2 - Y^2| <= 2|eps|delta + eps^2 per coordinate with
 * eps = draw_bias. Per bucket, the QSGD bound (Lemma 3.1) for L2 scale and b >= 2:
 * E_b <= min(B/s^2, sqrt(B)/s) ||x_b||^2, for max scale E_b <= B scale^2 / (4 s^2) (pq <= 1/4),
 * and for b == 1 (L2) E_b = B m^2 - ||x_b||^2 = (B - 1)||x_b||^2. Both the exact E_b and the
 * empirical per-bucket mean (plus 5 of its standard errors) must respect the bound. */
#define VAR_D 1100u
#define VAR_K 400u
static void variance_case(unsigned bits, dq_norm norm, uint32_t bucket, uint64_t seed) {
    const size_t d = VAR_D;
    const unsigned K = VAR_K;
    size_t B = eff_bucket(bucket, d), nb = (d + B - 1u) / B, i, bi;
    float *x = falloc(d), *out = falloc(d);
    double *delta = dalloc(d), *prob = dalloc(d), *eb = dalloc(nb), *m1 = dalloc(nb), *m2 = dalloc(nb);
    double *exact = dalloc(nb), *nrm2 = dalloc(nb), *bound = dalloc(nb);
    size_t cap = dq_encode_bound(d, bits), len;
    uint8_t *msg = balloc(cap);
    dq_params p = mkp(bits, DQ_ROUND_STOCHASTIC, norm, bucket, 0xBEEFu + seed, 0, 1u);
    double s = (double)levels(bits), E = 0.0, slack = 0.0, t1 = 0.0, t2 = 0.0, mean, se;
    unsigned k;
    gen_gauss(x, d, seed);
    for (k = 0; k < K; k++) {
        p.step = 77u + k;
        len = enc(&p, x, d, NULL, msg, cap);
        if (!len) break;
        if (k == 0) two_point_model(bits, bucket, x, d, msg, delta, prob);
        dec(msg, len, out, d);
        for (bi = 0; bi < nb; bi++) eb[bi] = 0.0;
        for (i = 0; i < d; i++) {
            double e = (double)out[i] - (double)x[i];
            eb[i / B] += e * e;
        }
        {
            double tot = 0.0;
            for (bi = 0; bi < nb; bi++) {
                m1[bi] += eb[bi];
                m2[bi] += eb[bi] * eb[bi];
                tot += eb[bi];
            }
            t1 += tot;
            t2 += tot * tot;
        }
    }
    for (i = 0; i < d; i++) {
        double eps = draw_bias(fabs((double)x[i]), delta[i]);
        exact[i / B] += delta[i] * delta[i] * prob[i] * (1.0 - prob[i]);
        nrm2[i / B] += (double)x[i] * (double)x[i];
        slack += 2.0 * eps * delta[i] + eps * eps;
    }
    for (bi = 0; bi < nb; bi++) E += exact[bi];
    mean = t1 / K;
    se = sqrt(fmax(t2 / K - mean * mean, 0.0) * K / (K - 1.0) / K);
    CHECKF(fabs(mean - E) <= 5.0 * se + slack, "bits %u norm %d bucket %u: mean %.6g exact %.6g (5 se = %.3g)", bits,
           (int)norm, (unsigned)bucket, mean, E, 5.0 * se);
    for (bi = 0; bi < nb; bi++) {
        double len_b = (double)(bi + 1u < nb ? B : d - bi * B), scale = (double)msg_scale(msg, bi);
        double mb = m1[bi] / K, seb = sqrt(fmax(m2[bi] / K - mb * mb, 0.0) * K / (K - 1.0) / K);
        /* the factors 1 +- 1e-6 cover the float rounding of the scale on the wire against the
         * double norm here (relative 2u = 1.2e-7 in scale^2) */
        if (bits == 1u)
            bound[bi] = norm == DQ_NORM_L2 ? (len_b - 1.0) * nrm2[bi] * (1.0 + 1e-6) : len_b * scale * scale;
        else if (norm == DQ_NORM_L2)
            bound[bi] = fmin(len_b / (s * s), sqrt(len_b) / s) * nrm2[bi] * (1.0 + 1e-6);
        else
            bound[bi] = len_b * scale * scale / (4.0 * s * s) * (1.0 + 1e-6);
        CHECKF(exact[bi] <= bound[bi], "bits %u bucket %zu: exact variance %.6g above bound %.6g", bits, bi, exact[bi],
               bound[bi]);
        if (bits == 1u && norm == DQ_NORM_L2) /* an identity for 1 bit: also from below */
            CHECKF(exact[bi] >= bound[bi] * (1.0 - 2e-6), "1 bit bucket %zu: exact %.9g != (B-1)||x||^2 %.9g", bi,
                   exact[bi], bound[bi]);
        CHECKF(mb <= bound[bi] + 5.0 * seb, "bits %u bucket %zu: empirical variance %.6g above bound %.6g + 5 se",
               bits, bi, mb, bound[bi]);
    }
    if (verbose()) {
        double bt = 0.0;
        for (bi = 0; bi < nb; bi++) bt += bound[bi];
        printf("  variance b=%2u norm=%d bucket=%10u: mean/exact=%.5f (mean-exact)/se=%+6.2f exact/bound=%.3f\n", bits,
               (int)norm, (unsigned)bucket, mean / E, (mean - E) / se, E / bt);
    }
    free(x);
    free(out);
    free(delta);
    free(prob);
    free(eb);
    free(m1);
    free(m2);
    free(exact);
    free(nrm2);
    free(bound);
    free(msg);
}
static void test_variance(void) {
    static const unsigned widths[5] = {1, 2, 3, 4, 8};
    static const uint32_t buckets[3] = {64u, 512u, DQ_BUCKET_WHOLE};
    unsigned w, bk;
    for (w = 0; w < 5; w++) {
        for (bk = 0; bk < 3; bk++) variance_case(widths[w], DQ_NORM_L2, buckets[bk], 10u * w + bk);
        variance_case(widths[w], DQ_NORM_MAX, 64u, 10u * w + 7u);
    }
}

/* ---------------------------------------------------------------- 2b. dither independence
 * Per-coordinate tests cannot see dither shared between coordinates (e.g. one draw per segment):
 * each coordinate alone is still unbiased with the right variance. T_k = sum_i sgn(x_i)(Q_k(x)_i
 * - x_i) / sqrt(sum_i delta_i^2 p_i q_i) has mean 0 and variance 1 when coordinates are
 * independent; positively correlated draws inflate it by up to a factor d. Over K draws,
 * sum T_k^2 has mean K and variance K Var(T^2), Var(T^2) = 2 + sum delta^4 pq(1-6pq) /
 * (sum delta^2 pq)^2 (fourth cumulant of the sum); accept within 6 sd (CLT over K). */
static void independence_case(unsigned bits, dq_norm norm, uint32_t bucket, uint64_t seed) {
    const size_t d = 2048u;
    const unsigned K = 800u;
    float *x = falloc(d), *out = falloc(d);
    double *delta = dalloc(d), *prob = dalloc(d);
    size_t cap = dq_encode_bound(d, bits), len, i;
    uint8_t *msg = balloc(cap);
    dq_params p = mkp(bits, DQ_ROUND_STOCHASTIC, norm, bucket, 0x5EEDu + seed, 0, 2u);
    double var = 0.0, k4 = 0.0, sumT2 = 0.0, varT2;
    unsigned k;
    gen_gauss(x, d, seed);
    for (k = 0; k < K; k++) {
        double t = 0.0;
        p.step = 5000u + k;
        len = enc(&p, x, d, NULL, msg, cap);
        if (!len) break;
        if (k == 0) {
            two_point_model(bits, bucket, x, d, msg, delta, prob);
            for (i = 0; i < d; i++) {
                double pq = prob[i] * (1.0 - prob[i]), d2 = delta[i] * delta[i];
                var += d2 * pq;
                k4 += d2 * d2 * pq * (1.0 - 6.0 * pq);
            }
        }
        dec(msg, len, out, d);
        for (i = 0; i < d; i++) t += (x[i] < 0.0f ? -1.0 : 1.0) * ((double)out[i] - (double)x[i]);
        sumT2 += t * t / var;
    }
    varT2 = 2.0 + k4 / (var * var);
    CHECKF(fabs(sumT2 - K) <= 6.0 * sqrt(K * varT2), "bits %u norm %d bucket %u: sum T^2 = %.1f, K = %u, 6 sd = %.1f",
           bits, (int)norm, (unsigned)bucket, sumT2, K, 6.0 * sqrt(K * varT2));
    if (verbose())
        printf("  independence b=%2u norm=%d bucket=%10u: sumT2/K=%.4f z=%+6.2f\n", bits, (int)norm, (unsigned)bucket,
               sumT2 / K, (sumT2 - K) / sqrt(K * varT2));
    free(x);
    free(out);
    free(delta);
    free(prob);
    free(msg);
}
static void test_dither_independence(void) {
    independence_case(1, DQ_NORM_L2, 512u, 1u);
    independence_case(2, DQ_NORM_L2, DQ_BUCKET_WHOLE, 2u);
    independence_case(3, DQ_NORM_MAX, DQ_BUCKET_WHOLE, 3u);
    independence_case(4, DQ_NORM_MAX, 64u, 4u);
    independence_case(8, DQ_NORM_L2, 512u, 5u);
}

/* ---------------------------------------------------------------- 3. round trips
 * Data with structure: ordinary values, exact zeros, an all-zero run, huge values, denormals
 * mixed with normals, and a 24-aligned run whose norm is below 2^-100 (its scale must be sent
 * as 0 when it forms its own bucket). n = 1003 = 3 full 256-code blocks + a tail of 235; the
 * last bucket (19, 491 or 1003 elements) is not a multiple of 4, 8 or 16, so the vector kernels'
 * scalar tails run too. */
#define RT_N 1003u
static void roundtrip_data(float *x, size_t n, uint64_t seed) {
    dq_t_rng r;
    size_t i;
    r.s = seed;
    for (i = 0; i < n; i++) {
        double g = dq_t_gauss(&r);
        if (i >= 240 && i < 288)
            x[i] = 0.0f;
        else if (i >= 288 && i < 384)
            x[i] = (float)(g * 1e15);
        else if (i >= 384 && i < 480)
            x[i] = i % 3u == 0 ? (i % 2u ? -1e-40f : 3e-41f) : (float)g;
        else if (i >= 480 && i < 504)
            x[i] = (float)(g * 1e-35);
        else if (i % 37u == 5u)
            x[i] = 0.0f;
        else
            x[i] = (float)ldexp(g, (int)(dq_t_next(&r) % 9u) - 4);
    }
}

/* Checks one message against its input: header fields, the scale of every bucket, and every
 * decoded element against the quantizer's error bound. */
static void check_roundtrip(const dq_params *p, const float *x, size_t n, const uint8_t *msg, size_t len,
                            const float *out) {
    unsigned b = p->bits, s = levels(b);
    int stoch = p->rounding != DQ_ROUND_NEAREST;
    unsigned wire_norm = (b == 1u && !stoch) ? 2u : (p->norm == DQ_NORM_MAX ? 1u : 0u);
    size_t B = eff_bucket(p->bucket, n), nb = (n + B - 1u) / B, bi, i;
    dq_header h;
    dq_status st = dq_header_read(msg, len, &h);
    CHECKF(st == DQ_OK, "dq_header_read: %s", dq_strerror(st));
    if (st != DQ_OK) return;
    /* h.norm is the dq_norm value: wire 0, 1, 2 = DQ_NORM_L2, DQ_NORM_MAX, DQ_NORM_MEAN */
    CHECKF(h.bits == b && (unsigned)h.norm == wire_norm + 1u && h.flags == (stoch ? DQ_FLAG_STOCHASTIC : 0u),
           "header: bits %u norm %u flags %u", h.bits, (unsigned)h.norm, h.flags);
    CHECK(h.bucket == (p->bucket == DQ_BUCKET_WHOLE ? 0u : p->bucket) && h.count == n && h.msg_size == len);
    CHECK(h.seed == p->seed && h.step == p->step && h.stream == p->stream);
    for (bi = 0; bi < nb; bi++) {
        size_t lo = bi * B, hi = lo + B < n ? lo + B : n;
        double sq = 0.0, ab = 0.0, mx = 0.0, ref;
        float scale = msg_scale(msg, bi);
        for (i = lo; i < hi; i++) {
            double a = fabs((double)x[i]);
            sq += a * a;
            ab += a;
            if (a > mx) mx = a;
        }
        ref = wire_norm == 0u ? sqrt(sq) : (wire_norm == 1u ? mx : ab / (double)(hi - lo));
        /* The library sums in another order (in double, then rounds to float once): at most 1 ulp
         * of float apart; the max norm is exact. Scales below 2^-100 are sent as 0. */
        if (ref < MIN_SCALE_D * (1.0 - 1e-6)) {
            CHECKF(scale == 0.0f, "bucket %zu: norm %g below 2^-100 but scale %g", bi, ref, (double)scale);
        } else if (wire_norm == 1u) {
            CHECKF((double)scale == ref, "bucket %zu: max scale %.9g != %.9g", bi, (double)scale, ref);
        } else {
            CHECKF(fabs((double)scale - ref) <= ref * 1.1920928955078125e-07,
                   "bits %u norm %u bucket %zu: scale %.9g vs reference %.9g", b, wire_norm, bi, (double)scale, ref);
        }
        for (i = lo; i < hi; i++) {
            double xv = (double)x[i], o = (double)out[i], err = fabs(o - xv), sc = (double)scale;
            if (scale == 0.0f) {
                CHECKF(o == 0.0, "bits %u elem %zu: zero-scale bucket decoded %g", b, i, o);
            } else if (b == 1u) {
                /* two points +-scale; stochastic: |x| <= scale so any of them is within the gap 2 scale
                 * (checked via the magnitude); an element equal to +-scale has p = 0 or 1 and is exact.
                 * nearest (scaled sign): the sign of the decoded value is the sign bit of x, so it
                 * is the nearer of the two points (zeros of either sign included). */
                CHECKF(fabs(o) == sc, "1-bit elem %zu: |decoded| %g != scale %g", i, o, sc);
                if (stoch) {
                    if (fabs(xv) == sc) CHECKF(o == xv, "1-bit elem %zu: x = +-scale decoded %g", i, o);
                } else {
                    CHECKF((fbits(out[i]) >> 31) == (fbits(x[i]) >> 31), "1-bit nearest elem %zu: x %g -> %g", i, xv, o);
                    CHECKF(err <= fabs(-o - xv), "1-bit nearest elem %zu: x %g -> %g is not the nearer point", i, xv, o);
                }
            } else {
                /* |l - r| < 1 (stochastic) or <= 1/2 (nearest, ties toward zero). Float rounding: the
                 * roundings of inv = s/scale, r = |x| inv, step = scale/s and l*step each move the
                 * result by at most u of |x| or of scale (<= scale), plus the float scale may sit
                 * below |x| by u: 6 u scale in all. */
                double step = sc / (double)s, tol = (stoch ? 1.0 : 0.5) * step + 6.0 * UNIT_RO * sc;
                CHECKF(err <= tol, "bits %u %s norm %u elem %zu: x %.9g decoded %.9g, err %.3g > %.3g (step %.3g)", b,
                       stoch ? "stoch" : "nearest", wire_norm, i, xv, o, err, tol, step);
                CHECKF(fabs(o) <= sc * (1.0 + 2.0 * UNIT_RO), "bits %u elem %zu: |decoded| %g above scale %g", b, i,
                       o, sc);
                CHECKF(o == 0.0 || (o < 0.0) == (xv < 0.0), "bits %u elem %zu: sign flip x %g decoded %g", b, i, xv, o);
            }
        }
    }
}

static void test_roundtrip(void) {
    static const uint32_t buckets[3] = {24u, 512u, DQ_BUCKET_WHOLE};
    const size_t n = RT_N;
    float *x = falloc(n), *out = falloc(n), *e_old = falloc(n), *e = falloc(n), *c = falloc(n), *out2 = falloc(n);
    size_t cap = dq_encode_bound(n, 16), len, len2, i;
    uint8_t *msg = balloc(cap), *msg2 = balloc(cap);
    unsigned b, r, nm, bk;
    dq_t_rng g;
    roundtrip_data(x, n, 0x1234u);
    g.s = 99u;
    for (i = 0; i < n; i++) e_old[i] = (float)(dq_t_gauss(&g) * 0.05);
    for (b = 1; b <= 16; b++)
        for (r = 0; r < 2; r++)
            for (nm = 0; nm < 2; nm++)
                for (bk = 0; bk < 3; bk++) {
                    dq_params p = mkp(b, k_rounds[r], k_norms[nm], buckets[bk], 0xABCDEFu + b, 31u * b + bk, 5u + nm);
                    len = enc(&p, x, n, NULL, msg, cap);
                    if (!len) continue;
                    dq_decode(msg, len, out, n);
                    check_roundtrip(&p, x, n, msg, len, out);
                    /* error feedback: new e == fl(x + e_old) - decoded, bit for bit, and the message
                     * equals the plain encoding of the compensated vector fl(x + e_old) */
                    memcpy(e, e_old, n * sizeof(float));
                    for (i = 0; i < n; i++) c[i] = x[i] + e_old[i];
                    len = enc(&p, x, n, e, msg, cap);
                    len2 = enc(&p, c, n, NULL, msg2, cap);
                    if (!len || !len2) continue;
                    CHECKF(len == len2 && memcmp(msg, msg2, len) == 0, "bits %u: residual message != message of x+e", b);
                    dec(msg, len, out2, n);
                    for (i = 0; i < n; i++) {
                        float want = c[i] - out2[i];
                        CHECKF(fbits(e[i]) == fbits(want), "bits %u elem %zu: residual %.9g, want (x+e)-dec = %.9g", b,
                               i, (double)e[i], (double)want);
                    }
                    check_roundtrip(&p, c, n, msg, len, out2);
                }
    free(x);
    free(out);
    free(e_old);
    free(e);
    free(c);
    free(out2);
    free(msg);
    free(msg2);
}

/* Exact cases: max norm with scale = s gives step = fl(s/s) = 1 and inv = 1 exactly, so
 * integers must come back unchanged (f = 0 never rounds up, in either mode), and k + 1/2 must go
 * to k in nearest mode (ties toward zero) and to k or k+1 in stochastic mode. */
static void test_exact_levels_and_ties(void) {
    float x[1024], out[1024];
    uint8_t msg[DQ_ENCODE_BOUND(1024, 16)];
    unsigned b, r;
    for (b = 2; b <= 16; b++) {
        unsigned s = levels(b), top = s < 250u ? s : 250u, k;
        size_t n = 0, i, len;
        x[n++] = (float)s;
        for (k = 0; k < top; k++) {
            x[n++] = (float)k;
            x[n++] = -(float)k;
            x[n++] = (float)k + 0.5f;
            x[n++] = -((float)k + 0.5f);
        }
        for (r = 0; r < 2; r++) {
            dq_params p = mkp(b, k_rounds[r], DQ_NORM_MAX, DQ_BUCKET_WHOLE, 3u, b, 0u);
            len = enc(&p, x, n, NULL, msg, sizeof msg);
            if (!len) continue;
            CHECK(msg_scale(msg, 0) == (float)s);
            dec(msg, len, out, n);
            CHECK(out[0] == (float)s);
            for (i = 1; i < n; i += 4) {
                float kf = x[i];
                CHECKF(out[i] == kf && out[i + 1] == -kf, "bits %u: integer %g decoded %g / %g", b, (double)kf,
                       (double)out[i], (double)out[i + 1]);
                if (r == 1)
                    CHECKF(out[i + 2] == kf && out[i + 3] == -kf, "bits %u nearest: %g+0.5 decoded %g / %g (want %g)",
                           b, (double)kf, (double)out[i + 2], (double)out[i + 3], (double)kf);
                else
                    CHECKF((out[i + 2] == kf || out[i + 2] == kf + 1.0f) &&
                               (out[i + 3] == -kf || out[i + 3] == -kf - 1.0f),
                           "bits %u stochastic: %g+0.5 decoded %g / %g", b, (double)kf, (double)out[i + 2],
                           (double)out[i + 3]);
            }
        }
    }
}

/* ---------------------------------------------------------------- 4. sizes */
static size_t expect_body(unsigned b, uint32_t bucket, size_t n) {
    size_t B = eff_bucket(bucket, n);
    return 4u * ((n + B - 1u) / B) + (n * b + 7u) / 8u;
}
/* One size check: the reported sizes, the bytes written (canary after them untouched), the
 * bound, and (when do_enc) encoding into exactly len bytes and failing at len - 1. */
static void size_case(const dq_params *p, const float *x, size_t n, uint8_t *buf, size_t cap, int do_enc) {
    size_t want = DQ_HEADER_SIZE + expect_body(p->bits, p->bucket, n), esz = 0, bsz = 0, len = 0, bound, i;
    dq_status st;
    bound = dq_encode_bound(n, p->bits);
    CHECKF(dq_encode_capacity(p, n, &esz) == DQ_OK && esz == want, "bits %u bucket %u n %zu: encoded_size %zu want %zu",
           p->bits, (unsigned)p->bucket, n, esz, want);
    CHECKF(dq_block_size(p, n, &bsz) == DQ_OK && bsz == want - DQ_HEADER_SIZE,
           "bits %u bucket %u n %zu: block_size %zu want %zu", p->bits, (unsigned)p->bucket, n, bsz,
           want - DQ_HEADER_SIZE);
    CHECKF(bound == DQ_ENCODE_BOUND(n, p->bits) && want <= bound, "bits %u n %zu: bound %zu macro %zu size %zu",
           p->bits, n, bound, (size_t)DQ_ENCODE_BOUND(n, p->bits), want);
    if (!do_enc) return;
    if (cap < want + 16u) {
        CHECK(cap >= want + 16u);
        return;
    }
    memset(buf, 0xA5, want + 16u);
    st = dq_encode(p, x, n, NULL, buf, want, &len);
    CHECKF(st == DQ_OK && len == want, "bits %u bucket %u n %zu: encode %s, len %zu want %zu", p->bits,
           (unsigned)p->bucket, n, dq_strerror(st), len, want);
    for (i = want; i < want + 16u; i++)
        CHECKF(buf[i] == 0xA5, "bits %u n %zu: byte %zu past the message written", p->bits, n, i);
    st = dq_encode(p, x, n, NULL, buf, want - 1u, &len);
    CHECKF(st == DQ_ERR_DST_TOO_SMALL, "bits %u n %zu: capacity size-1 gave %s", p->bits, n, dq_strerror(st));
}
static void test_sizes(void) {
    static const uint32_t buckets[3] = {8u, 512u, DQ_BUCKET_WHOLE};
    const size_t big = (size_t)1 << 20, nmax = 2000u;
    static const size_t big_off[4] = {0, 1, 7, 263};
    float *x = falloc(big + 263u), *out = falloc(nmax);
    size_t cap = DQ_ENCODE_BOUND(big + 263u, 16) + 16u, n, len = 0, j;
    uint8_t *buf = balloc(cap);
    float one = 1.0f;
    unsigned b, bk;
    gen_port(x, big + 263u, 4242u);
    for (b = 1; b <= 16; b++) {
        /* n = 0: dq_encode refuses it; the bound is the header, the payload checksum and the
         * room for a TRUNC_NU level table (127 levels at most) */
        dq_params p = mkp(b, DQ_ROUND_NEAREST, DQ_NORM_L2, 512u, 1u, 2u, 3u);
        size_t table = b == 1u ? 0u : 4u * ((1u << ((b < 8u ? b : 8u) - 1u)) - 1u);
        CHECK(dq_encode(&p, &one, 0, NULL, buf, cap, &len) == DQ_ERR_EMPTY);
        CHECK(dq_encode_block(&p, &one, 0, NULL, buf, cap, &len) == DQ_ERR_EMPTY);
        CHECK(dq_encode_bound(0, b) == DQ_HEADER_SIZE + 4u + table && DQ_ENCODE_BOUND(0, b) == DQ_HEADER_SIZE + 4u + table);
        for (n = 1; n <= nmax; n++) {
            CHECK(dq_encode_bound(n, b) >= dq_encode_bound(n - 1u, b));
            if (b > 1) CHECK(dq_encode_bound(n, b) >= dq_encode_bound(n, b - 1u));
            for (bk = 0; bk < 3; bk++) {
                dq_params q = mkp(b, (n & 1u) ? DQ_ROUND_NEAREST : DQ_ROUND_STOCHASTIC,
                                  (b & 1u) ? DQ_NORM_L2 : DQ_NORM_MAX, buckets[bk], 9u, n, b);
                size_case(&q, x, n, buf, cap, 1);
                if (bk == n % 3u) { /* and the content, once per (width, n): every tail length */
                    size_t l = enc(&q, x, n, NULL, buf, cap);
                    if (l) {
                        dec(buf, l, out, n);
                        check_roundtrip(&q, x, n, buf, l, out);
                    }
                }
            }
        }
        /* large n: sizes for every (n, bucket); to keep the run short (valgrind) the full encode
         * runs only where b = 4j + 1 + 2bk, 11 triples that still cover every offset and bucket,
         * plus a whole-vector stochastic one for b = 3 and b = 16 */
        for (j = 0; j < 4; j++) {
            n = big + big_off[j];
            for (bk = 0; bk < 3; bk++) {
                dq_params q = mkp(b, DQ_ROUND_NEAREST, DQ_NORM_L2, buckets[bk], 9u, 1u, 0u);
                size_case(&q, x, n, buf, cap, b == 4u * (unsigned)j + 1u + 2u * bk);
            }
        }
        {
            dq_params q = mkp(b, DQ_ROUND_STOCHASTIC, DQ_NORM_L2, DQ_BUCKET_WHOLE, 9u, 1u, 0u);
            size_case(&q, x, big + big_off[b % 4u], buf, cap, b == 3u || b == 16u);
        }
        /* the function and the macro agree at the top of the documented range */
        CHECK(dq_encode_bound((size_t)DQ_MAX_ELEMS, b) == DQ_ENCODE_BOUND((size_t)DQ_MAX_ELEMS, b));
        CHECK(dq_encode_bound((size_t)DQ_MAX_ELEMS / 2u + 3u, b) == DQ_ENCODE_BOUND((size_t)DQ_MAX_ELEMS / 2u + 3u, b));
    }
    free(x);
    free(out);
    free(buf);
}

/* ---------------------------------------------------------------- 5. decode_add and blocks */
static void test_decode_add_and_blocks(void) {
    static const uint32_t buckets[3] = {24u, 512u, DQ_BUCKET_WHOLE};
    static const float weights[5] = {1.0f, 0.25f, -1.75f, 0.3333333f, 1e-3f};
    const size_t n = 1005u; /* 3 blocks + 237: tails of every vector width */
    float *x = falloc(n), *v = falloc(n), *acc0 = falloc(n), *want = falloc(n), *got = falloc(n);
    float *e1 = falloc(n), *e2 = falloc(n), *v2 = falloc(n);
    size_t cap = dq_encode_bound(n, 16), len, blen, i;
    uint8_t *msg = balloc(cap), *blk = balloc(cap), *msg_e = balloc(cap);
    unsigned b, w;
    dq_t_rng g;
    gen_gauss(x, n, 777u);
    g.s = 778u;
    for (i = 0; i < n; i++) acc0[i] = (float)(dq_t_gauss(&g) * 3.0);
    for (b = 1; b <= 16; b++) {
        dq_params p = mkp(b, (b % 3u) ? DQ_ROUND_STOCHASTIC : DQ_ROUND_NEAREST, (b & 1u) ? DQ_NORM_L2 : DQ_NORM_MAX,
                          buckets[b % 3u], 11u, b, 2u);
        dq_status st;
        len = enc(&p, x, n, NULL, msg, cap);
        if (!len) continue;
        dec(msg, len, v, n);
        for (w = 0; w < 5; w++) {
            for (i = 0; i < n; i++) {
                float t = weights[w] * v[i];
                want[i] = acc0[i] + t;
            }
            memcpy(got, acc0, n * sizeof(float));
            st = dq_decode_add(msg, len, weights[w], got, n);
            CHECKF(st == DQ_OK && memcmp(got, want, n * sizeof(float)) == 0, "bits %u w %g: decode_add differs (%s)", b,
                   (double)weights[w], dq_strerror(st));
            memcpy(got, acc0, n * sizeof(float));
            st = dq_decode_add_block(&p, msg + DQ_HEADER_SIZE, len - DQ_HEADER_SIZE, n, weights[w], got);
            CHECKF(st == DQ_OK && memcmp(got, want, n * sizeof(float)) == 0, "bits %u w %g: decode_add_block differs",
                   b, (double)weights[w]);
        }
        /* two accumulations in a row equal the two loops in a row */
        for (i = 0; i < n; i++) {
            float t1 = weights[1] * v[i], t2;
            want[i] = acc0[i] + t1;
            t2 = weights[2] * v[i];
            want[i] = want[i] + t2;
        }
        memcpy(got, acc0, n * sizeof(float));
        dq_decode_add(msg, len, weights[1], got, n);
        dq_decode_add(msg, len, weights[2], got, n);
        CHECKF(memcmp(got, want, n * sizeof(float)) == 0, "bits %u: repeated decode_add differs", b);
        /* headerless encoding = the message after its header; block decoding = message decoding */
        blen = 0;
        st = dq_encode_block(&p, x, n, NULL, blk, cap, &blen);
        CHECKF(st == DQ_OK && blen == len - DQ_HEADER_SIZE && memcmp(blk, msg + DQ_HEADER_SIZE, blen) == 0,
               "bits %u: encode_block bytes differ from the message body", b);
        st = dq_decode_block(&p, blk, blen, n, v2);
        CHECKF(st == DQ_OK && memcmp(v2, v, n * sizeof(float)) == 0, "bits %u: decode_block differs", b);
        /* with error feedback too: same body, same residuals */
        for (i = 0; i < n; i++) e1[i] = e2[i] = acc0[i] * 0.01f;
        len = enc(&p, x, n, e1, msg_e, cap);
        st = dq_encode_block(&p, x, n, e2, blk, cap, &blen);
        CHECKF(st == DQ_OK && len && blen == len - DQ_HEADER_SIZE && memcmp(blk, msg_e + DQ_HEADER_SIZE, blen) == 0,
               "bits %u: encode_block with residual differs", b);
        CHECKF(memcmp(e1, e2, n * sizeof(float)) == 0, "bits %u: residuals of encode and encode_block differ", b);
    }
    free(x);
    free(v);
    free(acc0);
    free(want);
    free(got);
    free(e1);
    free(e2);
    free(v2);
    free(msg);
    free(blk);
    free(msg_e);
}

/* ---------------------------------------------------------------- 6. determinism */
/* Two stochastic encodings that differ only in one key field: each coordinate decodes
 * differently with probability 2pq if the draws are independent (a key field that is ignored
 * gives 0 differences). Count within 6 sd of sum 2pq (variance sum 2pq(1 - 2pq), CLT). */
static void check_key_field(const dq_params *a, const dq_params *bp, const float *x, size_t n, const double *prob,
                            const char *what) {
    size_t cap = dq_encode_bound(n, a->bits), la, lb, i, diff = 0;
    uint8_t *ma = balloc(cap), *mb = balloc(cap);
    float *oa = falloc(n), *ob = falloc(n);
    double mean = 0.0, var = 0.0;
    la = enc(a, x, n, NULL, ma, cap);
    lb = enc(bp, x, n, NULL, mb, cap);
    if (la && lb) {
        CHECKF(la == lb && memcmp(ma + DQ_HEADER_SIZE, mb + DQ_HEADER_SIZE, la - DQ_HEADER_SIZE) != 0,
               "%s: payloads identical", what);
        dec(ma, la, oa, n);
        dec(mb, lb, ob, n);
        for (i = 0; i < n; i++) {
            double q2 = 2.0 * prob[i] * (1.0 - prob[i]);
            diff += oa[i] != ob[i];
            mean += q2;
            var += q2 * (1.0 - q2);
        }
        CHECKF(fabs((double)diff - mean) <= 6.0 * sqrt(var), "%s: %zu coordinates differ, expected %.1f +- %.1f", what,
               diff, mean, sqrt(var));
    }
    free(ma);
    free(mb);
    free(oa);
    free(ob);
}

static void test_determinism(void) {
    const size_t n = 2999u;
    float *x = falloc(n + 1u), *xs = falloc(n + 1u), *e1 = falloc(n), *e2 = falloc(n);
    double *delta = dalloc(n), *prob = dalloc(n);
    size_t cap = dq_encode_bound(n, 16) + 1u, l1, l2, i;
    uint8_t *m1 = balloc(cap), *m2 = balloc(cap + 1u);
    unsigned b;
    gen_gauss(x, n, 31337u);
    memcpy(xs + 1, x, n * sizeof(float)); /* same values at another alignment */
    for (b = 1; b <= 16; b++) {
        unsigned r;
        for (r = 0; r < 2; r++) {
            dq_params p = mkp(b, k_rounds[r], (b & 1u) ? DQ_NORM_MAX : DQ_NORM_L2, (b & 2u) ? 64u : DQ_BUCKET_WHOLE,
                              0x0123456789ABCDEFu, (uint64_t)1 << 40 | b, 0xFFFFFFF0u + r);
            dq_params q = p;
            l1 = enc(&p, x, n, NULL, m1, cap);
            l2 = enc(&p, xs + 1, n, NULL, m2 + 1, cap);
            CHECKF(l1 && l1 == l2 && memcmp(m1, m2 + 1, l1) == 0, "bits %u: same params gave different bytes", b);
            for (i = 0; i < n; i++) e1[i] = e2[i] = (float)i * 1e-4f - 0.15f;
            l1 = enc(&p, x, n, e1, m1, cap);
            l2 = enc(&p, x, n, e2, m2, cap);
            CHECKF(l1 && l1 == l2 && memcmp(m1, m2, l1) == 0 && memcmp(e1, e2, n * sizeof(float)) == 0,
                   "bits %u: same params with residual gave different bytes", b);
            if (r == 1) {
                /* nearest: no dither, so the body ignores seed, step and stream */
                q.seed ^= 1u;
                q.step += 12345u;
                q.stream ^= 0x80000000u;
                l1 = enc(&p, x, n, NULL, m1, cap);
                l2 = enc(&q, x, n, NULL, m2, cap);
                CHECKF(l1 && l1 == l2 && memcmp(m1 + DQ_HEADER_SIZE, m2 + DQ_HEADER_SIZE, l1 - DQ_HEADER_SIZE) == 0,
                       "bits %u nearest: body depends on the key", b);
                continue;
            }
            l1 = enc(&p, x, n, NULL, m1, cap);
            if (!l1) continue;
            two_point_model(b, p.bucket, x, n, m1, delta, prob);
            q = p;
            q.stream = p.stream + 1u;
            check_key_field(&p, &q, x, n, prob, "stream+1");
            q = p;
            q.step = p.step + 1u;
            check_key_field(&p, &q, x, n, prob, "step+1");
            q = p;
            q.step = p.step ^ ((uint64_t)1 << 63);
            check_key_field(&p, &q, x, n, prob, "step high bit");
            q = p;
            q.seed = p.seed + 1u;
            check_key_field(&p, &q, x, n, prob, "seed+1");
        }
    }
    free(x);
    free(xs);
    free(e1);
    free(e2);
    free(delta);
    free(prob);
    free(m1);
    free(m2);
}

/* Frozen hashes: FNV-1a 64 over, for each configuration, the message bytes then the decoded
 * floats (little-endian bit patterns). One chained hash per width over (stochastic, nearest) x
 * (L2, max) x (bucket 512, 24, whole), then an error-feedback encode (message + new residual).
 * n = 5000 = 19 full 256-code blocks + a 136-code tail. As 5000 is a multiple of 16, the vector
 * kernels' scalar tails would never run, so 15 more error-feedback encodes follow at
 * n = 5000 - j, j = 1..15 (message, residual and decoded values), cycling through the
 * configurations. The input is portable integer-built data with exact zeros, an all-zero
 * 24-element bucket (indices 480..503) and one (960..983) whose norm is below 2^-100 (its scale
 * is sent as 0 at bucket 24). Generated by the scalar build; every ISA build must reproduce them
 * (this is the bit-identity check across ISAs). */
static const uint64_t k_frozen[17] = {
    0, /* unused: widths are 1..16 */
    0x1DD6E2E1B488A515ull, 0xD7781336260383FCull, 0xFE06F5440B7F7F01ull, 0x803E657B6DB6147Aull,
    0x068B10D6E528ED06ull, 0xA4889975648C2EBAull, 0x3A5EB946012138C5ull, 0x25A41FDA9486BDE5ull,
    0x11B33AE70E371FA1ull, 0xFDD5807712D47477ull, 0x056ED789A08F0673ull, 0x80BEB3D7649839BEull,
    0x9E99D8DF7905857Full, 0x7D6E02A5D775F0F8ull, 0xE383FE73252DDBE2ull, 0x8B9970333A9C1B59ull,
};
static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001B3ull;
    }
    return h;
}
static uint64_t fnv1a_floats(uint64_t h, const float *f, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        uint32_t u = fbits(f[i]);
        uint8_t le[4];
        le[0] = (uint8_t)u;
        le[1] = (uint8_t)(u >> 8);
        le[2] = (uint8_t)(u >> 16);
        le[3] = (uint8_t)(u >> 24);
        h = fnv1a(h, le, 4);
    }
    return h;
}
static void test_frozen_hashes(void) {
    static const uint32_t buckets[3] = {512u, 24u, DQ_BUCKET_WHOLE};
    const size_t n = 5000u;
    float *x = falloc(n), *out = falloc(n), *e = falloc(n);
    size_t cap = dq_encode_bound(n, 16), len, i, j;
    uint8_t *msg = balloc(cap);
    int print = getenv("DQ_PRINT_HASHES") != NULL;
    const char *isa = DQ_TEST_ISA;
    unsigned b, r, nm, bk;
    gen_port(x, n, 20260101u);
    for (i = 480; i < 504; i++) x[i] = 0.0f;
    for (i = 960; i < 984; i++) x[i] = ldexpf(x[i], -115); /* norm < 2^-100, many denormals */
    /* the build under test really runs the kernels it is named after (otherwise cross-ISA
     * identity would be vacuous, e.g. when SIMDe is missing every build is scalar) */
    if (!strcmp(isa, "scalar") || !strcmp(isa, "sse2") || !strcmp(isa, "avx2") || !strcmp(isa, "avx512"))
        CHECKF(!strcmp(dq_simd_backend(), isa), "build %s runs backend %s", isa, dq_simd_backend());
    for (b = 1; b <= 16; b++) {
        uint64_t h = 0xCBF29CE484222325ull;
        for (r = 0; r < 2; r++)
            for (nm = 0; nm < 2; nm++)
                for (bk = 0; bk < 3; bk++) {
                    dq_params p = mkp(b, k_rounds[r], k_norms[nm], buckets[bk], 0xD15EA5Eu, 1000u + b, 3u);
                    len = enc(&p, x, n, NULL, msg, cap);
                    if (!len) continue;
                    dec(msg, len, out, n);
                    h = fnv1a(h, msg, len);
                    h = fnv1a_floats(h, out, n);
                }
        {
            dq_params p = mkp(b, DQ_ROUND_STOCHASTIC, DQ_NORM_L2, 512u, 0xD15EA5Eu, 2000u + b, 4u);
            for (i = 0; i < n; i++) e[i] = x[(i * 7u) % n] * 0.125f;
            len = enc(&p, x, n, e, msg, cap);
            if (len) {
                h = fnv1a(h, msg, len);
                h = fnv1a_floats(h, e, n);
            }
        }
        for (j = 1; j < 16u; j++) {
            size_t m = n - j;
            dq_params p = mkp(b, k_rounds[j % 2u], k_norms[(j / 2u) % 2u], buckets[j % 3u], 0xD15EA5Eu, 3000u + j, b);
            for (i = 0; i < m; i++) e[i] = x[(i * 7u) % n] * 0.125f;
            len = enc(&p, x, m, e, msg, cap);
            if (!len) continue;
            dec(msg, len, out, m);
            h = fnv1a(h, msg, len);
            h = fnv1a_floats(h, e, m);
            h = fnv1a_floats(h, out, m);
        }
        if (print) printf("    0x%016llXull,%s", (unsigned long long)h, b % 4u == 0 ? "\n" : "");
        CHECKF(h == k_frozen[b], "bits %u: hash 0x%016llX, frozen 0x%016llX", b, (unsigned long long)h,
               (unsigned long long)k_frozen[b]);
    }
    free(x);
    free(out);
    free(e);
    free(msg);
}

/* dq_message_norm2: the sum of squared L2 bucket scales is ||x||^2. Each scale is the float
 * rounding of the bucket's exact norm (relative error <= 2^-24, one rounding of a double sum
 * of exact squares adds < 2^-50 relative), so |sum - ||x||^2| <= 2 * 2^-24 * ||x||^2 (+ tiny). */
static void test_message_norm2(void) {
    dq_t_rng r = {4242};
    static const uint32_t buckets[] = {8, 512, DQ_BUCKET_WHOLE};
    size_t n = 3001, i, len = 0;
    float *x = (float *)malloc(n * sizeof(float));
    uint8_t *m = (uint8_t *)malloc(dq_encode_bound(n, 16));
    unsigned k;
    for (i = 0; i < n; i++) x[i] = (float)dq_t_gauss(&r) * (i % 97 == 0 ? 50.0f : 1.0f);
    for (k = 0; k < 3; k++) {
        dq_params p;
        double exact = 0.0, got = -1.0;
        memset(&p, 0, sizeof p);
        p.bits = 3;
        p.bucket = buckets[k];
        for (i = 0; i < n; i++) exact += (double)x[i] * (double)x[i];
        CHECK(dq_encode(&p, x, n, NULL, m, dq_encode_bound(n, 16), &len) == DQ_OK);
        CHECK(dq_message_norm2(m, len, &got) == DQ_OK);
        CHECKF(fabs(got - exact) <= 2.5 * 5.96e-8 * exact, "bucket %u: %.17g vs %.17g", (unsigned)buckets[k], got, exact);
        CHECK(dq_message_norm2(m, DQ_HEADER_SIZE + 3u, &got) == DQ_ERR_TRUNCATED || buckets[k] == DQ_BUCKET_WHOLE);
        p.norm = DQ_NORM_MAX;
        CHECK(dq_encode(&p, x, n, NULL, m, dq_encode_bound(n, 16), &len) == DQ_OK);
        CHECK(dq_message_norm2(m, len, &got) == DQ_ERR_PARAM);
    }
    CHECK(dq_message_norm2(NULL, 0, NULL) == DQ_ERR_NULL);
    free(x);
    free(m);
}

int main(void) {
    RUN(test_generator_check_values);
    RUN(test_unbiased);
    RUN(test_variance);
    RUN(test_dither_independence);
    RUN(test_roundtrip);
    RUN(test_exact_levels_and_ties);
    RUN(test_sizes);
    RUN(test_decode_add_and_blocks);
    RUN(test_determinism);
    RUN(test_frozen_hashes);
    RUN(test_message_norm2);
    return dq_t_finish();
}
