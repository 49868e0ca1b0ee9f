/* ---- measured rate and distortion (dq_rd_measure)
 *
 * One histogram of u = |v| / scale over [0, u_max) (u_max: the largest u of the vector, so the
 * bins follow the data whatever the norm and bucket), keeping per bin the moments of the
 * offsets d = u - (bin start), weighted by scale^2 for the error and by count (per sign) for
 * the levels. Within one level interval [k/s, (k+1)/s) the error of an element is
 * scale^2 (us - k)(k + 1 - us) / s^2 and its chance of level k + 1 is us - k: polynomials of
 * degree 2 and 1 in d, so a bin inside one interval is summed exactly from its moments. A bin
 * that straddles a level boundary is cut there, with the density inside the bin taken linear
 * (fitted to its first two moments). Zeros and u = 1 (the top level) are exact and apart.
 * Sizes take the codes as independent draws from the distribution this implies: a rANS symbol
 * of g codes has the product of their chances (neighbours that are alike make real messages a
 * little smaller), and Elias gaps are geometric at the mean density. */
#define DQ__RD_NB 512u
typedef struct dq__rd_bins {
    double w[3][DQ__RD_NB];    /* sum of scale^2 d^j, j = 0, 1, 2 */
    double c[2][2][DQ__RD_NB]; /* [sign][j]: count, sum of d */
    double h;                  /* bin width in u */
} dq__rd_bins;

/* Moments 0..2 over [p, q) of the density a0 + a1 (d - h/2), fitted to mass m0 and first moment
 * m1 over [0, h). */
static inline void dq__rd_piece(double m0, double m1, double h, double p, double q, double *mo) {
    /* every product in its own statement, as everywhere in this file (doc/API.md, Determinism) */
    double hm = 0.5 * h, h3 = h * h * h, t = hm * m0, a1, a0, u, v;
    double q2 = q * q, p2 = p * p, q3 = q2 * q, p3 = p2 * p, q4 = q2 * q2, p4 = p2 * p2;
    a1 = 12.0 * (m1 - t);
    a1 /= h3;
    u = hm * a1;
    a0 = m0 / h;
    a0 -= u;
    u = a0 * (q - p);
    v = a1 * (q2 - p2) * 0.5;
    mo[0] = u + v;
    u = a0 * (q2 - p2) * 0.5;
    v = a1 * (q3 - p3) * (1.0 / 3.0);
    mo[1] = u + v;
    u = a0 * (q3 - p3) * (1.0 / 3.0);
    v = a1 * (q4 - p4) * 0.25;
    mo[2] = u + v;
}
/* The pieces of bin `bin` at s levels: calls back with the level k, the piece's offset e0 = (bin
 * start) s - k and its moments (weights and counts of both signs). */
