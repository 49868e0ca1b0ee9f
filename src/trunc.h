/* ---------------------------------------------------------------- truncation solver (API above) */


#define DQ__TR_SHIFT (23u - DQ__TR_SUB)
#define DQ__TR_Q_DEFAULT 0.002
#define DQ__TR_KMIN_DEFAULT 50u
#define DQ__TR_SCAN 16u /* bins between scan points: 8 points per binade */

DQ_API size_t dq_trunc_workspace_size(size_t n) {
    (void)n;
    return DQ_TRUNC_WORKSPACE_SIZE;
}

typedef struct dq__tr_work {
    uint64_t *cnt;                /* DQ__TR_SEL radix-select counts */
    double *m, *t1, *t2, *cr;     /* DQ__TR_NB + 2 bins */
    double *L;                    /* 128 levels (s <= 127) */
    uint32_t *ne;                 /* DQ__TR_NB + 2 non-empty bin indices */
} dq__tr_work;

static inline void dq__tr_carve(void *work, dq__tr_work *w) {
    uintptr_t a = ((uintptr_t)work + 7u) & ~(uintptr_t)7u;
    double *d;
    w->cnt = (uint64_t *)(void *)a;
    d = (double *)(void *)(w->cnt + DQ__TR_SEL);
    w->m = d;
    w->t1 = d + (DQ__TR_NB + 2u);
    w->t2 = d + 2u * (DQ__TR_NB + 2u);
    w->cr = d + 3u * (DQ__TR_NB + 2u);
    w->L = d + 4u * (DQ__TR_NB + 2u);
    w->ne = (uint32_t *)(void *)(w->L + 128u);
}

/* Levels of the uniform / tabled schemes: s = 2^(b-1) - 1. */
static inline unsigned dq__tr_levels(unsigned bits) { return (1u << (bits - 1u)) - 1u; }

/* Cube root of y >= 0 with + - * / only (bit-identical everywhere): y = z 2^(3q), z in [1, 8),
 * Newton's iteration x <- (2x + z/x^2)/3 from a linear start; 7 steps reach double precision. */
static inline double dq__tr_cbrt(double y) {
    uint64_t u;
    int e, q, r;
    double z, x, sc;
    int i;
    if (!(y > 0.0)) return 0.0;
    memcpy(&u, &y, 8);
    if ((u >> 52) == 0u) { /* subnormal: scale up by 2^54 (cube root 2^18) */
        return dq__tr_cbrt(y * 18014398509481984.0) * (1.0 / 262144.0);
    }
    e = (int)((u >> 52) & 0x7FFu) - 1023;
    u = (u & 0x000FFFFFFFFFFFFFu) | ((uint64_t)1023u << 52);
    memcpy(&z, &u, 8); /* z in [1, 2) */
    q = e >= 0 ? e / 3 : -((-e + 2) / 3);
    r = e - 3 * q; /* 0, 1, 2 */
    if (r == 1) z *= 2.0;
    if (r == 2) z *= 4.0;
    x = 0.1428571428571428 * z;
    x = 0.75 + x;
    for (i = 0; i < 7; i++) {
        double x2 = x * x, tx = 2.0 * x;
        x = (tx + z / x2) / 3.0;
    }
    u = (uint64_t)(q + 1023) << 52; /* 2^q: |q| <= 358, a normal double */
    memcpy(&sc, &u, 8);
    return x * sc;
}

/* Pass 1: NaN/Inf check, max |x| bits, histogram of bits 30..20 of |x|. */
static inline dq_status dq__tr_pass1(const float *x, size_t n, uint64_t *cnt, uint32_t *umax) {
    uint32_t mx = 0;
    size_t i;
    memset(cnt, 0, DQ__TR_SEL * sizeof *cnt);
    for (i = 0; i < n; i++) {
        uint32_t u = dq__abs_bits(x[i]);
        if (u >= 0x7F800000u) return DQ_ERR_NONFINITE;
        cnt[u >> 20]++;
        if (u > mx) mx = u;
    }
    *umax = mx;
    return DQ_OK;
}

