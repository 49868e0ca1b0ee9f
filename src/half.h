/* ---------------------------------------------------------------- fp16 and bf16 (API above) */
/* ---- scalar conversions (the reference every kernel matches bit for bit) */
static inline uint16_t dq__f32_to_f16_bits(uint32_t u) {
    uint32_t s = (u >> 16) & 0x8000u, a = u & DQ__ABS_MASK, h;
    if (a > 0x7F800000u) { /* NaN: quiet, top 10 payload bits */
        h = 0x7E00u | ((a >> 13) & 0x03FFu);
    } else if (a >= 0x477FF000u) { /* rounds above 65504 (ties go up: 65504 is odd) */
        h = 0x7C00u;
    } else if (a >= 0x38800000u) { /* normal half: rebias, round at bit 13 */
        uint32_t t = a - 0x38000000u;
        h = (t + 0x0FFFu + ((t >> 13) & 1u)) >> 13;
    } else if (a < 0x33000000u) { /* below 2^-25 (2^-25 itself is a tie to 0) */
        h = 0;
    } else { /* subnormal half: the 24-bit significand in units of 2^-24 */
        uint32_t e = a >> 23, m = (a & 0x007FFFFFu) | 0x00800000u, sh = 126u - e;
        uint32_t rem = m & ((1u << sh) - 1u), half = 1u << (sh - 1u);
        h = m >> sh;
        h += (rem > half || (rem == half && (h & 1u))) ? 1u : 0u;
    }
    return (uint16_t)(s | h);
}
static inline uint32_t dq__f16_to_f32_bits(uint32_t h) {
    uint32_t s = (h & 0x8000u) << 16, a = h & 0x7FFFu, e = 113u;
    if (a >= 0x7C00u) return s | 0x7F800000u | ((a & 0x03FFu) << 13) | (a > 0x7C00u ? 0x00400000u : 0u);
    if (a >= 0x0400u) return s | ((a << 13) + 0x38000000u);
    if (a == 0) return s;
    while (!(a & 0x0400u)) { /* subnormal: normalize */
        a <<= 1;
        e--;
    }
    return s | (e << 23) | ((a & 0x03FFu) << 13);
}
static inline uint16_t dq__f32_to_bf16_bits(uint32_t u) {
    if ((u & DQ__ABS_MASK) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x0040u);
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
static inline uint32_t dq__bf16_to_f32_bits(uint32_t h) {
    uint32_t u = h << 16;
    return (u & DQ__ABS_MASK) > 0x7F800000u ? u | 0x00400000u : u;
}

/* ---- scalar kernels; 16-bit elements are accessed bytewise (memcpy), so any alignment and any
 * declared element type of the caller's array is fine */
static inline void dq__f16_to_f32__scalar(const void *src, float *dst, size_t n) {
    const uint8_t *s = (const uint8_t *)src;
    size_t i;
    for (i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, s + 2u * i, 2);
        dst[i] = dq__bitsf(dq__f16_to_f32_bits(h));
    }
}
static inline void dq__f32_to_f16__scalar(const float *src, void *dst, size_t n) {
    uint8_t *d = (uint8_t *)dst;
    size_t i;
    for (i = 0; i < n; i++) {
        uint16_t h = dq__f32_to_f16_bits(dq__fbits(src[i]));
        memcpy(d + 2u * i, &h, 2);
    }
}
static inline void dq__bf16_to_f32__scalar(const void *src, float *dst, size_t n) {
    const uint8_t *s = (const uint8_t *)src;
    size_t i;
    for (i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, s + 2u * i, 2);
        dst[i] = dq__bitsf(dq__bf16_to_f32_bits(h));
    }
}
static inline void dq__f32_to_bf16__scalar(const float *src, void *dst, size_t n) {
    uint8_t *d = (uint8_t *)dst;
    size_t i;
    for (i = 0; i < n; i++) {
        uint16_t h = dq__f32_to_bf16_bits(dq__fbits(src[i]));
        memcpy(d + 2u * i, &h, 2);
    }
}

