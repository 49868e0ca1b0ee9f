/* ---------------------------------------------------------------- aggregation (API above) */

DQ_API dq_status dq_offsets(const size_t *sizes, size_t m, size_t limit, size_t *offsets) {
    size_t i;
    if (!offsets || (m && !sizes)) return DQ_ERR_NULL;
    offsets[0] = 0;
    for (i = 0; i < m; i++) {
        if (sizes[i] > limit - offsets[i]) return DQ_ERR_OVERFLOW;
        offsets[i + 1] = offsets[i] + sizes[i];
    }
    return DQ_OK;
}

/* The bucket length of p for n elements (n for whole-vector buckets); 0 if invalid. */
static inline size_t dq__agg_bucket(const dq_params *p, size_t n) {
    uint32_t bk = p->bucket ? p->bucket : DQ_BUCKET_DEFAULT;
    if (bk == DQ_BUCKET_WHOLE) return n ? n : 1u;
    return bk % 8u ? 0u : (size_t)bk;
}

DQ_API dq_status dq_chunk(const dq_params *p, size_t n, size_t parts, size_t j, size_t *begin, size_t *end) {
    size_t B, nb, q, r, b0, b1;
    if (!p || !begin || !end) return DQ_ERR_NULL;
    if (!n) return DQ_ERR_EMPTY;
    if ((uint64_t)n > DQ_MAX_ELEMS) return DQ_ERR_TOO_LARGE;
    B = dq__agg_bucket(p, n);
    if (!B || !parts || j >= parts) return DQ_ERR_PARAM;
    nb = n / B + (n % B != 0);
    q = nb / parts;
    r = nb % parts;
    b0 = j * q + (j < r ? j : r); /* the first r chunks get one bucket more */
    b1 = b0 + q + (size_t)(j < r);
    *begin = b0 * B < n ? b0 * B : n;
    *end = b1 * B < n ? b1 * B : n;
    return DQ_OK;
}

DQ_API dq_status dq_requantize(const dq_params *p, const void *const *msgs, const size_t *lens, size_t m, float weight,
                               float *acc, size_t n, float *residual, void *dst, size_t dst_cap, size_t *dst_len) {
    size_t i;
    if (!p || !acc || !dst || !dst_len || (m && (!msgs || !lens))) return DQ_ERR_NULL;
    if (!n) return DQ_ERR_EMPTY;
    for (i = 0; i < n; i++) acc[i] = 0.0f;
    for (i = 0; i < m; i++) {
        dq_status st;
        if (!msgs[i]) return DQ_ERR_NULL;
        st = dq_decode_add(msgs[i], lens[i], weight, acc, n);
        if (st != DQ_OK) return st;
    }
    return dq_encode(p, acc, n, residual, dst, dst_cap, dst_len);
}

DQ_API unsigned dq_shared_width(unsigned bits, uint64_t workers) {
    uint64_t top;
    if (bits < 2u || bits > 16u || !workers || workers > (uint64_t)DQ_SHARED_MAX_SUM) return 0u;
    top = workers * ((1u << (bits - 1u)) - 1u); /* the largest |partial sum| of M levels */
    if (top > (uint64_t)DQ_SHARED_MAX_SUM) return 0u;
    return top <= 127u ? 8u : top <= 32767u ? 16u : 32u;
}

/* The common checks; *B the bucket length, *L the largest level. */
static inline dq_status dq__shared_check(const dq_params *p, size_t n, size_t *B, uint32_t *L) {
    if (!p) return DQ_ERR_NULL;
    if (!n) return DQ_ERR_EMPTY;
    if ((uint64_t)n > DQ_MAX_ELEMS) return DQ_ERR_TOO_LARGE;
    if (p->bits < 2u || p->bits > 16u) return DQ_ERR_BITS;
    if ((p->scheme != 0 && p->scheme != DQ_SCHEME_QSGD) || (p->norm != DQ_NORM_DEFAULT && p->norm != DQ_NORM_MAX) ||
        p->rounding > DQ_ROUND_NEAREST || p->checksum || !dq__fixed_asked(p)) /* integers, not messages */
        return DQ_ERR_PARAM;
    *B = dq__agg_bucket(p, n);
    *L = (1u << (p->bits - 1u)) - 1u;
    return *B ? DQ_OK : DQ_ERR_PARAM;
}

