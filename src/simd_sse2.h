/* ================================================================ SSE2 kernels
 * The SSE2 kernel of each family that has one (also the NEON kernels: SIMDe runs
 * these intrinsics on native NEON), then the SSSE3 VARINT decoder and the SSE4.2 CRC32C. In
 * order: the dither round, bucket statistics, error feedback, quantization, packing, block
 * decoding, Elias sizing, two-means, table schemes, shared-scale levels, the sparsifiers' scan,
 * fp16/bf16 conversions, the 32-way rANS chunk decoder. */
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
/* ---- the dither round: dq__draw32 on 4 lanes, the one SSE2 spelling of the generator
 * (doc/FORMAT.md 7.2). idx holds the counters, k0 and k1 the keys in every lane; with hoisted,
 * k0 is dq__draw_hoist's key and the first xorshift is left out. The 24-bit draw is the result
 * >> 8. */
static inline simde__m128i dq__draw__sse2(simde__m128i idx, simde__m128i k0, simde__m128i k1, int hoisted) {
    simde__m128i x = simde_mm_xor_si128(idx, k0);
    if (!hoisted) x = simde_mm_xor_si128(x, simde_mm_srli_epi32(x, 16));
    x = dq__mullo__sse2(x, simde_mm_set1_epi32((int32_t)0x7FEB352D));
    x = simde_mm_xor_si128(x, simde_mm_xor_si128(simde_mm_srli_epi32(x, 15), k1));
    x = dq__mullo__sse2(x, simde_mm_set1_epi32((int32_t)0x846CA68B));
    return simde_mm_xor_si128(x, simde_mm_srli_epi32(x, 16));
}

/* Statistics of x (or x + e) over one bucket; computes only what the norm needs (`what` is
 * one of DQ__ST_*; other masks go to the scalar reference). 16 double lanes as in the scalar twin:
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
    const simde__m128i one = simde_mm_set1_epi32(1), k1 = simde_mm_set1_epi32((int32_t)q->k1h);
    const simde__m128i lane = simde_mm_loadu_si128((const simde__m128i *)dq__lane_ids);
    const simde__m128i shs = simde_mm_cvtsi32_si128((int)q->bits - 1);
    const simde__m128 inv = simde_mm_set1_ps(q->inv), smax = simde_mm_set1_ps(q->smax), step = simde_mm_set1_ps(q->step);
    const simde__m128 neg = simde_mm_set1_ps(q->neg);
    const simde__m128 half = simde_mm_set1_ps(0.5f), ulp24 = simde_mm_set1_ps(5.96046448e-08f);
    const int stoch = q->thresh < 0.0f;
    uint32_t k0h;
    const int hoisted = dq__draw_hoist(q->k0, q->lo, cnt, &k0h);
    const simde__m128i k0 = simde_mm_set1_epi32((int32_t)k0h);
    size_t i = 0;
    dq__qctx rest;
    for (; i + 4 <= cnt; i += 4) {
        simde__m128 xv = simde_mm_loadu_ps(x + i), t, v = simde_mm_setzero_ps();
        simde__m128i xb = simde_mm_castps_si128(xv), code;
        if (stoch) {
            simde__m128i h = simde_mm_add_epi32(simde_mm_set1_epi32((int32_t)(q->lo + (uint32_t)i)), lane);
            t = simde_mm_mul_ps(simde_mm_cvtepi32_ps(simde_mm_srli_epi32(dq__draw__sse2(h, k0, k1, hoisted), 8)), ulp24);
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
        return simde_mm_mul_ps(simde_mm_cvtepi32_ps(simde_mm_srli_epi32(dq__draw__sse2(h, c->k0, c->k1, 0), 8)), c->ulp24);
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

/* ---- shared-scale levels (twin: dq__shared_q__scalar): 4 lanes */
static inline void dq__shared_q__sse2(const float *x, float *r, size_t cnt, size_t i0, float inv, float unit,
                                      uint32_t k0, uint32_t k1h, int stoch, int32_t *lv) {
    const simde__m128 vinv = simde_mm_set1_ps(inv), vunit = simde_mm_set1_ps(unit);
    const simde__m128 two24 = simde_mm_set1_ps(16777216.0f), half = simde_mm_set1_ps(0.5f);
    const simde__m128i absm = simde_mm_set1_epi32(0x7FFFFFFF), K0 = simde_mm_set1_epi32((int32_t)k0);
    const simde__m128i K1 = simde_mm_set1_epi32((int32_t)k1h), four = simde_mm_set1_epi32(4);
    simde__m128i idx = simde_mm_add_epi32(simde_mm_set1_epi32((int32_t)(uint32_t)i0), simde_mm_setr_epi32(0, 1, 2, 3));
    size_t j = 0;
    for (; j + 4u <= cnt; j += 4u) {
        simde__m128 v = simde_mm_loadu_ps(x + j), t, f, up;
        simde__m128i bits, lo, s;
        if (r) v = simde_mm_add_ps(v, simde_mm_loadu_ps(r + j));
        bits = simde_mm_castps_si128(v);
        t = simde_mm_mul_ps(simde_mm_castsi128_ps(simde_mm_and_si128(bits, absm)), vinv);
        lo = simde_mm_cvttps_epi32(t);
        f = simde_mm_sub_ps(t, simde_mm_cvtepi32_ps(lo));
        up = stoch ? simde_mm_cmplt_ps(simde_mm_cvtepi32_ps(simde_mm_srli_epi32(dq__draw__sse2(idx, K0, K1, 0), 8)),
                                       simde_mm_mul_ps(f, two24))
                   : simde_mm_cmpgt_ps(f, half);
        lo = simde_mm_sub_epi32(lo, simde_mm_castps_si128(up)); /* the mask is -1 where rounding up */
        s = simde_mm_srai_epi32(bits, 31);
        lo = simde_mm_sub_epi32(simde_mm_xor_si128(lo, s), s);
        simde_mm_storeu_si128((simde__m128i *)(void *)(lv + j), lo);
        if (r) simde_mm_storeu_ps(r + j, simde_mm_sub_ps(v, simde_mm_mul_ps(simde_mm_cvtepi32_ps(lo), vunit)));
        idx = simde_mm_add_epi32(idx, four);
    }
    if (j < cnt) dq__shared_q__scalar(x + j, r ? r + j : NULL, cnt - j, i0 + j, inv, unit, k0, k1h, stoch, lv + j);
}

