/* ---------------------------------------------------------------- coded messages: encoding */

/* Symbol counts of a fixed payload (b <= 8), as the rANS coder groups it. */
/* The symbol counts (FORMAT 17.3) of blocks [k0, k1) of a fixed payload; for b in {1, 2, 4, 8}
 * of its bytes [f0, f1) (the same symbols: f0 = k0's first byte, f1 its last byte + 1). */
static inline void dq__sym_count(unsigned b, size_t n, const uint8_t *payload, size_t k0, size_t k1, size_t f0,
                                 size_t f1, uint64_t *cnt) {
    unsigned A = 1u << dq__sym_bits(b), s;
    memset(cnt, 0, A * sizeof *cnt);
    if (dq__sym_bytes(b)) {
        uint32_t c8[8][256]; /* eight tables: no store-to-load chain on repeats; 2^27 counts each at most */
        size_t i = f0, end;
        unsigned t;
        while (i < f1) {
            end = f1 - i > ((size_t)1 << 30) ? i + ((size_t)1 << 30) : f1;
            memset(c8, 0, sizeof c8);
            for (; i + 8u <= end; i += 8) {
                uint64_t w = dq__ld64(payload + i);
                c8[0][w & 255u]++;
                c8[1][(w >> 8) & 255u]++;
                c8[2][(w >> 16) & 255u]++;
                c8[3][(w >> 24) & 255u]++;
                c8[4][(w >> 32) & 255u]++;
                c8[5][(w >> 40) & 255u]++;
                c8[6][(w >> 48) & 255u]++;
                c8[7][w >> 56]++;
            }
            for (; i < end; i++) c8[0][payload[i]]++;
            for (s = 0; s < A; s++)
                for (t = 0; t < 8u; t++) cnt[s] += c8[t][s];
        }
    } else {
        uint8_t sym[DQ__BLOCK];
        size_t k, m, i;
        for (k = k0; k < k1; k++) {
            m = dq__block_syms(b, n, payload, k, sym);
            for (i = 0; i < m; i++) cnt[sym[i]]++;
        }
    }
}

/* Bytes of fixed payload in blocks 0..k. */
static inline size_t dq__fixed_through(unsigned b, size_t n, size_t k) {
    uint64_t end = (uint64_t)(k + 1u) * DQ__BLOCK < n ? (uint64_t)(k + 1u) * DQ__BLOCK : n;
    return (size_t)((end * b + 7u) / 8u);
}

/* ---- coder 1 (Elias): sizing and encoding from the block scan (dq__k_elias_scan) */

/* Per message: om[L], the Elias omega length of every k with floor(log2 k) = L (it depends on
 * nothing else), and lvt, the scan's sign-and-level bits by bit length. */
typedef struct dq__elias_tabs {
    uint8_t om[64], lvt[16];
} dq__elias_tabs;
static inline void dq__elias_tabs_make(dq__elias_tabs *t) {
    unsigned L;
    for (L = 0; L < 64; L++) t->om[L] = (uint8_t)dq_elias_omega_len((uint64_t)1 << L);
    t->lvt[0] = 0;
    for (L = 1; L < 16; L++) t->lvt[L] = (uint8_t)(1u + t->om[L - 1u]);
}
/* The codes of block k and their scan; UINT32_MAX on a negative zero. */
static inline uint32_t dq__elias_block(unsigned b, size_t n, const uint8_t *payload, size_t k, const dq__elias_tabs *t,
                                       uint32_t *codes, uint64_t *nz) {
    size_t cnt = n - k * DQ__BLOCK < DQ__BLOCK ? n - k * DQ__BLOCK : DQ__BLOCK;
    if (cnt == DQ__BLOCK) return dq__k_elias_scan(payload + k * DQ__BLOCK_BYTES(b), b, t->lvt, codes, nz);
    dq__unpack_tail(payload + k * DQ__BLOCK_BYTES(b), cnt, b, codes);
    return dq__elias_scan_codes(codes, cnt, b, t->lvt, nz);
}

/* The gap bits (omega(i - i_prev) of every non-zero) of a stream of 64-element masks, without
 * visiting the non-zeros: t[k] of a word marks the elements that have a non-zero at distance
 * 1 .. 2^k - 1 before them, built by doubling with the previous word's; omega steps up with
 * floor(log2 gap) only, so each non-zero's bits are om[0] plus the steps of the powers of two
 * its gap reaches. Gaps of 64 or more (at most the first non-zero of a word) are measured. */
