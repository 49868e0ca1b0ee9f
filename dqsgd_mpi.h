/* dqsgd_mpi.h - optional: the three aggregation patterns of dqsgd.h over a real MPI communicator
 *
 * Only MPI users include this header; it includes <mpi.h> and dqsgd.h and adds nothing to
 * dqsgd.h itself. Build with the MPI compiler wrapper (mpicc). Every function is DQ_API
 * (`static inline` by default), returns a dq_status and never allocates: the caller passes
 * a workspace whose size a *_workspace_size() function gives, allocated once and reused
 * every step. (doc/DISTRIBUTED.md, doc/MATHS.md 14, dqsgd.h "aggregation".)
 *
 *   dq_mpi_allgather_add()             every rank's message to every rank, summed in rank order
 *                                      with dq_decode_add: traffic per rank grows with M.
 *   dq_mpi_scatter_reduce_allgather()  chunk j of every rank to rank j (alltoallv), rank j
 *                                      re-quantizes the average of its chunk (dq_requantize,
 *                                      with its own error-feedback buffer), then the M reduced
 *                                      chunks are allgathered: about two messages per rank.
 *   dq_mpi_shared_allreduce()          a max-allreduce of per-bucket exponents, then an integer
 *                                      sum-allreduce of levels on those shared units.
 *
 * Collective rules. Every rank of comm calls the same function with the same n, the same
 * params (bits, bucket, scheme, norm, rounding, seed, step) and a workspace of at least the
 * size the matching *_workspace_size() returns. Failures are agreed on: a rank whose own part
 * fails (a bad message, an encoding error, a chunk that overflows) still takes part in the
 * exchange with a failure marker in place of its sizes, so every rank returns the same status
 * (that of the lowest failing rank) instead of some ranks blocking. Two local checks return at
 * once without communicating and would leave the other ranks blocked: NULL arguments and a
 * workspace below the required size (programming errors, not data errors).
 *
 * MPI errors. With comm's default error handler (MPI_ERRORS_ARE_FATAL) MPI aborts the job on
 * any error. With MPI_ERRORS_RETURN, a call that fails makes the function return DQ_ERR_TRANSPORT
 * at once (other ranks may then be left inside the collective; the communicator is not
 * usable afterwards, as MPI itself says).
 *
 * Traffic. Each function fills a dq_mpi_bytes: the bytes this rank handed to MPI for other
 * ranks (sent) and the bytes MPI delivered to it from other ranks (recv), its own data
 * excluded; the size exchanges and failure markers are counted in them and also reported
 * apart (sent_meta, recv_meta). Allgather and allreduce buffers are counted once, as handed
 * over: how often the wire carries them depends on the algorithm MPI picks (a ring allgatherv
 * forwards every message M-1 times in total; a ring allreduce moves 2(M-1)/M of the buffer each
 * way per rank).
 *
 * Determinism: the outputs are identical on every rank and equal, bit for bit, to the same
 * calls made in one process (the rank order of the sums is fixed; the integer sums of the
 * shared pattern are exact in any order).
 *
 * License: MIT (see dqsgd.h). */
#ifndef DQSGD_MPI_H_INCLUDED
#define DQSGD_MPI_H_INCLUDED

#include <limits.h>
#include <mpi.h>

#include "dqsgd.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dq_mpi_bytes {
    uint64_t sent, recv;           /* everything: data, sizes, markers (own data excluded) */
    uint64_t sent_meta, recv_meta; /* of which size exchanges and failure markers */
} dq_mpi_bytes;

/*! dq_mpi_allgather_workspace_size() : workspace bytes for dq_mpi_allgather_add() with
 *  comm_size ranks whose messages are at most max_msg bytes each (dq_encode_bound(n, bits), or
 *  dq_encode_bound_coded() for coded messages); 0 on overflow or comm_size < 1. */
