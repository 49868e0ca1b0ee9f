/* internals.h - the test interface: the private (dq__) names of dqsgd.h and dqsgd_simd.h that
 * tests reach, under the prefix dqt_ (DQT_ for macros and tables).
 *
 * For tests that must compare a SIMD kernel with its scalar twin bit for bit, or check an
 * internal the public API cannot reach (bit scans, the dither key, the CRC, strata, the sketch
 * median). Everything else tests through the public API (dqsgd.h), with helpers of its own
 * (tests/harness.h: float bits, little-endian loads and stores).
 *
 * The rule: no file under tests/ other than this one names a dq__ or DQ__ identifier, not even
 * in a comment; `make test` fails when one does (Makefile, target test-names). When an internal
 * is renamed or reshaped in the headers, only this file changes. Keep it small: one general
 * entry (a kernel family macro, a table per family) rather than one per use.
 *
 * Include after dqsgd.h (and dqsgd_simd.h, which dqsgd.h includes unless DQ_NO_SIMD). */
#ifndef DQ_TEST_INTERNALS_H
#define DQ_TEST_INTERNALS_H

/* ---- Build: which kernel levels this TU compiles in. A TU built at level L has every kernel of
 * level <= L (NEON runs the SSE2 kernels); F16C is x86 half conversion beside those. */
#if defined(DQSGD_SIMD_H_INCLUDED) && defined(DQ_SIMD)
#define DQT_SSE2 DQ__HAS_SSE2_KERNELS
#define DQT_AVX2 DQ__HAS_AVX2_KERNELS
#define DQT_AVX512 DQ__HAS_AVX512_KERNELS
#define DQT_R32_VL DQ__HAS_R32_VL /* the AVX-512VL rANS decoder */
#define DQT_GAPS_VL DQ__HAS_GAPS_VL /* the AVX-512VL Elias early-stop pass */
#define DQT_F16C DQ__HAS_F16C_KERNELS
#else
#define DQT_SSE2 0
#define DQT_AVX2 0
#define DQT_AVX512 0
#define DQT_R32_VL 0
#define DQT_GAPS_VL 0
#define DQT_F16C 0
#endif
#define DQT_HALF_BACKEND DQ__HALF_BACKEND /* the half kernels' name, as printed */

/* ---- Kernel families (stats, compensate, quant, quant_pack, pack_block, unpack_block,
 * decode_block, elias_scan, elias_nz, elias_gaps, quant_tab, decode_block_tab, tm_acc, decode_block_tm, shared_q, hstat_acc,
 * f16_to_f32, f32_to_f16, bf16_to_f32, f32_to_bf16, crc32c, svb_decode, sp_mask64, sk_hash,
 * tab_isexp): the kernel a build dispatches to, the scalar twin, one kernel by level (for
 * identity checks of the dispatch). */
#define dqt_k(fam) dq__k_##fam
#define dqt_scalar(fam) dq__##fam##__scalar
#define dqt_kernel(fam, isa) dq__##fam##__##isa

/* ---- Kernel tables: the SIMD kernels of a family in this build, each compared with its scalar
 * twin (tests/test_simd.c, tests/test_simd_tab.c, tests/test_aggregate.c, fuzz_simd.c). Each
 * ends with {NULL, NULL}. */
typedef void (*dqt_stats_fn)(const float *, const float *, size_t, unsigned, dq__stats *);
typedef void (*dqt_comp_fn)(const float *, float *, size_t);
typedef void (*dqt_quant_fn)(const dq__qctx *, const float *, size_t, uint32_t *, float *);
typedef void (*dqt_qpack_fn)(const dq__qctx *, const float *, float *, uint8_t *);
typedef void (*dqt_pack_fn)(const uint32_t *, unsigned, uint8_t *);
typedef void (*dqt_dec_fn)(const uint8_t *, unsigned, const float *, float, int, float *);
typedef void (*dqt_dectab_fn)(const uint8_t *, unsigned, const float *, const float *, float, int, float *);
typedef void (*dqt_shq_fn)(const float *, float *, size_t, size_t, float, float, uint32_t, uint32_t, int, int32_t *);
typedef void (*dqt_tmacc_fn)(const float *, const float *, size_t, double *, double *, uint64_t *);
typedef void (*dqt_dectm_fn)(const uint8_t *, const float *, const float *, float, int, float *);