/* In counts c[0..nb), the bucket holding the k-th largest (k >= 1) and its rank inside it. */
static inline uint32_t dq__tr_pick(const uint64_t *c, uint32_t nb, uint64_t *k) {
    uint32_t b = nb;
    while (b-- > 0u) {
        if (c[b] >= *k) return b;
        *k -= c[b];
    }
    return 0u; /* not reached: the counts add up to at least k */
}

/* The bit pattern of the k-th largest |x| (1 <= k <= n), given pass 1's histogram. */
static inline uint32_t dq__tr_select(const float *x, size_t n, uint64_t *cnt, uint64_t k) {
    uint32_t b1, b2, b3;
    size_t i;
    b1 = dq__tr_pick(cnt, DQ__TR_SEL, &k);
    memset(cnt, 0, 1024u * sizeof *cnt);
    for (i = 0; i < n; i++) {
        uint32_t u = dq__abs_bits(x[i]);
        if ((u >> 20) == b1) cnt[(u >> 10) & 1023u]++;
    }
    b2 = dq__tr_pick(cnt, 1024u, &k);
    memset(cnt, 0, 1024u * sizeof *cnt);
    for (i = 0; i < n; i++) {
        uint32_t u = dq__abs_bits(x[i]);
        if ((u >> 10) == ((b1 << 10) | b2)) cnt[u & 1023u]++;
    }
    b3 = dq__tr_pick(cnt, 1024u, &k);
    return (b1 << 20) | (b2 << 10) | b3;
}

static inline dq_status dq__tr_tail_params(const dq_trunc_params *p, double *q, size_t *kmin) {
    *q = p && p->tail_fraction != 0.0 ? p->tail_fraction : DQ__TR_Q_DEFAULT;
    *kmin = p && p->tail_min ? p->tail_min : (size_t)DQ__TR_KMIN_DEFAULT;
    if (!(*q > 0.0 && *q <= 0.5) || *kmin < 2u) return DQ_ERR_PARAM;
    return DQ_OK;
}

/* k = max(ceil(q n), kmin), at most n. */
static inline size_t dq__tr_k(double q, size_t kmin, size_t n) {
    double t = q * (double)n;
    size_t k = (size_t)t;
    if ((double)k < t) k++;
    if (k < kmin) k = kmin;
    return k > n ? n : k;
}

/* Fills the tail from the Hill sum over the magnitudes above x_m. */
static inline void dq__tr_tail_finish(dq_tail *t, size_t n, double hsum) {
    t->hill = 0.0;
    t->gamma = 0.0;
    t->c = 0.0;
    t->finite_variance = 0;
    if (t->k < 2u || !(t->x_m > 0.0)) return;
    t->hill = hsum / (double)(t->k - 1u);
    if (!(t->hill > 0.0)) {
        t->gamma = HUGE_VAL;
        t->finite_variance = 1;
        return;
    }
    t->gamma = 1.0 + 1.0 / t->hill;
    t->c = 0.5 * (t->gamma - 1.0) * ((double)t->k / (double)n) * exp((t->gamma - 1.0) * log(t->x_m));
    if (!(t->c <= DBL_MAX)) t->c = HUGE_VAL;
    t->finite_variance = t->gamma > 3.0;
}

DQ_API dq_status dq_tail_estimate(const dq_trunc_params *p, const float *x, size_t n, void *work, size_t work_cap,
                                  dq_tail *tail) {
    dq__tr_work w;
    double q, hsum = 0.0, xm;
    size_t kmin, i;
    uint32_t umax, um;
    dq_status st;
    if (!x || !work || !tail) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if ((st = dq__tr_tail_params(p, &q, &kmin)) != DQ_OK) return st;
    if (work_cap < dq_trunc_workspace_size(n)) return DQ_ERR_WORKSPACE;
    dq__tr_carve(work, &w);
    if ((st = dq__tr_pass1(x, n, w.cnt, &umax)) != DQ_OK) return st;
    memset(tail, 0, sizeof *tail);
    tail->k = dq__tr_k(q, kmin, n);
    um = dq__tr_select(x, n, w.cnt, (uint64_t)tail->k);
    xm = (double)dq__bitsf(um);
    tail->x_m = xm;
    tail->max_abs = (double)dq__bitsf(umax);
    if (xm > 0.0)
        for (i = 0; i < n; i++) {
            uint32_t u = dq__abs_bits(x[i]);
            if (u > um) hsum += log((double)dq__bitsf(u) / xm);
        }
    dq__tr_tail_finish(tail, n, hsum);
    return DQ_OK;
}

