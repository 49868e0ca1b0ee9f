/* ---- the coded-payload reader: produces the fixed payload block by block, in order */
typedef struct dq__cdec {
    unsigned coder, bits;
    size_t n, k, isym;
    const uint8_t *pay;
    size_t len;
    size_t body; /* rANS: offset of the states (coder 2) or of the first chunk (coder 3) */
    size_t pos, cblocks; /* coder 3: offset of the next chunk; blocks per chunk */
    int inchunk;         /* coder 3: d32 decodes a chunk (checked at its end when the next opens) */
    dq__rans_dec r;
    dq__r32_dec d32;
    dq_bitreader br;     /* Elias */
    uint64_t left, at;   /* Elias: entries still to read; element index + 1 of the last one */
    uint32_t next_code;  /* Elias: the entry read ahead, at index at - 1 (none when left == 0 and at == 0) */
    int has_next;
    int bad;
    int trusted; /* the payload checksum was verified: decode in one pass, check at the end */
    uint32_t tab[DQ__RANS_M];
} dq__cdec;

/* Elias: reads the next entry (gap, sign, level) ahead; sets bad on any malformation. */
static inline void dq__elias_next(dq__cdec *d) {
    uint64_t gap, lvl, smax = ((uint64_t)1 << (d->bits - 1u)) - 1u;
    uint32_t sign;
    d->has_next = 0;
    if (d->left == 0 || d->bad) return;
    d->left--;
    if (dq_elias_omega_get(&d->br, &gap) != DQ_OK || gap > (uint64_t)d->n - d->at) {
        d->bad = 1;
        return;
    }
    sign = (uint32_t)dq_br_get(&d->br, 1);
    if (dq_elias_omega_get(&d->br, &lvl) != DQ_OK || lvl > smax) {
        d->bad = 1;
        return;
    }
    d->at += gap;
    d->next_code = (uint32_t)lvl | sign << (d->bits - 1u);
    d->has_next = 1;
}

static inline dq_status dq__cdec_rewind(dq__cdec *d) {
    unsigned j;
    d->k = d->isym = 0;
    d->bad = 0;
    if (d->coder == DQ_CODER_ELIAS) {
        uint64_t cnt;
        memset(&d->br, 0, sizeof d->br);
        dq_br_init(&d->br, d->pay, d->len);
        if (dq_elias_omega_get(&d->br, &cnt) != DQ_OK || cnt - 1u > (uint64_t)d->n) return DQ_ERR_CORRUPT;
        d->left = cnt - 1u;
        d->at = 0;
        dq__elias_next(d);
        return d->bad ? DQ_ERR_CORRUPT : DQ_OK;
    }
    if (d->coder == DQ_CODER_RANS) { /* chunks open as the blocks reach them */
        d->pos = d->body;
        d->inchunk = 0;
        return DQ_OK;
    }
    for (j = 0; j < DQ__RANS_WAYS; j++) {
        d->r.x[j] = dq__ld32(d->pay + d->body + 4u * j);
        if (d->r.x[j] < DQ__RANS_L) return DQ_ERR_CORRUPT;
    }
    d->r.p = d->pay + d->body + 4u * DQ__RANS_WAYS;
    d->r.left = d->len - d->body - 4u * DQ__RANS_WAYS;
    d->r.bad = 0;
    return DQ_OK;
}
static inline dq_status dq__cdec_open(dq__cdec *d, unsigned coder, unsigned b, size_t n, const uint8_t *pay,
                                      size_t len) {
    uint32_t f[256];
    unsigned A = 1u << dq__sym_bits(b);
    d->coder = coder;
    d->bits = b;
    d->n = n;
    d->pay = pay;
    d->len = len;
    if (coder == DQ_CODER_ELIAS) return dq__cdec_rewind(d);
    d->body = dq__rans_table_read(pay, len, A, f);
    if (d->body == 0) return DQ_ERR_CORRUPT;
    if (coder == DQ_CODER_RANS) {
        d->cblocks = dq__r32_chunk_elems(b) / DQ__BLOCK;
        (void)dq__r32_tables(f, A, d->tab, NULL); /* the table read is well formed */
        return dq__cdec_rewind(d);
    }
    if (len - d->body < 4u * DQ__RANS_WAYS || (len - d->body) % 2u) return DQ_ERR_CORRUPT;
    dq__rans_dtab(f, A, d->tab);
    return dq__cdec_rewind(d);
}
/* Coder 3: the previous chunk checked at its end, the next one opened. A length or stream that
 * does not fit marks the message bad and leaves a decoder that reads no word. */