typedef void (*dq__rd_piece_fn)(void *ctx, double k, double e0, const double *w, const double *cp, const double *cn);
static inline void dq__rd_pieces(const dq__rd_bins *B, size_t bin, double s, dq__rd_piece_fn fn, void *ctx) {
    double a = (double)bin * B->h, v0 = a * s, v1 = (a + B->h) * s, k = floor(v0);
    if (v1 <= k + 1.0) { /* inside one interval: the moments as measured */
        double w[3], cp[2], cn[2];
        w[0] = B->w[0][bin], w[1] = B->w[1][bin], w[2] = B->w[2][bin];
        cp[0] = B->c[0][0][bin], cp[1] = B->c[0][1][bin], cn[0] = B->c[1][0][bin], cn[1] = B->c[1][1][bin];
        fn(ctx, k, v0 - k, w, cp, cn);
        return;
    }
    for (; k < v1; k += 1.0) {
        double p = k / s - a, q = (k + 1.0) / s - a, w[3], cp[3], cn[3];
        if (p < 0.0) p = 0.0;
        if (q > B->h) q = B->h;
        if (!(q > p)) continue;
        dq__rd_piece(B->w[0][bin], B->w[1][bin], B->h, p, q, w);
        dq__rd_piece(B->c[0][0][bin], B->c[0][1][bin], B->h, p, q, cp);
        dq__rd_piece(B->c[1][0][bin], B->c[1][1][bin], B->h, p, q, cn);
        fn(ctx, k, v0 - k, w, cp, cn);
    }
}
typedef struct dq__rd_acc {
    double s, err, lv[2][129]; /* levels by sign (widths up to 8) */
    double nz, elias;          /* expected non-zero codes, and their sign and level bits in Elias */
} dq__rd_acc;
/* sum of scale^2 (e0 + d s)(1 - e0 - d s) / s^2, and the levels' expected counts */
static inline void dq__rd_take(void *ctx, double k, double e0, const double *w, const double *cp, const double *cn) {
    dq__rd_acc *A = (dq__rd_acc *)ctx;
    double s = A->s, ss = s * s, m = cp[0] + cn[0], e2 = 2.0 * e0, t0, t1, t2, up;
    t0 = e0 * m; /* each product in its own statement (doc/API.md, Determinism) */
    t1 = s * (cp[1] + cn[1]);
    up = t0 + t1;
    t0 = e0 * (1.0 - e0) * w[0];
    t1 = s * (1.0 - e2) * w[1];
    t2 = ss * w[2];
    A->err += (t0 + t1 - t2) / ss;
    A->nz += (k > 0.0 ? m - up : 0.0) + up;
    t0 = k > 0.0 ? (m - up) * (1.0 + dq_elias_omega_len((uint64_t)k)) : 0.0;
    t1 = up * (1.0 + dq_elias_omega_len((uint64_t)k + 1u));
    A->elias += t0 + t1;
    if (s <= 127.0) {
        double pa = e0 * cp[0], pb = s * cp[1], na = e0 * cn[0], nb = s * cn[1];
        double up_p = pa + pb, up_n = na + nb; /* expected count at k + 1 */
        A->lv[0][(size_t)k] += cp[0] - up_p;
        A->lv[1][(size_t)k] += cn[0] - up_n;
        A->lv[0][(size_t)k + 1u] += up_p;
        A->lv[1][(size_t)k + 1u] += up_n;
    }
}

/* Predicted payload bytes of coder 3 (its 8-byte length included) for the expected symbol
 * counts cnt[]: each symbol costs what its normalized frequency charges (a symbol expected less
 * than half a time, the least frequency), and the table holds a symbol with the chance that it
 * occurs at all, 1 - exp(-cnt) (counts taken as Poisson). */
static inline double dq__rd_rans_bytes(unsigned b, size_t n, const double *cnt) {
    unsigned A = 1u << dq__sym_bits(b), sym;
    uint64_t c[256], total = 0;
    uint32_t f[256];
    double bits = 0.0, table = A / 8u;
    for (sym = 0; sym < A; sym++) total += (c[sym] = (uint64_t)floor(cnt[sym] + 0.5));
    if (!total) return 0.0;
    dq__rans_normalize(c, A, total, f);
    for (sym = 0; sym < A; sym++) {
        double t;
        if (!(cnt[sym] > 0.0)) continue;
        t = cnt[sym] * (log2((double)DQ__RANS_M) - (c[sym] ? log2((double)f[sym]) : 0.0));
        bits += t;
        t = (1.0 - exp(-cnt[sym])) * (c[sym] && f[sym] > 128u ? 2.0 : 1.0);
        table += t;
    }
    /* every chunk ends with its 32 states written whole; they hold the last bits of the stream,
     * about 8 a state (a state ends log-uniform over its 16-bit range) */
    {
        double states = (double)dq__r32_nchunks(n, b) * (4.0 + DQ__R32_HEAD - DQ__R32_WAYS), stream = bits / 8.0;
        return 8.0 + table + states + stream;
    }
}
/* Predicted Elias payload bytes (its 8-byte length included) for nz expected non-zero codes with
 * `lv` sign and level bits among n: the gaps taken as geometric with the mean density, so a
 * gap has floor(log2) = L with probability (1 - r)^(2^L - 1) - (1 - r)^(2^(L+1) - 1). */
