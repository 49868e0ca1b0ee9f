/* test_mpi.c - dqsgd_mpi.h on a real communicator (mpirun -np 2, 3, 4; `make mpi-test`).
 *
 * Every rank can generate every rank's vector (seeded by rank and step), so each rank computes a
 * single-process reference of the whole exchange locally and compares it with what MPI gave it:
 *   allgather  bit-identical to dq_decode_add of the M messages in rank order; traffic counts;
 *              a bad message or a short workspace on one rank is the same status on every rank.
 *   shared     the output equals the decode of the locally summed integer levels, and that
 *              equals the float sum of the individually decoded levels exactly; every worker at
 *              +L and at -L does not overflow the width dq_shared_width picks, for bits 2..16.
 *   sra        bit-identical (output, both residuals, traffic) to a local emulation of the same
 *              calls (dq_encode per chunk, dq_requantize per reducer), also with empty chunks.
 *   ef         200 steps of sra with worker and reducer error feedback: the running sum of the
 *              aggregated vectors stays within the residual bound of the running sum of the true
 *              means (derived below); without the reducer's residual the error grows past it.
 * A test fails when it fails on any rank. Rank 0 prints "N passed, M failed (mpi, ...)"; the exit
 * status is nonzero on failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dqsgd_mpi.h"

static int g_rank, g_size, g_fail; /* g_fail: checks failed on this rank in the current test */

#define CHECKF(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            if (g_fail++ < 3) {                                                                    \
                fprintf(stderr, "  FAIL [rank %d of %d] %s:%d: %s: ", g_rank, g_size, __FILE__, __LINE__, #cond); \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fputc('\n', stderr);                                                               \
            }                                                                                      \
        }                                                                                          \
    } while (0)
#define CHECK(cond) CHECKF(cond, "%s", "")

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

static uint64_t mix(uint64_t z) {
    z += 0x9E3779B97F4A7C15u;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}
static double unit(uint64_t *s) { return (double)(mix((*s)++) >> 11) * (1.0 / 9007199254740992.0); }

/* Rank r's vector at step t: uniform in [-1, 1] times a scale per 64 elements spread over
 * 2^-6..2^6 (heterogeneous buckets), plus a small bias so the sums drift. */
static void gen(float *x, size_t n, unsigned r, unsigned t, uint64_t salt) {
    uint64_t s = mix(salt ^ ((uint64_t)r << 40) ^ ((uint64_t)t << 20));
    double scale = 1.0;
    size_t i;
    for (i = 0; i < n; i++) {
        if (i % 64 == 0) scale = ldexp(1.0, (int)(unit(&s) * 12.0) - 6);
        x[i] = (float)(scale * (2.0 * unit(&s) - 1.0 + 0.1));
    }
}

static dq_params qparams(unsigned bits, dq_norm norm, unsigned coder, uint64_t step) {
    dq_params p;
    memset(&p, 0, sizeof p);
    p.bits = bits;
    p.bucket = 512;
    p.norm = norm;
    p.rounding = DQ_ROUND_STOCHASTIC;
    p.seed = 42;
    p.step = step;
    p.coder = coder;
    return p;
}

