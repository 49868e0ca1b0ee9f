/* ================================================================ SSE2 (also the base of AVX2 and NEON) */
#if DQ__HAS_SSE2_KERNELS

/* Lane offsets 0..15, loaded rather than built with setr (which SIMDe 0.7.4 expands into a
 * long mask sequence at 512 bits under GCC). */
static const int32_t dq__lane_ids[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

/* 32-bit lane multiply from two 32x32->64 products (SSE2 has no pmulld). */
static inline simde__m128i dq__mullo__sse2(simde__m128i a, simde__m128i b) {
    simde__m128i ev = simde_mm_mul_epu32(a, b);
    simde__m128i od = simde_mm_mul_epu32(simde_mm_srli_epi64(a, 32), simde_mm_srli_epi64(b, 32));
    ev = simde_mm_shuffle_epi32(ev, SIMDE_MM_SHUFFLE(0, 0, 2, 0));
    od = simde_mm_shuffle_epi32(od, SIMDE_MM_SHUFFLE(0, 0, 2, 0));
    return simde_mm_unpacklo_epi32(ev, od);
}
/* dq__draw24 on 4 lanes: x = index low halves. */
static inline simde__m128i dq__draw24__sse2(simde__m128i x, simde__m128i k0, simde__m128i k1) {
    x = simde_mm_xor_si128(x, k0);
    x = simde_mm_xor_si128(x, simde_mm_srli_epi32(x, 16));
    x = dq__mullo__sse2(x, simde_mm_set1_epi32((int32_t)0x7FEB352D));
    x = simde_mm_xor_si128(x, simde_mm_xor_si128(simde_mm_srli_epi32(x, 15), k1));
    x = dq__mullo__sse2(x, simde_mm_set1_epi32((int32_t)0x846CA68B));
    x = simde_mm_xor_si128(x, simde_mm_srli_epi32(x, 16));
    return simde_mm_srli_epi32(x, 8);
}

/* Statistics of x (or x + e) over one bucket; computes only what the norm needs (`what` is
 * one of DQ__ST_*; other masks go to the scalar reference). 16 double lanes as in dqsgd.h:
 * SSE2 keeps them in 8 registers of 2. */
static inline void dq__stats__sse2(const float *x, const float *e, size_t n, unsigned what, dq__stats *st) {
    const simde__m128i absm = simde_mm_set1_epi32(0x7FFFFFFF);
    simde__m128d q[8];
    simde__m128i mx = simde_mm_setzero_si128();
    double l16[DQ__SLANES] = {0};
    uint32_t m4[4], mxs = 0;
    size_t i = 0;
    unsigned k;
    if (what != DQ__ST_SQ && what != DQ__ST_ABS && what != DQ__ST_MAX) {
        dq__stats__scalar(x, e, n, what, st);
        return;
    }
    for (k = 0; k < 8; k++) q[k] = simde_mm_setzero_pd();
    for (; i + 16 <= n; i += 16) {
        for (k = 0; k < 4; k++) { /* 4 floats -> lanes 4k .. 4k+3 */
            simde__m128 v = simde_mm_loadu_ps(x + i + 4 * k);
            simde__m128i u;
            if (e) v = simde_mm_add_ps(v, simde_mm_loadu_ps(e + i + 4 * k));
            u = simde_mm_and_si128(simde_mm_castps_si128(v), absm);
            if (what == DQ__ST_MAX) { /* |x| bits fit in 31 bits: the signed compare orders them */
                simde__m128i g = simde_mm_cmpgt_epi32(u, mx);
                mx = simde_mm_or_si128(simde_mm_and_si128(g, u), simde_mm_andnot_si128(g, mx));
            } else {
                simde__m128 f = simde_mm_castsi128_ps(u);
                simde__m128d d0 = simde_mm_cvtps_pd(f), d1 = simde_mm_cvtps_pd(simde_mm_movehl_ps(f, f));
                if (what == DQ__ST_SQ) {
                    d0 = simde_mm_mul_pd(d0, d0);
                    d1 = simde_mm_mul_pd(d1, d1);
                }
                q[2 * k] = simde_mm_add_pd(q[2 * k], d0);
                q[2 * k + 1] = simde_mm_add_pd(q[2 * k + 1], d1);
            }
        }
    }
    for (k = 0; k < 8; k++) simde_mm_storeu_pd(l16 + 2 * k, q[k]);
    simde_mm_storeu_si128((simde__m128i *)m4, mx);
    for (k = 0; k < 4; k++)
        if (m4[k] > mxs) mxs = m4[k];
    dq__stats_end(x, e, i, n, what, l16, mxs, st);
}

static inline void dq__compensate__sse2(const float *x, float *e, size_t n) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4) simde_mm_storeu_ps(e + i, simde_mm_add_ps(simde_mm_loadu_ps(x + i), simde_mm_loadu_ps(e + i)));
    dq__compensate__scalar(x + i, e + i, n - i);
}

