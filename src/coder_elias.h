/* ---------------------------------------------------------------- coder 1: Elias (doc/FORMAT.md 17.2)
 * QSGD's sparse layout, b >= 2: omega(nnz + 1), then for each non-zero code in element order the
 * omega code of its gap, its sign bit and the omega code of its level, MSB first (the bit
 * streams of bitstream.h). One stream: it is read from its start (no ranges) and written in one
 * piece, by dq_encode in place, by a job's last step, or by dq_recode.
 * Sizing it is a pass over the codes (dq__elias_stats); the planner skips that pass when a
 * lower bound already rules Elias out: its sign and level bits come from the symbol counts the
 * quantizer gathers (dq__elias_levels), its gap bits from the non-zero masks alone, which a
 * job's parts count (dq__k_elias_gaps) and dq_encode reads with an early stop. */

/* Largest payload: gaps sum to at most n and omega(g) <= g + 2, each non-zero adds a sign and
 * its level, and the count omega(nnz + 1) leads. */
static inline uint64_t dq__elias_payload_bound(uint64_t n, unsigned b) {
    return (n * (4u + dq_elias_omega_len(((uint64_t)1 << (b - 1u)) - 1u)) + dq_elias_omega_len(n + 1u) + 7u) / 8u;
}
/* dq_encode_capacity()'s room for Elias at the widths rANS does not take (FORMAT 17.5): as many
 * bytes as a rANS chunk of 2^16 symbols would have, 2^16 b / 8 (at b <= 8 rANS's room is larger). */
static inline size_t dq__elias_auto_room(unsigned b) { return (size_t)65536u * b / 8u; }

/* ---- reading */

/* Reads the next entry (gap, sign, level) ahead; sets bad on any malformation. */
static inline void dq__elias_next(dq__cdec *d) {
    dq__elias_rd *e = &d->s.e;
    uint64_t gap, lvl, smax = ((uint64_t)1 << (d->bits - 1u)) - 1u;
    uint32_t sign;
    e->has_next = 0;
    if (e->left == 0 || d->bad) return;
    e->left--;
    if (dq_elias_omega_get(&e->br, &gap) != DQ_OK || gap > (uint64_t)d->n - e->at) {
        d->bad = 1;
        return;
    }
    sign = (uint32_t)dq_br_get(&e->br, 1);
    if (dq_elias_omega_get(&e->br, &lvl) != DQ_OK || lvl > smax) {
        d->bad = 1;
        return;
    }
    e->at += gap;
    e->next_code = (uint32_t)lvl | sign << (d->bits - 1u);
    e->has_next = 1;
}
/* Opens (or rewinds) the stream: the count, then the first entry read ahead. */
static inline dq_status dq__elias_open(dq__cdec *d) {
    dq__elias_rd *e = &d->s.e;
    uint64_t cnt;
    d->k = 0;
    d->bad = 0;
    memset(&e->br, 0, sizeof e->br);
    dq_br_init(&e->br, d->pay, d->len);
    if (dq_elias_omega_get(&e->br, &cnt) != DQ_OK || cnt - 1u > (uint64_t)d->n) return DQ_ERR_CORRUPT;
    e->left = cnt - 1u;
    e->at = 0;
    dq__elias_next(d);
    return d->bad ? DQ_ERR_CORRUPT : DQ_OK;
}
static inline const uint8_t *dq__elias_rd_block(dq__cdec *d, uint8_t *out) {
    dq__elias_rd *e = &d->s.e;
    uint32_t codes[DQ__BLOCK];
    uint64_t first = (uint64_t)d->k * DQ__BLOCK;
    size_t cnt = d->n - d->k * DQ__BLOCK < DQ__BLOCK ? d->n - d->k * DQ__BLOCK : DQ__BLOCK;
    memset(codes, 0, sizeof codes);
    while (e->has_next && e->at - 1u < first + cnt) {
        codes[e->at - 1u - first] = e->next_code;
        dq__elias_next(d);
    }
    if (cnt == DQ__BLOCK)
        dq__k_pack_block(codes, d->bits, out);
    else
        dq__pack_tail(codes, cnt, d->bits, out);
    d->k++;
    return out;
}
/* After the last block: every entry read, the stream used up to its zero padding. */
static inline dq_status dq__elias_end(dq__cdec *d) {
    return !d->bad && !d->s.e.has_next && dq_br_finish(&d->s.e.br) == DQ_OK ? DQ_OK : DQ_ERR_CORRUPT;
}