static inline double dq__rd_elias_bytes(size_t n, double nz, double lv) {
    double r = nz / (double)n, lq, gap = 0.0, prev = 1.0, next;
    unsigned L;
    if (!(nz >= 0.5)) return 8.0 + 1.0;
    if (r >= 1.0) return 8.0 + ceil(((double)dq_elias_omega_len((uint64_t)(nz + 0.5) + 1u) + lv + nz) / 8.0);
    lq = log1p(-r);
    for (L = 0; L < 63u && prev > 0.0; L++, prev = next) {
        double t;
        next = exp((ldexp(1.0, (int)L + 1) - 1.0) * lq);
        t = (prev - next) * dq_elias_omega_len((uint64_t)1 << L);
        gap += t;
    }
    gap *= nz;
    return 8.0 + ceil(((double)dq_elias_omega_len((uint64_t)(nz + 0.5) + 1u) + lv + gap) / 8.0);
}
DQ_API dq_status dq_rd_measure(const dq_params *p, const float *x, const float *residual, size_t n, dq_rd *rd) {
    dq__rd_bins B;
    double c_top[2] = {0.0, 0.0}, c_zero = 0.0, umax = 0.0, inv = 0.0;
    uint32_t bk;
    size_t k, i, bin;
    unsigned b, pass;
    dq_norm norm;
    if (!p || !x || !rd) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    norm = p->norm == DQ_NORM_DEFAULT ? DQ_NORM_L2 : p->norm;
    if ((p->scheme != DQ_SCHEME_QSGD && p->scheme != DQ_SCHEME_DEFAULT) || (norm != DQ_NORM_L2 && norm != DQ_NORM_MAX))
        return DQ_ERR_PARAM;
    if (p->bucket && p->bucket != DQ_BUCKET_WHOLE && p->bucket % 8u) return DQ_ERR_PARAM;
    bk = p->bucket ? p->bucket : DQ_BUCKET_DEFAULT;
    memset(rd, 0, sizeof *rd);
    memset(&B, 0, sizeof B);
    /* pass 0: the largest u (L2 only; the max norm puts it at 1); pass 1: the statistics */
    for (pass = norm == DQ_NORM_MAX ? 1u : 0u; pass < 2u; pass++) {
        if (pass == 1u) {
            if (norm == DQ_NORM_MAX || umax > 1.0) umax = 1.0;
            B.h = umax / DQ__RD_NB;
            inv = umax > 0.0 ? DQ__RD_NB / umax : 0.0;
        }
        for (k = 0; k < n; k += (size_t)bk) {
            size_t end = bk == DQ_BUCKET_WHOLE || n - k < (size_t)bk ? n : k + bk;
            double sc = 0.0, sq = 0.0, s2;
            for (i = k; i < end; i++) {
                double v = residual ? (double)(x[i] + residual[i]) : (double)x[i];
                if (!(v - v == 0.0)) return DQ_ERR_NONFINITE;
                double vv = v * v;
                sq += vv;
                if (fabs(v) > sc) sc = fabs(v);
            }
            if (pass == 0u) {
                if (sq > 0.0 && sc / sqrt(sq) > umax) umax = sc / sqrt(sq);
                if (bk == DQ_BUCKET_WHOLE) break;
                continue;
            }
            rd->norm2 += sq;
            if (norm == DQ_NORM_L2) sc = sqrt(sq);
            s2 = sc * sc;
            for (i = k; i < end; i++) {
                double v = residual ? (double)(x[i] + residual[i]) : (double)x[i], u = sc > 0.0 ? fabs(v) / sc : 0.0, d, wd;
                unsigned neg = v < 0.0;
                if (u == 0.0) {
                    c_zero += 1.0;
                    continue;
                }
                if (u >= 1.0) { /* the top level, exactly: no error */
                    c_top[neg] += 1.0;
                    continue;
                }
                bin = (size_t)(u * inv);
                if (bin >= DQ__RD_NB) bin = DQ__RD_NB - 1u;
                d = (double)bin * B.h; /* each product in its own statement (doc/API.md, Determinism) */
                d = u - d;
                B.w[0][bin] += s2;
                wd = s2 * d;
                B.w[1][bin] += wd;
                wd *= d;
                B.w[2][bin] += wd;
                B.c[neg][0][bin] += 1.0;
                B.c[neg][1][bin] += d;
            }
            if (bk == DQ_BUCKET_WHOLE) break;
        }
    }
    rd->n = n;
    for (b = DQ_RD_BITS_MIN; b <= DQ_RD_BITS_MAX; b++) {
        dq__rd_acc A;
        memset(&A, 0, sizeof A);
        A.s = dq__levels_d(b);
        if (B.h > 0.0)
            for (bin = 0; bin < DQ__RD_NB; bin++)
                if (B.w[0][bin] > 0.0 || B.c[0][0][bin] > 0.0 || B.c[1][0][bin] > 0.0)
                    dq__rd_pieces(&B, bin, A.s, dq__rd_take, &A);
        rd->err[b] = A.err > 0.0 ? A.err : 0.0;
        rd->fixed_bits[b] = rd->bits[b] = dq_message_bits(n, b, p->bucket);
        if (n < DQ_CODER_AUTO_MIN) continue; /* the default sends the fixed layout there */
        { /* Elias: the fixed payload gives way to it and the checksum */
            double top = c_top[0] + c_top[1], el, tl = top * (1.0 + dq_elias_omega_len((uint64_t)A.s));
            el = 8.0 * (dq__rd_elias_bytes(n, A.nz + top, A.elias + tl) - ceil((double)n * b / 8.0) + 4.0);
            el += rd->fixed_bits[b];
            if (el < rd->bits[b]) rd->bits[b] = el;
        }
        if (b <= 8u) { /* the default coder: rANS of the codes, when smaller */
            /* the codes' distribution (a level and its sign), then symbols of g codes drawn
             * independently from it */
            double cnt[256], pc[256], fixed_pay = ceil((double)n * b / 8.0), coded, nsym = (double)dq__r32_nsym(n, b);
            unsigned l, sgn = 1u << (b - 1u), g = dq__sym_group(b), sy, t, msk = (1u << b) - 1u;
            memset(pc, 0, sizeof pc);
            pc[0] = (c_zero + A.lv[0][0] + A.lv[1][0]) / (double)n;
            A.lv[0][(size_t)A.s] += c_top[0];
            A.lv[1][(size_t)A.s] += c_top[1];
            for (l = 1; l <= (unsigned)A.s; l++) {
                pc[l] = (A.lv[0][l] > 0.0 ? A.lv[0][l] : 0.0) / (double)n;
                pc[l | sgn] = (A.lv[1][l] > 0.0 ? A.lv[1][l] : 0.0) / (double)n;
            }
            for (sy = 0; sy < (1u << dq__sym_bits(b)); sy++) {
                cnt[sy] = nsym;
                for (t = 0; t < g; t++) cnt[sy] *= pc[(sy >> (t * b)) & msk];
            }
            /* the fixed payload gives way to the coded one (its length included) and the checksum */
            coded = 8.0 * (dq__rd_rans_bytes(b, n, cnt) - fixed_pay + 4.0);
            coded += rd->fixed_bits[b];
            if (coded < rd->bits[b]) rd->bits[b] = coded;
        }
    }
    return DQ_OK;
}

