/* ---------------------------------------------------------------- sparsifiers
 * Top-k, random-k and threshold messages (doc/FORMAT.md "Sparse messages", doc/MATHS.md 7),
 * with fused error feedback; their values as float32, or quantized (composed messages, the
 * part before this one).
 *
 * Selection works on keys: the float32 bit pattern of |c| with the sign cleared, which orders
 * like |c| for finite values (+0 and -0 share key 0; Inf and NaN have keys >= 0x7F800000).
 * Top-k is exact and O(n): a strided sample brackets the k-th largest key, one counting pass
 * histograms the keys inside the bracket (and proves the input finite), and one collecting
 * pass gathers the kept indices in ascending order. Most elements fall below the bracket, so
 * both passes are compare-and-skip loops over 64-element masks (dq__k_sp_mask64). Equal keys
 * are broken by index: the lower index is kept. No allocation: the index list lives at the end
 * of the caller's destination buffer (its capacity is checked against the size bound first)
 * and the selection's working set (16 KiB) on the stack. */

#define DQ__SP_FIN 0x7F800000u    /* keys at or above this are Inf or NaN */
#define DQ__SP_MAXKEY 0x7F7FFFFFu /* FLT_MAX */
#define DQ__SP_NB 2048u           /* histogram bins per counting pass */
#define DQ__SP_NS 2048u           /* sample size (inputs of at least 8 x this are sampled) */
#define DQ__SP_NC 2048u           /* most candidates the collecting pass resolves on the stack */
#define DQ__SP_CHUNK 256u         /* indices per chunk when a decoder walks an index stream */
#define DQ__SP_MAX_N ((uint64_t)1 << 32)
#define DQ__SP_K_OFF 48u   /* u64 k */
#define DQ__SP_RAND_VALS 56u /* RANDK: the values */
#define DQ__SP_LEN_OFF 56u /* TOPK, THRESHOLD: u64 byte length of the index stream */
#define DQ__SP_STREAM 64u  /* TOPK, THRESHOLD: the index stream, then the values */

/* The scan of elements i .. min(i + 64, n) (the kernels and the key dq__sp_key are with the
 * scalar kernels). */
static inline uint64_t dq__sp_mask(const float *x, const float *e, float *eo, size_t i, size_t n, uint32_t lo) {
    if (n - i >= 64u) return dq__k_sp_mask64(x + i, e ? e + i : NULL, eo ? eo + i : NULL, lo);
    return dq__sp_mask__scalar(x + i, e ? e + i : NULL, eo ? eo + i : NULL, n - i, lo);
}

/* ---- small sorts (heapsort: bounded time, no recursion) */
static inline void dq__sp_sift(uint64_t *a, size_t m, size_t i) {
    uint64_t v = a[i];
    for (;;) {
        size_t c = 2u * i + 1u;
        if (c >= m) break;
        if (c + 1u < m && a[c + 1u] > a[c]) c++;
        if (a[c] <= v) break;
        a[i] = a[c];
        i = c;
    }
    a[i] = v;
}
static inline void dq__sp_sort64(uint64_t *a, size_t m) {
    size_t i;
    if (m < 2) return;
    for (i = m / 2u; i-- > 0;) dq__sp_sift(a, m, i);
    for (i = m - 1u; i > 0; i--) {
        uint64_t t = a[0];
        a[0] = a[i];
        a[i] = t;
        dq__sp_sift(a, i, 0);
    }
}

/* ---- selection plan
 * A pass keeps every key > bhi; keys in [blo, bhi] are the boundary: when blo == bhi (one key
 * value) the first r of them in index order are kept, otherwise they are candidates (at most
 * DQ__SP_NC) of which the r largest (lower index first among equals) are kept. Threshold:
 * blo = bhi + 1, no boundary. */
typedef struct dq__sp_cut {
    uint32_t blo, bhi;
    size_t r;
} dq__sp_cut;

/* The input of a sparse encoder: x and the residual e (or NULL) of dtypes xt and et, which the
 * passes read a chunk at a time (float data in one piece, in place). `late`: the residual is
 * written by the encoder's last pass only (a composed message can still fail after the
 * selection); otherwise the collecting pass compensates a float residual in place. */
typedef struct dq__sp_src {
    dq_dtype xt, et;
    const void *x;
    void *e;
    int flt, late;
    float xb[DQ__ELCHUNK], eb[DQ__ELCHUNK];
} dq__sp_src;
static inline void dq__sp_src_init(dq__sp_src *s, dq_dtype xt, const void *x, dq_dtype et, void *e) {
    s->xt = xt;
    s->et = et;
    s->x = x;
    s->e = e;
    s->flt = xt == DQ_F32 && (!e || et == DQ_F32);
    s->late = 0;
}
/* The chunk of elements from i0 (of n) as floats in *x, *e (NULL without a residual); returns
 * its length. A float residual comes in place, a 16-bit one as a copy. */
static inline size_t dq__sp_src_get(dq__sp_src *s, size_t i0, size_t n, const float **x, float **e) {
    size_t cnt = dq__el_chunk(s->flt, n);
    if (n - i0 < cnt) cnt = n - i0;
    *x = dq__el_in(s->xt, s->x, i0, cnt, s->xb);
    *e = s->e ? dq__el_inout(s->et, s->e, i0, cnt, s->eb) : NULL;
    return cnt;
}
/* Element i of x (+ e). */
static inline float dq__sp_src_at(const dq__sp_src *s, size_t i) {
    float v = dq__el_get(s->xt, s->x, i);
    if (s->e) v = v + dq__el_get(s->et, s->e, i);
    return v;
}

/* Counting pass over [0, n): DQ_ERR_NONFINITE if a key is >= DQ__SP_FIN (every such key is
 * >= lo, lo <= DQ__SP_FIN), *above = keys > hi, hist[(key - lo) >> s] counts the keys in
 * [lo, hi] (hist may be NULL when hi < lo). */
