/* fuzz_shared.c - the shared-scale integer path (dq_shared_*) on untrusted bytes.
 * 1. The input as summed levels: byte 0 picks bits and the accumulator width, byte 1 the
 *    bucket; the rest is one exponent per bucket followed by the sums. dq_shared_decode must
 *    return DQ_OK or DQ_ERR_CORRUPT, and on DQ_OK every output is finite and equals
 *    weight * sum * 2^e computed in double (one rounding).
 * 2. The input as a vector: the floats of the input (bits and bucket from byte 0) get their
 *    exponents, are encoded with a residual (stochastic and nearest) and decoded. A NaN or Inf
 *    gives DQ_ERR_NONFINITE, a value beyond the exponent range DQ_ERR_OVERFLOW; otherwise the
 *    residual is exactly v - decoded and at most one unit (half a unit for nearest).
 * Build: make fuzz (libFuzzer) or the replay driver in make test. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dqsgd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static dq_params params_of(uint8_t b0, uint8_t b1) {
    dq_params p;
    memset(&p, 0, sizeof p);
    p.bits = 2u + b0 % 15u;
    p.bucket = 8u * (1u + b1 % 16u);
    p.seed = b1;
    return p;
}

static void fuzz_sums(const uint8_t *data, size_t size) {
    static const unsigned widths[3] = {8, 16, 32};
    dq_params p;
    unsigned w;
    size_t esz, n, nb, i;
    int8_t *ex;
    float *out;
    dq_status st;
    if (size < 3) return;
    p = params_of(data[0], data[1]);
    w = widths[(data[0] >> 4) % 3u];
    esz = w / 8u;
    /* n elements need nb exponents and n sums: take the largest n that fits */
    n = (size - 2) / (esz + 1);
    while (n && (n + p.bucket - 1) / p.bucket + n * esz > size - 2) n--;
    if (!n) return;
    nb = dq_shared_buckets(&p, n);
    if (nb != (n + p.bucket - 1) / p.bucket) abort();
    ex = (int8_t *)malloc(nb);
    out = (float *)malloc(n * sizeof *out);
    if (!ex || !out) abort();
    memcpy(ex, data + 2, nb);
    {
        uint8_t *sums = (uint8_t *)malloc(n * esz); /* an exact-size, aligned copy */
        if (!sums) abort();
        memcpy(sums, data + 2 + nb, n * esz);
        st = dq_shared_decode(&p, sums, w, n, ex, 0.25f, out);
        if (st == DQ_OK) {
            for (i = 0; i < n; i++) {
                int32_t s = w == 8 ? ((int8_t *)sums)[i] : w == 16 ? ((int16_t *)sums)[i] : ((int32_t *)sums)[i];
                double want = (double)s * ldexp(1.0, ex[i / p.bucket]) * 0.25;
                if (!isfinite(out[i]) || out[i] != (float)want) abort();
            }
        } else if (st != DQ_ERR_CORRUPT) {
            abort();
        }
        free(sums);
    }
    free(ex);
    free(out);
}

static void fuzz_vector(const uint8_t *data, size_t size) {
    dq_params p;
    size_t n, nb, i;
    float *x, *r, *r0, *dec;
    int32_t *lv;
    int8_t *ex;
    unsigned pass;
    dq_status st;
    if (size < 6) return;
    p = params_of(data[0], data[1]);
    n = (size - 2) / 4;
    nb = dq_shared_buckets(&p, n);
    x = (float *)malloc(n * sizeof *x);
    r = (float *)malloc(n * sizeof *r);
    r0 = (float *)malloc(n * sizeof *r0);
    dec = (float *)malloc(n * sizeof *dec);
    lv = (int32_t *)malloc(n * sizeof *lv);
    ex = (int8_t *)malloc(nb);
    if (!x || !r || !r0 || !dec || !lv || !ex) abort();
    memcpy(x, data + 2, n * sizeof *x);
    for (pass = 0; pass < 2; pass++) {
        p.rounding = pass ? DQ_ROUND_NEAREST : DQ_ROUND_STOCHASTIC;
        for (i = 0; i < n; i++) r[i] = r0[i] = 0.0f;
        st = dq_shared_exponents(&p, x, n, r, ex);
        if (st == DQ_ERR_NONFINITE || st == DQ_ERR_OVERFLOW) {
            if (dq_shared_encode(&p, x, n, r, ex, 32, lv) == DQ_OK) abort(); /* the same checks */
            break;
        }
        if (st != DQ_OK) abort();
        if (dq_shared_encode(&p, x, n, r, ex, 32, lv) != DQ_OK) abort();
        if (dq_shared_decode(&p, lv, 32, n, ex, 1.0f, dec) != DQ_OK) abort();
        for (i = 0; i < n; i++) {
            double unit = ldexp(1.0, ex[i / p.bucket]);
            if (r[i] != x[i] + r0[i] - dec[i]) abort();
            if (fabs((double)r[i]) > (pass ? 0.5 * unit : unit)) abort();
        }
    }
    free(x), free(r), free(r0), free(dec), free(lv), free(ex);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_sums(data, size);
    fuzz_vector(data, size);
    return 0;
}
