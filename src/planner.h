/* ---------------------------------------------------------------- the planner: which coder sends a message
 * dq_encode, jobs, segments, dq_recode and dq_coded_size decide here, the same way, which coder
 * sends a level-scheme body (doc/FORMAT.md 17.4, 17.5), and assemble a coded body here. What a
 * caller may ask (dq_params.coder) and what each width and count allows is read from the
 * coder table (coders.h). An encode plans before it writes: the quantizer writes the scales
 * and the fixed payload and, as it goes, gathers the statistics the candidates' bounds read
 * (dq__gather: the symbol counts; a job's parts also count the gaps); the planner decides from
 * them, reading the codes again only where bounds do not decide (an exact size, an early-stop
 * pass for Elias, rANS's room chunk by chunk); then the chosen coder writes the payload, the
 * body is closed (dq__body_close) and the header written once (dq__message_close). A fixed
 * body goes out as the quantizer wrote it.
 * What stays in place, and why: the library never allocates and dq_encode has no work buffer,
 * so a coded payload is made from the fixed codes inside the caller's buffer (the coders say
 * how, coder_elias.h and coder_rans.h), and the scales, written where the fixed layout puts
 * them, move 8 bytes up behind the payload length when a coded form goes out. */

/* ---- what the caller asked */

/* The coder a whole message of n elements is encoded with, from dq_params.coder (valid):
 * DQ_CODER_AUTO, or one the coder table says encoders send. */
static inline unsigned dq__coder_asked(unsigned coder, size_t n) {
    if (coder == DQ_CODER_DEFAULT) return n >= DQ_CODER_AUTO_MIN ? DQ_CODER_AUTO : DQ_CODER_FIXED;
    if (coder == DQ_CODER_FIXED_ONLY) return DQ_CODER_FIXED;
    return coder < DQ__NCODERS ? dq__coders[coder].sent_as : coder;
}
/* dq_params.coder (`wire` = 0) or a header's coder byte (1) for b-bit codes: a coder whose row
 * carries b bits, or, in params, DQ_CODER_AUTO or DQ_CODER_FIXED_ONLY. */
static inline int dq__coder_param_ok(unsigned coder, unsigned bits, int wire) {
    const dq__coder *r = dq__coder_row(coder);
    if (!r) return coder == DQ_CODER_AUTO || (!wire && coder == DQ_CODER_FIXED_ONLY);
    return dq__coder_bits_ok(r, bits);
}
/* Ranges and blocks write the fixed layout: the default coder or DQ_CODER_FIXED_ONLY. */
static inline int dq__fixed_asked(const dq_params *p) {
    return p->coder == DQ_CODER_DEFAULT || p->coder == DQ_CODER_FIXED_ONLY;
}
/* Whether a coded form may go out for the coder asked (dq__coder_asked). */
static inline int dq__coder_may_code(unsigned want) { return want != DQ_CODER_FIXED; }
/* A coder asked by name, not the fixed layout nor AUTO: dst must hold its worst case up front. */
static inline int dq__coder_forced(unsigned want) { return want != DQ_CODER_FIXED && want != DQ_CODER_AUTO; }
/* The coder a part of a message (a segment) asks for, the message carrying the checksum: the
 * default resolved by the part's count, with nothing of its own to add. */
static inline unsigned dq__coder_part(unsigned coder, size_t n) {
    if (coder != DQ_CODER_DEFAULT) return coder;
    return dq__coder_asked(coder, n) == DQ_CODER_AUTO ? DQ_CODER_AUTO : DQ_CODER_FIXED_ONLY;
}
/* The default coder adds the payload checksum to the coded forms it sends: a checksummed coded
 * message decodes in one pass (FORMAT 17.4), an unchecked one in two. */
static inline int dq__default_asked(const dq_params *p) { return p->coder == DQ_CODER_DEFAULT; }
static inline int dq__default_crc(const dq_params *p, const dq__cfg *c) {
    return dq__default_asked(p) && c->coder == DQ_CODER_AUTO && !c->checksum;
}
/* Whether a message sent with `coder` carries a checksum: the caller's (crc), or the default's
 * (def_crc, which crc then includes) when a coded form went out. */
static inline int dq__crc_sent(int crc, int def_crc, unsigned coder) {
    return crc && !(def_crc && !dq__coders[coder].head);
}
/* dq_recode's coder, for a message sent with `from` at b bits: a coder id or DQ_CODER_AUTO;
 * DQ_CODER_FIXED_ONLY is the fixed layout, coder 2 (unless the message has it) coder 3. One
 * side of a conversion must be the fixed layout, but for a copy into the same coder. */
