/* mpi_trainer.c - data-parallel SGD on Fashion-MNIST over MPI, one worker per rank, with the
 * three aggregation patterns of dqsgd_mpi.h.
 *
 * Rank k of M is worker k of examples/trainer.c run with --workers M: the same shard, minibatch
 * walk, gradient and dither stream (fmnist.h holds that code for both). Every step each rank
 * compresses its gradient and the ranks aggregate it with --pattern:
 *
 *   allgather  each rank's QSGD message (bucket 512, L2 scale, stochastic; dither keyed by (seed,
 *              step, rank)) to every rank, summed in rank order with weight 1/M: the server of
 *              trainer.c on every rank, so the weights after S steps equal trainer.c's bit for bit.
 *   sra        scatter-reduce-allgather: chunk j of every rank to rank j, re-quantized there
 *              (max-norm scale and the reducer's own error-feedback buffer: QSGD's L2 scale at
 *              these widths is no contraction and would make that buffer diverge), then the M
 *              reduced chunks to every rank. Dither streams: rank*M + j for chunks, M*M + j for
 *              reducers.
 *   shared     a max-allreduce of per-bucket power-of-two units, an integer sum-allreduce of the
 *              levels at dq_shared_width(bits, M) bits (stochastic rounding, stream = rank).
 *
 * --ef 1 adds a worker-side error-feedback buffer to every pattern (trainer.c has none, so the
 * allgather identity holds for --ef 0, the default). --scheme fp32 allgathers the raw floats and
 * sums them in rank order in every pattern (trainer.c's fp32 run, bit for bit).
 *
 * Everything global is computed as trainer.c does: the step loss is the sum in rank order of
 * the allgathered per-rank losses / M; DQSGD's norm prior is rank 0's first gradient norm,
 * broadcast; every rank runs the same schedule on the same aggregated gradient norm. For the
 * schedule's budget a step costs one worker's full message, dq_encode_capacity() (trainer.c's
 * len[0]), whatever the pattern.
 *
 *   make mpi-train        (the three patterns, M = 2 and 4, b = 4 and 8: a table)
 *   mpirun -np 4 build/mpi_trainer --data build/fashion-mnist --model mlp --scheme fixed --bits 4 \
 *       --pattern sra --steps 300 --out run.csv
 *
 * Output (rank 0): CSV rows `step,bits_cum,train_loss,test_acc,width,sent_bytes,recv_bytes` at
 * step 0, every --eval-every steps and at the end. The first five columns mean what they mean
 * in trainer.c; bits_cum counts the compressed data every rank handed to MPI (sizes exchanges
 * excluded: for allgather, trainer.c's uplink bits). sent_bytes and recv_bytes are the bytes per
 * worker per step so far (dq_mpi_bytes, size exchanges included, averaged over ranks and steps).
 * A summary line goes to stderr at the end. */
#define FM_PROG "mpi_trainer"
#include <mpi.h>

#include "../fmnist.h"
#include "dqsgd_mpi.h"

static int g_rank;

#if defined(__GNUC__)
__attribute__((noreturn))
#endif
static void mpi_exit(int code);
static void mpi_exit(int code) {
    if (code == 0) {
        MPI_Finalize();
        exit(0);
    }
    MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}

