/* ---------------------------------------------------------------- sparse index streams
 * A sorted index set as a self-describing stream (doc/FORMAT.md 18): a 10-byte header, then the
 * body of one layout (gamma gaps, stream-vbyte gaps, a bitmap, Rice gaps). One scan sizes every
 * layout and checks the set, AUTO takes the smallest (dq__index_plan); each layout is a row of
 * dq__index_layouts (write, read, the least body a header may announce). sparse.h reads the
 * streams of its messages index by index with an iterator of its own. */

/* The largest RICE parameter for n (FORMAT 18.9): min(31, bit length of n - 1); from there every
 * gap minus one is below 2^r. */
static inline unsigned dq__rice_rmax(uint64_t n) {
    unsigned L = n > 1u ? dq__ilog2(n - 1u) + 1u : 0u;
    return L < 31u ? L : 31u;
}

/* The body sizes of a valid index set, by coder id ([0] unused), and the RICE parameter the
 * encoder writes; the scan validates the set. */
typedef struct dq__isizes {
    uint64_t body[5];
    unsigned rice;
} dq__isizes;

static inline dq_status dq__index_args(size_t k, uint64_t n, dq_index_coder coder) {
    if (n == 0) return DQ_ERR_EMPTY;
    if (n > DQ_INDEX_MAX_N) return DQ_ERR_TOO_LARGE;
    if ((uint64_t)k > n || (unsigned)coder > (unsigned)DQ_INDEX_RICE) return DQ_ERR_PARAM;
    return DQ_OK;
}
static inline uint64_t dq__index_ctrl_len(uint64_t k) { return k / 4u + (k % 4u != 0); }

/* The RICE parameter with the fewest code bits B(r) = k (1 + r) + sum_i (v_i >> r) (the
 * smallest r on ties) and those bits, for k >= 1 gaps minus one summing to S. It is at most
 * dq__rice_rmax(n): from there B only grows. B is convex:
 * B(r + 1) - B(r) = k - sum_i ceil((v_i >> r) / 2) grows with r. That difference is negative
 * where k 2^(r+2) < S (the sum is at least S / 2^(r+1) - k), so the smallest minimizer is at
 * least the first r with k 2^(r+2) >= S; and positive once k 2^(r+1) > 3 S (the sum is at most
 * S / 2^(r+1) + #{v_i >= 2^r}), so it is at most the first such r: at most 4 values of r
 * apart, whose B one more pass over the indices sums. */
static inline unsigned dq__rice_pick(const uint32_t *idx, size_t k, uint64_t S, uint64_t *bits) {
    uint64_t t[4] = {0, 0, 0, 0}, next = 0, best = 0;
    unsigned lo = 0, hi, r, j, pick;
    size_t i;
    while (lo < 31u && (S >> (lo + 2u)) + ((S & (((uint64_t)1 << (lo + 2u)) - 1u)) != 0) > k) lo++;
    hi = lo;
    while (hi < 31u && hi < lo + 3u && ((3u * S) >> (hi + 1u)) >= k) hi++;
    for (i = 0; i < k; i++) {
        uint64_t v = (uint64_t)idx[i] - next;
        next = (uint64_t)idx[i] + 1u;
        for (j = 0; j < 4u; j++) t[j] += v >> (lo + j); /* lo + 3 <= 34: a shift below 64 */
    }
    pick = lo;
    for (r = lo; r <= hi; r++) {
        uint64_t b = (uint64_t)k * (1u + r) + t[r - lo];
        if (r == lo || b < best) {
            best = b;
            pick = r;
        }
    }
    *bits = best;
    return pick;
}