static inline dq_status dq__sp_count(dq__sp_src *src, size_t n, uint32_t lo, uint32_t hi, unsigned s, uint64_t *hist,
                                     size_t *above) {
    size_t i0, cnt, i, a = 0;
    const float *x;
    float *e;
    for (i0 = 0; i0 < n; i0 += cnt) {
        cnt = dq__sp_src_get(src, i0, n, &x, &e);
        for (i = 0; i < cnt; i += 64u) {
            uint64_t m = dq__sp_mask(x, e, NULL, i, cnt, lo);
            for (; m; m &= m - 1u) {
                size_t j = i + dq__ctz64(m);
                uint32_t key = dq__sp_key(e ? x[j] + e[j] : x[j]);
                if (key >= DQ__SP_FIN) return DQ_ERR_NONFINITE;
                if (key > hi)
                    a++;
                else
                    hist[(key - lo) >> s]++;
            }
        }
    }
    *above = a;
    return DQ_OK;
}

/* Bracket [lo, hi] for the k-th largest key from a strided sample: sample ranks a few standard
 * deviations either side of the expected rank. Only speed depends on it, never the result. */
static inline void dq__sp_bracket(const dq__sp_src *src, size_t n, size_t k, uint64_t *w, uint32_t *lo, uint32_t *hi) {
    const size_t S = DQ__SP_NS;
    double q = (double)k / (double)n, mu = (double)S * q, sd = sqrt(mu * (1.0 - q)), sd4 = 4.0 * sd;
    double rl = ceil(mu + sd4 + 2.0), rh = floor(mu - sd4 - 2.0);
    size_t t;
    uint32_t l, h;
    for (t = 0; t < S; t++) {
        size_t i = (size_t)(((uint64_t)(2u * t + 1u) * (uint64_t)n) / (2u * S));
        w[t] = dq__sp_key(dq__sp_src_at(src, i));
    }
    dq__sp_sort64(w, S); /* ascending: descending rank r is w[S - 1 - r] */
    l = rl >= (double)S ? 0u : (uint32_t)w[S - 1u - (size_t)rl];
    if (rh >= 0.0) {
        h = (uint32_t)w[S - 1u - (size_t)rh];
    } else { /* above the sample's maximum: as far again as the bracket reaches below it */
        uint64_t mx = w[S - 1u], ext = mx + (mx - l);
        h = ext > DQ__SP_MAXKEY ? DQ__SP_MAXKEY : (uint32_t)ext;
    }
    if (l > DQ__SP_MAXKEY) l = DQ__SP_MAXKEY; /* so that Inf and NaN keys stay >= lo */
    if (h > DQ__SP_MAXKEY) h = DQ__SP_MAXKEY;
    *lo = l;
    *hi = h;
}

/* The cut of the k largest keys (1 <= k <= n): counting passes until the k-th largest key lies
 * in a bin that is one key wide or holds at most DQ__SP_NC keys. The first pass also proves
 * the input finite. w: DQ__SP_NB words of scratch. */
static inline dq_status dq__sp_plan_topk(dq__sp_src *src, size_t n, size_t k, uint64_t *w, dq__sp_cut *cut) {
    uint32_t lo = 0, hi = DQ__SP_MAXKEY;
    if (k == n) { /* keep all: one key-0 boundary with room for every zero */
        size_t above;
        cut->blo = cut->bhi = 0;
        cut->r = n;
        return dq__sp_count(src, n, DQ__SP_FIN, DQ__SP_MAXKEY, 0, NULL, &above);
    }
    if (n >= 8u * DQ__SP_NS) dq__sp_bracket(src, n, k, w, &lo, &hi);
    for (;;) {
        unsigned s = 0;
        size_t above = 0, acc, b, nb;
        dq_status st;
        while (((hi - lo) >> s) >= DQ__SP_NB) s++;
        nb = (size_t)((hi - lo) >> s) + 1u;
        memset(w, 0, nb * sizeof *w);
        if ((st = dq__sp_count(src, n, lo, hi, s, w, &above)) != DQ_OK) return st;
        if (above >= k) { /* the k-th largest is above the bracket */
            lo = hi + 1u;
            hi = DQ__SP_MAXKEY;
            continue;
        }
        acc = above;
        for (b = nb; b-- > 0;) {
            if (acc + w[b] >= k) break;
            acc += (size_t)w[b];
        }
        if (b == (size_t)-1) { /* below the bracket (lo > 0 here: all n keys are >= 0) */
            hi = lo - 1u;
            lo = 0;
            continue;
        }
        {
            uint64_t blo = (uint64_t)lo + ((uint64_t)b << s), bhi = blo + (((uint64_t)1 << s) - 1u);
            if (bhi > hi) bhi = hi;
            if (blo == bhi || w[b] <= DQ__SP_NC) {
                cut->blo = (uint32_t)blo;
                cut->bhi = (uint32_t)bhi;
                cut->r = k - acc;
                return DQ_OK;
            }
            lo = (uint32_t)blo; /* refine inside the bin */
            hi = (uint32_t)bhi;
        }
    }
}

/* Collecting pass: the kept indices in ascending order into idx, the boundary candidates into
 * cand as key << 32 | (2^32 - 1 - index). A float residual becomes e = x + e (the compensated
 * vector) here, unless src->late; a 16-bit one is left for the encoder's last pass. Returns the
 * number of indices in idx; *nc the number of candidates. */
static inline size_t dq__sp_collect(dq__sp_src *src, size_t n, const dq__sp_cut *cut, uint32_t *idx, uint64_t *cand,
                                    size_t *nc) {
    size_t i0, cnt, i, na = 0, c = 0, ties = cut->blo == cut->bhi ? cut->r : 0;
    const float *x;
    float *e, *eo;
    for (i0 = 0; i0 < n; i0 += cnt) {
        cnt = dq__sp_src_get(src, i0, n, &x, &e);
        eo = src->flt && !src->late ? e : NULL;
        for (i = 0; i < cnt; i += 64u) {
            uint64_t m = dq__sp_mask(x, e, eo, i, cnt, cut->blo);
            for (; m; m &= m - 1u) {
                size_t j = i + dq__ctz64(m);
                uint32_t key = dq__sp_key(eo ? eo[j] : (e ? x[j] + e[j] : x[j]));
                if (key > cut->bhi) {
                    idx[na++] = (uint32_t)(i0 + j);
                } else if (cut->blo == cut->bhi) {
                    if (ties) {
                        ties--;
                        idx[na++] = (uint32_t)(i0 + j);
                    }
                } else {
                    cand[c++] = (uint64_t)key << 32 | (0xFFFFFFFFu - (uint32_t)(i0 + j));
                }
            }
        }
    }
    *nc = c;
    return na;
}

