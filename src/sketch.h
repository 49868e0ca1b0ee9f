/* ---------------------------------------------------------------- count sketch and data quantization (API above) */

/* ---- hashing (doc/FORMAT.md 21.3). Row j's keys are the generator key of FORMAT.md 7.1 for
 * (seed, step = DQ__SKETCH_DOMAIN, stream = j); coordinate i (< 2^32) hashes to the 32-bit
 * value H (the generator's per-element mix with the full 32-bit output; the hash kernels and
 * the packed form are with the scalar kernels, dq__sk_pack). The bucket is the multiply-shift
 * (H * cols) >> 32, the sign is - when bit 0 of H is set. Buckets use the top bits, the sign
 * the bottom one; cols <= 2^24 leaves 7 bits between them. */
#define DQ__SKETCH_DOMAIN 0x534B45544348ull   /* "SKETCH" */
#define DQ__GATE_DOMAIN 0x4741544530303031ull /* "GATE0001", XORed into the gate's seed */
#define DQ__SKETCH_BLOCK 128u                 /* coordinates per block of the estimators (r x 128 keys on the stack) */
#define DQ__SKETCH_ABLOCK 512u                /* coordinates per block of dq_sketch_add_dense */

typedef struct dq__sk_keys {
    uint32_t k0[DQ_SKETCH_MAX_ROWS], k1[DQ_SKETCH_MAX_ROWS];
} dq__sk_keys;

static inline void dq__sk_keys_make(const dq_sketch *s, dq__sk_keys *k) {
    uint32_t j;
    for (j = 0; j < s->rows; j++) {
        dq__key key = dq__key_make(s->seed, DQ__SKETCH_DOMAIN, j);
        k->k0[j] = key.k0;
        k->k1[j] = key.k1;
    }
}

static inline int dq__sk_ok(const dq_sketch *s) {
    return s->table && s->rows >= 1u && s->rows <= DQ_SKETCH_MAX_ROWS && s->cols >= 1u &&
           s->cols <= DQ_SKETCH_MAX_COLS && s->dim >= 1u && s->dim <= DQ_SKETCH_MAX_DIM;
}
static inline size_t dq__sk_cells(const dq_sketch *s) { return (size_t)s->rows * s->cols; }
static inline int dq__sk_all_finite(const float *x, size_t n) {
    uint32_t bad = 0;
    size_t i;
    for (i = 0; i < n; i++) bad |= (uint32_t)((dq__fbits(x[i]) & 0x7F800000u) == 0x7F800000u);
    return bad == 0;
}

DQ_API dq_status dq_sketch_init(dq_sketch *s, uint32_t rows, uint32_t cols, uint64_t dim, uint64_t seed, float *table,
                                size_t table_len) {
    dq_sketch t;
    if (!s || !table) return DQ_ERR_NULL;
    t.rows = rows;
    t.cols = cols;
    t.dim = dim;
    t.seed = seed;
    t.table = table;
    if (!dq__sk_ok(&t)) return DQ_ERR_PARAM;
    if (table_len < dq__sk_cells(&t)) return DQ_ERR_DST_TOO_SMALL;
    memset(table, 0, dq__sk_cells(&t) * sizeof(float));
    *s = t;
    return DQ_OK;
}

DQ_API dq_status dq_sketch_clear(dq_sketch *s) {
    if (!s || !s->table) return DQ_ERR_NULL;
    if (!dq__sk_ok(s)) return DQ_ERR_PARAM;
    memset(s->table, 0, dq__sk_cells(s) * sizeof(float));
    return DQ_OK;
}

DQ_API dq_status dq_sketch_hash(const dq_sketch *s, uint32_t row, uint64_t i, uint32_t *bucket, int *sign) {
    dq__key key;
    uint32_t h;
    if (!s || !s->table || !bucket || !sign) return DQ_ERR_NULL;
    if (!dq__sk_ok(s) || row >= s->rows) return DQ_ERR_PARAM;
    if (i >= s->dim) return DQ_ERR_RANGE;
    key = dq__key_make(s->seed, DQ__SKETCH_DOMAIN, row);
    h = dq__draw32(key.k0, key.k1, (uint32_t)i);
    *bucket = (uint32_t)(((uint64_t)h * s->cols) >> 32);
    *sign = (h & 1u) ? -1 : 1;
    return DQ_OK;
}

