/* ---------------------------------------------------------------- tables: schemes, families, configuration
 * What the rest of the library looks up: dq_strerror; the scheme table (a row per scheme id:
 * family, widths, norms, rounding, level tables), so nothing branches on a level scheme's id;
 * the family table (levels, sparse, sketch: the capacity, encoder, header check and decoder of
 * each); a level scheme's resolved configuration (dq__cfg_make2, from params or a header); the
 * fixed layout's sizes and the range granularity. The coder table is coders.h. */

#define DQ__STATUS_CASE(name, value, msg) \
    case name:                            \
        return msg;
DQ_API const char *dq_strerror(dq_status s) {
    switch (s) {
        DQ_STATUS_LIST(DQ__STATUS_CASE)
        default:
            return "unknown status";
    }
}
#undef DQ__STATUS_CASE

DQ_API unsigned dq_version_number(void) { return DQSGD_VERSION_NUMBER; }
static inline uint32_t dq__crc32c(const uint8_t *p, size_t n) { return dq__k_crc32c(0xFFFFFFFFu, p, n) ^ 0xFFFFFFFFu; }
DQ_API const char *dq_simd_backend(void) { return DQ__BACKEND; }



#define DQ__NORM_WIRE_L2 0u
#define DQ__NORM_WIRE_MAX 1u
#define DQ__NORM_WIRE_MEAN 2u
#define DQ__NORM_WIRE_POW2 3u
#define DQ__NORM_WIRE_CLIP 4u
#define DQ__NORM_WIRE_ALPHA 5u
#define DQ__NORM_WIRE_TWOMEANS 6u

/* ---- the scheme table: what differs between schemes, one const row each, indexed by the
 * header's scheme byte (doc/FORMAT.md 3.1). Nothing else branches on a level scheme's id for
 * these facts. Adding a level scheme: a row here, its scale rule (dq__bucket_scale), its
 * kernels if its rounding differs, its FORMAT.md section and golden cases. */
