/* internals.h - the test interface: the private (dq__) names of dqsgd.h and dqsgd_simd.h that
 * tests and benchmarks reach, under the prefix dqt_ (DQT_ for macros and tables).
 *
 * For tests that must compare a SIMD kernel with its scalar twin bit for bit, or check an
 * internal the public API cannot reach (bit scans, the dither key, the CRC, strata, the sketch
 * median), and for the bench/ programs that time a kernel against its twin or name the kernels
 * a build selected. Everything else goes through the public API (dqsgd.h); tests have helpers
 * of their own (tests/harness.h: float bits, little-endian loads and stores), which this file
 * does not include, so a bench program takes it alone ("tests/internals.h", built with -I.).
 *
 * The rule: no file under tests/ or bench/ other than this one names a dq__ or DQ__
 * identifier, not even in a comment; `make test` fails when one does (Makefile, target
 * test-names). When an internal is renamed or reshaped in the headers, only this file changes.
 * Keep it small: one general entry (a kernel family macro, a table per family) rather than one
 * per use.
 *
 * Include after dqsgd.h. */
#ifndef DQ_TEST_INTERNALS_H
#define DQ_TEST_INTERNALS_H

/* ---- Build: DQT_HAS(isa) is 1 when this TU compiles in the kernels of ISA level isa (SSE2,
 * AVX2, AVX512; F16C, the x86 half conversion beside those), else 0: a TU built at level L has
 * every kernel of level <= L (NEON runs the SSE2 kernels). Usable in #if. */
#define DQT_HAS(isa) DQ__HAS_##isa##_KERNELS
#define DQT_HALF_BACKEND DQ__HALF_BACKEND /* the half kernels' name, as printed */

/* ---- Kernel families (the kernel list of dqsgd.h, and unpack_block and tab_isexp, which are
 * not selected): the kernel a build dispatches to, the scalar twin, one kernel by level. */
#define dqt_k(fam) dq__k_##fam
#define dqt_scalar(fam) dq__##fam##__scalar
#define dqt_kernel(fam, isa) dq__##fam##__##isa

/* ---- Kernel tables, from the kernel list: DQT_KERNELS(fam) is a row {"isa", kernel} for each
 * SIMD kernel of the family that this build compiles in, best first, and DQT_TABLE(fn_type,
 * table, fam) defines a table of them, ending with {NULL, NULL}. Every family of the list has
 * one below, and the tests compare each of its kernels with the scalar twin; dqt_is_selected
 * says that the family's kernel is its table's first row (the scalar twin when there is none). */
#define DQT_ROW(fam, isa) {#isa, dq__##fam##__##isa},
#define DQT_KERNELS(fam) DQ__KERNELS_##fam(DQT_ROW)
#define DQT_TABLE(fn_type, table, fam) \
    static const struct {              \
        const char *name;              \
        fn_type fn;                    \
    } table[] = {DQT_KERNELS(fam){NULL, NULL}}
#define dqt_is_selected(fam, table) (dqt_k(fam) == ((table)[0].fn ? (table)[0].fn : dqt_scalar(fam)))

typedef void (*dqt_stats_fn)(const float *, const float *, size_t, unsigned, dq__stats *);
typedef void (*dqt_comp_fn)(const float *, float *, size_t);
typedef void (*dqt_quant_fn)(const dq__qctx *, const float *, size_t, uint32_t *, float *);
typedef void (*dqt_qpack_fn)(const dq__qctx *, const float *, float *, uint8_t *);
typedef void (*dqt_pack_fn)(const uint32_t *, unsigned, uint8_t *);
typedef void (*dqt_dec_fn)(const uint8_t *, unsigned, const float *, float, int, float *);
typedef void (*dqt_dectab_fn)(const uint8_t *, unsigned, const float *, const float *, float, int, float *);
typedef void (*dqt_tmacc_fn)(const float *, const float *, size_t, double *, double *, uint64_t *);
typedef void (*dqt_dectm_fn)(const uint8_t *, const float *, const float *, float, int, float *);
typedef void (*dqt_shq_fn)(const float *, float *, size_t, size_t, float, float, uint32_t, uint32_t, int, int32_t *);
typedef uint32_t (*dqt_escan_fn)(const uint8_t *, unsigned, const uint8_t *, uint32_t *, uint64_t *);
typedef void (*dqt_enz_fn)(const uint8_t *, unsigned, uint64_t *);
typedef void (*dqt_egaps_fn)(const uint8_t *, unsigned, size_t, uint64_t *, uint64_t *);
typedef uint64_t (*dqt_spmask_fn)(const float *, const float *, float *, uint32_t);
typedef void (*dqt_skhash_fn)(uint32_t, uint32_t, uint32_t, uint32_t, size_t, uint32_t *);
typedef void (*dqt_hstat_fn)(const float *, const float *, size_t, unsigned, double *, double *, uint32_t *);
typedef void (*dqt_hin_fn)(const void *, float *, size_t);  /* fp16 or bf16 to float */
typedef void (*dqt_hout_fn)(const float *, void *, size_t); /* float to fp16 or bf16 */
typedef void (*dqt_r32get_fn)(dq__r32_dec *, const uint32_t *, uint8_t *, size_t);
typedef size_t (*dqt_r32enc_fn)(const uint8_t *, size_t, const dq__r32_esym *, uint8_t *, size_t);
typedef uint32_t (*dqt_crc_fn)(uint32_t, const uint8_t *, size_t);
typedef void (*dqt_svb_fn)(const uint8_t *, const uint8_t *, size_t, size_t, uint32_t *, dq__svb_acc *);