typedef struct dq__gaps {
    uint64_t prev;    /* the previous word's mask */
    uint64_t near[5]; /* the previous word's t[1..5] (dq__gaps_word) */
    uint64_t last;    /* 1 + index of the last non-zero so far (0: none, the virtual one at -1) */
    uint64_t bits;    /* gap bits so far */
    uint64_t nnz;
} dq__gaps;
static inline void dq__gaps_init(dq__gaps *g) {
    memset(g, 0, sizeof *g);
    g->prev = (uint64_t)1 << 63; /* index -1 counts as a non-zero: the first gap is its index + 1 */
}
static inline void dq__gaps_word(dq__gaps *g, uint64_t m, uint64_t base, const uint8_t *om) {
    uint64_t p = g->prev, t[7];
    unsigned c = dq__popcount64(m), k;
    uint64_t bits = (uint64_t)c * om[0];
    t[1] = (m << 1) | (p >> 63); /* t[k]: a non-zero at distance 1 .. 2^k - 1 before */
    t[2] = t[1] | (t[1] << 2) | (g->near[0] >> 62) | (m << 2) | (p >> 62);
    t[3] = t[2] | (t[2] << 4) | (g->near[1] >> 60) | (m << 4) | (p >> 60);
    t[4] = t[3] | (t[3] << 8) | (g->near[2] >> 56) | (m << 8) | (p >> 56);
    t[5] = t[4] | (t[4] << 16) | (g->near[3] >> 48) | (m << 16) | (p >> 48);
    t[6] = t[5] | (t[5] << 32) | (g->near[4] >> 32) | (m << 32) | (p >> 32);
    for (k = 1; k <= 6; k++) bits += (uint64_t)(om[k] - om[k - 1u]) * dq__popcount64(m & ~t[k]);
    if (m & ~t[6]) { /* the lowest non-zero, 64 or more after the last one */
        uint64_t at = base + dq__ctz64(m) + 1u;
        bits += (uint64_t)om[dq__ilog2(at - g->last)] - om[6];
    }
    for (k = 0; k < 5; k++) g->near[k] = t[k + 1u];
    if (m) g->last = base + 64u - dq__clz64(m);
    g->prev = m;
    g->bits += bits;
    g->nnz += c;
}

/* The early-stop pass of Elias sizing over nblk full blocks from `in` (b >= 2): the non-zero
 * masks (dq__k_elias_nz) and, per 64-element word, the counts behind dq__gaps_word's bits
 * without its last term (a gap of 64 or more is charged as 64 .. 127): cnt[0] += the non-zeros,
 * cnt[k] += those with no other within 2^k - 1 before (k = 1 .. 6), so that
 * om[0] cnt[0] + sum (om[k] - om[k - 1]) cnt[k] is a lower bound on their gap bits. st carries
 * the previous word's mask and its t[1..5] (st[0], st[1..5]) from call to call. */
static inline void dq__elias_gaps__scalar(const uint8_t *in, unsigned b, size_t nblk, uint64_t *st, uint64_t *cnt) {
    uint64_t nz[4], t[7];
    size_t k;
    unsigned w, j;
    for (k = 0; k < nblk; k++) {
        dq__k_elias_nz(in + k * DQ__BLOCK_BYTES(b), b, nz);
        for (w = 0; w < 4; w++) {
            uint64_t m = nz[w], p = st[0];
            t[1] = (m << 1) | (p >> 63);
            for (j = 2; j <= 6; j++) {
                unsigned h = 1u << (j - 1u);
                t[j] = t[j - 1u] | (t[j - 1u] << h) | (st[j - 1u] >> (64u - h)) | (m << h) | (p >> (64u - h));
            }
            cnt[0] += dq__popcount64(m);
            for (j = 1; j <= 6; j++) cnt[j] += dq__popcount64(m & ~t[j]);
            for (j = 1; j <= 5; j++) st[j] = t[j];
            st[0] = m;
        }
    }
}

/* The lower bound on gap bits behind dq__elias_gaps__scalar's counts. */
static inline uint64_t dq__gaps_lb(const uint64_t *cnt, const uint8_t *om) {
    uint64_t gb = (uint64_t)om[0] * cnt[0];
    unsigned k;
    for (k = 1; k <= 6; k++) gb += (uint64_t)(om[k] - om[k - 1u]) * cnt[k];
    return gb;
}
/* Whether a gap-bits lower bound gb over cnt0 of the lv[1] non-zeros, plus the sign and level
 * bits lv[0] and one bit per other gap, already exceeds `limit` bytes. */
static inline int dq__elias_over(uint64_t gb, uint64_t cnt0, const uint64_t *lv, uint64_t limit) {
    return lv[1] >= cnt0 && (gb + lv[0] + (lv[1] - cnt0)) / 8u > limit;
}

/* Exact payload bytes of the Elias layout of a fixed payload (b >= 2), and the working room an
 * in-place re-code needs: the stream may not run ahead of the fixed blocks not yet read, and
 * the result must fit. Returns 0 when a code is a negative zero (sign set, level 0), which the
 * layout cannot express (encoders never write one). With lv (the sign and level bits of the
 * whole payload, from its symbol counts), a first pass over the non-zero masks alone (every 64
 * full blocks, dq__k_elias_gaps) returns -1 as soon as a lower bound on the gap bits so far plus
 * lv[0] and one bit per remaining gap exceed `limit` bytes: Elias cannot be smaller, and any
 * sound bound leaves the choice as it was (on dense payloads it ends there, early). */