/* ---- the sparsifiers' scan (twin: dq__sp_mask64__scalar). c = x (+ e) is one float add per
 * element, identical in every width; the key test key >= lo is a signed 32-bit compare
 * key > lo - 1, exact because keys are <= 0x7FFFFFFF and lo <= 0x7F800000. The 64 compares are
 * ORed first and the mask is built only when one is set (rare: the passes look for the top of
 * the vector). */
static inline uint64_t dq__sp_mask64__sse2(const float *x, const float *e, float *eo, uint32_t lo) {
    const simde__m128i abs = simde_mm_set1_epi32(0x7FFFFFFF), lim = simde_mm_set1_epi32((int32_t)lo - 1);
    simde__m128i any = simde_mm_setzero_si128();
    uint64_t m = 0;
    unsigned v;
    for (v = 0; v < 16u; v++) { /* mostly nothing reaches lo: one test for the 64 */
        simde__m128 c = simde_mm_loadu_ps(x + 4u * v);
        if (e) c = simde_mm_add_ps(c, simde_mm_loadu_ps(e + 4u * v));
        if (eo) simde_mm_storeu_ps(eo + 4u * v, c);
        any = simde_mm_or_si128(any, simde_mm_cmpgt_epi32(simde_mm_and_si128(simde_mm_castps_si128(c), abs), lim));
    }
    if (simde_mm_movemask_epi8(any) == 0) return 0;
    for (v = 0; v < 16u; v++) {
        simde__m128 c = eo ? simde_mm_loadu_ps(eo + 4u * v) : simde_mm_loadu_ps(x + 4u * v);
        simde__m128i gt;
        if (e && !eo) c = simde_mm_add_ps(c, simde_mm_loadu_ps(e + 4u * v));
        gt = simde_mm_cmpgt_epi32(simde_mm_and_si128(simde_mm_castps_si128(c), abs), lim);
        m |= (uint64_t)(uint32_t)simde_mm_movemask_ps(simde_mm_castsi128_ps(gt)) << (4u * v);
    }
    return m;
}

