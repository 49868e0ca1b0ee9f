/* Jobs (dq_job_*): one message encoded by parts, with every coder, gives the bytes of one
 * dq_encode() call with room to spare (dq_encode_bound_coded), and the same residual, whatever
 * the order the parts run in; on real threads too; phases out of order, failing parts and
 * short buffers give their status. */
#include <pthread.h>

#include "../dqsgd.h"
#include "harness.h"

#define SEED 0x10Bu

static dq_params mkp(unsigned bits, unsigned coder, uint32_t bucket, unsigned checksum) {
    dq_params p;
    memset(&p, 0, sizeof p);
    p.bits = bits;
    p.coder = coder;
    p.bucket = bucket;
    p.checksum = checksum;
    p.seed = SEED;
    p.step = 3;
    p.stream = 1;
    return p;
}

enum { GAUSS, SPARSE, CONSTANT };
/* GAUSS: N(0,1), rANS wins; SPARSE: a non-zero in 64, Elias wins; CONSTANT: one code. */
static void fill(float *x, size_t n, int kind, uint64_t seed) {
    dq_t_rng r;
    size_t i;
    r.s = seed;
    for (i = 0; i < n; i++)
        x[i] = kind == CONSTANT ? 0.25f : kind == SPARSE && i % 64u ? 0.0f : (float)dq_t_gauss(&r);
}

/* Runs a job over x with `parts` parts, each phase's parts in the order perm[0..parts) (a
 * rotation by `rot`). Returns the status of the first failing call; the message in *msg. */
static dq_status run_job(const dq_params *p, const float *x, size_t n, float *res, size_t parts, size_t rot,
                         uint8_t *dst, size_t dst_cap, size_t *len, size_t *got_parts) {
    dq_job job;
    size_t wsz = 0, j;
    uint8_t *work;
    dq_status st;
    if ((st = dq_job_work_size(p, n, parts, &wsz)) != DQ_OK) return st;
    work = (uint8_t *)xmalloc(wsz ? wsz : 1u); /* exact size: ASan sees any overrun */
    if ((st = dq_job_init(&job, p, n, parts, dst, dst_cap, work, wsz)) != DQ_OK) goto out;
    *got_parts = job.parts;
    for (j = 0; j < job.parts; j++)
        if ((st = dq_job_quantize(&job, (j + rot) % job.parts, x, res)) != DQ_OK) goto out;
    if ((st = dq_job_plan(&job)) != DQ_OK) goto out;
    for (j = 0; j < job.parts; j++)
        if ((st = dq_job_code(&job, (job.parts - 1u - j + rot) % job.parts)) != DQ_OK) goto out;
    st = dq_job_finish(&job, len);
out:
    free(work);
    return st;
}

/* One configuration: the job's bytes and residual against dq_encode()'s. */
static void same_as_one_call(const dq_params *p, int kind, size_t n, size_t parts, size_t rot, int with_res,
                             unsigned *coders_seen, size_t *max_parts) {
    size_t cap = dq_encode_bound_coded(n, p->bits ? p->bits : 4u), cap_job = 0, l1 = 0, l2 = 0, gp = 0;
    float *x = (float *)xmalloc(n * 4u), *r1 = NULL, *r2 = NULL;
    uint8_t *m1, *m2;
    dq_header h;
    fill(x, n, kind, n * 31u + (size_t)kind);
    if (with_res) {
        size_t i;
        r1 = (float *)xmalloc(n * 4u);
        for (i = 0; i < n; i++) r1[i] = (float)((int)(i % 7u) - 3) * 0.01f;
        r2 = fdup(r1, n);
    }
    CHECK(dq_encode_capacity(p, n, &cap_job) == DQ_OK);
    if (cap_job > cap) cap = cap_job;
    m1 = (uint8_t *)xmalloc(cap);
    m2 = (uint8_t *)xmalloc(cap_job);
    CHECK(dq_encode(p, x, n, r1, m1, cap, &l1) == DQ_OK);
    CHECKF(run_job(p, x, n, r2, parts, rot, m2, cap_job, &l2, &gp) == DQ_OK, "bits %u coder %u n %zu", p->bits,
           p->coder, n);
    CHECKF(l1 == l2 && memcmp(m1, m2, l1) == 0, "bits %u coder %u bucket %u n %zu parts %zu/%zu kind %d: %zu vs %zu",
           p->bits, p->coder, p->bucket, n, gp, parts, kind, l1, l2);
    if (with_res) CHECK(memcmp(r1, r2, n * 4u) == 0);
    if (dq_header_read(m2, l2, &h) == DQ_OK) *coders_seen |= 1u << h.coder;
    if (gp > *max_parts) *max_parts = gp;
    free(x);
    free(r1);
    free(r2);
    free(m1);
    free(m2);
}