static inline int dq__elias_stats(unsigned b, size_t n, const uint8_t *payload, unsigned crc, const uint64_t *lv,
                                  uint64_t limit, uint64_t *bytes, uint64_t *room, uint64_t *nonzeros) {
    uint32_t codes[DQ__BLOCK], bl;
    uint64_t nz[4], lvbits = 0, pre;
    size_t k, nblk = (n + DQ__BLOCK - 1u) / DQ__BLOCK;
    int64_t worst = INT64_MIN, r1, r2;
    unsigned w;
    dq__elias_tabs t;
    dq__gaps g;
    dq__elias_tabs_make(&t);
    if (lv) { /* the early stop needs only a bound on the gaps: a pass over the masks first */
        uint64_t st[6] = {(uint64_t)1 << 63, 0, 0, 0, 0, 0}, cnt[7] = {0, 0, 0, 0, 0, 0, 0};
        size_t full = n / DQ__BLOCK;
        for (k = 0; k + 64u <= full; k += 64u) {
            dq__k_elias_gaps(payload + k * DQ__BLOCK_BYTES(b), b, 64u, st, cnt);
            if (dq__elias_over(dq__gaps_lb(cnt, t.om), cnt[0], lv, limit)) return -1;
        }
    }
    dq__gaps_init(&g);
    for (k = 0; k < nblk; k++) {
        if ((bl = dq__elias_block(b, n, payload, k, &t, codes, nz)) == UINT32_MAX) return 0;
        lvbits += bl;
        for (w = 0; w < 4; w++) dq__gaps_word(&g, nz[w], (uint64_t)k * DQ__BLOCK + 64u * w, t.om);
        r1 = (int64_t)(lvbits + g.bits) - 8 * (int64_t)dq__fixed_through(b, n, k);
        if (r1 > worst) worst = r1;
    }
    pre = dq_elias_omega_len(g.nnz + 1u);
    *nonzeros = g.nnz;
    *bytes = (pre + lvbits + g.bits + 7u) / 8u;
    r1 = ((int64_t)pre + worst + 7) / 8 + 8;
    r2 = (int64_t)*bytes - (int64_t)dq__fixed_through(b, n, nblk - 1u) + 8 + (int64_t)crc;
    r1 = r1 > r2 ? r1 : r2;
    *room = r1 > 8 ? (uint64_t)r1 : 8u; /* the payload moves past the scales' new place */
    return 1;
}

/* Writes the Elias layout of the fixed payload, which has nnz non-zero codes (from
 * dq__elias_stats), at out[0..cap). In place, the payload lies at out + pay and the writer
 * never stores into blocks not yet read. Returns the bytes written, 0 if they did not fit. */
static inline size_t dq__elias_encode(unsigned b, size_t n, const uint8_t *payload, uint64_t nnz, uint8_t *out,
                                      size_t cap, int inplace, size_t pay) {
    uint32_t codes[DQ__BLOCK], smax = (1u << (b - 1u)) - 1u;
    uint64_t nz[4], last = 0, m;
    size_t k, nblk = (n + DQ__BLOCK - 1u) / DQ__BLOCK, len = 0;
    unsigned w;
    dq__elias_tabs t;
    dq_bitwriter bw;
    dq__elias_tabs_make(&t);
    memset(&bw, 0, sizeof bw);
    dq_bw_init(&bw, out, inplace ? pay : cap);
    dq_elias_omega_put(&bw, nnz + 1u);
    for (k = 0; k < nblk; k++) {
        if (dq__elias_block(b, n, payload, k, &t, codes, nz) == UINT32_MAX) return 0;
        if (inplace) bw.cap = pay + dq__fixed_through(b, n, k); /* block k is now free */
        for (w = 0; w < 4; w++)
            for (m = nz[w]; m; m &= m - 1u) {
                unsigned i = 64u * w + dq__ctz64(m);
                uint64_t at = (uint64_t)k * DQ__BLOCK + i + 1u;
                dq_elias_omega_put(&bw, at - last);
                dq_bw_put(&bw, codes[i] >> (b - 1u), 1);
                dq_elias_omega_put(&bw, codes[i] & smax);
                last = at;
            }
    }
    bw.cap = cap;
    return dq_bw_finish(&bw, &len) == DQ_OK ? len : 0u;
}

/* What the coders would cost for the fixed payload of a message, and the one to send. */
typedef struct dq__plan {
    unsigned coder;   /* the choice */
    uint64_t size[4]; /* payload bytes per coder id (coded ones include the 8-byte length); 0 = n/a */
    uint32_t f[256];  /* rANS frequencies */
    size_t table;     /* rANS table bytes */
    uint64_t room[4]; /* working room an in-place re-code needs beyond the fixed message */
    uint64_t nnz;     /* Elias: the non-zero codes, counted while sizing it */
} dq__plan;

/* Sets the coder byte of a message header and its CRC. */
static inline void dq__header_coder(uint8_t *msg, unsigned coder) {
    msg[DQ__H_CODER] = (uint8_t)coder;
    dq__st32(msg + DQ__H_CRC, dq__crc32c(msg, DQ__H_CRC));
}

/* ---- coder 3 (rANS, 32 states, chunks): sizing and in-place encoding */

/* Where chunk ci of an n-element message lies in the fixed payload: blocks [k0, k1), bytes
 * [f0, f1). */
typedef struct dq__r32_span {
    size_t k0, k1, f0, f1;
} dq__r32_span;
static inline dq__r32_span dq__r32_chunk_span(unsigned b, size_t n, size_t ci) {
    size_t E = dq__r32_chunk_elems(b), e0 = ci * E, e1 = n - e0 > E ? e0 + E : n, cb = dq__r32_chunk_bytes(b);
    size_t fixed = (size_t)(((uint64_t)n * b + 7u) / 8u);
    dq__r32_span s;
    s.k0 = e0 / DQ__BLOCK;
    s.k1 = (e1 + DQ__BLOCK - 1u) / DQ__BLOCK;
    s.f0 = ci * cb;
    s.f1 = fixed - s.f0 > cb ? s.f0 + cb : fixed;
    return s;
}

