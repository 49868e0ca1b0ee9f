/* ---------------------------------------------------------------- quantizing a level scheme (doc/FORMAT.md 6, 7)
 * The scales and the fixed-width payload of a level-scheme body, written where the fixed layout
 * puts them (the body after the header). The quantizer also gathers, block run by block run
 * while they are in cache, the statistics the planner sizes the coders from (dq__gather). */

/* The scale of a bucket and the quantizer constants derived from it. */
static inline dq_status dq__bucket_scale(const dq__cfg *c, const dq__stats *st, size_t len, float *scale) {
    double v;
    if (c->norm == DQ__NORM_WIRE_MAX || c->norm == DQ__NORM_WIRE_POW2 || c->norm == DQ__NORM_WIRE_ALPHA) {
        uint32_t m = st->maxbits;
        if (m >= 0x7F800000u) return DQ_ERR_NONFINITE;
        if (c->norm == DQ__NORM_WIRE_ALPHA) {
            *scale = c->alpha; /* checked by dq__cfg_make */
            return DQ_OK;
        }
        if (c->norm == DQ__NORM_WIRE_POW2 && (m & 0x007FFFFFu) && m >= 0x00800000u)
            m = (m & 0x7F800000u) + 0x00800000u; /* round a normal max up to a power of two */
        v = (double)dq__bitsf(m);
    } else if (c->norm == DQ__NORM_WIRE_CLIP) { /* TernGrad: min(max, 2.5 RMS) */
        double rms;
        if (st->maxbits >= 0x7F800000u) return DQ_ERR_NONFINITE;
        rms = sqrt(st->sumsq / (double)len);
        v = (double)dq__bitsf(st->maxbits);
        if (2.5 * rms < v) v = 2.5 * rms;
    } else if (c->norm == DQ__NORM_WIRE_MEAN) {
        if (!(st->sumabs <= DBL_MAX)) return DQ_ERR_NONFINITE;
        v = st->sumabs / (double)len;
    } else {
        if (!(st->sumsq <= DBL_MAX)) return DQ_ERR_NONFINITE;
        v = sqrt(st->sumsq);
    }
    if (v > (double)dq__bitsf(DQ__MAX_SCALE_BITS)) return DQ_ERR_OVERFLOW;
    *scale = (float)v;
    if (*scale < DQ__MIN_SCALE) *scale = 0.0f;
    return DQ_OK;
}
static inline float dq__levels(unsigned bits) { return bits == 1 ? 1.0f : (float)((1u << (bits - 1)) - 1u); }
static inline float dq__step(unsigned bits, float scale) { return bits == 1 ? scale : scale / dq__levels(bits); }
/* The quantizer constants of a bucket with this scale (doc/FORMAT.md 6.2); q->bits and q->smax
 * are set. */
static inline void dq__qctx_scale(dq__qctx *q, float scale) {
    q->step = dq__step(q->bits, scale);
    q->neg = -q->step;
    q->scale = scale;
    if (q->tab)
        q->inv = scale == 0.0f ? 0.0f : 1.0f / scale;
    else
        q->inv = scale == 0.0f ? 0.0f : (q->bits == 1 ? 0.5f / scale : q->smax / scale);
}

static inline void dq__prefetch(const float *p, size_t cnt) {
#if defined(__GNUC__) || defined(__clang__)
    size_t i;
    for (i = 0; i < cnt; i += 16) __builtin_prefetch(p + i);
#else
    (void)p;
    (void)cnt;
#endif
}

/* Two-means: the means of bucket k's two sign groups from its lanes (doc/FORMAT.md 22.2), into
 * the message: the non-negative mean as scale k, the negative one (sign bit set, -0 for an
 * empty group) as scale nbuckets + k. */
static inline dq_status dq__tm_scales(const dq__cfg *c, const double *pos, const double *neg, uint64_t nneg,
                                      size_t len, uint8_t *scales, size_t k) {
    double sp = dq__lanes_sum(pos), sn = dq__lanes_sum(neg), vp, vn;
    uint64_t npos = (uint64_t)len - nneg;
    float mp, mn;
    if (!(sp <= DBL_MAX) || !(sn <= DBL_MAX)) return DQ_ERR_NONFINITE;
    vp = npos ? sp / (double)npos : 0.0;
    vn = nneg ? sn / (double)nneg : 0.0;
    if (vp > (double)dq__bitsf(DQ__MAX_SCALE_BITS) || vn > (double)dq__bitsf(DQ__MAX_SCALE_BITS))
        return DQ_ERR_OVERFLOW;
    mp = (float)vp;
    mn = (float)vn;
    if (mp < DQ__MIN_SCALE) mp = 0.0f;
    if (mn < DQ__MIN_SCALE) mn = 0.0f;
    dq__st32(scales + 4u * k, dq__fbits(mp));
    dq__st32(scales + 4u * (c->nbuckets + k), dq__fbits(mn) | 0x80000000u);
    return DQ_OK;
}
/* The scale(s) of bucket k from its statistics, written to the message (scales: the message's
 * scales part, bucket 0 first). */