DQ_API dq_status dq_sketch_add_dense(dq_sketch *s, uint64_t offset, const float *x, size_t n) {
    dq__sk_keys k;
    uint32_t hb[DQ__SKETCH_ABLOCK], sv[DQ__SKETCH_ABLOCK];
    size_t b0;
    if (!s || !s->table || (!x && n)) return DQ_ERR_NULL;
    if (!dq__sk_ok(s)) return DQ_ERR_PARAM;
    if (offset > s->dim || (uint64_t)n > s->dim - offset) return DQ_ERR_RANGE;
    if (!dq__sk_all_finite(x, n)) return DQ_ERR_NONFINITE;
    dq__sk_keys_make(s, &k);
    for (b0 = 0; b0 < n; b0 += DQ__SKETCH_ABLOCK) { /* a block of coordinates, row by row: each
                                                     * cell still sees increasing coordinates */
        size_t cnt = n - b0 < DQ__SKETCH_ABLOCK ? n - b0 : DQ__SKETCH_ABLOCK, t;
        const float *xb = x + b0;
        uint32_t j;
        for (j = 0; j < s->rows; j++) {
            float *row = s->table + (size_t)j * s->cols;
            dq__k_sk_hash(k.k0[j], k.k1[j], s->cols, (uint32_t)(offset + b0), cnt, hb);
            for (t = 0; t < cnt; t++) { /* signed values and buckets first (vectorizable) ... */
                sv[t] = dq__fbits(xb[t]) ^ (hb[t] & 0x80000000u);
                hb[t] &= DQ__SK_COL_MASK;
            }
            for (t = 0; t < cnt; t++) { /* ... so the scatter is a plain load, add, store */
                float v;
                memcpy(&v, sv + t, 4);
                row[hb[t]] += v;
            }
        }
    }
    return DQ_OK;
}

DQ_API dq_status dq_sketch_add_sparse(dq_sketch *s, const uint32_t *idx, const float *val, size_t k) {
    dq__sk_keys ks;
    size_t t;
    if (!s || !s->table || ((!idx || !val) && k)) return DQ_ERR_NULL;
    if (!dq__sk_ok(s)) return DQ_ERR_PARAM;
    for (t = 0; t < k; t++)
        if ((uint64_t)idx[t] >= s->dim) return DQ_ERR_RANGE;
    if (!dq__sk_all_finite(val, k)) return DQ_ERR_NONFINITE;
    dq__sk_keys_make(s, &ks);
    for (t = 0; t < k; t++) {
        uint32_t j, u = dq__fbits(val[t]);
        for (j = 0; j < s->rows; j++) {
            uint32_t p = dq__sk_pack(dq__draw32(ks.k0[j], ks.k1[j], idx[t]), s->cols);
            s->table[(size_t)j * s->cols + (p & DQ__SK_COL_MASK)] += dq__bitsf(u ^ (p & 0x80000000u));
        }
    }
    return DQ_OK;
}

static inline int dq__sk_same(const dq_sketch *a, const dq_sketch *b) {
    return a->rows == b->rows && a->cols == b->cols && a->dim == b->dim && a->seed == b->seed;
}

DQ_API dq_status dq_sketch_merge(dq_sketch *dst, const dq_sketch *src) {
    size_t i, n;
    if (!dst || !src || !dst->table || !src->table) return DQ_ERR_NULL;
    if (!dq__sk_ok(dst) || !dq__sk_ok(src) || !dq__sk_same(dst, src)) return DQ_ERR_PARAM;
    n = dq__sk_cells(dst);
    for (i = 0; i < n; i++) dst->table[i] += src->table[i];
    return DQ_OK;
}

/* ---- medians. Floats are compared through an order-preserving unsigned key (negative values
 * complemented, positive ones with the top bit set), a total order (-0 < +0, NaNs at the
 * ends), so the result never depends on how a compiler or ISA treats float comparisons. */
static inline uint32_t dq__sk_fkey(uint32_t u) { /* branch-free: signs are random */
    return u ^ ((0u - (u >> 31)) | 0x80000000u);
}
static inline uint32_t dq__sk_fkey_inv(uint32_t k) { return k ^ (((k >> 31) - 1u) | 0x80000000u); }
#define DQ__SK_CSWAP(a, b)                                                                                             \
    do {                                                                                                               \
        uint32_t lo_ = a < b ? a : b;                                                                                  \
        b = a < b ? b : a;                                                                                             \
        a = lo_;                                                                                                       \
    } while (0)
/* Median of r keys (r <= 32); key[] is reordered. Even r: mean of the two middle values,
 * float((double)a + (double)b) * 0.5), as a key. */
