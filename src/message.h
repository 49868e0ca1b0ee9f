/* ---------------------------------------------------------------- the message: header written once, parsed once
 * Every message starts with the 48-byte header of doc/FORMAT.md 3. A level-scheme body follows
 * it: the scales (and a level table), then the payload in its coder's form, a coded payload
 * behind its 8-byte length (the coder row's `head`); a segmented message has a segment table
 * and one such body per segment (segments.h); sparse and sketch bodies are their families'.
 * Encoders write the header once, when the body is final and the coder chosen
 * (dq__message_close). Decoders parse it once into a dq_message (dq__msg_parse: the header and,
 * through the family table, what decoding needs: the configuration, and for a segmented
 * message its table, every entry validated; dq__msg_open_body: the size, the payload checksum,
 * the TRUNC_NU level table), and every decoder works from that handle. */

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

/* The 48-byte header of any scheme, with its CRC; seed, step and stream from p. */
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
/* A level-scheme header: the configuration's fields, the coder sent, the checksum flag. */
static inline void dq__write_header(const dq__cfg *c, const dq_params *p, size_t n, unsigned coder, int crc,
                                    uint8_t *out) {
    dq__put_header(out, c->scheme, c->bits, coder, c->norm,
                   (c->stochastic ? DQ_FLAG_STOCHASTIC : 0u) | (crc ? DQ_FLAG_CHECKSUM : 0u), c->bucket_wire,
                   (uint64_t)n, p);
}
/* The payload checksum: CRC32C of everything between the header and the checksum itself. */
static inline uint32_t dq__body_crc(const uint8_t *msg, size_t msg_size) {
    return dq__crc32c(msg + DQ_HEADER_SIZE, msg_size - DQ_HEADER_SIZE - 4u);
}
/* A level-scheme message whose body (body bytes after the header) is final: the header, once,
 * and the payload checksum when it carries one. Returns the message's size. */
static inline size_t dq__message_close(const dq__cfg *c, const dq_params *p, size_t n, unsigned coder, int crc,
                                       uint8_t *dst, size_t body) {
    size_t size = DQ_HEADER_SIZE + body + (crc ? 4u : 0u);
    dq__write_header(c, p, n, coder, crc, dst);
    if (crc) dq__st32(dst + size - 4u, dq__body_crc(dst, size));
    return size;
}

/* ---- parsing */

