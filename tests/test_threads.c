/* test_threads.c - the range API under POSIX threads.
 *
 * T threads encode, decode and accumulate disjoint ranges of one vector (dq_encode_range,
 * dq_decode_range, dq_decode_add_range): the message, the residual and the decoded output must
 * equal those of one dq_encode / dq_decode / dq_decode_add call bit for bit. Ranges are handed
 * out statically (contiguous shares), round-robin, or from a mutex-protected queue in shuffled
 * order with random yields, so that the order of completion varies (the range with begin = 0,
 * which writes the header, may finish last). Half the runs give each range private copies
 * of exactly its slices (x, residual, output), so that a read or write outside the range is an
 * AddressSanitizer error, not a silent pass. Also: threads encoding different messages from one
 * read-only input, and threads decoding one read-only message, match the single-threaded results.
 *
 * Threads write only their ranges and their own status slots; every CHECK runs on the main
 * thread after the join (the harness counters are not thread-safe). `make tsan` runs this file
 * under ThreadSanitizer, where any overlap between ranges is reported as a data race. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include "dqsgd.h"
#include "harness.h"

#define MAX_THREADS 16u
static const unsigned k_threads[5] = {1, 2, 3, 8, 16};
static const unsigned k_bits[3] = {1, 4, 16};
static const uint32_t k_buckets[4] = {8, 512, 264, DQ_BUCKET_WHOLE}; /* 264: alignment lcm(256, 264) = 8448 */
static const dq_rounding k_rounds[2] = {DQ_ROUND_STOCHASTIC, DQ_ROUND_NEAREST};
static const dq_norm k_norms[2] = {DQ_NORM_L2, DQ_NORM_MAX};
/* Sizes of the grid: one element, a partial block, one block, 5 blocks + 3, and 25000 = 97
 * blocks + 168, i.e. 98 ranges of 256 (bucket 8), 49 of 512, 3 of 8448 (bucket 264, the last
 * one short). test_all_schedules uses 100000, test_ranges_big 2^20 + 77. */
static const size_t k_sizes[5] = {1, 255, 256, 1283, 25000};
#define BIG_N (((size_t)1 << 20) + 77u)

/* ---------------------------------------------------------------- helpers */
static float *falloc(size_t n) { return (float *)xmalloc(n * sizeof(float)); }

/* Shared inputs for every case (prefixes of BIG_N elements), read-only once made: the
 * gradient, the initial error-feedback memory and the initial accumulator. */
static float *g_x, *g_res0, *g_acc0;

static void make_inputs(void) {
    static const float k_seg_scale[6] = {1.0f, 1e-3f, 1e3f, 0.0f, 1e-35f, 1.0f}; /* 1e-35: flushed to 0 */
    dq_t_rng r = {0x7468726561647321ull};
    size_t i, seg = 0;
    float s = 1.0f;
    g_x = falloc(BIG_N);
    g_res0 = falloc(BIG_N);
    g_acc0 = falloc(BIG_N);
    for (i = 0; i < BIG_N; i++) {
        if (i == seg) { /* segments of 333 elements straddle buckets and blocks */
            s = k_seg_scale[dq_t_next(&r) % 6u];
            seg += 333u;
        }
        g_x[i] = s * (float)dq_t_gauss(&r);
        g_res0[i] = 0.01f * (float)dq_t_gauss(&r);
        g_acc0[i] = (float)dq_t_gauss(&r);
    }
}

static dq_params mkp(unsigned bits, dq_rounding rnd, dq_norm norm, uint32_t bucket, unsigned checksum,
                     uint64_t step, uint32_t stream) {
    dq_params p;
    memset(&p, 0, sizeof p);
    p.coder = DQ_CODER_FIXED_ONLY; /* compared with ranges, which write the fixed layout */
    p.bits = bits;
    p.rounding = rnd;
    p.norm = norm;
    p.bucket = bucket;
    p.scheme = DQ_SCHEME_QSGD;
    p.seed = 0x5EEDu;
    p.step = step;
    p.stream = stream;
    p.checksum = checksum;
    return p;
}

