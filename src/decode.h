static inline dq_status dq__header_parse(const uint8_t *in, size_t src_len, dq_header *h, dq__cfg *c) {
    uint64_t count;
    if (src_len < 8) return DQ_ERR_TRUNCATED;
    if (in[0] != 'D' || in[1] != 'Q' || in[2] != 'S' || in[3] != 'G') return DQ_ERR_BAD_MAGIC;
    if (in[DQ__H_VERSION] != DQ_FORMAT_VERSION) return DQ_ERR_VERSION;
    if (in[DQ__H_SIZE] != DQ_HEADER_SIZE) return DQ_ERR_CORRUPT;
    if (src_len < DQ_HEADER_SIZE) return DQ_ERR_TRUNCATED;
    if (dq__ld32(in + DQ__H_CRC) != dq__crc32c(in, DQ__H_CRC)) return DQ_ERR_CHECKSUM;
    memset(h, 0, sizeof *h);
    h->version = in[DQ__H_VERSION];
    h->header_size = in[DQ__H_SIZE];
    h->scheme = in[DQ__H_SCHEME];
    h->bits = in[DQ__H_BITS];
    h->coder = in[DQ__H_CODER];
    h->norm = (dq_norm)(in[DQ__H_NORM] + 1u); /* wire 0..6 -> DQ_NORM_L2 .. DQ_NORM_TWOMEANS */
    h->flags = dq__ld16(in + DQ__H_FLAGS);
    h->bucket = dq__ld32(in + DQ__H_BUCKET);
    count = dq__ld64(in + DQ__H_COUNT);
    h->seed = dq__ld64(in + DQ__H_SEED);
    h->step = dq__ld64(in + DQ__H_STEP);
    h->stream = dq__ld32(in + DQ__H_STREAM);
    if (count == 0) return DQ_ERR_CORRUPT;
    return dq__ops_wire(h->scheme)->header(in, src_len, count, h, c);
}
/* The element count of a header into h (TOO_LARGE beyond what this machine can index). */
static inline dq_status dq__count_set(uint64_t count, dq_header *h) {
    if (count > DQ_MAX_ELEMS || count > (uint64_t)SIZE_MAX) return DQ_ERR_TOO_LARGE;
    h->count = h->nnz = (size_t)count;
    return DQ_OK;
}
static inline dq_status dq__seg_header(const uint8_t *in, size_t src_len, uint64_t count, dq_header *h, dq__cfg *c);
/* dq__header_parse for the level schemes (and the refusal of unassigned scheme ids). */
static inline dq_status dq__lv_header(const uint8_t *in, size_t src_len, uint64_t count, dq_header *h, dq__cfg *c) {
    dq_params p;
    int ok;
    if (dq__is_levels(h->scheme) && (h->flags & DQ_FLAG_SEGMENTS)) return dq__seg_header(in, src_len, count, h, c);
    h->segments = 1;
    if (!dq__is_levels(h->scheme) || h->coder > DQ_CODER_RANS || !dq__bits_ok(h->scheme, h->bits) ||
        !dq__norm_ok(h->scheme, in[DQ__H_NORM]) ||
        (h->flags & ~(DQ_FLAG_STOCHASTIC | DQ_FLAG_CHECKSUM)) != 0 || (h->bucket % 8u) != 0 ||
        ((dq__scheme(h->scheme)->flags & DQ__S_NEAREST) && (h->flags & DQ_FLAG_STOCHASTIC)))
        return DQ_ERR_CORRUPT;
    if (dq__count_set(count, h) != DQ_OK) return DQ_ERR_TOO_LARGE;
    memset(&p, 0, sizeof p);
    p.scheme = (dq_scheme)h->scheme;
    p.bits = h->bits;
    p.bucket = h->bucket ? h->bucket : DQ_BUCKET_WHOLE;
    p.checksum = (h->flags & DQ_FLAG_CHECKSUM) ? 1u : 0u;
    p.coder = h->coder; /* refuses Elias at 1 bit and rANS above 8 bits */
    if (dq__cfg_make2(&p, h->count, 1, c) != DQ_OK) return DQ_ERR_CORRUPT;
    h->msg_size = dq__size(c, h->count, 1, &ok);
    h->payload_size = (size_t)(((uint64_t)h->count * h->bits + 7u) / 8u);
    if (ok && h->coder != DQ_CODER_FIXED) { /* the payload's length follows the header */
        uint64_t len;
        if (src_len < DQ__CODED_HEADER) return DQ_ERR_TRUNCATED;
        len = dq__ld64(in + DQ_HEADER_SIZE);
        if (len > dq__coded_bound(h->coder, h->count, h->bits)) return DQ_ERR_CORRUPT;
        if (len > (uint64_t)SIZE_MAX - (h->msg_size - h->payload_size) - 8u) return DQ_ERR_TOO_LARGE;
        h->msg_size = h->msg_size - h->payload_size + 8u + (size_t)len;
        h->payload_size = (size_t)len;
    }
    return ok ? DQ_OK : DQ_ERR_TOO_LARGE;
}
DQ_API dq_status dq_header_read(const void *src, size_t src_len, dq_header *h) {
    dq__cfg c;
    if (!src || !h) return DQ_ERR_NULL;
    return dq__header_parse((const uint8_t *)src, src_len, h, &c);
}

