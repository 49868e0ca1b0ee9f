/* ---------------------------------------------------------------- kernel selection
 * Every kernel family is a scalar twin (src/kernels_scalar.h) and SIMD kernels by ISA
 * (dqsgd_simd.h, from src/simd_<isa>.h). The code calls a family through dq__k_<family>, bound
 * at compile time, once, here: to the family's first kernel in the kernel list below that this
 * build compiles in, else to the scalar twin. dqsgd_simd.h says which kernels are compiled in by
 * its flags (DQ__HAS_SSE2_KERNELS and the others: 1 or 0; all 0 without it). */
#define DQ_SIMD_SCALAR 0
#define DQ_SIMD_SSE2 1
#define DQ_SIMD_AVX2 2
#define DQ_SIMD_AVX512 3
#define DQ_SIMD_NEON 4 /* AArch64: the SSE2 kernels, which SIMDe runs on native NEON */

#if !defined(DQ_NO_SIMD) && !(defined(DQ_SIMD) && DQ_SIMD == DQ_SIMD_SCALAR)
#if defined(__has_include)
#if __has_include(<simde/x86/avx512.h>)
#define DQ__SIMD_PART /* dqsgd_simd.h defines its kernels only when included from here */
#include "dqsgd_simd.h"
#undef DQ__SIMD_PART
#endif
#endif
#endif

/* DQ__WHEN(flag, X, family, isa) is X(family, isa) when flag is 1 and nothing when it is 0;
 * DQ__KERNELS_<family>(X) below applies X to each kernel of the family this build compiles in,
 * best first (the tests' tables of kernels, compared with their scalar twins). */
#define DQ__WHEN(flag, X, family, isa) DQ__WHEN_(flag, X, family, isa)
#define DQ__WHEN_(flag, X, family, isa) DQ__WHEN_##flag(X, family, isa)
#define DQ__WHEN_0(X, family, isa)
#define DQ__WHEN_1(X, family, isa) X(family, isa)

/* The kernel list: one row per family, its SIMD kernels best first. A kernel isa is
 * dq__<family>__<isa>, compiled in when DQ__HAS_<ISA>_KERNELS is 1 (isa/FLAG: when FLAG is).
 * tools/kernels.sh writes the selection below from these rows (`make headers` runs it, and
 * `make test` fails when the two differ). A new kernel is a row entry here and a function in
 * src/simd_<isa>.h; a new family also needs its scalar twin in src/kernels_scalar.h. What follows
 * "--" is a note (mostly why AVX-512 builds run an AVX2 kernel).
 * ---------------------------------------------------------------------------------------------
 *   family            kernels, best first      notes
 *   stats             avx2 sse2                -- SIMDe 0.7.4 has no 512-bit cvtps_pd
 *   compensate        avx512 avx2 sse2
 *   quant             avx512 avx2 sse2
 *   quant_pack        avx512 avx2 sse2
 *   pack_block        avx2 sse2                -- a row of the block's 8 lanes is 256 bits
 *   decode_block      avx512 avx2 sse2
 *   quant_tab         avx512 avx2 sse2
 *   decode_block_tab  avx2 sse2
 *   tm_acc            avx2 sse2                -- as stats
 *   decode_block_tm   avx2 sse2                -- a 1-bit block is 256 bits
 *   shared_q          avx2 sse2                -- SIMDe 0.7.4 has no 512-bit cvtepi32_ps
 *   elias_scan        avx2 sse2
 *   elias_nz          avx2
 *   elias_gaps        avx512/DQ__HAS_GAPS_VL   -- AVX-512VL and VPOPCNTDQ on 256 bits
 *   sp_mask64         avx512 avx2 sse2
 *   sk_hash           avx512 avx2
 *   hstat_acc         avx2 sse2                -- as stats
 *   f16_to_f32        f16c avx512 avx2 sse2
 *   f32_to_f16        f16c avx512 avx2 sse2
 *   bf16_to_f32       avx512 avx2 sse2
 *   f32_to_bf16       avx512 avx2 sse2
 *   r32_get           avx512/DQ__HAS_R32_VL avx2 sse2 -- AVX-512VL expand on 256 bits
 *   r32_encode        avx2                     -- scalar table loads; not tried on 512 bits
 *   crc32c            sse42
 *   svb_decode        ssse3
 * --------------------------------------------------------------------------------------------- */