/* Index of the first differing byte, or -1. */
static long first_diff(const void *a, const void *b, size_t bytes) {
    const uint8_t *x = (const uint8_t *)a, *y = (const uint8_t *)b;
    size_t i;
    if (memcmp(x, y, bytes) == 0) return -1;
    for (i = 0; x[i] == y[i]; i++) {}
    return (long)i;
}

/* ---------------------------------------------------------------- thread pool for one phase */
enum { OP_ENCODE, OP_DECODE, OP_ADD };
enum { SPLIT_STATIC, SPLIT_RR, SPLIT_QUEUE, N_SPLIT };
static const char *const k_sched_name[N_SPLIT] = {"static", "round-robin", "queue"};

typedef struct task {
    int op;
    size_t begin, end;
    int st; /* the call's dq_status; 1 = never ran */
} task;

typedef struct job {
    const dq_params *p; /* encode */
    size_t n;
    const float *x;
    float *res; /* error-feedback memory of all n elements, or NULL */
    uint8_t *msg;
    size_t msg_cap;
    const uint8_t *src; /* decode: the finished message */
    size_t src_len;
    float *out, *acc; /* n elements each */
    float w;
    int copy; /* each task works on private copies of exactly its slices */
    task *tasks;
    size_t ntasks;
    unsigned nthreads;
    int sched;
    const size_t *order; /* SPLIT_QUEUE: the order in which the queue hands out tasks */
    size_t next;         /* SPLIT_QUEUE: next position in order, under mu */
    pthread_mutex_t mu;
} job;

static void run_task(job *j, task *t) {
    size_t b = t->begin, len = t->end - t->begin;
    if (t->op == OP_ENCODE) {
        if (j->copy) {
            float *xs = fdup(j->x + b, len), *rs = j->res ? fdup(j->res + b, len) : NULL;
            t->st = (int)dq_encode_range(j->p, j->n, b, t->end, xs, rs, j->msg, j->msg_cap);
            if (rs) {
                memcpy(j->res + b, rs, len * sizeof *rs);
                free(rs);
            }
            free(xs);
        } else {
            t->st = (int)dq_encode_range(j->p, j->n, b, t->end, j->x + b, j->res ? j->res + b : NULL, j->msg,
                                         j->msg_cap);
        }
    } else {
        float *dst = (t->op == OP_DECODE ? j->out : j->acc) + b;
        float *s = j->copy ? fdup(dst, len) : dst;
        if (t->op == OP_DECODE)
            t->st = (int)dq_decode_range(j->src, j->src_len, b, t->end, s);
        else
            t->st = (int)dq_decode_add_range(j->src, j->src_len, b, t->end, j->w, s);
        if (j->copy) {
            memcpy(dst, s, len * sizeof *s);
            free(s);
        }
    }
}

/* Thread `id` of j->nthreads does its share of the tasks. */
static void work(job *j, unsigned id) {
    size_t i, T = j->nthreads;
    if (j->sched == SPLIT_STATIC) {
        for (i = j->ntasks * id / T; i < j->ntasks * (id + 1u) / T; i++) run_task(j, &j->tasks[i]);
    } else if (j->sched == SPLIT_RR) {
        for (i = id; i < j->ntasks; i += T) run_task(j, &j->tasks[i]);
    } else {
        for (;;) {
            pthread_mutex_lock(&j->mu);
            i = j->next++;
            pthread_mutex_unlock(&j->mu);
            if (i >= j->ntasks) break;
            if ((((uint64_t)i * 0x9E3779B97F4A7C15ull) >> 62) == 0) sched_yield(); /* a quarter of the tasks */
            run_task(j, &j->tasks[j->order[i]]);
        }
    }
}

/* A pool of MAX_THREADS threads, started once: creating threads for every phase would cost
 * more than the work (about 0.05 ms a thread here, 0.7 ms under ThreadSanitizer). A phase
 * (generation) wakes threads 0..nthreads-1 only, each on its own condition variable, and the
 * main thread waits until they have all checked in. The mutex orders the main thread's writes
 * before the phase and the workers' writes before the main thread's checks. */