/* ---- fp16 and bf16 conversions (twins: dq__f16_to_f32__scalar, dq__f32_to_f16__scalar,
 * dq__bf16_to_f32__scalar, dq__f32_to_bf16__scalar), integer operations plus exact
 * int-to-float conversions, and the carried statistics of the typed codec (dq__hstat_acc).
 *   fp16 -> f32  exact; NaN: quiet bit set, sign and payload kept (payload << 13).
 *   f32 -> fp16  round to nearest even; overflow (|x| >= 65520) gives Inf; NaN: quiet bit set,
 *                sign and the top 10 payload bits kept. This is what F16C's vcvtps2ph/vcvtph2ps
 *                do with the immediate rounding mode 0, so the F16C kernels are twins too.
 *   bf16 -> f32  exact (h << 16); NaN: quiet bit set.
 *   f32 -> bf16  round to nearest even on the bit pattern; NaN: quiet bit set, top 7 payload bits.
 * Rounding-mode note: the one floating-point operation whose result depends on the rounding mode
 * is the subnormal-half branch of f32 -> fp16 (|x| < 2^-14 is rounded by adding 0.5f, whose ulp
 * is 2^-24); dqsgd requires the default environment (round to nearest) anyway. DAZ/FTZ do not
 * change any result here: the only float inputs that DAZ would zero round to a zero half. */
/* 4 halves, zero-extended to 32-bit lanes, to 4 floats. */
static inline simde__m128 dq__h2f__sse2(simde__m128i w) {
    const simde__m128i a = simde_mm_and_si128(w, simde_mm_set1_epi32(0x7FFF));
    const simde__m128i sgn = simde_mm_slli_epi32(simde_mm_xor_si128(w, a), 16);
    /* normal: rebias the exponent; subnormal: a * 2^-24, exact from the integer a */
    const simde__m128i nrm = simde_mm_add_epi32(simde_mm_slli_epi32(a, 13), simde_mm_set1_epi32(0x38000000));
    const simde__m128i sub =
        simde_mm_castps_si128(simde_mm_mul_ps(simde_mm_cvtepi32_ps(a), simde_mm_set1_ps(5.96046448e-08f)));
    const simde__m128i issub = simde_mm_cmplt_epi32(a, simde_mm_set1_epi32(0x0400));
    simde__m128i r = simde_mm_or_si128(simde_mm_and_si128(issub, sub), simde_mm_andnot_si128(issub, nrm));
    /* Inf / NaN: exponent 0x8F + 0x70 = 0xFF; NaN: quiet bit */
    r = simde_mm_add_epi32(r, simde_mm_and_si128(simde_mm_cmpgt_epi32(a, simde_mm_set1_epi32(0x7BFF)),
                                                 simde_mm_set1_epi32(0x38000000)));
    r = simde_mm_or_si128(r, simde_mm_and_si128(simde_mm_cmpgt_epi32(a, simde_mm_set1_epi32(0x7C00)),
                                                simde_mm_set1_epi32(0x00400000)));
    return simde_mm_castsi128_ps(simde_mm_or_si128(r, sgn));
}
/* 4 floats to 4 halves, each sign-extended to its 32-bit lane (so packs_epi32 is exact). */
static inline simde__m128i dq__f2h__sse2(simde__m128 v) {
    const simde__m128i u = simde_mm_castps_si128(v);
    const simde__m128i a = simde_mm_and_si128(u, simde_mm_set1_epi32(0x7FFFFFFF));
    const simde__m128i sgn = simde_mm_and_si128(simde_mm_srai_epi32(u, 31), simde_mm_set1_epi32((int32_t)0xFFFF8000u));
    /* normal halves: rebias, then round to nearest even at bit 13 */
    const simde__m128i t = simde_mm_sub_epi32(a, simde_mm_set1_epi32(0x38000000));
    const simde__m128i odd = simde_mm_and_si128(simde_mm_srli_epi32(t, 13), simde_mm_set1_epi32(1));
    const simde__m128i nrm =
        simde_mm_srli_epi32(simde_mm_add_epi32(simde_mm_add_epi32(t, simde_mm_set1_epi32(0x0FFF)), odd), 13);
    /* subnormal halves (|x| < 2^-14): |x| + 0.5 rounds |x| to a multiple of 2^-24 */
    const simde__m128i sub = simde_mm_sub_epi32(
        simde_mm_castps_si128(simde_mm_add_ps(simde_mm_castsi128_ps(a), simde_mm_set1_ps(0.5f))),
        simde_mm_set1_epi32(0x3F000000));
    const simde__m128i isn = simde_mm_cmpgt_epi32(a, simde_mm_set1_epi32(0x387FFFFF));
    const simde__m128i inf = simde_mm_cmpgt_epi32(a, simde_mm_set1_epi32(0x477FEFFF));
    const simde__m128i nan = simde_mm_cmpgt_epi32(a, simde_mm_set1_epi32(0x7F800000));
    simde__m128i h = simde_mm_or_si128(simde_mm_and_si128(isn, nrm), simde_mm_andnot_si128(isn, sub));
    h = simde_mm_or_si128(simde_mm_andnot_si128(inf, h), simde_mm_and_si128(inf, simde_mm_set1_epi32(0x7C00)));
    h = simde_mm_or_si128(h, simde_mm_and_si128(nan, simde_mm_or_si128(simde_mm_and_si128(simde_mm_srli_epi32(a, 13),
                                                                                        simde_mm_set1_epi32(0x03FF)),
                                                                       simde_mm_set1_epi32(0x0200))));
    return simde_mm_or_si128(h, sgn);
}
/* 4 bf16 in the high halves of 32-bit lanes (low halves zero) to 4 floats. */
static inline simde__m128 dq__b2f__sse2(simde__m128i w) {
    const simde__m128i nan = simde_mm_cmpgt_epi32(simde_mm_and_si128(w, simde_mm_set1_epi32(0x7FFFFFFF)),
                                                  simde_mm_set1_epi32(0x7F800000));
    return simde_mm_castsi128_ps(simde_mm_or_si128(w, simde_mm_and_si128(nan, simde_mm_set1_epi32(0x00400000))));
}
/* 4 floats to 4 bf16, sign-extended in their 32-bit lanes. */
static inline simde__m128i dq__f2b__sse2(simde__m128 v) {
    const simde__m128i u = simde_mm_castps_si128(v);
    const simde__m128i nan = simde_mm_cmpgt_epi32(simde_mm_and_si128(u, simde_mm_set1_epi32(0x7FFFFFFF)),
                                                  simde_mm_set1_epi32(0x7F800000));
    const simde__m128i odd = simde_mm_and_si128(simde_mm_srli_epi32(u, 16), simde_mm_set1_epi32(1));
    const simde__m128i rnd = simde_mm_add_epi32(u, simde_mm_add_epi32(odd, simde_mm_set1_epi32(0x7FFF)));
    const simde__m128i qn = simde_mm_or_si128(u, simde_mm_set1_epi32(0x00400000));
    return simde_mm_srai_epi32(simde_mm_or_si128(simde_mm_and_si128(nan, qn), simde_mm_andnot_si128(nan, rnd)), 16);
}