/* ---- the selection, generated from the kernel list by tools/kernels.sh: do not edit */
#ifndef DQ__HAS_AVX2_KERNELS
#define DQ__HAS_AVX2_KERNELS 0
#endif
#ifndef DQ__HAS_SSE2_KERNELS
#define DQ__HAS_SSE2_KERNELS 0
#endif
#ifndef DQ__HAS_AVX512_KERNELS
#define DQ__HAS_AVX512_KERNELS 0
#endif
#ifndef DQ__HAS_GAPS_VL
#define DQ__HAS_GAPS_VL 0
#endif
#ifndef DQ__HAS_F16C_KERNELS
#define DQ__HAS_F16C_KERNELS 0
#endif
#ifndef DQ__HAS_R32_VL
#define DQ__HAS_R32_VL 0
#endif
#ifndef DQ__HAS_SSE42_KERNELS
#define DQ__HAS_SSE42_KERNELS 0
#endif
#ifndef DQ__HAS_SSSE3_KERNELS
#define DQ__HAS_SSSE3_KERNELS 0
#endif
#if DQ__HAS_AVX2_KERNELS
#define dq__k_stats dq__stats__avx2
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_stats dq__stats__sse2
#else
#define dq__k_stats dq__stats__scalar
#endif
#define DQ__KERNELS_stats(X) \
    DQ__WHEN(DQ__HAS_AVX2_KERNELS, X, stats, avx2) \
    DQ__WHEN(DQ__HAS_SSE2_KERNELS, X, stats, sse2)
#if DQ__HAS_AVX512_KERNELS
#define dq__k_compensate dq__compensate__avx512
#elif DQ__HAS_AVX2_KERNELS
#define dq__k_compensate dq__compensate__avx2
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_compensate dq__compensate__sse2
#else
#define dq__k_compensate dq__compensate__scalar
#endif
#define DQ__KERNELS_compensate(X) \
    DQ__WHEN(DQ__HAS_AVX512_KERNELS, X, compensate, avx512) \
    DQ__WHEN(DQ__HAS_AVX2_KERNELS, X, compensate, avx2) \
    DQ__WHEN(DQ__HAS_SSE2_KERNELS, X, compensate, sse2)
#if DQ__HAS_AVX512_KERNELS
#define dq__k_quant dq__quant__avx512
#elif DQ__HAS_AVX2_KERNELS
#define dq__k_quant dq__quant__avx2
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_quant dq__quant__sse2
#else
#define dq__k_quant dq__quant__scalar
#endif
#define DQ__KERNELS_quant(X) \
    DQ__WHEN(DQ__HAS_AVX512_KERNELS, X, quant, avx512) \
    DQ__WHEN(DQ__HAS_AVX2_KERNELS, X, quant, avx2) \
    DQ__WHEN(DQ__HAS_SSE2_KERNELS, X, quant, sse2)
#if DQ__HAS_AVX512_KERNELS
#define dq__k_quant_pack dq__quant_pack__avx512
#elif DQ__HAS_AVX2_KERNELS
#define dq__k_quant_pack dq__quant_pack__avx2
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_quant_pack dq__quant_pack__sse2
#else
#define dq__k_quant_pack dq__quant_pack__scalar
#endif
#define DQ__KERNELS_quant_pack(X) \
    DQ__WHEN(DQ__HAS_AVX512_KERNELS, X, quant_pack, avx512) \
    DQ__WHEN(DQ__HAS_AVX2_KERNELS, X, quant_pack, avx2) \
    DQ__WHEN(DQ__HAS_SSE2_KERNELS, X, quant_pack, sse2)
#if DQ__HAS_AVX2_KERNELS
#define dq__k_pack_block dq__pack_block__avx2
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_pack_block dq__pack_block__sse2
#else
#define dq__k_pack_block dq__pack_block__scalar
#endif
#define DQ__KERNELS_pack_block(X) \
    DQ__WHEN(DQ__HAS_AVX2_KERNELS, X, pack_block, avx2) \
    DQ__WHEN(DQ__HAS_SSE2_KERNELS, X, pack_block, sse2)
