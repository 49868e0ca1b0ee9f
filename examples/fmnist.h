/* fmnist.h - the pieces both Fashion-MNIST trainers share: examples/trainer.c (N workers
 * simulated in one process) and examples/mpi/mpi_trainer.c (one MPI rank per worker).
 *
 * Everything that decides a number lives here, so the two programs compute bit-identical
 * gradients, steps and schedules: the generator (splitmix64), the IDX loader, the models (softmax
 * regression and the 784-128-10 MLP), the gradient and evaluation, the shard and minibatch walk
 * of worker k, the encoder params of worker k's message, the schedule params, the momentum step,
 * and the options both accept. Static functions only: include it in one file per program.
 *
 * Before including, a program may define FM_PROG (the name in messages; default "trainer").
 * A program that must not just exit() on a fatal error (an MPI rank) sets fm_exit. */
#ifndef FMNIST_H_INCLUDED
#define FMNIST_H_INCLUDED

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dqsgd.h"

#if defined(__GNUC__)
#define FM_FN static __attribute__((unused))
#define FM_NORETURN __attribute__((noreturn))
#else
#define FM_FN static
#define FM_NORETURN
#endif

#ifndef FM_PROG
#define FM_PROG "trainer"
#endif
static const char *const fm_prog = FM_PROG;
/* Called with 1 after a fatal error has been printed; must not return. */
static void (*fm_exit)(int) = exit;

#define PIX 784     /* 28 x 28 */
#define CLASSES 10
#define HID 128     /* MLP hidden units (a constant, so the inner loops vectorize) */
#define BUCKET 512u /* elements per QSGD scale */

/* ------------------------------------------------------------------ small helpers */

FM_NORETURN FM_FN void die(const char *what, const char *detail);
FM_FN void die(const char *what, const char *detail) {
    fprintf(stderr, "%s: %s%s%s\n", fm_prog, what, detail ? ": " : "", detail ? detail : "");
    fm_exit(1);
    exit(1); /* fm_exit does not return; this tells the compiler */
}

FM_FN void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) die("out of memory", NULL);
    return p;
}

FM_FN void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) die("out of memory", NULL);
    return p;
}

FM_FN double now_s(void) { return (double)clock() / (double)CLOCKS_PER_SEC; }

/* splitmix64: the generator for initialization, sharding and minibatch order. */
FM_FN uint64_t rng_next(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}
FM_FN double rng_unit(uint64_t *s) { return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0); }
FM_FN size_t rng_below(uint64_t *s, size_t n) { return (size_t)(rng_unit(s) * (double)n); }

