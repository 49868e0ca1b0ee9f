/* ---------------------------------------------------------------- coders: the table (doc/FORMAT.md 17)
 * A coder changes how a level-scheme message sends its codes, never what they are: each is a
 * lossless transform of the fixed-width payload, the layout the quantizer writes and the block
 * decoders read, so the quantizer and the SIMD kernels serve every coder. Each coder is one part
 * (coder_fixed.h, coder_elias.h, coder_rans.h, coder_rans8.h) and one row of dq__coders below,
 * indexed by the header's coder byte. The planner (planner.h), the message reader (message.h),
 * the decoders, jobs and segments ask a coder's row what to do; none of them asks which coder
 * it is. A row gives
 *   - what the coder carries: the widths, whether encoders send it (coder 2 is read only), the
 *     bytes of the payload-length field a coded body starts with (none for the fixed layout);
 *   - reading: the largest payload a message may declare, and a reader (dq__cdec) that opens
 *     the payload, hands out the fixed payload block by block, checks the end and rewinds; a
 *     coder whose parts decode on their own (coder 3) also opens at the part that holds an
 *     element, for ranges. The fixed layout has no reader: it is read in place;
 *   - planning: size bounds from the statistics the quantizer gathers, the working room of its
 *     in-place write, its exact size (a pass over the codes);
 *   - writing: the coded payload from the fixed payload (in place in the encoder's buffer, or
 *     from another buffer), and for a payload that is a head followed by independent parts
 *     (coder 3: the frequency table, then chunks) the head and one part, for jobs.
 * A new coder is its part, its row here, and its reader state and planning data in the two
 * structs below. */

#define DQ__NCODERS 4u /* coder bytes 0 .. 3 (doc/FORMAT.md 3.1) */

typedef struct dq__cdec dq__cdec;

/* What the planner knows of a message's codes (dq__plan_make). */
typedef struct dq__plan_in {
    unsigned bits;
    size_t n;
    unsigned crc;           /* checksum bytes the message carries after the payload (0 or 4) */
    uint64_t fixed;         /* bytes of the fixed payload */
    const uint8_t *payload; /* the fixed payload: exact sizes and the writers read it */
    const uint64_t *counts; /* its symbol counts (FORMAT 17.3), gathered while quantizing; NULL when uncounted */
    const uint64_t *gaps;   /* the gap counts of its full blocks (dq__k_elias_gaps, a job's parts), or NULL */
} dq__plan_in;

/* What each coder would cost, and the choice (dq__plan_make): what the writers read. Sizes are
 * payload bytes, a coded payload's with its 8-byte length; 0 where a coder is not sized. */
typedef struct dq__plan {
    unsigned coder;             /* the choice */
    uint64_t size[DQ__NCODERS];
    uint32_t f[256];            /* rANS: the frequencies */
    size_t table;               /* rANS: bytes of the frequency table */
    uint64_t room[DQ__NCODERS]; /* working room an in-place write needs past the fixed body */
    uint64_t nnz;               /* Elias: the non-zero codes, counted while sizing it */
} dq__plan;
/* The bounds the planner decides from before it sizes anything. */
typedef struct dq__plan_est {
    uint64_t lb[DQ__NCODERS], ub[DQ__NCODERS]; /* from the counts (ub = UINT64_MAX: none) */
    uint64_t lbg[DQ__NCODERS];                 /* lb, or a higher bound with the gap counts too */
    uint64_t lv[2];                            /* Elias: sign and level bits, non-zero codes */
} dq__plan_est;

/* Reader states, one per coder that has a reader (its functions are in its part). */
typedef struct dq__elias_rd {
    dq_bitreader br;
    uint64_t left, at;   /* entries still to read; element index + 1 of the one read ahead */
    uint32_t next_code;  /* the entry read ahead (none when has_next is 0) */
    int has_next;
} dq__elias_rd;
typedef struct dq__rans8_rd {
    uint32_t x[8];
    const uint8_t *p;
    size_t left, isym; /* bytes of words left; symbols decoded */
    int bad;           /* ran out of words */
} dq__rans8_rd;
typedef struct dq__rans_rd {
    dq__r32_dec d32;
    size_t pos, cblocks; /* offset of the next chunk; blocks per chunk */
    int inchunk;         /* d32 decodes a chunk, checked at its end when the next opens */
} dq__rans_rd;

/* The coded-payload reader: hands out the fixed payload block by block, in order. */
struct dq__cdec {
    const struct dq__coder *row;
    unsigned bits;
    size_t n, k;        /* elements; the next block */
    const uint8_t *pay; /* the coded payload, len bytes */
    size_t len;
    size_t body;        /* rANS: the offset after the frequency table */
    int bad;
    int trusted;        /* the payload checksum was verified: decode in one pass, check at the end */
    union {
        dq__elias_rd e;
        dq__rans8_rd r8;
        dq__rans_rd r;
    } s;
    uint32_t tab[DQ__R32_M]; /* rANS: the decode table */
};