/* ---------------------------------------------------------------- allgather */
static void test_allgather(void) {
    static const size_t ns[] = {1000, 4099, 20000};
    static const unsigned bits[] = {2, 4, 8, 13};
    static const unsigned coders[] = {DQ_CODER_FIXED_ONLY, DQ_CODER_AUTO, DQ_CODER_DEFAULT};
    size_t M = (size_t)g_size, a, b, c, k;
    for (a = 0; a < sizeof ns / sizeof *ns; a++)
        for (b = 0; b < sizeof bits / sizeof *bits; b++)
            for (c = 0; c < 2; c++) {
                size_t n = ns[a], cap = dq_encode_bound_coded(n, bits[b]), len = 0, wcap, expect_recv = 0;
                float *x = (float *)xmalloc(n * sizeof *x), *acc = (float *)xmalloc(n * sizeof *acc);
                float *ref = (float *)xmalloc(n * sizeof *ref);
                unsigned char *msg = (unsigned char *)xmalloc(cap), *mine = (unsigned char *)xmalloc(cap);
                void *work;
                dq_mpi_bytes by;
                dq_status st;
                float wgt = 0.75f / (float)M;
                size_t mylen = 0;
                for (k = 0; k < n; k++) acc[k] = ref[k] = (float)k * 0.001f; /* a nonzero start */
                for (k = 0; k < M; k++) { /* the reference: every rank's message, in rank order */
                    dq_params p = qparams(bits[b], DQ_NORM_L2, coders[c], 7);
                    p.stream = (uint32_t)k;
                    gen(x, n, (unsigned)k, 0, a * 100 + b);
                    st = dq_encode(&p, x, n, NULL, msg, cap, &len);
                    CHECK(st == DQ_OK);
                    CHECK(dq_decode_add(msg, len, wgt, ref, n) == DQ_OK);
                    if (k == (size_t)g_rank) {
                        memcpy(mine, msg, len);
                        mylen = len;
                    } else {
                        expect_recv += len;
                    }
                }
                wcap = dq_mpi_allgather_workspace_size(g_size, cap);
                work = xmalloc(wcap);
                st = dq_mpi_allgather_add(MPI_COMM_WORLD, mine, mylen, wgt, acc, n, work, wcap, &by);
                CHECKF(st == DQ_OK, "%s", dq_strerror(st));
                CHECKF(memcmp(acc, ref, n * sizeof *acc) == 0, "n %zu bits %u coder %u: not bit-identical", n, bits[b],
                       coders[c]);
                CHECK(by.sent == 16u + mylen && by.sent_meta == 16u);
                CHECK(by.recv == 16u * (M - 1u) + expect_recv && by.recv_meta == 16u * (M - 1u));
                free(work), free(x), free(acc), free(ref), free(msg), free(mine);
            }
}

/* A failure on one rank is the same status on every rank, and nobody blocks. */
static void test_allgather_errors(void) {
    size_t n = 3000, cap = dq_encode_bound(n, 4), len = 0, wcap, k;
    float *x = (float *)xmalloc(n * sizeof *x), *acc = (float *)xmalloc(n * sizeof *acc);
    unsigned char *msg = (unsigned char *)xmalloc(cap);
    void *work;
    dq_mpi_bytes by;
    dq_status st;
    dq_params p = qparams(4, DQ_NORM_L2, 0, 1);
    p.stream = (uint32_t)g_rank;
    gen(x, n, (unsigned)g_rank, 0, 5);
    CHECK(dq_encode(&p, x, n, NULL, msg, cap, &len) == DQ_OK);
    wcap = dq_mpi_allgather_workspace_size(g_size, cap);
    work = xmalloc(wcap);
    /* the last rank sends a message with a broken magic */
    if (g_rank == g_size - 1) msg[0] ^= 0xFFu;
    for (k = 0; k < n; k++) acc[k] = 0.0f;
    st = dq_mpi_allgather_add(MPI_COMM_WORLD, msg, len, 1.0f, acc, n, work, wcap, &by);
    CHECKF(st == DQ_ERR_BAD_MAGIC, "%s", dq_strerror(st));
    if (g_rank == g_size - 1) msg[0] ^= 0xFFu;
    /* rank 0 has room for fewer bytes than the messages need: everyone says so */
    st = dq_mpi_allgather_add(MPI_COMM_WORLD, msg, len, 1.0f, acc, n, work,
                              g_rank == 0 ? dq_mpi_allgather_workspace_size(g_size, 0) + len : wcap, &by);
    CHECKF(st == DQ_ERR_WORKSPACE, "%s", dq_strerror(st));
    /* a message of the wrong element count on rank 0 */
    st = dq_mpi_allgather_add(MPI_COMM_WORLD, msg, len, 1.0f, acc, g_rank == 0 ? n - 8 : n, work, wcap, &by);
    CHECKF(st == DQ_ERR_SIZE_MISMATCH, "%s", dq_strerror(st));
    /* and then it works again */
    st = dq_mpi_allgather_add(MPI_COMM_WORLD, msg, len, 1.0f, acc, n, work, wcap, &by);
    CHECKF(st == DQ_OK, "%s", dq_strerror(st));
    free(work), free(x), free(acc), free(msg);
}

/* ---------------------------------------------------------------- shared */

/* The shared pattern of the M vectors xs[k] computed in this process: the agreed exponents,
 * every worker's levels summed in int64, their decode (weight 1) and the float sum of the
 * individually decoded levels (weight 1, rank order), and the decode with weight 1/M. */
