/* ---------------------------------------------------------------- bit streams and Elias codes
 * The public bit writer and reader (MSB first; dq_bw_*, dq_br_*) and the Elias gamma, delta and
 * omega codes (dq_elias_*), on which the Elias coder (coder_elias.h) and the sparse index
 * streams (index.h) write and read. */

/* ---- bit scans: compiler builtins where present; the portable versions are tested against
 * them. x must be nonzero. */
static inline unsigned dq__clz64_portable(uint64_t x) {
    unsigned n = 0, s;
    for (s = 32; s > 0; s >>= 1)
        if (!(x >> (64u - s))) {
            n += s;
            x <<= s;
        }
    return n;
}
static inline unsigned dq__ctz64_portable(uint64_t x) {
    unsigned n = 0, s;
    for (s = 32; s > 0; s >>= 1)
        if (!(x << (64u - s))) {
            n += s;
            x >>= s;
        }
    return n;
}
#if defined(__GNUC__) || defined(__clang__)
static inline unsigned dq__clz64(uint64_t x) { return (unsigned)__builtin_clzll(x); }
static inline unsigned dq__ctz64(uint64_t x) { return (unsigned)__builtin_ctzll(x); }
#else
static inline unsigned dq__clz64(uint64_t x) { return dq__clz64_portable(x); }
static inline unsigned dq__ctz64(uint64_t x) { return dq__ctz64_portable(x); }
#endif
/* floor(log2 x), x >= 1 */
static inline unsigned dq__ilog2(uint64_t x) { return 63u - dq__clz64(x); }
static inline unsigned dq__popcount64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return (unsigned)__builtin_popcountll(x);
#else
    x = x - ((x >> 1) & 0x5555555555555555u);
    x = (x & 0x3333333333333333u) + ((x >> 2) & 0x3333333333333333u);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Fu;
    return (unsigned)((x * 0x0101010101010101u) >> 56);
#endif
}

/* big-endian 64-bit load, byte by byte (compilers fuse it into one load and a swap) */
static inline uint64_t dq__ldbe64(const uint8_t *p) {
    return (uint64_t)p[0] << 56 | (uint64_t)p[1] << 48 | (uint64_t)p[2] << 40 | (uint64_t)p[3] << 32 |
           (uint64_t)p[4] << 24 | (uint64_t)p[5] << 16 | (uint64_t)p[6] << 8 | (uint64_t)p[7];
}

/* ---- writer */
DQ_API dq_status dq_bw_init(dq_bitwriter *w, void *buf, size_t cap) {
    if (!w || (!buf && cap)) return DQ_ERR_NULL;
    w->buf = (uint8_t *)buf;
    w->cap = cap;
    w->pos = 0;
    w->acc = 0;
    w->n = 0;
    w->err = DQ_OK;
    return DQ_OK;
}
/* nbits <= 32: after it, fewer than 32 bits are pending. Bits above n in acc are stale and
 * fall off the top as later bits shift in. */
static inline void dq__bw_put32(dq_bitwriter *w, uint64_t value, unsigned nbits) {
    w->acc = w->acc << nbits | (value & (((uint64_t)1 << nbits) - 1u));
    w->n += nbits;
    if (w->n >= 32) {
        uint32_t word;
        w->n -= 32;
        word = (uint32_t)(w->acc >> w->n);
        if (w->pos <= w->cap && w->cap - w->pos >= 4) {
            uint8_t *p = w->buf + w->pos;
            p[0] = (uint8_t)(word >> 24);
            p[1] = (uint8_t)(word >> 16);
            p[2] = (uint8_t)(word >> 8);
            p[3] = (uint8_t)word;
        } else {
            w->err = w->err == DQ_OK ? DQ_ERR_DST_TOO_SMALL : w->err;
        }
        w->pos += 4;
    }
}
DQ_API void dq_bw_put(dq_bitwriter *w, uint64_t value, unsigned nbits) {
    if (nbits <= 32) {
        dq__bw_put32(w, value, nbits);
    } else if (nbits <= 64) {
        dq__bw_put32(w, value >> 32, nbits - 32u);
        dq__bw_put32(w, value, 32);
    } else if (w->err == DQ_OK) {
        w->err = DQ_ERR_PARAM;
    }
}
DQ_API uint64_t dq_bw_bits(const dq_bitwriter *w) { return (uint64_t)w->pos * 8u + w->n; }
DQ_API dq_status dq_bw_finish(dq_bitwriter *w, size_t *len) {
    if (!w || !len) return DQ_ERR_NULL;
    if (w->n) {
        uint64_t t = w->acc << (64u - w->n); /* pending bits at the top, zeros below */
        unsigned i, bytes = (w->n + 7u) / 8u;
        for (i = 0; i < bytes; i++, t <<= 8) {
            if (w->pos + i < w->cap)
                w->buf[w->pos + i] = (uint8_t)(t >> 56);
            else if (w->err == DQ_OK)
                w->err = DQ_ERR_DST_TOO_SMALL;
        }
        w->pos += bytes;
        w->n = 0;
    }
    if (w->pos > w->cap && w->err == DQ_OK) w->err = DQ_ERR_DST_TOO_SMALL;
    if (w->err != DQ_OK) return w->err;
    *len = w->pos;
    return DQ_OK;
}