/* ---- the moment histogram of |x| */
typedef struct dq__tr_hist {
    const double *m, *t1, *t2, *cr;
    const uint32_t *ne; /* the non-empty bins, increasing */
    size_t nne;
    uint32_t base; /* key (|x| bits >> DQ__TR_SHIFT) of regular bin 1 */
    size_t nb;     /* regular bins 1..nb; 0 = underflow [0, lo(1)); nb + 1 = overflow */
    double n;
} dq__tr_hist;

static inline double dq__tr_lo(const dq__tr_hist *h, size_t i) {
    return i == 0u ? 0.0 : (double)dq__bitsf((h->base + (uint32_t)(i - 1u)) << DQ__TR_SHIFT);
}
static inline double dq__tr_hi(const dq__tr_hist *h, size_t i) { return i <= h->nb ? dq__tr_lo(h, i + 1u) : HUGE_VAL; }

/* Level j of s at alpha: L[j] (L != NULL) or j alpha / s; L_s = alpha exactly. */
static inline double dq__tr_L(const double *L, unsigned j, unsigned s, double alpha) {
    if (j >= s) return alpha;
    return L ? L[j] : (double)j * alpha / (double)s;
}

/* Expected squared error (sums over elements) of the histogram at alpha with levels L (NULL:
 * uniform), split in rounding variance and truncation bias, and a bound on the error of the
 * approximation in the bins that straddle a level or alpha. Needs alpha <= lo(nb + 1). */
static inline void dq__tr_eval(const dq__tr_hist *h, double alpha, const double *L, unsigned s, double *var,
                               double *bias, double *slack) {
    double v = 0.0, b = 0.0, sl = 0.0;
    unsigned j = 0;
    size_t q;
    for (q = 0; q < h->nne; q++) {
        size_t i = h->ne[q];
        double m = h->m[i], lo, hi, A, B;
        lo = dq__tr_lo(h, i);
        if (lo >= alpha) { /* all above alpha: exact bias from the moments */
            double e = lo - alpha, p1 = 2.0 * e * h->t1[i], p2 = m * e * e;
            b += h->t2[i] + p1 + p2;
            continue;
        }
        hi = dq__tr_hi(h, i);
        while (j + 1u < s && dq__tr_L(L, j + 1u, s, alpha) <= lo) j++;
        A = dq__tr_L(L, j, s, alpha);
        B = dq__tr_L(L, j + 1u, s, alpha);
        if (hi <= B) { /* inside one cell [A, B): exact, sum (a - A)(B - a) with a = lo + t */
            double d = lo - A, D = B - A, md = m * d, dt = d * h->t1[i], cell = (D - d) * (h->t1[i] + md);
            v += cell - h->t2[i] - dt;
            continue;
        }
        { /* straddles a level or alpha: density m / (hi - lo), uniform in the bin. Every
           * element's error e(a) ((a - A)(B - a) in its cell, (a - alpha)^2 above alpha) and the
           * modelled average both lie in [0, max of e over the bin], which bounds the error. */
            double rho = m / (hi - lo), end = hi < alpha ? hi : alpha, u = lo, emax = 0.0;
            unsigned jj = j;
            while (u < end) {
                double a0 = dq__tr_L(L, jj, s, alpha), b0 = dq__tr_L(L, jj + 1u, s, alpha);
                double wv = b0 < end ? b0 : end, s1 = u - a0, s2 = wv - a0, D = b0 - a0, c = 0.5 * D, e;
                double q2 = s2 * s2, q1 = s1 * s1, c2 = q2 * s2, c1 = q1 * s1, seg;
                seg = D * (q2 - q1) / 2.0 - (c2 - c1) / 3.0;
                seg = rho * seg;
                v += seg;
                if (s1 <= c && c <= s2)
                    e = c * c;
                else
                    e = s2 < c ? s2 * (D - s2) : s1 * (D - s1);
                if (e > emax) emax = e;
                u = wv;
                if (wv >= b0) jj++;
            }
            if (hi > alpha) {
                double t = hi - alpha;
                b += rho * t * t * t / 3.0;
                if (t * t > emax) emax = t * t;
            }
            emax = m * emax;
            sl += emax;
        }
    }
    *var = v;
    *bias = b;
    *slack = sl;
}