static inline uint32_t dq__sk_median(uint32_t *key, uint32_t r) {
    uint32_t i, j;
    if (r == 1u) return key[0];
    if (r == 3u) {
        uint32_t a = key[0], b = key[1], c = key[2];
        DQ__SK_CSWAP(a, b);
        DQ__SK_CSWAP(b, c);
        DQ__SK_CSWAP(a, b);
        return b;
    }
    if (r == 5u) { /* a 7-exchange median network: after it key position 2 holds the median */
        uint32_t a = key[0], b = key[1], c = key[2], d = key[3], e = key[4];
        DQ__SK_CSWAP(a, b); /* a <= b */
        DQ__SK_CSWAP(d, e); /* d <= e */
        DQ__SK_CSWAP(a, d); /* a = min of the four: not the median */
        DQ__SK_CSWAP(b, e); /* e = max of the four: not the median */
        /* the median of {a..e} is now the median of {b, c, d} */
        DQ__SK_CSWAP(b, c);
        DQ__SK_CSWAP(c, d);
        DQ__SK_CSWAP(b, c);
        return c;
    }
    for (i = 1; i < r; i++) { /* insertion sort */
        uint32_t v = key[i];
        for (j = i; j > 0 && key[j - 1] > v; j--) key[j] = key[j - 1];
        key[j] = v;
    }
    if (r & 1u) return key[r / 2u];
    {
        double a = (double)dq__bitsf(dq__sk_fkey_inv(key[r / 2u - 1u])),
               b = (double)dq__bitsf(dq__sk_fkey_inv(key[r / 2u]));
        return dq__sk_fkey(dq__fbits((float)((a + b) * 0.5)));
    }
}
#undef DQ__SK_CSWAP

/* Estimates of coordinates first .. first+cnt-1 (cnt <= DQ__SKETCH_BLOCK) into out. */
static inline void dq__sk_est_block(const dq_sketch *s, const dq__sk_keys *k, uint32_t first, size_t cnt,
                                        uint32_t (*keys)[DQ__SKETCH_BLOCK], float *out) {
    uint32_t hb[DQ__SKETCH_BLOCK], v[DQ_SKETCH_MAX_ROWS], j;
    size_t t;
    for (j = 0; j < s->rows; j++) {
        const float *row = s->table + (size_t)j * s->cols;
        dq__k_sk_hash(k->k0[j], k->k1[j], s->cols, first, cnt, hb);
        for (t = 0; t < cnt; t++) keys[j][t] = dq__sk_fkey(dq__fbits(row[hb[t] & DQ__SK_COL_MASK]) ^ (hb[t] & 0x80000000u));
    }
    for (t = 0; t < cnt; t++) {
        for (j = 0; j < s->rows; j++) v[j] = keys[j][t];
        out[t] = dq__bitsf(dq__sk_fkey_inv(dq__sk_median(v, s->rows)));
    }
}
static inline float dq__sk_est1(const dq_sketch *s, const dq__sk_keys *k, uint32_t i) {
    uint32_t v[DQ_SKETCH_MAX_ROWS], j;
    for (j = 0; j < s->rows; j++) {
        uint32_t p = dq__sk_pack(dq__draw32(k->k0[j], k->k1[j], i), s->cols);
        v[j] = dq__sk_fkey(dq__fbits(s->table[(size_t)j * s->cols + (p & DQ__SK_COL_MASK)]) ^ (p & 0x80000000u));
    }
    return dq__bitsf(dq__sk_fkey_inv(dq__sk_median(v, s->rows)));
}

DQ_API dq_status dq_sketch_estimate(const dq_sketch *s, const uint32_t *idx, size_t m, float *out) {
    dq__sk_keys k;
    size_t t;
    if (!s || !s->table || ((!idx || !out) && m)) return DQ_ERR_NULL;
    if (!dq__sk_ok(s)) return DQ_ERR_PARAM;
    for (t = 0; t < m; t++)
        if ((uint64_t)idx[t] >= s->dim) return DQ_ERR_RANGE;
    dq__sk_keys_make(s, &k);
    for (t = 0; t < m; t++) out[t] = dq__sk_est1(s, &k, idx[t]);
    return DQ_OK;
}

/* Workspace of the block estimators: r rows of one block of keys (16 KiB at 32 rows). */
typedef struct dq__sk_ws {
    dq__sk_keys k;
    uint32_t keys[DQ_SKETCH_MAX_ROWS][DQ__SKETCH_BLOCK];
    float est[DQ__SKETCH_BLOCK];
} dq__sk_ws;