DQ_API size_t dq_mpi_allgather_workspace_size(int comm_size, size_t max_msg);
/*! dq_mpi_allgather_add() : acc[0..n) += weight * decode(message of rank i), for i = 0..M-1
 *  in rank order, on every rank: the allgather pattern. msg[0..len) is this rank's message
 *  (any scheme and coder dq_decode_add takes, n elements). Steps: an MPI_Allgather of the
 *  sizes (with each rank's room for the messages, so that a short workspace on any rank is
 *  DQ_ERR_WORKSPACE on every rank), dq_offsets (limit INT_MAX: DQ_ERR_OVERFLOW when the
 *  messages add up to more than an int count), MPI_Allgatherv into the workspace, then
 *  dq_message_open and dq_message_decode_add of every message. The workspace holds the received
 *  messages; it may be reused as soon as the call returns. A corrupt message stops the sum
 *  at that rank (acc then holds the messages before it), with the same status on every rank.
 *  Bit-identical to dq_decode_add of the M messages in rank order in one process. */
DQ_API dq_status dq_mpi_allgather_add(MPI_Comm comm, const void *msg, size_t len, float weight, float *acc, size_t n,
                                      void *work, size_t work_cap, dq_mpi_bytes *bytes);

/*! dq_mpi_sra_workspace_size() : workspace bytes for dq_mpi_scatter_reduce_allgather() with
 *  these params and comm_size ranks (rp NULL = p); 0 for invalid params or on overflow. */
DQ_API size_t dq_mpi_sra_workspace_size(const dq_params *p, const dq_params *rp, size_t n, int comm_size);
/*! dq_mpi_scatter_reduce_allgather() : out[0..n) = the average over the M ranks of their x,
 *  through compressed chunks, on every rank.
 *  1. x is cut into M chunks on bucket boundaries (dq_chunk(p, n, M, j, ..)); this rank encodes
 *     chunk j with p, stream p->stream + rank * M + j, and residual + begin_j as its
 *     error-feedback slice (residual: NULL or n floats), and sends it to rank j
 *     (MPI_Alltoall of the sizes, MPI_Alltoallv of the messages).
 *  2. Rank j re-quantizes: dq_requantize(rp, the M messages of chunk j in rank order,
 *     weight 1/M, ..., reducer_residual) with stream rp->stream + M * M + j. reducer_residual:
 *     NULL or this rank's reducer error-feedback buffer for its own chunk (end_j - begin_j
 *     floats; n floats always suffice). rp NULL = p. Error feedback needs a contraction (see
 *     dq_requantize): e.g. DQ_NORM_MAX at 3 bits or more.
 *  3. MPI_Allgather of the reduced sizes, MPI_Allgatherv of the M reduced chunk messages, and
 *     every rank decodes chunk j into out[begin_j .. end_j).
 *  An empty chunk (more ranks than buckets) is a message of 0 bytes and nothing is encoded.
 *  Sent per rank: its M-1 chunk messages for others plus its reduced chunk, about two
 *  messages of the vector whatever M. Each residual is updated when its message is encoded
 *  (as dq_encode does): a failure at a later stage leaves those updates in place. */
DQ_API dq_status dq_mpi_scatter_reduce_allgather(MPI_Comm comm, const dq_params *p, const dq_params *rp,
                                                 const float *x, size_t n, float *residual, float *reducer_residual,
                                                 float *out, void *work, size_t work_cap, dq_mpi_bytes *bytes);

/*! dq_mpi_shared_workspace_size() : workspace bytes for dq_mpi_shared_allreduce(): the levels
 *  at dq_shared_width(p->bits, M) bits and the exponents, one element more each for the
 *  failure flags; 0 for invalid params (bits outside 2..16, M * L > 2^24) or on overflow. */
DQ_API size_t dq_mpi_shared_workspace_size(const dq_params *p, size_t n, int comm_size);
/*! dq_mpi_shared_allreduce() : out[0..n) = the average over the M ranks of their x (+ their
 *  residual), through integer sums on shared power-of-two units, on every rank.
 *  dq_shared_exponents, MPI_Allreduce(MPI_MAX, MPI_INT8_T) of the exponents, dq_shared_encode
 *  at width dq_shared_width(p->bits, M), MPI_Allreduce(MPI_SUM) of the levels on MPI_INT8_T,
 *  MPI_INT16_T or MPI_INT32_T, dq_shared_decode with weight 1/M. p: QSGD, norm 0 or
 *  DQ_NORM_MAX, no checksum or coder (dq_shared_*); the dither stream is p->stream + rank.
 *  residual: NULL or n floats of error feedback (v - level * unit, exact). The integer sums
 *  never overflow and equal, times the unit, the float sum of the individually decoded levels
 *  exactly; out[i] = (1/M) * that sum. */