/* Companded levels at alpha: L[j] = Lambda^-1(j/s), j = 0..s, Lambda from the bin-wise
 * constant density; returns G = sum over bins below alpha of cr * width (the integral of
 * f^(1/3), up to the factor n^(-1/3)); G = 0 gives uniform levels. */
static inline double dq__tr_compand(const dq__tr_hist *h, double alpha, unsigned s, double *L) {
    double G = 0.0, cum = 0.0;
    unsigned j;
    size_t e;
    for (e = 0; e < h->nne; e++) {
        size_t i = h->ne[e];
        double lo = dq__tr_lo(h, i), hi;
        if (lo >= alpha || i > h->nb) break;
        hi = dq__tr_hi(h, i);
        hi = h->cr[i] * ((hi < alpha ? hi : alpha) - lo);
        G += hi;
    }
    L[0] = 0.0;
    L[s] = alpha;
    if (!(G > 0.0)) {
        for (j = 1; j < s; j++) L[j] = (double)j * alpha / (double)s;
        return 0.0;
    }
    j = 1;
    for (e = 0; e < h->nne && j < s; e++) {
        size_t i = h->ne[e];
        double lo = dq__tr_lo(h, i), hi, top, g;
        if (lo >= alpha || i > h->nb) break;
        hi = dq__tr_hi(h, i);
        top = hi < alpha ? hi : alpha;
        g = h->cr[i] * (top - lo);
        if (!(g > 0.0)) continue;
        while (j < s) {
            double t = (double)j * G / (double)s, l;
            if (t > cum + g) break;
            l = lo + (t - cum) / h->cr[i];
            L[j++] = l < lo ? lo : (l > top ? top : l);
        }
        cum += g;
    }
    for (; j < s; j++) L[j] = alpha; /* rounding left the last targets past the end */
    return G;
}

typedef struct dq__tr_obj {
    const dq__tr_hist *h;
    unsigned s, nu, model;
    double *L;
} dq__tr_obj;

/* The objective at alpha: expected squared error per element (SEARCH), or V_N* + B (MODEL,
 * non-uniform). */
static inline double dq__tr_f(const dq__tr_obj *o, double alpha) {
    double v, b, sl, G = 0.0;
    if (o->nu) G = dq__tr_compand(o->h, alpha, o->s, o->L);
    dq__tr_eval(o->h, alpha, o->nu ? o->L : NULL, o->s, &v, &b, &sl);
    if (o->model) v = G * G * G / (6.0 * (double)o->s * (double)o->s);
    return (v + b) / o->h->n;
}

/* Minimize over [lo, hi]. The objective is not smooth: with companded levels it moves in
 * narrow steps as alpha passes sparse tail samples, so a bracketing search alone can miss the
 * best dip. Three stages: (1) scan lo, hi and the regular bin edges every DQ__TR_SCAN bins
 * between them (8 per binade); (2) scan every bin edge (128 per binade) within a factor 1.25
 * of the best point; (3) golden-section search (a fixed 48 steps) between the best point's
 * neighbours. Returns the best point seen. */