static struct pool {
    pthread_t th[MAX_THREADS];
    unsigned id[MAX_THREADS], started, finished, want; /* want: threads of the current phase */
    unsigned long gen;
    int quit;
    job *j;
    pthread_mutex_t mu;
    pthread_cond_t go[MAX_THREADS], done;
} g_pool;

static void *pool_main(void *arg) {
    unsigned id = *(const unsigned *)arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&g_pool.mu);
    for (;;) {
        job *j;
        while (!g_pool.quit && (g_pool.gen == seen || id >= g_pool.want))
            pthread_cond_wait(&g_pool.go[id], &g_pool.mu);
        if (g_pool.quit) break;
        seen = g_pool.gen;
        j = g_pool.j;
        pthread_mutex_unlock(&g_pool.mu);
        work(j, id);
        pthread_mutex_lock(&g_pool.mu);
        if (++g_pool.finished == g_pool.want) pthread_cond_signal(&g_pool.done);
    }
    pthread_mutex_unlock(&g_pool.mu);
    return NULL;
}
static int pool_start(void) {
    unsigned t;
    if (pthread_mutex_init(&g_pool.mu, NULL) != 0 || pthread_cond_init(&g_pool.done, NULL) != 0) return 0;
    for (t = 0; t < MAX_THREADS; t++) {
        g_pool.id[t] = t;
        if (pthread_cond_init(&g_pool.go[t], NULL) != 0) break;
        if (pthread_create(&g_pool.th[t], NULL, pool_main, &g_pool.id[t]) != 0) {
            pthread_cond_destroy(&g_pool.go[t]);
            break;
        }
        g_pool.started++;
    }
    return g_pool.started == MAX_THREADS;
}
static void pool_stop(void) {
    unsigned t;
    pthread_mutex_lock(&g_pool.mu);
    g_pool.quit = 1;
    for (t = 0; t < g_pool.started; t++) pthread_cond_signal(&g_pool.go[t]);
    pthread_mutex_unlock(&g_pool.mu);
    for (t = 0; t < g_pool.started; t++) {
        pthread_join(g_pool.th[t], NULL);
        pthread_cond_destroy(&g_pool.go[t]);
    }
    pthread_cond_destroy(&g_pool.done);
    pthread_mutex_destroy(&g_pool.mu);
}

/* Run the job's tasks on pool threads 0..j->nthreads-1; 0 if the pool has fewer threads (the
 * tasks then never ran and keep st = 1). */
static int run_job(job *j) {
    unsigned t;
    if (j->nthreads == 0 || j->nthreads > g_pool.started || pthread_mutex_init(&j->mu, NULL) != 0) return 0;
    j->next = 0;
    pthread_mutex_lock(&g_pool.mu);
    g_pool.j = j;
    g_pool.want = j->nthreads;
    g_pool.finished = 0;
    g_pool.gen++;
    for (t = 0; t < j->nthreads; t++) pthread_cond_signal(&g_pool.go[t]);
    while (g_pool.finished < g_pool.want) pthread_cond_wait(&g_pool.done, &g_pool.mu);
    g_pool.j = NULL; /* j goes out of scope; idle threads never look at it */
    g_pool.want = 0;
    pthread_mutex_unlock(&g_pool.mu);
    pthread_mutex_destroy(&j->mu);
    return 1;
}

/* Tasks covering [0, n): pieces of 1..maxk alignment units (the last one ends at n). */
static size_t split(size_t n, size_t align, unsigned maxk, int op, dq_t_rng *r, task *t) {
    size_t pos = 0, k = 0;
    while (pos < n) {
        size_t len = align * (size_t)(1u + (unsigned)(dq_t_next(r) % maxk));
        t[k].op = op;
        t[k].begin = pos;
        t[k].end = n - pos > len ? pos + len : n;
        t[k].st = 1;
        pos = t[k++].end;
    }
    return k;
}
static void shuffle(size_t *a, size_t n, dq_t_rng *r) {
    size_t i;
    for (i = 0; i < n; i++) a[i] = i;
    for (i = n; i > 1; i--) {
        size_t k = (size_t)(dq_t_next(r) % i), tmp = a[i - 1];
        a[i - 1] = a[k];
        a[k] = tmp;
    }
}
/* Index of the first task that did not return DQ_OK, or ntasks. */
static size_t first_bad(const task *t, size_t ntasks) {
    size_t i;
    for (i = 0; i < ntasks && t[i].st == (int)DQ_OK; i++) {}
    return i;
}