FM_FN void shuffle(uint32_t *a, size_t n, uint64_t *s) {
    size_t i;
    for (i = n; i > 1; i--) {
        size_t j = rng_below(s, i);
        uint32_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

/* ------------------------------------------------------------------ data (IDX files) */

/* Images as sparse rows (about half the pixels of Fashion-MNIST are 0): row r has the
 * pixels off[r] .. off[r+1]-1, each an index and a value in (0, 1]. */
typedef struct dataset {
    size_t n;
    uint32_t *off;
    uint16_t *idx;
    float *val;
    unsigned char *label;
} dataset;

FM_FN unsigned char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    unsigned char *buf;
    long sz = -1;
    if (!f) die("cannot open (run `make demo`, or decompress the Fashion-MNIST .gz files into --data)", path);
    if (fseek(f, 0, SEEK_END) != 0 || (sz = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) die("cannot size", path);
    buf = (unsigned char *)xmalloc((size_t)sz);
    if (fread(buf, 1, (size_t)sz, f) != (size_t)sz) die("short read", path);
    fclose(f);
    *len = (size_t)sz;
    return buf;
}

FM_FN uint32_t be32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* Validate an IDX header: magic 00 00 08 <ndim>, then ndim big-endian sizes; the file must be
 * exactly header + product of sizes bytes. Returns the item count. */
FM_FN size_t idx_check(const unsigned char *b, size_t len, unsigned ndim, const char *path) {
    char msg[256];
    size_t need = 4u + 4u * ndim, items;
    if (len < need || b[0] != 0 || b[1] != 0 || b[2] != 0x08 || b[3] != ndim) {
        snprintf(msg, sizeof msg, "%s: not an IDX%s file of unsigned bytes (bad magic; is it still gzipped?)", path,
                 ndim == 3 ? " image" : " label");
        die(msg, NULL);
    }
    items = be32(b + 4);
    if (ndim == 3 && (be32(b + 8) != 28 || be32(b + 12) != 28)) {
        snprintf(msg, sizeof msg, "%s: images are %" PRIu32 "x%" PRIu32 ", expected 28x28", path, be32(b + 8),
                 be32(b + 12));
        die(msg, NULL);
    }
    if (items == 0 || len != need + items * (ndim == 3 ? (size_t)PIX : 1u)) {
        snprintf(msg, sizeof msg, "%s: %zu bytes, but the header announces %zu items (truncated or corrupt file)",
                 path, len, items);
        die(msg, NULL);
    }
    return items;
}

FM_FN void dataset_free(dataset *ds) {
    free(ds->off), free(ds->idx), free(ds->val), free(ds->label);
}

FM_FN void load_set(const char *dir, const char *prefix, dataset *ds) {
    char ip[1024], lp[1024];
    unsigned char *img, *lab;
    size_t ilen, llen, n, r, k, nnz = 0;
    snprintf(ip, sizeof ip, "%s/%s-images-idx3-ubyte", dir, prefix);
    snprintf(lp, sizeof lp, "%s/%s-labels-idx1-ubyte", dir, prefix);
    img = read_file(ip, &ilen);
    lab = read_file(lp, &llen);
    n = idx_check(img, ilen, 3, ip);
    if (idx_check(lab, llen, 1, lp) != n) die("image and label files disagree on the item count", lp);
    for (k = 0; k < n; k++)
        if (lab[8 + k] >= CLASSES) die("label outside 0..9", lp);
    for (k = 0; k < n * PIX; k++) nnz += img[16 + k] != 0;
    ds->n = n;
    ds->off = (uint32_t *)xmalloc((n + 1) * sizeof *ds->off);
    ds->idx = (uint16_t *)xmalloc(nnz * sizeof *ds->idx);
    ds->val = (float *)xmalloc(nnz * sizeof *ds->val);
    ds->label = (unsigned char *)xmalloc(n);
    nnz = 0;
    for (r = 0; r < n; r++) {
        const unsigned char *px = img + 16 + r * PIX;
        ds->off[r] = (uint32_t)nnz;
        for (k = 0; k < PIX; k++)
            if (px[k]) {
                ds->idx[nnz] = (uint16_t)k;
                ds->val[nnz] = (float)px[k] / 255.0f;
                nnz++;
            }
        ds->label[r] = lab[8 + r];
    }
    ds->off[n] = (uint32_t)nnz;
    free(img);
    free(lab);
}

/* ------------------------------------------------------------------ models */

typedef enum { MODEL_SOFTMAX, MODEL_MLP } model_kind;

/* Flat parameter layout (the vector that is quantized):
 *   softmax: W[10][784] (class-major), b[10]                             d = 7850
 *   mlp:     W1[784][128] (pixel-major), b1[128], W2[10][128], b2[10]    d = 101770 */
#define SM_B (PIX * CLASSES)
#define SM_D (SM_B + CLASSES)
#define MLP_B1 (PIX * HID)
#define MLP_W2 (MLP_B1 + HID)
#define MLP_B2 (MLP_W2 + CLASSES * HID)
#define MLP_D (MLP_B2 + CLASSES)

FM_FN size_t model_dim(model_kind m) { return m == MODEL_SOFTMAX ? (size_t)SM_D : (size_t)MLP_D; }
/* The parameter tensors in layout order (the segments of a per-layer message): their count,
 * sizes into size[0..4). */
#define MAX_LAYERS 4
FM_FN size_t model_layers(model_kind m, size_t *size) {
    if (m == MODEL_SOFTMAX) {
        size[0] = SM_B;
        size[1] = CLASSES;
        return 2;
    }
    size[0] = MLP_B1;
    size[1] = HID;
    size[2] = CLASSES * HID;
    size[3] = CLASSES;
    return 4;
}

/* Softmax regression: small uniform weights. MLP: He-uniform for W1 (ReLU), Glorot-uniform
 * for W2, zero biases. All from the run seed. */
FM_FN void model_init(model_kind m, float *w, uint64_t seed) {
    uint64_t s = seed ^ 0x5EEDC0DEull;
    size_t i, d = model_dim(m);
    memset(w, 0, d * sizeof *w);
    if (m == MODEL_SOFTMAX) {
        for (i = 0; i < SM_B; i++) w[i] = (float)(0.02 * rng_unit(&s) - 0.01);
    } else {
        double a1 = sqrt(6.0 / PIX), a2 = sqrt(6.0 / (HID + CLASSES));
        for (i = 0; i < MLP_B1; i++) w[i] = (float)(a1 * (2.0 * rng_unit(&s) - 1.0));
        for (i = 0; i < CLASSES * HID; i++) w[MLP_W2 + i] = (float)(a2 * (2.0 * rng_unit(&s) - 1.0));
    }
}

/* Work space for up to CHUNK images at a time. The MLP's first layer runs pixel-major over
 * the chunk: the nonzero pixels of all its images regrouped by pixel, so that a row of W1 (or
 * of its gradient) is loaded once per chunk instead of once per image. Each image's sums still
 * run over its pixels in increasing order, so the results are those of the per-image loop. */
#define CHUNK 256
typedef struct scratch {
    uint32_t poff[PIX + 1]; /* entries of pixel p: poff[p] .. poff[p+1]-1 */
    uint16_t *pimg;         /* image (0..CHUNK-1) of each entry */
    float *pval;            /* its pixel value */
    float *H, *DH;          /* hidden activations and their gradients, CHUNK x HID */
} scratch;

FM_FN void scratch_init(scratch *sc) {
    sc->pimg = (uint16_t *)xmalloc((size_t)CHUNK * PIX * sizeof *sc->pimg);
    sc->pval = (float *)xmalloc((size_t)CHUNK * PIX * sizeof *sc->pval);
    sc->H = (float *)xmalloc((size_t)CHUNK * HID * sizeof *sc->H);
    sc->DH = (float *)xmalloc((size_t)CHUNK * HID * sizeof *sc->DH);
}

FM_FN void regroup(const dataset *ds, const uint32_t *rows, size_t n, scratch *sc) {
    uint32_t pos[PIX], t;
    size_t i, p;
    memset(pos, 0, sizeof pos);
    for (i = 0; i < n; i++)
        for (t = ds->off[rows[i]]; t < ds->off[rows[i] + 1]; t++) pos[ds->idx[t]]++;
    sc->poff[0] = 0;
    for (p = 0; p < PIX; p++) {
        sc->poff[p + 1] = sc->poff[p] + pos[p];
        pos[p] = sc->poff[p];
    }
    for (i = 0; i < n; i++)
        for (t = ds->off[rows[i]]; t < ds->off[rows[i] + 1]; t++) {
            uint32_t k = pos[ds->idx[t]]++;
            sc->pimg[k] = (uint16_t)i;
            sc->pval[k] = ds->val[t];
        }
}

/* y[0..HID) += a * x[0..HID): the inner loop of the MLP (restrict lets GCC vectorize it at -O2) */
FM_FN void axpy_hid(float *restrict y, float a, const float *restrict x) {
    int j;
    for (j = 0; j < HID; j++) y[j] += a * x[j];
}

/* MLP hidden layer (after ReLU) of the n images last regrouped into sc->H. */
FM_FN void mlp_hidden(const float *w, size_t n, scratch *sc) {
    size_t i, p;
    uint32_t k;
    int j;
    for (i = 0; i < n; i++)
        for (j = 0; j < HID; j++) sc->H[i * HID + (size_t)j] = w[MLP_B1 + j];
    for (p = 0; p < PIX; p++) {
        for (k = sc->poff[p]; k < sc->poff[p + 1]; k++)
            axpy_hid(sc->H + (size_t)sc->pimg[k] * HID, sc->pval[k], w + p * HID);
    }
    for (i = 0; i < n * HID; i++) sc->H[i] = sc->H[i] > 0.0f ? sc->H[i] : 0.0f;
}

FM_FN void mlp_logits(const float *w, const float *h, float *z) {
    int j, k;
    for (k = 0; k < CLASSES; k++) {
        const float *row = w + MLP_W2 + (size_t)k * HID;
        float acc = w[MLP_B2 + k];
        for (j = 0; j < HID; j++) acc += row[j] * h[j];
        z[k] = acc;
    }
}

/* Image r as a dense vector of PIX floats. */
FM_FN void dense_image(const dataset *ds, size_t r, float *x) {
    uint32_t t;
    memset(x, 0, PIX * sizeof *x);
    for (t = ds->off[r]; t < ds->off[r + 1]; t++) x[ds->idx[t]] = ds->val[t];
}

/* Dot product over the pixels in 16 fixed lanes (vectorizable, same result everywhere). */
#define LANES 16
FM_FN float dot_pix(const float *restrict a, const float *restrict b) {
    float acc[LANES];
    int p, l, h;
    for (l = 0; l < LANES; l++) acc[l] = 0.0f;
    for (p = 0; p < PIX; p += LANES) /* PIX = 49 x 16 */
        for (l = 0; l < LANES; l++) acc[l] += a[p + l] * b[p + l];
    for (h = LANES / 2; h > 0; h /= 2)
        for (l = 0; l < h; l++) acc[l] += acc[l + h];
    return acc[0];
}

FM_FN void axpy_pix(float *restrict y, float a, const float *restrict x) {
    int p;
    for (p = 0; p < PIX; p++) y[p] += a * x[p];
}

FM_FN void softmax_logits(const float *w, const float *x, float *z) {
    int k;
    for (k = 0; k < CLASSES; k++) z[k] = w[SM_B + k] + dot_pix(w + (size_t)k * PIX, x);
}

/* Softmax of the logits into p; returns the cross-entropy for label y. */
FM_FN double softmax_xent(const float *z, int y, float *p) {
    double mx = (double)z[0], sum = 0.0;
    int k;
    for (k = 1; k < CLASSES; k++)
        if ((double)z[k] > mx) mx = (double)z[k];
    for (k = 0; k < CLASSES; k++) sum += exp((double)z[k] - mx);
    for (k = 0; k < CLASSES; k++) p[k] = (float)(exp((double)z[k] - mx) / sum);
    return log(sum) + mx - (double)z[y];
}

/* Mean loss and mean gradient (into g, overwritten) over the images rows[0..bs). */
FM_FN double gradient(model_kind m, const float *w, const dataset *ds, const uint32_t *rows, size_t bs, float *g,
                       scratch *sc) {
    float z[CLASSES], dz[CLASSES], x[PIX];
    const float inv = 1.0f / (float)bs;
    double loss = 0.0;
    size_t i, c0, p;
    int j, k;
    memset(g, 0, model_dim(m) * sizeof *g);
    if (m == MODEL_SOFTMAX) {
        for (i = 0; i < bs; i++) {
            int y = ds->label[rows[i]];
            dense_image(ds, rows[i], x);
            softmax_logits(w, x, z);
            loss += softmax_xent(z, y, dz);
            dz[y] -= 1.0f;
            for (k = 0; k < CLASSES; k++) {
                axpy_pix(g + (size_t)k * PIX, dz[k] * inv, x);
                g[SM_B + k] += dz[k] * inv;
            }
        }
        return loss / (double)bs;
    }
    for (c0 = 0; c0 < bs; c0 += CHUNK) {
        size_t n = bs - c0 < CHUNK ? bs - c0 : CHUNK;
        regroup(ds, rows + c0, n, sc);
        mlp_hidden(w, n, sc);
        for (i = 0; i < n; i++) {
            const float *h = sc->H + i * HID;
            float *dh = sc->DH + i * HID;
            int y = ds->label[rows[c0 + i]];
            mlp_logits(w, h, z);
            loss += softmax_xent(z, y, dz);
            dz[y] -= 1.0f;
            for (j = 0; j < HID; j++) dh[j] = 0.0f;
            for (k = 0; k < CLASSES; k++) {
                const float dk = dz[k] * inv;
                axpy_hid(g + MLP_W2 + (size_t)k * HID, dk, h);
                axpy_hid(dh, dk, w + MLP_W2 + (size_t)k * HID);
                g[MLP_B2 + k] += dk;
            }
            for (j = 0; j < HID; j++) {
                dh[j] = h[j] > 0.0f ? dh[j] : 0.0f;
                g[MLP_B1 + j] += dh[j];
            }
        }
        for (p = 0; p < PIX; p++) {
            uint32_t e;
            for (e = sc->poff[p]; e < sc->poff[p + 1]; e++)
                axpy_hid(g + p * HID, sc->pval[e], sc->DH + (size_t)sc->pimg[e] * HID);
        }
    }
    return loss / (double)bs;
}

/* Mean loss and accuracy over rows (all of ds when rows is NULL). */
FM_FN void evaluate(model_kind m, const float *w, const dataset *ds, const uint32_t *rows, size_t n, double *loss,
                     double *acc, scratch *sc) {
    uint32_t ids[CHUNK];
    float z[CLASSES], p[CLASSES], x[PIX];
    double l = 0.0;
    size_t c0, i, hit = 0;
    for (c0 = 0; c0 < n; c0 += CHUNK) {
        size_t cn = n - c0 < CHUNK ? n - c0 : CHUNK;
        for (i = 0; i < cn; i++) ids[i] = rows ? rows[c0 + i] : (uint32_t)(c0 + i);
        if (m == MODEL_MLP) {
            regroup(ds, ids, cn, sc);
            mlp_hidden(w, cn, sc);
        }
        for (i = 0; i < cn; i++) {
            int k, best = 0, y = ds->label[ids[i]];
            if (m == MODEL_MLP)
                mlp_logits(w, sc->H + i * HID, z);
            else {
                dense_image(ds, ids[i], x);
                softmax_logits(w, x, z);
            }
            l += softmax_xent(z, y, p);
            for (k = 1; k < CLASSES; k++)
                if (z[k] > z[best]) best = k;
            hit += best == y;
        }
    }
    *loss = l / (double)n;
    *acc = (double)hit / (double)n;
}

/* Largest eigenvalue of X^T X / n over the training images with a constant-1 column appended
 * for the bias (power iteration from the all-ones vector; the data are non-negative, so it
 * overlaps the top eigenvector well). */
FM_FN double top_eigen(const dataset *ds, int iters) {
    double v[PIX + 1], u[PIX + 1], lam = 0.0, nrm;
    size_t r;
    int it, k;
    for (k = 0; k <= PIX; k++) v[k] = 1.0 / sqrt(PIX + 1.0);
    for (it = 0; it < iters; it++) {
        for (k = 0; k <= PIX; k++) u[k] = 0.0;
        for (r = 0; r < ds->n; r++) {
            double dot = v[PIX];
            uint32_t t;
            for (t = ds->off[r]; t < ds->off[r + 1]; t++) dot += (double)ds->val[t] * v[ds->idx[t]];
            for (t = ds->off[r]; t < ds->off[r + 1]; t++) u[ds->idx[t]] += (double)ds->val[t] * dot;
            u[PIX] += dot;
        }
        nrm = 0.0;
        lam = 0.0;
        for (k = 0; k <= PIX; k++) {
            u[k] /= (double)ds->n;
            lam += u[k] * v[k]; /* Rayleigh quotient, v has unit norm */
            nrm += u[k] * u[k];
        }
        nrm = sqrt(nrm);
        for (k = 0; k <= PIX; k++) v[k] = u[k] / nrm;
    }
    return lam;
}


/* ------------------------------------------------------------------ options */

typedef enum { SCH_FP32, SCH_FIXED, SCH_INCREASING, SCH_P1, SCH_P2, SCH_SCALE, SCH_RD, SCH_NOISE, SCH_RD_LAYER, SCH_TOPK } scheme_kind;
/* mpi_trainer only: how the ranks aggregate (dqsgd_mpi.h) */
typedef enum { PAT_ALLGATHER, PAT_SRA, PAT_SHARED } pattern_kind;

typedef struct options {
    const char *data, *out, *trace, *save_weights;
    model_kind model;
    scheme_kind scheme;
    pattern_kind pattern;
    unsigned bits, bits_min, bits_max, workers, batch, period, window, coder, warm_bits;
    uint64_t steps, eval_every, seed, warm_steps;
    double lr, momentum, alpha, target_error, budget_bits, scale, lipschitz, norm_prior, noise_ratio;
    size_t train_eval;
    int quiet, print_l, ef;
    /* --scheme topk: density, local clipping threshold (0: off), sparsity warm-up steps;
     * dgc: momentum correction (the workers keep the velocity), masking: momentum factor masking */
    double density, clip;
    uint64_t sparse_warmup;
    int dgc, masking;
} options;

FM_FN double num_arg(int argc, char **argv, int *i, double lo, double hi) {
    char *end;
    double v;
    if (*i + 1 >= argc) die("missing value after", argv[*i]);
    v = strtod(argv[*i + 1], &end);
    if (end == argv[*i + 1] || *end || !(v >= lo && v <= hi)) {
        fprintf(stderr, "%s: %s %s: expected a number in [%g, %g]\n", fm_prog, argv[*i], argv[*i + 1], lo, hi);
        fm_exit(1);
    }
    *i += 1;
    return v;
}

/* An integer option: like num_arg, and the value must be whole. */
FM_FN double int_arg(int argc, char **argv, int *i, double lo, double hi) {
    double v = num_arg(argc, argv, i, lo, hi);
    if (v != floor(v)) {
        fprintf(stderr, "%s: %s %s: expected a whole number\n", fm_prog, argv[*i - 1], argv[*i]);
        fm_exit(1);
    }
    return v;
}

FM_FN const char *str_arg(int argc, char **argv, int *i) {
    if (*i + 1 >= argc) die("missing value after", argv[*i]);
    *i += 1;
    return argv[*i];
}

/* The options of both trainers. mpi = 0 (trainer.c) takes --workers, --trace and
 * --print-lipschitz; mpi = 1 (mpi_trainer, one worker per rank) takes --pattern and --ef instead.
 * usage() prints the program's own help. */
FM_FN void parse(int argc, char **argv, options *o, int mpi, void (*usage)(FILE *)) {
    int i;
    memset(o, 0, sizeof *o);
    o->model = MODEL_SOFTMAX;
    o->scheme = SCH_FP32;
    o->pattern = PAT_ALLGATHER;
    o->bits = 4;
    o->workers = 8;
    o->batch = 32;
    o->period = 10;
    o->window = 50;
    o->steps = 1000;
    o->eval_every = 100;
    o->seed = 1;
    o->momentum = 0.9;
    o->alpha = 0.999;
    o->train_eval = 10000;
    o->masking = 1;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            fm_exit(0);
        } else if (!strcmp(a, "--data")) {
            o->data = str_arg(argc, argv, &i);
        } else if (!strcmp(a, "--out")) {
            o->out = str_arg(argc, argv, &i);
        } else if (!strcmp(a, "--save-weights")) {
            o->save_weights = str_arg(argc, argv, &i);
        } else if (!mpi && !strcmp(a, "--trace")) {
            o->trace = str_arg(argc, argv, &i);
        } else if (!strcmp(a, "--model")) {
            const char *v = str_arg(argc, argv, &i);
            if (!strcmp(v, "softmax")) o->model = MODEL_SOFTMAX;
            else if (!strcmp(v, "mlp")) o->model = MODEL_MLP;
            else die("--model: expected softmax or mlp, got", v);
        } else if (!strcmp(a, "--scheme")) {
            const char *v = str_arg(argc, argv, &i);
            if (!strcmp(v, "fp32")) o->scheme = SCH_FP32;
            else if (!strcmp(v, "fixed")) o->scheme = SCH_FIXED;
            else if (!strcmp(v, "increasing")) o->scheme = SCH_INCREASING;
            else if (!strcmp(v, "dqsgd-p1")) o->scheme = SCH_P1;
            else if (!strcmp(v, "dqsgd-p2")) o->scheme = SCH_P2;
            else if (!strcmp(v, "dqsgd")) o->scheme = SCH_SCALE;
            else if (!mpi && !strcmp(v, "rd")) o->scheme = SCH_RD;
            else if (!mpi && !strcmp(v, "rd-layer")) o->scheme = SCH_RD_LAYER;
            else if (!mpi && !strcmp(v, "noise")) o->scheme = SCH_NOISE;
            else if (!strcmp(v, "topk")) o->scheme = SCH_TOPK;
            else die("--scheme: expected fp32, fixed, increasing, dqsgd-p1, dqsgd-p2, dqsgd, rd, rd-layer, noise or topk, got", v);
        } else if (mpi && !strcmp(a, "--pattern")) {
            const char *v = str_arg(argc, argv, &i);
            if (!strcmp(v, "allgather")) o->pattern = PAT_ALLGATHER;
            else if (!strcmp(v, "sra")) o->pattern = PAT_SRA;
            else if (!strcmp(v, "shared")) o->pattern = PAT_SHARED;
            else die("--pattern: expected allgather, sra or shared, got", v);
        } else if (mpi && !strcmp(a, "--ef")) {
            o->ef = (int)int_arg(argc, argv, &i, 0, 1);
        } else if (!strcmp(a, "--coder")) {
            const char *v = str_arg(argc, argv, &i);
            if (!strcmp(v, "default")) o->coder = DQ_CODER_DEFAULT;
            else if (!strcmp(v, "fixed")) o->coder = DQ_CODER_FIXED_ONLY;
            else die("--coder: expected default or fixed, got", v);
        } else if (!strcmp(a, "--bits")) {
            o->bits = (unsigned)int_arg(argc, argv, &i, 1, 32);
        } else if (!strcmp(a, "--density")) {
            o->density = num_arg(argc, argv, &i, 1e-9, 1);
        } else if (!strcmp(a, "--dgc")) {
            o->dgc = 1;
        } else if (!strcmp(a, "--no-masking")) {
            o->masking = 0;
        } else if (!strcmp(a, "--clip")) {
            o->clip = num_arg(argc, argv, &i, 1e-300, 1e300);
        } else if (!strcmp(a, "--sparse-warmup")) {
            o->sparse_warmup = (uint64_t)int_arg(argc, argv, &i, 0, 1e9);
        } else if (!strcmp(a, "--bits-min")) {
            o->bits_min = (unsigned)int_arg(argc, argv, &i, 2, 16);
        } else if (!strcmp(a, "--bits-max")) {
            o->bits_max = (unsigned)int_arg(argc, argv, &i, 2, 16);
        } else if (!mpi && !strcmp(a, "--noise-ratio")) {
            o->noise_ratio = num_arg(argc, argv, &i, 1e-300, 1e300);
        } else if (!strcmp(a, "--budget-bits")) {
            o->budget_bits = num_arg(argc, argv, &i, 1, 1e300);
        } else if (!strcmp(a, "--target-error")) {
            o->target_error = num_arg(argc, argv, &i, 1e-300, 1e300);
        } else if (!strcmp(a, "--lipschitz")) {
            o->lipschitz = num_arg(argc, argv, &i, 1e-300, 1e300);
        } else if (!strcmp(a, "--scale")) {
            o->scale = num_arg(argc, argv, &i, 1e-300, 1e300);
        } else if (!strcmp(a, "--alpha")) {
            o->alpha = num_arg(argc, argv, &i, 1e-300, 1);
        } else if (!strcmp(a, "--period")) {
            o->period = (unsigned)int_arg(argc, argv, &i, 1, 1e9);
        } else if (!strcmp(a, "--window")) {
            o->window = (unsigned)int_arg(argc, argv, &i, 1, DQ_SCHED_MAX_WINDOW);
        } else if (!strcmp(a, "--norm-prior")) {
            o->norm_prior = num_arg(argc, argv, &i, 1e-300, 1e300);
        } else if (!strcmp(a, "--warm-steps")) {
            o->warm_steps = (uint64_t)int_arg(argc, argv, &i, 0, 1e9);
        } else if (!strcmp(a, "--warm-bits")) {
            o->warm_bits = (unsigned)int_arg(argc, argv, &i, 2, 16);
        } else if (!strcmp(a, "--steps")) {
            o->steps = (uint64_t)int_arg(argc, argv, &i, 1, 1e9);
        } else if (!mpi && !strcmp(a, "--workers")) {
            o->workers = (unsigned)int_arg(argc, argv, &i, 1, 1024);
        } else if (!strcmp(a, "--batch")) {
            o->batch = (unsigned)int_arg(argc, argv, &i, 1, 60000);
        } else if (!strcmp(a, "--lr")) {
            o->lr = num_arg(argc, argv, &i, 1e-300, 1e3);
        } else if (!strcmp(a, "--momentum")) {
            o->momentum = num_arg(argc, argv, &i, 0, 0.999999);
        } else if (!strcmp(a, "--seed")) {
            o->seed = (uint64_t)int_arg(argc, argv, &i, 0, 9007199254740992.0);
        } else if (!strcmp(a, "--eval-every")) {
            o->eval_every = (uint64_t)int_arg(argc, argv, &i, 1, 1e9);
        } else if (!strcmp(a, "--train-eval")) {
            o->train_eval = (size_t)int_arg(argc, argv, &i, 0, 1e9);
        } else if (!strcmp(a, "--quiet")) {
            o->quiet = 1;
        } else if (!mpi && !strcmp(a, "--print-lipschitz")) {
            o->print_l = 1;
        } else {
            usage(stderr);
            die("unknown option", a);
        }
    }
    if (!(o->lr > 0.0)) o->lr = o->model == MODEL_SOFTMAX ? 0.02 : 0.05;
    if (!o->data) {
        usage(stderr);
        die("--data DIR is required", NULL);
    }
    if (o->bits > 16 && !(o->scheme == SCH_TOPK && o->bits == 32))
        die("--bits: 1..16 (32, float32 values, with --scheme topk only)", NULL);
    if (o->scheme == SCH_TOPK && !(o->density > 0.0)) die("topk needs --density D in (0, 1]", NULL);
    if (o->scheme != SCH_TOPK && (o->density > 0.0 || o->dgc || !o->masking || o->clip > 0.0 || o->sparse_warmup))
        die("--density, --dgc, --no-masking, --clip and --sparse-warmup are options of --scheme topk", NULL);
    if (mpi && o->scheme == SCH_TOPK && o->pattern != PAT_ALLGATHER)
        die("--scheme topk goes by --pattern allgather only (top-k messages are not re-quantized or summed)", NULL);
    if (o->scheme == SCH_P1 && !(o->target_error > 0.0)) die("dqsgd-p1 needs --target-error E", NULL);
    if (o->scheme == SCH_P2 && !(o->budget_bits > 0.0)) die("dqsgd-p2 needs --budget-bits B (per worker)", NULL);
    if ((o->scheme == SCH_RD || o->scheme == SCH_RD_LAYER) && !(o->budget_bits > 0.0))
        die("rd and rd-layer need --budget-bits B (per worker)", NULL);
    if (o->scheme == SCH_NOISE && !(o->noise_ratio > 0.0)) die("noise needs --noise-ratio K", NULL);
    if (o->scheme == SCH_SCALE && !(o->scale > 0.0)) die("dqsgd needs --scale C", NULL);
    if (o->scheme == SCH_P1 && o->model == MODEL_MLP && !(o->lipschitz > 0.0))
        die("dqsgd-p1 on the MLP needs --lipschitz L (no global smoothness constant is estimated for it)", NULL);
}

