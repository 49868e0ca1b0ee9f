/* ================================================================ AVX2 kernels
 * The AVX2 kernel of each family that has one, then the F16C fp16 conversions. In
 * order: packing, the dither round, bucket statistics, error feedback, quantization, block
 * decoding, Elias sizing, two-means, table schemes, shared-scale levels, the sparsifiers' scan,
 * count-sketch hashes, fp16/bf16 conversions, the 32-way rANS chunk kernels. */
#if DQ__HAS_AVX2_KERNELS
/* Add one row of 8 codes to the lane accumulator; a full 32-bit word per lane is stored. */
static inline void dq__pack_row__avx2(simde__m256i *acc, unsigned *have, simde__m256i v, unsigned b, uint8_t **out) {
    *acc = simde_mm256_or_si256(*acc, simde_mm256_sll_epi32(v, simde_mm_cvtsi32_si128((int)*have)));
    *have += b;
    if (*have >= 32) {
        simde_mm256_storeu_si256((simde__m256i *)*out, *acc);
        *out += 32;
        *have -= 32;
        *acc = simde_mm256_srl_epi32(v, simde_mm_cvtsi32_si128((int)(b - *have))); /* >= 32 gives 0 */
    }
}

/* ---- the dither round: dq__draw32 on 8 lanes (see dq__draw__sse2) */
static inline simde__m256i dq__draw__avx2(simde__m256i idx, simde__m256i k0, simde__m256i k1, int hoisted) {
    simde__m256i x = simde_mm256_xor_si256(idx, k0);
    if (!hoisted) x = simde_mm256_xor_si256(x, simde_mm256_srli_epi32(x, 16));
    x = simde_mm256_mullo_epi32(x, simde_mm256_set1_epi32((int32_t)0x7FEB352D));
    x = simde_mm256_xor_si256(x, simde_mm256_xor_si256(simde_mm256_srli_epi32(x, 15), k1));
    x = simde_mm256_mullo_epi32(x, simde_mm256_set1_epi32((int32_t)0x846CA68B));
    return simde_mm256_xor_si256(x, simde_mm256_srli_epi32(x, 16));
}

static inline void dq__stats__avx2(const float *x, const float *e, size_t n, unsigned what, dq__stats *st) {
    const simde__m256i absm = simde_mm256_set1_epi32(0x7FFFFFFF);
    simde__m256d q0 = simde_mm256_setzero_pd(), q1 = q0, q2 = q0, q3 = q0;
    simde__m256i mx = simde_mm256_setzero_si256();
    double l16[DQ__SLANES] = {0};
    uint32_t m8[8], mxs = 0;
    size_t i = 0;
    if (what != DQ__ST_SQ && what != DQ__ST_ABS && what != DQ__ST_MAX) {
        dq__stats__scalar(x, e, n, what, st);
        return;
    }
    for (; i + 16 <= n; i += 16) {
        simde__m256 v0 = simde_mm256_loadu_ps(x + i), v1 = simde_mm256_loadu_ps(x + i + 8);
        if (e) {
            v0 = simde_mm256_add_ps(v0, simde_mm256_loadu_ps(e + i));
            v1 = simde_mm256_add_ps(v1, simde_mm256_loadu_ps(e + i + 8));
        }
        if (what == DQ__ST_MAX) {
            mx = simde_mm256_max_epu32(mx, simde_mm256_and_si256(simde_mm256_castps_si256(v0), absm));
            mx = simde_mm256_max_epu32(mx, simde_mm256_and_si256(simde_mm256_castps_si256(v1), absm));
        } else {
            simde__m256d d0, d1, d2, d3;
            /* |x| for the squares too: a NaN keeps its sign through the multiply, and the
             * scalar twin squares |x| (bit-identical statistics even for NaN input) */
            v0 = simde_mm256_castsi256_ps(simde_mm256_and_si256(simde_mm256_castps_si256(v0), absm));
            v1 = simde_mm256_castsi256_ps(simde_mm256_and_si256(simde_mm256_castps_si256(v1), absm));
            d0 = simde_mm256_cvtps_pd(simde_mm256_castps256_ps128(v0)); /* lanes 0..3 */
            d1 = simde_mm256_cvtps_pd(simde_mm256_extractf128_ps(v0, 1)); /* lanes 4..7 */
            d2 = simde_mm256_cvtps_pd(simde_mm256_castps256_ps128(v1)); /* lanes 8..11 */
            d3 = simde_mm256_cvtps_pd(simde_mm256_extractf128_ps(v1, 1)); /* lanes 12..15 */
            if (what == DQ__ST_SQ) {
                d0 = simde_mm256_mul_pd(d0, d0);
                d1 = simde_mm256_mul_pd(d1, d1);
                d2 = simde_mm256_mul_pd(d2, d2);
                d3 = simde_mm256_mul_pd(d3, d3);
            }
            q0 = simde_mm256_add_pd(q0, d0);
            q1 = simde_mm256_add_pd(q1, d1);
            q2 = simde_mm256_add_pd(q2, d2);
            q3 = simde_mm256_add_pd(q3, d3);
        }
    }
    simde_mm256_storeu_pd(l16, q0);
    simde_mm256_storeu_pd(l16 + 4, q1);
    simde_mm256_storeu_pd(l16 + 8, q2);
    simde_mm256_storeu_pd(l16 + 12, q3);
    simde_mm256_storeu_si256((simde__m256i *)m8, mx);
    for (unsigned k = 0; k < 8; k++)
        if (m8[k] > mxs) mxs = m8[k];
    dq__stats_end(x, e, i, n, what, l16, mxs, st);
}

static inline void dq__compensate__avx2(const float *x, float *e, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        simde_mm256_storeu_ps(e + i, simde_mm256_add_ps(simde_mm256_loadu_ps(x + i), simde_mm256_loadu_ps(e + i)));
    dq__compensate__scalar(x + i, e + i, n - i);
}

typedef struct dq__q256 {
    simde__m256i absm, zero, one, k0, k1, lane;
    simde__m256i sbit; /* bit b-1 */
    simde__m128i shs, sgn; /* b-1; 32-b */
    simde__m256 inv, smax, step, neg, half, ulp24;
    int stoch, k0x; /* k0x: k0 holds the hoisted key (dq__draw_hoist) */
    unsigned bits;
} dq__q256;
/* The quantizer constants for the `cnt` elements from index q->lo on. */
static inline void dq__q256_init(dq__q256 *c, const dq__qctx *q, size_t cnt) {
    uint32_t k0h;
    c->k0x = dq__draw_hoist(q->k0, q->lo, cnt, &k0h);
    c->absm = simde_mm256_set1_epi32(0x7FFFFFFF);
    c->zero = simde_mm256_setzero_si256();
    c->one = simde_mm256_set1_epi32(1);
    c->k0 = simde_mm256_set1_epi32((int32_t)k0h);
    c->k1 = simde_mm256_set1_epi32((int32_t)q->k1h);
    c->lane = simde_mm256_loadu_si256((const simde__m256i *)dq__lane_ids);
    c->shs = simde_mm_cvtsi32_si128((int)q->bits - 1);
    c->sgn = simde_mm_cvtsi32_si128(32 - (int)q->bits);
    c->sbit = simde_mm256_set1_epi32((int32_t)(1u << (q->bits - 1)));
    c->inv = simde_mm256_set1_ps(q->inv);
    c->smax = simde_mm256_set1_ps(q->smax);
    c->step = simde_mm256_set1_ps(q->step);
    c->neg = simde_mm256_set1_ps(q->neg);
    c->half = simde_mm256_set1_ps(0.5f);
    c->ulp24 = simde_mm256_set1_ps(5.96046448e-08f);
    c->stoch = q->thresh < 0.0f;
    c->bits = q->bits;
}
/* One row of 8 codes (see dq__q512_codes). */
static inline simde__m256i dq__q256_codes(const dq__q256 *c, const float *x, uint32_t lo, float *res) {
    simde__m256 xv = simde_mm256_loadu_ps(x), t, v = simde_mm256_setzero_ps();
    simde__m256i xb = simde_mm256_castps_si256(xv), code;
    if (c->stoch) {
        simde__m256i h = dq__draw__avx2(simde_mm256_add_epi32(simde_mm256_set1_epi32((int32_t)lo), c->lane), c->k0, c->k1,
                                        c->k0x);
        t = simde_mm256_mul_ps(simde_mm256_cvtepi32_ps(simde_mm256_srli_epi32(h, 8)), c->ulp24);
    } else {
        t = c->half;
    }
    if (c->bits == 1) {
        simde__m256 pp = simde_mm256_add_ps(c->half, simde_mm256_mul_ps(xv, c->inv));
        code = c->stoch ? simde_mm256_andnot_si256(simde_mm256_castps_si256(simde_mm256_cmp_ps(t, pp, SIMDE_CMP_LT_OQ)), c->one)
                        : simde_mm256_srli_epi32(xb, 31);
        if (res) /* code 1 decodes to neg, code 0 to step */
            v = simde_mm256_blendv_ps(c->step, c->neg, simde_mm256_castsi256_ps(simde_mm256_slli_epi32(code, 31)));
    } else {
        simde__m256 r = simde_mm256_min_ps(
            simde_mm256_mul_ps(simde_mm256_castsi256_ps(simde_mm256_and_si256(xb, c->absm)), c->inv), c->smax);
        simde__m256i l = simde_mm256_cvttps_epi32(r), sg;
        simde__m256 f = simde_mm256_sub_ps(r, simde_mm256_cvtepi32_ps(l));
        l = simde_mm256_sub_epi32(l, simde_mm256_castps_si256(simde_mm256_cmp_ps(t, f, SIMDE_CMP_LT_OQ)));
        sg = simde_mm256_andnot_si256(simde_mm256_cmpeq_epi32(l, c->zero), simde_mm256_srli_epi32(xb, 31));
        code = simde_mm256_or_si256(l, simde_mm256_sll_epi32(sg, c->shs));
        if (res) {
            v = simde_mm256_mul_ps(simde_mm256_cvtepi32_ps(l), c->step);
            v = simde_mm256_castsi256_ps(
                simde_mm256_xor_si256(simde_mm256_castps_si256(v), simde_mm256_slli_epi32(sg, 31)));
        }
    }
    if (res) simde_mm256_storeu_ps(res, simde_mm256_sub_ps(xv, v));
    return code;
}

/* dq__q256_codes for stochastic rounding, b >= 2, the hoisted key and no residual; idx holds
 * the low halves of the 8 element indices. The sign goes to bit b-1 by one shift of x and a
 * mask, and psignd (by the level, never negative) clears it where the level is 0. */