static void test_same_bytes(void) {
    static const unsigned widths[] = {1, 2, 3, 4, 5, 8, 9, 16};
    static const unsigned coders[] = {DQ_CODER_DEFAULT, DQ_CODER_AUTO, DQ_CODER_RANS, DQ_CODER_ELIAS,
                                      DQ_CODER_FIXED_ONLY};
    unsigned seen = 0;
    size_t maxp = 0, wi, ci, run = 0;
    for (wi = 0; wi < sizeof widths / sizeof *widths; wi++)
        for (ci = 0; ci < sizeof coders / sizeof *coders; ci++) {
            unsigned b = widths[wi], c = coders[ci];
            size_t E = (size_t)65536u * (b <= 8u ? 8u / b : 1u), n;
            int kind;
            if ((c == DQ_CODER_RANS && b > 8u) || (c == DQ_CODER_ELIAS && b == 1u)) continue;
            for (kind = GAUSS; kind <= CONSTANT; kind++) {
                dq_params p = mkp(b, c, 0, (unsigned)(run & 1u));
                /* three chunks and a part of one (four parts at most), and a short vector */
                n = 3u * E + 2000u + (size_t)kind * 256u;
                if (b > 8u) n = 300000u;
                same_as_one_call(&p, kind, n, 4, run % 4u, run % 3u == 0, &seen, &maxp);
                same_as_one_call(&p, kind, 1000u + (size_t)kind, 3, run % 3u, 1, &seen, &maxp);
                run++;
            }
        }
    { /* one element, and a tail shorter than a block */
        dq_params p = mkp(4, DQ_CODER_DEFAULT, 0, 1);
        same_as_one_call(&p, GAUSS, 1, 4, 0, 1, &seen, &maxp);
        p = mkp(3, DQ_CODER_AUTO, 8, 0);
        same_as_one_call(&p, SPARSE, 7, 2, 1, 1, &seen, &maxp);
    }
    CHECK(seen == ((1u << DQ_CODER_FIXED) | (1u << DQ_CODER_ELIAS) | (1u << DQ_CODER_RANS))); /* all three sent */
    CHECK(maxp == 4u);
    { /* buckets: whole vector (one part), 8, one that is not a power of two, nearest rounding */
        static const uint32_t buckets[] = {DQ_BUCKET_WHOLE, 8u, 1000u, 4096u};
        size_t k;
        for (k = 0; k < 4; k++) {
            dq_params p = mkp(4, DQ_CODER_DEFAULT, buckets[k], 0);
            size_t gp = 0, n = 4u * 131072u + 8u * 777u;
            p.rounding = k == 3 ? DQ_ROUND_NEAREST : DQ_ROUND_DEFAULT;
            same_as_one_call(&p, GAUSS, n, 3, k, 1, &seen, &gp);
            CHECK(gp == (k == 0 ? 1u : k == 2 ? 1u : 3u)); /* bucket 1000: parts of 125 chunks */
        }
    }
    { /* other level schemes share the path */
        dq_params p = mkp(3, DQ_CODER_AUTO, 0, 1);
        p.scheme = DQ_SCHEME_NUQSGD;
        same_as_one_call(&p, GAUSS, 5u * 131072u, 5, 2, 0, &seen, &maxp);
        p = mkp(2, DQ_CODER_DEFAULT, 0, 0);
        p.scheme = DQ_SCHEME_TERNGRAD;
        same_as_one_call(&p, GAUSS, 3u * 262144u + 5u, 2, 1, 1, &seen, &maxp);
    }
}

/* More parts than units: one per unit; parts cover [0, n) in order, on unit boundaries. */
static void test_parts(void) {
    dq_params p = mkp(4, DQ_CODER_DEFAULT, 0, 0);
    size_t n = 2u * 131072u + 5u, cap = 0, wsz = 0, b0 = 0, b1 = 0, j, at = 0;
    uint8_t *dst, *work;
    dq_job job;
    CHECK(dq_encode_capacity(&p, n, &cap) == DQ_OK);
    CHECK(dq_job_work_size(&p, n, 16, &wsz) == DQ_OK);
    dst = (uint8_t *)xmalloc(cap);
    work = (uint8_t *)xmalloc(wsz);
    CHECK(dq_job_init(&job, &p, n, 16, dst, cap, work, wsz) == DQ_OK && job.parts == 3u);
    for (j = 0; j < job.parts; j++) {
        CHECK(dq_job_range(&job, j, &b0, &b1) == DQ_OK && b0 == at && b1 > b0 && (b0 % 131072u) == 0);
        at = b1;
    }
    CHECK(at == n);
    CHECK(dq_job_range(&job, 3, &b0, &b1) == DQ_ERR_PARAM);
    /* the fixed layout needs only the records */
    p.coder = DQ_CODER_FIXED_ONLY;
    CHECK(dq_job_work_size(&p, n, 2, &wsz) == DQ_OK && wsz > 0 && wsz < 8192u);
    free(dst);
    free(work);
}