static void shared_check(const dq_params *p0, float *const *xs, size_t n, const float *out, unsigned w) {
    size_t M = (size_t)g_size, nb = dq_shared_buckets(p0, n), k, i;
    int8_t *e = (int8_t *)xmalloc(nb), *ek = (int8_t *)xmalloc(nb);
    int64_t *isum = (int64_t *)xmalloc(n * sizeof *isum);
    int32_t *lv = (int32_t *)xmalloc(n * sizeof *lv), *s32 = (int32_t *)xmalloc(n * sizeof *s32);
    void *sums = xmalloc(n * 4u);
    float *dec = (float *)xmalloc(n * sizeof *dec), *fsum = (float *)xmalloc(n * sizeof *fsum);
    float *isdec = (float *)xmalloc(n * sizeof *isdec), *ref = (float *)xmalloc(n * sizeof *ref);
    int bad_sum = 0, bad_float = 0, bad_out = 0;
    for (i = 0; i < nb; i++) e[i] = INT8_MIN;
    for (k = 0; k < M; k++) {
        dq_params p = *p0;
        p.stream = p0->stream + (uint32_t)k;
        CHECK(dq_shared_exponents(&p, xs[k], n, NULL, ek) == DQ_OK);
        for (i = 0; i < nb; i++) e[i] = ek[i] > e[i] ? ek[i] : e[i];
    }
    for (i = 0; i < n; i++) isum[i] = 0, fsum[i] = 0.0f;
    for (k = 0; k < M; k++) {
        dq_params p = *p0;
        p.stream = p0->stream + (uint32_t)k;
        CHECK(dq_shared_encode(&p, xs[k], n, NULL, e, 32, lv) == DQ_OK);
        for (i = 0; i < n; i++) isum[i] += lv[i];
        CHECK(dq_shared_decode(&p, lv, 32, n, e, 1.0f, dec) == DQ_OK); /* this worker alone */
        for (i = 0; i < n; i++) fsum[i] += dec[i];
    }
    /* the sums in the accumulator type the pattern uses: no overflow means they are unchanged */
    for (i = 0; i < n; i++) {
        int64_t v = isum[i];
        int64_t lim = w == 8u ? 127 : w == 16u ? 32767 : 2147483647;
        if (v > lim || v < -lim) bad_sum++;
        s32[i] = (int32_t)v;
        if (w == 8u) ((int8_t *)sums)[i] = (int8_t)v;
        else if (w == 16u) ((int16_t *)sums)[i] = (int16_t)v;
        else ((int32_t *)sums)[i] = (int32_t)v;
    }
    CHECKF(bad_sum == 0, "%d sums outside the %u-bit accumulator", bad_sum, w);
    CHECK(dq_shared_decode(p0, s32, 32, n, e, 1.0f, isdec) == DQ_OK);
    for (i = 0; i < n; i++) bad_float += memcmp(&isdec[i], &fsum[i], sizeof(float)) != 0;
    CHECKF(bad_float == 0, "%d integer sums differ from the float sum of decoded levels", bad_float);
    CHECK(dq_shared_decode(p0, sums, w, n, e, 1.0f / (float)M, ref) == DQ_OK);
    for (i = 0; i < n; i++) bad_out += memcmp(&ref[i], &out[i], sizeof(float)) != 0;
    CHECKF(bad_out == 0, "%d outputs differ from the local reference (w %u)", bad_out, w);
    free(e), free(ek), free(isum), free(lv), free(s32), free(sums), free(dec), free(fsum), free(isdec), free(ref);
}