static inline simde__m256i dq__q256_codes_sk(const dq__q256 *c, const float *x, simde__m256i idx) {
    simde__m256i xb = simde_mm256_loadu_si256((const simde__m256i *)x), h = dq__draw__avx2(idx, c->k0, c->k1, 1), l;
    simde__m256 r, t, f;
    t = simde_mm256_mul_ps(simde_mm256_cvtepi32_ps(simde_mm256_srli_epi32(h, 8)), c->ulp24);
    r = simde_mm256_min_ps(simde_mm256_mul_ps(simde_mm256_castsi256_ps(simde_mm256_and_si256(xb, c->absm)), c->inv), c->smax);
    l = simde_mm256_cvttps_epi32(r);
    f = simde_mm256_sub_ps(r, simde_mm256_cvtepi32_ps(l));
    l = simde_mm256_sub_epi32(l, simde_mm256_castps_si256(simde_mm256_cmp_ps(t, f, SIMDE_CMP_LT_OQ)));
    return simde_mm256_or_si256(
        l, simde_mm256_sign_epi32(simde_mm256_and_si256(simde_mm256_srl_epi32(xb, c->sgn), c->sbit), l));
}
static inline void dq__quant__avx2(const dq__qctx *q, const float *x, size_t cnt, uint32_t *codes, float *res) {
    dq__q256 c;
    size_t i = 0;
    dq__qctx rest;
    dq__q256_init(&c, q, cnt);
    for (; i + 8 <= cnt; i += 8)
        simde_mm256_storeu_si256((simde__m256i *)(codes + i),
                                 dq__q256_codes(&c, x + i, q->lo + (uint32_t)i, res ? res + i : NULL));
    rest = *q;
    rest.lo = q->lo + (uint32_t)i;
    dq__quant__scalar(&rest, x + i, cnt - i, codes + i, res ? res + i : NULL);
}

static inline void dq__quant_pack__avx2(const dq__qctx *q, const float *x, float *res, uint8_t *out) {
    dq__q256 c;
    simde__m256i acc = simde_mm256_setzero_si256();
    unsigned have = 0, b = q->bits, i;
    dq__q256_init(&c, q, DQ__BLOCK);
    if ((32u % b) == 0) { /* b divides 32: independent words (see dq__quant_pack__avx512) */
        unsigned j, k, per = 32u / b; /* rows per word */
        const simde__m256i sb = simde_mm256_set1_epi32((int)b), eight = simde_mm256_set1_epi32(8);
        for (j = 0, i = 0; j < b; j++, out += 32) {
            simde__m256i w = simde_mm256_setzero_si256(), sh = simde_mm256_setzero_si256();
            if (c.stoch && c.k0x && !res && b >= 2u) { /* the common case, without the tests per vector */
                const dq__q256 cc = c;
                simde__m256i idx = simde_mm256_add_epi32(simde_mm256_set1_epi32((int32_t)(q->lo + i)), cc.lane);
                for (k = 0; k < per; k++, i += 8, sh = simde_mm256_add_epi32(sh, sb), idx = simde_mm256_add_epi32(idx, eight))
                    w = simde_mm256_or_si256(w, simde_mm256_sllv_epi32(dq__q256_codes_sk(&cc, x + i, idx), sh));
            } else {
                for (k = 0; k < per; k++, i += 8, sh = simde_mm256_add_epi32(sh, sb))
                    w = simde_mm256_or_si256(w, simde_mm256_sllv_epi32(dq__q256_codes(&c, x + i, q->lo + i, res ? res + i : NULL), sh));
            }
            simde_mm256_storeu_si256((simde__m256i *)out, w);
        }
        return;
    }
    for (i = 0; i < DQ__BLOCK; i += 8) {
        dq__pack_row__avx2(&acc, &have, dq__q256_codes(&c, x + i, q->lo + i, res ? res + i : NULL), b, &out);
    }
}

static inline void dq__pack_block__avx2(const uint32_t *codes, unsigned b, uint8_t *out) {
    simde__m256i acc = simde_mm256_setzero_si256();
    unsigned have = 0, r;
    for (r = 0; r < DQ__ROWS; r++)
        dq__pack_row__avx2(&acc, &have, simde_mm256_loadu_si256((const simde__m256i *)(codes + 8 * r)), b, &out);
}

/* Whether all 32 row steps have the bits of rowstep[0]. The first and last are compared alone
 * first: a block that spans buckets usually differs there, and its caller stored the steps one
 * by one, which a vector load would wait on (no store forwarding into a wider load). */
static inline int dq__rows_uniform(const float *rowstep) {
    const simde__m256i s0 = simde_mm256_set1_epi32((int32_t)dq__fbits(rowstep[0]));
    simde__m256i d;
    if (dq__fbits(rowstep[DQ__ROWS - 1]) != dq__fbits(rowstep[0])) return 0;
    d = simde_mm256_or_si256(simde_mm256_xor_si256(simde_mm256_loadu_si256((const simde__m256i *)rowstep), s0),
                             simde_mm256_xor_si256(simde_mm256_loadu_si256((const simde__m256i *)(rowstep + 8)), s0));
    d = simde_mm256_or_si256(d, simde_mm256_xor_si256(simde_mm256_loadu_si256((const simde__m256i *)(rowstep + 16)), s0));
    d = simde_mm256_or_si256(d, simde_mm256_xor_si256(simde_mm256_loadu_si256((const simde__m256i *)(rowstep + 24)), s0));
    return simde_mm256_testz_si256(d, d);
}
/* Decoded values of 8 codes, as in the scalar dq__decode_value. */
static inline simde__m256 dq__decode_vals__avx2(simde__m256i v, simde__m256i lmask, simde__m256i lone, simde__m256 stepv,
                                                simde__m128i shs) {
    simde__m256 f = simde_mm256_mul_ps(simde_mm256_cvtepi32_ps(simde_mm256_or_si256(simde_mm256_and_si256(v, lmask), lone)), stepv);
    return simde_mm256_castsi256_ps(
        simde_mm256_xor_si256(simde_mm256_castps_si256(f), simde_mm256_slli_epi32(simde_mm256_srl_epi32(v, shs), 31)));
}
/* b divides 32: row r is at bits (r % (32/b)) * b of word r / (32/b), never split. With equal
 * row steps and b <= 4 the value of a code is a permute of the values of levels 0..7 (the sign
 * bit, at or above bit 3 when b = 4 and ignored by the permute for the level, then xored in;
 * for b <= 3 the table entry already drops it: entry k is the value of level k & lmask). */
static inline void dq__decode_block_p2__avx2(const uint8_t *in, unsigned b, const float *rowstep, float w, int add,
                                             float *out) {
    const simde__m256i lmask = simde_mm256_set1_epi32(b == 1 ? 0 : (int32_t)((1u << (b - 1)) - 1u));
    const simde__m256i lone = simde_mm256_set1_epi32(b == 1 ? 1 : 0);
    const simde__m256i sgnm = simde_mm256_set1_epi32((int32_t)0x80000000u), sb = simde_mm256_set1_epi32((int)b);
    const simde__m128i shs = simde_mm_cvtsi32_si128((int)b - 1), shsg = simde_mm_cvtsi32_si128(32 - (int)b);
    const simde__m256 wv = simde_mm256_set1_ps(w);
    const unsigned per = 32u / b, table = b <= 4u && dq__rows_uniform(rowstep);
    simde__m256 tab = simde_mm256_setzero_ps(), v;
    unsigned j, k, r;
    if (table)
        tab = dq__decode_vals__avx2(simde_mm256_and_si256(simde_mm256_loadu_si256((const simde__m256i *)dq__lane_ids), lmask),
                                    lmask, lone, simde_mm256_set1_ps(rowstep[0]), shs);
    for (j = 0, r = 0; j < b; j++) {
        const simde__m256i word = simde_mm256_loadu_si256((const simde__m256i *)(in + 32u * j));
        simde__m256i sh = simde_mm256_setzero_si256(), code;
        for (k = 0; k < per; k++, r++, sh = simde_mm256_add_epi32(sh, sb)) {
            /* the bits above the code are dropped by lmask, the permute and the sign shifts */
            code = simde_mm256_srlv_epi32(word, sh);
            if (table)
                v = simde_mm256_castsi256_ps(simde_mm256_xor_si256(
                    simde_mm256_castps_si256(simde_mm256_permutevar8x32_ps(tab, code)),
                    simde_mm256_and_si256(simde_mm256_sll_epi32(code, shsg), sgnm)));
            else
                v = dq__decode_vals__avx2(code, lmask, lone, simde_mm256_set1_ps(rowstep[r]), shs);
            if (add) v = simde_mm256_add_ps(simde_mm256_loadu_ps(out + 8 * r), simde_mm256_mul_ps(wv, v));
            simde_mm256_storeu_ps(out + 8 * r, v);
        }
    }
}
static inline void dq__decode_block__avx2(const uint8_t *in, unsigned b, const float *rowstep, float w, int add,
                                          float *out) {
    const simde__m256i mask = simde_mm256_set1_epi32((int32_t)((1u << b) - 1u));
    const simde__m256i lmask = simde_mm256_set1_epi32(b == 1 ? 0 : (int32_t)((1u << (b - 1)) - 1u));
    const simde__m256i lone = simde_mm256_set1_epi32(b == 1 ? 1 : 0);
    const simde__m128i shs = simde_mm_cvtsi32_si128((int)b - 1);
    const simde__m256 wv = simde_mm256_set1_ps(w);
    unsigned r;
    if (32u % b == 0) {
        dq__decode_block_p2__avx2(in, b, rowstep, w, add, out);
        return;
    }
    for (r = 0; r < DQ__ROWS; r++) {
        unsigned off = r * b, j = off >> 5, s = off & 31u;
        const uint8_t *p = in + 32u * j;
        simde__m256i v = simde_mm256_srl_epi32(simde_mm256_loadu_si256((const simde__m256i *)p), simde_mm_cvtsi32_si128((int)s));
        simde__m256 f;
        if (s + b > 32)
            v = simde_mm256_or_si256(v, simde_mm256_sll_epi32(simde_mm256_loadu_si256((const simde__m256i *)(p + 32)),
                                                              simde_mm_cvtsi32_si128((int)(32 - s))));
        v = simde_mm256_and_si256(v, mask);
        f = simde_mm256_mul_ps(simde_mm256_cvtepi32_ps(simde_mm256_or_si256(simde_mm256_and_si256(v, lmask), lone)),
                               simde_mm256_set1_ps(rowstep[r]));
        f = simde_mm256_castsi256_ps(simde_mm256_xor_si256(simde_mm256_castps_si256(f),
                                                           simde_mm256_slli_epi32(simde_mm256_srl_epi32(v, shs), 31)));
        if (add) f = simde_mm256_add_ps(simde_mm256_loadu_ps(out + 8 * r), simde_mm256_mul_ps(wv, f));
        simde_mm256_storeu_ps(out + 8 * r, f);
    }
}