FM_FN const char *scheme_name(const options *o, char *buf, size_t cap) {
    switch (o->scheme) {
        case SCH_FP32: return "fp32";
        case SCH_FIXED: snprintf(buf, cap, "fixed-%u", o->bits); return buf;
        case SCH_INCREASING: return "increasing";
        case SCH_P1: return "dqsgd-p1";
        case SCH_P2: return "dqsgd-p2";
        case SCH_RD: return "rd";
        case SCH_RD_LAYER: return "rd-layer";
        case SCH_NOISE: return "noise";
        case SCH_TOPK: snprintf(buf, cap, "topk-%g-%u%s", o->density, o->bits, o->dgc ? "-dgc" : ""); return buf;
        default: return "dqsgd";
    }
}

/* ------------------------------------------------------------------ training pieces */

FM_FN void check(dq_status st, const char *call, uint64_t step) {
    if (st != DQ_OK) {
        fprintf(stderr, "%s: %s at step %" PRIu64 ": %s\n", fm_prog, call, step, dq_strerror(st));
        fm_exit(1);
    }
}

/* The params of worker k's message at a step: QSGD, bucket 512, L2 scale, stochastic rounding,
 * the dither keyed by (run seed, step, worker). */
FM_FN dq_params worker_params(unsigned width, uint64_t seed, uint64_t step, unsigned worker, unsigned coder) {
    dq_params p;
    memset(&p, 0, sizeof p);
    p.coder = coder;
    p.bits = width;
    p.bucket = BUCKET;
    p.norm = DQ_NORM_L2;
    p.rounding = DQ_ROUND_STOCHASTIC;
    p.seed = seed;
    p.step = step;
    p.stream = worker;
    return p;
}

