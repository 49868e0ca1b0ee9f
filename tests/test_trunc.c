/* Truncation solver (doc/MATHS.md 11): radix selection against a sort, the Hill
 * estimator on exact Pareto samples, the exact expected-error evaluator on hand cases and its
 * histogram twin within the reported slack, the solver against a fine grid of the exact error
 * (Student-t and Pareto), the 11.3 closed form against the true Pareto optimum, companded
 * against uniform levels, end to end through dq_encode/dq_decode (DQ_SCHEME_TRUNC and
 * _TRUNC_NU: Monte Carlo error and unbiasedness), a frozen solver output (bit-identical on
 * every machine), and every documented error status. All seeds are fixed. */
#include "../dqsgd.h"
#include "harness.h"

#define WS DQ_TRUNC_WORKSPACE_SIZE

/* ---- data */
static void gen_t(float *x, size_t n, int nu, unsigned long long seed) {
    dq_t_rng r;
    size_t i;
    int j;
    r.s = seed;
    for (i = 0; i < n; i++) {
        double z = dq_t_gauss(&r), c = 0.0;
        for (j = 0; j < nu; j++) {
            double g = dq_t_gauss(&r);
            c += g * g;
        }
        x[i] = (float)(z / sqrt(c / nu));
    }
}
/* |x| Pareto(theta) on [1, inf) (density theta a^-(theta+1), i.e. gamma = theta + 1), random sign */
static void gen_pareto(float *x, size_t n, double theta, unsigned long long seed) {
    dq_t_rng r;
    size_t i;
    r.s = seed;
    for (i = 0; i < n; i++) {
        double v = pow(1.0 - dq_t_unif(&r), -1.0 / theta);
        x[i] = (float)((dq_t_next(&r) & 1u) ? -v : v);
    }
}
static unsigned levels_of(unsigned b) { return (1u << (b - 1u)) - 1u; }

/* exact expected squared error per element (uniform levels if lv is NULL) */
static double exact_mse(const float *x, size_t n, float alpha, unsigned b, const float *lv) {
    double v = -1.0, bi = -1.0;
    CHECK(dq_trunc_mse(x, n, alpha, b, lv, &v, &bi) == DQ_OK);
    return (v + bi) / (double)n;
}
/* the solver at a fixed alpha: companded levels (nonuniform) and the report */
static void at_alpha(const float *x, size_t n, unsigned b, unsigned nu, float alpha, void *work, float *lv,
                     dq_trunc_info *inf) {
    dq_trunc_params p;
    float a = 0.0f;
    memset(&p, 0, sizeof p);
    p.bits = b;
    p.nonuniform = nu;
    p.alpha = alpha;
    CHECK(dq_trunc_solve(&p, x, n, work, WS, &a, lv, 128, inf) == DQ_OK && a == alpha);
}

/* ---- selection and the Hill sum against a sort */
static int cmp_desc(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : (x > y ? -1 : 0);
}
static void check_tail(const float *x, size_t n, double q, size_t kmin, void *work) {
    double *a = (double *)xmalloc(n * sizeof *a), hs = 0.0;
    dq_trunc_params p;
    dq_tail t;
    size_t i, k;
    memset(&t, 0, sizeof t);
    for (i = 0; i < n; i++) a[i] = fabs((double)x[i]);
    qsort(a, n, sizeof *a, cmp_desc);
    memset(&p, 0, sizeof p);
    p.tail_fraction = q;
    p.tail_min = kmin;
    CHECK(dq_tail_estimate(&p, x, n, work, WS, &t) == DQ_OK);
    k = (size_t)ceil(q * (double)n);
    if (k < kmin) k = kmin;
    if (k > n) k = n;
    CHECKF(t.k == k, "k %lu expected %lu", (unsigned long)t.k, (unsigned long)k);
    CHECKF(t.x_m == a[k - 1], "x_m %.9g sorted %.9g (n %lu k %lu)", t.x_m, a[k - 1], (unsigned long)n,
           (unsigned long)k);
    CHECK(t.max_abs == a[0]);
    if (k >= 2 && a[k - 1] > 0.0) {
        for (i = 0; i + 1 < k; i++) hs += log(a[i] / a[k - 1]);
        hs /= (double)(k - 1);
        CHECKF(fabs(t.hill - hs) <= 1e-12 * hs, "hill %.15g reference %.15g", t.hill, hs);
        if (hs > 0.0) {
            double g = 1.0 + 1.0 / hs, c = 0.5 * (g - 1.0) * ((double)k / (double)n) * pow(a[k - 1], g - 1.0);
            CHECK(fabs(t.gamma - g) <= 1e-12 * g);
            CHECK(fabs(t.c - c) <= 1e-9 * c);
            CHECK(t.finite_variance == (g > 3.0));
        } else {
            CHECK(t.gamma == HUGE_VAL && t.finite_variance == 1);
        }
    } else {
        CHECK(t.gamma == 0.0 && t.hill == 0.0 && t.c == 0.0);
    }
    free(a);
}
static void test_select_exact(void) {
    size_t ns[3] = {1000, 4097, 100000}, ni, i;
    void *work = xmalloc(WS);
    for (ni = 0; ni < 3; ni++) {
        size_t n = ns[ni];
        float *x = (float *)xmalloc(n * sizeof *x);
        dq_t_rng r;
        r.s = 11u + ni;
        gen_t(x, n, 3, 100u + ni); /* continuous */
        check_tail(x, n, 0.002, 50, work);
        check_tail(x, n, 0.5, 2, work);
        check_tail(x, n, 1e-6, 2, work);
        check_tail(x, n, 0.01, n, work); /* k = n: the smallest |x| */
        for (i = 0; i < n; i++) x[i] = (float)(floor((double)x[i] * 4.0) * 0.25); /* heavy ties */
        check_tail(x, n, 0.01, 2, work);
        check_tail(x, n, 0.3, 2, work);
        for (i = 0; i < n; i++) /* 90% zeros (+0 and -0), subnormals, a few large */
            x[i] = (dq_t_next(&r) % 10u) ? ((i & 1u) ? -0.0f : 0.0f)
                                         : (float)((dq_t_unif(&r) - 0.5) * ((i % 3u) ? 1e-40 : 1e3));
        check_tail(x, n, 0.01, 2, work);
        check_tail(x, n, 0.2, 2, work); /* x_m = 0: no estimate */
        for (i = 0; i < n; i++) x[i] = (i & 1u) ? -3.0f : 3.0f; /* all equal: hill = 0 */
        check_tail(x, n, 0.01, 2, work);
        free(x);
    }
    {
        float one = -2.0f;
        check_tail(&one, 1, 0.01, 2, work); /* k = 1 */
    }
    free(work);
}

