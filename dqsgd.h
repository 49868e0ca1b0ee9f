/* dqsgd.h - v0.3.0 - dynamic quantized SGD: gradient quantizers, wire format, error feedback
 *
 * Header-only. `#include "dqsgd.h"` is all a C or C++ project needs: every function is
 * `static inline` unless DQ_API says otherwise. When SIMDe (https://github.com/simd-everywhere
 * /simde, Debian: libsimde-dev) is on the include path, dqsgd.h pulls in dqsgd_simd.h and the
 * kernels run on the widest ISA the compiler targets natively (SSE2, AVX2, AVX-512, NEON); the bytes
 * produced are identical to the scalar reference in this file on every ISA.
 *
 * Quick example (QSGD, 4 bits, stochastic rounding, L2 scale per 512-element bucket):
 *
 *     dq_params p = {0};                  // zero = defaults
 *     p.bits = 4; p.seed = 42; p.step = step; p.stream = rank;
 *     size_t cap = dq_encode_bound(n, p.bits), len;
 *     uint8_t *msg = malloc(cap);
 *     dq_status st = dq_encode(&p, grad, n, residual, msg, cap, &len); // residual may be NULL
 *     if (st != DQ_OK) fprintf(stderr, "%s\n", dq_strerror(st));
 *     ... send msg[0..len) ...
 *     dq_header h;                         // receiver: validate first, then size buffers
 *     st = dq_header_read(msg, len, &h);
 *     st = dq_decode_add(msg, len, 1.0f / workers, sum, h.count);
 *
 * Configuration macros (define before including; identical in every translation unit):
 *   DQ_API       declaration prefix of every public function. Default `static inline`. Define
 *                it empty (or to a visibility attribute) in one file to export one copy.
 *   DQ_NO_SIMD   never include dqsgd_simd.h; use the scalar reference only.
 *   DQ_SIMD      force a kernel set: DQ_SIMD_SCALAR, DQ_SIMD_SSE2, DQ_SIMD_AVX2, DQ_SIMD_AVX512,
 *                DQ_SIMD_NEON (AArch64: the SSE2 kernels, which SIMDe maps onto NEON).
 *                A level above what the compiler targets natively is an error.
 *
 * Determinism: same inputs, params and seed give the same bytes on every machine, ISA and
 * compiler, provided floating point is IEEE binary32 without contraction (GCC: ISO mode such as
 * -std=c99, or -ffp-contract=off; never -ffast-math) and the FP environment is the default one
 * (round to nearest, no flush-to-zero).
 *
 * The wire format is specified in doc/FORMAT.md. The library never allocates and never aborts.
 * License: MIT (see end of file). */
#ifndef DQSGD_H_INCLUDED
#define DQSGD_H_INCLUDED

#define DQSGD_VERSION_MAJOR 0
#define DQSGD_VERSION_MINOR 3
#define DQSGD_VERSION_PATCH 0
#define DQSGD_VERSION_NUMBER (DQSGD_VERSION_MAJOR * 10000 + DQSGD_VERSION_MINOR * 100 + DQSGD_VERSION_PATCH)
#define DQSGD_VERSION_STRING "0.3.0"
#define DQ_FORMAT_VERSION 1 /* wire format version; moves independently of the library */

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifndef DQ_API
#define DQ_API static inline
#endif

#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0 && FLT_EVAL_METHOD != -1
#error "dqsgd needs float arithmetic evaluated in float (FLT_EVAL_METHOD == 0), e.g. SSE2 not x87"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- status codes
 * Pinned values: never renumbered; new codes are appended. */
#define DQ_STATUS_LIST(X)                                                                      \
    X(DQ_OK, 0, "ok")                                                                          \
    X(DQ_ERR_NULL, -1, "null pointer argument")                                                \
    X(DQ_ERR_EMPTY, -2, "element count is zero")                                               \
    X(DQ_ERR_BITS, -3, "bit width outside 1..16")                                              \
    X(DQ_ERR_PARAM, -4, "invalid parameter (bucket, rounding, norm or scheme)")                \
    X(DQ_ERR_NONFINITE, -5, "NaN or Inf in the input")                                         \
    X(DQ_ERR_DST_TOO_SMALL, -6, "destination capacity too small")                              \
    X(DQ_ERR_TRUNCATED, -7, "message shorter than its header says")                            \
    X(DQ_ERR_BAD_MAGIC, -8, "not a dqsgd message (bad magic)")                                 \
    X(DQ_ERR_VERSION, -9, "unsupported wire format version")                                   \
    X(DQ_ERR_CHECKSUM, -10, "checksum mismatch (header, payload or checkpoint)")               \
    X(DQ_ERR_CORRUPT, -11, "malformed message (reserved bits, field, scale or padding)")       \
    X(DQ_ERR_TOO_LARGE, -12, "element count exceeds DQ_MAX_ELEMS")                             \
    X(DQ_ERR_SIZE_MISMATCH, -13, "accumulator length differs from the message element count") \
    X(DQ_ERR_OVERFLOW, -14, "bucket scale exceeds 2^126 (decoded values could overflow float32)") \
    X(DQ_ERR_INFEASIBLE, -15, "bit budget below what the minimum width needs")                 \
    X(DQ_ERR_WORKSPACE, -16, "workspace too small")                                            \
    X(DQ_ERR_RANGE, -17, "element range outside the vector or not aligned to dq_range_align()")

#define DQ__STATUS_ENUM(name, value, msg) name = value,
typedef enum dq_status { DQ_STATUS_LIST(DQ__STATUS_ENUM) DQ__STATUS_END = -99 } dq_status;
#undef DQ__STATUS_ENUM

/* ---------------------------------------------------------------- parameters
 * Zero in every field means the documented default. */
typedef enum dq_scheme { DQ_SCHEME_DEFAULT = 0, DQ_SCHEME_QSGD = 1 } dq_scheme;
typedef enum dq_rounding {
    DQ_ROUND_DEFAULT = 0,    /* = stochastic */
    DQ_ROUND_STOCHASTIC = 1, /* unbiased up to the 2^-24 granularity of the dither */
    DQ_ROUND_NEAREST = 2     /* deterministic, biased; ties go toward zero; 1 bit: sign of x */
} dq_rounding;
typedef enum dq_norm {
    DQ_NORM_DEFAULT = 0, /* = L2 */
    DQ_NORM_L2 = 1,      /* scale = ||bucket||_2 (QSGD) */
    DQ_NORM_MAX = 2,     /* scale = ||bucket||_inf (QSGD-inf, lower variance in practice) */
    DQ_NORM_MEAN = 3     /* scale = ||bucket||_1 / len: chosen by the encoder for 1-bit nearest
                          * (scaled sign) whatever norm was asked; not accepted as input */
} dq_norm;

#define DQ_BITS_DEFAULT 4u
#define DQ_BUCKET_DEFAULT 512u
#define DQ_BUCKET_WHOLE 0xFFFFFFFFu /* one scale for the whole vector */
#define DQ_MAX_ELEMS ((uint64_t)1 << 56)
#define DQ_HEADER_SIZE 48u

typedef struct dq_params {
    unsigned bits;        /* 1..16 bits per element; 0 = 4 */
    uint32_t bucket;      /* elements per scale: a multiple of 8, or DQ_BUCKET_WHOLE; 0 = 512 */
    dq_scheme scheme;     /* 0 = QSGD */
    dq_rounding rounding; /* 0 = stochastic */
    dq_norm norm;         /* 0 = L2 */
    uint64_t seed;        /* generator key: (seed, step, stream, element index) */
    uint64_t step;
    uint32_t stream;   /* e.g. the worker's rank, so workers draw independent dither */
    unsigned checksum; /* 1 = append a CRC32C of scales + payload (flag bit 1); 0 = none */
    unsigned coder;    /* how the codes are sent: DQ_CODER_FIXED (0), _ELIAS, _RANS or _AUTO */
} dq_params;

/* A parsed, validated message header (doc/FORMAT.md). */
typedef struct dq_header {
    unsigned version, header_size, scheme, bits, coder, flags;
    dq_norm norm; /* DQ_NORM_L2, DQ_NORM_MAX or DQ_NORM_MEAN (1-bit nearest) */
    uint32_t bucket; /* as on the wire: 0 = whole vector */
    uint64_t seed, step;
    uint32_t stream;
    size_t count;    /* element count */
    size_t msg_size;     /* bytes of the whole message: header + scales + payload (+ checksum) */
    size_t payload_size; /* bytes of the payload alone (the codes, however they are coded) */
} dq_header;

#define DQ_FLAG_STOCHASTIC 0x0001u
#define DQ_FLAG_CHECKSUM 0x0002u /* a CRC32C of scales + payload follows the payload */
/* Coders: how a message sends its codes (doc/FORMAT.md 17). Every coder decodes to the same
 * values; they differ in size and speed. */
#define DQ_CODER_FIXED 0u /* b bits per code, SIMD-packed; the default, and the only one ranges take */
#define DQ_CODER_ELIAS 1u /* QSGD's sparse layout: Elias omega gaps, signs and levels (b >= 2) */
#define DQ_CODER_RANS 2u  /* rANS over groups of codes, frequency table in the message (b <= 8) */
#define DQ_CODER_AUTO 255u /* dq_params only: the smallest of the three for this message */

/* Worst-case message size for n elements of `bits` bits under any params, as a constant
 * expression (no overflow check: fits 64-bit size_t for n <= DQ_MAX_ELEMS). Monotonic in n and
 * bits. The per-bucket scales are counted for the smallest bucket (8), and the payload
 * checksum is counted. */
#define DQ_ENCODE_BOUND(n, bits)                                                                   \
    ((size_t)DQ_HEADER_SIZE + 4u * (((size_t)(n) + 7u) / 8u) + ((size_t)(n) * (size_t)(bits) + 7u) / 8u + \
     4u)

/* ---------------------------------------------------------------- API */

/*! dq_strerror() : @return a static description of any status, never NULL. */
DQ_API const char *dq_strerror(dq_status s);
/*! dq_version_number() : DQSGD_VERSION_NUMBER of the implementation. */
DQ_API unsigned dq_version_number(void);
/*! dq_simd_backend() : the kernel set compiled in: "scalar", "sse2", "avx2" or "avx512". */
DQ_API const char *dq_simd_backend(void);

/*! dq_encode_bound() : worst-case size of a message of n elements at `bits` bits, any params.
 *  @return 0 if bits is outside 1..16, n > DQ_MAX_ELEMS, or the size overflows size_t. */
DQ_API size_t dq_encode_bound(size_t n, unsigned bits);
/*! dq_encoded_size() : exact size dq_encode() will write for these params and n. */
DQ_API dq_status dq_encoded_size(const dq_params *p, size_t n, size_t *size);
/*! dq_block_size() : exact size dq_encode_block() will write (no header). */
DQ_API dq_status dq_block_size(const dq_params *p, size_t n, size_t *size);

/*! dq_encode() : quantize x[0..n) into a self-describing message at dst[0..dst_cap).
 *  residual : NULL, or n floats of error-feedback memory. When given, the encoder sends
 *             x + residual and stores residual = (x + residual) - decoded, in the same pass.
 *             It is updated only when the call returns DQ_OK.
 *  @return DQ_OK and *dst_len, or an error status (*dst_len untouched). dst is untouched on argument errors and
 *          may hold partial output after DQ_ERR_NONFINITE or DQ_ERR_OVERFLOW. Buckets are
 *          checked in order, so the status is that of the first bucket that fails. */
DQ_API dq_status dq_encode(const dq_params *p, const float *x, size_t n, float *residual, void *dst,
                           size_t dst_cap, size_t *dst_len);
/*! dq_header_read() : parse and validate the header at src; h->msg_size says how many bytes
 *  the whole message occupies. Does not look at scales or payload. */
DQ_API dq_status dq_header_read(const void *src, size_t src_len, dq_header *h);
/*! dq_decode() : decode a message into out[0..count); out_cap is in elements. Bytes past
 *  h.msg_size are ignored. A message with the payload checksum is verified first. */
DQ_API dq_status dq_decode(const void *src, size_t src_len, float *out, size_t out_cap);
/*! dq_decode_add() : acc[i] += weight * decoded[i], the aggregation step. acc_len must equal
 *  the message's element count. The result equals dq_decode() then that loop, bit for bit. */
DQ_API dq_status dq_decode_add(const void *src, size_t src_len, float weight, float *acc, size_t acc_len);

/*! dq_message_norm2() : ||x||^2 of the vector a message was encoded from, read from its
 *  scales (L2-scaled messages only: each scale is its bucket's norm), so the optimizer gets
 *  the gradient norm without another pass over the data. Exact up to float rounding of the
 *  scales; buckets flushed to zero (norm < 2^-100) count as 0. DQ_ERR_PARAM for other norms. */
DQ_API dq_status dq_message_norm2(const void *src, size_t src_len, double *norm2);

/*! Headerless variants for callers that frame messages themselves: scales then payload only.
 *  The receiver must pass the same params (bits, bucket, scheme) and n as the sender. The
 *  payload checksum belongs to the message framing: p->checksum != 0 is DQ_ERR_PARAM here. */
DQ_API dq_status dq_encode_block(const dq_params *p, const float *x, size_t n, float *residual, void *dst,
                                 size_t dst_cap, size_t *dst_len);
DQ_API dq_status dq_decode_block(const dq_params *p, const void *src, size_t src_len, size_t n, float *out);
DQ_API dq_status dq_decode_add_block(const dq_params *p, const void *src, size_t src_len, size_t n,
                                     float weight, float *acc);

/*! Ranges: one message of n elements built or read in disjoint pieces, e.g. by threads, with
 *  the same bytes as one dq_encode() call. A range [begin, end) must have begin < end <= n,
 *  begin a multiple of dq_range_align(p, n), and end a multiple of it or n (DQ_ERR_RANGE).
 *  Ranges touch disjoint bytes of the message and disjoint elements, so they may run
 *  concurrently; the range with begin = 0 also writes the header.
 *  dq_range_align() : the range granularity, lcm(256, bucket) capped at n (whole-vector
 *                     buckets allow one range); 0 for invalid params or n = 0.
 *  dq_encode_range() : x and residual (NULL or the error-feedback memory) hold elements
 *                     begin..end-1 only; dst is the whole message, dst_cap >= its size
 *                     (dq_encoded_size). Each range updates its residual slice only on DQ_OK;
 *                     if any range fails the message is unusable.
 *  dq_encode_finish() : after every range returned DQ_OK: stores the payload checksum when
 *                     the params asked for one (otherwise only validates the header).
 *  dq_decode_range(), dq_decode_add_range() : decode elements begin..end-1 into out[0..end-begin)
 *                     or add weight * them to acc[0..end-begin). They check the header, the
 *                     range's scales and padding, but not the payload checksum: call
 *                     dq_verify() once for the whole message first. */
DQ_API size_t dq_range_align(const dq_params *p, size_t n);
DQ_API dq_status dq_encode_range(const dq_params *p, size_t n, size_t begin, size_t end, const float *x,
                                 float *residual, void *dst, size_t dst_cap);
DQ_API dq_status dq_encode_finish(void *msg, size_t msg_len);
DQ_API dq_status dq_decode_range(const void *src, size_t src_len, size_t begin, size_t end, float *out);
DQ_API dq_status dq_decode_add_range(const void *src, size_t src_len, size_t begin, size_t end, float weight,
                                     float *acc);
/*! dq_verify() : validate the header and, when the message carries one, its payload checksum
 *  (DQ_ERR_CHECKSUM), without decoding. */
DQ_API dq_status dq_verify(const void *src, size_t src_len);

/*! Coded messages (dq_params.coder != DQ_CODER_FIXED). dq_encode() quantizes exactly as for
 *  the fixed coder, then re-codes the codes losslessly inside dst; decoders accept every coder.
 *  Coded messages are whole: the range and block APIs take the fixed coder only (DQ_ERR_PARAM).
 *  DQ_CODER_ELIAS needs bits >= 2, DQ_CODER_RANS bits <= 8 (DQ_ERR_PARAM); DQ_CODER_AUTO
 *  considers the coders the width allows.
 *  dq_encode_bound_coded() : a dst_cap with which any coder succeeds and DQ_CODER_AUTO always
 *                     sends the smallest; 0 as for dq_encode_bound(). A forced coder needs it
 *                     (DQ_ERR_DST_TOO_SMALL before anything is written). DQ_CODER_AUTO needs
 *                     only dq_encoded_size(); with less room than this bound it may settle
 *                     for a larger coder whose working room fits (never larger than fixed).
 *  dq_coded_size() : the exact size of the message src re-coded with `coder` (AUTO: of the one
 *                     it picks), computed from the codes. From a coded src only its own coder
 *                     and DQ_CODER_FIXED are sized; others are DQ_ERR_PARAM.
 *  dq_recode() :      the message src re-coded with `coder` into dst: the same header fields
 *                     (coder and CRC aside), scales and decoded values. One side of the
 *                     conversion must be fixed: coded-to-coded (AUTO included) is
 *                     DQ_ERR_PARAM, apart from a copy into the same coder. */
DQ_API size_t dq_encode_bound_coded(size_t n, unsigned bits);
DQ_API dq_status dq_coded_size(const void *src, size_t src_len, unsigned coder, size_t *size);
DQ_API dq_status dq_recode(const void *src, size_t src_len, unsigned coder, void *dst, size_t dst_cap,
                           size_t *dst_len);

/* ---------------------------------------------------------------- bit streams and Elias codes
 * Bit order is MSB-first: the first bit written is bit 7 of byte 0, so a code string reads left
 * to right in a hex dump. A stream ends zero-padded to a whole byte.
 *
 * dq_bitwriter : writes into a caller buffer (buf, cap) through a 64-bit accumulator, four
 *   bytes at a time. Running out of room is sticky: the writer keeps counting bits but stores
 *   nothing at or past cap, and dq_bw_finish() reports DQ_ERR_DST_TOO_SMALL, so a hot loop
 *   need not test a status per call. A writer with cap 0 (buf may be NULL) only counts bits.
 * dq_bitreader : reads (src, len), 8 bytes per refill while 8 remain, byte by byte near the
 *   end; never touches memory outside src[0..len). Reading past the end is sticky too: the
 *   reader returns zero bits and sets `overrun`. The fields are private; read them only
 *   through the calls. */
typedef struct dq_bitwriter {
    uint8_t *buf;
    size_t cap, pos; /* pos: bytes flushed (counted even when they did not fit) */
    uint64_t acc;    /* the low n bits are pending, oldest highest */
    unsigned n;      /* 0..31 between calls */
    dq_status err;   /* DQ_OK, DQ_ERR_DST_TOO_SMALL or DQ_ERR_PARAM (nbits > 64); first wins */
} dq_bitwriter;

typedef struct dq_bitreader {
    const uint8_t *src;
    size_t len, pos; /* pos: next byte to load */
    uint64_t acc;    /* the top n bits are the next bits of the stream; bits below are later
                      * stream bits or zero */
    unsigned n;      /* 0..64 */
    unsigned overrun; /* set once a read went past the end (or nbits was out of range) */
} dq_bitreader;

/*! dq_bw_init() : start a writer over buf[0..cap). DQ_ERR_NULL if w is NULL, or buf is NULL
 *  with cap > 0. */
DQ_API dq_status dq_bw_init(dq_bitwriter *w, void *buf, size_t cap);
/*! dq_bw_put() : append the low nbits bits of value, most significant first; nbits 0..64
 *  (0..32 is the single-flush fast path). nbits > 64 writes nothing and makes
 *  dq_bw_finish() return DQ_ERR_PARAM. */
DQ_API void dq_bw_put(dq_bitwriter *w, uint64_t value, unsigned nbits);
/*! dq_bw_bits() : bits appended so far (including any that did not fit). */
DQ_API uint64_t dq_bw_bits(const dq_bitwriter *w);
/*! dq_bw_finish() : flush, zero-pad to a byte and store the stream length in bytes in *len.
 *  @return DQ_OK, or the sticky error: DQ_ERR_DST_TOO_SMALL (the stream needs
 *  (dq_bw_bits() + 7) / 8 bytes; *len untouched, nothing written at or past cap) or
 *  DQ_ERR_PARAM. Appending after finish continues at the next byte. */
DQ_API dq_status dq_bw_finish(dq_bitwriter *w, size_t *len);

/*! dq_br_init() : start a reader over src[0..len). DQ_ERR_NULL if r is NULL, or src is NULL
 *  with len > 0. */
DQ_API dq_status dq_br_init(dq_bitreader *r, const void *src, size_t len);
/*! dq_br_get() : the next nbits bits (0..64) as an integer, first bit most significant. Past
 *  the end: returns 0, consumes the rest and sets the overrun flag (nbits > 64 does too). */
DQ_API uint64_t dq_br_get(dq_bitreader *r, unsigned nbits);
/*! dq_br_peek() : the next nbits bits (0..56) without consuming them; bits past the end read
 *  as zero (no overrun). nbits > 56 returns 0 and sets the overrun flag. */
DQ_API uint64_t dq_br_peek(dq_bitreader *r, unsigned nbits);
/*! dq_br_skip() : consume nbits bits (0..64), as dq_br_get() without the value. */
DQ_API void dq_br_skip(dq_bitreader *r, unsigned nbits);
/*! dq_br_overrun() : nonzero once a read went past the end. */
DQ_API int dq_br_overrun(const dq_bitreader *r);
/*! dq_br_bits_left() : bits not yet consumed (0 after an overrun). */
DQ_API uint64_t dq_br_bits_left(const dq_bitreader *r);
/*! dq_br_finish() : end of a stream that must fill src[0..len) exactly: DQ_ERR_TRUNCATED after
 *  an overrun, DQ_ERR_CORRUPT if 8 or more bits are left (trailing bytes) or any padding bit
 *  left in the last byte is 1, else DQ_OK. Consumes the padding. */
DQ_API dq_status dq_br_finish(dq_bitreader *r);

/*! Elias codes of integers k >= 1 (up to 2^64 - 1), with L = floor(log2 k):
 *   gamma(k) : L zeros, then k in binary (L + 1 bits, leading 1): 2L + 1 bits.
 *   delta(k) : gamma(L + 1), then the low L bits of k: L + 2 floor(log2(L + 1)) + 1 bits.
 *   omega(k) : groups then a final 0: starting from k, while the value v > 1 prepend v in
 *              binary and continue with v := floor(log2 v) (1 -> 0, 2 -> 10 0, 4 -> 10 100 0).
 *  *_put() : append the code of k; DQ_ERR_PARAM for k = 0 (nothing written), DQ_ERR_NULL for
 *            w NULL; running out of room is the writer's sticky state, not a status here.
 *  *_get() : read one code into *k. DQ_ERR_TRUNCATED if the stream ends inside the code,
 *            DQ_ERR_CORRUPT if it is not a code of a 64-bit value (gamma: 64 or more leading
 *            zeros; delta: a length above 64; omega: a group longer than 64 bits), DQ_ERR_NULL.
 *            *k is written only on DQ_OK.
 *  *_len() : the exact code length in bits; 0 for k = 0. */
DQ_API dq_status dq_elias_gamma_put(dq_bitwriter *w, uint64_t k);
DQ_API dq_status dq_elias_gamma_get(dq_bitreader *r, uint64_t *k);
DQ_API unsigned dq_elias_gamma_len(uint64_t k);
DQ_API dq_status dq_elias_delta_put(dq_bitwriter *w, uint64_t k);
DQ_API dq_status dq_elias_delta_get(dq_bitreader *r, uint64_t *k);
DQ_API unsigned dq_elias_delta_len(uint64_t k);
DQ_API dq_status dq_elias_omega_put(dq_bitwriter *w, uint64_t k);
DQ_API dq_status dq_elias_omega_get(dq_bitreader *r, uint64_t *k);
DQ_API unsigned dq_elias_omega_len(uint64_t k);

