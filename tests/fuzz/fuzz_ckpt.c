/* fuzz_ckpt.c - untrusted bytes into the checkpoint loaders (residual and scheduler state).
 * Must never crash or read out of bounds; a refused load must leave the destination untouched;
 * an accepted one must save back to the same bytes (the format has one encoding per state), or,
 * for a 0.8 scheduler checkpoint (a shorter body, no warm start), to a checkpoint that loads
 * back to the same state.
 * Build: make fuzz (libFuzzer) or the replay driver in make test. */
#include <stdlib.h>
#include <string.h>

#include "dqsgd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    size_t n = size >= 20 ? (size - 20) / 4 : 1, i, len = 0;
    float *r = (float *)malloc((n ? n : 1) * sizeof(float));
    uint8_t *back = (uint8_t *)malloc(size + DQ_SCHED_SAVE_SIZE);
    dq_sched s, t;
    if (!r || !back) abort();
    for (i = 0; i < n; i++) r[i] = 1.5f;
    if (dq_residual_load(data, size, r, n) == DQ_OK) {
        if (dq_residual_save(r, n, back, size, &len) != DQ_OK || memcmp(back, data, len) != 0) abort();
    } else {
        for (i = 0; i < n; i++)
            if (r[i] != 1.5f) abort();
    }
    memset(&s, 0x5A, sizeof s);
    t = s;
    if (dq_sched_load(data, size, &s) == DQ_OK) {
        unsigned bits = 0;
        if (dq_sched_save(&s, back, DQ_SCHED_SAVE_SIZE, &len) != DQ_OK) abort();
        if (size >= len && memcmp(back, data, 8) == 0 && memcmp(back + 8, data + 8, 8) == 0) {
            if (memcmp(back, data, len) != 0) abort(); /* the current layout: the same bytes */
        } else { /* 0.8's layout: saved in today's, it loads and saves back to the same bytes */
            uint8_t again[DQ_SCHED_SAVE_SIZE];
            size_t len2 = 0;
            if (dq_sched_load(back, len, &t) != DQ_OK || dq_sched_save(&t, again, sizeof again, &len2) != DQ_OK ||
                len2 != len || memcmp(again, back, len) != 0)
                abort();
        }
        if (s.step < s.p.steps) (void)dq_sched_next(&s, &bits); /* a loaded state is usable */
    } else if (memcmp(&s, &t, sizeof s) != 0) {
        abort();
    }
    free(r);
    free(back);
    return 0;
}