/* The r best candidates (largest key, then lowest index) merged into idx[0..na) (ascending);
 * idx has room for na + r. */
static inline void dq__sp_resolve(uint32_t *idx, size_t na, uint64_t *cand, size_t nc, size_t r) {
    uint64_t *sel = cand + (nc - r);
    size_t j, w = na + r, i = na;
    dq__sp_sort64(cand, nc);
    for (j = 0; j < r; j++) sel[j] = 0xFFFFFFFFu - (uint32_t)sel[j];
    dq__sp_sort64(sel, r);
    for (j = r; j > 0;) { /* merge from the back */
        if (i > 0 && idx[i - 1u] > sel[j - 1u])
            idx[--w] = idx[--i];
        else
            idx[--w] = (uint32_t)sel[--j];
    }
}

/* Top-k and threshold selection: the indices of the cut in ascending order into idx (room for
 * k); w is the planning scratch, reused for the candidates. */
static inline void dq__sp_select(dq__sp_src *src, size_t n, size_t k, const dq__sp_cut *cut, uint32_t *idx,
                                 uint64_t *w) {
    size_t nc = 0, na = dq__sp_collect(src, n, cut, idx, w, &nc);
    if (na < k) dq__sp_resolve(idx, na, w, nc, k - na);
}

DQ_API dq_status dq_topk_select(const float *x, size_t n, size_t k, uint32_t *idx) {
    uint64_t w[DQ__SP_NB];
    dq__sp_src src;
    dq__sp_cut cut;
    dq_status st;
    if (!x || !idx) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if ((uint64_t)n > DQ__SP_MAX_N) return DQ_ERR_TOO_LARGE;
    if (k == 0 || k > n) return DQ_ERR_PARAM;
    dq__sp_src_init(&src, DQ_F32, x, DQ_F32, NULL);
    if ((st = dq__sp_plan_topk(&src, n, k, w, &cut)) != DQ_OK) return st;
    dq__sp_select(&src, n, k, &cut, idx, w);
    return DQ_OK;
}

/* ---- random-k strata (doc/FORMAT.md "Random-k indices"): stratum j is
 * [floor(j n / k), floor((j + 1) n / k)), of length m = q or q + 1 (q = floor(n / k)), walked
 * with an integer remainder so nothing overflows; its index is start + (h32(j) m >> 32). */
typedef struct dq__sp_strata {
    uint64_t q, r, t, k, start, m;
    uint32_t k0, k1;
} dq__sp_strata;
static inline void dq__sp_strata_init(dq__sp_strata *s, uint64_t n, uint64_t k, uint64_t seed, uint64_t step,
                                      uint32_t stream) {
    dq__key key = dq__key_make(seed, step, stream);
    s->q = n / k;
    s->r = n % k;
    s->t = 0;
    s->k = k;
    s->start = 0;
    s->m = 0;
    s->k0 = key.k0;
    s->k1 = dq__key_hi(key, 0); /* j < 2^32: the high half of the counter is 0 */
}
/* Index of stratum j (called for j = 0, 1, ... in order); s->m is its length afterwards. */
static inline size_t dq__sp_strata_next(dq__sp_strata *s, uint32_t j) {
    uint64_t start = s->start, m = s->q;
    if (s->t + s->r >= s->k) {
        m++;
        s->t = s->t + s->r - s->k;
    } else {
        s->t += s->r;
    }
    s->start = start + m;
    s->m = m;
    return (size_t)(start + (((uint64_t)dq__draw32(s->k0, s->k1, j) * m) >> 32));
}

/* ---- parameters and sizes */
typedef struct dq__sp_cfg {
    unsigned scheme, cs, rescale;
    unsigned bits;   /* 1..16: composed (the values are the body of M', params q); 0: float32 */
    dq_index_coder coder;
    size_t k;        /* TOPK, RANDK; THRESHOLD: 0 until counted */
    uint32_t tkey;   /* THRESHOLD: key of the threshold */
    dq_params q;     /* composed: the params of M' (composed part) */
    dq__cfg lc;      /* composed: M''s configuration for one value (its norm, flags, bucket) */
} dq__sp_cfg;

/* Every field that does not apply must be zero (a set field means the caller expects a
 * behaviour these schemes do not have); bits may also be 32, the width on the wire. With bits
 * 1..16 the fields of the values' QSGD message are checked as for QSGD. */
