/* ================================================================ selection
 * Every kernel slot dq__k_<name> this file fills, in one place; dqsgd.h binds the slots left
 * empty (all of them without SIMD) to the scalar twins. */
#define DQ__KERNELS_SELECTED
#if DQ_SIMD == DQ_SIMD_AVX512
#define DQ__BACKEND "avx512"
#define dq__k_stats dq__stats__avx2 /* SIMDe 0.7.4 lacks 512-bit cvtps_pd */
#define dq__k_compensate dq__compensate__avx512
#define dq__k_quant dq__quant__avx512
#define dq__k_quant_pack dq__quant_pack__avx512
#define dq__k_pack_block dq__pack_block__avx2
#define dq__k_decode_block dq__decode_block__avx512
#define dq__k_quant_tab dq__quant_tab__avx512
#define dq__k_decode_block_tab dq__decode_block_tab__avx2
#define dq__k_tm_acc dq__tm_acc__avx2 /* as dq__k_stats */
#define dq__k_decode_block_tm dq__decode_block_tm__avx2
#elif DQ_SIMD == DQ_SIMD_AVX2
#define DQ__BACKEND "avx2"
#define dq__k_stats dq__stats__avx2
#define dq__k_compensate dq__compensate__avx2
#define dq__k_quant dq__quant__avx2
#define dq__k_quant_pack dq__quant_pack__avx2
#define dq__k_pack_block dq__pack_block__avx2
#define dq__k_decode_block dq__decode_block__avx2
#define dq__k_quant_tab dq__quant_tab__avx2
#define dq__k_decode_block_tab dq__decode_block_tab__avx2
#define dq__k_tm_acc dq__tm_acc__avx2
#define dq__k_decode_block_tm dq__decode_block_tm__avx2
#elif DQ_SIMD == DQ_SIMD_SSE2
#define DQ__BACKEND "sse2"
#define dq__k_stats dq__stats__sse2
#define dq__k_compensate dq__compensate__sse2
#define dq__k_quant dq__quant__sse2
#define dq__k_quant_pack dq__quant_pack__sse2
#define dq__k_pack_block dq__pack_block__sse2
#define dq__k_decode_block dq__decode_block__sse2
#define dq__k_quant_tab dq__quant_tab__sse2
#define dq__k_decode_block_tab dq__decode_block_tab__sse2
#define dq__k_tm_acc dq__tm_acc__sse2
#define dq__k_decode_block_tm dq__decode_block_tm__sse2
#elif DQ_SIMD == DQ_SIMD_NEON
#define DQ__BACKEND "neon"
#define dq__k_stats dq__stats__sse2
#define dq__k_compensate dq__compensate__sse2
#define dq__k_quant dq__quant__sse2
#define dq__k_quant_pack dq__quant_pack__sse2
#define dq__k_pack_block dq__pack_block__sse2
#define dq__k_decode_block dq__decode_block__sse2
#define dq__k_quant_tab dq__quant_tab__sse2
#define dq__k_decode_block_tab dq__decode_block_tab__sse2
#define dq__k_tm_acc dq__tm_acc__sse2
#define dq__k_decode_block_tm dq__decode_block_tm__sse2
#else
#undef DQ__KERNELS_SELECTED /* no native vector ISA: dqsgd.h selects the scalar reference */
#endif
/* 32-way rANS chunks: AVX-512 builds use the AVX2 kernels (SIMDe 0.7.4 has neither a 512-bit
 * gather nor a 512-bit expand). */