static void usage(FILE *f) {
    if (g_rank != 0) return;
    fputs("usage: mpirun -np M mpi_trainer --data DIR [options]      (rank k = worker k of M)\n"
          "  --pattern P           allgather | sra (scatter-reduce-allgather) | shared (integer allreduce)\n"
          "                        (default allgather: the same weights as `trainer --workers M`)\n"
          "  --ef 0|1              worker-side error feedback in every pattern (default 0)\n"
          "  --data DIR            raw Fashion-MNIST IDX files ({train,t10k}-{images-idx3,labels-idx1}-ubyte)\n"
          "  --model softmax|mlp   softmax regression 784->10, or MLP 784-128-10 with ReLU (default softmax)\n"
          "  --scheme S            fp32 | fixed --bits B | increasing | dqsgd-p1 --target-error E\n"
          "                        | dqsgd-p2 --budget-bits B | dqsgd --scale C\n"
          "                        | topk --density D (allgather only; as trainer's)   (default fp32)\n"
          "  --bits B              width of the fixed scheme, 1..16 (default 4; shared: 2..16); topk: 1..16 or 32\n"
          "  --density D, --dgc, --no-masking, --clip C, --sparse-warmup K\n"
          "                        topk: as trainer's (momentum correction, masking, clipping, warm-up)\n"
          "  --coder C             default (the smallest form, dqsgd's default) | fixed (the fixed layout)\n"
          "  --budget-bits B       P2: bits of all T messages of ONE worker, headers included\n"
          "  --target-error E      P1: quantization term of the final-loss bound (loss units)\n"
          "  --lipschitz L         P1: smoothness constant (softmax default: estimated)\n"
          "  --scale C             DQSGD scale c given directly\n"
          "  --alpha A, --period P, --window W, --bits-min B, --bits-max B, --norm-prior G\n"
          "                        DQSGD and increasing schedule, as in trainer --help\n"
          "  --steps T             SGD steps (default 1000)\n"
          "  --batch B             minibatch per worker (default 32)\n"
          "  --lr X                learning rate (default 0.02 softmax, 0.05 mlp)\n"
          "  --momentum M          heavy-ball momentum (default 0.9)\n"
          "  --seed S              run seed: init, shards, minibatches and dither (default 1)\n"
          "  --eval-every K        CSV row every K steps (default 100)\n"
          "  --train-eval N        training loss over a fixed subset of N images (default 10000; 0 = all)\n"
          "  --out FILE            CSV output of rank 0 (default stdout)\n"
          "  --save-weights FILE   rank 0 writes the final weights as raw float32 (host byte order)\n"
          "  --quiet               no progress on stderr\n",
          f);
}

static void mpi_check(int rc, const char *call) {
    if (rc != MPI_SUCCESS) die("MPI call failed", call);
}

/* Cumulative traffic of this rank. */
typedef struct traffic {
    uint64_t up;         /* compressed data handed to MPI (bytes; fp32: the raw floats) */
    uint64_t sent, recv; /* dq_mpi_bytes totals */
} traffic;

/* One CSV row (rank 0) for the model after `step` steps; a collective (the traffic sums). */
static void report(const options *o, FILE *out, uint64_t step, uint64_t prior_bits, const traffic *tr, unsigned M,
                   const float *w, const dataset *train, const uint32_t *eval_rows, size_t n_eval,
                   const dataset *test, unsigned width, const char *name, double t0, scratch *sc) {
    uint64_t mine[3], all[3] = {0, 0, 0};
    double tl, ta, tel, tea, per;
    mine[0] = tr->up, mine[1] = tr->sent, mine[2] = tr->recv;
    mpi_check(MPI_Reduce(mine, all, 3, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD), "MPI_Reduce");
    if (g_rank != 0) return;
    per = step ? 1.0 / ((double)M * (double)step) : 0.0;
    evaluate(o->model, w, train, eval_rows, n_eval, &tl, &ta, sc);
    evaluate(o->model, w, test, NULL, test->n, &tel, &tea, sc);
    fprintf(out, "%" PRIu64 ",%" PRIu64 ",%.6f,%.4f,%u,%.1f,%.1f\n", step, prior_bits + 8u * all[0], tl, tea, width,
            (double)all[1] * per, (double)all[2] * per);
    fflush(out);
    if (!o->quiet)
        fprintf(stderr, "  %s %s seed %" PRIu64 "  step %5" PRIu64 "/%" PRIu64 "  loss %.4f  acc %.4f  sent %.0f B  recv %.0f B  width %2u  %.1fs\n",
                o->model == MODEL_MLP ? "mlp" : "softmax", name, o->seed, step, o->steps, tl, tea,
                (double)all[1] * per, (double)all[2] * per, width, now_s() - t0);
}

static const char *pattern_name(pattern_kind p) {
    return p == PAT_ALLGATHER ? "allgather" : p == PAT_SRA ? "sra" : "shared";
}

