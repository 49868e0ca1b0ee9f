/* ---------------------------------------------------------------- coder 3: rANS in chunks (doc/FORMAT.md 17.6)
 * b <= 8. The symbols of coder_fixed.h, coded with one frequency table per message (built
 * from the symbol counts the quantizer gathers) in chunks of 2^16 symbols, 32 interleaved
 * states each. The payload is the table, then per chunk its length and stream; chunks decode
 * and encode on their own, so a job's parts code theirs in parallel and a range decodes only
 * the chunks that hold it. The frequency table and the cost bounds are shared with coder 2
 * (coder_rans8.h, read only). The chunk kernels (dq__k_r32_get, dq__k_r32_encode, their scalar
 * twins and the step helpers) are in kernels_scalar.h, above the kernel selection. */

/* ---- the frequency table (FORMAT 17.3), shared with coder 2 */
#define DQ__RANS_BITS 12u
#define DQ__RANS_M 4096u

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

/* ---- the chunk API: one chunk of symbols, coded on its own with the message's table */

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
/* Fused decode of fixed-payload block k (the tail when k = n / 256) from the chunk being
 * decoded: its symbols go to buf (32b bytes, stays in L1) and come back as the block's bytes in
 * the section 8 layout, ready for dq__k_decode_block & co. For b in {1, 2, 4, 8} they are the
 * bytes; otherwise buf holds the symbols first (256 bytes) and out the packed block. Every full
 * block is whole groups of 32 symbols (32 b, or 256 / g), so it starts a new group of the
 * states. A symbol with codes or bits past element n - 1 marks the chunk bad (as a missing word
 * does). */
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

/* ---- a message's chunks: chunk c holds symbols [c S, min((c + 1) S, m)) of the m = ceil(n / g)
 * symbols, S = 2^16, so 2^16 g elements (whole blocks) */
#define DQ__R32_CHUNK 65536u /* symbols per chunk */
static inline uint64_t dq__r32_nsym(uint64_t n, unsigned b) { return (n + dq__sym_group(b) - 1u) / dq__sym_group(b); }
static inline uint64_t dq__r32_nchunks(uint64_t n, unsigned b) {
    return (dq__r32_nsym(n, b) + DQ__R32_CHUNK - 1u) / DQ__R32_CHUNK;
}
/* Elements and fixed-payload bytes of a full chunk (multiples of the block and its bytes). */
static inline size_t dq__r32_chunk_elems(unsigned b) { return (size_t)DQ__R32_CHUNK * dq__sym_group(b); }
static inline size_t dq__r32_chunk_bytes(unsigned b) { return (size_t)DQ__R32_CHUNK * dq__sym_bits(b) / 8u; }
/* dq_encode_capacity()'s room for coder 3 (FORMAT 17.5): one chunk's fixed bytes. */
static inline size_t dq__r32_auto_room(unsigned b) { return dq__r32_chunk_bytes(b); }
/* Largest payload: the largest table, then per chunk its length, its states and at most one
 * word per symbol (FORMAT 17.6). */
static inline uint64_t dq__r32_payload_bound(uint64_t n, unsigned b) {
    uint64_t A = (uint64_t)1 << dq__sym_bits(b);
    return A / 8u + 2u * A + dq__r32_nchunks(n, b) * (4u + DQ__R32_HEAD) + 2u * dq__r32_nsym(n, b);
}
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

/* ---- reading */

static inline dq_status dq__r32_rd_rewind(dq__cdec *d) { /* chunks open as the blocks reach them */
    d->k = 0;
    d->bad = 0;
    d->s.r.pos = d->body;
    d->s.r.inchunk = 0;
    return DQ_OK;
}
static inline dq_status dq__r32_rd_open(dq__cdec *d) {
    uint32_t f[256];
    unsigned A = 1u << dq__sym_bits(d->bits);
    d->body = dq__rans_table_read(d->pay, d->len, A, f);
    if (d->body == 0) return DQ_ERR_CORRUPT;
    d->s.r.cblocks = dq__r32_chunk_elems(d->bits) / DQ__BLOCK;
    (void)dq__r32_tables(f, A, d->tab, NULL); /* the table read is well formed */
    return dq__r32_rd_rewind(d);
}
/* The previous chunk checked at its end, the next one opened. A length or stream that does not
 * fit marks the message bad and leaves a decoder that reads no word. */