/* ---------------------------------------------------------------- sparse index streams
 * k strictly increasing uint32_t indices below n (1 <= n <= 2^32, 0 <= k <= n) as a
 * self-describing stream: a 10-byte header (coder, n, k), then one of three bodies:
 *   DQ_INDEX_GAMMA  : the gaps idx[0] + 1, idx[i] - idx[i-1] in Elias gamma, MSB-first;
 *                     best for sparse, irregular sets.
 *   DQ_INDEX_VARINT : the gaps minus one as 1..4-byte little-endian integers, lengths in a
 *                     control stream of 2-bit codes for groups of 4 (stream-vbyte layout);
 *                     decoded 4 at a time with a byte shuffle (SSSE3, AVX2, AVX-512, NEON).
 *   DQ_INDEX_BITMAP : n bits, bit i set for each index i; best for dense sets.
 *   DQ_INDEX_AUTO   : (encoder only) the smallest of the three by exact size; ties go to
 *                     VARINT, then BITMAP, then GAMMA (fastest decoder first).
 * k = 0 is allowed (an empty selection, e.g. a threshold nobody passed). */
typedef enum dq_index_coder {
    DQ_INDEX_AUTO = 0,
    DQ_INDEX_GAMMA = 1,
    DQ_INDEX_VARINT = 2,
    DQ_INDEX_BITMAP = 3
} dq_index_coder;

#define DQ_INDEX_HEADER_SIZE 10u
#define DQ_INDEX_MAX_N ((uint64_t)1 << 32)

/*! dq_index_bound() : the largest stream any coder can write for k indices below n (monotonic
 *  in k and n). @return 0 if n = 0, n > 2^32, k > n or the size overflows size_t. */
DQ_API size_t dq_index_bound(size_t k, uint64_t n);
/*! dq_index_size() : exact size dq_index_encode() writes for these indices and coder (AUTO:
 *  the size of the coder it picks). Validates like the encoder. */
DQ_API dq_status dq_index_size(const uint32_t *idx, size_t k, uint64_t n, dq_index_coder coder, size_t *size);
/*! dq_index_encode() : write idx[0..k) as a stream into dst[0..dst_cap).
 *  @return DQ_OK and *dst_len; DQ_ERR_EMPTY (n = 0), DQ_ERR_TOO_LARGE (n > 2^32, or a size
 *  above SIZE_MAX), DQ_ERR_PARAM (k > n, unknown coder, indices not strictly increasing or
 *  not below n), DQ_ERR_DST_TOO_SMALL, DQ_ERR_NULL (idx may be NULL only when k = 0, dst only
 *  when dst_cap = 0). dst and *dst_len are untouched on every error. */
DQ_API dq_status dq_index_encode(const uint32_t *idx, size_t k, uint64_t n, dq_index_coder coder, void *dst,
                                 size_t dst_cap, size_t *dst_len);
/*! dq_index_header() : validate the header of the stream src[0..src_len) and report n, k and
 *  the coder (each pointer may be NULL). Also checks that the body can hold k indices (at
 *  least ceil(k/8) bytes for GAMMA, ceil(k/4) + k for VARINT, ceil(n/8) for BITMAP), so
 *  k <= 8 * src_len: a receiver may size its buffer from k without trusting the sender
 *  beyond the bytes it received. */
DQ_API dq_status dq_index_header(const void *src, size_t src_len, uint64_t *n, size_t *k, dq_index_coder *coder);
/*! dq_index_decode() : decode into idx[0..k), *k = k. src_len must be the exact stream length.
 *  Validates everything (FORMAT_index.md "Validation"): a stream that decodes is the one
 *  dq_index_encode() writes for its indices and coder, byte for byte. On error *k is
 *  untouched; header, length and capacity errors (DQ_ERR_DST_TOO_SMALL if idx_cap < k) leave
 *  idx untouched, while an error found in the body (DQ_ERR_CORRUPT, DQ_ERR_TRUNCATED for a
 *  gamma body) leaves idx[0..k) unspecified: the body is checked while it is decoded, in one
 *  pass. Nothing past idx[k - 1] is ever written. */
DQ_API dq_status dq_index_decode(const void *src, size_t src_len, uint32_t *idx, size_t idx_cap, size_t *k);

/* ---------------------------------------------------------------- bit-budget optimizer
 * ALGORITHMS.md §2.6. Error model: QSGD with s levels over buckets of B elements has
 * E||Q(g)-g||^2 <= B/(4 s^2) ||g||^2, and step n of T weighs alpha^(T-1-n) in the final error,
 * alpha being the factor by which one step contracts the optimality gap: 1 - mu*eta in the
 * mu-PL bound, (1 - mu*eta)^2 for a quadratic with exact gradients, 1 for the non-convex
 * bound (uniform weights). With gradient norms that decay like the gap (G_n ~ alpha^(n/2)),
 * the weights alpha^(T-1-n) G_n^2 are flat and a fixed width is already optimal; the rule
 * gains where the norms level off while the weights still grow. Minimizing the bits
 * under an error target (P1) or the error under a bit budget (P2) gives levels
 * s_n = c * alpha^((T-1-n)/2) * G_n and width b_n = 1 + ceil(log2(s_n + 1)), clamped. */

typedef enum dq_sched_mode {
    DQ_SCHED_DEFAULT = 0,    /* = DQSGD */
    DQ_SCHED_DQSGD = 1,      /* the DQ rule above */
    DQ_SCHED_FIXED = 2,      /* always bits_max (baseline) */
    DQ_SCHED_INCREASING = 3, /* AdaQuantFL-style: s_n = s_0 sqrt(loss_0 / loss_n), s_0 = levels of bits_min */
    DQ_SCHED_DECREASING = 4  /* linear in n from bits_max down to bits_min (baseline) */
} dq_sched_mode;

#define DQ_SCHED_MAX_WINDOW 256u

typedef struct dq_sched_params {
    dq_sched_mode mode;
    uint64_t steps;    /* T, planned steps (>= 1) */
    size_t dim;        /* d, elements per message (cost model; >= 1) */
    uint32_t bucket;   /* bucket of the messages (cost and variance model); 0 = 512 */
    double alpha;      /* per-step contraction of the optimality gap in (0,1]; 0 = 1 (non-convex) */
    unsigned bits_min; /* 2..16; 0 = 2 */
    unsigned bits_max; /* bits_min..16; 0 = 16 */
    unsigned period;   /* choose a new width every `period` steps; 0 = 1 */
    unsigned window;   /* norm estimate = mean of the last `window` norms, <= 256; 0 = 1 */
    double norm_prior; /* norm assumed before the first observation; > 0 for DQSGD */
    /* DQSGD calibration, exactly one of the next three > 0: */
    double scale;        /* c given directly */
    double target_error; /* P1: epsilon_Q, c = sqrt(L eta^2 B T / (8 N epsilon_Q)); needs lipschitz, lr */
    double budget_bits;  /* P2: bits of all T messages of one worker (headers included) */
    double lipschitz, lr; /* L and eta, for P1 */
    unsigned workers;     /* N, for P1; 0 = 1 */
} dq_sched_params;

typedef struct dq_sched { /* caller-owned state; read the fields, change them only through calls */
    dq_sched_params p;
    uint64_t step;     /* index n of the next step */
    unsigned bits;     /* width of step n, set by dq_sched_next */
    double c;          /* DQSGD scale knob in force */
    double spent_bits; /* sum of the bits_sent reported so far */
    double norms[DQ_SCHED_MAX_WINDOW];
    unsigned n_norms, head;
    double loss0, loss; /* first and latest loss seen (increasing schedule); 0 until then */
} dq_sched;

/*! dq_message_bits() : exact size in bits of a message of n elements at `bits` bits with this
 *  bucket (0 = 512, DQ_BUCKET_WHOLE), header included; 0 for invalid arguments. */
DQ_API double dq_message_bits(size_t n, unsigned bits, uint32_t bucket);
/*! dq_sched_init() : validate params (defaults applied) and start at step 0. For P2, fails
 *  with DQ_ERR_INFEASIBLE when the budget cannot pay bits_min for every step. */
DQ_API dq_status dq_sched_init(dq_sched *s, const dq_sched_params *p);
/*! dq_sched_next() : the width for step s->step. Every `period` steps it chooses a new width
 *  from the norm estimate; P2 first re-solves c by bisection so that the planned bits of the
 *  remaining steps fit the remaining budget (conservatively: it never overspends when the
 *  caller reports the sizes of dq_message_bits). DQ_ERR_INFEASIBLE (with *bits = bits_min) if
 *  the reported spending left too little for bits_min on every remaining step. */
DQ_API dq_status dq_sched_next(dq_sched *s, unsigned *bits);
/*! dq_sched_update() : after the step: the gradient norm the rule tracks (the authors use the
 *  norm of the aggregated decoded gradient), the training loss (INCREASING mode only), and
 *  the bits one worker sent. Advances to the next step. */
DQ_API dq_status dq_sched_update(dq_sched *s, double grad_norm, double loss, double bits_sent);
/*! dq_sched_levels() : the real-valued DQ level count c * alpha^((T-1-n)/2) * G at step n for
 *  norm estimate G, before rounding to a width (for tests and plots). */
DQ_API double dq_sched_levels(const dq_sched *s, uint64_t n, double G);

/*! Checkpoints: error-feedback memory and scheduler state as versioned bytes (doc/FORMAT.md
 *  "Checkpoints"), so a stopped job resumes with bit-identical messages. Loads validate
 *  everything (magic, version, kind, length, CRC32C, values) before writing the destination.
 *  dq_residual_save_size() : bytes of a residual checkpoint of n floats; 0 if it overflows.
 *  dq_residual_load() : n must equal the saved count (DQ_ERR_SIZE_MISMATCH). */
#define DQ_SCHED_SAVE_SIZE 2220u
DQ_API size_t dq_residual_save_size(size_t n);
DQ_API dq_status dq_residual_save(const float *residual, size_t n, void *dst, size_t dst_cap, size_t *dst_len);
DQ_API dq_status dq_residual_load(const void *src, size_t src_len, float *residual, size_t n);
DQ_API dq_status dq_sched_save(const dq_sched *s, void *dst, size_t dst_cap, size_t *dst_len);
DQ_API dq_status dq_sched_load(const void *src, size_t src_len, dq_sched *s);

/*! dq_alloc_bits() : split a bit budget over n items (steps of a run with known or modelled
 *  norms, or the layers of one step). Item i costs dq_message_bits(dim[i], b_i, bucket) and
 *  contributes weight[i] / s(b_i)^2 to the error, s(b) = 2^(b-1) - 1. Minimizes the summed
 *  error within budget_bits by greedy marginal gain per bit from bits_min: exact when every
 *  width step costs the same (equal dims that are multiples of 8: a convex separable
 *  allocation); otherwise the standard greedy, within one item's marginal gain of the
 *  optimum. Weights: for
 *  steps, alpha^(T-1-n) G_n^2; for layers, min(B, d_l) ||g_l||^2 / 4. The workspace holds a
 *  heap: dq_alloc_workspace_size(n) bytes. *bits_used gets the planned total (may be NULL). */
DQ_API size_t dq_alloc_workspace_size(size_t n);
DQ_API dq_status dq_alloc_bits(const double *weight, const size_t *dim, size_t n, uint32_t bucket, double budget_bits,
                               unsigned bits_min, unsigned bits_max, void *work, size_t work_cap, unsigned *bits,
                               double *bits_used);

/*! dq_topk_per_bit() : Khirirat's rule for top-k: the k maximizing S_k / (c0 + c1 k), with
 *  S_k the sum of the k largest squared entries. sq_desc holds the squared magnitudes sorted
 *  in decreasing order; c0 is the per-message overhead in bits, c1 the bits per kept entry.
 *  The ratio is unimodal, so a scan stops at the first k where it stops growing (ties keep
 *  the smaller k). With c0 = 0 the answer is always 1. */
DQ_API dq_status dq_topk_per_bit(const double *sq_desc, size_t d, double c0, double c1, size_t *k);
/*! dq_levels_per_bit() : Khirirat's rule for QSGD: the width maximizing the guaranteed
 *  decrease per bit, 1 / ((1 + omega(b)) (dq_message_bits(d, b, bucket) + overhead_bits)),
 *  with omega(b) = min(B / s^2, sqrt(B) / s), B = min(bucket, d). */
DQ_API dq_status dq_levels_per_bit(size_t d, uint32_t bucket, double overhead_bits, unsigned bits_min,
                                   unsigned bits_max, unsigned *bits);

#ifdef __cplusplus
}
#endif

/* ================================================================ implementation
 * Private names start with dq__ / DQ__. Scalar reference kernels end in __scalar; every SIMD
 * kernel in dqsgd_simd.h has one here and the tests compare them bit for bit. */

