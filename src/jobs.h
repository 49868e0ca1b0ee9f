/* ---------------------------------------------------------------- jobs: one message by parts
 * The one-call encoder's steps, cut at its two global points: the frequency table needs every
 * part's counts, and each part's coded bytes land after all earlier parts'. work holds the
 * state (the plan, a record per part: memcpy in and out, so work needs no alignment) and the
 * parts' rANS streams, each in a slot bounded from the part's counts. */
typedef struct dq__jrec {
    uint64_t cnt[256];             /* the part's symbol counts */
    uint64_t gaps[7];              /* its full blocks' gap counts (dq__k_elias_gaps), for AUTO */
    uint64_t slot, cap, beg;       /* its streams: work[JOB_SLOTS + slot + beg .. + cap) */
    int quantized, coded;
    dq_status st;                  /* dq_job_quantize's */
} dq__jrec;
typedef struct dq__jstate {
    dq__plan pl;
    int def_crc;
} dq__jstate;
#define DQ__JOB_STATE ((sizeof(dq__jstate) + 7u) & ~(size_t)7u)
#define DQ__JOB_REC ((sizeof(dq__jrec) + 7u) & ~(size_t)7u)

/* The job's resolved params: *c with the checksum the message carries (the default's included,
 * *def_crc = 1 then), *rans and *elias whether those coders may be sent. */
static inline dq_status dq__job_cfg(const dq_params *p, size_t n, size_t dst_cap, dq__cfg *c, int *def_crc,
                                    int *rans, int *elias) {
    dq_status st;
    if ((st = dq__cfg_make(p, n, c)) != DQ_OK) return st;
    *def_crc = 0;
    if (dq__default_crc(p, c)) {
        int ok;
        size_t size = dq__size(c, n, 1, &ok);
        if (ok && dst_cap >= size + 4u) *def_crc = 1;
    }
    if (*def_crc) c->checksum = 1u;
    *rans = c->bits <= 8u && (c->coder == DQ_CODER_RANS || c->coder == DQ_CODER_AUTO) &&
            (uint64_t)n <= DQ__RANS_MAX_SYMS;
    *elias = c->bits >= 2u && (c->coder == DQ_CODER_ELIAS || c->coder == DQ_CODER_AUTO);
    return DQ_OK;
}
/* The part unit (elements): the range unit, and with rANS also whole chunks (a power of two). */
static inline size_t dq__job_unit(const dq__cfg *c, size_t n, int rans) {
    uint64_t a = dq__align(c, n), u = a;
    if (rans) {
        uint64_t e = dq__r32_chunk_elems(c->bits), g = a & (~a + 1u); /* a's power-of-two factor */
        u = g >= e ? a : a / g * e;
    }
    return u < (uint64_t)n ? (size_t)u : n;
}
static inline size_t dq__job_parts(size_t n, size_t unit, size_t parts) {
    size_t units = n / unit + (n % unit != 0);
    return parts < units ? parts : units;
}
static inline uint64_t dq__job_bytes(const dq__cfg *c, size_t n, size_t parts, int rans, int elias) {
    uint64_t fixed = ((uint64_t)n * c->bits + 7u) / 8u, data = 0;
    if (rans) data = dq__r32_nchunks(n, c->bits) * (4u + DQ__R32_HEAD + 2u) + 2u * dq__r32_nsym(n, c->bits);
    else if (elias) data = fixed; /* the copy Elias reads from */
    return DQ__JOB_STATE + (uint64_t)parts * DQ__JOB_REC + data;
}

DQ_API dq_status dq_job_work_size(const dq_params *p, size_t n, size_t parts, size_t *size) {
    dq__cfg c;
    dq_status st;
    int def_crc, rans, elias;
    uint64_t w;
    if (!p || !size) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if (parts == 0) return DQ_ERR_PARAM;
    if ((st = dq__job_cfg(p, n, 0, &c, &def_crc, &rans, &elias)) != DQ_OK) return st;
    w = dq__job_bytes(&c, n, dq__job_parts(n, dq__job_unit(&c, n, rans), parts), rans, elias);
    if (w > (uint64_t)SIZE_MAX) return DQ_ERR_TOO_LARGE;
    *size = (size_t)w;
    return DQ_OK;
}