static inline void dq__r32_rd_chunk(dq__cdec *d) {
    dq__rans_rd *r = &d->s.r;
    size_t len;
    unsigned j;
    if (r->inchunk && dq__r32_finish(&r->d32) != DQ_OK) d->bad = 1;
    r->inchunk = 1;
    if (d->len - r->pos >= 4u) {
        len = dq__ld32(d->pay + r->pos);
        if (len <= d->len - r->pos - 4u && dq__r32_open(&r->d32, d->pay + r->pos + 4u, len) == DQ_OK) {
            r->pos += 4u + len;
            return;
        }
    }
    d->bad = 1;
    for (j = 0; j < DQ__R32_WAYS; j++) r->d32.x[j] = DQ__R32_L;
    r->d32.p = r->d32.end = d->pay + d->len;
    r->d32.j = 0;
    r->d32.bad = 1;
    r->pos = d->len;
}
static inline const uint8_t *dq__r32_rd_block(dq__cdec *d, uint8_t *out) {
    uint8_t sym[DQ__BLOCK];
    const uint8_t *p;
    if (d->k % d->s.r.cblocks == 0) dq__r32_rd_chunk(d);
    p = dq__r32_block(&d->s.r.d32, d->tab, d->bits, d->n, d->k, dq__sym_bytes(d->bits) ? out : sym, out);
    d->k++;
    return p;
}
/* After the last block: the last chunk checked at its end, the chunks filling the payload. */
static inline dq_status dq__r32_rd_end(dq__cdec *d) {
    return !d->bad && dq__r32_finish(&d->s.r.d32) == DQ_OK && d->s.r.pos == d->len ? DQ_OK : DQ_ERR_CORRUPT;
}
/* The reader at the start of chunk ci, whose offset comes from the lengths before it; 0 when
 * one of them runs past the payload. */
static inline int dq__r32_rd_seek(dq__cdec *d, size_t ci) {
    size_t c, len;
    (void)dq__r32_rd_rewind(d);
    for (c = 0; c < ci; c++) {
        if (d->len - d->s.r.pos < 4u || (len = dq__ld32(d->pay + d->s.r.pos)) > d->len - d->s.r.pos - 4u) return 0;
        d->s.r.pos += 4u + len;
    }
    d->k = ci * d->s.r.cblocks;
    return 1;
}
/* A range [begin, end): the chunks that hold it decoded whole and checked at their ends, then
 * the reader at the start of the first. */
static inline dq_status dq__r32_rd_range(dq__cdec *d, size_t begin, size_t end) {
    uint8_t tmp[DQ__BLOCK_BYTES(16u)];
    size_t E = dq__r32_chunk_elems(d->bits), ci = begin / E, cj = (end - 1u) / E;
    size_t nblk = (d->n + DQ__BLOCK - 1u) / DQ__BLOCK, k1 = (cj + 1u) * d->s.r.cblocks;
    if (!dq__r32_rd_seek(d, ci)) return DQ_ERR_CORRUPT;
    if (k1 > nblk) k1 = nblk;
    while (d->k < k1) dq__r32_rd_block(d, tmp);
    if (d->bad || dq__r32_finish(&d->s.r.d32) != DQ_OK) return DQ_ERR_CORRUPT;
    return dq__r32_rd_seek(d, ci) ? DQ_OK : DQ_ERR_CORRUPT;
}

/* ---- planning (planner.h) */

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
/* The working room (bytes past the fixed body) an in-place write needs. Chunks are written
 * whole, from the last, downwards from the end of the buffer, each below the ones after it and
 * above its own fixed bytes: room >= 4 + L_c + sum over c' > c of (4 + L_c' - fixed_c') for
 * every c; and the coded message must fit: room >= 8 + table + sum of (4 + L_c) - fixed. */
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
/* Exact payload bytes (the table included) by a dry run of the encoder's steps. */
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
/* Bounds on the payload (table included) of nch chunks with these symbol counts: per chunk the
 * states, the length and whole words; below, the states absorb at most 16 bits each. */
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
/* The table from the counts of all m symbols, both bounds, and the room a write needs at most:
 * the whole coded payload past the fixed body. */
static inline void dq__r32_plan_bounds(const dq__plan_in *in, dq__plan *pl, dq__plan_est *est) {
    unsigned A = 1u << dq__sym_bits(in->bits);
    uint64_t ub, lb;
    dq__rans_normalize(in->counts, A, dq__r32_nsym(in->n, in->bits), pl->f);
    pl->table = dq__rans_table_size(pl->f, A);
    dq__r32_bounds(in->counts, pl->f, A, dq__r32_nchunks(in->n, in->bits), pl->table, &ub, &lb);
    est->ub[DQ_CODER_RANS] = ub + 8u;
    est->lb[DQ_CODER_RANS] = est->lbg[DQ_CODER_RANS] = lb + 8u;
    pl->room[DQ_CODER_RANS] = ub - pl->table;
}
/* Whether the write fits in `room`: every chunk after the fixed body, or a closer look chunk by
 * chunk (a pass over the codes) when rANS is smaller than the fixed payload. */