static void test_errors(void) {
    dq_params p = mkp(4, DQ_CODER_DEFAULT, 0, 0);
    size_t n = 3u * 131072u, cap = 0, wsz = 0, len = 0, j, b0 = 0, b1 = 0;
    float *x = (float *)xmalloc(n * 4u), *res = (float *)xmalloc(n * 4u), *keep;
    uint8_t *dst, *work;
    dq_job job;
    fill(x, n, GAUSS, 5);
    for (j = 0; j < n; j++) res[j] = 0.001f * (float)(j % 5u);
    keep = fdup(res, n);
    CHECK(dq_encode_capacity(&p, n, &cap) == DQ_OK);
    CHECK(dq_job_work_size(&p, n, 3, &wsz) == DQ_OK);
    dst = (uint8_t *)xmalloc(cap);
    work = (uint8_t *)xmalloc(wsz);
    CHECK(dq_job_work_size(NULL, n, 3, &wsz) == DQ_ERR_NULL);
    CHECK(dq_job_work_size(&p, 0, 3, &wsz) == DQ_ERR_EMPTY);
    CHECK(dq_job_work_size(&p, n, 0, &wsz) == DQ_ERR_PARAM);
    CHECK(dq_job_init(&job, &p, n, 3, dst, cap, work, wsz - 1u) == DQ_ERR_WORKSPACE);
    CHECK(dq_job_init(&job, &p, n, 3, dst, cap, NULL, wsz) == DQ_ERR_NULL);
    CHECK(dq_job_init(&job, &p, n, 3, dst, 100, work, wsz) == DQ_ERR_DST_TOO_SMALL);
    {
        dq_params q = p;
        q.scheme = DQ_SCHEME_TOPK;
        q.k = 5;
        CHECK(dq_job_init(&job, &q, n, 3, dst, cap, work, wsz) == DQ_ERR_PARAM);
        q = p;
        q.bits = 17;
        CHECK(dq_job_init(&job, &q, n, 3, dst, cap, work, wsz) == DQ_ERR_BITS);
    }
    /* phases out of order */
    CHECK(dq_job_init(&job, &p, n, 3, dst, cap, work, wsz) == DQ_OK && job.parts == 3u);
    CHECK(dq_job_code(&job, 0) == DQ_ERR_PARAM);
    CHECK(dq_job_finish(&job, &len) == DQ_ERR_PARAM);
    CHECK(dq_job_quantize(&job, 0, x, res) == DQ_OK);
    CHECK(dq_job_quantize(&job, 0, x, res) == DQ_ERR_PARAM); /* twice */
    CHECK(dq_job_quantize(&job, 3, x, res) == DQ_ERR_PARAM);
    CHECK(dq_job_plan(&job) == DQ_ERR_PARAM); /* parts 1 and 2 missing */
    CHECK(dq_job_init(&job, &p, n, 3, dst, cap, work, wsz) == DQ_OK);
    memcpy(res, keep, n * 4u);
    for (j = 0; j < 3; j++) CHECK(dq_job_quantize(&job, j, x, res) == DQ_OK);
    CHECK(dq_job_plan(&job) == DQ_OK);
    CHECK(dq_job_quantize(&job, 1, x, res) == DQ_ERR_PARAM);
    CHECK(dq_job_plan(&job) == DQ_ERR_PARAM);
    CHECK(dq_job_code(&job, 2) == DQ_OK);
    CHECK(dq_job_code(&job, 2) == DQ_ERR_PARAM);
    CHECK(dq_job_finish(&job, &len) == DQ_ERR_PARAM); /* parts 0 and 1 not coded */
    CHECK(dq_job_code(&job, 0) == DQ_OK && dq_job_code(&job, 1) == DQ_OK);
    CHECK(dq_job_finish(&job, &len) == DQ_OK);
    CHECK(dq_verify(dst, len) == DQ_OK);
    CHECK(dq_job_finish(&job, &len) == DQ_ERR_PARAM); /* once */
    /* a failing part: its status from plan, its residual untouched, the job over */
    memcpy(res, keep, n * 4u);
    x[n / 2u] = (float)HUGE_VAL;
    CHECK(dq_job_init(&job, &p, n, 3, dst, cap, work, wsz) == DQ_OK);
    CHECK(dq_job_range(&job, 1, &b0, &b1) == DQ_OK && b0 <= n / 2u && n / 2u < b1);
    CHECK(dq_job_quantize(&job, 1, x, res) == DQ_ERR_NONFINITE);
    CHECK(memcmp(res + b0, keep + b0, (b1 - b0) * 4u) == 0);
    CHECK(dq_job_quantize(&job, 0, x, res) == DQ_OK && dq_job_quantize(&job, 2, x, res) == DQ_OK);
    CHECK(dq_job_plan(&job) == DQ_ERR_NONFINITE);
    CHECK(dq_job_code(&job, 0) == DQ_ERR_PARAM && dq_job_finish(&job, &len) == DQ_ERR_PARAM);
    CHECK(dq_job_plan(&job) == DQ_ERR_PARAM);
    CHECK(dq_job_init(NULL, &p, n, 3, dst, cap, work, wsz) == DQ_ERR_NULL);
    CHECK(dq_job_quantize(NULL, 0, x, res) == DQ_ERR_NULL && dq_job_plan(NULL) == DQ_ERR_NULL);
    CHECK(dq_job_code(NULL, 0) == DQ_ERR_NULL && dq_job_finish(NULL, &len) == DQ_ERR_NULL);
    free(x);
    free(res);
    free(keep);
    free(dst);
    free(work);
}