static inline dq_status dq__scale_bucket(const dq__cfg *c, const float *x, const float *e, size_t len, uint8_t *scales,
                                         size_t k) {
    dq__stats st;
    dq_status s;
    float scale;
    unsigned what = c->norm == DQ__NORM_WIRE_L2 ? DQ__ST_SQ : (c->norm == DQ__NORM_WIRE_MEAN ? DQ__ST_ABS : DQ__ST_MAX);
    if (c->tm) {
        double pos[DQ__SLANES] = {0}, neg[DQ__SLANES] = {0};
        uint64_t nneg = 0;
        dq__k_tm_acc(x, e, len, pos, neg, &nneg);
        return dq__tm_scales(c, pos, neg, nneg, len, scales, k);
    }
    dq__k_stats(x, e, len, what, &st);
    if (c->norm == DQ__NORM_WIRE_CLIP) { /* needs the sum of squares too */
        dq__stats sq;
        dq__k_stats(x, e, len, DQ__ST_SQ, &sq);
        st.sumsq = sq.sumsq;
    }
    if ((s = dq__bucket_scale(c, &st, len, &scale)) != DQ_OK) return s;
    dq__st32(scales + 4u * k, dq__fbits(scale));
    return DQ_OK;
}
/* The quantizer constants of bucket k from its scale(s) in the message. */
static inline void dq__qctx_bucket(dq__qctx *q, const dq__cfg *c, const uint8_t *scales, size_t k) {
    dq__qctx_scale(q, dq__bitsf(dq__ld32(scales + 4u * k)));
    if (c->tm) q->neg = dq__bitsf(dq__ld32(scales + 4u * (c->nbuckets + k)));
}

/* ---- level encoding
 * A bucket's scale needs all of its elements before any of them is quantized. Without error
 * feedback each bucket's statistics pass is followed at once by its quantization, while the
 * bucket is in cache (one pass; a 16-bit vector in chunks of whole ranges). With error feedback,
 * or when a range does not fit a chunk, every scale is computed first (from x + residual,
 * without writing the residual, so that a failing bucket leaves it untouched), then each bucket
 * is compensated (residual = x + residual) and quantized, leaving residual = compensated -
 * decoded. Buckets that span chunks carry their statistics lanes from chunk to chunk, which
 * gives the one-piece sums exactly (16 lanes in index order, doc/FORMAT.md 6.1). */

/* Statistics of one bucket carried across chunks (dq__k_hstat_acc), for the norm's statistics;
 * two-means (dq__k_tm_acc): the lanes of the non-negative (sq) and negative (ab) magnitudes, and
 * the count of negative elements. */
typedef struct dq__hstat {
    double sq[DQ__SLANES], ab[DQ__SLANES];
    uint32_t mx;
    uint64_t nneg;
} dq__hstat;
/* The statistics dq__scale_bucket computes for the norm (all three for any other). */
static inline unsigned dq__hstat_what(const dq__cfg *c) {
    if (c->norm == DQ__NORM_WIRE_L2) return DQ__ST_SQ;
    if (c->norm == DQ__NORM_WIRE_MEAN) return DQ__ST_ABS;
    if (c->norm == DQ__NORM_WIRE_MAX || c->norm == DQ__NORM_WIRE_POW2 || c->norm == DQ__NORM_WIRE_ALPHA)
        return DQ__ST_MAX;
    return DQ__ST_SQ | DQ__ST_ABS | DQ__ST_MAX; /* TernGrad's clip needs the maximum and the squares */
}
/* Adds elements off .. off+cnt-1 of the bucket (x, e hold them); what = 0: two-means. */
static inline void dq__hstat_add(dq__hstat *a, unsigned what, const float *x, const float *e, size_t off, size_t cnt) {
    double rs[DQ__SLANES], ra[DQ__SLANES];
    unsigned k, r = (unsigned)(off % DQ__SLANES);
    for (k = 0; k < DQ__SLANES; k++) { /* rotate so that element 0 of the piece meets lane off % 16 */
        rs[k] = a->sq[(r + k) % DQ__SLANES];
        ra[k] = a->ab[(r + k) % DQ__SLANES];
    }
    if (what)
        dq__k_hstat_acc(x, e, cnt, what, rs, ra, &a->mx);
    else
        dq__k_tm_acc(x, e, cnt, rs, ra, &a->nneg);
    for (k = 0; k < DQ__SLANES; k++) {
        a->sq[(r + k) % DQ__SLANES] = rs[k];
        a->ab[(r + k) % DQ__SLANES] = ra[k];
    }
}
/* The scale of the bucket whose statistics a holds, into the message. */
static inline dq_status dq__hstat_scale(const dq__cfg *c, const dq__hstat *a, size_t len, uint8_t *scales, size_t k) {
    dq__stats st;
    float scale;
    dq_status s;
    if (c->tm) return dq__tm_scales(c, a->sq, a->ab, a->nneg, len, scales, k);
    st.sumsq = dq__lanes_sum(a->sq);
    st.sumabs = dq__lanes_sum(a->ab);
    st.maxbits = a->mx;
    if ((s = dq__bucket_scale(c, &st, len, &scale)) != DQ_OK) return s;
    dq__st32(scales + 4u * k, dq__fbits(scale));
    return DQ_OK;
}