/* Elias sizing scan of a full block (see the SSE2 section). */
static inline uint32_t dq__elias_scan__avx2(const uint8_t *in, unsigned b, const uint8_t *lvt, uint32_t *codes,
                                            uint64_t *nz) {
    const simde__m256i mask = simde_mm256_set1_epi32((int32_t)((1u << b) - 1u));
    const simde__m256i lmask = simde_mm256_set1_epi32((int32_t)((1u << (b - 1u)) - 1u));
    const simde__m256i sgn = simde_mm256_set1_epi32((int32_t)(1u << (b - 1u))), zero = simde_mm256_setzero_si256();
    const simde__m256i e0 = simde_mm256_set1_epi8((char)126);
    simde__m256i acc = zero, bad = zero, tab;
    uint64_t word = 0;
    uint8_t bytab[32];
    uint32_t part[8];
    unsigned r, v;
    /* the bits by level for b <= 5 (a level is its own index), else by bit length */
    for (v = 0; v < 16; v++) {
        unsigned len = 0;
        while (v >> len) len++;
        bytab[v] = bytab[v + 16u] = b <= 5u ? lvt[len] : lvt[v];
    }
    tab = simde_mm256_loadu_si256((const simde__m256i *)bytab);
    for (r = 0; r < DQ__ROWS; r++) {
        unsigned off = r * b, j = off >> 5, s = off & 31u, m;
        const uint8_t *p = in + 32u * j;
        simde__m256i v8 = simde_mm256_srl_epi32(simde_mm256_loadu_si256((const simde__m256i *)p), simde_mm_cvtsi32_si128((int)s));
        simde__m256i l, idx;
        if (s + b > 32)
            v8 = simde_mm256_or_si256(v8, simde_mm256_sll_epi32(simde_mm256_loadu_si256((const simde__m256i *)(p + 32)),
                                                                simde_mm_cvtsi32_si128((int)(32 - s))));
        v8 = simde_mm256_and_si256(v8, mask);
        l = simde_mm256_and_si256(v8, lmask);
        simde_mm256_storeu_si256((simde__m256i *)(codes + 8 * r), v8);
        bad = simde_mm256_or_si256(bad, simde_mm256_cmpeq_epi32(v8, sgn));
        m = (unsigned)simde_mm256_movemask_ps(simde_mm256_castsi256_ps(simde_mm256_cmpeq_epi32(l, zero))) ^ 255u;
        word |= (uint64_t)m << (8u * (r & 7u));
        if ((r & 7u) == 7u) { /* a register, not nz[]: no store-to-load chain from row to row */
            nz[r >> 3] = word;
            word = 0;
        }
        /* b > 5: the bit length from the float exponent, 127 + len - 1, as one byte; 0 for 0 */
        idx = b <= 5u ? l
                      : simde_mm256_subs_epu8(simde_mm256_srli_epi32(simde_mm256_castps_si256(simde_mm256_cvtepi32_ps(l)), 23),
                                              e0);
        acc = simde_mm256_add_epi32(acc, simde_mm256_shuffle_epi8(tab, idx));
    }
    if (simde_mm256_movemask_epi8(bad)) return UINT32_MAX;
    simde_mm256_storeu_si256((simde__m256i *)part, acc);
    return part[0] + part[1] + part[2] + part[3] + part[4] + part[5] + part[6] + part[7];
}

/* The non-zero masks of a full block (dq__elias_nz__scalar). For b in {2, 4, 8} a 32-byte group
 * holds 32 / b whole rows, and ((v & L) + L) & H (L, H: every code's level mask, top bit) sets
 * the top bit of each code with a non-zero level (no carry crosses codes); row k's flags are
 * shifted to the sign bits and taken by movemask. Other b: a row at a time, as the scan. */
static inline void dq__elias_nz__avx2(const uint8_t *in, unsigned b, uint64_t *nz) {
    const simde__m256i zero = simde_mm256_setzero_si256();
    uint32_t lm1 = (1u << (b - 1u)) - 1u;
    uint64_t word = 0;
    unsigned r;
    if (b == 2u || b == 4u || b == 8u) {
        unsigned rpg = 32u / b, j, k;
        uint32_t lm = 0, hb = 0;
        simde__m256i L, H;
        for (k = 0; k < rpg; k++) {
            lm |= lm1 << (k * b);
            hb |= (1u << (b - 1u)) << (k * b);
        }
        L = simde_mm256_set1_epi32((int32_t)lm);
        H = simde_mm256_set1_epi32((int32_t)hb);
        for (j = 0; j < b; j++) {
            simde__m256i v = simde_mm256_loadu_si256((const simde__m256i *)(in + 32u * j));
            v = simde_mm256_and_si256(simde_mm256_add_epi32(simde_mm256_and_si256(v, L), L), H);
            for (k = 0; k < rpg; k++) {
                simde__m256i t = simde_mm256_sll_epi32(v, simde_mm_cvtsi32_si128((int)(32u - b * (k + 1u))));
                r = j * rpg + k;
                word |= (uint64_t)(unsigned)simde_mm256_movemask_ps(simde_mm256_castsi256_ps(t)) << (8u * (r & 7u));
                if ((r & 7u) == 7u) {
                    nz[r >> 3] = word;
                    word = 0;
                }
            }
        }
        return;
    }
    for (r = 0; r < DQ__ROWS; r++) {
        unsigned off = r * b, j = off >> 5, s = off & 31u, m;
        const uint8_t *p = in + 32u * j;
        simde__m256i v = simde_mm256_srl_epi32(simde_mm256_loadu_si256((const simde__m256i *)p), simde_mm_cvtsi32_si128((int)s));
        if (s + b > 32)
            v = simde_mm256_or_si256(v, simde_mm256_sll_epi32(simde_mm256_loadu_si256((const simde__m256i *)(p + 32)),
                                                              simde_mm_cvtsi32_si128((int)(32 - s))));
        v = simde_mm256_and_si256(v, simde_mm256_set1_epi32((int32_t)lm1));
        m = (unsigned)simde_mm256_movemask_ps(simde_mm256_castsi256_ps(simde_mm256_cmpeq_epi32(v, zero))) ^ 255u;
        word |= (uint64_t)m << (8u * (r & 7u));
        if ((r & 7u) == 7u) {
            nz[r >> 3] = word;
            word = 0;
        }
    }
}


/* ---- two-means (see the SSE2 section): statistics in 4 + 4 registers of 4 double lanes, and
 * the block decoder */
static inline void dq__tm_acc__avx2(const float *x, const float *e, size_t n, double *pos, double *neg,
                                    uint64_t *nneg) {
    const simde__m256i absm = simde_mm256_set1_epi32(0x7FFFFFFF);
    simde__m256d qp[4], qn[4];
    uint64_t m = 0;
    size_t i = 0;
    unsigned k;
    for (k = 0; k < 4; k++) {
        qp[k] = simde_mm256_loadu_pd(pos + 4 * k);
        qn[k] = simde_mm256_loadu_pd(neg + 4 * k);
    }
    for (; i + 16 <= n; i += 16) {
        simde__m256 v0 = simde_mm256_loadu_ps(x + i), v1 = simde_mm256_loadu_ps(x + i + 8), f0, f1;
        simde__m256i s0, s1;
        simde__m256d d[4], sg[4];
        if (e) {
            v0 = simde_mm256_add_ps(v0, simde_mm256_loadu_ps(e + i));
            v1 = simde_mm256_add_ps(v1, simde_mm256_loadu_ps(e + i + 8));
        }
        s0 = simde_mm256_srai_epi32(simde_mm256_castps_si256(v0), 31);
        s1 = simde_mm256_srai_epi32(simde_mm256_castps_si256(v1), 31);
        f0 = simde_mm256_castsi256_ps(simde_mm256_and_si256(simde_mm256_castps_si256(v0), absm));
        f1 = simde_mm256_castsi256_ps(simde_mm256_and_si256(simde_mm256_castps_si256(v1), absm));
        d[0] = simde_mm256_cvtps_pd(simde_mm256_castps256_ps128(f0)); /* lanes 0..3 */
        d[1] = simde_mm256_cvtps_pd(simde_mm256_extractf128_ps(f0, 1)); /* lanes 4..7 */
        d[2] = simde_mm256_cvtps_pd(simde_mm256_castps256_ps128(f1)); /* lanes 8..11 */
        d[3] = simde_mm256_cvtps_pd(simde_mm256_extractf128_ps(f1, 1)); /* lanes 12..15 */
        sg[0] = simde_mm256_castsi256_pd(simde_mm256_cvtepi32_epi64(simde_mm256_castsi256_si128(s0)));
        sg[1] = simde_mm256_castsi256_pd(simde_mm256_cvtepi32_epi64(simde_mm256_extracti128_si256(s0, 1)));
        sg[2] = simde_mm256_castsi256_pd(simde_mm256_cvtepi32_epi64(simde_mm256_castsi256_si128(s1)));
        sg[3] = simde_mm256_castsi256_pd(simde_mm256_cvtepi32_epi64(simde_mm256_extracti128_si256(s1, 1)));
        for (k = 0; k < 4; k++) {
            qn[k] = simde_mm256_add_pd(qn[k], simde_mm256_and_pd(sg[k], d[k]));
            qp[k] = simde_mm256_add_pd(qp[k], simde_mm256_andnot_pd(sg[k], d[k]));
        }
        m += dq__popcount32((uint32_t)simde_mm256_movemask_ps(v0) | (uint32_t)simde_mm256_movemask_ps(v1) << 8);
    }
    for (k = 0; k < 4; k++) {
        simde_mm256_storeu_pd(pos + 4 * k, qp[k]);
        simde_mm256_storeu_pd(neg + 4 * k, qn[k]);
    }
    *nneg += m;
    dq__tm_acc__scalar(x + i, e ? e + i : NULL, n - i, pos, neg, nneg);
}
static inline void dq__decode_block_tm__avx2(const uint8_t *in, const float *rowpos, const float *rowneg, float w,
                                             int add, float *out) {
    const simde__m256i wd = simde_mm256_loadu_si256((const simde__m256i *)in);
    const simde__m256 wv = simde_mm256_set1_ps(w);
    unsigned r;
    for (r = 0; r < DQ__ROWS; r++) { /* bit r of each lane word to the sign bit: blendv's selector */
        simde__m256 sel = simde_mm256_castsi256_ps(simde_mm256_sll_epi32(wd, simde_mm_cvtsi32_si128((int)(31u - r))));
        simde__m256 f = simde_mm256_blendv_ps(simde_mm256_set1_ps(rowpos[r]), simde_mm256_set1_ps(rowneg[r]), sel);
        if (add) f = simde_mm256_add_ps(simde_mm256_loadu_ps(out + 8 * r), simde_mm256_mul_ps(wv, f));
        simde_mm256_storeu_ps(out + 8 * r, f);
    }
}