DQ_API dq_status dq_job_init(dq_job *job, const dq_params *p, size_t n, size_t parts, void *dst, size_t dst_cap,
                             void *work, size_t work_cap) {
    dq__cfg c;
    dq_status st;
    dq__jrec r;
    dq__jstate js;
    int def_crc, rans, elias, ok;
    size_t size, j;
    uint64_t need;
    if (!job || !p || !dst) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if (parts == 0) return DQ_ERR_PARAM;
    if ((st = dq__job_cfg(p, n, dst_cap, &c, &def_crc, &rans, &elias)) != DQ_OK) return st;
    size = dq__size(&c, n, 1, &ok);
    if (!ok) return DQ_ERR_TOO_LARGE;
    if (dst_cap < size) return DQ_ERR_DST_TOO_SMALL;
    job->unit = dq__job_unit(&c, n, rans);
    job->units = n / job->unit + (n % job->unit != 0);
    job->parts = dq__job_parts(n, job->unit, parts);
    need = dq__job_bytes(&c, n, job->parts, rans, elias);
    if (need > (uint64_t)SIZE_MAX) return DQ_ERR_TOO_LARGE;
    if (!work) return DQ_ERR_NULL;
    if (work_cap < need) return DQ_ERR_WORKSPACE;
    job->p = *p;
    job->n = n;
    job->dst = (uint8_t *)dst;
    job->dst_cap = dst_cap;
    job->work = (uint8_t *)work;
    job->work_cap = work_cap;
    memset(&js, 0, sizeof js);
    js.def_crc = def_crc;
    memcpy(job->work, &js, sizeof js);
    memset(&r, 0, sizeof r);
    for (j = 0; j < job->parts; j++) memcpy(job->work + DQ__JOB_STATE + j * DQ__JOB_REC, &r, sizeof r);
    job->phase = 1;
    return DQ_OK;
}

/* Part j's elements: the units shared out, the first ones one more. */
static inline void dq__job_elems(const dq_job *job, size_t j, size_t *begin, size_t *end) {
    size_t q = job->units / job->parts, r = job->units % job->parts, u0 = j * q + (j < r ? j : r);
    size_t u1 = u0 + q + (j < r);
    *begin = u0 * job->unit;
    *end = u1 * job->unit < job->n ? u1 * job->unit : job->n;
}
DQ_API dq_status dq_job_range(const dq_job *job, size_t j, size_t *begin, size_t *end) {
    if (!job || !begin || !end) return DQ_ERR_NULL;
    if (!job->parts || j >= job->parts) return DQ_ERR_PARAM;
    dq__job_elems(job, j, begin, end);
    return DQ_OK;
}

/* Part j's chunks [*c0, *c1) (rANS chunks: parts hold whole ones). */
static inline void dq__job_chunks(const dq_job *job, unsigned b, size_t j, size_t *c0, size_t *c1) {
    size_t begin, end, E = dq__r32_chunk_elems(b);
    dq__job_elems(job, j, &begin, &end);
    *c0 = begin / E;
    *c1 = (end - 1u) / E + 1u;
}

DQ_API dq_status dq_job_quantize(const dq_job *job, size_t j, const float *x, float *residual) {
    dq__cfg c;
    dq__jrec r;
    dq_status st;
    int def_crc, rans, elias;
    size_t begin, end, at;
    if (!job || !x) return DQ_ERR_NULL;
    if (job->phase != 1u || j >= job->parts) return DQ_ERR_PARAM;
    if ((st = dq__job_cfg(&job->p, job->n, job->dst_cap, &c, &def_crc, &rans, &elias)) != DQ_OK) return st;
    dq__job_elems(job, j, &begin, &end);
    at = DQ__JOB_STATE + j * DQ__JOB_REC;
    memcpy(&r, job->work + at, sizeof r);
    if (r.quantized) return DQ_ERR_PARAM;
    if (begin == 0) dq__write_header(&c, &job->p, job->n, job->dst);
    st = dq__lv_body(&c, &job->p, job->n, begin, end, DQ_F32, x + begin, DQ_F32, residual ? residual + begin : NULL,
                     job->dst + DQ_HEADER_SIZE);
    if (st == DQ_OK && rans) {
        unsigned b = c.bits;
        size_t c0, c1, k0, k1;
        const uint8_t *pay = job->dst + DQ_HEADER_SIZE + c.prefix;
        dq__job_chunks(job, b, j, &c0, &c1);
        k0 = dq__r32_chunk_span(b, job->n, c0).k0;
        k1 = dq__r32_chunk_span(b, job->n, c1 - 1u).k1;
        dq__sym_count(b, job->n, pay, k0, k1, dq__r32_chunk_span(b, job->n, c0).f0,
                      dq__r32_chunk_span(b, job->n, c1 - 1u).f1, r.cnt);
        if (elias && c.coder == DQ_CODER_AUTO) { /* a bound on the gaps, so that the plan may skip Elias' pass */
            /* before the part, a non-zero in every place (or at index -1): fewer gaps counted, still a bound */
            uint64_t st6[6] = {~(uint64_t)0, ~(uint64_t)0, ~(uint64_t)0, ~(uint64_t)0, ~(uint64_t)0, ~(uint64_t)0};
            size_t full = job->n / DQ__BLOCK;
            if (k0 == 0) {
                memset(st6, 0, sizeof st6);
                st6[0] = (uint64_t)1 << 63;
            }
            if (k1 > full) k1 = full;
            if (k1 > k0) dq__k_elias_gaps(pay + k0 * DQ__BLOCK_BYTES(b), b, k1 - k0, st6, r.gaps);
        }
    }
    r.quantized = 1;
    r.st = st;
    memcpy(job->work + at, &r, sizeof r);
    return st;
}

