/* ---------------------------------------------------------------- kernel selection */
#define DQ_SIMD_SCALAR 0
#define DQ_SIMD_SSE2 1
#define DQ_SIMD_AVX2 2
#define DQ_SIMD_AVX512 3
#define DQ_SIMD_NEON 4 /* AArch64: the SSE2 kernels, which SIMDe runs on native NEON */

#if !defined(DQ_NO_SIMD) && !(defined(DQ_SIMD) && DQ_SIMD == DQ_SIMD_SCALAR)
#if defined(__has_include)
#if __has_include(<simde/x86/avx512.h>)
#include "dqsgd_simd.h"
#endif
#endif
#endif

#ifndef DQ__KERNELS_SELECTED
#define DQ__KERNELS_SELECTED
#define DQ__BACKEND "scalar"
#define dq__k_stats dq__stats__scalar
#define dq__k_compensate dq__compensate__scalar
#define dq__k_quant dq__quant__scalar
#define dq__k_quant_pack dq__quant_pack__scalar
#define dq__k_pack_block dq__pack_block__scalar
#define dq__k_decode_block dq__decode_block__scalar
#endif
#ifndef dq__k_elias_scan /* Elias sizing and encoding */
#define dq__k_elias_scan dq__elias_scan__scalar
#endif
#ifndef dq__k_elias_nz
#define dq__k_elias_nz dq__elias_nz__scalar
#endif
#ifndef dq__k_elias_gaps
#define dq__k_elias_gaps dq__elias_gaps__scalar
#endif
#ifndef dq__k_crc32c /* hardware CRC32C where the target has it (dqsgd_simd.h) */
#define dq__k_crc32c dq__crc32c__scalar
#endif
#ifndef dq__k_svb_decode /* the SSSE3 shuffle where the target has it (dqsgd_simd.h) */
#define dq__k_svb_decode dq__svb_decode__scalar
#endif
#ifndef dq__k_quant_tab /* table schemes (NUQSGD, natural, TRUNC_NU) */
#define dq__k_quant_tab dq__quant_tab__scalar
#endif
#ifndef dq__k_decode_block_tab
#define dq__k_decode_block_tab dq__decode_block_tab__scalar
#endif
#ifndef dq__k_shared_q /* shared-scale levels (aggregation) */
#define dq__k_shared_q dq__shared_q__scalar
#endif
#ifndef dq__k_tm_acc /* two-means statistics and decoding (DQ_SCHEME_TWOMEANS) */
#define dq__k_tm_acc dq__tm_acc__scalar
#endif
#ifndef dq__k_decode_block_tm
#define dq__k_decode_block_tm dq__decode_block_tm__scalar
#endif
#ifndef dq__k_sp_mask64 /* the sparsifiers' scan */
#define dq__k_sp_mask64 dq__sp_mask64__scalar
#endif
#ifndef dq__k_r32_get /* 32-way rANS chunk decode and encode (coder 3 draft) */
#define dq__k_r32_get dq__r32_get__scalar
#endif
#ifndef dq__k_r32_encode
#define dq__k_r32_encode dq__r32_encode__scalar
#endif
#ifndef dq__k_sk_hash /* count-sketch hashes */
#define dq__k_sk_hash dq__sk_hash__scalar
#endif
#ifndef dq__k_f16_to_f32 /* fp16 and bf16 conversions, typed statistics */
#define dq__k_f16_to_f32 dq__f16_to_f32__scalar
#define dq__k_f32_to_f16 dq__f32_to_f16__scalar
#endif
#ifndef dq__k_bf16_to_f32
#define dq__k_bf16_to_f32 dq__bf16_to_f32__scalar
#define dq__k_f32_to_bf16 dq__f32_to_bf16__scalar
#endif
#ifndef dq__k_hstat_acc
#define dq__k_hstat_acc dq__hstat_acc__scalar
#endif
#ifndef DQ__HALF_BACKEND
#define DQ__HALF_BACKEND "scalar"
#endif

#ifdef __cplusplus
extern "C" {
#endif