DQ_API dq_status dq_sketch_estimate_range(const dq_sketch *s, uint64_t offset, float *out, size_t n) {
    dq__sk_ws w;
    size_t b0;
    if (!s || !s->table || (!out && n)) return DQ_ERR_NULL;
    if (!dq__sk_ok(s)) return DQ_ERR_PARAM;
    if (offset > s->dim || (uint64_t)n > s->dim - offset) return DQ_ERR_RANGE;
    dq__sk_keys_make(s, &w.k);
    for (b0 = 0; b0 < n; b0 += DQ__SKETCH_BLOCK) {
        size_t cnt = n - b0 < DQ__SKETCH_BLOCK ? n - b0 : DQ__SKETCH_BLOCK;
        dq__sk_est_block(s, &w.k, (uint32_t)(offset + b0), cnt, w.keys, out + b0);
    }
    return DQ_OK;
}

DQ_API dq_status dq_sketch_norm2(const dq_sketch *s, double *norm2) {
    double sums[DQ_SKETCH_MAX_ROWS];
    uint32_t j, i, r;
    if (!s || !s->table || !norm2) return DQ_ERR_NULL;
    if (!dq__sk_ok(s)) return DQ_ERR_PARAM;
    r = s->rows;
    for (j = 0; j < r; j++) {
        const float *row = s->table + (size_t)j * s->cols;
        double acc = 0.0;
        uint32_t c;
        for (c = 0; c < s->cols; c++) {
            double sq = (double)row[c] * (double)row[c];
            acc += sq;
        }
        sums[j] = acc;
    }
    for (i = 1; i < r; i++) { /* insertion sort; the sums are >= 0 (or NaN after overflow) */
        double v = sums[i];
        for (j = i; j > 0 && sums[j - 1] > v; j--) sums[j] = sums[j - 1];
        sums[j] = v;
    }
    *norm2 = (r & 1u) ? sums[r / 2u] : (sums[r / 2u - 1u] + sums[r / 2u]) * 0.5;
    return DQ_OK;
}

/* ---- top-k: a min-heap (root = the weakest entry) over the caller's output arrays. Entry
 * strength: |value| as the bit pattern of |v| (a total order on non-negative floats; NaN above
 * Inf), then the smaller index, then (for lists) the earlier position, which the scan order
 * gives for free since a later entry never displaces an equal one. */
static inline int dq__sk_tk_weaker(uint32_t ka, uint32_t ia, uint32_t kb, uint32_t ib) {
    return ka < kb || (ka == kb && ia > ib);
}
static inline uint32_t dq__sk_tk_key(float v) { return dq__abs_bits(v); }
static inline void dq__sk_tk_swap(uint32_t *idx, float *val, size_t a, size_t b) {
    uint32_t ti = idx[a];
    float tv = val[a];
    idx[a] = idx[b];
    val[a] = val[b];
    idx[b] = ti;
    val[b] = tv;
}
static inline void dq__sk_tk_down(uint32_t *idx, float *val, size_t n, size_t i) {
    for (;;) {
        size_t l = 2u * i + 1u, r = l + 1u, m = i;
        if (l < n && dq__sk_tk_weaker(dq__sk_tk_key(val[l]), idx[l], dq__sk_tk_key(val[m]), idx[m])) m = l;
        if (r < n && dq__sk_tk_weaker(dq__sk_tk_key(val[r]), idx[r], dq__sk_tk_key(val[m]), idx[m])) m = r;
        if (m == i) return;
        dq__sk_tk_swap(idx, val, i, m);
        i = m;
    }
}
static inline void dq__sk_tk_up(uint32_t *idx, float *val, size_t i) {
    while (i > 0) {
        size_t p = (i - 1u) / 2u;
        if (!dq__sk_tk_weaker(dq__sk_tk_key(val[i]), idx[i], dq__sk_tk_key(val[p]), idx[p])) return;
        dq__sk_tk_swap(idx, val, i, p);
        i = p;
    }
}
typedef struct dq__sk_topk {
    uint32_t *idx;
    float *val;
    size_t k, n;
} dq__sk_topk;
static inline void dq__sk_tk_offer(dq__sk_topk *h, uint32_t i, float v) {
    if (h->n < h->k) {
        h->idx[h->n] = i;
        h->val[h->n] = v;
        dq__sk_tk_up(h->idx, h->val, h->n++);
    } else if (h->k && dq__sk_tk_weaker(dq__sk_tk_key(h->val[0]), h->idx[0], dq__sk_tk_key(v), i)) {
        h->idx[0] = i;
        h->val[0] = v;
        dq__sk_tk_down(h->idx, h->val, h->n, 0);
    }
}
/* Heapsort of (idx, val) by increasing index (a max-heap on the index). */
static inline void dq__sk_tk_idx_down(uint32_t *idx, float *val, size_t n, size_t i) {
    for (;;) {
        size_t l = 2u * i + 1u, r = l + 1u, m = i;
        if (l < n && idx[l] > idx[m]) m = l;
        if (r < n && idx[r] > idx[m]) m = r;
        if (m == i) return;
        dq__sk_tk_swap(idx, val, i, m);
        i = m;
    }
}
static inline void dq__sk_tk_sort_idx(uint32_t *idx, float *val, size_t n) {
    size_t i;
    for (i = n / 2u; i-- > 0;) dq__sk_tk_idx_down(idx, val, n, i);
    for (i = n; i-- > 1;) {
        dq__sk_tk_swap(idx, val, 0, i);
        dq__sk_tk_idx_down(idx, val, i, 0);
    }
}