DQ_API dq_status dq_job_plan(dq_job *job) {
    dq__cfg c;
    dq__jrec r;
    dq__jstate js;
    dq_status st;
    int def_crc, rans, elias;
    uint64_t cnt[256], gaps[7], slot = 0;
    size_t j, s, A;
    if (!job) return DQ_ERR_NULL;
    if (job->phase != 1u) return DQ_ERR_PARAM;
    if ((st = dq__job_cfg(&job->p, job->n, job->dst_cap, &c, &def_crc, &rans, &elias)) != DQ_OK) return st;
    job->phase = 0; /* until it succeeds */
    A = (size_t)1 << dq__sym_bits(c.bits <= 8u ? c.bits : 8u);
    memset(cnt, 0, sizeof cnt);
    memset(gaps, 0, sizeof gaps);
    for (j = 0; j < job->parts; j++) {
        memcpy(&r, job->work + DQ__JOB_STATE + j * DQ__JOB_REC, sizeof r);
        if (!r.quantized) return DQ_ERR_PARAM;
        if (r.st != DQ_OK) return r.st;
        for (s = 0; s < A; s++) cnt[s] += r.cnt[s];
        for (s = 0; s < 7; s++) gaps[s] += r.gaps[s];
    }
    memcpy(&js, job->work, sizeof js);
    dq__plan_make(&c, job->n, job->dst + DQ_HEADER_SIZE + c.prefix, rans ? cnt : NULL,
                  rans && elias && c.coder == DQ_CODER_AUTO ? gaps : NULL, c.coder, 0, UINT64_MAX, &js.pl);
    if (js.def_crc && js.pl.size[js.pl.coder] + 4u >= js.pl.size[DQ_CODER_FIXED])
        js.pl.coder = DQ_CODER_FIXED; /* the checksum would eat the saving */
    if (js.pl.coder == DQ_CODER_RANS) { /* slots from each part's bound */
        uint64_t nch = dq__r32_nchunks(job->n, c.bits);
        for (j = 0; j < job->parts; j++) {
            size_t c0, c1;
            uint64_t ub, lb;
            memcpy(&r, job->work + DQ__JOB_STATE + j * DQ__JOB_REC, sizeof r);
            dq__job_chunks(job, c.bits, j, &c0, &c1);
            dq__r32_bounds(r.cnt, js.pl.f, (unsigned)A, (uint64_t)(c1 - c0), 0, &ub, &lb);
            r.slot = slot;
            r.cap = ub;
            slot += ub;
            memcpy(job->work + DQ__JOB_STATE + j * DQ__JOB_REC, &r, sizeof r);
        }
        if (slot > nch * (4u + DQ__R32_HEAD + 2u) + 2u * dq__r32_nsym(job->n, c.bits)) return DQ_ERR_CORRUPT;
    }
    memcpy(job->work, &js, sizeof js);
    job->phase = 2;
    return DQ_OK;
}

