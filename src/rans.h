/* ---------------------------------------------------------------- coders (doc/FORMAT.md 17)
 * The fixed-width payload is the canonical form of the codes. A coded message is made from it
 * and decodes back into it one 256-code block at a time, so the quantizer and the SIMD decode
 * kernels serve every coder. Symbols: groups of g = floor(8/b) codes (b <= 8). For b in
 * {1, 2, 4, 8} a symbol is a byte of the fixed payload, in payload order; for b in {3, 5, 6, 7}
 * it is g consecutive codes in element order, the first in the low bits, the last group
 * padded with zero codes. */

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

/* ---- rANS: 8 interleaved 32-bit states (symbol i uses state i mod 8), 16-bit renormalization,
 * probabilities in units of 1/4096. Symbol i is encoded last-to-first so it decodes first. */
#define DQ__RANS_BITS 12u
#define DQ__RANS_M 4096u
#define DQ__RANS_L 65536u
#define DQ__RANS_WAYS 8u
#define DQ__RANS_MAX_SYMS ((uint64_t)1 << 40) /* keeps the size bounds in 64-bit integers */

typedef struct dq__rans_dec {
    uint32_t x[DQ__RANS_WAYS];
    const uint8_t *p;
    size_t left;
    int bad; /* ran out of words */
} dq__rans_dec;

/* Frequencies summing to M from symbol counts (total > 0): round(count * M / total), at least
 * 1 for every symbol that occurs; the rounding error is settled on the most frequent symbol
 * (surplus) or on the largest frequencies (deficit), lowest symbol first on ties. */
static inline void dq__rans_normalize(const uint64_t *cnt, unsigned A, uint64_t total, uint32_t *f) {
    unsigned s, best = A;
    uint64_t sum = 0;
    for (s = 0; s < A; s++) {
        uint64_t v = cnt[s] ? (cnt[s] * DQ__RANS_M + total / 2u) / total : 0u;
        f[s] = cnt[s] ? (uint32_t)(v ? v : 1u) : 0u;
        sum += f[s];
        if (cnt[s] && (best == A || cnt[s] > cnt[best])) best = s;
    }
    if (sum < DQ__RANS_M) f[best] += (uint32_t)(DQ__RANS_M - sum);
    while (sum > DQ__RANS_M) {
        unsigned top = 0;
        uint32_t d;
        for (s = 1; s < A; s++)
            if (f[s] > f[top]) top = s;
        d = f[top] - 1u < sum - DQ__RANS_M ? f[top] - 1u : (uint32_t)(sum - DQ__RANS_M);
        f[top] -= d;
        sum -= d;
    }
}

/* Table: a bitmap of the A symbols that occur (A/8 bytes, symbol s is bit s mod 8 of byte s/8),
 * then f - 1 of each in symbol order as a LEB128 varint of 1 or 2 bytes. */
