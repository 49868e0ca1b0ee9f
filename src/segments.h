/* ---------------------------------------------------------------- segmented messages (FORMAT 24)
 * A segment reads as a message of its own whose header is implied: its fields come from the
 * message's header and the segment's entry, and its body sits where a lone message's body would
 * follow a header. So every decoder above serves a segment unchanged, and the encoder writes
 * each segment's body as dq_encode writes a message's (dq__lv_encode_body), in place. The table
 * is parsed once, when the message is opened (every entry validated, the header's fields with
 * them); the decoders' walks (dq__seg_next) read each entry's fields and derive the segment's
 * configuration from the message's without checking them again. */
#define DQ__SEG_TABLE (DQ_HEADER_SIZE + 8u) /* the first entry: after m and the entries' CRC */
#define DQ__SEG_ENTRY 24u
typedef struct dq__seg {
    dq_header h; /* the implied header: no checksum, one segment */
    dq__cfg c;
    const uint8_t *src; /* body - 48, inside the message (the table precedes every body) */
    size_t first;       /* index of its first element in the vector */
} dq__seg;
typedef struct dq__segwalk {
    size_t j, off, first; /* the next segment, its body's offset and first element */
} dq__segwalk;

/* A segment's configuration, from the message's (QSGD, its bucket) and the entry's fields: what
 * dq__cfg_make2 gives for them, without going through the params again. */
static inline void dq__seg_cfg(const dq__cfg *base, unsigned bits, unsigned coder, size_t cnt, size_t first,
                               dq__cfg *c) {
    *c = *base;
    c->bits = bits;
    c->coder = coder;
    c->bucket = base->bucket_wire ? (size_t)base->bucket_wire : cnt;
    c->nbuckets = (cnt - 1u) / c->bucket + 1u;
    c->prefix = 4u * c->nbuckets;
    c->first = first;
}
/* Entry e checked against the message's header H and configuration C (FORMAT 24.2). */
static inline dq_status dq__seg_entry(const uint8_t *e, const dq_header *H, const dq__cfg *C, uint64_t *cnt,
                                      uint64_t *bytes) {
    unsigned bits = e[16], coder = e[17], i;
    const dq__coder *row = dq__coder_row(coder);
    dq__cfg c;
    *cnt = dq__ld64(e);
    *bytes = dq__ld64(e + 8);
    for (i = 18; i < DQ__SEG_ENTRY; i++)
        if (e[i]) return DQ_ERR_CORRUPT;
    if (*cnt == 0 || *cnt > (uint64_t)H->count || bits < 2u || bits > 16u || !dq__coder_part_ok(coder, bits))
        return DQ_ERR_CORRUPT;
    dq__seg_cfg(C, bits, coder, (size_t)*cnt, 0, &c);
    if (!row->head) return *bytes == c.prefix + (*cnt * bits + 7u) / 8u ? DQ_OK : DQ_ERR_CORRUPT;
    if (*bytes < row->head + c.prefix || *bytes - row->head - c.prefix > row->bound(*cnt, bits)) return DQ_ERR_CORRUPT;
    return DQ_OK;
}

/* dq__lv_header for a segmented message (flags bit 3): the header's fields, then the table, every
 * entry parsed once; the walks below read their fields without checking them again. */