#if DQ__HAS_AVX512_KERNELS
#define dq__k_decode_block dq__decode_block__avx512
#elif DQ__HAS_AVX2_KERNELS
#define dq__k_decode_block dq__decode_block__avx2
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_decode_block dq__decode_block__sse2
#else
#define dq__k_decode_block dq__decode_block__scalar
#endif
#define DQ__KERNELS_decode_block(X) \
    DQ__WHEN(DQ__HAS_AVX512_KERNELS, X, decode_block, avx512) \
    DQ__WHEN(DQ__HAS_AVX2_KERNELS, X, decode_block, avx2) \
    DQ__WHEN(DQ__HAS_SSE2_KERNELS, X, decode_block, sse2)
#if DQ__HAS_AVX512_KERNELS
#define dq__k_quant_tab dq__quant_tab__avx512
#elif DQ__HAS_AVX2_KERNELS
#define dq__k_quant_tab dq__quant_tab__avx2
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_quant_tab dq__quant_tab__sse2
#else
#define dq__k_quant_tab dq__quant_tab__scalar
#endif
#define DQ__KERNELS_quant_tab(X) \
    DQ__WHEN(DQ__HAS_AVX512_KERNELS, X, quant_tab, avx512) \
    DQ__WHEN(DQ__HAS_AVX2_KERNELS, X, quant_tab, avx2) \
    DQ__WHEN(DQ__HAS_SSE2_KERNELS, X, quant_tab, sse2)
#if DQ__HAS_AVX2_KERNELS
#define dq__k_decode_block_tab dq__decode_block_tab__avx2
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_decode_block_tab dq__decode_block_tab__sse2
#else
#define dq__k_decode_block_tab dq__decode_block_tab__scalar
#endif
#define DQ__KERNELS_decode_block_tab(X) \
    DQ__WHEN(DQ__HAS_AVX2_KERNELS, X, decode_block_tab, avx2) \
    DQ__WHEN(DQ__HAS_SSE2_KERNELS, X, decode_block_tab, sse2)
#if DQ__HAS_AVX2_KERNELS
#define dq__k_tm_acc dq__tm_acc__avx2
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_tm_acc dq__tm_acc__sse2
#else
#define dq__k_tm_acc dq__tm_acc__scalar
#endif
#define DQ__KERNELS_tm_acc(X) \
    DQ__WHEN(DQ__HAS_AVX2_KERNELS, X, tm_acc, avx2) \
    DQ__WHEN(DQ__HAS_SSE2_KERNELS, X, tm_acc, sse2)
#if DQ__HAS_AVX2_KERNELS
#define dq__k_decode_block_tm dq__decode_block_tm__avx2
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_decode_block_tm dq__decode_block_tm__sse2
#else
#define dq__k_decode_block_tm dq__decode_block_tm__scalar
#endif
#define DQ__KERNELS_decode_block_tm(X) \
    DQ__WHEN(DQ__HAS_AVX2_KERNELS, X, decode_block_tm, avx2) \
    DQ__WHEN(DQ__HAS_SSE2_KERNELS, X, decode_block_tm, sse2)
#if DQ__HAS_AVX2_KERNELS
#define dq__k_shared_q dq__shared_q__avx2
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_shared_q dq__shared_q__sse2
#else
#define dq__k_shared_q dq__shared_q__scalar
#endif
#define DQ__KERNELS_shared_q(X) \
    DQ__WHEN(DQ__HAS_AVX2_KERNELS, X, shared_q, avx2) \
    DQ__WHEN(DQ__HAS_SSE2_KERNELS, X, shared_q, sse2)
#if DQ__HAS_AVX2_KERNELS
#define dq__k_elias_scan dq__elias_scan__avx2
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_elias_scan dq__elias_scan__sse2
#else
#define dq__k_elias_scan dq__elias_scan__scalar
#endif
#define DQ__KERNELS_elias_scan(X) \
    DQ__WHEN(DQ__HAS_AVX2_KERNELS, X, elias_scan, avx2) \
    DQ__WHEN(DQ__HAS_SSE2_KERNELS, X, elias_scan, sse2)
#if DQ__HAS_AVX2_KERNELS
#define dq__k_elias_nz dq__elias_nz__avx2
#else
#define dq__k_elias_nz dq__elias_nz__scalar
#endif
#define DQ__KERNELS_elias_nz(X) \
    DQ__WHEN(DQ__HAS_AVX2_KERNELS, X, elias_nz, avx2)