#ifdef __cplusplus
extern "C" {
#endif

#define DQ__BLOCK 256u  /* codes per packed block: 8 lanes x 32 rows (doc/FORMAT.md) */
#define DQ__LANES 8u
#define DQ__ROWS 32u
#define DQ__MIN_SCALE 7.88860905e-31f /* 2^-100: smaller bucket scales are sent as zero */
#define DQ__MAX_SCALE_BITS 0x7E800000u /* 2^126: larger scales are refused, so every decoded
                                        * value and residual x - v (|x|, |v| <= scale) is finite */

/* ---- little-endian byte access, independent of host order and alignment */
static inline void dq__st16(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void dq__st32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static inline void dq__st64(uint8_t *p, uint64_t v) {
    dq__st32(p, (uint32_t)v);
    dq__st32(p + 4, (uint32_t)(v >> 32));
}
static inline uint32_t dq__ld16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static inline uint32_t dq__ld32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t dq__ld64(const uint8_t *p) { return (uint64_t)dq__ld32(p) | (uint64_t)dq__ld32(p + 4) << 32; }
static inline uint32_t dq__fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline float dq__bitsf(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* ---- CRC32C (Castagnoli, reflected polynomial 0x82F63B78), nibble table.
 * Updates the raw register c (no initial or final inversion, like the SSE4.2 instruction). */
static inline uint32_t dq__crc32c__scalar(uint32_t c, const uint8_t *p, size_t n) {
    static const uint32_t t[16] = {0x00000000u, 0x105EC76Fu, 0x20BD8EDEu, 0x30E349B1u, 0x417B1DBCu, 0x5125DAD3u,
                                   0x61C69362u, 0x7198540Du, 0x82F63B78u, 0x92A8FC17u, 0xA24BB5A6u, 0xB21572C9u,
                                   0xC38D26C4u, 0xD3D3E1ABu, 0xE330A81Au, 0xF36E6F75u};
    size_t i;
    for (i = 0; i < n; i++) {
        c ^= p[i];
        c = (c >> 4) ^ t[c & 15u];
        c = (c >> 4) ^ t[c & 15u];
    }
    return c;
}

/* ---- counter-based generator (doc/FORMAT.md "Dither generator")
 * Key: the splitmix64 finalizer chained over seed, step and stream, split into halves k0, k1.
 * Element i: one keyed round of a 32-bit multiply-xorshift hash of the low half of i, with k0
 * injected before it and k1 (mixed with the high half of i) in the middle; the top 24 bits are
 * the draw. Two multiplies per element: the dither is the encoder's dominant cost. */
static inline uint64_t dq__mix64(uint64_t z) {
    z ^= z >> 30;
    z *= 0xBF58476D1CE4E5B9u;
    z ^= z >> 27;
    z *= 0x94D049BB133111EBu;
    z ^= z >> 31;
    return z;
}
typedef struct dq__key {
    uint32_t k0, k1;
} dq__key;
static inline dq__key dq__key_make(uint64_t seed, uint64_t step, uint32_t stream) {
    uint64_t z = dq__mix64(seed + 0x9E3779B97F4A7C15u);
    dq__key k;
    z = dq__mix64(z ^ (step + 0x3C6EF372FE94F82Au));
    z = dq__mix64(z ^ ((uint64_t)stream + 0xDAA66D2C7DDF743Fu));
    k.k0 = (uint32_t)z;
    k.k1 = (uint32_t)(z >> 32);
    return k;
}
/* Middle key for elements whose index has high half `hi` (constant within each 2^32 range). */
static inline uint32_t dq__key_hi(dq__key k, uint32_t hi) { return k.k1 ^ (hi * 0x9E3779B9u); }
/* 24-bit uniform draw for the element whose index has low half lo. */
static inline uint32_t dq__draw24(uint32_t k0, uint32_t k1h, uint32_t lo) {
    uint32_t x = lo ^ k0;
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= (x >> 15) ^ k1h;
    x *= 0x846CA68Bu;
    x ^= x >> 16;
    return x >> 8;
}

/* ---- per-bucket statistics: one pass, fixed association order.
 * sumsq and sumabs accumulate in double in 16 lanes (element i into lane i % 16, in index
 * order; 16 independent chains keep the adds' latency hidden); the lanes are combined as
 * l_k + l_(k+8) for k < 8, then (a0+a4, a1+a5, a2+a6, a3+a7), then pairwise, then the last two.
 * Squares of floats are exact in double. maxbits is the largest |x| bit pattern.
 * A bucket holds a NaN or Inf exactly when the statistic its norm needs says so: sumsq or
 * sumabs not finite (finite floats cannot overflow these double sums), maxbits >= 0x7F800000.
 * So each norm computes only its own statistic (`what`); the others are left 0. */
#define DQ__ST_SQ 1u
#define DQ__ST_ABS 2u
#define DQ__ST_MAX 4u
typedef struct dq__stats {
    double sumsq, sumabs;
    uint32_t maxbits;
} dq__stats;

#define DQ__SLANES 16u
static inline double dq__lanes_sum(const double l[DQ__SLANES]) {
    double a[8], b0, b1, b2, b3, c0, c1;
    unsigned k;
    for (k = 0; k < 8; k++) a[k] = l[k] + l[k + 8];
    b0 = a[0] + a[4];
    b1 = a[1] + a[5];
    b2 = a[2] + a[6];
    b3 = a[3] + a[7];
    c0 = b0 + b2;
    c1 = b1 + b3;
    return c0 + c1;
}
/* Scalar tail shared with the SIMD kernels: continue lanes from element index `first`.
 * With e non-NULL the statistics are those of x[i] + e[i] (the error-feedback input). */
static inline void dq__stats_tail(const float *x, const float *e, size_t first, size_t n, double sq[DQ__SLANES],
                                  double ab[DQ__SLANES], uint32_t *mx) {
    size_t i;
    for (i = first; i < n; i++) {
        uint32_t u = dq__fbits(e ? x[i] + e[i] : x[i]) & 0x7FFFFFFFu;
        double d = (double)dq__bitsf(u);
        sq[i % DQ__SLANES] += d * d;
        ab[i % DQ__SLANES] += d;
        if (u > *mx) *mx = u;
    }
}
static inline void dq__stats_finish(const double sq[DQ__SLANES], const double ab[DQ__SLANES], uint32_t mx, unsigned what,
                                    dq__stats *st) {
    st->sumsq = (what & DQ__ST_SQ) ? dq__lanes_sum(sq) : 0.0;
    st->sumabs = (what & DQ__ST_ABS) ? dq__lanes_sum(ab) : 0.0;
    st->maxbits = (what & DQ__ST_MAX) ? mx : 0u;
}
/* End of a SIMD kernel: lanes holds its one statistic (sums for SQ or ABS), mx the running
 * maximum; the scalar tail continues from element `first`. */
static inline void dq__stats_end(const float *x, const float *e, size_t first, size_t n, unsigned what,
                                 double lanes[DQ__SLANES], uint32_t mx, dq__stats *st) {
    double none[DQ__SLANES] = {0};
    double *sq = what == DQ__ST_ABS ? none : lanes, *ab = what == DQ__ST_ABS ? lanes : none;
    dq__stats_tail(x, e, first, n, sq, ab, &mx);
    dq__stats_finish(sq, ab, mx, what, st);
}
static inline void dq__stats__scalar(const float *x, const float *e, size_t n, unsigned what, dq__stats *st) {
    double sq[DQ__SLANES] = {0}, ab[DQ__SLANES] = {0};
    uint32_t mx = 0;
    dq__stats_tail(x, e, 0, n, sq, ab, &mx);
    dq__stats_finish(sq, ab, mx, what, st);
}
/* Error feedback: e[i] = x[i] + e[i], the compensated value that gets quantized. */
static inline void dq__compensate__scalar(const float *x, float *e, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) e[i] = x[i] + e[i];
}

/* ---- quantization of one bucket segment into codes (doc/FORMAT.md "Codes")
 * b >= 2: s = 2^(b-1) - 1 levels; r = min(|x| * inv, s), inv = s / scale; l = trunc(r);
 *         l += (t < r - l) with t = 24-bit uniform draw * 2^-24 (stochastic) or 0.5 (nearest);
 *         code = l | sign << (b-1), sign set only when x < 0 (sign bit) and l > 0.
 * b == 1: stochastic: p = 0.5 + x * inv, inv = 0.5 / scale; code = (t < p) ? 0 : 1 (1 = negative);
 *         nearest: code = sign bit of x (scaled sign).
 * Decoded value of a code: level * step with the code's sign, step = scale / s (b >= 2) or
 * scale with level 1 (b == 1). With `res`, res[i] = x[i] - decoded (x may alias res). */
typedef struct dq__qctx {
    float inv, smax, step, thresh; /* thresh: 0.5 for nearest; < 0 means stochastic */
    unsigned bits;
    uint32_t k0, k1h, lo; /* generator key and low half of the first element's index */
} dq__qctx;

static inline float dq__decode_value(uint32_t code, unsigned bits, float step) {
    uint32_t lvl = bits == 1 ? 1u : (code & ((1u << (bits - 1)) - 1u));
    float v = (float)lvl * step;
    return (code >> (bits - 1)) ? -v : v;
}
static inline void dq__quant__scalar(const dq__qctx *q, const float *x, size_t cnt, uint32_t *codes, float *res) {
    size_t i;
    for (i = 0; i < cnt; i++) {
        float xi = x[i];
        uint32_t xb = dq__fbits(xi), sgn = xb >> 31, code;
        float t = q->thresh >= 0.0f ? q->thresh
                                     : (float)dq__draw24(q->k0, q->k1h, q->lo + (uint32_t)i) * 5.96046448e-08f;
        if (q->bits == 1) {
            float pp = 0.5f + xi * q->inv;
            code = q->thresh >= 0.0f ? sgn : ((t < pp) ? 0u : 1u);
        } else {
            float r = dq__bitsf(xb & 0x7FFFFFFFu) * q->inv;
            uint32_t l;
            float f;
            if (!(r < q->smax)) r = q->smax;
            l = (uint32_t)(int32_t)r;
            f = r - (float)l;
            l += (t < f) ? 1u : 0u;
            code = l | ((l != 0u ? sgn : 0u) << (q->bits - 1));
        }
        codes[i] = code;
        if (res) res[i] = xi - dq__decode_value(code, q->bits, q->step);
    }
}

/* ---- packing (doc/FORMAT.md "Payload")
 * A block of 256 codes is 8 lanes; lane L holds codes 8r+L, r = 0..31, at bits r*b of a
 * 32b-bit lane stream kept as b 32-bit words; word j of lane L is stored at word j*8+L, little
 * endian. Fewer than 256 trailing codes form a plain LSB-first bit stream, zero-padded. */
static inline void dq__pack_block__scalar(const uint32_t *codes, unsigned b, uint8_t *out) {
    unsigned L;
    for (L = 0; L < DQ__LANES; L++) {
        uint64_t acc = 0;
        unsigned have = 0, r, j = 0;
        for (r = 0; r < DQ__ROWS; r++) {
            acc |= (uint64_t)codes[r * DQ__LANES + L] << have;
            have += b;
            if (have >= 32) {
                dq__st32(out + 4u * (j * DQ__LANES + L), (uint32_t)acc);
                j++;
                acc >>= 32;
                have -= 32;
            }
        }
    }
}
static inline void dq__unpack_block__scalar(const uint8_t *in, unsigned b, uint32_t *codes) {
    unsigned L;
    uint32_t mask = (uint32_t)((1u << b) - 1u);
    for (L = 0; L < DQ__LANES; L++) {
        uint64_t acc = 0;
        unsigned have = 0, r, j = 0;
        for (r = 0; r < DQ__ROWS; r++) {
            if (have < b) {
                acc |= (uint64_t)dq__ld32(in + 4u * (j * DQ__LANES + L)) << have;
                j++;
                have += 32;
            }
            codes[r * DQ__LANES + L] = (uint32_t)acc & mask;
            acc >>= b;
            have -= b;
        }
    }
}
static inline void dq__pack_tail(const uint32_t *codes, size_t cnt, unsigned b, uint8_t *out) {
    uint64_t acc = 0;
    unsigned have = 0;
    size_t i;
    for (i = 0; i < cnt; i++) {
        acc |= (uint64_t)codes[i] << have;
        have += b;
        while (have >= 8) {
            *out++ = (uint8_t)acc;
            acc >>= 8;
            have -= 8;
        }
    }
    if (have) *out = (uint8_t)acc;
}
/* Returns 0 if the padding bits after the last code are not zero. */
static inline int dq__unpack_tail(const uint8_t *in, size_t cnt, unsigned b, uint32_t *codes) {
    uint64_t acc = 0;
    unsigned have = 0;
    uint32_t mask = (uint32_t)((1u << b) - 1u);
    size_t i;
    for (i = 0; i < cnt; i++) {
        while (have < b) {
            acc |= (uint64_t)*in++ << have;
            have += 8;
        }
        codes[i] = (uint32_t)acc & mask;
        acc >>= b;
        have -= b;
    }
    return acc == 0;
}

/* ---- decoding one packed block; rowstep[r] is the step of row r (rows never straddle a
 * bucket because buckets are multiples of 8). add: out = out + w * v, else out = v. */
/* Quantize and pack a full block of 256 elements that lies in one bucket: the composition of
 * the two kernels above, fused in the SIMD versions. */
static inline void dq__quant_pack__scalar(const dq__qctx *q, const float *x, float *res, uint8_t *out) {
    uint32_t codes[DQ__BLOCK];
    dq__quant__scalar(q, x, DQ__BLOCK, codes, res);
    dq__pack_block__scalar(codes, q->bits, out);
}

static inline void dq__decode_codes(const uint32_t *codes, size_t cnt, unsigned b, float step, float w, int add,
                                    float *out) {
    size_t i;
    for (i = 0; i < cnt; i++) {
        float v = dq__decode_value(codes[i], b, step);
        if (add) {
            float t = w * v;
            out[i] = out[i] + t;
        } else {
            out[i] = v;
        }
    }
}
static inline void dq__decode_block__scalar(const uint8_t *in, unsigned b, const float *rowstep, float w, int add,
                                            float *out) {
    uint32_t codes[DQ__BLOCK];
    unsigned r;
    dq__unpack_block__scalar(in, b, codes);
    for (r = 0; r < DQ__ROWS; r++)
        dq__decode_codes(codes + r * DQ__LANES, DQ__LANES, b, rowstep[r], w, add, out + r * DQ__LANES);
}

/* ---- sparse index streams: the VARINT decoder (doc/FORMAT.md 18) */
/* Running state of a VARINT decode, carried from the SIMD kernel to its scalar tail. */
typedef struct dq__svb_acc {
    uint32_t prev; /* last index written; 0xFFFFFFFF before the first */
    uint32_t bad;  /* nonzero once a value was stored in more bytes than it needs */
    uint64_t sum;  /* sum of the decoded values (gaps minus one) */
} dq__svb_acc;
typedef void (*dq__svb_kernel)(const uint8_t *ctrl, const uint8_t *data, size_t data_len, size_t k, uint32_t *out,
                               dq__svb_acc *a);

/* Decode k VARINT values: ctrl holds ceil(k/4) control bytes (value i's length - 1 in bits
 * 2(i%4)..2(i%4)+1 of byte i/4), data exactly the bytes they announce (data_len, validated
 * by the caller). out[i] = prev + value + 1, prefix-summed modulo 2^32. */
static inline void dq__svb_decode__scalar(const uint8_t *ctrl, const uint8_t *data, size_t data_len, size_t k,
                                          uint32_t *out, dq__svb_acc *a) {
    static const uint32_t mask[4] = {0xFFu, 0xFFFFu, 0xFFFFFFu, 0xFFFFFFFFu};
    static const uint32_t least[4] = {0u, 0x100u, 0x10000u, 0x1000000u}; /* smallest value of each length */
    uint32_t prev = a->prev, bad = 0;
    uint64_t sum = a->sum;
    size_t i, pos = 0;
    for (i = 0; i < k; i++) {
        unsigned c = (unsigned)(ctrl[i >> 2] >> (2u * (i & 3u))) & 3u;
        uint32_t v = 0;
        if (data_len - pos >= 4) {
            v = dq__ld32(data + pos) & mask[c];
        } else {
            unsigned j = c + 1u;
            while (j-- > 0) v = v << 8 | data[pos + j];
        }
        pos += c + 1u;
        bad |= (uint32_t)(v < least[c]);
        sum += v;
        prev += v + 1u;
        out[i] = prev;
    }
    a->prev = prev;
    a->bad |= bad;
    a->sum = sum;
}

#ifdef __cplusplus
}
#endif

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
#ifndef dq__k_crc32c /* hardware CRC32C where the target has it (dqsgd_simd.h) */
#define dq__k_crc32c dq__crc32c__scalar
#endif
#ifndef dq__k_svb_decode /* the SSSE3 shuffle where the target has it (dqsgd_simd.h) */
#define dq__k_svb_decode dq__svb_decode__scalar
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- API implementation */

#define DQ__STATUS_CASE(name, value, msg) \
    case name:                            \
        return msg;
DQ_API const char *dq_strerror(dq_status s) {
    switch (s) {
        DQ_STATUS_LIST(DQ__STATUS_CASE)
        default:
            return "unknown status";
    }
}
#undef DQ__STATUS_CASE

DQ_API unsigned dq_version_number(void) { return DQSGD_VERSION_NUMBER; }
static inline uint32_t dq__crc32c(const uint8_t *p, size_t n) { return dq__k_crc32c(0xFFFFFFFFu, p, n) ^ 0xFFFFFFFFu; }
DQ_API const char *dq_simd_backend(void) { return DQ__BACKEND; }

/* Resolved parameters. */
typedef struct dq__cfg {
    unsigned bits, stochastic, norm; /* norm: wire value 0 = L2, 1 = max, 2 = mean */
    unsigned checksum;               /* payload CRC32C follows the payload */
    unsigned coder;                  /* as asked: DQ_CODER_FIXED .. DQ_CODER_RANS, or DQ_CODER_AUTO */
    uint32_t bucket_wire;            /* 0 = whole */
    size_t bucket;                   /* effective elements per scale (>= 1) */
    size_t nbuckets;
} dq__cfg;

#define DQ__NORM_WIRE_L2 0u
#define DQ__NORM_WIRE_MAX 1u
#define DQ__NORM_WIRE_MEAN 2u

static inline dq_status dq__cfg_make(const dq_params *p, size_t n, dq__cfg *c) {
    unsigned bits = p->bits ? p->bits : DQ_BITS_DEFAULT;
    uint32_t bk = p->bucket ? p->bucket : DQ_BUCKET_DEFAULT;
    if (bits > 16u) return DQ_ERR_BITS;
    if (p->scheme != DQ_SCHEME_DEFAULT && p->scheme != DQ_SCHEME_QSGD) return DQ_ERR_PARAM;
    if ((unsigned)p->rounding > (unsigned)DQ_ROUND_NEAREST) return DQ_ERR_PARAM;
    if ((unsigned)p->norm > (unsigned)DQ_NORM_MAX) return DQ_ERR_PARAM; /* MEAN is chosen, not asked */
    if (bk != DQ_BUCKET_WHOLE && (bk % 8u) != 0) return DQ_ERR_PARAM;
    if (p->checksum > 1u) return DQ_ERR_PARAM;
    if (p->coder > DQ_CODER_RANS && p->coder != DQ_CODER_AUTO) return DQ_ERR_PARAM;
    if ((p->coder == DQ_CODER_ELIAS && bits == 1u) || (p->coder == DQ_CODER_RANS && bits > 8u)) return DQ_ERR_PARAM;
    if ((uint64_t)n > DQ_MAX_ELEMS) return DQ_ERR_TOO_LARGE;
    c->bits = bits;
    c->stochastic = p->rounding != DQ_ROUND_NEAREST;
    c->norm = p->norm == DQ_NORM_MAX ? DQ__NORM_WIRE_MAX : DQ__NORM_WIRE_L2;
    if (bits == 1 && !c->stochastic) c->norm = DQ__NORM_WIRE_MEAN; /* scaled sign */
    c->checksum = p->checksum;
    c->coder = p->coder;
    c->bucket_wire = bk == DQ_BUCKET_WHOLE ? 0u : bk;
    c->bucket = bk == DQ_BUCKET_WHOLE ? (n ? n : 1u) : (size_t)bk;
    c->nbuckets = n ? (n - 1u) / c->bucket + 1u : 0u;
    return DQ_OK;
}

/* Bytes of scales + payload, plus the header and trailing checksum when `framed`; 0 with
 * *ok = 0 on size_t overflow. */
static inline size_t dq__size(const dq__cfg *c, size_t n, int framed, int *ok) {
    uint64_t s = (uint64_t)c->nbuckets * 4u + ((uint64_t)n * c->bits + 7u) / 8u;
    if (framed) s += DQ_HEADER_SIZE + (c->checksum ? 4u : 0u);
    *ok = s <= (uint64_t)SIZE_MAX;
    return *ok ? (size_t)s : 0u;
}

DQ_API size_t dq_encode_bound(size_t n, unsigned bits) {
    uint64_t s;
    if (bits < 1u || bits > 16u || (uint64_t)n > DQ_MAX_ELEMS) return 0;
    s = (uint64_t)DQ_HEADER_SIZE + 4u * (((uint64_t)n + 7u) / 8u) + ((uint64_t)n * bits + 7u) / 8u + 4u;
    return s <= (uint64_t)SIZE_MAX ? (size_t)s : 0u;
}

static inline dq_status dq__sized(const dq_params *p, size_t n, int framed, size_t *size) {
    dq__cfg c;
    dq_status st;
    int ok;
    if (!p || !size) return DQ_ERR_NULL;
    if ((st = dq__cfg_make(p, n, &c)) != DQ_OK) return st;
    if ((!framed && c.checksum) || (!framed && c.coder != DQ_CODER_FIXED)) return DQ_ERR_PARAM;
    if (c.coder == DQ_CODER_ELIAS || c.coder == DQ_CODER_RANS) { /* what a forced coder needs */
        *size = dq_encode_bound_coded(n, c.bits);
        return *size ? DQ_OK : DQ_ERR_TOO_LARGE;
    }
    *size = dq__size(&c, n, framed, &ok); /* exact; DQ_CODER_AUTO never writes more */
    return ok ? DQ_OK : DQ_ERR_TOO_LARGE;
}
DQ_API dq_status dq_block_size(const dq_params *p, size_t n, size_t *size) { return dq__sized(p, n, 0, size); }
DQ_API dq_status dq_encoded_size(const dq_params *p, size_t n, size_t *size) { return dq__sized(p, n, 1, size); }

/* Range granularity: a multiple of the block (so ranges own whole payload bytes) and of the
 * bucket (so ranges own whole scales), capped at n. */
static inline size_t dq__align(const dq__cfg *c, size_t n) {
    uint64_t b = c->bucket, pow2 = b & (~b + 1u), lcm;
    lcm = (b / (pow2 < DQ__BLOCK ? pow2 : DQ__BLOCK)) * DQ__BLOCK;
    return lcm < (uint64_t)n ? (size_t)lcm : n;
}
static inline int dq__range_ok(const dq__cfg *c, size_t n, size_t begin, size_t end) {
    size_t a = dq__align(c, n);
    return begin < end && end <= n && begin % a == 0 && (end % a == 0 || end == n);
}
DQ_API size_t dq_range_align(const dq_params *p, size_t n) {
    dq__cfg c;
    if (!p || n == 0 || dq__cfg_make(p, n, &c) != DQ_OK) return 0;
    return dq__align(&c, n);
}

/* ---------------------------------------------------------------- bit streams and Elias codes */

/* ---- bit scans: compiler builtins where present; the portable versions are tested against
 * them. x must be nonzero. */
static inline unsigned dq__clz64_portable(uint64_t x) {
    unsigned n = 0, s;
    for (s = 32; s > 0; s >>= 1)
        if (!(x >> (64u - s))) {
            n += s;
            x <<= s;
        }
    return n;
}
static inline unsigned dq__ctz64_portable(uint64_t x) {
    unsigned n = 0, s;
    for (s = 32; s > 0; s >>= 1)
        if (!(x << (64u - s))) {
            n += s;
            x >>= s;
        }
    return n;
}
#if defined(__GNUC__) || defined(__clang__)
static inline unsigned dq__clz64(uint64_t x) { return (unsigned)__builtin_clzll(x); }
static inline unsigned dq__ctz64(uint64_t x) { return (unsigned)__builtin_ctzll(x); }
#else
static inline unsigned dq__clz64(uint64_t x) { return dq__clz64_portable(x); }
static inline unsigned dq__ctz64(uint64_t x) { return dq__ctz64_portable(x); }
#endif
/* floor(log2 x), x >= 1 */
static inline unsigned dq__ilog2(uint64_t x) { return 63u - dq__clz64(x); }

/* big-endian 64-bit load, byte by byte (compilers fuse it into one load and a swap) */
static inline uint64_t dq__ldbe64(const uint8_t *p) {
    return (uint64_t)p[0] << 56 | (uint64_t)p[1] << 48 | (uint64_t)p[2] << 40 | (uint64_t)p[3] << 32 |
           (uint64_t)p[4] << 24 | (uint64_t)p[5] << 16 | (uint64_t)p[6] << 8 | (uint64_t)p[7];
}

/* ---- writer */
DQ_API dq_status dq_bw_init(dq_bitwriter *w, void *buf, size_t cap) {
    if (!w || (!buf && cap)) return DQ_ERR_NULL;
    w->buf = (uint8_t *)buf;
    w->cap = cap;
    w->pos = 0;
    w->acc = 0;
    w->n = 0;
    w->err = DQ_OK;
    return DQ_OK;
}
/* nbits <= 32: after it, fewer than 32 bits are pending. Bits above n in acc are stale and
 * fall off the top as later bits shift in. */
static inline void dq__bw_put32(dq_bitwriter *w, uint64_t value, unsigned nbits) {
    w->acc = w->acc << nbits | (value & (((uint64_t)1 << nbits) - 1u));
    w->n += nbits;
    if (w->n >= 32) {
        uint32_t word;
        w->n -= 32;
        word = (uint32_t)(w->acc >> w->n);
        if (w->pos <= w->cap && w->cap - w->pos >= 4) {
            uint8_t *p = w->buf + w->pos;
            p[0] = (uint8_t)(word >> 24);
            p[1] = (uint8_t)(word >> 16);
            p[2] = (uint8_t)(word >> 8);
            p[3] = (uint8_t)word;
        } else {
            w->err = w->err == DQ_OK ? DQ_ERR_DST_TOO_SMALL : w->err;
        }
        w->pos += 4;
    }
}
DQ_API void dq_bw_put(dq_bitwriter *w, uint64_t value, unsigned nbits) {
    if (nbits <= 32) {
        dq__bw_put32(w, value, nbits);
    } else if (nbits <= 64) {
        dq__bw_put32(w, value >> 32, nbits - 32u);
        dq__bw_put32(w, value, 32);
    } else if (w->err == DQ_OK) {
        w->err = DQ_ERR_PARAM;
    }
}
DQ_API uint64_t dq_bw_bits(const dq_bitwriter *w) { return (uint64_t)w->pos * 8u + w->n; }
DQ_API dq_status dq_bw_finish(dq_bitwriter *w, size_t *len) {
    if (!w || !len) return DQ_ERR_NULL;
    if (w->n) {
        uint64_t t = w->acc << (64u - w->n); /* pending bits at the top, zeros below */
        unsigned i, bytes = (w->n + 7u) / 8u;
        for (i = 0; i < bytes; i++, t <<= 8) {
            if (w->pos + i < w->cap)
                w->buf[w->pos + i] = (uint8_t)(t >> 56);
            else if (w->err == DQ_OK)
                w->err = DQ_ERR_DST_TOO_SMALL;
        }
        w->pos += bytes;
        w->n = 0;
    }
    if (w->pos > w->cap && w->err == DQ_OK) w->err = DQ_ERR_DST_TOO_SMALL;
    if (w->err != DQ_OK) return w->err;
    *len = w->pos;
    return DQ_OK;
}

/* ---- reader */
DQ_API dq_status dq_br_init(dq_bitreader *r, const void *src, size_t len) {
    if (!r || (!src && len)) return DQ_ERR_NULL;
    r->src = (const uint8_t *)src;
    r->len = len;
    r->pos = 0;
    r->acc = 0;
    r->n = 0;
    r->overrun = 0;
    return DQ_OK;
}
/* Top up to at least 56 valid bits (fewer only at the end of the stream). Call with n <= 56.
 * Fast path: one 8-byte load, whole bytes counted; the partial byte below is reloaded (same
 * bits) by the next refill. */
static inline void dq__br_refill(dq_bitreader *r) {
    if (r->len - r->pos >= 8) {
        unsigned bytes = (63u - r->n) >> 3;
        r->acc |= dq__ldbe64(r->src + r->pos) >> r->n;
        r->pos += bytes;
        r->n += 8u * bytes;
    } else {
        while (r->n <= 56 && r->pos < r->len) {
            r->acc |= (uint64_t)r->src[r->pos++] << (56u - r->n);
            r->n += 8;
        }
    }
}
static inline void dq__br_overrun(dq_bitreader *r) {
    r->overrun = 1;
    r->pos = r->len;
    r->acc = 0;
    r->n = 0;
}
/* nbits <= 56 */
static inline uint64_t dq__br_get56(dq_bitreader *r, unsigned nbits) {
    uint64_t v;
    if (r->n < nbits) {
        dq__br_refill(r);
        if (r->n < nbits) {
            dq__br_overrun(r);
            return 0;
        }
    }
    v = (r->acc >> 1) >> (63u - nbits); /* the top nbits; 0 for nbits = 0 */
    r->acc <<= nbits;
    r->n -= nbits;
    return v;
}
DQ_API uint64_t dq_br_get(dq_bitreader *r, unsigned nbits) {
    uint64_t hi;
    if (nbits <= 56) return dq__br_get56(r, nbits);
    if (nbits > 64) {
        dq__br_overrun(r);
        return 0;
    }
    hi = dq__br_get56(r, nbits - 32u);
    hi = hi << 32 | dq__br_get56(r, 32);
    return r->overrun ? 0 : hi;
}
DQ_API uint64_t dq_br_peek(dq_bitreader *r, unsigned nbits) {
    if (nbits > 56) {
        dq__br_overrun(r);
        return 0;
    }
    if (r->n < nbits) dq__br_refill(r);
    return (r->acc >> 1) >> (63u - nbits);
}
DQ_API void dq_br_skip(dq_bitreader *r, unsigned nbits) { (void)dq_br_get(r, nbits); }
DQ_API int dq_br_overrun(const dq_bitreader *r) { return r->overrun != 0; }
DQ_API uint64_t dq_br_bits_left(const dq_bitreader *r) { return (uint64_t)(r->len - r->pos) * 8u + r->n; }
DQ_API dq_status dq_br_finish(dq_bitreader *r) {
    uint64_t left;
    if (!r) return DQ_ERR_NULL;
    if (r->overrun) return DQ_ERR_TRUNCATED;
    left = dq_br_bits_left(r);
    if (left >= 8) return DQ_ERR_CORRUPT;
    return dq__br_get56(r, (unsigned)left) ? DQ_ERR_CORRUPT : DQ_OK;
}

/* ---- Elias codes */
DQ_API unsigned dq_elias_gamma_len(uint64_t k) { return k ? 2u * dq__ilog2(k) + 1u : 0u; }
DQ_API unsigned dq_elias_delta_len(uint64_t k) {
    unsigned L;
    if (!k) return 0;
    L = dq__ilog2(k);
    return L + dq_elias_gamma_len(L + 1u);
}
DQ_API unsigned dq_elias_omega_len(uint64_t k) {
    unsigned bits = 1;
    if (!k) return 0;
    while (k > 1) {
        unsigned L = dq__ilog2(k);
        bits += L + 1u;
        k = L;
    }
    return bits;
}

static inline void dq__gamma_put(dq_bitwriter *w, uint64_t k) {
    unsigned L = dq__ilog2(k);
    if (L < 32) {
        dq_bw_put(w, k, 2u * L + 1u); /* the L zeros are k's leading zeros */
    } else {
        dq_bw_put(w, 0, L);
        dq_bw_put(w, k, L + 1u);
    }
}
DQ_API dq_status dq_elias_gamma_put(dq_bitwriter *w, uint64_t k) {
    if (!w) return DQ_ERR_NULL;
    if (!k) return DQ_ERR_PARAM;
    dq__gamma_put(w, k);
    return DQ_OK;
}
DQ_API dq_status dq_elias_delta_put(dq_bitwriter *w, uint64_t k) {
    unsigned L;
    if (!w) return DQ_ERR_NULL;
    if (!k) return DQ_ERR_PARAM;
    L = dq__ilog2(k);
    dq__gamma_put(w, L + 1u);
    dq_bw_put(w, k, L); /* the low L bits: dq_bw_put drops the leading 1 */
    return DQ_OK;
}
DQ_API dq_status dq_elias_omega_put(dq_bitwriter *w, uint64_t k) {
    uint64_t g[8]; /* 2^64 - 1 has 4 groups: 64 bits, then 63, 5 and 2 */
    unsigned ng = 0;
    if (!w) return DQ_ERR_NULL;
    if (!k) return DQ_ERR_PARAM;
    while (k > 1) {
        g[ng++] = k;
        k = dq__ilog2(k);
    }
    while (ng > 0) {
        ng--;
        dq_bw_put(w, g[ng], dq__ilog2(g[ng]) + 1u);
    }
    dq_bw_put(w, 0, 1);
    return DQ_OK;
}

/* Count a run of zeros up to the first 1 and consume the zeros (not the 1). DQ_ERR_CORRUPT
 * once 64 zeros are seen, DQ_ERR_TRUNCATED if the stream ends first. */
static inline dq_status dq__br_zeros(dq_bitreader *r, unsigned *zeros) {
    unsigned z = 0;
    for (;;) {
        unsigned lz;
        if (r->n <= 56) dq__br_refill(r);
        if (r->n == 0) {
            dq__br_overrun(r);
            return DQ_ERR_TRUNCATED;
        }
        if ((r->acc >> (64u - r->n)) == 0) { /* all n valid bits are zero */
            z += r->n;
            r->acc = 0; /* bits below n are reloaded by the next refill */
            r->n = 0;
            if (z >= 64) return DQ_ERR_CORRUPT;
            continue;
        }
        lz = dq__clz64(r->acc); /* < n: a 1 lies among the valid bits */
        z += lz;
        if (z >= 64) return DQ_ERR_CORRUPT;
        r->acc <<= lz;
        r->n -= lz;
        *zeros = z;
        return DQ_OK;
    }
}
/* gamma value at most 2^64 - 1 */
static inline dq_status dq__gamma_get(dq_bitreader *r, uint64_t *k) {
    unsigned z = 0;
    uint64_t v;
    dq_status st;
    if (r->overrun) return DQ_ERR_TRUNCATED;
    st = dq__br_zeros(r, &z);
    if (st != DQ_OK) return st;
    v = dq_br_get(r, z + 1u);
    if (r->overrun) return DQ_ERR_TRUNCATED;
    *k = v;
    return DQ_OK;
}
DQ_API dq_status dq_elias_gamma_get(dq_bitreader *r, uint64_t *k) {
    if (!r || !k) return DQ_ERR_NULL;
    return dq__gamma_get(r, k);
}
DQ_API dq_status dq_elias_delta_get(dq_bitreader *r, uint64_t *k) {
    uint64_t n1, low;
    dq_status st;
    if (!r || !k) return DQ_ERR_NULL;
    st = dq__gamma_get(r, &n1); /* L + 1 */
    if (st != DQ_OK) return st;
    if (n1 > 64) return DQ_ERR_CORRUPT;
    low = dq_br_get(r, (unsigned)n1 - 1u);
    if (r->overrun) return DQ_ERR_TRUNCATED;
    *k = (uint64_t)1 << (n1 - 1u) | low;
    return DQ_OK;
}
DQ_API dq_status dq_elias_omega_get(dq_bitreader *r, uint64_t *k) {
    uint64_t v = 1;
    if (!r || !k) return DQ_ERR_NULL;
    if (r->overrun) return DQ_ERR_TRUNCATED;
    for (;;) {
        uint64_t rest;
        if (dq__br_get56(r, 1) == 0) {
            if (r->overrun) return DQ_ERR_TRUNCATED;
            *k = v;
            return DQ_OK;
        }
        if (v >= 64) return DQ_ERR_CORRUPT; /* the group would be v + 1 > 64 bits */
        rest = dq_br_get(r, (unsigned)v);
        if (r->overrun) return DQ_ERR_TRUNCATED;
        v = (uint64_t)1 << v | rest;
    }
}

/* ---------------------------------------------------------------- coders (doc/FORMAT.md 17)
 * The fixed-width payload is the canonical form of the codes. A coded message is made from it
 * and decodes back into it one 256-code block at a time, so the quantizer and the SIMD decode
 * kernels serve every coder. Symbols: groups of g = floor(8/b) codes (b <= 8). For b in
 * {1, 2, 4, 8} a symbol is a byte of the fixed payload, in payload order; for b in {3, 5, 6, 7}
 * it is g consecutive codes in element order, the first in the low bits, the last group
 * padded with zero codes. */

static inline unsigned dq__sym_group(unsigned b) { return 8u / b; }
static inline unsigned dq__sym_bits(unsigned b) { return (8u / b) * b; }
static inline int dq__sym_bytes(unsigned b) { return (8u % b) == 0; } /* symbols are payload bytes */

/* The codes of fixed-payload block k (the tail when k = n / 256); returns their count. */
static inline size_t dq__block_codes(unsigned b, size_t n, const uint8_t *payload, size_t k, uint32_t *codes) {
    size_t cnt = n - k * DQ__BLOCK < DQ__BLOCK ? n - k * DQ__BLOCK : DQ__BLOCK;
    if (cnt == DQ__BLOCK)
        dq__unpack_block__scalar(payload + k * 32u * b, b, codes);
    else
        dq__unpack_tail(payload + k * 32u * b, cnt, b, codes);
    return cnt;
}
/* The symbols of fixed-payload block k (the tail when k = n / 256) into sym; returns their count. */
static inline size_t dq__block_syms(unsigned b, size_t n, const uint8_t *payload, size_t k, uint8_t *sym) {
    uint32_t codes[DQ__BLOCK];
    size_t cnt = n - k * DQ__BLOCK < DQ__BLOCK ? n - k * DQ__BLOCK : DQ__BLOCK, m, nsym;
    unsigned g = dq__sym_group(b), t;
    const uint8_t *in = payload + k * 32u * b;
    if (dq__sym_bytes(b)) {
        nsym = (cnt * b + 7u) / 8u;
        memcpy(sym, in, nsym);
        return nsym;
    }
    dq__block_codes(b, n, payload, k, codes);
    nsym = (cnt + g - 1u) / g;
    for (m = 0; m < nsym; m++) {
        uint32_t s = 0;
        for (t = 0; t < g && m * g + t < cnt; t++) s |= codes[m * g + t] << (t * b);
        sym[m] = (uint8_t)s;
    }
    return nsym;
}
/* The inverse: block k of the fixed payload from its symbols, into out (32b bytes, or the
 * tail's bytes; out may be sym itself when the symbols are bytes). Returns 0 when a symbol
 * holds non-zero codes or bits past the last element. */
static inline int dq__block_from_syms(unsigned b, size_t n, size_t k, const uint8_t *sym, uint8_t *out) {
    uint32_t codes[DQ__BLOCK];
    size_t cnt = n - k * DQ__BLOCK < DQ__BLOCK ? n - k * DQ__BLOCK : DQ__BLOCK, m, nsym;
    unsigned g = dq__sym_group(b), t, mask = (1u << b) - 1u;
    if (dq__sym_bytes(b)) {
        nsym = (cnt * b + 7u) / 8u;
        if (out != sym) memcpy(out, sym, nsym);
        return (cnt * b) % 8u == 0 || (sym[nsym - 1u] >> ((cnt * b) % 8u)) == 0;
    }
    nsym = (cnt + g - 1u) / g;
    for (m = 0; m < nsym; m++)
        for (t = 0; t < g; t++) {
            uint32_t code = ((uint32_t)sym[m] >> (t * b)) & mask;
            if (m * g + t < cnt)
                codes[m * g + t] = code;
            else if (code)
                return 0;
        }
    if (cnt == DQ__BLOCK)
        dq__k_pack_block(codes, b, out);
    else
        dq__pack_tail(codes, cnt, b, out);
    return 1;
}

/* ---- rANS: 8 interleaved 32-bit states (symbol i uses state i mod 8), 16-bit renormalization,
 * probabilities in units of 1/4096. Symbol i is encoded last-to-first so it decodes first. */
#define DQ__RANS_BITS 12u
#define DQ__RANS_M 4096u
#define DQ__RANS_L 65536u
#define DQ__RANS_WAYS 8u
#define DQ__RANS_MAX_SYMS ((uint64_t)1 << 40) /* keeps the size bounds in 64-bit integers */

typedef struct dq__rans_esym {
    uint32_t xmax;  /* emit 16 bits first when x >= xmax = f << 20 */
    uint32_t magic; /* x / f = (x + (x * magic >> 32)) >> shift, exact for every 32-bit x */
    uint32_t cmpl;  /* M - f: x' = x + (x / f) * (M - f) + cum = (x / f) * M + x mod f + cum */
    uint32_t cum;
    unsigned shift;
} dq__rans_esym;

typedef struct dq__rans_enc {
    uint32_t x[DQ__RANS_WAYS];
    uint8_t *buf; /* NULL: count the bytes only */
    size_t w;     /* offset of the lowest byte written; output grows downwards */
    int over;     /* a write would have gone below its limit */
} dq__rans_enc;

typedef struct dq__rans_dec {
    uint32_t x[DQ__RANS_WAYS];
    const uint8_t *p;
    size_t left;
    int bad; /* ran out of words */
} dq__rans_dec;

/* Frequencies summing to M from symbol counts (total > 0): round(count * M / total), at least
 * 1 for every symbol that occurs; the rounding error is settled on the most frequent symbol
 * (surplus) or on the largest frequencies (deficit), lowest symbol first on ties. */
static inline void dq__rans_normalize(const uint64_t *cnt, unsigned A, uint64_t total, uint32_t *f) {
    unsigned s, best = A;
    uint64_t sum = 0;
    for (s = 0; s < A; s++) {
        uint64_t v = cnt[s] ? (cnt[s] * DQ__RANS_M + total / 2u) / total : 0u;
        f[s] = cnt[s] ? (uint32_t)(v ? v : 1u) : 0u;
        sum += f[s];
        if (cnt[s] && (best == A || cnt[s] > cnt[best])) best = s;
    }
    if (sum < DQ__RANS_M) f[best] += (uint32_t)(DQ__RANS_M - sum);
    while (sum > DQ__RANS_M) {
        unsigned top = 0;
        uint32_t d;
        for (s = 1; s < A; s++)
            if (f[s] > f[top]) top = s;
        d = f[top] - 1u < sum - DQ__RANS_M ? f[top] - 1u : (uint32_t)(sum - DQ__RANS_M);
        f[top] -= d;
        sum -= d;
    }
}

/* Table: a bitmap of the A symbols that occur (A/8 bytes, symbol s is bit s mod 8 of byte s/8),
 * then f - 1 of each in symbol order as a LEB128 varint of 1 or 2 bytes. */
static inline size_t dq__rans_table_size(const uint32_t *f, unsigned A) {
    size_t sz = A / 8u;
    unsigned s;
    for (s = 0; s < A; s++)
        if (f[s]) sz += f[s] - 1u < 128u ? 1u : 2u;
    return sz;
}
static inline size_t dq__rans_table_write(const uint32_t *f, unsigned A, uint8_t *out) {
    size_t pos = A / 8u;
    unsigned s;
    memset(out, 0, A / 8u);
    for (s = 0; s < A; s++) {
        uint32_t v;
        if (!f[s]) continue;
        out[s / 8u] = (uint8_t)(out[s / 8u] | 1u << (s % 8u));
        v = f[s] - 1u;
        if (v < 128u) {
            out[pos++] = (uint8_t)v;
        } else {
            out[pos++] = (uint8_t)(0x80u | (v & 0x7Fu));
            out[pos++] = (uint8_t)(v >> 7);
        }
    }
    return pos;
}
/* Parses and validates a table; 0 on any malformation, else its size in bytes. */
static inline size_t dq__rans_table_read(const uint8_t *in, size_t len, unsigned A, uint32_t *f) {
    size_t pos = A / 8u;
    uint32_t sum = 0;
    unsigned s;
    if (len < pos) return 0;
    for (s = 0; s < A; s++) {
        uint32_t v;
        f[s] = 0;
        if (!((in[s / 8u] >> (s % 8u)) & 1u)) continue;
        if (pos >= len) return 0;
        v = in[pos++];
        if (v & 0x80u) {
            if (pos >= len || in[pos] == 0 || in[pos] > 31u) return 0; /* canonical, at most 4095 */
            v = (v & 0x7Fu) | (uint32_t)in[pos++] << 7;
        }
        f[s] = v + 1u;
        sum += f[s];
        if (sum > DQ__RANS_M) return 0;
    }
    return sum == DQ__RANS_M ? pos : 0;
}

static inline void dq__rans_esyms(const uint32_t *f, unsigned A, dq__rans_esym *e) {
    uint32_t cum = 0;
    unsigned s;
    for (s = 0; s < A; s++) {
        uint32_t fs = f[s] ? f[s] : 1u, sh = 0;
        while ((1u << sh) < fs) sh++;
        e[s].xmax = fs < DQ__RANS_M ? fs << 20 : 0xFFFFFFFFu; /* f = M: x never changes, never reaches it */
        /* m = ceil(2^(32+sh) / f) lies in [2^32, 2^33): store m - 2^32 (Granlund-Montgomery) */
        e[s].magic = (uint32_t)((((uint64_t)1 << (32u + sh)) + fs - 1u) / fs - ((uint64_t)1 << 32));
        e[s].shift = sh;
        e[s].cmpl = DQ__RANS_M - fs;
        e[s].cum = cum;
        cum += f[s];
    }
}
/* Decode table: slot -> symbol | (f - 1) << 8 | (slot - cum) << 20. */
static inline void dq__rans_dtab(const uint32_t *f, unsigned A, uint32_t *tab) {
    uint32_t slot = 0, i;
    unsigned s;
    for (s = 0; s < A; s++)
        for (i = 0; i < f[s]; i++, slot++) tab[slot] = s | (f[s] - 1u) << 8 | i << 20;
}

/* One encode step without branches, for the unchecked loop: the low half of x is stored
 * below w every time and kept (w moves) only when x must shrink. */
#define DQ__RANS_PUT_FAST(x, s, buf, w)                                                              \
    do {                                                                                            \
        const dq__rans_esym *es_ = t + (s);                                                         \
        uint32_t q_, big_ = (x) >= es_->xmax;                                                       \
        if (buf) dq__st16((buf) + (w) - 2u, (x) & 0xFFFFu);                                         \
        (w) -= 2u * big_;                                                                           \
        (x) >>= 16u * big_;                                                                         \
        q_ = (uint32_t)(((uint64_t)(x) + (((uint64_t)(x) * es_->magic) >> 32)) >> es_->shift);     \
        (x) = (x) + q_ * es_->cmpl + es_->cum;                                                     \
    } while (0)
/* One encode step of symbol s on state x; the word, if any, goes below *w (room checked). */
#define DQ__RANS_PUT(x, s, buf, w)                                                                   \
    do {                                                                                            \
        const dq__rans_esym *es_ = t + (s);                                                         \
        uint32_t q_;                                                                                \
        if ((x) >= es_->xmax) {                                                                     \
            (w) -= 2u;                                                                              \
            if (buf) dq__st16((buf) + (w), (x) & 0xFFFFu);                                         \
            (x) >>= 16;                                                                             \
        }                                                                                           \
        q_ = (uint32_t)(((uint64_t)(x) + (((uint64_t)(x) * es_->magic) >> 32)) >> es_->shift);     \
        (x) = (x) + q_ * es_->cmpl + es_->cum;                                                     \
    } while (0)

/* Encode sym[0..cnt) (global indices first..first+cnt-1), last first. Stops with e->over set
 * rather than write below offset lim. A step writes at most one word, so when the room for
 * cnt words is there the loop runs without checks, eight states in registers. */
static inline void dq__rans_put(dq__rans_enc *e, const dq__rans_esym *t, const uint8_t *sym, size_t first, size_t cnt,
                                size_t lim) {
    size_t k = cnt, w = e->w;
    uint8_t *buf = e->buf;
    if (first % DQ__RANS_WAYS == 0 && cnt % DQ__RANS_WAYS == 0 && w >= lim && w - lim >= 2u * cnt + 2u) {
        uint32_t x0 = e->x[0], x1 = e->x[1], x2 = e->x[2], x3 = e->x[3], x4 = e->x[4], x5 = e->x[5], x6 = e->x[6],
                 x7 = e->x[7];
        while (k > 0) {
            k -= 8u;
            DQ__RANS_PUT_FAST(x7, sym[k + 7u], buf, w);
            DQ__RANS_PUT_FAST(x6, sym[k + 6u], buf, w);
            DQ__RANS_PUT_FAST(x5, sym[k + 5u], buf, w);
            DQ__RANS_PUT_FAST(x4, sym[k + 4u], buf, w);
            DQ__RANS_PUT_FAST(x3, sym[k + 3u], buf, w);
            DQ__RANS_PUT_FAST(x2, sym[k + 2u], buf, w);
            DQ__RANS_PUT_FAST(x1, sym[k + 1u], buf, w);
            DQ__RANS_PUT_FAST(x0, sym[k], buf, w);
        }
        e->x[0] = x0, e->x[1] = x1, e->x[2] = x2, e->x[3] = x3, e->x[4] = x4, e->x[5] = x5, e->x[6] = x6, e->x[7] = x7;
        e->w = w;
        return;
    }
    while (k-- > 0) {
        unsigned j = (unsigned)((first + k) & (DQ__RANS_WAYS - 1u));
        if (e->x[j] >= t[sym[k]].xmax && w < lim + 2u) {
            e->over = 1;
            break;
        }
        DQ__RANS_PUT(e->x[j], sym[k], buf, w);
    }
    e->w = w;
}
#undef DQ__RANS_PUT
#undef DQ__RANS_PUT_FAST

/* One decode step on state x; a word is read when x falls below L and one is left. */
#define DQ__RANS_GET(x, o, p, end, bad)                                                              \
    do {                                                                                            \
        uint32_t e_ = tab[(x) & (DQ__RANS_M - 1u)];                                                 \
        (o) = (uint8_t)e_;                                                                          \
        (x) = ((e_ >> 8 & 0xFFFu) + 1u) * ((x) >> DQ__RANS_BITS) + (e_ >> 20);                      \
        if ((x) < DQ__RANS_L) {                                                                     \
            if ((p) < (end)) {                                                                      \
                (x) = (x) << 16 | dq__ld16(p);                                                      \
                (p) += 2;                                                                           \
            } else {                                                                                \
                (bad) = 1;                                                                          \
                (x) = DQ__RANS_L;                                                                   \
            }                                                                                       \
        }                                                                                           \
    } while (0)

/* Decode sym[0..cnt) (global indices first..first+cnt-1). The payload's word count is even
 * by validation, so p < end means a whole word is there. */
static inline void dq__rans_get(dq__rans_dec *d, const uint32_t *tab, size_t first, uint8_t *sym, size_t cnt) {
    const uint8_t *p = d->p, *end = d->p + d->left;
    size_t k = 0;
    int bad = d->bad;
    if (first % DQ__RANS_WAYS == 0) {
        uint32_t x0 = d->x[0], x1 = d->x[1], x2 = d->x[2], x3 = d->x[3], x4 = d->x[4], x5 = d->x[5], x6 = d->x[6],
                 x7 = d->x[7];
        for (; k + 8u <= cnt; k += 8u) {
            DQ__RANS_GET(x0, sym[k], p, end, bad);
            DQ__RANS_GET(x1, sym[k + 1u], p, end, bad);
            DQ__RANS_GET(x2, sym[k + 2u], p, end, bad);
            DQ__RANS_GET(x3, sym[k + 3u], p, end, bad);
            DQ__RANS_GET(x4, sym[k + 4u], p, end, bad);
            DQ__RANS_GET(x5, sym[k + 5u], p, end, bad);
            DQ__RANS_GET(x6, sym[k + 6u], p, end, bad);
            DQ__RANS_GET(x7, sym[k + 7u], p, end, bad);
        }
        d->x[0] = x0, d->x[1] = x1, d->x[2] = x2, d->x[3] = x3, d->x[4] = x4, d->x[5] = x5, d->x[6] = x6, d->x[7] = x7;
    }
    for (; k < cnt; k++) {
        unsigned j = (unsigned)((first + k) & (DQ__RANS_WAYS - 1u));
        DQ__RANS_GET(d->x[j], sym[k], p, end, bad);
    }
    d->left -= (size_t)(p - d->p);
    d->p = p;
    d->bad = bad;
}
#undef DQ__RANS_GET

/* Bounds on the bytes of words for these counts, from the cost of a symbol, log2(M/f) bits:
 * each encode step adds at most cost + log2(17/16) to log2 x (x >= 16 f there), each word
 * removes at least 16, and x starts and ends in [2^16, 2^32). Costs are in 1/65536 bit:
 * log2(1 + t) >= t on [0, 1] gives an upper bound, and log2(1 + t) <= t + 0.0861 a lower one. */
static inline uint64_t dq__rans_cost_ub(uint32_t f) {
    unsigned e = 0;
    while ((2u << e) <= f) e++;
    return ((uint64_t)(DQ__RANS_BITS - e) << 16) - ((((uint64_t)f - (1u << e)) << 16) >> e);
}
#define DQ__RANS_STEP_SLACK 5732u /* log2(17/16) in 1/65536 bit, rounded up */
static inline uint64_t dq__rans_words_ub(const uint64_t *cnt, const uint32_t *f, unsigned A) {
    uint64_t bits = 0;
    unsigned s;
    for (s = 0; s < A; s++)
        if (cnt[s]) bits += cnt[s] * (dq__rans_cost_ub(f[s]) + DQ__RANS_STEP_SLACK);
    return 2u * ((bits + (16u << 16) - 1u) / (16u << 16)) + 2u * DQ__RANS_WAYS; /* whole words, rounded per state */
}
static inline uint64_t dq__rans_words_lb(const uint64_t *cnt, const uint32_t *f, unsigned A) {
    uint64_t bits = 0;
    unsigned s;
    for (s = 0; s < A; s++) {
        uint64_t c = dq__rans_cost_ub(f[s]);
        if (cnt[s] && c > 5701u + 6102u) bits += cnt[s] * (c - 5701u - 6102u); /* cost lb minus log2(16/15) */
    }
    bits = bits > ((uint64_t)128u << 16) ? bits - ((uint64_t)128u << 16) : 0u;
    return bits / 527342u; /* / (8 (16 + log2(16/15)) / 16 * 65536) */
}
/* Largest amount by which the words of any suffix of the symbols can outgrow the fixed-width
 * bytes they replace, rounded up: the room an in-place encoder needs. */
static inline uint64_t dq__rans_excess_ub(const uint64_t *cnt, const uint32_t *f, unsigned A, unsigned symbits) {
    uint64_t bits = 0, fixed = (uint64_t)symbits << 16;
    unsigned s;
    for (s = 0; s < A; s++) {
        uint64_t c = dq__rans_cost_ub(f[s]) + DQ__RANS_STEP_SLACK;
        if (cnt[s] && c > fixed) bits += cnt[s] * (c - fixed);
    }
    return (bits + (8u << 16) - 1u) / (8u << 16) + 2u * DQ__RANS_WAYS;
}

/* Worst-case rANS payload for n codes of b bits: full table, states, 12 + 0.0875 bits per symbol. */
static inline uint64_t dq__rans_payload_bound(uint64_t n, unsigned b) {
    uint64_t nsym = (n + dq__sym_group(b) - 1u) / dq__sym_group(b), A = (uint64_t)1 << dq__sym_bits(b);
    return A / 8u + 2u * A + 4u * DQ__RANS_WAYS +
           2u * ((nsym * ((12u << 16) + DQ__RANS_STEP_SLACK) + (16u << 16) - 1u) / (16u << 16)) + 2u * DQ__RANS_WAYS;
}

/* ---- the coded-payload reader: produces the fixed payload block by block, in order */
typedef struct dq__cdec {
    unsigned coder, bits;
    size_t n, k, isym;
    const uint8_t *pay;
    size_t len;
    size_t body; /* rANS: offset of the states */
    dq__rans_dec r;
    dq_bitreader br;     /* Elias */
    uint64_t left, at;   /* Elias: entries still to read; element index + 1 of the last one */
    uint32_t next_code;  /* Elias: the entry read ahead, at index at - 1 (none when left == 0 and at == 0) */
    int has_next;
    int bad;
    int trusted; /* the payload checksum was verified: decode in one pass, check at the end */
    uint32_t tab[DQ__RANS_M];
} dq__cdec;

/* Elias: reads the next entry (gap, sign, level) ahead; sets bad on any malformation. */
static inline void dq__elias_next(dq__cdec *d) {
    uint64_t gap, lvl, smax = ((uint64_t)1 << (d->bits - 1u)) - 1u;
    uint32_t sign;
    d->has_next = 0;
    if (d->left == 0 || d->bad) return;
    d->left--;
    if (dq_elias_omega_get(&d->br, &gap) != DQ_OK || gap > (uint64_t)d->n - d->at) {
        d->bad = 1;
        return;
    }
    sign = (uint32_t)dq_br_get(&d->br, 1);
    if (dq_elias_omega_get(&d->br, &lvl) != DQ_OK || lvl > smax) {
        d->bad = 1;
        return;
    }
    d->at += gap;
    d->next_code = (uint32_t)lvl | sign << (d->bits - 1u);
    d->has_next = 1;
}

static inline dq_status dq__cdec_rewind(dq__cdec *d) {
    unsigned j;
    d->k = d->isym = 0;
    d->bad = 0;
    if (d->coder == DQ_CODER_ELIAS) {
        uint64_t cnt;
        memset(&d->br, 0, sizeof d->br);
        dq_br_init(&d->br, d->pay, d->len);
        if (dq_elias_omega_get(&d->br, &cnt) != DQ_OK || cnt - 1u > (uint64_t)d->n) return DQ_ERR_CORRUPT;
        d->left = cnt - 1u;
        d->at = 0;
        dq__elias_next(d);
        return d->bad ? DQ_ERR_CORRUPT : DQ_OK;
    }
    for (j = 0; j < DQ__RANS_WAYS; j++) {
        d->r.x[j] = dq__ld32(d->pay + d->body + 4u * j);
        if (d->r.x[j] < DQ__RANS_L) return DQ_ERR_CORRUPT;
    }
    d->r.p = d->pay + d->body + 4u * DQ__RANS_WAYS;
    d->r.left = d->len - d->body - 4u * DQ__RANS_WAYS;
    d->r.bad = 0;
    return DQ_OK;
}
static inline dq_status dq__cdec_open(dq__cdec *d, unsigned coder, unsigned b, size_t n, const uint8_t *pay,
                                      size_t len) {
    uint32_t f[256];
    unsigned A = 1u << dq__sym_bits(b);
    d->coder = coder;
    d->bits = b;
    d->n = n;
    d->pay = pay;
    d->len = len;
    if (coder == DQ_CODER_ELIAS) return dq__cdec_rewind(d);
    d->body = dq__rans_table_read(pay, len, A, f);
    if (d->body == 0 || len - d->body < 4u * DQ__RANS_WAYS || (len - d->body) % 2u) return DQ_ERR_CORRUPT;
    dq__rans_dtab(f, A, d->tab);
    return dq__cdec_rewind(d);
}
/* The next block of the fixed payload (32b bytes, or the tail's) into out. */
static inline const uint8_t *dq__cdec_block(dq__cdec *d, uint8_t *out) {
    uint8_t sym[DQ__BLOCK];
    unsigned b = d->bits;
    size_t cnt = d->n - d->k * DQ__BLOCK < DQ__BLOCK ? d->n - d->k * DQ__BLOCK : DQ__BLOCK;
    size_t nsym;
    if (d->coder == DQ_CODER_ELIAS) {
        uint32_t codes[DQ__BLOCK];
        uint64_t first = (uint64_t)d->k * DQ__BLOCK;
        memset(codes, 0, sizeof codes);
        while (d->has_next && d->at - 1u < first + cnt) {
            codes[d->at - 1u - first] = d->next_code;
            dq__elias_next(d);
        }
        if (cnt == DQ__BLOCK)
            dq__k_pack_block(codes, b, out);
        else
            dq__pack_tail(codes, cnt, b, out);
        d->k++;
        return out;
    }
    nsym = (cnt + dq__sym_group(b) - 1u) / dq__sym_group(b);
    if (dq__sym_bytes(b)) { /* the symbols are the payload bytes: decode them in place */
        dq__rans_get(&d->r, d->tab, d->isym, out, nsym);
        if (!dq__block_from_syms(b, d->n, d->k, out, out)) d->bad = 1;
    } else {
        dq__rans_get(&d->r, d->tab, d->isym, sym, nsym);
        if (!dq__block_from_syms(b, d->n, d->k, sym, out)) d->bad = 1;
    }
    d->isym += nsym;
    d->k++;
    return out;
}
/* After the last block: was the stream well formed and fully used? */
static inline dq_status dq__cdec_end(dq__cdec *d) {
    unsigned j;
    int ok;
    if (d->coder == DQ_CODER_ELIAS) {
        ok = !d->bad && !d->has_next && dq_br_finish(&d->br) == DQ_OK;
    } else {
        ok = !d->bad && !d->r.bad && d->r.left == 0;
        for (j = 0; j < DQ__RANS_WAYS; j++) ok &= d->r.x[j] == DQ__RANS_L;
    }
    return ok ? DQ_OK : DQ_ERR_CORRUPT;
}
/* Decodes the whole stream once to validate it, then rewinds. */
static inline dq_status dq__cdec_validate(dq__cdec *d) {
    uint8_t tmp[32u * 16u];
    size_t k, nblk = (d->n + DQ__BLOCK - 1u) / DQ__BLOCK;
    dq_status st;
    for (k = 0; k < nblk; k++) dq__cdec_block(d, tmp);
    if ((st = dq__cdec_end(d)) != DQ_OK) return st;
    return dq__cdec_rewind(d);
}


/* ---- sizes of coded messages: [header][u64 payload bytes][scales][coded payload][checksum] */
#define DQ__CODED_HEADER (DQ_HEADER_SIZE + 8u)
/* Worst-case Elias payload: gaps sum to at most n and omega(g) <= g + 2, each non-zero adds a
 * sign and its level, and the count omega(nnz + 1) leads. */
static inline uint64_t dq__elias_payload_bound(uint64_t n, unsigned b) {
    return (n * (4u + dq_elias_omega_len(((uint64_t)1 << (b - 1u)) - 1u)) + dq_elias_omega_len(n + 1u) + 7u) / 8u;
}
/* Largest payload a coded message of this coder may declare. */
static inline uint64_t dq__coded_bound(unsigned coder, uint64_t n, unsigned b) {
    return coder == DQ_CODER_RANS ? dq__rans_payload_bound(n, b) : dq__elias_payload_bound(n, b);
}
DQ_API size_t dq_encode_bound_coded(size_t n, unsigned bits) {
    uint64_t fixed = dq_encode_bound(n, bits), r = 0, e = 0, s;
    if (!fixed) return 0;
    if (bits <= 8u) r = dq__rans_payload_bound(n, bits);
    if (bits >= 2u) e = dq__elias_payload_bound(n, bits);
    s = fixed + 8u + (r > e ? r : e) + 16u; /* the fixed message, then room to re-code it in place */
    return s <= (uint64_t)SIZE_MAX ? (size_t)s : 0u;
}

/* The scale of a bucket and the quantizer constants derived from it. */
static inline dq_status dq__bucket_scale(const dq__cfg *c, const dq__stats *st, size_t len, float *scale) {
    double v;
    if (c->norm == DQ__NORM_WIRE_MAX) {
        if (st->maxbits >= 0x7F800000u) return DQ_ERR_NONFINITE;
        v = (double)dq__bitsf(st->maxbits);
    } else if (c->norm == DQ__NORM_WIRE_MEAN) {
        if (!(st->sumabs <= DBL_MAX)) return DQ_ERR_NONFINITE;
        v = st->sumabs / (double)len;
    } else {
        if (!(st->sumsq <= DBL_MAX)) return DQ_ERR_NONFINITE;
        v = sqrt(st->sumsq);
    }
    if (v > (double)dq__bitsf(DQ__MAX_SCALE_BITS)) return DQ_ERR_OVERFLOW;
    *scale = (float)v;
    if (*scale < DQ__MIN_SCALE) *scale = 0.0f;
    return DQ_OK;
}
static inline float dq__levels(unsigned bits) { return bits == 1 ? 1.0f : (float)((1u << (bits - 1)) - 1u); }
static inline float dq__step(unsigned bits, float scale) { return bits == 1 ? scale : scale / dq__levels(bits); }
/* The quantizer constants of a bucket with this scale (doc/FORMAT.md 6.2); q->bits and q->smax
 * are set. */
static inline void dq__qctx_scale(dq__qctx *q, float scale) {
    q->step = dq__step(q->bits, scale);
    q->inv = scale == 0.0f ? 0.0f : (q->bits == 1 ? 0.5f / scale : q->smax / scale);
}

static inline void dq__prefetch(const float *p, size_t cnt) {
#if defined(__GNUC__) || defined(__clang__)
    size_t i;
    for (i = 0; i < cnt; i += 16) __builtin_prefetch(p + i);
#else
    (void)p;
    (void)cnt;
#endif
}

/* The scale of one bucket from its statistics; writes it to the message. */
static inline dq_status dq__scale_bucket(const dq__cfg *c, const float *x, const float *e, size_t len, uint8_t *dst,
                                         float *scale) {
    dq__stats st;
    dq_status s;
    dq__k_stats(x, e, len,
                c->norm == DQ__NORM_WIRE_MAX ? DQ__ST_MAX : (c->norm == DQ__NORM_WIRE_MEAN ? DQ__ST_ABS : DQ__ST_SQ), &st);
    if ((s = dq__bucket_scale(c, &st, len, scale)) != DQ_OK) return s;
    dq__st32(dst, dq__fbits(*scale));
    return DQ_OK;
}

/* Encode the scales and payload of elements [begin, end) into body, the part of the message
 * after the header (capacity already checked). x and res hold elements begin..end-1. Without
 * error feedback each bucket's statistics pass is followed at once by its quantization, while
 * the bucket is in cache. With error feedback every scale is computed first, from x + res
 * without writing res, so that a failing bucket leaves res untouched; then each bucket is
 * compensated in place (res = x + res) and quantized, leaving res = compensated - decoded. */
static inline dq_status dq__encode_body(const dq__cfg *c, const dq_params *p, size_t begin, size_t end,
                                        const float *x, float *res, uint8_t *body) {
    uint32_t codes[DQ__BLOCK];
    uint8_t *scales = body, *payload = body + 4u * c->nbuckets;
    dq__key key = dq__key_make(p->seed, p->step, p->stream);
    dq__qctx q;
    size_t pos, bucket_end = begin, bi = begin / c->bucket;
    const float *src = res ? res : x;
    float scale;
    dq_status s;
    if (res) {
        size_t k = bi;
        for (pos = begin; pos < end; pos += c->bucket, k++) {
            size_t len = end - pos < c->bucket ? end - pos : c->bucket;
            if ((s = dq__scale_bucket(c, x + (pos - begin), res + (pos - begin), len, scales + 4u * k, &scale)) !=
                DQ_OK)
                return s;
        }
    }
    q.bits = c->bits;
    q.smax = dq__levels(c->bits);
    q.thresh = c->stochastic ? -1.0f : 0.5f;
    q.k0 = key.k0;
    q.inv = q.step = 0.0f;
    pos = begin;
    while (pos < end) {
        size_t blk_end = pos + DQ__BLOCK <= end ? pos + DQ__BLOCK : end, blk_start = pos, off;
        uint8_t *blk_out = payload + (blk_start / DQ__BLOCK) * 32u * c->bits;
        int packed = 0;
        q.k1h = dq__key_hi(key, (uint32_t)((uint64_t)pos >> 32));
        /* The statistics pass of the next bucket reads memory while nothing else runs; pull the
         * data two blocks ahead into cache during this block's quantization instead. */
        if (blk_start + 3u * DQ__BLOCK <= end) {
            dq__prefetch(x + (blk_start - begin) + 2u * DQ__BLOCK, DQ__BLOCK);
            if (res) dq__prefetch(res + (blk_start - begin) + 2u * DQ__BLOCK, DQ__BLOCK);
        }
        while (pos < blk_end) {
            size_t seg_end;
            off = pos - begin;
            if (pos == bucket_end) { /* enter the next bucket */
                size_t len = end - pos < c->bucket ? end - pos : c->bucket;
                if (res) {
                    dq__k_compensate(x + off, res + off, len);
                    scale = dq__bitsf(dq__ld32(scales + 4u * bi));
                } else if ((s = dq__scale_bucket(c, x + off, NULL, len, scales + 4u * bi, &scale)) != DQ_OK) {
                    return s;
                }
                bi++;
                bucket_end = pos + len;
                dq__qctx_scale(&q, scale);
            }
            q.lo = (uint32_t)pos;
            if (pos == blk_start && blk_end - blk_start == DQ__BLOCK && bucket_end >= blk_end) {
                dq__k_quant_pack(&q, src + off, res ? res + off : NULL, blk_out); /* the common case */
                packed = 1;
                pos = blk_end;
                break;
            }
            seg_end = bucket_end < blk_end ? bucket_end : blk_end;
            dq__k_quant(&q, src + off, seg_end - pos, codes + (pos - blk_start), res ? res + off : NULL);
            pos = seg_end;
        }
        if (packed)
            continue;
        if (blk_end - blk_start == DQ__BLOCK)
            dq__k_pack_block(codes, c->bits, blk_out);
        else
            dq__pack_tail(codes, blk_end - blk_start, c->bits, blk_out);
    }
    return DQ_OK;
}

static inline void dq__write_header(const dq__cfg *c, const dq_params *p, size_t n, uint8_t *out) {
    memset(out, 0, DQ_HEADER_SIZE);
    out[0] = 'D';
    out[1] = 'Q';
    out[2] = 'S';
    out[3] = 'G';
    out[4] = DQ_FORMAT_VERSION;
    out[5] = (uint8_t)DQ_HEADER_SIZE;
    out[6] = (uint8_t)DQ_SCHEME_QSGD;
    out[7] = (uint8_t)c->bits;
    out[8] = (uint8_t)DQ_CODER_FIXED;
    out[9] = (uint8_t)c->norm;
    dq__st16(out + 10, (c->stochastic ? DQ_FLAG_STOCHASTIC : 0u) | (c->checksum ? DQ_FLAG_CHECKSUM : 0u));
    dq__st32(out + 12, c->bucket_wire);
    dq__st64(out + 16, (uint64_t)n);
    dq__st64(out + 24, p->seed);
    dq__st64(out + 32, p->step);
    dq__st32(out + 40, p->stream);
    dq__st32(out + 44, dq__crc32c(out, 44));
}

/* Encode elements [begin, end) of an n-element vector, framed (a message: header when
 * begin = 0, body after it) or not (a headerless block). *size gets the full size. */
static inline dq_status dq__encode_common(const dq_params *p, size_t n, size_t begin, size_t end, const float *x,
                                          float *residual, void *dst, size_t dst_cap, int framed, size_t *size) {
    dq__cfg c;
    dq_status st;
    int ok;
    uint8_t *out = (uint8_t *)dst;
    if (!p || !x || !dst) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if ((st = dq__cfg_make(p, n, &c)) != DQ_OK) return st;
    if ((!framed && c.checksum) || c.coder != DQ_CODER_FIXED) return DQ_ERR_PARAM;
    *size = dq__size(&c, n, framed, &ok);
    if (!ok) return DQ_ERR_TOO_LARGE;
    if (!dq__range_ok(&c, n, begin, end)) return DQ_ERR_RANGE;
    if (dst_cap < *size) return DQ_ERR_DST_TOO_SMALL;
    if (framed) {
        if (begin == 0) dq__write_header(&c, p, n, out);
        out += DQ_HEADER_SIZE;
    }
    return dq__encode_body(&c, p, begin, end, x, residual, out);
}

/* The payload checksum: CRC32C of everything between the header and the checksum itself. */
static inline uint32_t dq__body_crc(const uint8_t *msg, size_t msg_size) {
    return dq__crc32c(msg + DQ_HEADER_SIZE, msg_size - DQ_HEADER_SIZE - 4u);
}

static inline dq_status dq__encode_coded(const dq_params *p, const float *x, size_t n, float *residual, void *dst,
                                         size_t dst_cap, size_t *dst_len);
DQ_API dq_status dq_encode(const dq_params *p, const float *x, size_t n, float *residual, void *dst, size_t dst_cap,
                           size_t *dst_len) {
    size_t size = 0;
    dq_status st;
    if (!dst_len) return DQ_ERR_NULL;
    if (p && p->coder != DQ_CODER_FIXED) return dq__encode_coded(p, x, n, residual, dst, dst_cap, dst_len);
    if ((st = dq__encode_common(p, n, 0, n, x, residual, dst, dst_cap, 1, &size)) != DQ_OK) return st;
    if (p->checksum) dq__st32((uint8_t *)dst + size - 4u, dq__body_crc((const uint8_t *)dst, size));
    *dst_len = size;
    return DQ_OK;
}
DQ_API dq_status dq_encode_block(const dq_params *p, const float *x, size_t n, float *residual, void *dst,
                                 size_t dst_cap, size_t *dst_len) {
    size_t size = 0;
    dq_status st;
    if (!dst_len) return DQ_ERR_NULL;
    if ((st = dq__encode_common(p, n, 0, n, x, residual, dst, dst_cap, 0, &size)) != DQ_OK) return st;
    *dst_len = size;
    return DQ_OK;
}
DQ_API dq_status dq_encode_range(const dq_params *p, size_t n, size_t begin, size_t end, const float *x,
                                 float *residual, void *dst, size_t dst_cap) {
    size_t size = 0;
    return dq__encode_common(p, n, begin, end, x, residual, dst, dst_cap, 1, &size);
}

DQ_API dq_status dq_header_read(const void *src, size_t src_len, dq_header *h) {
    const uint8_t *in = (const uint8_t *)src;
    dq__cfg c;
    dq_params p;
    uint64_t count;
    int ok;
    if (!src || !h) return DQ_ERR_NULL;
    if (src_len < 8) return DQ_ERR_TRUNCATED;
    if (in[0] != 'D' || in[1] != 'Q' || in[2] != 'S' || in[3] != 'G') return DQ_ERR_BAD_MAGIC;
    if (in[4] != DQ_FORMAT_VERSION) return DQ_ERR_VERSION;
    if (in[5] != DQ_HEADER_SIZE) return DQ_ERR_CORRUPT;
    if (src_len < DQ_HEADER_SIZE) return DQ_ERR_TRUNCATED;
    if (dq__ld32(in + 44) != dq__crc32c(in, 44)) return DQ_ERR_CHECKSUM;
    memset(h, 0, sizeof *h);
    h->version = in[4];
    h->header_size = in[5];
    h->scheme = in[6];
    h->bits = in[7];
    h->coder = in[8];
    h->norm = (dq_norm)(in[9] + 1u); /* wire 0,1,2 -> DQ_NORM_L2, _MAX, _MEAN */
    h->flags = dq__ld16(in + 10);
    h->bucket = dq__ld32(in + 12);
    count = dq__ld64(in + 16);
    h->seed = dq__ld64(in + 24);
    h->step = dq__ld64(in + 32);
    h->stream = dq__ld32(in + 40);
    if (h->scheme != DQ_SCHEME_QSGD || h->coder > DQ_CODER_RANS || h->bits < 1 || h->bits > 16 ||
        in[9] > DQ__NORM_WIRE_MEAN || (h->flags & ~(DQ_FLAG_STOCHASTIC | DQ_FLAG_CHECKSUM)) != 0 ||
        (h->bucket % 8u) != 0 || count == 0)
        return DQ_ERR_CORRUPT;
    if (count > DQ_MAX_ELEMS || count > (uint64_t)SIZE_MAX) return DQ_ERR_TOO_LARGE;
    h->count = (size_t)count;
    memset(&p, 0, sizeof p);
    p.bits = h->bits;
    p.bucket = h->bucket ? h->bucket : DQ_BUCKET_WHOLE;
    p.checksum = (h->flags & DQ_FLAG_CHECKSUM) ? 1u : 0u;
    p.coder = h->coder; /* refuses Elias at 1 bit and rANS above 8 bits */
    if (dq__cfg_make(&p, h->count, &c) != DQ_OK) return DQ_ERR_CORRUPT;
    h->msg_size = dq__size(&c, h->count, 1, &ok);
    h->payload_size = (size_t)(((uint64_t)h->count * h->bits + 7u) / 8u);
    if (ok && h->coder != DQ_CODER_FIXED) { /* the payload's length follows the header */
        uint64_t len;
        if (src_len < DQ__CODED_HEADER) return DQ_ERR_TRUNCATED;
        len = dq__ld64(in + DQ_HEADER_SIZE);
        if (len > dq__coded_bound(h->coder, h->count, h->bits)) return DQ_ERR_CORRUPT;
        if (len > (uint64_t)SIZE_MAX - (h->msg_size - h->payload_size) - 8u) return DQ_ERR_TOO_LARGE;
        h->msg_size = h->msg_size - h->payload_size + 8u + (size_t)len;
        h->payload_size = (size_t)len;
    }
    return ok ? DQ_OK : DQ_ERR_TOO_LARGE;
}

/* Decode the elements [begin, end) into out[0..end-begin), from the scales and either the
 * fixed payload in memory or, with cd, the blocks a coded payload produces in order (whole
 * messages only). Everything is validated before out is touched. */
static inline dq_status dq__decode_body(const dq__cfg *c, const uint8_t *scales, const uint8_t *payload, dq__cdec *cd,
                                        size_t n, size_t begin, size_t end, float w, int add, float *out) {
    float rowstep[DQ__ROWS], step = 0.0f;
    uint32_t codes[DQ__BLOCK];
    uint8_t tmp[32u * 16u];
    size_t bi, pos, bucket_end = begin, bi_end = (end - 1u) / c->bucket + 1u, blk = 32u * c->bits;
    dq_status st;
    for (bi = begin / c->bucket; bi < bi_end; bi++) { /* validate every scale before touching out */
        uint32_t u = dq__ld32(scales + 4u * bi);
        if (u > DQ__MAX_SCALE_BITS) return DQ_ERR_CORRUPT; /* negative, above 2^126, Inf or NaN */
    }
    bi = begin / c->bucket;
    if (cd) {
        if (!cd->trusted && (st = dq__cdec_validate(cd)) != DQ_OK) return st;
    } else if (end == n && n % DQ__BLOCK) { /* and the tail's padding bits */
        size_t full = n - n % DQ__BLOCK;
        if (!dq__unpack_tail(payload + (full / DQ__BLOCK) * blk, n - full, c->bits, codes)) return DQ_ERR_CORRUPT;
    }
    for (pos = begin; pos + DQ__BLOCK <= end; pos += DQ__BLOCK) {
        unsigned r;
        for (r = 0; r < DQ__ROWS; r++) { /* rows walk the buckets in order: no division per row */
            if (pos + r * DQ__LANES >= bucket_end) {
                step = dq__step(c->bits, dq__bitsf(dq__ld32(scales + 4u * bi)));
                bi++;
                bucket_end += c->bucket;
            }
            rowstep[r] = step;
        }
        dq__k_decode_block(cd ? dq__cdec_block(cd, tmp) : payload + (pos / DQ__BLOCK) * blk, c->bits, rowstep, w, add,
                           out + (pos - begin));
    }
    if (pos < end) {
        size_t i = pos;
        dq__unpack_tail(cd ? dq__cdec_block(cd, tmp) : payload + (pos / DQ__BLOCK) * blk, end - pos, c->bits, codes);
        while (i < end) {
            size_t b_end = (i / c->bucket + 1u) * c->bucket;
            size_t seg_end = b_end < end ? b_end : end;
            float st1 = dq__step(c->bits, dq__bitsf(dq__ld32(scales + 4u * (i / c->bucket))));
            dq__decode_codes(codes + (i - pos), seg_end - i, c->bits, st1, w, add, out + (i - begin));
            i = seg_end;
        }
    }
    return cd && cd->trusted ? dq__cdec_end(cd) : DQ_OK;
}

/* After dq_header_read: the size and (when `verify`) the payload checksum of a message; fills c
 * for decoding. */
static inline dq_status dq__msg_open(const void *src, size_t src_len, int verify, const dq_header *h, dq__cfg *c) {
    dq_params p;
    if (src_len < h->msg_size) return DQ_ERR_TRUNCATED;
    if (verify && (h->flags & DQ_FLAG_CHECKSUM) &&
        dq__ld32((const uint8_t *)src + h->msg_size - 4u) != dq__body_crc((const uint8_t *)src, h->msg_size))
        return DQ_ERR_CHECKSUM;
    memset(&p, 0, sizeof p);
    p.bits = h->bits;
    p.bucket = h->bucket ? h->bucket : DQ_BUCKET_WHOLE;
    return dq__cfg_make(&p, h->count, c) == DQ_OK ? DQ_OK : DQ_ERR_CORRUPT; /* validated by dq_header_read */
}

DQ_API dq_status dq_verify(const void *src, size_t src_len) {
    dq_header h;
    dq__cfg c;
    dq_status st;
    if (!src) return DQ_ERR_NULL;
    if ((st = dq_header_read(src, src_len, &h)) != DQ_OK) return st;
    return dq__msg_open(src, src_len, 1, &h, &c);
}

DQ_API dq_status dq_encode_finish(void *msg, size_t msg_len) {
    dq_header h;
    dq_status st;
    if (!msg) return DQ_ERR_NULL;
    if ((st = dq_header_read(msg, msg_len, &h)) != DQ_OK) return st;
    if (msg_len < h.msg_size) return DQ_ERR_TRUNCATED;
    if (h.flags & DQ_FLAG_CHECKSUM)
        dq__st32((uint8_t *)msg + h.msg_size - 4u, dq__body_crc((const uint8_t *)msg, h.msg_size));
    return DQ_OK;
}

/* Whole messages (verified, output length checked against the count) and ranges. */
static inline dq_status dq__decode_msg(const void *src, size_t src_len, float w, int add, float *out, size_t out_n) {
    dq_header h;
    dq__cfg c;
    dq_status st;
    if (!src || !out) return DQ_ERR_NULL;
    if ((st = dq_header_read(src, src_len, &h)) != DQ_OK) return st;
    if (add ? out_n != h.count : out_n < h.count) return add ? DQ_ERR_SIZE_MISMATCH : DQ_ERR_DST_TOO_SMALL;
    if ((st = dq__msg_open(src, src_len, 1, &h, &c)) != DQ_OK) return st;
    if (h.coder != DQ_CODER_FIXED) {
        dq__cdec cd;
        const uint8_t *scales = (const uint8_t *)src + DQ__CODED_HEADER;
        if (dq__cdec_open(&cd, h.coder, h.bits, h.count, scales + 4u * c.nbuckets, h.payload_size) != DQ_OK)
            return DQ_ERR_CORRUPT;
        cd.trusted = (h.flags & DQ_FLAG_CHECKSUM) != 0; /* verified by dq__msg_open */
        return dq__decode_body(&c, scales, NULL, &cd, h.count, 0, h.count, w, add, out);
    }
    return dq__decode_body(&c, (const uint8_t *)src + DQ_HEADER_SIZE,
                           (const uint8_t *)src + DQ_HEADER_SIZE + 4u * c.nbuckets, NULL, h.count, 0, h.count, w, add,
                           out);
}
static inline dq_status dq__decode_rng(const void *src, size_t src_len, size_t begin, size_t end, float w, int add,
                                       float *out) {
    dq_header h;
    dq__cfg c;
    dq_status st;
    if (!src || !out) return DQ_ERR_NULL;
    if ((st = dq_header_read(src, src_len, &h)) != DQ_OK) return st;
    if ((st = dq__msg_open(src, src_len, 0, &h, &c)) != DQ_OK) return st;
    if (h.coder != DQ_CODER_FIXED) return DQ_ERR_PARAM; /* a coded payload is read from its start */
    if (!dq__range_ok(&c, h.count, begin, end)) return DQ_ERR_RANGE;
    return dq__decode_body(&c, (const uint8_t *)src + DQ_HEADER_SIZE,
                           (const uint8_t *)src + DQ_HEADER_SIZE + 4u * c.nbuckets, NULL, h.count, begin, end, w, add,
                           out);
}

DQ_API dq_status dq_message_norm2(const void *src, size_t src_len, double *norm2) {
    dq_header h;
    dq_status st;
    size_t nb, i, off;
    double sum = 0.0;
    if (!src || !norm2) return DQ_ERR_NULL;
    if ((st = dq_header_read(src, src_len, &h)) != DQ_OK) return st;
    if (h.norm != DQ_NORM_L2) return DQ_ERR_PARAM;
    nb = h.bucket ? (h.count - 1u) / h.bucket + 1u : 1u;
    off = h.coder == DQ_CODER_FIXED ? DQ_HEADER_SIZE : DQ__CODED_HEADER;
    if (src_len < off + 4u * nb) return DQ_ERR_TRUNCATED;
    for (i = 0; i < nb; i++) {
        uint32_t u = dq__ld32((const uint8_t *)src + off + 4u * i);
        double v;
        if (u > DQ__MAX_SCALE_BITS) return DQ_ERR_CORRUPT;
        v = (double)dq__bitsf(u);
        sum += v * v;
    }
    *norm2 = sum;
    return DQ_OK;
}

DQ_API dq_status dq_decode(const void *src, size_t src_len, float *out, size_t out_cap) {
    return dq__decode_msg(src, src_len, 1.0f, 0, out, out_cap);
}
DQ_API dq_status dq_decode_add(const void *src, size_t src_len, float weight, float *acc, size_t acc_len) {
    return dq__decode_msg(src, src_len, weight, 1, acc, acc_len);
}
DQ_API dq_status dq_decode_range(const void *src, size_t src_len, size_t begin, size_t end, float *out) {
    return dq__decode_rng(src, src_len, begin, end, 1.0f, 0, out);
}
DQ_API dq_status dq_decode_add_range(const void *src, size_t src_len, size_t begin, size_t end, float weight,
                                     float *acc) {
    return dq__decode_rng(src, src_len, begin, end, weight, 1, acc);
}

static inline dq_status dq__decode_blk(const dq_params *p, const void *src, size_t src_len, size_t n, float w, int add,
                                       float *out) {
    dq__cfg c;
    dq_status st;
    size_t body;
    int ok;
    if (!p || !src || !out) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if ((st = dq__cfg_make(p, n, &c)) != DQ_OK) return st;
    if (c.checksum || c.coder != DQ_CODER_FIXED) return DQ_ERR_PARAM;
    body = dq__size(&c, n, 0, &ok);
    if (!ok) return DQ_ERR_TOO_LARGE;
    if (src_len < body) return DQ_ERR_TRUNCATED;
    return dq__decode_body(&c, (const uint8_t *)src, (const uint8_t *)src + 4u * c.nbuckets, NULL, n, 0, n, w, add,
                           out);
}
DQ_API dq_status dq_decode_block(const dq_params *p, const void *src, size_t src_len, size_t n, float *out) {
    return dq__decode_blk(p, src, src_len, n, 1.0f, 0, out);
}
DQ_API dq_status dq_decode_add_block(const dq_params *p, const void *src, size_t src_len, size_t n, float weight,
                                     float *acc) {
    return dq__decode_blk(p, src, src_len, n, weight, 1, acc);
}

/* ---------------------------------------------------------------- coded messages: encoding */

/* Symbol counts of a fixed payload (b <= 8), as the rANS coder groups it. */
static inline void dq__sym_count(unsigned b, size_t n, const uint8_t *payload, uint64_t *cnt) {
    unsigned A = 1u << dq__sym_bits(b), s;
    memset(cnt, 0, A * sizeof *cnt);
    if (dq__sym_bytes(b)) {
        uint64_t c4[4][256];
        size_t len = (size_t)(((uint64_t)n * b + 7u) / 8u), i;
        memset(c4, 0, sizeof c4);
        for (i = 0; i + 4u <= len; i += 4) { /* four tables: no store-to-load chain on repeats */
            c4[0][payload[i]]++;
            c4[1][payload[i + 1u]]++;
            c4[2][payload[i + 2u]]++;
            c4[3][payload[i + 3u]]++;
        }
        for (; i < len; i++) c4[0][payload[i]]++;
        for (s = 0; s < A; s++) cnt[s] = c4[0][s] + c4[1][s] + c4[2][s] + c4[3][s];
    } else {
        uint8_t sym[DQ__BLOCK];
        size_t k, nblk = (n + DQ__BLOCK - 1u) / DQ__BLOCK, m, i;
        for (k = 0; k < nblk; k++) {
            m = dq__block_syms(b, n, payload, k, sym);
            for (i = 0; i < m; i++) cnt[sym[i]]++;
        }
    }
}

/* rANS-code the fixed payload at buf + pay (n codes of b bits) with frequencies f. The states
 * and words are written downwards ending at offset e->w of buf (NULL buf: only counted).
 * In place (inplace = 1) the writer stays above the block being read, else above lim; e->over
 * reports a write that would not fit. On return e->w is the offset of the first state. */
static inline void dq__rans_encode(unsigned b, size_t n, const uint8_t *payload, const uint32_t *f, dq__rans_enc *e,
                                   int inplace, size_t pay, size_t lim) {
    dq__rans_esym es[256];
    uint8_t sym[DQ__BLOCK];
    unsigned A = 1u << dq__sym_bits(b), g = dq__sym_group(b), j;
    size_t k = (n + DQ__BLOCK - 1u) / DQ__BLOCK, m;
    dq__rans_esyms(f, A, es);
    for (j = 0; j < DQ__RANS_WAYS; j++) e->x[j] = DQ__RANS_L;
    e->over = 0;
    while (k-- > 0 && !e->over) {
        m = dq__block_syms(b, n, payload, k, sym);
        dq__rans_put(e, es, sym, k * (DQ__BLOCK / g), m, inplace ? pay + k * 32u * b : lim);
    }
    if (e->over || e->w < (inplace ? pay : lim) + 4u * DQ__RANS_WAYS) {
        e->over = 1;
        return;
    }
    for (j = DQ__RANS_WAYS; j-- > 0;) {
        e->w -= 4u;
        if (e->buf) dq__st32(e->buf + e->w, e->x[j]);
    }
}

/* Bytes of fixed payload in blocks 0..k. */
static inline size_t dq__fixed_through(unsigned b, size_t n, size_t k) {
    uint64_t end = (uint64_t)(k + 1u) * DQ__BLOCK < n ? (uint64_t)(k + 1u) * DQ__BLOCK : n;
    return (size_t)((end * b + 7u) / 8u);
}

/* Exact payload bytes of the Elias layout of a fixed payload (b >= 2), and the working room an
 * in-place re-code needs: the stream may not run ahead of the fixed blocks not yet read, and
 * the result must fit. Returns 0 when a code is a negative zero (sign set, level 0), which the
 * layout cannot express; encoders never write one. */
static inline int dq__elias_stats(unsigned b, size_t n, const uint8_t *payload, unsigned crc, uint64_t *bytes,
                                  uint64_t *room, uint64_t *nonzeros) {
    uint32_t codes[DQ__BLOCK], smax = (1u << (b - 1u)) - 1u;
    size_t k, nblk = (n + DQ__BLOCK - 1u) / DQ__BLOCK, i, cnt;
    uint64_t bits = 0, last = 0, nnz = 0, pre;
    int64_t worst = INT64_MIN, r1, r2;
    for (k = 0; k < nblk; k++) {
        cnt = dq__block_codes(b, n, payload, k, codes);
        for (i = 0; i < cnt; i++) {
            uint32_t lvl = codes[i] & smax;
            uint64_t at = (uint64_t)k * DQ__BLOCK + i + 1u;
            if (!lvl) {
                if (codes[i]) return 0;
                continue;
            }
            bits += dq_elias_omega_len(at - last) + 1u + dq_elias_omega_len(lvl);
            last = at;
            nnz++;
        }
        r1 = (int64_t)bits - 8 * (int64_t)dq__fixed_through(b, n, k);
        if (r1 > worst) worst = r1;
    }
    pre = dq_elias_omega_len(nnz + 1u);
    *nonzeros = nnz;
    *bytes = (pre + bits + 7u) / 8u;
    r1 = ((int64_t)pre + worst + 7) / 8 + 8;
    r2 = (int64_t)*bytes - (int64_t)dq__fixed_through(b, n, nblk - 1u) + 8 + (int64_t)crc;
    r1 = r1 > r2 ? r1 : r2;
    *room = r1 > 8 ? (uint64_t)r1 : 8u; /* the payload moves past the scales' new place */
    return 1;
}

/* Writes the Elias layout of the fixed payload, which has nnz non-zero codes (from
 * dq__elias_stats), at out[0..cap). In place, the payload lies at out + pay and the writer
 * never stores into blocks not yet read. Returns the bytes written, 0 if they did not fit. */
static inline size_t dq__elias_encode(unsigned b, size_t n, const uint8_t *payload, uint64_t nnz, uint8_t *out,
                                      size_t cap, int inplace, size_t pay) {
    uint32_t codes[DQ__BLOCK], smax = (1u << (b - 1u)) - 1u;
    size_t k, nblk = (n + DQ__BLOCK - 1u) / DQ__BLOCK, i, cnt, len = 0;
    uint64_t last = 0;
    dq_bitwriter w;
    memset(&w, 0, sizeof w);
    dq_bw_init(&w, out, inplace ? pay : cap);
    dq_elias_omega_put(&w, nnz + 1u);
    for (k = 0; k < nblk; k++) {
        cnt = dq__block_codes(b, n, payload, k, codes);
        if (inplace) w.cap = pay + dq__fixed_through(b, n, k); /* block k is now free */
        for (i = 0; i < cnt; i++) {
            uint32_t lvl = codes[i] & smax;
            uint64_t at = (uint64_t)k * DQ__BLOCK + i + 1u;
            if (!lvl) continue;
            dq_elias_omega_put(&w, at - last);
            dq_bw_put(&w, codes[i] >> (b - 1u), 1);
            dq_elias_omega_put(&w, lvl);
            last = at;
        }
    }
    w.cap = cap;
    return dq_bw_finish(&w, &len) == DQ_OK ? len : 0u;
}

/* What the coders would cost for the fixed payload of a message, and the one to send. */
typedef struct dq__plan {
    unsigned coder;   /* the choice */
    uint64_t size[3]; /* payload bytes per coder (coded ones include the 8-byte length); 0 = n/a */
    uint32_t f[256];  /* rANS frequencies */
    size_t table;     /* rANS table bytes */
    uint64_t room[3]; /* working room an in-place re-code needs beyond the fixed message */
    uint64_t nnz;     /* Elias: the non-zero codes, counted while sizing it */
} dq__plan;

/* Exact rANS payload bytes by a dry run of the encoder. */
static inline uint64_t dq__rans_exact(unsigned b, size_t n, const uint8_t *payload, const dq__plan *pl) {
    dq__rans_enc e;
    e.buf = NULL;
    e.w = SIZE_MAX;
    dq__rans_encode(b, n, payload, pl->f, &e, 0, 0, 0);
    return (uint64_t)(SIZE_MAX - e.w) + pl->table;
}

/* The working room (bytes past the fixed message) an in-place rANS re-code needs: the words
 * of the blocks from k to the end may not outgrow the fixed bytes they replace by more, for
 * every k, and the whole coded message must fit. Bounded per block from the symbol costs. */
static inline uint64_t dq__rans_room(unsigned b, size_t n, const uint8_t *payload, const uint32_t *f, size_t table,
                                     unsigned crc) {
    int64_t cost[256], acc = 0, worst = 0, need;
    uint8_t sym[DQ__BLOCK];
    unsigned A = 1u << dq__sym_bits(b), s;
    size_t k = (n + DQ__BLOCK - 1u) / DQ__BLOCK, m, i, full = 32u * b;
    for (s = 0; s < A; s++) cost[s] = (int64_t)(dq__rans_cost_ub(f[s] ? f[s] : 1u) + DQ__RANS_STEP_SLACK);
    while (k-- > 0) {
        size_t fixed = k * DQ__BLOCK + DQ__BLOCK <= n ? full : (size_t)(((uint64_t)(n - k * DQ__BLOCK) * b + 7u) / 8u);
        m = dq__block_syms(b, n, payload, k, sym);
        for (i = 0; i < m; i++) acc += cost[sym[i]];
        acc -= (int64_t)fixed << 19;
        if (acc > worst) worst = acc;
    }
    worst = (worst + (8 << 16) - 1) / (8 << 16);
    need = (acc + (8 << 16) - 1) / (8 << 16) + 8 + (int64_t)table + 4 * (int64_t)DQ__RANS_WAYS + (int64_t)crc;
    return (uint64_t)(need > worst ? need : worst);
}

/* A lower bound on the Elias payload from the symbol counts (b <= 8): every entry costs at
 * least one bit of gap, its sign and its level. */
static inline uint64_t dq__elias_lb(unsigned b, const uint64_t *cnt) {
    unsigned A = 1u << dq__sym_bits(b), g = dq__sym_group(b), s, t;
    uint32_t mask = (1u << b) - 1u, smax = (1u << (b - 1u)) - 1u;
    uint64_t bits = 0, nnz = 0;
    for (s = 0; s < A; s++)
        for (t = 0; t < g && cnt[s]; t++) {
            uint32_t lvl = (s >> (t * b)) & mask & smax;
            if (lvl) {
                nnz += cnt[s];
                bits += cnt[s] * (2u + dq_elias_omega_len(lvl));
            }
        }
    return 8u + (bits + dq_elias_omega_len(nnz + 1u) + 7u) / 8u;
}

/* Plans how to send the fixed payload. want: a coder, or DQ_CODER_AUTO for the smallest one
 * whose in-place working room fits in `room` (exact = 1: no room limit, for dq_coded_size and
 * dq_recode). Candidates are sized exactly unless bounds already decide; ties go to the
 * lower coder id. */
static inline void dq__plan_make(const dq__cfg *c, size_t n, const uint8_t *payload, unsigned want, int exact,
                                 uint64_t room, dq__plan *pl) {
    unsigned b = c->bits, k, crc = c->checksum ? 4u : 0u;
    uint64_t cnt[256], fixed = ((uint64_t)n * b + 7u) / 8u, ub = 0, lb = 0, other;
    int rans = b <= 8u && (want == DQ_CODER_RANS || want == DQ_CODER_AUTO) && (uint64_t)n <= DQ__RANS_MAX_SYMS;
    int elias = b >= 2u && (want == DQ_CODER_ELIAS || want == DQ_CODER_AUTO);
    memset(pl->size, 0, sizeof pl->size);
    memset(pl->room, 0, sizeof pl->room);
    pl->size[DQ_CODER_FIXED] = fixed;
    pl->coder = DQ_CODER_FIXED;
    if (rans) {
        unsigned A = 1u << dq__sym_bits(b);
        dq__sym_count(b, n, payload, cnt);
        dq__rans_normalize(cnt, A, (n + dq__sym_group(b) - 1u) / dq__sym_group(b), pl->f);
        pl->table = dq__rans_table_size(pl->f, A);
        ub = 8u + pl->table + 4u * DQ__RANS_WAYS + dq__rans_words_ub(cnt, pl->f, A);
        lb = 8u + pl->table + 4u * DQ__RANS_WAYS + dq__rans_words_lb(cnt, pl->f, A);
        pl->room[DQ_CODER_RANS] = dq__rans_excess_ub(cnt, pl->f, A, dq__sym_bits(b)) + 8u + pl->table +
                                  4u * DQ__RANS_WAYS + crc;
        if (!exact && want == DQ_CODER_AUTO && pl->room[DQ_CODER_RANS] > room && ub < fixed) /* tight: look closer */
            pl->room[DQ_CODER_RANS] = dq__rans_room(b, n, payload, pl->f, pl->table, crc);
        if (want == DQ_CODER_AUTO && !exact && pl->room[DQ_CODER_RANS] > room) rans = 0;
        if (want == DQ_CODER_AUTO && rans && elias && dq__elias_lb(b, cnt) > (ub < fixed ? ub : fixed))
            elias = 0; /* cannot beat rANS or fixed */
    }
    if (elias) {
        uint64_t bytes, rm;
        if (dq__elias_stats(b, n, payload, crc, &bytes, &rm, &pl->nnz) &&
            (exact || want != DQ_CODER_AUTO || rm <= room)) {
            pl->size[DQ_CODER_ELIAS] = 8u + bytes;
            pl->room[DQ_CODER_ELIAS] = rm;
        }
    }
    other = pl->size[DQ_CODER_ELIAS] && pl->size[DQ_CODER_ELIAS] < fixed ? pl->size[DQ_CODER_ELIAS] : fixed;
    if (rans) {
        if (exact || (want == DQ_CODER_AUTO && lb < other && ub >= other))
            pl->size[DQ_CODER_RANS] = 8u + dq__rans_exact(b, n, payload, pl); /* bounds do not decide */
        else if (ub < other || want == DQ_CODER_RANS)
            pl->size[DQ_CODER_RANS] = ub; /* the smallest for certain; its exact size comes when it is written */
    }
    if (want != DQ_CODER_AUTO) {
        pl->coder = want;
        return;
    }
    for (k = 1; k < 3; k++)
        if (pl->size[k] && pl->size[k] < pl->size[pl->coder]) pl->coder = k;
}

/* Sets the coder byte of a message header and its CRC. */
static inline void dq__header_coder(uint8_t *msg, unsigned coder) {
    msg[8] = (uint8_t)coder;
    dq__st32(msg + 44, dq__crc32c(msg, 44));
}

/* Re-codes, inside dst[0..cap), the fixed message dst holds (its checksum not yet written) as
 * planned. Returns the new size without the checksum, 0 if it did not fit (which the plan's
 * room rules out). */
static inline size_t dq__recode_inplace(const dq__cfg *c, size_t n, uint8_t *dst, size_t cap, const dq__plan *pl) {
    size_t sc = 4u * c->nbuckets, pay = DQ_HEADER_SIZE + sc, len = 0;
    if (pl->coder == DQ_CODER_RANS) {
        dq__rans_enc e;
        uint8_t tbl[32u + 512u];
        size_t tl, z;
        e.buf = dst;
        e.w = cap;
        dq__rans_encode(c->bits, n, dst + pay, pl->f, &e, 1, pay, 0);
        tl = dq__rans_table_write(pl->f, 1u << dq__sym_bits(c->bits), tbl);
        z = cap - e.w;
        if (e.over || DQ__CODED_HEADER + sc + tl + z + (c->checksum ? 4u : 0u) > cap) return 0;
        memmove(dst + DQ__CODED_HEADER + sc + tl, dst + e.w, z);
        memcpy(dst + DQ__CODED_HEADER + sc, tbl, tl);
        len = tl + z;
        memmove(dst + DQ__CODED_HEADER, dst + DQ_HEADER_SIZE, sc);
    } else { /* Elias writes forwards: move the fixed payload to the end of dst, the scales up */
        size_t f = dq__fixed_through(c->bits, n, (n - 1u) / DQ__BLOCK), at = cap - f, out = DQ__CODED_HEADER + sc;
        memmove(dst + at, dst + pay, f);
        memmove(dst + DQ__CODED_HEADER, dst + DQ_HEADER_SIZE, sc);
        len = dq__elias_encode(c->bits, n, dst + at, pl->nnz, dst + out, cap - (c->checksum ? 4u : 0u) - out, 1,
                               at - out);
        if (!len) return 0;
    }
    dq__st64(dst + DQ_HEADER_SIZE, (uint64_t)len);
    dq__header_coder(dst, pl->coder);
    return DQ__CODED_HEADER + sc + len;
}

/* dq_encode() with a coder other than fixed: quantize into the fixed layout, then re-code. */
static inline dq_status dq__encode_coded(const dq_params *p, const float *x, size_t n, float *residual, void *dst,
                                         size_t dst_cap, size_t *dst_len) {
    dq__cfg c;
    dq__plan pl;
    dq_params q;
    dq_status st;
    size_t fixed, size = 0, crc;
    uint8_t *out = (uint8_t *)dst;
    int ok;
    if (!p || !x || !dst) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if ((st = dq__cfg_make(p, n, &c)) != DQ_OK) return st;
    fixed = dq__size(&c, n, 1, &ok);
    if (!ok) return DQ_ERR_TOO_LARGE;
    if (c.coder != DQ_CODER_AUTO) { /* a forced coder needs its worst case up front */
        size_t need = dq_encode_bound_coded(n, c.bits);
        if (!need) return DQ_ERR_TOO_LARGE;
        if (dst_cap < need) return DQ_ERR_DST_TOO_SMALL;
    }
    q = *p;
    q.coder = DQ_CODER_FIXED;
    if ((st = dq__encode_common(&q, n, 0, n, x, residual, dst, dst_cap, 1, &size)) != DQ_OK) return st;
    crc = c.checksum ? 4u : 0u;
    dq__plan_make(&c, n, out + DQ_HEADER_SIZE + 4u * c.nbuckets, c.coder, 0, dst_cap - fixed, &pl);
    if (pl.coder != DQ_CODER_FIXED) {
        size = dq__recode_inplace(&c, n, out, dst_cap, &pl);
        if (!size) return DQ_ERR_DST_TOO_SMALL; /* unreachable: the plan checked the room */
        size += crc;
    }
    if (crc) dq__st32(out + size - 4u, dq__body_crc(out, size));
    *dst_len = size;
    return DQ_OK;
}

/* Checks the scales and the tail padding of a fixed payload. */
static inline dq_status dq__fixed_check(const dq__cfg *c, size_t n, const uint8_t *scales, const uint8_t *payload) {
    uint32_t codes[DQ__BLOCK];
    size_t i, full = n - n % DQ__BLOCK;
    for (i = 0; i < c->nbuckets; i++)
        if (dq__ld32(scales + 4u * i) > DQ__MAX_SCALE_BITS) return DQ_ERR_CORRUPT;
    if (full < n && !dq__unpack_tail(payload + (full / DQ__BLOCK) * 32u * c->bits, n - full, c->bits, codes))
        return DQ_ERR_CORRUPT;
    return DQ_OK;
}

/* Opens a message for re-coding: header, size, checksum, then the whole body's validity. */
static inline dq_status dq__recode_open(const void *src, size_t src_len, unsigned coder, dq_header *h, dq__cfg *c,
                                        dq__cdec *cd) {
    const uint8_t *in = (const uint8_t *)src;
    dq_status st;
    if ((st = dq_header_read(src, src_len, h)) != DQ_OK) return st;
    if ((st = dq__msg_open(src, src_len, 1, h, c)) != DQ_OK) return st;
    if (coder > DQ_CODER_RANS && coder != DQ_CODER_AUTO) return DQ_ERR_PARAM;
    if ((coder == DQ_CODER_ELIAS && h->bits == 1u) || (coder == DQ_CODER_RANS && h->bits > 8u)) return DQ_ERR_PARAM;
    if (h->coder != DQ_CODER_FIXED && coder != DQ_CODER_FIXED && coder != h->coder) return DQ_ERR_PARAM;
    c->checksum = (h->flags & DQ_FLAG_CHECKSUM) ? 1u : 0u;
    if (h->coder == DQ_CODER_FIXED) return dq__fixed_check(c, h->count, in + DQ_HEADER_SIZE, in + DQ_HEADER_SIZE + 4u * c->nbuckets);
    if ((st = dq__fixed_check(c, 0, in + DQ__CODED_HEADER, NULL)) != DQ_OK) return st;
    if (dq__cdec_open(cd, h->coder, h->bits, h->count, in + DQ__CODED_HEADER + 4u * c->nbuckets, h->payload_size) !=
        DQ_OK)
        return DQ_ERR_CORRUPT;
    cd->trusted = 0;
    return dq__cdec_validate(cd);
}

DQ_API dq_status dq_coded_size(const void *src, size_t src_len, unsigned coder, size_t *size) {
    dq_header h;
    dq__cfg c;
    dq__cdec cd;
    dq__plan pl;
    dq_status st;
    if (!src || !size) return DQ_ERR_NULL;
    if ((st = dq__recode_open(src, src_len, coder, &h, &c, &cd)) != DQ_OK) return st;
    if (coder == h.coder) {
        *size = h.msg_size;
    } else if (coder == DQ_CODER_FIXED) {
        int ok;
        *size = dq__size(&c, h.count, 1, &ok);
    } else {
        dq__plan_make(&c, h.count, (const uint8_t *)src + DQ_HEADER_SIZE + 4u * c.nbuckets, coder, 1, 0, &pl);
        if (!pl.size[pl.coder]) return DQ_ERR_PARAM; /* Elias cannot carry a negative-zero code */
        *size = DQ_HEADER_SIZE + 4u * c.nbuckets + (size_t)pl.size[pl.coder] + (c.checksum ? 4u : 0u);
    }
    return DQ_OK;
}

DQ_API dq_status dq_recode(const void *src, size_t src_len, unsigned coder, void *dst, size_t dst_cap,
                           size_t *dst_len) {
    const uint8_t *in = (const uint8_t *)src;
    uint8_t *out = (uint8_t *)dst;
    dq_header h;
    dq__cfg c;
    dq__cdec cd;
    dq__plan pl;
    dq_status st;
    size_t sc, size, crc;
    if (!src || !dst || !dst_len) return DQ_ERR_NULL;
    if ((st = dq__recode_open(src, src_len, coder, &h, &c, &cd)) != DQ_OK) return st;
    sc = 4u * c.nbuckets;
    crc = c.checksum ? 4u : 0u;
    if (coder == h.coder) { /* nothing to re-code */
        if (dst_cap < h.msg_size) return DQ_ERR_DST_TOO_SMALL;
        memcpy(out, in, h.msg_size);
        *dst_len = h.msg_size;
        return DQ_OK;
    }
    if (h.coder != DQ_CODER_FIXED) { /* coded -> fixed */
        size_t k, nblk = (h.count + DQ__BLOCK - 1u) / DQ__BLOCK;
        int ok;
        size = dq__size(&c, h.count, 1, &ok);
        if (dst_cap < size) return DQ_ERR_DST_TOO_SMALL;
        memcpy(out, in, DQ_HEADER_SIZE);
        memcpy(out + DQ_HEADER_SIZE, in + DQ__CODED_HEADER, sc);
        for (k = 0; k < nblk; k++) dq__cdec_block(&cd, out + DQ_HEADER_SIZE + sc + k * 32u * h.bits);
    } else { /* fixed -> coded */
        dq__plan_make(&c, h.count, in + DQ_HEADER_SIZE + sc, coder, 1, 0, &pl);
        if (!pl.size[pl.coder]) return DQ_ERR_PARAM; /* Elias cannot carry a negative-zero code */
        if (pl.coder == DQ_CODER_FIXED) { /* AUTO found nothing smaller */
            if (dst_cap < h.msg_size) return DQ_ERR_DST_TOO_SMALL;
            memcpy(out, in, h.msg_size);
            *dst_len = h.msg_size;
            return DQ_OK;
        }
        size = DQ_HEADER_SIZE + sc + (size_t)pl.size[pl.coder] + crc;
        if (dst_cap < size) return DQ_ERR_DST_TOO_SMALL;
        memcpy(out, in, DQ_HEADER_SIZE);
        dq__st64(out + DQ_HEADER_SIZE, pl.size[pl.coder] - 8u);
        memcpy(out + DQ__CODED_HEADER, in + DQ_HEADER_SIZE, sc);
        if (pl.coder == DQ_CODER_RANS) {
            dq__rans_enc e;
            size_t tl = dq__rans_table_write(pl.f, 1u << dq__sym_bits(h.bits), out + DQ__CODED_HEADER + sc);
            e.buf = out;
            e.w = size - crc;
            dq__rans_encode(h.bits, h.count, in + DQ_HEADER_SIZE + sc, pl.f, &e, 0, 0, DQ__CODED_HEADER + sc + tl);
            if (e.over || e.w != DQ__CODED_HEADER + sc + tl) return DQ_ERR_CORRUPT; /* unreachable: sized exactly */
        } else if (!dq__elias_encode(h.bits, h.count, in + DQ_HEADER_SIZE + sc, pl.nnz, out + DQ__CODED_HEADER + sc,
                                     size - crc - DQ__CODED_HEADER - sc, 0, 0)) {
            return DQ_ERR_CORRUPT; /* unreachable: sized exactly */
        }
    }
    dq__header_coder(out, coder == DQ_CODER_AUTO ? pl.coder : coder);
    if (crc) dq__st32(out + size - 4u, dq__body_crc(out, size));
    *dst_len = size;
    return DQ_OK;
}


/* ---------------------------------------------------------------- sparse index streams */

static inline unsigned dq__popcount64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return (unsigned)__builtin_popcountll(x);
#else
    x = x - ((x >> 1) & 0x5555555555555555u);
    x = (x & 0x3333333333333333u) + ((x >> 2) & 0x3333333333333333u);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Fu;
    return (unsigned)((x * 0x0101010101010101u) >> 56);
#endif
}