/* ---- Hill on exact Pareto: H = (1/(k-1)) sum log(a_(i)/a_(k)) is exactly Gamma(k-1)/(k-1)
 * distributed with mean 1/theta = 1/(gamma-1) and sd (1/theta)/sqrt(k-1) (Renyi). Bound: 4 sd.
 * c: with the true exponent, (k/n) x_m^theta = (k/n) / S(x_m), S(x_m) ~ Beta(k, n-k+1): relative
 * sd 1/sqrt(k); bound 4/sqrt(k) on the log of the ratio to theta/2. */
static void test_hill_pareto(void) {
    size_t ns[2] = {100000, 1000000}, ni;
    double gammas[3] = {4.0, 5.0, 2.5};
    int gi;
    void *work = xmalloc(WS);
    float *x = (float *)xmalloc(1000000 * sizeof *x);
    for (gi = 0; gi < 3; gi++)
        for (ni = 0; ni < 2; ni++) {
            double th = gammas[gi] - 1.0, sd, ct;
            size_t n = ns[ni];
            dq_tail t;
            memset(&t, 0, sizeof t);
            gen_pareto(x, n, th, 1000u + 10u * (unsigned)gi + ni);
            CHECK(dq_tail_estimate(NULL, x, n, work, WS, &t) == DQ_OK);
            sd = (1.0 / th) / sqrt((double)t.k - 1.0);
            CHECKF(fabs(t.hill - 1.0 / th) <= 4.0 * sd, "gamma %.1f n %lu: hill %.5f want %.5f sd %.5f", gammas[gi],
                   (unsigned long)n, t.hill, 1.0 / th, sd);
            CHECK(t.k == (size_t)ceil(0.002 * (double)n));
            ct = 0.5 * th * ((double)t.k / (double)n) * pow(t.x_m, th);
            CHECKF(fabs(log(ct / (0.5 * th))) <= 4.0 / sqrt((double)t.k), "c at true gamma %.5g want %.5g", ct,
                   0.5 * th);
            CHECK(t.finite_variance == (gammas[gi] > 3.0));
            if (dq_t_verbose())
                printf("  hill gamma %.1f n %7lu: k %lu gamma_hat %.4f (z %.2f) c %.4g x_m %.4g\n", gammas[gi],
                       (unsigned long)n, (unsigned long)t.k, t.gamma, (t.hill - 1.0 / th) / sd, t.c, t.x_m);
        }
    { /* gamma = 2.5 raises DQ_TRUNC_F_HEAVY in the solver's report */
        dq_trunc_params p;
        dq_trunc_info inf;
        float a;
        memset(&p, 0, sizeof p);
        gen_pareto(x, 100000, 1.5, 77);
        CHECK(dq_trunc_solve(&p, x, 100000, work, WS, &a, NULL, 0, &inf) == DQ_OK);
        CHECK((inf.flags & DQ_TRUNC_F_HEAVY) && !inf.tail.finite_variance);
    }
    free(x);
    free(work);
}

/* ---- the evaluator on hand-computed cases */
static void test_mse_exact(void) {
    double v, b;
    { /* b = 2 (s = 1), alpha = 1: 0.3 (x2) -> 0.3 * 0.7 each; 2.5 -> bias 1.5^2; 1 and 0 exact */
        float x[5] = {0.3f, -0.3f, 2.5f, 1.0f, 0.0f};
        CHECK(dq_trunc_mse(x, 5, 1.0f, 2, NULL, &v, &b) == DQ_OK);
        CHECKF(fabs(v - 2.0 * (double)0.3f * (1.0 - (double)0.3f)) < 1e-15 && fabs(b - 2.25) < 1e-15, "v %.17g b %g", v, b);
    }
    { /* b = 3 (s = 3), alpha = 3: cells [0,1), [1,2), [2,3] */
        float x[5] = {0.5f, 1.0f, -1.5f, 2.5f, -3.5f};
        CHECK(dq_trunc_mse(x, 5, 3.0f, 3, NULL, &v, &b) == DQ_OK);
        CHECKF(fabs(v - 0.75) < 1e-15 && fabs(b - 0.25) < 1e-15, "v %g b %g", v, b);
    }
    { /* table levels 0.25, 0.5, 1 at alpha 2: L = 0, 0.5, 1, 2 */
        float lv[3] = {0.25f, 0.5f, 1.0f}, x[5] = {0.25f, 0.75f, -1.5f, -2.0f, 4.0f};
        CHECK(dq_trunc_mse(x, 5, 2.0f, 3, lv, &v, &b) == DQ_OK);
        CHECKF(fabs(v - (0.0625 + 0.0625 + 0.25)) < 1e-15 && fabs(b - 4.0) < 1e-15, "v %g b %g", v, b);
        CHECK(dq_trunc_mse(x, 5, 2.0f, 3, lv, NULL, &b) == DQ_OK && fabs(b - 4.0) < 1e-15);
    }
    { /* uniform b = 16, alpha = s = 32767: integers are levels, no variance */
        float x[3] = {5.0f, -32766.0f, 0.0f};
        CHECK(dq_trunc_mse(x, 3, 32767.0f, 16, NULL, &v, &b) == DQ_OK);
        CHECKF(v == 0.0 && b == 0.0, "v %g", v);
    }
}