DQT_TABLE(dqt_stats_fn, DQT_STATS_K, stats);
DQT_TABLE(dqt_comp_fn, DQT_COMP_K, compensate);
DQT_TABLE(dqt_quant_fn, DQT_QUANT_K, quant);
DQT_TABLE(dqt_qpack_fn, DQT_QPACK_K, quant_pack);
DQT_TABLE(dqt_pack_fn, DQT_PACK_K, pack_block);
DQT_TABLE(dqt_dec_fn, DQT_DEC_K, decode_block);
DQT_TABLE(dqt_quant_fn, DQT_QTAB_K, quant_tab); /* table schemes (NUQSGD, natural, TRUNC_NU) */
DQT_TABLE(dqt_dectab_fn, DQT_DECTAB_K, decode_block_tab);
DQT_TABLE(dqt_tmacc_fn, DQT_TMACC_K, tm_acc); /* two-means (DQ_SCHEME_TWOMEANS) */
DQT_TABLE(dqt_dectm_fn, DQT_DECTM_K, decode_block_tm);
DQT_TABLE(dqt_shq_fn, DQT_SHQ_K, shared_q);       /* shared-scale levels (aggregation) */
DQT_TABLE(dqt_escan_fn, DQT_ESCAN_K, elias_scan); /* the Elias sizing scan of a block */
DQT_TABLE(dqt_enz_fn, DQT_ENZ_K, elias_nz);       /* its masks alone (the early-stop pass) */
DQT_TABLE(dqt_egaps_fn, DQT_EGAPS_K, elias_gaps); /* the early-stop pass over whole blocks */
DQT_TABLE(dqt_spmask_fn, DQT_SPMASK_K, sp_mask64); /* the sparsifiers' scan */
DQT_TABLE(dqt_skhash_fn, DQT_SKHASH_K, sk_hash);   /* count-sketch hashes */
DQT_TABLE(dqt_hstat_fn, DQT_HSTAT_K, hstat_acc);   /* the typed codec's carried statistics */
DQT_TABLE(dqt_hin_fn, DQT_F16IN_K, f16_to_f32);
DQT_TABLE(dqt_hout_fn, DQT_F16OUT_K, f32_to_f16);
DQT_TABLE(dqt_hin_fn, DQT_BF16IN_K, bf16_to_f32);
DQT_TABLE(dqt_hout_fn, DQT_BF16OUT_K, f32_to_bf16);
DQT_TABLE(dqt_r32get_fn, DQT_R32GET_K, r32_get); /* 32-way rANS chunks */
DQT_TABLE(dqt_r32enc_fn, DQT_R32ENC_K, r32_encode);
DQT_TABLE(dqt_crc_fn, DQT_CRC_K, crc32c);     /* the CRC32C register update */
DQT_TABLE(dqt_svb_fn, DQT_SVB_K, svb_decode); /* the VARINT index decoder */

/* ---- Block layout and bucket statistics: a packed block is DQT_BLOCK codes, DQT_LANES lanes x
 * DQT_ROWS rows; the stats kernels sum into DQT_SLANES lanes what DQT_ST(...) asks for. */
#define DQT_BLOCK DQ__BLOCK
#define DQT_LANES DQ__LANES
#define DQT_ROWS DQ__ROWS
#define DQT_SLANES DQ__SLANES
#define DQT_ST(what) DQ__ST_##what /* what the stats kernels sum: SQ, ABS, MAX (flags) */
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
#define DQT_NORM_WIRE(norm) DQ__NORM_WIRE_##norm /* a norm as the header writes it: L2, MAX, MEAN */
#define dqt_levels dq__levels /* top level s of a b-bit uniform scheme */
#define dqt_step dq__step     /* decoded step of a b-bit uniform scheme at a scale */
#define dqt_bucket_scale dq__bucket_scale
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

/* ---- The dither generator (doc/FORMAT.md 7), the library's one scalar definition: (seed, step,
 * stream) -> key, its high-index half, one 32-bit or 24-bit draw; dqt_draw24_at and dqt_draw_at
 * (u = d * 2^-24) draw for a 64-bit element index. Tests take draws from here, not a copy. */
typedef dq__key dqt_key;
#define dqt_key_make dq__key_make
#define dqt_key_hi dq__key_hi
#define dqt_draw24 dq__draw24
#define dqt_draw32 dq__draw32
static inline uint32_t dqt_draw24_at(uint64_t seed, uint64_t step, uint32_t stream, uint64_t i) {
    dq__key k = dq__key_make(seed, step, stream);
    return dq__draw24(k.k0, dq__key_hi(k, (uint32_t)(i >> 32)), (uint32_t)i);
}
static inline float dqt_draw_at(uint64_t seed, uint64_t step, uint32_t stream, uint64_t i) {
    return (float)dqt_draw24_at(seed, step, stream, i) * 5.96046448e-08f; /* exact */
}

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

/* ---- rANS, 32 ways (coder 3, doc/FORMAT.md 17.6): the chunk API (its kernels: DQT_R32GET_K,
 * DQT_R32ENC_K), and the symbols and frequencies it shares with coder 2. */
#define DQT_R32_HEAD 128u /* bytes of a chunk's 32 states (FORMAT 17.6) */
#define DQT_R32_M 4096u   /* the frequencies' total (FORMAT 17.3, 17.6) */
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

/* Segments (FORMAT 24): a level-scheme encode whose element 0 has dither index `first`. */
#define dqt_lv_encode_at dq__lv_encode_at

#endif