/* Validates the set and sizes every body; RICE's (the second pass) only when `rice`. */
static inline dq_status dq__index_scan(const uint32_t *idx, size_t k, uint64_t n, int rice, dq__isizes *s) {
    uint64_t next = 0, gbits = 0, vbytes = 0, sum = 0, rbits = 0; /* next: the smallest index still allowed */
    size_t i;
    for (i = 0; i < k; i++) {
        uint64_t x = idx[i], g;
        uint32_t d;
        if (x < next || x >= n) return DQ_ERR_PARAM;
        g = x + 1u - next; /* 1 .. 2^32 */
        d = (uint32_t)(g - 1u);
        gbits += 2u * dq__ilog2(g) + 1u;
        vbytes += 1u + (unsigned)(d > 0xFFu) + (unsigned)(d > 0xFFFFu) + (unsigned)(d > 0xFFFFFFu);
        sum += d;
        next = x + 1u;
    }
    s->body[0] = 0;
    s->body[DQ_INDEX_GAMMA] = (gbits + 7u) / 8u;
    s->body[DQ_INDEX_VARINT] = dq__index_ctrl_len(k) + vbytes;
    s->body[DQ_INDEX_BITMAP] = (n + 7u) / 8u;
    s->rice = rice && k ? dq__rice_pick(idx, k, sum, &rbits) : 0u;
    s->body[DQ_INDEX_RICE] = 1u + (rbits + 7u) / 8u;
    return DQ_OK;
}
static inline dq_index_coder dq__index_pick(const dq__isizes *s, dq_index_coder coder) {
    if (coder != DQ_INDEX_AUTO) return coder;
    coder = DQ_INDEX_VARINT;
    if (s->body[DQ_INDEX_BITMAP] < s->body[coder]) coder = DQ_INDEX_BITMAP;
    if (s->body[DQ_INDEX_GAMMA] < s->body[coder]) coder = DQ_INDEX_GAMMA;
    if (s->body[DQ_INDEX_RICE] < s->body[coder]) coder = DQ_INDEX_RICE;
    return coder;
}
/* validate, choose the coder (and the RICE parameter) and its total size */
static inline dq_status dq__index_plan(const uint32_t *idx, size_t k, uint64_t n, dq_index_coder *coder,
                                       unsigned *rice, size_t *size) {
    dq__isizes s;
    uint64_t total;
    dq_status st = dq__index_args(k, n, *coder);
    if (st != DQ_OK) return st;
    if (!idx && k) return DQ_ERR_NULL;
    st = dq__index_scan(idx, k, n, *coder == DQ_INDEX_AUTO || *coder == DQ_INDEX_RICE, &s);
    if (st != DQ_OK) return st;
    *coder = dq__index_pick(&s, *coder);
    *rice = s.rice;
    total = DQ_INDEX_HEADER_SIZE + s.body[*coder];
    if (total > (uint64_t)SIZE_MAX) return DQ_ERR_TOO_LARGE;
    *size = (size_t)total;
    return DQ_OK;
}

/* The largest body each coder can write for k indices below n (FORMAT 18.7), by coder id, RICE
 * with any parameter; and *rice_enc, the largest the RICE encoder writes (its parameter has
 * the fewest bits, so at most the least of the per-parameter bounds). Gaps sum to at most n,
 * so at most n / 2^j of them are >= 2^j: a gamma code is 1 + 2 sum_j [gap >= 2^j] bits, a
 * VARINT value 1 + sum_j [value >= 256^j] bytes; the values sum to at most n - k, so the RICE
 * codes at parameter r take at most k (1 + r) + ((n - k) >> r) bits. */
static inline void dq__index_bodies_max(uint64_t k, uint64_t n, uint64_t *b, uint64_t *rice_enc) {
    uint64_t gbits = k, vbytes = dq__index_ctrl_len(k) + k, rb = 0, lo = 0, up;
    unsigned j, m = dq__rice_rmax(n);
    for (j = 1; j <= 32; j++) gbits += 2u * (n >> j < k ? n >> j : k);
    for (j = 1; j <= 3; j++) vbytes += n >> (8u * j) < k ? n >> (8u * j) : k;
    if (k) {
        for (j = 0; j <= m; j++) { /* at most k (1 + r) + (n - k) / 2^r bits at parameter r */
            up = k * (1u + j) + ((n - k) >> j) + ((n - k) & (((uint64_t)1 << j) - 1u) ? 1u : 0u);
            if (j == 0 || up < lo) lo = up;
        }
        rb = up; /* that bound is convex in r: the largest at r = 0 (n bits) or r = m */
        if (n > rb) rb = n;
    }
    b[0] = 0;
    b[DQ_INDEX_GAMMA] = (gbits + 7u) / 8u;
    b[DQ_INDEX_VARINT] = vbytes;
    b[DQ_INDEX_BITMAP] = (n + 7u) / 8u;
    b[DQ_INDEX_RICE] = 1u + (rb + 7u) / 8u;
    *rice_enc = 1u + (lo + 7u) / 8u;
}