static inline double dq__tr_minimize(const dq__tr_obj *o, double lo, double hi) {
    const double r = 0.6180339887498949;
    double best, fbest, a, b, x1, x2, f1, f2, prev, next, wlo, whi;
    size_t i, step;
    int it, stage;
    best = lo;
    fbest = dq__tr_f(o, lo);
    if (hi > lo) {
        double fh = dq__tr_f(o, hi);
        if (fh < fbest) {
            fbest = fh;
            best = hi;
        }
    }
    wlo = lo;
    whi = hi;
    for (stage = 0; stage < 2; stage++) {
        step = stage == 0 ? DQ__TR_SCAN : 1u;
        prev = lo;
        next = hi;
        for (i = 1; i <= o->h->nb; i += step) {
            double c = dq__tr_lo(o->h, i), fc;
            if (c <= wlo) continue;
            if (c >= whi) break;
            fc = dq__tr_f(o, c);
            if (fc < fbest) {
                fbest = fc;
                best = c;
            }
        }
        wlo = best * 0.8 > lo ? best * 0.8 : lo;
        whi = best * 1.25 < hi ? best * 1.25 : hi;
    }
    /* neighbours of best among the stage-2 points (bin edges), lo and hi */
    prev = lo;
    next = hi;
    for (i = 1; i <= o->h->nb + 1u; i++) {
        double c = dq__tr_lo(o->h, i);
        if (c < best && c > prev) prev = c;
        if (c > best && c < next) {
            next = c;
            break;
        }
    }
    a = prev;
    b = next;
    if (!(b > a)) return best;
    x1 = r * (b - a);
    x1 = b - x1;
    x2 = r * (b - a);
    x2 = a + x2;
    f1 = dq__tr_f(o, x1);
    f2 = dq__tr_f(o, x2);
    for (it = 0; it < 48; it++) {
        if (f1 <= f2) {
            b = x2;
            x2 = x1;
            f2 = f1;
            x1 = r * (b - a);
            x1 = b - x1;
            f1 = dq__tr_f(o, x1);
        } else {
            a = x1;
            x1 = x2;
            f1 = f2;
            x2 = r * (b - a);
            x2 = a + x2;
            f2 = dq__tr_f(o, x2);
        }
    }
    if (f1 <= f2 && f1 < fbest) return x1;
    if (f2 < f1 && f2 < fbest) return x2;
    return best;
}

/* Float levels l_j = L_j / alpha (j = 1..s), made strictly increasing with l_1 > 0 and l_s = 1. */
static inline void dq__tr_float_levels(const double *L, unsigned s, float alpha, float *lv) {
    unsigned j;
    for (j = 1; j <= s; j++) {
        double l = L[j] / (double)alpha;
        lv[j - 1u] = l < 1.0 ? (float)l : 1.0f;
    }
    lv[s - 1u] = 1.0f;
    for (j = 0; j < s; j++) { /* forward: above the previous (0 for the first) */
        float prev = j ? lv[j - 1u] : 0.0f;
        if (!(lv[j] > prev)) lv[j] = dq__bitsf(dq__fbits(prev) + 1u);
    }
    for (j = s - 1u; j-- > 0u;) /* backward: below the next, l_s = 1 stays */
        if (!(lv[j] < lv[j + 1u])) lv[j] = dq__bitsf(dq__fbits(lv[j + 1u]) - 1u);
}

static inline float dq__tr_clamp_alpha(double a, unsigned *flags) {
    float f = (float)a;
    if (!(f >= DQ__MIN_SCALE)) {
        *flags |= DQ_TRUNC_F_CLAMPED;
        return DQ__MIN_SCALE;
    }
    if (dq__fbits(f) > DQ__MAX_SCALE_BITS) {
        *flags |= DQ_TRUNC_F_CLAMPED;
        return dq__bitsf(DQ__MAX_SCALE_BITS);
    }
    return f;
}

/* dq_trunc_solve step 2: the moment histogram of |x| up to top (bins of 1/128 binade, an
 * underflow and an overflow bin), its non-empty bins and the cube roots of their densities;
 * returns the Hill sum over the magnitudes above x_m (bit pattern um). */