static inline dq_status dq__sp_cfg_make(const dq_params *p, size_t n, dq__sp_cfg *c) {
    unsigned sc = (unsigned)p->scheme;
    int topk = sc == DQ_SCHEME_TOPK, randk = sc == DQ_SCHEME_RANDK, thr = sc == DQ_SCHEME_THRESHOLD;
    dq_status st;
    if (!topk && !randk && !thr) return DQ_ERR_PARAM;
    c->bits = dq__cm_bits(p->bits) ? p->bits : 0u;
    if (c->bits) {
        dq__cm_params(p, &c->q);
        if ((st = dq__cfg_make(&c->q, 1, &c->lc)) != DQ_OK) return st; /* bucket, rounding, norm, coder, checksum */
    } else if (p->bits != 0 && p->bits != 32u) {
        return DQ_ERR_BITS;
    } else if (p->bucket != 0 || p->rounding != DQ_ROUND_DEFAULT || p->norm != DQ_NORM_DEFAULT ||
               !dq__fixed_asked(p) || p->checksum > 1u) {
        return DQ_ERR_PARAM;
    }
    if (p->alpha != 0.0f || p->levels) return DQ_ERR_PARAM;
    if ((!randk && p->unbiased) || p->unbiased > 1u || (randk && p->index_coder) || p->index_coder > (unsigned)DQ_INDEX_RICE ||
        (!thr && p->threshold != 0.0f) || (thr && p->k))
        return DQ_ERR_PARAM;
    if (n == 0) return DQ_ERR_EMPTY;
    if ((uint64_t)n > DQ__SP_MAX_N) return DQ_ERR_TOO_LARGE;
    if (!thr && (p->k == 0 || p->k > n)) return DQ_ERR_PARAM;
    if (thr && !(p->threshold >= 0.0f && p->threshold <= FLT_MAX)) return DQ_ERR_PARAM; /* NaN, Inf */
    c->scheme = sc;
    c->cs = p->checksum;
    c->rescale = p->unbiased;
    c->coder = (dq_index_coder)p->index_coder;
    c->k = thr ? 0 : p->k;
    c->tkey = thr ? dq__sp_key(p->threshold) : 0u;
    return DQ_OK;
}

/* Largest index stream the encoder writes with `coder` for k indices below n (FORMAT 18.7; RICE
 * with the parameter it picks); AUTO picks the smallest exact size, so the smallest bound holds
 * for it. */
static inline uint64_t dq__sp_ibound(uint64_t k, uint64_t n, dq_index_coder coder) {
    uint64_t b[5], best;
    unsigned c;
    dq__index_bodies_max(k, n, b, &best);
    b[DQ_INDEX_RICE] = best; /* the encoder's parameter, not any */
    if (coder != DQ_INDEX_AUTO) return DQ_INDEX_HEADER_SIZE + b[coder];
    best = b[DQ_INDEX_GAMMA];
    for (c = DQ_INDEX_VARINT; c <= DQ_INDEX_RICE; c++)
        if (b[c] < best) best = b[c];
    return DQ_INDEX_HEADER_SIZE + best;
}
/* The largest stream of any coder, RICE with any parameter (what a decoder accepts; FORMAT
 * 18.7). */
static inline uint64_t dq__sp_ibound_any(uint64_t k, uint64_t n) { return dq__index_bound64(k, n); }
/* Room the encoder needs for k kept elements (FORMAT 20.7): the exact size for float32 RANDK;
 * for TOPK and THRESHOLD the bound with the stream's bound, plus 4 bytes for aligning the index
 * list that the encoder keeps at the end of the buffer. Composed (k >= 1): the capacity of M',
 * whose header goes 48 bytes before the values, then the k gathered values and the index list
 * (4-byte aligned); UINT64_MAX when M''s does not fit size_t. */
static inline uint64_t dq__sp_room(const dq__sp_cfg *c, uint64_t k, uint64_t n) {
    uint64_t lv;
    if (!c->bits || k == 0) {
        if (c->scheme == DQ_SCHEME_RANDK) return DQ__SP_RAND_VALS + 4u * k + 4u * c->cs;
        return DQ__SP_STREAM + dq__sp_ibound(k, n, c->coder) + 4u * k + 4u * c->cs + 4u;
    }
    if ((lv = dq__cm_capacity(&c->q, (size_t)k)) == UINT64_MAX) return UINT64_MAX;
    if (c->scheme == DQ_SCHEME_RANDK) return DQ__SP_RAND_VALS - DQ_HEADER_SIZE + lv + 4u * k + 4u;
    return DQ__SP_STREAM + dq__sp_ibound(k, n, c->coder) - DQ_HEADER_SIZE + lv + 8u * k + 4u;
}

static inline dq_status dq__sp_size(const dq_params *p, size_t n, size_t *size) {
    dq__sp_cfg c;
    uint64_t s;
    dq_status st = dq__sp_cfg_make(p, n, &c);
    if (st != DQ_OK) return st;
    s = dq__sp_room(&c, c.scheme == DQ_SCHEME_THRESHOLD ? (uint64_t)n : (uint64_t)c.k, n);
    if (s > (uint64_t)SIZE_MAX) return DQ_ERR_TOO_LARGE;
    *size = (size_t)s;
    return DQ_OK;
}

/* ---- encoder */
/* The header and k; f: the values' header fields (float32: bits 32, the rest 0; composed: M''s),
 * cs: the payload checksum follows. */
static inline void dq__sp_head(const dq__sp_cfg *c, const dq_params *p, const dq__cm_head *f, unsigned cs, size_t n,
                               size_t k, uint8_t *dst) {
    unsigned flags = (cs ? DQ_FLAG_CHECKSUM : 0u) | (c->rescale ? DQ_FLAG_RESCALED : 0u) |
                     (f->stochastic ? DQ_FLAG_STOCHASTIC : 0u);
    dq__put_header(dst, c->scheme, f->bits, f->coder, f->norm, flags, f->bucket, (uint64_t)n, p);
    dq__st64(dst + DQ__SP_K_OFF, (uint64_t)k);
}
static inline void dq__sp_finish(unsigned cs, uint8_t *dst, size_t size, size_t *len) {
    if (cs) dq__st32(dst + size - 4u, dq__body_crc(dst, size));
    *len = size;
}
/* The values' header fields of a message without quantized values: float32 values, or none
 * (a composed message with k = 0: the params' norm, rounding and bucket, coder 0). */
static inline void dq__sp_fields(const dq__sp_cfg *c, dq__cm_head *f) {
    memset(f, 0, sizeof *f);
    f->bits = c->bits ? c->bits : 32u;
    if (!c->bits) return;
    f->norm = c->lc.norm;
    f->stochastic = c->lc.stochastic;
    f->bucket = c->lc.bucket_wire;
}

/* Composed: the values part at dst + at, M' of the k >= 1 values w[] (FORMAT 20.10), written by
 * the QSGD encoder into dst[at - 48 .. lim), whose header lands on the 48 bytes before the
 * values (saved and put back). With `ef`, w[] then gets the decoded values, for the residual.
 * *f, *cs: M''s header fields and whether it ends in a checksum (which becomes the message's);
 * *vlen: the values part's bytes, that checksum included. */