DQ_API dq_status dq_mpi_shared_allreduce(MPI_Comm comm, const dq_params *p, const float *x, size_t n,
                                         float *residual, float *out, void *work, size_t work_cap,
                                         dq_mpi_bytes *bytes);

/* ---------------------------------------------------------------- implementation */


/* A failure marker in place of a size: its top bit set, the status below it. */
#define DQ__MPI_FAIL ((uint64_t)1 << 63)
static inline uint64_t dq__mpi_mark(dq_status st) { return DQ__MPI_FAIL | (uint64_t)(-(int64_t)st); }
static inline dq_status dq__mpi_unmark(uint64_t v) { return (dq_status)(-(int64_t)(v & ~DQ__MPI_FAIL)); }

/* a + b, or SIZE_MAX on overflow (SIZE_MAX stays SIZE_MAX) */
static inline size_t dq__mpi_add(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }
static inline size_t dq__mpi_mul(size_t a, size_t b) { return b && a > SIZE_MAX / b ? SIZE_MAX : a * b; }
/* rounded up to 8 (the alignment of the next region) */
static inline size_t dq__mpi_pad8(size_t a) { return a > SIZE_MAX - 7u ? SIZE_MAX : (a + 7u) & ~(size_t)7u; }

/* The ranks' statuses agreed from exchanged sizes: the first marker in rank order, or DQ_OK. */
static inline dq_status dq__mpi_first_fail(const uint64_t *v, size_t m, size_t stride) {
    size_t i;
    for (i = 0; i < m; i++)
        if (v[i * stride] & DQ__MPI_FAIL) return dq__mpi_unmark(v[i * stride]);
    return DQ_OK;
}

static inline dq_status dq__mpi_size_rank(MPI_Comm comm, int *size, int *rank) {
    if (MPI_Comm_size(comm, size) != MPI_SUCCESS || MPI_Comm_rank(comm, rank) != MPI_SUCCESS) return DQ_ERR_TRANSPORT;
    return *size >= 1 ? DQ_OK : DQ_ERR_TRANSPORT;
}

/* int counts and displacements of an all-to-all/allgather-v from sizes (each <= INT_MAX by
 * the workspace layout: the total is checked against INT_MAX). */
static inline dq_status dq__mpi_counts(const size_t *sizes, size_t m, size_t *offs, int *cnt, int *dsp) {
    size_t i;
    dq_status st = dq_offsets(sizes, m, (size_t)INT_MAX, offs);
    if (st != DQ_OK) return st;
    for (i = 0; i < m; i++) {
        cnt[i] = (int)sizes[i];
        dsp[i] = (int)offs[i];
    }
    return DQ_OK;
}

/* ---- allgather
 * workspace: uint64 xchg[2M] (size, room of each rank), size_t sizes[M], offs[M+1],
 * int cnt[M], dsp[M], then the messages. */
static inline size_t dq__mpi_ag_meta(size_t m) {
    size_t a = dq__mpi_mul(m, 2u * sizeof(uint64_t) + sizeof(size_t));
    a = dq__mpi_add(a, dq__mpi_mul(m + 1u, sizeof(size_t)));
    a = dq__mpi_add(a, dq__mpi_mul(m, 2u * sizeof(int)));
    return dq__mpi_pad8(a);
}

DQ_API size_t dq_mpi_allgather_workspace_size(int comm_size, size_t max_msg) {
    size_t a;
    if (comm_size < 1) return 0;
    a = dq__mpi_add(dq__mpi_ag_meta((size_t)comm_size), dq__mpi_mul((size_t)comm_size, max_msg));
    return a == SIZE_MAX ? 0 : a;
}

