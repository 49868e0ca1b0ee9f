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

/* Quantizes elements [b0, b1) (b0 a multiple of the block, b1 too or the vector's end) into the
 * payload; x holds them, r (or NULL) their residual, compensated here and left as the new
 * residual. Enters at any block of a bucket. With `scale_here` (no residual, whole buckets) each
 * bucket's scale is computed when it is entered; otherwise the scales are in the message. */
static inline dq_status dq__lv_quant(const dq__cfg *c, const dq_params *p, size_t b0, size_t b1, const float *x,
                                     float *r, int scale_here, uint8_t *body) {
    uint32_t codes[DQ__BLOCK];
    uint8_t *scales = body, *payload = body + c->prefix;
    dq__key key = dq__key_make(p->seed, p->step, p->stream);
    dq__qctx q;
    size_t pos = b0, bi = b0 / c->bucket, bend = b0;
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
        if (packed) continue;
        if (blk_end - blk_start == DQ__BLOCK)
            dq__k_pack_block(codes, c->bits, blk_out);
        else
            dq__pack_tail(codes, blk_end - blk_start, c->bits, blk_out);
    }
    return DQ_OK;
}

/* The scales and payload of elements [begin, end) of an n-element vector into body, the part of
 * the message after the header (capacity already checked). x and r (or NULL) hold elements
 * begin .. end - 1, of dtypes xt and rt; r is written only when the call succeeds. */
static inline dq_status dq__lv_body(const dq__cfg *c, const dq_params *p, size_t n, size_t begin, size_t end,
                                    dq_dtype xt, const void *x, dq_dtype rt, void *r, uint8_t *body) {
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
            (void)dq__lv_quant(c, p, b0, b1, xf, rf, 0, body);
            dq__el_out(rt, rf, b1 - b0, r, b0 - begin);
        } else if ((s = dq__lv_quant(c, p, b0, b1, xf, NULL, one_pass, body)) != DQ_OK) {
            return s; /* one pass only */
        }
    }
    return DQ_OK;
}


/* The 48-byte header of any scheme, with its CRC (doc/FORMAT.md 3.1); seed, step and stream
 * from p. */
/* Header field offsets (doc/FORMAT.md 3.1): magic "DQSG" at 0, then these. */
#define DQ__H_VERSION 4u
#define DQ__H_SIZE 5u
#define DQ__H_SCHEME 6u
#define DQ__H_BITS 7u
#define DQ__H_CODER 8u
#define DQ__H_NORM 9u
#define DQ__H_FLAGS 10u
#define DQ__H_BUCKET 12u
#define DQ__H_COUNT 16u
#define DQ__H_SEED 24u
#define DQ__H_STEP 32u
#define DQ__H_STREAM 40u
#define DQ__H_CRC 44u /* CRC32C of bytes 0 .. DQ__H_CRC - 1 */
static inline void dq__put_header(uint8_t *out, unsigned scheme, unsigned bits, unsigned coder, unsigned norm,
                                  unsigned flags, uint32_t bucket, uint64_t n, const dq_params *p) {
    memset(out, 0, DQ_HEADER_SIZE);
    out[0] = 'D';
    out[1] = 'Q';
    out[2] = 'S';
    out[3] = 'G';
    out[DQ__H_VERSION] = DQ_FORMAT_VERSION;
    out[DQ__H_SIZE] = (uint8_t)DQ_HEADER_SIZE;
    out[DQ__H_SCHEME] = (uint8_t)scheme;
    out[DQ__H_BITS] = (uint8_t)bits;
    out[DQ__H_CODER] = (uint8_t)coder;
    out[DQ__H_NORM] = (uint8_t)norm;
    dq__st16(out + DQ__H_FLAGS, flags);
    dq__st32(out + DQ__H_BUCKET, bucket);
    dq__st64(out + DQ__H_COUNT, n);
    dq__st64(out + DQ__H_SEED, p->seed);
    dq__st64(out + DQ__H_STEP, p->step);
    dq__st32(out + DQ__H_STREAM, p->stream);
    dq__st32(out + DQ__H_CRC, dq__crc32c(out, DQ__H_CRC));
}

static inline void dq__write_header(const dq__cfg *c, const dq_params *p, size_t n, uint8_t *out) {
    dq__put_header(out, c->scheme, c->bits, DQ_CODER_FIXED, c->norm,
                   (c->stochastic ? DQ_FLAG_STOCHASTIC : 0u) | (c->checksum ? DQ_FLAG_CHECKSUM : 0u), c->bucket_wire,
                   (uint64_t)n, p);
}

/* Encode elements [begin, end) of an n-element vector, framed (a message: header when
 * begin = 0, body after it) or not (a headerless block). *size gets the full size. */
static inline dq_status dq__encode_common(const dq_params *p, size_t n, size_t begin, size_t end, const float *x,
                                          float *residual, void *dst, size_t dst_cap, int framed, size_t *size) {
    dq__cfg c;
    dq_status st;
    int ok;
    uint8_t *out = (uint8_t *)dst;
    if (!p || !x || !dst) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if ((st = dq__cfg_make(p, n, &c)) != DQ_OK) return st;
    if ((!framed && c.checksum) || !dq__fixed_asked(p)) return DQ_ERR_PARAM;
    c.coder = DQ_CODER_FIXED;
    *size = dq__size(&c, n, framed, &ok);
    if (!ok) return DQ_ERR_TOO_LARGE;
    if (!dq__range_ok(&c, n, begin, end)) return DQ_ERR_RANGE;
    if (dst_cap < *size) return DQ_ERR_DST_TOO_SMALL;
    if (framed) {
        if (begin == 0) dq__write_header(&c, p, n, out);
        out += DQ_HEADER_SIZE;
    }
    return dq__lv_body(&c, p, n, begin, end, DQ_F32, x, DQ_F32, residual, out);
}

/* The payload checksum: CRC32C of everything between the header and the checksum itself. */
static inline uint32_t dq__body_crc(const uint8_t *msg, size_t msg_size) {
    return dq__crc32c(msg + DQ_HEADER_SIZE, msg_size - DQ_HEADER_SIZE - 4u);
}

DQ_API dq_status dq_encode(const dq_params *p, const float *x, size_t n, float *residual, void *dst, size_t dst_cap,
                           size_t *dst_len) {
    if (!dst_len) return DQ_ERR_NULL;
    return (p ? dq__ops_params(p) : &dq__families[DQ__FAM_LEVELS])
        ->encode(p, DQ_F32, x, n, DQ_F32, residual, dst, dst_cap, dst_len);
}
DQ_API dq_status dq_encode_block(const dq_params *p, const float *x, size_t n, float *residual, void *dst,
                                 size_t dst_cap, size_t *dst_len) {
    size_t size = 0;
    dq_status st;
    if (!dst_len) return DQ_ERR_NULL;
    if ((st = dq__encode_common(p, n, 0, n, x, residual, dst, dst_cap, 0, &size)) != DQ_OK) return st;
    *dst_len = size;
    return DQ_OK;
}
DQ_API dq_status dq_encode_range(const dq_params *p, size_t n, size_t begin, size_t end, const float *x,
                                 float *residual, void *dst, size_t dst_cap) {
    size_t size = 0;
    return dq__encode_common(p, n, begin, end, x, residual, dst, dst_cap, 1, &size);
}

/* Parses and validates the header at in (doc/FORMAT.md 3.2, steps 1 to 9); for a level scheme
 * also resolves its configuration into *c (a TRUNC_NU level table is read by dq__open). */
