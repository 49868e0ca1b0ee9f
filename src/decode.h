/* ---------------------------------------------------------------- decoding a level scheme
 * Every decoder opens the message once (message.h) and decodes from the handle: the scales,
 * then the payload block by block, from the fixed payload in place or through the reader of its
 * coder (dq__cdec, coders.h), into the SIMD block decoders. Everything is validated before the
 * output is touched, except a coded payload under a verified checksum, decoded in one pass and
 * checked at its end (FORMAT 17.4). Segmented messages decode segment by segment (segments.h),
 * sparse and sketch messages through their family's decoder (the family table, tables.h). */

/* Scales of buckets [b0, b1) (doc/FORMAT.md 4): each at most 2^126 and not negative (one
 * comparison of the bit pattern); two-means negative means (22.3): sign bit set, magnitude at
 * most 2^126. */
static inline int dq__scales_ok(const dq__cfg *c, const uint8_t *scales, size_t b0, size_t b1) {
    size_t k;
    for (k = b0; k < b1; k++) {
        if (dq__ld32(scales + 4u * k) > DQ__MAX_SCALE_BITS) return 0; /* negative, above 2^126, Inf or NaN */
        if (c->tm && (dq__ld32(scales + 4u * (c->nbuckets + k)) ^ 0x80000000u) > DQ__MAX_SCALE_BITS) return 0;
    }
    return 1;
}
/* Decoding, shared by dq__decode_body and the typed decoder. The values of bucket k: the step
 * (uniform levels), the scale (table schemes) or the non-negative mean (two-means) in v[0],
 * and the negative mean in v[1] (two-means; 0 otherwise). */
static inline void dq__bucket_vals(const dq__cfg *c, const uint8_t *scales, size_t k, float *v) {
    float sc = dq__bitsf(dq__ld32(scales + 4u * k));
    v[0] = c->table ? sc : dq__step(c->bits, sc);
    v[1] = c->tm ? dq__bitsf(dq__ld32(scales + 4u * (c->nbuckets + k))) : 0.0f;
}
/* The walk through the buckets of a run of blocks: bi the next bucket to enter, bend the end of
 * the current one, cur its values. */
typedef struct dq__walk {
    size_t bi, bend;
    float cur[2];
} dq__walk;
static inline void dq__walk_start(dq__walk *k, const dq__cfg *c, size_t pos) {
    k->bi = pos / c->bucket;
    k->bend = pos;
    k->cur[0] = k->cur[1] = 0.0f;
}
/* Decode the full block at element pos: the 32 rows walk the buckets in order, no division per
 * row; rows never straddle a bucket (buckets are multiples of 8). */
static inline void dq__decode_block_at(const dq__cfg *c, const uint8_t *scales, const uint8_t *in, size_t pos,
                                       size_t *bi, size_t *bend, float *cur, float w, int add, float *out) {
    float rowstep[DQ__ROWS], rowneg[DQ__ROWS];
    unsigned r;
    if (pos >= *bend) {
        dq__bucket_vals(c, scales, *bi, cur);
        (*bi)++;
        *bend = *bi * c->bucket;
    }
    if (pos + DQ__BLOCK <= *bend) { /* one bucket: fills the compiler can vectorize, so the
                                     * kernels' vector loads of them are forwarded whole */
        for (r = 0; r < DQ__ROWS; r++) rowstep[r] = cur[0];
        for (r = 0; r < DQ__ROWS; r++) rowneg[r] = cur[1];
    } else {
        for (r = 0; r < DQ__ROWS; r++) {
            if (pos + r * DQ__LANES >= *bend) {
                dq__bucket_vals(c, scales, *bi, cur);
                (*bi)++;
                *bend = *bi * c->bucket;
            }
            rowstep[r] = cur[0];
            rowneg[r] = cur[1];
        }
    }
    if (c->table)
        dq__k_decode_block_tab(in, c->bits, c->tab, rowstep, w, add, out);
    else if (c->tm)
        dq__k_decode_block_tm(in, rowstep, rowneg, w, add, out);
    else
        dq__k_decode_block(in, c->bits, rowstep, w, add, out);
}
/* Full blocks [pos, end) from in (the block at pos first) into out[0..end-pos): the one loop
 * over blocks, for the fixed payload in place and for the runs a coded payload decodes into. */