/* The symbols of chunk ci as one stream at the end of buf[0..cap) (dq__r32_encode): the payload
 * bytes themselves for b in {1, 2, 4, 8}; otherwise block by block from the last, the states
 * carried (every block starts a group of 32 symbols). Returns its size, 0 if it did not fit. */
static inline size_t dq__r32_chunk_encode(unsigned b, size_t n, const uint8_t *payload, size_t ci,
                                          const dq__r32_esym *et, uint8_t *buf, size_t cap) {
    dq__r32_span sp = dq__r32_chunk_span(b, n, ci);
    size_t k, w = cap;
    uint32_t x[DQ__R32_WAYS];
    uint8_t sym[DQ__BLOCK];
    unsigned j;
    if (dq__sym_bytes(b)) return dq__r32_encode(payload + sp.f0, sp.f1 - sp.f0, et, buf, cap);
    for (j = 0; j < DQ__R32_WAYS; j++) x[j] = DQ__R32_L;
    for (k = sp.k1; k-- > sp.k0;) {
        size_t m = dq__block_syms(b, n, payload, k, sym);
        if (!dq__r32_put_range(x, sym, m, 0, et, buf, &w)) return 0;
    }
    return dq__r32_put_states(x, buf, w, cap);
}

/* The cost bounds of every symbol (1/65536 bit, the step slack included). */
static inline void dq__r32_costs(const uint32_t *f, unsigned A, uint64_t *cost) {
    unsigned s;
    for (s = 0; s < A; s++) cost[s] = dq__rans_cost_ub(f[s] ? f[s] : 1u) + DQ__RANS_STEP_SLACK;
}
/* Upper bound on chunk ci's stream from its symbols' costs: 8 L <= 1024 + sum of costs. */
static inline uint64_t dq__r32_chunk_ub(unsigned b, size_t n, const uint8_t *payload, size_t ci, const uint64_t *cost) {
    uint8_t sym[DQ__BLOCK];
    dq__r32_span sp = dq__r32_chunk_span(b, n, ci);
    size_t k, i, m;
    uint64_t bits = 0;
    for (k = sp.k0; k < sp.k1; k++) {
        m = dq__block_syms(b, n, payload, k, sym);
        for (i = 0; i < m; i++) bits += cost[sym[i]];
    }
    return DQ__R32_HEAD + 2u * ((bits + (16u << 16) - 1u) / (16u << 16));
}
/* The working room (bytes past the fixed message) an in-place coder-3 re-code needs. Chunks are
 * written whole, from the last, downwards from the end of dst, each below the ones after it and
 * above its own fixed bytes: room >= 4 + L_c + sum over c' > c of (4 + L_c' - fixed_c') for every
 * c; and the coded message must fit: room >= 8 + table + sum of (4 + L_c) - fixed. */
static inline uint64_t dq__r32_room(unsigned b, size_t n, const uint8_t *payload, const uint32_t *f, size_t table) {
    uint64_t cost[256];
    int64_t acc = 0, worst = 0;
    size_t ci = (size_t)dq__r32_nchunks(n, b);
    dq__r32_costs(f, 1u << dq__sym_bits(b), cost);
    while (ci-- > 0) {
        dq__r32_span sp = dq__r32_chunk_span(b, n, ci);
        int64_t ub = 4 + (int64_t)dq__r32_chunk_ub(b, n, payload, ci, cost);
        if (acc + ub > worst) worst = acc + ub;
        acc += ub - (int64_t)(sp.f1 - sp.f0);
    }
    acc += 8 + (int64_t)table;
    return (uint64_t)(acc > worst ? acc : worst);
}
/* Exact coder-3 payload bytes (the table included) by a dry run of the encoder's steps. */
static inline uint64_t dq__r32_exact(unsigned b, size_t n, const uint8_t *payload, const uint32_t *f, size_t table) {
    dq__r32_esym et[256];
    uint8_t sym[DQ__BLOCK];
    uint64_t bytes = table;
    size_t ci, nch = (size_t)dq__r32_nchunks(n, b);
    (void)dq__r32_tables(f, 1u << dq__sym_bits(b), NULL, et);
    for (ci = 0; ci < nch; ci++) {
        dq__r32_span sp = dq__r32_chunk_span(b, n, ci);
        uint32_t x[DQ__R32_WAYS];
        size_t k, m, j;
        uint64_t words = 0;
        for (j = 0; j < DQ__R32_WAYS; j++) x[j] = DQ__R32_L;
        for (k = sp.k1; k-- > sp.k0;) {
            m = dq__block_syms(b, n, payload, k, sym);
            for (j = m; j-- > 0;) words += (uint64_t)dq__r32_step(x + (j & (DQ__R32_WAYS - 1u)), et + sym[j], NULL);
        }
        bytes += 4u + DQ__R32_HEAD + 2u * words;
    }
    return bytes;
}
/* Bounds on the coder-3 payload (table included) from the message's symbol counts: per chunk
 * the states, the length and whole words; below, the states absorb at most 16 bits each. */