/* ---- table schemes (see the SSE2 section for the method and the exactness argument) */
static inline int dq__tab_isexp__avx2(const float *tab, unsigned s) {
    const simde__m256i zero = simde_mm256_setzero_si256(), c = simde_mm256_set1_epi32((int32_t)(127u - s));
    simde__m256i l = simde_mm256_loadu_si256((const simde__m256i *)dq__lane_ids), bad = zero;
    unsigned i;
    if (s < 7u) return dq__tab_isexp__sse2(tab, s);
    for (i = 0; i <= s; i += 8u, l = simde_mm256_add_epi32(l, simde_mm256_set1_epi32(8))) {
        simde__m256i e = simde_mm256_andnot_si256(simde_mm256_cmpeq_epi32(l, zero),
                                                  simde_mm256_slli_epi32(simde_mm256_add_epi32(l, c), 23));
        bad = simde_mm256_or_si256(bad,
                                   simde_mm256_xor_si256(e, simde_mm256_loadu_si256((const simde__m256i *)(tab + i))));
    }
    return simde_mm256_testz_si256(bad, bad);
}

/* Table lookups for N = s + 1 entries: one permute (N <= 8, from a copy padded with +Inf), two
 * permutes and a blend on index bit 3 (N = 16), or a gather (N >= 32). */
typedef struct dq__tlook256 {
    simde__m256 t0, t1;
    const float *tab;
    unsigned n;
} dq__tlook256;
static inline void dq__tlook256_init(dq__tlook256 *L, const float *tab, unsigned s) {
    L->tab = tab;
    L->n = s + 1u;
    if (L->n <= 8u) {
        uint32_t pad[8] = {0x7F800000u, 0x7F800000u, 0x7F800000u, 0x7F800000u,
                           0x7F800000u, 0x7F800000u, 0x7F800000u, 0x7F800000u}; /* +Inf: above any r */
        memcpy(pad, tab, 4u * L->n);
        L->t0 = L->t1 = simde_mm256_loadu_ps((const float *)pad);
    } else if (L->n == 16u) {
        L->t0 = simde_mm256_loadu_ps(tab);
        L->t1 = simde_mm256_loadu_ps(tab + 8);
    } else {
        L->t0 = L->t1 = simde_mm256_setzero_ps();
    }
}
static inline simde__m256 dq__tlook256_get(const dq__tlook256 *L, simde__m256i idx) {
    if (L->n <= 8u) return simde_mm256_permutevar8x32_ps(L->t0, idx);
    if (L->n == 16u)
        return simde_mm256_blendv_ps(simde_mm256_permutevar8x32_ps(L->t0, idx),
                                     simde_mm256_permutevar8x32_ps(L->t1, idx),
                                     simde_mm256_castsi256_ps(simde_mm256_slli_epi32(idx, 28)));
    return simde_mm256_i32gather_ps(L->tab, idx, 4);
}

typedef struct dq__tq256 {
    simde__m256i absm, zero, k0, k1, lane, sv, c127, sm127, mant, onei, sgnm;
    simde__m128i shs;
    simde__m256 inv, scale, onef, pw, ulp24, thr, top, lo0, inf;
    dq__tlook256 look;
    float lv[8]; /* s <= 7: tab[0..s], then +Inf */
    unsigned s;
    int stoch;
} dq__tq256;
static inline void dq__tq256_init(dq__tq256 *c, const dq__qctx *q, int isexp) {
    unsigned s = (1u << (q->bits - 1u)) - 1u;
    c->absm = simde_mm256_set1_epi32(0x7FFFFFFF);
    c->zero = simde_mm256_setzero_si256();
    c->k0 = simde_mm256_set1_epi32((int32_t)q->k0);
    c->k1 = simde_mm256_set1_epi32((int32_t)q->k1h);
    c->lane = simde_mm256_loadu_si256((const simde__m256i *)dq__lane_ids);
    c->sv = simde_mm256_set1_epi32((int32_t)s);
    c->c127 = simde_mm256_set1_epi32((int32_t)(127u - s));
    c->sm127 = simde_mm256_set1_epi32((int32_t)s - 127);
    c->mant = simde_mm256_set1_epi32(0x007FFFFF);
    c->onei = simde_mm256_set1_epi32(0x3F800000);
    c->sgnm = simde_mm256_set1_epi32(INT32_MIN);
    c->shs = simde_mm_cvtsi32_si128((int)q->bits - 1);
    c->inv = simde_mm256_set1_ps(q->inv);
    c->scale = simde_mm256_set1_ps(q->scale);
    c->onef = simde_mm256_set1_ps(1.0f);
    c->pw = simde_mm256_castsi256_ps(simde_mm256_set1_epi32((int32_t)((s + 126u) << 23))); /* 2^(s-1) */
    c->ulp24 = simde_mm256_set1_ps(5.96046448e-08f);
    c->thr = simde_mm256_set1_ps(q->thresh);
    c->top = simde_mm256_set1_ps(q->tab[s]);
    c->lo0 = simde_mm256_set1_ps(q->tab[0]);
    c->inf = simde_mm256_castsi256_ps(simde_mm256_set1_epi32(0x7F800000));
    if (!isexp) dq__tlook256_init(&c->look, q->tab, s);
    if (!isexp && s <= 7u) simde_mm256_storeu_ps(c->lv, c->look.t0);
    c->s = s;
    c->stoch = q->thresh < 0.0f;
}
/* The dither t of 8 elements with indices lo + 0..7, or the threshold. */
static inline simde__m256 dq__tq256_t(const dq__tq256 *c, uint32_t lo) {
    if (c->stoch) {
        simde__m256i h = simde_mm256_add_epi32(simde_mm256_set1_epi32((int32_t)lo), c->lane);
        return simde_mm256_mul_ps(simde_mm256_cvtepi32_ps(simde_mm256_srli_epi32(dq__draw__avx2(h, c->k0, c->k1, 0), 8)),
                                  c->ulp24);
    }
    return c->thr;
}
/* Codes from levels l and magnitudes tv = tab[l]; residuals x - value to res unless NULL. */
static inline simde__m256i dq__tq256_end(const dq__tq256 *c, simde__m256 xv, simde__m256i l, simde__m256 tv,
                                         float *res) {
    simde__m256i sg = simde_mm256_andnot_si256(simde_mm256_cmpeq_epi32(l, c->zero),
                                               simde_mm256_and_si256(simde_mm256_castps_si256(xv), c->sgnm));
    if (res) {
        simde__m256 v = simde_mm256_xor_ps(simde_mm256_mul_ps(tv, c->scale), simde_mm256_castsi256_ps(sg));
        simde_mm256_storeu_ps(res, simde_mm256_sub_ps(xv, v));
    }
    return simde_mm256_or_si256(l, simde_mm256_sll_epi32(simde_mm256_srli_epi32(sg, 31), c->shs));
}
/* 8 codes from x[0..8) of an exponential table. */
static inline simde__m256i dq__tq256_exp(const dq__tq256 *c, const float *x, uint32_t lo, float *res) {
    simde__m256 xv = simde_mm256_loadu_ps(x), t = dq__tq256_t(c, lo), f, fhi, lt1;
    simde__m256 r = simde_mm256_mul_ps(
        simde_mm256_castsi256_ps(simde_mm256_and_si256(simde_mm256_castps_si256(xv), c->absm)), c->inv);
    simde__m256i rb = simde_mm256_castps_si256(r), l;
    simde__m256i j = simde_mm256_add_epi32(simde_mm256_srli_epi32(rb, 23), c->sm127);
    simde__m256i big = simde_mm256_cmpgt_epi32(j, c->zero);
    lt1 = simde_mm256_cmp_ps(r, c->onef, SIMDE_CMP_LT_OQ);
    fhi = simde_mm256_sub_ps(
        simde_mm256_castsi256_ps(simde_mm256_or_si256(simde_mm256_and_si256(rb, c->mant), c->onei)), c->onef);
    f = simde_mm256_blendv_ps(simde_mm256_mul_ps(r, c->pw), fhi, simde_mm256_castsi256_ps(big));
    l = simde_mm256_sub_epi32(simde_mm256_and_si256(j, big),
                              simde_mm256_castps_si256(simde_mm256_cmp_ps(t, f, SIMDE_CMP_LT_OQ)));
    l = simde_mm256_castps_si256(
        simde_mm256_blendv_ps(simde_mm256_castsi256_ps(c->sv), simde_mm256_castsi256_ps(l), lt1));
    return dq__tq256_end(
        c, xv, l,
        simde_mm256_castsi256_ps(simde_mm256_andnot_si256(
            simde_mm256_cmpeq_epi32(l, c->zero), simde_mm256_slli_epi32(simde_mm256_add_epi32(l, c->c127), 23))),
        res);
}
/* One step of the binary search: j += st where tab[j + st] <= r, keeping tab[j] and the last
 * candidate above r. */
static inline void dq__ts256_step(const dq__tlook256 *L, simde__m256 r, int32_t st, simde__m256i *j, simde__m256 *vlo,
                                  simde__m256 *vhi) {
    simde__m256i idx = simde_mm256_add_epi32(*j, simde_mm256_set1_epi32(st));
    simde__m256 cand = dq__tlook256_get(L, idx), m = simde_mm256_cmp_ps(cand, r, SIMDE_CMP_LE_OQ);
    *j =
        simde_mm256_castps_si256(simde_mm256_blendv_ps(simde_mm256_castsi256_ps(*j), simde_mm256_castsi256_ps(idx), m));
    *vlo = simde_mm256_blendv_ps(*vlo, cand, m);
    *vhi = simde_mm256_blendv_ps(cand, *vhi, m);
}
/* 8 codes from x[0..8) of any table: binary search. Tables of N <= 8 entries are searched as 8
 * (the +Inf padding is above every r < 1), so the steps do not depend on N below 16. */
