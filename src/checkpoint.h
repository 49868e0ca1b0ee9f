/* ---------------------------------------------------------------- checkpoints
 * doc/FORMAT.md "Checkpoints": magic "DQCK", version, kind, reserved u16, u64 count, body,
 * CRC32C of everything before it. */
#define DQ__CKPT_VERSION 1u
#define DQ__CKPT_RESIDUAL 1u
#define DQ__CKPT_SCHED 2u
#define DQ__CKPT_HEAD 16u

static inline void dq__ckpt_head(uint8_t *d, unsigned kind, uint64_t count) {
    d[0] = 'D';
    d[1] = 'Q';
    d[2] = 'C';
    d[3] = 'K';
    d[4] = (uint8_t)DQ__CKPT_VERSION;
    d[5] = (uint8_t)kind;
    dq__st16(d + 6, 0u);
    dq__st64(d + 8, count);
}
/* Checks framing and CRC; *count gets the count field. */
static inline dq_status dq__ckpt_open(const uint8_t *s, size_t len, unsigned kind, uint64_t *count) {
    if (len < DQ__CKPT_HEAD + 4u) return DQ_ERR_TRUNCATED;
    if (s[0] != 'D' || s[1] != 'Q' || s[2] != 'C' || s[3] != 'K') return DQ_ERR_BAD_MAGIC;
    if (s[4] != DQ__CKPT_VERSION) return DQ_ERR_VERSION;
    if (s[5] != kind) return DQ_ERR_PARAM; /* a checkpoint of another kind */
    if (dq__ld16(s + 6) != 0) return DQ_ERR_CORRUPT;
    *count = dq__ld64(s + 8);
    return DQ_OK;
}
static inline int dq__ckpt_crc_ok(const uint8_t *s, size_t total) {
    return dq__ld32(s + total - 4u) == dq__crc32c(s, total - 4u);
}

DQ_API size_t dq_residual_save_size(size_t n) {
    if (n > (SIZE_MAX - DQ__CKPT_HEAD - 4u) / 4u) return 0;
    return DQ__CKPT_HEAD + 4u * n + 4u;
}
DQ_API dq_status dq_residual_save(const float *residual, size_t n, void *dst, size_t dst_cap, size_t *dst_len) {
    uint8_t *d = (uint8_t *)dst;
    size_t total = dq_residual_save_size(n), i;
    if (!residual || !dst || !dst_len) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if (total == 0) return DQ_ERR_TOO_LARGE;
    if (dst_cap < total) return DQ_ERR_DST_TOO_SMALL;
    dq__ckpt_head(d, DQ__CKPT_RESIDUAL, (uint64_t)n);
    for (i = 0; i < n; i++) dq__st32(d + DQ__CKPT_HEAD + 4u * i, dq__fbits(residual[i]));
    dq__st32(d + total - 4u, dq__crc32c(d, total - 4u));
    *dst_len = total;
    return DQ_OK;
}
DQ_API dq_status dq_residual_load(const void *src, size_t src_len, float *residual, size_t n) {
    const uint8_t *s = (const uint8_t *)src;
    uint64_t count;
    size_t total, i;
    dq_status st;
    if (!src || !residual) return DQ_ERR_NULL;
    if ((st = dq__ckpt_open(s, src_len, DQ__CKPT_RESIDUAL, &count)) != DQ_OK) return st;
    if (count != (uint64_t)n) return DQ_ERR_SIZE_MISMATCH;
    total = dq_residual_save_size(n);
    if (total == 0 || src_len < total) return DQ_ERR_TRUNCATED;
    if (!dq__ckpt_crc_ok(s, total)) return DQ_ERR_CHECKSUM;
    for (i = 0; i < n; i++) /* error-feedback memory is always finite */
        if ((dq__ld32(s + DQ__CKPT_HEAD + 4u * i) & 0x7F800000u) == 0x7F800000u) return DQ_ERR_CORRUPT;
    for (i = 0; i < n; i++) residual[i] = dq__bitsf(dq__ld32(s + DQ__CKPT_HEAD + 4u * i));
    return DQ_OK;
}