static inline dq_status dq__sp_values_cm(const dq__sp_cfg *c, float *w, size_t k, uint8_t *dst, size_t at,
                                         size_t lim, int ef, dq__cm_head *f, unsigned *cs, size_t *vlen) {
    uint8_t keep[DQ_HEADER_SIZE], *m = dst + at - DQ_HEADER_SIZE;
    size_t len = 0, j;
    dq_status st;
    memcpy(keep, m, DQ_HEADER_SIZE);
    st = dq__cm_encode(&c->q, w, k, m, lim - (at - DQ_HEADER_SIZE), f, cs, &len);
    memcpy(m, keep, DQ_HEADER_SIZE);
    if (st != DQ_OK) return st;
    *vlen = len - DQ_HEADER_SIZE;
    if (ef) {
        dq__cm_reader rd;
        dq_header lh;
        dq__cfg lc;
        if (dq__cm_parse(f, dst + at, *vlen, k, &lh, &lc) != DQ_OK ||
            dq__cm_open(&rd, &lc, f->coder, f->bits, k, dst + at, 0) != DQ_OK)
            return DQ_ERR_CORRUPT; /* cannot happen: the QSGD encoder wrote it */
        for (j = 0; j < k; j++) w[j] = dq__cm_next(&rd);
    }
    return DQ_OK;
}

/* Random-k: the finiteness pass (residual untouched on failure), the values, then the
 * residual: e = c everywhere, minus the value sent (decoded, when composed) where one was.
 * Composed: the values are gathered at the end of dst first. */
static inline dq_status dq__sp_encode_randk(const dq__sp_cfg *c, const dq_params *p, dq__sp_src *src, size_t n,
                                            uint8_t *dst, size_t cap, size_t *len) {
    dq__sp_strata s;
    dq__cm_head f;
    uint8_t *vals = dst + DQ__SP_RAND_VALS;
    float *w = NULL;
    size_t above, j, k = c->k, i0, cnt, i = 0, top = 0, vlen = 4u * k;
    unsigned cs = c->cs;
    const float *x;
    float *e;
    dq_status st = dq__sp_count(src, n, DQ__SP_FIN, DQ__SP_MAXKEY, 0, NULL, &above);
    if (st != DQ_OK) return st;
    dq__sp_fields(c, &f);
    if (c->bits) { /* the values gathered 4-byte aligned, ending at most 3 bytes before dst + cap */
        top = cap - 4u * k;
        top -= (size_t)(((uintptr_t)(dst + top)) & 3u);
        w = (float *)(void *)(dst + top);
    }
    dq__sp_strata_init(&s, n, k, p->seed, p->step, p->stream);
    for (j = 0; j < k; j++) {
        float v = dq__sp_src_at(src, dq__sp_strata_next(&s, (uint32_t)j));
        if (c->rescale) v = v * (float)s.m;
        if (dq__sp_key(v) >= DQ__SP_FIN) return DQ_ERR_OVERFLOW; /* m c beyond FLT_MAX */
        if (w)
            w[j] = v;
        else
            dq__st32(vals + 4u * j, dq__fbits(v));
    }
    if (w && (st = dq__sp_values_cm(c, w, k, dst, DQ__SP_RAND_VALS, top, src->e != NULL, &f, &cs, &vlen)) != DQ_OK)
        return st;
    if (src->e) { /* the strata are in index order: walk them beside the chunks */
        dq__sp_strata_init(&s, n, k, p->seed, p->step, p->stream);
        j = 0;
        i = dq__sp_strata_next(&s, 0);
        for (i0 = 0; i0 < n; i0 += cnt) {
            cnt = dq__sp_src_get(src, i0, n, &x, &e);
            dq__k_compensate(x, e, cnt);
            for (; j < k && i < i0 + cnt; i = ++j < k ? dq__sp_strata_next(&s, (uint32_t)j) : n)
                e[i - i0] = e[i - i0] - (w ? w[j] : dq__bitsf(dq__ld32(vals + 4u * j)));
            dq__el_out(src->et, e, cnt, src->e, i0);
        }
    }
    dq__sp_head(c, p, &f, cs, n, k, dst);
    dq__sp_finish(cs, dst, DQ__SP_RAND_VALS + vlen + (w ? 0u : 4u * cs), len);
    return DQ_OK;
}

/* Top-k and threshold: plan (read-only), check the room for k, collect into the index list at
 * the end of dst, then the stream, and a last pass for the values and the residual of the kept
 * elements (a 16-bit residual is compensated there, chunk by chunk). Composed: the values are
 * gathered below the index list, quantized after the stream, and the last pass writes the whole
 * residual (the collecting pass leaves it alone, src->late, since quantizing can still fail). */