/* The largest stream of any coder, RICE with any parameter (k <= n <= 2^32). */
static inline uint64_t dq__index_bound64(uint64_t k, uint64_t n) {
    uint64_t b[5], re, body = 0;
    unsigned c;
    dq__index_bodies_max(k, n, b, &re);
    for (c = DQ_INDEX_GAMMA; c <= DQ_INDEX_RICE; c++)
        if (b[c] > body) body = b[c];
    return DQ_INDEX_HEADER_SIZE + body;
}
DQ_API size_t dq_index_bound(size_t k, uint64_t n) {
    uint64_t body;
    if (n == 0 || n > DQ_INDEX_MAX_N || (uint64_t)k > n) return 0;
    body = dq__index_bound64((uint64_t)k, n);
    return body > (uint64_t)SIZE_MAX ? 0 : (size_t)body;
}

DQ_API dq_status dq_index_size(const uint32_t *idx, size_t k, uint64_t n, dq_index_coder coder, size_t *size) {
    unsigned rice = 0;
    if (!size) return DQ_ERR_NULL;
    return dq__index_plan(idx, k, n, &coder, &rice, size);
}

static inline void dq__index_put_gamma(const uint32_t *idx, size_t k, unsigned rice, uint8_t *body,
                                       size_t body_len) {
    dq_bitwriter w;
    uint64_t next = 0;
    size_t i, len = 0;
    (void)rice;
    if (dq_bw_init(&w, body, body_len) != DQ_OK) return;
    for (i = 0; i < k; i++) {
        dq__gamma_put(&w, (uint64_t)idx[i] + 1u - next);
        next = (uint64_t)idx[i] + 1u;
    }
    (void)dq_bw_finish(&w, &len); /* sized exactly by the scan: cannot fail */
}
static inline void dq__index_put_varint(const uint32_t *idx, size_t k, unsigned rice, uint8_t *body,
                                       size_t body_len) {
    size_t clen = (size_t)dq__index_ctrl_len(k), pos = clen, i;
    uint32_t prev = 0xFFFFFFFFu;
    (void)rice;
    for (i = 0; i < k; i += 4) {
        unsigned c = 0, j;
        for (j = 0; j < 4 && i + j < k; j++) {
            uint32_t d = idx[i + j] - prev - 1u; /* modulo 2^32: idx[0] for the first */
            unsigned L = (unsigned)(d > 0xFFu) + (unsigned)(d > 0xFFFFu) + (unsigned)(d > 0xFFFFFFu);
            c |= L << (2u * j);
            if (body_len - pos >= 4) { /* the bytes past this value are rewritten by the next */
                dq__st32(body + pos, d);
            } else {
                unsigned b;
                for (b = 0; b <= L; b++) body[pos + b] = (uint8_t)(d >> (8u * b));
            }
            pos += L + 1u;
            prev = idx[i + j];
        }
        body[i / 4] = (uint8_t)c;
    }
}
static inline void dq__index_put_bitmap(const uint32_t *idx, size_t k, unsigned rice, uint8_t *body,
                                       size_t body_len) {
    size_t i;
    (void)rice;
    memset(body, 0, body_len);
    for (i = 0; i < k; i++) body[idx[i] >> 3] |= (uint8_t)(1u << (idx[i] & 7u));
}
/* RICE at parameter r: q = v >> r zeros, a one, the low r bits of v. */
static inline void dq__index_put_rice(const uint32_t *idx, size_t k, unsigned r, uint8_t *body, size_t body_len) {
    dq_bitwriter w;
    uint64_t next = 0;
    size_t i, len = 0;
    body[0] = (uint8_t)r;
    if (dq_bw_init(&w, body + 1, body_len - 1u) != DQ_OK) return;
    for (i = 0; i < k; i++) {
        uint64_t v = (uint64_t)idx[i] - next, q = v >> r;
        next = (uint64_t)idx[i] + 1u;
        for (; q >= 32u; q -= 32u) dq_bw_put(&w, 0, 32);
        dq_bw_put(&w, 1, (unsigned)q + 1u); /* q zeros, then the one */
        dq_bw_put(&w, v & (((uint64_t)1 << r) - 1u), r);
    }
    (void)dq_bw_finish(&w, &len); /* sized exactly by the scan: cannot fail */
}
/* ---- decoding */
typedef struct dq__ihead {
    uint64_t n;
    size_t k;
    dq_index_coder coder;
    const uint8_t *body;
    size_t body_len;
} dq__ihead;

