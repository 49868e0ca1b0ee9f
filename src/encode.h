/* ---------------------------------------------------------------- encoding a level scheme
 * dq_encode of a level scheme: the body quantized in the fixed layout while the planner's
 * statistics are gathered (quantize.h), sent in the coder the planner picks (planner.h), then
 * the header written once (message.h). Segments encode each of their bodies the same way
 * (dq__body_encode). The range encoder and the headerless blocks write the fixed layout only. */

/* The body of a level-scheme message of n elements at body[0..cap), scratch more bytes past
 * cap usable but not for the result; def_crc as for dq__plan_make. *coder gets the coder sent,
 * *len the body's size. */
static inline dq_status dq__body_encode(const dq__cfg *c, const dq_params *p, size_t n, dq_dtype xt, const void *x,
                                        dq_dtype rt, void *residual, int def_crc, uint8_t *body, size_t cap,
                                        size_t scratch, unsigned *coder, size_t *len) {
    uint64_t counts[256];
    dq__gather g;
    unsigned need = dq__plan_needs(c->coder, c->bits, n);
    dq_status st;
    /* Elias' gap counts are left to its early-stop pass, which ends after 64 blocks on dense
     * codes: counting them for every block costs about 1 ns an element (17.7 ms at 2^24 and 4
     * bits, beside 48 ms of quantizing). A job's parts count them, in parallel. */
    if (need) dq__gather_init(&g, c->bits, n, 0, counts, NULL);
    if ((st = dq__lv_body(c, p, n, 0, n, xt, x, rt, residual, body, need ? &g : NULL)) != DQ_OK) return st;
    if (need) dq__gather_end(&g);
    *len = dq__body_send(c, n, need ? counts : NULL, c->coder, def_crc, body, cap, scratch, coder);
    return *len ? DQ_OK : DQ_ERR_DST_TOO_SMALL; /* unreachable: the plan checked the room */
}

/* dq_encode() of a level scheme up to its header, for x and residual of any dtype: the checks,
 * then the body at dst + 48 (dst[0..48) is not touched, so a segment's body encodes in place
 * inside its message). `first`: the dither index of x[0] (a segment's first element, FORMAT
 * 24.3). *c gets the configuration, *coder the coder sent, *crc whether a checksum follows, *body
 * the body's size. */
static inline dq_status dq__lv_encode_body(const dq_params *p, uint64_t first, dq_dtype xt, const void *x, size_t n,
                                           dq_dtype rt, void *residual, uint8_t *dst, size_t dst_cap, dq__cfg *c,
                                           unsigned *coder, int *crc, size_t *body) {
    dq_status st;
    size_t size, cs;
    int ok, def_crc = 0;
    if (!p || !x || !dst) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if ((st = dq__cfg_make(p, n, c)) != DQ_OK) return st;
    c->first = first;
    size = dq__size(c, n, 1, &ok); /* the fixed layout's */
    if (!ok) return DQ_ERR_TOO_LARGE;
    if (dq__default_crc(p, c) && dst_cap >= size + 4u) { /* sized as with the checksum, sent without if fixed */
        def_crc = 1;
        c->checksum = 1u;
        size += 4u;
    }
    if (dq__coder_forced(c->coder)) { /* a forced coder needs its worst case up front */
        size_t need = dq_encode_bound_coded(n, c->bits);
        if (!need) return DQ_ERR_TOO_LARGE;
        if (dst_cap < need) return DQ_ERR_DST_TOO_SMALL;
    }
    if (dst_cap < size) return DQ_ERR_DST_TOO_SMALL;
    cs = c->checksum ? 4u : 0u;
    st = dq__body_encode(c, p, n, xt, x, rt, residual, def_crc, dst + DQ_HEADER_SIZE, dst_cap - DQ_HEADER_SIZE - cs, cs,
                         coder, body);
    if (st == DQ_OK) *crc = dq__crc_sent(cs != 0, def_crc, *coder);
    return st;
}
/* dq_encode() of a level scheme: the body, then the header once. */
static inline dq_status dq__lv_encode_at(const dq_params *p, uint64_t first, dq_dtype xt, const void *x, size_t n,
                                         dq_dtype rt, void *residual, void *dst, size_t dst_cap, size_t *dst_len) {
    dq__cfg c;
    dq_status st;
    size_t body;
    unsigned coder;
    int crc;
    if ((st = dq__lv_encode_body(p, first, xt, x, n, rt, residual, (uint8_t *)dst, dst_cap, &c, &coder, &crc, &body)) !=
        DQ_OK)
        return st;
    *dst_len = dq__message_close(&c, p, n, coder, crc, (uint8_t *)dst, body);
    return DQ_OK;
}
static inline dq_status dq__lv_encode(const dq_params *p, dq_dtype xt, const void *x, size_t n, dq_dtype rt,
                                      void *residual, void *dst, size_t dst_cap, size_t *dst_len) {
    return dq__lv_encode_at(p, 0, xt, x, n, rt, residual, dst, dst_cap, dst_len);
}

/* Encode elements [begin, end) of an n-element vector in the fixed layout, framed (a message:
 * header when begin = 0, body after it) or not (a headerless block). *size gets the full size. */
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
        if (begin == 0) dq__write_header(&c, p, n, DQ_CODER_FIXED, (int)c.checksum, out);
        out += DQ_HEADER_SIZE;
    }
    return dq__lv_body(&c, p, n, begin, end, DQ_F32, x, DQ_F32, residual, out, NULL);
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