/* The move from width b of one segment that removes the most error per bit, among widths up to
 * bmax (hull = 1: any of them, the steepest, i.e. the next vertex of the lower convex hull;
 * hull = 0: only those costing at most `room`). Returns the width (0: none) and its ratio. */
static inline unsigned dq__rd_move(const dq_rd *r, int fixed, unsigned b, unsigned bmax, int hull, double room,
                                   double *ratio) {
    const double *bits = fixed ? r->fixed_bits : r->bits;
    unsigned t, best = 0;
    for (t = b + 1u; t <= bmax; t++) {
        double gain = r->err[b] - r->err[t], cost = bits[t] - bits[b], q;
        if (!(gain > 0.0) || (!hull && cost > room)) continue;
        q = cost > 0.0 ? gain / cost : HUGE_VAL; /* a free gain comes first */
        if (!best || q > *ratio) {
            best = t;
            *ratio = q;
        }
    }
    return best;
}

static inline double dq__rd_total(const dq_rd *rd, size_t m, int fixed, const unsigned *bits) {
    double t = 0.0;
    size_t i;
    for (i = 0; i < m; i++) t += fixed ? rd[i].fixed_bits[bits[i]] : rd[i].bits[bits[i]];
    return t;
}
/* Frees at least `need` bits by lowering segments other than `skip`, each move the one that adds
 * the least error per bit it usefully frees; the moves are applied to bits[] and logged (undo
 * with dq__rd_undo). Returns 0 when it cannot (nothing left to lower, or the log is full). */