/* The schedule of a run with N workers (the width of every step; the same on every worker). */
FM_FN void sched_params(const options *o, size_t d, unsigned N, dq_sched_params *sp) {
    /* heavy-ball momentum takes steps of lr / (1 - momentum) in steady state: the eta of P1 */
    double lr_eff = o->lr / (1.0 - o->momentum);
    memset(sp, 0, sizeof *sp);
    sp->steps = o->steps;
    sp->dim = d;
    sp->bucket = BUCKET;
    sp->alpha = o->alpha;
    sp->bits_min = o->bits_min;
    sp->bits_max = o->bits_max;
    sp->period = o->period;
    sp->window = o->window;
    sp->norm_prior = o->norm_prior;
    sp->workers = N;
    sp->warm_steps = o->warm_steps;
    sp->warm_bits = o->warm_steps ? o->warm_bits : 0u;
    switch (o->scheme) {
        case SCH_FIXED: sp->mode = DQ_SCHED_FIXED; sp->bits_min = 2; sp->bits_max = o->bits < 2 ? 2 : o->bits; break;
        case SCH_INCREASING: sp->mode = DQ_SCHED_INCREASING; break;
        case SCH_P1: sp->mode = DQ_SCHED_DQSGD; sp->target_error = o->target_error; sp->lipschitz = o->lipschitz; sp->lr = lr_eff; break;
        case SCH_P2: sp->mode = DQ_SCHED_DQSGD; sp->budget_bits = o->budget_bits; break;
        case SCH_SCALE: sp->mode = DQ_SCHED_DQSGD; sp->scale = o->scale; break;
        case SCH_RD:
        case SCH_RD_LAYER: sp->mode = DQ_SCHED_RD; sp->budget_bits = o->budget_bits; break;
        case SCH_NOISE: sp->mode = DQ_SCHED_FIXED; break; /* unused: the trainer picks the width */
        default: break;
    }
}