/* ---------------------------------------------------------------- ranges against one call */
typedef struct run_cfg {
    unsigned nthreads;
    int sched, copy;
    unsigned maxk; /* ranges are 1..maxk alignment units */
} run_cfg;

/* Runs of the grid rotate through threads x schedule x copy x range length. */
static unsigned g_rot;
static run_cfg next_cfg(void) {
    run_cfg c;
    c.nthreads = k_threads[g_rot % 5u];
    c.sched = (int)(g_rot / 5u % N_SPLIT);
    c.copy = (int)(g_rot / 15u % 2u);
    c.maxk = 1u + g_rot / 30u % 3u;
    g_rot++;
    return c;
}

static void describe(char *buf, size_t cap, const dq_params *p, size_t n, int ef, const run_cfg *c) {
    snprintf(buf, cap, "bits %u bucket %lu %s %s%s%s n %lu, %u threads %s%s ranges<=%u units", p->bits,
             (unsigned long)p->bucket, p->rounding == DQ_ROUND_NEAREST ? "nearest" : "stochastic",
             p->norm == DQ_NORM_MAX ? "max" : "L2", ef ? " ef" : "", p->checksum ? " checksum" : "", (unsigned long)n,
             c->nthreads, k_sched_name[c->sched], c->copy ? " private-copies" : "", c->maxk);
}

/* Encode, decode and decode-add one vector with the single-threaded calls, then once per
 * run_cfg with ranges on threads, and compare bit for bit. */
