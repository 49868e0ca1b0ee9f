/* ---------------------------------------------------------------- bit-budget optimizer */

DQ_API double dq_message_bits(size_t n, unsigned bits, uint32_t bucket) {
    dq_params p;
    size_t size;
    if (n == 0 || bits < 1) return 0.0; /* bits 0 would mean the default width */
    memset(&p, 0, sizeof p);
    p.bits = bits;
    p.bucket = bucket;
    p.coder = DQ_CODER_FIXED_ONLY; /* the fixed layout's bits (what the planner counts) */
    return dq_encode_capacity(&p, n, &size) == DQ_OK ? 8.0 * (double)size : 0.0;
}

static inline double dq__levels_d(unsigned b) { return (double)((1u << (b - 1)) - 1u); }
static inline unsigned dq__width_of_levels(double s, unsigned bmin, unsigned bmax) {
    double b;
    if (!(s > 0.0)) return bmin; /* also NaN */
    b = 1.0 + ceil(log2(s + 1.0));
    return b < (double)bmin ? bmin : (b > (double)bmax ? bmax : (unsigned)b);
}
static inline double dq__sched_norm(const dq_sched *s) {
    double g = 0.0;
    unsigned i;
    if (s->n_norms == 0) return s->p.norm_prior;
    for (i = 0; i < s->n_norms; i++) g += s->norms[i];
    return g / (double)s->n_norms;
}
static inline double dq__sched_B(const dq_sched_params *p) {
    double B = p->bucket == DQ_BUCKET_WHOLE ? (double)p->dim : (double)p->bucket;
    return B < (double)p->dim ? B : (double)p->dim;
}

DQ_API double dq_sched_levels(const dq_sched *s, uint64_t n, double G) {
    double e = 0.5 * ((double)s->p.steps - 1.0 - (double)n);
    return s->c * pow(s->p.alpha, e) * G;
}

/* Planned bits of steps n..T-1 at log2 scale lc and norm G, counted so that it never falls
 * below what dq_sched_next will choose: widths grow with the step index (alpha <= 1), and
 * each width boundary is moved one step early to absorb rounding. */
static inline double dq__sched_plan_bits(const dq_sched *s, double lc, double G) {
    const dq_sched_params *p = &s->p;
    double T = (double)p->steps, n = (double)s->step, la = log2(p->alpha), lg = log2(G);
    double total = (T - n) * dq_message_bits(p->dim, p->bits_min, p->bucket);
    unsigned b;
    for (b = p->bits_min + 1u; b <= p->bits_max; b++) {
        /* b_k >= b  <=>  log2(s_k) > t_b = log2(2^(b-2) - 1)  (any s > 0 gives b_k >= 2) */
        double t = b == 2u ? -HUGE_VAL : log2(dq__levels_d(b - 1u)), cnt;
        double inc = dq_message_bits(p->dim, b, p->bucket) - dq_message_bits(p->dim, b - 1u, p->bucket);
        if (la == 0.0) {
            cnt = lc + lg > t - 1e-9 ? T - n : 0.0;
        } else { /* lc + lg + la (T-1-k)/2 > t  <=>  k > kappa; the 1e-9 margin (as above) keeps the
                  * count conservative when |la| is below the rounding of lc + lg */
            double kappa = T - 1.0 - 2.0 * (t - 1e-9 - lc - lg) / la, first = floor(kappa);
            if (first < n) first = n;
            cnt = first >= T ? 0.0 : T - first;
        }
        cnt = cnt * inc;
        total += cnt;
    }
    return total;
}

static inline void dq__sched_replan(dq_sched *s, double G) {
    /* bracket log2 c around -log2 G: at lo every step gets bits_min (levels <= 1/4), at hi even
     * the earliest remaining step gets bits_max (levels >= 2^18) */
    double R = s->p.budget_bits - s->spent_bits, lg, lo, hi;
    int it;
    if (!(G > 0.0) || G > DBL_MAX) { /* zero norms: every width is bits_min whatever c is */
        s->c = 1.0;
        return;
    }
    lg = log2(G);
    lo = -lg - 2.0;
    hi = 0.5 * -log2(s->p.alpha) * ((double)s->p.steps - 1.0 - (double)s->step);
    hi = -lg + hi + 18.0;
    if (hi > 4000.0) hi = 4000.0; /* beyond this pow(2, hi) overflows; levels are clamped anyway */
    if (dq__sched_plan_bits(s, hi, G) <= R) {
        s->c = pow(2.0, hi);
        return;
    }
    for (it = 0; it < 100; it++) {
        double mid = 0.5 * (lo + hi);
        if (dq__sched_plan_bits(s, mid, G) <= R)
            lo = mid;
        else
            hi = mid;
    }
    s->c = pow(2.0, lo);
}