static inline double dq__tr_build(const float *x, size_t n, double top, uint32_t um, double xm, dq__tr_work *w,
                                  dq__tr_hist *h) {
    uint32_t ktop = dq__fbits((float)top) >> DQ__TR_SHIFT, base;
    size_t nb = ktop + 1u < DQ__TR_NB ? (size_t)ktop + 1u : (size_t)DQ__TR_NB, i;
    double hsum = 0.0, lo_over;
    base = ktop + 1u - (uint32_t)nb;
    memset(w->m, 0, 3u * (DQ__TR_NB + 2u) * sizeof(double));
    h->m = w->m;
    h->t1 = w->t1;
    h->t2 = w->t2;
    h->cr = w->cr;
    h->base = base;
    h->nb = nb;
    h->n = (double)n;
    lo_over = dq__tr_lo(h, nb + 1u);
    for (i = 0; i < n; i++) {
        uint32_t u = dq__abs_bits(x[i]), key = u >> DQ__TR_SHIFT;
        double av = (double)dq__bitsf(u), t;
        size_t idx;
        if (key < base) {
            idx = 0;
            t = av;
        } else if (key > ktop) {
            idx = nb + 1u;
            t = av - lo_over;
        } else {
            idx = (size_t)(key - base) + 1u;
            t = av - (double)dq__bitsf(key << DQ__TR_SHIFT);
        }
        w->m[idx] += 1.0;
        w->t1[idx] += t;
        t = t * t;
        w->t2[idx] += t;
        if (u > um && xm > 0.0) hsum += log(av / xm);
    }
    h->ne = w->ne;
    h->nne = 0;
    for (i = 0; i <= nb + 1u; i++) { /* the non-empty bins; cube root of their density */
        double wd = dq__tr_hi(h, i) - dq__tr_lo(h, i);
        w->cr[i] = w->m[i] > 0.0 && wd > 0.0 && i <= nb ? dq__tr_cbrt(w->m[i] / wd) : 0.0;
        if (w->m[i] > 0.0) w->ne[h->nne++] = (uint32_t)i;
    }
    return hsum;
}

/* dq_trunc_solve step 3 under DQ_TRUNC_MODEL with uniform levels (doc/MATHS.md 11.3): alpha
 * from the tail fit into *af; 0 when the closed form does not apply (gamma <= 2). */
static inline int dq__tr_model_alpha(dq_trunc_info *inf, size_t n, unsigned s, double kappa, float *af) {
    double g = inf->tail.gamma, xm = inf->tail.x_m, amax = inf->tail.max_abs, a;
    if (g > 2.0 && g < HUGE_VAL) {
        /* 11.3: alpha*^(gamma-1) = 2 c s^2 / (kappa (gamma-1)(gamma-2)); with c from the fit,
         * alpha* = x_m ((k/n) s^2 / (kappa (gamma-2)))^(1/(gamma-1)) */
        double sd = (double)s;
        a = xm * pow((double)inf->tail.k / (double)n * sd * sd / (kappa * (g - 2.0)), 1.0 / (g - 1.0));
        if (!(a >= xm)) {
            a = xm;
            inf->flags |= DQ_TRUNC_F_CLAMPED;
        }
        if (a > amax) {
            a = amax;
            inf->flags |= DQ_TRUNC_F_CLAMPED;
        }
        *af = dq__tr_clamp_alpha(a, &inf->flags);
        return 1;
    }
    if (g >= HUGE_VAL) { /* the top k are equal: no tail to cut */
        *af = dq__tr_clamp_alpha(amax, &inf->flags);
        return 1;
    }
    return 0;
}

/* dq_trunc_solve step 3, the search: the error's minimum over [lo, top]. lo is the bin of the
 * ceil(nz/8)-th smallest non-zero |x| (nz of them): clipping 7/8 of the non-zero magnitudes
 * never pays (at s = 1 the error still falls as alpha grows unless 7/8 of them lie within 7% of
 * one value, and more levels favour a larger alpha); the underflow bin counts as zero here.
 * Under o->model (non-uniform, V_N* + B) the search starts at x_m at least. */
static inline double dq__tr_search(const dq__tr_obj *o, const dq__tr_hist *h, double top, double xm) {
    double nz = 0.0, need, acc = 0.0, lo_s = 0.0;
    size_t i, nb = h->nb;
    for (i = 1; i <= nb + 1u; i++) nz += h->m[i];
    need = nz / 8.0;
    for (i = 1; i <= nb; i++)
        if (h->m[i] > 0.0 && (acc += h->m[i]) >= need) {
            lo_s = dq__tr_lo(h, i);
            break;
        }
    if (!(lo_s > 0.0)) lo_s = dq__tr_lo(h, 1u) > 0.0 ? dq__tr_lo(h, 1u) : top;
    if (o->model && xm > lo_s) lo_s = xm;
    if (lo_s > top) lo_s = top;
    return dq__tr_minimize(o, lo_s, top);
}