/* The three body sizes of a valid index set; the scan validates the set. */
typedef struct dq__isizes {
    uint64_t body[4]; /* by coder id; [0] unused */
} dq__isizes;

static inline dq_status dq__index_args(size_t k, uint64_t n, dq_index_coder coder) {
    if (n == 0) return DQ_ERR_EMPTY;
    if (n > DQ_INDEX_MAX_N) return DQ_ERR_TOO_LARGE;
    if ((uint64_t)k > n || (unsigned)coder > 3u) return DQ_ERR_PARAM;
    return DQ_OK;
}
static inline uint64_t dq__index_ctrl_len(uint64_t k) { return k / 4u + (k % 4u != 0); }

static inline dq_status dq__index_scan(const uint32_t *idx, size_t k, uint64_t n, dq__isizes *s) {
    uint64_t next = 0, gbits = 0, vbytes = 0; /* next: the smallest index still allowed */
    size_t i;
    for (i = 0; i < k; i++) {
        uint64_t x = idx[i], g;
        uint32_t d;
        if (x < next || x >= n) return DQ_ERR_PARAM;
        g = x + 1u - next; /* 1 .. 2^32 */
        d = (uint32_t)(g - 1u);
        gbits += 2u * dq__ilog2(g) + 1u;
        vbytes += 1u + (unsigned)(d > 0xFFu) + (unsigned)(d > 0xFFFFu) + (unsigned)(d > 0xFFFFFFu);
        next = x + 1u;
    }
    s->body[0] = 0;
    s->body[DQ_INDEX_GAMMA] = (gbits + 7u) / 8u;
    s->body[DQ_INDEX_VARINT] = dq__index_ctrl_len(k) + vbytes;
    s->body[DQ_INDEX_BITMAP] = (n + 7u) / 8u;
    return DQ_OK;
}
static inline dq_index_coder dq__index_pick(const dq__isizes *s, dq_index_coder coder) {
    if (coder != DQ_INDEX_AUTO) return coder;
    coder = DQ_INDEX_VARINT;
    if (s->body[DQ_INDEX_BITMAP] < s->body[coder]) coder = DQ_INDEX_BITMAP;
    if (s->body[DQ_INDEX_GAMMA] < s->body[coder]) coder = DQ_INDEX_GAMMA;
    return coder;
}
/* validate, choose the coder and its total size */
static inline dq_status dq__index_plan(const uint32_t *idx, size_t k, uint64_t n, dq_index_coder *coder,
                                       size_t *size) {
    dq__isizes s;
    uint64_t total;
    dq_status st = dq__index_args(k, n, *coder);
    if (st != DQ_OK) return st;
    if (!idx && k) return DQ_ERR_NULL;
    st = dq__index_scan(idx, k, n, &s);
    if (st != DQ_OK) return st;
    *coder = dq__index_pick(&s, *coder);
    total = DQ_INDEX_HEADER_SIZE + s.body[*coder];
    if (total > (uint64_t)SIZE_MAX) return DQ_ERR_TOO_LARGE;
    *size = (size_t)total;
    return DQ_OK;
}

