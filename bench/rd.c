/* bench/rd.c - the measured rate-distortion model: its cost against an encode, and its
 * predictions against what the encoder does (`make bench-rd`, ARGS="--n N --reps R").
 *
 * Input: N(0, 1) from the seeded stream of bench_util.h (n = 2^24 by default, and 2^16 in
 * cache), QSGD, L2 norm per bucket of 512. Timing rows: dq_rd_measure() (every width 2..16)
 * and one dq_encode() with the default coder at 4 bits, minimum of R calls each, alternated;
 * the ratio is rd-measure time over encode time. Prediction rows (the large n, one encode per
 * width, dither seed 1): bits per element predicted and written by the default coder, and the
 * relative squared error predicted and measured (||Q(x) - x||^2 / ||x||^2). */
#define _POSIX_C_SOURCE 199309L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dqsgd.h"
#include "bench_util.h"

static dq_params params(unsigned bits) {
    dq_params p;
    memset(&p, 0, sizeof p);
    p.scheme = DQ_SCHEME_QSGD;
    p.bits = bits;
    p.bucket = 512;
    p.norm = DQ_NORM_L2;
    p.seed = 1;
    return p;
}

int main(int argc, char **argv) {
    size_t n = (size_t)1 << 24, reps = 5, sizes[2], si, r, i, cap, len = 0;
    int a;
    float *x, *d;
    uint8_t *m;
    dq_rd rd;
    unsigned b;
    for (a = 1; a < argc; a++) {
        const char *v;
        if ((v = bench_opt_value("bench_rd", argc, argv, &a, "--n")) != NULL)
            n = (size_t)bench_parse_count("bench_rd", "--n", v);
        else if ((v = bench_opt_value("bench_rd", argc, argv, &a, "--reps")) != NULL)
            reps = (size_t)bench_parse_count("bench_rd", "--reps", v);
        else {
            fprintf(stderr, "usage: bench_rd [--n N] [--reps R]\n");
            return 2;
        }
    }
    sizes[0] = n < 65536u ? n : 65536u;
    sizes[1] = n;
    cap = dq_encode_bound_coded(n, 16) + 64u;
    x = (float *)malloc(n * sizeof *x);
    d = (float *)malloc(n * sizeof *d);
    m = (uint8_t *)malloc(cap);
    if (!x || !d || !m) return 1;
    bench_fill_gaussian(x, n, 1u);
    printf("dqsgd %s (%s), QSGD L2 bucket 512, N(0,1); minimum of %lu calls\n", DQSGD_VERSION_STRING,
           dq_simd_backend(), (unsigned long)reps);
    printf("%-22s %10s %10s %8s\n", "kernel", "n", "ms", "x encode");
    for (si = 0; si < 2; si++) {
        size_t k = sizes[si];
        double t_rd = 1e9, t_enc = 1e9;
        dq_params p = params(4);
        for (r = 0; r < reps; r++) {
            double t0 = bench_now(), t1, t2;
            if (dq_rd_measure(&p, x, NULL, k, &rd) != DQ_OK) return 1;
            t1 = bench_now();
            if (dq_encode(&p, x, k, NULL, m, cap, &len) != DQ_OK) return 1;
            t2 = bench_now();
            if (t1 - t0 < t_rd) t_rd = t1 - t0;
            if (t2 - t1 < t_enc) t_enc = t2 - t1;
        }
        printf("%-22s %10lu %10.3f %8s\n", "encode (default, 4b)", (unsigned long)k, 1e3 * t_enc, "1");
        printf("%-22s %10lu %10.3f %8.2f\n", "rd-measure (b 2..16)", (unsigned long)k, 1e3 * t_rd, t_rd / t_enc);
    }
    {
        dq_params p = params(4);
        if (dq_rd_measure(&p, x, NULL, n, &rd) != DQ_OK) return 1;
    }
    printf("\n%4s %12s %12s %9s %12s %12s %9s\n", "bits", "bpe pred", "bpe sent", "diff", "relerr pred", "relerr meas",
           "diff");
    for (b = 2; b <= 8; b++) {
        dq_params p = params(b);
        double e = 0.0;
        if (dq_encode(&p, x, n, NULL, m, cap, &len) != DQ_OK || dq_decode(m, len, d, n) != DQ_OK) return 1;
        for (i = 0; i < n; i++) e += ((double)d[i] - (double)x[i]) * ((double)d[i] - (double)x[i]);
        printf("%4u %12.4f %12.4f %+8.2f%% %12.5g %12.5g %+8.2f%%\n", b, rd.bits[b] / (double)n,
               8.0 * (double)len / (double)n, 100.0 * (rd.bits[b] / (8.0 * (double)len) - 1.0), rd.err[b] / rd.norm2,
               e / rd.norm2, 100.0 * (rd.err[b] / e - 1.0));
    }
    free(x);
    free(d);
    free(m);
    return 0;
}