static inline void dq__r32_bounds(const uint64_t *cnt, const uint32_t *f, unsigned A, uint64_t nch, size_t table,
                                  uint64_t *ub, uint64_t *lb) {
    uint64_t hi = 0, lo = 0, c, slack = nch * ((uint64_t)(16u * DQ__R32_WAYS) << 16);
    unsigned s;
    for (s = 0; s < A; s++) {
        if (!cnt[s]) continue;
        c = dq__rans_cost_ub(f[s]);
        hi += cnt[s] * (c + DQ__RANS_STEP_SLACK);
        if (c > 5701u + 6102u) lo += cnt[s] * (c - 5701u - 6102u); /* cost lb minus log2(16/15) */
    }
    *ub = table + nch * (4u + DQ__R32_HEAD + 2u) + 2u * (hi / (16u << 16));
    *lb = table + nch * (4u + DQ__R32_HEAD) + (lo > slack ? (lo - slack) / 527342u : 0u);
}

/* Re-codes, inside dst[0..cap), the fixed message dst holds (checksum not yet written) as
 * coder 3 with the plan's table; returns the new size without the checksum, 0 if it did not
 * fit (which the plan's room rules out). */
static inline size_t dq__r32_recode_inplace(const dq__cfg *c, size_t n, uint8_t *dst, size_t cap, const dq__plan *pl) {
    dq__r32_esym et[256];
    unsigned b = c->bits, A = 1u << dq__sym_bits(b);
    size_t sc = c->prefix, pay = DQ_HEADER_SIZE + sc, w = cap - (c->checksum ? 4u : 0u), z, base = DQ__CODED_HEADER + sc;
    size_t ci = (size_t)dq__r32_nchunks(n, b), L;
    (void)dq__r32_tables(pl->f, A, NULL, et);
    while (ci-- > 0) { /* chunk ci's stream lands below the later ones, above its own fixed bytes */
        size_t end = pay + dq__r32_chunk_span(b, n, ci).f1;
        if (w < end + 4u) return 0;
        L = dq__r32_chunk_encode(b, n, dst + pay, ci, et, dst + end, w - end);
        if (!L || L + 4u > w - end) return 0;
        w -= L + 4u;
        dq__st32(dst + w, (uint32_t)L);
    }
    z = cap - (c->checksum ? 4u : 0u) - w;
    if (base + pl->table + z > cap - (c->checksum ? 4u : 0u)) return 0;
    memmove(dst + base + pl->table, dst + w, z); /* first: the chunks may sit where the table goes */
    memmove(dst + DQ__CODED_HEADER, dst + DQ_HEADER_SIZE, sc);
    (void)dq__rans_table_write(pl->f, A, dst + base);
    dq__st64(dst + DQ_HEADER_SIZE, (uint64_t)(pl->table + z));
    dq__header_coder(dst, DQ_CODER_RANS);
    return base + pl->table + z;
}

/* The sign and level bits of an Elias payload (lv[0]) and its non-zero codes (lv[1]), from the
 * symbol counts (b <= 8). */
static inline void dq__elias_levels(unsigned b, const uint64_t *cnt, uint64_t *lv) {
    unsigned A = 1u << dq__sym_bits(b), g = dq__sym_group(b), s, t;
    uint32_t mask = (1u << b) - 1u, smax = (1u << (b - 1u)) - 1u;
    dq__elias_tabs tb;
    dq__elias_tabs_make(&tb);
    lv[0] = lv[1] = 0;
    for (s = 0; s < A; s++)
        for (t = 0; t < g && cnt[s]; t++) {
            uint32_t lvl = (s >> (t * b)) & mask & smax;
            if (lvl) {
                lv[1] += cnt[s];
                lv[0] += cnt[s] * tb.lvt[dq__ilog2(lvl) + 1u];
            }
        }
}

/* Plans how to send the fixed payload. want: a coder, or DQ_CODER_AUTO for the smallest one
 * whose in-place working room fits in `room` (exact = 1: no room limit, for dq_coded_size and
 * dq_recode). Candidates are sized exactly unless bounds already decide; ties go to the
 * lower coder id. */
