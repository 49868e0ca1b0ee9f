/* dqsgd_simd.h - SIMD kernels for dqsgd.h, written with SIMDe (simde_ names only).
 *
 * Part of dqsgd.h, not a header of its own: dqsgd.h includes it where the kernels are chosen,
 * when SIMDe is on the include path and DQ_NO_SIMD is not defined. Include dqsgd.h; including
 * this file before it is an error, and after it adds nothing. The kernel set is chosen at
 * compile time from what the compiler targets natively: AVX-512F, AVX2, SSE2, or NEON on
 * little-endian AArch64 (which runs the SSE2 kernels: SIMDe implements those intrinsics with
 * native NEON); anything else uses the scalar reference in dqsgd.h rather than SIMDe's
 * emulation. Every kernel here has a scalar twin in dqsgd.h named with __scalar and produces
 * the same bits; dqsgd.h's kernel list says which kernel each family uses. This file never
 * defines SIMDe configuration macros. Runtime dispatch is not built in: compile one
 * translation unit per ISA instead.
 *
 * This part (src/simd_setup.h) sets the level, includes SIMDe and sets the kernel flags; the
 * kernels follow by ISA (src/simd_sse2.h, simd_avx2.h, simd_avx512.h) and src/simd_end.h
 * closes the file. */
#ifndef DQSGD_H_INCLUDED
#error "dqsgd_simd.h is part of dqsgd.h, which includes it: include dqsgd.h instead"
#endif
#if defined(DQ__SIMD_PART) && !defined(DQSGD_SIMD_H_INCLUDED)
#define DQSGD_SIMD_H_INCLUDED

/* Requested or detected level, from the compiler's target macros. */
#ifndef DQ_SIMD
#if defined(__AVX512F__)
#define DQ_SIMD DQ_SIMD_AVX512
#elif defined(__AVX2__)
#define DQ_SIMD DQ_SIMD_AVX2
#elif defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#define DQ_SIMD DQ_SIMD_SSE2
#elif defined(__aarch64__) && defined(__ARM_NEON) && !defined(__AARCH64EB__)
#define DQ_SIMD DQ_SIMD_NEON
#else
#define DQ_SIMD DQ_SIMD_SCALAR
#endif
#endif

/* Kernel families compiled at each level. NEON (4) is numerically above AVX512 (3) but gets
 * only the SSE2 family, so guards use these rather than comparing levels with >=. */
#if DQ_SIMD != DQ_SIMD_SCALAR && DQ_SIMD != DQ_SIMD_SSE2 && DQ_SIMD != DQ_SIMD_AVX2 && DQ_SIMD != DQ_SIMD_AVX512 && \
    DQ_SIMD != DQ_SIMD_NEON
#error "DQ_SIMD must be DQ_SIMD_SCALAR, DQ_SIMD_SSE2, DQ_SIMD_AVX2, DQ_SIMD_AVX512 or DQ_SIMD_NEON"
#endif
#if DQ_SIMD == DQ_SIMD_SSE2 || DQ_SIMD == DQ_SIMD_AVX2 || DQ_SIMD == DQ_SIMD_AVX512 || DQ_SIMD == DQ_SIMD_NEON
#define DQ__HAS_SSE2_KERNELS 1
#else
#define DQ__HAS_SSE2_KERNELS 0
#endif
#if DQ_SIMD == DQ_SIMD_AVX2 || DQ_SIMD == DQ_SIMD_AVX512
#define DQ__HAS_AVX2_KERNELS 1
#else
#define DQ__HAS_AVX2_KERNELS 0
#endif
#if DQ_SIMD == DQ_SIMD_AVX512
#define DQ__HAS_AVX512_KERNELS 1
#else
#define DQ__HAS_AVX512_KERNELS 0
#endif

/* The rANS decoder's mask-register twin: 256-bit AVX-512VL instructions (vpexpandd). */
#if DQ__HAS_AVX512_KERNELS && defined(__AVX512VL__)
#define DQ__HAS_R32_VL 1
#else
#define DQ__HAS_R32_VL 0
#endif
/* The Elias early-stop pass, 4 words at once: AVX-512VL with VPOPCNTDQ. */
#if DQ__HAS_R32_VL && defined(__AVX512VPOPCNTDQ__)
#define DQ__HAS_GAPS_VL 1
#else
#define DQ__HAS_GAPS_VL 0
#endif