static inline simde__m256i dq__tq256_gen(const dq__tq256 *c, const float *x, uint32_t lo, float *res) {
    simde__m256 xv = simde_mm256_loadu_ps(x), t = dq__tq256_t(c, lo), f, up, lt1, vlo = c->lo0, vhi = c->inf;
    simde__m256 r = simde_mm256_mul_ps(
        simde_mm256_castsi256_ps(simde_mm256_and_si256(simde_mm256_castps_si256(xv), c->absm)), c->inv);
    simde__m256i j = c->zero, l;
    lt1 = simde_mm256_cmp_ps(r, c->onef, SIMDE_CMP_LT_OQ);
    if (c->s <= 7u) { /* j = #{k in 1..6: tab[k] <= r} (padding never counts), independent compares */
        simde__m256i ja =
            simde_mm256_castps_si256(simde_mm256_cmp_ps(simde_mm256_set1_ps(c->lv[1]), r, SIMDE_CMP_LE_OQ));
        simde__m256i jb =
            simde_mm256_castps_si256(simde_mm256_cmp_ps(simde_mm256_set1_ps(c->lv[2]), r, SIMDE_CMP_LE_OQ));
        ja = simde_mm256_add_epi32(
            ja, simde_mm256_castps_si256(simde_mm256_cmp_ps(simde_mm256_set1_ps(c->lv[3]), r, SIMDE_CMP_LE_OQ)));
        jb = simde_mm256_add_epi32(
            jb, simde_mm256_castps_si256(simde_mm256_cmp_ps(simde_mm256_set1_ps(c->lv[4]), r, SIMDE_CMP_LE_OQ)));
        ja = simde_mm256_add_epi32(
            ja, simde_mm256_castps_si256(simde_mm256_cmp_ps(simde_mm256_set1_ps(c->lv[5]), r, SIMDE_CMP_LE_OQ)));
        jb = simde_mm256_add_epi32(
            jb, simde_mm256_castps_si256(simde_mm256_cmp_ps(simde_mm256_set1_ps(c->lv[6]), r, SIMDE_CMP_LE_OQ)));
        j = simde_mm256_sub_epi32(c->zero, simde_mm256_add_epi32(ja, jb));
        vlo = simde_mm256_permutevar8x32_ps(c->look.t0, j);
        vhi = simde_mm256_permutevar8x32_ps(c->look.t0, simde_mm256_sub_epi32(j, simde_mm256_cmpeq_epi32(j, j)));
    } else if (c->look.n <= 16u) {
        if (c->look.n == 16u) dq__ts256_step(&c->look, r, 8, &j, &vlo, &vhi);
        dq__ts256_step(&c->look, r, 4, &j, &vlo, &vhi);
        dq__ts256_step(&c->look, r, 2, &j, &vlo, &vhi);
        dq__ts256_step(&c->look, r, 1, &j, &vlo, &vhi);
    } else {
        unsigned st;
        for (st = c->look.n >> 1; st; st >>= 1) dq__ts256_step(&c->look, r, (int32_t)st, &j, &vlo, &vhi);
    }
    f = simde_mm256_div_ps(simde_mm256_sub_ps(r, vlo), simde_mm256_sub_ps(vhi, vlo));
    up = simde_mm256_cmp_ps(t, f, SIMDE_CMP_LT_OQ);
    l = simde_mm256_sub_epi32(j, simde_mm256_castps_si256(up));
    l = simde_mm256_castps_si256(
        simde_mm256_blendv_ps(simde_mm256_castsi256_ps(c->sv), simde_mm256_castsi256_ps(l), lt1));
    return dq__tq256_end(c, xv, l, simde_mm256_blendv_ps(c->top, simde_mm256_blendv_ps(vlo, vhi, up), lt1), res);
}
/* Whole vectors of 8 from x, given the table check; returns how many elements were done. */
static inline size_t dq__quant_tab_run__avx2(const dq__qctx *q, int isexp, const float *x, size_t cnt, uint32_t *codes,
                                             float *res) {
    dq__tq256 c;
    size_t i = 0;
    dq__tq256_init(&c, q, isexp);
    if (isexp)
        for (; i + 8 <= cnt; i += 8)
            simde_mm256_storeu_si256((simde__m256i *)(codes + i),
                                     dq__tq256_exp(&c, x + i, q->lo + (uint32_t)i, res ? res + i : NULL));
    else
        for (; i + 8 <= cnt; i += 8)
            simde_mm256_storeu_si256((simde__m256i *)(codes + i),
                                     dq__tq256_gen(&c, x + i, q->lo + (uint32_t)i, res ? res + i : NULL));
    return i;
}
static inline void dq__quant_tab__avx2(const dq__qctx *q, const float *x, size_t cnt, uint32_t *codes, float *res) {
    size_t i = 0;
    dq__qctx rest;
    if (cnt >= 8)
        i = dq__quant_tab_run__avx2(q, dq__tab_isexp__avx2(q->tab, (1u << (q->bits - 1u)) - 1u), x, cnt, codes, res);
    rest = *q;
    rest.lo = q->lo + (uint32_t)i;
    dq__quant_tab__scalar(&rest, x + i, cnt - i, codes + i, res ? res + i : NULL);
}

static inline void dq__decode_block_tab__avx2(const uint8_t *in, unsigned b, const float *tab, const float *rowscale,
                                              float w, int add, float *out) {
    const unsigned s = (1u << (b - 1u)) - 1u;
    const simde__m256i mask = simde_mm256_set1_epi32((int32_t)((1u << b) - 1u)),
                       lmask = simde_mm256_set1_epi32((int32_t)s);
    const simde__m256i c127 = simde_mm256_set1_epi32((int32_t)(127u - s)), zero = simde_mm256_setzero_si256();
    const simde__m128i shs = simde_mm_cvtsi32_si128((int)b - 1);
    const simde__m256 wv = simde_mm256_set1_ps(w);
    /* small tables permute (as cheap as rebuilding the value); large exponential ones rebuild */
    const int isexp = s >= 31u && dq__tab_isexp__avx2(tab, s);
    dq__tlook256 look;
    unsigned r;
    dq__tlook256_init(&look, tab, s);
    for (r = 0; r < DQ__ROWS; r++) {
        unsigned off = r * b, j = off >> 5, sh5 = off & 31u;
        const uint8_t *p = in + 32u * j;
        simde__m256i v =
            simde_mm256_srl_epi32(simde_mm256_loadu_si256((const simde__m256i *)p), simde_mm_cvtsi32_si128((int)sh5));
        simde__m256i l;
        simde__m256 f;
        if (sh5 + b > 32)
            v = simde_mm256_or_si256(v, simde_mm256_sll_epi32(simde_mm256_loadu_si256((const simde__m256i *)(p + 32)),
                                                              simde_mm_cvtsi32_si128((int)(32 - sh5))));
        v = simde_mm256_and_si256(v, mask);
        l = simde_mm256_and_si256(v, lmask);
        if (isexp)
            f = simde_mm256_castsi256_ps(simde_mm256_andnot_si256(
                simde_mm256_cmpeq_epi32(l, zero), simde_mm256_slli_epi32(simde_mm256_add_epi32(l, c127), 23)));
        else
            f = dq__tlook256_get(&look, l);
        f = simde_mm256_mul_ps(f, simde_mm256_set1_ps(rowscale[r]));
        f = simde_mm256_castsi256_ps(simde_mm256_xor_si256(simde_mm256_castps_si256(f),
                                                           simde_mm256_slli_epi32(simde_mm256_srl_epi32(v, shs), 31)));
        if (add) f = simde_mm256_add_ps(simde_mm256_loadu_ps(out + 8 * r), simde_mm256_mul_ps(wv, f));
        simde_mm256_storeu_ps(out + 8 * r, f);
    }
}

/* ---- shared-scale levels (twin: dq__shared_q__scalar): 8 lanes; AVX-512 builds use this one
 * (the sign-magnitude to signed conversion needs cvtepi32_ps at 512 bits) */