static inline dq_status dq__index_get_gamma(const dq__ihead *h, uint32_t *idx, dq__svb_kernel kern) {
    dq_bitreader r;
    uint64_t next = 0, n = h->n;
    size_t i;
    (void)kern;
    if (dq_br_init(&r, h->body, h->body_len) != DQ_OK) return DQ_ERR_NULL;
    for (i = 0; i < h->k; i++) {
        uint64_t g;
        unsigned m;
        if (r.n < 40) dq__br_refill(&r);
        m = r.acc ? 2u * dq__clz64(r.acc) + 1u : 129u;
        if (m <= r.n) { /* m <= 63: the leading 1 and the whole code are valid bits */
            g = r.acc >> (64u - m);
            r.acc <<= m;
            r.n -= m;
        } else {
            dq_status st = dq__gamma_get(&r, &g);
            if (st != DQ_OK) return st;
        }
        if (g > n - next) return DQ_ERR_CORRUPT; /* index next + g - 1 would be >= n */
        next += g;
        idx[i] = (uint32_t)(next - 1u);
    }
    return dq_br_finish(&r);
}

/* RICE: one code, the gap minus one into *v, for an index that must stay below n from `next` (the
 * gaps so far). Codes inside the accumulator's valid bits take the fast path; the rest, the end
 * of the body and every error go bit-exactly through the slow one (FORMAT 18.6 for the order of
 * the checks: too many zeros, the end of the body, the gap). */
static inline dq_status dq__rice_get(dq_bitreader *r, unsigned rp, uint64_t n, uint64_t next, uint64_t *v) {
    uint64_t lim, q = 0, rem;
    unsigned z;
    if (next >= n) return DQ_ERR_CORRUPT; /* no room for any gap */
    lim = (n - next - 1u) >> rp;          /* the most zeros a code may have */
    if (r->n < 40) dq__br_refill(r);
    if (r->acc && (z = dq__clz64(r->acc)) + 1u + rp <= r->n) { /* a z above lim fails below */
        r->acc = (r->acc << z) << 1; /* z + 1 reaches 64 when the tail refill filled all 64 bits */
        rem = rp ? r->acc >> (64u - rp) : 0u;
        r->acc <<= rp;
        r->n -= z + 1u + rp;
        q = z;
    } else {
        for (;;) { /* the zeros, a valid bit at a time */
            if (r->n <= 56) dq__br_refill(r);
            if (r->n == 0) return DQ_ERR_TRUNCATED;
            z = r->acc ? dq__clz64(r->acc) : 64u;
            if (z > r->n) z = r->n; /* bits past the valid ones may be a later byte's */
            if (q + z > lim) return DQ_ERR_CORRUPT;
            q += z;
            if (z < r->n) { /* the one */
                r->acc = (r->acc << z) << 1;
                r->n -= z + 1u;
                break;
            }
            r->acc = z == 64u ? 0u : r->acc << z;
            r->n = 0;
        }
        rem = dq__br_get56(r, rp);
        if (r->overrun) return DQ_ERR_TRUNCATED;
    }
    *v = q << rp | rem; /* q <= 2^32: no overflow */
    return *v > n - next - 1u ? DQ_ERR_CORRUPT : DQ_OK;
}
static inline dq_status dq__index_get_rice(const dq__ihead *h, uint32_t *idx, dq__svb_kernel kern) {
    dq_bitreader r;
    uint64_t next = 0, v;
    unsigned rp = h->body[0];
    size_t i;
    dq_status st;
    (void)kern;
    if (rp > dq__rice_rmax(h->n)) return DQ_ERR_CORRUPT;
    if (dq_br_init(&r, h->body + 1, h->body_len - 1u) != DQ_OK) return DQ_ERR_NULL;
    for (i = 0; i < h->k; i++) {
        if ((st = dq__rice_get(&r, rp, h->n, next, &v)) != DQ_OK) return st;
        next += v + 1u;
        idx[i] = (uint32_t)(next - 1u);
    }
    return dq_br_finish(&r);
}