DQ_API size_t dq_index_bound(size_t k, uint64_t n) {
    uint64_t gbits, vbytes, body;
    unsigned j;
    if (n == 0 || n > DQ_INDEX_MAX_N || (uint64_t)k > n) return 0;
    /* Gaps sum to at most n, so at most n / 2^j of them are >= 2^j: a gamma code is
     * 1 + 2 sum_j [gap >= 2^j] bits, a VARINT value 1 + sum_j [value >= 256^j] bytes. */
    gbits = k;
    for (j = 1; j <= 32; j++) gbits += 2u * (n >> j < k ? n >> j : k);
    vbytes = dq__index_ctrl_len(k) + k;
    for (j = 1; j <= 3; j++) vbytes += n >> (8u * j) < k ? n >> (8u * j) : k;
    body = (gbits + 7u) / 8u;
    if (vbytes > body) body = vbytes;
    if ((n + 7u) / 8u > body) body = (n + 7u) / 8u;
    body += DQ_INDEX_HEADER_SIZE;
    return body > (uint64_t)SIZE_MAX ? 0 : (size_t)body;
}

DQ_API dq_status dq_index_size(const uint32_t *idx, size_t k, uint64_t n, dq_index_coder coder, size_t *size) {
    if (!size) return DQ_ERR_NULL;
    return dq__index_plan(idx, k, n, &coder, size);
}