static void range_case(const dq_params *p, size_t n, int ef, const run_cfg *cfgs, size_t ncfg, uint64_t seed) {
    const float w = 0.25f;
    size_t size = 0, len = 0, align = dq_range_align(p, n), maxtasks, ci;
    uint8_t *ref_msg, *msg;
    float *ref_res = NULL, *ref_out, *ref_acc, *res = NULL, *out, *acc;
    task *tasks;
    size_t *order;
    dq_t_rng r;
    char what[200];
    dq_status st;

    r.s = seed;
    describe(what, sizeof what, p, n, ef, &cfgs[0]);
    CHECKF(dq_encode_capacity(p, n, &size) == DQ_OK && align > 0, "%s", what);
    if (size == 0 || align == 0) return;
    ref_msg = (uint8_t *)xmalloc(size);
    memset(ref_msg, 0, size);
    if (ef) ref_res = fdup(g_res0, n);
    ref_out = falloc(n);
    ref_acc = fdup(g_acc0, n);
    st = dq_encode(p, g_x, n, ref_res, ref_msg, size, &len);
    CHECKF(st == DQ_OK && len == size, "%s: dq_encode %s, len %lu of %lu", what, dq_strerror(st), (unsigned long)len,
           (unsigned long)size);
    CHECKF(dq_decode(ref_msg, size, ref_out, n) == DQ_OK, "%s", what);
    CHECKF(dq_decode_add(ref_msg, size, w, ref_acc, n) == DQ_OK, "%s", what);

    maxtasks = 2u * (n / align + 1u);
    tasks = (task *)xmalloc(maxtasks * sizeof *tasks);
    order = (size_t *)xmalloc(maxtasks * sizeof *order);
    msg = (uint8_t *)xmalloc(size); /* exactly the message: writing past it is an ASan error */
    out = falloc(n);
    acc = falloc(n);
    if (ef) res = falloc(n);
    for (ci = 0; ci < ncfg; ci++) {
        const run_cfg *c = &cfgs[ci];
        job j;
        size_t nt, bad;
        long d;
        describe(what, sizeof what, p, n, ef, c);
        memset(&j, 0, sizeof j);
        j.nthreads = c->nthreads;
        j.sched = c->sched;
        j.copy = c->copy;
        j.tasks = tasks;
        j.order = order;

        /* encode: ranges into one shared message, then finish on this thread */
        memset(msg, 0xA5 ^ (int)ci, size); /* differs from ref_msg's fill: unwritten bytes show */
        if (ef) memcpy(res, g_res0, n * sizeof *res);
        nt = split(n, align, c->maxk, OP_ENCODE, &r, tasks);
        shuffle(order, nt, &r);
        j.p = p;
        j.n = n;
        j.x = g_x;
        j.res = res;
        j.msg = msg;
        j.msg_cap = size;
        j.ntasks = nt;
        CHECKF(run_job(&j), "%s: no %u threads", what, c->nthreads);
        bad = first_bad(tasks, nt);
        CHECKF(bad == nt, "%s: dq_encode_range [%lu, %lu) gave %d", what, (unsigned long)tasks[bad < nt ? bad : 0].begin,
               (unsigned long)tasks[bad < nt ? bad : 0].end, tasks[bad < nt ? bad : 0].st);
        st = dq_encode_finish(msg, size);
        CHECKF(st == DQ_OK, "%s: dq_encode_finish %s", what, dq_strerror(st));
        d = first_diff(msg, ref_msg, size);
        CHECKF(d < 0, "%s: %lu ranges: message differs from dq_encode at byte %ld of %lu", what, (unsigned long)nt, d,
               (unsigned long)size);
        if (ef) {
            d = first_diff(res, ref_res, n * sizeof *res);
            CHECKF(d < 0, "%s: residual differs from dq_encode at element %ld", what, d / 4);
        }
        CHECKF(dq_verify(msg, size) == DQ_OK, "%s", what);

        /* decode and decode-add at once, each with its own split, from the shared message */
        memset(out, 0xFF, n * sizeof *out); /* NaN: elements not written show */
        memcpy(acc, g_acc0, n * sizeof *acc);
        nt = split(n, align, c->maxk, OP_DECODE, &r, tasks);
        nt += split(n, align, 1u + c->maxk % 3u, OP_ADD, &r, tasks + nt);
        shuffle(order, nt, &r);
        j.src = msg;
        j.src_len = size;
        j.out = out;
        j.acc = acc;
        j.w = w;
        j.ntasks = nt;
        CHECKF(run_job(&j), "%s: no %u threads", what, c->nthreads);
        bad = first_bad(tasks, nt);
        CHECKF(bad == nt, "%s: decode task %d [%lu, %lu) gave %d", what, tasks[bad < nt ? bad : 0].op,
               (unsigned long)tasks[bad < nt ? bad : 0].begin, (unsigned long)tasks[bad < nt ? bad : 0].end,
               tasks[bad < nt ? bad : 0].st);
        d = first_diff(out, ref_out, n * sizeof *out);
        CHECKF(d < 0, "%s: dq_decode_range differs from dq_decode at element %ld", what, d / 4);
        d = first_diff(acc, ref_acc, n * sizeof *acc);
        CHECKF(d < 0, "%s: dq_decode_add_range differs from dq_decode_add at element %ld", what, d / 4);
    }
    free(ref_msg);
    free(ref_res);
    free(ref_out);
    free(ref_acc);
    free(tasks);
    free(order);
    free(msg);
    free(out);
    free(acc);
    free(res);
}

/* The documented granularity: lcm(256, bucket) capped at n; one range for whole buckets. */
static void test_align(void) {
    size_t si, bi;
    for (bi = 0; bi < 4; bi++)
        for (si = 0; si < 5; si++) {
            dq_params p = mkp(4, DQ_ROUND_STOCHASTIC, DQ_NORM_L2, k_buckets[bi], 0, 0, 0);
            size_t n = k_sizes[si], lcm = k_buckets[bi] == 8u ? 256u : (k_buckets[bi] == 512u ? 512u : 8448u);
            size_t want = k_buckets[bi] == DQ_BUCKET_WHOLE || lcm > n ? n : lcm;
            CHECKF(dq_range_align(&p, n) == want, "bucket %lu n %lu: %lu, want %lu", (unsigned long)k_buckets[bi],
                   (unsigned long)n, (unsigned long)dq_range_align(&p, n), (unsigned long)want);
        }
}