static inline void dq__decode_blocks(const dq__cfg *cfg, const uint8_t *scales, const uint8_t *in, size_t pos,
                                     size_t end, dq__walk *k, float w, int add, float *out) {
    /* local copies: out (float *) cannot alias them, so the loop keeps the configuration and the
     * walk in registers instead of reloading them after every block it writes (13% at 2^16) */
    const dq__cfg lc = *cfg, *c = &lc;
    size_t bi = k->bi, bend = k->bend, blk = DQ__BLOCK_BYTES(c->bits), p;
    float cur[2];
    cur[0] = k->cur[0];
    cur[1] = k->cur[1];
    for (p = pos; p < end; p += DQ__BLOCK)
        dq__decode_block_at(c, scales, in + ((p - pos) / DQ__BLOCK) * blk, p, &bi, &bend, cur, w, add, out + (p - pos));
    k->bi = bi;
    k->bend = bend;
    k->cur[0] = cur[0];
    k->cur[1] = cur[1];
}
/* Decode the unpacked tail codes of elements [pos, end) into out[0..end-pos), bucket by bucket. */
static inline void dq__decode_tail(const dq__cfg *c, const uint8_t *scales, const uint32_t *codes, size_t pos,
                                   size_t end, float w, int add, float *out) {
    size_t i = pos;
    while (i < end) {
        size_t b_end = (i / c->bucket + 1u) * c->bucket, seg_end = b_end < end ? b_end : end;
        float v[2];
        dq__bucket_vals(c, scales, i / c->bucket, v);
        if (c->table)
            dq__decode_codes_tab(codes + (i - pos), seg_end - i, c->bits, c->tab, v[0], w, add, out + (i - pos));
        else if (c->tm)
            dq__decode_codes_tm(codes + (i - pos), seg_end - i, v[0], v[1], w, add, out + (i - pos));
        else
            dq__decode_codes(codes + (i - pos), seg_end - i, c->bits, v[0], w, add, out + (i - pos));
        i = seg_end;
    }
}
#define DQ__DEC_RUN 8u /* blocks a coded payload decodes into the fixed layout at a time (4 KiB at 16 bits) */
/* The blocks of [b0, b1) (b0 a multiple of the block) into out[0..b1-b0), from the fixed payload
 * in memory or, with cd, the blocks a coded payload produces in order (a stream across calls),
 * DQ__DEC_RUN at a time into the fixed layout, then decoded as the fixed payload is: the coder's
 * calls stay out of the loop over blocks. May start inside a bucket. */
static inline void dq__decode_run(const dq__cfg *c, const uint8_t *scales, const uint8_t *payload, dq__cdec *cd,
                                  size_t b0, size_t b1, float w, int add, float *out) {
    uint8_t run[DQ__DEC_RUN * DQ__BLOCK_BYTES(16u)];
    uint32_t codes[DQ__BLOCK];
    size_t blk = DQ__BLOCK_BYTES(c->bits), full = b1 - (b1 - b0) % DQ__BLOCK, pos, j, m;
    dq__walk k;
    dq__walk_start(&k, c, b0);
    if (!cd) {
        dq__decode_blocks(c, scales, payload + (b0 / DQ__BLOCK) * blk, b0, full, &k, w, add, out);
    } else {
        for (pos = b0; pos < full; pos += m * DQ__BLOCK) {
            m = (full - pos) / DQ__BLOCK < DQ__DEC_RUN ? (full - pos) / DQ__BLOCK : DQ__DEC_RUN;
            for (j = 0; j < m; j++) (void)dq__cdec_block(cd, run + j * blk);
            dq__decode_blocks(c, scales, run, pos, pos + m * DQ__BLOCK, &k, w, add, out + (pos - b0));
        }
    }
    if (full < b1) { /* the tail of the vector */
        dq__unpack_tail(cd ? dq__cdec_block(cd, run) : payload + (full / DQ__BLOCK) * blk, b1 - full, c->bits, codes);
        dq__decode_tail(c, scales, codes, full, b1, w, add, out + (full - b0));
    }
}
/* Decode the elements [begin, end) into out[0..end-begin) of dtype t, everything validated
 * before out is touched (but for a trusted coded stream, checked at its end). */