/* Shards: a seeded permutation of the n_train training images cut into N contiguous parts;
 * worker k owns perm[lo_k .. lo_k + sz_k), lo_k = n_train k / N, and walks it in an order it
 * reshuffles at every pass with its own generator. */
FM_FN uint32_t *shard_perm(size_t n_train, uint64_t seed) {
    uint32_t *perm = (uint32_t *)xmalloc(n_train * sizeof *perm);
    uint64_t seed_state = seed * 0x9E3779B97F4A7C15ull + 1u;
    size_t i;
    for (i = 0; i < n_train; i++) perm[i] = (uint32_t)i;
    shuffle(perm, n_train, &seed_state);
    return perm;
}

FM_FN uint64_t worker_rng(uint64_t seed, unsigned k) { return seed * 0xD1B54A32D192ED03ull + k + 7u; }

/* Worker k of N draws its next minibatch of bs images from its shard (pos: images drawn so far,
 * rng: its generator; both updated). */
FM_FN void draw_batch(uint32_t *perm, size_t n_train, unsigned N, unsigned k, uint32_t *pos, uint64_t *rng,
                      uint32_t *batch, size_t bs) {
    size_t lo = n_train * k / N, sz = n_train * (k + 1) / N - lo, i;
    for (i = 0; i < bs; i++) {
        if (*pos % sz == 0) shuffle(perm + lo, sz, rng);
        batch[i] = perm[lo + *pos % sz];
        (*pos)++;
    }
}