static inline void dq__shared_q__avx2(const float *x, float *r, size_t cnt, size_t i0, float inv, float unit,
                                      uint32_t k0, uint32_t k1h, int stoch, int32_t *lv) {
    const simde__m256 vinv = simde_mm256_set1_ps(inv), vunit = simde_mm256_set1_ps(unit);
    const simde__m256 two24 = simde_mm256_set1_ps(16777216.0f), half = simde_mm256_set1_ps(0.5f);
    const simde__m256i absm = simde_mm256_set1_epi32(0x7FFFFFFF), K0 = simde_mm256_set1_epi32((int32_t)k0);
    const simde__m256i K1 = simde_mm256_set1_epi32((int32_t)k1h), eight = simde_mm256_set1_epi32(8);
    simde__m256i idx = simde_mm256_add_epi32(simde_mm256_set1_epi32((int32_t)(uint32_t)i0),
                                             simde_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    size_t j = 0;
    for (; j + 8u <= cnt; j += 8u) {
        simde__m256 v = simde_mm256_loadu_ps(x + j), t, f, up;
        simde__m256i bits, lo, s;
        if (r) v = simde_mm256_add_ps(v, simde_mm256_loadu_ps(r + j));
        bits = simde_mm256_castps_si256(v);
        t = simde_mm256_mul_ps(simde_mm256_castsi256_ps(simde_mm256_and_si256(bits, absm)), vinv);
        lo = simde_mm256_cvttps_epi32(t);
        f = simde_mm256_sub_ps(t, simde_mm256_cvtepi32_ps(lo));
        up = stoch ? simde_mm256_cmp_ps(simde_mm256_cvtepi32_ps(simde_mm256_srli_epi32(dq__draw__avx2(idx, K0, K1, 0), 8)),
                                        simde_mm256_mul_ps(f, two24), SIMDE_CMP_LT_OQ)
                   : simde_mm256_cmp_ps(f, half, SIMDE_CMP_GT_OQ);
        lo = simde_mm256_sub_epi32(lo, simde_mm256_castps_si256(up));
        s = simde_mm256_srai_epi32(bits, 31);
        lo = simde_mm256_sub_epi32(simde_mm256_xor_si256(lo, s), s);
        simde_mm256_storeu_si256((simde__m256i *)(void *)(lv + j), lo);
        if (r)
            simde_mm256_storeu_ps(r + j, simde_mm256_sub_ps(v, simde_mm256_mul_ps(simde_mm256_cvtepi32_ps(lo), vunit)));
        idx = simde_mm256_add_epi32(idx, eight);
    }
    if (j < cnt) dq__shared_q__scalar(x + j, r ? r + j : NULL, cnt - j, i0 + j, inv, unit, k0, k1h, stoch, lv + j);
}

/* ---- the sparsifiers' scan (see the SSE2 section) */
static inline uint64_t dq__sp_mask64__avx2(const float *x, const float *e, float *eo, uint32_t lo) {
    const simde__m256i abs = simde_mm256_set1_epi32(0x7FFFFFFF), lim = simde_mm256_set1_epi32((int32_t)lo - 1);
    simde__m256i any = simde_mm256_setzero_si256();
    uint64_t m = 0;
    unsigned v;
    for (v = 0; v < 8u; v++) { /* mostly nothing reaches lo: one test for the 64 */
        simde__m256 c = simde_mm256_loadu_ps(x + 8u * v);
        if (e) c = simde_mm256_add_ps(c, simde_mm256_loadu_ps(e + 8u * v));
        if (eo) simde_mm256_storeu_ps(eo + 8u * v, c);
        any = simde_mm256_or_si256(any, simde_mm256_cmpgt_epi32(simde_mm256_and_si256(simde_mm256_castps_si256(c), abs), lim));
    }
    if (simde_mm256_movemask_epi8(any) == 0) return 0;
    for (v = 0; v < 8u; v++) {
        simde__m256 c = eo ? simde_mm256_loadu_ps(eo + 8u * v) : simde_mm256_loadu_ps(x + 8u * v);
        simde__m256i gt;
        if (e && !eo) c = simde_mm256_add_ps(c, simde_mm256_loadu_ps(e + 8u * v));
        gt = simde_mm256_cmpgt_epi32(simde_mm256_and_si256(simde_mm256_castps_si256(c), abs), lim);
        m |= (uint64_t)(uint32_t)simde_mm256_movemask_ps(simde_mm256_castsi256_ps(gt)) << (8u * v);
    }
    return m;
}

/* ---- count-sketch hashes (twin: dq__sk_hash__scalar): 8 lanes of the same 32-bit arithmetic;
 * the multiply-shift takes the high halves of two 32x32->64 products (even and odd lanes) */
static inline void dq__sk_hash__avx2(uint32_t k0, uint32_t k1, uint32_t cols, uint32_t first, size_t cnt,
                                     uint32_t *out) {
    uint32_t k0h;
    const int hoisted = dq__draw_hoist(k0, first, cnt, &k0h);
    const simde__m256i vk0 = simde_mm256_set1_epi32((int32_t)k0h), vk1 = simde_mm256_set1_epi32((int32_t)k1);
    const simde__m256i vc = simde_mm256_set1_epi32((int32_t)cols), eight = simde_mm256_set1_epi32(8);
    simde__m256i idx =
        simde_mm256_add_epi32(simde_mm256_set1_epi32((int32_t)first), simde_mm256_loadu_si256((const simde__m256i *)dq__lane_ids));
    size_t t = 0;
    for (; t + 8u <= cnt; t += 8u) {
        simde__m256i x = dq__draw__avx2(idx, vk0, vk1, hoisted), lo, hi;
        lo = simde_mm256_srli_epi64(simde_mm256_mul_epu32(x, vc), 32); /* even lanes */
        hi = simde_mm256_mul_epu32(simde_mm256_srli_epi64(x, 32), vc); /* odd lanes, high half in place */
        lo = simde_mm256_blend_epi32(lo, hi, 0xAA);
        simde_mm256_storeu_si256((simde__m256i *)(void *)(out + t),
                                 simde_mm256_or_si256(lo, simde_mm256_slli_epi32(x, 31)));
        idx = simde_mm256_add_epi32(idx, eight);
    }
    dq__sk_hash__scalar(k0, k1, cols, first + (uint32_t)t, cnt - t, out + t);
}

/* ---- fp16 and bf16 conversions (see the SSE2 section) */
/* 8 halves in 32-bit lanes to 8 floats; selects with blendv (see the SSE2 twin for the steps). */
static inline simde__m256 dq__h2f__avx2(simde__m256i w) {
    const simde__m256i a = simde_mm256_and_si256(w, simde_mm256_set1_epi32(0x7FFF));
    const simde__m256i sgn = simde_mm256_slli_epi32(simde_mm256_xor_si256(w, a), 16);
    const simde__m256i nrm = simde_mm256_add_epi32(simde_mm256_slli_epi32(a, 13), simde_mm256_set1_epi32(0x38000000));
    const simde__m256i sub = simde_mm256_castps_si256(
        simde_mm256_mul_ps(simde_mm256_cvtepi32_ps(a), simde_mm256_set1_ps(5.96046448e-08f)));
    const simde__m256i issub = simde_mm256_cmpgt_epi32(simde_mm256_set1_epi32(0x0400), a);
    simde__m256i r = simde_mm256_blendv_epi8(nrm, sub, issub);
    r = simde_mm256_add_epi32(r, simde_mm256_and_si256(simde_mm256_cmpgt_epi32(a, simde_mm256_set1_epi32(0x7BFF)),
                                                       simde_mm256_set1_epi32(0x38000000)));
    r = simde_mm256_or_si256(r, simde_mm256_and_si256(simde_mm256_cmpgt_epi32(a, simde_mm256_set1_epi32(0x7C00)),
                                                      simde_mm256_set1_epi32(0x00400000)));
    return simde_mm256_castsi256_ps(simde_mm256_or_si256(r, sgn));
}
static inline simde__m256i dq__f2h__avx2(simde__m256 v) {
    const simde__m256i u = simde_mm256_castps_si256(v);
    const simde__m256i a = simde_mm256_and_si256(u, simde_mm256_set1_epi32(0x7FFFFFFF));
    const simde__m256i sgn =
        simde_mm256_and_si256(simde_mm256_srai_epi32(u, 31), simde_mm256_set1_epi32((int32_t)0xFFFF8000u));
    const simde__m256i t = simde_mm256_sub_epi32(a, simde_mm256_set1_epi32(0x38000000));
    const simde__m256i odd = simde_mm256_and_si256(simde_mm256_srli_epi32(t, 13), simde_mm256_set1_epi32(1));
    const simde__m256i nrm =
        simde_mm256_srli_epi32(simde_mm256_add_epi32(simde_mm256_add_epi32(t, simde_mm256_set1_epi32(0x0FFF)), odd), 13);
    const simde__m256i sub = simde_mm256_sub_epi32(
        simde_mm256_castps_si256(simde_mm256_add_ps(simde_mm256_castsi256_ps(a), simde_mm256_set1_ps(0.5f))),
        simde_mm256_set1_epi32(0x3F000000));
    const simde__m256i nanh = simde_mm256_or_si256(
        simde_mm256_and_si256(simde_mm256_srli_epi32(a, 13), simde_mm256_set1_epi32(0x03FF)), simde_mm256_set1_epi32(0x7E00));
    simde__m256i h = simde_mm256_blendv_epi8(sub, nrm, simde_mm256_cmpgt_epi32(a, simde_mm256_set1_epi32(0x387FFFFF)));
    h = simde_mm256_blendv_epi8(h, simde_mm256_set1_epi32(0x7C00),
                                simde_mm256_cmpgt_epi32(a, simde_mm256_set1_epi32(0x477FEFFF)));
    h = simde_mm256_blendv_epi8(h, nanh, simde_mm256_cmpgt_epi32(a, simde_mm256_set1_epi32(0x7F800000)));
    return simde_mm256_or_si256(h, sgn);
}
static inline simde__m256 dq__b2f__avx2(simde__m256i w) {
    const simde__m256i nan = simde_mm256_cmpgt_epi32(simde_mm256_and_si256(w, simde_mm256_set1_epi32(0x7FFFFFFF)),
                                                     simde_mm256_set1_epi32(0x7F800000));
    return simde_mm256_castsi256_ps(
        simde_mm256_or_si256(w, simde_mm256_and_si256(nan, simde_mm256_set1_epi32(0x00400000))));
}
static inline simde__m256i dq__f2b__avx2(simde__m256 v) {
    const simde__m256i u = simde_mm256_castps_si256(v);
    const simde__m256i nan = simde_mm256_cmpgt_epi32(simde_mm256_and_si256(u, simde_mm256_set1_epi32(0x7FFFFFFF)),
                                                     simde_mm256_set1_epi32(0x7F800000));
    const simde__m256i odd = simde_mm256_and_si256(simde_mm256_srli_epi32(u, 16), simde_mm256_set1_epi32(1));
    const simde__m256i rnd = simde_mm256_add_epi32(u, simde_mm256_add_epi32(odd, simde_mm256_set1_epi32(0x7FFF)));
    const simde__m256i qn = simde_mm256_or_si256(u, simde_mm256_set1_epi32(0x00400000));
    return simde_mm256_srai_epi32(simde_mm256_blendv_epi8(rnd, qn, nan), 16);
}
/* Two vectors of 8 sign-extended 16-bit values to 16 halves in order (packs works per 128-bit
 * lane: qwords 0,2,1,3 put them back in order). */
static inline simde__m256i dq__pack16__avx2(simde__m256i a, simde__m256i b) {
    return simde_mm256_permute4x64_epi64(simde_mm256_packs_epi32(a, b), 0xD8);
}

static inline void dq__f16_to_f32__avx2(const void *src, float *dst, size_t n) {
    const uint8_t *s = (const uint8_t *)src;
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        simde_mm256_storeu_ps(dst + i, dq__h2f__avx2(simde_mm256_cvtepu16_epi32(
                                           simde_mm_loadu_si128((const simde__m128i *)(s + 2u * i)))));
    dq__f16_to_f32__scalar(s + 2u * i, dst + i, n - i);
}
static inline void dq__f32_to_f16__avx2(const float *src, void *dst, size_t n) {
    uint8_t *d = (uint8_t *)dst;
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        simde_mm256_storeu_si256((simde__m256i *)(d + 2u * i),
                                 dq__pack16__avx2(dq__f2h__avx2(simde_mm256_loadu_ps(src + i)),
                                                  dq__f2h__avx2(simde_mm256_loadu_ps(src + i + 8))));
    dq__f32_to_f16__scalar(src + i, d + 2u * i, n - i);
}
static inline void dq__bf16_to_f32__avx2(const void *src, float *dst, size_t n) {
    const uint8_t *s = (const uint8_t *)src;
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        simde_mm256_storeu_ps(dst + i, dq__b2f__avx2(simde_mm256_slli_epi32(
                                           simde_mm256_cvtepu16_epi32(simde_mm_loadu_si128((const simde__m128i *)(s + 2u * i))),
                                           16)));
    dq__bf16_to_f32__scalar(s + 2u * i, dst + i, n - i);
}
static inline void dq__f32_to_bf16__avx2(const float *src, void *dst, size_t n) {
    uint8_t *d = (uint8_t *)dst;
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        simde_mm256_storeu_si256((simde__m256i *)(d + 2u * i),
                                 dq__pack16__avx2(dq__f2b__avx2(simde_mm256_loadu_ps(src + i)),
                                                  dq__f2b__avx2(simde_mm256_loadu_ps(src + i + 8))));
    dq__f32_to_bf16__scalar(src + i, d + 2u * i, n - i);
}

/* Carried statistics, 16 elements a step into 4 registers of 4 double lanes (dq__stats__avx2). */
static inline void dq__hstat_acc__avx2(const float *x, const float *e, size_t n, unsigned what, double *sq, double *ab,
                                       uint32_t *mx) {
    const simde__m256i absm = simde_mm256_set1_epi32(0x7FFFFFFF);
    simde__m256d qs[4], qa[4];
    simde__m256i m = simde_mm256_setzero_si256();
    uint32_t m8[8];
    size_t i = 0;
    unsigned k;
    for (k = 0; k < 4; k++) {
        qs[k] = simde_mm256_loadu_pd(sq + 4 * k);
        qa[k] = simde_mm256_loadu_pd(ab + 4 * k);
    }
    for (; i + 16 <= n; i += 16) {
        simde__m256 v0 = simde_mm256_loadu_ps(x + i), v1 = simde_mm256_loadu_ps(x + i + 8);
        simde__m256i u0, u1;
        if (e) {
            v0 = simde_mm256_add_ps(v0, simde_mm256_loadu_ps(e + i));
            v1 = simde_mm256_add_ps(v1, simde_mm256_loadu_ps(e + i + 8));
        }
        u0 = simde_mm256_and_si256(simde_mm256_castps_si256(v0), absm);
        u1 = simde_mm256_and_si256(simde_mm256_castps_si256(v1), absm);
        if (what & DQ__ST_MAX) m = simde_mm256_max_epu32(m, simde_mm256_max_epu32(u0, u1));
        if (what & (DQ__ST_SQ | DQ__ST_ABS)) {
            simde__m256 f0 = simde_mm256_castsi256_ps(u0), f1 = simde_mm256_castsi256_ps(u1);
            simde__m256d d[4];
            d[0] = simde_mm256_cvtps_pd(simde_mm256_castps256_ps128(f0)); /* lanes 0..3 */
            d[1] = simde_mm256_cvtps_pd(simde_mm256_extractf128_ps(f0, 1)); /* lanes 4..7 */
            d[2] = simde_mm256_cvtps_pd(simde_mm256_castps256_ps128(f1));   /* lanes 8..11 */
            d[3] = simde_mm256_cvtps_pd(simde_mm256_extractf128_ps(f1, 1)); /* lanes 12..15 */
            for (k = 0; k < 4; k++) {
                if (what & DQ__ST_ABS) qa[k] = simde_mm256_add_pd(qa[k], d[k]);
                if (what & DQ__ST_SQ) qs[k] = simde_mm256_add_pd(qs[k], simde_mm256_mul_pd(d[k], d[k]));
            }
        }
    }
    for (k = 0; k < 4; k++) {
        if (what & DQ__ST_SQ) simde_mm256_storeu_pd(sq + 4 * k, qs[k]);
        if (what & DQ__ST_ABS) simde_mm256_storeu_pd(ab + 4 * k, qa[k]);
    }
    simde_mm256_storeu_si256((simde__m256i *)m8, m);
    if (what & DQ__ST_MAX)
        for (k = 0; k < 8; k++)
            if (m8[k] > *mx) *mx = m8[k];
    dq__hstat_acc__scalar(x + i, e ? e + i : NULL, n - i, what, sq, ab, mx);
}

/* ---- 32-way rANS chunks (see the SSE2 section): the 8-lane decoder and encoder */
static const uint32_t dq__r32_cmp8[256] = {
    0x000000u, 0x000000u, 0x200000u, 0x200000u, 0x400000u, 0x400000u, 0x440000u, 0x440000u,
    0x600000u, 0x600000u, 0x640000u, 0x640000u, 0x680000u, 0x680000u, 0x688000u, 0x688000u,
    0x800000u, 0x800000u, 0x840000u, 0x840000u, 0x880000u, 0x880000u, 0x888000u, 0x888000u,
    0x8C0000u, 0x8C0000u, 0x8C8000u, 0x8C8000u, 0x8D0000u, 0x8D0000u, 0x8D1000u, 0x8D1000u,
    0xA00000u, 0xA00000u, 0xA40000u, 0xA40000u, 0xA80000u, 0xA80000u, 0xA88000u, 0xA88000u,
    0xAC0000u, 0xAC0000u, 0xAC8000u, 0xAC8000u, 0xAD0000u, 0xAD0000u, 0xAD1000u, 0xAD1000u,
    0xB00000u, 0xB00000u, 0xB08000u, 0xB08000u, 0xB10000u, 0xB10000u, 0xB11000u, 0xB11000u,
    0xB18000u, 0xB18000u, 0xB19000u, 0xB19000u, 0xB1A000u, 0xB1A000u, 0xB1A200u, 0xB1A200u,
    0xC00000u, 0xC00000u, 0xC40000u, 0xC40000u, 0xC80000u, 0xC80000u, 0xC88000u, 0xC88000u,
    0xCC0000u, 0xCC0000u, 0xCC8000u, 0xCC8000u, 0xCD0000u, 0xCD0000u, 0xCD1000u, 0xCD1000u,
    0xD00000u, 0xD00000u, 0xD08000u, 0xD08000u, 0xD10000u, 0xD10000u, 0xD11000u, 0xD11000u,
    0xD18000u, 0xD18000u, 0xD19000u, 0xD19000u, 0xD1A000u, 0xD1A000u, 0xD1A200u, 0xD1A200u,
    0xD40000u, 0xD40000u, 0xD48000u, 0xD48000u, 0xD50000u, 0xD50000u, 0xD51000u, 0xD51000u,
    0xD58000u, 0xD58000u, 0xD59000u, 0xD59000u, 0xD5A000u, 0xD5A000u, 0xD5A200u, 0xD5A200u,
    0xD60000u, 0xD60000u, 0xD61000u, 0xD61000u, 0xD62000u, 0xD62000u, 0xD62200u, 0xD62200u,
    0xD63000u, 0xD63000u, 0xD63200u, 0xD63200u, 0xD63400u, 0xD63400u, 0xD63440u, 0xD63440u,
    0xE00000u, 0xE00000u, 0xE40000u, 0xE40000u, 0xE80000u, 0xE80000u, 0xE88000u, 0xE88000u,
    0xEC0000u, 0xEC0000u, 0xEC8000u, 0xEC8000u, 0xED0000u, 0xED0000u, 0xED1000u, 0xED1000u,
    0xF00000u, 0xF00000u, 0xF08000u, 0xF08000u, 0xF10000u, 0xF10000u, 0xF11000u, 0xF11000u,
    0xF18000u, 0xF18000u, 0xF19000u, 0xF19000u, 0xF1A000u, 0xF1A000u, 0xF1A200u, 0xF1A200u,
    0xF40000u, 0xF40000u, 0xF48000u, 0xF48000u, 0xF50000u, 0xF50000u, 0xF51000u, 0xF51000u,
    0xF58000u, 0xF58000u, 0xF59000u, 0xF59000u, 0xF5A000u, 0xF5A000u, 0xF5A200u, 0xF5A200u,
    0xF60000u, 0xF60000u, 0xF61000u, 0xF61000u, 0xF62000u, 0xF62000u, 0xF62200u, 0xF62200u,
    0xF63000u, 0xF63000u, 0xF63200u, 0xF63200u, 0xF63400u, 0xF63400u, 0xF63440u, 0xF63440u,
    0xF80000u, 0xF80000u, 0xF88000u, 0xF88000u, 0xF90000u, 0xF90000u, 0xF91000u, 0xF91000u,
    0xF98000u, 0xF98000u, 0xF99000u, 0xF99000u, 0xF9A000u, 0xF9A000u, 0xF9A200u, 0xF9A200u,
    0xFA0000u, 0xFA0000u, 0xFA1000u, 0xFA1000u, 0xFA2000u, 0xFA2000u, 0xFA2200u, 0xFA2200u,
    0xFA3000u, 0xFA3000u, 0xFA3200u, 0xFA3200u, 0xFA3400u, 0xFA3400u, 0xFA3440u, 0xFA3440u,
    0xFA8000u, 0xFA8000u, 0xFA9000u, 0xFA9000u, 0xFAA000u, 0xFAA000u, 0xFAA200u, 0xFAA200u,
    0xFAB000u, 0xFAB000u, 0xFAB200u, 0xFAB200u, 0xFAB400u, 0xFAB400u, 0xFAB440u, 0xFAB440u,
    0xFAC000u, 0xFAC000u, 0xFAC200u, 0xFAC200u, 0xFAC400u, 0xFAC400u, 0xFAC440u, 0xFAC440u,
    0xFAC600u, 0xFAC600u, 0xFAC640u, 0xFAC640u, 0xFAC680u, 0xFAC680u, 0xFAC688u, 0xFAC688u,
};

/* The rANS kernels read their tables with scalar loads, not gathers: on the Xeon (Cascade Lake)
 * the benchmarks ran on, one 8-lane vpgatherdd took about 23 cycles (microcode that mitigates
 * Gather Data Sampling makes gathers slow on most Intel server parts), eight loads and inserts
 * about 11, and the coders ran 2x (decode) to 3x (encode) faster without them (bench/rans32.c).
 * tab[slot] of 8 decoder lanes: */
static inline simde__m256i dq__r32_slots__avx2(const uint32_t *tab, simde__m256i slot) {
    uint32_t sl[8];
    simde_mm256_storeu_si256((simde__m256i *)sl, slot);
    return simde_mm256_setr_epi32((int32_t)tab[sl[0]], (int32_t)tab[sl[1]], (int32_t)tab[sl[2]], (int32_t)tab[sl[3]],
                                  (int32_t)tab[sl[4]], (int32_t)tab[sl[5]], (int32_t)tab[sl[6]], (int32_t)tab[sl[7]]);
}
/* 8 lanes of the decoder: as dq__r32_step__sse2, and the words of the lanes that
 * need one expanded from 8 consecutive words (16 bytes readable at p in the vector loop). */
static inline simde__m256i dq__r32_step__avx2(simde__m256i *xp, const uint32_t *tab, const uint8_t **pp) {
    const simde__m256i m12 = simde_mm256_set1_epi32(0xFFF);
    const simde__m256i sh3 = simde_mm256_setr_epi32(0, 3, 6, 9, 12, 15, 18, 21);
    simde__m256i x = *xp, e, f, need, wv, idx;
    const uint8_t *p = *pp;
    unsigned mask;
    e = dq__r32_slots__avx2(tab, simde_mm256_and_si256(x, m12));
    f = simde_mm256_add_epi32(simde_mm256_and_si256(simde_mm256_srli_epi32(e, 8), m12), simde_mm256_set1_epi32(1));
    x = simde_mm256_mullo_epi32(f, simde_mm256_srli_epi32(x, 12));
    x = simde_mm256_add_epi32(x, simde_mm256_srli_epi32(e, 20));
    need = simde_mm256_cmpeq_epi32(simde_mm256_srli_epi32(x, 16), simde_mm256_setzero_si256());
    mask = (unsigned)simde_mm256_movemask_ps(simde_mm256_castsi256_ps(need));
    wv = simde_mm256_cvtepu16_epi32(simde_mm_loadu_si128((const simde__m128i *)p));
    idx = simde_mm256_srlv_epi32(simde_mm256_set1_epi32((int32_t)dq__r32_exp8[mask & 127u]), sh3);
    wv = simde_mm256_or_si256(simde_mm256_slli_epi32(x, 16), simde_mm256_permutevar8x32_epi32(wv, idx));
    *xp = simde_mm256_blendv_epi8(x, wv, need);
    *pp = p + 2u * dq__r32_pop8[mask];
    return simde_mm256_and_si256(e, simde_mm256_set1_epi32(0xFF));
}
/* The 32-state decoder loop over a step kernel (four 8-lane states a round, the scalar twin for
 * the head and tail); one definition for every ISA's step. */
#define DQ__R32_GET_DEF(name, step)                                                                  \
    static inline void name(dq__r32_dec *d, const uint32_t *tab, uint8_t *out, size_t cnt) { \
        size_t i = 0, head = (DQ__R32_WAYS - d->j % DQ__R32_WAYS) % DQ__R32_WAYS; \
        if (head) { \
            i = head < cnt ? head : cnt; \
            dq__r32_get__scalar(d, tab, out, i); \
        } \
        if (cnt - i >= DQ__R32_WAYS && d->end - d->p >= 64) { \
            const simde__m256i order = simde_mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7); \
            simde__m256i x0 = simde_mm256_loadu_si256((const simde__m256i *)d->x); \
            simde__m256i x1 = simde_mm256_loadu_si256((const simde__m256i *)(d->x + 8)); \
            simde__m256i x2 = simde_mm256_loadu_si256((const simde__m256i *)(d->x + 16)); \
            simde__m256i x3 = simde_mm256_loadu_si256((const simde__m256i *)(d->x + 24)); \
            const uint8_t *p = d->p; \
            size_t i0 = i; \
            for (; cnt - i >= DQ__R32_WAYS && d->end - p >= 64; i += DQ__R32_WAYS) { \
                simde__m256i s0 = step(&x0, tab, &p); \
                simde__m256i s1 = step(&x1, tab, &p); \
                simde__m256i s2 = step(&x2, tab, &p); \
                simde__m256i s3 = step(&x3, tab, &p); \
                /* in-lane packs leave dwords s0[0..3] s1[0..3] s2[0..3] s3[0..3] s0[4..7] ...: reorder */ \
                simde__m256i a = simde_mm256_packs_epi32(s0, s1), b = simde_mm256_packs_epi32(s2, s3); \
                a = simde_mm256_permutevar8x32_epi32(simde_mm256_packus_epi16(a, b), order); \
                simde_mm256_storeu_si256((simde__m256i *)(out + i), a); \
            } \
            simde_mm256_storeu_si256((simde__m256i *)d->x, x0); \
            simde_mm256_storeu_si256((simde__m256i *)(d->x + 8), x1); \
            simde_mm256_storeu_si256((simde__m256i *)(d->x + 16), x2); \
            simde_mm256_storeu_si256((simde__m256i *)(d->x + 24), x3); \
            d->p = p; \
            d->j += i - i0; \
        } \
        dq__r32_get__scalar(d, tab, out + i, cnt - i); \
    }