static void test_shared(void) {
    static const size_t ns[] = {1000, 5000};
    static const unsigned bits[] = {2, 3, 4, 8, 12, 16};
    size_t M = (size_t)g_size, a, b, k;
    for (a = 0; a < 2; a++)
        for (b = 0; b < sizeof bits / sizeof *bits; b++) {
            size_t n = ns[a], wcap, nb;
            dq_params p = qparams(bits[b], a ? DQ_NORM_MAX : DQ_NORM_DEFAULT, 0, 3);
            unsigned w = dq_shared_width(bits[b], M);
            float **xs = (float **)xmalloc(M * sizeof *xs), *out = (float *)xmalloc(n * sizeof *out);
            void *work;
            dq_mpi_bytes by;
            dq_status st;
            if (a) p.rounding = DQ_ROUND_NEAREST;
            for (k = 0; k < M; k++) {
                xs[k] = (float *)xmalloc(n * sizeof(float));
                gen(xs[k], n, (unsigned)k, 1, 900 + b);
            }
            wcap = dq_mpi_shared_workspace_size(&p, n, g_size);
            CHECK(wcap > 0 && w > 0);
            work = xmalloc(wcap);
            st = dq_mpi_shared_allreduce(MPI_COMM_WORLD, &p, xs[g_rank], n, NULL, out, work, wcap, &by);
            CHECKF(st == DQ_OK, "%s", dq_strerror(st));
            shared_check(&p, xs, n, out, w);
            nb = dq_shared_buckets(&p, n);
            CHECK(by.sent == (nb + 1u) + (n + 1u) * (w / 8u) && by.recv == by.sent);
            for (k = 0; k < M; k++) free(xs[k]);
            free(xs), free(out), free(work);
        }
}

/* Every worker at the largest level +L (and then -L) in every element: the sum M * L must fit
 * the width dq_shared_width chose; checked for every width 2..16 this M allows. */
static void test_shared_worst(void) {
    size_t M = (size_t)g_size, n = 1024, i;
    unsigned bits, sign;
    for (bits = 2; bits <= 16; bits++)
        for (sign = 0; sign < 2; sign++) {
            unsigned w = dq_shared_width(bits, M);
            uint32_t L = (1u << (bits - 1u)) - 1u;
            dq_params p = qparams(bits, DQ_NORM_DEFAULT, 0, 4);
            float *x = (float *)xmalloc(n * sizeof *x), *out = (float *)xmalloc(n * sizeof *out);
            float **xs = (float **)xmalloc(M * sizeof *xs);
            size_t wcap = dq_mpi_shared_workspace_size(&p, n, g_size), k;
            void *work;
            dq_mpi_bytes by;
            dq_status st;
            int bad = 0;
            float v = ldexpf((float)L, -3);
            if (sign) v = -v;
            CHECK(w > 0);
            for (i = 0; i < n; i++) x[i] = ldexpf(v, -(int)(i / 512)); /* bucket 2 on a smaller unit */
            for (k = 0; k < M; k++) xs[k] = x;
            work = xmalloc(wcap);
            st = dq_mpi_shared_allreduce(MPI_COMM_WORLD, &p, x, n, NULL, out, work, wcap, &by);
            CHECKF(st == DQ_OK, "bits %u: %s", bits, dq_strerror(st));
            shared_check(&p, xs, n, out, w); /* includes: the int sums fit width w */
            /* every level is +-L exactly, so out = (1/M) * (M * L * 2^e) */
            for (i = 0; i < n; i++) {
                float want = (1.0f / (float)M) * ((float)((int32_t)(M * L) * (sign ? -1 : 1)) * ldexpf(1.0f, -3 - (int)(i / 512)));
                bad += memcmp(&want, &out[i], sizeof want) != 0;
            }
            CHECKF(bad == 0, "bits %u width %u: %d elements off", bits, w, bad);
            /* the next width down would not do: M * L exceeds its range (when there is one) */
            if (w > 8u) CHECK(M * L > (w == 16u ? 127u : 32767u));
            free(x), free(out), free(xs), free(work);
        }
}

/* ---------------------------------------------------------------- sra */

/* The whole scatter-reduce-allgather of M workers in this process: the chunk messages
 * (stream p.stream + k*M + j, worker residuals resw[k] sliced), the reducers (stream
 * rp.stream + M*M + j, reducer residual resr[j]), and the decode; the bytes rank r would
 * send and receive. */