static inline void dq__quant__sse2(const dq__qctx *q, const float *x, size_t cnt, uint32_t *codes, float *res) {
    const simde__m128i absm = simde_mm_set1_epi32(0x7FFFFFFF), zero = simde_mm_setzero_si128();
    const simde__m128i one = simde_mm_set1_epi32(1), k0 = simde_mm_set1_epi32((int32_t)q->k0);
    const simde__m128i k1 = simde_mm_set1_epi32((int32_t)q->k1h);
    const simde__m128i lane = simde_mm_loadu_si128((const simde__m128i *)dq__lane_ids);
    const simde__m128i shs = simde_mm_cvtsi32_si128((int)q->bits - 1);
    const simde__m128 inv = simde_mm_set1_ps(q->inv), smax = simde_mm_set1_ps(q->smax), step = simde_mm_set1_ps(q->step);
    const simde__m128 neg = simde_mm_set1_ps(q->neg);
    const simde__m128 half = simde_mm_set1_ps(0.5f), ulp24 = simde_mm_set1_ps(5.96046448e-08f);
    const int stoch = q->thresh < 0.0f;
    size_t i = 0;
    dq__qctx rest;
    for (; i + 4 <= cnt; i += 4) {
        simde__m128 xv = simde_mm_loadu_ps(x + i), t, v = simde_mm_setzero_ps();
        simde__m128i xb = simde_mm_castps_si128(xv), code;
        if (stoch) {
            simde__m128i h = simde_mm_add_epi32(simde_mm_set1_epi32((int32_t)(q->lo + (uint32_t)i)), lane);
            t = simde_mm_mul_ps(simde_mm_cvtepi32_ps(dq__draw24__sse2(h, k0, k1)), ulp24);
        } else {
            t = half;
        }
        if (q->bits == 1) {
            simde__m128 pp = simde_mm_add_ps(half, simde_mm_mul_ps(xv, inv));
            code = stoch ? simde_mm_andnot_si128(simde_mm_castps_si128(simde_mm_cmplt_ps(t, pp)), one)
                         : simde_mm_srli_epi32(xb, 31);
            if (res) { /* code 1 decodes to neg, code 0 to step */
                simde__m128i m = simde_mm_sub_epi32(zero, code);
                v = simde_mm_castsi128_ps(simde_mm_or_si128(simde_mm_and_si128(m, simde_mm_castps_si128(neg)),
                                                            simde_mm_andnot_si128(m, simde_mm_castps_si128(step))));
            }
        } else {
            simde__m128 r = simde_mm_min_ps(simde_mm_mul_ps(simde_mm_castsi128_ps(simde_mm_and_si128(xb, absm)), inv), smax);
            simde__m128i l = simde_mm_cvttps_epi32(r), sg;
            simde__m128 f = simde_mm_sub_ps(r, simde_mm_cvtepi32_ps(l));
            l = simde_mm_sub_epi32(l, simde_mm_castps_si128(simde_mm_cmplt_ps(t, f)));
            sg = simde_mm_andnot_si128(simde_mm_cmpeq_epi32(l, zero), simde_mm_srli_epi32(xb, 31));
            code = simde_mm_or_si128(l, simde_mm_sll_epi32(sg, shs));
            if (res) {
                v = simde_mm_mul_ps(simde_mm_cvtepi32_ps(l), step);
                v = simde_mm_castsi128_ps(simde_mm_xor_si128(simde_mm_castps_si128(v), simde_mm_slli_epi32(sg, 31)));
            }
        }
        simde_mm_storeu_si128((simde__m128i *)(codes + i), code);
        if (res) simde_mm_storeu_ps(res + i, simde_mm_sub_ps(xv, v));
    }
    rest = *q;
    rest.lo = q->lo + (uint32_t)i;
    dq__quant__scalar(&rest, x + i, cnt - i, codes + i, res ? res + i : NULL);
}

/* Packing: the 8 lanes of a block are two 4-lane halves. */
static inline void dq__pack_block__sse2(const uint32_t *codes, unsigned b, uint8_t *out) {
    simde__m128i lo = simde_mm_setzero_si128(), hi = lo;
    unsigned have = 0, r;
    for (r = 0; r < DQ__ROWS; r++) {
        simde__m128i v0 = simde_mm_loadu_si128((const simde__m128i *)(codes + 8 * r));
        simde__m128i v1 = simde_mm_loadu_si128((const simde__m128i *)(codes + 8 * r + 4));
        simde__m128i sh = simde_mm_cvtsi32_si128((int)have);
        lo = simde_mm_or_si128(lo, simde_mm_sll_epi32(v0, sh));
        hi = simde_mm_or_si128(hi, simde_mm_sll_epi32(v1, sh));
        have += b;
        if (have >= 32) {
            simde__m128i back = simde_mm_cvtsi32_si128((int)(b - (have - 32)));
            simde_mm_storeu_si128((simde__m128i *)out, lo);
            simde_mm_storeu_si128((simde__m128i *)(out + 16), hi);
            out += 32;
            have -= 32;
            lo = simde_mm_srl_epi32(v0, back); /* shift counts >= 32 give 0 */
            hi = simde_mm_srl_epi32(v1, back);
        }
    }
}

