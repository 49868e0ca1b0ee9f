/* trainer.c - simulated data-parallel SGD on Fashion-MNIST with dqsgd-compressed gradients.
 *
 * N workers (default 8) each own a shard of the training set. Every step each worker draws
 * its own minibatch, computes the gradient of all parameters as one flat float vector and
 * sends it to the server as one dq_encode message (QSGD, bucket 512, L2 scale, stochastic
 * rounding, dither keyed by (run seed, step, worker)). The server validates each header,
 * adds every message with weight 1/N into one averaged gradient (dq_decode_add) and takes an
 * SGD step with momentum. The bit width of a step comes from a dq_sched schedule: fixed,
 * increasing (AdaQuantFL-style), DQSGD (P1: error target, P2: bit budget, or a given scale), or
 * rd (DQ_SCHED_RD: worker 0 measures its gradient's rate and distortion at every width with
 * dq_rd_measure and the schedule spends a budget of sent bits; in a real run worker 0 would
 * announce the width, a byte, before the others send), or noise (the least width whose expected
 * quantization error of the mean is a given fraction of the previous step's sampling variance
 * of the mean gradient over the workers: a rule for when more bits stop paying).
 *
 * Bits are counted exactly: the uplink message sizes in bytes x 8, summed over all workers
 * (fp32 counts 32 bits per element per worker and skips the codec).
 *
 *   make examples
 *   build/trainer --data build/fashion-mnist --model mlp --scheme fixed --bits 4 --out run.csv
 *   build/trainer --help
 *
 * Output: CSV rows `step,bits_cum,train_loss,test_acc,width,bits_fixed_cum` at step 0, every
 * --eval-every steps and at the end. `step` is the number of steps done, `bits_cum` the bits
 * sent so far (with --coder), `bits_fixed_cum` what the same messages take in the fixed layout
 * (dq_message_bits; the decoded values, hence the training, are the same either way),
 * `train_loss` the mean cross-entropy over a fixed 10k subset of the training set (every 6th
 * image; --train-eval 0 for the full set), `test_acc` the accuracy on the 10k test images,
 * `width` the bits per element of the last step done (at step 0: of the first step; 32 for
 * fp32). Progress goes to stderr. --save-weights FILE writes the final weights (raw float32).
 *
 * The data, models, gradient, shard walk and schedule set-up live in fmnist.h, which
 * examples/mpi/mpi_trainer.c shares: there each worker is an MPI rank, and with
 * --pattern allgather it ends with the same weights, bit for bit. */
#include "fmnist.h"