DQ_API dq_status dq_sched_init(dq_sched *s, const dq_sched_params *p) {
    dq_sched_params q;
    int calib = 0;
    if (!s || !p) return DQ_ERR_NULL;
    q = *p;
    if (q.mode == DQ_SCHED_DEFAULT) q.mode = DQ_SCHED_DQSGD;
    if ((unsigned)q.mode > (unsigned)DQ_SCHED_RD) return DQ_ERR_PARAM;
    if (q.alpha == 0.0) q.alpha = 1.0;
    if (!q.bits_min) q.bits_min = 2;
    if (!q.bits_max) q.bits_max = 16;
    if (!q.period) q.period = 1;
    if (!q.window) q.window = 1;
    if (!q.workers) q.workers = 1;
    if (!q.bucket) q.bucket = DQ_BUCKET_DEFAULT;
    if (q.warm_steps && !q.warm_bits) q.warm_bits = 16;
    if (q.steps == 0 || q.dim == 0) return DQ_ERR_EMPTY;
    if (q.bits_min < 2 || q.bits_max > 16 || q.bits_min > q.bits_max || (q.warm_bits && q.warm_bits < 2) ||
        q.warm_bits > 16)
        return DQ_ERR_BITS;
    if (q.warm_steps > q.steps || (!q.warm_steps && q.warm_bits)) return DQ_ERR_PARAM;
    if (!(q.alpha > 0.0 && q.alpha <= 1.0) || q.window > DQ_SCHED_MAX_WINDOW || !(q.norm_prior >= 0.0) ||
        !(q.scale >= 0.0) || !(q.target_error >= 0.0) || !(q.budget_bits >= 0.0) || !(q.lipschitz >= 0.0) ||
        !(q.lr >= 0.0) || (q.bucket != DQ_BUCKET_WHOLE && q.bucket % 8u))
        return DQ_ERR_PARAM;
    memset(s, 0, sizeof *s);
    s->p = q;
    if (q.mode == DQ_SCHED_RD) return q.budget_bits > 0.0 ? DQ_OK : DQ_ERR_PARAM; /* sizes come with the curves */
    if (q.mode != DQ_SCHED_DQSGD) return DQ_OK;
    calib = (q.scale > 0.0) + (q.target_error > 0.0) + (q.budget_bits > 0.0);
    if (calib != 1 || !(q.norm_prior > 0.0)) return DQ_ERR_PARAM;
    if (q.scale > 0.0) {
        s->c = q.scale;
    } else if (q.target_error > 0.0) {
        if (!(q.lipschitz > 0.0 && q.lr > 0.0)) return DQ_ERR_PARAM;
        s->c = sqrt(q.lipschitz * q.lr * q.lr * dq__sched_B(&q) * (double)q.steps /
                    (8.0 * (double)q.workers * q.target_error));
    } else {
        double warm = (double)q.warm_steps * (q.warm_steps ? dq_message_bits(q.dim, q.warm_bits, q.bucket) : 0.0);
        double rest = (double)(q.steps - q.warm_steps) * dq_message_bits(q.dim, q.bits_min, q.bucket);
        if (q.budget_bits < warm + rest) return DQ_ERR_INFEASIBLE;
    }
    return DQ_OK;
}