#define DQ__RD_LOG 64u
static inline int dq__rd_free(const dq_rd *rd, size_t m, int fixed, unsigned bits_min, size_t skip, double need,
                              unsigned *bits, size_t *log_i, unsigned *log_b, size_t *nlog, double *loss) {
    *nlog = 0;
    *loss = 0.0;
    while (need > 0.0) {
        size_t j, pj = m;
        unsigned u, pu = 0;
        double pq = 0.0, pfreed = 0.0, padd = 0.0;
        if (*nlog == DQ__RD_LOG) return 0;
        for (j = 0; j < m; j++) {
            const double *bt = fixed ? rd[j].fixed_bits : rd[j].bits;
            if (j == skip) continue;
            for (u = bits_min; u < bits[j]; u++) {
                double freed = bt[bits[j]] - bt[u], add = rd[j].err[u] - rd[j].err[bits[j]], q;
                if (!(freed > 0.0)) continue;
                if (add < 0.0) add = 0.0;
                q = add / (freed < need ? freed : need);
                if (pj == m || q < pq) {
                    pj = j, pu = u, pq = q, pfreed = freed, padd = add;
                }
            }
        }
        if (pj == m) return 0;
        log_i[*nlog] = pj;
        log_b[*nlog] = bits[pj];
        (*nlog)++;
        bits[pj] = pu;
        need -= pfreed;
        *loss += padd;
    }
    return 1;
}
static inline void dq__rd_undo(unsigned *bits, const size_t *log_i, const unsigned *log_b, size_t nlog) {
    while (nlog--) bits[log_i[nlog]] = log_b[nlog];
}
static inline double dq__rd_err(const dq_rd *rd, size_t m, const unsigned *bits) {
    double e = 0.0;
    size_t i;
    for (i = 0; i < m; i++) e += rd[i].err[bits[i]];
    return e;
}
/* Moves up while they fit, each the one that removes the most error per bit: any that fits
 * (hull = 0, the leftover), or the next vertex of a lower hull until the steepest no longer fits
 * (hull = 1). *used is summed afresh after each move, so it does not drift. */