DQ__R32_GET_DEF(dq__r32_get__avx2, dq__r32_step__avx2)
/* The encoder constants of symbols a, b, c, d as four (rcp, info) pairs. */
static inline simde__m256i dq__r32_esym4__avx2(const dq__r32_esym *et, unsigned a, unsigned b, unsigned c, unsigned d) {
    uint64_t ea, eb, ec, ed;
    memcpy(&ea, et + a, 8);
    memcpy(&eb, et + b, 8);
    memcpy(&ec, et + c, 8);
    memcpy(&ed, et + d, 8);
    return simde_mm256_setr_epi64x((int64_t)ea, (int64_t)eb, (int64_t)ec, (int64_t)ed);
}
/* 8 lanes of the encoder on symbols sym[0..8): the words of the lanes with x >= f 2^20 go,
 * right-justified in lane order, to the 16 bytes below offset *w (the bytes below the new *w
 * are garbage that later words or the states overwrite); then x = x + q (M - f) + bias. */
static inline void dq__r32_put8__avx2(simde__m256i *xp, const uint8_t *sym, const dq__r32_esym *et, uint8_t *buf,
                                      size_t *w) {
    const simde__m256i sh3 = simde_mm256_setr_epi32(0, 3, 6, 9, 12, 15, 18, 21);
    simde__m256i x = *xp, rcp, info, f, big, wv, t, od, q;
    simde__m256 lo, hi;
    simde__m128i w16;
    unsigned mask;
    /* pairs of symbols 0 1 4 5 and 2 3 6 7: the in-lane shuffles of their even (rcp) and odd
     * (info) words give lanes 0..7 in order */
    lo = simde_mm256_castsi256_ps(dq__r32_esym4__avx2(et, sym[0], sym[1], sym[4], sym[5]));
    hi = simde_mm256_castsi256_ps(dq__r32_esym4__avx2(et, sym[2], sym[3], sym[6], sym[7]));
    rcp = simde_mm256_castps_si256(simde_mm256_shuffle_ps(lo, hi, 0x88));
    info = simde_mm256_castps_si256(simde_mm256_shuffle_ps(lo, hi, 0xDD));
    f = simde_mm256_and_si256(info, simde_mm256_set1_epi32(0x1FFF));
    big = simde_mm256_cmpgt_epi32(simde_mm256_srli_epi32(x, 20), simde_mm256_sub_epi32(f, simde_mm256_set1_epi32(1)));
    mask = (unsigned)simde_mm256_movemask_ps(simde_mm256_castsi256_ps(big));
    wv = simde_mm256_and_si256(x, simde_mm256_set1_epi32(0xFFFF));
    wv = simde_mm256_permutevar8x32_epi32(
        wv, simde_mm256_srlv_epi32(simde_mm256_set1_epi32((int32_t)dq__r32_cmp8[mask]), sh3));
    w16 = simde_mm_packus_epi32(simde_mm256_castsi256_si128(wv), simde_mm256_extracti128_si256(wv, 1));
    simde_mm_storeu_si128((simde__m128i *)(buf + *w - 16u), w16);
    *w -= 2u * dq__r32_pop8[mask];
    x = simde_mm256_srlv_epi32(x, simde_mm256_and_si256(big, simde_mm256_set1_epi32(16)));
    /* t = (x * rcp) >> 32 per lane: even lanes, then odd lanes, from 32x32->64 products */
    t = simde_mm256_srli_epi64(simde_mm256_mul_epu32(x, rcp), 32);
    od = simde_mm256_mul_epu32(simde_mm256_srli_epi64(x, 32), simde_mm256_srli_epi64(rcp, 32));
    t = simde_mm256_blend_epi32(t, od, 0xAA);
    q = simde_mm256_add_epi32(t, simde_mm256_srli_epi32(simde_mm256_sub_epi32(x, t), 1));
    q = simde_mm256_srlv_epi32(q, simde_mm256_and_si256(simde_mm256_srli_epi32(info, 13), simde_mm256_set1_epi32(15)));
    t = simde_mm256_mullo_epi32(q, simde_mm256_sub_epi32(simde_mm256_set1_epi32(4096), f));
    x = simde_mm256_add_epi32(x, t);
    *xp = simde_mm256_add_epi32(x, simde_mm256_srli_epi32(info, 17));
}
static inline size_t dq__r32_encode__avx2(const uint8_t *sym, size_t m, const dq__r32_esym *et, uint8_t *buf,
                                          size_t cap) {
    uint32_t x[DQ__R32_WAYS];
    size_t w = cap, g = m / DQ__R32_WAYS;
    unsigned k;
    for (k = 0; k < DQ__R32_WAYS; k++) x[k] = DQ__R32_L;
    if (!dq__r32_put_range(x, sym, m, g * DQ__R32_WAYS, et, buf, &w)) return 0;
    if (g && w >= 64) {
        simde__m256i x0 = simde_mm256_loadu_si256((const simde__m256i *)x);
        simde__m256i x1 = simde_mm256_loadu_si256((const simde__m256i *)(x + 8));
        simde__m256i x2 = simde_mm256_loadu_si256((const simde__m256i *)(x + 16));
        simde__m256i x3 = simde_mm256_loadu_si256((const simde__m256i *)(x + 24));
        for (; g && w >= 64; g--) {
            const uint8_t *s = sym + (g - 1u) * DQ__R32_WAYS;
            dq__r32_put8__avx2(&x3, s + 24, et, buf, &w);
            dq__r32_put8__avx2(&x2, s + 16, et, buf, &w);
            dq__r32_put8__avx2(&x1, s + 8, et, buf, &w);
            dq__r32_put8__avx2(&x0, s, et, buf, &w);
        }
        simde_mm256_storeu_si256((simde__m256i *)x, x0);
        simde_mm256_storeu_si256((simde__m256i *)(x + 8), x1);
        simde_mm256_storeu_si256((simde__m256i *)(x + 16), x2);
        simde_mm256_storeu_si256((simde__m256i *)(x + 24), x3);
    }
    if (!dq__r32_put_range(x, sym, g * DQ__R32_WAYS, 0, et, buf, &w)) return 0;
    return dq__r32_put_states(x, buf, w, cap);
}
#endif /* AVX2 */