#define DQ__FAM_NONE 0u   /* an unassigned value: decoders reject it */
#define DQ__FAM_LEVELS 1u /* b-bit codes and per-bucket scales: coders, ranges, blocks */
#define DQ__FAM_SPARSE 2u /* indices and float32 values */
#define DQ__FAM_SKETCH 3u /* a count-sketch table */
#define DQ__NORM_FROM_PARAMS 0xFFu /* wire_norm: L2 or max, as dq_params.norm asks */
#define DQ__S_NORM_PARAM 0x01u /* takes dq_params.norm (L2 or max) */
#define DQ__S_NEAREST 0x02u    /* deterministic: stochastic rounding is DQ_ERR_PARAM */
#define DQ__S_ALPHA 0x04u      /* every scale is the caller's alpha (truncation) */
#define DQ__S_TAB_EXP 0x08u    /* magnitudes from the table 2^(l-s) */
#define DQ__S_TAB_SENT 0x10u   /* magnitudes from a table the message carries */
#define DQ__S_TWO_SCALES 0x20u /* two scales per bucket (two-means) */
#define DQ__S_SIGN_MEAN 0x40u  /* 1 bit, nearest: the mean-magnitude scale (scaled sign) */
#define DQ__NB(w) (1u << (w))  /* norms_ok: the wire norm w is accepted */
typedef struct dq__scheme_row {
    const char *name;
    unsigned char family, bits_min, bits_max, bits_default;
    unsigned char wire_norm; /* the norm byte written (DQ__NORM_WIRE_*), or DQ__NORM_FROM_PARAMS */
    unsigned char norms_ok;  /* DQ__NB(w) for each norm byte w a decoder accepts */
    unsigned char flags;     /* DQ__S_* */
} dq__scheme_row;
#define DQ__NSCHEMES 12u
static const dq__scheme_row dq__scheme_rows[DQ__NSCHEMES] = {
    {"", DQ__FAM_NONE, 0, 0, 0, 0, 0, 0}, /* 0: DQ_SCHEME_DEFAULT, never on the wire */
    {"qsgd", DQ__FAM_LEVELS, 1, 16, 4, DQ__NORM_FROM_PARAMS,
     DQ__NB(DQ__NORM_WIRE_L2) | DQ__NB(DQ__NORM_WIRE_MAX) | DQ__NB(DQ__NORM_WIRE_MEAN),
     DQ__S_NORM_PARAM | DQ__S_SIGN_MEAN},
    {"nuqsgd", DQ__FAM_LEVELS, 2, 8, 4, DQ__NORM_FROM_PARAMS, DQ__NB(DQ__NORM_WIRE_L2) | DQ__NB(DQ__NORM_WIRE_MAX),
     DQ__S_NORM_PARAM | DQ__S_TAB_EXP},
    {"natural", DQ__FAM_LEVELS, 2, 8, 8, DQ__NORM_WIRE_POW2, DQ__NB(DQ__NORM_WIRE_POW2), DQ__S_TAB_EXP},
    {"terngrad", DQ__FAM_LEVELS, 2, 2, 2, DQ__NORM_WIRE_CLIP, DQ__NB(DQ__NORM_WIRE_CLIP), 0},
    {"twomeans", DQ__FAM_LEVELS, 1, 1, 1, DQ__NORM_WIRE_TWOMEANS, DQ__NB(DQ__NORM_WIRE_TWOMEANS),
     DQ__S_NEAREST | DQ__S_TWO_SCALES},
    {"topk", DQ__FAM_SPARSE, 32, 32, 32, 0, 0, 0},
    {"randk", DQ__FAM_SPARSE, 32, 32, 32, 0, 0, 0},
    {"threshold", DQ__FAM_SPARSE, 32, 32, 32, 0, 0, 0},
    {"trunc", DQ__FAM_LEVELS, 2, 16, 4, DQ__NORM_WIRE_ALPHA, DQ__NB(DQ__NORM_WIRE_ALPHA), DQ__S_ALPHA},
    {"trunc-nu", DQ__FAM_LEVELS, 2, 8, 4, DQ__NORM_WIRE_ALPHA, DQ__NB(DQ__NORM_WIRE_ALPHA),
     DQ__S_ALPHA | DQ__S_TAB_SENT},
    {"sketch", DQ__FAM_SKETCH, 32, 32, 32, 0, 0, 0},
};
/* The row of a scheme id; row 0 (family none) for any value outside the table. */
static inline const dq__scheme_row *dq__scheme(unsigned scheme) {
    return &dq__scheme_rows[scheme < DQ__NSCHEMES ? scheme : 0u];
}
static inline int dq__is_levels(unsigned scheme) { return dq__scheme(scheme)->family == DQ__FAM_LEVELS; }
/* Widths a level scheme takes (doc/FORMAT.md 5): table schemes need b <= 8 (s <= 127). */
static inline int dq__bits_ok(unsigned scheme, unsigned bits) {
    const dq__scheme_row *r = dq__scheme(scheme);
    return bits >= r->bits_min && bits <= r->bits_max;
}
/* The norm (wire value) a scheme writes, from the caller's norm and rounding. */
static inline unsigned dq__scheme_norm(unsigned scheme, unsigned bits, dq_norm norm, int stochastic) {
    const dq__scheme_row *r = dq__scheme(scheme);
    if (r->wire_norm != DQ__NORM_FROM_PARAMS) return r->wire_norm;
    if ((r->flags & DQ__S_SIGN_MEAN) && bits == 1u && !stochastic) return DQ__NORM_WIRE_MEAN; /* scaled sign */
    return norm == DQ_NORM_MAX ? DQ__NORM_WIRE_MAX : DQ__NORM_WIRE_L2;
}
/* The norm byte a decoder accepts for a scheme (informational, but checked). */
static inline int dq__norm_ok(unsigned scheme, unsigned wire) {
    return wire < 8u && ((dq__scheme(scheme)->norms_ok >> wire) & 1u);
}

/* ---- the family table: what differs between the message families of the scheme table
 * (levels, sparse: doc/FORMAT.md 19, sketch: 20): the dst capacity for params, the encoder,
 * the family's part of the header check (after the common fields; count is the header's
 * element count) and the decoder of an opened message's body. dq_encode_capacity, dq_encode,
 * dq_header_read and the decoders dispatch through it; the functions are defined with their
 * family. Params never reach a sketch (dq_sketch_encode writes those): the level functions
 * refuse its scheme id, as they refuse an unassigned one. */
typedef struct dq__family_ops {
    dq_status (*capacity)(const dq_params *p, size_t n, size_t *size);
    dq_status (*encode)(const dq_params *p, dq_dtype xt, const void *x, size_t n, dq_dtype rt, void *residual,
                        void *dst, size_t dst_cap, size_t *dst_len);
    dq_status (*header)(const uint8_t *in, size_t src_len, uint64_t count, dq_header *h, dq__cfg *c);
    dq_status (*decode)(const uint8_t *msg, const dq_header *h, const dq__cfg *c, float w, int add, dq_dtype t,
                        void *out);
} dq__family_ops;
static inline dq_status dq__lv_capacity(const dq_params *p, size_t n, size_t *size);
static inline dq_status dq__lv_encode(const dq_params *p, dq_dtype xt, const void *x, size_t n, dq_dtype rt,
                                      void *residual, void *dst, size_t dst_cap, size_t *dst_len);
static inline dq_status dq__lv_header(const uint8_t *in, size_t src_len, uint64_t count, dq_header *h, dq__cfg *c);
static inline dq_status dq__lv_decode(const uint8_t *msg, const dq_header *h, const dq__cfg *c, float w, int add,
                                      dq_dtype t, void *out);