static inline dq_status dq__sp_encode_idx(dq__sp_cfg *c, const dq_params *p, dq__sp_src *src, size_t n, uint8_t *dst,
                                          size_t cap, size_t *len) {
    uint64_t w[DQ__SP_NB];
    dq__sp_cut cut;
    dq__cm_head f;
    uint32_t *idx;
    uint8_t *vals;
    float *vq = NULL; /* composed: the gathered, then decoded, values */
    size_t k, slen = 0, j = 0, top, i0, cnt, lim, vlen;
    unsigned cs = c->cs;
    const float *x;
    float *e;
    dq_status st;
    if (c->scheme == DQ_SCHEME_TOPK) {
        if (cap < dq__sp_room(c, c->k, n)) return DQ_ERR_DST_TOO_SMALL;
        if ((st = dq__sp_plan_topk(src, n, c->k, w, &cut)) != DQ_OK) return st;
    } else {
        size_t cnt_above = 0;
        cut.bhi = c->tkey;
        cut.blo = c->tkey + 1u; /* <= DQ__SP_FIN: a finite threshold */
        cut.r = 0;
        if ((st = dq__sp_count(src, n, cut.blo, cut.bhi, 0, NULL, &cnt_above)) != DQ_OK) return st;
        if (cap < dq__sp_room(c, cnt_above, n)) return DQ_ERR_DST_TOO_SMALL;
        c->k = cnt_above;
    }
    k = c->k;
    dq__sp_fields(c, &f);
    /* the index list: 4-byte aligned, ending at most 3 bytes before dst + cap */
    top = cap - 4u * k;
    top -= (size_t)(((uintptr_t)(dst + top)) & 3u);
    idx = (uint32_t *)(void *)(dst + top);
    lim = top;
    if (c->bits) { /* composed: the values below the list; the residual in the last pass */
        lim = top - 4u * k;
        vq = (float *)(void *)(dst + lim);
        src->late = 1;
    }
    dq__sp_select(src, n, k, &cut, idx, w);
    /* the stream ends before the list (the room has 4 spare bytes), the values trail it */
    st = dq_index_encode(idx, k, (uint64_t)n, c->coder, dst + DQ__SP_STREAM, lim - DQ__SP_STREAM, &slen);
    if (st != DQ_OK) return st; /* cannot happen: the room bounds the stream */
    vals = dst + DQ__SP_STREAM + slen;
    if (c->bits) {
        vlen = 0;
        if (k) {
            for (j = 0; j < k; j++) vq[j] = dq__sp_src_at(src, idx[j]); /* c = x + e, as compensated below */
            st = dq__sp_values_cm(c, vq, k, dst, DQ__SP_STREAM + slen, lim, src->e != NULL, &f, &cs, &vlen);
            if (st != DQ_OK) return st;
        }
        for (i0 = 0, j = 0; i0 < n && src->e; i0 += cnt) { /* e = c, minus the decoded value where sent */
            cnt = dq__sp_src_get(src, i0, n, &x, &e);
            dq__k_compensate(x, e, cnt);
            for (; j < k && idx[j] < i0 + cnt; j++) e[idx[j] - i0] = e[idx[j] - i0] - vq[j];
            dq__el_out(src->et, e, cnt, src->e, i0);
        }
    } else {
        for (i0 = 0; i0 < n && (src->e || j < k); i0 += cnt) {
            cnt = dq__sp_src_get(src, i0, n, &x, &e);
            if (e && !src->flt) dq__k_compensate(x, e, cnt); /* the collecting pass did it for floats */
            for (; j < k && idx[j] < i0 + cnt; j++) { /* value j lands at or below idx[j], which was read first */
                size_t i = idx[j] - i0;
                float v = e ? e[i] : x[i];
                if (e) e[i] = v - v; /* sent exactly: nothing left over */
                dq__st32(vals + 4u * j, dq__fbits(v));
            }
            if (e) dq__el_out(src->et, e, cnt, src->e, i0);
        }
        vlen = 4u * k + 4u * cs;
    }
    dq__sp_head(c, p, &f, cs, n, k, dst);
    dq__st64(dst + DQ__SP_LEN_OFF, (uint64_t)slen);
    dq__sp_finish(cs, dst, DQ__SP_STREAM + slen + vlen + (c->bits && !k ? 4u * cs : 0u), len);
    return DQ_OK;
}

static inline dq_status dq__sp_encode(const dq_params *p, dq_dtype xt, const void *x, size_t n, dq_dtype rt,
                                      void *residual, void *dst_v, size_t cap, size_t *len) {
    uint8_t *dst = (uint8_t *)dst_v;
    dq__sp_cfg c;
    dq__sp_src src;
    dq_status st;
    if (!x || !dst) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if ((st = dq__sp_cfg_make(p, n, &c)) != DQ_OK) return st;
    dq__sp_src_init(&src, xt, x, rt, residual);
    if (c.scheme == DQ_SCHEME_RANDK) {
        if (cap < dq__sp_room(&c, c.k, n)) return DQ_ERR_DST_TOO_SMALL;
        return dq__sp_encode_randk(&c, p, &src, n, dst, cap, len);
    }
    return dq__sp_encode_idx(&c, p, &src, n, dst, cap, len);
}

/* ---- header (FORMAT 20.6 steps 1 to 6). A composed message's values part is sized as the body
 * of M' (count k), and *c gets M''s configuration, which the decoder reads its values with. */
static inline dq_status dq__sp_header(const uint8_t *in, size_t src_len, uint64_t count, dq_header *h, dq__cfg *c) {
    uint64_t n, k, size, pay, at, cs = (h->flags & DQ_FLAG_CHECKSUM) ? 4u : 0u;
    unsigned ok_flags = DQ_FLAG_CHECKSUM | (h->scheme == DQ_SCHEME_RANDK ? DQ_FLAG_RESCALED : 0u);
    int cm = dq__cm_bits(h->bits);
    if (dq__count_set(count, h) != DQ_OK) return DQ_ERR_TOO_LARGE;
    n = h->count;
    if (cm) { /* M''s fields: as for QSGD, but only a coder encoders send (not coder 2) */
        if (!dq__coder_part_ok(h->coder, h->bits) || !dq__norm_ok(DQ_SCHEME_QSGD, in[DQ__H_NORM]) ||
            h->bucket % 8u != 0 || (h->flags & ~(ok_flags | DQ_FLAG_STOCHASTIC)) || n > DQ__SP_MAX_N)
            return DQ_ERR_CORRUPT;
    } else if (h->bits != 32u || h->coder != DQ_CODER_FIXED || in[DQ__H_NORM] != 0 || h->bucket != 0 ||
               (h->flags & ~ok_flags) || n > DQ__SP_MAX_N) {
        return DQ_ERR_CORRUPT;
    }
    if (src_len < DQ__SP_K_OFF + 8u) return DQ_ERR_TRUNCATED;
    k = dq__ld64(in + DQ__SP_K_OFF);
    if (k > n || (k == 0 && (h->scheme != DQ_SCHEME_THRESHOLD || h->coder != DQ_CODER_FIXED))) return DQ_ERR_CORRUPT;
    if (h->scheme == DQ_SCHEME_RANDK) {
        pay = 0;
        at = DQ__SP_RAND_VALS;
    } else {
        if (src_len < DQ__SP_STREAM) return DQ_ERR_TRUNCATED;
        pay = dq__ld64(in + DQ__SP_LEN_OFF);
        if (pay < DQ_INDEX_HEADER_SIZE || pay > dq__sp_ibound_any(k, n)) return DQ_ERR_CORRUPT;
        at = DQ__SP_STREAM + pay;
    }
    if (cm && k) { /* the values part: the body of M' */
        dq__cm_head f;
        dq_header lh;
        dq_status st;
        f.bits = h->bits;
        f.coder = h->coder;
        f.norm = in[DQ__H_NORM];
        f.stochastic = (h->flags & DQ_FLAG_STOCHASTIC) != 0;
        f.bucket = h->bucket;
        st = dq__cm_parse(&f, in + (src_len > at ? at : src_len), src_len > at ? (size_t)(src_len - at) : 0u, (size_t)k,
                          &lh, c);
        if (st != DQ_OK) return st;
        pay += lh.msg_size - DQ_HEADER_SIZE;
    } else if (!cm) {
        pay += 4u * k;
    }
    size = (h->scheme == DQ_SCHEME_RANDK ? DQ__SP_RAND_VALS : DQ__SP_STREAM) + pay + cs;
    if (size > (uint64_t)SIZE_MAX) return DQ_ERR_TOO_LARGE;
    h->nnz = (size_t)k;
    h->payload_size = (size_t)pay;
    h->msg_size = (size_t)size;
    return DQ_OK;
}