typedef struct { const char *name; dqt_stats_fn fn; } dqt_stats_k;
typedef struct { const char *name; dqt_comp_fn fn; } dqt_comp_k;
typedef struct { const char *name; dqt_quant_fn fn; } dqt_quant_k;
typedef struct { const char *name; dqt_qpack_fn fn; } dqt_qpack_k;
typedef struct { const char *name; dqt_pack_fn fn; } dqt_pack_k;
typedef struct { const char *name; dqt_dec_fn fn; } dqt_dec_k;
typedef struct { const char *name; dqt_dectab_fn fn; } dqt_dectab_k;
typedef struct { const char *name; dqt_shq_fn fn; } dqt_shq_k;
typedef struct { const char *name; dqt_tmacc_fn fn; } dqt_tmacc_k;
typedef struct { const char *name; dqt_dectm_fn fn; } dqt_dectm_k;

static const dqt_stats_k DQT_STATS_K[] = { /* AVX-512 uses AVX2's */
#if DQT_SSE2
    {"sse2", dq__stats__sse2},
#endif
#if DQT_AVX2
    {"avx2", dq__stats__avx2},
#endif
    {NULL, NULL}};
static const dqt_comp_k DQT_COMP_K[] = {
#if DQT_SSE2
    {"sse2", dq__compensate__sse2},
#endif
#if DQT_AVX2
    {"avx2", dq__compensate__avx2},
#endif
#if DQT_AVX512
    {"avx512", dq__compensate__avx512},
#endif
    {NULL, NULL}};
static const dqt_quant_k DQT_QUANT_K[] = {
#if DQT_SSE2
    {"sse2", dq__quant__sse2},
#endif
#if DQT_AVX2
    {"avx2", dq__quant__avx2},
#endif
#if DQT_AVX512
    {"avx512", dq__quant__avx512},
#endif
    {NULL, NULL}};
static const dqt_qpack_k DQT_QPACK_K[] = {
#if DQT_SSE2
    {"sse2", dq__quant_pack__sse2},
#endif
#if DQT_AVX2
    {"avx2", dq__quant_pack__avx2},
#endif
#if DQT_AVX512
    {"avx512", dq__quant_pack__avx512},
#endif
    {NULL, NULL}};
static const dqt_pack_k DQT_PACK_K[] = {
#if DQT_SSE2
    {"sse2", dq__pack_block__sse2},
#endif
#if DQT_AVX2
    {"avx2", dq__pack_block__avx2},
#endif
    {NULL, NULL}};
static const dqt_dec_k DQT_DEC_K[] = {
#if DQT_SSE2
    {"sse2", dq__decode_block__sse2},
#endif
#if DQT_AVX2
    {"avx2", dq__decode_block__avx2},
#endif
#if DQT_AVX512
    {"avx512", dq__decode_block__avx512},
#endif
    {NULL, NULL}};
/* The Elias sizing scan of a block. */
typedef uint32_t (*dqt_escan_fn)(const uint8_t *, unsigned, const uint8_t *, uint32_t *, uint64_t *);
typedef struct { const char *name; dqt_escan_fn fn; } dqt_escan_k;
static const dqt_escan_k DQT_ESCAN_K[] = {
#if DQT_SSE2
    {"sse2", dq__elias_scan__sse2},
#endif
#if DQT_AVX2
    {"avx2", dq__elias_scan__avx2},
#endif
    {NULL, NULL}};
/* Its masks alone (the early-stop pass). */
typedef void (*dqt_enz_fn)(const uint8_t *, unsigned, uint64_t *);
typedef struct { const char *name; dqt_enz_fn fn; } dqt_enz_k;
static const dqt_enz_k DQT_ENZ_K[] = {
#if DQT_AVX2
    {"avx2", dq__elias_nz__avx2},
#endif
    {NULL, NULL}};
/* The early-stop pass over whole blocks (masks and gap counts). */
typedef void (*dqt_egaps_fn)(const uint8_t *, unsigned, size_t, uint64_t *, uint64_t *);
typedef struct { const char *name; dqt_egaps_fn fn; } dqt_egaps_k;
static const dqt_egaps_k DQT_EGAPS_K[] = {
#if DQT_GAPS_VL
    {"avx512", dq__elias_gaps__avx512},
#endif
    {NULL, NULL}};