/* Every scale of the buckets of [begin, end) (begin on a bucket boundary) into the message, in
 * bucket order (the first failing bucket's status). x and r (or NULL) hold elements begin ..,
 * of dtypes xt and rt; ch is the chunk length, xb and rb its buffers. */
static inline dq_status dq__lv_scales(const dq__cfg *c, size_t begin, size_t end, size_t ch, dq_dtype xt,
                                      const void *x, dq_dtype rt, const void *r, uint8_t *scales, float *xb, float *rb) {
    dq__hstat acc;
    size_t b0, bi = begin / c->bucket, bstart = begin, bend = end - begin > c->bucket ? begin + c->bucket : end;
    unsigned what = c->tm ? 0u : dq__hstat_what(c);
    dq_status s;
    memset(&acc, 0, sizeof acc);
    for (b0 = begin; b0 < end; b0 += ch) {
        size_t b1 = end - b0 < ch ? end : b0 + ch, pos = b0;
        const float *xf = dq__el_in(xt, x, b0 - begin, b1 - b0, xb);
        const float *rf = r ? dq__el_in(rt, r, b0 - begin, b1 - b0, rb) : NULL;
        while (pos < b1) {
            size_t seg = bend < b1 ? bend : b1;
            if (pos == bstart && seg == bend) { /* the whole bucket is in this chunk */
                s = dq__scale_bucket(c, xf + (pos - b0), rf ? rf + (pos - b0) : NULL, bend - bstart, scales, bi);
            } else {
                dq__hstat_add(&acc, what, xf + (pos - b0), rf ? rf + (pos - b0) : NULL, pos - bstart, seg - pos);
                s = seg == bend ? dq__hstat_scale(c, &acc, bend - bstart, scales, bi) : DQ_OK;
                if (seg == bend) memset(&acc, 0, sizeof acc);
            }
            if (s != DQ_OK) return s;
            pos = seg;
            if (pos == bend) {
                bi++;
                bstart = bend;
                bend = end - bstart > c->bucket ? bstart + c->bucket : end;
            }
        }
    }
    return DQ_OK;
}

#define DQ__GATHER_RUN 16u /* blocks the quantizer writes before it hands them to dq__gather (in L1) */
/* Quantizes elements [b0, b1) (b0 a multiple of the block, b1 too or the vector's end) into the
 * payload; x holds them, r (or NULL) their residual, compensated here and left as the new
 * residual. Enters at any block of a bucket. With `scale_here` (no residual, whole buckets) each
 * bucket's scale is computed when it is entered; otherwise the scales are in the message. With
 * g, every run of blocks written goes to the planner's statistics. */