/* The element count of a header into h (TOO_LARGE beyond what this machine can index). */
static inline dq_status dq__count_set(uint64_t count, dq_header *h) {
    if (count > DQ_MAX_ELEMS || count > (uint64_t)SIZE_MAX) return DQ_ERR_TOO_LARGE;
    h->count = h->nnz = (size_t)count;
    return DQ_OK;
}
/* Parses and validates the header at in (doc/FORMAT.md 3.2, steps 1 to 9) into h; for a level
 * scheme also its configuration into c (a TRUNC_NU level table is read when the body opens)
 * and, for a segmented message, every entry of its table. */
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
/* The same into a message handle, which then points at in. */
static inline dq_status dq__msg_parse(const uint8_t *in, size_t src_len, dq_message *m) {
    m->src = in;
    return dq__header_parse(in, src_len, &m->h, &m->c);
}
static inline dq_status dq__seg_header(const uint8_t *in, size_t src_len, uint64_t count, dq_header *h, dq__cfg *c);
/* dq__msg_parse for the level schemes (and the refusal of unassigned scheme ids). */
static inline dq_status dq__lv_header(const uint8_t *in, size_t src_len, uint64_t count, dq_header *h, dq__cfg *c) {
    const dq__coder *row = dq__coder_row(h->coder);
    dq_params p;
    int ok;
    if (dq__is_levels(h->scheme) && (h->flags & DQ_FLAG_SEGMENTS)) return dq__seg_header(in, src_len, count, h, c);
    h->segments = 1;
    if (!dq__is_levels(h->scheme) || !row || !dq__bits_ok(h->scheme, h->bits) ||
        !dq__norm_ok(h->scheme, in[DQ__H_NORM]) || (h->flags & ~(DQ_FLAG_STOCHASTIC | DQ_FLAG_CHECKSUM)) != 0 ||
        (h->bucket % 8u) != 0 || ((dq__scheme(h->scheme)->flags & DQ__S_NEAREST) && (h->flags & DQ_FLAG_STOCHASTIC)))
        return DQ_ERR_CORRUPT;
    if (dq__count_set(count, h) != DQ_OK) return DQ_ERR_TOO_LARGE;
    memset(&p, 0, sizeof p);
    p.scheme = (dq_scheme)h->scheme;
    p.bits = h->bits;
    p.bucket = h->bucket ? h->bucket : DQ_BUCKET_WHOLE;
    p.checksum = (h->flags & DQ_FLAG_CHECKSUM) ? 1u : 0u;
    p.coder = h->coder; /* refuses a width the coder does not carry */
    if (dq__cfg_make2(&p, h->count, 1, c) != DQ_OK) return DQ_ERR_CORRUPT;
    h->msg_size = dq__size(c, h->count, 1, &ok);
    h->payload_size = (size_t)(((uint64_t)h->count * h->bits + 7u) / 8u);
    if (ok && row->head) { /* the payload's length follows the header */
        uint64_t len;
        if (src_len < DQ_HEADER_SIZE + (size_t)row->head) return DQ_ERR_TRUNCATED;
        len = dq__ld64(in + DQ_HEADER_SIZE);
        if (len > row->bound(h->count, h->bits)) return DQ_ERR_CORRUPT;
        if (len > (uint64_t)SIZE_MAX - (h->msg_size - h->payload_size) - row->head) return DQ_ERR_TOO_LARGE;
        h->msg_size = h->msg_size - h->payload_size + row->head + (size_t)len;
        h->payload_size = (size_t)len;
    }
    return ok ? DQ_OK : DQ_ERR_TOO_LARGE;
}
DQ_API dq_status dq_header_read(const void *src, size_t src_len, dq_header *h) {
    dq__cfg c;
    if (!src || !h) return DQ_ERR_NULL;
    return dq__header_parse((const uint8_t *)src, src_len, h, &c);
}

/* The rest of opening a parsed message: its size, (when `verify`) its payload checksum, and for
 * a level scheme the level table of TRUNC_NU. */
static inline dq_status dq__msg_open_body(dq_message *m, size_t src_len, int verify) {
    const dq_header *h = &m->h;
    dq__cfg *c = &m->c;
    if (src_len < h->msg_size) return DQ_ERR_TRUNCATED;
    if (verify && (h->flags & DQ_FLAG_CHECKSUM) &&
        dq__ld32(m->src + h->msg_size - 4u) != dq__body_crc(m->src, h->msg_size))
        return DQ_ERR_CHECKSUM;
    if (!dq__is_levels(h->scheme)) return DQ_OK;
    if (c->ntab) { /* TRUNC_NU: the level table after the scales */
        const uint8_t *lv = m->src + DQ_HEADER_SIZE + dq__coders[h->coder].head + 4u * c->nbuckets;
        size_t l;
        for (l = 0; l < c->ntab; l++) c->tab[l + 1u] = dq__bitsf(dq__ld32(lv + 4u * l));
        if (!dq__tab_ok(c->tab + 1, (unsigned)c->ntab)) return DQ_ERR_CORRUPT;
    }
    return DQ_OK;
}
/* Opens a message once: parsed, then its body opened. Every decoder starts here (or with the two
 * steps, when a check of its own comes between them); nothing parses the header a second time. */
static inline dq_status dq__open(const void *src, size_t src_len, int verify, dq_message *m) {
    dq_status st;
    if (!src) return DQ_ERR_NULL;
    if ((st = dq__msg_parse((const uint8_t *)src, src_len, m)) != DQ_OK) return st;
    return dq__msg_open_body(m, src_len, verify);
}

DQ_API dq_status dq_message_open(const void *src, size_t src_len, dq_message *m) {
    if (!src || !m) return DQ_ERR_NULL;
    return dq__open(src, src_len, 1, m);
}
DQ_API dq_status dq_verify(const void *src, size_t src_len) {
    dq_message m;
    return dq__open(src, src_len, 1, &m);
}
/* The range encoder's last step. Its calls share no state, so the header the first range wrote
 * is parsed here, once, for the size and the checksum flag. */
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