/* 2^e as a float, e in [DQ_SHARED_EXP_MIN, 127]: a normal power of two, or 2^-127 (subnormal). */
static inline float dq__pow2f(int e) {
    return e >= -126 ? dq__bitsf((uint32_t)(e + 127) << 23) : dq__bitsf(0x00400000u);
}

/* The bucket's v = x (+ r) largest magnitude bit pattern (the statistics kernel's maximum);
 * >= 0x7F800000 when it holds a NaN or Inf. */
static inline uint32_t dq__shared_maxbits(const float *x, const float *r, size_t len) {
    dq__stats st;
    dq__k_stats(x, r, len, DQ__ST_MAX, &st);
    return st.maxbits;
}

/* The smallest e in range with m <= L * 2^e (each L * 2^e is an exact float). */
static inline dq_status dq__shared_exp_of(uint32_t mbits, uint32_t L, int8_t *e_out) {
    float m = dq__bitsf(mbits), Lf = (float)L;
    int e;
    if (mbits >= 0x7F800000u) return DQ_ERR_NONFINITE;
    if (!mbits) {
        *e_out = (int8_t)DQ_SHARED_EXP_MIN;
        return DQ_OK;
    }
    e = (int)(mbits >> 23) - 127 - (int)dq__ilog2(L); /* within one or two of the answer */
    if (e < DQ_SHARED_EXP_MIN) e = DQ_SHARED_EXP_MIN;
    if (e > DQ_SHARED_EXP_MAX) e = DQ_SHARED_EXP_MAX;
    while (e < DQ_SHARED_EXP_MAX && m > Lf * dq__pow2f(e)) e++;
    while (e > DQ_SHARED_EXP_MIN && m <= Lf * dq__pow2f(e - 1)) e--;
    if (m > Lf * dq__pow2f(e)) return DQ_ERR_OVERFLOW;
    *e_out = (int8_t)e;
    return DQ_OK;
}

DQ_API size_t dq_shared_buckets(const dq_params *p, size_t n) {
    size_t B;
    uint32_t L;
    if (dq__shared_check(p, n, &B, &L) != DQ_OK) return 0;
    return n / B + (n % B != 0);
}

DQ_API dq_status dq_shared_exponents(const dq_params *p, const float *x, size_t n, const float *residual,
                                     int8_t *exps) {
    size_t B, b0;
    uint32_t L;
    dq_status st = dq__shared_check(p, n, &B, &L);
    if (st != DQ_OK) return st;
    if (!x || !exps) return DQ_ERR_NULL;
    for (b0 = 0; b0 < n; b0 += B) {
        size_t len = n - b0 < B ? n - b0 : B;
        st = dq__shared_exp_of(dq__shared_maxbits(x + b0, residual ? residual + b0 : NULL, len), L, &exps[b0 / B]);
        if (st != DQ_OK) return st;
    }
    return DQ_OK;
}

static inline int dq__shared_width_ok(unsigned w) { return w == 8u || w == 16u || w == 32u; }