static inline dq_status dq__lv_quant(const dq__cfg *c, const dq_params *p, size_t b0, size_t b1, const float *x,
                                     float *r, int scale_here, uint8_t *body, dq__gather *g) {
    uint32_t codes[DQ__BLOCK];
    uint8_t *scales = body, *payload = body + c->prefix;
    dq__key key = dq__key_make(p->seed, p->step, p->stream);
    dq__qctx q;
    size_t pos = b0, bi = b0 / c->bucket, bend = b0, krun = b0 / DQ__BLOCK;
    const float *src = r ? r : x;
    dq_status s;
    memset(&q, 0, sizeof q);
    q.bits = c->bits;
    q.smax = dq__levels(c->bits);
    q.thresh = c->stochastic ? -1.0f : 0.5f;
    q.k0 = key.k0;
    q.tab = c->table ? c->tab : NULL;
    if (c->ntab && b0 == 0) { /* the level table follows the scales */
        size_t l;
        for (l = 0; l < c->ntab; l++) dq__st32(scales + 4u * (c->nbuckets + l), dq__fbits(c->tab[l + 1u]));
    }
    while (pos < b1) {
        size_t blk_end = b1 - pos > DQ__BLOCK ? pos + DQ__BLOCK : b1, blk_start = pos;
        uint8_t *blk_out = payload + (blk_start / DQ__BLOCK) * DQ__BLOCK_BYTES(c->bits);
        int packed = 0;
        /* The statistics pass of the next bucket reads memory while nothing else runs; pull the
         * data two blocks ahead into cache during this block's quantization instead. */
        if (blk_start + 3u * DQ__BLOCK <= b1) {
            dq__prefetch(x + (blk_start - b0) + 2u * DQ__BLOCK, DQ__BLOCK);
            if (r) dq__prefetch(r + (blk_start - b0) + 2u * DQ__BLOCK, DQ__BLOCK);
        }
        while (pos < blk_end) {
            size_t seg_end, off = pos - b0;
            uint64_t gi;
            if (pos == bend) { /* enter bucket bi (the vector's end caps the last one below) */
                bend = (bi + 1u) * c->bucket;
                if (r) {
                    dq__k_compensate(x + off, r + off, (bend < b1 ? bend : b1) - pos);
                } else if (scale_here &&
                           (s = dq__scale_bucket(c, x + off, NULL, (bend < b1 ? bend : b1) - pos, scales, bi)) != DQ_OK) {
                    return s;
                }
                dq__qctx_bucket(&q, c, scales, bi);
                bi++;
            }
            gi = c->first + pos; /* the element's index in the dither sequence (FORMAT 7.2, 24.3) */
            q.lo = (uint32_t)gi;
            q.k1h = dq__key_hi(key, (uint32_t)(gi >> 32));
            seg_end = bend < blk_end ? bend : blk_end;
            if ((uint64_t)(seg_end - pos) > DQ__2P32 - (uint32_t)gi) /* the draws' high word changes there */
                seg_end = pos + (size_t)(DQ__2P32 - (uint32_t)gi);
            if (q.tab) { /* table schemes: quantize, then pack below */
                dq__k_quant_tab(&q, src + off, seg_end - pos, codes + (pos - blk_start), r ? r + off : NULL);
            } else if (pos == blk_start && seg_end - pos == DQ__BLOCK) { /* the common case */
                dq__k_quant_pack(&q, src + off, r ? r + off : NULL, blk_out);
                packed = 1;
            } else {
                dq__k_quant(&q, src + off, seg_end - pos, codes + (pos - blk_start), r ? r + off : NULL);
            }
            pos = seg_end;
        }
        if (!packed) {
            if (blk_end - blk_start == DQ__BLOCK)
                dq__k_pack_block(codes, c->bits, blk_out);
            else
                dq__pack_tail(codes, blk_end - blk_start, c->bits, blk_out);
        }
        if (g && (blk_end == b1 || blk_end / DQ__BLOCK - krun >= DQ__GATHER_RUN)) {
            size_t k1 = (blk_end + DQ__BLOCK - 1u) / DQ__BLOCK;
            dq__gather_run(g, payload, krun, k1);
            krun = k1;
        }
    }
    return DQ_OK;
}

/* The scales and payload of elements [begin, end) of an n-element vector into body, the part of
 * the message after the header (capacity already checked). x and r (or NULL) hold elements
 * begin .. end - 1, of dtypes xt and rt; r is written only when the call succeeds. g (or NULL)
 * gathers the planner's statistics. */
static inline dq_status dq__lv_body(const dq__cfg *c, const dq_params *p, size_t n, size_t begin, size_t end,
                                    dq_dtype xt, const void *x, dq_dtype rt, void *r, uint8_t *body, dq__gather *g) {
    float xb[DQ__ELCHUNK], rb[DQ__ELCHUNK];
    int flt = xt == DQ_F32 && (!r || rt == DQ_F32);
    size_t a = dq__align(c, n), ch = dq__el_chunk(flt, end - begin), b0;
    int one_pass = !r && (flt || a <= DQ__ELCHUNK);
    dq_status s;
    if (!flt && a <= DQ__ELCHUNK) ch = (DQ__ELCHUNK / a) * a; /* whole ranges when they fit */
    if (!one_pass && (s = dq__lv_scales(c, begin, end, ch, xt, x, rt, r, body, xb, rb)) != DQ_OK)
        return s;
    for (b0 = begin; b0 < end; b0 += ch) {
        size_t b1 = end - b0 < ch ? end : b0 + ch;
        const float *xf = dq__el_in(xt, x, b0 - begin, b1 - b0, xb);
        float *rf = r ? dq__el_inout(rt, r, b0 - begin, b1 - b0, rb) : NULL;
        if (rf) { /* two calls, so that the one without a residual is compiled without it */
            (void)dq__lv_quant(c, p, b0, b1, xf, rf, 0, body, g);
            dq__el_out(rt, rf, b1 - b0, r, b0 - begin);
        } else if ((s = dq__lv_quant(c, p, b0, b1, xf, NULL, one_pass, body, g)) != DQ_OK) {
            return s; /* one pass only */
        }
    }
    return DQ_OK;
}