/* ================================================================ F16C: fp16 conversions
 * vcvtph2ps / vcvtps2ph on 8 lanes (twins: dq__f16_to_f32__scalar, dq__f32_to_f16__scalar),
 * where the compiler targets F16C (-mf16c, -march=x86-64-v3 or newer; clang's -mavx512f implies
 * it, gcc 12's -mavx2 and -mavx512f do not). Preferred for fp16 over the integer kernels of any
 * width. SIMDe 0.7.4 has no 512-bit vcvtph2ps/vcvtps2ph wrappers, so AVX-512 builds use these. */
#if DQ__HAS_F16C_KERNELS
static inline void dq__f16_to_f32__f16c(const void *src, float *dst, size_t n) {
    const uint8_t *s = (const uint8_t *)src;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        simde__m256 a = simde_mm256_cvtph_ps(simde_mm_loadu_si128((const simde__m128i *)(s + 2u * i)));
        simde__m256 b = simde_mm256_cvtph_ps(simde_mm_loadu_si128((const simde__m128i *)(s + 2u * i + 16u)));
        simde_mm256_storeu_ps(dst + i, a);
        simde_mm256_storeu_ps(dst + i + 8, b);
    }
    for (; i + 8 <= n; i += 8)
        simde_mm256_storeu_ps(dst + i, simde_mm256_cvtph_ps(simde_mm_loadu_si128((const simde__m128i *)(s + 2u * i))));
    dq__f16_to_f32__scalar(s + 2u * i, dst + i, n - i);
}
/* Immediate 0 (round to nearest even, whatever MXCSR says) with exceptions suppressed. */
#define DQ__F16C_RNE (SIMDE_MM_FROUND_TO_NEAREST_INT | SIMDE_MM_FROUND_NO_EXC)
static inline void dq__f32_to_f16__f16c(const float *src, void *dst, size_t n) {
    uint8_t *d = (uint8_t *)dst;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        simde__m128i a = simde_mm256_cvtps_ph(simde_mm256_loadu_ps(src + i), DQ__F16C_RNE);
        simde__m128i b = simde_mm256_cvtps_ph(simde_mm256_loadu_ps(src + i + 8), DQ__F16C_RNE);
        simde_mm_storeu_si128((simde__m128i *)(d + 2u * i), a);
        simde_mm_storeu_si128((simde__m128i *)(d + 2u * i + 16u), b);
    }
    for (; i + 8 <= n; i += 8)
        simde_mm_storeu_si128((simde__m128i *)(d + 2u * i), simde_mm256_cvtps_ph(simde_mm256_loadu_ps(src + i), DQ__F16C_RNE));
    dq__f32_to_f16__scalar(src + i, d + 2u * i, n - i);
}
#endif /* F16C */
