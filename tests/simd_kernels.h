/* simd_kernels.h - every SIMD kernel compiled into this build, by family, for comparison with
 * its scalar twin (tests/test_simd.c, tests/test_simd_tab.c, tests/fuzz/fuzz_simd.c). Include
 * after dqsgd.h. A TU compiled at level L has every kernel of level <= L (NEON runs the SSE2
 * kernels). Each table ends with {NULL, NULL}. KS_SSE2 / KS_AVX2 / KS_AVX512 say which families
 * are present; qctx_make() / qtab_make() build the constants the quantizer kernels take. */
#ifndef DQ_TEST_SIMD_KERNELS_H
#define DQ_TEST_SIMD_KERNELS_H

#if defined(DQSGD_SIMD_H_INCLUDED) && defined(DQ_SIMD)
#define KS_SSE2 DQ__HAS_SSE2_KERNELS
#define KS_AVX2 DQ__HAS_AVX2_KERNELS
#define KS_AVX512 DQ__HAS_AVX512_KERNELS
#else
#define KS_SSE2 0
#define KS_AVX2 0
#define KS_AVX512 0
#endif

typedef void (*stats_fn)(const float *, const float *, size_t, unsigned, dq__stats *);
typedef void (*comp_fn)(const float *, float *, size_t);
typedef void (*quant_fn)(const dq__qctx *, const float *, size_t, uint32_t *, float *);
typedef void (*qpack_fn)(const dq__qctx *, const float *, float *, uint8_t *);
typedef void (*pack_fn)(const uint32_t *, unsigned, uint8_t *);
typedef void (*dec_fn)(const uint8_t *, unsigned, const float *, float, int, float *);
typedef void (*dectab_fn)(const uint8_t *, unsigned, const float *, const float *, float, int, float *);

typedef struct { const char *name; stats_fn fn; } stats_k;
typedef struct { const char *name; comp_fn fn; } comp_k;
typedef struct { const char *name; quant_fn fn; } quant_k;
typedef struct { const char *name; qpack_fn fn; } qpack_k;
typedef struct { const char *name; pack_fn fn; } pack_k;
typedef struct { const char *name; dec_fn fn; } dec_k;
typedef struct { const char *name; dectab_fn fn; } dectab_k;

static const stats_k STATS_K[] = {
#if KS_SSE2
    {"sse2", dq__stats__sse2},
#endif
#if KS_AVX2
    {"avx2", dq__stats__avx2},
#endif
    {NULL, NULL}};
static const comp_k COMP_K[] = {
#if KS_SSE2
    {"sse2", dq__compensate__sse2},
#endif
#if KS_AVX2
    {"avx2", dq__compensate__avx2},
#endif
#if KS_AVX512
    {"avx512", dq__compensate__avx512},
#endif
    {NULL, NULL}};
static const quant_k QUANT_K[] = {
#if KS_SSE2
    {"sse2", dq__quant__sse2},
#endif
#if KS_AVX2
    {"avx2", dq__quant__avx2},
#endif
#if KS_AVX512
    {"avx512", dq__quant__avx512},
#endif
    {NULL, NULL}};
static const qpack_k QPACK_K[] = {
#if KS_SSE2
    {"sse2", dq__quant_pack__sse2},
#endif
#if KS_AVX2
    {"avx2", dq__quant_pack__avx2},
#endif
#if KS_AVX512
    {"avx512", dq__quant_pack__avx512},
#endif
    {NULL, NULL}};
static const pack_k PACK_K[] = {
#if KS_SSE2
    {"sse2", dq__pack_block__sse2},
#endif
#if KS_AVX2
    {"avx2", dq__pack_block__avx2},
#endif
    {NULL, NULL}};
static const dec_k DEC_K[] = {
#if KS_SSE2
    {"sse2", dq__decode_block__sse2},
#endif
#if KS_AVX2
    {"avx2", dq__decode_block__avx2},
#endif
    {NULL, NULL}};

/* Table schemes (NUQSGD, natural, TRUNC_NU): the quantizer and the block decoder. */
static const quant_k QTAB_K[] = {
#if KS_SSE2
    {"sse2", dq__quant_tab__sse2},
#endif
#if KS_AVX2
    {"avx2", dq__quant_tab__avx2},
#endif
#if KS_AVX512
    {"avx512", dq__quant_tab__avx512},
#endif
    {NULL, NULL}};
static const dectab_k DECTAB_K[] = {
#if KS_SSE2
    {"sse2", dq__decode_block_tab__sse2},
#endif
#if KS_AVX2
    {"avx2", dq__decode_block_tab__avx2},
#endif
    {NULL, NULL}};
typedef void (*shq_fn)(const float *, float *, size_t, size_t, float, float, uint32_t, uint32_t, int, int32_t *);
typedef struct { const char *name; shq_fn fn; } shq_k;
static const shq_k SHQ_K[] = { /* shared-scale levels (aggregation) */
#if KS_SSE2
    {"sse2", dq__shared_q__sse2},
#endif
#if KS_AVX2
    {"avx2", dq__shared_q__avx2},
#endif
    {NULL, NULL}};

/* Two-means (DQ_SCHEME_TWOMEANS): the statistics and the block decoder (AVX-512 uses AVX2's). */
typedef void (*tmacc_fn)(const float *, const float *, size_t, double *, double *, uint64_t *);
typedef void (*dectm_fn)(const uint8_t *, const float *, const float *, float, int, float *);
typedef struct { const char *name; tmacc_fn fn; } tmacc_k;
typedef struct { const char *name; dectm_fn fn; } dectm_k;
static const tmacc_k TMACC_K[] = {
#if KS_SSE2
    {"sse2", dq__tm_acc__sse2},
#endif
#if KS_AVX2
    {"avx2", dq__tm_acc__avx2},
#endif
    {NULL, NULL}};
static const dectm_k DECTM_K[] = {
#if KS_SSE2
    {"sse2", dq__decode_block_tm__sse2},
#endif
#if KS_AVX2
    {"avx2", dq__decode_block_tm__avx2},
#endif
    {NULL, NULL}};

/* 32-way rANS chunk kernels (scalar twin first, so every table has at least one entry). */
typedef void (*r32get_fn)(dq__r32_dec *, const uint32_t *, uint8_t *, size_t);
typedef size_t (*r32enc_fn)(const uint8_t *, size_t, const dq__r32_esym *, uint8_t *, size_t);
typedef struct { const char *name; r32get_fn fn; } r32get_k;
typedef struct { const char *name; r32enc_fn fn; } r32enc_k;
static const r32get_k R32GET_K[] = {
    {"scalar", dq__r32_get__scalar},
#if KS_SSE2
    {"sse2", dq__r32_get__sse2},
#endif
#if KS_AVX2
    {"avx2", dq__r32_get__avx2},
#endif
    {NULL, NULL}};
static const r32enc_k R32ENC_K[] = {
    {"scalar", dq__r32_encode__scalar},
#if KS_AVX2
    {"avx2", dq__r32_encode__avx2},
#endif
    {NULL, NULL}};

/* Kernel constants as dq__encode_body derives them from a bucket scale. */
static inline void qctx_make(dq__qctx *q, unsigned bits, float scale, int stochastic, uint32_t k0, uint32_t k1h,
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
static inline void qtab_make(dq__qctx *q, unsigned bits, const float *tab, float scale, int stochastic, uint32_t k0,
                             uint32_t k1h, uint32_t lo) {
    qctx_make(q, bits, scale, stochastic, k0, k1h, lo);
    q->tab = tab;
    dq__qctx_scale(q, scale);
}

#endif