/* ---- reader */
DQ_API dq_status dq_br_init(dq_bitreader *r, const void *src, size_t len) {
    if (!r || (!src && len)) return DQ_ERR_NULL;
    r->src = (const uint8_t *)src;
    r->len = len;
    r->pos = 0;
    r->acc = 0;
    r->n = 0;
    r->overrun = 0;
    return DQ_OK;
}
/* Top up to at least 56 valid bits (fewer only at the end of the stream). Call with n <= 56.
 * Fast path: one 8-byte load, whole bytes counted; the partial byte below is reloaded (same
 * bits) by the next refill. */
static inline void dq__br_refill(dq_bitreader *r) {
    if (r->len - r->pos >= 8) {
        unsigned bytes = (63u - r->n) >> 3;
        r->acc |= dq__ldbe64(r->src + r->pos) >> r->n;
        r->pos += bytes;
        r->n += 8u * bytes;
    } else {
        while (r->n <= 56 && r->pos < r->len) {
            r->acc |= (uint64_t)r->src[r->pos++] << (56u - r->n);
            r->n += 8;
        }
    }
}
static inline void dq__br_overrun(dq_bitreader *r) {
    r->overrun = 1;
    r->pos = r->len;
    r->acc = 0;
    r->n = 0;
}
/* nbits <= 56 */
static inline uint64_t dq__br_get56(dq_bitreader *r, unsigned nbits) {
    uint64_t v;
    if (r->n < nbits) {
        dq__br_refill(r);
        if (r->n < nbits) {
            dq__br_overrun(r);
            return 0;
        }
    }
    v = (r->acc >> 1) >> (63u - nbits); /* the top nbits; 0 for nbits = 0 */
    r->acc <<= nbits;
    r->n -= nbits;
    return v;
}
DQ_API uint64_t dq_br_get(dq_bitreader *r, unsigned nbits) {
    uint64_t hi;
    if (nbits <= 56) return dq__br_get56(r, nbits);
    if (nbits > 64) {
        dq__br_overrun(r);
        return 0;
    }
    hi = dq__br_get56(r, nbits - 32u);
    hi = hi << 32 | dq__br_get56(r, 32);
    return r->overrun ? 0 : hi;
}
DQ_API uint64_t dq_br_peek(dq_bitreader *r, unsigned nbits) {
    if (nbits > 56) {
        dq__br_overrun(r);
        return 0;
    }
    if (r->n < nbits) dq__br_refill(r);
    return (r->acc >> 1) >> (63u - nbits);
}
DQ_API void dq_br_skip(dq_bitreader *r, unsigned nbits) { (void)dq_br_get(r, nbits); }
DQ_API int dq_br_overrun(const dq_bitreader *r) { return r->overrun != 0; }
DQ_API uint64_t dq_br_bits_left(const dq_bitreader *r) { return (uint64_t)(r->len - r->pos) * 8u + r->n; }
DQ_API dq_status dq_br_finish(dq_bitreader *r) {
    uint64_t left;
    if (!r) return DQ_ERR_NULL;
    if (r->overrun) return DQ_ERR_TRUNCATED;
    left = dq_br_bits_left(r);
    if (left >= 8) return DQ_ERR_CORRUPT;
    return dq__br_get56(r, (unsigned)left) ? DQ_ERR_CORRUPT : DQ_OK;
}

/* ---- Elias codes */
DQ_API unsigned dq_elias_gamma_len(uint64_t k) { return k ? 2u * dq__ilog2(k) + 1u : 0u; }
DQ_API unsigned dq_elias_delta_len(uint64_t k) {
    unsigned L;
    if (!k) return 0;
    L = dq__ilog2(k);
    return L + dq_elias_gamma_len(L + 1u);
}
DQ_API unsigned dq_elias_omega_len(uint64_t k) {
    unsigned bits = 1;
    if (!k) return 0;
    while (k > 1) {
        unsigned L = dq__ilog2(k);
        bits += L + 1u;
        k = L;
    }
    return bits;
}