static inline dq_status dq__decode_body(const dq__cfg *cfg, const uint8_t *scales, const uint8_t *payload,
                                        dq__cdec *cd, size_t n, size_t begin, size_t end, float w, int add, dq_dtype t,
                                        void *out) {
    const dq__cfg *c = cfg;
    float buf[DQ__ELCHUNK];
    uint32_t codes[DQ__BLOCK];
    size_t b0, ch = dq__el_chunk(t == DQ_F32, end - begin);
    dq_status st;
    if (!dq__scales_ok(c, scales, begin / c->bucket, (end - 1u) / c->bucket + 1u)) return DQ_ERR_CORRUPT;
    if (cd) {
        if (!cd->trusted && (st = dq__cdec_validate(cd)) != DQ_OK) return st;
    } else if (end == n && n % DQ__BLOCK) { /* and the tail's padding bits */
        size_t full = n - n % DQ__BLOCK;
        if (!dq__unpack_tail(payload + (full / DQ__BLOCK) * DQ__BLOCK_BYTES(c->bits), n - full, c->bits, codes))
            return DQ_ERR_CORRUPT;
    }
    for (b0 = begin; b0 < end; b0 += ch) {
        size_t cnt = end - b0 < ch ? end - b0 : ch;
        float *o = dq__el_acc(t, out, b0 - begin, cnt, add, buf);
        dq__decode_run(c, scales, payload, cd, b0, b0 + cnt, w, add, o);
        dq__el_out(t, o, cnt, out, b0 - begin);
    }
    return cd && cd->trusted ? dq__cdec_end(cd) : DQ_OK;
}

/* Checks the scales and the tail padding of a fixed payload. */
static inline dq_status dq__fixed_check(const dq__cfg *c, size_t n, const uint8_t *scales, const uint8_t *payload) {
    uint32_t codes[DQ__BLOCK];
    size_t full = n - n % DQ__BLOCK;
    if (!dq__scales_ok(c, scales, 0, c->nbuckets)) return DQ_ERR_CORRUPT;
    if (full < n && !dq__unpack_tail(payload + (full / DQ__BLOCK) * DQ__BLOCK_BYTES(c->bits), n - full, c->bits, codes))
        return DQ_ERR_CORRUPT;
    return DQ_OK;
}

/* A whole unsegmented body (a message's, or a segment's: src is then its implied message, the
 * body 48 bytes on); `trusted`: a coded payload is decoded in one pass and checked at its end
 * (its checksum was verified, or it was checked already). */
static inline dq_status dq__lv_decode_as(const uint8_t *src, const dq_header *h, const dq__cfg *c, int trusted,
                                         float w, int add, dq_dtype t, void *out) {
    const dq__coder *row = &dq__coders[h->coder];
    const uint8_t *scales = src + DQ_HEADER_SIZE + row->head;
    if (row->open) {
        dq__cdec cd;
        if (dq__cdec_open(&cd, h->coder, h->bits, h->count, scales + c->prefix, h->payload_size) != DQ_OK)
            return DQ_ERR_CORRUPT;
        cd.trusted = trusted;
        return dq__decode_body(c, scales, NULL, &cd, h->count, 0, h->count, w, add, t, out);
    }
    return dq__decode_body(c, scales, scales + c->prefix, NULL, h->count, 0, h->count, w, add, t, out);
}
static inline dq_status dq__seg_decode(const uint8_t *msg, const dq_header *H, const dq__cfg *C, float w, int add,
                                       dq_dtype t, void *out);
/* The level family's decoder (the family table) of an opened message. */
static inline dq_status dq__lv_decode(const uint8_t *src, const dq_header *h, const dq__cfg *c, float w, int add,
                                      dq_dtype t, void *out) {
    if (h->flags & DQ_FLAG_SEGMENTS) return dq__seg_decode(src, h, c, w, add, t, out);
    return dq__lv_decode_as(src, h, c, (h->flags & DQ_FLAG_CHECKSUM) != 0, w, add, t, out); /* verified when opened */
}
/* The body of an opened message, whatever its family. */
static inline dq_status dq__decode_opened(const dq_message *m, float w, int add, dq_dtype t, void *out) {
    return dq__ops_wire(m->h.scheme)->decode(m->src, &m->h, &m->c, w, add, t, out);
}
/* Whole messages, out of dtype t: out_n elements (exactly the count for add). The output's
 * length is checked between the header and the body, as it always was. */