typedef struct dq__coder {
    unsigned char bits_min, bits_max; /* the widths it carries */
    unsigned char sent_as;            /* the coder an encoder asked for this one writes (2: 3) */
    unsigned char head;               /* bytes of the payload length after the header */
    unsigned char stats;              /* what its planning reads: DQ__PS_COUNTS (needs), DQ__PS_GAPS (uses) */
    uint64_t max_n;                   /* elements above which encoders do not send it */
    uint64_t (*bound)(uint64_t n, unsigned b); /* the largest payload a message may declare */
    size_t (*auto_room)(unsigned b);  /* dq_encode_capacity()'s room for it (0: none) */
    /* reading; open NULL: the payload is the fixed layout, read in place */
    dq_status (*open)(dq__cdec *d);
    dq_status (*rewind)(dq__cdec *d);
    const uint8_t *(*block)(dq__cdec *d, uint8_t *out); /* the next block of the fixed payload into out; returns out */
    dq_status (*end)(dq__cdec *d);                      /* after the last block */
    dq_status (*range)(dq__cdec *d, size_t begin, size_t end); /* checks the parts that hold a range, reader at
                                                                * the first (NULL: one stream, no ranges) */
    /* planning: bounds from the counts (NULL: none); room_fits NULL: the room comes with size,
     * which may stop early (0) once the size exceeds `limit` bytes */
    void (*bounds)(const dq__plan_in *in, dq__plan *pl, dq__plan_est *est);
    int (*room_fits)(const dq__plan_in *in, dq__plan *pl, const dq__plan_est *est, uint64_t room);
    void (*size)(const dq__plan_in *in, dq__plan *pl, const dq__plan_est *est, uint64_t limit);
    /* writing: the coded payload (length field aside) at out[0..cap), scratch more bytes usable
     * past cap; in place, the fixed payload in->payload lies at out - 8, below it the scales */
    size_t (*write)(const dq__plan_in *in, const dq__plan *pl, uint8_t *out, size_t cap, size_t scratch, int inplace);
    /* jobs: part_elems NULL: written whole by write; else parts of part_elems(b) elements code
     * on their own into work (part_cap bytes each), after a head */
    size_t (*part_elems)(unsigned b);
    uint64_t (*work)(uint64_t n, unsigned b); /* the work bytes a job keeps for it */
    uint64_t (*part_cap)(const uint64_t *counts, const dq__plan *pl, unsigned b, size_t parts_elems);
    size_t (*part)(const dq__plan_in *in, const dq__plan *pl, size_t e0, size_t e1, uint8_t *buf, size_t cap);
    size_t (*head_write)(const dq__plan *pl, unsigned b, uint8_t *out);
} dq__coder;

/* The rows' functions, defined in the coder parts. */
static inline uint64_t dq__fixed_bound(uint64_t n, unsigned b);
static inline uint64_t dq__elias_payload_bound(uint64_t n, unsigned b);
static inline size_t dq__elias_auto_room(unsigned b);
static inline dq_status dq__elias_open(dq__cdec *d);
static inline const uint8_t *dq__elias_rd_block(dq__cdec *d, uint8_t *out);
static inline dq_status dq__elias_end(dq__cdec *d);
static inline void dq__elias_bounds(const dq__plan_in *in, dq__plan *pl, dq__plan_est *est);
static inline void dq__elias_size(const dq__plan_in *in, dq__plan *pl, const dq__plan_est *est, uint64_t limit);
static inline size_t dq__elias_write(const dq__plan_in *in, const dq__plan *pl, uint8_t *out, size_t cap,
                                     size_t scratch, int inplace);
static inline uint64_t dq__elias_work(uint64_t n, unsigned b);
static inline uint64_t dq__rans8_payload_bound(uint64_t n, unsigned b);
static inline dq_status dq__rans8_open(dq__cdec *d);
static inline dq_status dq__rans8_rewind(dq__cdec *d);
static inline const uint8_t *dq__rans8_block(dq__cdec *d, uint8_t *out);
static inline dq_status dq__rans8_end(dq__cdec *d);
static inline uint64_t dq__r32_payload_bound(uint64_t n, unsigned b);
static inline size_t dq__r32_auto_room(unsigned b);
static inline dq_status dq__r32_rd_open(dq__cdec *d);
static inline dq_status dq__r32_rd_rewind(dq__cdec *d);
static inline const uint8_t *dq__r32_rd_block(dq__cdec *d, uint8_t *out);
static inline dq_status dq__r32_rd_end(dq__cdec *d);
static inline dq_status dq__r32_rd_range(dq__cdec *d, size_t begin, size_t end);
static inline void dq__r32_plan_bounds(const dq__plan_in *in, dq__plan *pl, dq__plan_est *est);
static inline int dq__r32_room_fits(const dq__plan_in *in, dq__plan *pl, const dq__plan_est *est, uint64_t room);
static inline void dq__r32_size(const dq__plan_in *in, dq__plan *pl, const dq__plan_est *est, uint64_t limit);
static inline size_t dq__r32_write(const dq__plan_in *in, const dq__plan *pl, uint8_t *out, size_t cap,
                                   size_t scratch, int inplace);