static inline void dq__plan_make(const dq__cfg *c, size_t n, const uint8_t *payload, const uint64_t *counts,
                                 const uint64_t *gaps, unsigned want, int exact, uint64_t room, dq__plan *pl) {
    unsigned b = c->bits, k, crc = c->checksum ? 4u : 0u;
    uint64_t cnt[256], fixed = ((uint64_t)n * b + 7u) / 8u, ub = 0, lb = 0, other, lv[2];
    int rans = b <= 8u && (want == DQ_CODER_RANS || want == DQ_CODER_AUTO) && (uint64_t)n <= DQ__RANS_MAX_SYMS;
    int elias = b >= 2u && (want == DQ_CODER_ELIAS || want == DQ_CODER_AUTO);
    memset(pl->size, 0, sizeof pl->size);
    memset(pl->room, 0, sizeof pl->room);
    pl->size[DQ_CODER_FIXED] = fixed;
    pl->coder = DQ_CODER_FIXED;
    if (rans) {
        unsigned A = 1u << dq__sym_bits(b);
        uint64_t nch = dq__r32_nchunks(n, b);
        if (counts)
            memcpy(cnt, counts, A * sizeof *cnt);
        else
            dq__sym_count(b, n, payload, 0, (n + DQ__BLOCK - 1u) / DQ__BLOCK, 0, (size_t)fixed, cnt);
        dq__rans_normalize(cnt, A, dq__r32_nsym(n, b), pl->f);
        pl->table = dq__rans_table_size(pl->f, A);
        dq__r32_bounds(cnt, pl->f, A, nch, pl->table, &ub, &lb);
        ub += 8u;
        lb += 8u;
        /* the room: every chunk fits after the fixed payload, or a closer look chunk by chunk */
        pl->room[DQ_CODER_RANS] = ub - 8u - pl->table;
        if (!exact && want == DQ_CODER_AUTO && pl->room[DQ_CODER_RANS] > room && ub < fixed)
            pl->room[DQ_CODER_RANS] = dq__r32_room(b, n, payload, pl->f, pl->table);
        if (want == DQ_CODER_AUTO && !exact && pl->room[DQ_CODER_RANS] > room) rans = 0;
        if (elias) dq__elias_levels(b, cnt, lv);
        /* Elias costs at least its sign and level bits and one bit per gap */
        if (want == DQ_CODER_AUTO && elias && 8u + (lv[0] + lv[1] + 7u) / 8u > (ub < fixed ? ub : fixed))
            elias = 0;
        if (want == DQ_CODER_AUTO && elias && gaps) { /* the gaps' bound, counted by a job's parts */
            dq__elias_tabs tb;
            dq__elias_tabs_make(&tb);
            if (dq__elias_over(dq__gaps_lb(gaps, tb.om), gaps[0], lv, (ub < fixed ? ub : fixed) - 8u)) elias = 0;
        }
    }
    if (elias) {
        uint64_t bytes, rm;
        int got = dq__elias_stats(b, n, payload, crc, want == DQ_CODER_AUTO && rans ? lv : NULL,
                                  (ub < fixed ? ub : fixed) - 8u, &bytes, &rm, &pl->nnz);
        if (got > 0 &&
            (exact || want != DQ_CODER_AUTO || rm <= room)) {
            pl->size[DQ_CODER_ELIAS] = 8u + bytes;
            pl->room[DQ_CODER_ELIAS] = rm;
        }
    }
    other = pl->size[DQ_CODER_ELIAS] && pl->size[DQ_CODER_ELIAS] < fixed ? pl->size[DQ_CODER_ELIAS] : fixed;
    if (rans) {
        if (exact || (want == DQ_CODER_AUTO && lb < other && ub >= other) || (want == DQ_CODER_RANS && ub > fixed))
            pl->size[DQ_CODER_RANS] = 8u + dq__r32_exact(b, n, payload, pl->f, pl->table); /* bounds do not decide */
        else if (ub < other || want == DQ_CODER_RANS)
            pl->size[DQ_CODER_RANS] = ub; /* the smallest for certain; its exact size comes when it is written */
    }
    if (want != DQ_CODER_AUTO) { /* never larger than fixed, so every message fits dq_encode_bound() */
        pl->coder = pl->size[want] > fixed ? DQ_CODER_FIXED : want;
        return;
    }
    for (k = 1; k < 4; k++)
        if (pl->size[k] && pl->size[k] < pl->size[pl->coder]) pl->coder = k;
}

/* Re-codes, inside dst[0..cap), the fixed message dst holds (its checksum not yet written) as
 * planned. Returns the new size without the checksum, 0 if it did not fit (which the plan's
 * room rules out). */
static inline size_t dq__recode_inplace(const dq__cfg *c, size_t n, uint8_t *dst, size_t cap, const dq__plan *pl) {
    size_t sc = c->prefix, len, f, at, out = DQ__CODED_HEADER + sc;
    if (pl->coder == DQ_CODER_RANS) return dq__r32_recode_inplace(c, n, dst, cap, pl);
    /* Elias writes forwards: move the fixed payload to the end of dst, the scales up */
    f = dq__fixed_through(c->bits, n, (n - 1u) / DQ__BLOCK);
    at = cap - f;
    memmove(dst + at, dst + DQ_HEADER_SIZE + sc, f);
    memmove(dst + DQ__CODED_HEADER, dst + DQ_HEADER_SIZE, sc);
    len = dq__elias_encode(c->bits, n, dst + at, pl->nnz, dst + out, cap - (c->checksum ? 4u : 0u) - out, 1, at - out);
    if (!len) return 0;
    dq__st64(dst + DQ_HEADER_SIZE, (uint64_t)len);
    dq__header_coder(dst, pl->coder);
    return DQ__CODED_HEADER + sc + len;
}

/* The default coder's checksum dropped from a fixed message of `size` bytes (with its 4):
 * the fixed layout goes out as the caller asked, unchecked. Returns the new size. */
static inline size_t dq__drop_default_crc(uint8_t *msg, size_t size) {
    msg[DQ__H_FLAGS] = (uint8_t)(msg[DQ__H_FLAGS] & ~DQ_FLAG_CHECKSUM);
    dq__header_coder(msg, DQ_CODER_FIXED);
    return size - 4u;
}

/* dq_encode() of a level scheme, for x and residual of any dtype: quantize into the fixed
 * layout, then, with another coder, re-code it in place. `first`: the dither index of x[0] (a
 * segment's first element, FORMAT 24.3). */