static inline int dq__r32_room_fits(const dq__plan_in *in, dq__plan *pl, const dq__plan_est *est, uint64_t room) {
    if (pl->room[DQ_CODER_RANS] > room && est->ub[DQ_CODER_RANS] < in->fixed)
        pl->room[DQ_CODER_RANS] = dq__r32_room(in->bits, in->n, in->payload, pl->f, pl->table);
    return pl->room[DQ_CODER_RANS] <= room;
}
static inline void dq__r32_size(const dq__plan_in *in, dq__plan *pl, const dq__plan_est *est, uint64_t limit) {
    (void)est;
    (void)limit;
    pl->size[DQ_CODER_RANS] = 8u + dq__r32_exact(in->bits, in->n, in->payload, pl->f, pl->table);
}

/* ---- writing */

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
/* Chunks [c0, c1), each preceded by its length, downwards from the end of buf[0..cap), the last
 * first; *w gets where the first one's length starts (an offset from buf, below 0 when in place
 * they went past it). A chunk's encode may use the buffer down to lo (SIMD twins write garbage
 * below a chunk): buf, or in place the end of the chunk's own fixed bytes, unread above it.
 * Returns 0 when they did not fit. */
static inline int dq__r32_chunks_down(const dq__plan_in *in, const dq__r32_esym *et, size_t c0, size_t c1,
                                      uint8_t *buf, size_t cap, int inplace, ptrdiff_t *w) {
    size_t ci = c1, L;
    ptrdiff_t lo = 0, top = (ptrdiff_t)cap;
    while (ci-- > c0) { /* chunk ci's stream lands below the later ones, above its own fixed bytes */
        if (inplace) lo = (in->payload - buf) + (ptrdiff_t)dq__r32_chunk_span(in->bits, in->n, ci).f1;
        if (top < lo + 4) return 0;
        L = dq__r32_chunk_encode(in->bits, in->n, in->payload, ci, et, buf + lo, (size_t)(top - lo));
        if (!L || (ptrdiff_t)L + 4 > top - lo) return 0;
        top -= (ptrdiff_t)L + 4;
        dq__st32(buf + top, (uint32_t)L);
    }
    *w = top;
    return 1;
}
/* The payload at out[0..cap): the chunks written from the last downwards from the end (none can
 * be placed where it goes before the lengths of those before it are known), then moved down
 * once behind the table. In place, over the fixed payload just below out: each chunk lands
 * above its own fixed bytes, which the room the plan checked guarantees (FORMAT 17.5). Written
 * from another buffer with cap the exact size (dq_recode), they land where they go. */
static inline size_t dq__r32_write(const dq__plan_in *in, const dq__plan *pl, uint8_t *out, size_t cap,
                                   size_t scratch, int inplace) {
    dq__r32_esym et[256];
    unsigned A = 1u << dq__sym_bits(in->bits);
    ptrdiff_t w;
    size_t z;
    (void)scratch;
    (void)dq__r32_tables(pl->f, A, NULL, et);
    if (!dq__r32_chunks_down(in, et, 0, (size_t)dq__r32_nchunks(in->n, in->bits), out, cap, inplace, &w) ||
        w < (ptrdiff_t)pl->table)
        return 0;
    z = cap - (size_t)w;
    memmove(out + pl->table, out + w, z); /* first: the chunks may sit where the table goes */
    (void)dq__rans_table_write(pl->f, A, out);
    return pl->table + z;
}

/* ---- jobs: parts of whole chunks code into work, then the table and their streams */
static inline uint64_t dq__r32_work(uint64_t n, unsigned b) {
    return dq__r32_nchunks(n, b) * (4u + DQ__R32_HEAD + 2u) + 2u * dq__r32_nsym(n, b);
}
/* The bytes a part's chunks may take: its symbol counts' bound under the message's table. */
static inline uint64_t dq__r32_part_cap(const uint64_t *counts, const dq__plan *pl, unsigned b, size_t elems) {
    uint64_t ub, lb;
    dq__r32_bounds(counts, pl->f, 1u << dq__sym_bits(b), (elems + dq__r32_chunk_elems(b) - 1u) / dq__r32_chunk_elems(b),
                   0, &ub, &lb);
    return ub;
}
/* The chunks of elements [e0, e1) (whole chunks) at the end of buf[0..cap); returns their bytes,
 * 0 when they did not fit. */
static inline size_t dq__r32_part(const dq__plan_in *in, const dq__plan *pl, size_t e0, size_t e1, uint8_t *buf,
                                  size_t cap) {
    dq__r32_esym et[256];
    size_t E = dq__r32_chunk_elems(in->bits);
    ptrdiff_t w;
    (void)dq__r32_tables(pl->f, 1u << dq__sym_bits(in->bits), NULL, et);
    if (!dq__r32_chunks_down(in, et, e0 / E, (e1 - 1u) / E + 1u, buf, cap, 0, &w)) return 0;
    return cap - (size_t)w;
}
static inline size_t dq__r32_head_write(const dq__plan *pl, unsigned b, uint8_t *out) {
    return dq__rans_table_write(pl->f, 1u << dq__sym_bits(b), out);
}