/* Decode the elements [begin, end) into out[0..end-begin), from the scales and either the
 * fixed payload in memory or, with cd, the blocks a coded payload produces in order (whole
 * messages only). Everything is validated before out is touched. */
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
/* Decode the full block at element pos: the 32 rows walk the buckets in order (*bi is the next
 * bucket to enter, *bend the end of the current one, cur its values), no division per row;
 * rows never straddle a bucket (buckets are multiples of 8). */
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
/* The blocks of [b0, b1) (b0 a multiple of the block) into out[0..b1-b0), from the fixed payload
 * in memory or, with cd, the blocks a coded payload produces in order (a stream across calls).
 * May start inside a bucket. */
static inline void dq__decode_run(const dq__cfg *cfg, const uint8_t *scales, const uint8_t *payload, dq__cdec *cd,
                                  size_t b0, size_t b1, float w, int add, float *out) {
    /* a local copy: out (float *) cannot alias it, so the loop keeps the configuration in
     * registers instead of reloading it after every block it writes (13% at n = 2^16) */
    const dq__cfg lc = *cfg, *c = &lc;
    float cur[2] = {0.0f, 0.0f};
    uint32_t codes[DQ__BLOCK];
    uint8_t tmp[DQ__BLOCK_BYTES(16u)];
    size_t bi = b0 / c->bucket, pos, bucket_end = b0, blk = DQ__BLOCK_BYTES(c->bits);
    for (pos = b0; pos + DQ__BLOCK <= b1; pos += DQ__BLOCK)
        dq__decode_block_at(c, scales, cd ? dq__cdec_block(cd, tmp) : payload + (pos / DQ__BLOCK) * blk, pos, &bi,
                            &bucket_end, cur, w, add, out + (pos - b0));
    if (pos < b1) { /* the tail of the vector */
        dq__unpack_tail(cd ? dq__cdec_block(cd, tmp) : payload + (pos / DQ__BLOCK) * blk, b1 - pos, c->bits, codes);
        dq__decode_tail(c, scales, codes, pos, b1, w, add, out + (pos - b0));
    }
}
/* Chunk [i0, i0 + cnt) of an output of dtype t as floats to update: in place for float data,
 * otherwise in buf, loaded from the output only when the update reads it (add). */