static inline dq_status dq__seg_header(const uint8_t *in, size_t src_len, uint64_t count, dq_header *h, dq__cfg *c) {
    dq_params p;
    uint64_t sum = 0, total, cnt, bytes;
    size_t m, j;
    unsigned maxb = 0;
    dq_status st;
    if (h->scheme != DQ_SCHEME_QSGD || h->coder != DQ_CODER_FIXED || h->bits < 2u || h->bits > 16u ||
        !dq__norm_ok(h->scheme, in[DQ__H_NORM]) ||
        (h->flags & ~(DQ_FLAG_STOCHASTIC | DQ_FLAG_CHECKSUM | DQ_FLAG_SEGMENTS)) != 0 || (h->bucket % 8u) != 0)
        return DQ_ERR_CORRUPT;
    if (dq__count_set(count, h) != DQ_OK) return DQ_ERR_TOO_LARGE;
    memset(&p, 0, sizeof p); /* the whole vector's configuration (no level table), which the segments' derive from */
    p.bits = h->bits;
    p.bucket = h->bucket ? h->bucket : DQ_BUCKET_WHOLE;
    if (dq__cfg_make2(&p, h->count, 1, c) != DQ_OK) return DQ_ERR_CORRUPT;
    if (src_len < DQ__SEG_TABLE) return DQ_ERR_TRUNCATED;
    m = (size_t)dq__ld32(in + DQ_HEADER_SIZE);
    if (m == 0 || m > DQ_SEGMENTS_MAX || (uint64_t)m > count) return DQ_ERR_CORRUPT;
    if ((src_len - DQ__SEG_TABLE) / DQ__SEG_ENTRY < m) return DQ_ERR_TRUNCATED;
    if (dq__ld32(in + DQ_HEADER_SIZE + 4u) != dq__crc32c(in + DQ__SEG_TABLE, DQ__SEG_ENTRY * m)) return DQ_ERR_CHECKSUM;
    total = DQ__SEG_TABLE + (uint64_t)DQ__SEG_ENTRY * m;
    for (j = 0; j < m; j++) {
        if ((st = dq__seg_entry(in + DQ__SEG_TABLE + DQ__SEG_ENTRY * j, h, c, &cnt, &bytes)) != DQ_OK) return st;
        if (cnt > count - sum) return DQ_ERR_CORRUPT;
        sum += cnt;
        if (in[DQ__SEG_TABLE + DQ__SEG_ENTRY * j + 16u] > maxb) maxb = in[DQ__SEG_TABLE + DQ__SEG_ENTRY * j + 16u];
        total += bytes; /* no wrap: each body is below 2^60 */
    }
    if (sum != count || maxb != h->bits) return DQ_ERR_CORRUPT;
    if (h->flags & DQ_FLAG_CHECKSUM) total += 4u;
    if (total > (uint64_t)SIZE_MAX) return DQ_ERR_TOO_LARGE;
    h->segments = m;
    h->msg_size = (size_t)total;
    h->payload_size = h->msg_size - DQ__SEG_TABLE - DQ__SEG_ENTRY * m - ((h->flags & DQ_FLAG_CHECKSUM) ? 4u : 0u);
    return DQ_OK;
}

static inline void dq__seg_start(const dq_header *H, dq__segwalk *w) {
    w->j = 0;
    w->off = DQ__SEG_TABLE + DQ__SEG_ENTRY * H->segments;
    w->first = 0;
}
/* The walk's segment of an opened message (its entries validated, its bytes present), and a step
 * past it. `check`: the one check of a body the table implies, its coded payload's length,
 * made on the walk that checks the bodies. */
static inline dq_status dq__seg_next(const uint8_t *msg, const dq_header *H, const dq__cfg *C, dq__segwalk *w,
                                     dq__seg *s, int check) {
    const uint8_t *e = msg + DQ__SEG_TABLE + DQ__SEG_ENTRY * w->j;
    size_t cnt = (size_t)dq__ld64(e), bytes = (size_t)dq__ld64(e + 8);
    unsigned head = dq__coders[e[17]].head;
    dq__seg_cfg(C, e[16], e[17], cnt, w->first, &s->c);
    s->h = *H;
    s->h.bits = e[16];
    s->h.coder = e[17];
    s->h.flags = H->flags & DQ_FLAG_STOCHASTIC;
    s->h.count = s->h.nnz = cnt;
    s->h.segments = 1;
    s->h.msg_size = DQ_HEADER_SIZE + bytes;
    s->h.payload_size = bytes - head - s->c.prefix;
    s->src = msg + w->off - DQ_HEADER_SIZE;
    s->first = w->first;
    w->j++;
    w->off += bytes;
    w->first += cnt;
    if (check && head && dq__ld64(s->src + DQ_HEADER_SIZE) != (uint64_t)s->h.payload_size) return DQ_ERR_CORRUPT;
    return DQ_OK;
}
/* Everything a decode of segment s would check, without decoding into anything. */
static inline dq_status dq__seg_check(const dq__seg *s) {
    const dq__coder *row = &dq__coders[s->h.coder];
    const uint8_t *scales = s->src + DQ_HEADER_SIZE + row->head;
    dq__cdec cd;
    if (!row->open) return dq__fixed_check(&s->c, s->h.count, scales, scales + s->c.prefix);
    if (!dq__scales_ok(&s->c, scales, 0, s->c.nbuckets) ||
        dq__cdec_open(&cd, s->h.coder, s->h.bits, s->h.count, scales + s->c.prefix, s->h.payload_size) != DQ_OK)
        return DQ_ERR_CORRUPT;
    return dq__cdec_validate(&cd);
}