static inline dq_status dq__coder_recode(unsigned *coder, unsigned from, unsigned bits) {
    if (!dq__coder_param_ok(*coder, bits, 0)) return DQ_ERR_PARAM;
    if (*coder == DQ_CODER_FIXED_ONLY) *coder = DQ_CODER_FIXED;
    if (*coder < DQ__NCODERS && *coder != from) *coder = dq__coders[*coder].sent_as; /* coder 2: written as 3 */
    return dq__coders[from].head && dq__coder_may_code(*coder) && *coder != from ? DQ_ERR_PARAM : DQ_OK;
}
/* Whether coder c is a candidate for want (a coder id, or DQ_CODER_AUTO) at b bits, n elements. */
static inline int dq__plan_may(unsigned c, unsigned want, unsigned b, size_t n) {
    const dq__coder *r = &dq__coders[c];
    return r->write && dq__coder_bits_ok(r, b) && (uint64_t)n <= r->max_n && (want == c || want == DQ_CODER_AUTO);
}
/* The statistics the candidates' planning reads (DQ__PS_*): the symbol counts when one needs
 * them, and with AUTO the gap counts when another can use them beside those. */
static inline unsigned dq__plan_needs(unsigned want, unsigned b, size_t n) {
    unsigned c, need = 0, use = 0;
    for (c = 1; c < DQ__NCODERS; c++)
        if (dq__plan_may(c, want, b, n)) {
            need |= dq__coders[c].stats & DQ__PS_COUNTS;
            use |= dq__coders[c].stats & DQ__PS_GAPS;
        }
    return need ? need | (want == DQ_CODER_AUTO ? use : 0u) : 0u;
}

/* ---- the statistics, gathered while quantizing */

/* The counts of a run of blocks as the quantizer writes them: the symbol counts into cnt, the
 * gap counts of the full blocks into gaps (either NULL when not wanted). */
typedef struct dq__gather {
    dq__symcount sc;
    uint64_t *cnt, *gaps;
    uint64_t gst[6]; /* the gap pass's carry (dq__k_elias_gaps) */
    unsigned b;
    size_t n, full;  /* elements, full blocks */
} dq__gather;
/* Starts counting at block k0. A run that does not start the vector starts its gap pass as after
 * a non-zero in every place: it counts fewer gaps, still a lower bound. */
static inline void dq__gather_init(dq__gather *g, unsigned b, size_t n, size_t k0, uint64_t *cnt, uint64_t *gaps) {
    unsigned k;
    g->b = b;
    g->n = n;
    g->full = n / DQ__BLOCK;
    g->cnt = cnt;
    g->gaps = gaps;
    if (cnt) {
        memset(cnt, 0, ((size_t)1 << dq__sym_bits(b)) * sizeof *cnt);
        memset(&g->sc, 0, sizeof g->sc);
    }
    if (gaps) {
        memset(gaps, 0, 7u * sizeof *gaps);
        for (k = 0; k < 6u; k++) g->gst[k] = k0 ? ~(uint64_t)0 : 0u;
        if (!k0) g->gst[0] = (uint64_t)1 << 63; /* index -1 counts as a non-zero */
    }
}
/* Blocks [k0, k1) of the payload, just written. */
static inline void dq__gather_run(dq__gather *g, const uint8_t *payload, size_t k0, size_t k1) {
    if (g->cnt) dq__symcount_add(&g->sc, g->b, g->n, payload, k0, k1, g->cnt);
    if (g->gaps) {
        size_t e = k1 < g->full ? k1 : g->full;
        if (e > k0) dq__k_elias_gaps(payload + k0 * DQ__BLOCK_BYTES(g->b), g->b, e - k0, g->gst, g->gaps);
    }
}
static inline void dq__gather_end(dq__gather *g) {
    if (g->cnt) dq__symcount_flush(&g->sc, g->b, g->cnt);
}

/* ---- the plan */

/* Plans how to send the fixed payload. want: a coder (dq__coder_asked) or DQ_CODER_AUTO for the
 * smallest whose in-place write fits in `room` bytes past the fixed body (exact = 1: no room
 * limit and every candidate sized exactly, for dq_coded_size and dq_recode); def_crc: the
 * default's checksum, which a coded form must pay for. The candidates give bounds from the
 * statistics; a coder whose lower bound exceeds the smallest upper bound cannot win; the others
 * are sized exactly (a pass over the codes) where bounds do not decide; ties go to the lower
 * coder id. A forced coder larger than the fixed layout sends the fixed layout, so every
 * message fits dq_encode_bound(). */