static inline dq_status dq__lv_encode_at(const dq_params *p, uint64_t first, dq_dtype xt, const void *x, size_t n,
                                         dq_dtype rt, void *residual, void *dst, size_t dst_cap, size_t *dst_len) {
    dq__cfg c;
    dq__plan pl;
    dq_status st;
    size_t size, crc;
    uint8_t *out = (uint8_t *)dst;
    int ok, def_crc = 0;
    if (!p || !x || !dst) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if ((st = dq__cfg_make(p, n, &c)) != DQ_OK) return st;
    c.first = first;
    size = dq__size(&c, n, 1, &ok); /* the fixed layout's */
    if (!ok) return DQ_ERR_TOO_LARGE;
    if (dq__default_crc(p, &c) && dst_cap >= size + 4u) { /* sized as with the checksum, dropped if fixed */
        def_crc = 1;
        c.checksum = 1u;
        size += 4u;
    }
    if (c.coder != DQ_CODER_FIXED && c.coder != DQ_CODER_AUTO) { /* a forced coder needs its worst case up front */
        size_t need = dq_encode_bound_coded(n, c.bits);
        if (!need) return DQ_ERR_TOO_LARGE;
        if (dst_cap < need) return DQ_ERR_DST_TOO_SMALL;
    }
    if (dst_cap < size) return DQ_ERR_DST_TOO_SMALL;
    dq__write_header(&c, p, n, out);
    if ((st = dq__lv_body(&c, p, n, 0, n, xt, x, rt, residual, out + DQ_HEADER_SIZE)) != DQ_OK) return st;
    crc = c.checksum ? 4u : 0u;
    if (c.coder != DQ_CODER_FIXED) {
        dq__plan_make(&c, n, out + DQ_HEADER_SIZE + c.prefix, NULL, NULL, c.coder, 0, dst_cap - size, &pl);
        if (def_crc && pl.size[pl.coder] + 4u >= pl.size[DQ_CODER_FIXED])
            pl.coder = DQ_CODER_FIXED; /* the checksum would eat the saving */
        if (pl.coder != DQ_CODER_FIXED) {
            size = dq__recode_inplace(&c, n, out, dst_cap, &pl);
            if (!size) return DQ_ERR_DST_TOO_SMALL; /* unreachable: the plan checked the room */
            size += crc;
        } else if (def_crc) {
            size = dq__drop_default_crc(out, size);
            crc = 0;
        }
    }
    if (crc) dq__st32(out + size - 4u, dq__body_crc(out, size));
    *dst_len = size;
    return DQ_OK;
}
static inline dq_status dq__lv_encode(const dq_params *p, dq_dtype xt, const void *x, size_t n, dq_dtype rt,
                                      void *residual, void *dst, size_t dst_cap, size_t *dst_len) {
    return dq__lv_encode_at(p, 0, xt, x, n, rt, residual, dst, dst_cap, dst_len);
}

/* Checks the scales and the tail padding of a fixed payload. */
static inline dq_status dq__fixed_check(const dq__cfg *c, size_t n, const uint8_t *scales, const uint8_t *payload) {
    uint32_t codes[DQ__BLOCK];
    size_t full = n - n % DQ__BLOCK;
    if (!dq__scales_ok(c, scales, 0, c->nbuckets)) return DQ_ERR_CORRUPT;
    if (full < n && !dq__unpack_tail(payload + (full / DQ__BLOCK) * DQ__BLOCK_BYTES(c->bits), n - full, c->bits, codes))
        return DQ_ERR_CORRUPT;
    return DQ_OK;
}

/* Opens a message for re-coding: header, size, checksum, then the whole body's validity. */
static inline dq_status dq__recode_open(const void *src, size_t src_len, unsigned *coder, dq_header *h, dq__cfg *c,
                                        dq__cdec *cd) {
    const uint8_t *in = (const uint8_t *)src;
    dq_status st;
    if ((st = dq__open(src, src_len, 1, h, c)) != DQ_OK) return st;
    if (!dq__is_levels(h->scheme) || (h->flags & DQ_FLAG_SEGMENTS)) return DQ_ERR_PARAM; /* unsegmented level schemes */
    if (*coder > DQ_CODER_RANS && *coder != DQ_CODER_AUTO && *coder != DQ_CODER_FIXED_ONLY) return DQ_ERR_PARAM;
    if ((*coder == DQ_CODER_ELIAS && h->bits == 1u) || (*coder >= DQ_CODER_RANS8 && *coder <= DQ_CODER_RANS && h->bits > 8u))
        return DQ_ERR_PARAM;
    if (*coder == DQ_CODER_FIXED_ONLY) *coder = DQ_CODER_FIXED;
    if (*coder == DQ_CODER_RANS8 && h->coder != DQ_CODER_RANS8) *coder = DQ_CODER_RANS; /* written as coder 3 */
    if (h->coder != DQ_CODER_FIXED && *coder != DQ_CODER_FIXED && *coder != h->coder) return DQ_ERR_PARAM;
    c->checksum = (h->flags & DQ_FLAG_CHECKSUM) ? 1u : 0u;
    if (h->coder == DQ_CODER_FIXED) return dq__fixed_check(c, h->count, in + DQ_HEADER_SIZE, in + DQ_HEADER_SIZE + c->prefix);
    if ((st = dq__fixed_check(c, 0, in + DQ__CODED_HEADER, NULL)) != DQ_OK) return st;
    if (dq__cdec_open(cd, h->coder, h->bits, h->count, in + DQ__CODED_HEADER + c->prefix, h->payload_size) !=
        DQ_OK)
        return DQ_ERR_CORRUPT;
    cd->trusted = 0;
    return dq__cdec_validate(cd);
}