static inline void dq__f16_to_f32__sse2(const void *src, float *dst, size_t n) {
    const uint8_t *s = (const uint8_t *)src;
    const simde__m128i zero = simde_mm_setzero_si128();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        simde__m128i h = simde_mm_loadu_si128((const simde__m128i *)(s + 2u * i));
        simde_mm_storeu_ps(dst + i, dq__h2f__sse2(simde_mm_unpacklo_epi16(h, zero)));
        simde_mm_storeu_ps(dst + i + 4, dq__h2f__sse2(simde_mm_unpackhi_epi16(h, zero)));
    }
    dq__f16_to_f32__scalar(s + 2u * i, dst + i, n - i);
}
static inline void dq__f32_to_f16__sse2(const float *src, void *dst, size_t n) {
    uint8_t *d = (uint8_t *)dst;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        simde__m128i h0 = dq__f2h__sse2(simde_mm_loadu_ps(src + i)), h1 = dq__f2h__sse2(simde_mm_loadu_ps(src + i + 4));
        simde_mm_storeu_si128((simde__m128i *)(d + 2u * i), simde_mm_packs_epi32(h0, h1));
    }
    dq__f32_to_f16__scalar(src + i, d + 2u * i, n - i);
}
static inline void dq__bf16_to_f32__sse2(const void *src, float *dst, size_t n) {
    const uint8_t *s = (const uint8_t *)src;
    const simde__m128i zero = simde_mm_setzero_si128();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        simde__m128i h = simde_mm_loadu_si128((const simde__m128i *)(s + 2u * i));
        simde_mm_storeu_ps(dst + i, dq__b2f__sse2(simde_mm_unpacklo_epi16(zero, h)));
        simde_mm_storeu_ps(dst + i + 4, dq__b2f__sse2(simde_mm_unpackhi_epi16(zero, h)));
    }
    dq__bf16_to_f32__scalar(s + 2u * i, dst + i, n - i);
}
static inline void dq__f32_to_bf16__sse2(const float *src, void *dst, size_t n) {
    uint8_t *d = (uint8_t *)dst;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        simde__m128i h0 = dq__f2b__sse2(simde_mm_loadu_ps(src + i)), h1 = dq__f2b__sse2(simde_mm_loadu_ps(src + i + 4));
        simde_mm_storeu_si128((simde__m128i *)(d + 2u * i), simde_mm_packs_epi32(h0, h1));
    }
    dq__f32_to_bf16__scalar(src + i, d + 2u * i, n - i);
}