/* Every param combination at every size of k_sizes, with rotating runs. */
static void test_ranges_grid(void) {
    unsigned bi, ri, ni, ki, ef, cks, si;
    uint64_t seed = 1;
    for (bi = 0; bi < 3; bi++)
        for (ri = 0; ri < 2; ri++)
            for (ni = 0; ni < 2; ni++)
                for (ki = 0; ki < 4; ki++)
                    for (ef = 0; ef < 2; ef++)
                        for (cks = 0; cks < 2; cks++)
                            for (si = 0; si < 5; si++) {
                                dq_params p = mkp(k_bits[bi], k_rounds[ri], k_norms[ni], k_buckets[ki], cks, seed, si);
                                size_t n = k_sizes[si], a = dq_range_align(&p, n);
                                run_cfg c[2];
                                c[0] = next_cfg();
                                c[1] = next_cfg();
                                range_case(&p, n, (int)ef, c, a < n ? 2u : 1u, seed++); /* two where there are ranges */
                            }
}

/* 2^20 + 77 elements, one case per bucket (4097, 2049, 125 and 1 ranges); the width and the
 * other parameters rotate. */
static void test_ranges_big(void) {
    static const unsigned bits[4] = {16, 1, 4, 4};
    unsigned k;
    for (k = 0; k < 4; k++) {
        dq_params p = mkp(bits[k], k_rounds[k % 2u], k_norms[k / 2u % 2u], k_buckets[k], (k + 1u) / 2u % 2u, 77u + k, k);
        run_cfg c = next_cfg();
        range_case(&p, BIG_N, k < 2u, &c, 1u, 1000u + k);
    }
}

/* Every thread count x schedule x private copies, for a few params with many ranges. */
static void test_all_schedules(void) {
    dq_params ps[3];
    run_cfg c[5 * N_SPLIT * 2];
    unsigned pi, ti, sc, cp, k = 0;
    ps[0] = mkp(4, DQ_ROUND_STOCHASTIC, DQ_NORM_L2, 512, 1, 5, 3); /* 196 units */
    ps[1] = mkp(1, DQ_ROUND_NEAREST, DQ_NORM_L2, 264, 1, 6, 4);    /* 12 units, the last one short */
    ps[2] = mkp(16, DQ_ROUND_STOCHASTIC, DQ_NORM_MAX, 8, 0, 7, 5); /* 391 units */
    for (ti = 0; ti < 5; ti++)
        for (sc = 0; sc < N_SPLIT; sc++)
            for (cp = 0; cp < 2; cp++, k++) {
                c[k].nthreads = k_threads[ti];
                c[k].sched = (int)sc;
                c[k].copy = (int)cp;
                c[k].maxk = 1u + (ti + sc) % 2u;
            }
    for (pi = 0; pi < 3; pi++) range_case(&ps[pi], 100000u, pi != 2u, c, k, 2000u + pi);
}

/* ---------------------------------------------------------------- concurrent whole calls */
typedef struct enc_job {
    dq_params p;
    size_t n;
    float *res;
    uint8_t *msg;
    size_t cap, len;
    int st;
} enc_job;

static void *enc_main(void *arg) {
    enc_job *e = (enc_job *)arg;
    e->st = (int)dq_encode(&e->p, g_x, e->n, e->res, e->msg, e->cap, &e->len);
    return NULL;
}

/* 16 threads encode messages from the same read-only input at once: threads 0..7 with the
 * same params and their own stream, 8..15 with other params, half with error feedback. */