/* SGD with heavy-ball momentum on the averaged gradient; returns its norm. */
FM_FN double sgd_step(const options *o, float *w, float *vel, const float *avg, size_t d) {
    double gnorm = 0.0;
    float mom = o->dgc ? 0.0f : (float)o->momentum; /* with --dgc the workers applied the momentum */
    size_t i;
    for (i = 0; i < d; i++) {
        gnorm += (double)avg[i] * (double)avg[i];
        vel[i] = mom * vel[i] + avg[i];
        w[i] -= (float)o->lr * vel[i];
    }
    return sqrt(gnorm);
}

/* ------------------------------------------------------------------ top-k messages, momentum correction */

/* What a worker keeps for --scheme topk: its error-feedback residual v, with --dgc its velocity
 * u (Deep Gradient Compression's momentum correction), and room for the indices it sent. */
typedef struct topk_worker {
    float *res, *vel;
    uint32_t *idx;
} topk_worker;

FM_FN void topk_worker_init(topk_worker *t, const options *o, size_t d) {
    t->res = (float *)xcalloc(d, sizeof *t->res);
    t->vel = o->dgc ? (float *)xcalloc(d, sizeof *t->vel) : NULL;
    t->idx = (uint32_t *)xmalloc(d * sizeof *t->idx);
}