DQ_API dq_status dq_sched_next(dq_sched *s, unsigned *bits) {
    const dq_sched_params *p;
    if (!s || !bits) return DQ_ERR_NULL;
    p = &s->p;
    if (s->step >= p->steps) return DQ_ERR_PARAM; /* the planned run is over */
    if (s->step < p->warm_steps) {
        *bits = s->bits = p->warm_bits;
        return DQ_OK;
    }
    if (s->step % p->period == 0 || s->bits == 0 || s->step == p->warm_steps) {
        double T = (double)p->steps, n = (double)s->step;
        switch (p->mode) {
            case DQ_SCHED_FIXED:
                s->bits = p->bits_max;
                break;
            case DQ_SCHED_DECREASING:
                s->bits = (unsigned)((double)p->bits_max -
                                     floor(((double)(p->bits_max - p->bits_min)) * n / (T > 1.0 ? T - 1.0 : 1.0) + 0.5));
                break;
            case DQ_SCHED_RD:
                return DQ_ERR_PARAM; /* its widths need the measured curve: dq_sched_next_rd() */
            case DQ_SCHED_INCREASING: {
                double s0 = dq__levels_d(p->bits_min), ratio = 1.0;
                if (s->loss0 > 0.0) ratio = s->loss > 0.0 ? s->loss0 / s->loss : HUGE_VAL; /* loss 0: widest */
                s->bits = dq__width_of_levels(s0 * sqrt(ratio > 1.0 ? ratio : 1.0), p->bits_min, p->bits_max);
                break;
            }
            default: {
                double G = dq__sched_norm(s);
                if (p->budget_bits > 0.0) {
                    if (p->budget_bits - s->spent_bits < (T - n) * dq_message_bits(p->dim, p->bits_min, p->bucket)) {
                        s->bits = p->bits_min;
                        *bits = s->bits;
                        return DQ_ERR_INFEASIBLE;
                    }
                    dq__sched_replan(s, G);
                }
                s->bits = dq__width_of_levels(dq_sched_levels(s, s->step, G), p->bits_min, p->bits_max);
            }
        }
    }
    *bits = s->bits;
    return DQ_OK;
}

DQ_API dq_status dq_sched_update(dq_sched *s, double grad_norm, double loss, double bits_sent) {
    if (!s) return DQ_ERR_NULL;
    if (!(grad_norm >= 0.0) || !(bits_sent >= 0.0) || grad_norm > DBL_MAX || loss != loss) return DQ_ERR_PARAM;
    if (s->p.mode == DQ_SCHED_INCREASING) { /* tracks the loss, not the norm */
        if (s->loss0 == 0.0 && loss > 0.0) s->loss0 = loss;
        if (s->loss0 > 0.0) s->loss = loss;
    } else if (s->n_norms < s->p.window) { /* ring of the last `window` norms */
        s->norms[s->n_norms++] = grad_norm;
    } else {
        s->norms[s->head] = grad_norm;
        s->head = (s->head + 1u) % s->p.window;
    }
    s->spent_bits += bits_sent;
    s->step++;
    return DQ_OK;
}

/* The slope per step of the least-squares line through log G^2 of the last `window` norms (in
 * the order they came), 0 with fewer than two positive ones. */
static inline double dq__sched_trend(const dq_sched *s) {
    double sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0, m = 0.0, d;
    unsigned i, w = s->p.window;
    for (i = 0; i < s->n_norms; i++) {
        double g = s->norms[s->n_norms < w ? i : (s->head + i) % w], x = (double)i, y;
        double xx = x * x, xy; /* every product in its own statement (doc/API.md, Determinism) */
        if (!(g > 0.0)) continue;
        y = 2.0 * log(g);
        xy = x * y;
        sx += x, sy += y, sxx += xx, sxy += xy, m += 1.0;
    }
    {
        double a = m * sxx, b = sx * sx, c = m * sxy, e = sx * sy;
        d = a - b;
        return m >= 2.0 && d > 0.0 ? (c - e) / d : 0.0;
    }
}
/* Planned bits of the remaining steps at multiplier lam: groups of steps (cnt[j] steps at
 * relative weight wt[j]), each at the width minimizing wt err(b) + lam bits(b); *first gets
 * the width of the first group (the current step). */