static void test_concurrent_encoders(void) {
    enum { T = 16 };
    const size_t n = 100000;
    enc_job e[T];
    pthread_t th[T];
    unsigned t, started = 0;
    for (t = 0; t < T; t++) {
        e[t].p = t < 8u ? mkp(4, DQ_ROUND_STOCHASTIC, DQ_NORM_L2, 512, 0, 9, t)
                        : mkp(k_bits[t % 3u], k_rounds[t % 2u], k_norms[t / 2u % 2u], k_buckets[t % 4u], t / 4u % 2u, 9, t);
        e[t].n = n;
        e[t].cap = dq_encode_bound(n, e[t].p.bits);
        e[t].msg = (uint8_t *)xmalloc(e[t].cap);
        e[t].res = t % 2u ? fdup(g_res0, n) : NULL;
        e[t].len = 0;
        e[t].st = 1;
    }
    for (t = 0; t < T; t++) {
        if (pthread_create(&th[t], NULL, enc_main, &e[t]) != 0) break;
        started++;
    }
    for (t = 0; t < started; t++) pthread_join(th[t], NULL);
    CHECKF(started == T, "pthread_create failed after %u threads", started);
    for (t = 0; t < started; t++) {
        size_t len = 0;
        uint8_t *ref = (uint8_t *)xmalloc(e[t].cap);
        float *ref_res = e[t].res ? fdup(g_res0, n) : NULL;
        dq_status st = dq_encode(&e[t].p, g_x, n, ref_res, ref, e[t].cap, &len);
        CHECKF(e[t].st == (int)DQ_OK && st == DQ_OK, "thread %u: %d, single-threaded %d", t, e[t].st, (int)st);
        CHECKF(e[t].len == len && first_diff(e[t].msg, ref, len) < 0, "thread %u: message differs", t);
        if (ref_res) CHECKF(first_diff(e[t].res, ref_res, n * sizeof(float)) < 0, "thread %u: residual differs", t);
        free(ref);
        free(ref_res);
    }
    /* the streams were honoured: same params, different dither */
    for (t = 1; t < 8u && t < started; t++)
        CHECKF(e[t].len == e[0].len && first_diff(e[t].msg + DQ_HEADER_SIZE, e[0].msg + DQ_HEADER_SIZE,
                                                  e[0].len - DQ_HEADER_SIZE) >= 0,
               "streams 0 and %u gave the same body", t);
    for (t = 0; t < T; t++) {
        free(e[t].msg);
        free(e[t].res);
    }
}

typedef struct dec_job {
    const uint8_t *msg;
    size_t len, n, align;
    unsigned id;
    float *out, *acc, *rng_out;
    double norm2;
    int st[6];
} dec_job;

static void *dec_main(void *arg) {
    dec_job *d = (dec_job *)arg;
    dq_header h;
    size_t k, units = (d->n + d->align - 1u) / d->align;
    d->st[0] = (int)dq_verify(d->msg, d->len);
    d->st[1] = (int)dq_header_read(d->msg, d->len, &h);
    if (d->st[1] == (int)DQ_OK && h.count != d->n) d->st[1] = 1;
    d->st[2] = (int)dq_decode(d->msg, d->len, d->out, d->n);
    d->st[3] = (int)dq_decode_add(d->msg, d->len, 0.25f, d->acc, d->n);
    d->st[4] = (int)dq_message_norm2(d->msg, d->len, &d->norm2);
    d->st[5] = (int)DQ_OK;
    for (k = 0; k < units; k++) { /* every unit, starting at a different one in each thread */
        size_t u = (k + d->id * 5u) % units, b = u * d->align, e = b + d->align < d->n ? b + d->align : d->n;
        dq_status s = dq_decode_range(d->msg, d->len, b, e, d->rng_out + b);
        if (s != DQ_OK) d->st[5] = (int)s;
    }
    return NULL;
}

/* 8 threads decode one read-only message at once, whole and by ranges; the third message is
 * rANS-coded (coder 3, three chunks), whose ranges decode the chunks that hold them. */