/* Whole segmented messages: every segment checked before out is written, except the coded ones
 * under a verified checksum, which decode in one pass (FORMAT 17.4's exception). */
static inline dq_status dq__seg_decode(const uint8_t *msg, const dq_header *H, const dq__cfg *C, float w, int add,
                                       dq_dtype t, void *out) {
    int trusted = (H->flags & DQ_FLAG_CHECKSUM) != 0;
    size_t es = dq_dtype_size(t);
    dq__segwalk wk;
    dq__seg s;
    dq_status st;
    for (dq__seg_start(H, &wk); wk.j < H->segments;) {
        if ((st = dq__seg_next(msg, H, C, &wk, &s, 1)) != DQ_OK) return st;
        if ((!trusted || !dq__coders[s.h.coder].open) && (st = dq__seg_check(&s)) != DQ_OK) return st;
    }
    for (dq__seg_start(H, &wk); wk.j < H->segments;) {
        (void)dq__seg_next(msg, H, C, &wk, &s, 0);
        if ((st = dq__lv_decode_as(s.src, &s.h, &s.c, 1, w, add, t, (uint8_t *)out + s.first * es)) != DQ_OK)
            return st;
    }
    return DQ_OK;
}

/* Ranges: each segment's part checked (alignment, then its body when the range spans several
 * segments) before anything is decoded. */
static inline dq_status dq__seg_range(const dq_message *m, size_t begin, size_t end, float w, int add, float *out) {
    const dq_header *H = &m->h;
    dq__segwalk wk;
    dq__seg s;
    dq_status st;
    int pass, many = 0;
    if (!(begin < end && end <= H->count)) return DQ_ERR_RANGE;
    for (pass = 0; pass < 3; pass++) { /* 0: alignment, 1: bodies (several segments), 2: decode */
        if (pass == 1 && !many) continue;
        for (dq__seg_start(H, &wk); wk.j < H->segments && wk.first < end;) {
            size_t lb, le;
            int whole;
            if ((st = dq__seg_next(m->src, H, &m->c, &wk, &s, pass == 0)) != DQ_OK) return st;
            if (s.first + s.h.count <= begin) continue;
            lb = begin > s.first ? begin - s.first : 0u;
            le = (end < s.first + s.h.count ? end : s.first + s.h.count) - s.first;
            whole = lb == 0 && le == s.h.count;
            if (pass == 0) {
                if (lb > 0 && s.first + s.h.count < end) many = 1;
                if (lb == 0 && s.first > begin) many = 1;
                if (!whole && dq__coder_one_stream(s.h.coder)) return DQ_ERR_PARAM;
                if (!whole && !dq__range_ok(&s.c, s.h.count, lb, le)) return DQ_ERR_RANGE;
            } else if (pass == 1) {
                if ((st = whole ? dq__seg_check(&s) : dq__rng_opened(s.src, &s.h, &s.c, lb, le, w, add, NULL)) != DQ_OK)
                    return st;
            } else if (whole) {
                if ((st = dq__lv_decode_as(s.src, &s.h, &s.c, many, w, add, DQ_F32, out + (s.first - begin))) != DQ_OK)
                    return st;
            } else if ((st = dq__rng_opened(s.src, &s.h, &s.c, lb, le, w, add, out + (s.first + lb - begin))) != DQ_OK) {
                return st;
            }
        }
    }
    return DQ_OK;
}

static inline dq_status dq__seg_norm2(const dq_message *m, size_t src_len, double *sum) {
    const dq_header *H = &m->h;
    dq__segwalk wk;
    dq__seg s;
    dq_status st;
    if (src_len < H->msg_size - ((H->flags & DQ_FLAG_CHECKSUM) ? 4u : 0u)) return DQ_ERR_TRUNCATED;
    for (dq__seg_start(H, &wk); wk.j < H->segments;) {
        if ((st = dq__seg_next(m->src, H, &m->c, &wk, &s, 1)) != DQ_OK) return st;
        if ((st = dq__norm2_scales(s.src, s.h.msg_size, DQ_HEADER_SIZE + dq__coders[s.h.coder].head, s.c.nbuckets,
                                   sum)) != DQ_OK)
            return st;
    }
    return DQ_OK;
}