DQ_API dq_status dq_sketch_topk(const dq_sketch *s, size_t k, uint32_t *idx, float *val) {
    dq__sk_ws w;
    dq__sk_topk h;
    uint64_t b0;
    if (!s || !s->table || ((!idx || !val) && k)) return DQ_ERR_NULL;
    if (!dq__sk_ok(s)) return DQ_ERR_PARAM;
    if ((uint64_t)k > s->dim) return DQ_ERR_PARAM;
    if (k == 0) return DQ_OK;
    h.idx = idx;
    h.val = val;
    h.k = k;
    h.n = 0;
    dq__sk_keys_make(s, &w.k);
    for (b0 = 0; b0 < s->dim; b0 += DQ__SKETCH_BLOCK) {
        size_t cnt = s->dim - b0 < DQ__SKETCH_BLOCK ? (size_t)(s->dim - b0) : DQ__SKETCH_BLOCK, t;
        uint32_t floor_key = h.n == k ? dq__sk_tk_key(val[0]) : 0u;
        dq__sk_est_block(s, &w.k, (uint32_t)b0, cnt, w.keys, w.est);
        for (t = 0; t < cnt; t++) /* most coordinates lose to the heap's root at once */
            if (h.n < k || dq__sk_tk_key(w.est[t]) > floor_key) {
                dq__sk_tk_offer(&h, (uint32_t)(b0 + t), w.est[t]);
                floor_key = h.n == k ? dq__sk_tk_key(val[0]) : 0u;
            }
    }
    dq__sk_tk_sort_idx(idx, val, k);
    return DQ_OK;
}

DQ_API dq_status dq_sketch_heavy(const dq_sketch *s, double eps, uint32_t *idx, float *val, size_t cap, size_t *count) {
    dq__sk_ws w;
    double norm2, tau;
    size_t found = 0;
    uint64_t b0;
    if (!s || !s->table || !count || (!idx && cap)) return DQ_ERR_NULL;
    if (!dq__sk_ok(s) || !(eps >= 0.0 && eps <= DBL_MAX)) return DQ_ERR_PARAM;
    dq_sketch_norm2(s, &norm2);
    tau = eps * sqrt(norm2);
    dq__sk_keys_make(s, &w.k);
    for (b0 = 0; b0 < s->dim; b0 += DQ__SKETCH_BLOCK) {
        size_t cnt = s->dim - b0 < DQ__SKETCH_BLOCK ? (size_t)(s->dim - b0) : DQ__SKETCH_BLOCK, t;
        dq__sk_est_block(s, &w.k, (uint32_t)b0, cnt, w.keys, w.est);
        for (t = 0; t < cnt; t++)
            if ((double)fabsf(w.est[t]) >= tau) {
                if (found < cap) {
                    idx[found] = (uint32_t)(b0 + t);
                    if (val) val[found] = w.est[t];
                }
                found++;
            }
    }
    *count = found;
    return found > cap ? DQ_ERR_DST_TOO_SMALL : DQ_OK;
}