static inline void dq__cdec_chunk(dq__cdec *d) {
    size_t len;
    unsigned j;
    if (d->inchunk && dq__r32_finish(&d->d32) != DQ_OK) d->bad = 1;
    d->inchunk = 1;
    if (d->len - d->pos >= 4u) {
        len = dq__ld32(d->pay + d->pos);
        if (len <= d->len - d->pos - 4u && dq__r32_open(&d->d32, d->pay + d->pos + 4u, len) == DQ_OK) {
            d->pos += 4u + len;
            return;
        }
    }
    d->bad = 1;
    for (j = 0; j < DQ__R32_WAYS; j++) d->d32.x[j] = DQ__R32_L;
    d->d32.p = d->d32.end = d->pay + d->len;
    d->d32.j = 0;
    d->d32.bad = 1;
    d->pos = d->len;
}
/* The next block of the fixed payload (32b bytes, or the tail's) into out. */
static inline const uint8_t *dq__cdec_block(dq__cdec *d, uint8_t *out) {
    uint8_t sym[DQ__BLOCK];
    unsigned b = d->bits;
    size_t cnt = d->n - d->k * DQ__BLOCK < DQ__BLOCK ? d->n - d->k * DQ__BLOCK : DQ__BLOCK;
    size_t nsym;
    if (d->coder == DQ_CODER_ELIAS) {
        uint32_t codes[DQ__BLOCK];
        uint64_t first = (uint64_t)d->k * DQ__BLOCK;
        memset(codes, 0, sizeof codes);
        while (d->has_next && d->at - 1u < first + cnt) {
            codes[d->at - 1u - first] = d->next_code;
            dq__elias_next(d);
        }
        if (cnt == DQ__BLOCK)
            dq__k_pack_block(codes, b, out);
        else
            dq__pack_tail(codes, cnt, b, out);
        d->k++;
        return out;
    }
    if (d->coder == DQ_CODER_RANS) {
        const uint8_t *p;
        if (d->k % d->cblocks == 0) dq__cdec_chunk(d);
        p = dq__r32_block(&d->d32, d->tab, b, d->n, d->k, dq__sym_bytes(b) ? out : sym, out);
        d->k++;
        return p;
    }
    nsym = (cnt + dq__sym_group(b) - 1u) / dq__sym_group(b);
    if (dq__sym_bytes(b)) { /* the symbols are the payload bytes: decode them in place */
        dq__rans_get(&d->r, d->tab, d->isym, out, nsym);
        if (!dq__block_from_syms(b, d->n, d->k, out, out)) d->bad = 1;
    } else {
        dq__rans_get(&d->r, d->tab, d->isym, sym, nsym);
        if (!dq__block_from_syms(b, d->n, d->k, sym, out)) d->bad = 1;
    }
    d->isym += nsym;
    d->k++;
    return out;
}
/* Coder 3: the reader at the start of chunk ci, whose offset comes from the lengths before it;
 * 0 when one of them runs past the payload. */
static inline int dq__cdec_seek(dq__cdec *d, size_t ci) {
    size_t c, len;
    (void)dq__cdec_rewind(d);
    for (c = 0; c < ci; c++) {
        if (d->len - d->pos < 4u || (len = dq__ld32(d->pay + d->pos)) > d->len - d->pos - 4u) return 0;
        d->pos += 4u + len;
    }
    d->k = ci * d->cblocks;
    return 1;
}
/* Coder 3, a range: the chunks ci .. cj decoded whole and checked at their ends, then the reader
 * back at the start of chunk ci. */
static inline dq_status dq__cdec_check_chunks(dq__cdec *d, size_t ci, size_t cj) {
    uint8_t tmp[DQ__BLOCK_BYTES(16u)];
    size_t nblk = (d->n + DQ__BLOCK - 1u) / DQ__BLOCK, k1 = (cj + 1u) * d->cblocks;
    if (!dq__cdec_seek(d, ci)) return DQ_ERR_CORRUPT;
    if (k1 > nblk) k1 = nblk;
    while (d->k < k1) dq__cdec_block(d, tmp);
    if (d->bad || dq__r32_finish(&d->d32) != DQ_OK) return DQ_ERR_CORRUPT;
    return dq__cdec_seek(d, ci) ? DQ_OK : DQ_ERR_CORRUPT;
}

/* After the last block: was the stream well formed and fully used? */
static inline dq_status dq__cdec_end(dq__cdec *d) {
    unsigned j;
    int ok;
    if (d->coder == DQ_CODER_ELIAS) {
        ok = !d->bad && !d->has_next && dq_br_finish(&d->br) == DQ_OK;
    } else if (d->coder == DQ_CODER_RANS) {
        ok = !d->bad && dq__r32_finish(&d->d32) == DQ_OK && d->pos == d->len;
    } else {
        ok = !d->bad && !d->r.bad && d->r.left == 0;
        for (j = 0; j < DQ__RANS_WAYS; j++) ok &= d->r.x[j] == DQ__RANS_L;
    }
    return ok ? DQ_OK : DQ_ERR_CORRUPT;
}
/* Decodes the whole stream once to validate it, then rewinds. */
static inline dq_status dq__cdec_validate(dq__cdec *d) {
    uint8_t tmp[DQ__BLOCK_BYTES(16u)];
    size_t k, nblk = (d->n + DQ__BLOCK - 1u) / DQ__BLOCK;
    dq_status st;
    for (k = 0; k < nblk; k++) dq__cdec_block(d, tmp);
    if ((st = dq__cdec_end(d)) != DQ_OK) return st;
    return dq__cdec_rewind(d);
}