/* ---- statistics carried across calls: continue the 16 lanes sq / ab (element j of x, + e, into
 * lane j % 16) and the maximum mx with x[0..n); `what` (DQ__ST_* bits) says which of the three
 * are updated. The lanes are those of dq__stats_tail, so a bucket cut into pieces gets the
 * one-pass sums exactly. */
static inline void dq__hstat_acc__scalar(const float *x, const float *e, size_t n, unsigned what, double *sq,
                                         double *ab, uint32_t *mx) {
    double s2[DQ__SLANES], a2[DQ__SLANES];
    uint32_t m2 = *mx;
    memcpy(s2, sq, sizeof s2);
    memcpy(a2, ab, sizeof a2);
    dq__stats_tail(x, e, 0, n, s2, a2, &m2);
    if (what & DQ__ST_SQ) memcpy(sq, s2, sizeof s2);
    if (what & DQ__ST_ABS) memcpy(ab, a2, sizeof a2);
    if (what & DQ__ST_MAX) *mx = m2;
}


/* ---------------------------------------------------------------- fp16 and bf16: the typed codec
 * The codec's own pipeline with 16-bit data (the element adapter of the level encoder). */

DQ_API uint16_t dq_f32_to_f16(float f) { return dq__f32_to_f16_bits(dq__fbits(f)); }
DQ_API float dq_f16_to_f32(uint16_t h) { return dq__bitsf(dq__f16_to_f32_bits(h)); }
DQ_API uint16_t dq_f32_to_bf16(float f) { return dq__f32_to_bf16_bits(dq__fbits(f)); }
DQ_API float dq_bf16_to_f32(uint16_t h) { return dq__bitsf(dq__bf16_to_f32_bits(h)); }

DQ_API dq_status dq_convert(dq_dtype from, const void *src, size_t n, dq_dtype to, void *dst) {
    float buf[DQ__ELCHUNK];
    size_t i;
    if (!src || !dst) return DQ_ERR_NULL;
    if (!dq_dtype_size(from) || !dq_dtype_size(to)) return DQ_ERR_PARAM;
    if (n == 0) return DQ_OK;
    if (from == to) {
        if (src != dst) memmove(dst, src, n * dq_dtype_size(to));
    } else if (from == DQ_F32) { /* narrowing: the kernels store each group behind its loads */
        dq__el_out(to, (const float *)src, n, dst, 0);
    } else if (to == DQ_F32) {
        (void)dq__el_in(from, src, 0, n, (float *)dst);
    } else { /* fp16 <-> bf16 through float, a chunk at a time */
        for (i = 0; i < n; i += DQ__ELCHUNK) {
            size_t cnt = n - i < DQ__ELCHUNK ? n - i : DQ__ELCHUNK;
            dq__el_out(to, dq__el_in(from, src, i, cnt, buf), cnt, dst, i);
        }
    }
    return DQ_OK;
}

DQ_API dq_status dq_encode_typed(const dq_params *p, dq_dtype xt, const void *x, size_t n, dq_dtype rt,
                                 void *residual, void *dst, size_t dst_cap, size_t *dst_len) {
    if (!dst_len || !p || !x || !dst) return DQ_ERR_NULL;
    if (!dq_dtype_size(xt) || !dq_dtype_size(rt)) return DQ_ERR_PARAM;
    return dq__ops_params(p)->encode(p, xt, x, n, rt, residual, dst, dst_cap, dst_len);
}
DQ_API dq_status dq_decode_typed(const void *src, size_t src_len, dq_dtype ot, void *out, size_t out_cap) {
    return dq__decode_msg(src, src_len, 1.0f, 0, ot, out, out_cap);
}
DQ_API dq_status dq_decode_add_typed(const void *src, size_t src_len, float weight, dq_dtype at, void *acc,
                                     size_t acc_len) {
    return dq__decode_msg(src, src_len, weight, 1, at, acc, acc_len);
}