static inline void dq__plan_make(const dq__plan_in *in, unsigned want, int exact, uint64_t room, int def_crc,
                                 dq__plan *pl) {
    uint64_t F = in->fixed, m_all = F, m_ok = F, other = F;
    dq__plan_est e;
    unsigned c;
    int cand[DQ__NCODERS], autop = want == DQ_CODER_AUTO, bounded = 0;
    pl->coder = DQ_CODER_FIXED;
    for (c = 0; c < DQ__NCODERS; c++) {
        cand[c] = c && dq__plan_may(c, want, in->bits, in->n);
        pl->size[c] = pl->room[c] = e.lb[c] = e.lbg[c] = 0;
        e.ub[c] = UINT64_MAX;
        if (cand[c] && dq__coders[c].bounds) dq__coders[c].bounds(in, pl, &e);
        if (cand[c] && e.ub[c] < m_all) m_all = e.ub[c];
    }
    pl->size[DQ_CODER_FIXED] = F;
    if (autop && !exact) /* the in-place room, where the bounds give it */
        for (c = 1; c < DQ__NCODERS; c++)
            if (cand[c] && dq__coders[c].room_fits && !dq__coders[c].room_fits(in, pl, &e, room)) cand[c] = 0;
    for (c = 1; c < DQ__NCODERS; c++)
        if (cand[c] && e.ub[c] != UINT64_MAX) {
            bounded = 1;
            if (e.ub[c] < m_ok) m_ok = e.ub[c];
        }
    /* Lower bounds against the upper ones: those from the counts alone against every bound
     * computed, a coder the room ruled out included, as the library always has (so a Gaussian
     * at 8 bits in a tight buffer goes out fixed where Elias would fit; the bytes depend on it,
     * tests/test_coders.c pins them), those with the gap counts too against the candidates'. */
    if (autop)
        for (c = 1; c < DQ__NCODERS; c++)
            if (cand[c] && (e.lb[c] > m_all || e.lbg[c] > m_ok)) cand[c] = 0;
    /* exact sizes: coders without an upper bound first, stopping early once beaten */
    for (c = 1; c < DQ__NCODERS; c++)
        if (cand[c] && e.ub[c] == UINT64_MAX) {
            dq__coders[c].size(in, pl, &e, autop && bounded ? m_ok : UINT64_MAX);
            if (pl->size[c] && autop && !exact && pl->room[c] > room) pl->size[c] = 0;
            if (pl->size[c] && pl->size[c] < other) other = pl->size[c];
        }
    for (c = 1; c < DQ__NCODERS; c++) /* then the bounded ones, where the bounds do not decide */
        if (cand[c] && e.ub[c] != UINT64_MAX) {
            if (exact || (autop && e.lb[c] < other && e.ub[c] >= other) || (want == c && e.ub[c] > F))
                dq__coders[c].size(in, pl, &e, UINT64_MAX);
            else if (e.ub[c] < other || want == c)
                pl->size[c] = e.ub[c]; /* the smallest for certain; its exact size comes when it is written */
        }
    if (!autop) {
        pl->coder = pl->size[want] > F ? DQ_CODER_FIXED : want;
    } else {
        for (c = 1; c < DQ__NCODERS; c++)
            if (pl->size[c] && pl->size[c] < pl->size[pl->coder]) pl->coder = c;
    }
    if (def_crc && pl->size[pl->coder] + 4u >= F) pl->coder = DQ_CODER_FIXED; /* the checksum would eat the saving */
}

/* ---- coded bodies: [u64 payload bytes][scales][coded payload] (FORMAT 17.1) */

/* Closes a coded body whose payload (L bytes) is written at body + 8 + prefix: the scales
 * (prefix bytes at `scales`, body itself when they were quantized there) go behind the length,
 * which is written. Returns the body's size. */
static inline size_t dq__body_close(uint8_t *body, const uint8_t *scales, size_t prefix, size_t L) {
    memmove(body + 8u, scales, prefix);
    dq__st64(body, (uint64_t)L);
    return 8u + prefix + L;
}
/* The fixed body the quantizer wrote at body[0..prefix + fixed), with its statistics, sent as
 * the plan says: in place, within body[0..cap) (scratch more bytes usable past cap, not for
 * the result). want, room and def_crc as for dq__plan_make; *coder gets the coder sent.
 * Returns the body's size, 0 when the write did not fit (which the plan's room rules out). */