static inline void dq__quant_pack__sse2(const dq__qctx *q, const float *x, float *res, uint8_t *out) {
    uint32_t codes[DQ__BLOCK];
    dq__quant__sse2(q, x, DQ__BLOCK, codes, res);
    dq__pack_block__sse2(codes, q->bits, out);
}

static inline void dq__decode_block__sse2(const uint8_t *in, unsigned b, const float *rowstep, float w, int add,
                                          float *out) {
    const simde__m128i mask = simde_mm_set1_epi32((int32_t)((1u << b) - 1u));
    const simde__m128i lmask = simde_mm_set1_epi32(b == 1 ? 0 : (int32_t)((1u << (b - 1)) - 1u));
    const simde__m128i lone = simde_mm_set1_epi32(b == 1 ? 1 : 0), shs = simde_mm_cvtsi32_si128((int)b - 1);
    const simde__m128 wv = simde_mm_set1_ps(w);
    unsigned r;
    for (r = 0; r < DQ__ROWS; r++) {
        unsigned off = r * b, j = off >> 5, s = off & 31u;
        const uint8_t *p = in + 32u * j;
        simde__m128i sh = simde_mm_cvtsi32_si128((int)s);
        simde__m128i v0 = simde_mm_srl_epi32(simde_mm_loadu_si128((const simde__m128i *)p), sh);
        simde__m128i v1 = simde_mm_srl_epi32(simde_mm_loadu_si128((const simde__m128i *)(p + 16)), sh);
        simde__m128 st = simde_mm_set1_ps(rowstep[r]);
        simde__m128 f0, f1;
        if (s + b > 32) {
            simde__m128i up = simde_mm_cvtsi32_si128((int)(32 - s));
            v0 = simde_mm_or_si128(v0, simde_mm_sll_epi32(simde_mm_loadu_si128((const simde__m128i *)(p + 32)), up));
            v1 = simde_mm_or_si128(v1, simde_mm_sll_epi32(simde_mm_loadu_si128((const simde__m128i *)(p + 48)), up));
        }
        v0 = simde_mm_and_si128(v0, mask);
        v1 = simde_mm_and_si128(v1, mask);
        f0 = simde_mm_mul_ps(simde_mm_cvtepi32_ps(simde_mm_or_si128(simde_mm_and_si128(v0, lmask), lone)), st);
        f1 = simde_mm_mul_ps(simde_mm_cvtepi32_ps(simde_mm_or_si128(simde_mm_and_si128(v1, lmask), lone)), st);
        f0 = simde_mm_castsi128_ps(
            simde_mm_xor_si128(simde_mm_castps_si128(f0), simde_mm_slli_epi32(simde_mm_srl_epi32(v0, shs), 31)));
        f1 = simde_mm_castsi128_ps(
            simde_mm_xor_si128(simde_mm_castps_si128(f1), simde_mm_slli_epi32(simde_mm_srl_epi32(v1, shs), 31)));
        if (add) {
            f0 = simde_mm_add_ps(simde_mm_loadu_ps(out + 8 * r), simde_mm_mul_ps(wv, f0));
            f1 = simde_mm_add_ps(simde_mm_loadu_ps(out + 8 * r + 4), simde_mm_mul_ps(wv, f1));
        }
        simde_mm_storeu_ps(out + 8 * r, f0);
        simde_mm_storeu_ps(out + 8 * r + 4, f1);
    }
}

/* Elias sizing scan of a full block (dq__elias_scan__scalar): rows of 8 codes, the non-zero
 * mask from a compare, the level bits from one compare per power of two (SSE2 has no byte
 * shuffle to look them up). */