/* Carried statistics (twin: dq__hstat_acc__scalar), 16 elements a step into 8 registers of 2
 * double lanes, as dq__stats__sse2 does; the tail continues in the scalar twin. */
static inline void dq__hstat_acc__sse2(const float *x, const float *e, size_t n, unsigned what, double *sq, double *ab,
                                       uint32_t *mx) {
    const simde__m128i absm = simde_mm_set1_epi32(0x7FFFFFFF);
    simde__m128d qs[8], qa[8];
    simde__m128i m = simde_mm_setzero_si128();
    uint32_t m4[4];
    size_t i = 0;
    unsigned k;
    for (k = 0; k < 8; k++) {
        qs[k] = simde_mm_loadu_pd(sq + 2 * k);
        qa[k] = simde_mm_loadu_pd(ab + 2 * k);
    }
    for (; i + 16 <= n; i += 16) {
        for (k = 0; k < 4; k++) { /* 4 floats -> lanes 4k .. 4k+3 */
            simde__m128 v = simde_mm_loadu_ps(x + i + 4 * k);
            simde__m128i u;
            if (e) v = simde_mm_add_ps(v, simde_mm_loadu_ps(e + i + 4 * k));
            u = simde_mm_and_si128(simde_mm_castps_si128(v), absm);
            if (what & DQ__ST_MAX) { /* |x| bits fit in 31 bits: the signed compare orders them */
                simde__m128i g = simde_mm_cmpgt_epi32(u, m);
                m = simde_mm_or_si128(simde_mm_and_si128(g, u), simde_mm_andnot_si128(g, m));
            }
            if (what & (DQ__ST_SQ | DQ__ST_ABS)) {
                simde__m128 f = simde_mm_castsi128_ps(u);
                simde__m128d d0 = simde_mm_cvtps_pd(f), d1 = simde_mm_cvtps_pd(simde_mm_movehl_ps(f, f));
                if (what & DQ__ST_ABS) {
                    qa[2 * k] = simde_mm_add_pd(qa[2 * k], d0);
                    qa[2 * k + 1] = simde_mm_add_pd(qa[2 * k + 1], d1);
                }
                if (what & DQ__ST_SQ) {
                    qs[2 * k] = simde_mm_add_pd(qs[2 * k], simde_mm_mul_pd(d0, d0));
                    qs[2 * k + 1] = simde_mm_add_pd(qs[2 * k + 1], simde_mm_mul_pd(d1, d1));
                }
            }
        }
    }
    for (k = 0; k < 8; k++) {
        if (what & DQ__ST_SQ) simde_mm_storeu_pd(sq + 2 * k, qs[k]);
        if (what & DQ__ST_ABS) simde_mm_storeu_pd(ab + 2 * k, qa[k]);
    }
    simde_mm_storeu_si128((simde__m128i *)m4, m);
    if (what & DQ__ST_MAX)
        for (k = 0; k < 4; k++)
            if (m4[k] > *mx) *mx = m4[k];
    dq__hstat_acc__scalar(x + i, e ? e + i : NULL, n - i, what, sq, ab, mx);
}

/* ---- 32-way rANS chunks (coder 3)
 * Twins of dq__r32_get__scalar and dq__r32_encode__scalar. The 32 states are 8 SSE2
 * vectors or 4 AVX2 vectors; a group of 32 symbols is one step of every state. A decoder group
 * reads at most 32 words (64 bytes) and an encoder group writes at most 64 bytes, so the vector
 * loops run while that much is left and hand the rest (and any group a call starts or ends in
 * the middle of) to the scalar twin, which carries the same state: the bytes out are the same
 * for every input, corrupt or not. Renormalization moves the words of the lanes that need one,
 * in increasing lane order: the decoder expands consecutive words into those lanes, the encoder
 * compresses those lanes' low halves into consecutive words, with these tables:
 *   dq__r32_exp8[m]: for lane i (3 bits at 3i) the rank of i among the set bits of m below i;
 *   dq__r32_cmp8[m]: right-justified compress: position p (3 bits at 3p) takes lane number
 *                    k-th set bit of m, k = p - (8 - popcount m), for p >= 8 - popcount m;
 *   dq__r32_pop8[m]: popcount of m. */
