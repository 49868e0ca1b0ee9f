/* python/dqsgd_capi.c - one exported copy of dqsgd.h for the Python binding (python/dqsgd/__init__.py).
 *
 * Built by setup.py once per kernel level (x86-64: scalar, sse2, avx2, avx512; the loader
 * picks the best this CPU runs, with dqpy_cpu_levels below) and by `make build/libdqsgd.so`
 * (-march=native, for the tests in the repository). Every public dq_* function is exported;
 * the dqpy_* helpers let the ctypes mirror check its struct layouts against the compiler's at
 * load time. */
#define DQ_API __attribute__((visibility("default")))
#include "dqsgd.h"

#define DQPY_EXPORT __attribute__((visibility("default")))

/* setup.py names the kernel level each library must have (DQPY_EXPECT_SIMD, a DQ_SIMD_*
 * value) or that it needs SIMDe (DQPY_REQUIRE_SIMDE): without SIMDe's headers dqsgd.h falls back
 * to the scalar kernels, which would ship under a SIMD level's name. */
#if defined(DQPY_EXPECT_SIMD) || defined(DQPY_REQUIRE_SIMDE)
#ifndef DQSGD_SIMD_H_INCLUDED
#error "SIMDe headers not found (Debian: apt-get install libsimde-dev); the SIMD kernels need them"
#endif
#if defined(DQPY_EXPECT_SIMD) && DQ_SIMD != DQPY_EXPECT_SIMD
#error "the compiler flags did not select the kernel level setup.py asked for"
#endif
#endif

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
DQPY_EXPORT unsigned dqpy_cpu_levels(void);

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

/* The kernel levels this CPU and its operating system run, as bits (the binding's CPU_LEVELS),
 * for the loader to pick among the libraries setup.py built: sse2 is x86-64's baseline, avx2
 * is built for x86-64-v3 and avx512 for x86-64-v4 (the psABI levels: their instructions, and
 * XCR0 saying the OS saves the YMM, and for v4 the ZMM and mask, registers). */
#define DQPY_CPU_SCALAR 1u
#define DQPY_CPU_SSE2 2u
#define DQPY_CPU_AVX2 4u
#define DQPY_CPU_AVX512 8u
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
/* CPUID.1:ECX: SSE3, SSSE3, SSE4.1, SSE4.2, POPCNT, CMPXCHG16B (v2); FMA, MOVBE, OSXSAVE, AVX, F16C (v3) */
#define DQPY_L1C_V2 ((1u << 0) | (1u << 9) | (1u << 19) | (1u << 20) | (1u << 23) | (1u << 13))
#define DQPY_L1C_V3 ((1u << 12) | (1u << 22) | (1u << 27) | (1u << 28) | (1u << 29))
/* CPUID.7.0:EBX: BMI1, AVX2, BMI2 (v3); AVX512F, DQ, CD, BW, VL (v4) */
#define DQPY_L7B_V3 ((1u << 3) | (1u << 5) | (1u << 8))
#define DQPY_L7B_V4 ((1u << 16) | (1u << 17) | (1u << 28) | (1u << 30) | (1u << 31))
/* CPUID.80000001h:ECX: LAHF/SAHF (v2), LZCNT (v3) */
#define DQPY_LXC_V2 (1u << 0)
#define DQPY_LXC_V3 (1u << 5)
/* XCR0: SSE and AVX state (v3), and the opmask, ZMM_Hi256 and Hi16_ZMM state (v4) */
#define DQPY_XCR0_V3 0x06u
#define DQPY_XCR0_V4 0xe6u
DQPY_EXPORT unsigned dqpy_cpu_levels(void) {
    unsigned a, b, d, c1 = 0, b7 = 0, c7, cx = 0, xcr0 = 0, lo, hi, levels = DQPY_CPU_SCALAR | DQPY_CPU_SSE2;
    int v2;
    if (!__get_cpuid(1, &a, &b, &c1, &d)) return levels;
    if (!__get_cpuid_count(7, 0, &a, &b7, &c7, &d)) b7 = 0;
    if (!__get_cpuid(0x80000001u, &a, &b, &cx, &d)) cx = 0;
    if (c1 & (1u << 27)) { /* OSXSAVE: xgetbv may run */
        __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0u));
        (void)hi;
        xcr0 = lo;
    }
    v2 = (c1 & DQPY_L1C_V2) == DQPY_L1C_V2 && (cx & DQPY_LXC_V2);
    if (v2 && (c1 & DQPY_L1C_V3) == DQPY_L1C_V3 && (b7 & DQPY_L7B_V3) == DQPY_L7B_V3 && (cx & DQPY_LXC_V3) &&
        (xcr0 & DQPY_XCR0_V3) == DQPY_XCR0_V3) {
        levels |= DQPY_CPU_AVX2;
        if ((b7 & DQPY_L7B_V4) == DQPY_L7B_V4 && (xcr0 & DQPY_XCR0_V4) == DQPY_XCR0_V4) levels |= DQPY_CPU_AVX512;
    }
    return levels;
}
#else
DQPY_EXPORT unsigned dqpy_cpu_levels(void) { return DQPY_CPU_SCALAR; }
#endif