DQ_API dq_status dq_job_code(const dq_job *job, size_t j) {
    dq__jstate js;
    dq__jrec r;
    dq__r32_esym et[256];
    unsigned b;
    size_t at, c0, c1, ci, w, L, sc, base;
    dq__cfg c;
    if (!job) return DQ_ERR_NULL;
    if (job->phase != 2u || j >= job->parts) return DQ_ERR_PARAM;
    at = DQ__JOB_STATE + j * DQ__JOB_REC;
    memcpy(&js, job->work, sizeof js);
    memcpy(&r, job->work + at, sizeof r);
    if (r.coded) return DQ_ERR_PARAM;
    if (js.pl.coder == DQ_CODER_RANS) {
        (void)dq__cfg_make(&job->p, job->n, &c);
        b = c.bits;
        sc = c.prefix;
        base = DQ__JOB_STATE + job->parts * DQ__JOB_REC + (size_t)r.slot;
        (void)dq__r32_tables(js.pl.f, 1u << dq__sym_bits(b), NULL, et);
        dq__job_chunks(job, b, j, &c0, &c1);
        w = (size_t)r.cap;
        for (ci = c1; ci-- > c0;) { /* from the last, each below the ones after it */
            L = w >= 4u ? dq__r32_chunk_encode(b, job->n, job->dst + DQ_HEADER_SIZE + sc, ci, et, job->work + base, w)
                        : 0u;
            if (!L || L + 4u > w) return DQ_ERR_CORRUPT; /* unreachable: the slot is the part's bound */
            w -= L + 4u;
            dq__st32(job->work + base + w, (uint32_t)L);
        }
        r.beg = w;
    }
    r.coded = 1;
    memcpy(job->work + at, &r, sizeof r);
    return DQ_OK;
}

DQ_API dq_status dq_job_finish(dq_job *job, size_t *dst_len) {
    dq__cfg c;
    dq__jstate js;
    dq__jrec r;
    dq_status st;
    int def_crc, rans, elias, ok;
    size_t size, crc, sc, j, at, len;
    uint8_t *out;
    if (!job || !dst_len) return DQ_ERR_NULL;
    if (job->phase != 2u) return DQ_ERR_PARAM;
    if ((st = dq__job_cfg(&job->p, job->n, job->dst_cap, &c, &def_crc, &rans, &elias)) != DQ_OK) return st;
    out = job->dst;
    sc = c.prefix;
    crc = c.checksum ? 4u : 0u;
    size = dq__size(&c, job->n, 1, &ok);
    memcpy(&js, job->work, sizeof js);
    for (j = 0; j < job->parts; j++) {
        memcpy(&r, job->work + DQ__JOB_STATE + j * DQ__JOB_REC, sizeof r);
        if (!r.coded) return DQ_ERR_PARAM;
    }
    job->phase = 0;
    if (js.pl.coder == DQ_CODER_RANS) {
        size_t slots = DQ__JOB_STATE + job->parts * DQ__JOB_REC;
        memmove(out + DQ__CODED_HEADER, out + DQ_HEADER_SIZE, sc);
        at = DQ__CODED_HEADER + sc + dq__rans_table_write(js.pl.f, 1u << dq__sym_bits(c.bits), out + DQ__CODED_HEADER + sc);
        for (j = 0; j < job->parts; j++) {
            memcpy(&r, job->work + DQ__JOB_STATE + j * DQ__JOB_REC, sizeof r);
            len = (size_t)(r.cap - r.beg);
            if (at > job->dst_cap - crc || len > job->dst_cap - crc - at)
                return DQ_ERR_DST_TOO_SMALL; /* unreachable: smaller than fixed */
            memcpy(out + at, job->work + slots + (size_t)(r.slot + r.beg), len);
            at += len;
        }
        dq__st64(out + DQ_HEADER_SIZE, (uint64_t)(at - DQ__CODED_HEADER - sc));
        dq__header_coder(out, DQ_CODER_RANS);
        size = at + crc;
    } else if (js.pl.coder == DQ_CODER_ELIAS) { /* one stream, from a copy of the fixed payload */
        size_t f = (size_t)(((uint64_t)job->n * c.bits + 7u) / 8u), slots = DQ__JOB_STATE + job->parts * DQ__JOB_REC;
        if (DQ__CODED_HEADER + sc > job->dst_cap - crc) return DQ_ERR_DST_TOO_SMALL; /* unreachable, as below */
        memcpy(job->work + slots, out + DQ_HEADER_SIZE + sc, f);
        memmove(out + DQ__CODED_HEADER, out + DQ_HEADER_SIZE, sc);
        len = dq__elias_encode(c.bits, job->n, job->work + slots, js.pl.nnz, out + DQ__CODED_HEADER + sc,
                               job->dst_cap - crc - DQ__CODED_HEADER - sc, 0, 0);
        if (!len) return DQ_ERR_DST_TOO_SMALL; /* unreachable: smaller than fixed */
        dq__st64(out + DQ_HEADER_SIZE, (uint64_t)len);
        dq__header_coder(out, DQ_CODER_ELIAS);
        size = DQ__CODED_HEADER + sc + len + crc;
    } else if (def_crc) {
        size = dq__drop_default_crc(out, size);
        crc = 0;
    }
    if (crc) dq__st32(out + size - 4u, dq__body_crc(out, size));
    *dst_len = size;
    return DQ_OK;
}