static const uint32_t dq__r32_exp8[128] = { /* bit 7 of m is below no lane: index m & 127 */
    0x000000u, 0x249248u, 0x249240u, 0x492488u, 0x249200u, 0x492448u, 0x492440u, 0x6DB688u,
    0x249000u, 0x492248u, 0x492240u, 0x6DB488u, 0x492200u, 0x6DB448u, 0x6DB440u, 0x924688u,
    0x248000u, 0x491248u, 0x491240u, 0x6DA488u, 0x491200u, 0x6DA448u, 0x6DA440u, 0x923688u,
    0x491000u, 0x6DA248u, 0x6DA240u, 0x923488u, 0x6DA200u, 0x923448u, 0x923440u, 0xB6C688u,
    0x240000u, 0x489248u, 0x489240u, 0x6D2488u, 0x489200u, 0x6D2448u, 0x6D2440u, 0x91B688u,
    0x489000u, 0x6D2248u, 0x6D2240u, 0x91B488u, 0x6D2200u, 0x91B448u, 0x91B440u, 0xB64688u,
    0x488000u, 0x6D1248u, 0x6D1240u, 0x91A488u, 0x6D1200u, 0x91A448u, 0x91A440u, 0xB63688u,
    0x6D1000u, 0x91A248u, 0x91A240u, 0xB63488u, 0x91A200u, 0xB63448u, 0xB63440u, 0xDAC688u,
    0x200000u, 0x449248u, 0x449240u, 0x692488u, 0x449200u, 0x692448u, 0x692440u, 0x8DB688u,
    0x449000u, 0x692248u, 0x692240u, 0x8DB488u, 0x692200u, 0x8DB448u, 0x8DB440u, 0xB24688u,
    0x448000u, 0x691248u, 0x691240u, 0x8DA488u, 0x691200u, 0x8DA448u, 0x8DA440u, 0xB23688u,
    0x691000u, 0x8DA248u, 0x8DA240u, 0xB23488u, 0x8DA200u, 0xB23448u, 0xB23440u, 0xD6C688u,
    0x440000u, 0x689248u, 0x689240u, 0x8D2488u, 0x689200u, 0x8D2448u, 0x8D2440u, 0xB1B688u,
    0x689000u, 0x8D2248u, 0x8D2240u, 0xB1B488u, 0x8D2200u, 0xB1B448u, 0xB1B440u, 0xD64688u,
    0x688000u, 0x8D1248u, 0x8D1240u, 0xB1A488u, 0x8D1200u, 0xB1A448u, 0xB1A440u, 0xD63688u,
    0x8D1000u, 0xB1A248u, 0xB1A240u, 0xD63488u, 0xB1A200u, 0xD63448u, 0xD63440u, 0xFAC688u,
};
static const uint8_t dq__r32_pop8[256] = {
    0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 1, 2, 2, 3, 2, 3, 3, 4, 2, 3, 3, 4, 3, 4, 4, 5,
    1, 2, 2, 3, 2, 3, 3, 4, 2, 3, 3, 4, 3, 4, 4, 5, 2, 3, 3, 4, 3, 4, 4, 5, 3, 4, 4, 5, 4, 5, 5, 6,
    1, 2, 2, 3, 2, 3, 3, 4, 2, 3, 3, 4, 3, 4, 4, 5, 2, 3, 3, 4, 3, 4, 4, 5, 3, 4, 4, 5, 4, 5, 5, 6,
    2, 3, 3, 4, 3, 4, 4, 5, 3, 4, 4, 5, 4, 5, 5, 6, 3, 4, 4, 5, 4, 5, 5, 6, 4, 5, 5, 6, 5, 6, 6, 7,
    1, 2, 2, 3, 2, 3, 3, 4, 2, 3, 3, 4, 3, 4, 4, 5, 2, 3, 3, 4, 3, 4, 4, 5, 3, 4, 4, 5, 4, 5, 5, 6,
    2, 3, 3, 4, 3, 4, 4, 5, 3, 4, 4, 5, 4, 5, 5, 6, 3, 4, 4, 5, 4, 5, 5, 6, 4, 5, 5, 6, 5, 6, 6, 7,
    2, 3, 3, 4, 3, 4, 4, 5, 3, 4, 4, 5, 4, 5, 5, 6, 3, 4, 4, 5, 4, 5, 5, 6, 4, 5, 5, 6, 5, 6, 6, 7,
    3, 4, 4, 5, 4, 5, 5, 6, 4, 5, 5, 6, 5, 6, 6, 7, 4, 5, 5, 6, 5, 6, 6, 7, 5, 6, 6, 7, 6, 7, 7, 8,
};

/* 4 lanes: x = f (x >> 12) + bias from the table entries, then the renormalization of the
 * lanes that fell below 2^16 (words loaded one per lane at their rank; in the vector loop at
 * least 8 bytes are readable past p). Returns the symbols in the low byte of each lane. */