static inline size_t dq__rans_table_size(const uint32_t *f, unsigned A) {
    size_t sz = A / 8u;
    unsigned s;
    for (s = 0; s < A; s++)
        if (f[s]) sz += f[s] - 1u < 128u ? 1u : 2u;
    return sz;
}
static inline size_t dq__rans_table_write(const uint32_t *f, unsigned A, uint8_t *out) {
    size_t pos = A / 8u;
    unsigned s;
    memset(out, 0, A / 8u);
    for (s = 0; s < A; s++) {
        uint32_t v;
        if (!f[s]) continue;
        out[s / 8u] = (uint8_t)(out[s / 8u] | 1u << (s % 8u));
        v = f[s] - 1u;
        if (v < 128u) {
            out[pos++] = (uint8_t)v;
        } else {
            out[pos++] = (uint8_t)(0x80u | (v & 0x7Fu));
            out[pos++] = (uint8_t)(v >> 7);
        }
    }
    return pos;
}
/* Parses and validates a table; 0 on any malformation, else its size in bytes. */
static inline size_t dq__rans_table_read(const uint8_t *in, size_t len, unsigned A, uint32_t *f) {
    size_t pos = A / 8u;
    uint32_t sum = 0;
    unsigned s;
    if (len < pos) return 0;
    for (s = 0; s < A; s++) {
        uint32_t v;
        f[s] = 0;
        if (!((in[s / 8u] >> (s % 8u)) & 1u)) continue;
        if (pos >= len) return 0;
        v = in[pos++];
        if (v & 0x80u) {
            if (pos >= len || in[pos] == 0 || in[pos] > 31u) return 0; /* canonical, at most 4095 */
            v = (v & 0x7Fu) | (uint32_t)in[pos++] << 7;
        }
        f[s] = v + 1u;
        sum += f[s];
        if (sum > DQ__RANS_M) return 0;
    }
    return sum == DQ__RANS_M ? pos : 0;
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
static inline void dq__rans_get(dq__rans_dec *d, const uint32_t *tab, size_t first, uint8_t *sym, size_t cnt) {
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

/* Bounds on the bytes of words for these counts, from the cost of a symbol, log2(M/f) bits:
 * each encode step adds at most cost + log2(17/16) to log2 x (x >= 16 f there), each word
 * removes at least 16, and x starts and ends in [2^16, 2^32). Costs are in 1/65536 bit:
 * log2(1 + t) >= t on [0, 1] gives an upper bound, and log2(1 + t) <= t + 0.0861 a lower one
 * (5701 + 6102: that, and log2(16/15), below the upper bound). */
static inline uint64_t dq__rans_cost_ub(uint32_t f) {
    unsigned e = 0;
    while ((2u << e) <= f) e++;
    return ((uint64_t)(DQ__RANS_BITS - e) << 16) - ((((uint64_t)f - (1u << e)) << 16) >> e);
}
#define DQ__RANS_STEP_SLACK 5732u /* log2(17/16) in 1/65536 bit, rounded up */

/* Worst-case rANS payload for n codes of b bits: full table, states, 12 + 0.0875 bits per symbol. */
static inline uint64_t dq__rans_payload_bound(uint64_t n, unsigned b) {
    uint64_t nsym = (n + dq__sym_group(b) - 1u) / dq__sym_group(b), A = (uint64_t)1 << dq__sym_bits(b);
    return A / 8u + 2u * A + 4u * DQ__RANS_WAYS +
           2u * ((nsym * ((12u << 16) + DQ__RANS_STEP_SLACK) + (16u << 16) - 1u) / (16u << 16)) + 2u * DQ__RANS_WAYS;
}

/* ---- rANS, 32 ways: the chunk API (coder 3 draft, doc/FORMAT.md 17.6). The stream and the
 * step kernels (dq__r32_get__scalar, dq__r32_encode__scalar; dq__k_r32_get, dq__k_r32_encode)
 * are defined above the kernel selection. A message cuts its symbols into chunks; each chunk
 * is coded on its own with the message's one frequency table, so chunks decode independently
 * and in any order. */

/* Both tables from frequencies f[0..A) (A <= 256): dtab[slot] = s | (f_s - 1) << 8 |
 * (slot - c_s) << 20 for the 4096 slots, et[s] as dq__r32_esym says (f_s = 0 gets f = 0, rcp
 * = 0, s = 0, bias = 0: defined, never decodable). Either output may be NULL. Returns 0 (and
 * writes nothing) unless every f_s <= 4096 and they sum to 4096. */
static inline int dq__r32_tables(const uint32_t *f, unsigned A, uint32_t *dtab, dq__r32_esym *et) {
    uint32_t sum = 0, c = 0, i;
    unsigned s;
    if (A > 256u) return 0;
    for (s = 0; s < A; s++) {
        if (f[s] > DQ__R32_M) return 0;
        sum += f[s];
    }
    if (sum != DQ__R32_M) return 0;
    for (s = 0; s < A; s++) {
        uint32_t fs = f[s], l = 0, rcp = 0, sh = 0, bias = c;
        if (dtab)
            for (i = 0; i < fs; i++) dtab[c + i] = s | (fs - 1u) << 8 | i << 20;
        while ((1u << l) < fs) l++;
        if (fs == 1u) {
            rcp = 0xFFFFFFFFu;
            bias = c + DQ__R32_M - 1u;
        } else if (fs > 1u) {
            rcp = (uint32_t)((((uint64_t)1 << (32u + l)) + fs - 1u) / fs - ((uint64_t)1 << 32));
            sh = l - 1u;
        }
        if (et) {
            et[s].rcp = rcp;
            et[s].info = fs | sh << 13 | bias << 17;
        }
        c += fs;
    }
    return 1;
}

/* Starts decoding the chunk stream[0..len): DQ_ERR_CORRUPT (and d untouched) unless len >= 128,
 * len - 128 is even and every state is >= 2^16. */
static inline dq_status dq__r32_open(dq__r32_dec *d, const uint8_t *stream, size_t len) {
    uint32_t x[DQ__R32_WAYS];
    unsigned k;
    if (len < DQ__R32_HEAD || (len - DQ__R32_HEAD) % 2u) return DQ_ERR_CORRUPT;
    for (k = 0; k < DQ__R32_WAYS; k++) {
        x[k] = dq__ld32(stream + 4u * k);
        if (x[k] < DQ__R32_L) return DQ_ERR_CORRUPT;
    }
    memcpy(d->x, x, sizeof x);
    d->p = stream + DQ__R32_HEAD;
    d->end = stream + len;
    d->j = 0;
    d->bad = 0;
    return DQ_OK;
}
/* After the chunk's last symbol: every state back at 2^16, every word read, none missing. */
static inline dq_status dq__r32_finish(const dq__r32_dec *d) {
    uint32_t ok = !d->bad && d->p == d->end;
    unsigned k;
    for (k = 0; k < DQ__R32_WAYS; k++) ok &= d->x[k] == DQ__R32_L;
    return ok ? DQ_OK : DQ_ERR_CORRUPT;
}
/* The whole chunk stream[0..len) of m symbols into out[0..m) (dtab from dq__r32_tables). A
 * DQ_ERR_CORRUPT from the states leaves out untouched; any later one has written all m
 * symbols, the same bytes with every kernel set. */
static inline dq_status dq__r32_decode(const uint8_t *stream, size_t len, size_t m, const uint32_t *dtab,
                                       uint8_t *out) {
    dq__r32_dec d;
    dq_status st = dq__r32_open(&d, stream, len);
    if (st != DQ_OK) return st;
    dq__k_r32_get(&d, dtab, out, m);
    return dq__r32_finish(&d);
}
/* The chunk of sym[0..m) at the end of buf[0..cap): its size, 0 if it does not fit. The SIMD
 * twins may also write (garbage) into buf below the chunk, never outside buf[0..cap). */
static inline size_t dq__r32_encode(const uint8_t *sym, size_t m, const dq__r32_esym *et, uint8_t *buf,
                                    size_t cap) {
    return dq__k_r32_encode(sym, m, et, buf, cap);
}
/* Symbols in a fixed-payload block of b bits (b <= 8): 32b (b in 1, 2, 4, 8) or 256/g, a
 * multiple of 32 either way, so every full block starts a new group of the 32 states. */
static inline size_t dq__r32_block_syms(unsigned b) { return DQ__BLOCK / dq__sym_group(b); }
/* Fused decode of fixed-payload block k (the tail when k = n / 256) from the chunk being
 * decoded: its symbols go to buf (32b bytes, stays in L1) and come back as the block's bytes in
 * the section 8 layout, ready for dq__k_decode_block & co. For b in {1, 2, 4, 8} they are the
 * bytes; otherwise buf holds the symbols first (256 bytes) and out the packed block. A symbol
 * with codes or bits past element n - 1 marks the chunk bad (as a missing word does). */
static inline const uint8_t *dq__r32_block(dq__r32_dec *d, const uint32_t *dtab, unsigned b, size_t n, size_t k,
                                           uint8_t *buf, uint8_t *out) {
    size_t cnt = n - k * DQ__BLOCK < DQ__BLOCK ? n - k * DQ__BLOCK : DQ__BLOCK;
    size_t nsym = (cnt + dq__sym_group(b) - 1u) / dq__sym_group(b);
    if (dq__sym_bytes(b)) {
        nsym = (cnt * b + 7u) / 8u;
        dq__k_r32_get(d, dtab, buf, nsym);
        if (cnt < DQ__BLOCK && !dq__block_from_syms(b, n, k, buf, buf)) d->bad = 1;
        return buf;
    }
    dq__k_r32_get(d, dtab, buf, nsym);
    if (!dq__block_from_syms(b, n, k, buf, out)) d->bad = 1;
    return out;
}

/* ---- coder 3: a message's symbols in chunks (doc/FORMAT.md 17.6). Chunk c holds symbols
 * [c S, min((c + 1) S, m)) of the m = ceil(n / g) symbols, S = 2^16, so 2^16 g elements (whole
 * blocks); in the payload, after the frequency table, each chunk is its stream's byte length
 * (u32) and the stream. Chunks are coded on their own, with the message's table. */
#define DQ__R32_CHUNK 65536u /* symbols per chunk */
static inline uint64_t dq__r32_nsym(uint64_t n, unsigned b) { return (n + dq__sym_group(b) - 1u) / dq__sym_group(b); }
static inline uint64_t dq__r32_nchunks(uint64_t n, unsigned b) {
    return (dq__r32_nsym(n, b) + DQ__R32_CHUNK - 1u) / DQ__R32_CHUNK;
}
/* Elements and fixed-payload bytes of a full chunk (multiples of the block and its bytes). */
static inline size_t dq__r32_chunk_elems(unsigned b) { return (size_t)DQ__R32_CHUNK * dq__sym_group(b); }
static inline size_t dq__r32_chunk_bytes(unsigned b) { return (size_t)DQ__R32_CHUNK * dq__sym_bits(b) / 8u; }
/* The room dq_encode_capacity() gives DQ_CODER_AUTO past the fixed message (at most the fixed
 * payload): one coder-3 chunk's fixed bytes, and as many for Elias at the widths rANS does not
 * take (9..16), so that the smallest form fits unless its in-place re-code runs further ahead
 * of the fixed payload than that (FORMAT 17.5). */
static inline size_t dq__auto_room(unsigned b) {
    return b <= 8u ? dq__r32_chunk_bytes(b) : (size_t)DQ__R32_CHUNK * b / 8u;
}
/* Worst-case coder-3 payload: the largest table, then per chunk its length, its states and at
 * most one word per symbol (FORMAT 17.6). */
static inline uint64_t dq__r32_payload_bound(uint64_t n, unsigned b) {
    uint64_t A = (uint64_t)1 << dq__sym_bits(b);
    return A / 8u + 2u * A + dq__r32_nchunks(n, b) * (4u + DQ__R32_HEAD) + 2u * dq__r32_nsym(n, b);
}