/* ---- the solver against a grid of the exact error.
 * Let J be the exact expected error per element (dq_trunc_mse / n) and Jh the solver's
 * histogram objective; |Jh(a) - J(a)| <= eps(a) rigorously (info.slack at a). If the solver
 * minimizes Jh over alpha, then for every grid point g
 *     J(alpha_s) <= Jh(alpha_s) + eps_s <= Jh(g) + eps_s <= J(g) + eps_g + eps_s,
 * so  J(alpha_s) <= min_g J(g) + eps_s + eps_g* (+ 1e-9 J for rounding alpha and the levels to
 * float). The location: alpha_s lies in the set {J <= J_min + that margin}; the test takes the
 * grid interval around the grid minimizer where J stays within the margin, widened by one grid
 * step on each side (the grid's resolution), and requires alpha_s inside it. The grid: ratio 1.25
 * over [2^-8 x_m, max|x|] for the global minimum, then ratio 1.01 within a factor 1.25 of it. */
typedef struct grid_pt {
    double a, J;
} grid_pt;
static double grid_J(const float *x, size_t n, unsigned b, unsigned nu, double a, void *work, double *eps) {
    float lv[128];
    dq_trunc_info inf;
    float af = (float)a;
    if (!nu && !eps) return exact_mse(x, n, af, b, NULL);
    at_alpha(x, n, b, nu, af, work, lv, &inf);
    if (eps) *eps = inf.slack;
    return exact_mse(x, n, af, b, nu ? lv : NULL);
}
static void solver_vs_grid(const float *x, size_t n, const char *name, unsigned b, unsigned nu, void *work) {
    dq_trunc_params p;
    dq_trunc_info inf;
    float lv[128], alpha = 0.0f;
    grid_pt g[200];
    size_t ng = 0, i, ib = 0;
    double a, lo, hi, Js, Jg, eg, margin, left, right, amax;
    memset(&p, 0, sizeof p);
    p.bits = b;
    p.nonuniform = nu;
    CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, lv, 128, &inf) == DQ_OK);
    amax = inf.tail.max_abs;
    CHECK(alpha > 0.0f && (double)alpha <= amax);
    Js = exact_mse(x, n, alpha, b, nu ? lv : NULL);
    CHECKF(fabs(inf.mse - Js) <= inf.slack + 1e-12 * Js, "%s b %u nu %u: predicted %.9g exact %.9g slack %.3g", name,
           b, nu, inf.mse, Js, inf.slack);
    /* coarse */
    Jg = HUGE_VAL;
    for (a = inf.tail.x_m / 256.0;; a *= 1.25) {
        double J;
        if (a > amax) a = amax;
        J = grid_J(x, n, b, nu, a, work, NULL);
        if (J < Jg) {
            Jg = J;
            ib = (size_t)0;
            g[0].a = a;
        }
        if (a >= amax) break;
    }
    lo = g[0].a / 1.25;
    hi = g[0].a * 1.25 < amax ? g[0].a * 1.25 : amax;
    for (a = lo; ng < 199; a *= 1.01) { /* fine, ends exactly at hi */
        if (a > hi) a = hi;
        g[ng].a = a;
        g[ng].J = grid_J(x, n, b, nu, a, work, NULL);
        if (g[ng].J < g[ib].J || ng == 0) ib = ng;
        ng++;
        if (a >= hi) break;
    }
    Jg = grid_J(x, n, b, nu, g[ib].a, work, &eg);
    margin = inf.slack + eg + 1e-9 * Jg;
    CHECKF(Js <= Jg + margin, "%s b %u nu %u: J(alpha_s = %.6g) = %.9g > grid min %.9g at %.6g + margin %.3g", name,
           b, nu, (double)alpha, Js, Jg, g[ib].a, margin);
    for (i = ib; i > 0 && g[i - 1].J <= Jg + margin; i--) {
    }
    left = i > 0 ? g[i - 1].a : g[0].a;
    for (i = ib; i + 1 < ng && g[i + 1].J <= Jg + margin; i++) {
    }
    right = i + 1 < ng ? g[i + 1].a : g[ng - 1].a;
    /* (when alpha_s beats every grid point, the grid did not resolve the minimum: nothing to
     * locate; that happens where the error has two near-equal basins, e.g. Pareto at b = 3) */
    CHECKF(Js < Jg || ((double)alpha >= left * (1 - 1e-7) && (double)alpha <= right * (1 + 1e-7)),
           "%s b %u nu %u: alpha_s %.6g outside [%.6g, %.6g] (grid min %.6g)", name, b, nu, (double)alpha, left, right,
           g[ib].a);
    if (dq_t_verbose())
        printf("  %-9s b %u %s: alpha %8.4f J %.6g | grid %8.4f J %.6g | window [%.4f, %.4f] slack %.2g\n", name, b,
               nu ? "nonuni" : "uniform", (double)alpha, Js, g[ib].a, Jg, left, right, inf.slack);
}
static void test_solver_vs_grid(void) {
    size_t n = 1u << 14;
    float *x = (float *)xmalloc(n * sizeof *x);
    void *work = xmalloc(WS);
    int d;
    unsigned b, nu;
    const char *names[4] = {"t3", "t4", "pareto4", "pareto5"};
    for (d = 0; d < 4; d++) {
        if (d < 2)
            gen_t(x, n, 3 + d, 200u + (unsigned)d);
        else
            gen_pareto(x, n, d == 2 ? 3.0 : 4.0, 300u + (unsigned)d);
        for (nu = 0; nu < 2; nu++)
            for (b = 2; b <= 8; b += b < 6 ? 1u : 2u) solver_vs_grid(x, n, names[d], b, nu, work); /* 2..6, 8 */
    }
    free(x);
    free(work);
}