DQ_API dq_status dq_mpi_allgather_add(MPI_Comm comm, const void *msg, size_t len, float weight, float *acc, size_t n,
                                      void *work, size_t work_cap, dq_mpi_bytes *bytes) {
    int M, rank;
    size_t m, meta, i, room, total;
    uint64_t mine[2], *xchg;
    size_t *sizes, *offs;
    int *cnt, *dsp;
    unsigned char *data;
    dq_status st;
    dq_header h;
    if (!msg || !acc || !work || !bytes) return DQ_ERR_NULL;
    memset(bytes, 0, sizeof *bytes);
    st = dq__mpi_size_rank(comm, &M, &rank);
    if (st != DQ_OK) return st;
    m = (size_t)M;
    meta = dq__mpi_ag_meta(m);
    if (((uintptr_t)work & 7u) != 0 || work_cap < meta || meta == SIZE_MAX) return DQ_ERR_WORKSPACE;
    xchg = (uint64_t *)work;
    sizes = (size_t *)(void *)(xchg + 2u * m);
    offs = sizes + m;
    cnt = (int *)(void *)(offs + m + 1u);
    dsp = cnt + m;
    data = (unsigned char *)work + meta;
    room = work_cap - meta;

    /* this rank's message must be whole and of n elements before anything is exchanged */
    st = dq_header_read(msg, len, &h);
    if (st == DQ_OK && (h.count != n || h.msg_size != len)) st = DQ_ERR_SIZE_MISMATCH;
    mine[0] = st == DQ_OK ? (uint64_t)len : dq__mpi_mark(st);
    mine[1] = (uint64_t)room;
    if (MPI_Allgather(mine, 2, MPI_UINT64_T, xchg, 2, MPI_UINT64_T, comm) != MPI_SUCCESS) return DQ_ERR_TRANSPORT;
    bytes->sent_meta = sizeof mine;
    bytes->recv_meta = (uint64_t)(m - 1u) * sizeof mine;
    bytes->sent = bytes->sent_meta;
    bytes->recv = bytes->recv_meta;
    st = dq__mpi_first_fail(xchg, m, 2);
    if (st != DQ_OK) return st;
    for (i = 0; i < m; i++) {
        if (xchg[2 * i] > (uint64_t)SIZE_MAX) return DQ_ERR_OVERFLOW;
        sizes[i] = (size_t)xchg[2 * i];
    }
    st = dq__mpi_counts(sizes, m, offs, cnt, dsp);
    if (st != DQ_OK) return st;
    total = offs[m];
    for (i = 0; i < m; i++) /* every rank knows every rank's room: all fail together */
        if ((uint64_t)total > xchg[2 * i + 1]) return DQ_ERR_WORKSPACE;
    if (MPI_Allgatherv(msg, (int)len, MPI_BYTE, data, cnt, dsp, MPI_BYTE, comm) != MPI_SUCCESS) return DQ_ERR_TRANSPORT;
    bytes->sent += (uint64_t)len;
    bytes->recv += (uint64_t)(total - len);
    for (i = 0; i < m; i++) { /* each message opened once: header, size, checksum, then its sum */
        dq_message dm;
        st = dq_message_open(data + offs[i], sizes[i], &dm);
        if (st == DQ_OK && (dm.h.count != n || dm.h.msg_size != sizes[i])) st = DQ_ERR_SIZE_MISMATCH;
        if (st == DQ_OK) st = dq_message_decode_add(&dm, weight, acc, n);
        if (st != DQ_OK) return st;
    }
    return DQ_OK;
}

/* ---- scatter-reduce-allgather
 * workspace: uint64 ssz[M], rsz[M], gsz[M]; size_t tmp[M], soff[M+1], roff[M+1], goff[M+1],
 * lens[M]; const void *ptrs[M]; int scnt, sdsp, rcnt, rdsp, gcnt, gdsp [M each]; float
 * acc[max chunk]; bytes: send (sum of the chunks' encode capacities), recv (M x own chunk
 * bound), reduced (own chunk's capacity at rp), gather (sum of the chunk bounds at rp's bits).
 * Encoders get their full capacity, so that DQ_CODER_AUTO (the default) picks the same coder
 * as with any larger buffer: the messages, and the bytes counted, do not depend on the
 * workspace. The byte regions are sized for the largest chunk, so they are the same on every
 * rank. */