static inline void dq__index_put_gamma(const uint32_t *idx, size_t k, uint8_t *body, size_t body_len) {
    dq_bitwriter w;
    uint64_t next = 0;
    size_t i, len = 0;
    if (dq_bw_init(&w, body, body_len) != DQ_OK) return;
    for (i = 0; i < k; i++) {
        dq__gamma_put(&w, (uint64_t)idx[i] + 1u - next);
        next = (uint64_t)idx[i] + 1u;
    }
    (void)dq_bw_finish(&w, &len); /* sized exactly by the scan: cannot fail */
}
static inline void dq__index_put_varint(const uint32_t *idx, size_t k, uint8_t *body, size_t body_len) {
    size_t clen = (size_t)dq__index_ctrl_len(k), pos = clen, i;
    uint32_t prev = 0xFFFFFFFFu;
    for (i = 0; i < k; i += 4) {
        unsigned c = 0, j;
        for (j = 0; j < 4 && i + j < k; j++) {
            uint32_t d = idx[i + j] - prev - 1u; /* modulo 2^32: idx[0] for the first */
            unsigned L = (unsigned)(d > 0xFFu) + (unsigned)(d > 0xFFFFu) + (unsigned)(d > 0xFFFFFFu);
            c |= L << (2u * j);
            if (body_len - pos >= 4) { /* the bytes past this value are rewritten by the next */
                dq__st32(body + pos, d);
            } else {
                unsigned b;
                for (b = 0; b <= L; b++) body[pos + b] = (uint8_t)(d >> (8u * b));
            }
            pos += L + 1u;
            prev = idx[i + j];
        }
        body[i / 4] = (uint8_t)c;
    }
}
static inline void dq__index_put_bitmap(const uint32_t *idx, size_t k, uint8_t *body, size_t body_len) {
    size_t i;
    memset(body, 0, body_len);
    for (i = 0; i < k; i++) body[idx[i] >> 3] |= (uint8_t)(1u << (idx[i] & 7u));
}