static void check_levels(const float *lv, unsigned s) {
    unsigned j;
    for (j = 0; j < s; j++) CHECKF(lv[j] > (j ? lv[j - 1] : 0.0f) && lv[j] <= 1.0f, "level %u = %.9g", j, (double)lv[j]);
    CHECK(lv[s - 1] == 1.0f);
}
/* ---- 11.3 closed form (DQ_TRUNC_MODEL, uniform) on exact Pareto(theta) samples. With the true
 * parameters (c = theta/2, x_m = 1) alpha*^theta = s^2 / (kappa (theta - 1)). The solver's
 * alpha = x_m (Q / (gamma_hat - 2))^H with H the Hill estimate, Q = (k/n) s^2 / kappa; so
 * ln alpha - ln alpha* = ln((k/n) x_m^theta)/theta + (H - 1/theta) D with D = d ln alpha / dH =
 * ln Q - ln(1-H) + H/(1-H) + ln H + 1 (first order). The first term has sd 1/(theta sqrt(k)),
 * the second |D| sd(H), sd(H) = (1/theta)/sqrt(k-1). Bound: 4 combined sd. */
static void test_model_pareto(void) {
    size_t n = 1u << 20;
    float *x = (float *)xmalloc(n * sizeof *x);
    void *work = xmalloc(WS);
    double thetas[2] = {3.0, 4.0};
    unsigned bs[2] = {6, 8};
    int ti, bi;
    for (ti = 0; ti < 2; ti++) {
        double th = thetas[ti];
        gen_pareto(x, n, th, 500u + (unsigned)ti);
        for (bi = 0; bi < 2; bi++) {
            dq_trunc_params p;
            dq_trunc_info inf;
            float alpha;
            double s = (double)levels_of(bs[bi]), kappa = 1.0 / 6.0, astar, H, Q, D, sdH, sd, dev;
            memset(&p, 0, sizeof p);
            p.bits = bs[bi];
            p.method = DQ_TRUNC_MODEL;
            CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, NULL, 0, &inf) == DQ_OK);
            astar = pow(s * s / (kappa * (th - 1.0)), 1.0 / th);
            H = 1.0 / th;
            Q = ((double)inf.tail.k / (double)n) * s * s / kappa;
            D = log(Q) - log(1.0 - H) + H / (1.0 - H) + log(H) + 1.0;
            sdH = H / sqrt((double)inf.tail.k - 1.0);
            sd = sqrt(pow(1.0 / (th * sqrt((double)inf.tail.k)), 2.0) + pow(D * sdH, 2.0));
            dev = log((double)alpha / astar);
            CHECKF(fabs(dev) <= 4.0 * sd, "theta %.0f b %u: alpha %.5g alpha* %.5g: ln ratio %.4f > 4 sd %.4f", th,
                   bs[bi], (double)alpha, astar, dev, 4.0 * sd);
            CHECK(inf.flags == 0u);
            if (dq_t_verbose())
                printf("  model pareto gamma %.0f b %u: alpha %.5g alpha* %.5g (z %.2f) hill %.4f\n", th + 1.0, bs[bi],
                       (double)alpha, astar, dev / sd, inf.tail.hill);
        }
    }
    { /* non-uniform MODEL (11.4: V_N* + B by golden section on [x_m, max|x|]): valid output */
        dq_trunc_params p;
        dq_trunc_info inf;
        float alpha, lv[128];
        memset(&p, 0, sizeof p);
        p.bits = 5;
        p.nonuniform = 1;
        p.method = DQ_TRUNC_MODEL;
        CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, lv, 128, &inf) == DQ_OK);
        CHECK((double)alpha >= inf.tail.x_m && (double)alpha <= inf.tail.max_abs);
        check_levels(lv, 15);
    }
    { /* gamma <= 2 (Pareto theta = 0.8): no closed form, DQ_TRUNC_SEARCH instead, flagged */
        dq_trunc_params p;
        dq_trunc_info inf;
        float alpha;
        gen_pareto(x, 1u << 16, 0.8, 501);
        memset(&p, 0, sizeof p);
        p.bits = 4;
        p.method = DQ_TRUNC_MODEL;
        CHECK(dq_trunc_solve(&p, x, 1u << 16, work, WS, &alpha, NULL, 0, &inf) == DQ_OK);
        CHECKF((inf.flags & DQ_TRUNC_F_FALLBACK) && (inf.flags & DQ_TRUNC_F_HEAVY) && inf.tail.gamma < 2.0,
               "flags %u gamma %g", inf.flags, inf.tail.gamma);
        gen_pareto(x, n, thetas[1], 501u);
    }
    { /* low widths: 11.3's clamp to [x_m, max] binds (the optimum lies below x_m), flagged */
        dq_trunc_params p;
        dq_trunc_info inf;
        float alpha;
        memset(&p, 0, sizeof p);
        p.bits = 2;
        p.method = DQ_TRUNC_MODEL;
        CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, NULL, 0, &inf) == DQ_OK);
        CHECK((double)alpha == inf.tail.x_m && (inf.flags & DQ_TRUNC_F_CLAMPED));
    }
    free(x);
    free(work);
}