#if DQ_SIMD != DQ_SIMD_SCALAR && !(defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) && \
    !defined(_MSC_VER)
#error "dqsgd SIMD kernels assume a little-endian target; define DQ_NO_SIMD"
#endif

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wdouble-promotion"
#pragma GCC diagnostic ignored "-Wcast-align"
#pragma GCC diagnostic ignored "-Wcast-qual"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wundef"
#pragma GCC diagnostic ignored "-Wfloat-equal"
#pragma GCC diagnostic ignored "-Wunused-function"
#ifndef __cplusplus
#pragma GCC diagnostic ignored "-Wc++-compat"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#endif
#if defined(__clang__)
#pragma GCC diagnostic ignored "-Wold-style-cast"
#endif
#endif
#if DQ_SIMD == DQ_SIMD_AVX512
#include <simde/x86/avx512.h>
#elif DQ_SIMD == DQ_SIMD_AVX2
#include <simde/x86/avx2.h>
#elif DQ_SIMD == DQ_SIMD_SSE2 || DQ_SIMD == DQ_SIMD_NEON
#if defined(__SSE4_2__)
#include <simde/x86/sse4.2.h> /* the crc32 instruction below, and the SSSE3 byte shuffle */
#elif defined(__SSSE3__) || DQ_SIMD == DQ_SIMD_NEON
#include <simde/x86/ssse3.h> /* the byte shuffle of the index decoder */
#else
#include <simde/x86/sse2.h>
#endif
#endif
#if defined(__F16C__) && DQ_SIMD != DQ_SIMD_NEON && DQ_SIMD != DQ_SIMD_SCALAR
#include <simde/x86/f16c.h> /* the fp16 conversions of dqsgd.h's typed codec */
#endif
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic pop
#endif

#if DQ_SIMD != DQ_SIMD_SCALAR
#if !defined(SIMDE_VERSION) || SIMDE_VERSION < HEDLEY_VERSION_ENCODE(0, 7, 2)
#error "dqsgd needs SIMDe 0.7.2 or newer"
#endif
#endif
#if DQ_SIMD == DQ_SIMD_AVX512 && !defined(SIMDE_X86_AVX512F_NATIVE)
#error "DQ_SIMD_AVX512 requested but the compiler does not target AVX-512F (add -mavx512f)"
#endif
#if DQ__HAS_AVX2_KERNELS && !defined(SIMDE_X86_AVX2_NATIVE)
#error "DQ_SIMD_AVX2 requested but the compiler does not target AVX2 (add -mavx2)"
#endif
#if DQ__HAS_SSE2_KERNELS && DQ_SIMD != DQ_SIMD_NEON && !defined(SIMDE_X86_SSE2_NATIVE)
#error "DQ_SIMD_SSE2 requested but the compiler does not target SSE2"
#endif
#if DQ_SIMD == DQ_SIMD_NEON && !defined(SIMDE_ARM_NEON_A64V8_NATIVE)
#error "DQ_SIMD_NEON requested but the compiler does not target AArch64 NEON"
#endif
/* The byte shuffle (SSSE3) of the VARINT index decoder: native on x86 with SSSE3 and on NEON,
 * where SIMDe maps it onto one table lookup. */
#if DQ__HAS_SSE2_KERNELS && (defined(SIMDE_X86_SSSE3_NATIVE) || DQ_SIMD == DQ_SIMD_NEON)
#define DQ__HAS_SSSE3_KERNELS 1
#else
#define DQ__HAS_SSSE3_KERNELS 0
#endif
/* The crc32 instruction (SSE4.2) of the CRC32C kernel: x86 only. */
#if DQ__HAS_SSE2_KERNELS && defined(SIMDE_X86_SSE4_2_NATIVE)
#define DQ__HAS_SSE42_KERNELS 1
#else
#define DQ__HAS_SSE42_KERNELS 0
#endif
/* The F16C conversions (8 lanes, AVX encoding): x86 targets with F16C and AVX. */
#if DQ__HAS_SSE2_KERNELS && DQ_SIMD != DQ_SIMD_NEON && defined(SIMDE_X86_F16C_NATIVE) && \
    defined(SIMDE_X86_AVX_NATIVE)
#define DQ__HAS_F16C_KERNELS 1
#else
#define DQ__HAS_F16C_KERNELS 0
#endif

#ifdef __cplusplus
extern "C" {
#endif