typedef struct dq__mpi_sra_layout {
    size_t meta, acc, send, recv, red, gather, total, cmax;
} dq__mpi_sra_layout;

static inline size_t dq__mpi_bound(size_t c, unsigned bits) { return c ? dq_encode_bound(c, bits) : 0u; }
/* An encoder's dst for a chunk of c elements: its capacity, and at least the receiver's bound. */
static inline size_t dq__mpi_cap(const dq_params *p, size_t c, unsigned bits) {
    size_t s = 0, b = dq__mpi_bound(c, bits);
    if (!c || dq_encode_capacity(p, c, &s) != DQ_OK) return b;
    return s > b ? s : b;
}

static inline dq_status dq__mpi_sra_plan(const dq_params *p, const dq_params *rp, size_t n, size_t m,
                                         dq__mpi_sra_layout *L) {
    size_t j, b, e, a;
    unsigned pb = p->bits ? p->bits : DQ_BITS_DEFAULT, rb = rp->bits ? rp->bits : DQ_BITS_DEFAULT;
    memset(L, 0, sizeof *L);
    if (pb > 16u || rb > 16u) return DQ_ERR_BITS;
    L->send = L->gather = 0;
    for (j = 0; j < m; j++) {
        dq_status st = dq_chunk(p, n, m, j, &b, &e);
        size_t bs, bg;
        if (st != DQ_OK) return st;
        if (e - b > L->cmax) L->cmax = e - b;
        bs = dq__mpi_cap(p, e - b, pb);
        bg = dq__mpi_bound(e - b, rb);
        if ((e > b && (!bs || !bg))) return DQ_ERR_TOO_LARGE;
        L->send = dq__mpi_add(L->send, bs);
        L->gather = dq__mpi_add(L->gather, bg);
    }
    L->recv = dq__mpi_mul(m, dq__mpi_bound(L->cmax, pb));
    L->red = dq__mpi_cap(rp, L->cmax, rb);
    /* every count and displacement of the v-collectives must be an int */
    if (L->send > (size_t)INT_MAX || L->recv > (size_t)INT_MAX || L->gather > (size_t)INT_MAX) return DQ_ERR_OVERFLOW;
    a = dq__mpi_mul(m, 3u * sizeof(uint64_t) + 2u * sizeof(size_t) + sizeof(const void *) + 6u * sizeof(int));
    a = dq__mpi_add(a, dq__mpi_mul(m + 1u, 3u * sizeof(size_t)));
    L->meta = dq__mpi_pad8(a);
    L->acc = dq__mpi_pad8(dq__mpi_mul(L->cmax, sizeof(float)));
    a = dq__mpi_add(L->meta, L->acc);
    a = dq__mpi_add(a, dq__mpi_pad8(L->send));
    a = dq__mpi_add(a, dq__mpi_pad8(L->recv));
    a = dq__mpi_add(a, dq__mpi_pad8(L->red));
    a = dq__mpi_add(a, L->gather);
    if (a == SIZE_MAX) return DQ_ERR_OVERFLOW;
    L->total = a;
    return DQ_OK;
}

DQ_API size_t dq_mpi_sra_workspace_size(const dq_params *p, const dq_params *rp, size_t n, int comm_size) {
    dq__mpi_sra_layout L;
    if (!p || comm_size < 1) return 0;
    if (dq__mpi_sra_plan(p, rp ? rp : p, n, (size_t)comm_size, &L) != DQ_OK) return 0;
    return L.total;
}