static inline double dq__rd_plan(const dq_rd *rd, const double *wt, const double *cnt, unsigned ng, unsigned bmin,
                                 unsigned bmax, double lam, unsigned *first) {
    double total = 0.0;
    unsigned j, b, best;
    for (j = 0; j < ng; j++) {
        double bc = HUGE_VAL;
        best = bmin;
        for (b = bmin; b <= bmax; b++) {
            double e = wt[j] * rd->err[b], c = lam * rd->bits[b];
            c += e;
            if (c < bc) bc = c, best = b;
        }
        if (j == 0) *first = best;
        bc = cnt[j] * rd->bits[best];
        total += bc;
    }
    return total;
}

#define DQ__RD_GROUPS 256u /* the remaining steps: the current one alone, then in 255 groups */
DQ_API dq_status dq_sched_next_rd(dq_sched *s, const dq_rd *rd, unsigned *bits) {
    const dq_sched_params *p;
    double wt[DQ__RD_GROUPS], cnt[DQ__RD_GROUPS], rem, R, beta, la, lo, hi, lam;
    unsigned ng, j, b, first = 0;
    int it;
    if (!s || !rd || !bits) return DQ_ERR_NULL;
    p = &s->p;
    if (p->mode != DQ_SCHED_RD || s->step >= p->steps) return DQ_ERR_PARAM;
    if (s->step < p->warm_steps) {
        *bits = s->bits = p->warm_bits;
        return DQ_OK;
    }
    for (b = p->bits_min; b <= p->bits_max; b++)
        if (!(rd->bits[b] > 0.0) || !(rd->err[b] >= 0.0) || rd->bits[b] > DBL_MAX || rd->err[b] > DBL_MAX)
            return DQ_ERR_PARAM;
    *bits = s->bits = p->bits_min;
    rem = (double)(p->steps - s->step);
    R = p->budget_bits - s->spent_bits;
    if (R < rem * rd->bits[p->bits_min]) return DQ_ERR_INFEASIBLE;
    beta = dq__sched_trend(s);
    if (beta * rem > log(1e2)) beta = log(1e2) / rem; /* the trend's total change, held in bounds */
    if (beta * rem < -log(1e4)) beta = -log(1e4) / rem;
    la = log(p->alpha);
    ng = rem < (double)DQ__RD_GROUPS ? (unsigned)rem : DQ__RD_GROUPS;
    for (j = 0; j < ng; j++) { /* group j: steps [a, e) after the current one; weight at its middle */
        double a = j == 0 ? 0.0 : 1.0 + floor((rem - 1.0) * (double)(j - 1u) / (double)(ng - 1u));
        double e = j == 0 ? 1.0 : 1.0 + floor((rem - 1.0) * (double)j / (double)(ng - 1u)), mid = 0.5 * (a + e - 1.0);
        cnt[j] = e - a;
        wt[j] = exp((beta - la) * mid); /* alpha^(T-1-m) G_m^2, relative to the current step's */
    }
    /* lam = 0: every step at its least error; otherwise bisect (log scale) for the least lam that fits */
    if (dq__rd_plan(rd, wt, cnt, ng, p->bits_min, p->bits_max, 0.0, &first) > R) {
        double scale = (rd->err[p->bits_min] > 0.0 ? rd->err[p->bits_min] : 1.0) / rd->bits[p->bits_min];
        lo = log(scale) - 200.0;
        hi = log(scale) + 200.0;
        for (it = 0; it < 100; it++) {
            double mid = 0.5 * (lo + hi);
            if (dq__rd_plan(rd, wt, cnt, ng, p->bits_min, p->bits_max, exp(mid), &first) <= R)
                hi = mid;
            else
                lo = mid;
        }
        lam = exp(hi);
        (void)dq__rd_plan(rd, wt, cnt, ng, p->bits_min, p->bits_max, lam, &first);
    }
    *bits = s->bits = first;
    return DQ_OK;
}

DQ_API dq_status dq_rd_floor(const dq_rd *rd, double max_err, unsigned bits_min, unsigned bits_max, unsigned *bits) {
    unsigned b;
    if (!rd || !bits) return DQ_ERR_NULL;
    if (bits_min < DQ_RD_BITS_MIN || bits_max > DQ_RD_BITS_MAX || bits_min > bits_max) return DQ_ERR_BITS;
    if (max_err != max_err) return DQ_ERR_PARAM;
    for (b = bits_min; b < bits_max && rd->err[b] > max_err; b++) continue;
    *bits = b;
    return DQ_OK;
}

