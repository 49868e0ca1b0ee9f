/* python/dqsgd_capi.c - one exported copy of dqsgd.h for the Python binding (python/dqsgd/__init__.py).
 *
 * Built by `make build/libdqsgd.so` (the Makefile's strict flags, -O2 -fPIC -shared
 * -march=native). Every public dq_* function is exported; the dqpy_* helpers below let the
 * ctypes mirror check its struct layouts against the compiler's at load time. */
#define DQ_API __attribute__((visibility("default")))
#include "dqsgd.h"

#define DQPY_EXPORT __attribute__((visibility("default")))

/* Structs the binding mirrors (dqpy_layout's `which`). */
#define DQPY_PARAMS 0
#define DQPY_HEADER 1
#define DQPY_SCHED_PARAMS 2
#define DQPY_SCHED 3
#define DQPY_JOB 4

DQPY_EXPORT size_t dqpy_sizeof_params(void);
DQPY_EXPORT size_t dqpy_sizeof_header(void);
DQPY_EXPORT size_t dqpy_sizeof_message(void);
DQPY_EXPORT size_t dqpy_sizeof_sched_params(void);
DQPY_EXPORT size_t dqpy_sizeof_sched(void);
DQPY_EXPORT size_t dqpy_sizeof_job(void);
DQPY_EXPORT size_t dqpy_layout(int which, size_t *out, size_t cap);

DQPY_EXPORT size_t dqpy_sizeof_params(void) { return sizeof(dq_params); }
DQPY_EXPORT size_t dqpy_sizeof_header(void) { return sizeof(dq_header); }
/* dq_message is opaque to the binding but for its first member, the header. */
DQPY_EXPORT size_t dqpy_sizeof_message(void) { return sizeof(dq_message); }
DQPY_EXPORT size_t dqpy_sizeof_sched_params(void) { return sizeof(dq_sched_params); }
DQPY_EXPORT size_t dqpy_sizeof_sched(void) { return sizeof(dq_sched); }
/* dq_job is opaque to the binding but for its first member, parts. */
DQPY_EXPORT size_t dqpy_sizeof_job(void) { return sizeof(dq_job); }

/* The offsets of a struct's fields in declaration order (those the binding names), then its
 * size: writes min(count, cap) values into out and returns the count (0 for an unknown
 * `which`). The binding compares them with its ctypes.Structure. */
DQPY_EXPORT size_t dqpy_layout(int which, size_t *out, size_t cap) {
    size_t v[32], n = 0, i;
#define DQPY_OFF(T, f) v[n++] = offsetof(T, f)
    switch (which) {
        case DQPY_PARAMS:
            DQPY_OFF(dq_params, bits); DQPY_OFF(dq_params, bucket); DQPY_OFF(dq_params, scheme);
            DQPY_OFF(dq_params, rounding); DQPY_OFF(dq_params, norm); DQPY_OFF(dq_params, seed);
            DQPY_OFF(dq_params, step); DQPY_OFF(dq_params, stream); DQPY_OFF(dq_params, checksum);
            DQPY_OFF(dq_params, coder); DQPY_OFF(dq_params, alpha); DQPY_OFF(dq_params, levels);
            DQPY_OFF(dq_params, k); DQPY_OFF(dq_params, threshold); DQPY_OFF(dq_params, unbiased);
            DQPY_OFF(dq_params, index_coder);
            v[n++] = sizeof(dq_params);
            break;
        case DQPY_HEADER:
            DQPY_OFF(dq_header, version); DQPY_OFF(dq_header, header_size); DQPY_OFF(dq_header, scheme);
            DQPY_OFF(dq_header, bits); DQPY_OFF(dq_header, coder); DQPY_OFF(dq_header, flags);
            DQPY_OFF(dq_header, norm); DQPY_OFF(dq_header, bucket); DQPY_OFF(dq_header, seed);
            DQPY_OFF(dq_header, step); DQPY_OFF(dq_header, stream); DQPY_OFF(dq_header, count);
            DQPY_OFF(dq_header, msg_size); DQPY_OFF(dq_header, payload_size); DQPY_OFF(dq_header, nnz);
            DQPY_OFF(dq_header, segments);
            v[n++] = sizeof(dq_header);
            break;
        case DQPY_SCHED_PARAMS:
            DQPY_OFF(dq_sched_params, mode); DQPY_OFF(dq_sched_params, steps); DQPY_OFF(dq_sched_params, dim);
            DQPY_OFF(dq_sched_params, bucket); DQPY_OFF(dq_sched_params, alpha);
            DQPY_OFF(dq_sched_params, bits_min); DQPY_OFF(dq_sched_params, bits_max);
            DQPY_OFF(dq_sched_params, period); DQPY_OFF(dq_sched_params, window);
            DQPY_OFF(dq_sched_params, norm_prior); DQPY_OFF(dq_sched_params, scale);
            DQPY_OFF(dq_sched_params, target_error); DQPY_OFF(dq_sched_params, budget_bits);
            DQPY_OFF(dq_sched_params, lipschitz); DQPY_OFF(dq_sched_params, lr);
            DQPY_OFF(dq_sched_params, workers); DQPY_OFF(dq_sched_params, warm_steps);
            DQPY_OFF(dq_sched_params, warm_bits);
            v[n++] = sizeof(dq_sched_params);
            break;
        case DQPY_SCHED: /* the binding reads these fields; the rest is opaque */
            DQPY_OFF(dq_sched, p); DQPY_OFF(dq_sched, step); DQPY_OFF(dq_sched, bits);
            DQPY_OFF(dq_sched, c); DQPY_OFF(dq_sched, spent_bits);
            v[n++] = sizeof(dq_sched);
            break;
        case DQPY_JOB: /* the binding reads parts; the rest is opaque */
            DQPY_OFF(dq_job, parts);
            v[n++] = sizeof(dq_job);
            break;
        default:
            return 0;
    }
#undef DQPY_OFF
    for (i = 0; i < n && i < cap; i++) out[i] = v[i];
    return n;
}