#if DQ__HAS_R32_VL
#define dq__k_r32_get dq__r32_get__avx512
#define dq__k_r32_encode dq__r32_encode__avx2
#elif DQ__HAS_AVX2_KERNELS
#define dq__k_r32_get dq__r32_get__avx2
#define dq__k_r32_encode dq__r32_encode__avx2
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_r32_get dq__r32_get__sse2
#endif
/* Slots whose choice depends on more than DQ_SIMD. */
#if DQ__HAS_AVX2_KERNELS
#define dq__k_elias_scan dq__elias_scan__avx2 /* also at AVX-512 */
#define dq__k_elias_nz dq__elias_nz__avx2
#if DQ__HAS_GAPS_VL
#define dq__k_elias_gaps dq__elias_gaps__avx512
#endif
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_elias_scan dq__elias_scan__sse2
#endif
#if DQ__HAS_AVX2_KERNELS
#define dq__k_shared_q dq__shared_q__avx2 /* also at AVX-512 */
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_shared_q dq__shared_q__sse2
#endif
#if DQ__HAS_AVX512_KERNELS
#define dq__k_sp_mask64 dq__sp_mask64__avx512
#define dq__k_sk_hash dq__sk_hash__avx512
#elif DQ__HAS_AVX2_KERNELS
#define dq__k_sp_mask64 dq__sp_mask64__avx2
#define dq__k_sk_hash dq__sk_hash__avx2
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_sp_mask64 dq__sp_mask64__sse2
#endif
#if DQ__HAS_F16C_KERNELS
#define dq__k_f16_to_f32 dq__f16_to_f32__f16c
#define dq__k_f32_to_f16 dq__f32_to_f16__f16c
#elif DQ__HAS_AVX512_KERNELS
#define dq__k_f16_to_f32 dq__f16_to_f32__avx512
#define dq__k_f32_to_f16 dq__f32_to_f16__avx512
#elif DQ__HAS_AVX2_KERNELS
#define dq__k_f16_to_f32 dq__f16_to_f32__avx2
#define dq__k_f32_to_f16 dq__f32_to_f16__avx2
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_f16_to_f32 dq__f16_to_f32__sse2
#define dq__k_f32_to_f16 dq__f32_to_f16__sse2
#endif
#if DQ__HAS_AVX512_KERNELS
#define dq__k_bf16_to_f32 dq__bf16_to_f32__avx512
#define dq__k_f32_to_bf16 dq__f32_to_bf16__avx512
#elif DQ__HAS_AVX2_KERNELS
#define dq__k_bf16_to_f32 dq__bf16_to_f32__avx2
#define dq__k_f32_to_bf16 dq__f32_to_bf16__avx2
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_bf16_to_f32 dq__bf16_to_f32__sse2
#define dq__k_f32_to_bf16 dq__f32_to_bf16__sse2
#endif
#if DQ__HAS_AVX2_KERNELS /* also at AVX-512: SIMDe 0.7.4 lacks 512-bit cvtps_pd (as dq__k_stats) */
#define dq__k_hstat_acc dq__hstat_acc__avx2
#elif DQ__HAS_SSE2_KERNELS
#define dq__k_hstat_acc dq__hstat_acc__sse2
#endif
#if DQ__HAS_F16C_KERNELS && DQ__HAS_AVX512_KERNELS
#define DQ__HALF_BACKEND "f16c+avx512"
#elif DQ__HAS_F16C_KERNELS && DQ__HAS_AVX2_KERNELS
#define DQ__HALF_BACKEND "f16c+avx2"
#elif DQ__HAS_F16C_KERNELS
#define DQ__HALF_BACKEND "f16c+sse2"
#elif DQ__HAS_AVX512_KERNELS
#define DQ__HALF_BACKEND "avx512"
#elif DQ__HAS_AVX2_KERNELS
#define DQ__HALF_BACKEND "avx2"
#elif DQ_SIMD == DQ_SIMD_NEON
#define DQ__HALF_BACKEND "neon"
#elif DQ__HAS_SSE2_KERNELS
#define DQ__HALF_BACKEND "sse2"
#endif
#if DQ__HAS_SSE42_KERNELS
#define dq__k_crc32c dq__crc32c__sse42
#endif
#if DQ__HAS_SSSE3_KERNELS
#define dq__k_svb_decode dq__svb_decode__ssse3
#endif