/* ---- companded levels against uniform levels at equal bits, Student-t nu = 3. b = 2 has one
 * magnitude interval [0, alpha]: both level sets are {0, 1}, so the results must be identical.
 * For b = 3..6 the companded scheme (its own alpha) must have strictly lower exact error than
 * the uniform one (its own alpha), and so must companded levels at the uniform scheme's alpha. */
static void test_companding(void) {
    size_t n = 1u << 16;
    float *x = (float *)xmalloc(n * sizeof *x), lv[128];
    void *work = xmalloc(WS);
    unsigned b;
    gen_t(x, n, 3, 600);
    for (b = 2; b <= 6; b++) {
        dq_trunc_params p;
        dq_trunc_info iu, in, ia;
        float au = 0.0f, an = 0.0f;
        double Ju, Jn, Ja;
        memset(&p, 0, sizeof p);
        p.bits = b;
        CHECK(dq_trunc_solve(&p, x, n, work, WS, &au, NULL, 0, &iu) == DQ_OK);
        p.nonuniform = 1;
        CHECK(dq_trunc_solve(&p, x, n, work, WS, &an, lv, 128, &in) == DQ_OK);
        Jn = exact_mse(x, n, an, b, lv);
        Ju = exact_mse(x, n, au, b, NULL);
        at_alpha(x, n, b, 1, au, work, lv, &ia);
        Ja = exact_mse(x, n, au, b, lv);
        if (b == 2) {
            CHECK(au == an && lv[0] == 1.0f && Jn == Ju && Ja == Ju);
        } else {
            CHECKF(Jn < Ju, "b %u: companded %.6g uniform %.6g", b, Jn, Ju);
            CHECKF(Ja < Ju, "b %u: companded at the uniform alpha %.6g uniform %.6g", b, Ja, Ju);
        }
        if (dq_t_verbose())
            printf("  t3 b %u: uniform alpha %.4f mse %.5g | companded alpha %.4f mse %.5g (%.2fx) | companded at "
                   "uniform alpha %.5g\n",
                   b, (double)au, Ju, (double)an, Jn, Ju / Jn, Ja);
    }
    free(x);
    free(work);
}

/* ---- levels: valid for the encoder on awkward inputs (spikes, gaps, tiny n) */
static void test_levels_valid(void) {
    size_t n = 4096, i;
    float *x = (float *)xmalloc(n * sizeof *x), lv[128];
    void *work = xmalloc(WS);
    unsigned b, c;
    dq_t_rng r;
    r.s = 5;
    for (c = 0; c < 5; c++) {
        for (i = 0; i < n; i++) {
            switch (c) {
            case 0: x[i] = (i % 100u) ? 1.0f : 50.0f; break;                       /* two spikes */
            case 1: x[i] = (i & 1u) ? 1e-3f * (float)dq_t_unif(&r) : 1e3f; break; /* a gap */
            case 2: x[i] = i < 3 ? (float)i : 0.0f; break;                         /* almost all zero */
            case 3: x[i] = (float)((dq_t_unif(&r) - 0.5) * 1e-38); break;          /* subnormal/tiny */
            default: x[i] = (float)(dq_t_gauss(&r) * 1e30); break;                 /* huge */
            }
        }
        for (b = 2; b <= 8; b++) {
            dq_trunc_params p;
            dq_trunc_info inf;
            float alpha = 0.0f;
            size_t m;
            memset(&p, 0, sizeof p);
            memset(&inf, 0, sizeof inf); /* read below even when the solve failed (gcc -O3 sees it) */
            p.bits = b;
            p.nonuniform = 1;
            m = c == 2 ? 5 : n;
            CHECK(dq_trunc_solve(&p, x, m, work, WS, &alpha, lv, 128, &inf) == DQ_OK);
            check_levels(lv, levels_of(b));
            CHECKF(alpha >= 7.88860905e-31f && alpha <= 8.50705917e37f, "case %u alpha %g", c, (double)alpha);
            CHECK(c != 3 || (alpha == 7.88860905e-31f && (inf.flags & DQ_TRUNC_F_CLAMPED)));
            { /* the encoder takes them */
                dq_params q;
                size_t cap = 100000, len;
                uint8_t *msg = (uint8_t *)xmalloc(cap);
                memset(&q, 0, sizeof q);
                q.scheme = DQ_SCHEME_TRUNC_NU;
                q.bits = b;
                q.alpha = alpha;
                q.levels = lv;
                CHECKF(dq_encode(&q, x, m, NULL, msg, cap, &len) == DQ_OK, "case %u b %u", c, b);
                free(msg);
            }
        }
    }
    { /* all zero: alpha = 2^-100, no tail, zero error */
        dq_trunc_params p;
        dq_trunc_info inf;
        float alpha;
        memset(x, 0, n * sizeof *x);
        memset(&p, 0, sizeof p);
        CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, NULL, 0, &inf) == DQ_OK);
        CHECK(alpha == 7.88860905e-31f && inf.mse == 0.0 && (inf.flags & DQ_TRUNC_F_NO_TAIL));
    }
    { /* constant magnitude: alpha = that magnitude, zero error */
        dq_trunc_params p;
        dq_trunc_info inf;
        float alpha;
        for (i = 0; i < n; i++) x[i] = (i & 1u) ? -3.0f : 3.0f;
        memset(&p, 0, sizeof p);
        CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, NULL, 0, &inf) == DQ_OK);
        CHECKF(alpha == 3.0f && inf.mse == 0.0, "alpha %g mse %g", (double)alpha, inf.mse);
        p.method = DQ_TRUNC_MODEL;
        CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, NULL, 0, &inf) == DQ_OK && alpha == 3.0f);
    }
    free(x);
    free(work);
}