static void sra_emulate(const dq_params *p, const dq_params *rp, float *const *xs, size_t n, float **resw,
                        float **resr, float *out, uint64_t *sent, uint64_t *recv) {
    size_t M = (size_t)g_size, r = (size_t)g_rank, j, k, b = 0, e = 0;
    size_t cap = dq_encode_bound(n, 16) + 64u;
    unsigned char **msgs = (unsigned char **)xmalloc(M * M * sizeof *msgs);
    size_t *lens = (size_t *)xmalloc(M * M * sizeof *lens);
    unsigned char *red = (unsigned char *)xmalloc(cap);
    float *acc = (float *)xmalloc(n * sizeof *acc);
    *sent = (M - 1u) * 8u + 8u;
    *recv = (M - 1u) * 8u + (M - 1u) * 8u;
    for (k = 0; k < M; k++)
        for (j = 0; j < M; j++) {
            dq_params q = *p;
            msgs[k * M + j] = (unsigned char *)xmalloc(cap);
            lens[k * M + j] = 0;
            CHECK(dq_chunk(p, n, M, j, &b, &e) == DQ_OK);
            if (e == b) continue;
            q.stream = p->stream + (uint32_t)(k * M + j);
            CHECK(dq_encode(&q, xs[k] + b, e - b, resw ? resw[k] + b : NULL, msgs[k * M + j], cap, &lens[k * M + j]) ==
                  DQ_OK);
            if (k == r && j != r) *sent += lens[k * M + j];
            if (j == r && k != r) *recv += lens[k * M + j];
        }
    for (j = 0; j < M; j++) {
        const void **ptrs = (const void **)xmalloc(M * sizeof *ptrs);
        size_t *ls = (size_t *)xmalloc(M * sizeof *ls), rl = 0;
        dq_params q = *rp;
        CHECK(dq_chunk(p, n, M, j, &b, &e) == DQ_OK);
        if (e > b) {
            for (k = 0; k < M; k++) ptrs[k] = msgs[k * M + j], ls[k] = lens[k * M + j];
            q.stream = rp->stream + (uint32_t)(M * M + j);
            CHECK(dq_requantize(&q, ptrs, ls, M, 1.0f / (float)M, acc, e - b, resr ? resr[j] : NULL, red, cap, &rl) ==
                  DQ_OK);
            CHECK(dq_decode(red, rl, out + b, e - b) == DQ_OK);
            if (j == r) *sent += rl;
            else *recv += rl;
        }
        free(ptrs), free(ls);
    }
    for (k = 0; k < M * M; k++) free(msgs[k]);
    free(msgs), free(lens), free(red), free(acc);
}

static void test_sra(void) {
    static const size_t ns[] = {1000, 3000, 20000}; /* 1000: 2 buckets, empty chunks when M > 2 */
    static const unsigned bits[] = {3, 4, 8};
    size_t M = (size_t)g_size, a, b, k, t;
    for (a = 0; a < sizeof ns / sizeof *ns; a++)
        for (b = 0; b < sizeof bits / sizeof *bits; b++) {
            size_t n = ns[a], wcap, cb = 0, ce = 0;
            dq_params p = qparams(bits[b], DQ_NORM_L2, 0, 0), rp = qparams(bits[b], DQ_NORM_MAX, 0, 0);
            float **xs = (float **)xmalloc(M * sizeof *xs), **resw = (float **)xmalloc(M * sizeof *resw);
            float **resr = (float **)xmalloc(M * sizeof *resr);
            float *out = (float *)xmalloc(n * sizeof *out), *ref = (float *)xmalloc(n * sizeof *ref);
            float *myres = (float *)calloc(n, sizeof(float)), *myred = (float *)calloc(n, sizeof(float));
            void *work;
            rp.seed = 43;
            CHECK(dq_chunk(&p, n, M, (size_t)g_rank, &cb, &ce) == DQ_OK);
            for (k = 0; k < M; k++) {
                xs[k] = (float *)xmalloc(n * sizeof(float));
                resw[k] = (float *)calloc(n, sizeof(float));
                resr[k] = (float *)calloc(n, sizeof(float));
            }
            wcap = dq_mpi_sra_workspace_size(&p, &rp, n, g_size);
            CHECK(wcap > 0);
            work = xmalloc(wcap);
            for (t = 0; t < 3; t++) { /* three steps: the residuals carry over */
                uint64_t sent = 0, recv = 0;
                dq_mpi_bytes by;
                dq_status st;
                p.step = rp.step = t;
                for (k = 0; k < M; k++) gen(xs[k], n, (unsigned)k, (unsigned)t, 300 + a * 10 + b);
                sra_emulate(&p, &rp, xs, n, resw, resr, ref, &sent, &recv);
                st = dq_mpi_scatter_reduce_allgather(MPI_COMM_WORLD, &p, &rp, xs[g_rank], n, myres, myred, out, work,
                                                     wcap, &by);
                CHECKF(st == DQ_OK, "%s", dq_strerror(st));
                CHECKF(memcmp(out, ref, n * sizeof *out) == 0, "n %zu bits %u step %zu: output differs", n, bits[b], t);
                CHECKF(memcmp(myres, resw[g_rank], n * sizeof *myres) == 0, "worker residual differs");
                CHECKF(memcmp(myred, resr[g_rank], (ce - cb) * sizeof *myred) == 0, "reducer residual differs");
                CHECKF(by.sent == sent && by.recv == recv, "bytes %llu/%llu, emulated %llu/%llu",
                       (unsigned long long)by.sent, (unsigned long long)by.recv, (unsigned long long)sent,
                       (unsigned long long)recv);
            }
            for (k = 0; k < M; k++) free(xs[k]), free(resw[k]), free(resr[k]);
            free(xs), free(resw), free(resr), free(out), free(ref), free(myres), free(myred), free(work);
        }
}