static void usage(FILE *f) {
    fputs("usage: trainer --data DIR [options]\n"
          "  --data DIR            raw Fashion-MNIST IDX files ({train,t10k}-{images-idx3,labels-idx1}-ubyte)\n"
          "  --model softmax|mlp   softmax regression 784->10, or MLP 784-128-10 with ReLU (default softmax)\n"
          "  --scheme S            fp32 | fixed --bits B | increasing | dqsgd-p1 --target-error E\n"
          "                        | dqsgd-p2 --budget-bits B | dqsgd --scale C\n"
          "                        | rd --budget-bits B (measured rate-distortion, bits as sent)\n"
          "                        | rd-layer --budget-bits B (rd's width sets each step's bits, split over\n"
          "                        the layers by equal marginal error per bit: one message, a width per layer)\n"
          "                        | noise --noise-ratio K (least width whose error is K x the noise)\n"
          "                        | topk --density D (top-k with error feedback, values at --bits)  (default fp32)\n"
          "  --bits B              width of the fixed scheme, 1..16 (default 4); topk: 1..16, or 32 (float32 values)\n"
          "  --density D           topk: the fraction of the elements each worker sends, (0, 1]\n"
          "  --dgc                 topk: momentum correction (Deep Gradient Compression): each worker keeps the\n"
          "                        velocity u = M u + g and sends top-k of its residual plus u; the server's\n"
          "                        SGD step then runs without momentum\n"
          "  --no-masking          --dgc without momentum factor masking (u is not cleared where sent)\n"
          "  --clip C              topk: clip each worker's gradient to norm C / sqrt(workers) first\n"
          "  --sparse-warmup K     topk: the density falls from 25% to D in 4 exponential stages over K steps\n"
          "  --coder C             default (the smallest form, dqsgd's default) | fixed (the fixed layout)\n"
          "  --noise-ratio K       noise: each step the least width whose expected quantization error of the\n"
          "                        mean, err_0(b)/N, is at most K x the variance of the mean gradient over the\n"
          "                        workers at the previous step (bits-max at step 0)\n"
          "  --budget-bits B       P2, rd, rd-layer: bits of all T messages of ONE worker, headers included (P2 counts\n"
          "                        the fixed layout's bits, rd the bits the coder sends)\n"
          "  --target-error E      P1: quantization term of the final-loss bound (loss units)\n"
          "  --lipschitz L         P1: smoothness constant (softmax default: lambda_max(X^T X/n)/2, estimated)\n"
          "  --scale C             DQSGD scale c given directly (levels s_n = c alpha^((T-1-n)/2) G_n)\n"
          "  --alpha A             DQSGD per-step contraction in (0,1] (default 0.999)\n"
          "  --period P            DQSGD: choose a new width every P steps (default 10)\n"
          "  --window W            DQSGD: gradient norm = mean of the last W norms (default 50)\n"
          "  --bits-min B, --bits-max B   width range of DQSGD and increasing (default 2, 16)\n"
          "  --warm-steps K        schedules: the first K steps at --warm-bits (default 16), their bits\n"
          "                        counted against a budget (dq_sched_params.warm_steps)\n"
          "  --norm-prior G        DQSGD norm before the first step (default: norm of worker 0's first\n"
          "                        gradient, sent once as a float and counted as 32 bits)\n"
          "  --steps T             SGD steps (default 1000)\n"
          "  --workers N           simulated workers (default 8)\n"
          "  --batch B             minibatch per worker (default 32)\n"
          "  --lr X                learning rate (default 0.02 softmax, 0.05 mlp)\n"
          "  --momentum M          heavy-ball momentum (default 0.9)\n"
          "  --seed S              run seed: init, shards, minibatches and dither (default 1)\n"
          "  --eval-every K        CSV row every K steps (default 100)\n"
          "  --train-eval N        training loss over a fixed subset of N images (default 10000; 0 = all)\n"
          "  --out FILE            CSV output (default stdout)\n"
          "  --trace FILE          per-step CSV: step,width,bits (all workers),grad_norm,loss\n"
          "  --save-weights FILE   the final weights as raw float32 (host byte order), d values\n"
          "  --print-lipschitz     print lambda_max(X^T X / n) / 2 of the training set and exit\n"
          "  --quiet               no progress on stderr\n",
          f);
}

/* ------------------------------------------------------------------ training */

/* A worker's uplink: its gradient as one QSGD message (bucket 512, L2 scale, stochastic
 * rounding), the dither keyed by (run seed, step, worker). Returns the message size. */
static size_t worker_send(const float *grad, size_t d, unsigned width, uint64_t seed, uint64_t step, unsigned worker,
                          unsigned coder, uint8_t *dst, size_t cap) {
    dq_params p = worker_params(width, seed, step, worker, coder);
    size_t len = 0;
    check(dq_encode(&p, grad, d, NULL, dst, cap, &len), "dq_encode", step);
    return len;
}

/* A per-layer message: one segment per parameter tensor, each with its width. */
static size_t worker_send_layers(const float *grad, const dq_segment *seg, size_t nseg, uint64_t seed, uint64_t step,
                                 unsigned worker, unsigned coder, uint8_t *dst, size_t cap) {
    dq_params p = worker_params(4, seed, step, worker, coder);
    size_t len = 0;
    check(dq_encode_segments(&p, grad, seg, nseg, NULL, dst, cap, &len), "dq_encode_segments", step);
    return len;
}

/* The server: open the message once (header, size, checksum), then acc += weight * decoded. */
static void server_add(const uint8_t *src, size_t len, float weight, float *acc, size_t d, uint64_t step) {
    dq_message m;
    check(dq_message_open(src, len, &m), "dq_message_open", step);
    if (m.h.count != d || m.h.msg_size != len) die("server: message does not have the model's shape", NULL);
    check(dq_message_decode_add(&m, weight, acc, d), "dq_message_decode_add", step);
}