DQ_API dq_status dq_mpi_scatter_reduce_allgather(MPI_Comm comm, const dq_params *p, const dq_params *rp,
                                                 const float *x, size_t n, float *residual, float *reducer_residual,
                                                 float *out, void *work, size_t work_cap, dq_mpi_bytes *bytes) {
    int M, rank;
    size_t m, r, j, b = 0, e = 0, cb = 0, ce = 0, off, red_len = 0;
    dq__mpi_sra_layout L;
    uint64_t *ssz, *rsz, *gsz, gmine;
    size_t *tmp, *soff, *roff, *goff, *lens;
    const void **ptrs;
    int *scnt, *sdsp, *rcnt, *rdsp, *gcnt, *gdsp;
    float *acc;
    unsigned char *sbuf, *rbuf, *red, *gbuf;
    dq_params q;
    dq_status st, mine = DQ_OK;
    if (!p || !x || !out || !work || !bytes) return DQ_ERR_NULL;
    if (!rp) rp = p;
    memset(bytes, 0, sizeof *bytes);
    st = dq__mpi_size_rank(comm, &M, &rank);
    if (st != DQ_OK) return st;
    m = (size_t)M;
    r = (size_t)rank;
    if (!n) return DQ_ERR_EMPTY;
    st = dq__mpi_sra_plan(p, rp, n, m, &L);
    if (st != DQ_OK) return st; /* same on every rank: params and n are */
    if (((uintptr_t)work & 7u) != 0 || work_cap < L.total) return DQ_ERR_WORKSPACE;
    ssz = (uint64_t *)work;
    rsz = ssz + m;
    gsz = rsz + m;
    tmp = (size_t *)(void *)(gsz + m);
    soff = tmp + m;
    roff = soff + m + 1u;
    goff = roff + m + 1u;
    lens = goff + m + 1u;
    ptrs = (const void **)(void *)(lens + m);
    scnt = (int *)(void *)(ptrs + m);
    sdsp = scnt + m;
    rcnt = sdsp + m;
    rdsp = rcnt + m;
    gcnt = rdsp + m;
    gdsp = gcnt + m;
    acc = (float *)(void *)((unsigned char *)work + L.meta);
    sbuf = (unsigned char *)work + L.meta + L.acc;
    rbuf = sbuf + dq__mpi_pad8(L.send);
    red = rbuf + dq__mpi_pad8(L.recv);
    gbuf = red + dq__mpi_pad8(L.red);

    /* 1. encode chunk j for rank j */
    off = 0;
    for (j = 0; j < m; j++) {
        size_t len = 0;
        (void)dq_chunk(p, n, m, j, &b, &e); /* checked by the plan */
        if (e > b && mine == DQ_OK) {
            q = *p;
            q.stream = p->stream + (uint32_t)(r * m + j);
            mine = dq_encode(&q, x + b, e - b, residual ? residual + b : NULL, sbuf + off, L.send - off, &len);
        }
        ssz[j] = mine == DQ_OK ? (uint64_t)len : dq__mpi_mark(mine);
        off += len;
    }
    if (mine != DQ_OK)
        for (j = 0; j < m; j++) ssz[j] = dq__mpi_mark(mine);
    if (MPI_Alltoall(ssz, 1, MPI_UINT64_T, rsz, 1, MPI_UINT64_T, comm) != MPI_SUCCESS) return DQ_ERR_TRANSPORT;
    bytes->sent_meta = bytes->recv_meta = (uint64_t)(m - 1u) * sizeof(uint64_t);
    bytes->sent = bytes->sent_meta;
    bytes->recv = bytes->recv_meta;
    st = dq__mpi_first_fail(rsz, m, 1); /* rank k's marker reached every rank */
    if (st != DQ_OK) return st;
    for (j = 0; j < m; j++) tmp[j] = (size_t)ssz[j];
    st = dq__mpi_counts(tmp, m, soff, scnt, sdsp);
    for (j = 0; st == DQ_OK && j < m; j++) {
        if (rsz[j] > (uint64_t)L.recv) st = DQ_ERR_CORRUPT; /* not a chunk message of these params */
        tmp[j] = (size_t)rsz[j];
    }
    if (st == DQ_OK) st = dq__mpi_counts(tmp, m, roff, rcnt, rdsp);
    if (st == DQ_OK && roff[m] > L.recv) st = DQ_ERR_CORRUPT;
    if (st != DQ_OK) return st; /* cannot happen when every rank follows the rules */
    if (MPI_Alltoallv(sbuf, scnt, sdsp, MPI_BYTE, rbuf, rcnt, rdsp, MPI_BYTE, comm) != MPI_SUCCESS)
        return DQ_ERR_TRANSPORT;
    bytes->sent += (uint64_t)(soff[m] - (size_t)ssz[r]);
    bytes->recv += (uint64_t)(roff[m] - (size_t)rsz[r]);

    /* 2. reduce this rank's chunk */
    (void)dq_chunk(p, n, m, r, &cb, &ce);
    if (ce > cb) {
        for (j = 0; j < m; j++) {
            ptrs[j] = rbuf + roff[j];
            lens[j] = (size_t)rsz[j];
        }
        q = *rp;
        q.stream = rp->stream + (uint32_t)(m * m + r);
        mine = dq_requantize(&q, ptrs, lens, m, 1.0f / (float)M, acc, ce - cb, reducer_residual, red, L.red, &red_len);
    }
    gmine = mine == DQ_OK ? (uint64_t)red_len : dq__mpi_mark(mine);

    /* 3. allgather the reduced chunks and decode them */
    if (MPI_Allgather(&gmine, 1, MPI_UINT64_T, gsz, 1, MPI_UINT64_T, comm) != MPI_SUCCESS) return DQ_ERR_TRANSPORT;
    bytes->sent_meta += sizeof(uint64_t);
    bytes->recv_meta += (uint64_t)(m - 1u) * sizeof(uint64_t);
    bytes->sent += sizeof(uint64_t);
    bytes->recv += (uint64_t)(m - 1u) * sizeof(uint64_t);
    st = dq__mpi_first_fail(gsz, m, 1);
    if (st != DQ_OK) return st;
    for (j = 0; j < m; j++) tmp[j] = gsz[j] > (uint64_t)L.red ? SIZE_MAX : (size_t)gsz[j];
    st = dq__mpi_counts(tmp, m, goff, gcnt, gdsp);
    if (st == DQ_OK && goff[m] > L.gather) st = DQ_ERR_CORRUPT;
    if (st != DQ_OK) return st;
    if (MPI_Allgatherv(red, (int)red_len, MPI_BYTE, gbuf, gcnt, gdsp, MPI_BYTE, comm) != MPI_SUCCESS)
        return DQ_ERR_TRANSPORT;
    bytes->sent += (uint64_t)red_len;
    bytes->recv += (uint64_t)(goff[m] - red_len);
    for (j = 0; j < m; j++) {
        (void)dq_chunk(p, n, m, j, &b, &e);
        if (e == b) {
            if (gsz[j] != 0) return DQ_ERR_CORRUPT;
            continue;
        }
        {
            dq_header h;
            st = dq_header_read(gbuf + goff[j], tmp[j], &h);
            if (st == DQ_OK && (h.count != e - b || h.msg_size != tmp[j])) st = DQ_ERR_SIZE_MISMATCH;
            if (st == DQ_OK) st = dq_decode(gbuf + goff[j], tmp[j], out + b, e - b);
            if (st != DQ_OK) return st;
        }
    }
    return DQ_OK;
}