/* Real threads: T workers, each phase separated by joins, against one call. */
typedef struct worker {
    dq_job *job;
    size_t j;
    int phase;
    const float *x;
    float *res;
    dq_status st;
} worker;
static void *work_part(void *arg) {
    worker *w = (worker *)arg;
    w->st = w->phase == 1 ? dq_job_quantize(w->job, w->j, w->x, w->res) : dq_job_code(w->job, w->j);
    return NULL;
}
static void test_threads(void) {
    enum { T = 4 };
    dq_params p = mkp(4, DQ_CODER_DEFAULT, 0, 0);
    size_t n = 9u * 131072u + 3000u, cap = 0, wsz = 0, l1 = 0, l2 = 0, j, i;
    float *x = (float *)xmalloc(n * 4u), *r1 = (float *)xmalloc(n * 4u), *r2;
    uint8_t *m1, *m2, *work;
    pthread_t th[T];
    worker w[T];
    dq_job job;
    int phase;
    fill(x, n, GAUSS, 77);
    for (i = 0; i < n; i++) r1[i] = 0.002f * (float)(i % 11u);
    r2 = fdup(r1, n);
    CHECK(dq_encode_capacity(&p, n, &cap) == DQ_OK);
    CHECK(dq_job_work_size(&p, n, T, &wsz) == DQ_OK);
    m1 = (uint8_t *)xmalloc(dq_encode_bound_coded(n, 4));
    m2 = (uint8_t *)xmalloc(cap);
    work = (uint8_t *)xmalloc(wsz);
    CHECK(dq_encode(&p, x, n, r1, m1, dq_encode_bound_coded(n, 4), &l1) == DQ_OK);
    CHECK(dq_job_init(&job, &p, n, T, m2, cap, work, wsz) == DQ_OK && job.parts == (size_t)T);
    for (phase = 1; phase <= 2; phase++) {
        for (j = 0; j < T; j++) {
            w[j].job = &job;
            w[j].j = j;
            w[j].phase = phase;
            w[j].x = x;
            w[j].res = r2;
            w[j].st = DQ_ERR_PARAM;
            CHECK(pthread_create(&th[j], NULL, work_part, &w[j]) == 0);
        }
        for (j = 0; j < T; j++) {
            CHECK(pthread_join(th[j], NULL) == 0);
            CHECK(w[j].st == DQ_OK);
        }
        if (phase == 1) CHECK(dq_job_plan(&job) == DQ_OK);
    }
    CHECK(dq_job_finish(&job, &l2) == DQ_OK);
    CHECK(l1 == l2 && memcmp(m1, m2, l1) == 0);
    CHECK(memcmp(r1, r2, n * 4u) == 0);
    CHECK(m2[8] == DQ_CODER_RANS);
    free(x);
    free(r1);
    free(r2);
    free(m1);
    free(m2);
    free(work);
}

int main(void) {
    RUN(test_same_bytes);
    RUN(test_parts);
    RUN(test_errors);
    RUN(test_threads);
    return dq_t_finish();
}