static inline float *dq__el_acc(dq_dtype t, void *out, size_t i0, size_t cnt, int add, float *buf) {
    if (t == DQ_F32) return (float *)out + i0;
    if (add) (void)dq__el_in(t, out, i0, cnt, buf);
    return buf;
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

/* Opens a message once: its header parsed and validated, its size and (when `verify`) its
 * payload checksum checked, and for a level scheme its configuration in *c, level table
 * included. Every decoder starts here; nothing parses the header a second time. */
/* The part of dq__open after the header: size, checksum, level table. */
static inline dq_status dq__open_body(const void *src, size_t src_len, int verify, const dq_header *h, dq__cfg *c) {
    if (src_len < h->msg_size) return DQ_ERR_TRUNCATED;
    if (verify && (h->flags & DQ_FLAG_CHECKSUM) &&
        dq__ld32((const uint8_t *)src + h->msg_size - 4u) != dq__body_crc((const uint8_t *)src, h->msg_size))
        return DQ_ERR_CHECKSUM;
    if (!dq__is_levels(h->scheme)) return DQ_OK;
    if (c->ntab) { /* TRUNC_NU: the level table after the scales */
        const uint8_t *lv = (const uint8_t *)src + (h->coder == DQ_CODER_FIXED ? DQ_HEADER_SIZE : DQ__CODED_HEADER) +
                            4u * c->nbuckets;
        size_t l;
        for (l = 0; l < c->ntab; l++) c->tab[l + 1u] = dq__bitsf(dq__ld32(lv + 4u * l));
        if (!dq__tab_ok(c->tab + 1, (unsigned)c->ntab)) return DQ_ERR_CORRUPT;
    }
    return DQ_OK;
}
static inline dq_status dq__open(const void *src, size_t src_len, int verify, dq_header *h, dq__cfg *c) {
    dq_status st;
    if (!src) return DQ_ERR_NULL;
    if ((st = dq__header_parse((const uint8_t *)src, src_len, h, c)) != DQ_OK) return st;
    return dq__open_body(src, src_len, verify, h, c);
}

DQ_API dq_status dq_verify(const void *src, size_t src_len) {
    dq_header h;
    dq__cfg c;
    return dq__open(src, src_len, 1, &h, &c);
}

DQ_API dq_status dq_encode_finish(void *msg, size_t msg_len) {
    dq_header h;
    dq_status st;
    if (!msg) return DQ_ERR_NULL;
    if ((st = dq_header_read(msg, msg_len, &h)) != DQ_OK) return st;
    if (msg_len < h.msg_size) return DQ_ERR_TRUNCATED;
    if (h.flags & DQ_FLAG_CHECKSUM)
        dq__st32((uint8_t *)msg + h.msg_size - 4u, dq__body_crc((const uint8_t *)msg, h.msg_size));
    return DQ_OK;
}

/* Whole messages (verified, output length checked against the count) and ranges. The body of an
 * opened message, whatever its family. */
static inline dq_status dq__decode_opened(const uint8_t *src, const dq_header *h, const dq__cfg *c, float w, int add,
                                          dq_dtype t, void *out) {
    return dq__ops_wire(h->scheme)->decode(src, h, c, w, add, t, out);
}
/* A whole unsegmented message (or one segment); `trusted`: a coded payload is decoded in one
 * pass and checked at its end (its checksum was verified, or it was checked already). */
static inline dq_status dq__lv_decode_as(const uint8_t *src, const dq_header *h, const dq__cfg *c, int trusted,
                                         float w, int add, dq_dtype t, void *out) {
    if (h->coder != DQ_CODER_FIXED) {
        dq__cdec cd;
        const uint8_t *scales = src + DQ__CODED_HEADER;
        if (dq__cdec_open(&cd, h->coder, h->bits, h->count, scales + c->prefix, h->payload_size) != DQ_OK)
            return DQ_ERR_CORRUPT;
        cd.trusted = trusted;
        return dq__decode_body(c, scales, NULL, &cd, h->count, 0, h->count, w, add, t, out);
    }
    return dq__decode_body(c, src + DQ_HEADER_SIZE, src + DQ_HEADER_SIZE + c->prefix, NULL, h->count, 0, h->count, w,
                           add, t, out);
}
static inline dq_status dq__seg_decode(const uint8_t *msg, const dq_header *H, float w, int add, dq_dtype t,
                                       void *out);
static inline dq_status dq__lv_decode(const uint8_t *src, const dq_header *h, const dq__cfg *c, float w, int add,
                                      dq_dtype t, void *out) {
    if (h->flags & DQ_FLAG_SEGMENTS) return dq__seg_decode(src, h, w, add, t, out);
    return dq__lv_decode_as(src, h, c, (h->flags & DQ_FLAG_CHECKSUM) != 0, w, add, t, out); /* verified when opened */
}
/* Whole messages, out of dtype t: out_n elements (exactly the count for add). */
static inline dq_status dq__decode_msg(const void *src, size_t src_len, float w, int add, dq_dtype t, void *out,
                                       size_t out_n) {
    dq_header h;
    dq__cfg c;
    dq_status st;
    if (!src || !out) return DQ_ERR_NULL;
    if (!dq_dtype_size(t)) return DQ_ERR_PARAM;
    if ((st = dq__header_parse((const uint8_t *)src, src_len, &h, &c)) != DQ_OK) return st;
    if (add ? out_n != h.count : out_n < h.count) return add ? DQ_ERR_SIZE_MISMATCH : DQ_ERR_DST_TOO_SMALL;
    if ((st = dq__open_body(src, src_len, 1, &h, &c)) != DQ_OK) return st;
    return dq__decode_opened((const uint8_t *)src, &h, &c, w, add, t, out);
}
/* Elements [begin, end) (a valid range) of an opened fixed or coder-3 message (or segment):
 * checked, then decoded into out; with out NULL, checked only. */
static inline dq_status dq__rng_opened(const uint8_t *src, const dq_header *h, const dq__cfg *c, size_t begin,
                                       size_t end, float w, int add, float *out) {
    if (h->coder == DQ_CODER_RANS) { /* the chunks that hold the range: checked, then decoded */
        const uint8_t *scales = src + DQ__CODED_HEADER;
        uint8_t tmp[DQ__BLOCK_BYTES(16u)];
        size_t E = dq__r32_chunk_elems(h->bits);
        dq__cdec cd;
        if (!dq__scales_ok(c, scales, begin / c->bucket, (end - 1u) / c->bucket + 1u)) return DQ_ERR_CORRUPT;
        if (dq__cdec_open(&cd, h->coder, h->bits, h->count, scales + c->prefix, h->payload_size) != DQ_OK ||
            dq__cdec_check_chunks(&cd, begin / E, (end - 1u) / E) != DQ_OK)
            return DQ_ERR_CORRUPT;
        if (!out) return DQ_OK;
        while (cd.k < begin / DQ__BLOCK) dq__cdec_block(&cd, tmp); /* the chunk's blocks before begin */
        dq__decode_run(c, scales, NULL, &cd, begin, end, w, add, out);
        return DQ_OK;
    }
    if (!out) { /* what dq__decode_body checks for this range */
        uint32_t codes[DQ__BLOCK];
        size_t full = h->count - h->count % DQ__BLOCK;
        if (!dq__scales_ok(c, src + DQ_HEADER_SIZE, begin / c->bucket, (end - 1u) / c->bucket + 1u)) return DQ_ERR_CORRUPT;
        if (end == h->count && full < end &&
            !dq__unpack_tail(src + DQ_HEADER_SIZE + c->prefix + (full / DQ__BLOCK) * DQ__BLOCK_BYTES(c->bits),
                             end - full, c->bits, codes))
            return DQ_ERR_CORRUPT;
        return DQ_OK;
    }
    return dq__decode_body(c, src + DQ_HEADER_SIZE, src + DQ_HEADER_SIZE + c->prefix, NULL, h->count, begin, end, w,
                           add, DQ_F32, out);
}
static inline dq_status dq__seg_range(const uint8_t *msg, const dq_header *H, size_t begin, size_t end, float w,
                                      int add, float *out);
static inline dq_status dq__decode_rng(const void *src, size_t src_len, size_t begin, size_t end, float w, int add,
                                       float *out) {
    dq_header h;
    dq__cfg c;
    dq_status st;
    if (!src || !out) return DQ_ERR_NULL;
    if ((st = dq__open(src, src_len, 0, &h, &c)) != DQ_OK) return st;
    if (!dq__is_levels(h.scheme)) return DQ_ERR_PARAM;
    if (h.flags & DQ_FLAG_SEGMENTS) return dq__seg_range((const uint8_t *)src, &h, begin, end, w, add, out);
    if (h.coder != DQ_CODER_FIXED && h.coder != DQ_CODER_RANS)
        return DQ_ERR_PARAM; /* Elias and coder 2: one stream, read from its start */
    if (!dq__range_ok(&c, h.count, begin, end)) return DQ_ERR_RANGE;
    return dq__rng_opened((const uint8_t *)src, &h, &c, begin, end, w, add, out);
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
static inline dq_status dq__seg_norm2(const uint8_t *msg, size_t src_len, const dq_header *H, double *sum);
DQ_API dq_status dq_message_norm2(const void *src, size_t src_len, double *norm2) {
    dq_header h;
    dq_status st;
    double sum = 0.0;
    if (!src || !norm2) return DQ_ERR_NULL;
    if ((st = dq_header_read(src, src_len, &h)) != DQ_OK) return st;
    if (h.norm != DQ_NORM_L2 || !dq__is_levels(h.scheme)) return DQ_ERR_PARAM;
    if (h.flags & DQ_FLAG_SEGMENTS)
        st = dq__seg_norm2((const uint8_t *)src, src_len, &h, &sum);
    else
        st = dq__norm2_scales((const uint8_t *)src, src_len,
                              h.coder == DQ_CODER_FIXED ? DQ_HEADER_SIZE : DQ__CODED_HEADER,
                              h.bucket ? (h.count - 1u) / h.bucket + 1u : 1u, &sum);
    if (st != DQ_OK) return st;
    *norm2 = sum;
    return DQ_OK;
}

DQ_API dq_status dq_decode(const void *src, size_t src_len, float *out, size_t out_cap) {
    return dq__decode_msg(src, src_len, 1.0f, 0, DQ_F32, out, out_cap);
}
DQ_API dq_status dq_message_open(const void *src, size_t src_len, dq_message *m) {
    if (!src || !m) return DQ_ERR_NULL;
    m->src = (const uint8_t *)src;
    return dq__open(src, src_len, 1, &m->h, &m->c);
}
static inline dq_status dq__message_decode(const dq_message *m, float w, int add, float *out, size_t out_n) {
    if (!m || !out) return DQ_ERR_NULL;
    if (add ? out_n != m->h.count : out_n < m->h.count) return add ? DQ_ERR_SIZE_MISMATCH : DQ_ERR_DST_TOO_SMALL;
    return dq__decode_opened(m->src, &m->h, &m->c, w, add, DQ_F32, out);
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