static inline dq_status dq__sp_size(const dq_params *p, size_t n, size_t *size);
static inline dq_status dq__sp_encode(const dq_params *p, dq_dtype xt, const void *x, size_t n, dq_dtype rt,
                                      void *residual, void *dst, size_t dst_cap, size_t *dst_len);
static inline dq_status dq__sp_header(const uint8_t *in, size_t src_len, uint64_t count, dq_header *h, dq__cfg *c);
static inline dq_status dq__sp_decode(const uint8_t *msg, const dq_header *h, const dq__cfg *c, float w, int add,
                                      dq_dtype t, void *out);
static inline dq_status dq__sk_header(const uint8_t *in, size_t src_len, uint64_t count, dq_header *h, dq__cfg *c);
static inline dq_status dq__sk_decode(const uint8_t *msg, const dq_header *h, const dq__cfg *c, float w, int add,
                                      dq_dtype t, void *out);
static const dq__family_ops dq__families[4] = {
    {dq__lv_capacity, dq__lv_encode, dq__lv_header, dq__lv_decode}, /* DQ__FAM_NONE: refused by these */
    {dq__lv_capacity, dq__lv_encode, dq__lv_header, dq__lv_decode}, /* DQ__FAM_LEVELS */
    {dq__sp_size, dq__sp_encode, dq__sp_header, dq__sp_decode},     /* DQ__FAM_SPARSE */
    {dq__lv_capacity, dq__lv_encode, dq__sk_header, dq__sk_decode}, /* DQ__FAM_SKETCH */
};
/* The operations of a scheme id as it comes in dq_params (0: QSGD) or on the wire (0: none). */
static inline const dq__family_ops *dq__ops_params(const dq_params *p) {
    return &dq__families[dq__scheme(p->scheme ? (unsigned)p->scheme : (unsigned)DQ_SCHEME_QSGD)->family];
}
static inline const dq__family_ops *dq__ops_wire(unsigned scheme) { return &dq__families[dq__scheme(scheme)->family]; }
/* Exponential levels: tab[l] = 2^(l-s) for l >= 1 (a power of two, normal for s <= 127). */
static inline void dq__tab_exp(unsigned s, float *tab) {
    unsigned l;
    tab[0] = 0.0f;
    for (l = 1; l <= s; l++) tab[l] = dq__bitsf((uint32_t)(l + 127u - s) << 23);
}
/* A TRUNC_NU level table: s finite levels, 0 < l_1 < ... < l_s = 1. */
static inline int dq__tab_ok(const float *lv, unsigned s) {
    unsigned l;
    for (l = 0; l < s; l++)
        if (!(lv[l] > (l ? lv[l - 1] : 0.0f)) || !(lv[l] <= 1.0f)) return 0;
    return lv[s - 1] == 1.0f;
}
static inline int dq__alpha_ok(float a) {
    return a >= DQ__MIN_SCALE && dq__fbits(a) <= DQ__MAX_SCALE_BITS; /* also false for NaN */
}

/* What the caller asked of the coders, and whether it is valid (planner.h). */
static inline unsigned dq__coder_asked(unsigned coder, size_t n);
static inline int dq__coder_param_ok(unsigned coder, unsigned bits, int wire);

/* From the caller's params (`wire` = 0) or a message's header fields (`wire` = 1: alpha and
 * the levels are in the message, read by dq__open). */