/* ---- decoder: an index stream walked in chunks, so it can be validated in full before the
 * output is touched and then decoded again, without a buffer of k indices. The checks are
 * those of dq_index_decode (FORMAT 18.6). */
typedef struct dq__sp_it {
    dq__ihead h;
    size_t done;     /* indices produced */
    int end;         /* the stream is exhausted (and was found valid) */
    dq_bitreader r;  /* GAMMA, RICE */
    uint64_t next;   /* GAMMA, RICE: the smallest index still allowed */
    unsigned rp;     /* RICE: the parameter */
    size_t cpos, dpos, dlen; /* VARINT: control byte, data byte, data length; BITMAP: cpos = byte */
    dq__svb_acc a;
} dq__sp_it;

static inline dq_status dq__sp_it_open(dq__sp_it *it, const uint8_t *s, size_t len, uint64_t n, size_t k) {
    memset(it, 0, sizeof *it);
    if (dq__index_head(s, len, &it->h) != DQ_OK || it->h.n != n || it->h.k != k) return DQ_ERR_CORRUPT;
    it->end = k == 0 && it->h.coder != DQ_INDEX_BITMAP;
    if (it->h.coder == DQ_INDEX_GAMMA) {
        if (dq_br_init(&it->r, it->h.body, it->h.body_len) != DQ_OK) return DQ_ERR_CORRUPT;
        if (k == 0 && it->h.body_len) return DQ_ERR_CORRUPT; /* a trailing byte */
    } else if (it->h.coder == DQ_INDEX_RICE) {
        it->rp = it->h.body[0];
        if (it->rp > dq__rice_rmax(n) || dq_br_init(&it->r, it->h.body + 1, it->h.body_len - 1u) != DQ_OK)
            return DQ_ERR_CORRUPT;
        if (k == 0 && it->h.body_len != 1u) return DQ_ERR_CORRUPT; /* a trailing byte */
    } else if (it->h.coder == DQ_INDEX_VARINT) {
        size_t clen = (size_t)dq__index_ctrl_len(k), i;
        const uint8_t *ctrl = it->h.body;
        uint64_t dlen = k;
        if (k % 4u && ctrl[clen - 1u] >> (2u * (k % 4u))) return DQ_ERR_CORRUPT;
        for (i = 0; i < clen; i++)
            dlen += (ctrl[i] & 3u) + (ctrl[i] >> 2 & 3u) + (ctrl[i] >> 4 & 3u) + (ctrl[i] >> 6);
        if ((uint64_t)it->h.body_len - clen != dlen) return DQ_ERR_CORRUPT;
        it->dlen = (size_t)dlen;
        it->a.prev = 0xFFFFFFFFu;
    } else {
        size_t blen = (size_t)((n + 7u) / 8u);
        unsigned tail = (unsigned)(n % 8u);
        if (it->h.body_len != blen || (tail && it->h.body[blen - 1u] >> tail)) return DQ_ERR_CORRUPT;
    }
    return DQ_OK;
}

