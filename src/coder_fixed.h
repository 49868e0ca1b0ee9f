/* ---------------------------------------------------------------- coder 0: the fixed layout, blocks and symbols
 * The fixed payload (doc/FORMAT.md 8) is b bits per code, packed 256 codes to a block, the tail
 * block shorter. It is the canonical form every other coder transforms: coded payloads are made
 * from it and decode back into it one block at a time (dq__cdec), so the quantizer and the
 * block decoders serve them all. Its row reads it in place and writes nothing.
 * Symbols (FORMAT 17.3), which the entropy coders count and code: groups of g = floor(8/b)
 * codes (b <= 8). For b in {1, 2, 4, 8} a symbol is a byte of the fixed payload, in payload
 * order; for b in {3, 5, 6, 7} it is g consecutive codes in element order, the first in the
 * low bits, the last group padded with zero codes. */

static inline uint64_t dq__fixed_bound(uint64_t n, unsigned b) { return (n * b + 7u) / 8u; }
/* Bytes of fixed payload in blocks 0..k. */
static inline size_t dq__fixed_through(unsigned b, size_t n, size_t k) {
    uint64_t end = (uint64_t)(k + 1u) * DQ__BLOCK < n ? (uint64_t)(k + 1u) * DQ__BLOCK : n;
    return (size_t)((end * b + 7u) / 8u);
}

static inline unsigned dq__sym_group(unsigned b) { return 8u / b; }
static inline unsigned dq__sym_bits(unsigned b) { return (8u / b) * b; }
static inline int dq__sym_bytes(unsigned b) { return (8u % b) == 0; } /* symbols are payload bytes */

/* The codes of fixed-payload block k (the tail when k = n / 256); returns their count. */
static inline size_t dq__block_codes(unsigned b, size_t n, const uint8_t *payload, size_t k, uint32_t *codes) {
    size_t cnt = n - k * DQ__BLOCK < DQ__BLOCK ? n - k * DQ__BLOCK : DQ__BLOCK;
    if (cnt == DQ__BLOCK)
        dq__unpack_block__scalar(payload + k * DQ__BLOCK_BYTES(b), b, codes);
    else
        dq__unpack_tail(payload + k * DQ__BLOCK_BYTES(b), cnt, b, codes);
    return cnt;
}
/* The symbols of fixed-payload block k (the tail when k = n / 256) into sym; returns their count. */
static inline size_t dq__block_syms(unsigned b, size_t n, const uint8_t *payload, size_t k, uint8_t *sym) {
    uint32_t codes[DQ__BLOCK];
    size_t cnt = n - k * DQ__BLOCK < DQ__BLOCK ? n - k * DQ__BLOCK : DQ__BLOCK, m, nsym;
    unsigned g = dq__sym_group(b), t;
    const uint8_t *in = payload + k * DQ__BLOCK_BYTES(b);
    if (dq__sym_bytes(b)) {
        nsym = (cnt * b + 7u) / 8u;
        memcpy(sym, in, nsym);
        return nsym;
    }
    dq__block_codes(b, n, payload, k, codes);
    nsym = (cnt + g - 1u) / g;
    for (m = 0; m < nsym; m++) {
        uint32_t s = 0;
        for (t = 0; t < g && m * g + t < cnt; t++) s |= codes[m * g + t] << (t * b);
        sym[m] = (uint8_t)s;
    }
    return nsym;
}
/* The inverse: block k of the fixed payload from its symbols, into out (32b bytes, or the
 * tail's bytes; out may be sym itself when the symbols are bytes). Returns 0 when a symbol
 * holds non-zero codes or bits past the last element. */
static inline int dq__block_from_syms(unsigned b, size_t n, size_t k, const uint8_t *sym, uint8_t *out) {
    uint32_t codes[DQ__BLOCK];
    size_t cnt = n - k * DQ__BLOCK < DQ__BLOCK ? n - k * DQ__BLOCK : DQ__BLOCK, m, nsym;
    unsigned g = dq__sym_group(b), t, mask = (1u << b) - 1u;
    if (dq__sym_bytes(b)) {
        nsym = (cnt * b + 7u) / 8u;
        if (out != sym) memcpy(out, sym, nsym);
        return (cnt * b) % 8u == 0 || (sym[nsym - 1u] >> ((cnt * b) % 8u)) == 0;
    }
    nsym = (cnt + g - 1u) / g;
    for (m = 0; m < nsym; m++)
        for (t = 0; t < g; t++) {
            uint32_t code = ((uint32_t)sym[m] >> (t * b)) & mask;
            if (m * g + t < cnt)
                codes[m * g + t] = code;
            else if (code)
                return 0;
        }
    if (cnt == DQ__BLOCK)
        dq__k_pack_block(codes, b, out);
    else
        dq__pack_tail(codes, cnt, b, out);
    return 1;
}

/* ---- symbol counts (FORMAT 17.3), what the planner sizes the entropy coders from. The
 * quantizer adds each run of blocks it has just written (dq__symcount_add, while they are in
 * cache); re-coding a written message counts its payload in one run. */
typedef struct dq__symcount {
    uint32_t c8[8][256]; /* eight tables: no store-to-load chain on repeats */
    uint64_t pending;    /* bytes in c8 since the last flush (each table holds one in 8) */
} dq__symcount;
static inline void dq__symcount_flush(dq__symcount *s, unsigned b, uint64_t *cnt) {
    unsigned A = 1u << dq__sym_bits(b), v, t;
    for (v = 0; v < A; v++)
        for (t = 0; t < 8u; t++) cnt[v] += s->c8[t][v];
    memset(s->c8, 0, sizeof s->c8);
    s->pending = 0;
}
/* Adds the symbols of blocks [k0, k1) to cnt (through s). */
static inline void dq__symcount_add(dq__symcount *s, unsigned b, size_t n, const uint8_t *payload, size_t k0,
                                    size_t k1, uint64_t *cnt) {
    if (dq__sym_bytes(b)) { /* the payload's bytes [f0, f1) */
        size_t i = k0 * DQ__BLOCK_BYTES(b), f1 = dq__fixed_through(b, n, k1 - 1u), end;
        uint32_t(*c8)[256] = s->c8;
        while (i < f1) { /* flushed every 2^30 bytes: 2^27 a table at most */
            end = f1 - i > ((size_t)1 << 30) - s->pending ? i + (((size_t)1 << 30) - (size_t)s->pending) : f1;
            s->pending += end - i;
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
            if (s->pending >= ((uint64_t)1 << 30)) dq__symcount_flush(s, b, cnt);
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
/* The symbol counts of a whole fixed payload (b <= 8), in one run. */
static inline void dq__sym_count(unsigned b, size_t n, const uint8_t *payload, uint64_t *cnt) {
    dq__symcount s;
    memset(cnt, 0, ((size_t)1 << dq__sym_bits(b)) * sizeof *cnt);
    memset(&s, 0, sizeof s);
    dq__symcount_add(&s, b, n, payload, 0, (n + DQ__BLOCK - 1u) / DQ__BLOCK, cnt);
    dq__symcount_flush(&s, b, cnt);
}