DQ_API dq_status dq_sketch_gather(const float *x, size_t n, const uint32_t *idx, size_t m, float *out) {
    size_t t;
    if ((!x || !idx || !out) && m) return DQ_ERR_NULL;
    for (t = 0; t < m; t++)
        if ((size_t)idx[t] >= n) return DQ_ERR_RANGE;
    for (t = 0; t < m; t++) out[t] = x[idx[t]];
    return DQ_OK;
}

DQ_API dq_status dq_sketch_topk_list(const uint32_t *idx, const float *val, size_t m, size_t k, uint32_t *out_idx,
                                     float *out_val) {
    dq__sk_topk h;
    size_t t;
    if ((!idx || !val) && m) return DQ_ERR_NULL;
    if ((!out_idx || !out_val) && k) return DQ_ERR_NULL;
    if (k > m) return DQ_ERR_PARAM;
    h.idx = out_idx;
    h.val = out_val;
    h.k = k;
    h.n = 0;
    for (t = 0; t < m && k; t++) dq__sk_tk_offer(&h, idx[t], val[t]);
    dq__sk_tk_sort_idx(out_idx, out_val, k);
    return DQ_OK;
}

/* ---- messages (doc/FORMAT.md 21): header, u32 rows, u32 reserved (0), u64 dim, the table as
 * float32, optional CRC32C of bytes 48 .. end of table. */
DQ_API size_t dq_sketch_encoded_size(uint32_t rows, uint32_t cols) {
    if (rows < 1u || rows > DQ_SKETCH_MAX_ROWS || cols < 1u || cols > DQ_SKETCH_MAX_COLS) return 0;
    if ((uint64_t)rows * cols > ((uint64_t)SIZE_MAX - DQ_SKETCH_HEADER_SIZE - 4u) / 4u) return 0;
    return DQ_SKETCH_HEADER_SIZE + 4u * (size_t)rows * cols;
}

DQ_API dq_status dq_sketch_encode(const dq_sketch *s, unsigned checksum, void *dst, size_t cap, size_t *len) {
    uint8_t *out = (uint8_t *)dst;
    dq_params p;
    size_t size, n, i;
    if (!s || !s->table || !dst || !len) return DQ_ERR_NULL;
    if (!dq__sk_ok(s) || checksum > 1u) return DQ_ERR_PARAM;
    size = dq_sketch_encoded_size(s->rows, s->cols);
    if (size == 0 || (checksum && size > SIZE_MAX - 4u)) return DQ_ERR_TOO_LARGE;
    size += checksum ? 4u : 0u;
    if (cap < size) return DQ_ERR_DST_TOO_SMALL;
    n = dq__sk_cells(s);
    if (!dq__sk_all_finite(s->table, n)) return DQ_ERR_NONFINITE;
    memset(&p, 0, sizeof p);
    p.seed = s->seed;
    dq__put_header(out, DQ_SCHEME_SKETCH, 32u, DQ_CODER_FIXED, 0u, checksum ? DQ_FLAG_CHECKSUM : 0u, s->cols,
                   (uint64_t)n, &p);
    dq__st32(out + DQ_HEADER_SIZE, s->rows);
    dq__st32(out + DQ_HEADER_SIZE + 4u, 0u);
    dq__st64(out + DQ_HEADER_SIZE + 8u, s->dim);
    for (i = 0; i < n; i++) dq__st32(out + DQ_SKETCH_HEADER_SIZE + 4u * i, dq__fbits(s->table[i]));
    if (checksum) dq__st32(out + size - 4u, dq__body_crc(out, size));
    *len = size;
    return DQ_OK;
}

/* dq_header_read() for scheme 11, after the common checks (doc/FORMAT.md 21.4). */
static inline dq_status dq__sk_header(const uint8_t *in, size_t src_len, uint64_t count, dq_header *h, dq__cfg *c) {
    uint64_t rows, dim, body;
    (void)c;
    if (dq__count_set(count, h) != DQ_OK) return DQ_ERR_TOO_LARGE;
    if (h->bits != 32u || h->coder != DQ_CODER_FIXED || in[DQ__H_NORM] != 0u || (h->flags & ~DQ_FLAG_CHECKSUM) != 0 ||
        h->bucket < 1u || h->bucket > DQ_SKETCH_MAX_COLS || h->step != 0u || h->stream != 0u)
        return DQ_ERR_CORRUPT;
    rows = (uint64_t)h->count / h->bucket;
    if ((uint64_t)h->count % h->bucket != 0u || rows > DQ_SKETCH_MAX_ROWS) return DQ_ERR_CORRUPT;
    body = 4u * (uint64_t)h->count + ((h->flags & DQ_FLAG_CHECKSUM) ? 4u : 0u);
    if (body > (uint64_t)SIZE_MAX - DQ_SKETCH_HEADER_SIZE) return DQ_ERR_TOO_LARGE;
    if (src_len < DQ_SKETCH_HEADER_SIZE) return DQ_ERR_TRUNCATED;
    dim = dq__ld64(in + DQ_HEADER_SIZE + 8u);
    if (dq__ld32(in + DQ_HEADER_SIZE) != rows || dq__ld32(in + DQ_HEADER_SIZE + 4u) != 0u || dim < 1u ||
        dim > DQ_SKETCH_MAX_DIM)
        return DQ_ERR_CORRUPT;
    h->msg_size = DQ_SKETCH_HEADER_SIZE + (size_t)body;
    h->payload_size = 4u * h->count;
    h->nnz = h->count;
    return DQ_OK;
}