/* One CSV row (and a progress line) for the model after `step` steps. */
static void report(const options *o, FILE *out, uint64_t step, uint64_t bits_cum, uint64_t fixed_cum, const float *w, const dataset *train,
                   const uint32_t *eval_rows, size_t n_eval, const dataset *test, unsigned width, const char *name,
                   double t0, scratch *sc) {
    double tl, ta, tel, tea;
    evaluate(o->model, w, train, eval_rows, n_eval, &tl, &ta, sc);
    evaluate(o->model, w, test, NULL, test->n, &tel, &tea, sc);
    fprintf(out, "%" PRIu64 ",%" PRIu64 ",%.6f,%.4f,%u,%" PRIu64 "\n", step, bits_cum, tl, tea, width, fixed_cum);
    fflush(out);
    if (!o->quiet)
        fprintf(stderr, "  %s %s seed %" PRIu64 "  step %5" PRIu64 "/%" PRIu64 "  loss %.4f  acc %.4f  bits %.3e  width %2u  %.1fs\n",
                o->model == MODEL_MLP ? "mlp" : "softmax", name, o->seed, step, o->steps, tl, tea, (double)bits_cum,
                width, now_s() - t0);
}

int main(int argc, char **argv) {
    options o;
    dataset train, test;
    model_kind m;
    size_t d, cap, i, n_eval;
    unsigned N, k;
    uint32_t *perm, *shard_pos, *batch, *eval_rows = NULL;
    uint64_t *wrng, n, bits_cum = 0, fixed_cum = 0, prior_bits = 0;
    topk_worker *tw = NULL;
    float *w, *vel, *avg, *g, wgt;
    uint8_t **msg;
    size_t *len;
    scratch sc;
    dq_sched sched;
    dq_sched_params sp;
    dq_rd rd, rdl[MAX_LAYERS];
    dq_segment seg[MAX_LAYERS];
    size_t nseg, lsize[MAX_LAYERS];
    double *gsum = NULL, gsq = 0.0, noise_prev = 0.0;
    int use_sched;
    unsigned width = 32;
    FILE *out, *trace = NULL;
    char namebuf[32];
    const char *name;
    double t0 = now_s();

    parse(argc, argv, &o, 0, usage);
    load_set(o.data, "train", &train);
    load_set(o.data, "t10k", &test);

    /* Smoothness of softmax cross-entropy: its Hessian is E[(diag(p) - p p^T) (x) x x^T] and
     * diag(p) - p p^T has eigenvalues at most 1/2, so L <= lambda_max(X^T X / n) / 2. */
    if (o.print_l || (o.scheme == SCH_P1 && !(o.lipschitz > 0.0))) {
        double lam = top_eigen(&train, 30);
        if (o.print_l) {
            printf("%.6g\n", lam / 2.0);
            dataset_free(&train), dataset_free(&test);
            return 0;
        }
        o.lipschitz = lam / 2.0;
        if (!o.quiet) fprintf(stderr, "trainer: L = lambda_max(X^T X/n)/2 = %.4g (30 power iterations)\n", o.lipschitz);
    }

    m = o.model;
    d = model_dim(m);
    N = o.workers;
    name = scheme_name(&o, namebuf, sizeof namebuf);

    w = (float *)xmalloc(d * sizeof *w);
    vel = (float *)xcalloc(d, sizeof *vel);
    avg = (float *)xmalloc(d * sizeof *avg);
    g = (float *)xmalloc(d * sizeof *g);
    msg = (uint8_t **)xmalloc(N * sizeof *msg);
    len = (size_t *)xcalloc(N, sizeof *len);
    nseg = model_layers(m, lsize);
    for (i = 0; i < nseg; i++) {
        seg[i].count = lsize[i];
        seg[i].bits = 16;
    }
    { /* the largest message: one width, or a segment per layer at 16 bits */
        dq_params wp = worker_params(16, 0, 0, 0, o.coder);
        check(dq_segments_capacity(&wp, seg, nseg, &cap), "dq_segments_capacity", 0);
        if (cap < dq_encode_bound(d, 16)) cap = dq_encode_bound(d, 16);
    }
    if (o.scheme == SCH_TOPK) { /* every worker's residual (and velocity) */
        size_t tcap = topk_capacity(&o, d);
        if (tcap > cap) cap = tcap;
        tw = (topk_worker *)xmalloc(N * sizeof *tw);
        for (k = 0; k < N; k++) topk_worker_init(&tw[k], &o, d);
    }
    for (k = 0; k < N; k++) msg[k] = (uint8_t *)xmalloc(cap);
    scratch_init(&sc);
    model_init(m, w, o.seed);

    /* Shards: a seeded permutation of the training set cut into N contiguous parts. Each
     * worker walks its shard in an order it reshuffles at every pass. */
    if (N > train.n) die("more workers than training images", NULL);
    perm = shard_perm(train.n, o.seed);
    shard_pos = (uint32_t *)xcalloc(N, sizeof *shard_pos);
    wrng = (uint64_t *)xmalloc(N * sizeof *wrng);
    for (k = 0; k < N; k++) wrng[k] = worker_rng(o.seed, k);
    batch = (uint32_t *)xmalloc(o.batch * sizeof *batch);

    n_eval = o.train_eval && o.train_eval < train.n ? o.train_eval : train.n;
    if (n_eval < train.n) { /* a fixed subset, the same for every run: evenly spaced images */
        eval_rows = (uint32_t *)xmalloc(n_eval * sizeof *eval_rows);
        for (i = 0; i < n_eval; i++) eval_rows[i] = (uint32_t)(i * (train.n / n_eval));
    }

    out = o.out ? fopen(o.out, "w") : stdout;
    if (!out) die("cannot write", o.out);
    fprintf(out, "step,bits_cum,train_loss,test_acc,width,bits_fixed_cum\n");
    if (o.trace) {
        if (!(trace = fopen(o.trace, "w"))) die("cannot write", o.trace);
        fprintf(trace, "step,width,bits,grad_norm,loss\n");
    }

    use_sched = o.scheme != SCH_FP32 && o.scheme != SCH_TOPK;
    if (o.scheme == SCH_TOPK) width = o.bits;
    if (o.scheme == SCH_NOISE) gsum = (double *)xcalloc(d, sizeof *gsum);
    sched_params(&o, d, N, &sp);
    if (!o.quiet)
        fprintf(stderr, "trainer: %s %s seed %" PRIu64 ": d=%zu, %u workers x batch %u, %" PRIu64
                        " steps, lr %g, momentum %g, codec %s\n",
                m == MODEL_MLP ? "mlp" : "softmax", name, o.seed, d, N, o.batch, o.steps, o.lr, o.momentum,
                dq_simd_backend());

    for (n = 0; n < o.steps; n++) {
        double step_loss = 0.0, gnorm;
        wgt = 1.0f / (float)N;
        for (i = 0; i < d; i++) avg[i] = 0.0f;
        for (k = 0; k < N; k++) {
            /* worker k: a minibatch from its shard, the gradient of all parameters as one vector */
            draw_batch(perm, train.n, N, k, &shard_pos[k], &wrng[k], batch, o.batch);
            step_loss += gradient(m, w, &train, batch, o.batch, g, &sc) / (double)N;
            if (k == 0 && use_sched) { /* the width of this step, known before anything is sent */
                dq_status st;
                if (n == 0) {
                    if (sp.mode == DQ_SCHED_DQSGD && !(sp.norm_prior > 0.0)) {
                        double s2 = 0.0; /* worker 0 reports its first gradient's norm: one float */
                        for (i = 0; i < d; i++) s2 += (double)g[i] * (double)g[i];
                        sp.norm_prior = sqrt(s2);
                        prior_bits = 32;
                        bits_cum += prior_bits;
                        fixed_cum += prior_bits;
                    }
                    st = dq_sched_init(&sched, &sp);
                    if (st == DQ_ERR_INFEASIBLE)
                        die("dq_sched_init: the bit budget cannot pay the minimum width for every step", NULL);
                    check(st, "dq_sched_init", n);
                }
                if (o.scheme == SCH_NOISE) { /* the least width whose error is a fraction of the noise */
                    dq_params rp = worker_params(4, o.seed, n, 0, o.coder);
                    check(dq_rd_measure(&rp, g, NULL, d, &rd), "dq_rd_measure", n);
                    width = sched.p.bits_max; /* no noise estimate before the first step */
                    st = n > 0 ? dq_rd_floor(&rd, o.noise_ratio * noise_prev * N, sched.p.bits_min, sched.p.bits_max,
                                             &width)
                               : DQ_OK;
                } else if (o.scheme == SCH_RD_LAYER) { /* rd's width prices the step; the layers share it */
                    dq_params rp = worker_params(4, o.seed, n, 0, o.coder);
                    size_t l, off = 0;
                    unsigned b, wl[MAX_LAYERS];
                    double budget = 0.0;
                    memset(&rd, 0, sizeof rd); /* the curve of one width everywhere: the layers' sum */
                    for (l = 0; l < nseg; off += lsize[l], l++) {
                        check(dq_rd_measure(&rp, g + off, NULL, lsize[l], &rdl[l]), "dq_rd_measure", n);
                        if (o.coder == DQ_CODER_FIXED_ONLY) memcpy(rdl[l].bits, rdl[l].fixed_bits, sizeof rd.bits);
                        rd.n += rdl[l].n;
                        rd.norm2 += rdl[l].norm2;
                        for (b = DQ_RD_BITS_MIN; b <= DQ_RD_BITS_MAX; b++) {
                            rd.err[b] += rdl[l].err[b];
                            rd.bits[b] += rdl[l].bits[b];
                            rd.fixed_bits[b] += rdl[l].fixed_bits[b];
                        }
                    }
                    st = dq_sched_next_rd(&sched, &rd, &width);
                    for (l = 0; l < nseg; l++) budget += rdl[l].bits[width];
                    check(dq_rd_alloc(rdl, nseg, budget, sched.p.bits_min, sched.p.bits_max, 0, wl, NULL, NULL),
                          "dq_rd_alloc", n);
                    for (l = 0; l < nseg; l++) seg[l].bits = wl[l];
                } else if (sp.mode == DQ_SCHED_RD) { /* worker 0 measures its gradient and announces the width */
                    dq_params rp = worker_params(4, o.seed, n, 0, o.coder);
                    check(dq_rd_measure(&rp, g, NULL, d, &rd), "dq_rd_measure", n);
                    if (o.coder == DQ_CODER_FIXED_ONLY) /* plan in the bits that are sent */
                        memcpy(rd.bits, rd.fixed_bits, sizeof rd.bits);
                    st = dq_sched_next_rd(&sched, &rd, &width);
                } else {
                    st = dq_sched_next(&sched, &width);
                }
                if (st == DQ_ERR_INFEASIBLE) { /* not expected with exact sizes: go on at bits_min */
                    if (!o.quiet) fprintf(stderr, "trainer: bit budget exhausted at step %" PRIu64 "\n", n);
                } else {
                    check(st, "dq_sched_next", n);
                }
                if (o.scheme == SCH_FIXED) width = o.bits; /* --bits 1 is below the schedule's range */
            }
            if (o.scheme == SCH_NOISE) { /* the sampling noise of the mean, for the next step */
                for (i = 0; i < d; i++) {
                    gsum[i] += (double)g[i];
                    gsq += (double)g[i] * (double)g[i];
                }
            }
            if (o.scheme == SCH_FP32) { /* no codec: the server adds the raw floats */
                for (i = 0; i < d; i++) avg[i] += wgt * g[i];
                len[k] = 4 * d;
            } else if (o.scheme == SCH_TOPK) {
                len[k] = topk_send(&o, &tw[k], g, d, N, n, k, msg[k], cap);
            } else if (o.scheme == SCH_RD_LAYER) {
                len[k] = worker_send_layers(g, seg, nseg, o.seed, n, k, o.coder, msg[k], cap);
            } else {
                len[k] = worker_send(g, d, width, o.seed, n, k, o.coder, msg[k], cap);
            }
            bits_cum += 8u * (uint64_t)len[k];
            if (o.scheme == SCH_RD_LAYER) { /* what the same segments weigh in the fixed layout */
                dq_params fp = worker_params(4, 0, 0, 0, DQ_CODER_FIXED_ONLY);
                size_t fsz = 0;
                check(dq_segments_capacity(&fp, seg, nseg, &fsz), "dq_segments_capacity", n);
                fixed_cum += 8u * (uint64_t)fsz;
            } else {
                fixed_cum += o.scheme == SCH_FP32 || o.scheme == SCH_TOPK ? 8u * (uint64_t)len[k]
                                                                          : (uint64_t)dq_message_bits(d, width, BUCKET);
            }
        }
        if (!(step_loss == step_loss) || step_loss > 1e6) {
            fprintf(stderr, "trainer: training diverged at step %" PRIu64 " (loss %g); try a smaller --lr\n", n,
                    step_loss);
            return 1;
        }
        if (o.scheme == SCH_NOISE) { /* sum_k ||g_k - mean||^2 / (N (N - 1)): the variance of the mean */
            double m2 = 0.0;
            for (i = 0; i < d; i++) {
                m2 += gsum[i] * gsum[i] / (double)N;
                gsum[i] = 0.0;
            }
            noise_prev = (gsq - m2) / ((double)N * (double)(N - 1u));
            gsq = 0.0;
        }
        if (n == 0) /* the row of the initial model (nothing has been applied yet) */
            report(&o, out, 0, prior_bits, prior_bits, w, &train, eval_rows, n_eval, &test, width, name, t0, &sc);

        /* the server: validate every message and add it with weight 1/N */
        if (o.scheme != SCH_FP32)
            for (k = 0; k < N; k++) server_add(msg[k], len[k], wgt, avg, d, n);

        /* SGD with heavy-ball momentum on the averaged gradient */
        gnorm = sgd_step(&o, w, vel, avg, d);
        if (trace) {
            uint64_t sent = 0;
            for (k = 0; k < N; k++) sent += 8u * (uint64_t)len[k];
            fprintf(trace, "%" PRIu64 ",%u,%" PRIu64 ",%.6g,%.6f\n", n, width, sent, gnorm, step_loss);
        }
        /* DQSGD plans in fixed-layout bits (dq_message_bits): what a message of this width costs
         * there, whatever the coder sent; the rd schedule in what worker 0 sent, and on the trend of
         * worker 0's gradient norm, the vector its curves measure */
        if (use_sched && sp.mode == DQ_SCHED_RD)
            check(dq_sched_update(&sched, sqrt(rd.norm2), step_loss, 8.0 * (double)len[0]), "dq_sched_update", n);
        else if (use_sched)
            check(dq_sched_update(&sched, gnorm, step_loss, dq_message_bits(d, width, BUCKET)), "dq_sched_update", n);
        if ((n + 1) % o.eval_every == 0 || n + 1 == o.steps)
            report(&o, out, n + 1, bits_cum, fixed_cum, w, &train, eval_rows, n_eval, &test, width, name, t0, &sc);
    }
    if (o.save_weights) save_weights(o.save_weights, w, d);
    if (out != stdout) fclose(out);
    if (trace) fclose(trace);
    for (k = 0; k < N; k++) free(msg[k]);
    if (tw)
        for (k = 0; k < N; k++) topk_worker_free(&tw[k]);
    free(tw);
    free(msg), free(len), free(g), free(avg), free(vel), free(w), free(perm), free(shard_pos), free(wrng);
    free(batch), free(eval_rows), free(sc.pimg), free(sc.pval), free(sc.H), free(sc.DH);
    dataset_free(&train), dataset_free(&test);
    if (!o.quiet)
        fprintf(stderr, "trainer: done in %.1f s CPU, %.4g bits sent (%.3g bits/element/worker/step)\n", now_s() - t0,
                (double)bits_cum, (double)bits_cum / ((double)o.steps * (double)N * (double)d));
    return 0;
}
