/* ---------------------------------------------------------------- coder 2: rANS, one stream (doc/FORMAT.md 17.3)
 * The first rANS layout: the symbols and frequency table of coder 3 (coder_rans.h), 8
 * interleaved 32-bit states over the whole message (symbol i on state i mod 8), 16-bit
 * renormalization. Encoders write coder 3 instead since library 0.7 (its row sends that when
 * asked for this one); decoders still read it, so only its reader is here. Symbol i is encoded
 * last-to-first so it decodes first. */
#define DQ__RANS_L 65536u
#define DQ__RANS_WAYS 8u

/* Largest payload for n codes of b bits: full table, states, 12 + 0.0875 bits per symbol. */
static inline uint64_t dq__rans8_payload_bound(uint64_t n, unsigned b) {
    uint64_t nsym = (n + dq__sym_group(b) - 1u) / dq__sym_group(b), A = (uint64_t)1 << dq__sym_bits(b);
    return A / 8u + 2u * A + 4u * DQ__RANS_WAYS +
           2u * ((nsym * ((12u << 16) + DQ__RANS_STEP_SLACK) + (16u << 16) - 1u) / (16u << 16)) + 2u * DQ__RANS_WAYS;
}

/* Decode table: slot -> symbol | (f - 1) << 8 | (slot - cum) << 20. */
static inline void dq__rans_dtab(const uint32_t *f, unsigned A, uint32_t *tab) {
    uint32_t slot = 0, i;
    unsigned s;
    for (s = 0; s < A; s++)
        for (i = 0; i < f[s]; i++, slot++) tab[slot] = s | (f[s] - 1u) << 8 | i << 20;
}

/* One decode step on state x; a word is read when x falls below L and one is left. */
#define DQ__RANS_GET(x, o, p, end, bad)                                                              \
    do {                                                                                            \
        uint32_t e_ = tab[(x) & (DQ__RANS_M - 1u)];                                                 \
        (o) = (uint8_t)e_;                                                                          \
        (x) = ((e_ >> 8 & 0xFFFu) + 1u) * ((x) >> DQ__RANS_BITS) + (e_ >> 20);                      \
        if ((x) < DQ__RANS_L) {                                                                     \
            if ((p) < (end)) {                                                                      \
                (x) = (x) << 16 | dq__ld16(p);                                                      \
                (p) += 2;                                                                           \
            } else {                                                                                \
                (bad) = 1;                                                                          \
                (x) = DQ__RANS_L;                                                                   \
            }                                                                                       \
        }                                                                                           \
    } while (0)

/* Decode sym[0..cnt) (global indices first..first+cnt-1). The payload's word count is even
 * by validation, so p < end means a whole word is there. */
static inline void dq__rans_get(dq__rans8_rd *d, const uint32_t *tab, size_t first, uint8_t *sym, size_t cnt) {
    const uint8_t *p = d->p, *end = d->p + d->left;
    size_t k = 0;
    int bad = d->bad;
    if (first % DQ__RANS_WAYS == 0) {
        uint32_t x0 = d->x[0], x1 = d->x[1], x2 = d->x[2], x3 = d->x[3], x4 = d->x[4], x5 = d->x[5], x6 = d->x[6],
                 x7 = d->x[7];
        for (; k + 8u <= cnt; k += 8u) {
            DQ__RANS_GET(x0, sym[k], p, end, bad);
            DQ__RANS_GET(x1, sym[k + 1u], p, end, bad);
            DQ__RANS_GET(x2, sym[k + 2u], p, end, bad);
            DQ__RANS_GET(x3, sym[k + 3u], p, end, bad);
            DQ__RANS_GET(x4, sym[k + 4u], p, end, bad);
            DQ__RANS_GET(x5, sym[k + 5u], p, end, bad);
            DQ__RANS_GET(x6, sym[k + 6u], p, end, bad);
            DQ__RANS_GET(x7, sym[k + 7u], p, end, bad);
        }
        d->x[0] = x0, d->x[1] = x1, d->x[2] = x2, d->x[3] = x3, d->x[4] = x4, d->x[5] = x5, d->x[6] = x6, d->x[7] = x7;
    }
    for (; k < cnt; k++) {
        unsigned j = (unsigned)((first + k) & (DQ__RANS_WAYS - 1u));
        DQ__RANS_GET(d->x[j], sym[k], p, end, bad);
    }
    d->left -= (size_t)(p - d->p);
    d->p = p;
    d->bad = bad;
}
#undef DQ__RANS_GET

/* ---- reading */
static inline dq_status dq__rans8_rewind(dq__cdec *d) {
    dq__rans8_rd *r = &d->s.r8;
    unsigned j;
    d->k = 0;
    d->bad = 0;
    r->isym = 0;
    for (j = 0; j < DQ__RANS_WAYS; j++) {
        r->x[j] = dq__ld32(d->pay + d->body + 4u * j);
        if (r->x[j] < DQ__RANS_L) return DQ_ERR_CORRUPT;
    }
    r->p = d->pay + d->body + 4u * DQ__RANS_WAYS;
    r->left = d->len - d->body - 4u * DQ__RANS_WAYS;
    r->bad = 0;
    return DQ_OK;
}
static inline dq_status dq__rans8_open(dq__cdec *d) {
    uint32_t f[256];
    unsigned A = 1u << dq__sym_bits(d->bits);
    d->body = dq__rans_table_read(d->pay, d->len, A, f);
    if (d->body == 0) return DQ_ERR_CORRUPT;
    if (d->len - d->body < 4u * DQ__RANS_WAYS || (d->len - d->body) % 2u) return DQ_ERR_CORRUPT;
    dq__rans_dtab(f, A, d->tab);
    return dq__rans8_rewind(d);
}
static inline const uint8_t *dq__rans8_block(dq__cdec *d, uint8_t *out) {
    uint8_t sym[DQ__BLOCK];
    unsigned b = d->bits;
    size_t cnt = d->n - d->k * DQ__BLOCK < DQ__BLOCK ? d->n - d->k * DQ__BLOCK : DQ__BLOCK;
    size_t nsym = (cnt + dq__sym_group(b) - 1u) / dq__sym_group(b);
    if (dq__sym_bytes(b)) { /* the symbols are the payload bytes: decode them in place */
        nsym = (cnt * b + 7u) / 8u;
        dq__rans_get(&d->s.r8, d->tab, d->s.r8.isym, out, nsym);
        if (!dq__block_from_syms(b, d->n, d->k, out, out)) d->bad = 1;
    } else {
        dq__rans_get(&d->s.r8, d->tab, d->s.r8.isym, sym, nsym);
        if (!dq__block_from_syms(b, d->n, d->k, sym, out)) d->bad = 1;
    }
    d->s.r8.isym += nsym;
    d->k++;
    return out;
}
/* After the last block: every word read, every state back at L. */
static inline dq_status dq__rans8_end(dq__cdec *d) {
    const dq__rans8_rd *r = &d->s.r8;
    unsigned j;
    int ok = !d->bad && !r->bad && r->left == 0;
    for (j = 0; j < DQ__RANS_WAYS; j++) ok &= r->x[j] == DQ__RANS_L;
    return ok ? DQ_OK : DQ_ERR_CORRUPT;
}