int main(int argc, char **argv) {
    options o;
    dataset train, test;
    model_kind m;
    size_t d, cap, i, n_eval, work_cap = 0;
    unsigned M, k, rank;
    int isize, irank;
    uint32_t *perm, pos = 0, *batch, *eval_rows = NULL;
    uint64_t rng, n, prior_bits = 0;
    float *w, *vel, *avg, *g, *gall = NULL, *res_w = NULL, *res_r = NULL, wgt;
    topk_worker tw = {NULL, NULL, NULL}; /* set up only for --scheme topk; gcc cannot see that it is used only then */
    double *losses;
    uint8_t *msg;
    void *work = NULL;
    scratch sc;
    dq_sched sched;
    dq_sched_params sp;
    traffic tr = {0, 0, 0};
    int use_sched;
    unsigned width = 32;
    FILE *out = NULL;
    char namebuf[32];
    const char *name;
    double t0 = now_s();

    MPI_Init(&argc, &argv);
    mpi_check(MPI_Comm_size(MPI_COMM_WORLD, &isize), "MPI_Comm_size");
    mpi_check(MPI_Comm_rank(MPI_COMM_WORLD, &irank), "MPI_Comm_rank");
    g_rank = irank;
    fm_exit = mpi_exit;
    M = (unsigned)isize;
    rank = (unsigned)irank;

    parse(argc, argv, &o, 1, usage);
    o.workers = M;
    if (o.scheme != SCH_FP32 && o.pattern == PAT_SHARED && (o.bits < 2 || dq_shared_width(o.bits, M) == 0))
        die("--pattern shared needs --bits 2..16 with M * (2^(bits-1) - 1) <= 2^24", NULL);
    load_set(o.data, "train", &train);
    if (rank == 0) load_set(o.data, "t10k", &test);
    else memset(&test, 0, sizeof test);

    if (o.scheme == SCH_P1 && !(o.lipschitz > 0.0)) { /* every rank computes the same number */
        o.lipschitz = top_eigen(&train, 30) / 2.0;
        if (!o.quiet && rank == 0)
            fprintf(stderr, "mpi_trainer: L = lambda_max(X^T X/n)/2 = %.4g (30 power iterations)\n", o.lipschitz);
    }

    m = o.model;
    d = model_dim(m);
    name = scheme_name(&o, namebuf, sizeof namebuf);
    w = (float *)xmalloc(d * sizeof *w);
    vel = (float *)xcalloc(d, sizeof *vel);
    avg = (float *)xmalloc(d * sizeof *avg);
    g = (float *)xmalloc(d * sizeof *g);
    losses = (double *)xmalloc(M * sizeof *losses);
    cap = dq_encode_bound(d, 16);
    if (o.scheme == SCH_TOPK) { /* this rank's residual (and velocity) */
        size_t tcap = topk_capacity(&o, d);
        if (tcap > cap) cap = tcap;
        topk_worker_init(&tw, &o, d);
    }
    msg = (uint8_t *)xmalloc(cap);
    if (o.ef) res_w = (float *)xcalloc(d, sizeof *res_w);
    if (o.scheme == SCH_FP32) {
        gall = (float *)xmalloc((size_t)M * d * sizeof *gall);
    } else if (o.pattern == PAT_ALLGATHER) {
        work_cap = dq_mpi_allgather_workspace_size((int)M, cap);
    } else if (o.pattern == PAT_SRA) { /* sized for the widest message the schedule may pick */
        dq_params p = worker_params(16, o.seed, 0, 0, o.coder);
        res_r = (float *)xcalloc(d, sizeof *res_r);
        work_cap = dq_mpi_sra_workspace_size(&p, NULL, d, (int)M);
    } else {
        unsigned b;
        for (b = 2; b <= 16; b++) {
            dq_params p = worker_params(b, o.seed, 0, 0, o.coder);
            size_t s;
            p.norm = DQ_NORM_MAX;
            s = dq_mpi_shared_workspace_size(&p, d, (int)M);
            if (s > work_cap) work_cap = s;
        }
    }
    if (o.scheme != SCH_FP32) {
        if (!work_cap) die("cannot size the aggregation workspace", pattern_name(o.pattern));
        work = xmalloc(work_cap); /* malloc: aligned for any type */
    }
    scratch_init(&sc);
    model_init(m, w, o.seed);

    if (M > train.n) die("more ranks than training images", NULL);
    perm = shard_perm(train.n, o.seed);
    rng = worker_rng(o.seed, rank);
    batch = (uint32_t *)xmalloc(o.batch * sizeof *batch);

    n_eval = o.train_eval && o.train_eval < train.n ? o.train_eval : train.n;
    if (n_eval < train.n) {
        eval_rows = (uint32_t *)xmalloc(n_eval * sizeof *eval_rows);
        for (i = 0; i < n_eval; i++) eval_rows[i] = (uint32_t)(i * (train.n / n_eval));
    }
    if (rank == 0) {
        out = o.out ? fopen(o.out, "w") : stdout;
        if (!out) die("cannot write", o.out);
        fprintf(out, "step,bits_cum,train_loss,test_acc,width,sent_bytes,recv_bytes\n");
    }

    use_sched = o.scheme != SCH_FP32 && o.scheme != SCH_TOPK;
    if (o.scheme == SCH_TOPK) width = o.bits;
    sched_params(&o, d, M, &sp);
    if (!o.quiet && rank == 0)
        fprintf(stderr, "mpi_trainer: %s %s, pattern %s%s, seed %" PRIu64 ": d=%zu, %u ranks x batch %u, %" PRIu64
                        " steps, lr %g, momentum %g, codec %s\n",
                m == MODEL_MLP ? "mlp" : "softmax", name, pattern_name(o.pattern), o.ef ? " + worker EF" : "", o.seed,
                d, M, o.batch, o.steps, o.lr, o.momentum, dq_simd_backend());

    for (n = 0; n < o.steps; n++) {
        double step_loss = 0.0, gnorm, loss;
        dq_mpi_bytes by;
        wgt = 1.0f / (float)M;
        for (i = 0; i < d; i++) avg[i] = 0.0f;
        draw_batch(perm, train.n, M, rank, &pos, &rng, batch, o.batch);
        loss = gradient(m, w, &train, batch, o.batch, g, &sc);
        /* the step loss as trainer.c sums it: worker order, each / N */
        mpi_check(MPI_Allgather(&loss, 1, MPI_DOUBLE, losses, 1, MPI_DOUBLE, MPI_COMM_WORLD), "MPI_Allgather");
        for (k = 0; k < M; k++) step_loss += losses[k] / (double)M;
        if (use_sched) { /* the width of this step, the same on every rank */
            dq_status st;
            if (n == 0) {
                if (sp.mode == DQ_SCHED_DQSGD && !(sp.norm_prior > 0.0)) {
                    double s2 = 0.0, prior = 0.0; /* rank 0 reports its first gradient's norm */
                    if (rank == 0) {
                        for (i = 0; i < d; i++) s2 += (double)g[i] * (double)g[i];
                        prior = sqrt(s2);
                    }
                    mpi_check(MPI_Bcast(&prior, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD), "MPI_Bcast");
                    sp.norm_prior = prior;
                    prior_bits = 32;
                }
                st = dq_sched_init(&sched, &sp);
                if (st == DQ_ERR_INFEASIBLE)
                    die("dq_sched_init: the bit budget cannot pay the minimum width for every step", NULL);
                check(st, "dq_sched_init", n);
            }
            st = dq_sched_next(&sched, &width);
            if (st == DQ_ERR_INFEASIBLE) {
                if (!o.quiet && rank == 0) fprintf(stderr, "mpi_trainer: bit budget exhausted at step %" PRIu64 "\n", n);
            } else {
                check(st, "dq_sched_next", n);
            }
            if (o.scheme == SCH_FIXED) width = o.bits;
        }
        if (!(step_loss == step_loss) || step_loss > 1e6) {
            if (rank == 0)
                fprintf(stderr, "mpi_trainer: training diverged at step %" PRIu64 " (loss %g); try a smaller --lr\n", n,
                        step_loss);
            MPI_Finalize();
            return 1;
        }
        if (n == 0)
            report(&o, out, 0, prior_bits, &tr, M, w, &train, eval_rows, n_eval, &test, width, name, t0, &sc);

        memset(&by, 0, sizeof by);
        if (o.scheme == SCH_FP32) { /* raw floats to every rank, summed in rank order */
            mpi_check(MPI_Allgather(g, (int)d, MPI_FLOAT, gall, (int)d, MPI_FLOAT, MPI_COMM_WORLD), "MPI_Allgather");
            for (k = 0; k < M; k++)
                for (i = 0; i < d; i++) avg[i] += wgt * gall[(size_t)k * d + i];
            by.sent = 4u * (uint64_t)d;
            by.recv = 4u * (uint64_t)d * (M - 1u);
        } else if (o.scheme == SCH_TOPK) { /* as trainer.c's worker `rank` */
            size_t len = topk_send(&o, &tw, g, d, M, n, rank, msg, cap);
            check(dq_mpi_allgather_add(MPI_COMM_WORLD, msg, len, wgt, avg, d, work, work_cap, &by),
                  "dq_mpi_allgather_add", n);
        } else {
            dq_params p = worker_params(width, o.seed, n, rank, o.coder);
            size_t len = 0;
            if (o.pattern == PAT_ALLGATHER) {
                check(dq_encode(&p, g, d, res_w, msg, cap, &len), "dq_encode", n);
                check(dq_mpi_allgather_add(MPI_COMM_WORLD, msg, len, wgt, avg, d, work, work_cap, &by),
                      "dq_mpi_allgather_add", n);
            } else if (o.pattern == PAT_SRA) {
                dq_params rp = p;
                p.stream = 0; /* streams rank*M + j and M*M + j */
                rp.stream = 0;
                rp.norm = DQ_NORM_MAX;
                check(dq_mpi_scatter_reduce_allgather(MPI_COMM_WORLD, &p, &rp, g, d, res_w, res_r, avg, work,
                                                      work_cap, &by),
                      "dq_mpi_scatter_reduce_allgather", n);
            } else {
                p.stream = 0; /* stream = rank */
                p.norm = DQ_NORM_MAX;
                check(dq_mpi_shared_allreduce(MPI_COMM_WORLD, &p, g, d, res_w, avg, work, work_cap, &by),
                      "dq_mpi_shared_allreduce", n);
            }
        }
        tr.up += by.sent - by.sent_meta;
        tr.sent += by.sent;
        tr.recv += by.recv;

        gnorm = sgd_step(&o, w, vel, avg, d);
        if (use_sched) check(dq_sched_update(&sched, gnorm, step_loss, dq_message_bits(d, width, BUCKET)), "dq_sched_update", n);
        if ((n + 1) % o.eval_every == 0 || n + 1 == o.steps)
            report(&o, out, n + 1, prior_bits, &tr, M, w, &train, eval_rows, n_eval, &test, width, name, t0, &sc);
    }
    {
        uint64_t mine[3], all[3] = {0, 0, 0};
        mine[0] = tr.up, mine[1] = tr.sent, mine[2] = tr.recv;
        mpi_check(MPI_Reduce(mine, all, 3, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD), "MPI_Reduce");
        if (rank == 0) {
            double per = 1.0 / ((double)M * (double)o.steps);
            if (o.save_weights) save_weights(o.save_weights, w, d);
            fprintf(stderr,
                    "mpi_trainer: %s %s M=%u d=%zu: %.1f bytes sent, %.1f received per worker per step "
                    "(data %.1f; fp32 ring allreduce would move %.1f each way); %.1f s CPU on rank 0\n",
                    pattern_name(o.pattern), name, M, d, (double)all[1] * per, (double)all[2] * per,
                    (double)all[0] * per, 2.0 * (double)(M - 1u) / (double)M * 4.0 * (double)d, now_s() - t0);
        }
    }
    if (out && out != stdout) fclose(out);
    free(msg), free(losses), free(g), free(avg), free(vel), free(w), free(perm), free(batch), free(eval_rows);
    free(gall), free(res_w), free(res_r), free(work);
    if (o.scheme == SCH_TOPK) topk_worker_free(&tw);
    free(sc.pimg), free(sc.pval), free(sc.H), free(sc.DH);
    dataset_free(&train);
    if (rank == 0) dataset_free(&test);
    MPI_Finalize();
    return 0;
}
