/* ================================================================ scalar kernels
 * The reference of every kernel family: dq__<family>__scalar defines the bytes and values, and
 * each SIMD kernel dq__<family>__<isa> (dqsgd_simd.h) is its twin, bit for bit (tests/test_simd*.c
 * and the other kernel tests compare them). The SIMD kernels hand their tails to these, so this
 * part comes before dqsgd_simd.h is included; the selection (src/select.h) binds each family's
 * dq__k_<family> to its best kernel compiled in. In order: the dither round's hoisted key (for
 * the SIMD rounds), bucket statistics (and two-means), error feedback, quantization (uniform,
 * table, shared-scale), packing, block decoding, Elias sizing, CRC32C, the VARINT index
 * decoder, 32-way rANS chunks, fp16/bf16 conversions, the sparsifiers' scan, count-sketch
 * hashes. (The Elias early-stop pass, dq__elias_gaps__scalar, is still with the coders.) */

/* ---- the dither round's hoisted key. The SIMD dither rounds (dq__draw__<isa>) compute
 * dq__draw32 for a run of counters lo .. lo + cnt - 1 (mod 2^32). The round's first step,
 * x ^= x >> 16 with x = counter ^ k0, is counter ^ k0h with k0h = k0 ^ ((lo ^ k0) >> 16) when the
 * counters share their high 16 bits (a block of 256 never crosses a multiple of 2^16 unless it
 * starts unaligned), and the step then costs nothing per lane. Returns 1 and that key in *k0h,
 * else 0 and k0. */
static inline int dq__draw_hoist(uint32_t k0, uint32_t lo, size_t cnt, uint32_t *k0h) {
    uint32_t last = lo + (uint32_t)(cnt ? cnt - 1u : 0u);
    int ok = cnt <= 65536u && ((lo ^ last) >> 16) == 0u;
    *k0h = ok ? k0 ^ ((lo ^ k0) >> 16) : k0;
    return ok;
}

/* ---- per-bucket statistics: one pass, fixed association order.
 * sumsq and sumabs accumulate in double in 16 lanes (element i into lane i % 16, in index
 * order; 16 independent chains keep the adds' latency hidden); the lanes are combined as
 * l_k + l_(k+8) for k < 8, then (a0+a4, a1+a5, a2+a6, a3+a7), then pairwise, then the last two.
 * Squares of floats are exact in double. maxbits is the largest |x| bit pattern.
 * A bucket holds a NaN or Inf exactly when the statistic its norm needs says so: sumsq or
 * sumabs not finite (finite floats cannot overflow these double sums), maxbits >= 0x7F800000.
 * So each norm computes only its own statistic (`what`); the others are left 0. */
#define DQ__ST_SQ 1u
#define DQ__ST_ABS 2u
#define DQ__ST_MAX 4u
typedef struct dq__stats {
    double sumsq, sumabs;
    uint32_t maxbits;
} dq__stats;

#define DQ__SLANES 16u
static inline double dq__lanes_sum(const double l[DQ__SLANES]) {
    double a[8], b0, b1, b2, b3, c0, c1;
    unsigned k;
    for (k = 0; k < 8; k++) a[k] = l[k] + l[k + 8];
    b0 = a[0] + a[4];
    b1 = a[1] + a[5];
    b2 = a[2] + a[6];
    b3 = a[3] + a[7];
    c0 = b0 + b2;
    c1 = b1 + b3;
    return c0 + c1;
}
/* Scalar tail shared with the SIMD kernels: continue lanes from element index `first`.
 * With e non-NULL the statistics are those of x[i] + e[i] (the error-feedback input). */
static inline void dq__stats_tail(const float *x, const float *e, size_t first, size_t n, double sq[DQ__SLANES],
                                  double ab[DQ__SLANES], uint32_t *mx) {
    size_t i;
    for (i = first; i < n; i++) {
        uint32_t u = dq__abs_bits(e ? x[i] + e[i] : x[i]);
        double d = (double)dq__bitsf(u), d2 = d * d;
        sq[i % DQ__SLANES] += d2;
        ab[i % DQ__SLANES] += d;
        if (u > *mx) *mx = u;
    }
}
static inline void dq__stats_finish(const double sq[DQ__SLANES], const double ab[DQ__SLANES], uint32_t mx, unsigned what,
                                    dq__stats *st) {
    st->sumsq = (what & DQ__ST_SQ) ? dq__lanes_sum(sq) : 0.0;
    st->sumabs = (what & DQ__ST_ABS) ? dq__lanes_sum(ab) : 0.0;
    st->maxbits = (what & DQ__ST_MAX) ? mx : 0u;
}
/* End of a SIMD kernel: lanes holds its one statistic (sums for SQ or ABS), mx the running
 * maximum; the scalar tail continues from element `first`. */