/* ---------------------------------------------------------------- error feedback over 200 steps
 * Worker k sends q_k = Q(v_k), v_k = x_k + r_k, and keeps r_k' = v_k - q_k; the reducer of a
 * chunk sends R = Q(u), u = a + r_R, a = (1/M) sum_k q_k, and keeps r_R' = u - R. In exact
 * arithmetic R = (1/M) sum_k (x_k + r_k - r_k') + r_R - r_R', so with zero initial residuals
 *     sum_{t<T} R(t) - sum_{t<T} mean_k x_k(t) = -(1/M) sum_k r_k(T) - r_R(T),
 * and per element |error of the running sum| <= |r_R(T)| + (1/M) sum_k |r_k(T)|: bounded by
 * the residuals, whatever T. In float, each step adds rounding: fl(x + r), fl(v - q), the M
 * weighted terms of a (weight fl(1/M)), fl(a + r_R) and fl(u - R), each at most 2^-24 times its
 * magnitude. With A = (1/M) sum_k (|x_k| + |r_k| + |r_k'|) (which bounds (1/M) sum |v_k| and
 * (1/M) sum |q_k| up to 2^-24) the step adds at most 2^-24 ((M + 4) A + 2 (A + |r_R| + |r_R'|)),
 * and the test allows twice that, summed over the steps (E below). The running sums are kept
 * in double (their own rounding is below 2^-50 of their terms; added too). Without the
 * reducer's residual the reducer's errors R - u add up like a random walk instead. */