static inline uint32_t dq__elias_scan__sse2(const uint8_t *in, unsigned b, const uint8_t *lvt, uint32_t *codes,
                                            uint64_t *nz) {
    const simde__m128i mask = simde_mm_set1_epi32((int32_t)((1u << b) - 1u));
    const simde__m128i lmask = simde_mm_set1_epi32((int32_t)((1u << (b - 1u)) - 1u));
    const simde__m128i sgn = simde_mm_set1_epi32((int32_t)(1u << (b - 1u))), zero = simde_mm_setzero_si128();
    simde__m128i acc = zero, bad = zero, thr[15], inc[15];
    uint32_t part[4];
    unsigned r, t;
    for (t = 0; t + 1u < b; t++) {
        thr[t] = simde_mm_set1_epi32((int32_t)((1u << t) - 1u));
        inc[t] = simde_mm_set1_epi32((int32_t)lvt[t + 1u] - (int32_t)lvt[t]);
    }
    uint64_t word = 0;
    for (r = 0; r < DQ__ROWS; r++) {
        unsigned off = r * b, j = off >> 5, s = off & 31u, h;
        const uint8_t *p = in + 32u * j;
        simde__m128i sh = simde_mm_cvtsi32_si128((int)s), v[2];
        v[0] = simde_mm_srl_epi32(simde_mm_loadu_si128((const simde__m128i *)p), sh);
        v[1] = simde_mm_srl_epi32(simde_mm_loadu_si128((const simde__m128i *)(p + 16)), sh);
        if (s + b > 32) {
            simde__m128i up = simde_mm_cvtsi32_si128((int)(32 - s));
            v[0] = simde_mm_or_si128(v[0], simde_mm_sll_epi32(simde_mm_loadu_si128((const simde__m128i *)(p + 32)), up));
            v[1] = simde_mm_or_si128(v[1], simde_mm_sll_epi32(simde_mm_loadu_si128((const simde__m128i *)(p + 48)), up));
        }
        for (h = 0; h < 2; h++) {
            simde__m128i c = simde_mm_and_si128(v[h], mask), l = simde_mm_and_si128(c, lmask);
            unsigned m = (unsigned)simde_mm_movemask_ps(simde_mm_castsi128_ps(simde_mm_cmpeq_epi32(l, zero))) ^ 15u;
            simde_mm_storeu_si128((simde__m128i *)(codes + 8 * r + 4 * h), c);
            bad = simde_mm_or_si128(bad, simde_mm_cmpeq_epi32(c, sgn));
            word |= (uint64_t)m << (8u * (r & 7u) + 4u * h);
            for (t = 0; t + 1u < b; t++)
                acc = simde_mm_add_epi32(acc, simde_mm_and_si128(simde_mm_cmpgt_epi32(l, thr[t]), inc[t]));
        }
        if ((r & 7u) == 7u) { /* a register, not nz[]: no store-to-load chain from row to row */
            nz[r >> 3] = word;
            word = 0;
        }
    }
    if (simde_mm_movemask_epi8(bad)) return UINT32_MAX;
    simde_mm_storeu_si128((simde__m128i *)part, acc);
    return part[0] + part[1] + part[2] + part[3];
}

/* ---- two-means (DQ_SCHEME_TWOMEANS): the statistics (twin: dq__tm_acc__scalar), 16 elements a
 * step into 8 + 8 registers of 2 double lanes; each magnitude goes to its sign group's lane and
 * +0.0 to the other group's (which changes no sum of magnitudes). */
static inline void dq__tm_acc__sse2(const float *x, const float *e, size_t n, double *pos, double *neg,
                                    uint64_t *nneg) {
    const simde__m128i absm = simde_mm_set1_epi32(0x7FFFFFFF);
    simde__m128d qp[8], qn[8];
    uint64_t m = 0;
    size_t i = 0;
    unsigned k;
    for (k = 0; k < 8; k++) {
        qp[k] = simde_mm_loadu_pd(pos + 2 * k);
        qn[k] = simde_mm_loadu_pd(neg + 2 * k);
    }
    for (; i + 16 <= n; i += 16) {
        unsigned bits = 0;
        for (k = 0; k < 4; k++) { /* 4 floats -> lanes 4k .. 4k+3 */
            simde__m128 v = simde_mm_loadu_ps(x + i + 4 * k), f;
            simde__m128i sg;
            simde__m128d d0, d1, s0, s1;
            if (e) v = simde_mm_add_ps(v, simde_mm_loadu_ps(e + i + 4 * k));
            sg = simde_mm_srai_epi32(simde_mm_castps_si128(v), 31);
            f = simde_mm_castsi128_ps(simde_mm_and_si128(simde_mm_castps_si128(v), absm));
            d0 = simde_mm_cvtps_pd(f);
            d1 = simde_mm_cvtps_pd(simde_mm_movehl_ps(f, f));
            s0 = simde_mm_castsi128_pd(simde_mm_unpacklo_epi32(sg, sg)); /* lanes 0, 1 as 64-bit masks */
            s1 = simde_mm_castsi128_pd(simde_mm_unpackhi_epi32(sg, sg)); /* lanes 2, 3 */
            qn[2 * k] = simde_mm_add_pd(qn[2 * k], simde_mm_and_pd(s0, d0));
            qp[2 * k] = simde_mm_add_pd(qp[2 * k], simde_mm_andnot_pd(s0, d0));
            qn[2 * k + 1] = simde_mm_add_pd(qn[2 * k + 1], simde_mm_and_pd(s1, d1));
            qp[2 * k + 1] = simde_mm_add_pd(qp[2 * k + 1], simde_mm_andnot_pd(s1, d1));
            bits |= (unsigned)simde_mm_movemask_ps(v) << (4 * k);
        }
        m += dq__popcount32(bits);
    }
    for (k = 0; k < 8; k++) {
        simde_mm_storeu_pd(pos + 2 * k, qp[k]);
        simde_mm_storeu_pd(neg + 2 * k, qn[k]);
    }
    *nneg += m;
    dq__tm_acc__scalar(x + i, e ? e + i : NULL, n - i, pos, neg, nneg);
}
/* Two-means block decoder (twin: dq__decode_block_tm__scalar): at 1 bit a block is the 8 lane
 * words, row r is bit r of each; a set bit selects the row's negative mean. */