DQ_API dq_status dq_index_encode(const uint32_t *idx, size_t k, uint64_t n, dq_index_coder coder, void *dst,
                                 size_t dst_cap, size_t *dst_len) {
    uint8_t *d = (uint8_t *)dst;
    size_t size = 0;
    dq_status st;
    if (!dst_len || (!dst && dst_cap)) return DQ_ERR_NULL;
    st = dq__index_plan(idx, k, n, &coder, &size);
    if (st != DQ_OK) return st;
    if (size > dst_cap) return DQ_ERR_DST_TOO_SMALL;
    d[0] = (uint8_t)coder;
    dq__st32(d + 1, (uint32_t)(n - 1u));
    dq__st32(d + 5, (uint32_t)k);
    d[9] = (uint8_t)((uint64_t)k >> 32);
    if (coder == DQ_INDEX_GAMMA)
        dq__index_put_gamma(idx, k, d + DQ_INDEX_HEADER_SIZE, size - DQ_INDEX_HEADER_SIZE);
    else if (coder == DQ_INDEX_VARINT)
        dq__index_put_varint(idx, k, d + DQ_INDEX_HEADER_SIZE, size - DQ_INDEX_HEADER_SIZE);
    else
        dq__index_put_bitmap(idx, k, d + DQ_INDEX_HEADER_SIZE, size - DQ_INDEX_HEADER_SIZE);
    *dst_len = size;
    return DQ_OK;
}

/* ---- decoding */
typedef struct dq__ihead {
    uint64_t n;
    size_t k;
    dq_index_coder coder;
    const uint8_t *body;
    size_t body_len;
} dq__ihead;

static inline dq_status dq__index_head(const void *src, size_t src_len, dq__ihead *h) {
    const uint8_t *s = (const uint8_t *)src;
    uint64_t k, need;
    if (!src && src_len) return DQ_ERR_NULL;
    if (src_len < DQ_INDEX_HEADER_SIZE) return DQ_ERR_TRUNCATED;
    if (s[0] < DQ_INDEX_GAMMA || s[0] > DQ_INDEX_BITMAP) return DQ_ERR_CORRUPT;
    h->coder = (dq_index_coder)s[0];
    h->n = (uint64_t)dq__ld32(s + 1) + 1u;
    k = (uint64_t)dq__ld32(s + 5) | (uint64_t)s[9] << 32;
    if (k > h->n) return DQ_ERR_CORRUPT;
    if (k > (uint64_t)SIZE_MAX) return DQ_ERR_TOO_LARGE;
    h->k = (size_t)k;
    h->body = s + DQ_INDEX_HEADER_SIZE;
    h->body_len = src_len - DQ_INDEX_HEADER_SIZE;
    need = h->coder == DQ_INDEX_GAMMA ? (k + 7u) / 8u
           : h->coder == DQ_INDEX_VARINT ? dq__index_ctrl_len(k) + k
                                         : (h->n + 7u) / 8u;
    if ((uint64_t)h->body_len < need) return DQ_ERR_TRUNCATED;
    return DQ_OK;
}

DQ_API dq_status dq_index_header(const void *src, size_t src_len, uint64_t *n, size_t *k, dq_index_coder *coder) {
    dq__ihead h;
    dq_status st = dq__index_head(src, src_len, &h);
    if (st != DQ_OK) return st;
    if (n) *n = h.n;
    if (k) *k = h.k;
    if (coder) *coder = h.coder;
    return DQ_OK;
}

/* Gamma body: codes that lie within the accumulator's valid bits are decoded in place (a
 * refill below 40 valid bits leaves 56 or more, so short codes share refills); longer codes,
 * the end of the body and every error go through dq__gamma_get. */
static inline dq_status dq__index_get_gamma(const dq__ihead *h, uint32_t *idx) {
    dq_bitreader r;
    uint64_t next = 0, n = h->n;
    size_t i;
    if (dq_br_init(&r, h->body, h->body_len) != DQ_OK) return DQ_ERR_NULL;
    for (i = 0; i < h->k; i++) {
        uint64_t g;
        unsigned m;
        if (r.n < 40) dq__br_refill(&r);
        m = r.acc ? 2u * dq__clz64(r.acc) + 1u : 129u;
        if (m <= r.n) { /* m <= 63: the leading 1 and the whole code are valid bits */
            g = r.acc >> (64u - m);
            r.acc <<= m;
            r.n -= m;
        } else {
            dq_status st = dq__gamma_get(&r, &g);
            if (st != DQ_OK) return st;
        }
        if (g > n - next) return DQ_ERR_CORRUPT; /* index next + g - 1 would be >= n */
        next += g;
        idx[i] = (uint32_t)(next - 1u);
    }
    return dq_br_finish(&r);
}

static inline dq_status dq__index_get_varint(const dq__ihead *h, uint32_t *idx, dq__svb_kernel kern) {
    const uint8_t *ctrl = h->body;
    size_t k = h->k, clen = (size_t)dq__index_ctrl_len(k), i;
    uint64_t dlen = 0;
    dq__svb_acc a;
    /* body >= clen + k was checked with the header */
    if (k % 4u && ctrl[clen - 1] >> (2u * (k % 4u))) return DQ_ERR_CORRUPT; /* unused codes */
    i = 0;
    for (; i + 8 <= clen; i += 8) { /* data bytes: 4 per control byte + the sum of its codes */
        uint64_t x = dq__ld64(ctrl + i);
        x = (x & 0x3333333333333333u) + (x >> 2 & 0x3333333333333333u);
        x = (x & 0x0F0F0F0F0F0F0F0Fu) + (x >> 4 & 0x0F0F0F0F0F0F0F0Fu);
        dlen += (x * 0x0101010101010101u) >> 56;
    }
    for (; i < clen; i++)
        dlen += (ctrl[i] & 3u) + (ctrl[i] >> 2 & 3u) + (ctrl[i] >> 4 & 3u) + (ctrl[i] >> 6);
    dlen += k; /* each value has at least one byte; the unused codes are 0 */
    if ((uint64_t)h->body_len - clen < dlen) return DQ_ERR_TRUNCATED;
    if ((uint64_t)h->body_len - clen > dlen) return DQ_ERR_CORRUPT;
    a.prev = 0xFFFFFFFFu;
    a.bad = 0;
    a.sum = 0;
    if (k) kern(ctrl, ctrl + clen, (size_t)dlen, k, idx, &a);
    /* the last index is k - 1 + sum < n (exact: the sum is 64-bit), so nothing wrapped */
    if (a.bad || (k && a.sum > h->n - k)) return DQ_ERR_CORRUPT;
    return DQ_OK;
}

static inline dq_status dq__index_get_bitmap(const dq__ihead *h, uint32_t *idx) {
    const uint8_t *b = h->body;
    size_t len = (size_t)((h->n + 7u) / 8u), i = 0, cnt = 0, k = h->k;
    unsigned tail = (unsigned)(h->n % 8u);
    if (h->body_len != len) return DQ_ERR_CORRUPT; /* shorter was refused with the header */
    if (tail && b[len - 1] >> tail) return DQ_ERR_CORRUPT;
    for (; i < len; i += 8) {
        uint64_t w;
        uint32_t base = (uint32_t)(i * 8u);
        if (len - i >= 8) {
            w = dq__ld64(b + i);
        } else {
            size_t j;
            w = 0;
            for (j = len - i; j-- > 0;) w = w << 8 | b[i + j];
        }
        if (dq__popcount64(w) > k - cnt) return DQ_ERR_CORRUPT;
        for (; w; w &= w - 1u) idx[cnt++] = base + dq__ctz64(w);
    }
    return cnt == k ? DQ_OK : DQ_ERR_CORRUPT;
}

/* dq_index_decode() with a given VARINT kernel (tests compare the SIMD and scalar kernels) */
static inline dq_status dq__index_decode_with(const void *src, size_t src_len, uint32_t *idx, size_t idx_cap,
                                              size_t *k, dq__svb_kernel kern) {
    dq__ihead h;
    dq_status st;
    if (!k || (!idx && idx_cap)) return DQ_ERR_NULL;
    st = dq__index_head(src, src_len, &h);
    if (st != DQ_OK) return st;
    if (h.k > idx_cap) return DQ_ERR_DST_TOO_SMALL;
    if (h.coder == DQ_INDEX_GAMMA)
        st = dq__index_get_gamma(&h, idx);
    else if (h.coder == DQ_INDEX_VARINT)
        st = dq__index_get_varint(&h, idx, kern);
    else
        st = dq__index_get_bitmap(&h, idx);
    if (st == DQ_OK) *k = h.k;
    return st;
}
DQ_API dq_status dq_index_decode(const void *src, size_t src_len, uint32_t *idx, size_t idx_cap, size_t *k) {
    return dq__index_decode_with(src, src_len, idx, idx_cap, k, dq__k_svb_decode);
}

/* ---------------------------------------------------------------- optimizer implementation */

DQ_API double dq_message_bits(size_t n, unsigned bits, uint32_t bucket) {
    dq_params p;
    size_t size;
    if (n == 0 || bits < 1) return 0.0; /* bits 0 would mean the default width */
    memset(&p, 0, sizeof p);
    p.bits = bits;
    p.bucket = bucket;
    return dq_encoded_size(&p, n, &size) == DQ_OK ? 8.0 * (double)size : 0.0;
}

static inline double dq__levels_d(unsigned b) { return (double)((1u << (b - 1)) - 1u); }
static inline unsigned dq__width_of_levels(double s, unsigned bmin, unsigned bmax) {
    double b;
    if (!(s > 0.0)) return bmin; /* also NaN */
    b = 1.0 + ceil(log2(s + 1.0));
    return b < (double)bmin ? bmin : (b > (double)bmax ? bmax : (unsigned)b);
}
static inline double dq__sched_norm(const dq_sched *s) {
    double g = 0.0;
    unsigned i;
    if (s->n_norms == 0) return s->p.norm_prior;
    for (i = 0; i < s->n_norms; i++) g += s->norms[i];
    return g / (double)s->n_norms;
}
static inline double dq__sched_B(const dq_sched_params *p) {
    double B = p->bucket == DQ_BUCKET_WHOLE ? (double)p->dim : (double)p->bucket;
    return B < (double)p->dim ? B : (double)p->dim;
}

DQ_API double dq_sched_levels(const dq_sched *s, uint64_t n, double G) {
    double e = 0.5 * ((double)s->p.steps - 1.0 - (double)n);
    return s->c * pow(s->p.alpha, e) * G;
}