DQ_API dq_status dq_shared_encode(const dq_params *p, const float *x, size_t n, float *residual, const int8_t *exps,
                                  unsigned width, void *levels) {
    size_t B, b0, i;
    uint32_t L;
    int stochastic;
    dq__key key;
    dq_status st = dq__shared_check(p, n, &B, &L);
    if (st != DQ_OK) return st;
    if (!x || !exps || !levels) return DQ_ERR_NULL;
    if (!dq__shared_width_ok(width) || L > (1u << (width - 1u)) - 1u) return DQ_ERR_PARAM;
    /* First pass: every bucket fits its unit, so nothing is written on a mismatch. */
    for (b0 = 0; b0 < n; b0 += B) {
        size_t len = n - b0 < B ? n - b0 : B;
        int e = exps[b0 / B];
        uint32_t m = dq__shared_maxbits(x + b0, residual ? residual + b0 : NULL, len);
        if (m >= 0x7F800000u) return DQ_ERR_NONFINITE;
        if (e < DQ_SHARED_EXP_MIN || e > DQ_SHARED_EXP_MAX || dq__bitsf(m) > (float)L * dq__pow2f(e))
            return DQ_ERR_PARAM; /* the unit is smaller than this worker's own */
    }
    stochastic = p->rounding != DQ_ROUND_NEAREST;
    key = dq__key_make(p->seed, p->step, p->stream);
    for (b0 = 0; b0 < n; b0 += B) {
        size_t end = n - b0 < B ? n : b0 + B;
        int e = exps[b0 / B];
        float unit = dq__pow2f(e), inv = e > -127 ? dq__pow2f(-e) : dq__bitsf(0x7F000000u); /* 2^127 */
        for (i = b0; i < end;) {
            /* pieces of DQ__SHARED_PIECE that never cross a multiple of 2^32 (one middle key) */
            size_t cnt = end - i < DQ__SHARED_PIECE ? end - i : DQ__SHARED_PIECE;
            uint64_t hi = (uint64_t)i >> 32;
            int32_t tmp[DQ__SHARED_PIECE], *lv = width == 32u ? (int32_t *)levels + i : tmp;
            size_t j;
            if (((uint64_t)(i + cnt - 1) >> 32) != hi) cnt = (size_t)(((hi + 1u) << 32) - (uint64_t)i);
            dq__k_shared_q(x + i, residual ? residual + i : NULL, cnt, i, inv, unit, key.k0,
                           dq__key_hi(key, (uint32_t)hi), stochastic, lv);
            /* j < n is implied by cnt; said explicitly so gcc -O3 sees the store bounded */
            if (width == 8u)
                for (j = i; j < i + cnt && j < n; j++) ((int8_t *)levels)[j] = (int8_t)tmp[j - i];
            else if (width == 16u)
                for (j = i; j < i + cnt && j < n; j++) ((int16_t *)levels)[j] = (int16_t)tmp[j - i];
            i += cnt;
        }
    }
    return DQ_OK;
}

DQ_API dq_status dq_shared_decode(const dq_params *p, const void *sums, unsigned width, size_t n, const int8_t *exps,
                                  float weight, float *out) {
    size_t B, b0, i;
    uint32_t L;
    dq_status st = dq__shared_check(p, n, &B, &L);
    if (st != DQ_OK) return st;
    if (!sums || !exps || !out) return DQ_ERR_NULL;
    if (!dq__shared_width_ok(width)) return DQ_ERR_PARAM;
    for (b0 = 0; b0 < n; b0 += B) {
        size_t end = n - b0 < B ? n : b0 + B;
        int e = exps[b0 / B];
        float unit;
        if (e > DQ_SHARED_EXP_MAX || e < DQ_SHARED_EXP_MIN) return DQ_ERR_CORRUPT;
        unit = dq__pow2f(e);
        for (i = b0; i < end; i++) {
            int32_t s = width == 8u    ? ((const int8_t *)sums)[i]
                        : width == 16u ? ((const int16_t *)sums)[i]
                                       : ((const int32_t *)sums)[i];
            if (s > DQ_SHARED_MAX_SUM || s < -DQ_SHARED_MAX_SUM) return DQ_ERR_CORRUPT;
            out[i] = weight * ((float)s * unit);
        }
    }
    return DQ_OK;
}

#ifdef __cplusplus
}
#endif

#endif /* DQSGD_H_INCLUDED */

/* MIT License. Copyright (c) 2026 the dqsgd authors.
 * Permission is hereby granted, free of charge, to any person obtaining a copy of this software
 * and associated documentation files (the "Software"), to deal in the Software without
 * restriction, including without limitation the rights to use, copy, modify, merge, publish,
 * distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the
 * Software is furnished to do so, subject to the following conditions: The above copyright
 * notice and this permission notice shall be included in all copies or substantial portions of
 * the Software. THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 * IMPLIED. */