static inline void dq__decode_block_tm__sse2(const uint8_t *in, const float *rowpos, const float *rowneg, float w,
                                             int add, float *out) {
    const simde__m128i w0 = simde_mm_loadu_si128((const simde__m128i *)in);
    const simde__m128i w1 = simde_mm_loadu_si128((const simde__m128i *)(in + 16));
    const simde__m128 wv = simde_mm_set1_ps(w);
    unsigned r;
    for (r = 0; r < DQ__ROWS; r++) {
        simde__m128i sh = simde_mm_cvtsi32_si128((int)(31u - r));
        simde__m128i m0 = simde_mm_srai_epi32(simde_mm_sll_epi32(w0, sh), 31);
        simde__m128i m1 = simde_mm_srai_epi32(simde_mm_sll_epi32(w1, sh), 31);
        simde__m128i p = simde_mm_castps_si128(simde_mm_set1_ps(rowpos[r]));
        simde__m128i ng = simde_mm_castps_si128(simde_mm_set1_ps(rowneg[r]));
        simde__m128 f0 = simde_mm_castsi128_ps(simde_mm_or_si128(simde_mm_and_si128(m0, ng), simde_mm_andnot_si128(m0, p)));
        simde__m128 f1 = simde_mm_castsi128_ps(simde_mm_or_si128(simde_mm_and_si128(m1, ng), simde_mm_andnot_si128(m1, p)));
        if (add) {
            f0 = simde_mm_add_ps(simde_mm_loadu_ps(out + 8 * r), simde_mm_mul_ps(wv, f0));
            f1 = simde_mm_add_ps(simde_mm_loadu_ps(out + 8 * r + 4), simde_mm_mul_ps(wv, f1));
        }
        simde_mm_storeu_ps(out + 8 * r, f0);
        simde_mm_storeu_ps(out + 8 * r + 4, f1);
    }
}

/* ---- table schemes: dq__quant_tab__scalar and dq__decode_block_tab__scalar, vectorized.
 * s = 2^(b-1) - 1 (b = 2..8), so the table tab[0..s] holds N = s + 1 = 2^(b-1) floats, a power
 * of two; the kernels never read past tab[s]. Precondition (dq__tab_ok, and what the scalar
 * binary search needs as well): tab[0] = 0 < tab[1] < ... < tab[s] = 1.
 *
 * Exponential tables (NUQSGD, natural: tab[0] = +0, tab[l] = 2^(l-s)) take a path without
 * lookups. Each call compares the whole table bit for bit with that pattern (N floats, a few
 * vector compares) rather than trusting a flag, so any table that takes the path is exactly
 * the one the proof below is about (a TRUNC_NU table that happens to be exponential too).
 *
 * Why the exponential path gives dq__tab_level's level and f bit for bit. Let r = |x| * inv
 * with 0 <= r < 1 (r >= 1 and NaN take level s in both).
 * (a) r >= tab[1] = 2^(1-s): r is normal (2^(1-s) >= 2^-126 for s <= 127), r = 2^E * m with
 *     1 <= m < 2 and E = expbits(r) - 127, 1-s <= E <= -1. Since tab[E+s] = 2^E <= r < 2^(E+1)
 *     = tab[E+s+1] and tab increases, the scalar's j (largest index with tab[j] <= r) is
 *     j = E + s = expbits(r) + s - 127, and 1 <= j <= s-1. Its f = (r - tab[j]) / (tab[j+1] -
 *     tab[j]): r - 2^E is exact (Sterbenz, 2^E <= r < 2 * 2^E), so is 2^(E+1) - 2^E = 2^E, and
 *     the quotient m - 1 (a multiple of 2^-23 in [0, 1)) is exact too. The kernels form m - 1
 *     as float(bits 0x3F800000 | mantissa(r)) - 1.0f, exact by the same lemma.
 * (b) r < 2^(1-s): j = 0, and f = (r - 0) / (2^(1-s) - 0): both differences are exact, and the
 *     quotient by a power of two, r * 2^(s-1) < 1, is exact as well (a subnormal r scaled up
 *     loses no bits); the kernels multiply by 2^(s-1) (normal for s <= 127), the same value.
 * (a) holds exactly when expbits(r) + s - 127 > 0, which is the kernels' test. Equal j and f
 * give the same level j + (t < f), and tab[level] is rebuilt from its bits: 0 for level 0,
 * (level + 127 - s) << 23 otherwise.
 *
 * Other tables: the scalar's j is the largest index with tab[j] <= r, unique for an increasing
 * table, and 0 <= j <= s-1 since tab[0] <= r < tab[s] = 1. The kernels find it by counting for
 * s <= 7 (j = #{k in 1..s-1: tab[k] <= r}, independent compares, then tab[j] and tab[j+1] are
 * looked up), else by a branchless binary search (j = 0; for step = N/2 .. 1: if tab[j + step]
 * <= r then j += step) that keeps the last candidate <= r (= tab[j]) and the last one > r
 * (= tab[j+1]; there is one, as tab[s] = 1 > r). A table shorter than a lookup register is
 * padded with +Inf, which is never <= r, so the padding changes neither j nor the candidates
 * kept. f = (r - tab[j]) / (tab[j+1] - tab[j]) then has the scalar's operands and order, and
 * tab[level] is one of the two. Lookups: SSE2 loads the lanes' entries one by one; AVX2
 * permutes (N <= 16) or gathers; AVX-512 permutes (N <= 128). */