static inline void dq__stats_end(const float *x, const float *e, size_t first, size_t n, unsigned what,
                                 double lanes[DQ__SLANES], uint32_t mx, dq__stats *st) {
    double none[DQ__SLANES] = {0};
    double *sq = what == DQ__ST_ABS ? none : lanes, *ab = what == DQ__ST_ABS ? lanes : none;
    dq__stats_tail(x, e, first, n, sq, ab, &mx);
    dq__stats_finish(sq, ab, mx, what, st);
}
static inline void dq__stats__scalar(const float *x, const float *e, size_t n, unsigned what, dq__stats *st) {
    double sq[DQ__SLANES] = {0}, ab[DQ__SLANES] = {0};
    uint32_t mx = 0;
    dq__stats_tail(x, e, 0, n, sq, ab, &mx);
    dq__stats_finish(sq, ab, mx, what, st);
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

/* ---- two-means statistics (DQ_SCHEME_TWOMEANS, doc/FORMAT.md 22.2): element j of x (or
 * x + e) adds its magnitude |x_j| (as a double) to lane j % 16 of pos[] when its sign bit is
 * clear, of neg[] when it is set, and counts the set sign bits in *nneg. The lanes are carried
 * in and out (a bucket may be cut into pieces, each starting at lane 0: the caller rotates),
 * and combined like dq__stats' lanes (dq__lanes_sum). A NaN or Inf makes a sum non-finite. The
 * SIMD twins add +0.0 to the other group's lane, which leaves a lane that holds a sum of
 * magnitudes (>= +0) unchanged, so they agree bit for bit. */
static inline unsigned dq__popcount32(uint32_t m) {
    m = m - ((m >> 1) & 0x55555555u);
    m = (m & 0x33333333u) + ((m >> 2) & 0x33333333u);
    return (unsigned)((((m + (m >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24);
}
static inline void dq__tm_acc__scalar(const float *x, const float *e, size_t n, double *pos, double *neg,
                                      uint64_t *nneg) {
    uint64_t m = *nneg;
    size_t i;
    for (i = 0; i < n; i++) {
        uint32_t u = dq__fbits(e ? x[i] + e[i] : x[i]);
        double d = (double)dq__bitsf(u & DQ__ABS_MASK);
        if (u >> 31) {
            neg[i % DQ__SLANES] += d;
            m++;
        } else {
            pos[i % DQ__SLANES] += d;
        }
    }
    *nneg = m;
}

/* ---- error feedback: e[i] = x[i] + e[i], the compensated value that gets quantized. */
static inline void dq__compensate__scalar(const float *x, float *e, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) e[i] = x[i] + e[i];
}

/* ---- quantization of one bucket segment into codes (doc/FORMAT.md "Codes")
 * b >= 2: s = 2^(b-1) - 1 levels; r = min(|x| * inv, s), inv = s / scale; l = trunc(r);
 *         l += (t < r - l) with t = 24-bit uniform draw * 2^-24 (stochastic) or 0.5 (nearest);
 *         code = l | sign << (b-1), sign set only when x < 0 (sign bit) and l > 0.
 * b == 1: stochastic: p = 0.5 + x * inv, inv = 0.5 / scale; code = (t < p) ? 0 : 1 (1 = negative);
 *         nearest: code = sign bit of x (scaled sign, and two-means).
 * Decoded value of a code: level * step with the code's sign, step = scale / s (b >= 2); with
 * b == 1, step for code 0 and neg for code 1 (neg = -step, except for two-means, where step and
 * neg are the bucket's two means). With `res`, res[i] = x[i] - decoded (x may alias res). */
typedef struct dq__qctx {
    float inv, smax, step, thresh; /* thresh: 0.5 for nearest; < 0 means stochastic */
    float neg;                     /* b == 1: the decoded value of code 1 */
    unsigned bits;
    uint32_t k0, k1h, lo; /* generator key and low half of the first element's index */
    const float *tab;     /* table schemes: magnitudes tab[0..s]; NULL for uniform levels */
    float scale;          /* table schemes: the bucket's scale (inv = 1 / scale) */
} dq__qctx;

static inline float dq__decode_value(uint32_t code, unsigned bits, float step) {
    uint32_t lvl = bits == 1 ? 1u : (code & ((1u << (bits - 1)) - 1u));
    float v = (float)lvl * step;
    return (code >> (bits - 1)) ? -v : v;
}
static inline void dq__quant__scalar(const dq__qctx *q, const float *x, size_t cnt, uint32_t *codes, float *res) {
    size_t i;
    for (i = 0; i < cnt; i++) {
        float xi = x[i];
        uint32_t xb = dq__fbits(xi), sgn = xb >> 31, code;
        float t = q->thresh >= 0.0f ? q->thresh
                                     : (float)dq__draw24(q->k0, q->k1h, q->lo + (uint32_t)i) * 5.96046448e-08f;
        if (q->bits == 1) {
            float xs = xi * q->inv, pp = 0.5f + xs;
            code = q->thresh >= 0.0f ? sgn : ((t < pp) ? 0u : 1u);
        } else {
            float r = dq__bitsf(xb & DQ__ABS_MASK) * q->inv;
            uint32_t l;
            float f;
            if (!(r < q->smax)) r = q->smax;
            l = (uint32_t)(int32_t)r;
            f = r - (float)l;
            l += (t < f) ? 1u : 0u;
            code = l | ((l != 0u ? sgn : 0u) << (q->bits - 1));
        }
        codes[i] = code;
        if (res) res[i] = xi - (q->bits == 1 ? (code ? q->neg : q->step) : dq__decode_value(code, q->bits, q->step));
    }
}

/* ---- quantization against a table of magnitudes (doc/FORMAT.md 6.7): tab[0] = 0 < tab[1] <
 * ... < tab[s] = 1. r = min(|x| * inv, 1) with inv = 1 / scale; j is the largest index with
 * tab[j] <= r (j < s, or j = s when r = 1); f = (r - tab[j]) / (tab[j+1] - tab[j]); the level
 * is j + (t < f). The decoded magnitude is tab[level] * scale. For exponential levels (tab[l] =
 * 2^(l-s)) f is the mantissa fraction of r, exactly, and the rule is natural dithering. */
static inline float dq__tab_value(uint32_t code, unsigned bits, const float *tab, float scale) {
    float v = tab[code & ((1u << (bits - 1)) - 1u)] * scale;
    return (code >> (bits - 1)) ? -v : v;
}
static inline uint32_t dq__tab_level(const float *tab, unsigned s, float r, float t) {
    unsigned lo = 0, hi = s;
    if (!(r < 1.0f)) return s;
    while (hi - lo > 1u) { /* tab[lo] <= r < tab[hi] */
        unsigned mid = (lo + hi) / 2u;
        if (tab[mid] <= r)
            lo = mid;
        else
            hi = mid;
    }
    return lo + ((t < (r - tab[lo]) / (tab[hi] - tab[lo])) ? 1u : 0u);
}
static inline void dq__quant_tab__scalar(const dq__qctx *q, const float *x, size_t cnt, uint32_t *codes, float *res) {
    unsigned s = (1u << (q->bits - 1)) - 1u;
    size_t i;
    for (i = 0; i < cnt; i++) {
        float xi = x[i];
        uint32_t xb = dq__fbits(xi), l;
        float t = q->thresh >= 0.0f ? q->thresh
                                     : (float)dq__draw24(q->k0, q->k1h, q->lo + (uint32_t)i) * 5.96046448e-08f;
        l = dq__tab_level(q->tab, s, dq__bitsf(xb & DQ__ABS_MASK) * q->inv, t);
        codes[i] = l | ((l != 0u ? xb >> 31 : 0u) << (q->bits - 1));
        if (res) res[i] = xi - dq__tab_value(codes[i], q->bits, q->tab, q->scale);
    }
}

/* ---- shared-scale levels (the aggregation section's quantizer): elements i0 .. i0+cnt-1 of
 * v = x (+ r) as signed integer levels on the unit 1/inv, into lv. The element indices must not
 * cross a multiple of 2^32 (k1h is the middle key of their high half). r, when non-NULL,
 * becomes v - level * unit. |v| * inv <= L is the caller's promise. */
static inline void dq__shared_q__scalar(const float *x, float *r, size_t cnt, size_t i0, float inv, float unit,
                                        uint32_t k0, uint32_t k1h, int stoch, int32_t *lv) {
    size_t j;
    for (j = 0; j < cnt; j++) {
        float v = r ? x[j] + r[j] : x[j];
        float t = dq__bitsf(dq__abs_bits(v)) * inv; /* exact */
        uint32_t lo = (uint32_t)t, up;
        float f = t - (float)lo;
        if (stoch)
            up = (uint32_t)((float)dq__draw24(k0, k1h, (uint32_t)(i0 + j)) < f * 16777216.0f);
        else
            up = (uint32_t)(f > 0.5f);
        lo += up;
        lv[j] = dq__fbits(v) >> 31 ? -(int32_t)lo : (int32_t)lo;
        if (r) {
            float back = (float)lv[j] * unit;
            r[j] = v - back;
        }
    }
}

/* ---- packing (doc/FORMAT.md "Payload")
 * A block of 256 codes is 8 lanes; lane L holds codes 8r+L, r = 0..31, at bits r*b of a
 * 32b-bit lane stream kept as b 32-bit words; word j of lane L is stored at word j*8+L, little
 * endian. Fewer than 256 trailing codes form a plain LSB-first bit stream, zero-padded. */
static inline void dq__pack_block__scalar(const uint32_t *codes, unsigned b, uint8_t *out) {
    unsigned L;
    for (L = 0; L < DQ__LANES; L++) {
        uint64_t acc = 0;
        unsigned have = 0, r, j = 0;
        for (r = 0; r < DQ__ROWS; r++) {
            acc |= (uint64_t)codes[r * DQ__LANES + L] << have;
            have += b;
            if (have >= 32) {
                dq__st32(out + 4u * (j * DQ__LANES + L), (uint32_t)acc);
                j++;
                acc >>= 32;
                have -= 32;
            }
        }
    }
}
static inline void dq__unpack_block__scalar(const uint8_t *in, unsigned b, uint32_t *codes) {
    unsigned L;
    uint32_t mask = (uint32_t)((1u << b) - 1u);
    for (L = 0; L < DQ__LANES; L++) {
        uint64_t acc = 0;
        unsigned have = 0, r, j = 0;
        for (r = 0; r < DQ__ROWS; r++) {
            if (have < b) {
                acc |= (uint64_t)dq__ld32(in + 4u * (j * DQ__LANES + L)) << have;
                j++;
                have += 32;
            }
            codes[r * DQ__LANES + L] = (uint32_t)acc & mask;
            acc >>= b;
            have -= b;
        }
    }
}
static inline void dq__pack_tail(const uint32_t *codes, size_t cnt, unsigned b, uint8_t *out) {
    uint64_t acc = 0;
    unsigned have = 0;
    size_t i;
    for (i = 0; i < cnt; i++) {
        acc |= (uint64_t)codes[i] << have;
        have += b;
        while (have >= 8) {
            *out++ = (uint8_t)acc;
            acc >>= 8;
            have -= 8;
        }
    }
    if (have) *out = (uint8_t)acc;
}
/* Returns 0 if the padding bits after the last code are not zero. */
static inline int dq__unpack_tail(const uint8_t *in, size_t cnt, unsigned b, uint32_t *codes) {
    uint64_t acc = 0;
    unsigned have = 0;
    uint32_t mask = (uint32_t)((1u << b) - 1u);
    size_t i;
    for (i = 0; i < cnt; i++) {
        while (have < b) {
            acc |= (uint64_t)*in++ << have;
            have += 8;
        }
        codes[i] = (uint32_t)acc & mask;
        acc >>= b;
        have -= b;
    }
    return acc == 0;
}

/* Quantize and pack a full block of 256 elements that lies in one bucket: the composition of
 * dq__quant__scalar and dq__pack_block__scalar, fused in the SIMD versions. */
static inline void dq__quant_pack__scalar(const dq__qctx *q, const float *x, float *res, uint8_t *out) {
    uint32_t codes[DQ__BLOCK];
    dq__quant__scalar(q, x, DQ__BLOCK, codes, res);
    dq__pack_block__scalar(codes, q->bits, out);
}

/* ---- decoding one packed block; rowstep[r] is the step of row r (rows never straddle a
 * bucket because buckets are multiples of 8). add: out = out + w * v, else out = v. */
static inline void dq__decode_codes(const uint32_t *codes, size_t cnt, unsigned b, float step, float w, int add,
                                    float *out) {
    size_t i;
    for (i = 0; i < cnt; i++) {
        float v = dq__decode_value(codes[i], b, step);
        if (add) {
            float t = w * v;
            out[i] = out[i] + t;
        } else {
            out[i] = v;
        }
    }
}
static inline void dq__decode_block__scalar(const uint8_t *in, unsigned b, const float *rowstep, float w, int add,
                                            float *out) {
    uint32_t codes[DQ__BLOCK];
    unsigned r;
    dq__unpack_block__scalar(in, b, codes);
    for (r = 0; r < DQ__ROWS; r++)
        dq__decode_codes(codes + r * DQ__LANES, DQ__LANES, b, rowstep[r], w, add, out + r * DQ__LANES);
}
/* Two-means (b = 1): code 0 decodes to pos, code 1 to neg, the bucket's two means; rowpos[r]
 * and rowneg[r] are those of row r. */
static inline void dq__decode_codes_tm(const uint32_t *codes, size_t cnt, float pos, float neg, float w, int add,
                                       float *out) {
    size_t i;
    for (i = 0; i < cnt; i++) {
        float v = codes[i] ? neg : pos;
        if (add) {
            float t = w * v;
            out[i] = out[i] + t;
        } else {
            out[i] = v;
        }
    }
}
static inline void dq__decode_block_tm__scalar(const uint8_t *in, const float *rowpos, const float *rowneg, float w,
                                               int add, float *out) {
    uint32_t codes[DQ__BLOCK];
    unsigned r;
    dq__unpack_block__scalar(in, 1u, codes);
    for (r = 0; r < DQ__ROWS; r++)
        dq__decode_codes_tm(codes + r * DQ__LANES, DQ__LANES, rowpos[r], rowneg[r], w, add, out + r * DQ__LANES);
}
/* Table schemes: rowscale[r] is the bucket scale of row r. */
static inline void dq__decode_codes_tab(const uint32_t *codes, size_t cnt, unsigned b, const float *tab, float scale,
                                        float w, int add, float *out) {
    size_t i;
    for (i = 0; i < cnt; i++) {
        float v = dq__tab_value(codes[i], b, tab, scale);
        if (add) {
            float t = w * v;
            out[i] = out[i] + t;
        } else {
            out[i] = v;
        }
    }
}
static inline void dq__decode_block_tab__scalar(const uint8_t *in, unsigned b, const float *tab, const float *rowscale,
                                                float w, int add, float *out) {
    uint32_t codes[DQ__BLOCK];
    unsigned r;
    dq__unpack_block__scalar(in, b, codes);
    for (r = 0; r < DQ__ROWS; r++)
        dq__decode_codes_tab(codes + r * DQ__LANES, DQ__LANES, b, tab, rowscale[r], w, add, out + r * DQ__LANES);
}

/* ---- Elias sizing scan (b >= 2) of cnt unpacked codes (cnt <= 256): nz[w] bit i says that code
 * 64w + i has a non-zero level (words past cnt are 0); returns the sign and level bits of those
 * codes, lvt[L] being those of a level of bit length L (lvt[0] = 0), or UINT32_MAX when a code
 * is a negative zero (sign set, level 0), which the Elias layout cannot carry. */
static inline uint32_t dq__elias_scan_codes(const uint32_t *codes, size_t cnt, unsigned b, const uint8_t *lvt,
                                            uint64_t *nz) {
    uint32_t smax = (1u << (b - 1u)) - 1u, bits = 0, bad = 0;
    size_t i;
    nz[0] = nz[1] = nz[2] = nz[3] = 0;
    for (i = 0; i < cnt; i++) {
        uint32_t l = codes[i] & smax, len = 0;
        while (l >> len) len++;
        bad |= codes[i] == smax + 1u;
        nz[i >> 6] |= (uint64_t)(l != 0u) << (i & 63u);
        bits += lvt[len];
    }
    return bad ? UINT32_MAX : bits;
}
/* The same for a full packed block, its codes unpacked into codes[0..256). */
static inline uint32_t dq__elias_scan__scalar(const uint8_t *in, unsigned b, const uint8_t *lvt, uint32_t *codes,
                                              uint64_t *nz) {
    dq__unpack_block__scalar(in, b, codes);
    return dq__elias_scan_codes(codes, DQ__BLOCK, b, lvt, nz);
}
/* Only the non-zero masks of a full packed block (as dq__elias_scan__scalar's nz), for the
 * early-stop pass of Elias sizing, which needs nothing else. */
static inline void dq__elias_nz__scalar(const uint8_t *in, unsigned b, uint64_t *nz) {
    uint32_t codes[DQ__BLOCK], smax = (1u << (b - 1u)) - 1u;
    unsigned i;
    dq__unpack_block__scalar(in, b, codes);
    nz[0] = nz[1] = nz[2] = nz[3] = 0;
    for (i = 0; i < DQ__BLOCK; i++) nz[i >> 6] |= (uint64_t)((codes[i] & smax) != 0u) << (i & 63u);
}

/* ---- CRC32C (Castagnoli, reflected polynomial 0x82F63B78), nibble table.
 * Updates the raw register c (no initial or final inversion, like the SSE4.2 instruction). */
static inline uint32_t dq__crc32c__scalar(uint32_t c, const uint8_t *p, size_t n) {
    static const uint32_t t[16] = {0x00000000u, 0x105EC76Fu, 0x20BD8EDEu, 0x30E349B1u, 0x417B1DBCu, 0x5125DAD3u,
                                   0x61C69362u, 0x7198540Du, 0x82F63B78u, 0x92A8FC17u, 0xA24BB5A6u, 0xB21572C9u,
                                   0xC38D26C4u, 0xD3D3E1ABu, 0xE330A81Au, 0xF36E6F75u};
    size_t i;
    for (i = 0; i < n; i++) {
        c ^= p[i];
        c = (c >> 4) ^ t[c & 15u];
        c = (c >> 4) ^ t[c & 15u];
    }
    return c;
}

/* ---- sparse index streams: the VARINT decoder (doc/FORMAT.md 18) */
/* Running state of a VARINT decode, carried from the SIMD kernel to its scalar tail. */
typedef struct dq__svb_acc {
    uint32_t prev; /* last index written; 0xFFFFFFFF before the first */
    uint32_t bad;  /* nonzero once a value was stored in more bytes than it needs */
    uint64_t sum;  /* sum of the decoded values (gaps minus one) */
} dq__svb_acc;
typedef void (*dq__svb_kernel)(const uint8_t *ctrl, const uint8_t *data, size_t data_len, size_t k, uint32_t *out,
                               dq__svb_acc *a);

/* Decode k VARINT values: ctrl holds ceil(k/4) control bytes (value i's length - 1 in bits
 * 2(i%4)..2(i%4)+1 of byte i/4), data exactly the bytes they announce (data_len, validated
 * by the caller). out[i] = prev + value + 1, prefix-summed modulo 2^32. */
static inline void dq__svb_decode__scalar(const uint8_t *ctrl, const uint8_t *data, size_t data_len, size_t k,
                                          uint32_t *out, dq__svb_acc *a) {
    static const uint32_t mask[4] = {0xFFu, 0xFFFFu, 0xFFFFFFu, 0xFFFFFFFFu};
    static const uint32_t least[4] = {0u, 0x100u, 0x10000u, 0x1000000u}; /* smallest value of each length */
    uint32_t prev = a->prev, bad = 0;
    uint64_t sum = a->sum;
    size_t i, pos = 0;
    for (i = 0; i < k; i++) {
        unsigned c = (unsigned)(ctrl[i >> 2] >> (2u * (i & 3u))) & 3u;
        uint32_t v = 0;
        if (data_len - pos >= 4) {
            v = dq__ld32(data + pos) & mask[c];
        } else {
            unsigned j = c + 1u;
            while (j-- > 0) v = v << 8 | data[pos + j];
        }
        pos += c + 1u;
        bad |= (uint32_t)(v < least[c]);
        sum += v;
        prev += v + 1u;
        out[i] = prev;
    }
    a->prev = prev;
    a->bad |= bad;
    a->sum = sum;
}

/* ---- rANS, 32 ways: the chunk kernels' scalar twins (coder 3 draft, doc/FORMAT.md 17.6).
 * One chunk of m symbols: 32 u32 LE states X_0..X_31, then u16 LE words read in order; symbol
 * j runs on state j mod 32; probabilities in units of 1/4096 and 16-bit renormalization as the
 * 8-way coder of section 17.3 (further down: DQ__RANS_*). The kernels dq__k_r32_get (decode)
 * and dq__k_r32_encode have SIMD twins in dqsgd_simd.h that write the same bytes; the chunk
 * API (tables, open, finish, whole-chunk decode, one fixed block) sits beside the 8-way coder. */
#define DQ__R32_WAYS 32u
#define DQ__R32_HEAD 128u  /* bytes of the 32 states */
#define DQ__R32_L 65536u   /* states live in [L, 2^32) */
#define DQ__R32_M 4096u

/* Encoder constants of one symbol (8 bytes, loaded whole by the SIMD twin):
 *   info = f | s << 13 | bias << 17  (f = f_s in 0..4096, s in 0..11, bias in 0..8190)
 *   rcp  = Granlund-Montgomery reciprocal: for every 32-bit x, with t = (x * rcp) >> 32,
 *          q = (t + ((x - t) >> 1)) >> s equals floor(x / f) (f >= 2), and x - 1 for f = 1.
 * Derivation (f >= 2): let l = ceil(log2 f) and m = ceil(2^(32+l) / f), so 2^32 <= m < 2^33
 * and m f - 2^(32+l) < f <= 2^l; then floor(x m / 2^(32+l)) = floor(x / f) for x < 2^32,
 * because x (m f - 2^(32+l)) / (f 2^(32+l)) < 2^32 2^l / (f 2^(32+l)) <= 1/f. With rcp = m - 2^32,
 * x m / 2^32 = x + t' (t' = x rcp / 2^32 exactly), and floor((x + t) / 2^l) for t = floor(t')
 * is the same integer; t <= x, so (x + t) / 2 = t + (x - t) / 2 without a 33-bit sum, hence
 * the shift s = l - 1 after the halving (powers of two get rcp = 0). f = 1 would need m = 2^32:
 * rcp = 2^32 - 1 gives t = x - 1 for 1 <= x < 2^32, s = 0 gives q = x - 1, and the missing
 * (M - 1) is added back through bias = c + M - 1 (bias = c otherwise). Then the new state is
 * x + q (M - f) + bias = (x div f) M + (x mod f) + c. */
typedef struct dq__r32_esym {
    uint32_t rcp;
    uint32_t info;
} dq__r32_esym;

/* Decoder of one chunk, as it advances. */
typedef struct dq__r32_dec {
    uint32_t x[DQ__R32_WAYS];
    const uint8_t *p;   /* next word */
    const uint8_t *end; /* end of the chunk; end - p is even */
    size_t j;           /* symbols decoded so far (symbol j runs on state j mod 32) */
    uint32_t bad;       /* a state needed a word after the last one */
} dq__r32_dec;

/* Decode the next cnt symbols into out. A state that needs a word when none is left takes
 * 0 instead (x << 16, which keeps it in [L, 2^32)) and marks the chunk bad; the symbols are
 * written all the same, so every twin writes the same cnt bytes whatever the stream. */
static inline void dq__r32_get__scalar(dq__r32_dec *d, const uint32_t *tab, uint8_t *out, size_t cnt) {
    const uint8_t *p = d->p, *end = d->end;
    size_t i, j = d->j;
    uint32_t bad = d->bad;
    for (i = 0; i < cnt; i++) {
        uint32_t *xp = d->x + ((j + i) & (DQ__R32_WAYS - 1u));
        uint32_t x = *xp, e = tab[x & (DQ__R32_M - 1u)], t;
        out[i] = (uint8_t)e;
        t = ((e >> 8 & 0xFFFu) + 1u) * (x >> 12);
        x = t + (e >> 20);
        if (x < DQ__R32_L) {
            if (p != end) {
                x = x << 16 | dq__ld16(p);
                p += 2;
            } else {
                x <<= 16;
                bad = 1;
            }
        }
        *xp = x;
    }
    d->p = p;
    d->j = j + cnt;
    d->bad = bad;
}

/* One encode step of symbol constants e on *xp: returns 1 when the state sheds a word first
 * (its low 16 bits into *word, unless word is NULL). dq__r32_put1 writes that word below offset
 * *w of buf; 0 (and nothing done) when it would go below buf. */
static inline int dq__r32_step(uint32_t *xp, const dq__r32_esym *e, uint32_t *word) {
    uint32_t x = *xp, f = e->info & 0x1FFFu, t, q;
    int shed = (x >> 20) >= f; /* x >= f 2^20 (never for f = 4096) */
    if (shed) {
        if (word) *word = x & 0xFFFFu;
        x >>= 16;
    }
    t = (uint32_t)(((uint64_t)x * e->rcp) >> 32);
    q = (t + ((x - t) >> 1)) >> (e->info >> 13 & 15u);
    t = q * (DQ__R32_M - f);
    *xp = x + t + (e->info >> 17);
    return shed;
}
static inline int dq__r32_put1(uint32_t *xp, const dq__r32_esym *e, uint8_t *buf, size_t *w) {
    uint32_t word = 0;
    if ((*xp >> 20) >= (e->info & 0x1FFFu) && *w < 2u) return 0;
    if (dq__r32_step(xp, e, &word)) {
        *w -= 2u;
        dq__st16(buf + *w, word);
    }
    return 1;
}
/* Symbols hi - 1 down to lo, symbol j on state x[j mod 32]; 0 on overflow. */
static inline int dq__r32_put_range(uint32_t *x, const uint8_t *sym, size_t hi, size_t lo, const dq__r32_esym *et,
                                    uint8_t *buf, size_t *w) {
    size_t j;
    for (j = hi; j-- > lo;)
        if (!dq__r32_put1(x + (j & (DQ__R32_WAYS - 1u)), et + sym[j], buf, w)) return 0;
    return 1;
}
/* The 32 states below offset w; the chunk's size, or 0 when they do not fit. */
static inline size_t dq__r32_put_states(const uint32_t *x, uint8_t *buf, size_t w, size_t cap) {
    unsigned k;
    if (w < DQ__R32_HEAD) return 0;
    w -= DQ__R32_HEAD;
    for (k = 0; k < DQ__R32_WAYS; k++) dq__st32(buf + w + 4u * k, x[k]);
    return cap - w;
}
/* Encode sym[0..m) as one chunk at the end of buf[0..cap): returns the chunk's size L (it
 * starts at buf + cap - L), or 0 when it does not fit. Every symbol must have f_s > 0 (else
 * the bytes are defined but do not decode to it). */
static inline size_t dq__r32_encode__scalar(const uint8_t *sym, size_t m, const dq__r32_esym *et, uint8_t *buf,
                                            size_t cap) {
    uint32_t x[DQ__R32_WAYS];
    size_t w = cap;
    unsigned k;
    for (k = 0; k < DQ__R32_WAYS; k++) x[k] = DQ__R32_L;
    if (!dq__r32_put_range(x, sym, m, 0, et, buf, &w)) return 0;
    return dq__r32_put_states(x, buf, w, cap);
}

/* ---- fp16 and bf16 conversions of the typed codec (dq_encode_typed): one value, then the kernels */
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

/* 16-bit elements are accessed bytewise (memcpy), so any alignment and any declared element type
 * of the caller's array is fine. */
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

/* ---- the sparsifiers' scan (doc/FORMAT.md 20.3). An element's key is the bit
 * pattern of |c| (orders like |c| for finite c; Inf and NaN are >= 0x7F800000). The kernel:
 * c = x (+ e), stored to eo when eo is non-NULL (eo may be e), and the mask of the elements
 * whose key is >= lo (bit j for element j). cnt <= 64. */
static inline uint32_t dq__sp_key(float c) { return dq__abs_bits(c); }
static inline uint64_t dq__sp_mask__scalar(const float *x, const float *e, float *eo, size_t cnt, uint32_t lo) {
    uint64_t m = 0;
    size_t j;
    if (eo) {
        for (j = 0; j < cnt; j++) {
            float c = x[j] + e[j];
            eo[j] = c;
            m |= (uint64_t)(dq__sp_key(c) >= lo) << j;
        }
    } else if (e) {
        for (j = 0; j < cnt; j++) m |= (uint64_t)(dq__sp_key(x[j] + e[j]) >= lo) << j;
    } else {
        for (j = 0; j < cnt; j++) m |= (uint64_t)(dq__sp_key(x[j]) >= lo) << j;
    }
    return m;
}
/* Mostly no key reaches lo: (key - lo) is negative (as int32: keys and lo are below 2^31) for
 * every element exactly when the AND of all of them has its sign bit set, a test compilers
 * vectorize; only then is the mask worth building bit by bit. */
static inline uint64_t dq__sp_mask64__scalar(const float *x, const float *e, float *eo, uint32_t lo) {
    uint32_t all = 0xFFFFFFFFu;
    size_t j;
    if (eo) {
        for (j = 0; j < 64u; j++) {
            float c = x[j] + e[j];
            eo[j] = c;
            all &= dq__sp_key(c) - lo;
        }
    } else if (e) {
        for (j = 0; j < 64u; j++) all &= dq__sp_key(x[j] + e[j]) - lo;
    } else {
        for (j = 0; j < 64u; j++) all &= dq__sp_key(x[j]) - lo;
    }
    if (all >> 31) return 0;
    return eo ? dq__sp_mask__scalar(eo, NULL, NULL, 64u, lo) : dq__sp_mask__scalar(x, e, NULL, 64u, lo);
}

/* ---- count-sketch hashes (doc/FORMAT.md 21.3): coordinate i of row j hashes to H, the
 * generator's 32-bit draw dq__draw32 under the row's key; its bucket is (H * cols) >> 32 and its
 * sign is - when bit 0 of H is set. The packed form: bucket in bits 0..30, sign (1 = minus) in
 * bit 31, which is XORed into a float's sign bit to apply the sign exactly. */
#define DQ__SK_COL_MASK 0x7FFFFFFFu /* the column of a packed hash (bit 31: the sign) */
static inline uint32_t dq__sk_pack(uint32_t h, uint32_t cols) {
    return (uint32_t)(((uint64_t)h * cols) >> 32) | (h << 31);
}
/* Hash kernel: out[t] = packed hash of coordinate first + t, t < cnt (first + cnt <= 2^32). */
static inline void dq__sk_hash__scalar(uint32_t k0, uint32_t k1, uint32_t cols, uint32_t first, size_t cnt,
                                       uint32_t *out) {
    size_t t;
    for (t = 0; t < cnt; t++) out[t] = dq__sk_pack(dq__draw32(k0, k1, first + (uint32_t)t), cols);
}

#ifdef __cplusplus
}
#endif