/* dq_trunc_solve step 4: the levels at the final alpha, and the report of exactly what is
 * returned (from the histogram while alpha lies within its range, else the exact sums). */
static inline void dq__tr_finish(const float *x, size_t n, const dq__tr_hist *h, dq__tr_work *w, float af,
                                 unsigned bits, unsigned s, unsigned nu, float *levels, dq_trunc_info *inf) {
    double lvd[128];
    unsigned j;
    /* the histogram describes alpha up to its overflow bin, or any alpha if that bin is empty */
    int inrange = (double)af <= dq__tr_lo(h, h->nb + 1u) || w->m[h->nb + 1u] == 0.0;
    if (nu) {
        if (inrange) {
            dq__tr_compand(h, (double)af, s, w->L);
        } else { /* a given alpha above the histogram's range: uniform levels */
            for (j = 0; j <= s; j++) w->L[j] = (double)j * (double)af / (double)s;
        }
        dq__tr_float_levels(w->L, s, af, levels);
        for (j = 1; j <= s; j++) lvd[j] = (double)levels[j - 1u] * (double)af;
        lvd[0] = 0.0;
        lvd[s] = (double)af;
    }
    if (inrange) {
        dq__tr_eval(h, (double)af, nu ? lvd : NULL, s, &inf->var, &inf->bias, &inf->slack);
        inf->slack /= (double)n;
    } else { /* given alpha above the histogram's range: report the exact sums instead */
        dq_trunc_mse(x, n, af, bits, nu ? levels : NULL, &inf->var, &inf->bias);
    }
    inf->var /= (double)n;
    inf->bias /= (double)n;
    inf->mse = inf->var + inf->bias;
}

DQ_API dq_status dq_trunc_solve(const dq_trunc_params *p, const float *x, size_t n, void *work, size_t work_cap,
                                float *alpha, float *levels, size_t levels_cap, dq_trunc_info *info) {
    dq__tr_work w;
    dq__tr_hist h;
    dq__tr_obj o;
    dq_trunc_info inf;
    dq_status st;
    double q, xm, amax, top, kappa;
    size_t kmin;
    uint32_t umax, um;
    unsigned bits, s, nu, model;
    float af, fixed;
    if (!p || !x || !work || !alpha) return DQ_ERR_NULL;
    bits = p->bits ? p->bits : DQ_BITS_DEFAULT;
    nu = p->nonuniform != 0u;
    if (nu && !levels) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if (bits < 2u || bits > (nu ? 8u : 16u)) return DQ_ERR_BITS;
    if ((unsigned)p->method > (unsigned)DQ_TRUNC_MODEL || p->nonuniform > 1u) return DQ_ERR_PARAM;
    if ((st = dq__tr_tail_params(p, &q, &kmin)) != DQ_OK) return st;
    kappa = p->kappa != 0.0 ? p->kappa : 1.0 / 6.0;
    if (!(kappa > 0.0 && kappa <= 1.0)) return DQ_ERR_PARAM;
    fixed = p->alpha;
    if (fixed != 0.0f && !(fixed >= DQ__MIN_SCALE && dq__fbits(fixed) <= DQ__MAX_SCALE_BITS)) return DQ_ERR_PARAM;
    if (work_cap < dq_trunc_workspace_size(n)) return DQ_ERR_WORKSPACE;
    s = dq__tr_levels(bits);
    if (nu && levels_cap < s) return DQ_ERR_DST_TOO_SMALL;
    model = p->method == DQ_TRUNC_MODEL;
    dq__tr_carve(work, &w);

    /* 1. check, max, select x_m */
    if ((st = dq__tr_pass1(x, n, w.cnt, &umax)) != DQ_OK) return st;
    memset(&inf, 0, sizeof inf);
    inf.tail.k = dq__tr_k(q, kmin, n);
    um = dq__tr_select(x, n, w.cnt, (uint64_t)inf.tail.k);
    xm = (double)dq__bitsf(um);
    amax = (double)dq__bitsf(umax);
    inf.tail.x_m = xm;
    inf.tail.max_abs = amax;

    /* 2. the histogram up to min(max|x|, 2^24 x_m, 2^126), and the tail estimate */
    top = amax;
    if (xm > 0.0 && top > xm * 16777216.0) top = xm * 16777216.0;
    if (top > (double)dq__bitsf(DQ__MAX_SCALE_BITS)) top = (double)dq__bitsf(DQ__MAX_SCALE_BITS);
    dq__tr_tail_finish(&inf.tail, n, dq__tr_build(x, n, top, um, xm, &w, &h));
    if (inf.tail.gamma == 0.0) inf.flags |= DQ_TRUNC_F_NO_TAIL;
    if (inf.tail.gamma != 0.0 && !inf.tail.finite_variance) inf.flags |= DQ_TRUNC_F_HEAVY;

    /* 3. alpha: the caller's; none for an all-zero input; the model's closed form; the search */
    if (fixed != 0.0f) {
        af = fixed;
    } else if (!(top > 0.0)) {
        af = dq__tr_clamp_alpha(0.0, &inf.flags);
    } else if (!(model && !nu && dq__tr_model_alpha(&inf, n, s, kappa, &af))) {
        if (model && !nu) { /* the closed form does not apply: search instead */
            inf.flags |= DQ_TRUNC_F_FALLBACK;
            model = 0;
        }
        o.h = &h;
        o.s = s;
        o.nu = nu;
        o.model = model; /* model here: non-uniform, V_N* + B */
        o.L = w.L;
        af = dq__tr_clamp_alpha(dq__tr_search(&o, &h, top, xm), &inf.flags);
    }

    /* 4. levels and the report */
    dq__tr_finish(x, n, &h, &w, af, bits, s, nu, levels, &inf);
    *alpha = af;
    if (info) *info = inf;
    return DQ_OK;
}