/* 1 if tab[0..s] is bit for bit the exponential table (s + 1 a power of two >= 2). */
static inline int dq__tab_isexp__sse2(const float *tab, unsigned s) {
    const simde__m128i zero = simde_mm_setzero_si128(), c = simde_mm_set1_epi32((int32_t)(127u - s));
    simde__m128i l = simde_mm_loadu_si128((const simde__m128i *)dq__lane_ids), bad = zero;
    unsigned i;
    if (s < 3u) return dq__fbits(tab[0]) == 0u && dq__fbits(tab[1]) == 127u << 23;
    for (i = 0; i <= s; i += 4u, l = simde_mm_add_epi32(l, simde_mm_set1_epi32(4))) {
        simde__m128i e =
            simde_mm_andnot_si128(simde_mm_cmpeq_epi32(l, zero), simde_mm_slli_epi32(simde_mm_add_epi32(l, c), 23));
        bad = simde_mm_or_si128(bad, simde_mm_xor_si128(e, simde_mm_loadu_si128((const simde__m128i *)(tab + i))));
    }
    return simde_mm_movemask_epi8(simde_mm_cmpeq_epi32(bad, zero)) == 0xFFFF;
}

/* m ? a : b on whole lanes (m all ones or all zeros). */
static inline simde__m128i dq__sel__sse2(simde__m128i m, simde__m128i a, simde__m128i b) {
    return simde_mm_or_si128(simde_mm_and_si128(m, a), simde_mm_andnot_si128(m, b));
}
static inline simde__m128 dq__selps__sse2(simde__m128 m, simde__m128 a, simde__m128 b) {
    return simde_mm_or_ps(simde_mm_and_ps(m, a), simde_mm_andnot_ps(m, b));
}
/* tab[idx] lane by lane (SSE2 has neither gather nor a variable permute). */
static inline simde__m128 dq__tab_look__sse2(const float *tab, simde__m128i idx) {
    uint32_t ix[4];
    simde_mm_storeu_si128((simde__m128i *)ix, idx);
    return simde_mm_set_ps(tab[ix[3]], tab[ix[2]], tab[ix[1]], tab[ix[0]]);
}

