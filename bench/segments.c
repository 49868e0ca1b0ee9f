/* bench/segments.c - what a segmented message costs against one message of the same width
 * (`make bench-segments`, ARGS="--n N --reps R").
 *
 * Input: N(0, 1) from the seeded stream of bench_util.h, QSGD, L2 norm per bucket of 512, 4
 * bits. The vector is cut into m segments of equal size (m = 1 is dq_encode_segments with one
 * segment; the baseline row is dq_encode / dq_decode_add of the whole vector), every segment
 * at 4 bits, with the fixed layout and with the default coder. Timing: minimum of R calls,
 * segmented and baseline alternated; ratio = baseline time / segmented time (1 = no cost).
 * Sizes: bytes of the segmented message against the baseline's. Both n = 2^24 and 2^16 (in
 * cache). */
#define _POSIX_C_SOURCE 199309L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dqsgd.h"
#include "bench_util.h"

static dq_params params(unsigned coder) {
    dq_params p;
    memset(&p, 0, sizeof p);
    p.bits = 4;
    p.bucket = 512;
    p.coder = coder;
    p.seed = 1;
    return p;
}

static void die(const char *what, dq_status st) {
    fprintf(stderr, "bench_segments: %s: %s\n", what, dq_strerror(st));
    exit(1);
}

int main(int argc, char **argv) {
    static const size_t ms[] = {1, 4, 64, 1024};
    static const unsigned coders[] = {DQ_CODER_FIXED_ONLY, DQ_CODER_DEFAULT};
    size_t n = (size_t)1 << 24, reps = 5, sizes[2], si, ci, mi, r, cap, len = 0, blen = 0;
    int a;
    float *x, *acc;
    uint8_t *msg, *base;
    dq_segment *seg;
    for (a = 1; a < argc; a++) {
        const char *v;
        if ((v = bench_opt_value("bench_segments", argc, argv, &a, "--n")) != NULL)
            n = (size_t)bench_parse_count("bench_segments", "--n", v);
        else if ((v = bench_opt_value("bench_segments", argc, argv, &a, "--reps")) != NULL)
            reps = (size_t)bench_parse_count("bench_segments", "--reps", v);
        else {
            fprintf(stderr, "usage: bench_segments [--n N] [--reps R]\n");
            return 2;
        }
    }
    if (n < 4096u) n = 4096u;
    sizes[0] = 65536u < n ? 65536u : n;
    sizes[1] = n;
    cap = dq_encode_bound_coded(n, 16) + 64u + 32u * 1024u;
    x = (float *)malloc(n * sizeof *x);
    acc = (float *)calloc(n, sizeof *acc);
    msg = (uint8_t *)malloc(cap);
    base = (uint8_t *)malloc(cap);
    seg = (dq_segment *)calloc(1024, sizeof *seg);
    if (!x || !acc || !msg || !base || !seg) return 1;
    bench_fill_gaussian(x, n, 1u);
    printf("dqsgd %s (%s), QSGD 4 bits, L2 bucket 512, N(0,1); minimum of %lu calls; ratio = one message's\n"
           "time / the segmented message's (1 = free), size = segmented bytes / one message's\n",
           DQSGD_VERSION_STRING, dq_simd_backend(), (unsigned long)reps);
    printf("%-10s %9s %5s %-7s %12s %12s %8s %12s %8s\n", "coder", "n", "m", "", "enc GB/s", "dec-add GB/s", "",
           "size", "");
    for (si = 0; si < 2; si++) {
        size_t nn = sizes[si];
        for (ci = 0; ci < 2; ci++) {
            dq_params p = params(coders[ci]);
            for (mi = 0; mi < sizeof ms / sizeof ms[0]; mi++) {
                size_t m = ms[mi], j, scap = 0;
                double te = 1e30, tbe = 1e30, td = 1e30, tbd = 1e30;
                dq_status st;
                for (j = 0; j < m; j++) {
                    seg[j].count = nn / m + (j < nn % m ? 1u : 0u);
                    seg[j].bits = 4;
                }
                if ((st = dq_segments_capacity(&p, seg, m, &scap)) != DQ_OK) die("capacity", st);
                if (scap > cap) die("capacity above the buffer", DQ_ERR_DST_TOO_SMALL);
                for (r = 0; r < reps; r++) {
                    double t0 = bench_now(), t1, t2, t3, t4;
                    if ((st = dq_encode_segments(&p, x, seg, m, NULL, msg, cap, &len)) != DQ_OK) die("encode_segments", st);
                    t1 = bench_now();
                    if ((st = dq_encode(&p, x, nn, NULL, base, cap, &blen)) != DQ_OK) die("encode", st);
                    t2 = bench_now();
                    if ((st = dq_decode_add(msg, len, 0.5f, acc, nn)) != DQ_OK) die("decode_add segments", st);
                    t3 = bench_now();
                    if ((st = dq_decode_add(base, blen, 0.5f, acc, nn)) != DQ_OK) die("decode_add", st);
                    t4 = bench_now();
                    if (t1 - t0 < te) te = t1 - t0;
                    if (t2 - t1 < tbe) tbe = t2 - t1;
                    if (t3 - t2 < td) td = t3 - t2;
                    if (t4 - t3 < tbd) tbd = t4 - t3;
                }
                printf("%-10s %9lu %5lu %-7s %12.2f %12.2f %8s %12lu %8s\n", ci ? "default" : "fixed", (unsigned long)nn,
                       (unsigned long)m, "", 4e-9 * (double)nn / te, 4e-9 * (double)nn / td, "", (unsigned long)len, "");
                printf("%-10s %9s %5s %-7s %12.3f %12.3f %8s %12.4f %8s\n", "", "", "", "ratio", tbe / te, tbd / td, "",
                       (double)len / (double)blen, "");
            }
        }
    }
    free(x), free(acc), free(msg), free(base), free(seg);
    return 0;
}