static inline void dq__rd_climb(const dq_rd *rd, size_t m, double budget, unsigned bits_max, int fixed, int hull,
                                unsigned *bits, double *used) {
    for (;;) {
        double best = 0.0, q = 0.0, room = budget - *used;
        unsigned to = 0, t;
        size_t i, pick = m;
        for (i = 0; i < m; i++)
            if ((t = dq__rd_move(&rd[i], fixed, bits[i], bits_max, hull, room, &q)) != 0 && (pick == m || q > best)) {
                best = q;
                pick = i;
                to = t;
            }
        if (pick == m) return;
        t = bits[pick];
        bits[pick] = to;
        if ((q = dq__rd_total(rd, m, fixed, bits)) > budget) {
            bits[pick] = t;
            return;
        }
        *used = q;
    }
}
/* One exchange that lowers the total error: a segment moves up, paid by the leftover and by
 * lowering others (dq__rd_free). Returns 1 when one was made. */
static inline int dq__rd_exchange(const dq_rd *rd, size_t m, double budget, unsigned bits_min, unsigned bits_max,
                                  int fixed, unsigned *bits, double *used) {
    size_t i, log_i[DQ__RD_LOG], nlog;
    unsigned log_b[DQ__RD_LOG], t;
    for (i = 0; i < m; i++) {
        const double *bt = fixed ? rd[i].fixed_bits : rd[i].bits;
        unsigned from = bits[i];
        for (t = from + 1u; t <= bits_max; t++) {
            double gain = rd[i].err[from] - rd[i].err[t], need = bt[t] - bt[from] - (budget - *used), loss = 0.0, tot;
            if (!(gain > 0.0)) continue;
            nlog = 0;
            if (need > 0.0 && !dq__rd_free(rd, m, fixed, bits_min, i, need, bits, log_i, log_b, &nlog, &loss)) {
                dq__rd_undo(bits, log_i, log_b, nlog);
                continue;
            }
            bits[i] = t;
            tot = dq__rd_total(rd, m, fixed, bits);
            if (tot <= budget && gain - loss > 1e-12 * gain) {
                *used = tot;
                return 1;
            }
            bits[i] = from;
            dq__rd_undo(bits, log_i, log_b, nlog);
        }
    }
    return 0;
}
DQ_API dq_status dq_rd_alloc(const dq_rd *rd, size_t m, double budget_bits, unsigned bits_min, unsigned bits_max,
                             int fixed, unsigned *bits, double *err, double *spent) {
    double used, e;
    size_t i, round;
    unsigned w, wbest = 0;
    if (!rd || !bits) return DQ_ERR_NULL;
    if (m == 0) return DQ_ERR_EMPTY;
    if (bits_min < DQ_RD_BITS_MIN || bits_max > DQ_RD_BITS_MAX || bits_min > bits_max) return DQ_ERR_BITS;
    if (!(budget_bits >= 0.0)) return DQ_ERR_PARAM;
    for (i = 0; i < m; i++) bits[i] = bits_min;
    if ((used = dq__rd_total(rd, m, fixed, bits)) > budget_bits) return DQ_ERR_INFEASIBLE;
    dq__rd_climb(rd, m, budget_bits, bits_max, fixed, 1, bits, &used);
    e = dq__rd_err(rd, m, bits);
    for (w = bits_min + 1u; w <= bits_max; w++) { /* never worse than the best one width that fits */
        double t = 0.0, ew = 0.0;
        for (i = 0; i < m; i++) {
            t += fixed ? rd[i].fixed_bits[w] : rd[i].bits[w];
            ew += rd[i].err[w];
        }
        if (t <= budget_bits && ew < e) wbest = w, e = ew;
    }
    if (wbest) {
        for (i = 0; i < m; i++) bits[i] = wbest;
        used = dq__rd_total(rd, m, fixed, bits);
    }
    /* then the leftover, and exchanges while they lower the error (each strictly, so it ends) */
    for (round = 0; round < 64u * m + 64u; round++) {
        dq__rd_climb(rd, m, budget_bits, bits_max, fixed, 0, bits, &used);
        if (!dq__rd_exchange(rd, m, budget_bits, bits_min, bits_max, fixed, bits, &used)) break;
    }
    if (err) *err = dq__rd_err(rd, m, bits);
    if (spent) *spent = used;
    return DQ_OK;
}