static inline dq_status dq__decode_msg(const void *src, size_t src_len, float w, int add, dq_dtype t, void *out,
                                       size_t out_n) {
    dq_message m;
    dq_status st;
    if (!src || !out) return DQ_ERR_NULL;
    if (!dq_dtype_size(t)) return DQ_ERR_PARAM;
    if ((st = dq__msg_parse((const uint8_t *)src, src_len, &m)) != DQ_OK) return st;
    if (add ? out_n != m.h.count : out_n < m.h.count) return add ? DQ_ERR_SIZE_MISMATCH : DQ_ERR_DST_TOO_SMALL;
    if ((st = dq__msg_open_body(&m, src_len, 1)) != DQ_OK) return st;
    return dq__decode_opened(&m, w, add, t, out);
}

/* Elements [begin, end) (a valid range) of an opened fixed body, or of a coded one whose parts
 * decode on their own (the coder row's range): checked, then decoded into out; with out NULL,
 * checked only. */
static inline dq_status dq__rng_opened(const uint8_t *src, const dq_header *h, const dq__cfg *c, size_t begin,
                                       size_t end, float w, int add, float *out) {
    const dq__coder *row = &dq__coders[h->coder];
    const uint8_t *scales = src + DQ_HEADER_SIZE + row->head;
    if (row->open) { /* the parts that hold the range: checked, then decoded */
        uint8_t tmp[DQ__BLOCK_BYTES(16u)];
        dq__cdec cd;
        if (!dq__scales_ok(c, scales, begin / c->bucket, (end - 1u) / c->bucket + 1u)) return DQ_ERR_CORRUPT;
        if (dq__cdec_open(&cd, h->coder, h->bits, h->count, scales + c->prefix, h->payload_size) != DQ_OK ||
            row->range(&cd, begin, end) != DQ_OK)
            return DQ_ERR_CORRUPT;
        if (!out) return DQ_OK;
        while (cd.k < begin / DQ__BLOCK) dq__cdec_block(&cd, tmp); /* the part's blocks before begin */
        dq__decode_run(c, scales, NULL, &cd, begin, end, w, add, out);
        return DQ_OK;
    }
    if (!out) { /* what dq__decode_body checks for this range */
        uint32_t codes[DQ__BLOCK];
        size_t full = h->count - h->count % DQ__BLOCK;
        if (!dq__scales_ok(c, scales, begin / c->bucket, (end - 1u) / c->bucket + 1u)) return DQ_ERR_CORRUPT;
        if (end == h->count && full < end &&
            !dq__unpack_tail(scales + c->prefix + (full / DQ__BLOCK) * DQ__BLOCK_BYTES(c->bits), end - full, c->bits,
                             codes))
            return DQ_ERR_CORRUPT;
        return DQ_OK;
    }
    return dq__decode_body(c, scales, scales + c->prefix, NULL, h->count, begin, end, w, add, DQ_F32, out);
}
static inline dq_status dq__seg_range(const dq_message *m, size_t begin, size_t end, float w, int add, float *out);
static inline dq_status dq__decode_rng(const void *src, size_t src_len, size_t begin, size_t end, float w, int add,
                                       float *out) {
    dq_message m;
    dq_status st;
    if (!src || !out) return DQ_ERR_NULL;
    if ((st = dq__open(src, src_len, 0, &m)) != DQ_OK) return st;
    if (!dq__is_levels(m.h.scheme)) return DQ_ERR_PARAM;
    if (m.h.flags & DQ_FLAG_SEGMENTS) return dq__seg_range(&m, begin, end, w, add, out);
    if (dq__coder_one_stream(m.h.coder)) return DQ_ERR_PARAM; /* read from its start */
    if (!dq__range_ok(&m.c, m.h.count, begin, end)) return DQ_ERR_RANGE;
    return dq__rng_opened(m.src, &m.h, &m.c, begin, end, w, add, out);
}