/* Planned bits of steps n..T-1 at log2 scale lc and norm G, counted so that it never falls
 * below what dq_sched_next will choose: widths grow with the step index (alpha <= 1), and
 * each width boundary is moved one step early to absorb rounding. */
static inline double dq__sched_plan_bits(const dq_sched *s, double lc, double G) {
    const dq_sched_params *p = &s->p;
    double T = (double)p->steps, n = (double)s->step, la = log2(p->alpha), lg = log2(G);
    double total = (T - n) * dq_message_bits(p->dim, p->bits_min, p->bucket);
    unsigned b;
    for (b = p->bits_min + 1u; b <= p->bits_max; b++) {
        /* b_k >= b  <=>  log2(s_k) > t_b = log2(2^(b-2) - 1)  (any s > 0 gives b_k >= 2) */
        double t = b == 2u ? -HUGE_VAL : log2(dq__levels_d(b - 1u)), cnt;
        double inc = dq_message_bits(p->dim, b, p->bucket) - dq_message_bits(p->dim, b - 1u, p->bucket);
        if (la == 0.0) {
            cnt = lc + lg > t - 1e-9 ? T - n : 0.0;
        } else { /* lc + lg + la (T-1-k)/2 > t  <=>  k > kappa; the 1e-9 margin (as above) keeps the
                  * count conservative when |la| is below the rounding of lc + lg */
            double kappa = T - 1.0 - 2.0 * (t - 1e-9 - lc - lg) / la, first = floor(kappa);
            if (first < n) first = n;
            cnt = first >= T ? 0.0 : T - first;
        }
        total += cnt * inc;
    }
    return total;
}

static inline void dq__sched_replan(dq_sched *s, double G) {
    /* bracket log2 c around -log2 G: at lo every step gets bits_min (levels <= 1/4), at hi even
     * the earliest remaining step gets bits_max (levels >= 2^18) */
    double R = s->p.budget_bits - s->spent_bits, lg, lo, hi;
    int it;
    if (!(G > 0.0) || G > DBL_MAX) { /* zero norms: every width is bits_min whatever c is */
        s->c = 1.0;
        return;
    }
    lg = log2(G);
    lo = -lg - 2.0;
    hi = -lg + 0.5 * -log2(s->p.alpha) * ((double)s->p.steps - 1.0 - (double)s->step) + 18.0;
    if (hi > 4000.0) hi = 4000.0; /* beyond this pow(2, hi) overflows; levels are clamped anyway */
    if (dq__sched_plan_bits(s, hi, G) <= R) {
        s->c = pow(2.0, hi);
        return;
    }
    for (it = 0; it < 100; it++) {
        double mid = 0.5 * (lo + hi);
        if (dq__sched_plan_bits(s, mid, G) <= R)
            lo = mid;
        else
            hi = mid;
    }
    s->c = pow(2.0, lo);
}

DQ_API dq_status dq_sched_init(dq_sched *s, const dq_sched_params *p) {
    dq_sched_params q;
    int calib = 0;
    if (!s || !p) return DQ_ERR_NULL;
    q = *p;
    if (q.mode == DQ_SCHED_DEFAULT) q.mode = DQ_SCHED_DQSGD;
    if ((unsigned)q.mode > (unsigned)DQ_SCHED_DECREASING) return DQ_ERR_PARAM;
    if (q.alpha == 0.0) q.alpha = 1.0;
    if (!q.bits_min) q.bits_min = 2;
    if (!q.bits_max) q.bits_max = 16;
    if (!q.period) q.period = 1;
    if (!q.window) q.window = 1;
    if (!q.workers) q.workers = 1;
    if (!q.bucket) q.bucket = DQ_BUCKET_DEFAULT;
    if (q.steps == 0 || q.dim == 0) return DQ_ERR_EMPTY;
    if (q.bits_min < 2 || q.bits_max > 16 || q.bits_min > q.bits_max) return DQ_ERR_BITS;
    if (!(q.alpha > 0.0 && q.alpha <= 1.0) || q.window > DQ_SCHED_MAX_WINDOW || !(q.norm_prior >= 0.0) ||
        !(q.scale >= 0.0) || !(q.target_error >= 0.0) || !(q.budget_bits >= 0.0) || !(q.lipschitz >= 0.0) ||
        !(q.lr >= 0.0) || (q.bucket != DQ_BUCKET_WHOLE && q.bucket % 8u))
        return DQ_ERR_PARAM;
    memset(s, 0, sizeof *s);
    s->p = q;
    if (q.mode != DQ_SCHED_DQSGD) return DQ_OK;
    calib = (q.scale > 0.0) + (q.target_error > 0.0) + (q.budget_bits > 0.0);
    if (calib != 1 || !(q.norm_prior > 0.0)) return DQ_ERR_PARAM;
    if (q.scale > 0.0) {
        s->c = q.scale;
    } else if (q.target_error > 0.0) {
        if (!(q.lipschitz > 0.0 && q.lr > 0.0)) return DQ_ERR_PARAM;
        s->c = sqrt(q.lipschitz * q.lr * q.lr * dq__sched_B(&q) * (double)q.steps /
                    (8.0 * (double)q.workers * q.target_error));
    } else if (q.budget_bits < (double)q.steps * dq_message_bits(q.dim, q.bits_min, q.bucket)) {
        return DQ_ERR_INFEASIBLE;
    }
    return DQ_OK;
}

DQ_API dq_status dq_sched_next(dq_sched *s, unsigned *bits) {
    const dq_sched_params *p;
    if (!s || !bits) return DQ_ERR_NULL;
    p = &s->p;
    if (s->step >= p->steps) return DQ_ERR_PARAM; /* the planned run is over */
    if (s->step % p->period == 0 || s->bits == 0) {
        double T = (double)p->steps, n = (double)s->step;
        switch (p->mode) {
            case DQ_SCHED_FIXED:
                s->bits = p->bits_max;
                break;
            case DQ_SCHED_DECREASING:
                s->bits = (unsigned)((double)p->bits_max -
                                     floor(((double)(p->bits_max - p->bits_min)) * n / (T > 1.0 ? T - 1.0 : 1.0) + 0.5));
                break;
            case DQ_SCHED_INCREASING: {
                double s0 = dq__levels_d(p->bits_min), ratio = 1.0;
                if (s->loss0 > 0.0) ratio = s->loss > 0.0 ? s->loss0 / s->loss : HUGE_VAL; /* loss 0: widest */
                s->bits = dq__width_of_levels(s0 * sqrt(ratio > 1.0 ? ratio : 1.0), p->bits_min, p->bits_max);
                break;
            }
            default: {
                double G = dq__sched_norm(s);
                if (p->budget_bits > 0.0) {
                    if (p->budget_bits - s->spent_bits < (T - n) * dq_message_bits(p->dim, p->bits_min, p->bucket)) {
                        s->bits = p->bits_min;
                        *bits = s->bits;
                        return DQ_ERR_INFEASIBLE;
                    }
                    dq__sched_replan(s, G);
                }
                s->bits = dq__width_of_levels(dq_sched_levels(s, s->step, G), p->bits_min, p->bits_max);
            }
        }
    }
    *bits = s->bits;
    return DQ_OK;
}

DQ_API dq_status dq_sched_update(dq_sched *s, double grad_norm, double loss, double bits_sent) {
    if (!s) return DQ_ERR_NULL;
    if (!(grad_norm >= 0.0) || !(bits_sent >= 0.0) || grad_norm > DBL_MAX || loss != loss) return DQ_ERR_PARAM;
    if (s->p.mode == DQ_SCHED_INCREASING) { /* tracks the loss, not the norm */
        if (s->loss0 == 0.0 && loss > 0.0) s->loss0 = loss;
        if (s->loss0 > 0.0) s->loss = loss;
    } else if (s->n_norms < s->p.window) { /* ring of the last `window` norms */
        s->norms[s->n_norms++] = grad_norm;
    } else {
        s->norms[s->head] = grad_norm;
        s->head = (s->head + 1u) % s->p.window;
    }
    s->spent_bits += bits_sent;
    s->step++;
    return DQ_OK;
}

/* ---------------------------------------------------------------- checkpoints
 * doc/FORMAT.md "Checkpoints": magic "DQCK", version, kind, reserved u16, u64 count, body,
 * CRC32C of everything before it. */
#define DQ__CKPT_VERSION 1u
#define DQ__CKPT_RESIDUAL 1u
#define DQ__CKPT_SCHED 2u
#define DQ__CKPT_HEAD 16u

static inline void dq__ckpt_head(uint8_t *d, unsigned kind, uint64_t count) {
    d[0] = 'D';
    d[1] = 'Q';
    d[2] = 'C';
    d[3] = 'K';
    d[4] = (uint8_t)DQ__CKPT_VERSION;
    d[5] = (uint8_t)kind;
    dq__st16(d + 6, 0u);
    dq__st64(d + 8, count);
}
/* Checks framing and CRC; *count gets the count field. */
static inline dq_status dq__ckpt_open(const uint8_t *s, size_t len, unsigned kind, uint64_t *count) {
    if (len < DQ__CKPT_HEAD + 4u) return DQ_ERR_TRUNCATED;
    if (s[0] != 'D' || s[1] != 'Q' || s[2] != 'C' || s[3] != 'K') return DQ_ERR_BAD_MAGIC;
    if (s[4] != DQ__CKPT_VERSION) return DQ_ERR_VERSION;
    if (s[5] != kind) return DQ_ERR_PARAM; /* a checkpoint of another kind */
    if (dq__ld16(s + 6) != 0) return DQ_ERR_CORRUPT;
    *count = dq__ld64(s + 8);
    return DQ_OK;
}
static inline int dq__ckpt_crc_ok(const uint8_t *s, size_t total) {
    return dq__ld32(s + total - 4u) == dq__crc32c(s, total - 4u);
}

DQ_API size_t dq_residual_save_size(size_t n) {
    if (n > (SIZE_MAX - DQ__CKPT_HEAD - 4u) / 4u) return 0;
    return DQ__CKPT_HEAD + 4u * n + 4u;
}
DQ_API dq_status dq_residual_save(const float *residual, size_t n, void *dst, size_t dst_cap, size_t *dst_len) {
    uint8_t *d = (uint8_t *)dst;
    size_t total = dq_residual_save_size(n), i;
    if (!residual || !dst || !dst_len) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if (total == 0) return DQ_ERR_TOO_LARGE;
    if (dst_cap < total) return DQ_ERR_DST_TOO_SMALL;
    dq__ckpt_head(d, DQ__CKPT_RESIDUAL, (uint64_t)n);
    for (i = 0; i < n; i++) dq__st32(d + DQ__CKPT_HEAD + 4u * i, dq__fbits(residual[i]));
    dq__st32(d + total - 4u, dq__crc32c(d, total - 4u));
    *dst_len = total;
    return DQ_OK;
}
DQ_API dq_status dq_residual_load(const void *src, size_t src_len, float *residual, size_t n) {
    const uint8_t *s = (const uint8_t *)src;
    uint64_t count;
    size_t total, i;
    dq_status st;
    if (!src || !residual) return DQ_ERR_NULL;
    if ((st = dq__ckpt_open(s, src_len, DQ__CKPT_RESIDUAL, &count)) != DQ_OK) return st;
    if (count != (uint64_t)n) return DQ_ERR_SIZE_MISMATCH;
    total = dq_residual_save_size(n);
    if (total == 0 || src_len < total) return DQ_ERR_TRUNCATED;
    if (!dq__ckpt_crc_ok(s, total)) return DQ_ERR_CHECKSUM;
    for (i = 0; i < n; i++) /* error-feedback memory is always finite */
        if ((dq__ld32(s + DQ__CKPT_HEAD + 4u * i) & 0x7F800000u) == 0x7F800000u) return DQ_ERR_CORRUPT;
    for (i = 0; i < n; i++) residual[i] = dq__bitsf(dq__ld32(s + DQ__CKPT_HEAD + 4u * i));
    return DQ_OK;
}

/* One field list serves both directions: each call stores (save) or loads one field at *at. */
static inline void dq__io64(uint8_t **at, uint64_t *v, int load) {
    if (load)
        *v = dq__ld64(*at);
    else
        dq__st64(*at, *v);
    *at += 8;
}
static inline void dq__io32(uint8_t **at, unsigned *v, int load) {
    if (load)
        *v = (unsigned)dq__ld32(*at);
    else
        dq__st32(*at, (uint32_t)*v);
    *at += 4;
}
static inline void dq__iof64(uint8_t **at, double *v, int load) {
    uint64_t u = 0;
    if (!load) memcpy(&u, v, 8);
    dq__io64(at, &u, load);
    if (load) memcpy(v, &u, 8);
}
static inline void dq__sched_io(dq_sched *s, uint8_t *body, int load) {
    uint8_t *at = body;
    unsigned mode = (unsigned)s->p.mode, bucket = s->p.bucket, k;
    uint64_t dim = (uint64_t)s->p.dim;
    dq__io32(&at, &mode, load);
    dq__io64(&at, &s->p.steps, load);
    dq__io64(&at, &dim, load);
    dq__io32(&at, &bucket, load);
    dq__iof64(&at, &s->p.alpha, load);
    dq__io32(&at, &s->p.bits_min, load);
    dq__io32(&at, &s->p.bits_max, load);
    dq__io32(&at, &s->p.period, load);
    dq__io32(&at, &s->p.window, load);
    dq__iof64(&at, &s->p.norm_prior, load);
    dq__iof64(&at, &s->p.scale, load);
    dq__iof64(&at, &s->p.target_error, load);
    dq__iof64(&at, &s->p.budget_bits, load);
    dq__iof64(&at, &s->p.lipschitz, load);
    dq__iof64(&at, &s->p.lr, load);
    dq__io32(&at, &s->p.workers, load);
    dq__io64(&at, &s->step, load);
    dq__io32(&at, &s->bits, load);
    dq__iof64(&at, &s->c, load);
    dq__iof64(&at, &s->spent_bits, load);
    for (k = 0; k < DQ_SCHED_MAX_WINDOW; k++) dq__iof64(&at, &s->norms[k], load);
    dq__io32(&at, &s->n_norms, load);
    dq__io32(&at, &s->head, load);
    dq__iof64(&at, &s->loss0, load);
    dq__iof64(&at, &s->loss, load);
    if (load) {
        s->p.mode = (dq_sched_mode)(mode <= (unsigned)DQ_SCHED_DECREASING ? mode : 0u);
        s->p.bucket = (uint32_t)bucket;
        s->p.dim = dim <= (uint64_t)SIZE_MAX ? (size_t)dim : 0u; /* 0 fails validation */
    }
}
#define DQ__SCHED_BODY (DQ_SCHED_SAVE_SIZE - DQ__CKPT_HEAD - 4u)

DQ_API dq_status dq_sched_save(const dq_sched *s, void *dst, size_t dst_cap, size_t *dst_len) {
    uint8_t *d = (uint8_t *)dst;
    dq_sched copy;
    if (!s || !dst || !dst_len) return DQ_ERR_NULL;
    if (dst_cap < DQ_SCHED_SAVE_SIZE) return DQ_ERR_DST_TOO_SMALL;
    copy = *s; /* the field walker takes non-const pointers */
    dq__ckpt_head(d, DQ__CKPT_SCHED, DQ__SCHED_BODY);
    dq__sched_io(&copy, d + DQ__CKPT_HEAD, 0);
    dq__st32(d + DQ_SCHED_SAVE_SIZE - 4u, dq__crc32c(d, DQ_SCHED_SAVE_SIZE - 4u));
    *dst_len = DQ_SCHED_SAVE_SIZE;
    return DQ_OK;
}
DQ_API dq_status dq_sched_load(const void *src, size_t src_len, dq_sched *s) {
    const uint8_t *in = (const uint8_t *)src;
    uint8_t body[DQ__SCHED_BODY];
    dq_sched t, check;
    uint64_t count;
    unsigned k;
    dq_status st;
    if (!src || !s) return DQ_ERR_NULL;
    if ((st = dq__ckpt_open(in, src_len, DQ__CKPT_SCHED, &count)) != DQ_OK) return st;
    if (count != DQ__SCHED_BODY) return DQ_ERR_CORRUPT;
    if (src_len < DQ_SCHED_SAVE_SIZE) return DQ_ERR_TRUNCATED;
    if (!dq__ckpt_crc_ok(in, DQ_SCHED_SAVE_SIZE)) return DQ_ERR_CHECKSUM;
    memcpy(body, in + DQ__CKPT_HEAD, sizeof body);
    memset(&t, 0, sizeof t);
    dq__sched_io(&t, body, 1);
    /* The params must be ones dq_sched_init accepted (and left unchanged: defaults applied),
     * and the state must be one the calls can reach. */
    if (dq_sched_init(&check, &t.p) != DQ_OK || memcmp(&check.p, &t.p, sizeof t.p) != 0) return DQ_ERR_CORRUPT;
    if (t.n_norms > t.p.window || t.head >= t.p.window || (t.head != 0 && t.n_norms < t.p.window) ||
        t.bits > t.p.bits_max || (t.bits != 0 && t.bits < t.p.bits_min) || !(t.c >= 0.0 && t.c <= DBL_MAX) ||
        !(t.spent_bits >= 0.0 && t.spent_bits <= DBL_MAX) || !(t.loss0 >= 0.0 || t.loss0 < 0.0) ||
        !(t.loss >= 0.0 || t.loss < 0.0))
        return DQ_ERR_CORRUPT;
    for (k = 0; k < DQ_SCHED_MAX_WINDOW; k++)
        if (!(t.norms[k] >= 0.0 && t.norms[k] <= DBL_MAX)) return DQ_ERR_CORRUPT;
    *s = t;
    return DQ_OK;
}

/* ---- greedy allocation with a binary max-heap of (gain per bit, item) in the workspace */
typedef struct dq__heap_ent {
    double key;
    size_t item;
} dq__heap_ent;

DQ_API size_t dq_alloc_workspace_size(size_t n) { return n * sizeof(dq__heap_ent); }

static inline int dq__heap_less(const dq__heap_ent *a, const dq__heap_ent *b) {
    return a->key < b->key || (a->key == b->key && a->item > b->item); /* ties: lower index first */
}
static inline void dq__heap_down(dq__heap_ent *h, size_t n, size_t i) {
    for (;;) {
        size_t l = 2u * i + 1u, r = l + 1u, m = i;
        dq__heap_ent t;
        if (l < n && dq__heap_less(&h[m], &h[l])) m = l;
        if (r < n && dq__heap_less(&h[m], &h[r])) m = r;
        if (m == i) return;
        t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}
static inline double dq__alloc_key(double w, size_t dim, unsigned b, uint32_t bucket) {
    double e0 = 1.0 / (dq__levels_d(b) * dq__levels_d(b)), e1 = 1.0 / (dq__levels_d(b + 1u) * dq__levels_d(b + 1u));
    double gain = w * (e0 - e1), cost = dq_message_bits(dim, b + 1u, bucket) - dq_message_bits(dim, b, bucket);
    /* a step can cost 0 bits when dim < 8 (the byte count does not change): free gain first */
    return cost > 0.0 ? gain / cost : (gain > 0.0 ? HUGE_VAL : 0.0);
}

DQ_API dq_status dq_alloc_bits(const double *weight, const size_t *dim, size_t n, uint32_t bucket, double budget_bits,
                               unsigned bits_min, unsigned bits_max, void *work, size_t work_cap, unsigned *bits,
                               double *bits_used) {
    dq__heap_ent *h = (dq__heap_ent *)work;
    double used = 0.0;
    size_t i, hn = 0;
    if (bits_used) *bits_used = 0.0;
    if (!weight || !dim || !bits || (n && !work)) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if (bits_min < 2 || bits_max > 16 || bits_min > bits_max) return DQ_ERR_BITS;
    if (!(budget_bits >= 0.0) || (bucket && bucket != DQ_BUCKET_WHOLE && bucket % 8u)) return DQ_ERR_PARAM;
    if (work_cap < dq_alloc_workspace_size(n)) return DQ_ERR_WORKSPACE;
    for (i = 0; i < n; i++) {
        if (!(weight[i] >= 0.0) || dim[i] == 0) return DQ_ERR_PARAM;
        bits[i] = bits_min;
        used += dq_message_bits(dim[i], bits_min, bucket);
    }
    if (used > budget_bits) return DQ_ERR_INFEASIBLE;
    if (bits_min < bits_max)
        for (i = 0; i < n; i++) {
            h[hn].key = dq__alloc_key(weight[i], dim[i], bits_min, bucket);
            h[hn++].item = i;
        }
    for (i = hn / 2u; i-- > 0;) dq__heap_down(h, hn, i);
    while (hn > 0) {
        size_t it = h[0].item;
        double inc = dq_message_bits(dim[it], bits[it] + 1u, bucket) - dq_message_bits(dim[it], bits[it], bucket);
        if (used + inc <= budget_bits) {
            used += inc;
            bits[it]++;
            if (bits[it] < bits_max) {
                h[0].key = dq__alloc_key(weight[it], dim[it], bits[it], bucket);
            } else {
                h[0] = h[--hn];
            }
        } else {
            h[0] = h[--hn]; /* cannot afford this item's next bit; others may be cheaper */
        }
        if (hn) dq__heap_down(h, hn, 0);
    }
    if (bits_used) *bits_used = used;
    return DQ_OK;
}

DQ_API dq_status dq_topk_per_bit(const double *sq_desc, size_t d, double c0, double c1, size_t *k) {
    double S;
    size_t j;
    if (!sq_desc || !k) return DQ_ERR_NULL;
    if (d == 0) return DQ_ERR_EMPTY;
    if (!(c0 >= 0.0) || !(c1 > 0.0)) return DQ_ERR_PARAM;
    S = sq_desc[0];
    /* the ratio grows from j to j+1 iff a_(j+1) (c0 + c1 j) > c1 S_j; h(j) is non-increasing */
    for (j = 1; j < d; j++) {
        if (!(sq_desc[j] * (c0 + c1 * (double)j) > c1 * S)) break;
        S += sq_desc[j];
    }
    *k = j;
    return DQ_OK;
}

DQ_API dq_status dq_levels_per_bit(size_t d, uint32_t bucket, double overhead_bits, unsigned bits_min,
                                   unsigned bits_max, unsigned *bits) {
    double B, best = -1.0;
    unsigned b;
    if (!bits) return DQ_ERR_NULL;
    if (d == 0) return DQ_ERR_EMPTY;
    if (bits_min < 1 || bits_max > 16 || bits_min > bits_max) return DQ_ERR_BITS;
    if (!(overhead_bits >= 0.0) || (bucket && bucket != DQ_BUCKET_WHOLE && bucket % 8u)) return DQ_ERR_PARAM;
    B = bucket == DQ_BUCKET_WHOLE ? (double)d : (double)(bucket ? bucket : DQ_BUCKET_DEFAULT);
    if (B > (double)d) B = (double)d;
    *bits = bits_min;
    for (b = bits_min < 2u ? 2u : bits_min; b <= bits_max; b++) {
        double s = dq__levels_d(b), om = B / (s * s), om2 = sqrt(B) / s, v;
        if (om2 < om) om = om2;
        v = 1.0 / ((1.0 + om) * (dq_message_bits(d, b, bucket) + overhead_bits));
        if (v > best) {
            best = v;
            *bits = b;
        }
    }
    return DQ_OK;
}

#ifdef __cplusplus
}
#endif

#endif /* DQSGD_H_INCLUDED */

/* MIT License. Copyright (c) 2026 the dqsgd authors.
 * Permission is hereby granted, free of charge, to any person obtaining a copy of this software
 * and associated documentation files (the "Software"), to deal in the Software without
 * restriction, including without limitation the rights to use, copy, modify, merge, publish,
 * distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the
 * Software is furnished to do so, subject to the following conditions: The above copyright
 * notice and this permission notice shall be included in all copies or substantial portions of
 * the Software. THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 * IMPLIED. */