/* dq_decode()/dq_decode_add() for scheme 11, after the header, size and checksum checks. */
static inline dq_status dq__sk_decode(const uint8_t *msg, const dq_header *h, const dq__cfg *c, float w, int add,
                                      dq_dtype t, void *out) {
    const uint8_t *tab = msg + DQ_SKETCH_HEADER_SIZE;
    float buf[DQ__ELCHUNK];
    size_t i, i0, cnt, n = h->count;
    uint32_t bad = 0;
    (void)c;
    for (i = 0; i < n; i++) bad |= (uint32_t)((dq__ld32(tab + 4u * i) & 0x7F800000u) == 0x7F800000u);
    if (bad) return DQ_ERR_CORRUPT; /* a NaN or Inf cell: nothing written */
    for (i0 = 0; i0 < n; i0 += cnt) {
        float *o;
        cnt = dq__el_chunk(t == DQ_F32, n);
        if (n - i0 < cnt) cnt = n - i0;
        o = dq__el_acc(t, out, i0, cnt, add, buf);
        for (i = 0; i < cnt; i++) {
            float v = dq__bitsf(dq__ld32(tab + 4u * (i0 + i)));
            if (add) {
                float wv = w * v;
                v = o[i] + wv;
            }
            o[i] = v;
        }
        dq__el_out(t, o, cnt, out, i0);
    }
    return DQ_OK;
}

/* The sketch fields of a parsed message. */
static inline dq_status dq__sk_msg(const dq_message *m, dq_sketch *shape) {
    if (m->h.scheme != DQ_SCHEME_SKETCH) return DQ_ERR_PARAM;
    shape->rows = (uint32_t)(m->h.count / m->h.bucket);
    shape->cols = m->h.bucket;
    shape->dim = dq__ld64(m->src + DQ_HEADER_SIZE + 8u);
    shape->seed = m->h.seed;
    shape->table = NULL;
    return DQ_OK;
}

DQ_API dq_status dq_sketch_from_message(const void *src, size_t src_len, float *table, size_t table_len, dq_sketch *s) {
    dq_message m;
    dq_sketch k;
    dq_status st;
    if (!src || !table || !s) return DQ_ERR_NULL;
    if ((st = dq__msg_parse((const uint8_t *)src, src_len, &m)) != DQ_OK || (st = dq__sk_msg(&m, &k)) != DQ_OK) return st;
    return dq_sketch_init(s, k.rows, k.cols, k.dim, k.seed, table, table_len);
}

/* The message parsed once: its shape checked against s, then its body opened and added. */
DQ_API dq_status dq_sketch_add_message(dq_sketch *s, const void *src, size_t src_len, float weight) {
    dq_message m;
    dq_sketch k;
    dq_status st;
    if (!s || !s->table || !src) return DQ_ERR_NULL;
    if (!dq__sk_ok(s)) return DQ_ERR_PARAM;
    if ((st = dq__msg_parse((const uint8_t *)src, src_len, &m)) != DQ_OK || (st = dq__sk_msg(&m, &k)) != DQ_OK) return st;
    if (!dq__sk_same(s, &k)) return DQ_ERR_PARAM;
    if ((st = dq__msg_open_body(&m, src_len, 1)) != DQ_OK) return st;
    return dq__decode_opened(&m, weight, 1, DQ_F32, s->table);
}