/* Up to DQ__SP_CHUNK indices into buf; *cnt how many. DQ_ERR_CORRUPT for any invalid stream. */
static inline dq_status dq__sp_it_next(dq__sp_it *it, uint32_t *buf, size_t *cnt) {
    size_t got = 0, k = it->h.k;
    if (it->h.coder == DQ_INDEX_GAMMA) {
        dq_bitreader *r = &it->r;
        while (got < DQ__SP_CHUNK && it->done < k) {
            uint64_t g;
            unsigned m;
            if (r->n < 40) dq__br_refill(r);
            m = r->acc ? 2u * dq__clz64(r->acc) + 1u : 129u;
            if (m <= r->n) {
                g = r->acc >> (64u - m);
                r->acc <<= m;
                r->n -= m;
            } else if (dq__gamma_get(r, &g) != DQ_OK) {
                return DQ_ERR_CORRUPT;
            }
            if (g > it->h.n - it->next) return DQ_ERR_CORRUPT;
            it->next += g;
            buf[got++] = (uint32_t)(it->next - 1u);
            it->done++;
        }
        if (it->done == k) {
            if (dq_br_finish(r) != DQ_OK) return DQ_ERR_CORRUPT;
            it->end = 1;
        }
    } else if (it->h.coder == DQ_INDEX_RICE) {
        uint64_t v;
        while (got < DQ__SP_CHUNK && it->done < k) {
            if (dq__rice_get(&it->r, it->rp, it->h.n, it->next, &v) != DQ_OK) return DQ_ERR_CORRUPT;
            it->next += v + 1u;
            buf[got++] = (uint32_t)(it->next - 1u);
            it->done++;
        }
        if (it->done == k) {
            if (dq_br_finish(&it->r) != DQ_OK) return DQ_ERR_CORRUPT;
            it->end = 1;
        }
    } else if (it->h.coder == DQ_INDEX_VARINT) {
        const uint8_t *ctrl = it->h.body + it->cpos, *data = it->h.body + (size_t)dq__index_ctrl_len(k);
        size_t c, i;
        got = k - it->done < DQ__SP_CHUNK ? k - it->done : DQ__SP_CHUNK;
        dq__k_svb_decode(ctrl, data + it->dpos, it->dlen - it->dpos, got, buf, &it->a);
        c = (got + 3u) / 4u;
        for (i = 0; i < c; i++) /* data bytes of these groups (a partial group is the last) */
            it->dpos += 4u + (ctrl[i] & 3u) + (ctrl[i] >> 2 & 3u) + (ctrl[i] >> 4 & 3u) + (ctrl[i] >> 6);
        it->cpos += c;
        it->done += got;
        if (it->done == k) {
            if (it->a.bad || it->a.sum > it->h.n - k) return DQ_ERR_CORRUPT;
            it->end = 1;
        }
    } else {
        const uint8_t *b = it->h.body;
        size_t blen = it->h.body_len;
        while (it->cpos < blen && got + 64u <= DQ__SP_CHUNK) {
            uint64_t w = 0;
            size_t j, nb = blen - it->cpos < 8u ? blen - it->cpos : 8u;
            uint32_t base = (uint32_t)(it->cpos * 8u);
            for (j = nb; j-- > 0;) w = w << 8 | b[it->cpos + j];
            if (dq__popcount64(w) > k - it->done) return DQ_ERR_CORRUPT;
            for (; w; w &= w - 1u) {
                buf[got++] = base + dq__ctz64(w);
                it->done++;
            }
            it->cpos += nb;
        }
        if (it->cpos == blen) {
            if (it->done != k) return DQ_ERR_CORRUPT;
            it->end = 1;
        }
    }
    *cnt = got;
    return DQ_OK;
}

/* out[i] = v, or += w v, for out of dtype t. */
static inline void dq__sp_apply(dq_dtype t, void *out, size_t i, float v, float w, int add) {
    if (add) {
        float wv = w * v;
        v = (t == DQ_F32 ? ((float *)out)[i] : dq__el_get(t, out, i)) + wv;
    }
    if (t == DQ_F32)
        ((float *)out)[i] = v;
    else
        dq__el_set(t, out, i, v);
}

/* Values: k finite float32 (DQ_ERR_CORRUPT otherwise). */
static inline dq_status dq__sp_vals_ok(const uint8_t *v, size_t k) {
    size_t j;
    uint32_t bad = 0;
    for (j = 0; j < k; j++) bad |= (uint32_t)((dq__ld32(v + 4u * j) & DQ__ABS_MASK) >= DQ__SP_FIN);
    return bad ? DQ_ERR_CORRUPT : DQ_OK;
}

/* The values of a message in index order: float32, or decoded from M' (composed). */
typedef struct dq__sp_vals {
    const uint8_t *f32; /* NULL: composed */
    size_t j;
    dq__cm_reader cm;
} dq__sp_vals;
static inline float dq__sp_val(dq__sp_vals *v) {
    return v->f32 ? dq__bitsf(dq__ld32(v->f32 + 4u * v->j++)) : dq__cm_next(&v->cm);
}

/* Decodes an opened message (FORMAT 20.6 step 7 on: the values, the index stream, then the
 * output); c: M''s configuration when composed. */
static inline dq_status dq__sp_decode(const uint8_t *msg, const dq_header *h, const dq__cfg *c, float w, int add,
                                      dq_dtype t, void *out) {
    size_t n = h->count, k = h->nnz, j, slen = 0, at = DQ__SP_RAND_VALS;
    dq__sp_vals v;
    if (h->scheme != DQ_SCHEME_RANDK) { /* checked with the header */
        slen = (size_t)dq__ld64(msg + DQ__SP_LEN_OFF);
        at = DQ__SP_STREAM + slen;
    }
    v.j = 0;
    v.f32 = dq__cm_bits(h->bits) ? NULL : msg + at;
    if (v.f32 ? dq__sp_vals_ok(v.f32, k) != DQ_OK : k && dq__cm_open(&v.cm, c, h->coder, h->bits, k, msg + at, 1) != DQ_OK)
        return DQ_ERR_CORRUPT;
    if (h->scheme == DQ_SCHEME_RANDK) {
        dq__sp_strata s;
        if (!add) memset(out, 0, n * dq_dtype_size(t)); /* +0 in every dtype */
        dq__sp_strata_init(&s, n, k, h->seed, h->step, h->stream);
        for (j = 0; j < k; j++) dq__sp_apply(t, out, dq__sp_strata_next(&s, (uint32_t)j), dq__sp_val(&v), w, add);
        return DQ_OK;
    } else {
        const uint8_t *stream = msg + DQ__SP_STREAM;
        uint32_t buf[DQ__SP_CHUNK];
        dq__sp_it it;
        int pass;
        for (pass = 0; pass < 2; pass++) { /* validate, then decode */
            size_t cnt = 0;
            if (dq__sp_it_open(&it, stream, slen, n, k) != DQ_OK) return DQ_ERR_CORRUPT;
            while (!it.end) {
                if (dq__sp_it_next(&it, buf, &cnt) != DQ_OK) return DQ_ERR_CORRUPT;
                if (pass)
                    for (j = 0; j < cnt; j++) dq__sp_apply(t, out, buf[j], dq__sp_val(&v), w, add);
            }
            if (!pass && !add) memset(out, 0, n * dq_dtype_size(t));
        }
        return DQ_OK;
    }
}
