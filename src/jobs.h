/* ---------------------------------------------------------------- jobs: one message by parts
 * The one-call encoder's steps (encode.h), cut at its two global points: the plan needs every
 * part's statistics, and each part's coded bytes land after all earlier parts'. Each part
 * quantizes its elements into dst in the fixed layout, gathering its statistics as it goes (the
 * symbol counts, and for AUTO the gap counts, so the plan may skip Elias' pass); the plan is the
 * planner's, from their sums; a coder whose payload is a head and independent parts (the coder
 * row's part ops: rANS chunks) codes each part into its own slot of work, bounded from the
 * part's counts; the last step writes the payload (the head and the parts' bytes, or the whole
 * payload for a one-stream coder, Elias, from a copy of the fixed payload in work since dst has
 * no room to spare), closes the body and writes the header, once. work holds the state (the
 * plan, a record per part: memcpy in and out, so work needs no alignment) and the slots. */
typedef struct dq__jrec {
    uint64_t cnt[256];       /* the part's symbol counts */
    uint64_t gaps[7];        /* its full blocks' gap counts (dq__k_elias_gaps), for AUTO */
    uint64_t slot, cap, beg; /* its bytes: work[JOB_SLOTS + slot + beg .. + cap) */
    int quantized, coded;
    dq_status st;            /* dq_job_quantize's */
} dq__jrec;
typedef struct dq__jstate {
    dq__plan pl;
    int def_crc;
} dq__jstate;
#define DQ__JOB_STATE ((sizeof(dq__jstate) + 7u) & ~(size_t)7u)
#define DQ__JOB_REC ((sizeof(dq__jrec) + 7u) & ~(size_t)7u)

/* The job's resolved params: *c with the checksum the message carries (the default's included,
 * *def_crc = 1 then). */
static inline dq_status dq__job_cfg(const dq_params *p, size_t n, size_t dst_cap, dq__cfg *c, int *def_crc) {
    dq_status st;
    if ((st = dq__cfg_make(p, n, c)) != DQ_OK) return st;
    *def_crc = 0;
    if (dq__default_crc(p, c)) {
        int ok;
        size_t size = dq__size(c, n, 1, &ok);
        if (ok && dst_cap >= size + 4u) *def_crc = 1;
    }
    if (*def_crc) c->checksum = 1u;
    return DQ_OK;
}
/* The part unit (elements): the range unit, and whole parts of every candidate coder that codes
 * in parts (rANS chunks, a power of two elements). */
static inline size_t dq__job_unit(const dq__cfg *c, size_t n) {
    uint64_t a = dq__align(c, n), u = a;
    unsigned k;
    for (k = 1; k < DQ__NCODERS; k++)
        if (dq__coders[k].part_elems && dq__plan_may(k, c->coder, c->bits, n)) {
            uint64_t e = dq__coders[k].part_elems(c->bits), g = u & (~u + 1u); /* u's power-of-two factor */
            u = g >= e ? u : u / g * e;
        }
    return u < (uint64_t)n ? (size_t)u : n;
}
static inline size_t dq__job_parts(size_t n, size_t unit, size_t parts) {
    size_t units = n / unit + (n % unit != 0);
    return parts < units ? parts : units;
}
/* The state, the records, and the most work bytes a candidate coder keeps. */
static inline uint64_t dq__job_bytes(const dq__cfg *c, size_t n, size_t parts) {
    uint64_t data = 0, x;
    unsigned k;
    for (k = 1; k < DQ__NCODERS; k++)
        if (dq__plan_may(k, c->coder, c->bits, n) && (x = dq__coders[k].work(n, c->bits)) > data) data = x;
    return DQ__JOB_STATE + (uint64_t)parts * DQ__JOB_REC + data;
}