typedef struct dq__tq128 {
    simde__m128i absm, zero, k0, k1, lane, shs, sv, c127, sm127, mant, onei, sgnm;
    simde__m128 inv, scale, onef, pw, ulp24, thr, top, lo0, inf;
    const float *tab;
    unsigned s;
    int stoch;
} dq__tq128;
static inline void dq__tq128_init(dq__tq128 *c, const dq__qctx *q) {
    unsigned s = (1u << (q->bits - 1u)) - 1u;
    c->absm = simde_mm_set1_epi32(0x7FFFFFFF);
    c->zero = simde_mm_setzero_si128();
    c->k0 = simde_mm_set1_epi32((int32_t)q->k0);
    c->k1 = simde_mm_set1_epi32((int32_t)q->k1h);
    c->lane = simde_mm_loadu_si128((const simde__m128i *)dq__lane_ids);
    c->shs = simde_mm_cvtsi32_si128((int)q->bits - 1);
    c->sv = simde_mm_set1_epi32((int32_t)s);
    c->c127 = simde_mm_set1_epi32((int32_t)(127u - s));
    c->sm127 = simde_mm_set1_epi32((int32_t)s - 127);
    c->mant = simde_mm_set1_epi32(0x007FFFFF);
    c->onei = simde_mm_set1_epi32(0x3F800000);
    c->sgnm = simde_mm_set1_epi32(INT32_MIN);
    c->inv = simde_mm_set1_ps(q->inv);
    c->scale = simde_mm_set1_ps(q->scale);
    c->onef = simde_mm_set1_ps(1.0f);
    c->pw = simde_mm_castsi128_ps(simde_mm_set1_epi32((int32_t)((s + 126u) << 23))); /* 2^(s-1) */
    c->ulp24 = simde_mm_set1_ps(5.96046448e-08f);
    c->thr = simde_mm_set1_ps(q->thresh);
    c->top = simde_mm_set1_ps(q->tab[s]);
    c->lo0 = simde_mm_set1_ps(q->tab[0]);
    c->inf = simde_mm_castsi128_ps(simde_mm_set1_epi32(0x7F800000));
    c->tab = q->tab;
    c->s = s;
    c->stoch = q->thresh < 0.0f;
}
/* The dither t of 4 elements with indices lo + 0..3, or the threshold. */
static inline simde__m128 dq__tq128_t(const dq__tq128 *c, uint32_t lo) {
    if (c->stoch) {
        simde__m128i h = simde_mm_add_epi32(simde_mm_set1_epi32((int32_t)lo), c->lane);
        return simde_mm_mul_ps(simde_mm_cvtepi32_ps(dq__draw24__sse2(h, c->k0, c->k1)), c->ulp24);
    }
    return c->thr;
}
/* Codes from levels l and magnitudes tv = tab[l]; residuals x - value to res unless NULL. */
static inline simde__m128i dq__tq128_end(const dq__tq128 *c, simde__m128 xv, simde__m128i l, simde__m128 tv,
                                         float *res) {
    simde__m128i sg =
        simde_mm_andnot_si128(simde_mm_cmpeq_epi32(l, c->zero), simde_mm_and_si128(simde_mm_castps_si128(xv), c->sgnm));
    if (res) {
        simde__m128 v = simde_mm_xor_ps(simde_mm_mul_ps(tv, c->scale), simde_mm_castsi128_ps(sg));
        simde_mm_storeu_ps(res, simde_mm_sub_ps(xv, v));
    }
    return simde_mm_or_si128(l, simde_mm_sll_epi32(simde_mm_srli_epi32(sg, 31), c->shs));
}
/* 4 codes from x[0..4) of an exponential table. */
static inline simde__m128i dq__tq128_exp(const dq__tq128 *c, const float *x, uint32_t lo, float *res) {
    simde__m128 xv = simde_mm_loadu_ps(x), t = dq__tq128_t(c, lo), f, fhi;
    simde__m128 r =
        simde_mm_mul_ps(simde_mm_castsi128_ps(simde_mm_and_si128(simde_mm_castps_si128(xv), c->absm)), c->inv);
    simde__m128i rb = simde_mm_castps_si128(r), lt1 = simde_mm_castps_si128(simde_mm_cmplt_ps(r, c->onef)), l;
    simde__m128i j = simde_mm_add_epi32(simde_mm_srli_epi32(rb, 23), c->sm127);
    simde__m128i big = simde_mm_cmpgt_epi32(j, c->zero);
    fhi = simde_mm_sub_ps(simde_mm_castsi128_ps(simde_mm_or_si128(simde_mm_and_si128(rb, c->mant), c->onei)), c->onef);
    f = dq__selps__sse2(simde_mm_castsi128_ps(big), fhi, simde_mm_mul_ps(r, c->pw));
    l = simde_mm_sub_epi32(simde_mm_and_si128(j, big), simde_mm_castps_si128(simde_mm_cmplt_ps(t, f)));
    l = dq__sel__sse2(lt1, l, c->sv);
    return dq__tq128_end(
        c, xv, l,
        simde_mm_castsi128_ps(simde_mm_andnot_si128(simde_mm_cmpeq_epi32(l, c->zero),
                                                    simde_mm_slli_epi32(simde_mm_add_epi32(l, c->c127), 23))),
        res);
}
/* 4 codes from x[0..4) of any table: binary search. */
static inline simde__m128i dq__tq128_gen(const dq__tq128 *c, const float *x, uint32_t lo, float *res) {
    simde__m128 xv = simde_mm_loadu_ps(x), t = dq__tq128_t(c, lo), f, up, vlo = c->lo0, vhi = c->inf;
    simde__m128 r =
        simde_mm_mul_ps(simde_mm_castsi128_ps(simde_mm_and_si128(simde_mm_castps_si128(xv), c->absm)), c->inv);
    simde__m128i lt1 = simde_mm_castps_si128(simde_mm_cmplt_ps(r, c->onef)), j = c->zero, l;
    unsigned st = c->s <= 7u ? 0u : (c->s + 1u) >> 1;
    if (c->s <= 7u) { /* j = #{k in 1..s-1: tab[k] <= r}, then tab[j] and tab[j+1] lane by lane */
        unsigned k;
        uint32_t ix[4];
        for (k = 1; k < c->s; k++)
            j = simde_mm_sub_epi32(j, simde_mm_castps_si128(simde_mm_cmple_ps(simde_mm_set1_ps(c->tab[k]), r)));
        simde_mm_storeu_si128((simde__m128i *)ix, j);
        vlo = simde_mm_set_ps(c->tab[ix[3]], c->tab[ix[2]], c->tab[ix[1]], c->tab[ix[0]]);
        vhi = simde_mm_set_ps(c->tab[ix[3] + 1u], c->tab[ix[2] + 1u], c->tab[ix[1] + 1u], c->tab[ix[0] + 1u]);
    }
    for (; st; st >>= 1) {
        simde__m128i idx = simde_mm_add_epi32(j, simde_mm_set1_epi32((int32_t)st));
        simde__m128 cand = dq__tab_look__sse2(c->tab, idx), m = simde_mm_cmple_ps(cand, r);
        j = dq__sel__sse2(simde_mm_castps_si128(m), idx, j);
        vlo = dq__selps__sse2(m, cand, vlo);
        vhi = dq__selps__sse2(m, vhi, cand);
    }
    f = simde_mm_div_ps(simde_mm_sub_ps(r, vlo), simde_mm_sub_ps(vhi, vlo));
    up = simde_mm_cmplt_ps(t, f);
    l = dq__sel__sse2(lt1, simde_mm_sub_epi32(j, simde_mm_castps_si128(up)), c->sv);
    return dq__tq128_end(c, xv, l, dq__selps__sse2(simde_mm_castsi128_ps(lt1), dq__selps__sse2(up, vhi, vlo), c->top),
                         res);
}