DQ_API dq_status dq_coded_size(const void *src, size_t src_len, unsigned coder, size_t *size) {
    dq_header h;
    dq__cfg c;
    dq__cdec cd;
    dq__plan pl;
    dq_status st;
    if (!src || !size) return DQ_ERR_NULL;
    if ((st = dq__recode_open(src, src_len, &coder, &h, &c, &cd)) != DQ_OK) return st;
    if (coder == h.coder) {
        *size = h.msg_size;
    } else if (coder == DQ_CODER_FIXED) {
        int ok;
        *size = dq__size(&c, h.count, 1, &ok);
    } else {
        dq__plan_make(&c, h.count, (const uint8_t *)src + DQ_HEADER_SIZE + c.prefix, NULL, NULL, coder, 1, 0, &pl);
        if (!pl.size[pl.coder]) return DQ_ERR_PARAM; /* Elias cannot carry a negative-zero code */
        *size = DQ_HEADER_SIZE + c.prefix + (size_t)pl.size[pl.coder] + (c.checksum ? 4u : 0u);
    }
    return DQ_OK;
}

DQ_API dq_status dq_recode(const void *src, size_t src_len, unsigned coder, void *dst, size_t dst_cap,
                           size_t *dst_len) {
    const uint8_t *in = (const uint8_t *)src;
    uint8_t *out = (uint8_t *)dst;
    dq_header h;
    dq__cfg c;
    dq__cdec cd;
    dq__plan pl;
    dq_status st;
    size_t sc, size, crc;
    if (!src || !dst || !dst_len) return DQ_ERR_NULL;
    if ((st = dq__recode_open(src, src_len, &coder, &h, &c, &cd)) != DQ_OK) return st;
    sc = c.prefix;
    crc = c.checksum ? 4u : 0u;
    if (coder == h.coder) { /* nothing to re-code */
        if (dst_cap < h.msg_size) return DQ_ERR_DST_TOO_SMALL;
        memcpy(out, in, h.msg_size);
        *dst_len = h.msg_size;
        return DQ_OK;
    }
    if (h.coder != DQ_CODER_FIXED) { /* coded -> fixed */
        size_t k, nblk = (h.count + DQ__BLOCK - 1u) / DQ__BLOCK;
        int ok;
        size = dq__size(&c, h.count, 1, &ok);
        if (dst_cap < size) return DQ_ERR_DST_TOO_SMALL;
        memcpy(out, in, DQ_HEADER_SIZE);
        memcpy(out + DQ_HEADER_SIZE, in + DQ__CODED_HEADER, sc);
        for (k = 0; k < nblk; k++) dq__cdec_block(&cd, out + DQ_HEADER_SIZE + sc + k * DQ__BLOCK_BYTES(h.bits));
    } else { /* fixed -> coded */
        dq__plan_make(&c, h.count, in + DQ_HEADER_SIZE + sc, NULL, NULL, coder, 1, 0, &pl);
        if (!pl.size[pl.coder]) return DQ_ERR_PARAM; /* Elias cannot carry a negative-zero code */
        if (pl.coder == DQ_CODER_FIXED) { /* nothing smaller: AUTO, or a forced coder larger than fixed */
            if (dst_cap < h.msg_size) return DQ_ERR_DST_TOO_SMALL;
            memcpy(out, in, h.msg_size);
            *dst_len = h.msg_size;
            return DQ_OK;
        }
        size = DQ_HEADER_SIZE + sc + (size_t)pl.size[pl.coder] + crc;
        if (dst_cap < size) return DQ_ERR_DST_TOO_SMALL;
        memcpy(out, in, DQ_HEADER_SIZE);
        dq__st64(out + DQ_HEADER_SIZE, pl.size[pl.coder] - 8u);
        memcpy(out + DQ__CODED_HEADER, in + DQ_HEADER_SIZE, sc);
        if (pl.coder == DQ_CODER_RANS) { /* chunk by chunk, each written at its end, then moved down */
            dq__r32_esym et[256];
            size_t at = DQ__CODED_HEADER + sc + dq__rans_table_write(pl.f, 1u << dq__sym_bits(h.bits),
                                                                      out + DQ__CODED_HEADER + sc);
            size_t ci, nch = (size_t)dq__r32_nchunks(h.count, h.bits), L;
            (void)dq__r32_tables(pl.f, 1u << dq__sym_bits(h.bits), NULL, et);
            for (ci = 0; ci < nch; ci++) {
                if (size - crc - at < 4u) return DQ_ERR_CORRUPT; /* unreachable: sized exactly */
                L = dq__r32_chunk_encode(h.bits, h.count, in + DQ_HEADER_SIZE + sc, ci, et, out + at + 4u,
                                         size - crc - at - 4u);
                if (!L) return DQ_ERR_CORRUPT;
                memmove(out + at + 4u, out + size - crc - L, L);
                dq__st32(out + at, (uint32_t)L);
                at += 4u + L;
            }
            if (at != size - crc) return DQ_ERR_CORRUPT;
        } else if (!dq__elias_encode(h.bits, h.count, in + DQ_HEADER_SIZE + sc, pl.nnz, out + DQ__CODED_HEADER + sc,
                                     size - crc - DQ__CODED_HEADER - sc, 0, 0)) {
            return DQ_ERR_CORRUPT; /* unreachable: sized exactly */
        }
    }
    dq__header_coder(out, coder == DQ_CODER_AUTO ? pl.coder : coder);
    if (crc) dq__st32(out + size - 4u, dq__body_crc(out, size));
    *dst_len = size;
    return DQ_OK;
}

