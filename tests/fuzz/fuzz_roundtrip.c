/* fuzz_roundtrip.c - fuzzer-chosen params and floats through encode and decode. Checks:
 * the status is ok exactly when the input is valid, the size equals dq_encoded_size and stays
 * within the bound, encoding twice gives the same bytes, the header reads back, and every
 * decoded element lies within one step of its input (stochastic) or half a step (nearest),
 * with a few ulps for float rounding (see tests/test_quant.c for the derivation). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dqsgd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    dq_params p;
    size_t n, i, cap, len = 0, len2 = 0, want = 0;
    float *x, *y;
    uint8_t *m, *m2;
    dq_header h;
    dq_status st;
    int finite = 1;
    if (size < 8) return 0;
    memset(&p, 0, sizeof p);
    p.bits = 1u + data[0] % 16u;
    p.bucket = (data[1] & 1u) ? DQ_BUCKET_WHOLE : 8u * (1u + data[1] % 64u);
    p.rounding = (data[2] & 1u) ? DQ_ROUND_NEAREST : DQ_ROUND_STOCHASTIC;
    p.norm = (data[2] & 2u) ? DQ_NORM_MAX : DQ_NORM_L2;
    p.seed = data[3];
    p.step = data[4];
    p.stream = data[5];
    data += 8;
    size -= 8;
    n = size / 4u;
    if (n == 0) return 0;
    x = (float *)malloc(n * sizeof(float));
    y = (float *)malloc(n * sizeof(float));
    cap = dq_encode_bound(n, p.bits);
    m = (uint8_t *)malloc(cap);
    m2 = (uint8_t *)malloc(cap);
    if (!x || !y || !m || !m2 || cap == 0) abort();
    memcpy(x, data, n * sizeof(float));
    for (i = 0; i < n; i++)
        if (!isfinite(x[i])) finite = 0;
    st = dq_encode(&p, x, n, NULL, m, cap, &len);
    /* buckets are checked in order: a non-finite input fails, with DQ_ERR_NONFINITE or with the
     * DQ_ERR_OVERFLOW of an earlier bucket whose scale exceeds 2^126 */
    if (!finite && st != DQ_ERR_NONFINITE && st != DQ_ERR_OVERFLOW) abort();
    if (st == DQ_OK) {
        float *scales = (float *)malloc(n * sizeof(float));
        size_t nb, bk;
        if (dq_encoded_size(&p, n, &want) != DQ_OK || want != len || len > cap) abort();
        if (dq_encode(&p, x, n, NULL, m2, cap, &len2) != DQ_OK || len2 != len || memcmp(m, m2, len) != 0) abort();
        if (dq_header_read(m, len, &h) != DQ_OK || h.count != n || h.msg_size != len) abort();
        if (dq_decode(m, len, y, n) != DQ_OK) abort();
        bk = h.bucket ? h.bucket : n;
        nb = (n - 1u) / bk + 1u;
        if (!scales) abort();
        for (i = 0; i < nb; i++) memcpy(&scales[i], m + DQ_HEADER_SIZE + 4u * i, 4);
        for (i = 0; i < n; i++) {
            double scale = (double)scales[i / bk], s = p.bits == 1 ? 1.0 : (double)((1u << (p.bits - 1)) - 1u);
            double step = p.bits == 1 ? 2.0 * scale : scale / s;
            double tol = (p.rounding == DQ_ROUND_NEAREST && p.bits > 1 ? 0.5 : 1.0) * step + 8.0 * 5.96e-8 * scale;
            if (scale == 0.0) continue; /* flushed bucket: everything decodes to 0 */
            if (p.bits == 1 && p.rounding == DQ_ROUND_NEAREST) continue; /* scaled sign: biased by design */
            if (fabs((double)y[i] - (double)x[i]) > tol) abort();
        }
        free(scales);
    } else if (st != DQ_ERR_NONFINITE && st != DQ_ERR_OVERFLOW) {
        abort();
    }
    free(x);
    free(y);
    free(m);
    free(m2);
    return 0;
}