DQ_API dq_status dq_trunc_mse(const float *x, size_t n, float alpha, unsigned bits, const float *levels, double *var,
                              double *bias) {
    double v = 0.0, b = 0.0, A = (double)alpha, L[128];
    unsigned s, j;
    size_t i;
    if (!x || (!var && !bias)) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if (bits < 2u || bits > (levels ? 8u : 16u)) return DQ_ERR_BITS;
    if (!(alpha > 0.0f) || !(alpha <= FLT_MAX)) return DQ_ERR_PARAM;
    s = dq__tr_levels(bits);
    if (levels) {
        for (j = 0; j < s; j++)
            if (!(levels[j] > (j ? levels[j - 1u] : 0.0f)) || !(levels[j] <= 1.0f)) return DQ_ERR_PARAM;
        if (levels[s - 1u] != 1.0f) return DQ_ERR_PARAM;
        L[0] = 0.0;
        for (j = 1; j < s; j++) L[j] = (double)levels[j - 1u] * A;
        L[s] = A;
    }
    for (i = 0; i < n; i++) {
        uint32_t u = dq__abs_bits(x[i]);
        double a, lo, hi;
        if (u >= 0x7F800000u) return DQ_ERR_NONFINITE;
        a = (double)dq__bitsf(u);
        if (a >= A) {
            double o = (a - A) * (a - A);
            b += o;
            continue;
        }
        if (levels) { /* the cell [L_j, L_(j+1)) holding a */
            unsigned l0 = 0, l1 = s;
            while (l1 - l0 > 1u) {
                unsigned mid = (l0 + l1) / 2u;
                if (L[mid] <= a)
                    l0 = mid;
                else
                    l1 = mid;
            }
            lo = L[l0];
            hi = L[l1];
        } else {
            double r = a * (double)s / A;
            unsigned l = (unsigned)r;
            if (l >= s) l = s - 1u;
            lo = dq__tr_L(NULL, l, s, A);
            hi = dq__tr_L(NULL, l + 1u, s, A);
            if (a < lo) { /* r rounded up across a level */
                hi = lo;
                lo = dq__tr_L(NULL, l - 1u, s, A);
            } else if (a >= hi && l + 1u < s) {
                lo = hi;
                hi = dq__tr_L(NULL, l + 2u, s, A);
            }
        }
        lo = (a - lo) * (hi - a);
        v += lo;
    }
    if (var) *var = v;
    if (bias) *bias = b;
    return DQ_OK;
}