static inline dq_status dq__cfg_make2(const dq_params *p, size_t n, int wire, dq__cfg *c) {
    unsigned scheme = p->scheme == DQ_SCHEME_DEFAULT ? (unsigned)DQ_SCHEME_QSGD : (unsigned)p->scheme;
    const dq__scheme_row *row = dq__scheme(scheme);
    unsigned bits = p->bits ? p->bits : row->bits_default;
    uint32_t bk = p->bucket ? p->bucket : DQ_BUCKET_DEFAULT;
    unsigned s;
    if (row->family != DQ__FAM_LEVELS) return DQ_ERR_PARAM;
    if (!dq__bits_ok(scheme, bits)) return DQ_ERR_BITS;
    if ((unsigned)p->rounding > (unsigned)DQ_ROUND_NEAREST) return DQ_ERR_PARAM;
    if ((row->flags & DQ__S_NEAREST) && p->rounding == DQ_ROUND_STOCHASTIC) return DQ_ERR_PARAM; /* nearest only */
    if ((unsigned)p->norm > (unsigned)DQ_NORM_MAX) return DQ_ERR_PARAM; /* MEAN is chosen, not asked */
    if (p->norm != DQ_NORM_DEFAULT && !(row->flags & DQ__S_NORM_PARAM)) return DQ_ERR_PARAM;
    if (bk != DQ_BUCKET_WHOLE && (bk % 8u) != 0) return DQ_ERR_PARAM;
    if (p->checksum > 1u) return DQ_ERR_PARAM;
    if (!dq__coder_param_ok(p->coder, bits, wire)) return DQ_ERR_PARAM;
    if ((uint64_t)n > DQ_MAX_ELEMS) return DQ_ERR_TOO_LARGE;
    s = bits == 1u ? 1u : (1u << (bits - 1u)) - 1u;
    memset(c, 0, sizeof *c);
    if (!wire && (row->flags & DQ__S_ALPHA)) {
        if (!dq__alpha_ok(p->alpha)) return DQ_ERR_PARAM;
        c->alpha = p->alpha;
        if ((row->flags & DQ__S_TAB_SENT) && (!p->levels || !dq__tab_ok(p->levels, s))) return DQ_ERR_PARAM;
    }
    c->scheme = scheme;
    c->bits = bits;
    c->stochastic = p->rounding != DQ_ROUND_NEAREST && !(row->flags & DQ__S_NEAREST);
    c->norm = dq__scheme_norm(scheme, bits, p->norm, (int)c->stochastic);
    c->checksum = p->checksum;
    c->coder = wire ? p->coder : dq__coder_asked(p->coder, n);
    c->bucket_wire = bk == DQ_BUCKET_WHOLE ? 0u : bk;
    c->bucket = bk == DQ_BUCKET_WHOLE ? (n ? n : 1u) : (size_t)bk;
    c->nbuckets = n ? (n - 1u) / c->bucket + 1u : 0u;
    c->table = (row->flags & (DQ__S_TAB_EXP | DQ__S_TAB_SENT)) != 0;
    if (row->flags & DQ__S_TAB_EXP) dq__tab_exp(s, c->tab);
    if (row->flags & DQ__S_TAB_SENT) {
        c->ntab = s;
        if (!wire) {
            c->tab[0] = 0.0f;
            memcpy(c->tab + 1, p->levels, 4u * s);
        }
    }
    c->tm = (row->flags & DQ__S_TWO_SCALES) != 0;
    c->prefix = 4u * (c->nbuckets * (c->tm ? 2u : 1u) + c->ntab);
    return DQ_OK;
}
static inline dq_status dq__cfg_make(const dq_params *p, size_t n, dq__cfg *c) { return dq__cfg_make2(p, n, 0, c); }

/* Bytes of scales + payload, plus the header and trailing checksum when `framed`; 0 with
 * *ok = 0 on size_t overflow. */
static inline size_t dq__size(const dq__cfg *c, size_t n, int framed, int *ok) {
    uint64_t s = (uint64_t)c->prefix + ((uint64_t)n * c->bits + 7u) / 8u;
    if (framed) s += DQ_HEADER_SIZE + (c->checksum ? 4u : 0u);
    *ok = s <= (uint64_t)SIZE_MAX;
    return *ok ? (size_t)s : 0u;
}

DQ_API size_t dq_encode_bound(size_t n, unsigned bits) {
    uint64_t s, t;
    if (bits < 1u || bits > 16u || (uint64_t)n > DQ_MAX_ELEMS) return 0;
    s = (uint64_t)DQ_HEADER_SIZE + 4u * (((uint64_t)n + 7u) / 8u) + ((uint64_t)n * bits + 7u) / 8u + 4u +
        DQ__LEVEL_TABLE_BYTES(bits);
    t = (uint64_t)DQ_HEADER_SIZE + 9u * (((uint64_t)n + 7u) / 8u) + 4u; /* DQ_SCHEME_TWOMEANS, 1 bit */
    if (t > s) s = t;
    return s <= (uint64_t)SIZE_MAX ? (size_t)s : 0u;
}

/* Range granularity: a multiple of the block (so ranges own whole payload bytes) and of the
 * bucket (so ranges own whole scales), capped at n. */
static inline size_t dq__align(const dq__cfg *c, size_t n) {
    uint64_t b = c->bucket, pow2 = b & (~b + 1u), lcm;
    lcm = (b / (pow2 < DQ__BLOCK ? pow2 : DQ__BLOCK)) * DQ__BLOCK;
    return lcm < (uint64_t)n ? (size_t)lcm : n;
}
static inline int dq__range_ok(const dq__cfg *c, size_t n, size_t begin, size_t end) {
    size_t a = dq__align(c, n);
    return begin < end && end <= n && begin % a == 0 && (end % a == 0 || end == n);
}
DQ_API size_t dq_range_align(const dq_params *p, size_t n) {
    dq__cfg c;
    if (!p || n == 0 || dq__cfg_make(p, n, &c) != DQ_OK) return 0;
    return dq__align(&c, n);
}