DQ_API dq_status dq_segments_read(const void *src, size_t src_len, dq_segment *seg, size_t cap, size_t *m) {
    const uint8_t *in = (const uint8_t *)src;
    dq_header h;
    dq__cfg c;
    dq_status st;
    size_t j, first = 0;
    if (!src || !m || (cap && !seg)) return DQ_ERR_NULL;
    if ((st = dq__header_parse(in, src_len, &h, &c)) != DQ_OK) return st;
    if (!dq__is_levels(h.scheme)) return DQ_ERR_PARAM;
    *m = h.segments;
    if (cap < h.segments) return DQ_ERR_DST_TOO_SMALL;
    if (!(h.flags & DQ_FLAG_SEGMENTS)) {
        seg[0].count = h.count;
        seg[0].bits = h.bits;
        seg[0].coder = h.coder;
        seg[0].first = 0;
        seg[0].size = h.msg_size - DQ_HEADER_SIZE - ((h.flags & DQ_FLAG_CHECKSUM) ? 4u : 0u);
        return DQ_OK;
    }
    for (j = 0; j < h.segments; j++) { /* the entries, validated by the header parse */
        const uint8_t *e = in + DQ__SEG_TABLE + DQ__SEG_ENTRY * j;
        seg[j].count = (size_t)dq__ld64(e);
        seg[j].size = (size_t)dq__ld64(e + 8);
        seg[j].bits = e[16];
        seg[j].coder = e[17];
        seg[j].first = first;
        first += seg[j].count;
    }
    return DQ_OK;
}

/* Segment sg's params: its width, no checksum (the message carries one), the default resolved. */
static inline void dq__seg_params(const dq_params *p, const dq_segment *sg, dq_params *q) {
    *q = *p;
    q->bits = sg->bits;
    q->checksum = 0;
    q->coder = dq__coder_part(p->coder, sg->count);
}
/* Checks params and segments; *n the element count, *need the room encoding needs before it
 * starts (fixed layouts, forced coders' bounds), *cap dq_segments_capacity(). */
static inline dq_status dq__seg_plan(const dq_params *p, const dq_segment *seg, size_t m, size_t *n, size_t *need,
                                     size_t *cap) {
    uint64_t tot = 0, nd, cp;
    size_t j;
    int coded = 0;
    if (!p || !seg) return DQ_ERR_NULL;
    if (m == 0) return DQ_ERR_EMPTY;
    if (m > DQ_SEGMENTS_MAX || (p->scheme != DQ_SCHEME_DEFAULT && p->scheme != DQ_SCHEME_QSGD) || p->checksum > 1u)
        return DQ_ERR_PARAM;
    nd = cp = DQ__SEG_TABLE + (uint64_t)DQ__SEG_ENTRY * m;
    for (j = 0; j < m; j++) {
        dq_params q;
        dq__cfg c;
        dq_status st;
        size_t sz;
        int ok;
        if (seg[j].count == 0) return DQ_ERR_EMPTY;
        if (seg[j].bits < 2u || seg[j].bits > 16u) return DQ_ERR_BITS;
        if ((uint64_t)seg[j].count > DQ_MAX_ELEMS - tot) return DQ_ERR_TOO_LARGE;
        tot += seg[j].count;
        dq__seg_params(p, &seg[j], &q);
        if ((st = dq__cfg_make(&q, seg[j].count, &c)) != DQ_OK) return st;
        if ((st = dq__sized(&q, seg[j].count, 1, &sz)) != DQ_OK) return st;
        cp += sz - DQ_HEADER_SIZE;
        nd += dq__coder_forced(c.coder) ? sz - DQ_HEADER_SIZE : dq__size(&c, seg[j].count, 0, &ok);
        coded |= dq__coder_may_code(c.coder);
    }
    if (p->checksum || (dq__default_asked(p) && coded)) cp += 4u;
    if (p->checksum) nd += 4u;
    if (tot > (uint64_t)SIZE_MAX || cp > (uint64_t)SIZE_MAX) return DQ_ERR_TOO_LARGE;
    *n = (size_t)tot;
    *need = (size_t)nd;
    *cap = (size_t)cp;
    return DQ_OK;
}
DQ_API dq_status dq_segments_capacity(const dq_params *p, const dq_segment *seg, size_t m, size_t *size) {
    size_t n, need;
    if (!size) return DQ_ERR_NULL;
    return dq__seg_plan(p, seg, m, &n, &need, size);
}