DQ_API dq_status dq_job_work_size(const dq_params *p, size_t n, size_t parts, size_t *size) {
    dq__cfg c;
    dq_status st;
    int def_crc;
    uint64_t w;
    if (!p || !size) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if (parts == 0) return DQ_ERR_PARAM;
    if ((st = dq__job_cfg(p, n, 0, &c, &def_crc)) != DQ_OK) return st;
    w = dq__job_bytes(&c, n, dq__job_parts(n, dq__job_unit(&c, n), parts));
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
    int def_crc, ok;
    size_t size, j;
    uint64_t need;
    if (!job || !p || !dst) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if (parts == 0) return DQ_ERR_PARAM;
    if ((st = dq__job_cfg(p, n, dst_cap, &c, &def_crc)) != DQ_OK) return st;
    size = dq__size(&c, n, 1, &ok);
    if (!ok) return DQ_ERR_TOO_LARGE;
    if (dst_cap < size) return DQ_ERR_DST_TOO_SMALL;
    job->unit = dq__job_unit(&c, n);
    job->units = n / job->unit + (n % job->unit != 0);
    job->parts = dq__job_parts(n, job->unit, parts);
    need = dq__job_bytes(&c, n, job->parts);
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
/* What the planner reads of the job's message (its counts apart). */
static inline void dq__job_in(const dq_job *job, const dq__cfg *c, dq__plan_in *in) {
    in->bits = c->bits;
    in->n = job->n;
    in->crc = c->checksum ? 4u : 0u;
    in->fixed = ((uint64_t)job->n * c->bits + 7u) / 8u;
    in->payload = job->dst + DQ_HEADER_SIZE + c->prefix;
    in->counts = in->gaps = NULL;
}

DQ_API dq_status dq_job_quantize(const dq_job *job, size_t j, const float *x, float *residual) {
    dq__cfg c;
    dq__jrec r;
    dq__gather g;
    dq_status st;
    int def_crc;
    unsigned need;
    size_t begin, end, at;
    if (!job || !x) return DQ_ERR_NULL;
    if (job->phase != 1u || j >= job->parts) return DQ_ERR_PARAM;
    if ((st = dq__job_cfg(&job->p, job->n, job->dst_cap, &c, &def_crc)) != DQ_OK) return st;
    dq__job_elems(job, j, &begin, &end);
    at = DQ__JOB_STATE + j * DQ__JOB_REC;
    memcpy(&r, job->work + at, sizeof r);
    if (r.quantized) return DQ_ERR_PARAM;
    need = dq__plan_needs(c.coder, c.bits, job->n);
    if (need)
        dq__gather_init(&g, c.bits, job->n, begin / DQ__BLOCK, r.cnt, (need & DQ__PS_GAPS) ? r.gaps : NULL);
    st = dq__lv_body(&c, &job->p, job->n, begin, end, DQ_F32, x + begin, DQ_F32, residual ? residual + begin : NULL,
                     job->dst + DQ_HEADER_SIZE, need ? &g : NULL);
    if (need) dq__gather_end(&g);
    r.quantized = 1;
    r.st = st;
    memcpy(job->work + at, &r, sizeof r);
    return st;
}

DQ_API dq_status dq_job_plan(dq_job *job) {
    dq__cfg c;
    dq__jrec r;
    dq__jstate js;
    dq__plan_in in;
    dq_status st;
    int def_crc;
    unsigned need;
    uint64_t cnt[256], gaps[7], slot = 0;
    size_t j, s, A;
    const dq__coder *row;
    if (!job) return DQ_ERR_NULL;
    if (job->phase != 1u) return DQ_ERR_PARAM;
    if ((st = dq__job_cfg(&job->p, job->n, job->dst_cap, &c, &def_crc)) != DQ_OK) return st;
    job->phase = 0; /* until it succeeds */
    need = dq__plan_needs(c.coder, c.bits, job->n);
    A = (size_t)1 << dq__sym_bits(c.bits <= 8u ? c.bits : 8u);
    memset(cnt, 0, sizeof cnt);
    memset(gaps, 0, sizeof gaps);
    for (j = 0; j < job->parts; j++) {
        memcpy(&r, job->work + DQ__JOB_STATE + j * DQ__JOB_REC, sizeof r);
        if (!r.quantized) return DQ_ERR_PARAM;
        if (r.st != DQ_OK) return r.st;
        if (need)
            for (s = 0; s < A; s++) cnt[s] += r.cnt[s];
        if (need & DQ__PS_GAPS)
            for (s = 0; s < 7; s++) gaps[s] += r.gaps[s];
    }
    memcpy(&js, job->work, sizeof js);
    dq__job_in(job, &c, &in);
    in.counts = need ? cnt : NULL;
    in.gaps = (need & DQ__PS_GAPS) ? gaps : NULL;
    dq__plan_make(&in, c.coder, 0, UINT64_MAX, js.def_crc, &js.pl);
    row = &dq__coders[js.pl.coder];
    if (row->part) { /* slots from each part's bound */
        for (j = 0; j < job->parts; j++) {
            size_t begin, end;
            memcpy(&r, job->work + DQ__JOB_STATE + j * DQ__JOB_REC, sizeof r);
            dq__job_elems(job, j, &begin, &end);
            r.slot = slot;
            r.cap = row->part_cap(r.cnt, &js.pl, c.bits, end - begin);
            slot += r.cap;
            memcpy(job->work + DQ__JOB_STATE + j * DQ__JOB_REC, &r, sizeof r);
        }
        if (slot > row->work(job->n, c.bits)) return DQ_ERR_CORRUPT;
    }
    memcpy(job->work, &js, sizeof js);
    job->phase = 2;
    return DQ_OK;
}

DQ_API dq_status dq_job_code(const dq_job *job, size_t j) {
    dq__jstate js;
    dq__jrec r;
    dq__cfg c;
    dq__plan_in in;
    size_t at, begin, end, L;
    const dq__coder *row;
    if (!job) return DQ_ERR_NULL;
    if (job->phase != 2u || j >= job->parts) return DQ_ERR_PARAM;
    at = DQ__JOB_STATE + j * DQ__JOB_REC;
    memcpy(&js, job->work, sizeof js);
    memcpy(&r, job->work + at, sizeof r);
    if (r.coded) return DQ_ERR_PARAM;
    row = &dq__coders[js.pl.coder];
    if (row->part) { /* from the part's last piece, each below the ones after it, at the end of its slot */
        (void)dq__cfg_make(&job->p, job->n, &c);
        dq__job_in(job, &c, &in);
        dq__job_elems(job, j, &begin, &end);
        L = row->part(&in, &js.pl, begin, end,
                      job->work + DQ__JOB_STATE + job->parts * DQ__JOB_REC + (size_t)r.slot, (size_t)r.cap);
        if (!L) return DQ_ERR_CORRUPT; /* unreachable: the slot is the part's bound */
        r.beg = r.cap - L;
    }
    r.coded = 1;
    memcpy(job->work + at, &r, sizeof r);
    return DQ_OK;
}

DQ_API dq_status dq_job_finish(dq_job *job, size_t *dst_len) {
    dq__cfg c;
    dq__jstate js;
    dq__jrec r;
    dq__plan_in in;
    dq_status st;
    int def_crc;
    size_t crc, sc, j, body, slots, cap, L = 0, len;
    uint8_t *out, *pay;
    const dq__coder *row;
    if (!job || !dst_len) return DQ_ERR_NULL;
    if (job->phase != 2u) return DQ_ERR_PARAM;
    if ((st = dq__job_cfg(&job->p, job->n, job->dst_cap, &c, &def_crc)) != DQ_OK) return st;
    out = job->dst;
    sc = c.prefix;
    crc = c.checksum ? 4u : 0u;
    memcpy(&js, job->work, sizeof js);
    for (j = 0; j < job->parts; j++) {
        memcpy(&r, job->work + DQ__JOB_STATE + j * DQ__JOB_REC, sizeof r);
        if (!r.coded) return DQ_ERR_PARAM;
    }
    job->phase = 0;
    row = &dq__coders[js.pl.coder];
    slots = DQ__JOB_STATE + job->parts * DQ__JOB_REC;
    dq__job_in(job, &c, &in);
    body = sc + (size_t)in.fixed;
    if (row->head) {
        if (DQ_HEADER_SIZE + row->head + sc > job->dst_cap - crc)
            return DQ_ERR_DST_TOO_SMALL; /* unreachable, as below */
        pay = out + DQ_HEADER_SIZE + row->head + sc;
        cap = job->dst_cap - crc - (DQ_HEADER_SIZE + row->head + sc);
        if (row->part) { /* the head, then the parts' bytes in order */
            L = row->head_write(&js.pl, c.bits, pay);
            for (j = 0; j < job->parts; j++) {
                memcpy(&r, job->work + DQ__JOB_STATE + j * DQ__JOB_REC, sizeof r);
                len = (size_t)(r.cap - r.beg);
                if (L > cap || len > cap - L) return DQ_ERR_DST_TOO_SMALL; /* unreachable: smaller than fixed */
                memcpy(pay + L, job->work + slots + (size_t)(r.slot + r.beg), len);
                L += len;
            }
        } else { /* one stream, from a copy of the fixed payload */
            memcpy(job->work + slots, in.payload, (size_t)in.fixed);
            in.payload = job->work + slots;
            L = row->write(&in, &js.pl, pay, cap, 0, 0);
            if (!L) return DQ_ERR_DST_TOO_SMALL; /* unreachable: smaller than fixed */
        }
        body = dq__body_close(out + DQ_HEADER_SIZE, out + DQ_HEADER_SIZE, sc, L);
    }
    *dst_len =
        dq__message_close(&c, &job->p, job->n, js.pl.coder, dq__crc_sent(crc != 0, def_crc, js.pl.coder), out, body);
    return DQ_OK;
}