static inline simde__m128i dq__r32_step__sse2(simde__m128i *xp, const uint32_t *tab, const uint8_t **pp) {
    const simde__m128i m12 = simde_mm_set1_epi32(0xFFF), zero = simde_mm_setzero_si128();
    simde__m128i x = *xp, e, f, need, wv;
    uint32_t sl[4], r;
    const uint8_t *p = *pp;
    unsigned mask;
    simde_mm_storeu_si128((simde__m128i *)sl, simde_mm_and_si128(x, m12));
    e = simde_mm_setr_epi32((int32_t)tab[sl[0]], (int32_t)tab[sl[1]], (int32_t)tab[sl[2]], (int32_t)tab[sl[3]]);
    f = simde_mm_add_epi32(simde_mm_and_si128(simde_mm_srli_epi32(e, 8), m12), simde_mm_set1_epi32(1));
    x = dq__mullo__sse2(f, simde_mm_srli_epi32(x, 12));
    x = simde_mm_add_epi32(x, simde_mm_srli_epi32(e, 20));
    need = simde_mm_cmpeq_epi32(simde_mm_srli_epi32(x, 16), zero);
    mask = (unsigned)simde_mm_movemask_ps(simde_mm_castsi128_ps(need));
    r = dq__r32_exp8[mask & 127u];
    wv = simde_mm_setr_epi32((int32_t)dq__ld16(p + 2u * (r & 7u)), (int32_t)dq__ld16(p + 2u * (r >> 3 & 7u)),
                             (int32_t)dq__ld16(p + 2u * (r >> 6 & 7u)), (int32_t)dq__ld16(p + 2u * (r >> 9 & 7u)));
    wv = simde_mm_or_si128(simde_mm_slli_epi32(x, 16), wv);
    *xp = simde_mm_or_si128(simde_mm_and_si128(need, wv), simde_mm_andnot_si128(need, x));
    *pp = p + 2u * dq__r32_pop8[mask];
    return simde_mm_and_si128(e, simde_mm_set1_epi32(0xFF));
}
static inline void dq__r32_get__sse2(dq__r32_dec *d, const uint32_t *tab, uint8_t *out, size_t cnt) {
    size_t i = 0, head = (DQ__R32_WAYS - d->j % DQ__R32_WAYS) % DQ__R32_WAYS;
    if (head) {
        i = head < cnt ? head : cnt;
        dq__r32_get__scalar(d, tab, out, i);
    }
    if (cnt - i >= DQ__R32_WAYS && d->end - d->p >= 64) {
        simde__m128i x[8], s[8];
        const uint8_t *p = d->p;
        size_t i0 = i;
        unsigned k;
        for (k = 0; k < 8; k++) x[k] = simde_mm_loadu_si128((const simde__m128i *)(d->x + 4u * k));
        for (; cnt - i >= DQ__R32_WAYS && d->end - p >= 64; i += DQ__R32_WAYS) {
            for (k = 0; k < 8; k++) s[k] = dq__r32_step__sse2(x + k, tab, &p);
            for (k = 0; k < 2; k++) {
                simde__m128i a = simde_mm_packs_epi32(s[4 * k], s[4 * k + 1]);
                simde__m128i b = simde_mm_packs_epi32(s[4 * k + 2], s[4 * k + 3]);
                simde_mm_storeu_si128((simde__m128i *)(out + i + 16u * k), simde_mm_packus_epi16(a, b));
            }
        }
        for (k = 0; k < 8; k++) simde_mm_storeu_si128((simde__m128i *)(d->x + 4u * k), x[k]);
        d->p = p;
        d->j += i - i0;
    }
    dq__r32_get__scalar(d, tab, out + i, cnt - i);
}
#endif /* SSE2 */

/* ================================================================ SSSE3: the VARINT index decoder
 * (twin: dq__svb_decode__scalar), where the byte shuffle is native: x86 with SSSE3, and NEON
 * (one table lookup). */
#if DQ__HAS_SSSE3_KERNELS
/* Four values a control byte: the byte's two nibbles each describe two values. For a nibble
 * q (lengths (q & 3) + 1 and (q >> 2) + 1) nib[q] holds the 8 shuffle indices that spread
 * their bytes over two 32-bit lanes (0x80: zero); the high nibble's indices are shifted by
 * the low nibble's byte count (0x80 + 8 keeps the zeroing bit). least[q]: each lane's
 * smallest value for its length, XOR 2^31 (for a signed compare). Full groups run while 16
 * data bytes remain readable; the rest, and the k % 4 tail, go to the scalar twin. */