DQ_API dq_status dq_encode_segments(const dq_params *p, const float *x, const dq_segment *seg, size_t m,
                                    float *residual, void *dst, size_t dst_cap, size_t *dst_len) {
    uint8_t *out = (uint8_t *)dst;
    size_t n, need, cap, j, off, first, crc;
    unsigned maxb = 0, norm = 0, flags = DQ_FLAG_SEGMENTS;
    int coded = 0;
    dq_status st;
    if (!x || !dst || !dst_len) return DQ_ERR_NULL;
    if ((st = dq__seg_plan(p, seg, m, &n, &need, &cap)) != DQ_OK) return st;
    if (dst_cap < need) return DQ_ERR_DST_TOO_SMALL;
    crc = p->checksum ? 4u : 0u;
    if (residual && m > 1) { /* the scales' failures, found before any residual moves (dst as scratch) */
        for (j = 0, first = 0; j < m; first += seg[j].count, j++) {
            dq_params q;
            dq__cfg c;
            dq__seg_params(p, &seg[j], &q);
            (void)dq__cfg_make(&q, seg[j].count, &c);
            if ((st = dq__lv_scales(&c, 0, seg[j].count, seg[j].count, DQ_F32, x + first, DQ_F32, residual + first,
                                    out, NULL, NULL)) != DQ_OK)
                return st;
        }
    }
    off = DQ__SEG_TABLE + DQ__SEG_ENTRY * m;
    for (j = 0, first = 0; j < m; first += seg[j].count, j++) {
        /* segment j's body is encoded in place, as a message's would be behind its header */
        uint8_t *e = out + DQ__SEG_TABLE + DQ__SEG_ENTRY * j;
        size_t body;
        unsigned coder;
        int scrc;
        dq_params q;
        dq__cfg c;
        dq__seg_params(p, &seg[j], &q);
        st = dq__lv_encode_body(&q, first, DQ_F32, x + first, seg[j].count, DQ_F32, residual ? residual + first : NULL,
                                out + off - DQ_HEADER_SIZE, dst_cap - crc - (off - DQ_HEADER_SIZE), &c, &coder, &scrc,
                                &body);
        if (st != DQ_OK) return st;
        norm = c.norm;
        memset(e, 0, DQ__SEG_ENTRY);
        dq__st64(e, (uint64_t)seg[j].count);
        dq__st64(e + 8, (uint64_t)body);
        e[16] = (uint8_t)seg[j].bits;
        e[17] = (uint8_t)coder;
        if (seg[j].bits > maxb) maxb = seg[j].bits;
        coded |= dq__coders[coder].head != 0;
        off += body;
    }
    if (!crc && dq__default_asked(p) && coded && dst_cap - off >= 4u) crc = 4u;
    if (p->rounding != DQ_ROUND_NEAREST) flags |= DQ_FLAG_STOCHASTIC;
    if (crc) flags |= DQ_FLAG_CHECKSUM;
    dq__st32(out + DQ_HEADER_SIZE, (uint32_t)m);
    dq__st32(out + DQ_HEADER_SIZE + 4u, dq__crc32c(out + DQ__SEG_TABLE, DQ__SEG_ENTRY * m));
    dq__put_header(out, DQ_SCHEME_QSGD, maxb, DQ_CODER_FIXED, norm, flags,
                   p->bucket == DQ_BUCKET_WHOLE ? 0u : (p->bucket ? p->bucket : DQ_BUCKET_DEFAULT), (uint64_t)n, p);
    if (crc) dq__st32(out + off, dq__crc32c(out + DQ_HEADER_SIZE, off - DQ_HEADER_SIZE));
    *dst_len = off + crc;
    return DQ_OK;
}