/* ---- shared-scale allreduce
 * workspace: the levels (n + 1 elements of width bits, the last a failure count), then the
 * exponents (buckets + 1 int8, the last a failure status). */
DQ_API size_t dq_mpi_shared_workspace_size(const dq_params *p, size_t n, int comm_size) {
    unsigned w;
    size_t nb, a;
    if (!p || comm_size < 1 || !n || n == SIZE_MAX) return 0;
    w = dq_shared_width(p->bits, (uint64_t)comm_size);
    nb = dq_shared_buckets(p, n);
    if (!w || !nb) return 0;
    a = dq__mpi_pad8(dq__mpi_mul(n + 1u, w / 8u));
    a = dq__mpi_add(a, nb + 1u);
    return a == SIZE_MAX ? 0 : a;
}

DQ_API dq_status dq_mpi_shared_allreduce(MPI_Comm comm, const dq_params *p, const float *x, size_t n,
                                         float *residual, float *out, void *work, size_t work_cap,
                                         dq_mpi_bytes *bytes) {
    int M, rank, failed;
    unsigned w;
    size_t nb, lv_bytes, need;
    int8_t *exps;
    void *levels;
    MPI_Datatype type;
    dq_params q;
    dq_status st, mine;
    if (!p || !x || !out || !work || !bytes) return DQ_ERR_NULL;
    memset(bytes, 0, sizeof *bytes);
    st = dq__mpi_size_rank(comm, &M, &rank);
    if (st != DQ_OK) return st;
    if (!n) return DQ_ERR_EMPTY;
    if ((uint64_t)n > DQ_MAX_ELEMS) return DQ_ERR_TOO_LARGE;
    w = dq_shared_width(p->bits, (uint64_t)M);
    if (!w) return p->bits < 2u || p->bits > 16u ? DQ_ERR_BITS : DQ_ERR_OVERFLOW;
    nb = dq_shared_buckets(p, n);
    if (!nb) return DQ_ERR_PARAM; /* the same params on every rank: every rank returns here */
    need = dq_mpi_shared_workspace_size(p, n, M);
    if (!need || (n + 1u) > (size_t)INT_MAX || nb + 1u > (size_t)INT_MAX) return DQ_ERR_OVERFLOW;
    if (((uintptr_t)work & 7u) != 0 || work_cap < need) return DQ_ERR_WORKSPACE;
    lv_bytes = dq__mpi_pad8((n + 1u) * (w / 8u));
    levels = work;
    exps = (int8_t *)work + lv_bytes;
    type = w == 8u ? MPI_INT8_T : w == 16u ? MPI_INT16_T : MPI_INT32_T;
    q = *p;
    q.stream = p->stream + (uint32_t)rank;

    /* 1. exponents, agreed by an elementwise max; the flag byte carries a failure (-status) */
    mine = dq_shared_exponents(&q, x, n, residual, exps);
    exps[nb] = (int8_t)(mine == DQ_OK ? 0 : -(int)mine);
    if (MPI_Allreduce(MPI_IN_PLACE, exps, (int)(nb + 1u), MPI_INT8_T, MPI_MAX, comm) != MPI_SUCCESS) return DQ_ERR_TRANSPORT;
    bytes->sent = bytes->recv = (uint64_t)(nb + 1u);
    bytes->sent_meta = bytes->recv_meta = 1u;
    if (exps[nb] != 0) return (dq_status)(-(int)exps[nb]); /* the largest code any rank hit */

    /* 2. levels on the shared units, summed; the last element counts the ranks that failed */
    mine = dq_shared_encode(&q, x, n, residual, exps, w, levels);
    if (w == 8u) ((int8_t *)levels)[n] = (int8_t)(mine != DQ_OK);
    else if (w == 16u) ((int16_t *)levels)[n] = (int16_t)(mine != DQ_OK);
    else ((int32_t *)levels)[n] = (int32_t)(mine != DQ_OK);
    if (MPI_Allreduce(MPI_IN_PLACE, levels, (int)(n + 1u), type, MPI_SUM, comm) != MPI_SUCCESS) return DQ_ERR_TRANSPORT;
    bytes->sent += (uint64_t)(n + 1u) * (w / 8u);
    bytes->recv += (uint64_t)(n + 1u) * (w / 8u);
    bytes->sent_meta += w / 8u;
    bytes->recv_meta += w / 8u;
    failed = w == 8u ? ((int8_t *)levels)[n] : w == 16u ? ((int16_t *)levels)[n] : (int)((int32_t *)levels)[n];
    if (failed) return mine != DQ_OK ? mine : DQ_ERR_PARAM; /* another rank's params differ */

    /* 3. out = (1/M) * sum * 2^e */
    return dq_shared_decode(&q, levels, w, n, exps, 1.0f / (float)M, out);
}

#ifdef __cplusplus
}
#endif

#endif /* DQSGD_MPI_H_INCLUDED */