static inline void dq__quant_tab__sse2(const dq__qctx *q, const float *x, size_t cnt, uint32_t *codes, float *res) {
    size_t i = 0;
    dq__qctx rest;
    if (cnt >= 4) {
        dq__tq128 c;
        dq__tq128_init(&c, q);
        if (dq__tab_isexp__sse2(q->tab, c.s))
            for (; i + 4 <= cnt; i += 4)
                simde_mm_storeu_si128((simde__m128i *)(codes + i),
                                      dq__tq128_exp(&c, x + i, q->lo + (uint32_t)i, res ? res + i : NULL));
        else
            for (; i + 4 <= cnt; i += 4)
                simde_mm_storeu_si128((simde__m128i *)(codes + i),
                                      dq__tq128_gen(&c, x + i, q->lo + (uint32_t)i, res ? res + i : NULL));
    }
    rest = *q;
    rest.lo = q->lo + (uint32_t)i;
    dq__quant_tab__scalar(&rest, x + i, cnt - i, codes + i, res ? res + i : NULL);
}

/* Magnitudes tab[l] of levels l (0..s) for the decoders: rebuilt from the bits for an
 * exponential table, else looked up. */
static inline simde__m128 dq__tab_exp_value__sse2(simde__m128i l, simde__m128i c127) {
    return simde_mm_castsi128_ps(simde_mm_andnot_si128(simde_mm_cmpeq_epi32(l, simde_mm_setzero_si128()),
                                                       simde_mm_slli_epi32(simde_mm_add_epi32(l, c127), 23)));
}

static inline void dq__decode_block_tab__sse2(const uint8_t *in, unsigned b, const float *tab, const float *rowscale,
                                              float w, int add, float *out) {
    const unsigned s = (1u << (b - 1u)) - 1u;
    const simde__m128i mask = simde_mm_set1_epi32((int32_t)((1u << b) - 1u)), lmask = simde_mm_set1_epi32((int32_t)s);
    const simde__m128i shs = simde_mm_cvtsi32_si128((int)b - 1), c127 = simde_mm_set1_epi32((int32_t)(127u - s));
    const simde__m128 wv = simde_mm_set1_ps(w);
    const int isexp = dq__tab_isexp__sse2(tab, s);
    unsigned r;
    for (r = 0; r < DQ__ROWS; r++) {
        unsigned off = r * b, j = off >> 5, sh5 = off & 31u;
        const uint8_t *p = in + 32u * j;
        simde__m128i sh = simde_mm_cvtsi32_si128((int)sh5);
        simde__m128i v0 = simde_mm_srl_epi32(simde_mm_loadu_si128((const simde__m128i *)p), sh);
        simde__m128i v1 = simde_mm_srl_epi32(simde_mm_loadu_si128((const simde__m128i *)(p + 16)), sh);
        simde__m128 sc = simde_mm_set1_ps(rowscale[r]), f0, f1;
        if (sh5 + b > 32) {
            simde__m128i upc = simde_mm_cvtsi32_si128((int)(32 - sh5));
            v0 = simde_mm_or_si128(v0, simde_mm_sll_epi32(simde_mm_loadu_si128((const simde__m128i *)(p + 32)), upc));
            v1 = simde_mm_or_si128(v1, simde_mm_sll_epi32(simde_mm_loadu_si128((const simde__m128i *)(p + 48)), upc));
        }
        v0 = simde_mm_and_si128(v0, mask);
        v1 = simde_mm_and_si128(v1, mask);
        if (isexp) {
            f0 = dq__tab_exp_value__sse2(simde_mm_and_si128(v0, lmask), c127);
            f1 = dq__tab_exp_value__sse2(simde_mm_and_si128(v1, lmask), c127);
        } else {
            f0 = dq__tab_look__sse2(tab, simde_mm_and_si128(v0, lmask));
            f1 = dq__tab_look__sse2(tab, simde_mm_and_si128(v1, lmask));
        }
        f0 = simde_mm_mul_ps(f0, sc);
        f1 = simde_mm_mul_ps(f1, sc);
        f0 = simde_mm_castsi128_ps(
            simde_mm_xor_si128(simde_mm_castps_si128(f0), simde_mm_slli_epi32(simde_mm_srl_epi32(v0, shs), 31)));
        f1 = simde_mm_castsi128_ps(
            simde_mm_xor_si128(simde_mm_castps_si128(f1), simde_mm_slli_epi32(simde_mm_srl_epi32(v1, shs), 31)));
        if (add) {
            f0 = simde_mm_add_ps(simde_mm_loadu_ps(out + 8 * r), simde_mm_mul_ps(wv, f0));
            f1 = simde_mm_add_ps(simde_mm_loadu_ps(out + 8 * r + 4), simde_mm_mul_ps(wv, f1));
        }
        simde_mm_storeu_ps(out + 8 * r, f0);
        simde_mm_storeu_ps(out + 8 * r + 4, f1);
    }
}
#endif /* SSE2 */