/* ---- sizes of coded messages: [header][u64 payload bytes][scales][coded payload][checksum] */
#define DQ__CODED_HEADER (DQ_HEADER_SIZE + 8u)
/* Worst-case Elias payload: gaps sum to at most n and omega(g) <= g + 2, each non-zero adds a
 * sign and its level, and the count omega(nnz + 1) leads. */
static inline uint64_t dq__elias_payload_bound(uint64_t n, unsigned b) {
    return (n * (4u + dq_elias_omega_len(((uint64_t)1 << (b - 1u)) - 1u)) + dq_elias_omega_len(n + 1u) + 7u) / 8u;
}
/* Largest payload a coded message of this coder may declare. */
static inline uint64_t dq__coded_bound(unsigned coder, uint64_t n, unsigned b) {
    if (coder == DQ_CODER_RANS) return dq__r32_payload_bound(n, b);
    return coder == DQ_CODER_RANS8 ? dq__rans_payload_bound(n, b) : dq__elias_payload_bound(n, b);
}
DQ_API size_t dq_encode_bound_coded(size_t n, unsigned bits) {
    uint64_t fixed = dq_encode_bound(n, bits), r = 0, e = 0, s;
    if (!fixed) return 0;
    if (bits <= 8u) r = dq__r32_payload_bound(n, bits);
    if (bits >= 2u) e = dq__elias_payload_bound(n, bits);
    s = fixed + 8u + (r > e ? r : e) + 16u; /* the fixed message, then room to re-code it in place */
    return s <= (uint64_t)SIZE_MAX ? (size_t)s : 0u;
}

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

/* ---- the element adapter: one pipeline for float32, fp16 and bf16 vectors. The codec works on
 * floats; a 16-bit vector moves through it in chunks of DQ__ELCHUNK elements converted on the
 * stack, so nothing is allocated and each element is read from memory once per pass. A float
 * vector is used in place, in one piece. */
#define DQ__ELCHUNK 2048u /* elements per chunk: a multiple of the 256-element block and of 64 */

DQ_API size_t dq_dtype_size(dq_dtype t) {
    switch (t) {
        case DQ_F32: return 4u;
        case DQ_F16:
        case DQ_BF16: return 2u;
        default: return 0u;
    }
}
/* cnt elements of dtype t starting at element i0 of src, as floats in buf; a float source is
 * returned in place. */
static inline const float *dq__el_in(dq_dtype t, const void *src, size_t i0, size_t cnt, float *buf) {
    const uint8_t *s = (const uint8_t *)src + i0 * dq_dtype_size(t);
    if (t == DQ_F32) return (const float *)(const void *)s;
    if (t == DQ_F16)
        dq__k_f16_to_f32(s, buf, cnt);
    else
        dq__k_bf16_to_f32(s, buf, cnt);
    return buf;
}
/* The same for memory that is updated in place (a float residual) or through buf. */
static inline float *dq__el_inout(dq_dtype t, void *src, size_t i0, size_t cnt, float *buf) {
    if (t == DQ_F32) return (float *)src + i0;
    (void)dq__el_in(t, src, i0, cnt, buf);
    return buf;
}
/* buf[0..cnt) rounded to dtype t at element i0 of dst (nothing to do for float in place). */
static inline void dq__el_out(dq_dtype t, const float *buf, size_t cnt, void *dst, size_t i0) {
    uint8_t *d = (uint8_t *)dst + i0 * dq_dtype_size(t);
    if (t == DQ_F16)
        dq__k_f32_to_f16(buf, d, cnt);
    else if (t == DQ_BF16)
        dq__k_f32_to_bf16(buf, d, cnt);
    else if ((const void *)buf != (const void *)d)
        memcpy(d, buf, 4u * cnt);
}
/* Single elements, for the scattered reads and writes of the sparse schemes. */
static inline float dq__el_get(dq_dtype t, const void *src, size_t i) {
    float v;
    return *dq__el_in(t, src, i, 1, &v);
}
static inline void dq__el_set(dq_dtype t, void *dst, size_t i, float v) { dq__el_out(t, &v, 1, dst, i); }
/* The chunk length of a pass over n elements: all of them for float data. */
static inline size_t dq__el_chunk(int flt, size_t n) { return flt ? n : DQ__ELCHUNK; }