static inline size_t dq__r32_chunk_elems(unsigned b);
static inline uint64_t dq__r32_work(uint64_t n, unsigned b);
static inline uint64_t dq__r32_part_cap(const uint64_t *counts, const dq__plan *pl, unsigned b, size_t elems);
static inline size_t dq__r32_part(const dq__plan_in *in, const dq__plan *pl, size_t e0, size_t e1, uint8_t *buf,
                                  size_t cap);
static inline size_t dq__r32_head_write(const dq__plan *pl, unsigned b, uint8_t *out);

#define DQ__RANS_MAX_SYMS ((uint64_t)1 << 40) /* keeps the rANS size bounds in 64-bit integers */
#define DQ__PS_COUNTS 1u /* the symbol counts */
#define DQ__PS_GAPS 2u   /* the gap counts of the full blocks, with the symbol counts */
static const dq__coder dq__coders[DQ__NCODERS] = {
    /* 0: fixed, b bits per code (FORMAT 8) */
    {1, 16, 0, 0, 0, DQ_MAX_ELEMS, dq__fixed_bound, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL},
    /* 1: Elias omega gaps, signs and levels (FORMAT 17.2) */
    {2, 16, 1, 8, DQ__PS_GAPS, DQ_MAX_ELEMS, dq__elias_payload_bound, dq__elias_auto_room, dq__elias_open,
     dq__elias_open, dq__elias_rd_block, dq__elias_end, NULL, dq__elias_bounds, NULL, dq__elias_size, dq__elias_write,
     NULL, dq__elias_work, NULL, NULL, NULL},
    /* 2: rANS, 8 states, one stream (FORMAT 17.3): read only, asking for it sends coder 3 */
    {1, 8, 3, 8, 0, DQ_MAX_ELEMS, dq__rans8_payload_bound, NULL, dq__rans8_open, dq__rans8_rewind, dq__rans8_block,
     dq__rans8_end, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    /* 3: rANS, 32 states, in chunks (FORMAT 17.6) */
    {1, 8, 3, 8, DQ__PS_COUNTS, DQ__RANS_MAX_SYMS, dq__r32_payload_bound, dq__r32_auto_room, dq__r32_rd_open,
     dq__r32_rd_rewind, dq__r32_rd_block, dq__r32_rd_end, dq__r32_rd_range, dq__r32_plan_bounds, dq__r32_room_fits,
     dq__r32_size, dq__r32_write, dq__r32_chunk_elems, dq__r32_work, dq__r32_part_cap, dq__r32_part,
     dq__r32_head_write},
};
/* The row of a coder byte; NULL for an unassigned one. */
static inline const dq__coder *dq__coder_row(unsigned coder) {
    return coder < DQ__NCODERS ? &dq__coders[coder] : NULL;
}
/* Whether a row carries b-bit codes. */
static inline int dq__coder_bits_ok(const dq__coder *r, unsigned b) { return b >= r->bits_min && b <= r->bits_max; }
/* A coded payload read from its start only: no ranges (Elias, coder 2). */
static inline int dq__coder_one_stream(unsigned coder) { return dq__coders[coder].open && !dq__coders[coder].range; }
/* Whether encoders send a row (a coder asked for that sends another is not sent itself). */
static inline int dq__coder_sent(unsigned coder) { return coder < DQ__NCODERS && dq__coders[coder].sent_as == coder; }
/* Whether a part of a message (a segment, a composed message's values) may carry b-bit codes
 * with this coder byte: one encoders send, at a width it carries. */
static inline int dq__coder_part_ok(unsigned coder, unsigned b) {
    return dq__coder_sent(coder) && dq__coder_bits_ok(&dq__coders[coder], b);
}

/* ---- the reader, whatever the coder */
static inline dq_status dq__cdec_open(dq__cdec *d, unsigned coder, unsigned b, size_t n, const uint8_t *pay,
                                      size_t len) {
    d->row = &dq__coders[coder];
    d->bits = b;
    d->n = n;
    d->k = 0;
    d->pay = pay;
    d->len = len;
    d->bad = 0;
    d->trusted = 0;
    return d->row->open(d);
}
static inline const uint8_t *dq__cdec_block(dq__cdec *d, uint8_t *out) { return d->row->block(d, out); }
static inline dq_status dq__cdec_end(dq__cdec *d) { return d->row->end(d); }
/* Decodes the whole payload once to validate it, then rewinds. */
static inline dq_status dq__cdec_validate(dq__cdec *d) {
    uint8_t tmp[DQ__BLOCK_BYTES(16u)];
    size_t k, nblk = (d->n + DQ__BLOCK - 1u) / DQ__BLOCK;
    dq_status st;
    for (k = 0; k < nblk; k++) dq__cdec_block(d, tmp);
    if ((st = dq__cdec_end(d)) != DQ_OK) return st;
    return d->row->rewind(d);
}