/* Table schemes (NUQSGD, natural, TRUNC_NU): the quantizer and the block decoder. */
static const dqt_quant_k DQT_QTAB_K[] = {
#if DQT_SSE2
    {"sse2", dq__quant_tab__sse2},
#endif
#if DQT_AVX2
    {"avx2", dq__quant_tab__avx2},
#endif
#if DQT_AVX512
    {"avx512", dq__quant_tab__avx512},
#endif
    {NULL, NULL}};
static const dqt_dectab_k DQT_DECTAB_K[] = {
#if DQT_SSE2
    {"sse2", dq__decode_block_tab__sse2},
#endif
#if DQT_AVX2
    {"avx2", dq__decode_block_tab__avx2},
#endif
    {NULL, NULL}};
static const dqt_shq_k DQT_SHQ_K[] = { /* shared-scale levels (aggregation) */
#if DQT_SSE2
    {"sse2", dq__shared_q__sse2},
#endif
#if DQT_AVX2
    {"avx2", dq__shared_q__avx2},
#endif
    {NULL, NULL}};
/* Two-means (DQ_SCHEME_TWOMEANS): the statistics and the block decoder (AVX-512 uses AVX2's). */
static const dqt_tmacc_k DQT_TMACC_K[] = {
#if DQT_SSE2
    {"sse2", dq__tm_acc__sse2},
#endif
#if DQT_AVX2
    {"avx2", dq__tm_acc__avx2},
#endif
    {NULL, NULL}};
static const dqt_dectm_k DQT_DECTM_K[] = {
#if DQT_SSE2
    {"sse2", dq__decode_block_tm__sse2},
#endif
#if DQT_AVX2
    {"avx2", dq__decode_block_tm__avx2},
#endif
    {NULL, NULL}};

/* ---- Block layout and bucket statistics: a packed block is DQT_BLOCK codes, DQT_LANES lanes x
 * DQT_ROWS rows; the stats kernels sum into DQT_SLANES lanes what DQT_ST_* ask for. */
#define DQT_BLOCK DQ__BLOCK
#define DQT_LANES DQ__LANES
#define DQT_ROWS DQ__ROWS
#define DQT_SLANES DQ__SLANES
#define DQT_ST_SQ DQ__ST_SQ
#define DQT_ST_ABS DQ__ST_ABS
#define DQT_ST_MAX DQ__ST_MAX
typedef dq__stats dqt_stats;
typedef dq__hstat dqt_hstat; /* the fp16/bf16 input path's running statistics */
#define dqt_hstat_add dq__hstat_add
#define dqt_lanes_sum dq__lanes_sum

/* ---- Quantizer contexts and scales: the constants the quantizer kernels take, derived from a
 * bucket scale as the encoder derives them; the encoder's scale of a bucket. */
typedef dq__qctx dqt_qctx;
typedef dq__cfg dqt_cfg;
#define DQT_MIN_SCALE DQ__MIN_SCALE           /* smaller bucket scales are sent as zero */
#define DQT_MAX_SCALE_BITS DQ__MAX_SCALE_BITS /* larger scales are refused */
#define DQT_NORM_WIRE_L2 DQ__NORM_WIRE_L2
#define DQT_NORM_WIRE_MAX DQ__NORM_WIRE_MAX
#define DQT_NORM_WIRE_MEAN DQ__NORM_WIRE_MEAN
#define dqt_levels dq__levels /* top level s of a b-bit uniform scheme */
#define dqt_step dq__step     /* decoded step of a b-bit uniform scheme at a scale */
#define dqt_bucket_scale dq__bucket_scale
#define dqt_is_levels dq__is_levels /* a level scheme (not sparse, not sketch) */
static inline void dqt_qctx_make(dqt_qctx *q, unsigned bits, float scale, int stochastic, uint32_t k0, uint32_t k1h,
                                 uint32_t lo) {
    q->bits = bits;
    q->smax = dq__levels(bits);
    q->thresh = stochastic ? -1.0f : 0.5f;
    q->tab = NULL;
    dq__qctx_scale(q, scale);
    q->k0 = k0;
    q->k1h = k1h;
    q->lo = lo;
}
/* The same for a table scheme: tab[0..2^(bits-1)-1] are the magnitude levels (bits 2..8). */
static inline void dqt_qtab_make(dqt_qctx *q, unsigned bits, const float *tab, float scale, int stochastic,
                                 uint32_t k0, uint32_t k1h, uint32_t lo) {
    dqt_qctx_make(q, bits, scale, stochastic, k0, k1h, lo);
    q->tab = tab;
    dq__qctx_scale(q, scale);
}

