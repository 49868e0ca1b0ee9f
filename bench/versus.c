/* bench/versus.c - the throughput benchmark's rows, this version against another version's
 * headers, in one process:
 *
 *   make bench-versus OLD=DIR [ARGS="--n N --rounds R --csv"]
 *
 * DIR holds the other version's dqsgd.h and dqsgd_simd.h (for example `git show
 * v:dqsgd.h > DIR/dqsgd.h`, the same for dqsgd_simd.h). Both sides are the same source
 * (bench/versus_side.c) built against each version's headers and linked into this program, so
 * their calls alternate within one process, one call each per round, the order swapped every
 * round: drift in a shared machine's speed falls on both sides alike. Per row: the best time of
 * each side (as bench/bench.c reports), and the median with the quartiles of the per-round
 * ratios old time / new time (> 1: the new version is faster). An encoder's first messages
 * are compared byte for byte ("same"), the wire format promising they are equal; a decoder
 * decodes the message its own side encoded. Input: N(0,1), as bench/bench.c. --only KERNEL
 * runs the rows of that kernel name only. */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "versus.h"

#define VS_DEFAULT_N ((size_t)1 << 16) /* in cache: where a faster machine would see compute costs */
#define VS_ELEMS ((size_t)1 << 27)     /* elements per side and row when --rounds is not given */

static void vs_die(const char *side, const char *row, const char *what) {
    fprintf(stderr, "versus: %s side, %s: %s\n", side, row, what);
    exit(1);
}

static int vs_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Every buffer of both sides starts a page (VS_ALIGN): with malloc's placement the two sides'
 * timings differed by where their buffers fell (a decode from memory by 12%). */
static float *vs_floats(size_t n) {
    void *p = NULL;
    if (posix_memalign(&p, VS_ALIGN, n * sizeof(float)) != 0) vs_die("both", "setup", "out of memory");
    return (float *)p;
}

static void vs_buf_init(vs_buf *b, const float *x, size_t n) {
    memset(b, 0, sizeof *b);
    b->n = n;
    b->x = x;
    b->res = vs_floats(n);
    b->acc = vs_floats(n);
}

/* One call of side s on row r, timed. */
static double vs_time(const vs_side *s, const char *who, unsigned r, vs_buf *b) {
    double t0 = bench_now(), t1;
    if (!s->run(r, b)) vs_die(who, s->name(r), s->error());
    t1 = bench_now();
    return t1 - t0;
}

int main(int argc, char **argv) {
    size_t n = VS_DEFAULT_N;
    unsigned rounds = 0, r, k, rows = vs_new.nrows();
    int csv = 0, header = 1, i;
    const char *only = NULL;
    float *x;
    double *ratio;
    vs_buf bo, bn;
    for (i = 1; i < argc; i++) {
        const char *v;
        if (!strcmp(argv[i], "--csv")) {
            csv = 1;
        } else if (!strcmp(argv[i], "--no-header")) {
            header = 0;
        } else if ((v = bench_opt_value("versus", argc, argv, &i, "--n")) != NULL) {
            n = (size_t)bench_parse_count("versus", "--n", v);
        } else if ((v = bench_opt_value("versus", argc, argv, &i, "--only")) != NULL) {
            only = v;
        } else if ((v = bench_opt_value("versus", argc, argv, &i, "--rounds")) != NULL) {
            rounds = (unsigned)bench_parse_count("versus", "--rounds", v);
        } else {
            fprintf(stderr, "usage: versus [--csv] [--no-header] [--n N] [--rounds R] [--only KERNEL]\n");
            return 2;
        }
    }
    if (vs_old.nrows() != rows) vs_die("old", "rows", "the two sides list different rows");
    if (!rounds) rounds = n >= VS_ELEMS / 15u ? 15u : (unsigned)(VS_ELEMS / n);
    x = vs_floats(n);
    ratio = (double *)malloc(rounds * sizeof *ratio);
    if (!ratio) vs_die("both", "setup", "out of memory");
    bench_fill_gaussian(x, n, 0x5EED0001u);
    vs_buf_init(&bo, x, n);
    vs_buf_init(&bn, x, n);
    if (header) {
        if (csv)
            printf("kernel,isa,bits,n,rounds,old_gbps,new_gbps,best_ratio,median_ratio,q1_ratio,q3_ratio,same\n");
        else
            printf("%-20s %-7s %4s %9s %6s %9s %9s %6s %6s %13s %4s\n", "kernel", "isa", "bits", "n", "rounds",
                   "old GB/s", "new GB/s", "best", "median", "quartiles", "same");
    }
    for (r = 0; r < rows; r++) {
        double bo_t = 1e30, bn_t = 1e30, to, tn;
        const char *same = "-";
        if (strcmp(vs_old.name(r), vs_new.name(r)) || vs_old.bits(r) != vs_new.bits(r))
            vs_die("old", vs_new.name(r), "the two sides list different rows");
        if (only && strcmp(only, vs_new.name(r)) != 0) continue;
        if (!vs_old.setup(r, &bo)) vs_die("old", vs_old.name(r), vs_old.error());
        if (!vs_new.setup(r, &bn)) vs_die("new", vs_new.name(r), vs_new.error());
        (void)vs_time(&vs_old, "old", r, &bo); /* warm-up; an encoder's first messages compared */
        (void)vs_time(&vs_new, "new", r, &bn);
        if (vs_new.is_encoder(r)) same = bo.len == bn.len && !memcmp(bo.msg, bn.msg, bn.len) ? "yes" : "NO";
        for (k = 0; k < rounds; k++) {
            if (k & 1u) {
                tn = vs_time(&vs_new, "new", r, &bn);
                to = vs_time(&vs_old, "old", r, &bo);
            } else {
                to = vs_time(&vs_old, "old", r, &bo);
                tn = vs_time(&vs_new, "new", r, &bn);
            }
            if (to < bo_t) bo_t = to;
            if (tn < bn_t) bn_t = tn;
            ratio[k] = to / tn;
        }
        qsort(ratio, rounds, sizeof *ratio, vs_cmp);
        printf(csv ? "%s,%s,%u,%zu,%u,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%s\n"
                   : "%-20s %-7s %4u %9zu %6u %9.3f %9.3f %6.3f %6.3f  %5.3f-%5.3f %4s\n",
               vs_new.name(r), vs_new.backend(), vs_new.bits(r), n, rounds, (double)n * 4.0 / bo_t / 1e9,
               (double)n * 4.0 / bn_t / 1e9, bo_t / bn_t, ratio[rounds / 2u], ratio[rounds / 4u], ratio[(3u * rounds) / 4u],
               same);
        fflush(stdout);
    }
    free(bo.res), free(bo.acc), free(bo.msg), free(bn.res), free(bn.acc), free(bn.msg), free(x), free(ratio);
    return 0;
}