/* Adds the squares of the nb scales at src + off (the bytes present) to *sum. */
static inline dq_status dq__norm2_scales(const uint8_t *src, size_t src_len, size_t off, size_t nb, double *sum) {
    size_t i;
    if (src_len < off || (src_len - off) / 4u < nb) return DQ_ERR_TRUNCATED;
    for (i = 0; i < nb; i++) {
        uint32_t u = dq__ld32(src + off + 4u * i);
        double v;
        if (u > DQ__MAX_SCALE_BITS) return DQ_ERR_CORRUPT;
        v = (double)dq__bitsf(u);
        v = v * v;
        *sum += v;
    }
    return DQ_OK;
}
static inline dq_status dq__seg_norm2(const dq_message *m, size_t src_len, double *sum);
/* From the header and the scales alone: the size is not checked, the scales' bytes are. */
DQ_API dq_status dq_message_norm2(const void *src, size_t src_len, double *norm2) {
    dq_message m;
    dq_status st;
    double sum = 0.0;
    if (!src || !norm2) return DQ_ERR_NULL;
    if ((st = dq__msg_parse((const uint8_t *)src, src_len, &m)) != DQ_OK) return st;
    if (m.h.norm != DQ_NORM_L2 || !dq__is_levels(m.h.scheme)) return DQ_ERR_PARAM;
    if (m.h.flags & DQ_FLAG_SEGMENTS)
        st = dq__seg_norm2(&m, src_len, &sum);
    else
        st = dq__norm2_scales(m.src, src_len, DQ_HEADER_SIZE + dq__coders[m.h.coder].head, m.c.nbuckets, &sum);
    if (st != DQ_OK) return st;
    *norm2 = sum;
    return DQ_OK;
}

DQ_API dq_status dq_decode(const void *src, size_t src_len, float *out, size_t out_cap) {
    return dq__decode_msg(src, src_len, 1.0f, 0, DQ_F32, out, out_cap);
}
static inline dq_status dq__message_decode(const dq_message *m, float w, int add, float *out, size_t out_n) {
    if (!m || !out) return DQ_ERR_NULL;
    if (add ? out_n != m->h.count : out_n < m->h.count) return add ? DQ_ERR_SIZE_MISMATCH : DQ_ERR_DST_TOO_SMALL;
    return dq__decode_opened(m, w, add, DQ_F32, out);
}
DQ_API dq_status dq_message_decode(const dq_message *m, float *out, size_t out_cap) {
    return dq__message_decode(m, 1.0f, 0, out, out_cap);
}
DQ_API dq_status dq_message_decode_add(const dq_message *m, float weight, float *acc, size_t acc_len) {
    return dq__message_decode(m, weight, 1, acc, acc_len);
}
DQ_API dq_status dq_decode_add(const void *src, size_t src_len, float weight, float *acc, size_t acc_len) {
    return dq__decode_msg(src, src_len, weight, 1, DQ_F32, acc, acc_len);
}
DQ_API dq_status dq_decode_range(const void *src, size_t src_len, size_t begin, size_t end, float *out) {
    return dq__decode_rng(src, src_len, begin, end, 1.0f, 0, out);
}
DQ_API dq_status dq_decode_add_range(const void *src, size_t src_len, size_t begin, size_t end, float weight,
                                     float *acc) {
    return dq__decode_rng(src, src_len, begin, end, weight, 1, acc);
}

static inline dq_status dq__decode_blk(const dq_params *p, const void *src, size_t src_len, size_t n, float w, int add,
                                       float *out) {
    dq__cfg c;
    dq_status st;
    size_t body;
    int ok;
    if (!p || !src || !out) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if ((st = dq__cfg_make(p, n, &c)) != DQ_OK) return st;
    if (c.checksum || !dq__fixed_asked(p)) return DQ_ERR_PARAM;
    body = dq__size(&c, n, 0, &ok);
    if (!ok) return DQ_ERR_TOO_LARGE;
    if (src_len < body) return DQ_ERR_TRUNCATED;
    return dq__decode_body(&c, (const uint8_t *)src, (const uint8_t *)src + c.prefix, NULL, n, 0, n, w, add,
                           DQ_F32, out);
}
DQ_API dq_status dq_decode_block(const dq_params *p, const void *src, size_t src_len, size_t n, float *out) {
    return dq__decode_blk(p, src, src_len, n, 1.0f, 0, out);
}
DQ_API dq_status dq_decode_add_block(const dq_params *p, const void *src, size_t src_len, size_t n, float weight,
                                     float *acc) {
    return dq__decode_blk(p, src, src_len, n, weight, 1, acc);
}