/* ---- Codes and values: one code's decoded value (uniform, table), the exponential table, the
 * packing of a block's tail. */
#define DQT_TAB_MAX DQ__TAB_MAX /* magnitude levels of a table scheme, at most */
#define dqt_decode_value dq__decode_value
#define dqt_tab_value dq__tab_value
#define dqt_tab_exp dq__tab_exp
#define dqt_pack_tail dq__pack_tail
#define dqt_unpack_tail dq__unpack_tail

/* ---- Dither key: (seed, step, stream) -> key, its high-index half, one 24-bit draw. */
typedef dq__key dqt_key;
#define dqt_key_make dq__key_make
#define dqt_key_hi dq__key_hi
#define dqt_draw24 dq__draw24

/* ---- Integrity and bit scans: CRC32C (the register update is the crc32c kernel family), the
 * 64-bit leading/trailing zero counts and their portable twins. */
#define dqt_crc32c dq__crc32c
#define dqt_clz64 dq__clz64
#define dqt_ctz64 dq__ctz64
#define dqt_clz64_portable dq__clz64_portable
#define dqt_ctz64_portable dq__ctz64_portable

/* ---- Sparse: index decoding with a chosen varint kernel, a RICE stream with a chosen parameter,
 * random-k strata. */
typedef dq__svb_acc dqt_svb_acc;
typedef dq__sp_strata dqt_sp_strata;
#define dqt_index_decode_with dq__index_decode_with
#define dqt_index_encode_rice dq__index_encode_rice
#define dqt_sp_strata_init dq__sp_strata_init
#define dqt_sp_strata_next dq__sp_strata_next

/* ---- Sketch: the order-preserving float key, its inverse, the median of r keys. */
#define dqt_sk_fkey dq__sk_fkey
#define dqt_sk_fkey_inv dq__sk_fkey_inv
#define dqt_sk_median dq__sk_median

/* ---- rANS, 32 ways (coder 3, doc/FORMAT.md 17.6): the chunk API, its kernel tables (scalar twin
 * first), and the symbols and frequencies it shares with coder 2. */
#define DQT_R32_HEAD DQ__R32_HEAD /* bytes of a chunk's 32 states */
#define DQT_R32_M DQ__R32_M       /* the frequencies' total, 4096 */
typedef dq__r32_dec dqt_r32_dec;
typedef dq__r32_esym dqt_r32_esym;
#define dqt_r32_tables dq__r32_tables
#define dqt_r32_open dq__r32_open
#define dqt_r32_finish dq__r32_finish
#define dqt_r32_block dq__r32_block
#define dqt_r32_put1 dq__r32_put1
#define dqt_rans_normalize dq__rans_normalize
#define dqt_block_syms dq__block_syms
#define dqt_sym_bits dq__sym_bits
#define dqt_sym_bytes dq__sym_bytes
#define dqt_sym_group dq__sym_group
typedef void (*dqt_r32get_fn)(dq__r32_dec *, const uint32_t *, uint8_t *, size_t);
typedef size_t (*dqt_r32enc_fn)(const uint8_t *, size_t, const dq__r32_esym *, uint8_t *, size_t);
typedef struct { const char *name; dqt_r32get_fn fn; } dqt_r32get_k;
typedef struct { const char *name; dqt_r32enc_fn fn; } dqt_r32enc_k;
static const dqt_r32get_k DQT_R32GET_K[] = {
    {"scalar", dq__r32_get__scalar},
#if DQT_SSE2
    {"sse2", dq__r32_get__sse2},
#endif
#if DQT_AVX2
    {"avx2", dq__r32_get__avx2},
#endif
#if DQT_R32_VL
    {"avx512", dq__r32_get__avx512},
#endif
    {NULL, NULL}};
static const dqt_r32enc_k DQT_R32ENC_K[] = {
    {"scalar", dq__r32_encode__scalar},
#if DQT_AVX2
    {"avx2", dq__r32_encode__avx2},
#endif
    {NULL, NULL}};

/* Segments (FORMAT 24): a level-scheme encode whose element 0 has dither index `first`. */
#define dqt_lv_encode_at dq__lv_encode_at

#endif