FM_FN void topk_worker_free(topk_worker *t) { free(t->res), free(t->vel), free(t->idx); }

/* The elements sent at `step`: --density, raised over the first --sparse-warmup steps in 4
 * stages from 25% down to it, exponentially (DGC: 75%, 93.75%, 98.4%, 99.6% sparsity). */
FM_FN size_t topk_k(const options *o, size_t d, uint64_t step) {
    double dens = o->density;
    size_t k;
    if (step < o->sparse_warmup && dens < 0.25) {
        uint64_t stage = step * 4u / o->sparse_warmup;
        dens = 0.25 * pow(dens / 0.25, (double)stage / 4.0);
    }
    k = (size_t)floor(dens * (double)d + 0.5);
    return k < 1 ? 1 : k > d ? d : k;
}

/* The params of a worker's top-k message: values at --bits (nearest rounding, max-norm scales per
 * BUCKET values: a contraction, as error feedback needs), or float32 at --bits 32. */
FM_FN dq_params topk_params(const options *o, size_t k, uint64_t step, unsigned worker) {
    dq_params p;
    memset(&p, 0, sizeof p);
    p.scheme = DQ_SCHEME_TOPK;
    p.k = k;
    p.bits = o->bits;
    p.seed = o->seed;
    p.step = step;
    p.stream = worker;
    if (o->bits != 32) {
        p.coder = o->coder;
        p.bucket = BUCKET;
        p.norm = DQ_NORM_MAX;
        p.rounding = DQ_ROUND_NEAREST;
    }
    return p;
}

