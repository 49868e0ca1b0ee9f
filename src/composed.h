/* ---------------------------------------------------------------- quantized values of sparse messages
 * A sparse message whose header width is 1..16 bits (a composed message, doc/FORMAT.md 20.10)
 * carries its k values as the body of a QSGD message M' of those values: count k, the sparse
 * header's width, coder, norm, bucket and stochastic flag, no checksum of its own, and the
 * dither key of (seed, step XOR 2^63, stream). This part is the one place where the sparse
 * family meets the level codec: M''s params, its capacity and encoder (dq__lv_capacity,
 * dq__lv_encode), the parse of its body's sizes (dq__lv_header) and a reader that decodes its
 * values a block at a time (dq__fixed_check, dq__cdec_*, dq__decode_run), so that a sparse
 * decoder needs no buffer of k values. */

#define DQ__CM_STEP_FLIP ((uint64_t)1 << 63) /* M''s step: the header's with the top bit flipped */

/* A sparse header width that carries quantized values. */
static inline int dq__cm_bits(unsigned bits) { return bits >= 1u && bits <= 16u; }

/* The params of M' from the caller's sparse params (whose bits are 1..16). */
static inline void dq__cm_params(const dq_params *p, dq_params *q) {
    memset(q, 0, sizeof *q);
    q->scheme = DQ_SCHEME_QSGD;
    q->bits = p->bits;
    q->bucket = p->bucket;
    q->rounding = p->rounding;
    q->norm = p->norm;
    q->seed = p->seed;
    q->step = p->step ^ DQ__CM_STEP_FLIP;
    q->stream = p->stream;
    q->checksum = p->checksum;
    q->coder = p->coder;
}

/* The dst capacity the QSGD encoder needs for M' of k >= 1 values; UINT64_MAX when it does not
 * fit size_t. */
static inline uint64_t dq__cm_capacity(const dq_params *q, size_t k) {
    size_t size = 0;
    return dq__lv_capacity(q, k, &size) == DQ_OK ? (uint64_t)size : UINT64_MAX;
}

/* M''s header fields as a composed message's header gives them (the wire norm byte). */
typedef struct dq__cm_head {
    unsigned bits, coder, norm, stochastic;
    uint32_t bucket; /* as on the wire: 0 = all k values */
} dq__cm_head;

/* The sizes of M''s body at `body` (avail bytes there) for k >= 1 values, as dq__lv_header
 * parses a QSGD message: *lh (count, coder, payload_size, msg_size = 48 + the body) and its
 * configuration *lc. The checks of FORMAT 20.6 step 5 (DQ_ERR_TRUNCATED, DQ_ERR_CORRUPT,
 * DQ_ERR_TOO_LARGE); the fields themselves were checked with the sparse header. */
static inline dq_status dq__cm_parse(const dq__cm_head *f, const uint8_t *body, size_t avail, size_t k,
                                     dq_header *lh, dq__cfg *lc) {
    uint8_t head[DQ_HEADER_SIZE + 8u]; /* the header fields dq__lv_header reads, and the 8-byte length */
    size_t have = avail < 8u ? avail : 8u;
    memset(head, 0, sizeof head);
    memset(lh, 0, sizeof *lh);
    head[DQ__H_NORM] = (uint8_t)f->norm;
    if (have) memcpy(head + DQ_HEADER_SIZE, body, have);
    lh->scheme = DQ_SCHEME_QSGD;
    lh->bits = f->bits;
    lh->coder = f->coder;
    lh->flags = f->stochastic ? DQ_FLAG_STOCHASTIC : 0u;
    lh->bucket = f->bucket;
    return dq__lv_header(head, DQ_HEADER_SIZE + have, (uint64_t)k, lh, lc);
}

/* Writes M' of the k >= 1 values w with params q at dst[0..cap): its 48-byte header, then the
 * body, which the caller keeps. *f gets the header fields the encoder chose (coder, norm),
 * *cs whether it added a payload checksum (the last 4 of *len bytes). */
static inline dq_status dq__cm_encode(const dq_params *q, const float *w, size_t k, uint8_t *dst, size_t cap,
                                      dq__cm_head *f, unsigned *cs, size_t *len) {
    unsigned flags;
    dq_status st = dq__lv_encode(q, DQ_F32, w, k, DQ_F32, NULL, dst, cap, len);
    if (st != DQ_OK) return st;
    flags = dq__ld16(dst + DQ__H_FLAGS);
    f->bits = dst[DQ__H_BITS];
    f->coder = dst[DQ__H_CODER];
    f->norm = dst[DQ__H_NORM];
    f->stochastic = (flags & DQ_FLAG_STOCHASTIC) != 0;
    f->bucket = dq__ld32(dst + DQ__H_BUCKET);
    *cs = (flags & DQ_FLAG_CHECKSUM) != 0;
    return DQ_OK;
}

/* The decoded values of M', a block of 256 at a time, from its body in memory. */
typedef struct dq__cm_reader {
    dq__cfg c;
    const uint8_t *scales, *payload; /* payload: the fixed layout's (coder 0) */
    dq__cdec cd;                     /* coders 1 and 3 */
    int coded;
    size_t k, pos, cnt, at; /* values decoded so far; buffered; the next buffered one */
    float v[DQ__BLOCK];
} dq__cm_reader;

/* Opens the reader on the body of M' (k >= 1 values, coder and bits of its header, lc its
 * configuration); with `check`, validates every scale and the payload first (FORMAT 20.6 step
 * 7), so that the values decode without a failure. */
static inline dq_status dq__cm_open(dq__cm_reader *r, const dq__cfg *lc, unsigned coder, unsigned bits, size_t k,
                                    const uint8_t *body, int check) {
    r->c = *lc;
    r->k = k;
    r->pos = r->cnt = r->at = 0;
    r->coded = dq__coders[coder].open != NULL; /* else the fixed layout, read in place */
    r->scales = body + dq__coders[coder].head;
    r->payload = r->scales + lc->prefix;
    if (!r->coded) return check ? dq__fixed_check(lc, k, r->scales, r->payload) : DQ_OK;
    if (check && dq__fixed_check(lc, 0, r->scales, NULL) != DQ_OK) return DQ_ERR_CORRUPT; /* the scales */
    if (dq__cdec_open(&r->cd, coder, bits, k, r->payload, (size_t)dq__ld64(body)) != DQ_OK) return DQ_ERR_CORRUPT;
    r->cd.trusted = !check;
    return check ? dq__cdec_validate(&r->cd) : DQ_OK; /* decodes it once, then rewinds */
}

/* The next value (called at most k times). */
static inline float dq__cm_next(dq__cm_reader *r) {
    if (r->at == r->cnt) {
        size_t end = r->k - r->pos > DQ__BLOCK ? r->pos + DQ__BLOCK : r->k;
        dq__decode_run(&r->c, r->scales, r->payload, r->coded ? &r->cd : NULL, r->pos, end, 1.0f, 0, r->v);
        r->cnt = end - r->pos;
        r->pos = end;
        r->at = 0;
    }
    return r->v[r->at++];
}