/* ---- end to end: dq_encode / dq_decode with the solver's alpha and levels, R steps (dither
 * keyed by step). Per element with a < alpha in cell [L, L + D], p = (a - L)/D: the decoded
 * magnitude is L + D with probability p, so (y - x)^2 is two-point with variance
 * p q ((L + D - a)^2 - (L - a)^2)^2 -- the sum over elements gives the exact variance of one
 * step's squared error, and the mean over R steps must match dq_trunc_mse within 5 sd.
 * Unbiasedness for T(x): X = sum_i R (ybar_i - T(x_i))^2 / (D^2 p q) over elements with
 * p q >= 1e-4 (the dither's 2^-24 resolution moves p by up to 2^-24) has mean m (their count)
 * and variance sum (2 - 6/R + 1/(R p q)) (binomial fourth moment); bound 5 sd. */
static void e2e(const float *x, size_t n, unsigned scheme, unsigned b, void *work) {
    const unsigned R = 300;
    dq_trunc_params tp;
    dq_trunc_info inf;
    dq_params p;
    float alpha, lv[128], *y = (float *)xmalloc(n * sizeof *y);
    double *L = (double *)xmalloc(129 * sizeof *L), *ysum = (double *)xmalloc(n * sizeof *ysum);
    double Jv, Jb, se_sum = 0.0, var_se = 0.0, X = 0.0, EX = 0.0, VX = 0.0, mse_mc, A;
    size_t cap = dq_encode_bound(n, b) + 4096, len = 0, i;
    uint8_t *msg = (uint8_t *)xmalloc(cap);
    unsigned s = levels_of(b), r, j;
    int nu = scheme == DQ_SCHEME_TRUNC_NU;
    memset(&tp, 0, sizeof tp);
    tp.bits = b;
    tp.nonuniform = (unsigned)nu;
    CHECK(dq_trunc_solve(&tp, x, n, work, WS, &alpha, lv, 128, &inf) == DQ_OK);
    CHECK(dq_trunc_mse(x, n, alpha, b, nu ? lv : NULL, &Jv, &Jb) == DQ_OK);
    A = (double)alpha;
    L[0] = 0.0;
    for (j = 1; j <= s; j++) L[j] = j == s ? A : (nu ? (double)lv[j - 1] * A : (double)j * A / (double)s);
    memset(ysum, 0, n * sizeof *ysum);
    memset(&p, 0, sizeof p);
    p.scheme = (dq_scheme)scheme;
    p.bits = b;
    p.alpha = alpha;
    p.levels = nu ? lv : NULL;
    p.seed = 99;
    for (r = 0; r < R; r++) {
        double se = 0.0;
        p.step = r;
        CHECK(dq_encode(&p, x, n, NULL, msg, cap, &len) == DQ_OK);
        CHECK(dq_decode(msg, len, y, n) == DQ_OK);
        for (i = 0; i < n; i++) {
            double d = (double)y[i] - (double)x[i];
            se += d * d;
            ysum[i] += (double)y[i];
        }
        se_sum += se;
    }
    for (i = 0; i < n; i++) {
        double a = fabs((double)x[i]), t, lo, D, pp, qq, d0, d1, ybar;
        unsigned l0 = 0, l1 = s;
        if (a >= A) continue;
        while (l1 - l0 > 1u) {
            unsigned mid = (l0 + l1) / 2u;
            if (L[mid] <= a)
                l0 = mid;
            else
                l1 = mid;
        }
        lo = L[l0];
        D = L[l1] - lo;
        pp = (a - lo) / D;
        qq = 1.0 - pp;
        d0 = (lo - a) * (lo - a);
        d1 = (lo + D - a) * (lo + D - a);
        var_se += pp * qq * (d1 - d0) * (d1 - d0);
        if (pp * qq < 1e-4) continue;
        t = (double)x[i];
        ybar = ysum[i] / R;
        X += R * (ybar - t) * (ybar - t) / (D * D * pp * qq);
        EX += 1.0;
        VX += 2.0 - 6.0 / R + 1.0 / (R * pp * qq);
    }
    mse_mc = se_sum / R;
    CHECKF(fabs(mse_mc - (Jv + Jb)) <= 5.0 * sqrt(var_se / R) + 1e-6 * (Jv + Jb),
           "scheme %u b %u: Monte Carlo %.8g exact %.8g (sd %.3g)", scheme, b, mse_mc, Jv + Jb, sqrt(var_se / R));
    CHECKF(fabs(X - EX) <= 5.0 * sqrt(VX), "scheme %u b %u: unbiasedness chi2 %.1f expected %.0f sd %.1f", scheme, b, X,
           EX, sqrt(VX));
    if (dq_t_verbose())
        printf("  e2e scheme %u b %u: MC %.6g exact %.6g (z %.2f) | chi2 %.0f / %.0f (z %.2f)\n", scheme, b, mse_mc,
               Jv + Jb, (mse_mc - Jv - Jb) / sqrt(var_se / R), X, EX, (X - EX) / sqrt(VX));
    free(y);
    free(L);
    free(ysum);
    free(msg);
}
static void test_end_to_end(void) {
    size_t n = 4096;
    float *x = (float *)xmalloc(n * sizeof *x);
    void *work = xmalloc(WS);
    gen_t(x, n, 3, 700);
    e2e(x, n, DQ_SCHEME_TRUNC, 2, work);
    e2e(x, n, DQ_SCHEME_TRUNC, 4, work);
    e2e(x, n, DQ_SCHEME_TRUNC, 8, work);
    e2e(x, n, DQ_SCHEME_TRUNC_NU, 3, work);
    e2e(x, n, DQ_SCHEME_TRUNC_NU, 5, work);
    e2e(x, n, DQ_SCHEME_TRUNC_NU, 8, work);
    free(x);
    free(work);
}