/* The largest top-k message of a run (k is largest at the first warm-up step or at the end). */
FM_FN size_t topk_capacity(const options *o, size_t d) {
    size_t k0 = topk_k(o, d, 0), k1 = topk_k(o, d, o->steps);
    dq_params p = topk_params(o, k0 > k1 ? k0 : k1, 0, 0);
    size_t cap = 0;
    check(dq_encode_capacity(&p, d, &cap), "dq_encode_capacity", 0);
    return cap;
}

/* Worker `worker`'s message at `step` from its gradient g (clipped in place with --clip to
 * clip / sqrt(N): DGC's local clipping): top-k of v + g, or with --dgc of v + u after
 * u = momentum u + g; v keeps what was not sent (the library's error feedback) and, with
 * momentum factor masking, u is cleared where the message sent an element. */
FM_FN size_t topk_send(const options *o, topk_worker *t, float *g, size_t d, unsigned N, uint64_t step,
                       unsigned worker, uint8_t *dst, size_t cap) {
    dq_params p = topk_params(o, topk_k(o, d, step), step, worker);
    const float *x = g;
    size_t i, len = 0, k = 0, slen = 0;
    if (o->clip > 0.0) {
        double s2 = 0.0, limit = o->clip / sqrt((double)N);
        for (i = 0; i < d; i++) s2 += (double)g[i] * (double)g[i];
        if (sqrt(s2) > limit) {
            float scale = (float)(limit / sqrt(s2));
            for (i = 0; i < d; i++) g[i] *= scale;
        }
    }
    if (o->dgc) {
        for (i = 0; i < d; i++) t->vel[i] = (float)o->momentum * t->vel[i] + g[i];
        x = t->vel;
    }
    check(dq_encode(&p, x, d, t->res, dst, cap, &len), "dq_encode", step);
    if (o->dgc && o->masking) { /* the index stream: its length is the u64 at byte 56 (FORMAT 20.1) */
        for (i = 8; i-- > 0;) slen = slen << 8 | dst[56 + i];
        check(dq_index_decode(dst + 64, slen, t->idx, d, &k), "dq_index_decode", step);
        for (i = 0; i < k; i++) t->vel[t->idx[i]] = 0.0f;
    }
    return len;
}

/* The weights as d raw float32 values in host byte order (--save-weights). */
FM_FN void save_weights(const char *path, const float *w, size_t d) {
    FILE *f = fopen(path, "wb");
    if (!f) die("cannot write", path);
    if (fwrite(w, sizeof *w, d, f) != d || fclose(f) != 0) die("short write", path);
}

#endif /* FMNIST_H_INCLUDED */