static inline dq_status dq__index_get_varint(const dq__ihead *h, uint32_t *idx, dq__svb_kernel kern) {
    const uint8_t *ctrl = h->body;
    size_t k = h->k, clen = (size_t)dq__index_ctrl_len(k), i;
    uint64_t dlen = 0;
    dq__svb_acc a;
    /* body >= clen + k was checked with the header */
    if (k % 4u && ctrl[clen - 1] >> (2u * (k % 4u))) return DQ_ERR_CORRUPT; /* unused codes */
    i = 0;
    for (; i + 8 <= clen; i += 8) { /* data bytes: 4 per control byte + the sum of its codes */
        uint64_t x = dq__ld64(ctrl + i);
        x = (x & 0x3333333333333333u) + (x >> 2 & 0x3333333333333333u);
        x = (x & 0x0F0F0F0F0F0F0F0Fu) + (x >> 4 & 0x0F0F0F0F0F0F0F0Fu);
        dlen += (x * 0x0101010101010101u) >> 56;
    }
    for (; i < clen; i++)
        dlen += (ctrl[i] & 3u) + (ctrl[i] >> 2 & 3u) + (ctrl[i] >> 4 & 3u) + (ctrl[i] >> 6);
    dlen += k; /* each value has at least one byte; the unused codes are 0 */
    if ((uint64_t)h->body_len - clen < dlen) return DQ_ERR_TRUNCATED;
    if ((uint64_t)h->body_len - clen > dlen) return DQ_ERR_CORRUPT;
    a.prev = 0xFFFFFFFFu;
    a.bad = 0;
    a.sum = 0;
    if (k) kern(ctrl, ctrl + clen, (size_t)dlen, k, idx, &a);
    /* the last index is k - 1 + sum < n (exact: the sum is 64-bit), so nothing wrapped */
    if (a.bad || (k && a.sum > h->n - k)) return DQ_ERR_CORRUPT;
    return DQ_OK;
}

static inline dq_status dq__index_get_bitmap(const dq__ihead *h, uint32_t *idx, dq__svb_kernel kern) {
    const uint8_t *b = h->body;
    size_t len = (size_t)((h->n + 7u) / 8u), i = 0, cnt = 0, k = h->k;
    unsigned tail = (unsigned)(h->n % 8u);
    (void)kern;
    if (h->body_len != len) return DQ_ERR_CORRUPT; /* shorter was refused with the header */
    if (tail && b[len - 1] >> tail) return DQ_ERR_CORRUPT;
    for (; i < len; i += 8) {
        uint64_t w;
        uint32_t base = (uint32_t)(i * 8u);
        if (len - i >= 8) {
            w = dq__ld64(b + i);
        } else {
            size_t j;
            w = 0;
            for (j = len - i; j-- > 0;) w = w << 8 | b[i + j];
        }
        if (dq__popcount64(w) > k - cnt) return DQ_ERR_CORRUPT;
        for (; w; w &= w - 1u) idx[cnt++] = base + dq__ctz64(w);
    }
    return cnt == k ? DQ_OK : DQ_ERR_CORRUPT;
}