/* ---- data quantization */
DQ_API dq_status dq_gate(const dq_gate_params *g, uint64_t step, uint64_t sample, double dloss, double xnorm, int *send,
                         double *weight) {
    double a;
    if (!g || !send || !weight) return DQ_ERR_NULL;
    if (!(g->lambda >= 0.0 && g->lambda <= DBL_MAX) || (g->mode != DQ_GATE_UNBIASED && g->mode != DQ_GATE_THRESHOLD))
        return DQ_ERR_PARAM;
    if (!(dloss >= -DBL_MAX && dloss <= DBL_MAX) || !(xnorm >= -DBL_MAX && xnorm <= DBL_MAX)) return DQ_ERR_NONFINITE;
    if (xnorm < 0.0) return DQ_ERR_PARAM;
    a = fabs(dloss) * xnorm; /* may overflow to +Inf: then p = 1 */
    *send = 0;
    *weight = 0.0;
    if (g->mode == DQ_GATE_THRESHOLD) {
        if (a >= g->lambda && (a > 0.0 || g->lambda == 0.0)) {
            *send = 1;
            *weight = 1.0;
        }
        return DQ_OK;
    }
    if (g->lambda == 0.0) { /* send everything */
        *send = 1;
        *weight = 1.0;
        return DQ_OK;
    }
    if (a > 0.0) {
        double p = a / g->lambda;
        uint32_t q, u;
        dq__key key = dq__key_make(g->seed ^ DQ__GATE_DOMAIN, step, g->stream);
        q = p >= 1.0 ? (1u << 24) : (uint32_t)ceil(p * 16777216.0); /* 1 .. 2^24: p > 0 */
        if (q == 0u) q = 1u;                                        /* p below 2^-1074 * 2^24 */
        u = dq__draw24(key.k0, dq__key_hi(key, (uint32_t)(sample >> 32)), (uint32_t)sample);
        if (u < q) {
            *send = 1;
            *weight = 16777216.0 / (double)q;
        }
    }
    return DQ_OK;
}

DQ_API dq_status dq_gate_lambda(const double *a, size_t n, double budget, double *lambda) {
    double sum = 0.0, lam;
    size_t i, pos = 0, sat = 0, it;
    if ((!a && n) || !lambda) return DQ_ERR_NULL;
    if (!(budget > 0.0 && budget <= DBL_MAX)) return DQ_ERR_PARAM;
    for (i = 0; i < n; i++) {
        if (!(a[i] >= 0.0 && a[i] <= DBL_MAX)) return DQ_ERR_PARAM;
        if (a[i] > 0.0) pos++;
        sum += a[i];
    }
    if ((double)pos <= budget) {
        *lambda = 0.0;
        return DQ_OK;
    }
    /* Water filling: with S = {a_i >= lambda} saturated (p = 1), lambda = (sum of the others) /
     * (budget - |S|). Start from lambda = sum / budget (S empty); each round can only lower
     * lambda and grow S, so it ends within n rounds (in practice a handful). */
    lam = sum / budget;
    for (it = 0; it <= n; it++) {
        double rest = 0.0, next;
        size_t s2 = 0;
        for (i = 0; i < n; i++) {
            if (a[i] >= lam)
                s2++;
            else
                rest += a[i];
        }
        if (it > 0 && s2 == sat) break;
        sat = s2;
        if ((double)sat >= budget) break; /* cannot happen while pos > budget; keeps lam */
        next = rest / (budget - (double)sat);
        if (!(next < lam)) break;
        lam = next;
    }
    *lambda = lam;
    return DQ_OK;
}

static inline dq_status dq__sk_sample_params(const dq_params *p, uint64_t sample, dq_params *q) {
    if (!p) return DQ_ERR_NULL;
    *q = *p;
    q->step = sample;
    return DQ_OK;
}
DQ_API dq_status dq_sample_encode(const dq_params *p, uint64_t sample, const float *x, size_t d, void *dst,
                                  size_t dst_cap, size_t *dst_len) {
    dq_params q;
    dq_status st;
    if ((st = dq__sk_sample_params(p, sample, &q)) != DQ_OK) return st;
    return dq_encode(&q, x, d, NULL, dst, dst_cap, dst_len);
}
DQ_API dq_status dq_sample_encode_block(const dq_params *p, uint64_t sample, const float *x, size_t d, void *dst,
                                        size_t dst_cap, size_t *dst_len) {
    dq_params q;
    dq_status st;
    if ((st = dq__sk_sample_params(p, sample, &q)) != DQ_OK) return st;
    return dq_encode_block(&q, x, d, NULL, dst, dst_cap, dst_len);
}