#if DQ__HAS_GAPS_VL
#define dq__k_elias_gaps dq__elias_gaps__avx512
#else
#define dq__k_elias_gaps dq__elias_gaps__scalar
#endif
#define DQ__KERNELS_elias_gaps(X) \
    DQ__WHEN(DQ__HAS_GAPS_VL, X, elias_gaps, avx512)
#if DQ__HAS_AVX512_KERNELS
#define dq__k_sp_mask64 dq__sp_mask64__avx512
#elif DQ__HAS_AVX2_KERNELS
#define dq__k_sp_mask64 dq__sp_mask64__avx2
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_sp_mask64 dq__sp_mask64__sse2
#else
#define dq__k_sp_mask64 dq__sp_mask64__scalar
#endif
#define DQ__KERNELS_sp_mask64(X) \
    DQ__WHEN(DQ__HAS_AVX512_KERNELS, X, sp_mask64, avx512) \
    DQ__WHEN(DQ__HAS_AVX2_KERNELS, X, sp_mask64, avx2) \
    DQ__WHEN(DQ__HAS_SSE2_KERNELS, X, sp_mask64, sse2)
#if DQ__HAS_AVX512_KERNELS
#define dq__k_sk_hash dq__sk_hash__avx512
#elif DQ__HAS_AVX2_KERNELS
#define dq__k_sk_hash dq__sk_hash__avx2
#else
#define dq__k_sk_hash dq__sk_hash__scalar
#endif
#define DQ__KERNELS_sk_hash(X) \
    DQ__WHEN(DQ__HAS_AVX512_KERNELS, X, sk_hash, avx512) \
    DQ__WHEN(DQ__HAS_AVX2_KERNELS, X, sk_hash, avx2)
#if DQ__HAS_AVX2_KERNELS
#define dq__k_hstat_acc dq__hstat_acc__avx2
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_hstat_acc dq__hstat_acc__sse2
#else
#define dq__k_hstat_acc dq__hstat_acc__scalar
#endif
#define DQ__KERNELS_hstat_acc(X) \
    DQ__WHEN(DQ__HAS_AVX2_KERNELS, X, hstat_acc, avx2) \
    DQ__WHEN(DQ__HAS_SSE2_KERNELS, X, hstat_acc, sse2)
#if DQ__HAS_F16C_KERNELS
#define dq__k_f16_to_f32 dq__f16_to_f32__f16c
#elif DQ__HAS_AVX512_KERNELS
#define dq__k_f16_to_f32 dq__f16_to_f32__avx512
#elif DQ__HAS_AVX2_KERNELS
#define dq__k_f16_to_f32 dq__f16_to_f32__avx2
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_f16_to_f32 dq__f16_to_f32__sse2
#else
#define dq__k_f16_to_f32 dq__f16_to_f32__scalar
#endif
#define DQ__KERNELS_f16_to_f32(X) \
    DQ__WHEN(DQ__HAS_F16C_KERNELS, X, f16_to_f32, f16c) \
    DQ__WHEN(DQ__HAS_AVX512_KERNELS, X, f16_to_f32, avx512) \
    DQ__WHEN(DQ__HAS_AVX2_KERNELS, X, f16_to_f32, avx2) \
    DQ__WHEN(DQ__HAS_SSE2_KERNELS, X, f16_to_f32, sse2)
#if DQ__HAS_F16C_KERNELS
#define dq__k_f32_to_f16 dq__f32_to_f16__f16c
#elif DQ__HAS_AVX512_KERNELS
#define dq__k_f32_to_f16 dq__f32_to_f16__avx512
#elif DQ__HAS_AVX2_KERNELS
#define dq__k_f32_to_f16 dq__f32_to_f16__avx2
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_f32_to_f16 dq__f32_to_f16__sse2
#else
#define dq__k_f32_to_f16 dq__f32_to_f16__scalar
#endif
#define DQ__KERNELS_f32_to_f16(X) \
    DQ__WHEN(DQ__HAS_F16C_KERNELS, X, f32_to_f16, f16c) \
    DQ__WHEN(DQ__HAS_AVX512_KERNELS, X, f32_to_f16, avx512) \
    DQ__WHEN(DQ__HAS_AVX2_KERNELS, X, f32_to_f16, avx2) \
    DQ__WHEN(DQ__HAS_SSE2_KERNELS, X, f32_to_f16, sse2)