static inline void dq__svb_decode__ssse3(const uint8_t *ctrl, const uint8_t *data, size_t data_len, size_t k,
                                         uint32_t *out, dq__svb_acc *a) {
    static const uint64_t nib[16] = {
        0x8080800180808000u, 0x8080800280800100u, 0x8080800380020100u, 0x8080800403020100u,
        0x8080020180808000u, 0x8080030280800100u, 0x8080040380020100u, 0x8080050403020100u,
        0x8003020180808000u, 0x8004030280800100u, 0x8005040380020100u, 0x8006050403020100u,
        0x0403020180808000u, 0x0504030280800100u, 0x0605040380020100u, 0x0706050403020100u};
    static const uint64_t least[16] = {
        0x8000000080000000u, 0x8000000080000100u, 0x8000000080010000u, 0x8000000081000000u,
        0x8000010080000000u, 0x8000010080000100u, 0x8000010080010000u, 0x8000010081000000u,
        0x8001000080000000u, 0x8001000080000100u, 0x8001000080010000u, 0x8001000081000000u,
        0x8100000080000000u, 0x8100000080000100u, 0x8100000080010000u, 0x8100000081000000u};
    const simde__m128i zero = simde_mm_setzero_si128(), one = simde_mm_set1_epi32(1);
    const simde__m128i sign = simde_mm_set1_epi32(INT32_MIN);
    simde__m128i prev = simde_mm_set1_epi32((int32_t)a->prev), bad = zero, s0 = zero, s1 = zero;
    uint64_t sums[4];
    size_t g = 0, groups = k / 4u, pos = 0;
    for (; g < groups && data_len - pos >= 16; g++) {
        unsigned c = ctrl[g], lo = c & 15u, hi = c >> 4, nlo = (lo & 3u) + (lo >> 2) + 2u;
        uint64_t mhi = nib[hi] + nlo * 0x0101010101010101u;
        simde__m128i m = simde_mm_set_epi64x((int64_t)mhi, (int64_t)nib[lo]);
        simde__m128i v = simde_mm_shuffle_epi8(simde_mm_loadu_si128((const simde__m128i *)(data + pos)), m);
        simde__m128i mn = simde_mm_set_epi64x((int64_t)least[hi], (int64_t)least[lo]);
        bad = simde_mm_or_si128(bad, simde_mm_cmpgt_epi32(mn, simde_mm_xor_si128(v, sign)));
        s0 = simde_mm_add_epi64(s0, simde_mm_unpacklo_epi32(v, zero));
        s1 = simde_mm_add_epi64(s1, simde_mm_unpackhi_epi32(v, zero));
        pos += nlo + (hi & 3u) + (hi >> 2) + 2u;
        v = simde_mm_add_epi32(v, one); /* gaps */
        v = simde_mm_add_epi32(v, simde_mm_slli_si128(v, 4));
        v = simde_mm_add_epi32(v, simde_mm_slli_si128(v, 8));
        v = simde_mm_add_epi32(v, prev);
        simde_mm_storeu_si128((simde__m128i *)(out + 4u * g), v);
        prev = simde_mm_shuffle_epi32(v, 0xFF);
    }
    simde_mm_storeu_si128((simde__m128i *)sums, s0);
    simde_mm_storeu_si128((simde__m128i *)(sums + 2), s1);
    a->sum += sums[0] + sums[1] + sums[2] + sums[3];
    a->prev = (uint32_t)simde_mm_cvtsi128_si32(prev);
    a->bad |= (uint32_t)(simde_mm_movemask_epi8(bad) != 0);
    dq__svb_decode__scalar(ctrl + g, data + pos, data_len - pos, k - 4u * g, out + 4u * g, a);
}
#endif /* SSSE3 */

/* ================================================================ SSE4.2: CRC32C
 * (twin: dq__crc32c__scalar) The crc32 instruction computes the raw CRC32C register update;
 * eight bytes at a time in one dependency chain (3-cycle latency) gives about 8 bytes per 3
 * cycles, ample beside the codec. */
#if DQ__HAS_SSE42_KERNELS
static inline uint32_t dq__crc32c__sse42(uint32_t c, const uint8_t *p, size_t n) {
    uint64_t c64 = c, w;
    for (; n >= 8; p += 8, n -= 8) {
        memcpy(&w, p, 8); /* x86 is little-endian: the bytes in memory order */
        c64 = simde_mm_crc32_u64(c64, w);
    }
    c = (uint32_t)c64;
    for (; n; p++, n--) c = simde_mm_crc32_u8(c, *p);
    return c;
}
#endif /* SSE4.2 */