/* One field list serves both directions: each call stores (save) or loads one field at *at. */
static inline void dq__io64(uint8_t **at, uint64_t *v, int load) {
    if (load)
        *v = dq__ld64(*at);
    else
        dq__st64(*at, *v);
    *at += 8;
}
static inline void dq__io32(uint8_t **at, unsigned *v, int load) {
    if (load)
        *v = (unsigned)dq__ld32(*at);
    else
        dq__st32(*at, (uint32_t)*v);
    *at += 4;
}
static inline void dq__iof64(uint8_t **at, double *v, int load) {
    uint64_t u = 0;
    if (!load) memcpy(&u, v, 8);
    dq__io64(at, &u, load);
    if (load) memcpy(v, &u, 8);
}
static inline void dq__sched_io(dq_sched *s, uint8_t *body, int load) {
    uint8_t *at = body;
    unsigned mode = (unsigned)s->p.mode, bucket = s->p.bucket, k;
    uint64_t dim = (uint64_t)s->p.dim;
    dq__io32(&at, &mode, load);
    dq__io64(&at, &s->p.steps, load);
    dq__io64(&at, &dim, load);
    dq__io32(&at, &bucket, load);
    dq__iof64(&at, &s->p.alpha, load);
    dq__io32(&at, &s->p.bits_min, load);
    dq__io32(&at, &s->p.bits_max, load);
    dq__io32(&at, &s->p.period, load);
    dq__io32(&at, &s->p.window, load);
    dq__iof64(&at, &s->p.norm_prior, load);
    dq__iof64(&at, &s->p.scale, load);
    dq__iof64(&at, &s->p.target_error, load);
    dq__iof64(&at, &s->p.budget_bits, load);
    dq__iof64(&at, &s->p.lipschitz, load);
    dq__iof64(&at, &s->p.lr, load);
    dq__io32(&at, &s->p.workers, load);
    dq__io64(&at, &s->step, load);
    dq__io32(&at, &s->bits, load);
    dq__iof64(&at, &s->c, load);
    dq__iof64(&at, &s->spent_bits, load);
    for (k = 0; k < DQ_SCHED_MAX_WINDOW; k++) dq__iof64(&at, &s->norms[k], load);
    dq__io32(&at, &s->n_norms, load);
    dq__io32(&at, &s->head, load);
    dq__iof64(&at, &s->loss0, load);
    dq__iof64(&at, &s->loss, load);
    dq__io64(&at, &s->p.warm_steps, load); /* since 0.9.0; a 0.8 body ends before them (zeros) */
    dq__io32(&at, &s->p.warm_bits, load);
    if (load) {
        s->p.mode = (dq_sched_mode)(mode <= (unsigned)DQ_SCHED_RD ? mode : 0u);
        s->p.bucket = (uint32_t)bucket;
        s->p.dim = dim <= (uint64_t)SIZE_MAX ? (size_t)dim : 0u; /* 0 fails validation */
    }
}
#define DQ__SCHED_BODY (DQ_SCHED_SAVE_SIZE - DQ__CKPT_HEAD - 4u)
#define DQ__SCHED_BODY_08 2200u /* written by 0.8 and earlier: no warm start */

DQ_API dq_status dq_sched_save(const dq_sched *s, void *dst, size_t dst_cap, size_t *dst_len) {
    uint8_t *d = (uint8_t *)dst;
    dq_sched copy;
    if (!s || !dst || !dst_len) return DQ_ERR_NULL;
    if (dst_cap < DQ_SCHED_SAVE_SIZE) return DQ_ERR_DST_TOO_SMALL;
    copy = *s; /* the field walker takes non-const pointers */
    dq__ckpt_head(d, DQ__CKPT_SCHED, DQ__SCHED_BODY);
    dq__sched_io(&copy, d + DQ__CKPT_HEAD, 0);
    dq__st32(d + DQ_SCHED_SAVE_SIZE - 4u, dq__crc32c(d, DQ_SCHED_SAVE_SIZE - 4u));
    *dst_len = DQ_SCHED_SAVE_SIZE;
    return DQ_OK;
}
DQ_API dq_status dq_sched_load(const void *src, size_t src_len, dq_sched *s) {
    const uint8_t *in = (const uint8_t *)src;
    uint8_t body[DQ__SCHED_BODY];
    dq_sched t, check;
    uint64_t count;
    unsigned k;
    int warm;
    dq_status st;
    if (!src || !s) return DQ_ERR_NULL;
    if ((st = dq__ckpt_open(in, src_len, DQ__CKPT_SCHED, &count)) != DQ_OK) return st;
    if (count != DQ__SCHED_BODY && count != DQ__SCHED_BODY_08) return DQ_ERR_CORRUPT;
    if (src_len < DQ__CKPT_HEAD + (size_t)count + 4u) return DQ_ERR_TRUNCATED;
    if (!dq__ckpt_crc_ok(in, DQ__CKPT_HEAD + (size_t)count + 4u)) return DQ_ERR_CHECKSUM;
    memset(body, 0, sizeof body);
    memcpy(body, in + DQ__CKPT_HEAD, (size_t)count);
    memset(&t, 0, sizeof t);
    dq__sched_io(&t, body, 1);
    /* The params must be ones dq_sched_init accepted (and left unchanged: defaults applied),
     * and the state must be one the calls can reach. */
    if (dq_sched_init(&check, &t.p) != DQ_OK || memcmp(&check.p, &t.p, sizeof t.p) != 0) return DQ_ERR_CORRUPT;
    /* A width is 0 (none chosen yet), one the rule chooses, or the warm width: set by the warm
     * steps (n < warm_steps) and still in force until the next call after them. */
    warm = t.p.warm_steps != 0 && t.step <= t.p.warm_steps && t.bits == t.p.warm_bits;
    if (t.n_norms > t.p.window || t.head >= t.p.window || (t.head != 0 && t.n_norms < t.p.window) ||
        (!warm && (t.bits > t.p.bits_max || (t.bits != 0 && t.bits < t.p.bits_min))) ||
        !(t.c >= 0.0 && t.c <= DBL_MAX) ||
        !(t.spent_bits >= 0.0 && t.spent_bits <= DBL_MAX) || !(t.loss0 >= 0.0 || t.loss0 < 0.0) ||
        !(t.loss >= 0.0 || t.loss < 0.0))
        return DQ_ERR_CORRUPT;
    for (k = 0; k < DQ_SCHED_MAX_WINDOW; k++)
        if (!(t.norms[k] >= 0.0 && t.norms[k] <= DBL_MAX)) return DQ_ERR_CORRUPT;
    *s = t;
    return DQ_OK;
}