/* ---- frozen output: alpha and the levels on data made with integer and + - * / arithmetic
 * only, so every machine must reproduce them bit for bit (the solver's DQ_TRUNC_SEARCH path is
 * libm-free). Regenerate only on a deliberate change of the solver. */
static uint32_t fbits_of(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static void test_frozen(void) {
    size_t n = 10000, i;
    float *x = (float *)xmalloc(n * sizeof *x), lv[128], alpha;
    void *work = xmalloc(WS);
    dq_trunc_params p;
    uint32_t h = 2166136261u, want_alpha_u = 0x42235555u, want_alpha_n = 0x4232313Fu, want_h = 0xF04094D5u;
    unsigned j;
    dq_t_rng r;
    r.s = 4242;
    for (i = 0; i < n; i++) { /* a heavy-tailed ratio: (u1 - 1/2) / (u2^2 + 1/100) */
        double u1 = dq_t_unif(&r), u2 = dq_t_unif(&r);
        x[i] = (float)((u1 - 0.5) / (u2 * u2 + 0.01));
    }
    memset(&p, 0, sizeof p);
    p.bits = 5;
    CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, NULL, 0, NULL) == DQ_OK);
    CHECKF(fbits_of(alpha) == want_alpha_u, "uniform alpha %.9g = 0x%08X", (double)alpha, (unsigned)fbits_of(alpha));
    p.nonuniform = 1;
    CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, lv, 128, NULL) == DQ_OK);
    for (j = 0; j < 15; j++) h = (h ^ fbits_of(lv[j])) * 16777619u;
    CHECKF(fbits_of(alpha) == want_alpha_n && h == want_h, "companded alpha %.9g = 0x%08X levels hash 0x%08X",
           (double)alpha, (unsigned)fbits_of(alpha), (unsigned)h);
    free(x);
    free(work);
}