static void test_concurrent_decoders(void) {
    enum { T = 8 };
    unsigned ci;
    for (ci = 0; ci < 3; ci++) {
        const size_t n = ci == 2 ? 300001u : 100000u;
        dq_params p = ci ? mkp(4, DQ_ROUND_STOCHASTIC, DQ_NORM_L2, ci == 2 ? 512u : 264u, 1, 11, 1)
                         : mkp(2, DQ_ROUND_NEAREST, DQ_NORM_L2, 8, 0, 12, 2);
        size_t cap, len = 0, align = dq_range_align(&p, n);
        uint8_t *msg;
        float *ref_out = falloc(n), *ref_acc = fdup(g_acc0, n);
        double ref_norm2 = 0.0;
        dec_job d[T];
        pthread_t th[T];
        unsigned t, k, started = 0;
        if (ci == 2) p.coder = DQ_CODER_RANS;
        cap = dq_encode_bound_coded(n, p.bits);
        msg = (uint8_t *)xmalloc(cap);
        CHECK(dq_encode(&p, g_x, n, NULL, msg, cap, &len) == DQ_OK);
        CHECK(ci < 2 || msg[8] == DQ_CODER_RANS);
        CHECK(dq_decode(msg, len, ref_out, n) == DQ_OK);
        CHECK(dq_decode_add(msg, len, 0.25f, ref_acc, n) == DQ_OK);
        CHECK(dq_message_norm2(msg, len, &ref_norm2) == DQ_OK);
        for (t = 0; t < T; t++) {
            d[t].msg = msg;
            d[t].len = len;
            d[t].n = n;
            d[t].align = align;
            d[t].id = t;
            d[t].out = falloc(n);
            d[t].acc = fdup(g_acc0, n);
            d[t].rng_out = falloc(n);
            d[t].norm2 = -1.0;
            for (k = 0; k < 6; k++) d[t].st[k] = 1;
        }
        for (t = 0; t < T; t++) {
            if (pthread_create(&th[t], NULL, dec_main, &d[t]) != 0) break;
            started++;
        }
        for (t = 0; t < started; t++) pthread_join(th[t], NULL);
        CHECKF(started == T, "pthread_create failed after %u threads", started);
        for (t = 0; t < started; t++) {
            for (k = 0; k < 6; k++) CHECKF(d[t].st[k] == (int)DQ_OK, "case %u thread %u call %u: %d", ci, t, k, d[t].st[k]);
            CHECKF(first_diff(d[t].out, ref_out, n * sizeof(float)) < 0, "case %u thread %u: dq_decode differs", ci, t);
            CHECKF(first_diff(d[t].acc, ref_acc, n * sizeof(float)) < 0, "case %u thread %u: dq_decode_add differs", ci, t);
            CHECKF(first_diff(d[t].rng_out, ref_out, n * sizeof(float)) < 0, "case %u thread %u: ranges differ", ci, t);
            CHECKF(first_diff(&d[t].norm2, &ref_norm2, sizeof ref_norm2) < 0, "case %u thread %u: norm2", ci, t);
        }
        for (t = 0; t < T; t++) {
            free(d[t].out);
            free(d[t].acc);
            free(d[t].rng_out);
        }
        free(msg);
        free(ref_out);
        free(ref_acc);
    }
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
/* RUN, and with DQ_TEST_VERBOSE=1 the wall time of each test. */
#define TIMED_RUN(fn)                                                                  \
    do {                                                                               \
        double t0_ = now();                                                            \
        RUN(fn);                                                                       \
        if (dq_t_verbose()) printf("  %-26s %6.2f s [%s]\n", #fn, now() - t0_, DQ_TEST_ISA); \
    } while (0)

int main(void) {
    make_inputs();
    if (!pool_start()) {
        fprintf(stderr, "could not start %u threads\n", MAX_THREADS);
        dq_t_failed++;
    }
    TIMED_RUN(test_align);
    TIMED_RUN(test_ranges_grid);
    TIMED_RUN(test_ranges_big);
    TIMED_RUN(test_all_schedules);
    TIMED_RUN(test_concurrent_encoders);
    TIMED_RUN(test_concurrent_decoders);
    pool_stop();
    free(g_x);
    free(g_res0);
    free(g_acc0);
    return dq_t_finish();
}