static double ef_run(int reducer_ef, size_t n, unsigned steps, int *violations, double *final_bound) {
    size_t M = (size_t)g_size, k, i, cb = 0, ce = 0, wcap;
    dq_params p = qparams(4, DQ_NORM_MAX, 0, 0), rp = qparams(4, DQ_NORM_MAX, 0, 0);
    float *xall = (float *)xmalloc(M * n * sizeof *xall), *res = (float *)calloc(n, sizeof(float));
    float *rall = (float *)calloc(M * n, sizeof(float)), *rall_old = (float *)calloc(M * n, sizeof(float));
    float *red = (float *)calloc(n, sizeof(float)), *red_old = (float *)calloc(n, sizeof(float));
    float *out = (float *)xmalloc(n * sizeof *out);
    double *sagg = (double *)calloc(n, sizeof(double)), *strue = (double *)calloc(n, sizeof(double));
    double *E = (double *)calloc(n, sizeof(double)), worst = 0.0, fb = 0.0;
    const double u = ldexp(1.0, -24);
    void *work;
    unsigned t;
    rp.seed = 77;
    CHECK(dq_chunk(&p, n, M, (size_t)g_rank, &cb, &ce) == DQ_OK);
    wcap = dq_mpi_sra_workspace_size(&p, &rp, n, g_size);
    work = xmalloc(wcap);
    *violations = 0;
    for (t = 0; t < steps; t++) {
        dq_mpi_bytes by;
        dq_status st;
        p.step = rp.step = t;
        for (k = 0; k < M; k++) gen(xall + k * n, n, (unsigned)k, t, 4242);
        memcpy(rall_old, rall, M * n * sizeof *rall);
        memcpy(red_old, red, n * sizeof *red);
        st = dq_mpi_scatter_reduce_allgather(MPI_COMM_WORLD, &p, &rp, xall + (size_t)g_rank * n, n, res,
                                             reducer_ef ? red : NULL, out, work, wcap, &by);
        CHECKF(st == DQ_OK, "%s", dq_strerror(st));
        MPI_Allgather(res, (int)n, MPI_FLOAT, rall, (int)n, MPI_FLOAT, MPI_COMM_WORLD);
        for (i = cb; i < ce; i++) { /* this rank checks the elements of its own chunk */
            double mean = 0.0, A = 0.0, rr = fabs((double)red[i - cb]), rr0 = fabs((double)red_old[i - cb]), rw = 0.0;
            double err, bound;
            for (k = 0; k < M; k++) {
                mean += (double)xall[k * n + i];
                A += fabs((double)xall[k * n + i]) + fabs((double)rall_old[k * n + i]) + fabs((double)rall[k * n + i]);
                rw += fabs((double)rall[k * n + i]);
            }
            mean /= (double)M;
            A /= (double)M;
            rw /= (double)M;
            sagg[i] += (double)out[i];
            strue[i] += mean;
            E[i] += 2.0 * u * ((double)(M + 4u) * A + 2.0 * (A + rr + rr0)) +
                    ldexp(1.0, -50) * (fabs(sagg[i]) + fabs(strue[i]));
            err = fabs(sagg[i] - strue[i]);
            bound = (reducer_ef ? rr : 0.0) + rw + E[i];
            if (reducer_ef && err > bound) (*violations)++;
            if (t + 1 == steps && bound > fb) fb = bound;
            if (t + 1 == steps && err > worst) worst = err;
        }
    }
    *final_bound = fb;
    free(xall), free(res), free(rall), free(rall_old), free(red), free(red_old), free(out), free(sagg), free(strue);
    free(E), free(work);
    return worst; /* max over this rank's chunk of |running-sum error| at T */
}

static void test_ef(void) {
    size_t n = 8192;
    int viol = 0, viol2 = 0;
    double bound_ef, bound_no, err_ef, err_no, err_no_short, b_short;
    double mx[4], gmx[4];
    err_ef = ef_run(1, n, 200, &viol, &bound_ef);
    err_no_short = ef_run(0, n, 20, &viol2, &b_short);
    err_no = ef_run(0, n, 200, &viol2, &bound_no);
    CHECKF(viol == 0, "%d (element, step) pairs past the residual bound", viol);
    mx[0] = err_ef, mx[1] = bound_ef, mx[2] = err_no, mx[3] = err_no_short;
    MPI_Allreduce(mx, gmx, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    /* without the reducer residual the error is no longer held by the residuals: it grows with
     * T (a random walk: ~ sqrt(10) from 20 to 200 steps) and passes the bound of the EF run */
    CHECKF(gmx[2] > 2.0 * gmx[1], "no reducer EF: error %.4g not past 2 x the EF bound %.4g", gmx[2], gmx[1]);
    CHECKF(gmx[2] > 2.0 * gmx[3], "no reducer EF: error %.4g at 200 steps not 2 x that at 20 (%.4g)", gmx[2], gmx[3]);
    if (g_rank == 0)
        fprintf(stderr,
                "  ef: M=%d, 200 steps, 4 bits max-norm: max |running-sum error| %.4g <= bound %.4g (residuals);"
                " without the reducer residual %.4g after 20 steps, %.4g after 200\n",
                g_size, gmx[0], gmx[1], gmx[3], gmx[2]);
}

/* ---------------------------------------------------------------- main */
static int passed, failed;

static void run(void (*fn)(void), const char *name) {
    int any = 0;
    g_fail = 0;
    fn();
    MPI_Allreduce(&g_fail, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any) {
        failed++;
        if (g_rank == 0) fprintf(stderr, "  %s FAILED\n", name);
    } else {
        passed++;
    }
}
#define RUN(fn) run(fn, #fn)

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    RUN(test_allgather);
    RUN(test_allgather_errors);
    RUN(test_shared);
    RUN(test_shared_worst);
    RUN(test_sra);
    RUN(test_ef);
    if (g_rank == 0) printf("%d passed, %d failed (mpi, %d ranks, %s)\n", passed, failed, g_size, dq_simd_backend());
    MPI_Finalize();
    return failed ? 1 : 0;
}
