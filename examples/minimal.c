/* minimal.c - one worker compresses its gradient, one receiver adds it into a sum.
 * QSGD, 4 bits per element, stochastic rounding, error feedback.
 * Build: make examples, or from the repository root: cc -I. examples/minimal.c -lm */
#include <math.h>
#include <stdio.h>

#include "dqsgd.h"

#define N 1000 /* gradient length */

static float grad[N];                       /* this step's gradient (sender) */
static float residual[N];                   /* error-feedback memory: zero at start, kept across steps */
static float acc[N];                        /* aggregated gradient (receiver) */
static uint8_t msg[DQ_ENCODE_BOUND(N, 4)];  /* worst-case message size, known at compile time */

/* Print the library's description of a failed call; returns nonzero on failure. */
static int failed(dq_status st, const char *call) {
    if (st != DQ_OK) fprintf(stderr, "%s: %s\n", call, dq_strerror(st));
    return st != DQ_OK;
}

int main(void) {
    dq_params p = {0}; /* zero means default: QSGD, L2 scale per 512-element bucket */
    dq_message m;
    size_t i, len = 0;
    double err = 0.0, ref = 0.0;

    for (i = 0; i < N; i++) grad[i] = (float)(0.01 * sin(0.05 * (double)i) * cos(0.003 * (double)i));

    /* Sender. The dither is keyed by (seed, step, stream): reuse the run's seed, pass the
     * training step and the worker's rank so every message draws fresh, independent noise. */
    p.bits = 4;                       /* sign + 7 magnitude levels */
    p.rounding = DQ_ROUND_STOCHASTIC; /* unbiased, but one L2-scaled message is noisy; */
                                      /* p.norm = DQ_NORM_MAX lowers the error about tenfold */
    p.seed = 2024;
    p.step = 0;
    p.stream = 0;
    /* With a residual, dq_encode sends grad + residual and keeps what the message lost. */
    if (failed(dq_encode(&p, grad, N, residual, msg, sizeof msg, &len), "dq_encode")) return 1;

    /* Receiver: open the message once (header, size, checksum); its count sizes the buffers. */
    if (failed(dq_message_open(msg, len, &m), "dq_message_open")) return 1;
    if (m.h.count != N) {
        fprintf(stderr, "unexpected element count %zu\n", m.h.count);
        return 1;
    }
    if (failed(dq_message_decode_add(&m, 1.0f, acc, m.h.count), "dq_message_decode_add")) return 1;

    for (i = 0; i < N; i++) { /* how far the decoded gradient is from the original */
        double d = (double)acc[i] - (double)grad[i];
        err += d * d;
        ref += (double)grad[i] * (double)grad[i];
    }
    printf("backend:        %s\n", dq_simd_backend());
    printf("message:        %zu bytes (raw float32: %zu bytes)\n", len, sizeof grad);
    printf("compression:    %.2fx\n", (double)sizeof grad / (double)len);
    printf("relative error: %.4f (L2)\n", sqrt(err / ref));
    return 0;
}