/* ---- the layouts' table: one row per index layout, by its id (FORMAT 18). A new layout is its
 * put and get functions, one row, its size in dq__index_scan and its reader in sparse.h's
 * index iterator. */
static inline uint64_t dq__index_least_gamma(uint64_t k, uint64_t n) {
    (void)n;
    return (k + 7u) / 8u; /* a bit per index at least */
}
static inline uint64_t dq__index_least_varint(uint64_t k, uint64_t n) {
    (void)n;
    return dq__index_ctrl_len(k) + k; /* the control bytes and a byte per index */
}
static inline uint64_t dq__index_least_bitmap(uint64_t k, uint64_t n) {
    (void)k;
    return (n + 7u) / 8u; /* exact */
}
static inline uint64_t dq__index_least_rice(uint64_t k, uint64_t n) {
    (void)n;
    return 1u + (k + 7u) / 8u; /* the parameter byte and a bit per index */
}
typedef struct dq__index_layout {
    /* the body of k sorted indices, of the exact size len (rice: RICE's parameter) */
    void (*put)(const uint32_t *idx, size_t k, unsigned rice, uint8_t *body, size_t len);
    /* the indices of a stream whose header h read (kern: VARINT's block decoder) */
    dq_status (*get)(const dq__ihead *h, uint32_t *idx, dq__svb_kernel kern);
    /* the fewest body bytes a stream of k indices below n has: less is DQ_ERR_TRUNCATED */
    uint64_t (*least)(uint64_t k, uint64_t n);
} dq__index_layout;
static const dq__index_layout dq__index_layouts[DQ_INDEX_RICE + 1] = {
    {NULL, NULL, NULL}, /* DQ_INDEX_AUTO: a request, never on the wire */
    {dq__index_put_gamma, dq__index_get_gamma, dq__index_least_gamma},
    {dq__index_put_varint, dq__index_get_varint, dq__index_least_varint},
    {dq__index_put_bitmap, dq__index_get_bitmap, dq__index_least_bitmap},
    {dq__index_put_rice, dq__index_get_rice, dq__index_least_rice},
};

/* The 10-byte header of a stream, then its body (of the exact size). */
static inline void dq__index_write(const uint32_t *idx, size_t k, uint64_t n, dq_index_coder coder, unsigned rice,
                                   uint8_t *d, size_t size) {
    d[0] = (uint8_t)coder;
    dq__st32(d + 1, (uint32_t)(n - 1u));
    dq__st32(d + 5, (uint32_t)k);
    d[9] = (uint8_t)((uint64_t)k >> 32);
    dq__index_layouts[coder].put(idx, k, rice, d + DQ_INDEX_HEADER_SIZE, size - DQ_INDEX_HEADER_SIZE);
}

DQ_API dq_status dq_index_encode(const uint32_t *idx, size_t k, uint64_t n, dq_index_coder coder, void *dst,
                                 size_t dst_cap, size_t *dst_len) {
    size_t size = 0;
    unsigned rice = 0;
    dq_status st;
    if (!dst_len || (!dst && dst_cap)) return DQ_ERR_NULL;
    st = dq__index_plan(idx, k, n, &coder, &rice, &size);
    if (st != DQ_OK) return st;
    if (size > dst_cap) return DQ_ERR_DST_TOO_SMALL;
    dq__index_write(idx, k, n, coder, rice, (uint8_t *)dst, size);
    *dst_len = size;
    return DQ_OK;
}
/* A RICE stream with a given parameter r <= dq__rice_rmax(n) (any such r is a valid stream;
 * dq_index_encode picks the fewest bits): what a fuzz target re-encodes a decoded stream with. */