static inline size_t dq__body_send(const dq__cfg *c, size_t n, const uint64_t *counts, unsigned want, int def_crc,
                                   uint8_t *body, size_t cap, size_t scratch, unsigned *coder) {
    dq__plan_in in;
    dq__plan pl;
    size_t L, head = 8u + c->prefix;
    if (want == DQ_CODER_FIXED) { /* nothing to plan */
        *coder = DQ_CODER_FIXED;
        return c->prefix + (size_t)(((uint64_t)n * c->bits + 7u) / 8u);
    }
    in.bits = c->bits;
    in.n = n;
    in.crc = c->checksum ? 4u : 0u;
    in.fixed = ((uint64_t)n * c->bits + 7u) / 8u;
    in.payload = body + c->prefix;
    in.counts = counts;
    in.gaps = NULL;
    dq__plan_make(&in, want, 0, cap - c->prefix - (size_t)in.fixed, def_crc, &pl);
    *coder = pl.coder;
    if (!dq__coders[pl.coder].head) return c->prefix + (size_t)in.fixed;
    L = dq__coders[pl.coder].write(&in, &pl, body + head, cap - head, scratch, 1);
    return L ? dq__body_close(body, body, c->prefix, L) : 0u;
}

/* ---- sizes: what a caller's buffer needs */

/* The room dq_encode_capacity() gives DQ_CODER_AUTO past the fixed message (FORMAT 17.5): the
 * largest of the coders AUTO may send at this width (one rANS chunk's fixed bytes; Elias as
 * much at the widths rANS does not take), at most the fixed payload. */
static inline size_t dq__auto_room(unsigned b) {
    size_t r = 0, x;
    unsigned c;
    for (c = 1; c < DQ__NCODERS; c++)
        if (dq__coders[c].auto_room && dq__plan_may(c, DQ_CODER_AUTO, b, 0) && (x = dq__coders[c].auto_room(b)) > r)
            r = x;
    return r;
}
DQ_API size_t dq_encode_bound_coded(size_t n, unsigned bits) {
    uint64_t fixed = dq_encode_bound(n, bits), r = 0, x, s;
    unsigned c;
    if (!fixed) return 0;
    for (c = 1; c < DQ__NCODERS; c++) /* the largest payload a coder encoders send may take */
        if (dq__plan_may(c, DQ_CODER_AUTO, bits, 0) && (x = dq__coders[c].bound(n, bits)) > r) r = x;
    s = fixed + 8u + r + 16u; /* the fixed message, then room to re-code it in place */
    return s <= (uint64_t)SIZE_MAX ? (size_t)s : 0u;
}
static inline dq_status dq__sized(const dq_params *p, size_t n, int framed, size_t *size) {
    dq__cfg c;
    dq_status st;
    int ok;
    if (!p || !size) return DQ_ERR_NULL;
    if ((st = dq__cfg_make(p, n, &c)) != DQ_OK) return st;
    if (!framed && (c.checksum || !dq__fixed_asked(p))) return DQ_ERR_PARAM;
    if (dq__coder_forced(c.coder)) { /* what a forced coder needs */
        *size = dq_encode_bound_coded(n, c.bits);
        return *size ? DQ_OK : DQ_ERR_TOO_LARGE;
    }
    if (framed && dq__default_crc(p, &c)) c.checksum = 1u; /* what the default's coded forms carry */
    *size = dq__size(&c, n, framed, &ok); /* exact for the fixed layout; DQ_CODER_AUTO never writes more */
    if (ok && framed && c.coder == DQ_CODER_AUTO) { /* + the working room of an in-place write */
        uint64_t fixed = ((uint64_t)n * c.bits + 7u) / 8u, cb = dq__auto_room(c.bits);
        uint64_t s = (uint64_t)*size + (fixed < cb ? fixed : cb);
        ok = s <= (uint64_t)SIZE_MAX;
        *size = (size_t)s;
    }
    return ok ? DQ_OK : DQ_ERR_TOO_LARGE;
}
static inline dq_status dq__lv_capacity(const dq_params *p, size_t n, size_t *size) { return dq__sized(p, n, 1, size); }
DQ_API dq_status dq_block_size(const dq_params *p, size_t n, size_t *size) { return dq__sized(p, n, 0, size); }
DQ_API dq_status dq_encode_capacity(const dq_params *p, size_t n, size_t *size) {
    if (!p || !size) return DQ_ERR_NULL;
    return dq__ops_params(p)->capacity(p, n, size);
}