#if DQ__HAS_AVX512_KERNELS
#define dq__k_bf16_to_f32 dq__bf16_to_f32__avx512
#elif DQ__HAS_AVX2_KERNELS
#define dq__k_bf16_to_f32 dq__bf16_to_f32__avx2
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_bf16_to_f32 dq__bf16_to_f32__sse2
#else
#define dq__k_bf16_to_f32 dq__bf16_to_f32__scalar
#endif
#define DQ__KERNELS_bf16_to_f32(X) \
    DQ__WHEN(DQ__HAS_AVX512_KERNELS, X, bf16_to_f32, avx512) \
    DQ__WHEN(DQ__HAS_AVX2_KERNELS, X, bf16_to_f32, avx2) \
    DQ__WHEN(DQ__HAS_SSE2_KERNELS, X, bf16_to_f32, sse2)
#if DQ__HAS_AVX512_KERNELS
#define dq__k_f32_to_bf16 dq__f32_to_bf16__avx512
#elif DQ__HAS_AVX2_KERNELS
#define dq__k_f32_to_bf16 dq__f32_to_bf16__avx2
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_f32_to_bf16 dq__f32_to_bf16__sse2
#else
#define dq__k_f32_to_bf16 dq__f32_to_bf16__scalar
#endif
#define DQ__KERNELS_f32_to_bf16(X) \
    DQ__WHEN(DQ__HAS_AVX512_KERNELS, X, f32_to_bf16, avx512) \
    DQ__WHEN(DQ__HAS_AVX2_KERNELS, X, f32_to_bf16, avx2) \
    DQ__WHEN(DQ__HAS_SSE2_KERNELS, X, f32_to_bf16, sse2)
#if DQ__HAS_R32_VL
#define dq__k_r32_get dq__r32_get__avx512
#elif DQ__HAS_AVX2_KERNELS
#define dq__k_r32_get dq__r32_get__avx2
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_r32_get dq__r32_get__sse2
#else
#define dq__k_r32_get dq__r32_get__scalar
#endif
#define DQ__KERNELS_r32_get(X) \
    DQ__WHEN(DQ__HAS_R32_VL, X, r32_get, avx512) \
    DQ__WHEN(DQ__HAS_AVX2_KERNELS, X, r32_get, avx2) \
    DQ__WHEN(DQ__HAS_SSE2_KERNELS, X, r32_get, sse2)
#if DQ__HAS_AVX2_KERNELS
#define dq__k_r32_encode dq__r32_encode__avx2
#else
#define dq__k_r32_encode dq__r32_encode__scalar
#endif
#define DQ__KERNELS_r32_encode(X) \
    DQ__WHEN(DQ__HAS_AVX2_KERNELS, X, r32_encode, avx2)
#if DQ__HAS_SSE42_KERNELS
#define dq__k_crc32c dq__crc32c__sse42
#else
#define dq__k_crc32c dq__crc32c__scalar
#endif
#define DQ__KERNELS_crc32c(X) \
    DQ__WHEN(DQ__HAS_SSE42_KERNELS, X, crc32c, sse42)
#if DQ__HAS_SSSE3_KERNELS
#define dq__k_svb_decode dq__svb_decode__ssse3
#else
#define dq__k_svb_decode dq__svb_decode__scalar
#endif
#define DQ__KERNELS_svb_decode(X) \
    DQ__WHEN(DQ__HAS_SSSE3_KERNELS, X, svb_decode, ssse3)
/* ---- end of the generated selection */

/* The names dq_simd_backend() reports: the widest level compiled in, and the half kernels. */
#if DQ__HAS_AVX512_KERNELS
#define DQ__BACKEND "avx512"
#elif DQ__HAS_AVX2_KERNELS
#define DQ__BACKEND "avx2"
#elif DQ__HAS_SSE2_KERNELS && defined(DQ_SIMD) && DQ_SIMD == DQ_SIMD_NEON
#define DQ__BACKEND "neon"
#elif DQ__HAS_SSE2_KERNELS
#define DQ__BACKEND "sse2"
#else
#define DQ__BACKEND "scalar"
#endif
#if DQ__HAS_F16C_KERNELS
#define DQ__HALF_BACKEND "f16c+" DQ__BACKEND
#else
#define DQ__HALF_BACKEND DQ__BACKEND
#endif

#ifdef __cplusplus
extern "C" {
#endif