static inline dq_status dq__index_encode_rice(const uint32_t *idx, size_t k, uint64_t n, unsigned r, void *dst,
                                              size_t dst_cap, size_t *dst_len) {
    uint64_t next = 0, bits = 0, size;
    size_t i;
    dq_status st = dq__index_args(k, n, DQ_INDEX_RICE);
    if (st != DQ_OK) return st;
    if (r > dq__rice_rmax(n)) return DQ_ERR_PARAM;
    for (i = 0; i < k; i++) {
        if ((uint64_t)idx[i] < next || idx[i] >= n) return DQ_ERR_PARAM;
        bits += ((uint64_t)idx[i] - next) >> r;
        next = (uint64_t)idx[i] + 1u;
    }
    size = DQ_INDEX_HEADER_SIZE + 1u + ((uint64_t)k * (1u + r) + bits + 7u) / 8u;
    if (size > dst_cap) return DQ_ERR_DST_TOO_SMALL;
    dq__index_write(idx, k, n, DQ_INDEX_RICE, r, (uint8_t *)dst, (size_t)size);
    *dst_len = (size_t)size;
    return DQ_OK;
}

static inline dq_status dq__index_head(const void *src, size_t src_len, dq__ihead *h) {
    const uint8_t *s = (const uint8_t *)src;
    uint64_t k, need;
    if (!src && src_len) return DQ_ERR_NULL;
    if (src_len < DQ_INDEX_HEADER_SIZE) return DQ_ERR_TRUNCATED;
    if (s[0] < DQ_INDEX_GAMMA || s[0] > DQ_INDEX_RICE) return DQ_ERR_CORRUPT;
    h->coder = (dq_index_coder)s[0];
    h->n = (uint64_t)dq__ld32(s + 1) + 1u;
    k = (uint64_t)dq__ld32(s + 5) | (uint64_t)s[9] << 32;
    if (k > h->n) return DQ_ERR_CORRUPT;
    if (k > (uint64_t)SIZE_MAX) return DQ_ERR_TOO_LARGE;
    h->k = (size_t)k;
    h->body = s + DQ_INDEX_HEADER_SIZE;
    h->body_len = src_len - DQ_INDEX_HEADER_SIZE;
    need = dq__index_layouts[h->coder].least(k, h->n);
    if ((uint64_t)h->body_len < need) return DQ_ERR_TRUNCATED;
    return DQ_OK;
}

DQ_API dq_status dq_index_header(const void *src, size_t src_len, uint64_t *n, size_t *k, dq_index_coder *coder) {
    dq__ihead h;
    dq_status st = dq__index_head(src, src_len, &h);
    if (st != DQ_OK) return st;
    if (n) *n = h.n;
    if (k) *k = h.k;
    if (coder) *coder = h.coder;
    return DQ_OK;
}

/* Gamma body: codes that lie within the accumulator's valid bits are decoded in place (a
 * refill below 40 valid bits leaves 56 or more, so short codes share refills); longer codes,
 * the end of the body and every error go through dq__gamma_get. */
/* dq_index_decode() with a given VARINT kernel (tests compare the SIMD and scalar kernels) */
static inline dq_status dq__index_decode_with(const void *src, size_t src_len, uint32_t *idx, size_t idx_cap,
                                              size_t *k, dq__svb_kernel kern) {
    dq__ihead h;
    dq_status st;
    if (!k || (!idx && idx_cap)) return DQ_ERR_NULL;
    st = dq__index_head(src, src_len, &h);
    if (st != DQ_OK) return st;
    if (h.k > idx_cap) return DQ_ERR_DST_TOO_SMALL;
    st = dq__index_layouts[h.coder].get(&h, idx, kern);
    if (st == DQ_OK) *k = h.k;
    return st;
}
DQ_API dq_status dq_index_decode(const void *src, size_t src_len, uint32_t *idx, size_t idx_cap, size_t *k) {
    return dq__index_decode_with(src, src_len, idx, idx_cap, k, dq__k_svb_decode);
}