/* ---- sizing: from the block scan (dq__k_elias_scan) */

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
 * the previous word's mask and its t[1..5] (st[0], st[1..5]) from call to call. The scalar twin
 * of a kernel (dq__k_elias_gaps), kept beside the Elias coder it serves. */
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
 * in-place write needs (FORMAT 17.5): the stream may not run ahead of the fixed blocks not yet
 * read, and the result must fit. Returns 0 when a code is a negative zero (sign set, level 0),
 * which the layout cannot express (encoders never write one). With lv (the sign and level bits
 * of the whole payload, from its symbol counts), a first pass over the non-zero masks alone
 * (every 64 full blocks, dq__k_elias_gaps) returns -1 as soon as a lower bound on the gap bits
 * so far plus lv[0] and one bit per remaining gap exceed `limit` bytes: Elias cannot be
 * smaller, and any sound bound leaves the choice as it was (on dense payloads it ends there,
 * early). *worst gets the furthest the stream runs ahead of the codes read, in bits. */
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

/* ---- planning (planner.h): a lower bound from the counts, the exact size by a pass */

/* Elias costs at least its sign and level bits and one bit per gap (lb); with the gap counts of
 * the full blocks, their lower bound on the gap bits (lbg). No upper bound. */
static inline void dq__elias_bounds(const dq__plan_in *in, dq__plan *pl, dq__plan_est *est) {
    uint64_t *lv = est->lv;
    (void)pl;
    est->ub[DQ_CODER_ELIAS] = UINT64_MAX;
    est->lb[DQ_CODER_ELIAS] = est->lbg[DQ_CODER_ELIAS] = 0;
    if (!in->counts || in->bits > 8u) return;
    dq__elias_levels(in->bits, in->counts, lv);
    est->lb[DQ_CODER_ELIAS] = est->lbg[DQ_CODER_ELIAS] = 8u + (lv[0] + lv[1] + 7u) / 8u;
    if (in->gaps && lv[1] >= in->gaps[0]) {
        dq__elias_tabs tb;
        uint64_t g;
        dq__elias_tabs_make(&tb);
        g = 8u + (dq__gaps_lb(in->gaps, tb.om) + lv[0] + (lv[1] - in->gaps[0])) / 8u;
        if (g > est->lbg[DQ_CODER_ELIAS]) est->lbg[DQ_CODER_ELIAS] = g;
    }
}
/* The exact size and room, by a pass; with a limit (UINT64_MAX: none) and the counts' bits, it
 * may stop early and leave Elias unsized once it cannot come under `limit` bytes. */
static inline void dq__elias_size(const dq__plan_in *in, dq__plan *pl, const dq__plan_est *est, uint64_t limit) {
    uint64_t bytes, room;
    int got = dq__elias_stats(in->bits, in->n, in->payload, in->crc,
                              limit != UINT64_MAX && in->counts && in->bits <= 8u ? est->lv : NULL, limit - 8u,
                              &bytes, &room, &pl->nnz);
    pl->size[DQ_CODER_ELIAS] = got > 0 ? 8u + bytes : 0u;
    pl->room[DQ_CODER_ELIAS] = got > 0 ? room : 0u;
}

/* ---- writing */

/* Writes the Elias layout of the fixed payload, which has nnz non-zero codes, at out[0..cap).
 * In place, the payload lies at out + pay and the writer never stores into blocks not yet
 * read. Returns the bytes written, 0 if they did not fit. */
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
/* The payload at out[0..cap). In place the fixed payload sits just below out, where a stream
 * written forwards would overtake codes it has not read yet wherever they code longer than b
 * bits, and there is no other buffer: the fixed payload moves to the end of the room first
 * (cap + scratch), a copy of the fixed payload's size; the room the plan checked (FORMAT 17.5)
 * keeps the stream below it. */
static inline size_t dq__elias_write(const dq__plan_in *in, const dq__plan *pl, uint8_t *out, size_t cap,
                                     size_t scratch, int inplace) {
    size_t f = (size_t)in->fixed, at;
    if (!inplace) return dq__elias_encode(in->bits, in->n, in->payload, pl->nnz, out, cap, 0, 0);
    if (cap + scratch < f) return 0;
    at = cap + scratch - f;
    memmove(out + at, in->payload, f);
    return dq__elias_encode(in->bits, in->n, out + at, pl->nnz, out, cap, 1, at);
}
/* A job writes Elias at its end, from a copy of the fixed payload in work. */
static inline uint64_t dq__elias_work(uint64_t n, unsigned b) { return (n * b + 7u) / 8u; }