static inline void dq__gamma_put(dq_bitwriter *w, uint64_t k) {
    unsigned L = dq__ilog2(k);
    if (L < 32) {
        dq_bw_put(w, k, 2u * L + 1u); /* the L zeros are k's leading zeros */
    } else {
        dq_bw_put(w, 0, L);
        dq_bw_put(w, k, L + 1u);
    }
}
DQ_API dq_status dq_elias_gamma_put(dq_bitwriter *w, uint64_t k) {
    if (!w) return DQ_ERR_NULL;
    if (!k) return DQ_ERR_PARAM;
    dq__gamma_put(w, k);
    return DQ_OK;
}
DQ_API dq_status dq_elias_delta_put(dq_bitwriter *w, uint64_t k) {
    unsigned L;
    if (!w) return DQ_ERR_NULL;
    if (!k) return DQ_ERR_PARAM;
    L = dq__ilog2(k);
    dq__gamma_put(w, L + 1u);
    dq_bw_put(w, k, L); /* the low L bits: dq_bw_put drops the leading 1 */
    return DQ_OK;
}
DQ_API dq_status dq_elias_omega_put(dq_bitwriter *w, uint64_t k) {
    uint64_t g[8]; /* 2^64 - 1 has 4 groups: 64 bits, then 63, 5 and 2 */
    unsigned ng = 0;
    if (!w) return DQ_ERR_NULL;
    if (!k) return DQ_ERR_PARAM;
    while (k > 1) {
        g[ng++] = k;
        k = dq__ilog2(k);
    }
    while (ng > 0) {
        ng--;
        dq_bw_put(w, g[ng], dq__ilog2(g[ng]) + 1u);
    }
    dq_bw_put(w, 0, 1);
    return DQ_OK;
}

/* Count a run of zeros up to the first 1 and consume the zeros (not the 1). DQ_ERR_CORRUPT
 * once 64 zeros are seen, DQ_ERR_TRUNCATED if the stream ends first. */
static inline dq_status dq__br_zeros(dq_bitreader *r, unsigned *zeros) {
    unsigned z = 0;
    for (;;) {
        unsigned lz;
        if (r->n <= 56) dq__br_refill(r);
        if (r->n == 0) {
            dq__br_overrun(r);
            return DQ_ERR_TRUNCATED;
        }
        if ((r->acc >> (64u - r->n)) == 0) { /* all n valid bits are zero */
            z += r->n;
            r->acc = 0; /* bits below n are reloaded by the next refill */
            r->n = 0;
            if (z >= 64) return DQ_ERR_CORRUPT;
            continue;
        }
        lz = dq__clz64(r->acc); /* < n: a 1 lies among the valid bits */
        z += lz;
        if (z >= 64) return DQ_ERR_CORRUPT;
        r->acc <<= lz;
        r->n -= lz;
        *zeros = z;
        return DQ_OK;
    }
}
/* gamma value at most 2^64 - 1 */
static inline dq_status dq__gamma_get(dq_bitreader *r, uint64_t *k) {
    unsigned z = 0;
    uint64_t v;
    dq_status st;
    if (r->overrun) return DQ_ERR_TRUNCATED;
    st = dq__br_zeros(r, &z);
    if (st != DQ_OK) return st;
    v = dq_br_get(r, z + 1u);
    if (r->overrun) return DQ_ERR_TRUNCATED;
    *k = v;
    return DQ_OK;
}
DQ_API dq_status dq_elias_gamma_get(dq_bitreader *r, uint64_t *k) {
    if (!r || !k) return DQ_ERR_NULL;
    return dq__gamma_get(r, k);
}
DQ_API dq_status dq_elias_delta_get(dq_bitreader *r, uint64_t *k) {
    uint64_t n1, low;
    dq_status st;
    if (!r || !k) return DQ_ERR_NULL;
    st = dq__gamma_get(r, &n1); /* L + 1 */
    if (st != DQ_OK) return st;
    if (n1 > 64) return DQ_ERR_CORRUPT;
    low = dq_br_get(r, (unsigned)n1 - 1u);
    if (r->overrun) return DQ_ERR_TRUNCATED;
    *k = (uint64_t)1 << (n1 - 1u) | low;
    return DQ_OK;
}
DQ_API dq_status dq_elias_omega_get(dq_bitreader *r, uint64_t *k) {
    uint64_t v = 1;
    if (!r || !k) return DQ_ERR_NULL;
    if (r->overrun) return DQ_ERR_TRUNCATED;
    for (;;) {
        uint64_t rest;
        if (dq__br_get56(r, 1) == 0) {
            if (r->overrun) return DQ_ERR_TRUNCATED;
            *k = v;
            return DQ_OK;
        }
        if (v >= 64) return DQ_ERR_CORRUPT; /* the group would be v + 1 > 64 bits */
        rest = dq_br_get(r, (unsigned)v);
        if (r->overrun) return DQ_ERR_TRUNCATED;
        v = (uint64_t)1 << v | rest;
    }
}