/* ---- documented statuses; nothing is written on error */
static void test_errors(void) {
    size_t n = 64, i;
    float x[64], lv[128], alpha = -1.0f;
    void *work = xmalloc(WS);
    dq_trunc_params p;
    dq_trunc_info inf;
    dq_tail t;
    double v, b;
    float good[3] = {0.25f, 0.5f, 1.0f};
    for (i = 0; i < n; i++) x[i] = (float)i - 30.0f;
    memset(&p, 0, sizeof p);
    CHECK(dq_trunc_workspace_size(1) == WS && dq_trunc_workspace_size(1u << 30) == WS);
    CHECK(dq_trunc_solve(NULL, x, n, work, WS, &alpha, NULL, 0, NULL) == DQ_ERR_NULL);
    CHECK(dq_trunc_solve(&p, NULL, n, work, WS, &alpha, NULL, 0, NULL) == DQ_ERR_NULL);
    CHECK(dq_trunc_solve(&p, x, n, NULL, WS, &alpha, NULL, 0, NULL) == DQ_ERR_NULL);
    CHECK(dq_trunc_solve(&p, x, n, work, WS, NULL, NULL, 0, NULL) == DQ_ERR_NULL);
    p.nonuniform = 1;
    CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, NULL, 128, NULL) == DQ_ERR_NULL);
    p.nonuniform = 0;
    CHECK(dq_trunc_solve(&p, x, 0, work, WS, &alpha, NULL, 0, NULL) == DQ_ERR_EMPTY);
    p.bits = 1;
    CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, NULL, 0, NULL) == DQ_ERR_BITS);
    p.bits = 17;
    CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, NULL, 0, NULL) == DQ_ERR_BITS);
    p.bits = 16;
    CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, NULL, 0, NULL) == DQ_OK && alpha > 0.0f);
    alpha = -1.0f;
    p.bits = 9;
    p.nonuniform = 1;
    CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, lv, 128, NULL) == DQ_ERR_BITS);
    p.bits = 8;
    CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, lv, 126, NULL) == DQ_ERR_DST_TOO_SMALL);
    CHECK(dq_trunc_solve(&p, x, n, work, WS - 1, &alpha, lv, 127, NULL) == DQ_ERR_WORKSPACE);
    p.nonuniform = 2;
    CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, lv, 128, NULL) == DQ_ERR_PARAM);
    memset(&p, 0, sizeof p);
    p.method = (dq_trunc_method)3;
    CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, NULL, 0, NULL) == DQ_ERR_PARAM);
    p.method = DQ_TRUNC_DEFAULT;
    p.tail_fraction = 0.6;
    CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, NULL, 0, NULL) == DQ_ERR_PARAM);
    p.tail_fraction = -0.1;
    CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, NULL, 0, NULL) == DQ_ERR_PARAM);
    p.tail_fraction = (double)NAN;
    CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, NULL, 0, NULL) == DQ_ERR_PARAM);
    CHECK(dq_tail_estimate(&p, x, n, work, WS, &t) == DQ_ERR_PARAM);
    p.tail_fraction = 0.0;
    p.tail_min = 1;
    CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, NULL, 0, NULL) == DQ_ERR_PARAM);
    p.tail_min = 0;
    p.kappa = -1.0;
    CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, NULL, 0, NULL) == DQ_ERR_PARAM);
    p.kappa = (double)NAN;
    CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, NULL, 0, NULL) == DQ_ERR_PARAM);
    p.kappa = 0.0;
    {
        float bad[5] = {NAN, INFINITY, -1.0f, 1e-35f, 1e38f};
        for (i = 0; i < 5; i++) {
            p.alpha = bad[i];
            CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, NULL, 0, NULL) == DQ_ERR_PARAM);
        }
        p.alpha = 0.0f;
    }
    CHECK(alpha == -1.0f); /* untouched by every failure above */
    {
        size_t pos[3] = {0, 31, 63};
        float bad[3] = {NAN, INFINITY, -INFINITY};
        for (i = 0; i < 3; i++) {
            float keep = x[pos[i]];
            x[pos[i]] = bad[i];
            lv[0] = 7.0f;
            p.nonuniform = 1;
            CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, lv, 128, &inf) == DQ_ERR_NONFINITE);
            CHECK(alpha == -1.0f && lv[0] == 7.0f);
            CHECK(dq_tail_estimate(NULL, x, n, work, WS, &t) == DQ_ERR_NONFINITE);
            CHECK(dq_trunc_mse(x, n, 1.0f, 4, NULL, &v, &b) == DQ_ERR_NONFINITE);
            x[pos[i]] = keep;
        }
    }
    CHECK(dq_tail_estimate(NULL, NULL, n, work, WS, &t) == DQ_ERR_NULL);
    CHECK(dq_tail_estimate(NULL, x, n, NULL, WS, &t) == DQ_ERR_NULL);
    CHECK(dq_tail_estimate(NULL, x, n, work, WS, NULL) == DQ_ERR_NULL);
    CHECK(dq_tail_estimate(NULL, x, 0, work, WS, &t) == DQ_ERR_EMPTY);
    CHECK(dq_tail_estimate(NULL, x, n, work, 100, &t) == DQ_ERR_WORKSPACE);
    CHECK(dq_trunc_mse(NULL, n, 1.0f, 4, NULL, &v, &b) == DQ_ERR_NULL);
    CHECK(dq_trunc_mse(x, n, 1.0f, 4, NULL, NULL, NULL) == DQ_ERR_NULL);
    CHECK(dq_trunc_mse(x, 0, 1.0f, 4, NULL, &v, &b) == DQ_ERR_EMPTY);
    CHECK(dq_trunc_mse(x, n, 1.0f, 1, NULL, &v, &b) == DQ_ERR_BITS);
    CHECK(dq_trunc_mse(x, n, 1.0f, 17, NULL, &v, &b) == DQ_ERR_BITS);
    CHECK(dq_trunc_mse(x, n, 1.0f, 9, lv, &v, &b) == DQ_ERR_BITS);
    CHECK(dq_trunc_mse(x, n, 0.0f, 4, NULL, &v, &b) == DQ_ERR_PARAM);
    CHECK(dq_trunc_mse(x, n, NAN, 4, NULL, &v, &b) == DQ_ERR_PARAM);
    CHECK(dq_trunc_mse(x, n, INFINITY, 4, NULL, &v, &b) == DQ_ERR_PARAM);
    CHECK(dq_trunc_mse(x, n, 1.0f, 3, good, &v, &b) == DQ_OK);
    {
        float bad1[3] = {0.5f, 0.25f, 1.0f}, bad2[3] = {0.25f, 0.5f, 0.99f}, bad3[3] = {0.0f, 0.5f, 1.0f},
              bad4[3] = {0.25f, 0.25f, 1.0f}, bad5[3] = {0.25f, NAN, 1.0f};
        CHECK(dq_trunc_mse(x, n, 1.0f, 3, bad1, &v, &b) == DQ_ERR_PARAM);
        CHECK(dq_trunc_mse(x, n, 1.0f, 3, bad2, &v, &b) == DQ_ERR_PARAM);
        CHECK(dq_trunc_mse(x, n, 1.0f, 3, bad3, &v, &b) == DQ_ERR_PARAM);
        CHECK(dq_trunc_mse(x, n, 1.0f, 3, bad4, &v, &b) == DQ_ERR_PARAM);
        CHECK(dq_trunc_mse(x, n, 1.0f, 3, bad5, &v, &b) == DQ_ERR_PARAM);
    }
    { /* a given alpha is used as is */
        memset(&p, 0, sizeof p);
        p.alpha = 5.5f;
        p.nonuniform = 1;
        p.bits = 3;
        CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, lv, 3, &inf) == DQ_OK && alpha == 5.5f);
        check_levels(lv, 3);
        p.alpha = 1000.0f; /* above max|x|: levels still valid, exact report */
        CHECK(dq_trunc_solve(&p, x, n, work, WS, &alpha, lv, 3, &inf) == DQ_OK && alpha == 1000.0f);
        check_levels(lv, 3);
        CHECK(fabs(inf.mse - exact_mse(x, n, alpha, 3, lv)) <= inf.slack + 1e-12 * inf.mse);
    }
    { /* unaligned workspace is fine */
        uint8_t *wb = (uint8_t *)xmalloc(WS + 3);
        memset(&p, 0, sizeof p);
        CHECK(dq_trunc_solve(&p, x, n, wb + 3, WS, &alpha, NULL, 0, NULL) == DQ_OK);
        free(wb);
    }
    free(work);
}

int main(void) {
    RUN(test_select_exact);
    RUN(test_hill_pareto);
    RUN(test_mse_exact);
    RUN(test_solver_vs_grid);
    RUN(test_model_pareto);
    RUN(test_companding);
    RUN(test_levels_valid);
    RUN(test_end_to_end);
    RUN(test_frozen);
    RUN(test_errors);
    return dq_t_finish();
}
