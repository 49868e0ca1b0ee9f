/* ---------------------------------------------------------------- re-coding a written message (FORMAT 17.4)
 * dq_recode converts an unsegmented level-scheme message between the fixed layout and a coded
 * form, and dq_coded_size gives the size it would write: the message opened and its body checked
 * whole (message.h, decode.h), the planner's choice with every candidate sized exactly
 * (planner.h), the coded payload written from the source into dst and the body closed as
 * dq_encode closes its own; or the blocks a coded payload decodes to, in place of it. */

/* Opens a message for re-coding: header, size, checksum, then the whole body's validity; *coder
 * (as dq_recode takes it) resolved to a coder id or DQ_CODER_AUTO. */
static inline dq_status dq__recode_open(const void *src, size_t src_len, unsigned *coder, dq_message *m, dq__cdec *cd) {
    const dq_header *h = &m->h;
    const dq__coder *row;
    const uint8_t *scales;
    dq_status st;
    if ((st = dq__open(src, src_len, 1, m)) != DQ_OK) return st;
    if (!dq__is_levels(h->scheme) || (h->flags & DQ_FLAG_SEGMENTS)) return DQ_ERR_PARAM; /* unsegmented level schemes */
    if ((st = dq__coder_recode(coder, h->coder, h->bits)) != DQ_OK) return st;
    m->c.checksum = (h->flags & DQ_FLAG_CHECKSUM) ? 1u : 0u;
    row = &dq__coders[h->coder];
    scales = m->src + DQ_HEADER_SIZE + row->head;
    if (!row->open) return dq__fixed_check(&m->c, h->count, scales, scales + m->c.prefix);
    if ((st = dq__fixed_check(&m->c, 0, scales, NULL)) != DQ_OK) return st;
    if (dq__cdec_open(cd, h->coder, h->bits, h->count, scales + m->c.prefix, h->payload_size) != DQ_OK)
        return DQ_ERR_CORRUPT;
    return dq__cdec_validate(cd);
}
/* The coder dq_recode writes for an opened message and `coder` (resolved): the message's own,
 * the fixed layout, or from a fixed message what the planner picks, every candidate sized
 * exactly (the symbol counts counted here, in one pass); DQ_ERR_PARAM when Elias cannot carry
 * a negative-zero code. */
static inline dq_status dq__recode_target(const dq_message *m, unsigned coder, dq__plan *pl, unsigned *target) {
    dq__plan_in in;
    uint64_t counts[256];
    *target = coder;
    if (!dq__coder_may_code(coder) || coder == m->h.coder) return DQ_OK;
    in.bits = m->h.bits;
    in.n = m->h.count;
    in.crc = m->c.checksum ? 4u : 0u;
    in.fixed = ((uint64_t)in.n * in.bits + 7u) / 8u;
    in.payload = m->src + DQ_HEADER_SIZE + m->c.prefix;
    in.counts = NULL;
    in.gaps = NULL;
    if (dq__plan_needs(coder, in.bits, in.n) & DQ__PS_COUNTS) {
        dq__sym_count(in.bits, in.n, in.payload, counts);
        in.counts = counts;
    }
    dq__plan_make(&in, coder, 1, 0, 0, pl);
    *target = pl->coder;
    return pl->size[pl->coder] ? DQ_OK : DQ_ERR_PARAM;
}
/* A copy of a message's header with another coder byte (and its CRC). */
static inline void dq__header_copy(const uint8_t *in, unsigned coder, uint8_t *out) {
    memcpy(out, in, DQ__H_CRC);
    out[DQ__H_CODER] = (uint8_t)coder;
    dq__st32(out + DQ__H_CRC, dq__crc32c(out, DQ__H_CRC));
}

DQ_API dq_status dq_coded_size(const void *src, size_t src_len, unsigned coder, size_t *size) {
    dq_message m;
    dq__cdec cd;
    dq__plan pl;
    dq_status st;
    unsigned to;
    int ok;
    if (!src || !size) return DQ_ERR_NULL;
    if ((st = dq__recode_open(src, src_len, &coder, &m, &cd)) != DQ_OK) return st;
    if ((st = dq__recode_target(&m, coder, &pl, &to)) != DQ_OK) return st;
    if (to == m.h.coder)
        *size = m.h.msg_size;
    else if (!dq__coders[to].head) /* the fixed layout */
        *size = dq__size(&m.c, m.h.count, 1, &ok);
    else
        *size = DQ_HEADER_SIZE + m.c.prefix + (size_t)pl.size[to] + (m.c.checksum ? 4u : 0u);
    return DQ_OK;
}

DQ_API dq_status dq_recode(const void *src, size_t src_len, unsigned coder, void *dst, size_t dst_cap,
                           size_t *dst_len) {
    const uint8_t *in = (const uint8_t *)src;
    uint8_t *out = (uint8_t *)dst;
    dq_message m;
    dq__cdec cd;
    dq__plan pl;
    dq_status st;
    size_t sc, size, crc;
    unsigned to;
    int ok;
    if (!src || !dst || !dst_len) return DQ_ERR_NULL;
    if ((st = dq__recode_open(src, src_len, &coder, &m, &cd)) != DQ_OK) return st;
    if ((st = dq__recode_target(&m, coder, &pl, &to)) != DQ_OK) return st;
    sc = m.c.prefix;
    crc = m.c.checksum ? 4u : 0u;
    if (to == m.h.coder) { /* nothing to re-code: AUTO found nothing smaller, or a forced coder was larger */
        if (dst_cap < m.h.msg_size) return DQ_ERR_DST_TOO_SMALL;
        memcpy(out, in, m.h.msg_size);
        *dst_len = m.h.msg_size;
        return DQ_OK;
    }
    if (!dq__coders[to].head) { /* coded -> fixed: the blocks the payload decodes to */
        size_t k, nblk = (m.h.count + DQ__BLOCK - 1u) / DQ__BLOCK;
        size = dq__size(&m.c, m.h.count, 1, &ok);
        if (dst_cap < size) return DQ_ERR_DST_TOO_SMALL;
        memcpy(out + DQ_HEADER_SIZE, in + DQ_HEADER_SIZE + dq__coders[m.h.coder].head, sc);
        for (k = 0; k < nblk; k++) (void)dq__cdec_block(&cd, out + DQ_HEADER_SIZE + sc + k * DQ__BLOCK_BYTES(m.h.bits));
    } else { /* fixed -> coded, from the source's fixed payload into dst */
        dq__plan_in pin;
        size_t L, len = (size_t)pl.size[to] - 8u;
        size = DQ_HEADER_SIZE + sc + (size_t)pl.size[to] + crc;
        if (dst_cap < size) return DQ_ERR_DST_TOO_SMALL;
        pin.bits = m.h.bits;
        pin.n = m.h.count;
        pin.crc = (unsigned)crc;
        pin.fixed = ((uint64_t)pin.n * pin.bits + 7u) / 8u;
        pin.payload = in + DQ_HEADER_SIZE + sc;
        pin.counts = pin.gaps = NULL;
        L = dq__coders[to].write(&pin, &pl, out + DQ_HEADER_SIZE + 8u + sc, len, 0, 0);
        if (L != len) return DQ_ERR_CORRUPT; /* unreachable: sized exactly */
        (void)dq__body_close(out + DQ_HEADER_SIZE, in + DQ_HEADER_SIZE, sc, L);
    }
    dq__header_copy(in, to, out);
    if (crc) dq__st32(out + size - 4u, dq__body_crc(out, size));
    *dst_len = size;
    return DQ_OK;
}
