/* dqsgd.h - v0.12.1 - dynamic quantized SGD: gradient quantizers, wire format, error feedback
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
 *     dq_message m;                        // receiver: open once, size buffers from m.h.count
 *     st = dq_message_open(msg, len, &m);
 *     st = dq_message_decode_add(&m, 1.0f / workers, sum, m.h.count);
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
 *
 * Contents. The public API comes first, one block, grouped by concern:
 *   status codes, parameters  dq_status, dq_params, dq_header, DQ_ENCODE_BOUND
 *   codec                     dq_encode, dq_decode(_add), dq_message_open and its decoders,
 *                             sizes, ranges, blocks, dq_verify, coders (dq_recode, dq_coded_size)
 *   bit streams, Elias codes  dq_bw_*, dq_br_*, dq_elias_*
 *   sparse index streams      dq_index_*
 *   bit-budget optimizer      dq_sched_*, dq_plan_*, dq_alloc_bits, Khirirat's rules,
 *                             checkpoints (dq_residual_save/load, dq_sched_save/load)
 *   sparsifiers               dq_topk_select (top-k, random-k, threshold are schemes)
 *   count sketch, data        dq_sketch_*, dq_gate, dq_gate_lambda, dq_sample_encode
 *   truncation solver         dq_trunc_solve, dq_tail_estimate, dq_trunc_mse
 *   fp16 and bf16             dq_dtype, dq_encode_typed, dq_decode(_add)_typed, dq_convert
 *   aggregation               dq_offsets, dq_chunk, dq_requantize, dq_shared_*
 * Then the implementation ("implementation" below), in the same order: shared internals and
 * the scalar reference kernels, kernel selection (the SIMD kernels are in dqsgd_simd.h), codec,
 * bit streams, coders and coded messages, index streams, optimizer, checkpoints, sparsifiers,
 * count sketch, truncation solver, fp16/bf16, aggregation.
 * Every section opens with a dashed rule and its name; search for the name.
 *
 * License: MIT (see end of file). */
#ifndef DQSGD_H_INCLUDED
#define DQSGD_H_INCLUDED

#define DQSGD_VERSION_MAJOR 0
#define DQSGD_VERSION_MINOR 12
#define DQSGD_VERSION_PATCH 1
#define DQSGD_VERSION_NUMBER (DQSGD_VERSION_MAJOR * 10000 + DQSGD_VERSION_MINOR * 100 + DQSGD_VERSION_PATCH)
#define DQSGD_VERSION_STRING "0.12.1"
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
    X(DQ_ERR_RANGE, -17, "element range outside the vector or not aligned to dq_range_align()") \
    X(DQ_ERR_TRANSPORT, -18, "the transport under an aggregation call failed (e.g. an MPI error)")

#define DQ__STATUS_ENUM(name, value, msg) name = value,
typedef enum dq_status { DQ_STATUS_LIST(DQ__STATUS_ENUM) DQ__STATUS_END = -99 } dq_status;
#undef DQ__STATUS_ENUM

/* ---------------------------------------------------------------- parameters
 * Zero in every field means the documented default. */
/* Schemes (the header's scheme byte, doc/FORMAT.md 3.1). 1..5, 9, 10: b-bit codes (a sign and
 * a magnitude level) with a float scale per bucket (two for scheme 5); they share the coders,
 * ranges and kernels. */
typedef enum dq_scheme {
    DQ_SCHEME_DEFAULT = 0,
    DQ_SCHEME_QSGD = 1,      /* uniform levels l/s (QSGD) */
    DQ_SCHEME_NUQSGD = 2,    /* exponential levels 2^(l-s) (NUQSGD, natural dithering); bits 2..8 */
    DQ_SCHEME_NATURAL = 3,   /* natural compression: exponential levels under a power-of-two scale */
    DQ_SCHEME_TERNGRAD = 4,  /* TernGrad: 2 bits, {-S, 0, S}, clipped at 2.5 x the bucket's RMS */
    DQ_SCHEME_TWOMEANS = 5,  /* 1-bit SGD (Seide et al.): the sign, decoded as the mean of the bucket's
                              * elements of that sign; 1 bit, deterministic; use with error feedback */
    DQ_SCHEME_TOPK = 6,      /* the k largest |x|: indices and float32 values (bits 1..16: quantized) */
    DQ_SCHEME_RANDK = 7,     /* k coordinates the receiver regenerates from (seed, step, stream) */
    DQ_SCHEME_THRESHOLD = 8, /* every |x| > threshold: indices and float32 values */
    DQ_SCHEME_TRUNC = 9,     /* truncate at alpha, then uniform levels (scale = alpha) */
    DQ_SCHEME_TRUNC_NU = 10, /* truncate at alpha, then non-uniform levels sent in the message */
    DQ_SCHEME_SKETCH = 11    /* a count-sketch table (dq_sketch_encode) */
} dq_scheme;
typedef enum dq_rounding {
    DQ_ROUND_DEFAULT = 0,    /* = stochastic */
    DQ_ROUND_STOCHASTIC = 1, /* unbiased up to the 2^-24 granularity of the dither */
    DQ_ROUND_NEAREST = 2     /* deterministic, biased; ties go toward zero; 1 bit: sign of x
                              * (DQ_SCHEME_TWOMEANS: always; 0 means nearest there) */
} dq_rounding;
typedef enum dq_norm {
    DQ_NORM_DEFAULT = 0, /* = L2 */
    DQ_NORM_L2 = 1,      /* scale = ||bucket||_2 (QSGD) */
    DQ_NORM_MAX = 2,     /* scale = ||bucket||_inf (QSGD-inf, lower variance in practice) */
    DQ_NORM_MEAN = 3,    /* scale = ||bucket||_1 / len: chosen by the encoder for 1-bit nearest
                          * (scaled sign) whatever norm was asked; not accepted as input */
    /* chosen by the scheme, never asked; reported by dq_header_read: */
    DQ_NORM_POW2 = 4,  /* DQ_SCHEME_NATURAL: the smallest power of two >= ||bucket||_inf */
    DQ_NORM_CLIP = 5,  /* DQ_SCHEME_TERNGRAD: min(||bucket||_inf, 2.5 x RMS) */
    DQ_NORM_ALPHA = 6, /* DQ_SCHEME_TRUNC*: the caller's truncation threshold alpha */
    DQ_NORM_TWOMEANS = 7 /* DQ_SCHEME_TWOMEANS: the means of the non-negative and negative elements */
} dq_norm;

#define DQ_BITS_DEFAULT 4u
#define DQ_BUCKET_DEFAULT 512u
#define DQ_BUCKET_WHOLE 0xFFFFFFFFu /* one scale for the whole vector */
#define DQ_MAX_ELEMS ((uint64_t)1 << 56)
#define DQ_HEADER_SIZE 48u

typedef struct dq_params {
    unsigned bits;        /* 1..16 bits per element; 0 = 4 (TernGrad 2, natural 8, two-means 1; the
                           * sparse schemes: 0 or 32 sends float32 values, 1..16 quantizes them) */
    uint32_t bucket;      /* elements per scale: a multiple of 8, or DQ_BUCKET_WHOLE; 0 = 512 */
    dq_scheme scheme;     /* 0 = QSGD */
    dq_rounding rounding; /* 0 = stochastic */
    dq_norm norm;         /* 0 = L2 */
    uint64_t seed;        /* generator key: (seed, step, stream, element index) */
    uint64_t step;
    uint32_t stream;   /* e.g. the worker's rank, so workers draw independent dither */
    unsigned checksum; /* 1 = append a CRC32C of scales + payload (flag bit 1); 0 = none */
    unsigned coder;    /* how the codes are sent: DQ_CODER_DEFAULT (0), _FIXED_ONLY, _ELIAS, _RANS or _AUTO */
    /* scheme-specific; zero where they do not apply */
    float alpha;           /* DQ_SCHEME_TRUNC, _TRUNC_NU: truncation threshold, finite and > 0 */
    const float *levels;   /* DQ_SCHEME_TRUNC_NU: s = 2^(bits-1)-1 levels in (0, 1], increasing, the
                            * last exactly 1 (dq_trunc_solve); level l decodes to levels[l-1] * alpha */
    size_t k;              /* DQ_SCHEME_TOPK, _RANDK: elements kept, 1..n */
    float threshold;       /* DQ_SCHEME_THRESHOLD: keep |x| > threshold (finite, >= 0) */
    unsigned unbiased;     /* DQ_SCHEME_RANDK: 1 = rescale the kept values so the message is unbiased */
    unsigned index_coder;  /* DQ_SCHEME_TOPK, _THRESHOLD: the index stream's dq_index_coder; 0 = auto */
} dq_params;
/* Composed messages (doc/FORMAT.md 20.10): a sparse scheme with bits 1..16 sends the k values it
 * selects as a QSGD message of those values, in index order: bucket (of selected values),
 * rounding, norm, coder and checksum then mean what they mean for QSGD. Sparse Ternary
 * Compression (one magnitude, the mean |value|, and k signs) is bits = 1, rounding =
 * DQ_ROUND_NEAREST, bucket = DQ_BUCKET_WHOLE. */

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
    size_t nnz;          /* sparse schemes: (index, value) pairs carried; otherwise count. A sparse
                          * message with bits 1..16 (composed) has the coder, norm, bucket and
                          * stochastic flag of its values' QSGD message */
    size_t segments;     /* level schemes: 1, or the segments of a segmented message (bits is then
                          * the widest, coder 0, payload_size the bytes of the segments' bodies);
                          * other schemes: 0 */
} dq_header;

#define DQ_FLAG_STOCHASTIC 0x0001u
#define DQ_FLAG_CHECKSUM 0x0002u /* a CRC32C of scales + payload follows the payload */
#define DQ_FLAG_RESCALED 0x0004u /* DQ_SCHEME_RANDK: values were rescaled to be unbiased */
#define DQ_FLAG_SEGMENTS 0x0008u /* segmented message: a segment table follows the header (FORMAT 24) */
/* Coders: how a message sends its codes (doc/FORMAT.md 17). Every coder decodes to the same
 * values; they differ in size and speed. */
#define DQ_CODER_FIXED 0u /* b bits per code, SIMD-packed: the layout ranges and blocks write. In
                           * dq_params, 0 is DQ_CODER_DEFAULT (since 0.7) */
#define DQ_CODER_ELIAS 1u /* QSGD's sparse layout: Elias omega gaps, signs and levels (b >= 2) */
#define DQ_CODER_RANS8 2u /* the first rANS layout (8 states, one stream): read, no longer written;
                            * in dq_params or dq_recode() it asks for DQ_CODER_RANS */
#define DQ_CODER_RANS 3u  /* rANS over groups of codes, 32 interleaved states, in chunks of 2^16
                            * symbols; frequency table in the message (b <= 8) */
#define DQ_CODER_AUTO 255u /* dq_params only: the smallest of fixed, Elias and rANS for this message */
/* dq_params only. DQ_CODER_DEFAULT (0, what a zeroed dq_params asks): the fixed layout below
 * DQ_CODER_AUTO_MIN elements (and always for ranges and blocks); from there DQ_CODER_AUTO, with
 * the payload checksum on the coded forms it sends (as with checksum = 1; such a message
 * decodes in one pass instead of two). A coded form goes out only when its payload plus those
 * 4 bytes is smaller than the fixed payload; otherwise the fixed layout goes out, without a
 * checksum. Where dst_cap lacks the 4 bytes, AUTO's choice goes out without one.
 * DQ_CODER_FIXED_ONLY: the fixed layout whatever the size (what 0 asked for before library
 * 0.7). Ranges, blocks and the sparse schemes with float32 values take 0 or
 * DQ_CODER_FIXED_ONLY (the same bytes either way) and refuse every other coder (DQ_ERR_PARAM);
 * a sparse scheme with bits 1..16 takes every coder for its values, as QSGD of k elements. */
#define DQ_CODER_DEFAULT 0u
#define DQ_CODER_FIXED_ONLY 254u
#define DQ_CODER_AUTO_MIN 4096u

/* The receiver-side bound: no level-scheme message of n elements at `bits` bits is larger,
 * whatever the params and coder (a coded form larger than the fixed layout is never written,
 * dq_encode() and dq_recode() send the fixed layout instead), so a receiver that knows n and
 * the width sizes its buffer from it. As a constant
 * expression (no overflow check: fits 64-bit size_t for n <= DQ_MAX_ELEMS). Monotonic in n and
 * bits. The per-bucket scales are counted for the smallest bucket (8), and the payload
 * checksum and a TRUNC_NU level table are counted. A 1-bit DQ_SCHEME_TWOMEANS message has two
 * scales per bucket (52 + 9 ceil(n/8) bytes at most); the bound is the larger of the two
 * figures at every width, which keeps it monotonic in bits (it exceeds the level-scheme figure
 * only for bits <= 4). Sparse and sketch messages have their own sizes (dq_encode_capacity()
 * with the sender's params, dq_sketch_encoded_size()). */
#define DQ_ENCODE_BOUND(n, bits) \
    (DQ__BOUND_LEVELS(n, bits) > DQ__BOUND_TWOMEANS(n) ? DQ__BOUND_LEVELS(n, bits) : DQ__BOUND_TWOMEANS(n))
#define DQ__BOUND_LEVELS(n, bits)                                                                  \
    ((size_t)DQ_HEADER_SIZE + 4u * (((size_t)(n) + 7u) / 8u) + ((size_t)(n) * (size_t)(bits) + 7u) / 8u + \
     4u + DQ__LEVEL_TABLE_BYTES(bits))
#define DQ__BOUND_TWOMEANS(n) ((size_t)DQ_HEADER_SIZE + 9u * (((size_t)(n) + 7u) / 8u) + 4u)
/* A DQ_SCHEME_TRUNC_NU message carries its s = 2^(b-1)-1 levels (b <= 8); counted as 127 above
 * 8 bits too, which keeps the bound monotonic. */
#define DQ__LEVEL_TABLE_BYTES(bits) \
    ((size_t)((bits) < 2u ? 0u : 4u * ((1u << (((bits) < 8u ? (bits) : 8u) - 1u)) - 1u)))

/* ---------------------------------------------------------------- codec: messages, sizes, ranges, blocks, coders */

/*! dq_strerror() : @return a static description of any status, never NULL. */
DQ_API const char *dq_strerror(dq_status s);
/*! dq_version_number() : DQSGD_VERSION_NUMBER of the implementation. */
DQ_API unsigned dq_version_number(void);
/*! dq_simd_backend() : the kernel set compiled in: "scalar", "sse2", "avx2" or "avx512". */
DQ_API const char *dq_simd_backend(void);

/*! dq_encode_bound() : DQ_ENCODE_BOUND(n, bits): the largest level-scheme message of n elements
 *  at `bits` bits, any params and coder (the receiver's buffer).
 *  @return 0 if bits is outside 1..16, n > DQ_MAX_ELEMS, or the size overflows size_t. */
DQ_API size_t dq_encode_bound(size_t n, unsigned bits);
/*! dq_encode_capacity() : the dst_cap with which dq_encode() succeeds for these params and n,
 *  whatever the data (the sender's buffer). It is the exact size written where that size
 *  depends on the params and n alone: level schemes sent in the fixed layout
 *  (DQ_CODER_FIXED_ONLY, or the default below DQ_CODER_AUTO_MIN elements), and DQ_SCHEME_RANDK
 *  with float32 values.
 *  Elsewhere the written size (*dst_len) is at most this: DQ_CODER_AUTO and the default (the
 *  fixed size, which AUTO never exceeds, plus the working room of one rANS chunk's fixed bytes,
 *  or at widths 9..16 as many bytes for Elias, at most the fixed payload; plus for the
 *  default the 4 bytes of the checksum it adds to coded messages: with this room AUTO sends
 *  the smallest form unless that form's in-place re-code needs more room, FORMAT 17.5, which
 *  dq_encode_bound_coded() always gives), a forced
 *  coder (dq_encode_bound_coded(), its working room), TOPK (the largest index stream, plus 4
 *  bytes of working room) and THRESHOLD (as TOPK with k = n); with quantized values (bits
 *  1..16) these add the capacity of the values' QSGD message of k elements less its 48-byte
 *  header, and 4 bytes a value (8 for TOPK, THRESHOLD) of working room (doc/FORMAT.md 20.7).
 *  dq_coded_size() gives a written message's exact size in another coder. */
DQ_API dq_status dq_encode_capacity(const dq_params *p, size_t n, size_t *size);
/*! dq_block_size() : the exact size dq_encode_block() will write (no header; fixed coder only). */
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
 *  h.msg_size are ignored. A message with the payload checksum is verified first.
 *  Every check happens before out is written, so a rejected message leaves it untouched, with
 *  one exception: a coded message (DQ_CODER_ELIAS, _RANS) carrying the payload checksum is
 *  decoded in one pass, so if it passes the checksum yet is malformed (only a non-conforming
 *  encoder writes one) the call returns DQ_ERR_CORRUPT with out partly written (FORMAT 17.4). */
DQ_API dq_status dq_decode(const void *src, size_t src_len, float *out, size_t out_cap);
/*! dq_decode_add() : acc[i] += weight * decoded[i], the aggregation step. acc_len must equal
 *  the message's element count. The result equals dq_decode() then that loop, bit for bit.
 *  acc is untouched on failure, with dq_decode()'s one exception (then acc is partly updated). */
DQ_API dq_status dq_decode_add(const void *src, size_t src_len, float weight, float *acc, size_t acc_len);

/* Resolved parameters of a level scheme (private: read through the calls). */
#define DQ__TAB_MAX 128u /* magnitude levels 0..s of a table scheme, s <= 127 */
typedef struct dq__cfg {
    unsigned scheme, bits, stochastic, norm; /* norm: wire value (DQ__NORM_WIRE_*) */
    unsigned checksum;               /* payload CRC32C follows the payload */
    unsigned coder;                  /* as asked: DQ_CODER_FIXED .. DQ_CODER_RANS, or DQ_CODER_AUTO */
    uint32_t bucket_wire;            /* 0 = whole */
    size_t bucket;                   /* effective elements per scale (>= 1) */
    size_t nbuckets;
    size_t ntab;   /* levels sent after the scales (DQ_SCHEME_TRUNC_NU), else 0 */
    size_t prefix; /* bytes between the header (or coded header) and the payload: scales + levels,
                    * or scales + negative means (DQ_SCHEME_TWOMEANS) */
    int tm;        /* DQ_SCHEME_TWOMEANS: scale k is the non-negative mean, scale nbuckets + k the
                    * negative one */
    int table;     /* magnitudes come from tab[] (x the bucket scale), not level * step */
    float alpha;   /* DQ_SCHEME_TRUNC*: every bucket's scale */
    float tab[DQ__TAB_MAX]; /* table schemes: tab[l], l = 0..s, tab[0] = 0, tab[s] = 1 */
    uint64_t first; /* dither index of element 0: the segment's first element (FORMAT 24.3), else 0 */
} dq__cfg;

/*! Opening a message once. dq_message_open() parses and validates the header (a segmented
 *  message's segment table too), checks the message's size and payload checksum and resolves
 *  what decoding needs (the level table of TRUNC_NU included); dq_message_decode() and
 *  dq_message_decode_add() take the handle and parse nothing again, so a receiver that reads
 *  the count before sizing its buffers, or an
 *  aggregator adding many messages, reads each header once. The statuses are dq_decode()'s:
 *  open gives those of the header, size and checksum; decode those of the output length
 *  (DQ_ERR_DST_TOO_SMALL, DQ_ERR_SIZE_MISMATCH) and of the body, with dq_decode()'s one
 *  exception for checksummed coded messages. `h` may be read freely, the other fields are
 *  private. The handle points into src, which must stay unchanged while the handle is used;
 *  the decoders take only a handle whose open returned DQ_OK. */
typedef struct dq_message {
    dq_header h;
    const uint8_t *src; /* private */
    dq__cfg c;          /* private */
} dq_message;
DQ_API dq_status dq_message_open(const void *src, size_t src_len, dq_message *m);
DQ_API dq_status dq_message_decode(const dq_message *m, float *out, size_t out_cap);
DQ_API dq_status dq_message_decode_add(const dq_message *m, float weight, float *acc, size_t acc_len);

/*! dq_message_norm2() : ||x||^2 of the vector a message was encoded from, read from its
 *  scales (L2-scaled messages only: each scale is its bucket's norm), so the optimizer gets
 *  the gradient norm without another pass over the data. Exact up to float rounding of the
 *  scales; buckets flushed to zero (norm < 2^-100) count as 0. DQ_ERR_PARAM for other norms. */
DQ_API dq_status dq_message_norm2(const void *src, size_t src_len, double *norm2);

/*! Headerless variants for callers that frame messages themselves: scales then payload only,
 *  in the fixed layout (a dq_encode() message with coder DQ_CODER_FIXED_ONLY, without its
 *  48-byte header). The receiver must pass the same params (bits, bucket, scheme) and n as the
 *  sender. The payload checksum belongs to the message framing: p->checksum != 0 is
 *  DQ_ERR_PARAM here. */
DQ_API dq_status dq_encode_block(const dq_params *p, const float *x, size_t n, float *residual, void *dst,
                                 size_t dst_cap, size_t *dst_len);
DQ_API dq_status dq_decode_block(const dq_params *p, const void *src, size_t src_len, size_t n, float *out);
DQ_API dq_status dq_decode_add_block(const dq_params *p, const void *src, size_t src_len, size_t n,
                                     float weight, float *acc);

/*! Ranges: one message of n elements built or read in disjoint pieces, e.g. by threads. The
 *  range encoder writes the fixed layout only: the bytes of one dq_encode() call with coder
 *  DQ_CODER_FIXED_ONLY (the default's too below DQ_CODER_AUTO_MIN elements; from there the
 *  default sends a coded form, which jobs, below, build in parts). A range [begin, end) must have begin < end <= n,
 *  begin a multiple of dq_range_align(p, n), and end a multiple of it or n (DQ_ERR_RANGE).
 *  Ranges touch disjoint bytes of the message and disjoint elements, so they may run
 *  concurrently; the range with begin = 0 also writes the header.
 *  dq_range_align() : the range granularity, lcm(256, bucket) capped at n (whole-vector
 *                     buckets allow one range); 0 for invalid params or n = 0.
 *  dq_encode_range() : x and residual (NULL or the error-feedback memory) hold elements
 *                     begin..end-1 only; dst is the whole message, dst_cap >= its size
 *                     (dq_encode_capacity). Each range updates its residual slice only on DQ_OK;
 *                     if any range fails the message is unusable.
 *  dq_encode_finish() : after every range returned DQ_OK: stores the payload checksum when
 *                     the params asked for one (otherwise only validates the header).
 *  dq_decode_range(), dq_decode_add_range() : decode elements begin..end-1 into out[0..end-begin)
 *                     or add weight * them to acc[0..end-begin). They check the header, the
 *                     range's scales and padding, but not the payload checksum: call
 *                     dq_verify() once for the whole message first. They also read rANS
 *                     messages (coder 3): the chunks that hold the range are decoded and
 *                     checked whole before out is touched, so threads can decode one message
 *                     in ranges; Elias and coder-2 messages are one stream (DQ_ERR_PARAM). */
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
 *  No coded form larger than the fixed layout is written: where a forced coder's message would
 *  be larger (Elias on dense codes, rANS on near-uniform ones), dq_encode() and dq_recode()
 *  write the fixed layout (header coder 0), so dq_encode_bound() holds for every message.
 *  The range encoder and the block APIs take the fixed layout only (DQ_ERR_PARAM); a job
 *  (dq_job_*, below) encodes a coded message in parts, and rANS messages (coder 3) decode in
 *  ranges too (dq_decode_range).
 *  DQ_CODER_ELIAS needs bits >= 2, DQ_CODER_RANS bits <= 8 (DQ_ERR_PARAM); DQ_CODER_AUTO
 *  considers the coders the width allows.
 *  dq_encode_bound_coded() : a dst_cap (the sender's, not a message size) with which any coder
 *                     succeeds and DQ_CODER_AUTO always sends the smallest; 0 as for
 *                     dq_encode_bound(). A forced coder needs it
 *                     (DQ_ERR_DST_TOO_SMALL before anything is written). DQ_CODER_AUTO needs
 *                     only dq_encode_capacity(); with less room than this bound it may settle
 *                     for a larger coder whose working room fits (never larger than fixed).
 *  dq_coded_size() : the exact size of what dq_recode() writes for src and `coder` (AUTO: the
 *                     one it picks; a forced coder larger than fixed: the fixed size), computed
 *                     from the codes. From a coded src only its own coder
 *                     and DQ_CODER_FIXED are sized; others are DQ_ERR_PARAM.
 *  dq_recode() :      the message src re-coded with `coder` into dst: the same header fields
 *                     (coder and CRC aside), scales and decoded values. One side of the
 *                     conversion must be fixed: coded-to-coded (AUTO included) is
 *                     DQ_ERR_PARAM, apart from a copy into the same coder. */
DQ_API size_t dq_encode_bound_coded(size_t n, unsigned bits);
DQ_API dq_status dq_coded_size(const void *src, size_t src_len, unsigned coder, size_t *size);
DQ_API dq_status dq_recode(const void *src, size_t src_len, unsigned coder, void *dst, size_t dst_cap,
                           size_t *dst_len);

/*! Jobs: one message, with any coder, encoded by several threads; the same bytes as one
 *  dq_encode() call with a dst_cap of dq_encode_bound_coded(n, bits) or more, given a job dst_cap
 *  of dq_encode_capacity() or more. (With less room, dq_encode() may settle for a larger coder
 *  whose working room fits, and both drop the default's checksum below the fixed size + 4; a
 *  job needs no room in dst.)
 *  The vector is cut into job->parts parts, whole rANS chunks and range units (dq_job_range());
 *  four phases follow. Within a phase the parts may run concurrently and in any order; a phase
 *  starts when every part of the one before has returned:
 *    dq_job_quantize() : part j quantizes its elements of x (the whole vector; residual NULL or
 *                        the whole error-feedback memory) into dst, in the fixed layout, and
 *                        counts its symbols. It updates its share of the residual only on DQ_OK.
 *    dq_job_plan()     : once. Picks the coder from every part's counts, as dq_encode() does;
 *                        the status of the first part that failed, if one did.
 *    dq_job_code()     : part j codes its rANS chunks into work (nothing for other coders).
 *    dq_job_finish()   : once. Assembles the message in dst (an Elias form is written here,
 *                        in one stream) and stores the payload checksum; *dst_len its size.
 *  A phase out of order, a part run twice in a phase, or a part index j >= job->parts is
 *  DQ_ERR_PARAM; after a failure the job can only be started again with dq_job_init().
 *  dq_job_work_size() : the bytes of work a job of these params needs: 2 KiB a part, plus,
 *                     when rANS may be sent, the worst case of the parts' streams (2 bytes a
 *                     symbol, 16 / floor(8 / b) bits an element: twice the fixed payload for
 *                     b = 1, 2, 4, 8), or, when only Elias may, a copy of the fixed payload.
 *  dq_job_init() :    checks params and sizes (dst_cap as for the fixed layout:
 *                     dq_encode_capacity() is enough; work_cap below dq_job_work_size() is
 *                     DQ_ERR_WORKSPACE) and cuts the vector into at most `parts` parts. dst and
 *                     work belong to the job until dq_job_finish() returns.
 *  dq_job_range() :   part j's elements [*begin, *end): the parts cover [0, n) in order.
 *  The serial steps: dq_job_plan() counts nothing (the parts did), but sizing Elias is a pass
 *  over the codes (stopped early on dense ones), and so is a dry run of rANS when bounds do
 *  not decide; an Elias message is written by dq_job_finish() alone. */
typedef struct dq_job {
    size_t parts; /* the parts the vector is cut into: 1 .. the parts asked */
    /* private */
    dq_params p;
    size_t n, unit, units;
    uint8_t *dst, *work;
    size_t dst_cap, work_cap;
    unsigned phase;
} dq_job;
DQ_API dq_status dq_job_work_size(const dq_params *p, size_t n, size_t parts, size_t *size);
DQ_API dq_status dq_job_init(dq_job *job, const dq_params *p, size_t n, size_t parts, void *dst, size_t dst_cap,
                             void *work, size_t work_cap);
DQ_API dq_status dq_job_range(const dq_job *job, size_t j, size_t *begin, size_t *end);
DQ_API dq_status dq_job_quantize(const dq_job *job, size_t j, const float *x, float *residual);
DQ_API dq_status dq_job_plan(dq_job *job);
DQ_API dq_status dq_job_code(const dq_job *job, size_t j);
DQ_API dq_status dq_job_finish(dq_job *job, size_t *dst_len);

/*! Segmented messages: one vector in consecutive segments (layers, or any split the caller
 *  names), each with its own width and coder, under one header and one payload checksum
 *  (doc/FORMAT.md 24). QSGD only (DQ_SCHEME_QSGD or the default), widths 2..16. Every decoder
 *  reads them (dq_decode(), dq_decode_add(), dq_message_*(), the typed decoders, dq_verify(),
 *  dq_message_norm2(), the ranges); dq_recode() and dq_coded_size() do not (DQ_ERR_PARAM).
 *  Each element draws its dither with its index in the whole vector, so a segmented message whose
 *  segments share one width and start on bucket boundaries decodes to the values of dq_encode().
 *  dq_segment : on input count and bits (the rest ignored); dq_segments_read() fills them all.
 *  dq_segments_capacity() : the dst_cap with which dq_encode_segments() succeeds for these
 *                     params and segments, whatever the data (an upper bound of the size).
 *  dq_encode_segments() : x[0..n), n the sum of the counts; p->bits is not used. p->coder
 *                     applies to every segment: the default sends each segment of
 *                     DQ_CODER_AUTO_MIN elements or more in its smallest form, the others fixed,
 *                     and adds the payload checksum when a segment is coded and dst has the 4
 *                     bytes. dst_cap must hold the fixed layout of every segment (forced
 *                     coders: their bound) before anything is written. With a residual and
 *                     more than one segment the input is checked in a first pass (one more read),
 *                     so that a failure leaves the whole residual untouched.
 *  dq_segments_read() : the segments of a message (one for an unsegmented level-scheme message)
 *                     into seg[0..cap) and their number into *m (DQ_ERR_DST_TOO_SMALL, *m set,
 *                     when cap is smaller). Validates the header and the table only.
 *  Statuses of the encoder and its capacity: m = 0 or a segment of count 0 is DQ_ERR_EMPTY, a
 *  width outside 2..16 DQ_ERR_BITS, m > DQ_SEGMENTS_MAX, another scheme or checksum > 1
 *  DQ_ERR_PARAM, a total count above DQ_MAX_ELEMS DQ_ERR_TOO_LARGE.
 *  Ranges of a segmented message: within each segment the range's part must be aligned as for
 *  a message of that segment alone (dq_range_align() with its count), or cover the segment
 *  whole (always true for an Elias segment, which is one stream); segment boundaries are always
 *  valid range ends. Encoding in ranges and the block API take unsegmented messages only. */
#define DQ_SEGMENTS_MAX ((size_t)1 << 20)
typedef struct dq_segment {
    size_t count;   /* elements */
    unsigned bits;  /* 2..16 */
    unsigned coder; /* read back: the coder it was sent with */
    size_t first;   /* read back: the index of its first element in the vector */
    size_t size;    /* read back: bytes of its body in the message */
} dq_segment;
DQ_API dq_status dq_segments_capacity(const dq_params *p, const dq_segment *seg, size_t m, size_t *size);
DQ_API dq_status dq_encode_segments(const dq_params *p, const float *x, const dq_segment *seg, size_t m,
                                    float *residual, void *dst, size_t dst_cap, size_t *dst_len);
DQ_API dq_status dq_segments_read(const void *src, size_t src_len, dq_segment *seg, size_t cap, size_t *m);

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
 * self-describing stream: a 10-byte header (coder, n, k), then one of four bodies:
 *   DQ_INDEX_GAMMA  : the gaps idx[0] + 1, idx[i] - idx[i-1] in Elias gamma, MSB-first;
 *                     best for sparse, irregular sets.
 *   DQ_INDEX_VARINT : the gaps minus one as 1..4-byte little-endian integers, lengths in a
 *                     control stream of 2-bit codes for groups of 4 (stream-vbyte layout);
 *                     decoded 4 at a time with a byte shuffle (SSSE3, AVX2, AVX-512, NEON).
 *   DQ_INDEX_BITMAP : n bits, bit i set for each index i; best for dense sets.
 *   DQ_INDEX_RICE   : the gaps minus one in Golomb-Rice codes with one parameter r (in the
 *                     stream, the encoder picks the fewest bits), MSB-first: about
 *                     log2(1/d) + 1.5 bits a gap at density d, against 2 log2(1/d) for gamma.
 *   DQ_INDEX_AUTO   : (encoder only) the smallest of the four by exact size; ties go to
 *                     VARINT, then BITMAP, then GAMMA, then RICE (fastest decoder first).
 * k = 0 is allowed (an empty selection, e.g. a threshold nobody passed). */
typedef enum dq_index_coder {
    DQ_INDEX_AUTO = 0,
    DQ_INDEX_GAMMA = 1,
    DQ_INDEX_VARINT = 2,
    DQ_INDEX_BITMAP = 3,
    DQ_INDEX_RICE = 4 /* since 0.11: earlier decoders refuse it */
} dq_index_coder;

#define DQ_INDEX_HEADER_SIZE 10u
#define DQ_INDEX_MAX_N ((uint64_t)1 << 32)

/*! dq_index_bound() : the largest stream any coder can write for k indices below n, RICE with
 *  any parameter (monotonic in k and n). @return 0 if n = 0, n > 2^32, k > n or the size
 *  overflows size_t. */
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
 *  least ceil(k/8) bytes for GAMMA, ceil(k/4) + k for VARINT, ceil(n/8) for BITMAP,
 *  1 + ceil(k/8) for RICE), so
 *  k <= 8 * src_len: a receiver may size its buffer from k without trusting the sender
 *  beyond the bytes it received. */
DQ_API dq_status dq_index_header(const void *src, size_t src_len, uint64_t *n, size_t *k, dq_index_coder *coder);
/*! dq_index_decode() : decode into idx[0..k), *k = k. src_len must be the exact stream length.
 *  Validates everything (doc/FORMAT.md 18.6): a stream that decodes is the one
 *  dq_index_encode() writes for its indices and coder (RICE: with the stream's parameter),
 *  byte for byte. On error *k is untouched; header, length and capacity errors
 *  (DQ_ERR_DST_TOO_SMALL if idx_cap < k) leave idx untouched, while an error found in the body
 *  (DQ_ERR_CORRUPT, DQ_ERR_TRUNCATED for a gamma or RICE body) leaves idx[0..k) unspecified: the body is checked while it is decoded, in one
 *  pass. Nothing past idx[k - 1] is ever written. */
DQ_API dq_status dq_index_decode(const void *src, size_t src_len, uint32_t *idx, size_t idx_cap, size_t *k);

/* ---------------------------------------------------------------- bit-budget optimizer
 * doc/MATHS.md 9 (9.2 the bound, 9.3 the rule). Error model: QSGD with s levels over buckets of B elements has
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
    DQ_SCHED_DECREASING = 4, /* linear in n from bits_max down to bits_min (baseline) */
    DQ_SCHED_RD = 5          /* measured rate and distortion, coded bits: dq_sched_next_rd() */
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
    /* A warm start: the first warm_steps steps go out at warm_bits (2..16, 0 = 16: within 2^-15
     * of each bucket's scale, near lossless; it may exceed bits_max), whatever the mode, their
     * bits counted against a budget; the rule takes over after them. warm_steps = 0: none, and
     * warm_bits must then be 0 too (DQ_ERR_PARAM); warm_steps > steps is DQ_ERR_PARAM. */
    uint64_t warm_steps;
    unsigned warm_bits;
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
/*! dq_sched_init() : validate params (defaults applied) and start at step 0. steps or dim 0 is
 *  DQ_ERR_EMPTY; bits_min, bits_max or warm_bits out of range DQ_ERR_BITS; other bad fields
 *  (warm_bits without warm_steps, a missing or double calibration) DQ_ERR_PARAM. For P2, fails
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
 *  "Checkpoints"), so a stopped job resumes with bit-identical messages, saved at any step (a
 *  warm start wider than bits_max included: fixed in 0.11.0, 0.10.0 refused to load such a
 *  state with DQ_ERR_CORRUPT). Loads validate
 *  everything (magic, version, kind, length, CRC32C, values) before writing the destination.
 *  dq_residual_save_size() : bytes of a residual checkpoint of n floats; 0 if it overflows.
 *  dq_residual_load() : n must equal the saved count (DQ_ERR_SIZE_MISMATCH). */
#define DQ_SCHED_SAVE_SIZE 2232u
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

/*! Measured rate and distortion: what sending a vector would cost and how far off it would be,
 *  at every width, from the data (instead of the worst-case model above).
 *  dq_rd_measure() : for QSGD params (p->scheme DQ_SCHEME_QSGD or 0, norm L2 or MAX, bucket as for
 *      dq_encode; bits, rounding, seed and coder are ignored) and v = x + residual (residual
 *      NULL or the error-feedback memory, added in float as dq_encode() adds it), fills, for
 *      every width b in DQ_RD_BITS_MIN..DQ_RD_BITS_MAX:
 *        err[b]        E||Q_b(v) - v||^2 under stochastic rounding, the sum over elements of
 *                      scale^2 f (1 - f) / s^2 (f the fractional part of |v| s / scale): from
 *                      a histogram of |v| / scale (1024 bins) whose bins keep the moments
 *                      they need, exact but for bins that straddle a level (taken linear
 *                      inside). It differs from the exact sum by at most the sum over
 *                      elements of scale^2 times the spread of f (1 - f) / s^2 over the
 *                      element's bin. Measured at n = 2^16 with default params on Gaussian,
 *                      Student-t(3), uniform and sparse vectors: under 0.01% up to 7 bits,
 *                      under 1.2% at every width (the gap grows with the width, as more bins
 *                      straddle a level). Where values crowd into a few bins it can be far
 *                      off at wide widths: 4.7 times the exact value for a constant vector
 *                      at 15 bits;
 *        fixed_bits[b] the size of the fixed-layout message, header included (exact);
 *        bits[b]       the expected size of what the default coder (DQ_CODER_DEFAULT) sends,
 *                      header and checksum included, into a dst of dq_encode_capacity(): below
 *                      DQ_CODER_AUTO_MIN elements the fixed layout (= fixed_bits[b]); from
 *                      there the smallest of the fixed layout, rANS and Elias for codes drawn
 *                      independently from the implied distribution of levels and signs
 *                      (rANS: table, chunk states; Elias: gaps geometric at the mean density;
 *                      neither above 8 bits for rANS);
 *      and norm2 = ||v||^2, n. bits measured on Gaussian, Student-t, sparse vectors and a
 *      softmax gradient (tests/test_rd.c): within 1% of the mean over dither seeds.
 *      DQ_ERR_NONFINITE for NaN or Inf in v; DQ_ERR_PARAM for other schemes or norms.
 *      Reads x (and residual) three times (twice with the max norm); about 4 encodes' time
 *      (`make bench-rd`) and 28 KiB of stack. */
#define DQ_RD_BITS_MIN 2u
#define DQ_RD_BITS_MAX 16u
#define DQ_RD_BINS 1024u
typedef struct dq_rd {
    size_t n;
    double norm2;
    double err[DQ_RD_BITS_MAX + 1];        /* by width; [0] and [1] unused */
    double bits[DQ_RD_BITS_MAX + 1];       /* predicted, default coder */
    double fixed_bits[DQ_RD_BITS_MAX + 1]; /* exact, fixed layout */
} dq_rd;
DQ_API dq_status dq_rd_measure(const dq_params *p, const float *x, const float *residual, size_t n, dq_rd *rd);
/*! Rate and distortion of composed top-k messages (doc/FORMAT.md 20.10): for planning a density
 *  and a width per layer from the data.
 *  dq_rd_sparse_measure() : for top-k params p (scheme DQ_SCHEME_TOPK; bucket, rounding, norm
 *      (L2 or max), index_coder and checksum as the messages will use; k, bits and coder are not
 *      used: sizes are the default coder's) and v = x + residual (residual NULL or the error-
 *      feedback memory, added in float as dq_encode() adds it), for each density[j] in (0, 1]
 *      (k = max(1, round(density n))), fills out[j]:
 *        k, sel_err    ||v - top_k(v)||^2 over the elements not sent (double sums of the floats);
 *        index_bytes   the index stream's exact size with p->index_coder;
 *        err[b]        b = 1..16: sel_err plus the expected squared error of the k values at b
 *                      bits: widths 2..16 dq_rd_measure's err of the gathered values (stochastic
 *                      rounding; nearest rounding has no more error per value); width 1 exactly
 *                      for nearest rounding (each bucket's sum v^2 - (sum |v|)^2 / len: the
 *                      ternary form) and the expectation for stochastic (scale^2 - v^2 a value);
 *                      err[0] = sel_err, the float32 values;
 *        bits[b]       the message, header included: the exact float32 message (b = 0) and at
 *                      width 1 (the fixed layout: signs do not code); widths 2..16 the exact
 *                      header and index stream plus dq_rd_measure's bits of the values' message
 *                      (the default coder's choice, its checksum included).
 *      work: dq_rd_sparse_work_size(n, the largest k) bytes of the caller's (any alignment;
 *      DQ_ERR_WORKSPACE below). Reads v once per density for the selection and once for the
 *      selection error, plus dq_rd_measure over the k values. Accuracy against real encodes:
 *      tests/test_composed.c (test_rd_sparse), figures in doc/SCHEMES.md. DQ_ERR_PARAM for other
 *      schemes or fields, a density outside (0, 1]; DQ_ERR_NONFINITE for NaN or Inf in v;
 *      DQ_ERR_TOO_LARGE above 2^32 elements. */
typedef struct dq_rd_sparse {
    size_t k;
    double sel_err;
    size_t index_bytes;
    double err[DQ_RD_BITS_MAX + 1];  /* [0]: float32 values; [b]: b-bit values */
    double bits[DQ_RD_BITS_MAX + 1]; /* the same, the message's bits */
} dq_rd_sparse;
DQ_API size_t dq_rd_sparse_work_size(size_t n, size_t kmax);
DQ_API dq_status dq_rd_sparse_measure(const dq_params *p, const float *x, const float *residual, size_t n,
                                      const double *density, size_t m, void *work, size_t work_cap,
                                      dq_rd_sparse *out);
/*! dq_rd_alloc() : widths for m segments sent in one step (layers, or any split of a vector)
 *  from their measured curves rd[0..m): minimizes sum err_i(b_i) subject to
 *  sum bits_i(b_i) <= budget_bits, bits_min <= b_i <= bits_max (within DQ_RD_BITS_MIN..
 *  DQ_RD_BITS_MAX). Planned sizes are rd->bits (the default coder), or rd->fixed_bits when
 *  `fixed` is set. From bits_min everywhere it takes, step by step, the move along a segment's
 *  lower convex hull of (bits, err) that removes the most error per bit (equal marginal error
 *  per coded bit across segments) while it fits; that allocation is optimal for the bits it
 *  spends. It then starts instead from the best one width everywhere that fits, if that has
 *  less error (so it is never worse than one width), spends what is left on the best moves that
 *  fit, and makes exchanges while they lower the error: a segment moves up, paid by lowering
 *  others where that costs the least error per bit. The total is at most the optimum plus one
 *  move's error, and optimal on 397 of 400 small cases checked by enumeration (tests/test_rd.c);
 *  the hull walk alone was far off when one segment dwarfs the others. *err and *spent
 *  (NULL allowed) get the totals. DQ_ERR_INFEASIBLE, with every width at bits_min, when the
 *  budget cannot pay for bits_min everywhere. */
DQ_API dq_status dq_rd_alloc(const dq_rd *rd, size_t m, double budget_bits, unsigned bits_min, unsigned bits_max,
                             int fixed, unsigned *bits, double *err, double *spent);
/*! dq_sched_next_rd() : DQ_SCHED_RD, the width for step s->step from the measured curve of
 *  this step's vector (dq_rd_measure; the caller's own or, so that every worker agrees without
 *  talking, one they all know, e.g. the previous step's). The plan spends budget_bits (in the
 *  units of rd->bits: the default coder's bits, headers included; copy fixed_bits into bits to
 *  plan for the fixed layout) minus what dq_sched_update() reported, over the remaining steps:
 *  step m weighs alpha^(T-1-m) G_m^2 and costs what this step's curve says, scaled by G_m^2,
 *  where G_m^2 follows the trend of the last `window` norms given to dq_sched_update() (a
 *  least-squares line through log G^2, extrapolated, its total change over the remaining steps
 *  held within 1/10^4..10^2; flat with fewer than two norms). Every step takes the width that
 *  minimizes weight x err(b) + lambda x bits(b), with lambda the least that fits the budget, so
 *  marginal error per bit is equal across steps, and steps whose norm is falling get more bits
 *  now. Re-plans at every call (period is not used). DQ_ERR_INFEASIBLE (with *bits = bits_min)
 *  when the rest of the budget cannot pay bits_min for every remaining step. */
DQ_API dq_status dq_sched_next_rd(dq_sched *s, const dq_rd *rd, unsigned *bits);
/*! dq_rd_floor() : the least width in bits_min..bits_max whose expected squared error
 *  rd->err[b] is at most max_err (bits_max when none is): where extra bits stop paying, e.g.
 *  max_err = K x the sampling variance of the gradient (the trainer's --scheme noise: K times
 *  the variance of the mean over workers, against err[b] / N). */
DQ_API dq_status dq_rd_floor(const dq_rd *rd, double max_err, unsigned bits_min, unsigned bits_max, unsigned *bits);

/* ---------------------------------------------------------------- sparsifiers
 * Top-k, random-k and threshold are schemes of dq_encode() (DQ_SCHEME_TOPK, _RANDK,
 * _THRESHOLD); this is their selection on its own. */
/*! dq_topk_select() : the indices of the k largest |x[i]|, ascending, into idx[0..k). Among
 *  equal |x| the lower index is taken (+0 and -0 are equal). Exact, O(n) expected time, no
 *  allocation. @return DQ_OK; DQ_ERR_NULL; DQ_ERR_EMPTY (n = 0); DQ_ERR_PARAM (k = 0 or k > n);
 *  DQ_ERR_TOO_LARGE (n > 2^32); DQ_ERR_NONFINITE (NaN or Inf in x; idx untouched). */
DQ_API dq_status dq_topk_select(const float *x, size_t n, size_t k, uint32_t *idx);

/* ---------------------------------------------------------------- count sketch and data quantization
 * (doc/MATHS.md 12 the count sketch, 13 quantizing data; wire format: doc/FORMAT.md 21)
 *
 * Count sketch. A table T of r rows and c columns (float32, caller-owned) summarises a vector v
 * of dimension d. Row j has a bucket hash h_j(i) in [0, c) and a sign s_j(i) in {-1, +1}, both
 * computed with integer arithmetic from (seed, j, i) only (dq__draw32, the dither, specified in
 * doc/FORMAT.md 21), so every worker with the same seed agrees. Accumulating v adds s_j(i) v_i to
 * T[j][h_j(i)] for every row: the table is linear in v, so workers' tables add. Estimates:
 *   point    v^_i   = median_j s_j(i) T[j][h_j(i)]          (|v^_i - v_i| ~ ||v||/sqrt(c))
 *   norm     ||v||^2 ~ median_j sum_col T[j][col]^2          (relative error ~ sqrt(2/c))
 *   heavy    top-k of |v^_i| over all i < d, or every i with |v^_i| >= eps ||v||^
 * Determinism: a cell receives its additions in increasing coordinate order (dense input) or
 * in list order (sparse input), each a single IEEE binary32 addition of +v_i or -v_i (sign
 * flipped exactly), whatever the blocking or SIMD width; so equal inputs give bit-identical
 * tables on every machine. Integer-valued inputs whose partial sums stay below 2^24 in
 * magnitude sum exactly, so sketch(u) + sketch(v) == sketch(u + v) bit for bit for them.
 *
 * One step of Sketched SGD with the second round (p * k candidates), all buffers the caller's:
 *   worker  dq_sketch_init(&s, 5, cols, d, seed, tab, 5 * cols);    (once; dq_sketch_clear() per step)
 *           dq_sketch_add_dense(&s, 0, v, d);                      (v: momentum + accumulated error)
 *           dq_sketch_encode(&s, 1, msg, DQ_SKETCH_ENCODE_BOUND(5, cols), &len);          -> server
 *   server  dq_sketch_from_message(msg_0, len_0, sum, 5 * cols, &S);  (shape from the message, zeroed)
 *           dq_sketch_add_message(&S, msg_w, len_w, 1.0f);         (each worker w)
 *           dq_sketch_topk(&S, p * k, cand, est);                  (candidates)           -> workers
 *   worker  dq_sketch_gather(v, d, cand, p * k, vals);             (exact values)         -> server
 *   server  sum the vals over the workers, dq_sketch_topk_list(cand, sum, p * k, k, idx, upd)
 *           (one round: dq_sketch_topk(&S, k, idx, upd) directly, or dq_sketch_heavy()).
 *
 * Data quantization (GLMs, where the gradient of a sample is l'(w.x) x): an importance gate that
 * sends a sample with probability p = min(1, |l'(w.x)| ||x|| / lambda) and weight 1/p (exactly
 * unbiased, see dq_gate), a helper that picks lambda for an expected number of samples, and the
 * sample's features quantized by dq_encode with the dither keyed by the sample id. */

#define DQ_SKETCH_MAX_ROWS 32u
#define DQ_SKETCH_MAX_COLS (1u << 24)
#define DQ_SKETCH_MAX_DIM ((uint64_t)1 << 32) /* coordinates are uint32_t indices */
#define DQ_SKETCH_HEADER_SIZE 64u             /* the 48-byte header, rows, reserved, dim */
/* Largest sketch message for a rows x cols table (with the payload checksum). */
#define DQ_SKETCH_ENCODE_BOUND(rows, cols) ((size_t)DQ_SKETCH_HEADER_SIZE + 4u * (size_t)(rows) * (size_t)(cols) + 4u)

/* A count sketch: the caller owns the table (rows * cols floats, row-major: cell (j, b) is
 * table[j * cols + b]). Set it up with dq_sketch_init() or dq_sketch_from_message(); the fields
 * may be read freely. Sketches that are merged or summed must have equal rows, cols, dim, seed. */
typedef struct dq_sketch {
    uint32_t rows; /* r, 1..DQ_SKETCH_MAX_ROWS (5 is the usual choice; odd r avoids averaging two medians) */
    uint32_t cols; /* c, 1..DQ_SKETCH_MAX_COLS */
    uint64_t dim;  /* d, the length of the sketched vector, 1..2^32 */
    uint64_t seed; /* hash seed shared by all workers */
    float *table;
} dq_sketch;

/*! dq_sketch_init() : validate the shape (DQ_ERR_PARAM), check table_len >= rows * cols floats
 *  (DQ_ERR_DST_TOO_SMALL), fill *s and zero the table. */
DQ_API dq_status dq_sketch_init(dq_sketch *s, uint32_t rows, uint32_t cols, uint64_t dim, uint64_t seed, float *table,
                                size_t table_len);
/*! dq_sketch_clear() : zero the table (e.g. after each step). */
DQ_API dq_status dq_sketch_clear(dq_sketch *s);
/*! dq_sketch_hash() : the bucket h_row(i) in [0, cols) and sign s_row(i) (+1 or -1) of
 *  coordinate i < dim, as every accumulate and estimate uses them. */
DQ_API dq_status dq_sketch_hash(const dq_sketch *s, uint32_t row, uint64_t i, uint32_t *bucket, int *sign);
/*! dq_sketch_add_dense() : accumulate x[0..n) as coordinates offset .. offset+n-1
 *  (offset + n <= dim, else DQ_ERR_RANGE). A vector added in consecutive pieces, in order, gives
 *  the same table as one call. NaN or Inf: DQ_ERR_NONFINITE with the table untouched. */
DQ_API dq_status dq_sketch_add_dense(dq_sketch *s, uint64_t offset, const float *x, size_t n);
/*! dq_sketch_add_sparse() : accumulate val[t] at coordinate idx[t] for t < k, in list order
 *  (repeated indices add up). idx[t] >= dim: DQ_ERR_RANGE; NaN/Inf: DQ_ERR_NONFINITE; both
 *  checked before the table is touched. */
DQ_API dq_status dq_sketch_add_sparse(dq_sketch *s, const uint32_t *idx, const float *val, size_t k);
/*! dq_sketch_merge() : dst->table += src->table, cell by cell (sketches are linear). rows,
 *  cols, dim and seed must match (DQ_ERR_PARAM). */
DQ_API dq_status dq_sketch_merge(dq_sketch *dst, const dq_sketch *src);
/*! dq_sketch_estimate() : out[t] = the point estimate of coordinate idx[t] (median over rows of
 *  s_j T[j][h_j]; with an even row count the mean of the two middle values). DQ_ERR_RANGE for an
 *  index >= dim (out untouched). */
DQ_API dq_status dq_sketch_estimate(const dq_sketch *s, const uint32_t *idx, size_t m, float *out);
/*! dq_sketch_estimate_range() : out[t] = estimate of coordinate offset + t, t < n (the dense
 *  "unsketch"; offset + n <= dim). */
DQ_API dq_status dq_sketch_estimate_range(const dq_sketch *s, uint64_t offset, float *out, size_t n);
/*! dq_sketch_norm2() : the estimate of ||v||^2: median over rows of the row's sum of squares
 *  (double, cells in order; even row count: mean of the two middle sums). */
DQ_API dq_status dq_sketch_norm2(const dq_sketch *s, double *norm2);
/*! dq_sketch_topk() : the k coordinates with the largest |estimate| among all i < dim (ties:
 *  the smaller index), written to idx[0..k) in increasing index order with their estimates in
 *  val[0..k). k <= dim (DQ_ERR_PARAM). The first round of two-round Sketched SGD asks for
 *  p * k candidates this way. */
DQ_API dq_status dq_sketch_topk(const dq_sketch *s, size_t k, uint32_t *idx, float *val);
/*! dq_sketch_heavy() : every coordinate with |estimate| >= eps * sqrt(dq_sketch_norm2()), in
 *  increasing index order: the first min(count, cap) go to idx and val (val may be NULL), *count
 *  gets how many there are; DQ_ERR_DST_TOO_SMALL when that exceeds cap. eps finite, >= 0. */
DQ_API dq_status dq_sketch_heavy(const dq_sketch *s, double eps, uint32_t *idx, float *val, size_t cap, size_t *count);
/*! dq_sketch_gather() : out[t] = x[idx[t]] for t < m (the second round: a worker's exact values
 *  at the candidates). DQ_ERR_RANGE (out untouched) for an index >= n. */
DQ_API dq_status dq_sketch_gather(const float *x, size_t n, const uint32_t *idx, size_t m, float *out);
/*! dq_sketch_topk_list() : the k entries of (idx[t], val[t]), t < m, with the largest |val|
 *  (ties: the smaller index, then the earlier entry), written in increasing index order to
 *  out_idx and out_val. k <= m. Outputs must not overlap the inputs. With val the sum over
 *  workers of dq_sketch_gather() at the candidates, this is the exact top-k of the round. */
DQ_API dq_status dq_sketch_topk_list(const uint32_t *idx, const float *val, size_t m, size_t k, uint32_t *out_idx,
                                     float *out_val);

/*! Messages (scheme DQ_SCHEME_SKETCH, doc/FORMAT.md 21). The generic decoders read them:
 *  dq_header_read() validates and sizes, dq_decode() copies the table out, dq_decode_add(msg,
 *  len, w, table, rows * cols) adds w * table: summing the workers' sketches.
 *  dq_sketch_encoded_size() : exact size without the checksum (+4 with it); 0 for a bad shape.
 *  dq_sketch_encode() : the table as a message (checksum: 0 or 1 = append the payload CRC32C).
 *                     A non-finite cell is DQ_ERR_NONFINITE; nothing is written on error.
 *  dq_sketch_from_message() : set *s up for the sketch a message carries (rows, cols, dim,
 *                     seed) on the caller's table, zeroed; DQ_ERR_PARAM if not a sketch.
 *  dq_sketch_add_message() : s->table += weight * the message's table, after checking that the
 *                     message's rows, cols, dim and seed are s's (DQ_ERR_PARAM otherwise). */
DQ_API size_t dq_sketch_encoded_size(uint32_t rows, uint32_t cols);
DQ_API dq_status dq_sketch_encode(const dq_sketch *s, unsigned checksum, void *dst, size_t cap, size_t *len);
DQ_API dq_status dq_sketch_from_message(const void *src, size_t src_len, float *table, size_t table_len, dq_sketch *s);
DQ_API dq_status dq_sketch_add_message(dq_sketch *s, const void *src, size_t src_len, float weight);

/* ---- data quantization: the importance gate */
typedef enum dq_gate_mode {
    DQ_GATE_UNBIASED = 0, /* default: send with probability p = min(1, a / lambda), weight 1/p */
    DQ_GATE_THRESHOLD = 1 /* send iff a >= lambda, weight 1 (biased: drops unimportant samples) */
} dq_gate_mode;
/* Zero is the default in every field: lambda 0 sends everything with weight 1. */
typedef struct dq_gate_params {
    double lambda;   /* importance scale, finite and >= 0 (dq_gate_lambda picks one for a budget) */
    uint64_t seed;   /* the draw of sample `sample` at `step` is keyed by (seed, step, stream) */
    uint32_t stream; /* e.g. the worker's rank */
    dq_gate_mode mode;
} dq_gate_params;

/*! dq_gate() : should this sample be sent at this step? Importance a = |dloss| * xnorm, where
 *  dloss = l'(w.x) (the GLM loss derivative; the sample's gradient is dloss * x) and xnorm =
 *  ||x||_2. Unbiased mode: q = ceil(min(1, a / lambda) * 2^24), sent iff the 24-bit draw of the
 *  counter generator (doc/FORMAT.md 7, key (seed ^ DQ__GATE_DOMAIN, step, stream), element
 *  `sample`) is < q, weight 2^24 / q; so P(send) * weight = 1 exactly and the weighted sum of the
 *  sent gradients is an unbiased estimate of the full sum. a = 0 is never sent; lambda = 0 sends
 *  every sample with weight 1. *send gets 0 or 1, *weight the weight (0 when not sent).
 *  dloss or xnorm non-finite: DQ_ERR_NONFINITE; xnorm < 0, a bad lambda or mode: DQ_ERR_PARAM. */
DQ_API dq_status dq_gate(const dq_gate_params *g, uint64_t step, uint64_t sample, double dloss, double xnorm, int *send,
                         double *weight);
/*! dq_gate_lambda() : the lambda with sum_i min(1, a_i / lambda) = budget (the expected number
 *  of samples the unbiased gate sends), for importances a[0..n) (finite, >= 0). 0 (send all)
 *  when budget >= the number of positive a_i. budget finite and > 0. */
DQ_API dq_status dq_gate_lambda(const double *a, size_t n, double budget, double *lambda);
/*! dq_sample_encode(), dq_sample_encode_block() : dq_encode() / dq_encode_block() of the
 *  features x[0..d) of one sample with p->step replaced by the sample id, so the stochastic
 *  rounding of a sample is reproducible (the same bytes every time it is sent) and independent
 *  across samples. No residual: data is not error-fed. */
DQ_API dq_status dq_sample_encode(const dq_params *p, uint64_t sample, const float *x, size_t d, void *dst,
                                  size_t dst_cap, size_t *dst_len);
DQ_API dq_status dq_sample_encode_block(const dq_params *p, uint64_t sample, const float *x, size_t d, void *dst,
                                        size_t dst_cap, size_t *dst_len);

/* ---------------------------------------------------------------- truncation solver
 * The truncation solver for heavy-tailed gradients (doc/MATHS.md 11): the Hill
 * tail estimate, the threshold alpha and the companded levels of DQ_SCHEME_TRUNC and
 * DQ_SCHEME_TRUNC_NU, and the exact expected error of a (threshold, levels) choice.
 *
 * The error model. A coordinate g is truncated to T(g) = sign(g) min(|g|, alpha), then its
 * magnitude is rounded stochastically between adjacent levels L_j = l_j alpha (0 = L_0 < L_1 <
 * ... < L_s = alpha; uniform: l_j = j/s, s = 2^(b-1) - 1), which is unbiased for T(g). The
 * expected squared error of one coordinate of magnitude a is exactly
 *     (a - L_j) (L_(j+1) - a)   if L_j <= a < L_(j+1) <= alpha     (rounding variance)
 *     (a - alpha)^2             if a >= alpha                      (truncation bias)
 * and the two add up over coordinates (the cross term vanishes). dq_trunc_mse() sums this over
 * a vector; dq_trunc_solve() chooses alpha (and the levels) that minimize it.
 *
 * How the solver works (all O(n) passes, then work independent of n):
 *   1. one pass checks for NaN/Inf and takes max|x| and a 2048-bucket histogram of the top bits
 *      of |x|; two more passes narrow the histogram (radix select on the float bit patterns,
 *      no sort) to the exact k-th largest |x|, x_m;
 *   2. one pass computes the Hill estimate of the tail from the k - 1 magnitudes above x_m and
 *      builds a moment histogram of |x|: bins of 1/128 binade (relative width <= 2^-7) over
 *      48 binades below the top of the search range, plus an underflow and an overflow bin;
 *      each bin keeps count, sum (a - lo) and sum (a - lo)^2, so every bin that lies inside one
 *      level cell, or above alpha, contributes its exact error; only the <= s + 1 bins that
 *      straddle a level or alpha are approximated (density uniform in the bin), and the
 *      solver reports a rigorous bound on that approximation (dq_trunc_info.slack);
 *   3. the threshold: DQ_TRUNC_SEARCH (default) minimizes the histogram's expected error over
 *      alpha (a scan of 8 points per binade, every bin edge within a factor 1.25 of the best, then
 *      golden-section search between the best point's neighbours);
 *      DQ_TRUNC_MODEL uses doc/MATHS.md 11.3 (uniform: closed form from the Hill fit) and 11.4
 *      (non-uniform: golden section on V_N*(alpha, s) + B(alpha), high-resolution variance,
 *      empirical bias);
 *   4. non-uniform levels: l_j = Lambda^-1(j/s) / alpha with Lambda(x) = int_0^x f^(1/3) /
 *      int_0^alpha f^(1/3), f the histogram density (companding, doc/MATHS.md 11.4).
 *
 * kappa = 1/6 in the 11.3 closed form: the rounding variance of a coordinate at fraction u of
 * its cell is u (1 - u) step^2, whose mean over a cell is step^2 / 6 when the density is smooth
 * at the scale of a cell (the high-resolution regime the closed form assumes anyway); 1/4 is
 * the worst case u = 1/2, which no real vector reaches on average. alpha* goes as
 * (1/kappa)^(1/(gamma-1)), so 1/4 would move it down by (2/3)^(1/(gamma-1)) (13% at gamma = 4):
 * towards the empirical optimum, which the closed form overshoots on Student-t data (by 2-14%
 * at b = 5..8, n = 2^18, nu = 3). 1/6 is kept as the derivation's constant, not as the better
 * fit; DQ_TRUNC_SEARCH, the default, does not use it.
 *
 * Why DQ_TRUNC_SEARCH is the default (measured, tests/test_trunc.c and bench/ratedist.c):
 *   - 11.3 clamps alpha to [x_m, max|x|], but at b <= 4 the optimum lies below x_m (Student-t
 *     nu = 3, b = 2: optimum 1.6, x_m = 10.2; the clamped closed form has 6x the error);
 *   - 11.4's V_N* = (int f^(1/3))^3 / (6 s^2) barely grows with alpha on a power-law tail
 *     (f^(1/3) ~ |g|^(-gamma/3) is integrable), so V_N* + B picks alpha = max|x| on Student-t
 *     nu = 3 at b >= 4: the high-resolution formula misses the variance of the few, wide
 *     tail cells; the exact objective gives 1.5-2.5x lower error there (b = 4..8);
 *   - the exact objective of companded levels is not smooth in alpha on finite samples (it
 *     moves in narrow steps as alpha passes sparse tail samples), hence the dense local scan.
 * DQ_TRUNC_MODEL stays available: it is cheaper (no search, uniform) and follows the paper's
 * formulas; the flags report when it clamps or falls back.
 *
 * Determinism. Everything that reaches the wire under DQ_TRUNC_SEARCH (alpha, levels) is
 * computed with + - * / and comparisons in a fixed order (the cube roots of the companding are
 * a fixed Newton iteration), so it is bit-identical on every IEEE machine. The Hill estimate
 * uses log(), and DQ_TRUNC_MODEL's uniform closed form uses pow(); libm is not bit-identical
 * across platforms, so under DQ_TRUNC_MODEL alpha may differ in its last bits between libms.
 * Receivers never recompute alpha or the levels (the message carries them), so this affects
 * reproducing a run on another platform, never decoding. */
typedef enum dq_trunc_method {
    DQ_TRUNC_DEFAULT = 0, /* = DQ_TRUNC_SEARCH */
    DQ_TRUNC_SEARCH = 1,  /* minimize the expected error of the data's histogram over alpha */
    DQ_TRUNC_MODEL = 2    /* doc/MATHS.md 11.3 closed form (uniform) / 11.4 V_N* + B (non-uniform) */
} dq_trunc_method;

typedef struct dq_trunc_params {
    unsigned bits;          /* 2..16 (uniform) or 2..8 (non-uniform), as the schemes take; 0 = 4 */
    unsigned nonuniform;    /* 0 = uniform levels (DQ_SCHEME_TRUNC); 1 = companded levels
                             * (DQ_SCHEME_TRUNC_NU) */
    dq_trunc_method method; /* 0 = DQ_TRUNC_SEARCH */
    double tail_fraction;   /* q: the Hill estimate uses the k = max(ceil(q n), tail_min) largest
                             * |x| (at most n); 0 < q <= 0.5; 0 = 0.002 */
    size_t tail_min;        /* at least 2; 0 = 50 */
    double kappa;           /* DQ_TRUNC_MODEL, uniform: variance constant of 6.3; 0 = 1/6 */
    float alpha;            /* > 0: use this threshold (finite, 2^-100..2^126); only the levels
                             * and the report are computed. 0 = solve for alpha */
} dq_trunc_params;

/* The tail of |x|, from the Hill estimator (doc/MATHS.md 11.2): for |g| >= x_m the density of g
 * is modelled as c |g|^-gamma (symmetric), so P(|g| >= x_m) = 2 c x_m^(1-gamma) / (gamma - 1). */
typedef struct dq_tail {
    size_t k;        /* order statistics used: x_m is the k-th largest |x| */
    double x_m;      /* the k-th largest |x| */
    double hill;     /* (1/(k-1)) sum over the k-1 largest of log(|x| / x_m): estimates
                      * 1/(gamma-1), asymptotic standard deviation hill / sqrt(k-1) */
    double gamma;    /* 1 + 1/hill; HUGE_VAL if hill = 0 (the k largest are equal: no tail);
                      * 0 if there is no estimate (k < 2 or x_m = 0) */
    double c;        /* (gamma-1) (k/n) x_m^(gamma-1) / 2, so that the model puts mass k/n above
                      * x_m; 0 without an estimate; HUGE_VAL if it overflows double */
    double max_abs;  /* max |x| */
    int finite_variance; /* gamma > 3: the model's variance (and truncation bias) are finite */
} dq_tail;

#define DQ_TRUNC_F_NO_TAIL 1u  /* no Hill estimate (fewer than 2 non-zero magnitudes in the top k) */
#define DQ_TRUNC_F_HEAVY 2u    /* gamma <= 3: the fitted tail has infinite variance */
#define DQ_TRUNC_F_FALLBACK 4u /* DQ_TRUNC_MODEL had no usable fit (no tail, or gamma <= 2) and
                                * used DQ_TRUNC_SEARCH */
#define DQ_TRUNC_F_CLAMPED 8u  /* alpha was clamped: the model's alpha* to [x_m, max|x|], or any
                                * alpha to the scale range 2^-100..2^126 the encoder accepts */

typedef struct dq_trunc_info {
    dq_tail tail;
    double mse;      /* predicted expected squared error per element, var + bias, from the
                      * histogram with the returned alpha and levels */
    double var;      /* rounding variance per element */
    double bias;     /* truncation bias per element */
    double slack;    /* |mse - exact| <= slack, exact = dq_trunc_mse() / n (up to double rounding) */
    unsigned flags;  /* DQ_TRUNC_F_* */
} dq_trunc_info;

#define DQ__TR_SUB 7u      /* 2^7 bins per binade */
#define DQ__TR_BINADES 48u /* binades of the moment histogram below the top of the search range */
#define DQ__TR_NB (DQ__TR_BINADES << DQ__TR_SUB)
#define DQ__TR_SEL 2048u /* radix-select buckets (11, 10, 10 bits of |x|) */
/* Workspace bytes of dq_trunc_solve() and dq_tail_estimate() for any n, as a constant
 * expression (about 240 KB). Any alignment. */
#define DQ_TRUNC_WORKSPACE_SIZE                                                                    \
    ((size_t)8u + (size_t)DQ__TR_SEL * 8u + (size_t)4u * (DQ__TR_NB + 2u) * 8u + (size_t)128u * 8u +       \
     (size_t)(DQ__TR_NB + 2u) * 4u)

/*! dq_trunc_workspace_size() : bytes of workspace dq_trunc_solve() and dq_tail_estimate() need
 *  for n elements (currently DQ_TRUNC_WORKSPACE_SIZE for every n). */
DQ_API size_t dq_trunc_workspace_size(size_t n);

/*! dq_tail_estimate() : the Hill estimate of the tail of |x| (p may be NULL: defaults; only
 *  tail_fraction and tail_min are read). O(n): three passes of radix selection on the float
 *  bit patterns of |x| and one for the estimate; no sort, no allocation.
 *  @return DQ_OK (an inestimable tail is reported with tail->gamma = 0, not as an error),
 *  DQ_ERR_NULL, DQ_ERR_EMPTY (n = 0), DQ_ERR_PARAM (tail_fraction outside (0, 0.5], tail_min
 *  = 1), DQ_ERR_NONFINITE, DQ_ERR_WORKSPACE (work_cap < dq_trunc_workspace_size(n)). */
DQ_API dq_status dq_tail_estimate(const dq_trunc_params *p, const float *x, size_t n, void *work, size_t work_cap,
                                  dq_tail *tail);

/*! dq_trunc_solve() : the threshold alpha (and, for p->nonuniform, the s = 2^(bits-1) - 1
 *  normalized levels l_1 < ... < l_s = 1.0f, l_1 > 0) for sending x with DQ_SCHEME_TRUNC
 *  (uniform) or DQ_SCHEME_TRUNC_NU: put *alpha in dq_params.alpha and `levels` in
 *  dq_params.levels. alpha is a float in 2^-100..2^126 (what the encoder accepts); an all-zero
 *  x gives alpha = 2^-100. levels may be NULL for uniform levels. info may be NULL.
 *  DQ_TRUNC_SEARCH: alpha in [the histogram bin of the ceil(nz/8)-th smallest of the nz non-zero
 *  |x|, min(max|x|, 2^24 x_m, 2^126)]; DQ_TRUNC_MODEL: alpha in [x_m, max|x|]. Cost: four
 *  passes over x (about 10 ns per element) plus a search independent of n (a few ms).
 *  @return DQ_OK; DQ_ERR_NULL (p, x, alpha, work, or levels when nonuniform); DQ_ERR_EMPTY;
 *  DQ_ERR_BITS (bits outside 2..16, or 2..8 when nonuniform); DQ_ERR_PARAM (method, q,
 *  tail_min, kappa <= 0, or a given alpha that is not finite in 2^-100..2^126);
 *  DQ_ERR_NONFINITE (NaN/Inf in x); DQ_ERR_WORKSPACE; DQ_ERR_DST_TOO_SMALL (levels_cap < s
 *  when nonuniform). Nothing is written on error. */
DQ_API dq_status dq_trunc_solve(const dq_trunc_params *p, const float *x, size_t n, void *work, size_t work_cap,
                                float *alpha, float *levels, size_t levels_cap, dq_trunc_info *info);

/*! dq_trunc_mse() : the exact expected squared error E||Q(T_alpha x) - x||^2 (a sum over the n
 *  elements, not a mean) of truncation at alpha and unbiased stochastic rounding between the
 *  magnitude levels: levels = NULL gives the uniform levels j/s of DQ_SCHEME_TRUNC, else the
 *  s = 2^(bits-1) - 1 normalized levels of DQ_SCHEME_TRUNC_NU. *var gets the rounding-variance
 *  part, *bias the truncation part (either may be NULL). Levels are L_j = l_j alpha computed in
 *  double; the encoder's float arithmetic differs from this by relative O(2^-24).
 *  @return DQ_OK, DQ_ERR_NULL (x, or both outputs NULL), DQ_ERR_EMPTY, DQ_ERR_BITS (2..16,
 *  2..8 with levels), DQ_ERR_PARAM (alpha not finite and > 0; levels not 0 < l_1 < ... < l_s
 *  = 1), DQ_ERR_NONFINITE. */
DQ_API dq_status dq_trunc_mse(const float *x, size_t n, float alpha, unsigned bits, const float *levels, double *var,
                              double *bias);

/* ---------------------------------------------------------------- fp16 and bf16
 * IEEE binary16 (fp16) and bfloat16 (bf16) vectors as encoder input, as decoder output and as
 * error-feedback residual memory. Its SIMD kernels
 * follow the scalar code.
 *
 * Storage: a 16-bit element is its bit pattern as a uint16_t in host byte order (what _Float16,
 * __bf16, torch.float16 / torch.bfloat16 and numpy.float16 arrays hold in memory); no alignment
 * is required. Conversions (identical in every kernel, scalar or SIMD):
 *   half -> float : exact. A NaN comes out quiet (quiet bit set), with its sign and payload.
 *   float -> half : round to nearest, ties to even; a value that rounds beyond the largest
 *                   finite half becomes Inf (IEEE overflow: |x| >= 65520 for fp16, >= 2^128 -
 *                   2^119 for bf16). A NaN comes out quiet, with its sign and the top payload
 *                   bits (as F16C's vcvtps2ph does).
 * The typed codec calls are defined by the float path: each behaves as if the 16-bit operands
 * were widened to float, the float call made, and the float results rounded back, bit for bit:
 *   dq_encode_typed()     : the message bytes of dq_encode(p, float(x), n, float(residual)), and
 *                           residual = half(the new float residual);
 *   dq_decode_typed()     : out = half(dq_decode());
 *   dq_decode_add_typed() : acc = half(float(acc) + weight * decoded), i.e. dq_decode_add() on
 *                           float(acc), rounded.
 * Every scheme takes them: the codec has one pipeline, and 16-bit data move through it in chunks
 * of 2048 elements converted on the stack (16 KiB for the two operands; the sparse encoders' own
 * 16 KiB of selection scratch comes on top). They never allocate and never copy a whole vector:
 * each element is read from memory once per pass, and converted in L1. Float data take the same
 * path in one piece, without a copy. */
typedef enum dq_dtype {
    DQ_F32 = 0, /* float (IEEE binary32) */
    DQ_F16 = 1, /* IEEE binary16: 1 sign, 5 exponent, 10 fraction bits */
    DQ_BF16 = 2 /* bfloat16: the top 16 bits of a binary32 (8 exponent, 7 fraction bits) */
} dq_dtype;

/*! dq_dtype_size() : bytes per element: 4, 2, 2; 0 for a value that is not a dq_dtype. */
DQ_API size_t dq_dtype_size(dq_dtype t);
/*! Single values: float -> fp16 / bf16 pattern (round to nearest even), and back (exact). */
DQ_API uint16_t dq_f32_to_f16(float f);
DQ_API float dq_f16_to_f32(uint16_t h);
DQ_API uint16_t dq_f32_to_bf16(float f);
DQ_API float dq_bf16_to_f32(uint16_t h);
/*! dq_convert() : dst[0..n) = src[0..n) converted from dtype `from` to dtype `to` (fp16 <-> bf16
 *  goes through float, exactly: round(widen(x))). src and dst may be the same pointer when the
 *  target elements are no wider than the source ones (narrowing or equal sizes); otherwise
 *  they must not overlap. @return DQ_OK (also for n = 0), DQ_ERR_NULL, DQ_ERR_PARAM (a dtype). */
DQ_API dq_status dq_convert(dq_dtype from, const void *src, size_t n, dq_dtype to, void *dst);

/*! dq_encode_typed() : dq_encode() of x[0..n) of dtype xt, with error-feedback memory
 *  residual[0..n) of dtype rt (or NULL; rt is still checked). The message is byte for byte
 *  that of dq_encode(p, float(x), n, float(residual), ...); the new residual is the float
 *  path's new residual rounded to rt. residual is written only when the call returns DQ_OK,
 *  and the status of a failing call is the float path's. x and residual must not overlap.
 *  Every scheme dq_encode() takes (level and sparse), with every coder and bucket.
 *  Note: an fp16 residual holds |r| <= 65504; a larger float residual saturates to Inf, and the
 *  next encode fails with DQ_ERR_NONFINITE (keep bf16 or float residuals for large gradients).
 *  With xt = rt = DQ_F32 (or residual NULL and xt = DQ_F32) this is dq_encode() itself. */
DQ_API dq_status dq_encode_typed(const dq_params *p, dq_dtype xt, const void *x, size_t n, dq_dtype rt,
                                 void *residual, void *dst, size_t dst_cap, size_t *dst_len);
/*! dq_decode_typed() : out[0..count) (out_cap elements of dtype ot) = the decoded values,
 *  rounded to ot. Statuses, and what out holds after a failure, as dq_decode(): validated
 *  before out is touched, but for the one exception there (a checksummed coded message that is
 *  malformed). Every message family: levels, sparse and sketch. */
DQ_API dq_status dq_decode_typed(const void *src, size_t src_len, dq_dtype ot, void *out, size_t out_cap);
/*! dq_decode_add_typed() : acc[i] = round(float(acc[i]) + weight * decoded[i]) for acc of dtype at
 *  (acc_len must equal the count). acc is untouched on failure, with the same one exception as
 *  dq_decode_add(). */
DQ_API dq_status dq_decode_add_typed(const void *src, size_t src_len, float weight, dq_dtype at, void *acc,
                                     size_t acc_len);

/* ---------------------------------------------------------------- aggregation (doc/MATHS.md 14)
 * The pieces a data-parallel trainer needs past one node; none of them talks to a network.
 *
 * allgather + decode-add : every worker receives every message (variable sizes: exchange the
 *   sizes, then dq_offsets gives the displacements) and sums them with dq_decode_add in rank
 *   order. Traffic per worker grows with the worker count M.
 * scatter-reduce-allgather : the vector is cut into M chunks on bucket boundaries (dq_chunk);
 *   worker j receives every worker's message for chunk j, and dq_requantize sums them and
 *   encodes the sum again with worker j's own error-feedback buffer for that chunk; then the M
 *   reduced chunks are allgathered. Traffic per worker stays about 2 messages of the vector.
 * shared-scale integer allreduce : workers agree on one power-of-two unit per bucket (the
 *   largest of their exponents, an elementwise max), quantize to integer levels on it and sum
 *   the levels with a plain integer allreduce in an accumulator dq_shared_width() makes wide
 *   enough for M workers. Because each level times its unit is an exact float, the integer sum
 *   times the unit equals the float sum of the decoded vectors exactly, in any order.
 *
 * Shared-scale quantizer, bits b in 2..16, L = 2^(b-1) - 1, bucket B (dq_params.bucket):
 *   exponent  e = the smallest integer in [DQ_SHARED_EXP_MIN, DQ_SHARED_EXP_MAX] with
 *             max|v| <= L * 2^e over the bucket (v = x + residual); e = DQ_SHARED_EXP_MIN for
 *             an all-zero bucket; DQ_ERR_OVERFLOW if even DQ_SHARED_EXP_MAX is too small.
 *   level     t = |v| * 2^-e (exact), f = t - floor(t); stochastic rounding adds 1 to floor(t)
 *             when u < f * 2^24, u the element's 24-bit draw of the dither generator keyed by
 *             (seed, step, stream, element index); nearest adds 1 when f > 1/2. The level gets
 *             the sign of v. The unit 2^e is at least the worker's own, so |level| <= L.
 *   decode    out = weight * (sum * 2^e): sum * 2^e is exact while |sum| <= 2^24. */
#define DQ_SHARED_EXP_MIN (-127) /* the unit 2^-127 is subnormal; level * unit stays exact */
#define DQ_SHARED_EXP_MAX 103    /* 2^24 levels of 2^103 stay below FLT_MAX */
#define DQ_SHARED_MAX_SUM ((int32_t)1 << 24)
#define DQ__SHARED_PIECE 256u /* elements per kernel call in dq_shared_encode */

/*! dq_offsets() : offsets[0] = 0 and offsets[i + 1] = offsets[i] + sizes[i] for i < m, so
 *  offsets[m] is the total: the displacements of an allgatherv. DQ_ERR_OVERFLOW, offsets
 *  partly written, when the total exceeds limit (INT_MAX for MPI's int counts). */
DQ_API dq_status dq_offsets(const size_t *sizes, size_t m, size_t limit, size_t *offsets);
/*! dq_chunk() : [*begin, *end), part j < parts of n elements cut into contiguous chunks on
 *  p's bucket boundaries, as even as whole buckets allow (counts differ by at most one
 *  bucket). With more parts than buckets some chunks are empty (*begin == *end). */
DQ_API dq_status dq_chunk(const dq_params *p, size_t n, size_t parts, size_t j, size_t *begin, size_t *end);
/*! dq_requantize() : the reducing step of scatter-reduce-allgather. acc[0..n) becomes the sum,
 *  in order i = 0..m-1, of weight * decode(msgs[i]) (lens[i] bytes, n elements each; m may be
 *  0), then is encoded by dq_encode(p, acc, n, residual, ...). residual: NULL, or the
 *  reducer's own error-feedback buffer for this chunk (n floats), as in dq_encode. Error
 *  feedback needs a contraction, E|Q(v) - v|^2 < |v|^2: max-norm scaling at 3 or more bits, or
 *  nearest rounding; QSGD's L2 scaling at 2 bits (variance factor ~ sqrt(bucket)) diverges.
 *  @return the first failing call's status; residual is updated only on DQ_OK. */
DQ_API dq_status dq_requantize(const dq_params *p, const void *const *msgs, const size_t *lens, size_t m, float weight,
                               float *acc, size_t n, float *residual, void *dst, size_t dst_cap, size_t *dst_len);

/*! dq_shared_width() : bits of the signed level accumulator (8, 16 or 32: int8_t, int16_t or
 *  int32_t elements) in which M = workers sums of levels cannot overflow, whatever the order
 *  of the additions. 0 when bits is outside 2..16, workers is 0, or M * L > 2^24 (the sums
 *  would no longer convert to float exactly). */
DQ_API unsigned dq_shared_width(unsigned bits, uint64_t workers);
/*! dq_shared_buckets() : the number of exponents for n elements under p (0 if invalid). */
DQ_API size_t dq_shared_buckets(const dq_params *p, size_t n);
/*! dq_shared_exponents() : this worker's exponent per bucket of v = x + residual (residual may
 *  be NULL). Combine the workers' arrays with an elementwise max (MPI_MAX on MPI_INT8_T), then
 *  every worker encodes with the combined array. p: bits, bucket; scheme 0 or QSGD; norm 0 or
 *  DQ_NORM_MAX (the unit follows the bucket's max). */
DQ_API dq_status dq_shared_exponents(const dq_params *p, const float *x, size_t n, const float *residual,
                                     int8_t *exps);
/*! dq_shared_encode() : levels[0..n) (width bits each) of v = x + residual on the units 2^exps.
 *  With residual, it becomes v - level * 2^e (exact product), updated only on DQ_OK.
 *  @return DQ_ERR_PARAM, nothing written, when an exponent is smaller than this worker's own
 *          for its bucket or outside the range; DQ_ERR_NONFINITE for NaN or Inf in v. */
DQ_API dq_status dq_shared_encode(const dq_params *p, const float *x, size_t n, float *residual, const int8_t *exps,
                                  unsigned width, void *levels);
/*! dq_shared_decode() : out[i] = weight * (sums[i] * 2^e) for the summed levels (width bits).
 *  @return DQ_ERR_CORRUPT for an exponent outside the range or |sum| > 2^24 (no valid sum of
 *          dq_shared_width's workers reaches it); out is then partly written. */
DQ_API dq_status dq_shared_decode(const dq_params *p, const void *sums, unsigned width, size_t n, const int8_t *exps,
                                  float weight, float *out);

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
#define DQ__ABS_MASK 0x7FFFFFFFu /* a binary32 pattern without its sign bit */
#define DQ__2P32 ((uint64_t)1 << 32)
/* The bit pattern of |f|: orders like |f| for finite values; Inf and NaN are >= 0x7F800000. */
static inline uint32_t dq__abs_bits(float f) { return dq__fbits(f) & DQ__ABS_MASK; }
/* Bytes of one packed block of 256 b-bit codes (8 lanes x 32 rows, doc/FORMAT.md 8). */
#define DQ__BLOCK_BYTES(b) (32u * (b))


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
/* The generator of FORMAT 7.2: the 32-bit draw for counter lo (the low half of the element
 * index, or j) under the keys k0 and k1h. The one scalar definition of the dither: levels take
 * its top 24 bits (dq__draw24), random-k its 32 bits, the count sketch its hashes. */
static inline uint32_t dq__draw32(uint32_t k0, uint32_t k1h, uint32_t lo) {
    uint32_t x = lo ^ k0;
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= (x >> 15) ^ k1h;
    x *= 0x846CA68Bu;
    x ^= x >> 16;
    return x;
}
/* 24-bit uniform draw for the element whose index has low half lo. */
static inline uint32_t dq__draw24(uint32_t k0, uint32_t k1h, uint32_t lo) { return dq__draw32(k0, k1h, lo) >> 8; }

/* ================================================================ scalar kernels
 * The reference of every kernel family: dq__<family>__scalar defines the bytes and values, and
 * each SIMD kernel dq__<family>__<isa> (dqsgd_simd.h) is its twin, bit for bit (tests/test_simd*.c
 * and the other kernel tests compare them). The SIMD kernels hand their tails to these, so this
 * part comes before dqsgd_simd.h is included; the selection (src/select.h) binds each family's
 * dq__k_<family> to its best kernel compiled in. In order: the dither round's hoisted key (for
 * the SIMD rounds), bucket statistics (and two-means), error feedback, quantization (uniform,
 * table, shared-scale), packing, block decoding, Elias sizing, CRC32C, the VARINT index
 * decoder, 32-way rANS chunks, fp16/bf16 conversions, the sparsifiers' scan, count-sketch
 * hashes. (The Elias early-stop pass, dq__elias_gaps__scalar, is still with the coders.) */

/* ---- the dither round's hoisted key. The SIMD dither rounds (dq__draw__<isa>) compute
 * dq__draw32 for a run of counters lo .. lo + cnt - 1 (mod 2^32). The round's first step,
 * x ^= x >> 16 with x = counter ^ k0, is counter ^ k0h with k0h = k0 ^ ((lo ^ k0) >> 16) when the
 * counters share their high 16 bits (a block of 256 never crosses a multiple of 2^16 unless it
 * starts unaligned), and the step then costs nothing per lane. Returns 1 and that key in *k0h,
 * else 0 and k0. */
static inline int dq__draw_hoist(uint32_t k0, uint32_t lo, size_t cnt, uint32_t *k0h) {
    uint32_t last = lo + (uint32_t)(cnt ? cnt - 1u : 0u);
    int ok = cnt <= 65536u && ((lo ^ last) >> 16) == 0u;
    *k0h = ok ? k0 ^ ((lo ^ k0) >> 16) : k0;
    return ok;
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
        uint32_t u = dq__abs_bits(e ? x[i] + e[i] : x[i]);
        double d = (double)dq__bitsf(u), d2 = d * d;
        sq[i % DQ__SLANES] += d2;
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

/* ---- statistics carried across calls: continue the 16 lanes sq / ab (element j of x, + e, into
 * lane j % 16) and the maximum mx with x[0..n); `what` (DQ__ST_* bits) says which of the three
 * are updated. The lanes are those of dq__stats_tail, so a bucket cut into pieces gets the
 * one-pass sums exactly. */
static inline void dq__hstat_acc__scalar(const float *x, const float *e, size_t n, unsigned what, double *sq,
                                         double *ab, uint32_t *mx) {
    double s2[DQ__SLANES], a2[DQ__SLANES];
    uint32_t m2 = *mx;
    memcpy(s2, sq, sizeof s2);
    memcpy(a2, ab, sizeof a2);
    dq__stats_tail(x, e, 0, n, s2, a2, &m2);
    if (what & DQ__ST_SQ) memcpy(sq, s2, sizeof s2);
    if (what & DQ__ST_ABS) memcpy(ab, a2, sizeof a2);
    if (what & DQ__ST_MAX) *mx = m2;
}

/* ---- two-means statistics (DQ_SCHEME_TWOMEANS, doc/FORMAT.md 22.2): element j of x (or
 * x + e) adds its magnitude |x_j| (as a double) to lane j % 16 of pos[] when its sign bit is
 * clear, of neg[] when it is set, and counts the set sign bits in *nneg. The lanes are carried
 * in and out (a bucket may be cut into pieces, each starting at lane 0: the caller rotates),
 * and combined like dq__stats' lanes (dq__lanes_sum). A NaN or Inf makes a sum non-finite. The
 * SIMD twins add +0.0 to the other group's lane, which leaves a lane that holds a sum of
 * magnitudes (>= +0) unchanged, so they agree bit for bit. */
static inline unsigned dq__popcount32(uint32_t m) {
    m = m - ((m >> 1) & 0x55555555u);
    m = (m & 0x33333333u) + ((m >> 2) & 0x33333333u);
    return (unsigned)((((m + (m >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24);
}
static inline void dq__tm_acc__scalar(const float *x, const float *e, size_t n, double *pos, double *neg,
                                      uint64_t *nneg) {
    uint64_t m = *nneg;
    size_t i;
    for (i = 0; i < n; i++) {
        uint32_t u = dq__fbits(e ? x[i] + e[i] : x[i]);
        double d = (double)dq__bitsf(u & DQ__ABS_MASK);
        if (u >> 31) {
            neg[i % DQ__SLANES] += d;
            m++;
        } else {
            pos[i % DQ__SLANES] += d;
        }
    }
    *nneg = m;
}

/* ---- error feedback: e[i] = x[i] + e[i], the compensated value that gets quantized. */
static inline void dq__compensate__scalar(const float *x, float *e, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) e[i] = x[i] + e[i];
}

/* ---- quantization of one bucket segment into codes (doc/FORMAT.md "Codes")
 * b >= 2: s = 2^(b-1) - 1 levels; r = min(|x| * inv, s), inv = s / scale; l = trunc(r);
 *         l += (t < r - l) with t = 24-bit uniform draw * 2^-24 (stochastic) or 0.5 (nearest);
 *         code = l | sign << (b-1), sign set only when x < 0 (sign bit) and l > 0.
 * b == 1: stochastic: p = 0.5 + x * inv, inv = 0.5 / scale; code = (t < p) ? 0 : 1 (1 = negative);
 *         nearest: code = sign bit of x (scaled sign, and two-means).
 * Decoded value of a code: level * step with the code's sign, step = scale / s (b >= 2); with
 * b == 1, step for code 0 and neg for code 1 (neg = -step, except for two-means, where step and
 * neg are the bucket's two means). With `res`, res[i] = x[i] - decoded (x may alias res). */
typedef struct dq__qctx {
    float inv, smax, step, thresh; /* thresh: 0.5 for nearest; < 0 means stochastic */
    float neg;                     /* b == 1: the decoded value of code 1 */
    unsigned bits;
    uint32_t k0, k1h, lo; /* generator key and low half of the first element's index */
    const float *tab;     /* table schemes: magnitudes tab[0..s]; NULL for uniform levels */
    float scale;          /* table schemes: the bucket's scale (inv = 1 / scale) */
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
            float xs = xi * q->inv, pp = 0.5f + xs;
            code = q->thresh >= 0.0f ? sgn : ((t < pp) ? 0u : 1u);
        } else {
            float r = dq__bitsf(xb & DQ__ABS_MASK) * q->inv;
            uint32_t l;
            float f;
            if (!(r < q->smax)) r = q->smax;
            l = (uint32_t)(int32_t)r;
            f = r - (float)l;
            l += (t < f) ? 1u : 0u;
            code = l | ((l != 0u ? sgn : 0u) << (q->bits - 1));
        }
        codes[i] = code;
        if (res) res[i] = xi - (q->bits == 1 ? (code ? q->neg : q->step) : dq__decode_value(code, q->bits, q->step));
    }
}

/* ---- quantization against a table of magnitudes (doc/FORMAT.md 6.7): tab[0] = 0 < tab[1] <
 * ... < tab[s] = 1. r = min(|x| * inv, 1) with inv = 1 / scale; j is the largest index with
 * tab[j] <= r (j < s, or j = s when r = 1); f = (r - tab[j]) / (tab[j+1] - tab[j]); the level
 * is j + (t < f). The decoded magnitude is tab[level] * scale. For exponential levels (tab[l] =
 * 2^(l-s)) f is the mantissa fraction of r, exactly, and the rule is natural dithering. */
static inline float dq__tab_value(uint32_t code, unsigned bits, const float *tab, float scale) {
    float v = tab[code & ((1u << (bits - 1)) - 1u)] * scale;
    return (code >> (bits - 1)) ? -v : v;
}
static inline uint32_t dq__tab_level(const float *tab, unsigned s, float r, float t) {
    unsigned lo = 0, hi = s;
    if (!(r < 1.0f)) return s;
    while (hi - lo > 1u) { /* tab[lo] <= r < tab[hi] */
        unsigned mid = (lo + hi) / 2u;
        if (tab[mid] <= r)
            lo = mid;
        else
            hi = mid;
    }
    return lo + ((t < (r - tab[lo]) / (tab[hi] - tab[lo])) ? 1u : 0u);
}
static inline void dq__quant_tab__scalar(const dq__qctx *q, const float *x, size_t cnt, uint32_t *codes, float *res) {
    unsigned s = (1u << (q->bits - 1)) - 1u;
    size_t i;
    for (i = 0; i < cnt; i++) {
        float xi = x[i];
        uint32_t xb = dq__fbits(xi), l;
        float t = q->thresh >= 0.0f ? q->thresh
                                     : (float)dq__draw24(q->k0, q->k1h, q->lo + (uint32_t)i) * 5.96046448e-08f;
        l = dq__tab_level(q->tab, s, dq__bitsf(xb & DQ__ABS_MASK) * q->inv, t);
        codes[i] = l | ((l != 0u ? xb >> 31 : 0u) << (q->bits - 1));
        if (res) res[i] = xi - dq__tab_value(codes[i], q->bits, q->tab, q->scale);
    }
}

/* ---- shared-scale levels (the aggregation section's quantizer): elements i0 .. i0+cnt-1 of
 * v = x (+ r) as signed integer levels on the unit 1/inv, into lv. The element indices must not
 * cross a multiple of 2^32 (k1h is the middle key of their high half). r, when non-NULL,
 * becomes v - level * unit. |v| * inv <= L is the caller's promise. */
static inline void dq__shared_q__scalar(const float *x, float *r, size_t cnt, size_t i0, float inv, float unit,
                                        uint32_t k0, uint32_t k1h, int stoch, int32_t *lv) {
    size_t j;
    for (j = 0; j < cnt; j++) {
        float v = r ? x[j] + r[j] : x[j];
        float t = dq__bitsf(dq__abs_bits(v)) * inv; /* exact */
        uint32_t lo = (uint32_t)t, up;
        float f = t - (float)lo;
        if (stoch)
            up = (uint32_t)((float)dq__draw24(k0, k1h, (uint32_t)(i0 + j)) < f * 16777216.0f);
        else
            up = (uint32_t)(f > 0.5f);
        lo += up;
        lv[j] = dq__fbits(v) >> 31 ? -(int32_t)lo : (int32_t)lo;
        if (r) {
            float back = (float)lv[j] * unit;
            r[j] = v - back;
        }
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

/* Quantize and pack a full block of 256 elements that lies in one bucket: the composition of
 * dq__quant__scalar and dq__pack_block__scalar, fused in the SIMD versions. */
static inline void dq__quant_pack__scalar(const dq__qctx *q, const float *x, float *res, uint8_t *out) {
    uint32_t codes[DQ__BLOCK];
    dq__quant__scalar(q, x, DQ__BLOCK, codes, res);
    dq__pack_block__scalar(codes, q->bits, out);
}

/* ---- decoding one packed block; rowstep[r] is the step of row r (rows never straddle a
 * bucket because buckets are multiples of 8). add: out = out + w * v, else out = v. */
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
/* Two-means (b = 1): code 0 decodes to pos, code 1 to neg, the bucket's two means; rowpos[r]
 * and rowneg[r] are those of row r. */
static inline void dq__decode_codes_tm(const uint32_t *codes, size_t cnt, float pos, float neg, float w, int add,
                                       float *out) {
    size_t i;
    for (i = 0; i < cnt; i++) {
        float v = codes[i] ? neg : pos;
        if (add) {
            float t = w * v;
            out[i] = out[i] + t;
        } else {
            out[i] = v;
        }
    }
}
static inline void dq__decode_block_tm__scalar(const uint8_t *in, const float *rowpos, const float *rowneg, float w,
                                               int add, float *out) {
    uint32_t codes[DQ__BLOCK];
    unsigned r;
    dq__unpack_block__scalar(in, 1u, codes);
    for (r = 0; r < DQ__ROWS; r++)
        dq__decode_codes_tm(codes + r * DQ__LANES, DQ__LANES, rowpos[r], rowneg[r], w, add, out + r * DQ__LANES);
}
/* Table schemes: rowscale[r] is the bucket scale of row r. */
static inline void dq__decode_codes_tab(const uint32_t *codes, size_t cnt, unsigned b, const float *tab, float scale,
                                        float w, int add, float *out) {
    size_t i;
    for (i = 0; i < cnt; i++) {
        float v = dq__tab_value(codes[i], b, tab, scale);
        if (add) {
            float t = w * v;
            out[i] = out[i] + t;
        } else {
            out[i] = v;
        }
    }
}
static inline void dq__decode_block_tab__scalar(const uint8_t *in, unsigned b, const float *tab, const float *rowscale,
                                                float w, int add, float *out) {
    uint32_t codes[DQ__BLOCK];
    unsigned r;
    dq__unpack_block__scalar(in, b, codes);
    for (r = 0; r < DQ__ROWS; r++)
        dq__decode_codes_tab(codes + r * DQ__LANES, DQ__LANES, b, tab, rowscale[r], w, add, out + r * DQ__LANES);
}

/* ---- Elias sizing scan (b >= 2) of cnt unpacked codes (cnt <= 256): nz[w] bit i says that code
 * 64w + i has a non-zero level (words past cnt are 0); returns the sign and level bits of those
 * codes, lvt[L] being those of a level of bit length L (lvt[0] = 0), or UINT32_MAX when a code
 * is a negative zero (sign set, level 0), which the Elias layout cannot carry. */
static inline uint32_t dq__elias_scan_codes(const uint32_t *codes, size_t cnt, unsigned b, const uint8_t *lvt,
                                            uint64_t *nz) {
    uint32_t smax = (1u << (b - 1u)) - 1u, bits = 0, bad = 0;
    size_t i;
    nz[0] = nz[1] = nz[2] = nz[3] = 0;
    for (i = 0; i < cnt; i++) {
        uint32_t l = codes[i] & smax, len = 0;
        while (l >> len) len++;
        bad |= codes[i] == smax + 1u;
        nz[i >> 6] |= (uint64_t)(l != 0u) << (i & 63u);
        bits += lvt[len];
    }
    return bad ? UINT32_MAX : bits;
}
/* The same for a full packed block, its codes unpacked into codes[0..256). */
static inline uint32_t dq__elias_scan__scalar(const uint8_t *in, unsigned b, const uint8_t *lvt, uint32_t *codes,
                                              uint64_t *nz) {
    dq__unpack_block__scalar(in, b, codes);
    return dq__elias_scan_codes(codes, DQ__BLOCK, b, lvt, nz);
}
/* Only the non-zero masks of a full packed block (as dq__elias_scan__scalar's nz), for the
 * early-stop pass of Elias sizing, which needs nothing else. */
static inline void dq__elias_nz__scalar(const uint8_t *in, unsigned b, uint64_t *nz) {
    uint32_t codes[DQ__BLOCK], smax = (1u << (b - 1u)) - 1u;
    unsigned i;
    dq__unpack_block__scalar(in, b, codes);
    nz[0] = nz[1] = nz[2] = nz[3] = 0;
    for (i = 0; i < DQ__BLOCK; i++) nz[i >> 6] |= (uint64_t)((codes[i] & smax) != 0u) << (i & 63u);
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

/* ---- rANS, 32 ways: the chunk kernels' scalar twins (coder 3 draft, doc/FORMAT.md 17.6).
 * One chunk of m symbols: 32 u32 LE states X_0..X_31, then u16 LE words read in order; symbol
 * j runs on state j mod 32; probabilities in units of 1/4096 and 16-bit renormalization as the
 * 8-way coder of section 17.3 (further down: DQ__RANS_*). The kernels dq__k_r32_get (decode)
 * and dq__k_r32_encode have SIMD twins in dqsgd_simd.h that write the same bytes; the chunk
 * API (tables, open, finish, whole-chunk decode, one fixed block) sits beside the 8-way coder. */
#define DQ__R32_WAYS 32u
#define DQ__R32_HEAD 128u  /* bytes of the 32 states */
#define DQ__R32_L 65536u   /* states live in [L, 2^32) */
#define DQ__R32_M 4096u

/* Encoder constants of one symbol (8 bytes, loaded whole by the SIMD twin):
 *   info = f | s << 13 | bias << 17  (f = f_s in 0..4096, s in 0..11, bias in 0..8190)
 *   rcp  = Granlund-Montgomery reciprocal: for every 32-bit x, with t = (x * rcp) >> 32,
 *          q = (t + ((x - t) >> 1)) >> s equals floor(x / f) (f >= 2), and x - 1 for f = 1.
 * Derivation (f >= 2): let l = ceil(log2 f) and m = ceil(2^(32+l) / f), so 2^32 <= m < 2^33
 * and m f - 2^(32+l) < f <= 2^l; then floor(x m / 2^(32+l)) = floor(x / f) for x < 2^32,
 * because x (m f - 2^(32+l)) / (f 2^(32+l)) < 2^32 2^l / (f 2^(32+l)) <= 1/f. With rcp = m - 2^32,
 * x m / 2^32 = x + t' (t' = x rcp / 2^32 exactly), and floor((x + t) / 2^l) for t = floor(t')
 * is the same integer; t <= x, so (x + t) / 2 = t + (x - t) / 2 without a 33-bit sum, hence
 * the shift s = l - 1 after the halving (powers of two get rcp = 0). f = 1 would need m = 2^32:
 * rcp = 2^32 - 1 gives t = x - 1 for 1 <= x < 2^32, s = 0 gives q = x - 1, and the missing
 * (M - 1) is added back through bias = c + M - 1 (bias = c otherwise). Then the new state is
 * x + q (M - f) + bias = (x div f) M + (x mod f) + c. */
typedef struct dq__r32_esym {
    uint32_t rcp;
    uint32_t info;
} dq__r32_esym;

/* Decoder of one chunk, as it advances. */
typedef struct dq__r32_dec {
    uint32_t x[DQ__R32_WAYS];
    const uint8_t *p;   /* next word */
    const uint8_t *end; /* end of the chunk; end - p is even */
    size_t j;           /* symbols decoded so far (symbol j runs on state j mod 32) */
    uint32_t bad;       /* a state needed a word after the last one */
} dq__r32_dec;

/* Decode the next cnt symbols into out. A state that needs a word when none is left takes
 * 0 instead (x << 16, which keeps it in [L, 2^32)) and marks the chunk bad; the symbols are
 * written all the same, so every twin writes the same cnt bytes whatever the stream. */
static inline void dq__r32_get__scalar(dq__r32_dec *d, const uint32_t *tab, uint8_t *out, size_t cnt) {
    const uint8_t *p = d->p, *end = d->end;
    size_t i, j = d->j;
    uint32_t bad = d->bad;
    for (i = 0; i < cnt; i++) {
        uint32_t *xp = d->x + ((j + i) & (DQ__R32_WAYS - 1u));
        uint32_t x = *xp, e = tab[x & (DQ__R32_M - 1u)], t;
        out[i] = (uint8_t)e;
        t = ((e >> 8 & 0xFFFu) + 1u) * (x >> 12);
        x = t + (e >> 20);
        if (x < DQ__R32_L) {
            if (p != end) {
                x = x << 16 | dq__ld16(p);
                p += 2;
            } else {
                x <<= 16;
                bad = 1;
            }
        }
        *xp = x;
    }
    d->p = p;
    d->j = j + cnt;
    d->bad = bad;
}

/* One encode step of symbol constants e on *xp: returns 1 when the state sheds a word first
 * (its low 16 bits into *word, unless word is NULL). dq__r32_put1 writes that word below offset
 * *w of buf; 0 (and nothing done) when it would go below buf. */
static inline int dq__r32_step(uint32_t *xp, const dq__r32_esym *e, uint32_t *word) {
    uint32_t x = *xp, f = e->info & 0x1FFFu, t, q;
    int shed = (x >> 20) >= f; /* x >= f 2^20 (never for f = 4096) */
    if (shed) {
        if (word) *word = x & 0xFFFFu;
        x >>= 16;
    }
    t = (uint32_t)(((uint64_t)x * e->rcp) >> 32);
    q = (t + ((x - t) >> 1)) >> (e->info >> 13 & 15u);
    t = q * (DQ__R32_M - f);
    *xp = x + t + (e->info >> 17);
    return shed;
}
static inline int dq__r32_put1(uint32_t *xp, const dq__r32_esym *e, uint8_t *buf, size_t *w) {
    uint32_t word = 0;
    if ((*xp >> 20) >= (e->info & 0x1FFFu) && *w < 2u) return 0;
    if (dq__r32_step(xp, e, &word)) {
        *w -= 2u;
        dq__st16(buf + *w, word);
    }
    return 1;
}
/* Symbols hi - 1 down to lo, symbol j on state x[j mod 32]; 0 on overflow. */
static inline int dq__r32_put_range(uint32_t *x, const uint8_t *sym, size_t hi, size_t lo, const dq__r32_esym *et,
                                    uint8_t *buf, size_t *w) {
    size_t j;
    for (j = hi; j-- > lo;)
        if (!dq__r32_put1(x + (j & (DQ__R32_WAYS - 1u)), et + sym[j], buf, w)) return 0;
    return 1;
}
/* The 32 states below offset w; the chunk's size, or 0 when they do not fit. */
static inline size_t dq__r32_put_states(const uint32_t *x, uint8_t *buf, size_t w, size_t cap) {
    unsigned k;
    if (w < DQ__R32_HEAD) return 0;
    w -= DQ__R32_HEAD;
    for (k = 0; k < DQ__R32_WAYS; k++) dq__st32(buf + w + 4u * k, x[k]);
    return cap - w;
}
/* Encode sym[0..m) as one chunk at the end of buf[0..cap): returns the chunk's size L (it
 * starts at buf + cap - L), or 0 when it does not fit. Every symbol must have f_s > 0 (else
 * the bytes are defined but do not decode to it). */
static inline size_t dq__r32_encode__scalar(const uint8_t *sym, size_t m, const dq__r32_esym *et, uint8_t *buf,
                                            size_t cap) {
    uint32_t x[DQ__R32_WAYS];
    size_t w = cap;
    unsigned k;
    for (k = 0; k < DQ__R32_WAYS; k++) x[k] = DQ__R32_L;
    if (!dq__r32_put_range(x, sym, m, 0, et, buf, &w)) return 0;
    return dq__r32_put_states(x, buf, w, cap);
}

/* ---- fp16 and bf16 conversions of the typed codec (dq_encode_typed): one value, then the kernels */
static inline uint16_t dq__f32_to_f16_bits(uint32_t u) {
    uint32_t s = (u >> 16) & 0x8000u, a = u & DQ__ABS_MASK, h;
    if (a > 0x7F800000u) { /* NaN: quiet, top 10 payload bits */
        h = 0x7E00u | ((a >> 13) & 0x03FFu);
    } else if (a >= 0x477FF000u) { /* rounds above 65504 (ties go up: 65504 is odd) */
        h = 0x7C00u;
    } else if (a >= 0x38800000u) { /* normal half: rebias, round at bit 13 */
        uint32_t t = a - 0x38000000u;
        h = (t + 0x0FFFu + ((t >> 13) & 1u)) >> 13;
    } else if (a < 0x33000000u) { /* below 2^-25 (2^-25 itself is a tie to 0) */
        h = 0;
    } else { /* subnormal half: the 24-bit significand in units of 2^-24 */
        uint32_t e = a >> 23, m = (a & 0x007FFFFFu) | 0x00800000u, sh = 126u - e;
        uint32_t rem = m & ((1u << sh) - 1u), half = 1u << (sh - 1u);
        h = m >> sh;
        h += (rem > half || (rem == half && (h & 1u))) ? 1u : 0u;
    }
    return (uint16_t)(s | h);
}
static inline uint32_t dq__f16_to_f32_bits(uint32_t h) {
    uint32_t s = (h & 0x8000u) << 16, a = h & 0x7FFFu, e = 113u;
    if (a >= 0x7C00u) return s | 0x7F800000u | ((a & 0x03FFu) << 13) | (a > 0x7C00u ? 0x00400000u : 0u);
    if (a >= 0x0400u) return s | ((a << 13) + 0x38000000u);
    if (a == 0) return s;
    while (!(a & 0x0400u)) { /* subnormal: normalize */
        a <<= 1;
        e--;
    }
    return s | (e << 23) | ((a & 0x03FFu) << 13);
}
static inline uint16_t dq__f32_to_bf16_bits(uint32_t u) {
    if ((u & DQ__ABS_MASK) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x0040u);
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
static inline uint32_t dq__bf16_to_f32_bits(uint32_t h) {
    uint32_t u = h << 16;
    return (u & DQ__ABS_MASK) > 0x7F800000u ? u | 0x00400000u : u;
}

/* 16-bit elements are accessed bytewise (memcpy), so any alignment and any declared element type
 * of the caller's array is fine. */
static inline void dq__f16_to_f32__scalar(const void *src, float *dst, size_t n) {
    const uint8_t *s = (const uint8_t *)src;
    size_t i;
    for (i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, s + 2u * i, 2);
        dst[i] = dq__bitsf(dq__f16_to_f32_bits(h));
    }
}
static inline void dq__f32_to_f16__scalar(const float *src, void *dst, size_t n) {
    uint8_t *d = (uint8_t *)dst;
    size_t i;
    for (i = 0; i < n; i++) {
        uint16_t h = dq__f32_to_f16_bits(dq__fbits(src[i]));
        memcpy(d + 2u * i, &h, 2);
    }
}
static inline void dq__bf16_to_f32__scalar(const void *src, float *dst, size_t n) {
    const uint8_t *s = (const uint8_t *)src;
    size_t i;
    for (i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, s + 2u * i, 2);
        dst[i] = dq__bitsf(dq__bf16_to_f32_bits(h));
    }
}
static inline void dq__f32_to_bf16__scalar(const float *src, void *dst, size_t n) {
    uint8_t *d = (uint8_t *)dst;
    size_t i;
    for (i = 0; i < n; i++) {
        uint16_t h = dq__f32_to_bf16_bits(dq__fbits(src[i]));
        memcpy(d + 2u * i, &h, 2);
    }
}

/* ---- the sparsifiers' scan (doc/FORMAT.md 20.3). An element's key is the bit
 * pattern of |c| (orders like |c| for finite c; Inf and NaN are >= 0x7F800000). The kernel:
 * c = x (+ e), stored to eo when eo is non-NULL (eo may be e), and the mask of the elements
 * whose key is >= lo (bit j for element j). cnt <= 64. */
static inline uint32_t dq__sp_key(float c) { return dq__abs_bits(c); }
static inline uint64_t dq__sp_mask__scalar(const float *x, const float *e, float *eo, size_t cnt, uint32_t lo) {
    uint64_t m = 0;
    size_t j;
    if (eo) {
        for (j = 0; j < cnt; j++) {
            float c = x[j] + e[j];
            eo[j] = c;
            m |= (uint64_t)(dq__sp_key(c) >= lo) << j;
        }
    } else if (e) {
        for (j = 0; j < cnt; j++) m |= (uint64_t)(dq__sp_key(x[j] + e[j]) >= lo) << j;
    } else {
        for (j = 0; j < cnt; j++) m |= (uint64_t)(dq__sp_key(x[j]) >= lo) << j;
    }
    return m;
}
/* Mostly no key reaches lo: (key - lo) is negative (as int32: keys and lo are below 2^31) for
 * every element exactly when the AND of all of them has its sign bit set, a test compilers
 * vectorize; only then is the mask worth building bit by bit. */
static inline uint64_t dq__sp_mask64__scalar(const float *x, const float *e, float *eo, uint32_t lo) {
    uint32_t all = 0xFFFFFFFFu;
    size_t j;
    if (eo) {
        for (j = 0; j < 64u; j++) {
            float c = x[j] + e[j];
            eo[j] = c;
            all &= dq__sp_key(c) - lo;
        }
    } else if (e) {
        for (j = 0; j < 64u; j++) all &= dq__sp_key(x[j] + e[j]) - lo;
    } else {
        for (j = 0; j < 64u; j++) all &= dq__sp_key(x[j]) - lo;
    }
    if (all >> 31) return 0;
    return eo ? dq__sp_mask__scalar(eo, NULL, NULL, 64u, lo) : dq__sp_mask__scalar(x, e, NULL, 64u, lo);
}

/* ---- count-sketch hashes (doc/FORMAT.md 21.3): coordinate i of row j hashes to H, the
 * generator's 32-bit draw dq__draw32 under the row's key; its bucket is (H * cols) >> 32 and its
 * sign is - when bit 0 of H is set. The packed form: bucket in bits 0..30, sign (1 = minus) in
 * bit 31, which is XORed into a float's sign bit to apply the sign exactly. */
#define DQ__SK_COL_MASK 0x7FFFFFFFu /* the column of a packed hash (bit 31: the sign) */
static inline uint32_t dq__sk_pack(uint32_t h, uint32_t cols) {
    return (uint32_t)(((uint64_t)h * cols) >> 32) | (h << 31);
}
/* Hash kernel: out[t] = packed hash of coordinate first + t, t < cnt (first + cnt <= 2^32). */
static inline void dq__sk_hash__scalar(uint32_t k0, uint32_t k1, uint32_t cols, uint32_t first, size_t cnt,
                                       uint32_t *out) {
    size_t t;
    for (t = 0; t < cnt; t++) out[t] = dq__sk_pack(dq__draw32(k0, k1, first + (uint32_t)t), cols);
}

#ifdef __cplusplus
}
#endif
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
/* ---------------------------------------------------------------- tables: schemes, families, configuration
 * What the rest of the library looks up: dq_strerror; the scheme table (a row per scheme id:
 * family, widths, norms, rounding, level tables), so nothing branches on a level scheme's id;
 * the family table (levels, sparse, sketch: the capacity, encoder, header check and decoder of
 * each); a level scheme's resolved configuration (dq__cfg_make2, from params or a header); the
 * fixed layout's sizes and the range granularity. The coder table is coders.h. */

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



#define DQ__NORM_WIRE_L2 0u
#define DQ__NORM_WIRE_MAX 1u
#define DQ__NORM_WIRE_MEAN 2u
#define DQ__NORM_WIRE_POW2 3u
#define DQ__NORM_WIRE_CLIP 4u
#define DQ__NORM_WIRE_ALPHA 5u
#define DQ__NORM_WIRE_TWOMEANS 6u

/* ---- the scheme table: what differs between schemes, one const row each, indexed by the
 * header's scheme byte (doc/FORMAT.md 3.1). Nothing else branches on a level scheme's id for
 * these facts. Adding a level scheme: a row here, its scale rule (dq__bucket_scale), its
 * kernels if its rounding differs, its FORMAT.md section and golden cases. */
#define DQ__FAM_NONE 0u   /* an unassigned value: decoders reject it */
#define DQ__FAM_LEVELS 1u /* b-bit codes and per-bucket scales: coders, ranges, blocks */
#define DQ__FAM_SPARSE 2u /* indices and float32 values */
#define DQ__FAM_SKETCH 3u /* a count-sketch table */
#define DQ__NORM_FROM_PARAMS 0xFFu /* wire_norm: L2 or max, as dq_params.norm asks */
#define DQ__S_NORM_PARAM 0x01u /* takes dq_params.norm (L2 or max) */
#define DQ__S_NEAREST 0x02u    /* deterministic: stochastic rounding is DQ_ERR_PARAM */
#define DQ__S_ALPHA 0x04u      /* every scale is the caller's alpha (truncation) */
#define DQ__S_TAB_EXP 0x08u    /* magnitudes from the table 2^(l-s) */
#define DQ__S_TAB_SENT 0x10u   /* magnitudes from a table the message carries */
#define DQ__S_TWO_SCALES 0x20u /* two scales per bucket (two-means) */
#define DQ__S_SIGN_MEAN 0x40u  /* 1 bit, nearest: the mean-magnitude scale (scaled sign) */
#define DQ__NB(w) (1u << (w))  /* norms_ok: the wire norm w is accepted */
typedef struct dq__scheme_row {
    const char *name;
    unsigned char family, bits_min, bits_max, bits_default;
    unsigned char wire_norm; /* the norm byte written (DQ__NORM_WIRE_*), or DQ__NORM_FROM_PARAMS */
    unsigned char norms_ok;  /* DQ__NB(w) for each norm byte w a decoder accepts */
    unsigned char flags;     /* DQ__S_* */
} dq__scheme_row;
#define DQ__NSCHEMES 12u
static const dq__scheme_row dq__scheme_rows[DQ__NSCHEMES] = {
    {"", DQ__FAM_NONE, 0, 0, 0, 0, 0, 0}, /* 0: DQ_SCHEME_DEFAULT, never on the wire */
    {"qsgd", DQ__FAM_LEVELS, 1, 16, 4, DQ__NORM_FROM_PARAMS,
     DQ__NB(DQ__NORM_WIRE_L2) | DQ__NB(DQ__NORM_WIRE_MAX) | DQ__NB(DQ__NORM_WIRE_MEAN),
     DQ__S_NORM_PARAM | DQ__S_SIGN_MEAN},
    {"nuqsgd", DQ__FAM_LEVELS, 2, 8, 4, DQ__NORM_FROM_PARAMS, DQ__NB(DQ__NORM_WIRE_L2) | DQ__NB(DQ__NORM_WIRE_MAX),
     DQ__S_NORM_PARAM | DQ__S_TAB_EXP},
    {"natural", DQ__FAM_LEVELS, 2, 8, 8, DQ__NORM_WIRE_POW2, DQ__NB(DQ__NORM_WIRE_POW2), DQ__S_TAB_EXP},
    {"terngrad", DQ__FAM_LEVELS, 2, 2, 2, DQ__NORM_WIRE_CLIP, DQ__NB(DQ__NORM_WIRE_CLIP), 0},
    {"twomeans", DQ__FAM_LEVELS, 1, 1, 1, DQ__NORM_WIRE_TWOMEANS, DQ__NB(DQ__NORM_WIRE_TWOMEANS),
     DQ__S_NEAREST | DQ__S_TWO_SCALES},
    {"topk", DQ__FAM_SPARSE, 32, 32, 32, 0, 0, 0},
    {"randk", DQ__FAM_SPARSE, 32, 32, 32, 0, 0, 0},
    {"threshold", DQ__FAM_SPARSE, 32, 32, 32, 0, 0, 0},
    {"trunc", DQ__FAM_LEVELS, 2, 16, 4, DQ__NORM_WIRE_ALPHA, DQ__NB(DQ__NORM_WIRE_ALPHA), DQ__S_ALPHA},
    {"trunc-nu", DQ__FAM_LEVELS, 2, 8, 4, DQ__NORM_WIRE_ALPHA, DQ__NB(DQ__NORM_WIRE_ALPHA),
     DQ__S_ALPHA | DQ__S_TAB_SENT},
    {"sketch", DQ__FAM_SKETCH, 32, 32, 32, 0, 0, 0},
};
/* The row of a scheme id; row 0 (family none) for any value outside the table. */
static inline const dq__scheme_row *dq__scheme(unsigned scheme) {
    return &dq__scheme_rows[scheme < DQ__NSCHEMES ? scheme : 0u];
}
static inline int dq__is_levels(unsigned scheme) { return dq__scheme(scheme)->family == DQ__FAM_LEVELS; }
/* Widths a level scheme takes (doc/FORMAT.md 5): table schemes need b <= 8 (s <= 127). */
static inline int dq__bits_ok(unsigned scheme, unsigned bits) {
    const dq__scheme_row *r = dq__scheme(scheme);
    return bits >= r->bits_min && bits <= r->bits_max;
}
/* The norm (wire value) a scheme writes, from the caller's norm and rounding. */
static inline unsigned dq__scheme_norm(unsigned scheme, unsigned bits, dq_norm norm, int stochastic) {
    const dq__scheme_row *r = dq__scheme(scheme);
    if (r->wire_norm != DQ__NORM_FROM_PARAMS) return r->wire_norm;
    if ((r->flags & DQ__S_SIGN_MEAN) && bits == 1u && !stochastic) return DQ__NORM_WIRE_MEAN; /* scaled sign */
    return norm == DQ_NORM_MAX ? DQ__NORM_WIRE_MAX : DQ__NORM_WIRE_L2;
}
/* The norm byte a decoder accepts for a scheme (informational, but checked). */
static inline int dq__norm_ok(unsigned scheme, unsigned wire) {
    return wire < 8u && ((dq__scheme(scheme)->norms_ok >> wire) & 1u);
}

/* ---- the family table: what differs between the message families of the scheme table
 * (levels, sparse: doc/FORMAT.md 19, sketch: 20): the dst capacity for params, the encoder,
 * the family's part of the header check (after the common fields; count is the header's
 * element count) and the decoder of an opened message's body. dq_encode_capacity, dq_encode,
 * dq_header_read and the decoders dispatch through it; the functions are defined with their
 * family. Params never reach a sketch (dq_sketch_encode writes those): the level functions
 * refuse its scheme id, as they refuse an unassigned one. */
typedef struct dq__family_ops {
    dq_status (*capacity)(const dq_params *p, size_t n, size_t *size);
    dq_status (*encode)(const dq_params *p, dq_dtype xt, const void *x, size_t n, dq_dtype rt, void *residual,
                        void *dst, size_t dst_cap, size_t *dst_len);
    dq_status (*header)(const uint8_t *in, size_t src_len, uint64_t count, dq_header *h, dq__cfg *c);
    dq_status (*decode)(const uint8_t *msg, const dq_header *h, const dq__cfg *c, float w, int add, dq_dtype t,
                        void *out);
} dq__family_ops;
static inline dq_status dq__lv_capacity(const dq_params *p, size_t n, size_t *size);
static inline dq_status dq__lv_encode(const dq_params *p, dq_dtype xt, const void *x, size_t n, dq_dtype rt,
                                      void *residual, void *dst, size_t dst_cap, size_t *dst_len);
static inline dq_status dq__lv_header(const uint8_t *in, size_t src_len, uint64_t count, dq_header *h, dq__cfg *c);
static inline dq_status dq__lv_decode(const uint8_t *msg, const dq_header *h, const dq__cfg *c, float w, int add,
                                      dq_dtype t, void *out);
static inline dq_status dq__sp_size(const dq_params *p, size_t n, size_t *size);
static inline dq_status dq__sp_encode(const dq_params *p, dq_dtype xt, const void *x, size_t n, dq_dtype rt,
                                      void *residual, void *dst, size_t dst_cap, size_t *dst_len);
static inline dq_status dq__sp_header(const uint8_t *in, size_t src_len, uint64_t count, dq_header *h, dq__cfg *c);
static inline dq_status dq__sp_decode(const uint8_t *msg, const dq_header *h, const dq__cfg *c, float w, int add,
                                      dq_dtype t, void *out);
static inline dq_status dq__sk_header(const uint8_t *in, size_t src_len, uint64_t count, dq_header *h, dq__cfg *c);
static inline dq_status dq__sk_decode(const uint8_t *msg, const dq_header *h, const dq__cfg *c, float w, int add,
                                      dq_dtype t, void *out);
static const dq__family_ops dq__families[4] = {
    {dq__lv_capacity, dq__lv_encode, dq__lv_header, dq__lv_decode}, /* DQ__FAM_NONE: refused by these */
    {dq__lv_capacity, dq__lv_encode, dq__lv_header, dq__lv_decode}, /* DQ__FAM_LEVELS */
    {dq__sp_size, dq__sp_encode, dq__sp_header, dq__sp_decode},     /* DQ__FAM_SPARSE */
    {dq__lv_capacity, dq__lv_encode, dq__sk_header, dq__sk_decode}, /* DQ__FAM_SKETCH */
};
/* The operations of a scheme id as it comes in dq_params (0: QSGD) or on the wire (0: none). */
static inline const dq__family_ops *dq__ops_params(const dq_params *p) {
    return &dq__families[dq__scheme(p->scheme ? (unsigned)p->scheme : (unsigned)DQ_SCHEME_QSGD)->family];
}
static inline const dq__family_ops *dq__ops_wire(unsigned scheme) { return &dq__families[dq__scheme(scheme)->family]; }
/* Exponential levels: tab[l] = 2^(l-s) for l >= 1 (a power of two, normal for s <= 127). */
static inline void dq__tab_exp(unsigned s, float *tab) {
    unsigned l;
    tab[0] = 0.0f;
    for (l = 1; l <= s; l++) tab[l] = dq__bitsf((uint32_t)(l + 127u - s) << 23);
}
/* A TRUNC_NU level table: s finite levels, 0 < l_1 < ... < l_s = 1. */
static inline int dq__tab_ok(const float *lv, unsigned s) {
    unsigned l;
    for (l = 0; l < s; l++)
        if (!(lv[l] > (l ? lv[l - 1] : 0.0f)) || !(lv[l] <= 1.0f)) return 0;
    return lv[s - 1] == 1.0f;
}
static inline int dq__alpha_ok(float a) {
    return a >= DQ__MIN_SCALE && dq__fbits(a) <= DQ__MAX_SCALE_BITS; /* also false for NaN */
}

/* What the caller asked of the coders, and whether it is valid (planner.h). */
static inline unsigned dq__coder_asked(unsigned coder, size_t n);
static inline int dq__coder_param_ok(unsigned coder, unsigned bits, int wire);

/* From the caller's params (`wire` = 0) or a message's header fields (`wire` = 1: alpha and
 * the levels are in the message, read by dq__open). */
static inline dq_status dq__cfg_make2(const dq_params *p, size_t n, int wire, dq__cfg *c) {
    unsigned scheme = p->scheme == DQ_SCHEME_DEFAULT ? (unsigned)DQ_SCHEME_QSGD : (unsigned)p->scheme;
    const dq__scheme_row *row = dq__scheme(scheme);
    unsigned bits = p->bits ? p->bits : row->bits_default;
    uint32_t bk = p->bucket ? p->bucket : DQ_BUCKET_DEFAULT;
    unsigned s;
    if (row->family != DQ__FAM_LEVELS) return DQ_ERR_PARAM;
    if (!dq__bits_ok(scheme, bits)) return DQ_ERR_BITS;
    if ((unsigned)p->rounding > (unsigned)DQ_ROUND_NEAREST) return DQ_ERR_PARAM;
    if ((row->flags & DQ__S_NEAREST) && p->rounding == DQ_ROUND_STOCHASTIC) return DQ_ERR_PARAM; /* nearest only */
    if ((unsigned)p->norm > (unsigned)DQ_NORM_MAX) return DQ_ERR_PARAM; /* MEAN is chosen, not asked */
    if (p->norm != DQ_NORM_DEFAULT && !(row->flags & DQ__S_NORM_PARAM)) return DQ_ERR_PARAM;
    if (bk != DQ_BUCKET_WHOLE && (bk % 8u) != 0) return DQ_ERR_PARAM;
    if (p->checksum > 1u) return DQ_ERR_PARAM;
    if (!dq__coder_param_ok(p->coder, bits, wire)) return DQ_ERR_PARAM;
    if ((uint64_t)n > DQ_MAX_ELEMS) return DQ_ERR_TOO_LARGE;
    s = bits == 1u ? 1u : (1u << (bits - 1u)) - 1u;
    memset(c, 0, sizeof *c);
    if (!wire && (row->flags & DQ__S_ALPHA)) {
        if (!dq__alpha_ok(p->alpha)) return DQ_ERR_PARAM;
        c->alpha = p->alpha;
        if ((row->flags & DQ__S_TAB_SENT) && (!p->levels || !dq__tab_ok(p->levels, s))) return DQ_ERR_PARAM;
    }
    c->scheme = scheme;
    c->bits = bits;
    c->stochastic = p->rounding != DQ_ROUND_NEAREST && !(row->flags & DQ__S_NEAREST);
    c->norm = dq__scheme_norm(scheme, bits, p->norm, (int)c->stochastic);
    c->checksum = p->checksum;
    c->coder = wire ? p->coder : dq__coder_asked(p->coder, n);
    c->bucket_wire = bk == DQ_BUCKET_WHOLE ? 0u : bk;
    c->bucket = bk == DQ_BUCKET_WHOLE ? (n ? n : 1u) : (size_t)bk;
    c->nbuckets = n ? (n - 1u) / c->bucket + 1u : 0u;
    c->table = (row->flags & (DQ__S_TAB_EXP | DQ__S_TAB_SENT)) != 0;
    if (row->flags & DQ__S_TAB_EXP) dq__tab_exp(s, c->tab);
    if (row->flags & DQ__S_TAB_SENT) {
        c->ntab = s;
        if (!wire) {
            c->tab[0] = 0.0f;
            memcpy(c->tab + 1, p->levels, 4u * s);
        }
    }
    c->tm = (row->flags & DQ__S_TWO_SCALES) != 0;
    c->prefix = 4u * (c->nbuckets * (c->tm ? 2u : 1u) + c->ntab);
    return DQ_OK;
}
static inline dq_status dq__cfg_make(const dq_params *p, size_t n, dq__cfg *c) { return dq__cfg_make2(p, n, 0, c); }

/* Bytes of scales + payload, plus the header and trailing checksum when `framed`; 0 with
 * *ok = 0 on size_t overflow. */
static inline size_t dq__size(const dq__cfg *c, size_t n, int framed, int *ok) {
    uint64_t s = (uint64_t)c->prefix + ((uint64_t)n * c->bits + 7u) / 8u;
    if (framed) s += DQ_HEADER_SIZE + (c->checksum ? 4u : 0u);
    *ok = s <= (uint64_t)SIZE_MAX;
    return *ok ? (size_t)s : 0u;
}

DQ_API size_t dq_encode_bound(size_t n, unsigned bits) {
    uint64_t s, t;
    if (bits < 1u || bits > 16u || (uint64_t)n > DQ_MAX_ELEMS) return 0;
    s = (uint64_t)DQ_HEADER_SIZE + 4u * (((uint64_t)n + 7u) / 8u) + ((uint64_t)n * bits + 7u) / 8u + 4u +
        DQ__LEVEL_TABLE_BYTES(bits);
    t = (uint64_t)DQ_HEADER_SIZE + 9u * (((uint64_t)n + 7u) / 8u) + 4u; /* DQ_SCHEME_TWOMEANS, 1 bit */
    if (t > s) s = t;
    return s <= (uint64_t)SIZE_MAX ? (size_t)s : 0u;
}

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

/* ---------------------------------------------------------------- bit streams and Elias codes
 * The public bit writer and reader (MSB first; dq_bw_*, dq_br_*) and the Elias gamma, delta and
 * omega codes (dq_elias_*), on which the Elias coder (coder_elias.h) and the sparse index
 * streams (index.h) write and read. */

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

/* ---------------------------------------------------------------- coders: the table (doc/FORMAT.md 17)
 * A coder changes how a level-scheme message sends its codes, never what they are: each is a
 * lossless transform of the fixed-width payload, the layout the quantizer writes and the block
 * decoders read, so the quantizer and the SIMD kernels serve every coder. Each coder is one part
 * (coder_fixed.h, coder_elias.h, coder_rans.h, coder_rans8.h) and one row of dq__coders below,
 * indexed by the header's coder byte. The planner (planner.h), the message reader (message.h),
 * the decoders, jobs and segments ask a coder's row what to do; none of them asks which coder
 * it is. A row gives
 *   - what the coder carries: the widths, whether encoders send it (coder 2 is read only), the
 *     bytes of the payload-length field a coded body starts with (none for the fixed layout);
 *   - reading: the largest payload a message may declare, and a reader (dq__cdec) that opens
 *     the payload, hands out the fixed payload block by block, checks the end and rewinds; a
 *     coder whose parts decode on their own (coder 3) also opens at the part that holds an
 *     element, for ranges. The fixed layout has no reader: it is read in place;
 *   - planning: size bounds from the statistics the quantizer gathers, the working room of its
 *     in-place write, its exact size (a pass over the codes);
 *   - writing: the coded payload from the fixed payload (in place in the encoder's buffer, or
 *     from another buffer), and for a payload that is a head followed by independent parts
 *     (coder 3: the frequency table, then chunks) the head and one part, for jobs.
 * A new coder is its part, its row here, and its reader state and planning data in the two
 * structs below. */

#define DQ__NCODERS 4u /* coder bytes 0 .. 3 (doc/FORMAT.md 3.1) */

typedef struct dq__cdec dq__cdec;

/* What the planner knows of a message's codes (dq__plan_make). */
typedef struct dq__plan_in {
    unsigned bits;
    size_t n;
    unsigned crc;           /* checksum bytes the message carries after the payload (0 or 4) */
    uint64_t fixed;         /* bytes of the fixed payload */
    const uint8_t *payload; /* the fixed payload: exact sizes and the writers read it */
    const uint64_t *counts; /* its symbol counts (FORMAT 17.3), gathered while quantizing; NULL when uncounted */
    const uint64_t *gaps;   /* the gap counts of its full blocks (dq__k_elias_gaps, a job's parts), or NULL */
} dq__plan_in;

/* What each coder would cost, and the choice (dq__plan_make): what the writers read. Sizes are
 * payload bytes, a coded payload's with its 8-byte length; 0 where a coder is not sized. */
typedef struct dq__plan {
    unsigned coder;             /* the choice */
    uint64_t size[DQ__NCODERS];
    uint32_t f[256];            /* rANS: the frequencies */
    size_t table;               /* rANS: bytes of the frequency table */
    uint64_t room[DQ__NCODERS]; /* working room an in-place write needs past the fixed body */
    uint64_t nnz;               /* Elias: the non-zero codes, counted while sizing it */
} dq__plan;
/* The bounds the planner decides from before it sizes anything. */
typedef struct dq__plan_est {
    uint64_t lb[DQ__NCODERS], ub[DQ__NCODERS]; /* from the counts (ub = UINT64_MAX: none) */
    uint64_t lbg[DQ__NCODERS];                 /* lb, or a higher bound with the gap counts too */
    uint64_t lv[2];                            /* Elias: sign and level bits, non-zero codes */
} dq__plan_est;

/* Reader states, one per coder that has a reader (its functions are in its part). */
typedef struct dq__elias_rd {
    dq_bitreader br;
    uint64_t left, at;   /* entries still to read; element index + 1 of the one read ahead */
    uint32_t next_code;  /* the entry read ahead (none when has_next is 0) */
    int has_next;
} dq__elias_rd;
typedef struct dq__rans8_rd {
    uint32_t x[8];
    const uint8_t *p;
    size_t left, isym; /* bytes of words left; symbols decoded */
    int bad;           /* ran out of words */
} dq__rans8_rd;
typedef struct dq__rans_rd {
    dq__r32_dec d32;
    size_t pos, cblocks; /* offset of the next chunk; blocks per chunk */
    int inchunk;         /* d32 decodes a chunk, checked at its end when the next opens */
} dq__rans_rd;

/* The coded-payload reader: hands out the fixed payload block by block, in order. */
struct dq__cdec {
    const struct dq__coder *row;
    unsigned bits;
    size_t n, k;        /* elements; the next block */
    const uint8_t *pay; /* the coded payload, len bytes */
    size_t len;
    size_t body;        /* rANS: the offset after the frequency table */
    int bad;
    int trusted;        /* the payload checksum was verified: decode in one pass, check at the end */
    union {
        dq__elias_rd e;
        dq__rans8_rd r8;
        dq__rans_rd r;
    } s;
    uint32_t tab[DQ__R32_M]; /* rANS: the decode table */
};

typedef struct dq__coder {
    unsigned char bits_min, bits_max; /* the widths it carries */
    unsigned char sent_as;            /* the coder an encoder asked for this one writes (2: 3) */
    unsigned char head;               /* bytes of the payload length after the header */
    unsigned char stats;              /* what its planning reads: DQ__PS_COUNTS (needs), DQ__PS_GAPS (uses) */
    uint64_t max_n;                   /* elements above which encoders do not send it */
    uint64_t (*bound)(uint64_t n, unsigned b); /* the largest payload a message may declare */
    size_t (*auto_room)(unsigned b);  /* dq_encode_capacity()'s room for it (0: none) */
    /* reading; open NULL: the payload is the fixed layout, read in place */
    dq_status (*open)(dq__cdec *d);
    dq_status (*rewind)(dq__cdec *d);
    const uint8_t *(*block)(dq__cdec *d, uint8_t *out); /* the next block of the fixed payload into out; returns out */
    dq_status (*end)(dq__cdec *d);                      /* after the last block */
    dq_status (*range)(dq__cdec *d, size_t begin, size_t end); /* checks the parts that hold a range, reader at
                                                                * the first (NULL: one stream, no ranges) */
    /* planning: bounds from the counts (NULL: none); room_fits NULL: the room comes with size,
     * which may stop early (0) once the size exceeds `limit` bytes */
    void (*bounds)(const dq__plan_in *in, dq__plan *pl, dq__plan_est *est);
    int (*room_fits)(const dq__plan_in *in, dq__plan *pl, const dq__plan_est *est, uint64_t room);
    void (*size)(const dq__plan_in *in, dq__plan *pl, const dq__plan_est *est, uint64_t limit);
    /* writing: the coded payload (length field aside) at out[0..cap), scratch more bytes usable
     * past cap; in place, the fixed payload in->payload lies at out - 8, below it the scales */
    size_t (*write)(const dq__plan_in *in, const dq__plan *pl, uint8_t *out, size_t cap, size_t scratch, int inplace);
    /* jobs: part_elems NULL: written whole by write; else parts of part_elems(b) elements code
     * on their own into work (part_cap bytes each), after a head */
    size_t (*part_elems)(unsigned b);
    uint64_t (*work)(uint64_t n, unsigned b); /* the work bytes a job keeps for it */
    uint64_t (*part_cap)(const uint64_t *counts, const dq__plan *pl, unsigned b, size_t parts_elems);
    size_t (*part)(const dq__plan_in *in, const dq__plan *pl, size_t e0, size_t e1, uint8_t *buf, size_t cap);
    size_t (*head_write)(const dq__plan *pl, unsigned b, uint8_t *out);
} dq__coder;

/* The rows' functions, defined in the coder parts. */
static inline uint64_t dq__fixed_bound(uint64_t n, unsigned b);
static inline uint64_t dq__elias_payload_bound(uint64_t n, unsigned b);
static inline size_t dq__elias_auto_room(unsigned b);
static inline dq_status dq__elias_open(dq__cdec *d);
static inline const uint8_t *dq__elias_rd_block(dq__cdec *d, uint8_t *out);
static inline dq_status dq__elias_end(dq__cdec *d);
static inline void dq__elias_bounds(const dq__plan_in *in, dq__plan *pl, dq__plan_est *est);
static inline void dq__elias_size(const dq__plan_in *in, dq__plan *pl, const dq__plan_est *est, uint64_t limit);
static inline size_t dq__elias_write(const dq__plan_in *in, const dq__plan *pl, uint8_t *out, size_t cap,
                                     size_t scratch, int inplace);
static inline uint64_t dq__elias_work(uint64_t n, unsigned b);
static inline uint64_t dq__rans8_payload_bound(uint64_t n, unsigned b);
static inline dq_status dq__rans8_open(dq__cdec *d);
static inline dq_status dq__rans8_rewind(dq__cdec *d);
static inline const uint8_t *dq__rans8_block(dq__cdec *d, uint8_t *out);
static inline dq_status dq__rans8_end(dq__cdec *d);
static inline uint64_t dq__r32_payload_bound(uint64_t n, unsigned b);
static inline size_t dq__r32_auto_room(unsigned b);
static inline dq_status dq__r32_rd_open(dq__cdec *d);
static inline dq_status dq__r32_rd_rewind(dq__cdec *d);
static inline const uint8_t *dq__r32_rd_block(dq__cdec *d, uint8_t *out);
static inline dq_status dq__r32_rd_end(dq__cdec *d);
static inline dq_status dq__r32_rd_range(dq__cdec *d, size_t begin, size_t end);
static inline void dq__r32_plan_bounds(const dq__plan_in *in, dq__plan *pl, dq__plan_est *est);
static inline int dq__r32_room_fits(const dq__plan_in *in, dq__plan *pl, const dq__plan_est *est, uint64_t room);
static inline void dq__r32_size(const dq__plan_in *in, dq__plan *pl, const dq__plan_est *est, uint64_t limit);
static inline size_t dq__r32_write(const dq__plan_in *in, const dq__plan *pl, uint8_t *out, size_t cap,
                                   size_t scratch, int inplace);
static inline size_t dq__r32_chunk_elems(unsigned b);
static inline uint64_t dq__r32_work(uint64_t n, unsigned b);
static inline uint64_t dq__r32_part_cap(const uint64_t *counts, const dq__plan *pl, unsigned b, size_t elems);
static inline size_t dq__r32_part(const dq__plan_in *in, const dq__plan *pl, size_t e0, size_t e1, uint8_t *buf,
                                  size_t cap);
static inline size_t dq__r32_head_write(const dq__plan *pl, unsigned b, uint8_t *out);

#define DQ__RANS_MAX_SYMS ((uint64_t)1 << 40) /* keeps the rANS size bounds in 64-bit integers */
#define DQ__PS_COUNTS 1u /* the symbol counts */
#define DQ__PS_GAPS 2u   /* the gap counts of the full blocks, with the symbol counts */
static const dq__coder dq__coders[DQ__NCODERS] = {
    /* 0: fixed, b bits per code (FORMAT 8) */
    {1, 16, 0, 0, 0, DQ_MAX_ELEMS, dq__fixed_bound, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL},
    /* 1: Elias omega gaps, signs and levels (FORMAT 17.2) */
    {2, 16, 1, 8, DQ__PS_GAPS, DQ_MAX_ELEMS, dq__elias_payload_bound, dq__elias_auto_room, dq__elias_open,
     dq__elias_open, dq__elias_rd_block, dq__elias_end, NULL, dq__elias_bounds, NULL, dq__elias_size, dq__elias_write,
     NULL, dq__elias_work, NULL, NULL, NULL},
    /* 2: rANS, 8 states, one stream (FORMAT 17.3): read only, asking for it sends coder 3 */
    {1, 8, 3, 8, 0, DQ_MAX_ELEMS, dq__rans8_payload_bound, NULL, dq__rans8_open, dq__rans8_rewind, dq__rans8_block,
     dq__rans8_end, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    /* 3: rANS, 32 states, in chunks (FORMAT 17.6) */
    {1, 8, 3, 8, DQ__PS_COUNTS, DQ__RANS_MAX_SYMS, dq__r32_payload_bound, dq__r32_auto_room, dq__r32_rd_open,
     dq__r32_rd_rewind, dq__r32_rd_block, dq__r32_rd_end, dq__r32_rd_range, dq__r32_plan_bounds, dq__r32_room_fits,
     dq__r32_size, dq__r32_write, dq__r32_chunk_elems, dq__r32_work, dq__r32_part_cap, dq__r32_part,
     dq__r32_head_write},
};
/* The row of a coder byte; NULL for an unassigned one. */
static inline const dq__coder *dq__coder_row(unsigned coder) {
    return coder < DQ__NCODERS ? &dq__coders[coder] : NULL;
}
/* Whether a row carries b-bit codes. */
static inline int dq__coder_bits_ok(const dq__coder *r, unsigned b) { return b >= r->bits_min && b <= r->bits_max; }
/* A coded payload read from its start only: no ranges (Elias, coder 2). */
static inline int dq__coder_one_stream(unsigned coder) { return dq__coders[coder].open && !dq__coders[coder].range; }
/* Whether encoders send a row (a coder asked for that sends another is not sent itself). */
static inline int dq__coder_sent(unsigned coder) { return coder < DQ__NCODERS && dq__coders[coder].sent_as == coder; }
/* Whether a part of a message (a segment, a composed message's values) may carry b-bit codes
 * with this coder byte: one encoders send, at a width it carries. */
static inline int dq__coder_part_ok(unsigned coder, unsigned b) {
    return dq__coder_sent(coder) && dq__coder_bits_ok(&dq__coders[coder], b);
}

/* ---- the reader, whatever the coder */
static inline dq_status dq__cdec_open(dq__cdec *d, unsigned coder, unsigned b, size_t n, const uint8_t *pay,
                                      size_t len) {
    d->row = &dq__coders[coder];
    d->bits = b;
    d->n = n;
    d->k = 0;
    d->pay = pay;
    d->len = len;
    d->bad = 0;
    d->trusted = 0;
    return d->row->open(d);
}
static inline const uint8_t *dq__cdec_block(dq__cdec *d, uint8_t *out) { return d->row->block(d, out); }
static inline dq_status dq__cdec_end(dq__cdec *d) { return d->row->end(d); }
/* Decodes the whole payload once to validate it, then rewinds. */
static inline dq_status dq__cdec_validate(dq__cdec *d) {
    uint8_t tmp[DQ__BLOCK_BYTES(16u)];
    size_t k, nblk = (d->n + DQ__BLOCK - 1u) / DQ__BLOCK;
    dq_status st;
    for (k = 0; k < nblk; k++) dq__cdec_block(d, tmp);
    if ((st = dq__cdec_end(d)) != DQ_OK) return st;
    return d->row->rewind(d);
}
/* ---------------------------------------------------------------- coder 0: the fixed layout, blocks and symbols
 * The fixed payload (doc/FORMAT.md 8) is b bits per code, packed 256 codes to a block, the tail
 * block shorter. It is the canonical form every other coder transforms: coded payloads are made
 * from it and decode back into it one block at a time (dq__cdec), so the quantizer and the
 * block decoders serve them all. Its row reads it in place and writes nothing.
 * Symbols (FORMAT 17.3), which the entropy coders count and code: groups of g = floor(8/b)
 * codes (b <= 8). For b in {1, 2, 4, 8} a symbol is a byte of the fixed payload, in payload
 * order; for b in {3, 5, 6, 7} it is g consecutive codes in element order, the first in the
 * low bits, the last group padded with zero codes. */

static inline uint64_t dq__fixed_bound(uint64_t n, unsigned b) { return (n * b + 7u) / 8u; }
/* Bytes of fixed payload in blocks 0..k. */
static inline size_t dq__fixed_through(unsigned b, size_t n, size_t k) {
    uint64_t end = (uint64_t)(k + 1u) * DQ__BLOCK < n ? (uint64_t)(k + 1u) * DQ__BLOCK : n;
    return (size_t)((end * b + 7u) / 8u);
}

static inline unsigned dq__sym_group(unsigned b) { return 8u / b; }
static inline unsigned dq__sym_bits(unsigned b) { return (8u / b) * b; }
static inline int dq__sym_bytes(unsigned b) { return (8u % b) == 0; } /* symbols are payload bytes */

/* The codes of fixed-payload block k (the tail when k = n / 256); returns their count. */
static inline size_t dq__block_codes(unsigned b, size_t n, const uint8_t *payload, size_t k, uint32_t *codes) {
    size_t cnt = n - k * DQ__BLOCK < DQ__BLOCK ? n - k * DQ__BLOCK : DQ__BLOCK;
    if (cnt == DQ__BLOCK)
        dq__unpack_block__scalar(payload + k * DQ__BLOCK_BYTES(b), b, codes);
    else
        dq__unpack_tail(payload + k * DQ__BLOCK_BYTES(b), cnt, b, codes);
    return cnt;
}
/* The symbols of fixed-payload block k (the tail when k = n / 256) into sym; returns their count. */
static inline size_t dq__block_syms(unsigned b, size_t n, const uint8_t *payload, size_t k, uint8_t *sym) {
    uint32_t codes[DQ__BLOCK];
    size_t cnt = n - k * DQ__BLOCK < DQ__BLOCK ? n - k * DQ__BLOCK : DQ__BLOCK, m, nsym;
    unsigned g = dq__sym_group(b), t;
    const uint8_t *in = payload + k * DQ__BLOCK_BYTES(b);
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

/* ---- symbol counts (FORMAT 17.3), what the planner sizes the entropy coders from. The
 * quantizer adds each run of blocks it has just written (dq__symcount_add, while they are in
 * cache); re-coding a written message counts its payload in one run. */
typedef struct dq__symcount {
    uint32_t c8[8][256]; /* eight tables: no store-to-load chain on repeats */
    uint64_t pending;    /* bytes in c8 since the last flush (each table holds one in 8) */
} dq__symcount;
static inline void dq__symcount_flush(dq__symcount *s, unsigned b, uint64_t *cnt) {
    unsigned A = 1u << dq__sym_bits(b), v, t;
    for (v = 0; v < A; v++)
        for (t = 0; t < 8u; t++) cnt[v] += s->c8[t][v];
    memset(s->c8, 0, sizeof s->c8);
    s->pending = 0;
}
/* Adds the symbols of blocks [k0, k1) to cnt (through s). */
static inline void dq__symcount_add(dq__symcount *s, unsigned b, size_t n, const uint8_t *payload, size_t k0,
                                    size_t k1, uint64_t *cnt) {
    if (dq__sym_bytes(b)) { /* the payload's bytes [f0, f1) */
        size_t i = k0 * DQ__BLOCK_BYTES(b), f1 = dq__fixed_through(b, n, k1 - 1u), end;
        uint32_t(*c8)[256] = s->c8;
        while (i < f1) { /* flushed every 2^30 bytes: 2^27 a table at most */
            end = f1 - i > ((size_t)1 << 30) - s->pending ? i + (((size_t)1 << 30) - (size_t)s->pending) : f1;
            s->pending += end - i;
            for (; i + 8u <= end; i += 8) {
                uint64_t w = dq__ld64(payload + i);
                c8[0][w & 255u]++;
                c8[1][(w >> 8) & 255u]++;
                c8[2][(w >> 16) & 255u]++;
                c8[3][(w >> 24) & 255u]++;
                c8[4][(w >> 32) & 255u]++;
                c8[5][(w >> 40) & 255u]++;
                c8[6][(w >> 48) & 255u]++;
                c8[7][w >> 56]++;
            }
            for (; i < end; i++) c8[0][payload[i]]++;
            if (s->pending >= ((uint64_t)1 << 30)) dq__symcount_flush(s, b, cnt);
        }
    } else {
        uint8_t sym[DQ__BLOCK];
        size_t k, m, i;
        for (k = k0; k < k1; k++) {
            m = dq__block_syms(b, n, payload, k, sym);
            for (i = 0; i < m; i++) cnt[sym[i]]++;
        }
    }
}
/* The symbol counts of a whole fixed payload (b <= 8), in one run. */
static inline void dq__sym_count(unsigned b, size_t n, const uint8_t *payload, uint64_t *cnt) {
    dq__symcount s;
    memset(cnt, 0, ((size_t)1 << dq__sym_bits(b)) * sizeof *cnt);
    memset(&s, 0, sizeof s);
    dq__symcount_add(&s, b, n, payload, 0, (n + DQ__BLOCK - 1u) / DQ__BLOCK, cnt);
    dq__symcount_flush(&s, b, cnt);
}
/* ---------------------------------------------------------------- coder 1: Elias (doc/FORMAT.md 17.2)
 * QSGD's sparse layout, b >= 2: omega(nnz + 1), then for each non-zero code in element order the
 * omega code of its gap, its sign bit and the omega code of its level, MSB first (the bit
 * streams of bitstream.h). One stream: it is read from its start (no ranges) and written in one
 * piece, by dq_encode in place, by a job's last step, or by dq_recode.
 * Sizing it is a pass over the codes (dq__elias_stats); the planner skips that pass when a
 * lower bound already rules Elias out: its sign and level bits come from the symbol counts the
 * quantizer gathers (dq__elias_levels), its gap bits from the non-zero masks alone, which a
 * job's parts count (dq__k_elias_gaps) and dq_encode reads with an early stop. */

/* Largest payload: gaps sum to at most n and omega(g) <= g + 2, each non-zero adds a sign and
 * its level, and the count omega(nnz + 1) leads. */
static inline uint64_t dq__elias_payload_bound(uint64_t n, unsigned b) {
    return (n * (4u + dq_elias_omega_len(((uint64_t)1 << (b - 1u)) - 1u)) + dq_elias_omega_len(n + 1u) + 7u) / 8u;
}
/* dq_encode_capacity()'s room for Elias at the widths rANS does not take (FORMAT 17.5): as many
 * bytes as a rANS chunk of 2^16 symbols would have, 2^16 b / 8 (at b <= 8 rANS's room is larger). */
static inline size_t dq__elias_auto_room(unsigned b) { return (size_t)65536u * b / 8u; }

/* ---- reading */

/* Reads the next entry (gap, sign, level) ahead; sets bad on any malformation. */
static inline void dq__elias_next(dq__cdec *d) {
    dq__elias_rd *e = &d->s.e;
    uint64_t gap, lvl, smax = ((uint64_t)1 << (d->bits - 1u)) - 1u;
    uint32_t sign;
    e->has_next = 0;
    if (e->left == 0 || d->bad) return;
    e->left--;
    if (dq_elias_omega_get(&e->br, &gap) != DQ_OK || gap > (uint64_t)d->n - e->at) {
        d->bad = 1;
        return;
    }
    sign = (uint32_t)dq_br_get(&e->br, 1);
    if (dq_elias_omega_get(&e->br, &lvl) != DQ_OK || lvl > smax) {
        d->bad = 1;
        return;
    }
    e->at += gap;
    e->next_code = (uint32_t)lvl | sign << (d->bits - 1u);
    e->has_next = 1;
}
/* Opens (or rewinds) the stream: the count, then the first entry read ahead. */
static inline dq_status dq__elias_open(dq__cdec *d) {
    dq__elias_rd *e = &d->s.e;
    uint64_t cnt;
    d->k = 0;
    d->bad = 0;
    memset(&e->br, 0, sizeof e->br);
    dq_br_init(&e->br, d->pay, d->len);
    if (dq_elias_omega_get(&e->br, &cnt) != DQ_OK || cnt - 1u > (uint64_t)d->n) return DQ_ERR_CORRUPT;
    e->left = cnt - 1u;
    e->at = 0;
    dq__elias_next(d);
    return d->bad ? DQ_ERR_CORRUPT : DQ_OK;
}
static inline const uint8_t *dq__elias_rd_block(dq__cdec *d, uint8_t *out) {
    dq__elias_rd *e = &d->s.e;
    uint32_t codes[DQ__BLOCK];
    uint64_t first = (uint64_t)d->k * DQ__BLOCK;
    size_t cnt = d->n - d->k * DQ__BLOCK < DQ__BLOCK ? d->n - d->k * DQ__BLOCK : DQ__BLOCK;
    memset(codes, 0, sizeof codes);
    while (e->has_next && e->at - 1u < first + cnt) {
        codes[e->at - 1u - first] = e->next_code;
        dq__elias_next(d);
    }
    if (cnt == DQ__BLOCK)
        dq__k_pack_block(codes, d->bits, out);
    else
        dq__pack_tail(codes, cnt, d->bits, out);
    d->k++;
    return out;
}
/* After the last block: every entry read, the stream used up to its zero padding. */
static inline dq_status dq__elias_end(dq__cdec *d) {
    return !d->bad && !d->s.e.has_next && dq_br_finish(&d->s.e.br) == DQ_OK ? DQ_OK : DQ_ERR_CORRUPT;
}

/* ---- sizing: from the block scan (dq__k_elias_scan) */

/* Per message: om[L], the Elias omega length of every k with floor(log2 k) = L (it depends on
 * nothing else), and lvt, the scan's sign-and-level bits by bit length. */
typedef struct dq__elias_tabs {
    uint8_t om[64], lvt[16];
} dq__elias_tabs;
static inline void dq__elias_tabs_make(dq__elias_tabs *t) {
    unsigned L;
    for (L = 0; L < 64; L++) t->om[L] = (uint8_t)dq_elias_omega_len((uint64_t)1 << L);
    t->lvt[0] = 0;
    for (L = 1; L < 16; L++) t->lvt[L] = (uint8_t)(1u + t->om[L - 1u]);
}
/* The codes of block k and their scan; UINT32_MAX on a negative zero. */
static inline uint32_t dq__elias_block(unsigned b, size_t n, const uint8_t *payload, size_t k, const dq__elias_tabs *t,
                                       uint32_t *codes, uint64_t *nz) {
    size_t cnt = n - k * DQ__BLOCK < DQ__BLOCK ? n - k * DQ__BLOCK : DQ__BLOCK;
    if (cnt == DQ__BLOCK) return dq__k_elias_scan(payload + k * DQ__BLOCK_BYTES(b), b, t->lvt, codes, nz);
    dq__unpack_tail(payload + k * DQ__BLOCK_BYTES(b), cnt, b, codes);
    return dq__elias_scan_codes(codes, cnt, b, t->lvt, nz);
}

/* The gap bits (omega(i - i_prev) of every non-zero) of a stream of 64-element masks, without
 * visiting the non-zeros: t[k] of a word marks the elements that have a non-zero at distance
 * 1 .. 2^k - 1 before them, built by doubling with the previous word's; omega steps up with
 * floor(log2 gap) only, so each non-zero's bits are om[0] plus the steps of the powers of two
 * its gap reaches. Gaps of 64 or more (at most the first non-zero of a word) are measured. */
typedef struct dq__gaps {
    uint64_t prev;    /* the previous word's mask */
    uint64_t near[5]; /* the previous word's t[1..5] (dq__gaps_word) */
    uint64_t last;    /* 1 + index of the last non-zero so far (0: none, the virtual one at -1) */
    uint64_t bits;    /* gap bits so far */
    uint64_t nnz;
} dq__gaps;
static inline void dq__gaps_init(dq__gaps *g) {
    memset(g, 0, sizeof *g);
    g->prev = (uint64_t)1 << 63; /* index -1 counts as a non-zero: the first gap is its index + 1 */
}
static inline void dq__gaps_word(dq__gaps *g, uint64_t m, uint64_t base, const uint8_t *om) {
    uint64_t p = g->prev, t[7];
    unsigned c = dq__popcount64(m), k;
    uint64_t bits = (uint64_t)c * om[0];
    t[1] = (m << 1) | (p >> 63); /* t[k]: a non-zero at distance 1 .. 2^k - 1 before */
    t[2] = t[1] | (t[1] << 2) | (g->near[0] >> 62) | (m << 2) | (p >> 62);
    t[3] = t[2] | (t[2] << 4) | (g->near[1] >> 60) | (m << 4) | (p >> 60);
    t[4] = t[3] | (t[3] << 8) | (g->near[2] >> 56) | (m << 8) | (p >> 56);
    t[5] = t[4] | (t[4] << 16) | (g->near[3] >> 48) | (m << 16) | (p >> 48);
    t[6] = t[5] | (t[5] << 32) | (g->near[4] >> 32) | (m << 32) | (p >> 32);
    for (k = 1; k <= 6; k++) bits += (uint64_t)(om[k] - om[k - 1u]) * dq__popcount64(m & ~t[k]);
    if (m & ~t[6]) { /* the lowest non-zero, 64 or more after the last one */
        uint64_t at = base + dq__ctz64(m) + 1u;
        bits += (uint64_t)om[dq__ilog2(at - g->last)] - om[6];
    }
    for (k = 0; k < 5; k++) g->near[k] = t[k + 1u];
    if (m) g->last = base + 64u - dq__clz64(m);
    g->prev = m;
    g->bits += bits;
    g->nnz += c;
}

/* The early-stop pass of Elias sizing over nblk full blocks from `in` (b >= 2): the non-zero
 * masks (dq__k_elias_nz) and, per 64-element word, the counts behind dq__gaps_word's bits
 * without its last term (a gap of 64 or more is charged as 64 .. 127): cnt[0] += the non-zeros,
 * cnt[k] += those with no other within 2^k - 1 before (k = 1 .. 6), so that
 * om[0] cnt[0] + sum (om[k] - om[k - 1]) cnt[k] is a lower bound on their gap bits. st carries
 * the previous word's mask and its t[1..5] (st[0], st[1..5]) from call to call. The scalar twin
 * of a kernel (dq__k_elias_gaps), kept beside the Elias coder it serves. */
static inline void dq__elias_gaps__scalar(const uint8_t *in, unsigned b, size_t nblk, uint64_t *st, uint64_t *cnt) {
    uint64_t nz[4], t[7];
    size_t k;
    unsigned w, j;
    for (k = 0; k < nblk; k++) {
        dq__k_elias_nz(in + k * DQ__BLOCK_BYTES(b), b, nz);
        for (w = 0; w < 4; w++) {
            uint64_t m = nz[w], p = st[0];
            t[1] = (m << 1) | (p >> 63);
            for (j = 2; j <= 6; j++) {
                unsigned h = 1u << (j - 1u);
                t[j] = t[j - 1u] | (t[j - 1u] << h) | (st[j - 1u] >> (64u - h)) | (m << h) | (p >> (64u - h));
            }
            cnt[0] += dq__popcount64(m);
            for (j = 1; j <= 6; j++) cnt[j] += dq__popcount64(m & ~t[j]);
            for (j = 1; j <= 5; j++) st[j] = t[j];
            st[0] = m;
        }
    }
}

/* The lower bound on gap bits behind dq__elias_gaps__scalar's counts. */
static inline uint64_t dq__gaps_lb(const uint64_t *cnt, const uint8_t *om) {
    uint64_t gb = (uint64_t)om[0] * cnt[0];
    unsigned k;
    for (k = 1; k <= 6; k++) gb += (uint64_t)(om[k] - om[k - 1u]) * cnt[k];
    return gb;
}
/* Whether a gap-bits lower bound gb over cnt0 of the lv[1] non-zeros, plus the sign and level
 * bits lv[0] and one bit per other gap, already exceeds `limit` bytes. */
static inline int dq__elias_over(uint64_t gb, uint64_t cnt0, const uint64_t *lv, uint64_t limit) {
    return lv[1] >= cnt0 && (gb + lv[0] + (lv[1] - cnt0)) / 8u > limit;
}

/* Exact payload bytes of the Elias layout of a fixed payload (b >= 2), and the working room an
 * in-place write needs (FORMAT 17.5): the stream may not run ahead of the fixed blocks not yet
 * read, and the result must fit. Returns 0 when a code is a negative zero (sign set, level 0),
 * which the layout cannot express (encoders never write one). With lv (the sign and level bits
 * of the whole payload, from its symbol counts), a first pass over the non-zero masks alone
 * (every 64 full blocks, dq__k_elias_gaps) returns -1 as soon as a lower bound on the gap bits
 * so far plus lv[0] and one bit per remaining gap exceed `limit` bytes: Elias cannot be
 * smaller, and any sound bound leaves the choice as it was (on dense payloads it ends there,
 * early). *worst gets the furthest the stream runs ahead of the codes read, in bits. */
static inline int dq__elias_stats(unsigned b, size_t n, const uint8_t *payload, unsigned crc, const uint64_t *lv,
                                  uint64_t limit, uint64_t *bytes, uint64_t *room, uint64_t *nonzeros) {
    uint32_t codes[DQ__BLOCK], bl;
    uint64_t nz[4], lvbits = 0, pre;
    size_t k, nblk = (n + DQ__BLOCK - 1u) / DQ__BLOCK;
    int64_t worst = INT64_MIN, r1, r2;
    unsigned w;
    dq__elias_tabs t;
    dq__gaps g;
    dq__elias_tabs_make(&t);
    if (lv) { /* the early stop needs only a bound on the gaps: a pass over the masks first */
        uint64_t st[6] = {(uint64_t)1 << 63, 0, 0, 0, 0, 0}, cnt[7] = {0, 0, 0, 0, 0, 0, 0};
        size_t full = n / DQ__BLOCK;
        for (k = 0; k + 64u <= full; k += 64u) {
            dq__k_elias_gaps(payload + k * DQ__BLOCK_BYTES(b), b, 64u, st, cnt);
            if (dq__elias_over(dq__gaps_lb(cnt, t.om), cnt[0], lv, limit)) return -1;
        }
    }
    dq__gaps_init(&g);
    for (k = 0; k < nblk; k++) {
        if ((bl = dq__elias_block(b, n, payload, k, &t, codes, nz)) == UINT32_MAX) return 0;
        lvbits += bl;
        for (w = 0; w < 4; w++) dq__gaps_word(&g, nz[w], (uint64_t)k * DQ__BLOCK + 64u * w, t.om);
        r1 = (int64_t)(lvbits + g.bits) - 8 * (int64_t)dq__fixed_through(b, n, k);
        if (r1 > worst) worst = r1;
    }
    pre = dq_elias_omega_len(g.nnz + 1u);
    *nonzeros = g.nnz;
    *bytes = (pre + lvbits + g.bits + 7u) / 8u;
    r1 = ((int64_t)pre + worst + 7) / 8 + 8;
    r2 = (int64_t)*bytes - (int64_t)dq__fixed_through(b, n, nblk - 1u) + 8 + (int64_t)crc;
    r1 = r1 > r2 ? r1 : r2;
    *room = r1 > 8 ? (uint64_t)r1 : 8u; /* the payload moves past the scales' new place */
    return 1;
}

/* The sign and level bits of an Elias payload (lv[0]) and its non-zero codes (lv[1]), from the
 * symbol counts (b <= 8). */
static inline void dq__elias_levels(unsigned b, const uint64_t *cnt, uint64_t *lv) {
    unsigned A = 1u << dq__sym_bits(b), g = dq__sym_group(b), s, t;
    uint32_t mask = (1u << b) - 1u, smax = (1u << (b - 1u)) - 1u;
    dq__elias_tabs tb;
    dq__elias_tabs_make(&tb);
    lv[0] = lv[1] = 0;
    for (s = 0; s < A; s++)
        for (t = 0; t < g && cnt[s]; t++) {
            uint32_t lvl = (s >> (t * b)) & mask & smax;
            if (lvl) {
                lv[1] += cnt[s];
                lv[0] += cnt[s] * tb.lvt[dq__ilog2(lvl) + 1u];
            }
        }
}

/* ---- planning (planner.h): a lower bound from the counts, the exact size by a pass */

/* Elias costs at least its sign and level bits and one bit per gap (lb); with the gap counts of
 * the full blocks, their lower bound on the gap bits (lbg). No upper bound. */
static inline void dq__elias_bounds(const dq__plan_in *in, dq__plan *pl, dq__plan_est *est) {
    uint64_t *lv = est->lv;
    (void)pl;
    est->ub[DQ_CODER_ELIAS] = UINT64_MAX;
    est->lb[DQ_CODER_ELIAS] = est->lbg[DQ_CODER_ELIAS] = 0;
    if (!in->counts || in->bits > 8u) return;
    dq__elias_levels(in->bits, in->counts, lv);
    est->lb[DQ_CODER_ELIAS] = est->lbg[DQ_CODER_ELIAS] = 8u + (lv[0] + lv[1] + 7u) / 8u;
    if (in->gaps && lv[1] >= in->gaps[0]) {
        dq__elias_tabs tb;
        uint64_t g;
        dq__elias_tabs_make(&tb);
        g = 8u + (dq__gaps_lb(in->gaps, tb.om) + lv[0] + (lv[1] - in->gaps[0])) / 8u;
        if (g > est->lbg[DQ_CODER_ELIAS]) est->lbg[DQ_CODER_ELIAS] = g;
    }
}
/* The exact size and room, by a pass; with a limit (UINT64_MAX: none) and the counts' bits, it
 * may stop early and leave Elias unsized once it cannot come under `limit` bytes. */
static inline void dq__elias_size(const dq__plan_in *in, dq__plan *pl, const dq__plan_est *est, uint64_t limit) {
    uint64_t bytes, room;
    int got = dq__elias_stats(in->bits, in->n, in->payload, in->crc,
                              limit != UINT64_MAX && in->counts && in->bits <= 8u ? est->lv : NULL, limit - 8u,
                              &bytes, &room, &pl->nnz);
    pl->size[DQ_CODER_ELIAS] = got > 0 ? 8u + bytes : 0u;
    pl->room[DQ_CODER_ELIAS] = got > 0 ? room : 0u;
}

/* ---- writing */

/* Writes the Elias layout of the fixed payload, which has nnz non-zero codes, at out[0..cap).
 * In place, the payload lies at out + pay and the writer never stores into blocks not yet
 * read. Returns the bytes written, 0 if they did not fit. */
static inline size_t dq__elias_encode(unsigned b, size_t n, const uint8_t *payload, uint64_t nnz, uint8_t *out,
                                      size_t cap, int inplace, size_t pay) {
    uint32_t codes[DQ__BLOCK], smax = (1u << (b - 1u)) - 1u;
    uint64_t nz[4], last = 0, m;
    size_t k, nblk = (n + DQ__BLOCK - 1u) / DQ__BLOCK, len = 0;
    unsigned w;
    dq__elias_tabs t;
    dq_bitwriter bw;
    dq__elias_tabs_make(&t);
    memset(&bw, 0, sizeof bw);
    dq_bw_init(&bw, out, inplace ? pay : cap);
    dq_elias_omega_put(&bw, nnz + 1u);
    for (k = 0; k < nblk; k++) {
        if (dq__elias_block(b, n, payload, k, &t, codes, nz) == UINT32_MAX) return 0;
        if (inplace) bw.cap = pay + dq__fixed_through(b, n, k); /* block k is now free */
        for (w = 0; w < 4; w++)
            for (m = nz[w]; m; m &= m - 1u) {
                unsigned i = 64u * w + dq__ctz64(m);
                uint64_t at = (uint64_t)k * DQ__BLOCK + i + 1u;
                dq_elias_omega_put(&bw, at - last);
                dq_bw_put(&bw, codes[i] >> (b - 1u), 1);
                dq_elias_omega_put(&bw, codes[i] & smax);
                last = at;
            }
    }
    bw.cap = cap;
    return dq_bw_finish(&bw, &len) == DQ_OK ? len : 0u;
}
/* The payload at out[0..cap). In place the fixed payload sits just below out, where a stream
 * written forwards would overtake codes it has not read yet wherever they code longer than b
 * bits, and there is no other buffer: the fixed payload moves to the end of the room first
 * (cap + scratch), a copy of the fixed payload's size; the room the plan checked (FORMAT 17.5)
 * keeps the stream below it. */
static inline size_t dq__elias_write(const dq__plan_in *in, const dq__plan *pl, uint8_t *out, size_t cap,
                                     size_t scratch, int inplace) {
    size_t f = (size_t)in->fixed, at;
    if (!inplace) return dq__elias_encode(in->bits, in->n, in->payload, pl->nnz, out, cap, 0, 0);
    if (cap + scratch < f) return 0;
    at = cap + scratch - f;
    memmove(out + at, in->payload, f);
    return dq__elias_encode(in->bits, in->n, out + at, pl->nnz, out, cap, 1, at);
}
/* A job writes Elias at its end, from a copy of the fixed payload in work. */
static inline uint64_t dq__elias_work(uint64_t n, unsigned b) { return (n * b + 7u) / 8u; }
/* ---------------------------------------------------------------- coder 3: rANS in chunks (doc/FORMAT.md 17.6)
 * b <= 8. The symbols of coder_fixed.h, coded with one frequency table per message (built
 * from the symbol counts the quantizer gathers) in chunks of 2^16 symbols, 32 interleaved
 * states each. The payload is the table, then per chunk its length and stream; chunks decode
 * and encode on their own, so a job's parts code theirs in parallel and a range decodes only
 * the chunks that hold it. The frequency table and the cost bounds are shared with coder 2
 * (coder_rans8.h, read only). The chunk kernels (dq__k_r32_get, dq__k_r32_encode, their scalar
 * twins and the step helpers) are in kernels_scalar.h, above the kernel selection. */

/* ---- the frequency table (FORMAT 17.3), shared with coder 2 */
#define DQ__RANS_BITS 12u
#define DQ__RANS_M 4096u

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

/* Bounds on the bytes of words for these counts, from the cost of a symbol, log2(M/f) bits:
 * each encode step adds at most cost + log2(17/16) to log2 x (x >= 16 f there), each word
 * removes at least 16, and x starts and ends in [2^16, 2^32). Costs are in 1/65536 bit:
 * log2(1 + t) >= t on [0, 1] gives an upper bound, and log2(1 + t) <= t + 0.0861 a lower one
 * (5701 + 6102: that, and log2(16/15), below the upper bound). */
static inline uint64_t dq__rans_cost_ub(uint32_t f) {
    unsigned e = 0;
    while ((2u << e) <= f) e++;
    return ((uint64_t)(DQ__RANS_BITS - e) << 16) - ((((uint64_t)f - (1u << e)) << 16) >> e);
}
#define DQ__RANS_STEP_SLACK 5732u /* log2(17/16) in 1/65536 bit, rounded up */

/* ---- the chunk API: one chunk of symbols, coded on its own with the message's table */

/* Both tables from frequencies f[0..A) (A <= 256): dtab[slot] = s | (f_s - 1) << 8 |
 * (slot - c_s) << 20 for the 4096 slots, et[s] as dq__r32_esym says (f_s = 0 gets f = 0, rcp
 * = 0, s = 0, bias = 0: defined, never decodable). Either output may be NULL. Returns 0 (and
 * writes nothing) unless every f_s <= 4096 and they sum to 4096. */
static inline int dq__r32_tables(const uint32_t *f, unsigned A, uint32_t *dtab, dq__r32_esym *et) {
    uint32_t sum = 0, c = 0, i;
    unsigned s;
    if (A > 256u) return 0;
    for (s = 0; s < A; s++) {
        if (f[s] > DQ__R32_M) return 0;
        sum += f[s];
    }
    if (sum != DQ__R32_M) return 0;
    for (s = 0; s < A; s++) {
        uint32_t fs = f[s], l = 0, rcp = 0, sh = 0, bias = c;
        if (dtab)
            for (i = 0; i < fs; i++) dtab[c + i] = s | (fs - 1u) << 8 | i << 20;
        while ((1u << l) < fs) l++;
        if (fs == 1u) {
            rcp = 0xFFFFFFFFu;
            bias = c + DQ__R32_M - 1u;
        } else if (fs > 1u) {
            rcp = (uint32_t)((((uint64_t)1 << (32u + l)) + fs - 1u) / fs - ((uint64_t)1 << 32));
            sh = l - 1u;
        }
        if (et) {
            et[s].rcp = rcp;
            et[s].info = fs | sh << 13 | bias << 17;
        }
        c += fs;
    }
    return 1;
}

/* Starts decoding the chunk stream[0..len): DQ_ERR_CORRUPT (and d untouched) unless len >= 128,
 * len - 128 is even and every state is >= 2^16. */
static inline dq_status dq__r32_open(dq__r32_dec *d, const uint8_t *stream, size_t len) {
    uint32_t x[DQ__R32_WAYS];
    unsigned k;
    if (len < DQ__R32_HEAD || (len - DQ__R32_HEAD) % 2u) return DQ_ERR_CORRUPT;
    for (k = 0; k < DQ__R32_WAYS; k++) {
        x[k] = dq__ld32(stream + 4u * k);
        if (x[k] < DQ__R32_L) return DQ_ERR_CORRUPT;
    }
    memcpy(d->x, x, sizeof x);
    d->p = stream + DQ__R32_HEAD;
    d->end = stream + len;
    d->j = 0;
    d->bad = 0;
    return DQ_OK;
}
/* After the chunk's last symbol: every state back at 2^16, every word read, none missing. */
static inline dq_status dq__r32_finish(const dq__r32_dec *d) {
    uint32_t ok = !d->bad && d->p == d->end;
    unsigned k;
    for (k = 0; k < DQ__R32_WAYS; k++) ok &= d->x[k] == DQ__R32_L;
    return ok ? DQ_OK : DQ_ERR_CORRUPT;
}
/* The whole chunk stream[0..len) of m symbols into out[0..m) (dtab from dq__r32_tables). A
 * DQ_ERR_CORRUPT from the states leaves out untouched; any later one has written all m
 * symbols, the same bytes with every kernel set. */
static inline dq_status dq__r32_decode(const uint8_t *stream, size_t len, size_t m, const uint32_t *dtab,
                                       uint8_t *out) {
    dq__r32_dec d;
    dq_status st = dq__r32_open(&d, stream, len);
    if (st != DQ_OK) return st;
    dq__k_r32_get(&d, dtab, out, m);
    return dq__r32_finish(&d);
}
/* The chunk of sym[0..m) at the end of buf[0..cap): its size, 0 if it does not fit. The SIMD
 * twins may also write (garbage) into buf below the chunk, never outside buf[0..cap). */
static inline size_t dq__r32_encode(const uint8_t *sym, size_t m, const dq__r32_esym *et, uint8_t *buf,
                                    size_t cap) {
    return dq__k_r32_encode(sym, m, et, buf, cap);
}
/* Fused decode of fixed-payload block k (the tail when k = n / 256) from the chunk being
 * decoded: its symbols go to buf (32b bytes, stays in L1) and come back as the block's bytes in
 * the section 8 layout, ready for dq__k_decode_block & co. For b in {1, 2, 4, 8} they are the
 * bytes; otherwise buf holds the symbols first (256 bytes) and out the packed block. Every full
 * block is whole groups of 32 symbols (32 b, or 256 / g), so it starts a new group of the
 * states. A symbol with codes or bits past element n - 1 marks the chunk bad (as a missing word
 * does). */
static inline const uint8_t *dq__r32_block(dq__r32_dec *d, const uint32_t *dtab, unsigned b, size_t n, size_t k,
                                           uint8_t *buf, uint8_t *out) {
    size_t cnt = n - k * DQ__BLOCK < DQ__BLOCK ? n - k * DQ__BLOCK : DQ__BLOCK;
    size_t nsym = (cnt + dq__sym_group(b) - 1u) / dq__sym_group(b);
    if (dq__sym_bytes(b)) {
        nsym = (cnt * b + 7u) / 8u;
        dq__k_r32_get(d, dtab, buf, nsym);
        if (cnt < DQ__BLOCK && !dq__block_from_syms(b, n, k, buf, buf)) d->bad = 1;
        return buf;
    }
    dq__k_r32_get(d, dtab, buf, nsym);
    if (!dq__block_from_syms(b, n, k, buf, out)) d->bad = 1;
    return out;
}

/* ---- a message's chunks: chunk c holds symbols [c S, min((c + 1) S, m)) of the m = ceil(n / g)
 * symbols, S = 2^16, so 2^16 g elements (whole blocks) */
#define DQ__R32_CHUNK 65536u /* symbols per chunk */
static inline uint64_t dq__r32_nsym(uint64_t n, unsigned b) { return (n + dq__sym_group(b) - 1u) / dq__sym_group(b); }
static inline uint64_t dq__r32_nchunks(uint64_t n, unsigned b) {
    return (dq__r32_nsym(n, b) + DQ__R32_CHUNK - 1u) / DQ__R32_CHUNK;
}
/* Elements and fixed-payload bytes of a full chunk (multiples of the block and its bytes). */
static inline size_t dq__r32_chunk_elems(unsigned b) { return (size_t)DQ__R32_CHUNK * dq__sym_group(b); }
static inline size_t dq__r32_chunk_bytes(unsigned b) { return (size_t)DQ__R32_CHUNK * dq__sym_bits(b) / 8u; }
/* dq_encode_capacity()'s room for coder 3 (FORMAT 17.5): one chunk's fixed bytes. */
static inline size_t dq__r32_auto_room(unsigned b) { return dq__r32_chunk_bytes(b); }
/* Largest payload: the largest table, then per chunk its length, its states and at most one
 * word per symbol (FORMAT 17.6). */
static inline uint64_t dq__r32_payload_bound(uint64_t n, unsigned b) {
    uint64_t A = (uint64_t)1 << dq__sym_bits(b);
    return A / 8u + 2u * A + dq__r32_nchunks(n, b) * (4u + DQ__R32_HEAD) + 2u * dq__r32_nsym(n, b);
}
/* Where chunk ci of an n-element message lies in the fixed payload: blocks [k0, k1), bytes
 * [f0, f1). */
typedef struct dq__r32_span {
    size_t k0, k1, f0, f1;
} dq__r32_span;
static inline dq__r32_span dq__r32_chunk_span(unsigned b, size_t n, size_t ci) {
    size_t E = dq__r32_chunk_elems(b), e0 = ci * E, e1 = n - e0 > E ? e0 + E : n, cb = dq__r32_chunk_bytes(b);
    size_t fixed = (size_t)(((uint64_t)n * b + 7u) / 8u);
    dq__r32_span s;
    s.k0 = e0 / DQ__BLOCK;
    s.k1 = (e1 + DQ__BLOCK - 1u) / DQ__BLOCK;
    s.f0 = ci * cb;
    s.f1 = fixed - s.f0 > cb ? s.f0 + cb : fixed;
    return s;
}

/* ---- reading */

static inline dq_status dq__r32_rd_rewind(dq__cdec *d) { /* chunks open as the blocks reach them */
    d->k = 0;
    d->bad = 0;
    d->s.r.pos = d->body;
    d->s.r.inchunk = 0;
    return DQ_OK;
}
static inline dq_status dq__r32_rd_open(dq__cdec *d) {
    uint32_t f[256];
    unsigned A = 1u << dq__sym_bits(d->bits);
    d->body = dq__rans_table_read(d->pay, d->len, A, f);
    if (d->body == 0) return DQ_ERR_CORRUPT;
    d->s.r.cblocks = dq__r32_chunk_elems(d->bits) / DQ__BLOCK;
    (void)dq__r32_tables(f, A, d->tab, NULL); /* the table read is well formed */
    return dq__r32_rd_rewind(d);
}
/* The previous chunk checked at its end, the next one opened. A length or stream that does not
 * fit marks the message bad and leaves a decoder that reads no word. */
static inline void dq__r32_rd_chunk(dq__cdec *d) {
    dq__rans_rd *r = &d->s.r;
    size_t len;
    unsigned j;
    if (r->inchunk && dq__r32_finish(&r->d32) != DQ_OK) d->bad = 1;
    r->inchunk = 1;
    if (d->len - r->pos >= 4u) {
        len = dq__ld32(d->pay + r->pos);
        if (len <= d->len - r->pos - 4u && dq__r32_open(&r->d32, d->pay + r->pos + 4u, len) == DQ_OK) {
            r->pos += 4u + len;
            return;
        }
    }
    d->bad = 1;
    for (j = 0; j < DQ__R32_WAYS; j++) r->d32.x[j] = DQ__R32_L;
    r->d32.p = r->d32.end = d->pay + d->len;
    r->d32.j = 0;
    r->d32.bad = 1;
    r->pos = d->len;
}
static inline const uint8_t *dq__r32_rd_block(dq__cdec *d, uint8_t *out) {
    uint8_t sym[DQ__BLOCK];
    const uint8_t *p;
    if (d->k % d->s.r.cblocks == 0) dq__r32_rd_chunk(d);
    p = dq__r32_block(&d->s.r.d32, d->tab, d->bits, d->n, d->k, dq__sym_bytes(d->bits) ? out : sym, out);
    d->k++;
    return p;
}
/* After the last block: the last chunk checked at its end, the chunks filling the payload. */
static inline dq_status dq__r32_rd_end(dq__cdec *d) {
    return !d->bad && dq__r32_finish(&d->s.r.d32) == DQ_OK && d->s.r.pos == d->len ? DQ_OK : DQ_ERR_CORRUPT;
}
/* The reader at the start of chunk ci, whose offset comes from the lengths before it; 0 when
 * one of them runs past the payload. */
static inline int dq__r32_rd_seek(dq__cdec *d, size_t ci) {
    size_t c, len;
    (void)dq__r32_rd_rewind(d);
    for (c = 0; c < ci; c++) {
        if (d->len - d->s.r.pos < 4u || (len = dq__ld32(d->pay + d->s.r.pos)) > d->len - d->s.r.pos - 4u) return 0;
        d->s.r.pos += 4u + len;
    }
    d->k = ci * d->s.r.cblocks;
    return 1;
}
/* A range [begin, end): the chunks that hold it decoded whole and checked at their ends, then
 * the reader at the start of the first. */
static inline dq_status dq__r32_rd_range(dq__cdec *d, size_t begin, size_t end) {
    uint8_t tmp[DQ__BLOCK_BYTES(16u)];
    size_t E = dq__r32_chunk_elems(d->bits), ci = begin / E, cj = (end - 1u) / E;
    size_t nblk = (d->n + DQ__BLOCK - 1u) / DQ__BLOCK, k1 = (cj + 1u) * d->s.r.cblocks;
    if (!dq__r32_rd_seek(d, ci)) return DQ_ERR_CORRUPT;
    if (k1 > nblk) k1 = nblk;
    while (d->k < k1) dq__r32_rd_block(d, tmp);
    if (d->bad || dq__r32_finish(&d->s.r.d32) != DQ_OK) return DQ_ERR_CORRUPT;
    return dq__r32_rd_seek(d, ci) ? DQ_OK : DQ_ERR_CORRUPT;
}

/* ---- planning (planner.h) */

/* The cost bounds of every symbol (1/65536 bit, the step slack included). */
static inline void dq__r32_costs(const uint32_t *f, unsigned A, uint64_t *cost) {
    unsigned s;
    for (s = 0; s < A; s++) cost[s] = dq__rans_cost_ub(f[s] ? f[s] : 1u) + DQ__RANS_STEP_SLACK;
}
/* Upper bound on chunk ci's stream from its symbols' costs: 8 L <= 1024 + sum of costs. */
static inline uint64_t dq__r32_chunk_ub(unsigned b, size_t n, const uint8_t *payload, size_t ci, const uint64_t *cost) {
    uint8_t sym[DQ__BLOCK];
    dq__r32_span sp = dq__r32_chunk_span(b, n, ci);
    size_t k, i, m;
    uint64_t bits = 0;
    for (k = sp.k0; k < sp.k1; k++) {
        m = dq__block_syms(b, n, payload, k, sym);
        for (i = 0; i < m; i++) bits += cost[sym[i]];
    }
    return DQ__R32_HEAD + 2u * ((bits + (16u << 16) - 1u) / (16u << 16));
}
/* The working room (bytes past the fixed body) an in-place write needs. Chunks are written
 * whole, from the last, downwards from the end of the buffer, each below the ones after it and
 * above its own fixed bytes: room >= 4 + L_c + sum over c' > c of (4 + L_c' - fixed_c') for
 * every c; and the coded message must fit: room >= 8 + table + sum of (4 + L_c) - fixed. */
static inline uint64_t dq__r32_room(unsigned b, size_t n, const uint8_t *payload, const uint32_t *f, size_t table) {
    uint64_t cost[256];
    int64_t acc = 0, worst = 0;
    size_t ci = (size_t)dq__r32_nchunks(n, b);
    dq__r32_costs(f, 1u << dq__sym_bits(b), cost);
    while (ci-- > 0) {
        dq__r32_span sp = dq__r32_chunk_span(b, n, ci);
        int64_t ub = 4 + (int64_t)dq__r32_chunk_ub(b, n, payload, ci, cost);
        if (acc + ub > worst) worst = acc + ub;
        acc += ub - (int64_t)(sp.f1 - sp.f0);
    }
    acc += 8 + (int64_t)table;
    return (uint64_t)(acc > worst ? acc : worst);
}
/* Exact payload bytes (the table included) by a dry run of the encoder's steps. */
static inline uint64_t dq__r32_exact(unsigned b, size_t n, const uint8_t *payload, const uint32_t *f, size_t table) {
    dq__r32_esym et[256];
    uint8_t sym[DQ__BLOCK];
    uint64_t bytes = table;
    size_t ci, nch = (size_t)dq__r32_nchunks(n, b);
    (void)dq__r32_tables(f, 1u << dq__sym_bits(b), NULL, et);
    for (ci = 0; ci < nch; ci++) {
        dq__r32_span sp = dq__r32_chunk_span(b, n, ci);
        uint32_t x[DQ__R32_WAYS];
        size_t k, m, j;
        uint64_t words = 0;
        for (j = 0; j < DQ__R32_WAYS; j++) x[j] = DQ__R32_L;
        for (k = sp.k1; k-- > sp.k0;) {
            m = dq__block_syms(b, n, payload, k, sym);
            for (j = m; j-- > 0;) words += (uint64_t)dq__r32_step(x + (j & (DQ__R32_WAYS - 1u)), et + sym[j], NULL);
        }
        bytes += 4u + DQ__R32_HEAD + 2u * words;
    }
    return bytes;
}
/* Bounds on the payload (table included) of nch chunks with these symbol counts: per chunk the
 * states, the length and whole words; below, the states absorb at most 16 bits each. */
static inline void dq__r32_bounds(const uint64_t *cnt, const uint32_t *f, unsigned A, uint64_t nch, size_t table,
                                  uint64_t *ub, uint64_t *lb) {
    uint64_t hi = 0, lo = 0, c, slack = nch * ((uint64_t)(16u * DQ__R32_WAYS) << 16);
    unsigned s;
    for (s = 0; s < A; s++) {
        if (!cnt[s]) continue;
        c = dq__rans_cost_ub(f[s]);
        hi += cnt[s] * (c + DQ__RANS_STEP_SLACK);
        if (c > 5701u + 6102u) lo += cnt[s] * (c - 5701u - 6102u); /* cost lb minus log2(16/15) */
    }
    *ub = table + nch * (4u + DQ__R32_HEAD + 2u) + 2u * (hi / (16u << 16));
    *lb = table + nch * (4u + DQ__R32_HEAD) + (lo > slack ? (lo - slack) / 527342u : 0u);
}
/* The table from the counts of all m symbols, both bounds, and the room a write needs at most:
 * the whole coded payload past the fixed body. */
static inline void dq__r32_plan_bounds(const dq__plan_in *in, dq__plan *pl, dq__plan_est *est) {
    unsigned A = 1u << dq__sym_bits(in->bits);
    uint64_t ub, lb;
    dq__rans_normalize(in->counts, A, dq__r32_nsym(in->n, in->bits), pl->f);
    pl->table = dq__rans_table_size(pl->f, A);
    dq__r32_bounds(in->counts, pl->f, A, dq__r32_nchunks(in->n, in->bits), pl->table, &ub, &lb);
    est->ub[DQ_CODER_RANS] = ub + 8u;
    est->lb[DQ_CODER_RANS] = est->lbg[DQ_CODER_RANS] = lb + 8u;
    pl->room[DQ_CODER_RANS] = ub - pl->table;
}
/* Whether the write fits in `room`: every chunk after the fixed body, or a closer look chunk by
 * chunk (a pass over the codes) when rANS is smaller than the fixed payload. */
static inline int dq__r32_room_fits(const dq__plan_in *in, dq__plan *pl, const dq__plan_est *est, uint64_t room) {
    if (pl->room[DQ_CODER_RANS] > room && est->ub[DQ_CODER_RANS] < in->fixed)
        pl->room[DQ_CODER_RANS] = dq__r32_room(in->bits, in->n, in->payload, pl->f, pl->table);
    return pl->room[DQ_CODER_RANS] <= room;
}
static inline void dq__r32_size(const dq__plan_in *in, dq__plan *pl, const dq__plan_est *est, uint64_t limit) {
    (void)est;
    (void)limit;
    pl->size[DQ_CODER_RANS] = 8u + dq__r32_exact(in->bits, in->n, in->payload, pl->f, pl->table);
}

/* ---- writing */

/* The symbols of chunk ci as one stream at the end of buf[0..cap) (dq__r32_encode): the payload
 * bytes themselves for b in {1, 2, 4, 8}; otherwise block by block from the last, the states
 * carried (every block starts a group of 32 symbols). Returns its size, 0 if it did not fit. */
static inline size_t dq__r32_chunk_encode(unsigned b, size_t n, const uint8_t *payload, size_t ci,
                                          const dq__r32_esym *et, uint8_t *buf, size_t cap) {
    dq__r32_span sp = dq__r32_chunk_span(b, n, ci);
    size_t k, w = cap;
    uint32_t x[DQ__R32_WAYS];
    uint8_t sym[DQ__BLOCK];
    unsigned j;
    if (dq__sym_bytes(b)) return dq__r32_encode(payload + sp.f0, sp.f1 - sp.f0, et, buf, cap);
    for (j = 0; j < DQ__R32_WAYS; j++) x[j] = DQ__R32_L;
    for (k = sp.k1; k-- > sp.k0;) {
        size_t m = dq__block_syms(b, n, payload, k, sym);
        if (!dq__r32_put_range(x, sym, m, 0, et, buf, &w)) return 0;
    }
    return dq__r32_put_states(x, buf, w, cap);
}
/* Chunks [c0, c1), each preceded by its length, downwards from the end of buf[0..cap), the last
 * first; *w gets where the first one's length starts (an offset from buf, below 0 when in place
 * they went past it). A chunk's encode may use the buffer down to lo (SIMD twins write garbage
 * below a chunk): buf, or in place the end of the chunk's own fixed bytes, unread above it.
 * Returns 0 when they did not fit. */
static inline int dq__r32_chunks_down(const dq__plan_in *in, const dq__r32_esym *et, size_t c0, size_t c1,
                                      uint8_t *buf, size_t cap, int inplace, ptrdiff_t *w) {
    size_t ci = c1, L;
    ptrdiff_t lo = 0, top = (ptrdiff_t)cap;
    while (ci-- > c0) { /* chunk ci's stream lands below the later ones, above its own fixed bytes */
        if (inplace) lo = (in->payload - buf) + (ptrdiff_t)dq__r32_chunk_span(in->bits, in->n, ci).f1;
        if (top < lo + 4) return 0;
        L = dq__r32_chunk_encode(in->bits, in->n, in->payload, ci, et, buf + lo, (size_t)(top - lo));
        if (!L || (ptrdiff_t)L + 4 > top - lo) return 0;
        top -= (ptrdiff_t)L + 4;
        dq__st32(buf + top, (uint32_t)L);
    }
    *w = top;
    return 1;
}
/* The payload at out[0..cap): the chunks written from the last downwards from the end (none can
 * be placed where it goes before the lengths of those before it are known), then moved down
 * once behind the table. In place, over the fixed payload just below out: each chunk lands
 * above its own fixed bytes, which the room the plan checked guarantees (FORMAT 17.5). Written
 * from another buffer with cap the exact size (dq_recode), they land where they go. */
static inline size_t dq__r32_write(const dq__plan_in *in, const dq__plan *pl, uint8_t *out, size_t cap,
                                   size_t scratch, int inplace) {
    dq__r32_esym et[256];
    unsigned A = 1u << dq__sym_bits(in->bits);
    ptrdiff_t w;
    size_t z;
    (void)scratch;
    (void)dq__r32_tables(pl->f, A, NULL, et);
    if (!dq__r32_chunks_down(in, et, 0, (size_t)dq__r32_nchunks(in->n, in->bits), out, cap, inplace, &w) ||
        w < (ptrdiff_t)pl->table)
        return 0;
    z = cap - (size_t)w;
    memmove(out + pl->table, out + w, z); /* first: the chunks may sit where the table goes */
    (void)dq__rans_table_write(pl->f, A, out);
    return pl->table + z;
}

/* ---- jobs: parts of whole chunks code into work, then the table and their streams */
static inline uint64_t dq__r32_work(uint64_t n, unsigned b) {
    return dq__r32_nchunks(n, b) * (4u + DQ__R32_HEAD + 2u) + 2u * dq__r32_nsym(n, b);
}
/* The bytes a part's chunks may take: its symbol counts' bound under the message's table. */
static inline uint64_t dq__r32_part_cap(const uint64_t *counts, const dq__plan *pl, unsigned b, size_t elems) {
    uint64_t ub, lb;
    dq__r32_bounds(counts, pl->f, 1u << dq__sym_bits(b), (elems + dq__r32_chunk_elems(b) - 1u) / dq__r32_chunk_elems(b),
                   0, &ub, &lb);
    return ub;
}
/* The chunks of elements [e0, e1) (whole chunks) at the end of buf[0..cap); returns their bytes,
 * 0 when they did not fit. */
static inline size_t dq__r32_part(const dq__plan_in *in, const dq__plan *pl, size_t e0, size_t e1, uint8_t *buf,
                                  size_t cap) {
    dq__r32_esym et[256];
    size_t E = dq__r32_chunk_elems(in->bits);
    ptrdiff_t w;
    (void)dq__r32_tables(pl->f, 1u << dq__sym_bits(in->bits), NULL, et);
    if (!dq__r32_chunks_down(in, et, e0 / E, (e1 - 1u) / E + 1u, buf, cap, 0, &w)) return 0;
    return cap - (size_t)w;
}
static inline size_t dq__r32_head_write(const dq__plan *pl, unsigned b, uint8_t *out) {
    return dq__rans_table_write(pl->f, 1u << dq__sym_bits(b), out);
}
/* ---------------------------------------------------------------- coder 2: rANS, one stream (doc/FORMAT.md 17.3)
 * The first rANS layout: the symbols and frequency table of coder 3 (coder_rans.h), 8
 * interleaved 32-bit states over the whole message (symbol i on state i mod 8), 16-bit
 * renormalization. Encoders write coder 3 instead since library 0.7 (its row sends that when
 * asked for this one); decoders still read it, so only its reader is here. Symbol i is encoded
 * last-to-first so it decodes first. */
#define DQ__RANS_L 65536u
#define DQ__RANS_WAYS 8u

/* Largest payload for n codes of b bits: full table, states, 12 + 0.0875 bits per symbol. */
static inline uint64_t dq__rans8_payload_bound(uint64_t n, unsigned b) {
    uint64_t nsym = (n + dq__sym_group(b) - 1u) / dq__sym_group(b), A = (uint64_t)1 << dq__sym_bits(b);
    return A / 8u + 2u * A + 4u * DQ__RANS_WAYS +
           2u * ((nsym * ((12u << 16) + DQ__RANS_STEP_SLACK) + (16u << 16) - 1u) / (16u << 16)) + 2u * DQ__RANS_WAYS;
}

/* Decode table: slot -> symbol | (f - 1) << 8 | (slot - cum) << 20. */
static inline void dq__rans_dtab(const uint32_t *f, unsigned A, uint32_t *tab) {
    uint32_t slot = 0, i;
    unsigned s;
    for (s = 0; s < A; s++)
        for (i = 0; i < f[s]; i++, slot++) tab[slot] = s | (f[s] - 1u) << 8 | i << 20;
}

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
static inline void dq__rans_get(dq__rans8_rd *d, const uint32_t *tab, size_t first, uint8_t *sym, size_t cnt) {
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

/* ---- reading */
static inline dq_status dq__rans8_rewind(dq__cdec *d) {
    dq__rans8_rd *r = &d->s.r8;
    unsigned j;
    d->k = 0;
    d->bad = 0;
    r->isym = 0;
    for (j = 0; j < DQ__RANS_WAYS; j++) {
        r->x[j] = dq__ld32(d->pay + d->body + 4u * j);
        if (r->x[j] < DQ__RANS_L) return DQ_ERR_CORRUPT;
    }
    r->p = d->pay + d->body + 4u * DQ__RANS_WAYS;
    r->left = d->len - d->body - 4u * DQ__RANS_WAYS;
    r->bad = 0;
    return DQ_OK;
}
static inline dq_status dq__rans8_open(dq__cdec *d) {
    uint32_t f[256];
    unsigned A = 1u << dq__sym_bits(d->bits);
    d->body = dq__rans_table_read(d->pay, d->len, A, f);
    if (d->body == 0) return DQ_ERR_CORRUPT;
    if (d->len - d->body < 4u * DQ__RANS_WAYS || (d->len - d->body) % 2u) return DQ_ERR_CORRUPT;
    dq__rans_dtab(f, A, d->tab);
    return dq__rans8_rewind(d);
}
static inline const uint8_t *dq__rans8_block(dq__cdec *d, uint8_t *out) {
    uint8_t sym[DQ__BLOCK];
    unsigned b = d->bits;
    size_t cnt = d->n - d->k * DQ__BLOCK < DQ__BLOCK ? d->n - d->k * DQ__BLOCK : DQ__BLOCK;
    size_t nsym = (cnt + dq__sym_group(b) - 1u) / dq__sym_group(b);
    if (dq__sym_bytes(b)) { /* the symbols are the payload bytes: decode them in place */
        nsym = (cnt * b + 7u) / 8u;
        dq__rans_get(&d->s.r8, d->tab, d->s.r8.isym, out, nsym);
        if (!dq__block_from_syms(b, d->n, d->k, out, out)) d->bad = 1;
    } else {
        dq__rans_get(&d->s.r8, d->tab, d->s.r8.isym, sym, nsym);
        if (!dq__block_from_syms(b, d->n, d->k, sym, out)) d->bad = 1;
    }
    d->s.r8.isym += nsym;
    d->k++;
    return out;
}
/* After the last block: every word read, every state back at L. */
static inline dq_status dq__rans8_end(dq__cdec *d) {
    const dq__rans8_rd *r = &d->s.r8;
    unsigned j;
    int ok = !d->bad && !r->bad && r->left == 0;
    for (j = 0; j < DQ__RANS_WAYS; j++) ok &= r->x[j] == DQ__RANS_L;
    return ok ? DQ_OK : DQ_ERR_CORRUPT;
}
/* ---------------------------------------------------------------- elements: float32, fp16 and bf16 vectors
 * One pipeline for the three element types. The codec works on floats; a 16-bit vector moves
 * through it in chunks of DQ__ELCHUNK elements converted on the stack, so nothing is allocated
 * and each element is read from memory once per pass. A float vector is used in place, in one
 * piece. The encoders (quantize.h), the decoders and the sketch use it. */
#define DQ__ELCHUNK 2048u /* elements per chunk: a multiple of the 256-element block and of 64 */

DQ_API size_t dq_dtype_size(dq_dtype t) {
    switch (t) {
        case DQ_F32: return 4u;
        case DQ_F16:
        case DQ_BF16: return 2u;
        default: return 0u;
    }
}
/* cnt elements of dtype t starting at element i0 of src, as floats in buf; a float source is
 * returned in place. */
static inline const float *dq__el_in(dq_dtype t, const void *src, size_t i0, size_t cnt, float *buf) {
    const uint8_t *s = (const uint8_t *)src + i0 * dq_dtype_size(t);
    if (t == DQ_F32) return (const float *)(const void *)s;
    if (t == DQ_F16)
        dq__k_f16_to_f32(s, buf, cnt);
    else
        dq__k_bf16_to_f32(s, buf, cnt);
    return buf;
}
/* The same for memory that is updated in place (a float residual) or through buf. */
static inline float *dq__el_inout(dq_dtype t, void *src, size_t i0, size_t cnt, float *buf) {
    if (t == DQ_F32) return (float *)src + i0;
    (void)dq__el_in(t, src, i0, cnt, buf);
    return buf;
}
/* buf[0..cnt) rounded to dtype t at element i0 of dst (nothing to do for float in place). */
static inline void dq__el_out(dq_dtype t, const float *buf, size_t cnt, void *dst, size_t i0) {
    uint8_t *d = (uint8_t *)dst + i0 * dq_dtype_size(t);
    if (t == DQ_F16)
        dq__k_f32_to_f16(buf, d, cnt);
    else if (t == DQ_BF16)
        dq__k_f32_to_bf16(buf, d, cnt);
    else if ((const void *)buf != (const void *)d)
        memcpy(d, buf, 4u * cnt);
}
/* Single elements, for the scattered reads and writes of the sparse schemes. */
static inline float dq__el_get(dq_dtype t, const void *src, size_t i) {
    float v;
    return *dq__el_in(t, src, i, 1, &v);
}
static inline void dq__el_set(dq_dtype t, void *dst, size_t i, float v) { dq__el_out(t, &v, 1, dst, i); }
/* The chunk length of a pass over n elements: all of them for float data. */
static inline size_t dq__el_chunk(int flt, size_t n) { return flt ? n : DQ__ELCHUNK; }
/* Chunk [i0, i0 + cnt) of an output of dtype t as floats to update: in place for float data,
 * otherwise in buf, loaded from the output only when the update reads it (add). */
static inline float *dq__el_acc(dq_dtype t, void *out, size_t i0, size_t cnt, int add, float *buf) {
    if (t == DQ_F32) return (float *)out + i0;
    if (add) (void)dq__el_in(t, out, i0, cnt, buf);
    return buf;
}
/* ---------------------------------------------------------------- the message: header written once, parsed once
 * Every message starts with the 48-byte header of doc/FORMAT.md 3. A level-scheme body follows
 * it: the scales (and a level table), then the payload in its coder's form, a coded payload
 * behind its 8-byte length (the coder row's `head`); a segmented message has a segment table
 * and one such body per segment (segments.h); sparse and sketch bodies are their families'.
 * Encoders write the header once, when the body is final and the coder chosen
 * (dq__message_close). Decoders parse it once into a dq_message (dq__msg_parse: the header and,
 * through the family table, what decoding needs: the configuration, and for a segmented
 * message its table, every entry validated; dq__msg_open_body: the size, the payload checksum,
 * the TRUNC_NU level table), and every decoder works from that handle. */

/* Header field offsets (doc/FORMAT.md 3.1): magic "DQSG" at 0, then these. */
#define DQ__H_VERSION 4u
#define DQ__H_SIZE 5u
#define DQ__H_SCHEME 6u
#define DQ__H_BITS 7u
#define DQ__H_CODER 8u
#define DQ__H_NORM 9u
#define DQ__H_FLAGS 10u
#define DQ__H_BUCKET 12u
#define DQ__H_COUNT 16u
#define DQ__H_SEED 24u
#define DQ__H_STEP 32u
#define DQ__H_STREAM 40u
#define DQ__H_CRC 44u /* CRC32C of bytes 0 .. DQ__H_CRC - 1 */

/* The 48-byte header of any scheme, with its CRC; seed, step and stream from p. */
static inline void dq__put_header(uint8_t *out, unsigned scheme, unsigned bits, unsigned coder, unsigned norm,
                                  unsigned flags, uint32_t bucket, uint64_t n, const dq_params *p) {
    memset(out, 0, DQ_HEADER_SIZE);
    out[0] = 'D';
    out[1] = 'Q';
    out[2] = 'S';
    out[3] = 'G';
    out[DQ__H_VERSION] = DQ_FORMAT_VERSION;
    out[DQ__H_SIZE] = (uint8_t)DQ_HEADER_SIZE;
    out[DQ__H_SCHEME] = (uint8_t)scheme;
    out[DQ__H_BITS] = (uint8_t)bits;
    out[DQ__H_CODER] = (uint8_t)coder;
    out[DQ__H_NORM] = (uint8_t)norm;
    dq__st16(out + DQ__H_FLAGS, flags);
    dq__st32(out + DQ__H_BUCKET, bucket);
    dq__st64(out + DQ__H_COUNT, n);
    dq__st64(out + DQ__H_SEED, p->seed);
    dq__st64(out + DQ__H_STEP, p->step);
    dq__st32(out + DQ__H_STREAM, p->stream);
    dq__st32(out + DQ__H_CRC, dq__crc32c(out, DQ__H_CRC));
}
/* A level-scheme header: the configuration's fields, the coder sent, the checksum flag. */
static inline void dq__write_header(const dq__cfg *c, const dq_params *p, size_t n, unsigned coder, int crc,
                                    uint8_t *out) {
    dq__put_header(out, c->scheme, c->bits, coder, c->norm,
                   (c->stochastic ? DQ_FLAG_STOCHASTIC : 0u) | (crc ? DQ_FLAG_CHECKSUM : 0u), c->bucket_wire,
                   (uint64_t)n, p);
}
/* The payload checksum: CRC32C of everything between the header and the checksum itself. */
static inline uint32_t dq__body_crc(const uint8_t *msg, size_t msg_size) {
    return dq__crc32c(msg + DQ_HEADER_SIZE, msg_size - DQ_HEADER_SIZE - 4u);
}
/* A level-scheme message whose body (body bytes after the header) is final: the header, once,
 * and the payload checksum when it carries one. Returns the message's size. */
static inline size_t dq__message_close(const dq__cfg *c, const dq_params *p, size_t n, unsigned coder, int crc,
                                       uint8_t *dst, size_t body) {
    size_t size = DQ_HEADER_SIZE + body + (crc ? 4u : 0u);
    dq__write_header(c, p, n, coder, crc, dst);
    if (crc) dq__st32(dst + size - 4u, dq__body_crc(dst, size));
    return size;
}

/* ---- parsing */

/* The element count of a header into h (TOO_LARGE beyond what this machine can index). */
static inline dq_status dq__count_set(uint64_t count, dq_header *h) {
    if (count > DQ_MAX_ELEMS || count > (uint64_t)SIZE_MAX) return DQ_ERR_TOO_LARGE;
    h->count = h->nnz = (size_t)count;
    return DQ_OK;
}
/* Parses and validates the header at in (doc/FORMAT.md 3.2, steps 1 to 9) into h; for a level
 * scheme also its configuration into c (a TRUNC_NU level table is read when the body opens)
 * and, for a segmented message, every entry of its table. */
static inline dq_status dq__header_parse(const uint8_t *in, size_t src_len, dq_header *h, dq__cfg *c) {
    uint64_t count;
    if (src_len < 8) return DQ_ERR_TRUNCATED;
    if (in[0] != 'D' || in[1] != 'Q' || in[2] != 'S' || in[3] != 'G') return DQ_ERR_BAD_MAGIC;
    if (in[DQ__H_VERSION] != DQ_FORMAT_VERSION) return DQ_ERR_VERSION;
    if (in[DQ__H_SIZE] != DQ_HEADER_SIZE) return DQ_ERR_CORRUPT;
    if (src_len < DQ_HEADER_SIZE) return DQ_ERR_TRUNCATED;
    if (dq__ld32(in + DQ__H_CRC) != dq__crc32c(in, DQ__H_CRC)) return DQ_ERR_CHECKSUM;
    memset(h, 0, sizeof *h);
    h->version = in[DQ__H_VERSION];
    h->header_size = in[DQ__H_SIZE];
    h->scheme = in[DQ__H_SCHEME];
    h->bits = in[DQ__H_BITS];
    h->coder = in[DQ__H_CODER];
    h->norm = (dq_norm)(in[DQ__H_NORM] + 1u); /* wire 0..6 -> DQ_NORM_L2 .. DQ_NORM_TWOMEANS */
    h->flags = dq__ld16(in + DQ__H_FLAGS);
    h->bucket = dq__ld32(in + DQ__H_BUCKET);
    count = dq__ld64(in + DQ__H_COUNT);
    h->seed = dq__ld64(in + DQ__H_SEED);
    h->step = dq__ld64(in + DQ__H_STEP);
    h->stream = dq__ld32(in + DQ__H_STREAM);
    if (count == 0) return DQ_ERR_CORRUPT;
    return dq__ops_wire(h->scheme)->header(in, src_len, count, h, c);
}
/* The same into a message handle, which then points at in. */
static inline dq_status dq__msg_parse(const uint8_t *in, size_t src_len, dq_message *m) {
    m->src = in;
    return dq__header_parse(in, src_len, &m->h, &m->c);
}
static inline dq_status dq__seg_header(const uint8_t *in, size_t src_len, uint64_t count, dq_header *h, dq__cfg *c);
/* dq__msg_parse for the level schemes (and the refusal of unassigned scheme ids). */
static inline dq_status dq__lv_header(const uint8_t *in, size_t src_len, uint64_t count, dq_header *h, dq__cfg *c) {
    const dq__coder *row = dq__coder_row(h->coder);
    dq_params p;
    int ok;
    if (dq__is_levels(h->scheme) && (h->flags & DQ_FLAG_SEGMENTS)) return dq__seg_header(in, src_len, count, h, c);
    h->segments = 1;
    if (!dq__is_levels(h->scheme) || !row || !dq__bits_ok(h->scheme, h->bits) ||
        !dq__norm_ok(h->scheme, in[DQ__H_NORM]) || (h->flags & ~(DQ_FLAG_STOCHASTIC | DQ_FLAG_CHECKSUM)) != 0 ||
        (h->bucket % 8u) != 0 || ((dq__scheme(h->scheme)->flags & DQ__S_NEAREST) && (h->flags & DQ_FLAG_STOCHASTIC)))
        return DQ_ERR_CORRUPT;
    if (dq__count_set(count, h) != DQ_OK) return DQ_ERR_TOO_LARGE;
    memset(&p, 0, sizeof p);
    p.scheme = (dq_scheme)h->scheme;
    p.bits = h->bits;
    p.bucket = h->bucket ? h->bucket : DQ_BUCKET_WHOLE;
    p.checksum = (h->flags & DQ_FLAG_CHECKSUM) ? 1u : 0u;
    p.coder = h->coder; /* refuses a width the coder does not carry */
    if (dq__cfg_make2(&p, h->count, 1, c) != DQ_OK) return DQ_ERR_CORRUPT;
    h->msg_size = dq__size(c, h->count, 1, &ok);
    h->payload_size = (size_t)(((uint64_t)h->count * h->bits + 7u) / 8u);
    if (ok && row->head) { /* the payload's length follows the header */
        uint64_t len;
        if (src_len < DQ_HEADER_SIZE + (size_t)row->head) return DQ_ERR_TRUNCATED;
        len = dq__ld64(in + DQ_HEADER_SIZE);
        if (len > row->bound(h->count, h->bits)) return DQ_ERR_CORRUPT;
        if (len > (uint64_t)SIZE_MAX - (h->msg_size - h->payload_size) - row->head) return DQ_ERR_TOO_LARGE;
        h->msg_size = h->msg_size - h->payload_size + row->head + (size_t)len;
        h->payload_size = (size_t)len;
    }
    return ok ? DQ_OK : DQ_ERR_TOO_LARGE;
}
DQ_API dq_status dq_header_read(const void *src, size_t src_len, dq_header *h) {
    dq__cfg c;
    if (!src || !h) return DQ_ERR_NULL;
    return dq__header_parse((const uint8_t *)src, src_len, h, &c);
}

/* The rest of opening a parsed message: its size, (when `verify`) its payload checksum, and for
 * a level scheme the level table of TRUNC_NU. */
static inline dq_status dq__msg_open_body(dq_message *m, size_t src_len, int verify) {
    const dq_header *h = &m->h;
    dq__cfg *c = &m->c;
    if (src_len < h->msg_size) return DQ_ERR_TRUNCATED;
    if (verify && (h->flags & DQ_FLAG_CHECKSUM) &&
        dq__ld32(m->src + h->msg_size - 4u) != dq__body_crc(m->src, h->msg_size))
        return DQ_ERR_CHECKSUM;
    if (!dq__is_levels(h->scheme)) return DQ_OK;
    if (c->ntab) { /* TRUNC_NU: the level table after the scales */
        const uint8_t *lv = m->src + DQ_HEADER_SIZE + dq__coders[h->coder].head + 4u * c->nbuckets;
        size_t l;
        for (l = 0; l < c->ntab; l++) c->tab[l + 1u] = dq__bitsf(dq__ld32(lv + 4u * l));
        if (!dq__tab_ok(c->tab + 1, (unsigned)c->ntab)) return DQ_ERR_CORRUPT;
    }
    return DQ_OK;
}
/* Opens a message once: parsed, then its body opened. Every decoder starts here (or with the two
 * steps, when a check of its own comes between them); nothing parses the header a second time. */
static inline dq_status dq__open(const void *src, size_t src_len, int verify, dq_message *m) {
    dq_status st;
    if (!src) return DQ_ERR_NULL;
    if ((st = dq__msg_parse((const uint8_t *)src, src_len, m)) != DQ_OK) return st;
    return dq__msg_open_body(m, src_len, verify);
}

DQ_API dq_status dq_message_open(const void *src, size_t src_len, dq_message *m) {
    if (!src || !m) return DQ_ERR_NULL;
    return dq__open(src, src_len, 1, m);
}
DQ_API dq_status dq_verify(const void *src, size_t src_len) {
    dq_message m;
    return dq__open(src, src_len, 1, &m);
}
/* The range encoder's last step. Its calls share no state, so the header the first range wrote
 * is parsed here, once, for the size and the checksum flag. */
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
/* ---------------------------------------------------------------- the planner: which coder sends a message
 * dq_encode, jobs, segments, dq_recode and dq_coded_size decide here, the same way, which coder
 * sends a level-scheme body (doc/FORMAT.md 17.4, 17.5), and assemble a coded body here. What a
 * caller may ask (dq_params.coder) and what each width and count allows is read from the
 * coder table (coders.h). An encode plans before it writes: the quantizer writes the scales
 * and the fixed payload and, as it goes, gathers the statistics the candidates' bounds read
 * (dq__gather: the symbol counts; a job's parts also count the gaps); the planner decides from
 * them, reading the codes again only where bounds do not decide (an exact size, an early-stop
 * pass for Elias, rANS's room chunk by chunk); then the chosen coder writes the payload, the
 * body is closed (dq__body_close) and the header written once (dq__message_close). A fixed
 * body goes out as the quantizer wrote it.
 * What stays in place, and why: the library never allocates and dq_encode has no work buffer,
 * so a coded payload is made from the fixed codes inside the caller's buffer (the coders say
 * how, coder_elias.h and coder_rans.h), and the scales, written where the fixed layout puts
 * them, move 8 bytes up behind the payload length when a coded form goes out. */

/* ---- what the caller asked */

/* The coder a whole message of n elements is encoded with, from dq_params.coder (valid):
 * DQ_CODER_AUTO, or one the coder table says encoders send. */
static inline unsigned dq__coder_asked(unsigned coder, size_t n) {
    if (coder == DQ_CODER_DEFAULT) return n >= DQ_CODER_AUTO_MIN ? DQ_CODER_AUTO : DQ_CODER_FIXED;
    if (coder == DQ_CODER_FIXED_ONLY) return DQ_CODER_FIXED;
    return coder < DQ__NCODERS ? dq__coders[coder].sent_as : coder;
}
/* dq_params.coder (`wire` = 0) or a header's coder byte (1) for b-bit codes: a coder whose row
 * carries b bits, or, in params, DQ_CODER_AUTO or DQ_CODER_FIXED_ONLY. */
static inline int dq__coder_param_ok(unsigned coder, unsigned bits, int wire) {
    const dq__coder *r = dq__coder_row(coder);
    if (!r) return coder == DQ_CODER_AUTO || (!wire && coder == DQ_CODER_FIXED_ONLY);
    return dq__coder_bits_ok(r, bits);
}
/* Ranges and blocks write the fixed layout: the default coder or DQ_CODER_FIXED_ONLY. */
static inline int dq__fixed_asked(const dq_params *p) {
    return p->coder == DQ_CODER_DEFAULT || p->coder == DQ_CODER_FIXED_ONLY;
}
/* Whether a coded form may go out for the coder asked (dq__coder_asked). */
static inline int dq__coder_may_code(unsigned want) { return want != DQ_CODER_FIXED; }
/* A coder asked by name, not the fixed layout nor AUTO: dst must hold its worst case up front. */
static inline int dq__coder_forced(unsigned want) { return want != DQ_CODER_FIXED && want != DQ_CODER_AUTO; }
/* The coder a part of a message (a segment) asks for, the message carrying the checksum: the
 * default resolved by the part's count, with nothing of its own to add. */
static inline unsigned dq__coder_part(unsigned coder, size_t n) {
    if (coder != DQ_CODER_DEFAULT) return coder;
    return dq__coder_asked(coder, n) == DQ_CODER_AUTO ? DQ_CODER_AUTO : DQ_CODER_FIXED_ONLY;
}
/* The default coder adds the payload checksum to the coded forms it sends: a checksummed coded
 * message decodes in one pass (FORMAT 17.4), an unchecked one in two. */
static inline int dq__default_asked(const dq_params *p) { return p->coder == DQ_CODER_DEFAULT; }
static inline int dq__default_crc(const dq_params *p, const dq__cfg *c) {
    return dq__default_asked(p) && c->coder == DQ_CODER_AUTO && !c->checksum;
}
/* Whether a message sent with `coder` carries a checksum: the caller's (crc), or the default's
 * (def_crc, which crc then includes) when a coded form went out. */
static inline int dq__crc_sent(int crc, int def_crc, unsigned coder) {
    return crc && !(def_crc && !dq__coders[coder].head);
}
/* dq_recode's coder, for a message sent with `from` at b bits: a coder id or DQ_CODER_AUTO;
 * DQ_CODER_FIXED_ONLY is the fixed layout, coder 2 (unless the message has it) coder 3. One
 * side of a conversion must be the fixed layout, but for a copy into the same coder. */
static inline dq_status dq__coder_recode(unsigned *coder, unsigned from, unsigned bits) {
    if (!dq__coder_param_ok(*coder, bits, 0)) return DQ_ERR_PARAM;
    if (*coder == DQ_CODER_FIXED_ONLY) *coder = DQ_CODER_FIXED;
    if (*coder < DQ__NCODERS && *coder != from) *coder = dq__coders[*coder].sent_as; /* coder 2: written as 3 */
    return dq__coders[from].head && dq__coder_may_code(*coder) && *coder != from ? DQ_ERR_PARAM : DQ_OK;
}
/* Whether coder c is a candidate for want (a coder id, or DQ_CODER_AUTO) at b bits, n elements. */
static inline int dq__plan_may(unsigned c, unsigned want, unsigned b, size_t n) {
    const dq__coder *r = &dq__coders[c];
    return r->write && dq__coder_bits_ok(r, b) && (uint64_t)n <= r->max_n && (want == c || want == DQ_CODER_AUTO);
}
/* The statistics the candidates' planning reads (DQ__PS_*): the symbol counts when one needs
 * them, and with AUTO the gap counts when another can use them beside those. */
static inline unsigned dq__plan_needs(unsigned want, unsigned b, size_t n) {
    unsigned c, need = 0, use = 0;
    for (c = 1; c < DQ__NCODERS; c++)
        if (dq__plan_may(c, want, b, n)) {
            need |= dq__coders[c].stats & DQ__PS_COUNTS;
            use |= dq__coders[c].stats & DQ__PS_GAPS;
        }
    return need ? need | (want == DQ_CODER_AUTO ? use : 0u) : 0u;
}

/* ---- the statistics, gathered while quantizing */

/* The counts of a run of blocks as the quantizer writes them: the symbol counts into cnt, the
 * gap counts of the full blocks into gaps (either NULL when not wanted). */
typedef struct dq__gather {
    dq__symcount sc;
    uint64_t *cnt, *gaps;
    uint64_t gst[6]; /* the gap pass's carry (dq__k_elias_gaps) */
    unsigned b;
    size_t n, full;  /* elements, full blocks */
} dq__gather;
/* Starts counting at block k0. A run that does not start the vector starts its gap pass as after
 * a non-zero in every place: it counts fewer gaps, still a lower bound. */
static inline void dq__gather_init(dq__gather *g, unsigned b, size_t n, size_t k0, uint64_t *cnt, uint64_t *gaps) {
    unsigned k;
    g->b = b;
    g->n = n;
    g->full = n / DQ__BLOCK;
    g->cnt = cnt;
    g->gaps = gaps;
    if (cnt) {
        memset(cnt, 0, ((size_t)1 << dq__sym_bits(b)) * sizeof *cnt);
        memset(&g->sc, 0, sizeof g->sc);
    }
    if (gaps) {
        memset(gaps, 0, 7u * sizeof *gaps);
        for (k = 0; k < 6u; k++) g->gst[k] = k0 ? ~(uint64_t)0 : 0u;
        if (!k0) g->gst[0] = (uint64_t)1 << 63; /* index -1 counts as a non-zero */
    }
}
/* Blocks [k0, k1) of the payload, just written. */
static inline void dq__gather_run(dq__gather *g, const uint8_t *payload, size_t k0, size_t k1) {
    if (g->cnt) dq__symcount_add(&g->sc, g->b, g->n, payload, k0, k1, g->cnt);
    if (g->gaps) {
        size_t e = k1 < g->full ? k1 : g->full;
        if (e > k0) dq__k_elias_gaps(payload + k0 * DQ__BLOCK_BYTES(g->b), g->b, e - k0, g->gst, g->gaps);
    }
}
static inline void dq__gather_end(dq__gather *g) {
    if (g->cnt) dq__symcount_flush(&g->sc, g->b, g->cnt);
}

/* ---- the plan */

/* Plans how to send the fixed payload. want: a coder (dq__coder_asked) or DQ_CODER_AUTO for the
 * smallest whose in-place write fits in `room` bytes past the fixed body (exact = 1: no room
 * limit and every candidate sized exactly, for dq_coded_size and dq_recode); def_crc: the
 * default's checksum, which a coded form must pay for. The candidates give bounds from the
 * statistics; a coder whose lower bound exceeds the smallest upper bound cannot win; the others
 * are sized exactly (a pass over the codes) where bounds do not decide; ties go to the lower
 * coder id. A forced coder larger than the fixed layout sends the fixed layout, so every
 * message fits dq_encode_bound(). */
static inline void dq__plan_make(const dq__plan_in *in, unsigned want, int exact, uint64_t room, int def_crc,
                                 dq__plan *pl) {
    uint64_t F = in->fixed, m_all = F, m_ok = F, other = F;
    dq__plan_est e;
    unsigned c;
    int cand[DQ__NCODERS], autop = want == DQ_CODER_AUTO, bounded = 0;
    pl->coder = DQ_CODER_FIXED;
    for (c = 0; c < DQ__NCODERS; c++) {
        cand[c] = c && dq__plan_may(c, want, in->bits, in->n);
        pl->size[c] = pl->room[c] = e.lb[c] = e.lbg[c] = 0;
        e.ub[c] = UINT64_MAX;
        if (cand[c] && dq__coders[c].bounds) dq__coders[c].bounds(in, pl, &e);
        if (cand[c] && e.ub[c] < m_all) m_all = e.ub[c];
    }
    pl->size[DQ_CODER_FIXED] = F;
    if (autop && !exact) /* the in-place room, where the bounds give it */
        for (c = 1; c < DQ__NCODERS; c++)
            if (cand[c] && dq__coders[c].room_fits && !dq__coders[c].room_fits(in, pl, &e, room)) cand[c] = 0;
    for (c = 1; c < DQ__NCODERS; c++)
        if (cand[c] && e.ub[c] != UINT64_MAX) {
            bounded = 1;
            if (e.ub[c] < m_ok) m_ok = e.ub[c];
        }
    /* Lower bounds against the upper ones: those from the counts alone against every bound
     * computed, a coder the room ruled out included, as the library always has (so a Gaussian
     * at 8 bits in a tight buffer goes out fixed where Elias would fit; the bytes depend on it,
     * tests/test_coders.c pins them), those with the gap counts too against the candidates'. */
    if (autop)
        for (c = 1; c < DQ__NCODERS; c++)
            if (cand[c] && (e.lb[c] > m_all || e.lbg[c] > m_ok)) cand[c] = 0;
    /* exact sizes: coders without an upper bound first, stopping early once beaten */
    for (c = 1; c < DQ__NCODERS; c++)
        if (cand[c] && e.ub[c] == UINT64_MAX) {
            dq__coders[c].size(in, pl, &e, autop && bounded ? m_ok : UINT64_MAX);
            if (pl->size[c] && autop && !exact && pl->room[c] > room) pl->size[c] = 0;
            if (pl->size[c] && pl->size[c] < other) other = pl->size[c];
        }
    for (c = 1; c < DQ__NCODERS; c++) /* then the bounded ones, where the bounds do not decide */
        if (cand[c] && e.ub[c] != UINT64_MAX) {
            if (exact || (autop && e.lb[c] < other && e.ub[c] >= other) || (want == c && e.ub[c] > F))
                dq__coders[c].size(in, pl, &e, UINT64_MAX);
            else if (e.ub[c] < other || want == c)
                pl->size[c] = e.ub[c]; /* the smallest for certain; its exact size comes when it is written */
        }
    if (!autop) {
        pl->coder = pl->size[want] > F ? DQ_CODER_FIXED : want;
    } else {
        for (c = 1; c < DQ__NCODERS; c++)
            if (pl->size[c] && pl->size[c] < pl->size[pl->coder]) pl->coder = c;
    }
    if (def_crc && pl->size[pl->coder] + 4u >= F) pl->coder = DQ_CODER_FIXED; /* the checksum would eat the saving */
}

/* ---- coded bodies: [u64 payload bytes][scales][coded payload] (FORMAT 17.1) */

/* Closes a coded body whose payload (L bytes) is written at body + 8 + prefix: the scales
 * (prefix bytes at `scales`, body itself when they were quantized there) go behind the length,
 * which is written. Returns the body's size. */
static inline size_t dq__body_close(uint8_t *body, const uint8_t *scales, size_t prefix, size_t L) {
    memmove(body + 8u, scales, prefix);
    dq__st64(body, (uint64_t)L);
    return 8u + prefix + L;
}
/* The fixed body the quantizer wrote at body[0..prefix + fixed), with its statistics, sent as
 * the plan says: in place, within body[0..cap) (scratch more bytes usable past cap, not for
 * the result). want, room and def_crc as for dq__plan_make; *coder gets the coder sent.
 * Returns the body's size, 0 when the write did not fit (which the plan's room rules out). */
static inline size_t dq__body_send(const dq__cfg *c, size_t n, const uint64_t *counts, unsigned want, int def_crc,
                                   uint8_t *body, size_t cap, size_t scratch, unsigned *coder) {
    dq__plan_in in;
    dq__plan pl;
    size_t L, head = 8u + c->prefix;
    if (want == DQ_CODER_FIXED) { /* nothing to plan */
        *coder = DQ_CODER_FIXED;
        return c->prefix + (size_t)(((uint64_t)n * c->bits + 7u) / 8u);
    }
    in.bits = c->bits;
    in.n = n;
    in.crc = c->checksum ? 4u : 0u;
    in.fixed = ((uint64_t)n * c->bits + 7u) / 8u;
    in.payload = body + c->prefix;
    in.counts = counts;
    in.gaps = NULL;
    dq__plan_make(&in, want, 0, cap - c->prefix - (size_t)in.fixed, def_crc, &pl);
    *coder = pl.coder;
    if (!dq__coders[pl.coder].head) return c->prefix + (size_t)in.fixed;
    L = dq__coders[pl.coder].write(&in, &pl, body + head, cap - head, scratch, 1);
    return L ? dq__body_close(body, body, c->prefix, L) : 0u;
}

/* ---- sizes: what a caller's buffer needs */

/* The room dq_encode_capacity() gives DQ_CODER_AUTO past the fixed message (FORMAT 17.5): the
 * largest of the coders AUTO may send at this width (one rANS chunk's fixed bytes; Elias as
 * much at the widths rANS does not take), at most the fixed payload. */
static inline size_t dq__auto_room(unsigned b) {
    size_t r = 0, x;
    unsigned c;
    for (c = 1; c < DQ__NCODERS; c++)
        if (dq__coders[c].auto_room && dq__plan_may(c, DQ_CODER_AUTO, b, 0) && (x = dq__coders[c].auto_room(b)) > r)
            r = x;
    return r;
}
DQ_API size_t dq_encode_bound_coded(size_t n, unsigned bits) {
    uint64_t fixed = dq_encode_bound(n, bits), r = 0, x, s;
    unsigned c;
    if (!fixed) return 0;
    for (c = 1; c < DQ__NCODERS; c++) /* the largest payload a coder encoders send may take */
        if (dq__plan_may(c, DQ_CODER_AUTO, bits, 0) && (x = dq__coders[c].bound(n, bits)) > r) r = x;
    s = fixed + 8u + r + 16u; /* the fixed message, then room to re-code it in place */
    return s <= (uint64_t)SIZE_MAX ? (size_t)s : 0u;
}
static inline dq_status dq__sized(const dq_params *p, size_t n, int framed, size_t *size) {
    dq__cfg c;
    dq_status st;
    int ok;
    if (!p || !size) return DQ_ERR_NULL;
    if ((st = dq__cfg_make(p, n, &c)) != DQ_OK) return st;
    if (!framed && (c.checksum || !dq__fixed_asked(p))) return DQ_ERR_PARAM;
    if (dq__coder_forced(c.coder)) { /* what a forced coder needs */
        *size = dq_encode_bound_coded(n, c.bits);
        return *size ? DQ_OK : DQ_ERR_TOO_LARGE;
    }
    if (framed && dq__default_crc(p, &c)) c.checksum = 1u; /* what the default's coded forms carry */
    *size = dq__size(&c, n, framed, &ok); /* exact for the fixed layout; DQ_CODER_AUTO never writes more */
    if (ok && framed && c.coder == DQ_CODER_AUTO) { /* + the working room of an in-place write */
        uint64_t fixed = ((uint64_t)n * c.bits + 7u) / 8u, cb = dq__auto_room(c.bits);
        uint64_t s = (uint64_t)*size + (fixed < cb ? fixed : cb);
        ok = s <= (uint64_t)SIZE_MAX;
        *size = (size_t)s;
    }
    return ok ? DQ_OK : DQ_ERR_TOO_LARGE;
}
static inline dq_status dq__lv_capacity(const dq_params *p, size_t n, size_t *size) { return dq__sized(p, n, 1, size); }
DQ_API dq_status dq_block_size(const dq_params *p, size_t n, size_t *size) { return dq__sized(p, n, 0, size); }
DQ_API dq_status dq_encode_capacity(const dq_params *p, size_t n, size_t *size) {
    if (!p || !size) return DQ_ERR_NULL;
    return dq__ops_params(p)->capacity(p, n, size);
}
/* ---------------------------------------------------------------- quantizing a level scheme (doc/FORMAT.md 6, 7)
 * The scales and the fixed-width payload of a level-scheme body, written where the fixed layout
 * puts them (the body after the header). The quantizer also gathers, block run by block run
 * while they are in cache, the statistics the planner sizes the coders from (dq__gather). */

/* The scale of a bucket and the quantizer constants derived from it. */
static inline dq_status dq__bucket_scale(const dq__cfg *c, const dq__stats *st, size_t len, float *scale) {
    double v;
    if (c->norm == DQ__NORM_WIRE_MAX || c->norm == DQ__NORM_WIRE_POW2 || c->norm == DQ__NORM_WIRE_ALPHA) {
        uint32_t m = st->maxbits;
        if (m >= 0x7F800000u) return DQ_ERR_NONFINITE;
        if (c->norm == DQ__NORM_WIRE_ALPHA) {
            *scale = c->alpha; /* checked by dq__cfg_make */
            return DQ_OK;
        }
        if (c->norm == DQ__NORM_WIRE_POW2 && (m & 0x007FFFFFu) && m >= 0x00800000u)
            m = (m & 0x7F800000u) + 0x00800000u; /* round a normal max up to a power of two */
        v = (double)dq__bitsf(m);
    } else if (c->norm == DQ__NORM_WIRE_CLIP) { /* TernGrad: min(max, 2.5 RMS) */
        double rms;
        if (st->maxbits >= 0x7F800000u) return DQ_ERR_NONFINITE;
        rms = sqrt(st->sumsq / (double)len);
        v = (double)dq__bitsf(st->maxbits);
        if (2.5 * rms < v) v = 2.5 * rms;
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
    q->neg = -q->step;
    q->scale = scale;
    if (q->tab)
        q->inv = scale == 0.0f ? 0.0f : 1.0f / scale;
    else
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

/* Two-means: the means of bucket k's two sign groups from its lanes (doc/FORMAT.md 22.2), into
 * the message: the non-negative mean as scale k, the negative one (sign bit set, -0 for an
 * empty group) as scale nbuckets + k. */
static inline dq_status dq__tm_scales(const dq__cfg *c, const double *pos, const double *neg, uint64_t nneg,
                                      size_t len, uint8_t *scales, size_t k) {
    double sp = dq__lanes_sum(pos), sn = dq__lanes_sum(neg), vp, vn;
    uint64_t npos = (uint64_t)len - nneg;
    float mp, mn;
    if (!(sp <= DBL_MAX) || !(sn <= DBL_MAX)) return DQ_ERR_NONFINITE;
    vp = npos ? sp / (double)npos : 0.0;
    vn = nneg ? sn / (double)nneg : 0.0;
    if (vp > (double)dq__bitsf(DQ__MAX_SCALE_BITS) || vn > (double)dq__bitsf(DQ__MAX_SCALE_BITS))
        return DQ_ERR_OVERFLOW;
    mp = (float)vp;
    mn = (float)vn;
    if (mp < DQ__MIN_SCALE) mp = 0.0f;
    if (mn < DQ__MIN_SCALE) mn = 0.0f;
    dq__st32(scales + 4u * k, dq__fbits(mp));
    dq__st32(scales + 4u * (c->nbuckets + k), dq__fbits(mn) | 0x80000000u);
    return DQ_OK;
}
/* The scale(s) of bucket k from its statistics, written to the message (scales: the message's
 * scales part, bucket 0 first). */
static inline dq_status dq__scale_bucket(const dq__cfg *c, const float *x, const float *e, size_t len, uint8_t *scales,
                                         size_t k) {
    dq__stats st;
    dq_status s;
    float scale;
    unsigned what = c->norm == DQ__NORM_WIRE_L2 ? DQ__ST_SQ : (c->norm == DQ__NORM_WIRE_MEAN ? DQ__ST_ABS : DQ__ST_MAX);
    if (c->tm) {
        double pos[DQ__SLANES] = {0}, neg[DQ__SLANES] = {0};
        uint64_t nneg = 0;
        dq__k_tm_acc(x, e, len, pos, neg, &nneg);
        return dq__tm_scales(c, pos, neg, nneg, len, scales, k);
    }
    dq__k_stats(x, e, len, what, &st);
    if (c->norm == DQ__NORM_WIRE_CLIP) { /* needs the sum of squares too */
        dq__stats sq;
        dq__k_stats(x, e, len, DQ__ST_SQ, &sq);
        st.sumsq = sq.sumsq;
    }
    if ((s = dq__bucket_scale(c, &st, len, &scale)) != DQ_OK) return s;
    dq__st32(scales + 4u * k, dq__fbits(scale));
    return DQ_OK;
}
/* The quantizer constants of bucket k from its scale(s) in the message. */
static inline void dq__qctx_bucket(dq__qctx *q, const dq__cfg *c, const uint8_t *scales, size_t k) {
    dq__qctx_scale(q, dq__bitsf(dq__ld32(scales + 4u * k)));
    if (c->tm) q->neg = dq__bitsf(dq__ld32(scales + 4u * (c->nbuckets + k)));
}

/* ---- level encoding
 * A bucket's scale needs all of its elements before any of them is quantized. Without error
 * feedback each bucket's statistics pass is followed at once by its quantization, while the
 * bucket is in cache (one pass; a 16-bit vector in chunks of whole ranges). With error feedback,
 * or when a range does not fit a chunk, every scale is computed first (from x + residual,
 * without writing the residual, so that a failing bucket leaves it untouched), then each bucket
 * is compensated (residual = x + residual) and quantized, leaving residual = compensated -
 * decoded. Buckets that span chunks carry their statistics lanes from chunk to chunk, which
 * gives the one-piece sums exactly (16 lanes in index order, doc/FORMAT.md 6.1). */

/* Statistics of one bucket carried across chunks (dq__k_hstat_acc), for the norm's statistics;
 * two-means (dq__k_tm_acc): the lanes of the non-negative (sq) and negative (ab) magnitudes, and
 * the count of negative elements. */
typedef struct dq__hstat {
    double sq[DQ__SLANES], ab[DQ__SLANES];
    uint32_t mx;
    uint64_t nneg;
} dq__hstat;
/* The statistics dq__scale_bucket computes for the norm (all three for any other). */
static inline unsigned dq__hstat_what(const dq__cfg *c) {
    if (c->norm == DQ__NORM_WIRE_L2) return DQ__ST_SQ;
    if (c->norm == DQ__NORM_WIRE_MEAN) return DQ__ST_ABS;
    if (c->norm == DQ__NORM_WIRE_MAX || c->norm == DQ__NORM_WIRE_POW2 || c->norm == DQ__NORM_WIRE_ALPHA)
        return DQ__ST_MAX;
    return DQ__ST_SQ | DQ__ST_ABS | DQ__ST_MAX; /* TernGrad's clip needs the maximum and the squares */
}
/* Adds elements off .. off+cnt-1 of the bucket (x, e hold them); what = 0: two-means. */
static inline void dq__hstat_add(dq__hstat *a, unsigned what, const float *x, const float *e, size_t off, size_t cnt) {
    double rs[DQ__SLANES], ra[DQ__SLANES];
    unsigned k, r = (unsigned)(off % DQ__SLANES);
    for (k = 0; k < DQ__SLANES; k++) { /* rotate so that element 0 of the piece meets lane off % 16 */
        rs[k] = a->sq[(r + k) % DQ__SLANES];
        ra[k] = a->ab[(r + k) % DQ__SLANES];
    }
    if (what)
        dq__k_hstat_acc(x, e, cnt, what, rs, ra, &a->mx);
    else
        dq__k_tm_acc(x, e, cnt, rs, ra, &a->nneg);
    for (k = 0; k < DQ__SLANES; k++) {
        a->sq[(r + k) % DQ__SLANES] = rs[k];
        a->ab[(r + k) % DQ__SLANES] = ra[k];
    }
}
/* The scale of the bucket whose statistics a holds, into the message. */
static inline dq_status dq__hstat_scale(const dq__cfg *c, const dq__hstat *a, size_t len, uint8_t *scales, size_t k) {
    dq__stats st;
    float scale;
    dq_status s;
    if (c->tm) return dq__tm_scales(c, a->sq, a->ab, a->nneg, len, scales, k);
    st.sumsq = dq__lanes_sum(a->sq);
    st.sumabs = dq__lanes_sum(a->ab);
    st.maxbits = a->mx;
    if ((s = dq__bucket_scale(c, &st, len, &scale)) != DQ_OK) return s;
    dq__st32(scales + 4u * k, dq__fbits(scale));
    return DQ_OK;
}

/* Every scale of the buckets of [begin, end) (begin on a bucket boundary) into the message, in
 * bucket order (the first failing bucket's status). x and r (or NULL) hold elements begin ..,
 * of dtypes xt and rt; ch is the chunk length, xb and rb its buffers. */
static inline dq_status dq__lv_scales(const dq__cfg *c, size_t begin, size_t end, size_t ch, dq_dtype xt,
                                      const void *x, dq_dtype rt, const void *r, uint8_t *scales, float *xb, float *rb) {
    dq__hstat acc;
    size_t b0, bi = begin / c->bucket, bstart = begin, bend = end - begin > c->bucket ? begin + c->bucket : end;
    unsigned what = c->tm ? 0u : dq__hstat_what(c);
    dq_status s;
    memset(&acc, 0, sizeof acc);
    for (b0 = begin; b0 < end; b0 += ch) {
        size_t b1 = end - b0 < ch ? end : b0 + ch, pos = b0;
        const float *xf = dq__el_in(xt, x, b0 - begin, b1 - b0, xb);
        const float *rf = r ? dq__el_in(rt, r, b0 - begin, b1 - b0, rb) : NULL;
        while (pos < b1) {
            size_t seg = bend < b1 ? bend : b1;
            if (pos == bstart && seg == bend) { /* the whole bucket is in this chunk */
                s = dq__scale_bucket(c, xf + (pos - b0), rf ? rf + (pos - b0) : NULL, bend - bstart, scales, bi);
            } else {
                dq__hstat_add(&acc, what, xf + (pos - b0), rf ? rf + (pos - b0) : NULL, pos - bstart, seg - pos);
                s = seg == bend ? dq__hstat_scale(c, &acc, bend - bstart, scales, bi) : DQ_OK;
                if (seg == bend) memset(&acc, 0, sizeof acc);
            }
            if (s != DQ_OK) return s;
            pos = seg;
            if (pos == bend) {
                bi++;
                bstart = bend;
                bend = end - bstart > c->bucket ? bstart + c->bucket : end;
            }
        }
    }
    return DQ_OK;
}

#define DQ__GATHER_RUN 16u /* blocks the quantizer writes before it hands them to dq__gather (in L1) */
/* Quantizes elements [b0, b1) (b0 a multiple of the block, b1 too or the vector's end) into the
 * payload; x holds them, r (or NULL) their residual, compensated here and left as the new
 * residual. Enters at any block of a bucket. With `scale_here` (no residual, whole buckets) each
 * bucket's scale is computed when it is entered; otherwise the scales are in the message. With
 * g, every run of blocks written goes to the planner's statistics. */
static inline dq_status dq__lv_quant(const dq__cfg *c, const dq_params *p, size_t b0, size_t b1, const float *x,
                                     float *r, int scale_here, uint8_t *body, dq__gather *g) {
    uint32_t codes[DQ__BLOCK];
    uint8_t *scales = body, *payload = body + c->prefix;
    dq__key key = dq__key_make(p->seed, p->step, p->stream);
    dq__qctx q;
    size_t pos = b0, bi = b0 / c->bucket, bend = b0, krun = b0 / DQ__BLOCK;
    const float *src = r ? r : x;
    dq_status s;
    memset(&q, 0, sizeof q);
    q.bits = c->bits;
    q.smax = dq__levels(c->bits);
    q.thresh = c->stochastic ? -1.0f : 0.5f;
    q.k0 = key.k0;
    q.tab = c->table ? c->tab : NULL;
    if (c->ntab && b0 == 0) { /* the level table follows the scales */
        size_t l;
        for (l = 0; l < c->ntab; l++) dq__st32(scales + 4u * (c->nbuckets + l), dq__fbits(c->tab[l + 1u]));
    }
    while (pos < b1) {
        size_t blk_end = b1 - pos > DQ__BLOCK ? pos + DQ__BLOCK : b1, blk_start = pos;
        uint8_t *blk_out = payload + (blk_start / DQ__BLOCK) * DQ__BLOCK_BYTES(c->bits);
        int packed = 0;
        /* The statistics pass of the next bucket reads memory while nothing else runs; pull the
         * data two blocks ahead into cache during this block's quantization instead. */
        if (blk_start + 3u * DQ__BLOCK <= b1) {
            dq__prefetch(x + (blk_start - b0) + 2u * DQ__BLOCK, DQ__BLOCK);
            if (r) dq__prefetch(r + (blk_start - b0) + 2u * DQ__BLOCK, DQ__BLOCK);
        }
        while (pos < blk_end) {
            size_t seg_end, off = pos - b0;
            uint64_t gi;
            if (pos == bend) { /* enter bucket bi (the vector's end caps the last one below) */
                bend = (bi + 1u) * c->bucket;
                if (r) {
                    dq__k_compensate(x + off, r + off, (bend < b1 ? bend : b1) - pos);
                } else if (scale_here &&
                           (s = dq__scale_bucket(c, x + off, NULL, (bend < b1 ? bend : b1) - pos, scales, bi)) != DQ_OK) {
                    return s;
                }
                dq__qctx_bucket(&q, c, scales, bi);
                bi++;
            }
            gi = c->first + pos; /* the element's index in the dither sequence (FORMAT 7.2, 24.3) */
            q.lo = (uint32_t)gi;
            q.k1h = dq__key_hi(key, (uint32_t)(gi >> 32));
            seg_end = bend < blk_end ? bend : blk_end;
            if ((uint64_t)(seg_end - pos) > DQ__2P32 - (uint32_t)gi) /* the draws' high word changes there */
                seg_end = pos + (size_t)(DQ__2P32 - (uint32_t)gi);
            if (q.tab) { /* table schemes: quantize, then pack below */
                dq__k_quant_tab(&q, src + off, seg_end - pos, codes + (pos - blk_start), r ? r + off : NULL);
            } else if (pos == blk_start && seg_end - pos == DQ__BLOCK) { /* the common case */
                dq__k_quant_pack(&q, src + off, r ? r + off : NULL, blk_out);
                packed = 1;
            } else {
                dq__k_quant(&q, src + off, seg_end - pos, codes + (pos - blk_start), r ? r + off : NULL);
            }
            pos = seg_end;
        }
        if (!packed) {
            if (blk_end - blk_start == DQ__BLOCK)
                dq__k_pack_block(codes, c->bits, blk_out);
            else
                dq__pack_tail(codes, blk_end - blk_start, c->bits, blk_out);
        }
        if (g && (blk_end == b1 || blk_end / DQ__BLOCK - krun >= DQ__GATHER_RUN)) {
            size_t k1 = (blk_end + DQ__BLOCK - 1u) / DQ__BLOCK;
            dq__gather_run(g, payload, krun, k1);
            krun = k1;
        }
    }
    return DQ_OK;
}

/* The scales and payload of elements [begin, end) of an n-element vector into body, the part of
 * the message after the header (capacity already checked). x and r (or NULL) hold elements
 * begin .. end - 1, of dtypes xt and rt; r is written only when the call succeeds. g (or NULL)
 * gathers the planner's statistics. */
static inline dq_status dq__lv_body(const dq__cfg *c, const dq_params *p, size_t n, size_t begin, size_t end,
                                    dq_dtype xt, const void *x, dq_dtype rt, void *r, uint8_t *body, dq__gather *g) {
    float xb[DQ__ELCHUNK], rb[DQ__ELCHUNK];
    int flt = xt == DQ_F32 && (!r || rt == DQ_F32);
    size_t a = dq__align(c, n), ch = dq__el_chunk(flt, end - begin), b0;
    int one_pass = !r && (flt || a <= DQ__ELCHUNK);
    dq_status s;
    if (!flt && a <= DQ__ELCHUNK) ch = (DQ__ELCHUNK / a) * a; /* whole ranges when they fit */
    if (!one_pass && (s = dq__lv_scales(c, begin, end, ch, xt, x, rt, r, body, xb, rb)) != DQ_OK)
        return s;
    for (b0 = begin; b0 < end; b0 += ch) {
        size_t b1 = end - b0 < ch ? end : b0 + ch;
        const float *xf = dq__el_in(xt, x, b0 - begin, b1 - b0, xb);
        float *rf = r ? dq__el_inout(rt, r, b0 - begin, b1 - b0, rb) : NULL;
        if (rf) { /* two calls, so that the one without a residual is compiled without it */
            (void)dq__lv_quant(c, p, b0, b1, xf, rf, 0, body, g);
            dq__el_out(rt, rf, b1 - b0, r, b0 - begin);
        } else if ((s = dq__lv_quant(c, p, b0, b1, xf, NULL, one_pass, body, g)) != DQ_OK) {
            return s; /* one pass only */
        }
    }
    return DQ_OK;
}


/* ---------------------------------------------------------------- encoding a level scheme
 * dq_encode of a level scheme: the body quantized in the fixed layout while the planner's
 * statistics are gathered (quantize.h), sent in the coder the planner picks (planner.h), then
 * the header written once (message.h). Segments encode each of their bodies the same way
 * (dq__body_encode). The range encoder and the headerless blocks write the fixed layout only. */

/* The body of a level-scheme message of n elements at body[0..cap), scratch more bytes past
 * cap usable but not for the result; def_crc as for dq__plan_make. *coder gets the coder sent,
 * *len the body's size. */
static inline dq_status dq__body_encode(const dq__cfg *c, const dq_params *p, size_t n, dq_dtype xt, const void *x,
                                        dq_dtype rt, void *residual, int def_crc, uint8_t *body, size_t cap,
                                        size_t scratch, unsigned *coder, size_t *len) {
    uint64_t counts[256];
    dq__gather g;
    unsigned need = dq__plan_needs(c->coder, c->bits, n);
    dq_status st;
    /* Elias' gap counts are left to its early-stop pass, which ends after 64 blocks on dense
     * codes: counting them for every block costs about 1 ns an element (17.7 ms at 2^24 and 4
     * bits, beside 48 ms of quantizing). A job's parts count them, in parallel. */
    if (need) dq__gather_init(&g, c->bits, n, 0, counts, NULL);
    if ((st = dq__lv_body(c, p, n, 0, n, xt, x, rt, residual, body, need ? &g : NULL)) != DQ_OK) return st;
    if (need) dq__gather_end(&g);
    *len = dq__body_send(c, n, need ? counts : NULL, c->coder, def_crc, body, cap, scratch, coder);
    return *len ? DQ_OK : DQ_ERR_DST_TOO_SMALL; /* unreachable: the plan checked the room */
}

/* dq_encode() of a level scheme up to its header, for x and residual of any dtype: the checks,
 * then the body at dst + 48 (dst[0..48) is not touched, so a segment's body encodes in place
 * inside its message). `first`: the dither index of x[0] (a segment's first element, FORMAT
 * 24.3). *c gets the configuration, *coder the coder sent, *crc whether a checksum follows, *body
 * the body's size. */
static inline dq_status dq__lv_encode_body(const dq_params *p, uint64_t first, dq_dtype xt, const void *x, size_t n,
                                           dq_dtype rt, void *residual, uint8_t *dst, size_t dst_cap, dq__cfg *c,
                                           unsigned *coder, int *crc, size_t *body) {
    dq_status st;
    size_t size, cs;
    int ok, def_crc = 0;
    if (!p || !x || !dst) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if ((st = dq__cfg_make(p, n, c)) != DQ_OK) return st;
    c->first = first;
    size = dq__size(c, n, 1, &ok); /* the fixed layout's */
    if (!ok) return DQ_ERR_TOO_LARGE;
    if (dq__default_crc(p, c) && dst_cap >= size + 4u) { /* sized as with the checksum, sent without if fixed */
        def_crc = 1;
        c->checksum = 1u;
        size += 4u;
    }
    if (dq__coder_forced(c->coder)) { /* a forced coder needs its worst case up front */
        size_t need = dq_encode_bound_coded(n, c->bits);
        if (!need) return DQ_ERR_TOO_LARGE;
        if (dst_cap < need) return DQ_ERR_DST_TOO_SMALL;
    }
    if (dst_cap < size) return DQ_ERR_DST_TOO_SMALL;
    cs = c->checksum ? 4u : 0u;
    st = dq__body_encode(c, p, n, xt, x, rt, residual, def_crc, dst + DQ_HEADER_SIZE, dst_cap - DQ_HEADER_SIZE - cs, cs,
                         coder, body);
    if (st == DQ_OK) *crc = dq__crc_sent(cs != 0, def_crc, *coder);
    return st;
}
/* dq_encode() of a level scheme: the body, then the header once. */
static inline dq_status dq__lv_encode_at(const dq_params *p, uint64_t first, dq_dtype xt, const void *x, size_t n,
                                         dq_dtype rt, void *residual, void *dst, size_t dst_cap, size_t *dst_len) {
    dq__cfg c;
    dq_status st;
    size_t body;
    unsigned coder;
    int crc;
    if ((st = dq__lv_encode_body(p, first, xt, x, n, rt, residual, (uint8_t *)dst, dst_cap, &c, &coder, &crc, &body)) !=
        DQ_OK)
        return st;
    *dst_len = dq__message_close(&c, p, n, coder, crc, (uint8_t *)dst, body);
    return DQ_OK;
}
static inline dq_status dq__lv_encode(const dq_params *p, dq_dtype xt, const void *x, size_t n, dq_dtype rt,
                                      void *residual, void *dst, size_t dst_cap, size_t *dst_len) {
    return dq__lv_encode_at(p, 0, xt, x, n, rt, residual, dst, dst_cap, dst_len);
}

/* Encode elements [begin, end) of an n-element vector in the fixed layout, framed (a message:
 * header when begin = 0, body after it) or not (a headerless block). *size gets the full size. */
static inline dq_status dq__encode_common(const dq_params *p, size_t n, size_t begin, size_t end, const float *x,
                                          float *residual, void *dst, size_t dst_cap, int framed, size_t *size) {
    dq__cfg c;
    dq_status st;
    int ok;
    uint8_t *out = (uint8_t *)dst;
    if (!p || !x || !dst) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if ((st = dq__cfg_make(p, n, &c)) != DQ_OK) return st;
    if ((!framed && c.checksum) || !dq__fixed_asked(p)) return DQ_ERR_PARAM;
    c.coder = DQ_CODER_FIXED;
    *size = dq__size(&c, n, framed, &ok);
    if (!ok) return DQ_ERR_TOO_LARGE;
    if (!dq__range_ok(&c, n, begin, end)) return DQ_ERR_RANGE;
    if (dst_cap < *size) return DQ_ERR_DST_TOO_SMALL;
    if (framed) {
        if (begin == 0) dq__write_header(&c, p, n, DQ_CODER_FIXED, (int)c.checksum, out);
        out += DQ_HEADER_SIZE;
    }
    return dq__lv_body(&c, p, n, begin, end, DQ_F32, x, DQ_F32, residual, out, NULL);
}

DQ_API dq_status dq_encode(const dq_params *p, const float *x, size_t n, float *residual, void *dst, size_t dst_cap,
                           size_t *dst_len) {
    if (!dst_len) return DQ_ERR_NULL;
    return (p ? dq__ops_params(p) : &dq__families[DQ__FAM_LEVELS])
        ->encode(p, DQ_F32, x, n, DQ_F32, residual, dst, dst_cap, dst_len);
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
/* ---------------------------------------------------------------- decoding a level scheme
 * Every decoder opens the message once (message.h) and decodes from the handle: the scales,
 * then the payload block by block, from the fixed payload in place or through the reader of its
 * coder (dq__cdec, coders.h), into the SIMD block decoders. Everything is validated before the
 * output is touched, except a coded payload under a verified checksum, decoded in one pass and
 * checked at its end (FORMAT 17.4). Segmented messages decode segment by segment (segments.h),
 * sparse and sketch messages through their family's decoder (the family table, tables.h). */

/* Scales of buckets [b0, b1) (doc/FORMAT.md 4): each at most 2^126 and not negative (one
 * comparison of the bit pattern); two-means negative means (22.3): sign bit set, magnitude at
 * most 2^126. */
static inline int dq__scales_ok(const dq__cfg *c, const uint8_t *scales, size_t b0, size_t b1) {
    size_t k;
    for (k = b0; k < b1; k++) {
        if (dq__ld32(scales + 4u * k) > DQ__MAX_SCALE_BITS) return 0; /* negative, above 2^126, Inf or NaN */
        if (c->tm && (dq__ld32(scales + 4u * (c->nbuckets + k)) ^ 0x80000000u) > DQ__MAX_SCALE_BITS) return 0;
    }
    return 1;
}
/* Decoding, shared by dq__decode_body and the typed decoder. The values of bucket k: the step
 * (uniform levels), the scale (table schemes) or the non-negative mean (two-means) in v[0],
 * and the negative mean in v[1] (two-means; 0 otherwise). */
static inline void dq__bucket_vals(const dq__cfg *c, const uint8_t *scales, size_t k, float *v) {
    float sc = dq__bitsf(dq__ld32(scales + 4u * k));
    v[0] = c->table ? sc : dq__step(c->bits, sc);
    v[1] = c->tm ? dq__bitsf(dq__ld32(scales + 4u * (c->nbuckets + k))) : 0.0f;
}
/* The walk through the buckets of a run of blocks: bi the next bucket to enter, bend the end of
 * the current one, cur its values. */
typedef struct dq__walk {
    size_t bi, bend;
    float cur[2];
} dq__walk;
static inline void dq__walk_start(dq__walk *k, const dq__cfg *c, size_t pos) {
    k->bi = pos / c->bucket;
    k->bend = pos;
    k->cur[0] = k->cur[1] = 0.0f;
}
/* Decode the full block at element pos: the 32 rows walk the buckets in order, no division per
 * row; rows never straddle a bucket (buckets are multiples of 8). */
static inline void dq__decode_block_at(const dq__cfg *c, const uint8_t *scales, const uint8_t *in, size_t pos,
                                       size_t *bi, size_t *bend, float *cur, float w, int add, float *out) {
    float rowstep[DQ__ROWS], rowneg[DQ__ROWS];
    unsigned r;
    if (pos >= *bend) {
        dq__bucket_vals(c, scales, *bi, cur);
        (*bi)++;
        *bend = *bi * c->bucket;
    }
    if (pos + DQ__BLOCK <= *bend) { /* one bucket: fills the compiler can vectorize, so the
                                     * kernels' vector loads of them are forwarded whole */
        for (r = 0; r < DQ__ROWS; r++) rowstep[r] = cur[0];
        for (r = 0; r < DQ__ROWS; r++) rowneg[r] = cur[1];
    } else {
        for (r = 0; r < DQ__ROWS; r++) {
            if (pos + r * DQ__LANES >= *bend) {
                dq__bucket_vals(c, scales, *bi, cur);
                (*bi)++;
                *bend = *bi * c->bucket;
            }
            rowstep[r] = cur[0];
            rowneg[r] = cur[1];
        }
    }
    if (c->table)
        dq__k_decode_block_tab(in, c->bits, c->tab, rowstep, w, add, out);
    else if (c->tm)
        dq__k_decode_block_tm(in, rowstep, rowneg, w, add, out);
    else
        dq__k_decode_block(in, c->bits, rowstep, w, add, out);
}
/* Full blocks [pos, end) from in (the block at pos first) into out[0..end-pos): the one loop
 * over blocks, for the fixed payload in place and for the runs a coded payload decodes into. */
static inline void dq__decode_blocks(const dq__cfg *cfg, const uint8_t *scales, const uint8_t *in, size_t pos,
                                     size_t end, dq__walk *k, float w, int add, float *out) {
    /* local copies: out (float *) cannot alias them, so the loop keeps the configuration and the
     * walk in registers instead of reloading them after every block it writes (13% at 2^16) */
    const dq__cfg lc = *cfg, *c = &lc;
    size_t bi = k->bi, bend = k->bend, blk = DQ__BLOCK_BYTES(c->bits), p;
    float cur[2];
    cur[0] = k->cur[0];
    cur[1] = k->cur[1];
    for (p = pos; p < end; p += DQ__BLOCK)
        dq__decode_block_at(c, scales, in + ((p - pos) / DQ__BLOCK) * blk, p, &bi, &bend, cur, w, add, out + (p - pos));
    k->bi = bi;
    k->bend = bend;
    k->cur[0] = cur[0];
    k->cur[1] = cur[1];
}
/* Decode the unpacked tail codes of elements [pos, end) into out[0..end-pos), bucket by bucket. */
static inline void dq__decode_tail(const dq__cfg *c, const uint8_t *scales, const uint32_t *codes, size_t pos,
                                   size_t end, float w, int add, float *out) {
    size_t i = pos;
    while (i < end) {
        size_t b_end = (i / c->bucket + 1u) * c->bucket, seg_end = b_end < end ? b_end : end;
        float v[2];
        dq__bucket_vals(c, scales, i / c->bucket, v);
        if (c->table)
            dq__decode_codes_tab(codes + (i - pos), seg_end - i, c->bits, c->tab, v[0], w, add, out + (i - pos));
        else if (c->tm)
            dq__decode_codes_tm(codes + (i - pos), seg_end - i, v[0], v[1], w, add, out + (i - pos));
        else
            dq__decode_codes(codes + (i - pos), seg_end - i, c->bits, v[0], w, add, out + (i - pos));
        i = seg_end;
    }
}
#define DQ__DEC_RUN 8u /* blocks a coded payload decodes into the fixed layout at a time (4 KiB at 16 bits) */
/* The blocks of [b0, b1) (b0 a multiple of the block) into out[0..b1-b0), from the fixed payload
 * in memory or, with cd, the blocks a coded payload produces in order (a stream across calls),
 * DQ__DEC_RUN at a time into the fixed layout, then decoded as the fixed payload is: the coder's
 * calls stay out of the loop over blocks. May start inside a bucket. */
static inline void dq__decode_run(const dq__cfg *c, const uint8_t *scales, const uint8_t *payload, dq__cdec *cd,
                                  size_t b0, size_t b1, float w, int add, float *out) {
    uint8_t run[DQ__DEC_RUN * DQ__BLOCK_BYTES(16u)];
    uint32_t codes[DQ__BLOCK];
    size_t blk = DQ__BLOCK_BYTES(c->bits), full = b1 - (b1 - b0) % DQ__BLOCK, pos, j, m;
    dq__walk k;
    dq__walk_start(&k, c, b0);
    if (!cd) {
        dq__decode_blocks(c, scales, payload + (b0 / DQ__BLOCK) * blk, b0, full, &k, w, add, out);
    } else {
        for (pos = b0; pos < full; pos += m * DQ__BLOCK) {
            m = (full - pos) / DQ__BLOCK < DQ__DEC_RUN ? (full - pos) / DQ__BLOCK : DQ__DEC_RUN;
            for (j = 0; j < m; j++) (void)dq__cdec_block(cd, run + j * blk);
            dq__decode_blocks(c, scales, run, pos, pos + m * DQ__BLOCK, &k, w, add, out + (pos - b0));
        }
    }
    if (full < b1) { /* the tail of the vector */
        dq__unpack_tail(cd ? dq__cdec_block(cd, run) : payload + (full / DQ__BLOCK) * blk, b1 - full, c->bits, codes);
        dq__decode_tail(c, scales, codes, full, b1, w, add, out + (full - b0));
    }
}
/* Decode the elements [begin, end) into out[0..end-begin) of dtype t, everything validated
 * before out is touched (but for a trusted coded stream, checked at its end). */
static inline dq_status dq__decode_body(const dq__cfg *cfg, const uint8_t *scales, const uint8_t *payload,
                                        dq__cdec *cd, size_t n, size_t begin, size_t end, float w, int add, dq_dtype t,
                                        void *out) {
    const dq__cfg *c = cfg;
    float buf[DQ__ELCHUNK];
    uint32_t codes[DQ__BLOCK];
    size_t b0, ch = dq__el_chunk(t == DQ_F32, end - begin);
    dq_status st;
    if (!dq__scales_ok(c, scales, begin / c->bucket, (end - 1u) / c->bucket + 1u)) return DQ_ERR_CORRUPT;
    if (cd) {
        if (!cd->trusted && (st = dq__cdec_validate(cd)) != DQ_OK) return st;
    } else if (end == n && n % DQ__BLOCK) { /* and the tail's padding bits */
        size_t full = n - n % DQ__BLOCK;
        if (!dq__unpack_tail(payload + (full / DQ__BLOCK) * DQ__BLOCK_BYTES(c->bits), n - full, c->bits, codes))
            return DQ_ERR_CORRUPT;
    }
    for (b0 = begin; b0 < end; b0 += ch) {
        size_t cnt = end - b0 < ch ? end - b0 : ch;
        float *o = dq__el_acc(t, out, b0 - begin, cnt, add, buf);
        dq__decode_run(c, scales, payload, cd, b0, b0 + cnt, w, add, o);
        dq__el_out(t, o, cnt, out, b0 - begin);
    }
    return cd && cd->trusted ? dq__cdec_end(cd) : DQ_OK;
}

/* Checks the scales and the tail padding of a fixed payload. */
static inline dq_status dq__fixed_check(const dq__cfg *c, size_t n, const uint8_t *scales, const uint8_t *payload) {
    uint32_t codes[DQ__BLOCK];
    size_t full = n - n % DQ__BLOCK;
    if (!dq__scales_ok(c, scales, 0, c->nbuckets)) return DQ_ERR_CORRUPT;
    if (full < n && !dq__unpack_tail(payload + (full / DQ__BLOCK) * DQ__BLOCK_BYTES(c->bits), n - full, c->bits, codes))
        return DQ_ERR_CORRUPT;
    return DQ_OK;
}

/* A whole unsegmented body (a message's, or a segment's: src is then its implied message, the
 * body 48 bytes on); `trusted`: a coded payload is decoded in one pass and checked at its end
 * (its checksum was verified, or it was checked already). */
static inline dq_status dq__lv_decode_as(const uint8_t *src, const dq_header *h, const dq__cfg *c, int trusted,
                                         float w, int add, dq_dtype t, void *out) {
    const dq__coder *row = &dq__coders[h->coder];
    const uint8_t *scales = src + DQ_HEADER_SIZE + row->head;
    if (row->open) {
        dq__cdec cd;
        if (dq__cdec_open(&cd, h->coder, h->bits, h->count, scales + c->prefix, h->payload_size) != DQ_OK)
            return DQ_ERR_CORRUPT;
        cd.trusted = trusted;
        return dq__decode_body(c, scales, NULL, &cd, h->count, 0, h->count, w, add, t, out);
    }
    return dq__decode_body(c, scales, scales + c->prefix, NULL, h->count, 0, h->count, w, add, t, out);
}
static inline dq_status dq__seg_decode(const uint8_t *msg, const dq_header *H, const dq__cfg *C, float w, int add,
                                       dq_dtype t, void *out);
/* The level family's decoder (the family table) of an opened message. */
static inline dq_status dq__lv_decode(const uint8_t *src, const dq_header *h, const dq__cfg *c, float w, int add,
                                      dq_dtype t, void *out) {
    if (h->flags & DQ_FLAG_SEGMENTS) return dq__seg_decode(src, h, c, w, add, t, out);
    return dq__lv_decode_as(src, h, c, (h->flags & DQ_FLAG_CHECKSUM) != 0, w, add, t, out); /* verified when opened */
}
/* The body of an opened message, whatever its family. */
static inline dq_status dq__decode_opened(const dq_message *m, float w, int add, dq_dtype t, void *out) {
    return dq__ops_wire(m->h.scheme)->decode(m->src, &m->h, &m->c, w, add, t, out);
}
/* Whole messages, out of dtype t: out_n elements (exactly the count for add). The output's
 * length is checked between the header and the body, as it always was. */
static inline dq_status dq__decode_msg(const void *src, size_t src_len, float w, int add, dq_dtype t, void *out,
                                       size_t out_n) {
    dq_message m;
    dq_status st;
    if (!src || !out) return DQ_ERR_NULL;
    if (!dq_dtype_size(t)) return DQ_ERR_PARAM;
    if ((st = dq__msg_parse((const uint8_t *)src, src_len, &m)) != DQ_OK) return st;
    if (add ? out_n != m.h.count : out_n < m.h.count) return add ? DQ_ERR_SIZE_MISMATCH : DQ_ERR_DST_TOO_SMALL;
    if ((st = dq__msg_open_body(&m, src_len, 1)) != DQ_OK) return st;
    return dq__decode_opened(&m, w, add, t, out);
}

/* Elements [begin, end) (a valid range) of an opened fixed body, or of a coded one whose parts
 * decode on their own (the coder row's range): checked, then decoded into out; with out NULL,
 * checked only. */
static inline dq_status dq__rng_opened(const uint8_t *src, const dq_header *h, const dq__cfg *c, size_t begin,
                                       size_t end, float w, int add, float *out) {
    const dq__coder *row = &dq__coders[h->coder];
    const uint8_t *scales = src + DQ_HEADER_SIZE + row->head;
    if (row->open) { /* the parts that hold the range: checked, then decoded */
        uint8_t tmp[DQ__BLOCK_BYTES(16u)];
        dq__cdec cd;
        if (!dq__scales_ok(c, scales, begin / c->bucket, (end - 1u) / c->bucket + 1u)) return DQ_ERR_CORRUPT;
        if (dq__cdec_open(&cd, h->coder, h->bits, h->count, scales + c->prefix, h->payload_size) != DQ_OK ||
            row->range(&cd, begin, end) != DQ_OK)
            return DQ_ERR_CORRUPT;
        if (!out) return DQ_OK;
        while (cd.k < begin / DQ__BLOCK) dq__cdec_block(&cd, tmp); /* the part's blocks before begin */
        dq__decode_run(c, scales, NULL, &cd, begin, end, w, add, out);
        return DQ_OK;
    }
    if (!out) { /* what dq__decode_body checks for this range */
        uint32_t codes[DQ__BLOCK];
        size_t full = h->count - h->count % DQ__BLOCK;
        if (!dq__scales_ok(c, scales, begin / c->bucket, (end - 1u) / c->bucket + 1u)) return DQ_ERR_CORRUPT;
        if (end == h->count && full < end &&
            !dq__unpack_tail(scales + c->prefix + (full / DQ__BLOCK) * DQ__BLOCK_BYTES(c->bits), end - full, c->bits,
                             codes))
            return DQ_ERR_CORRUPT;
        return DQ_OK;
    }
    return dq__decode_body(c, scales, scales + c->prefix, NULL, h->count, begin, end, w, add, DQ_F32, out);
}
static inline dq_status dq__seg_range(const dq_message *m, size_t begin, size_t end, float w, int add, float *out);
static inline dq_status dq__decode_rng(const void *src, size_t src_len, size_t begin, size_t end, float w, int add,
                                       float *out) {
    dq_message m;
    dq_status st;
    if (!src || !out) return DQ_ERR_NULL;
    if ((st = dq__open(src, src_len, 0, &m)) != DQ_OK) return st;
    if (!dq__is_levels(m.h.scheme)) return DQ_ERR_PARAM;
    if (m.h.flags & DQ_FLAG_SEGMENTS) return dq__seg_range(&m, begin, end, w, add, out);
    if (dq__coder_one_stream(m.h.coder)) return DQ_ERR_PARAM; /* read from its start */
    if (!dq__range_ok(&m.c, m.h.count, begin, end)) return DQ_ERR_RANGE;
    return dq__rng_opened(m.src, &m.h, &m.c, begin, end, w, add, out);
}

/* Adds the squares of the nb scales at src + off (the bytes present) to *sum. */
static inline dq_status dq__norm2_scales(const uint8_t *src, size_t src_len, size_t off, size_t nb, double *sum) {
    size_t i;
    if (src_len < off || (src_len - off) / 4u < nb) return DQ_ERR_TRUNCATED;
    for (i = 0; i < nb; i++) {
        uint32_t u = dq__ld32(src + off + 4u * i);
        double v;
        if (u > DQ__MAX_SCALE_BITS) return DQ_ERR_CORRUPT;
        v = (double)dq__bitsf(u);
        v = v * v;
        *sum += v;
    }
    return DQ_OK;
}
static inline dq_status dq__seg_norm2(const dq_message *m, size_t src_len, double *sum);
/* From the header and the scales alone: the size is not checked, the scales' bytes are. */
DQ_API dq_status dq_message_norm2(const void *src, size_t src_len, double *norm2) {
    dq_message m;
    dq_status st;
    double sum = 0.0;
    if (!src || !norm2) return DQ_ERR_NULL;
    if ((st = dq__msg_parse((const uint8_t *)src, src_len, &m)) != DQ_OK) return st;
    if (m.h.norm != DQ_NORM_L2 || !dq__is_levels(m.h.scheme)) return DQ_ERR_PARAM;
    if (m.h.flags & DQ_FLAG_SEGMENTS)
        st = dq__seg_norm2(&m, src_len, &sum);
    else
        st = dq__norm2_scales(m.src, src_len, DQ_HEADER_SIZE + dq__coders[m.h.coder].head, m.c.nbuckets, &sum);
    if (st != DQ_OK) return st;
    *norm2 = sum;
    return DQ_OK;
}

DQ_API dq_status dq_decode(const void *src, size_t src_len, float *out, size_t out_cap) {
    return dq__decode_msg(src, src_len, 1.0f, 0, DQ_F32, out, out_cap);
}
static inline dq_status dq__message_decode(const dq_message *m, float w, int add, float *out, size_t out_n) {
    if (!m || !out) return DQ_ERR_NULL;
    if (add ? out_n != m->h.count : out_n < m->h.count) return add ? DQ_ERR_SIZE_MISMATCH : DQ_ERR_DST_TOO_SMALL;
    return dq__decode_opened(m, w, add, DQ_F32, out);
}
DQ_API dq_status dq_message_decode(const dq_message *m, float *out, size_t out_cap) {
    return dq__message_decode(m, 1.0f, 0, out, out_cap);
}
DQ_API dq_status dq_message_decode_add(const dq_message *m, float weight, float *acc, size_t acc_len) {
    return dq__message_decode(m, weight, 1, acc, acc_len);
}
DQ_API dq_status dq_decode_add(const void *src, size_t src_len, float weight, float *acc, size_t acc_len) {
    return dq__decode_msg(src, src_len, weight, 1, DQ_F32, acc, acc_len);
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
    if (c.checksum || !dq__fixed_asked(p)) return DQ_ERR_PARAM;
    body = dq__size(&c, n, 0, &ok);
    if (!ok) return DQ_ERR_TOO_LARGE;
    if (src_len < body) return DQ_ERR_TRUNCATED;
    return dq__decode_body(&c, (const uint8_t *)src, (const uint8_t *)src + c.prefix, NULL, n, 0, n, w, add,
                           DQ_F32, out);
}
DQ_API dq_status dq_decode_block(const dq_params *p, const void *src, size_t src_len, size_t n, float *out) {
    return dq__decode_blk(p, src, src_len, n, 1.0f, 0, out);
}
DQ_API dq_status dq_decode_add_block(const dq_params *p, const void *src, size_t src_len, size_t n, float weight,
                                     float *acc) {
    return dq__decode_blk(p, src, src_len, n, weight, 1, acc);
}
/* ---------------------------------------------------------------- re-coding a written message (FORMAT 17.4)
 * dq_recode converts an unsegmented level-scheme message between the fixed layout and a coded
 * form, and dq_coded_size gives the size it would write: the message opened and its body checked
 * whole (message.h, decode.h), the planner's choice with every candidate sized exactly
 * (planner.h), the coded payload written from the source into dst and the body closed as
 * dq_encode closes its own; or the blocks a coded payload decodes to, in place of it. */

/* Opens a message for re-coding: header, size, checksum, then the whole body's validity; *coder
 * (as dq_recode takes it) resolved to a coder id or DQ_CODER_AUTO. */
static inline dq_status dq__recode_open(const void *src, size_t src_len, unsigned *coder, dq_message *m, dq__cdec *cd) {
    const dq_header *h = &m->h;
    const dq__coder *row;
    const uint8_t *scales;
    dq_status st;
    if ((st = dq__open(src, src_len, 1, m)) != DQ_OK) return st;
    if (!dq__is_levels(h->scheme) || (h->flags & DQ_FLAG_SEGMENTS)) return DQ_ERR_PARAM; /* unsegmented level schemes */
    if ((st = dq__coder_recode(coder, h->coder, h->bits)) != DQ_OK) return st;
    m->c.checksum = (h->flags & DQ_FLAG_CHECKSUM) ? 1u : 0u;
    row = &dq__coders[h->coder];
    scales = m->src + DQ_HEADER_SIZE + row->head;
    if (!row->open) return dq__fixed_check(&m->c, h->count, scales, scales + m->c.prefix);
    if ((st = dq__fixed_check(&m->c, 0, scales, NULL)) != DQ_OK) return st;
    if (dq__cdec_open(cd, h->coder, h->bits, h->count, scales + m->c.prefix, h->payload_size) != DQ_OK)
        return DQ_ERR_CORRUPT;
    return dq__cdec_validate(cd);
}
/* The coder dq_recode writes for an opened message and `coder` (resolved): the message's own,
 * the fixed layout, or from a fixed message what the planner picks, every candidate sized
 * exactly (the symbol counts counted here, in one pass); DQ_ERR_PARAM when Elias cannot carry
 * a negative-zero code. */
static inline dq_status dq__recode_target(const dq_message *m, unsigned coder, dq__plan *pl, unsigned *target) {
    dq__plan_in in;
    uint64_t counts[256];
    *target = coder;
    if (!dq__coder_may_code(coder) || coder == m->h.coder) return DQ_OK;
    in.bits = m->h.bits;
    in.n = m->h.count;
    in.crc = m->c.checksum ? 4u : 0u;
    in.fixed = ((uint64_t)in.n * in.bits + 7u) / 8u;
    in.payload = m->src + DQ_HEADER_SIZE + m->c.prefix;
    in.counts = NULL;
    in.gaps = NULL;
    if (dq__plan_needs(coder, in.bits, in.n) & DQ__PS_COUNTS) {
        dq__sym_count(in.bits, in.n, in.payload, counts);
        in.counts = counts;
    }
    dq__plan_make(&in, coder, 1, 0, 0, pl);
    *target = pl->coder;
    return pl->size[pl->coder] ? DQ_OK : DQ_ERR_PARAM;
}
/* A copy of a message's header with another coder byte (and its CRC). */
static inline void dq__header_copy(const uint8_t *in, unsigned coder, uint8_t *out) {
    memcpy(out, in, DQ__H_CRC);
    out[DQ__H_CODER] = (uint8_t)coder;
    dq__st32(out + DQ__H_CRC, dq__crc32c(out, DQ__H_CRC));
}

DQ_API dq_status dq_coded_size(const void *src, size_t src_len, unsigned coder, size_t *size) {
    dq_message m;
    dq__cdec cd;
    dq__plan pl;
    dq_status st;
    unsigned to;
    int ok;
    if (!src || !size) return DQ_ERR_NULL;
    if ((st = dq__recode_open(src, src_len, &coder, &m, &cd)) != DQ_OK) return st;
    if ((st = dq__recode_target(&m, coder, &pl, &to)) != DQ_OK) return st;
    if (to == m.h.coder)
        *size = m.h.msg_size;
    else if (!dq__coders[to].head) /* the fixed layout */
        *size = dq__size(&m.c, m.h.count, 1, &ok);
    else
        *size = DQ_HEADER_SIZE + m.c.prefix + (size_t)pl.size[to] + (m.c.checksum ? 4u : 0u);
    return DQ_OK;
}

DQ_API dq_status dq_recode(const void *src, size_t src_len, unsigned coder, void *dst, size_t dst_cap,
                           size_t *dst_len) {
    const uint8_t *in = (const uint8_t *)src;
    uint8_t *out = (uint8_t *)dst;
    dq_message m;
    dq__cdec cd;
    dq__plan pl;
    dq_status st;
    size_t sc, size, crc;
    unsigned to;
    int ok;
    if (!src || !dst || !dst_len) return DQ_ERR_NULL;
    if ((st = dq__recode_open(src, src_len, &coder, &m, &cd)) != DQ_OK) return st;
    if ((st = dq__recode_target(&m, coder, &pl, &to)) != DQ_OK) return st;
    sc = m.c.prefix;
    crc = m.c.checksum ? 4u : 0u;
    if (to == m.h.coder) { /* nothing to re-code: AUTO found nothing smaller, or a forced coder was larger */
        if (dst_cap < m.h.msg_size) return DQ_ERR_DST_TOO_SMALL;
        memcpy(out, in, m.h.msg_size);
        *dst_len = m.h.msg_size;
        return DQ_OK;
    }
    if (!dq__coders[to].head) { /* coded -> fixed: the blocks the payload decodes to */
        size_t k, nblk = (m.h.count + DQ__BLOCK - 1u) / DQ__BLOCK;
        size = dq__size(&m.c, m.h.count, 1, &ok);
        if (dst_cap < size) return DQ_ERR_DST_TOO_SMALL;
        memcpy(out + DQ_HEADER_SIZE, in + DQ_HEADER_SIZE + dq__coders[m.h.coder].head, sc);
        for (k = 0; k < nblk; k++) (void)dq__cdec_block(&cd, out + DQ_HEADER_SIZE + sc + k * DQ__BLOCK_BYTES(m.h.bits));
    } else { /* fixed -> coded, from the source's fixed payload into dst */
        dq__plan_in pin;
        size_t L, len = (size_t)pl.size[to] - 8u;
        size = DQ_HEADER_SIZE + sc + (size_t)pl.size[to] + crc;
        if (dst_cap < size) return DQ_ERR_DST_TOO_SMALL;
        pin.bits = m.h.bits;
        pin.n = m.h.count;
        pin.crc = (unsigned)crc;
        pin.fixed = ((uint64_t)pin.n * pin.bits + 7u) / 8u;
        pin.payload = in + DQ_HEADER_SIZE + sc;
        pin.counts = pin.gaps = NULL;
        L = dq__coders[to].write(&pin, &pl, out + DQ_HEADER_SIZE + 8u + sc, len, 0, 0);
        if (L != len) return DQ_ERR_CORRUPT; /* unreachable: sized exactly */
        (void)dq__body_close(out + DQ_HEADER_SIZE, in + DQ_HEADER_SIZE, sc, L);
    }
    dq__header_copy(in, to, out);
    if (crc) dq__st32(out + size - 4u, dq__body_crc(out, size));
    *dst_len = size;
    return DQ_OK;
}
/* ---------------------------------------------------------------- jobs: one message by parts
 * The one-call encoder's steps (encode.h), cut at its two global points: the plan needs every
 * part's statistics, and each part's coded bytes land after all earlier parts'. Each part
 * quantizes its elements into dst in the fixed layout, gathering its statistics as it goes (the
 * symbol counts, and for AUTO the gap counts, so the plan may skip Elias' pass); the plan is the
 * planner's, from their sums; a coder whose payload is a head and independent parts (the coder
 * row's part ops: rANS chunks) codes each part into its own slot of work, bounded from the
 * part's counts; the last step writes the payload (the head and the parts' bytes, or the whole
 * payload for a one-stream coder, Elias, from a copy of the fixed payload in work since dst has
 * no room to spare), closes the body and writes the header, once. work holds the state (the
 * plan, a record per part: memcpy in and out, so work needs no alignment) and the slots. */
typedef struct dq__jrec {
    uint64_t cnt[256];       /* the part's symbol counts */
    uint64_t gaps[7];        /* its full blocks' gap counts (dq__k_elias_gaps), for AUTO */
    uint64_t slot, cap, beg; /* its bytes: work[JOB_SLOTS + slot + beg .. + cap) */
    int quantized, coded;
    dq_status st;            /* dq_job_quantize's */
} dq__jrec;
typedef struct dq__jstate {
    dq__plan pl;
    int def_crc;
} dq__jstate;
#define DQ__JOB_STATE ((sizeof(dq__jstate) + 7u) & ~(size_t)7u)
#define DQ__JOB_REC ((sizeof(dq__jrec) + 7u) & ~(size_t)7u)

/* The job's resolved params: *c with the checksum the message carries (the default's included,
 * *def_crc = 1 then). */
static inline dq_status dq__job_cfg(const dq_params *p, size_t n, size_t dst_cap, dq__cfg *c, int *def_crc) {
    dq_status st;
    if ((st = dq__cfg_make(p, n, c)) != DQ_OK) return st;
    *def_crc = 0;
    if (dq__default_crc(p, c)) {
        int ok;
        size_t size = dq__size(c, n, 1, &ok);
        if (ok && dst_cap >= size + 4u) *def_crc = 1;
    }
    if (*def_crc) c->checksum = 1u;
    return DQ_OK;
}
/* The part unit (elements): the range unit, and whole parts of every candidate coder that codes
 * in parts (rANS chunks, a power of two elements). */
static inline size_t dq__job_unit(const dq__cfg *c, size_t n) {
    uint64_t a = dq__align(c, n), u = a;
    unsigned k;
    for (k = 1; k < DQ__NCODERS; k++)
        if (dq__coders[k].part_elems && dq__plan_may(k, c->coder, c->bits, n)) {
            uint64_t e = dq__coders[k].part_elems(c->bits), g = u & (~u + 1u); /* u's power-of-two factor */
            u = g >= e ? u : u / g * e;
        }
    return u < (uint64_t)n ? (size_t)u : n;
}
static inline size_t dq__job_parts(size_t n, size_t unit, size_t parts) {
    size_t units = n / unit + (n % unit != 0);
    return parts < units ? parts : units;
}
/* The state, the records, and the most work bytes a candidate coder keeps. */
static inline uint64_t dq__job_bytes(const dq__cfg *c, size_t n, size_t parts) {
    uint64_t data = 0, x;
    unsigned k;
    for (k = 1; k < DQ__NCODERS; k++)
        if (dq__plan_may(k, c->coder, c->bits, n) && (x = dq__coders[k].work(n, c->bits)) > data) data = x;
    return DQ__JOB_STATE + (uint64_t)parts * DQ__JOB_REC + data;
}

DQ_API dq_status dq_job_work_size(const dq_params *p, size_t n, size_t parts, size_t *size) {
    dq__cfg c;
    dq_status st;
    int def_crc;
    uint64_t w;
    if (!p || !size) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if (parts == 0) return DQ_ERR_PARAM;
    if ((st = dq__job_cfg(p, n, 0, &c, &def_crc)) != DQ_OK) return st;
    w = dq__job_bytes(&c, n, dq__job_parts(n, dq__job_unit(&c, n), parts));
    if (w > (uint64_t)SIZE_MAX) return DQ_ERR_TOO_LARGE;
    *size = (size_t)w;
    return DQ_OK;
}

DQ_API dq_status dq_job_init(dq_job *job, const dq_params *p, size_t n, size_t parts, void *dst, size_t dst_cap,
                             void *work, size_t work_cap) {
    dq__cfg c;
    dq_status st;
    dq__jrec r;
    dq__jstate js;
    int def_crc, ok;
    size_t size, j;
    uint64_t need;
    if (!job || !p || !dst) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if (parts == 0) return DQ_ERR_PARAM;
    if ((st = dq__job_cfg(p, n, dst_cap, &c, &def_crc)) != DQ_OK) return st;
    size = dq__size(&c, n, 1, &ok);
    if (!ok) return DQ_ERR_TOO_LARGE;
    if (dst_cap < size) return DQ_ERR_DST_TOO_SMALL;
    job->unit = dq__job_unit(&c, n);
    job->units = n / job->unit + (n % job->unit != 0);
    job->parts = dq__job_parts(n, job->unit, parts);
    need = dq__job_bytes(&c, n, job->parts);
    if (need > (uint64_t)SIZE_MAX) return DQ_ERR_TOO_LARGE;
    if (!work) return DQ_ERR_NULL;
    if (work_cap < need) return DQ_ERR_WORKSPACE;
    job->p = *p;
    job->n = n;
    job->dst = (uint8_t *)dst;
    job->dst_cap = dst_cap;
    job->work = (uint8_t *)work;
    job->work_cap = work_cap;
    memset(&js, 0, sizeof js);
    js.def_crc = def_crc;
    memcpy(job->work, &js, sizeof js);
    memset(&r, 0, sizeof r);
    for (j = 0; j < job->parts; j++) memcpy(job->work + DQ__JOB_STATE + j * DQ__JOB_REC, &r, sizeof r);
    job->phase = 1;
    return DQ_OK;
}

/* Part j's elements: the units shared out, the first ones one more. */
static inline void dq__job_elems(const dq_job *job, size_t j, size_t *begin, size_t *end) {
    size_t q = job->units / job->parts, r = job->units % job->parts, u0 = j * q + (j < r ? j : r);
    size_t u1 = u0 + q + (j < r);
    *begin = u0 * job->unit;
    *end = u1 * job->unit < job->n ? u1 * job->unit : job->n;
}
DQ_API dq_status dq_job_range(const dq_job *job, size_t j, size_t *begin, size_t *end) {
    if (!job || !begin || !end) return DQ_ERR_NULL;
    if (!job->parts || j >= job->parts) return DQ_ERR_PARAM;
    dq__job_elems(job, j, begin, end);
    return DQ_OK;
}
/* What the planner reads of the job's message (its counts apart). */
static inline void dq__job_in(const dq_job *job, const dq__cfg *c, dq__plan_in *in) {
    in->bits = c->bits;
    in->n = job->n;
    in->crc = c->checksum ? 4u : 0u;
    in->fixed = ((uint64_t)job->n * c->bits + 7u) / 8u;
    in->payload = job->dst + DQ_HEADER_SIZE + c->prefix;
    in->counts = in->gaps = NULL;
}

DQ_API dq_status dq_job_quantize(const dq_job *job, size_t j, const float *x, float *residual) {
    dq__cfg c;
    dq__jrec r;
    dq__gather g;
    dq_status st;
    int def_crc;
    unsigned need;
    size_t begin, end, at;
    if (!job || !x) return DQ_ERR_NULL;
    if (job->phase != 1u || j >= job->parts) return DQ_ERR_PARAM;
    if ((st = dq__job_cfg(&job->p, job->n, job->dst_cap, &c, &def_crc)) != DQ_OK) return st;
    dq__job_elems(job, j, &begin, &end);
    at = DQ__JOB_STATE + j * DQ__JOB_REC;
    memcpy(&r, job->work + at, sizeof r);
    if (r.quantized) return DQ_ERR_PARAM;
    need = dq__plan_needs(c.coder, c.bits, job->n);
    if (need)
        dq__gather_init(&g, c.bits, job->n, begin / DQ__BLOCK, r.cnt, (need & DQ__PS_GAPS) ? r.gaps : NULL);
    st = dq__lv_body(&c, &job->p, job->n, begin, end, DQ_F32, x + begin, DQ_F32, residual ? residual + begin : NULL,
                     job->dst + DQ_HEADER_SIZE, need ? &g : NULL);
    if (need) dq__gather_end(&g);
    r.quantized = 1;
    r.st = st;
    memcpy(job->work + at, &r, sizeof r);
    return st;
}

DQ_API dq_status dq_job_plan(dq_job *job) {
    dq__cfg c;
    dq__jrec r;
    dq__jstate js;
    dq__plan_in in;
    dq_status st;
    int def_crc;
    unsigned need;
    uint64_t cnt[256], gaps[7], slot = 0;
    size_t j, s, A;
    const dq__coder *row;
    if (!job) return DQ_ERR_NULL;
    if (job->phase != 1u) return DQ_ERR_PARAM;
    if ((st = dq__job_cfg(&job->p, job->n, job->dst_cap, &c, &def_crc)) != DQ_OK) return st;
    job->phase = 0; /* until it succeeds */
    need = dq__plan_needs(c.coder, c.bits, job->n);
    A = (size_t)1 << dq__sym_bits(c.bits <= 8u ? c.bits : 8u);
    memset(cnt, 0, sizeof cnt);
    memset(gaps, 0, sizeof gaps);
    for (j = 0; j < job->parts; j++) {
        memcpy(&r, job->work + DQ__JOB_STATE + j * DQ__JOB_REC, sizeof r);
        if (!r.quantized) return DQ_ERR_PARAM;
        if (r.st != DQ_OK) return r.st;
        if (need)
            for (s = 0; s < A; s++) cnt[s] += r.cnt[s];
        if (need & DQ__PS_GAPS)
            for (s = 0; s < 7; s++) gaps[s] += r.gaps[s];
    }
    memcpy(&js, job->work, sizeof js);
    dq__job_in(job, &c, &in);
    in.counts = need ? cnt : NULL;
    in.gaps = (need & DQ__PS_GAPS) ? gaps : NULL;
    dq__plan_make(&in, c.coder, 0, UINT64_MAX, js.def_crc, &js.pl);
    row = &dq__coders[js.pl.coder];
    if (row->part) { /* slots from each part's bound */
        for (j = 0; j < job->parts; j++) {
            size_t begin, end;
            memcpy(&r, job->work + DQ__JOB_STATE + j * DQ__JOB_REC, sizeof r);
            dq__job_elems(job, j, &begin, &end);
            r.slot = slot;
            r.cap = row->part_cap(r.cnt, &js.pl, c.bits, end - begin);
            slot += r.cap;
            memcpy(job->work + DQ__JOB_STATE + j * DQ__JOB_REC, &r, sizeof r);
        }
        if (slot > row->work(job->n, c.bits)) return DQ_ERR_CORRUPT;
    }
    memcpy(job->work, &js, sizeof js);
    job->phase = 2;
    return DQ_OK;
}

DQ_API dq_status dq_job_code(const dq_job *job, size_t j) {
    dq__jstate js;
    dq__jrec r;
    dq__cfg c;
    dq__plan_in in;
    size_t at, begin, end, L;
    const dq__coder *row;
    if (!job) return DQ_ERR_NULL;
    if (job->phase != 2u || j >= job->parts) return DQ_ERR_PARAM;
    at = DQ__JOB_STATE + j * DQ__JOB_REC;
    memcpy(&js, job->work, sizeof js);
    memcpy(&r, job->work + at, sizeof r);
    if (r.coded) return DQ_ERR_PARAM;
    row = &dq__coders[js.pl.coder];
    if (row->part) { /* from the part's last piece, each below the ones after it, at the end of its slot */
        (void)dq__cfg_make(&job->p, job->n, &c);
        dq__job_in(job, &c, &in);
        dq__job_elems(job, j, &begin, &end);
        L = row->part(&in, &js.pl, begin, end,
                      job->work + DQ__JOB_STATE + job->parts * DQ__JOB_REC + (size_t)r.slot, (size_t)r.cap);
        if (!L) return DQ_ERR_CORRUPT; /* unreachable: the slot is the part's bound */
        r.beg = r.cap - L;
    }
    r.coded = 1;
    memcpy(job->work + at, &r, sizeof r);
    return DQ_OK;
}

DQ_API dq_status dq_job_finish(dq_job *job, size_t *dst_len) {
    dq__cfg c;
    dq__jstate js;
    dq__jrec r;
    dq__plan_in in;
    dq_status st;
    int def_crc;
    size_t crc, sc, j, body, slots, cap, L = 0, len;
    uint8_t *out, *pay;
    const dq__coder *row;
    if (!job || !dst_len) return DQ_ERR_NULL;
    if (job->phase != 2u) return DQ_ERR_PARAM;
    if ((st = dq__job_cfg(&job->p, job->n, job->dst_cap, &c, &def_crc)) != DQ_OK) return st;
    out = job->dst;
    sc = c.prefix;
    crc = c.checksum ? 4u : 0u;
    memcpy(&js, job->work, sizeof js);
    for (j = 0; j < job->parts; j++) {
        memcpy(&r, job->work + DQ__JOB_STATE + j * DQ__JOB_REC, sizeof r);
        if (!r.coded) return DQ_ERR_PARAM;
    }
    job->phase = 0;
    row = &dq__coders[js.pl.coder];
    slots = DQ__JOB_STATE + job->parts * DQ__JOB_REC;
    dq__job_in(job, &c, &in);
    body = sc + (size_t)in.fixed;
    if (row->head) {
        if (DQ_HEADER_SIZE + row->head + sc > job->dst_cap - crc)
            return DQ_ERR_DST_TOO_SMALL; /* unreachable, as below */
        pay = out + DQ_HEADER_SIZE + row->head + sc;
        cap = job->dst_cap - crc - (DQ_HEADER_SIZE + row->head + sc);
        if (row->part) { /* the head, then the parts' bytes in order */
            L = row->head_write(&js.pl, c.bits, pay);
            for (j = 0; j < job->parts; j++) {
                memcpy(&r, job->work + DQ__JOB_STATE + j * DQ__JOB_REC, sizeof r);
                len = (size_t)(r.cap - r.beg);
                if (L > cap || len > cap - L) return DQ_ERR_DST_TOO_SMALL; /* unreachable: smaller than fixed */
                memcpy(pay + L, job->work + slots + (size_t)(r.slot + r.beg), len);
                L += len;
            }
        } else { /* one stream, from a copy of the fixed payload */
            memcpy(job->work + slots, in.payload, (size_t)in.fixed);
            in.payload = job->work + slots;
            L = row->write(&in, &js.pl, pay, cap, 0, 0);
            if (!L) return DQ_ERR_DST_TOO_SMALL; /* unreachable: smaller than fixed */
        }
        body = dq__body_close(out + DQ_HEADER_SIZE, out + DQ_HEADER_SIZE, sc, L);
    }
    *dst_len =
        dq__message_close(&c, &job->p, job->n, js.pl.coder, dq__crc_sent(crc != 0, def_crc, js.pl.coder), out, body);
    return DQ_OK;
}
/* ---------------------------------------------------------------- segmented messages (FORMAT 24)
 * A segment reads as a message of its own whose header is implied: its fields come from the
 * message's header and the segment's entry, and its body sits where a lone message's body would
 * follow a header. So every decoder above serves a segment unchanged, and the encoder writes
 * each segment's body as dq_encode writes a message's (dq__lv_encode_body), in place. The table
 * is parsed once, when the message is opened (every entry validated, the header's fields with
 * them); the decoders' walks (dq__seg_next) read each entry's fields and derive the segment's
 * configuration from the message's without checking them again. */
#define DQ__SEG_TABLE (DQ_HEADER_SIZE + 8u) /* the first entry: after m and the entries' CRC */
#define DQ__SEG_ENTRY 24u
typedef struct dq__seg {
    dq_header h; /* the implied header: no checksum, one segment */
    dq__cfg c;
    const uint8_t *src; /* body - 48, inside the message (the table precedes every body) */
    size_t first;       /* index of its first element in the vector */
} dq__seg;
typedef struct dq__segwalk {
    size_t j, off, first; /* the next segment, its body's offset and first element */
} dq__segwalk;

/* A segment's configuration, from the message's (QSGD, its bucket) and the entry's fields: what
 * dq__cfg_make2 gives for them, without going through the params again. */
static inline void dq__seg_cfg(const dq__cfg *base, unsigned bits, unsigned coder, size_t cnt, size_t first,
                               dq__cfg *c) {
    *c = *base;
    c->bits = bits;
    c->coder = coder;
    c->bucket = base->bucket_wire ? (size_t)base->bucket_wire : cnt;
    c->nbuckets = (cnt - 1u) / c->bucket + 1u;
    c->prefix = 4u * c->nbuckets;
    c->first = first;
}
/* Entry e checked against the message's header H and configuration C (FORMAT 24.2). */
static inline dq_status dq__seg_entry(const uint8_t *e, const dq_header *H, const dq__cfg *C, uint64_t *cnt,
                                      uint64_t *bytes) {
    unsigned bits = e[16], coder = e[17], i;
    const dq__coder *row = dq__coder_row(coder);
    dq__cfg c;
    *cnt = dq__ld64(e);
    *bytes = dq__ld64(e + 8);
    for (i = 18; i < DQ__SEG_ENTRY; i++)
        if (e[i]) return DQ_ERR_CORRUPT;
    if (*cnt == 0 || *cnt > (uint64_t)H->count || bits < 2u || bits > 16u || !dq__coder_part_ok(coder, bits))
        return DQ_ERR_CORRUPT;
    dq__seg_cfg(C, bits, coder, (size_t)*cnt, 0, &c);
    if (!row->head) return *bytes == c.prefix + (*cnt * bits + 7u) / 8u ? DQ_OK : DQ_ERR_CORRUPT;
    if (*bytes < row->head + c.prefix || *bytes - row->head - c.prefix > row->bound(*cnt, bits)) return DQ_ERR_CORRUPT;
    return DQ_OK;
}

/* dq__lv_header for a segmented message (flags bit 3): the header's fields, then the table, every
 * entry parsed once; the walks below read their fields without checking them again. */
static inline dq_status dq__seg_header(const uint8_t *in, size_t src_len, uint64_t count, dq_header *h, dq__cfg *c) {
    dq_params p;
    uint64_t sum = 0, total, cnt, bytes;
    size_t m, j;
    unsigned maxb = 0;
    dq_status st;
    if (h->scheme != DQ_SCHEME_QSGD || h->coder != DQ_CODER_FIXED || h->bits < 2u || h->bits > 16u ||
        !dq__norm_ok(h->scheme, in[DQ__H_NORM]) ||
        (h->flags & ~(DQ_FLAG_STOCHASTIC | DQ_FLAG_CHECKSUM | DQ_FLAG_SEGMENTS)) != 0 || (h->bucket % 8u) != 0)
        return DQ_ERR_CORRUPT;
    if (dq__count_set(count, h) != DQ_OK) return DQ_ERR_TOO_LARGE;
    memset(&p, 0, sizeof p); /* the whole vector's configuration (no level table), which the segments' derive from */
    p.bits = h->bits;
    p.bucket = h->bucket ? h->bucket : DQ_BUCKET_WHOLE;
    if (dq__cfg_make2(&p, h->count, 1, c) != DQ_OK) return DQ_ERR_CORRUPT;
    if (src_len < DQ__SEG_TABLE) return DQ_ERR_TRUNCATED;
    m = (size_t)dq__ld32(in + DQ_HEADER_SIZE);
    if (m == 0 || m > DQ_SEGMENTS_MAX || (uint64_t)m > count) return DQ_ERR_CORRUPT;
    if ((src_len - DQ__SEG_TABLE) / DQ__SEG_ENTRY < m) return DQ_ERR_TRUNCATED;
    if (dq__ld32(in + DQ_HEADER_SIZE + 4u) != dq__crc32c(in + DQ__SEG_TABLE, DQ__SEG_ENTRY * m)) return DQ_ERR_CHECKSUM;
    total = DQ__SEG_TABLE + (uint64_t)DQ__SEG_ENTRY * m;
    for (j = 0; j < m; j++) {
        if ((st = dq__seg_entry(in + DQ__SEG_TABLE + DQ__SEG_ENTRY * j, h, c, &cnt, &bytes)) != DQ_OK) return st;
        if (cnt > count - sum) return DQ_ERR_CORRUPT;
        sum += cnt;
        if (in[DQ__SEG_TABLE + DQ__SEG_ENTRY * j + 16u] > maxb) maxb = in[DQ__SEG_TABLE + DQ__SEG_ENTRY * j + 16u];
        total += bytes; /* no wrap: each body is below 2^60 */
    }
    if (sum != count || maxb != h->bits) return DQ_ERR_CORRUPT;
    if (h->flags & DQ_FLAG_CHECKSUM) total += 4u;
    if (total > (uint64_t)SIZE_MAX) return DQ_ERR_TOO_LARGE;
    h->segments = m;
    h->msg_size = (size_t)total;
    h->payload_size = h->msg_size - DQ__SEG_TABLE - DQ__SEG_ENTRY * m - ((h->flags & DQ_FLAG_CHECKSUM) ? 4u : 0u);
    return DQ_OK;
}

static inline void dq__seg_start(const dq_header *H, dq__segwalk *w) {
    w->j = 0;
    w->off = DQ__SEG_TABLE + DQ__SEG_ENTRY * H->segments;
    w->first = 0;
}
/* The walk's segment of an opened message (its entries validated, its bytes present), and a step
 * past it. `check`: the one check of a body the table implies, its coded payload's length,
 * made on the walk that checks the bodies. */
static inline dq_status dq__seg_next(const uint8_t *msg, const dq_header *H, const dq__cfg *C, dq__segwalk *w,
                                     dq__seg *s, int check) {
    const uint8_t *e = msg + DQ__SEG_TABLE + DQ__SEG_ENTRY * w->j;
    size_t cnt = (size_t)dq__ld64(e), bytes = (size_t)dq__ld64(e + 8);
    unsigned head = dq__coders[e[17]].head;
    dq__seg_cfg(C, e[16], e[17], cnt, w->first, &s->c);
    s->h = *H;
    s->h.bits = e[16];
    s->h.coder = e[17];
    s->h.flags = H->flags & DQ_FLAG_STOCHASTIC;
    s->h.count = s->h.nnz = cnt;
    s->h.segments = 1;
    s->h.msg_size = DQ_HEADER_SIZE + bytes;
    s->h.payload_size = bytes - head - s->c.prefix;
    s->src = msg + w->off - DQ_HEADER_SIZE;
    s->first = w->first;
    w->j++;
    w->off += bytes;
    w->first += cnt;
    if (check && head && dq__ld64(s->src + DQ_HEADER_SIZE) != (uint64_t)s->h.payload_size) return DQ_ERR_CORRUPT;
    return DQ_OK;
}
/* Everything a decode of segment s would check, without decoding into anything. */
static inline dq_status dq__seg_check(const dq__seg *s) {
    const dq__coder *row = &dq__coders[s->h.coder];
    const uint8_t *scales = s->src + DQ_HEADER_SIZE + row->head;
    dq__cdec cd;
    if (!row->open) return dq__fixed_check(&s->c, s->h.count, scales, scales + s->c.prefix);
    if (!dq__scales_ok(&s->c, scales, 0, s->c.nbuckets) ||
        dq__cdec_open(&cd, s->h.coder, s->h.bits, s->h.count, scales + s->c.prefix, s->h.payload_size) != DQ_OK)
        return DQ_ERR_CORRUPT;
    return dq__cdec_validate(&cd);
}

/* Whole segmented messages: every segment checked before out is written, except the coded ones
 * under a verified checksum, which decode in one pass (FORMAT 17.4's exception). */
static inline dq_status dq__seg_decode(const uint8_t *msg, const dq_header *H, const dq__cfg *C, float w, int add,
                                       dq_dtype t, void *out) {
    int trusted = (H->flags & DQ_FLAG_CHECKSUM) != 0;
    size_t es = dq_dtype_size(t);
    dq__segwalk wk;
    dq__seg s;
    dq_status st;
    for (dq__seg_start(H, &wk); wk.j < H->segments;) {
        if ((st = dq__seg_next(msg, H, C, &wk, &s, 1)) != DQ_OK) return st;
        if ((!trusted || !dq__coders[s.h.coder].open) && (st = dq__seg_check(&s)) != DQ_OK) return st;
    }
    for (dq__seg_start(H, &wk); wk.j < H->segments;) {
        (void)dq__seg_next(msg, H, C, &wk, &s, 0);
        if ((st = dq__lv_decode_as(s.src, &s.h, &s.c, 1, w, add, t, (uint8_t *)out + s.first * es)) != DQ_OK)
            return st;
    }
    return DQ_OK;
}

/* Ranges: each segment's part checked (alignment, then its body when the range spans several
 * segments) before anything is decoded. */
static inline dq_status dq__seg_range(const dq_message *m, size_t begin, size_t end, float w, int add, float *out) {
    const dq_header *H = &m->h;
    dq__segwalk wk;
    dq__seg s;
    dq_status st;
    int pass, many = 0;
    if (!(begin < end && end <= H->count)) return DQ_ERR_RANGE;
    for (pass = 0; pass < 3; pass++) { /* 0: alignment, 1: bodies (several segments), 2: decode */
        if (pass == 1 && !many) continue;
        for (dq__seg_start(H, &wk); wk.j < H->segments && wk.first < end;) {
            size_t lb, le;
            int whole;
            if ((st = dq__seg_next(m->src, H, &m->c, &wk, &s, pass == 0)) != DQ_OK) return st;
            if (s.first + s.h.count <= begin) continue;
            lb = begin > s.first ? begin - s.first : 0u;
            le = (end < s.first + s.h.count ? end : s.first + s.h.count) - s.first;
            whole = lb == 0 && le == s.h.count;
            if (pass == 0) {
                if (lb > 0 && s.first + s.h.count < end) many = 1;
                if (lb == 0 && s.first > begin) many = 1;
                if (!whole && dq__coder_one_stream(s.h.coder)) return DQ_ERR_PARAM;
                if (!whole && !dq__range_ok(&s.c, s.h.count, lb, le)) return DQ_ERR_RANGE;
            } else if (pass == 1) {
                if ((st = whole ? dq__seg_check(&s) : dq__rng_opened(s.src, &s.h, &s.c, lb, le, w, add, NULL)) != DQ_OK)
                    return st;
            } else if (whole) {
                if ((st = dq__lv_decode_as(s.src, &s.h, &s.c, many, w, add, DQ_F32, out + (s.first - begin))) != DQ_OK)
                    return st;
            } else if ((st = dq__rng_opened(s.src, &s.h, &s.c, lb, le, w, add, out + (s.first + lb - begin))) != DQ_OK) {
                return st;
            }
        }
    }
    return DQ_OK;
}

static inline dq_status dq__seg_norm2(const dq_message *m, size_t src_len, double *sum) {
    const dq_header *H = &m->h;
    dq__segwalk wk;
    dq__seg s;
    dq_status st;
    if (src_len < H->msg_size - ((H->flags & DQ_FLAG_CHECKSUM) ? 4u : 0u)) return DQ_ERR_TRUNCATED;
    for (dq__seg_start(H, &wk); wk.j < H->segments;) {
        if ((st = dq__seg_next(m->src, H, &m->c, &wk, &s, 1)) != DQ_OK) return st;
        if ((st = dq__norm2_scales(s.src, s.h.msg_size, DQ_HEADER_SIZE + dq__coders[s.h.coder].head, s.c.nbuckets,
                                   sum)) != DQ_OK)
            return st;
    }
    return DQ_OK;
}

DQ_API dq_status dq_segments_read(const void *src, size_t src_len, dq_segment *seg, size_t cap, size_t *m) {
    const uint8_t *in = (const uint8_t *)src;
    dq_header h;
    dq__cfg c;
    dq_status st;
    size_t j, first = 0;
    if (!src || !m || (cap && !seg)) return DQ_ERR_NULL;
    if ((st = dq__header_parse(in, src_len, &h, &c)) != DQ_OK) return st;
    if (!dq__is_levels(h.scheme)) return DQ_ERR_PARAM;
    *m = h.segments;
    if (cap < h.segments) return DQ_ERR_DST_TOO_SMALL;
    if (!(h.flags & DQ_FLAG_SEGMENTS)) {
        seg[0].count = h.count;
        seg[0].bits = h.bits;
        seg[0].coder = h.coder;
        seg[0].first = 0;
        seg[0].size = h.msg_size - DQ_HEADER_SIZE - ((h.flags & DQ_FLAG_CHECKSUM) ? 4u : 0u);
        return DQ_OK;
    }
    for (j = 0; j < h.segments; j++) { /* the entries, validated by the header parse */
        const uint8_t *e = in + DQ__SEG_TABLE + DQ__SEG_ENTRY * j;
        seg[j].count = (size_t)dq__ld64(e);
        seg[j].size = (size_t)dq__ld64(e + 8);
        seg[j].bits = e[16];
        seg[j].coder = e[17];
        seg[j].first = first;
        first += seg[j].count;
    }
    return DQ_OK;
}

/* Segment sg's params: its width, no checksum (the message carries one), the default resolved. */
static inline void dq__seg_params(const dq_params *p, const dq_segment *sg, dq_params *q) {
    *q = *p;
    q->bits = sg->bits;
    q->checksum = 0;
    q->coder = dq__coder_part(p->coder, sg->count);
}
/* Checks params and segments; *n the element count, *need the room encoding needs before it
 * starts (fixed layouts, forced coders' bounds), *cap dq_segments_capacity(). */
static inline dq_status dq__seg_plan(const dq_params *p, const dq_segment *seg, size_t m, size_t *n, size_t *need,
                                     size_t *cap) {
    uint64_t tot = 0, nd, cp;
    size_t j;
    int coded = 0;
    if (!p || !seg) return DQ_ERR_NULL;
    if (m == 0) return DQ_ERR_EMPTY;
    if (m > DQ_SEGMENTS_MAX || (p->scheme != DQ_SCHEME_DEFAULT && p->scheme != DQ_SCHEME_QSGD) || p->checksum > 1u)
        return DQ_ERR_PARAM;
    nd = cp = DQ__SEG_TABLE + (uint64_t)DQ__SEG_ENTRY * m;
    for (j = 0; j < m; j++) {
        dq_params q;
        dq__cfg c;
        dq_status st;
        size_t sz;
        int ok;
        if (seg[j].count == 0) return DQ_ERR_EMPTY;
        if (seg[j].bits < 2u || seg[j].bits > 16u) return DQ_ERR_BITS;
        if ((uint64_t)seg[j].count > DQ_MAX_ELEMS - tot) return DQ_ERR_TOO_LARGE;
        tot += seg[j].count;
        dq__seg_params(p, &seg[j], &q);
        if ((st = dq__cfg_make(&q, seg[j].count, &c)) != DQ_OK) return st;
        if ((st = dq__sized(&q, seg[j].count, 1, &sz)) != DQ_OK) return st;
        cp += sz - DQ_HEADER_SIZE;
        nd += dq__coder_forced(c.coder) ? sz - DQ_HEADER_SIZE : dq__size(&c, seg[j].count, 0, &ok);
        coded |= dq__coder_may_code(c.coder);
    }
    if (p->checksum || (dq__default_asked(p) && coded)) cp += 4u;
    if (p->checksum) nd += 4u;
    if (tot > (uint64_t)SIZE_MAX || cp > (uint64_t)SIZE_MAX) return DQ_ERR_TOO_LARGE;
    *n = (size_t)tot;
    *need = (size_t)nd;
    *cap = (size_t)cp;
    return DQ_OK;
}
DQ_API dq_status dq_segments_capacity(const dq_params *p, const dq_segment *seg, size_t m, size_t *size) {
    size_t n, need;
    if (!size) return DQ_ERR_NULL;
    return dq__seg_plan(p, seg, m, &n, &need, size);
}

DQ_API dq_status dq_encode_segments(const dq_params *p, const float *x, const dq_segment *seg, size_t m,
                                    float *residual, void *dst, size_t dst_cap, size_t *dst_len) {
    uint8_t *out = (uint8_t *)dst;
    size_t n, need, cap, j, off, first, crc;
    unsigned maxb = 0, norm = 0, flags = DQ_FLAG_SEGMENTS;
    int coded = 0;
    dq_status st;
    if (!x || !dst || !dst_len) return DQ_ERR_NULL;
    if ((st = dq__seg_plan(p, seg, m, &n, &need, &cap)) != DQ_OK) return st;
    if (dst_cap < need) return DQ_ERR_DST_TOO_SMALL;
    crc = p->checksum ? 4u : 0u;
    if (residual && m > 1) { /* the scales' failures, found before any residual moves (dst as scratch) */
        for (j = 0, first = 0; j < m; first += seg[j].count, j++) {
            dq_params q;
            dq__cfg c;
            dq__seg_params(p, &seg[j], &q);
            (void)dq__cfg_make(&q, seg[j].count, &c);
            if ((st = dq__lv_scales(&c, 0, seg[j].count, seg[j].count, DQ_F32, x + first, DQ_F32, residual + first,
                                    out, NULL, NULL)) != DQ_OK)
                return st;
        }
    }
    off = DQ__SEG_TABLE + DQ__SEG_ENTRY * m;
    for (j = 0, first = 0; j < m; first += seg[j].count, j++) {
        /* segment j's body is encoded in place, as a message's would be behind its header */
        uint8_t *e = out + DQ__SEG_TABLE + DQ__SEG_ENTRY * j;
        size_t body;
        unsigned coder;
        int scrc;
        dq_params q;
        dq__cfg c;
        dq__seg_params(p, &seg[j], &q);
        st = dq__lv_encode_body(&q, first, DQ_F32, x + first, seg[j].count, DQ_F32, residual ? residual + first : NULL,
                                out + off - DQ_HEADER_SIZE, dst_cap - crc - (off - DQ_HEADER_SIZE), &c, &coder, &scrc,
                                &body);
        if (st != DQ_OK) return st;
        norm = c.norm;
        memset(e, 0, DQ__SEG_ENTRY);
        dq__st64(e, (uint64_t)seg[j].count);
        dq__st64(e + 8, (uint64_t)body);
        e[16] = (uint8_t)seg[j].bits;
        e[17] = (uint8_t)coder;
        if (seg[j].bits > maxb) maxb = seg[j].bits;
        coded |= dq__coders[coder].head != 0;
        off += body;
    }
    if (!crc && dq__default_asked(p) && coded && dst_cap - off >= 4u) crc = 4u;
    if (p->rounding != DQ_ROUND_NEAREST) flags |= DQ_FLAG_STOCHASTIC;
    if (crc) flags |= DQ_FLAG_CHECKSUM;
    dq__st32(out + DQ_HEADER_SIZE, (uint32_t)m);
    dq__st32(out + DQ_HEADER_SIZE + 4u, dq__crc32c(out + DQ__SEG_TABLE, DQ__SEG_ENTRY * m));
    dq__put_header(out, DQ_SCHEME_QSGD, maxb, DQ_CODER_FIXED, norm, flags,
                   p->bucket == DQ_BUCKET_WHOLE ? 0u : (p->bucket ? p->bucket : DQ_BUCKET_DEFAULT), (uint64_t)n, p);
    if (crc) dq__st32(out + off, dq__crc32c(out + DQ_HEADER_SIZE, off - DQ_HEADER_SIZE));
    *dst_len = off + crc;
    return DQ_OK;
}


/* ---------------------------------------------------------------- sparse index streams
 * A sorted index set as a self-describing stream (doc/FORMAT.md 18): a 10-byte header, then the
 * body of one layout (gamma gaps, stream-vbyte gaps, a bitmap, Rice gaps). One scan sizes every
 * layout and checks the set, AUTO takes the smallest (dq__index_plan); each layout is a row of
 * dq__index_layouts (write, read, the least body a header may announce). sparse.h reads the
 * streams of its messages index by index with an iterator of its own. */

/* The largest RICE parameter for n (FORMAT 18.9): min(31, bit length of n - 1); from there every
 * gap minus one is below 2^r. */
static inline unsigned dq__rice_rmax(uint64_t n) {
    unsigned L = n > 1u ? dq__ilog2(n - 1u) + 1u : 0u;
    return L < 31u ? L : 31u;
}

/* The body sizes of a valid index set, by coder id ([0] unused), and the RICE parameter the
 * encoder writes; the scan validates the set. */
typedef struct dq__isizes {
    uint64_t body[5];
    unsigned rice;
} dq__isizes;

static inline dq_status dq__index_args(size_t k, uint64_t n, dq_index_coder coder) {
    if (n == 0) return DQ_ERR_EMPTY;
    if (n > DQ_INDEX_MAX_N) return DQ_ERR_TOO_LARGE;
    if ((uint64_t)k > n || (unsigned)coder > (unsigned)DQ_INDEX_RICE) return DQ_ERR_PARAM;
    return DQ_OK;
}
static inline uint64_t dq__index_ctrl_len(uint64_t k) { return k / 4u + (k % 4u != 0); }

/* The RICE parameter with the fewest code bits B(r) = k (1 + r) + sum_i (v_i >> r) (the
 * smallest r on ties) and those bits, for k >= 1 gaps minus one summing to S. It is at most
 * dq__rice_rmax(n): from there B only grows. B is convex:
 * B(r + 1) - B(r) = k - sum_i ceil((v_i >> r) / 2) grows with r. That difference is negative
 * where k 2^(r+2) < S (the sum is at least S / 2^(r+1) - k), so the smallest minimizer is at
 * least the first r with k 2^(r+2) >= S; and positive once k 2^(r+1) > 3 S (the sum is at most
 * S / 2^(r+1) + #{v_i >= 2^r}), so it is at most the first such r: at most 4 values of r
 * apart, whose B one more pass over the indices sums. */
static inline unsigned dq__rice_pick(const uint32_t *idx, size_t k, uint64_t S, uint64_t *bits) {
    uint64_t t[4] = {0, 0, 0, 0}, next = 0, best = 0;
    unsigned lo = 0, hi, r, j, pick;
    size_t i;
    while (lo < 31u && (S >> (lo + 2u)) + ((S & (((uint64_t)1 << (lo + 2u)) - 1u)) != 0) > k) lo++;
    hi = lo;
    while (hi < 31u && hi < lo + 3u && ((3u * S) >> (hi + 1u)) >= k) hi++;
    for (i = 0; i < k; i++) {
        uint64_t v = (uint64_t)idx[i] - next;
        next = (uint64_t)idx[i] + 1u;
        for (j = 0; j < 4u; j++) t[j] += v >> (lo + j); /* lo + 3 <= 34: a shift below 64 */
    }
    pick = lo;
    for (r = lo; r <= hi; r++) {
        uint64_t b = (uint64_t)k * (1u + r) + t[r - lo];
        if (r == lo || b < best) {
            best = b;
            pick = r;
        }
    }
    *bits = best;
    return pick;
}

/* Validates the set and sizes every body; RICE's (the second pass) only when `rice`. */
static inline dq_status dq__index_scan(const uint32_t *idx, size_t k, uint64_t n, int rice, dq__isizes *s) {
    uint64_t next = 0, gbits = 0, vbytes = 0, sum = 0, rbits = 0; /* next: the smallest index still allowed */
    size_t i;
    for (i = 0; i < k; i++) {
        uint64_t x = idx[i], g;
        uint32_t d;
        if (x < next || x >= n) return DQ_ERR_PARAM;
        g = x + 1u - next; /* 1 .. 2^32 */
        d = (uint32_t)(g - 1u);
        gbits += 2u * dq__ilog2(g) + 1u;
        vbytes += 1u + (unsigned)(d > 0xFFu) + (unsigned)(d > 0xFFFFu) + (unsigned)(d > 0xFFFFFFu);
        sum += d;
        next = x + 1u;
    }
    s->body[0] = 0;
    s->body[DQ_INDEX_GAMMA] = (gbits + 7u) / 8u;
    s->body[DQ_INDEX_VARINT] = dq__index_ctrl_len(k) + vbytes;
    s->body[DQ_INDEX_BITMAP] = (n + 7u) / 8u;
    s->rice = rice && k ? dq__rice_pick(idx, k, sum, &rbits) : 0u;
    s->body[DQ_INDEX_RICE] = 1u + (rbits + 7u) / 8u;
    return DQ_OK;
}
static inline dq_index_coder dq__index_pick(const dq__isizes *s, dq_index_coder coder) {
    if (coder != DQ_INDEX_AUTO) return coder;
    coder = DQ_INDEX_VARINT;
    if (s->body[DQ_INDEX_BITMAP] < s->body[coder]) coder = DQ_INDEX_BITMAP;
    if (s->body[DQ_INDEX_GAMMA] < s->body[coder]) coder = DQ_INDEX_GAMMA;
    if (s->body[DQ_INDEX_RICE] < s->body[coder]) coder = DQ_INDEX_RICE;
    return coder;
}
/* validate, choose the coder (and the RICE parameter) and its total size */
static inline dq_status dq__index_plan(const uint32_t *idx, size_t k, uint64_t n, dq_index_coder *coder,
                                       unsigned *rice, size_t *size) {
    dq__isizes s;
    uint64_t total;
    dq_status st = dq__index_args(k, n, *coder);
    if (st != DQ_OK) return st;
    if (!idx && k) return DQ_ERR_NULL;
    st = dq__index_scan(idx, k, n, *coder == DQ_INDEX_AUTO || *coder == DQ_INDEX_RICE, &s);
    if (st != DQ_OK) return st;
    *coder = dq__index_pick(&s, *coder);
    *rice = s.rice;
    total = DQ_INDEX_HEADER_SIZE + s.body[*coder];
    if (total > (uint64_t)SIZE_MAX) return DQ_ERR_TOO_LARGE;
    *size = (size_t)total;
    return DQ_OK;
}

/* The largest body each coder can write for k indices below n (FORMAT 18.7), by coder id, RICE
 * with any parameter; and *rice_enc, the largest the RICE encoder writes (its parameter has
 * the fewest bits, so at most the least of the per-parameter bounds). Gaps sum to at most n,
 * so at most n / 2^j of them are >= 2^j: a gamma code is 1 + 2 sum_j [gap >= 2^j] bits, a
 * VARINT value 1 + sum_j [value >= 256^j] bytes; the values sum to at most n - k, so the RICE
 * codes at parameter r take at most k (1 + r) + ((n - k) >> r) bits. */
static inline void dq__index_bodies_max(uint64_t k, uint64_t n, uint64_t *b, uint64_t *rice_enc) {
    uint64_t gbits = k, vbytes = dq__index_ctrl_len(k) + k, rb = 0, lo = 0, up;
    unsigned j, m = dq__rice_rmax(n);
    for (j = 1; j <= 32; j++) gbits += 2u * (n >> j < k ? n >> j : k);
    for (j = 1; j <= 3; j++) vbytes += n >> (8u * j) < k ? n >> (8u * j) : k;
    if (k) {
        for (j = 0; j <= m; j++) { /* at most k (1 + r) + (n - k) / 2^r bits at parameter r */
            up = k * (1u + j) + ((n - k) >> j) + ((n - k) & (((uint64_t)1 << j) - 1u) ? 1u : 0u);
            if (j == 0 || up < lo) lo = up;
        }
        rb = up; /* that bound is convex in r: the largest at r = 0 (n bits) or r = m */
        if (n > rb) rb = n;
    }
    b[0] = 0;
    b[DQ_INDEX_GAMMA] = (gbits + 7u) / 8u;
    b[DQ_INDEX_VARINT] = vbytes;
    b[DQ_INDEX_BITMAP] = (n + 7u) / 8u;
    b[DQ_INDEX_RICE] = 1u + (rb + 7u) / 8u;
    *rice_enc = 1u + (lo + 7u) / 8u;
}

/* The largest stream of any coder, RICE with any parameter (k <= n <= 2^32). */
static inline uint64_t dq__index_bound64(uint64_t k, uint64_t n) {
    uint64_t b[5], re, body = 0;
    unsigned c;
    dq__index_bodies_max(k, n, b, &re);
    for (c = DQ_INDEX_GAMMA; c <= DQ_INDEX_RICE; c++)
        if (b[c] > body) body = b[c];
    return DQ_INDEX_HEADER_SIZE + body;
}
DQ_API size_t dq_index_bound(size_t k, uint64_t n) {
    uint64_t body;
    if (n == 0 || n > DQ_INDEX_MAX_N || (uint64_t)k > n) return 0;
    body = dq__index_bound64((uint64_t)k, n);
    return body > (uint64_t)SIZE_MAX ? 0 : (size_t)body;
}

DQ_API dq_status dq_index_size(const uint32_t *idx, size_t k, uint64_t n, dq_index_coder coder, size_t *size) {
    unsigned rice = 0;
    if (!size) return DQ_ERR_NULL;
    return dq__index_plan(idx, k, n, &coder, &rice, size);
}

static inline void dq__index_put_gamma(const uint32_t *idx, size_t k, unsigned rice, uint8_t *body,
                                       size_t body_len) {
    dq_bitwriter w;
    uint64_t next = 0;
    size_t i, len = 0;
    (void)rice;
    if (dq_bw_init(&w, body, body_len) != DQ_OK) return;
    for (i = 0; i < k; i++) {
        dq__gamma_put(&w, (uint64_t)idx[i] + 1u - next);
        next = (uint64_t)idx[i] + 1u;
    }
    (void)dq_bw_finish(&w, &len); /* sized exactly by the scan: cannot fail */
}
static inline void dq__index_put_varint(const uint32_t *idx, size_t k, unsigned rice, uint8_t *body,
                                       size_t body_len) {
    size_t clen = (size_t)dq__index_ctrl_len(k), pos = clen, i;
    uint32_t prev = 0xFFFFFFFFu;
    (void)rice;
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
static inline void dq__index_put_bitmap(const uint32_t *idx, size_t k, unsigned rice, uint8_t *body,
                                       size_t body_len) {
    size_t i;
    (void)rice;
    memset(body, 0, body_len);
    for (i = 0; i < k; i++) body[idx[i] >> 3] |= (uint8_t)(1u << (idx[i] & 7u));
}
/* RICE at parameter r: q = v >> r zeros, a one, the low r bits of v. */
static inline void dq__index_put_rice(const uint32_t *idx, size_t k, unsigned r, uint8_t *body, size_t body_len) {
    dq_bitwriter w;
    uint64_t next = 0;
    size_t i, len = 0;
    body[0] = (uint8_t)r;
    if (dq_bw_init(&w, body + 1, body_len - 1u) != DQ_OK) return;
    for (i = 0; i < k; i++) {
        uint64_t v = (uint64_t)idx[i] - next, q = v >> r;
        next = (uint64_t)idx[i] + 1u;
        for (; q >= 32u; q -= 32u) dq_bw_put(&w, 0, 32);
        dq_bw_put(&w, 1, (unsigned)q + 1u); /* q zeros, then the one */
        dq_bw_put(&w, v & (((uint64_t)1 << r) - 1u), r);
    }
    (void)dq_bw_finish(&w, &len); /* sized exactly by the scan: cannot fail */
}
/* ---- decoding */
typedef struct dq__ihead {
    uint64_t n;
    size_t k;
    dq_index_coder coder;
    const uint8_t *body;
    size_t body_len;
} dq__ihead;

static inline dq_status dq__index_get_gamma(const dq__ihead *h, uint32_t *idx, dq__svb_kernel kern) {
    dq_bitreader r;
    uint64_t next = 0, n = h->n;
    size_t i;
    (void)kern;
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

/* RICE: one code, the gap minus one into *v, for an index that must stay below n from `next` (the
 * gaps so far). Codes inside the accumulator's valid bits take the fast path; the rest, the end
 * of the body and every error go bit-exactly through the slow one (FORMAT 18.6 for the order of
 * the checks: too many zeros, the end of the body, the gap). */
static inline dq_status dq__rice_get(dq_bitreader *r, unsigned rp, uint64_t n, uint64_t next, uint64_t *v) {
    uint64_t lim, q = 0, rem;
    unsigned z;
    if (next >= n) return DQ_ERR_CORRUPT; /* no room for any gap */
    lim = (n - next - 1u) >> rp;          /* the most zeros a code may have */
    if (r->n < 40) dq__br_refill(r);
    if (r->acc && (z = dq__clz64(r->acc)) + 1u + rp <= r->n) { /* a z above lim fails below */
        r->acc = (r->acc << z) << 1; /* z + 1 reaches 64 when the tail refill filled all 64 bits */
        rem = rp ? r->acc >> (64u - rp) : 0u;
        r->acc <<= rp;
        r->n -= z + 1u + rp;
        q = z;
    } else {
        for (;;) { /* the zeros, a valid bit at a time */
            if (r->n <= 56) dq__br_refill(r);
            if (r->n == 0) return DQ_ERR_TRUNCATED;
            z = r->acc ? dq__clz64(r->acc) : 64u;
            if (z > r->n) z = r->n; /* bits past the valid ones may be a later byte's */
            if (q + z > lim) return DQ_ERR_CORRUPT;
            q += z;
            if (z < r->n) { /* the one */
                r->acc = (r->acc << z) << 1;
                r->n -= z + 1u;
                break;
            }
            r->acc = z == 64u ? 0u : r->acc << z;
            r->n = 0;
        }
        rem = dq__br_get56(r, rp);
        if (r->overrun) return DQ_ERR_TRUNCATED;
    }
    *v = q << rp | rem; /* q <= 2^32: no overflow */
    return *v > n - next - 1u ? DQ_ERR_CORRUPT : DQ_OK;
}
static inline dq_status dq__index_get_rice(const dq__ihead *h, uint32_t *idx, dq__svb_kernel kern) {
    dq_bitreader r;
    uint64_t next = 0, v;
    unsigned rp = h->body[0];
    size_t i;
    dq_status st;
    (void)kern;
    if (rp > dq__rice_rmax(h->n)) return DQ_ERR_CORRUPT;
    if (dq_br_init(&r, h->body + 1, h->body_len - 1u) != DQ_OK) return DQ_ERR_NULL;
    for (i = 0; i < h->k; i++) {
        if ((st = dq__rice_get(&r, rp, h->n, next, &v)) != DQ_OK) return st;
        next += v + 1u;
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

static inline dq_status dq__index_get_bitmap(const dq__ihead *h, uint32_t *idx, dq__svb_kernel kern) {
    const uint8_t *b = h->body;
    size_t len = (size_t)((h->n + 7u) / 8u), i = 0, cnt = 0, k = h->k;
    unsigned tail = (unsigned)(h->n % 8u);
    (void)kern;
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

/* ---- the layouts' table: one row per index layout, by its id (FORMAT 18). A new layout is its
 * put and get functions, one row, its size in dq__index_scan and its reader in sparse.h's
 * index iterator. */
static inline uint64_t dq__index_least_gamma(uint64_t k, uint64_t n) {
    (void)n;
    return (k + 7u) / 8u; /* a bit per index at least */
}
static inline uint64_t dq__index_least_varint(uint64_t k, uint64_t n) {
    (void)n;
    return dq__index_ctrl_len(k) + k; /* the control bytes and a byte per index */
}
static inline uint64_t dq__index_least_bitmap(uint64_t k, uint64_t n) {
    (void)k;
    return (n + 7u) / 8u; /* exact */
}
static inline uint64_t dq__index_least_rice(uint64_t k, uint64_t n) {
    (void)n;
    return 1u + (k + 7u) / 8u; /* the parameter byte and a bit per index */
}
typedef struct dq__index_layout {
    /* the body of k sorted indices, of the exact size len (rice: RICE's parameter) */
    void (*put)(const uint32_t *idx, size_t k, unsigned rice, uint8_t *body, size_t len);
    /* the indices of a stream whose header h read (kern: VARINT's block decoder) */
    dq_status (*get)(const dq__ihead *h, uint32_t *idx, dq__svb_kernel kern);
    /* the fewest body bytes a stream of k indices below n has: less is DQ_ERR_TRUNCATED */
    uint64_t (*least)(uint64_t k, uint64_t n);
} dq__index_layout;
static const dq__index_layout dq__index_layouts[DQ_INDEX_RICE + 1] = {
    {NULL, NULL, NULL}, /* DQ_INDEX_AUTO: a request, never on the wire */
    {dq__index_put_gamma, dq__index_get_gamma, dq__index_least_gamma},
    {dq__index_put_varint, dq__index_get_varint, dq__index_least_varint},
    {dq__index_put_bitmap, dq__index_get_bitmap, dq__index_least_bitmap},
    {dq__index_put_rice, dq__index_get_rice, dq__index_least_rice},
};

/* The 10-byte header of a stream, then its body (of the exact size). */
static inline void dq__index_write(const uint32_t *idx, size_t k, uint64_t n, dq_index_coder coder, unsigned rice,
                                   uint8_t *d, size_t size) {
    d[0] = (uint8_t)coder;
    dq__st32(d + 1, (uint32_t)(n - 1u));
    dq__st32(d + 5, (uint32_t)k);
    d[9] = (uint8_t)((uint64_t)k >> 32);
    dq__index_layouts[coder].put(idx, k, rice, d + DQ_INDEX_HEADER_SIZE, size - DQ_INDEX_HEADER_SIZE);
}

DQ_API dq_status dq_index_encode(const uint32_t *idx, size_t k, uint64_t n, dq_index_coder coder, void *dst,
                                 size_t dst_cap, size_t *dst_len) {
    size_t size = 0;
    unsigned rice = 0;
    dq_status st;
    if (!dst_len || (!dst && dst_cap)) return DQ_ERR_NULL;
    st = dq__index_plan(idx, k, n, &coder, &rice, &size);
    if (st != DQ_OK) return st;
    if (size > dst_cap) return DQ_ERR_DST_TOO_SMALL;
    dq__index_write(idx, k, n, coder, rice, (uint8_t *)dst, size);
    *dst_len = size;
    return DQ_OK;
}
/* A RICE stream with a given parameter r <= dq__rice_rmax(n) (any such r is a valid stream;
 * dq_index_encode picks the fewest bits): what a fuzz target re-encodes a decoded stream with. */
static inline dq_status dq__index_encode_rice(const uint32_t *idx, size_t k, uint64_t n, unsigned r, void *dst,
                                              size_t dst_cap, size_t *dst_len) {
    uint64_t next = 0, bits = 0, size;
    size_t i;
    dq_status st = dq__index_args(k, n, DQ_INDEX_RICE);
    if (st != DQ_OK) return st;
    if (r > dq__rice_rmax(n)) return DQ_ERR_PARAM;
    for (i = 0; i < k; i++) {
        if ((uint64_t)idx[i] < next || idx[i] >= n) return DQ_ERR_PARAM;
        bits += ((uint64_t)idx[i] - next) >> r;
        next = (uint64_t)idx[i] + 1u;
    }
    size = DQ_INDEX_HEADER_SIZE + 1u + ((uint64_t)k * (1u + r) + bits + 7u) / 8u;
    if (size > dst_cap) return DQ_ERR_DST_TOO_SMALL;
    dq__index_write(idx, k, n, DQ_INDEX_RICE, r, (uint8_t *)dst, (size_t)size);
    *dst_len = (size_t)size;
    return DQ_OK;
}

static inline dq_status dq__index_head(const void *src, size_t src_len, dq__ihead *h) {
    const uint8_t *s = (const uint8_t *)src;
    uint64_t k, need;
    if (!src && src_len) return DQ_ERR_NULL;
    if (src_len < DQ_INDEX_HEADER_SIZE) return DQ_ERR_TRUNCATED;
    if (s[0] < DQ_INDEX_GAMMA || s[0] > DQ_INDEX_RICE) return DQ_ERR_CORRUPT;
    h->coder = (dq_index_coder)s[0];
    h->n = (uint64_t)dq__ld32(s + 1) + 1u;
    k = (uint64_t)dq__ld32(s + 5) | (uint64_t)s[9] << 32;
    if (k > h->n) return DQ_ERR_CORRUPT;
    if (k > (uint64_t)SIZE_MAX) return DQ_ERR_TOO_LARGE;
    h->k = (size_t)k;
    h->body = s + DQ_INDEX_HEADER_SIZE;
    h->body_len = src_len - DQ_INDEX_HEADER_SIZE;
    need = dq__index_layouts[h->coder].least(k, h->n);
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
/* dq_index_decode() with a given VARINT kernel (tests compare the SIMD and scalar kernels) */
static inline dq_status dq__index_decode_with(const void *src, size_t src_len, uint32_t *idx, size_t idx_cap,
                                              size_t *k, dq__svb_kernel kern) {
    dq__ihead h;
    dq_status st;
    if (!k || (!idx && idx_cap)) return DQ_ERR_NULL;
    st = dq__index_head(src, src_len, &h);
    if (st != DQ_OK) return st;
    if (h.k > idx_cap) return DQ_ERR_DST_TOO_SMALL;
    st = dq__index_layouts[h.coder].get(&h, idx, kern);
    if (st == DQ_OK) *k = h.k;
    return st;
}
DQ_API dq_status dq_index_decode(const void *src, size_t src_len, uint32_t *idx, size_t idx_cap, size_t *k) {
    return dq__index_decode_with(src, src_len, idx, idx_cap, k, dq__k_svb_decode);
}

/* ---------------------------------------------------------------- bit-budget optimizer */

DQ_API double dq_message_bits(size_t n, unsigned bits, uint32_t bucket) {
    dq_params p;
    size_t size;
    if (n == 0 || bits < 1) return 0.0; /* bits 0 would mean the default width */
    memset(&p, 0, sizeof p);
    p.bits = bits;
    p.bucket = bucket;
    p.coder = DQ_CODER_FIXED_ONLY; /* the fixed layout's bits (what the planner counts) */
    return dq_encode_capacity(&p, n, &size) == DQ_OK ? 8.0 * (double)size : 0.0;
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
        cnt = cnt * inc;
        total += cnt;
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
    hi = 0.5 * -log2(s->p.alpha) * ((double)s->p.steps - 1.0 - (double)s->step);
    hi = -lg + hi + 18.0;
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
    if ((unsigned)q.mode > (unsigned)DQ_SCHED_RD) return DQ_ERR_PARAM;
    if (q.alpha == 0.0) q.alpha = 1.0;
    if (!q.bits_min) q.bits_min = 2;
    if (!q.bits_max) q.bits_max = 16;
    if (!q.period) q.period = 1;
    if (!q.window) q.window = 1;
    if (!q.workers) q.workers = 1;
    if (!q.bucket) q.bucket = DQ_BUCKET_DEFAULT;
    if (q.warm_steps && !q.warm_bits) q.warm_bits = 16;
    if (q.steps == 0 || q.dim == 0) return DQ_ERR_EMPTY;
    if (q.bits_min < 2 || q.bits_max > 16 || q.bits_min > q.bits_max || (q.warm_bits && q.warm_bits < 2) ||
        q.warm_bits > 16)
        return DQ_ERR_BITS;
    if (q.warm_steps > q.steps || (!q.warm_steps && q.warm_bits)) return DQ_ERR_PARAM;
    if (!(q.alpha > 0.0 && q.alpha <= 1.0) || q.window > DQ_SCHED_MAX_WINDOW || !(q.norm_prior >= 0.0) ||
        !(q.scale >= 0.0) || !(q.target_error >= 0.0) || !(q.budget_bits >= 0.0) || !(q.lipschitz >= 0.0) ||
        !(q.lr >= 0.0) || (q.bucket != DQ_BUCKET_WHOLE && q.bucket % 8u))
        return DQ_ERR_PARAM;
    memset(s, 0, sizeof *s);
    s->p = q;
    if (q.mode == DQ_SCHED_RD) return q.budget_bits > 0.0 ? DQ_OK : DQ_ERR_PARAM; /* sizes come with the curves */
    if (q.mode != DQ_SCHED_DQSGD) return DQ_OK;
    calib = (q.scale > 0.0) + (q.target_error > 0.0) + (q.budget_bits > 0.0);
    if (calib != 1 || !(q.norm_prior > 0.0)) return DQ_ERR_PARAM;
    if (q.scale > 0.0) {
        s->c = q.scale;
    } else if (q.target_error > 0.0) {
        if (!(q.lipschitz > 0.0 && q.lr > 0.0)) return DQ_ERR_PARAM;
        s->c = sqrt(q.lipschitz * q.lr * q.lr * dq__sched_B(&q) * (double)q.steps /
                    (8.0 * (double)q.workers * q.target_error));
    } else {
        double warm = (double)q.warm_steps * (q.warm_steps ? dq_message_bits(q.dim, q.warm_bits, q.bucket) : 0.0);
        double rest = (double)(q.steps - q.warm_steps) * dq_message_bits(q.dim, q.bits_min, q.bucket);
        if (q.budget_bits < warm + rest) return DQ_ERR_INFEASIBLE;
    }
    return DQ_OK;
}

DQ_API dq_status dq_sched_next(dq_sched *s, unsigned *bits) {
    const dq_sched_params *p;
    if (!s || !bits) return DQ_ERR_NULL;
    p = &s->p;
    if (s->step >= p->steps) return DQ_ERR_PARAM; /* the planned run is over */
    if (s->step < p->warm_steps) {
        *bits = s->bits = p->warm_bits;
        return DQ_OK;
    }
    if (s->step % p->period == 0 || s->bits == 0 || s->step == p->warm_steps) {
        double T = (double)p->steps, n = (double)s->step;
        switch (p->mode) {
            case DQ_SCHED_FIXED:
                s->bits = p->bits_max;
                break;
            case DQ_SCHED_DECREASING:
                s->bits = (unsigned)((double)p->bits_max -
                                     floor(((double)(p->bits_max - p->bits_min)) * n / (T > 1.0 ? T - 1.0 : 1.0) + 0.5));
                break;
            case DQ_SCHED_RD:
                return DQ_ERR_PARAM; /* its widths need the measured curve: dq_sched_next_rd() */
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

/* The slope per step of the least-squares line through log G^2 of the last `window` norms (in
 * the order they came), 0 with fewer than two positive ones. */
static inline double dq__sched_trend(const dq_sched *s) {
    double sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0, m = 0.0, d;
    unsigned i, w = s->p.window;
    for (i = 0; i < s->n_norms; i++) {
        double g = s->norms[s->n_norms < w ? i : (s->head + i) % w], x = (double)i, y;
        double xx = x * x, xy; /* every product in its own statement (doc/API.md, Determinism) */
        if (!(g > 0.0)) continue;
        y = 2.0 * log(g);
        xy = x * y;
        sx += x, sy += y, sxx += xx, sxy += xy, m += 1.0;
    }
    {
        double a = m * sxx, b = sx * sx, c = m * sxy, e = sx * sy;
        d = a - b;
        return m >= 2.0 && d > 0.0 ? (c - e) / d : 0.0;
    }
}
/* Planned bits of the remaining steps at multiplier lam: groups of steps (cnt[j] steps at
 * relative weight wt[j]), each at the width minimizing wt err(b) + lam bits(b); *first gets
 * the width of the first group (the current step). */
static inline double dq__rd_plan(const dq_rd *rd, const double *wt, const double *cnt, unsigned ng, unsigned bmin,
                                 unsigned bmax, double lam, unsigned *first) {
    double total = 0.0;
    unsigned j, b, best;
    for (j = 0; j < ng; j++) {
        double bc = HUGE_VAL;
        best = bmin;
        for (b = bmin; b <= bmax; b++) {
            double e = wt[j] * rd->err[b], c = lam * rd->bits[b];
            c += e;
            if (c < bc) bc = c, best = b;
        }
        if (j == 0) *first = best;
        bc = cnt[j] * rd->bits[best];
        total += bc;
    }
    return total;
}

#define DQ__RD_GROUPS 256u /* the remaining steps: the current one alone, then in 255 groups */
DQ_API dq_status dq_sched_next_rd(dq_sched *s, const dq_rd *rd, unsigned *bits) {
    const dq_sched_params *p;
    double wt[DQ__RD_GROUPS], cnt[DQ__RD_GROUPS], rem, R, beta, la, lo, hi, lam;
    unsigned ng, j, b, first = 0;
    int it;
    if (!s || !rd || !bits) return DQ_ERR_NULL;
    p = &s->p;
    if (p->mode != DQ_SCHED_RD || s->step >= p->steps) return DQ_ERR_PARAM;
    if (s->step < p->warm_steps) {
        *bits = s->bits = p->warm_bits;
        return DQ_OK;
    }
    for (b = p->bits_min; b <= p->bits_max; b++)
        if (!(rd->bits[b] > 0.0) || !(rd->err[b] >= 0.0) || rd->bits[b] > DBL_MAX || rd->err[b] > DBL_MAX)
            return DQ_ERR_PARAM;
    *bits = s->bits = p->bits_min;
    rem = (double)(p->steps - s->step);
    R = p->budget_bits - s->spent_bits;
    if (R < rem * rd->bits[p->bits_min]) return DQ_ERR_INFEASIBLE;
    beta = dq__sched_trend(s);
    if (beta * rem > log(1e2)) beta = log(1e2) / rem; /* the trend's total change, held in bounds */
    if (beta * rem < -log(1e4)) beta = -log(1e4) / rem;
    la = log(p->alpha);
    ng = rem < (double)DQ__RD_GROUPS ? (unsigned)rem : DQ__RD_GROUPS;
    for (j = 0; j < ng; j++) { /* group j: steps [a, e) after the current one; weight at its middle */
        double a = j == 0 ? 0.0 : 1.0 + floor((rem - 1.0) * (double)(j - 1u) / (double)(ng - 1u));
        double e = j == 0 ? 1.0 : 1.0 + floor((rem - 1.0) * (double)j / (double)(ng - 1u)), mid = 0.5 * (a + e - 1.0);
        cnt[j] = e - a;
        wt[j] = exp((beta - la) * mid); /* alpha^(T-1-m) G_m^2, relative to the current step's */
    }
    /* lam = 0: every step at its least error; otherwise bisect (log scale) for the least lam that fits */
    if (dq__rd_plan(rd, wt, cnt, ng, p->bits_min, p->bits_max, 0.0, &first) > R) {
        double scale = (rd->err[p->bits_min] > 0.0 ? rd->err[p->bits_min] : 1.0) / rd->bits[p->bits_min];
        lo = log(scale) - 200.0;
        hi = log(scale) + 200.0;
        for (it = 0; it < 100; it++) {
            double mid = 0.5 * (lo + hi);
            if (dq__rd_plan(rd, wt, cnt, ng, p->bits_min, p->bits_max, exp(mid), &first) <= R)
                hi = mid;
            else
                lo = mid;
        }
        lam = exp(hi);
        (void)dq__rd_plan(rd, wt, cnt, ng, p->bits_min, p->bits_max, lam, &first);
    }
    *bits = s->bits = first;
    return DQ_OK;
}

DQ_API dq_status dq_rd_floor(const dq_rd *rd, double max_err, unsigned bits_min, unsigned bits_max, unsigned *bits) {
    unsigned b;
    if (!rd || !bits) return DQ_ERR_NULL;
    if (bits_min < DQ_RD_BITS_MIN || bits_max > DQ_RD_BITS_MAX || bits_min > bits_max) return DQ_ERR_BITS;
    if (max_err != max_err) return DQ_ERR_PARAM;
    for (b = bits_min; b < bits_max && rd->err[b] > max_err; b++) continue;
    *bits = b;
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
    dq__io64(&at, &s->p.warm_steps, load); /* since 0.9.0; a 0.8 body ends before them (zeros) */
    dq__io32(&at, &s->p.warm_bits, load);
    if (load) {
        s->p.mode = (dq_sched_mode)(mode <= (unsigned)DQ_SCHED_RD ? mode : 0u);
        s->p.bucket = (uint32_t)bucket;
        s->p.dim = dim <= (uint64_t)SIZE_MAX ? (size_t)dim : 0u; /* 0 fails validation */
    }
}
#define DQ__SCHED_BODY (DQ_SCHED_SAVE_SIZE - DQ__CKPT_HEAD - 4u)
#define DQ__SCHED_BODY_08 2200u /* written by 0.8 and earlier: no warm start */

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
    int warm;
    dq_status st;
    if (!src || !s) return DQ_ERR_NULL;
    if ((st = dq__ckpt_open(in, src_len, DQ__CKPT_SCHED, &count)) != DQ_OK) return st;
    if (count != DQ__SCHED_BODY && count != DQ__SCHED_BODY_08) return DQ_ERR_CORRUPT;
    if (src_len < DQ__CKPT_HEAD + (size_t)count + 4u) return DQ_ERR_TRUNCATED;
    if (!dq__ckpt_crc_ok(in, DQ__CKPT_HEAD + (size_t)count + 4u)) return DQ_ERR_CHECKSUM;
    memset(body, 0, sizeof body);
    memcpy(body, in + DQ__CKPT_HEAD, (size_t)count);
    memset(&t, 0, sizeof t);
    dq__sched_io(&t, body, 1);
    /* The params must be ones dq_sched_init accepted (and left unchanged: defaults applied),
     * and the state must be one the calls can reach. */
    if (dq_sched_init(&check, &t.p) != DQ_OK || memcmp(&check.p, &t.p, sizeof t.p) != 0) return DQ_ERR_CORRUPT;
    /* A width is 0 (none chosen yet), one the rule chooses, or the warm width: set by the warm
     * steps (n < warm_steps) and still in force until the next call after them. */
    warm = t.p.warm_steps != 0 && t.step <= t.p.warm_steps && t.bits == t.p.warm_bits;
    if (t.n_norms > t.p.window || t.head >= t.p.window || (t.head != 0 && t.n_norms < t.p.window) ||
        (!warm && (t.bits > t.p.bits_max || (t.bits != 0 && t.bits < t.p.bits_min))) ||
        !(t.c >= 0.0 && t.c <= DBL_MAX) ||
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
        double cj = c1 * (double)j;
        cj = c0 + cj;
        if (!(sq_desc[j] * cj > c1 * S)) break;
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

/* ---- measured rate and distortion (dq_rd_measure)
 *
 * One histogram of u = |v| / scale over [0, u_max) (u_max: the largest u of the vector, so the
 * bins follow the data whatever the norm and bucket), keeping per bin the moments of the
 * offsets d = u - (bin start), weighted by scale^2 for the error and by count (per sign) for
 * the levels. Within one level interval [k/s, (k+1)/s) the error of an element is
 * scale^2 (us - k)(k + 1 - us) / s^2 and its chance of level k + 1 is us - k: polynomials of
 * degree 2 and 1 in d, so a bin inside one interval is summed exactly from its moments. A bin
 * that straddles a level boundary is cut there, with the density inside the bin taken linear
 * (fitted to its first two moments). Zeros and u = 1 (the top level) are exact and apart.
 * Sizes take the codes as independent draws from the distribution this implies: a rANS symbol
 * of g codes has the product of their chances (neighbours that are alike make real messages a
 * little smaller), and Elias gaps are geometric at the mean density. */
#define DQ__RD_NB 512u
typedef struct dq__rd_bins {
    double w[3][DQ__RD_NB];    /* sum of scale^2 d^j, j = 0, 1, 2 */
    double c[2][2][DQ__RD_NB]; /* [sign][j]: count, sum of d */
    double h;                  /* bin width in u */
} dq__rd_bins;

/* Moments 0..2 over [p, q) of the density a0 + a1 (d - h/2), fitted to mass m0 and first moment
 * m1 over [0, h). */
static inline void dq__rd_piece(double m0, double m1, double h, double p, double q, double *mo) {
    /* every product in its own statement, as everywhere in this file (doc/API.md, Determinism) */
    double hm = 0.5 * h, h3 = h * h * h, t = hm * m0, a1, a0, u, v;
    double q2 = q * q, p2 = p * p, q3 = q2 * q, p3 = p2 * p, q4 = q2 * q2, p4 = p2 * p2;
    a1 = 12.0 * (m1 - t);
    a1 /= h3;
    u = hm * a1;
    a0 = m0 / h;
    a0 -= u;
    u = a0 * (q - p);
    v = a1 * (q2 - p2) * 0.5;
    mo[0] = u + v;
    u = a0 * (q2 - p2) * 0.5;
    v = a1 * (q3 - p3) * (1.0 / 3.0);
    mo[1] = u + v;
    u = a0 * (q3 - p3) * (1.0 / 3.0);
    v = a1 * (q4 - p4) * 0.25;
    mo[2] = u + v;
}
/* The pieces of bin `bin` at s levels: calls back with the level k, the piece's offset e0 = (bin
 * start) s - k and its moments (weights and counts of both signs). */
typedef void (*dq__rd_piece_fn)(void *ctx, double k, double e0, const double *w, const double *cp, const double *cn);
static inline void dq__rd_pieces(const dq__rd_bins *B, size_t bin, double s, dq__rd_piece_fn fn, void *ctx) {
    double a = (double)bin * B->h, v0 = a * s, v1 = (a + B->h) * s, k = floor(v0);
    if (v1 <= k + 1.0) { /* inside one interval: the moments as measured */
        double w[3], cp[2], cn[2];
        w[0] = B->w[0][bin], w[1] = B->w[1][bin], w[2] = B->w[2][bin];
        cp[0] = B->c[0][0][bin], cp[1] = B->c[0][1][bin], cn[0] = B->c[1][0][bin], cn[1] = B->c[1][1][bin];
        fn(ctx, k, v0 - k, w, cp, cn);
        return;
    }
    for (; k < v1; k += 1.0) {
        double p = k / s - a, q = (k + 1.0) / s - a, w[3], cp[3], cn[3];
        if (p < 0.0) p = 0.0;
        if (q > B->h) q = B->h;
        if (!(q > p)) continue;
        dq__rd_piece(B->w[0][bin], B->w[1][bin], B->h, p, q, w);
        dq__rd_piece(B->c[0][0][bin], B->c[0][1][bin], B->h, p, q, cp);
        dq__rd_piece(B->c[1][0][bin], B->c[1][1][bin], B->h, p, q, cn);
        fn(ctx, k, v0 - k, w, cp, cn);
    }
}
typedef struct dq__rd_acc {
    double s, err, lv[2][129]; /* levels by sign (widths up to 8) */
    double nz, elias;          /* expected non-zero codes, and their sign and level bits in Elias */
} dq__rd_acc;
/* sum of scale^2 (e0 + d s)(1 - e0 - d s) / s^2, and the levels' expected counts */
static inline void dq__rd_take(void *ctx, double k, double e0, const double *w, const double *cp, const double *cn) {
    dq__rd_acc *A = (dq__rd_acc *)ctx;
    double s = A->s, ss = s * s, m = cp[0] + cn[0], e2 = 2.0 * e0, t0, t1, t2, up;
    t0 = e0 * m; /* each product in its own statement (doc/API.md, Determinism) */
    t1 = s * (cp[1] + cn[1]);
    up = t0 + t1;
    t0 = e0 * (1.0 - e0) * w[0];
    t1 = s * (1.0 - e2) * w[1];
    t2 = ss * w[2];
    A->err += (t0 + t1 - t2) / ss;
    A->nz += (k > 0.0 ? m - up : 0.0) + up;
    t0 = k > 0.0 ? (m - up) * (1.0 + dq_elias_omega_len((uint64_t)k)) : 0.0;
    t1 = up * (1.0 + dq_elias_omega_len((uint64_t)k + 1u));
    A->elias += t0 + t1;
    if (s <= 127.0) {
        double pa = e0 * cp[0], pb = s * cp[1], na = e0 * cn[0], nb = s * cn[1];
        double up_p = pa + pb, up_n = na + nb; /* expected count at k + 1 */
        A->lv[0][(size_t)k] += cp[0] - up_p;
        A->lv[1][(size_t)k] += cn[0] - up_n;
        A->lv[0][(size_t)k + 1u] += up_p;
        A->lv[1][(size_t)k + 1u] += up_n;
    }
}

/* Predicted payload bytes of coder 3 (its 8-byte length included) for the expected symbol
 * counts cnt[]: each symbol costs what its normalized frequency charges (a symbol expected less
 * than half a time, the least frequency), and the table holds a symbol with the chance that it
 * occurs at all, 1 - exp(-cnt) (counts taken as Poisson). */
static inline double dq__rd_rans_bytes(unsigned b, size_t n, const double *cnt) {
    unsigned A = 1u << dq__sym_bits(b), sym;
    uint64_t c[256], total = 0;
    uint32_t f[256];
    double bits = 0.0, table = A / 8u;
    for (sym = 0; sym < A; sym++) total += (c[sym] = (uint64_t)floor(cnt[sym] + 0.5));
    if (!total) return 0.0;
    dq__rans_normalize(c, A, total, f);
    for (sym = 0; sym < A; sym++) {
        double t;
        if (!(cnt[sym] > 0.0)) continue;
        t = cnt[sym] * (log2((double)DQ__RANS_M) - (c[sym] ? log2((double)f[sym]) : 0.0));
        bits += t;
        t = (1.0 - exp(-cnt[sym])) * (c[sym] && f[sym] > 128u ? 2.0 : 1.0);
        table += t;
    }
    /* every chunk ends with its 32 states written whole; they hold the last bits of the stream,
     * about 8 a state (a state ends log-uniform over its 16-bit range) */
    {
        double states = (double)dq__r32_nchunks(n, b) * (4.0 + DQ__R32_HEAD - DQ__R32_WAYS), stream = bits / 8.0;
        return 8.0 + table + states + stream;
    }
}
/* Predicted Elias payload bytes (its 8-byte length included) for nz expected non-zero codes with
 * `lv` sign and level bits among n: the gaps taken as geometric with the mean density, so a
 * gap has floor(log2) = L with probability (1 - r)^(2^L - 1) - (1 - r)^(2^(L+1) - 1). */
static inline double dq__rd_elias_bytes(size_t n, double nz, double lv) {
    double r = nz / (double)n, lq, gap = 0.0, prev = 1.0, next;
    unsigned L;
    if (!(nz >= 0.5)) return 8.0 + 1.0;
    if (r >= 1.0) return 8.0 + ceil(((double)dq_elias_omega_len((uint64_t)(nz + 0.5) + 1u) + lv + nz) / 8.0);
    lq = log1p(-r);
    for (L = 0; L < 63u && prev > 0.0; L++, prev = next) {
        double t;
        next = exp((ldexp(1.0, (int)L + 1) - 1.0) * lq);
        t = (prev - next) * dq_elias_omega_len((uint64_t)1 << L);
        gap += t;
    }
    gap *= nz;
    return 8.0 + ceil(((double)dq_elias_omega_len((uint64_t)(nz + 0.5) + 1u) + lv + gap) / 8.0);
}
DQ_API dq_status dq_rd_measure(const dq_params *p, const float *x, const float *residual, size_t n, dq_rd *rd) {
    dq__rd_bins B;
    double c_top[2] = {0.0, 0.0}, c_zero = 0.0, umax = 0.0, inv = 0.0;
    uint32_t bk;
    size_t k, i, bin;
    unsigned b, pass;
    dq_norm norm;
    if (!p || !x || !rd) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    norm = p->norm == DQ_NORM_DEFAULT ? DQ_NORM_L2 : p->norm;
    if ((p->scheme != DQ_SCHEME_QSGD && p->scheme != DQ_SCHEME_DEFAULT) || (norm != DQ_NORM_L2 && norm != DQ_NORM_MAX))
        return DQ_ERR_PARAM;
    if (p->bucket && p->bucket != DQ_BUCKET_WHOLE && p->bucket % 8u) return DQ_ERR_PARAM;
    bk = p->bucket ? p->bucket : DQ_BUCKET_DEFAULT;
    memset(rd, 0, sizeof *rd);
    memset(&B, 0, sizeof B);
    /* pass 0: the largest u (L2 only; the max norm puts it at 1); pass 1: the statistics */
    for (pass = norm == DQ_NORM_MAX ? 1u : 0u; pass < 2u; pass++) {
        if (pass == 1u) {
            if (norm == DQ_NORM_MAX || umax > 1.0) umax = 1.0;
            B.h = umax / DQ__RD_NB;
            inv = umax > 0.0 ? DQ__RD_NB / umax : 0.0;
        }
        for (k = 0; k < n; k += (size_t)bk) {
            size_t end = bk == DQ_BUCKET_WHOLE || n - k < (size_t)bk ? n : k + bk;
            double sc = 0.0, sq = 0.0, s2;
            for (i = k; i < end; i++) {
                double v = residual ? (double)(x[i] + residual[i]) : (double)x[i];
                if (!(v - v == 0.0)) return DQ_ERR_NONFINITE;
                double vv = v * v;
                sq += vv;
                if (fabs(v) > sc) sc = fabs(v);
            }
            if (pass == 0u) {
                if (sq > 0.0 && sc / sqrt(sq) > umax) umax = sc / sqrt(sq);
                if (bk == DQ_BUCKET_WHOLE) break;
                continue;
            }
            rd->norm2 += sq;
            if (norm == DQ_NORM_L2) sc = sqrt(sq);
            s2 = sc * sc;
            for (i = k; i < end; i++) {
                double v = residual ? (double)(x[i] + residual[i]) : (double)x[i], u = sc > 0.0 ? fabs(v) / sc : 0.0, d, wd;
                unsigned neg = v < 0.0;
                if (u == 0.0) {
                    c_zero += 1.0;
                    continue;
                }
                if (u >= 1.0) { /* the top level, exactly: no error */
                    c_top[neg] += 1.0;
                    continue;
                }
                bin = (size_t)(u * inv);
                if (bin >= DQ__RD_NB) bin = DQ__RD_NB - 1u;
                d = (double)bin * B.h; /* each product in its own statement (doc/API.md, Determinism) */
                d = u - d;
                B.w[0][bin] += s2;
                wd = s2 * d;
                B.w[1][bin] += wd;
                wd *= d;
                B.w[2][bin] += wd;
                B.c[neg][0][bin] += 1.0;
                B.c[neg][1][bin] += d;
            }
            if (bk == DQ_BUCKET_WHOLE) break;
        }
    }
    rd->n = n;
    for (b = DQ_RD_BITS_MIN; b <= DQ_RD_BITS_MAX; b++) {
        dq__rd_acc A;
        memset(&A, 0, sizeof A);
        A.s = dq__levels_d(b);
        if (B.h > 0.0)
            for (bin = 0; bin < DQ__RD_NB; bin++)
                if (B.w[0][bin] > 0.0 || B.c[0][0][bin] > 0.0 || B.c[1][0][bin] > 0.0)
                    dq__rd_pieces(&B, bin, A.s, dq__rd_take, &A);
        rd->err[b] = A.err > 0.0 ? A.err : 0.0;
        rd->fixed_bits[b] = rd->bits[b] = dq_message_bits(n, b, p->bucket);
        if (n < DQ_CODER_AUTO_MIN) continue; /* the default sends the fixed layout there */
        { /* Elias: the fixed payload gives way to it and the checksum */
            double top = c_top[0] + c_top[1], el, tl = top * (1.0 + dq_elias_omega_len((uint64_t)A.s));
            el = 8.0 * (dq__rd_elias_bytes(n, A.nz + top, A.elias + tl) - ceil((double)n * b / 8.0) + 4.0);
            el += rd->fixed_bits[b];
            if (el < rd->bits[b]) rd->bits[b] = el;
        }
        if (b <= 8u) { /* the default coder: rANS of the codes, when smaller */
            /* the codes' distribution (a level and its sign), then symbols of g codes drawn
             * independently from it */
            double cnt[256], pc[256], fixed_pay = ceil((double)n * b / 8.0), coded, nsym = (double)dq__r32_nsym(n, b);
            unsigned l, sgn = 1u << (b - 1u), g = dq__sym_group(b), sy, t, msk = (1u << b) - 1u;
            memset(pc, 0, sizeof pc);
            pc[0] = (c_zero + A.lv[0][0] + A.lv[1][0]) / (double)n;
            A.lv[0][(size_t)A.s] += c_top[0];
            A.lv[1][(size_t)A.s] += c_top[1];
            for (l = 1; l <= (unsigned)A.s; l++) {
                pc[l] = (A.lv[0][l] > 0.0 ? A.lv[0][l] : 0.0) / (double)n;
                pc[l | sgn] = (A.lv[1][l] > 0.0 ? A.lv[1][l] : 0.0) / (double)n;
            }
            for (sy = 0; sy < (1u << dq__sym_bits(b)); sy++) {
                cnt[sy] = nsym;
                for (t = 0; t < g; t++) cnt[sy] *= pc[(sy >> (t * b)) & msk];
            }
            /* the fixed payload gives way to the coded one (its length included) and the checksum */
            coded = 8.0 * (dq__rd_rans_bytes(b, n, cnt) - fixed_pay + 4.0);
            coded += rd->fixed_bits[b];
            if (coded < rd->bits[b]) rd->bits[b] = coded;
        }
    }
    return DQ_OK;
}

/* The move from width b of one segment that removes the most error per bit, among widths up to
 * bmax (hull = 1: any of them, the steepest, i.e. the next vertex of the lower convex hull;
 * hull = 0: only those costing at most `room`). Returns the width (0: none) and its ratio. */
static inline unsigned dq__rd_move(const dq_rd *r, int fixed, unsigned b, unsigned bmax, int hull, double room,
                                   double *ratio) {
    const double *bits = fixed ? r->fixed_bits : r->bits;
    unsigned t, best = 0;
    for (t = b + 1u; t <= bmax; t++) {
        double gain = r->err[b] - r->err[t], cost = bits[t] - bits[b], q;
        if (!(gain > 0.0) || (!hull && cost > room)) continue;
        q = cost > 0.0 ? gain / cost : HUGE_VAL; /* a free gain comes first */
        if (!best || q > *ratio) {
            best = t;
            *ratio = q;
        }
    }
    return best;
}

static inline double dq__rd_total(const dq_rd *rd, size_t m, int fixed, const unsigned *bits) {
    double t = 0.0;
    size_t i;
    for (i = 0; i < m; i++) t += fixed ? rd[i].fixed_bits[bits[i]] : rd[i].bits[bits[i]];
    return t;
}
/* Frees at least `need` bits by lowering segments other than `skip`, each move the one that adds
 * the least error per bit it usefully frees; the moves are applied to bits[] and logged (undo
 * with dq__rd_undo). Returns 0 when it cannot (nothing left to lower, or the log is full). */
#define DQ__RD_LOG 64u
static inline int dq__rd_free(const dq_rd *rd, size_t m, int fixed, unsigned bits_min, size_t skip, double need,
                              unsigned *bits, size_t *log_i, unsigned *log_b, size_t *nlog, double *loss) {
    *nlog = 0;
    *loss = 0.0;
    while (need > 0.0) {
        size_t j, pj = m;
        unsigned u, pu = 0;
        double pq = 0.0, pfreed = 0.0, padd = 0.0;
        if (*nlog == DQ__RD_LOG) return 0;
        for (j = 0; j < m; j++) {
            const double *bt = fixed ? rd[j].fixed_bits : rd[j].bits;
            if (j == skip) continue;
            for (u = bits_min; u < bits[j]; u++) {
                double freed = bt[bits[j]] - bt[u], add = rd[j].err[u] - rd[j].err[bits[j]], q;
                if (!(freed > 0.0)) continue;
                if (add < 0.0) add = 0.0;
                q = add / (freed < need ? freed : need);
                if (pj == m || q < pq) {
                    pj = j, pu = u, pq = q, pfreed = freed, padd = add;
                }
            }
        }
        if (pj == m) return 0;
        log_i[*nlog] = pj;
        log_b[*nlog] = bits[pj];
        (*nlog)++;
        bits[pj] = pu;
        need -= pfreed;
        *loss += padd;
    }
    return 1;
}
static inline void dq__rd_undo(unsigned *bits, const size_t *log_i, const unsigned *log_b, size_t nlog) {
    while (nlog--) bits[log_i[nlog]] = log_b[nlog];
}
static inline double dq__rd_err(const dq_rd *rd, size_t m, const unsigned *bits) {
    double e = 0.0;
    size_t i;
    for (i = 0; i < m; i++) e += rd[i].err[bits[i]];
    return e;
}
/* Moves up while they fit, each the one that removes the most error per bit: any that fits
 * (hull = 0, the leftover), or the next vertex of a lower hull until the steepest no longer fits
 * (hull = 1). *used is summed afresh after each move, so it does not drift. */
static inline void dq__rd_climb(const dq_rd *rd, size_t m, double budget, unsigned bits_max, int fixed, int hull,
                                unsigned *bits, double *used) {
    for (;;) {
        double best = 0.0, q = 0.0, room = budget - *used;
        unsigned to = 0, t;
        size_t i, pick = m;
        for (i = 0; i < m; i++)
            if ((t = dq__rd_move(&rd[i], fixed, bits[i], bits_max, hull, room, &q)) != 0 && (pick == m || q > best)) {
                best = q;
                pick = i;
                to = t;
            }
        if (pick == m) return;
        t = bits[pick];
        bits[pick] = to;
        if ((q = dq__rd_total(rd, m, fixed, bits)) > budget) {
            bits[pick] = t;
            return;
        }
        *used = q;
    }
}
/* One exchange that lowers the total error: a segment moves up, paid by the leftover and by
 * lowering others (dq__rd_free). Returns 1 when one was made. */
static inline int dq__rd_exchange(const dq_rd *rd, size_t m, double budget, unsigned bits_min, unsigned bits_max,
                                  int fixed, unsigned *bits, double *used) {
    size_t i, log_i[DQ__RD_LOG], nlog;
    unsigned log_b[DQ__RD_LOG], t;
    for (i = 0; i < m; i++) {
        const double *bt = fixed ? rd[i].fixed_bits : rd[i].bits;
        unsigned from = bits[i];
        for (t = from + 1u; t <= bits_max; t++) {
            double gain = rd[i].err[from] - rd[i].err[t], need = bt[t] - bt[from] - (budget - *used), loss = 0.0, tot;
            if (!(gain > 0.0)) continue;
            nlog = 0;
            if (need > 0.0 && !dq__rd_free(rd, m, fixed, bits_min, i, need, bits, log_i, log_b, &nlog, &loss)) {
                dq__rd_undo(bits, log_i, log_b, nlog);
                continue;
            }
            bits[i] = t;
            tot = dq__rd_total(rd, m, fixed, bits);
            if (tot <= budget && gain - loss > 1e-12 * gain) {
                *used = tot;
                return 1;
            }
            bits[i] = from;
            dq__rd_undo(bits, log_i, log_b, nlog);
        }
    }
    return 0;
}
DQ_API dq_status dq_rd_alloc(const dq_rd *rd, size_t m, double budget_bits, unsigned bits_min, unsigned bits_max,
                             int fixed, unsigned *bits, double *err, double *spent) {
    double used, e;
    size_t i, round;
    unsigned w, wbest = 0;
    if (!rd || !bits) return DQ_ERR_NULL;
    if (m == 0) return DQ_ERR_EMPTY;
    if (bits_min < DQ_RD_BITS_MIN || bits_max > DQ_RD_BITS_MAX || bits_min > bits_max) return DQ_ERR_BITS;
    if (!(budget_bits >= 0.0)) return DQ_ERR_PARAM;
    for (i = 0; i < m; i++) bits[i] = bits_min;
    if ((used = dq__rd_total(rd, m, fixed, bits)) > budget_bits) return DQ_ERR_INFEASIBLE;
    dq__rd_climb(rd, m, budget_bits, bits_max, fixed, 1, bits, &used);
    e = dq__rd_err(rd, m, bits);
    for (w = bits_min + 1u; w <= bits_max; w++) { /* never worse than the best one width that fits */
        double t = 0.0, ew = 0.0;
        for (i = 0; i < m; i++) {
            t += fixed ? rd[i].fixed_bits[w] : rd[i].bits[w];
            ew += rd[i].err[w];
        }
        if (t <= budget_bits && ew < e) wbest = w, e = ew;
    }
    if (wbest) {
        for (i = 0; i < m; i++) bits[i] = wbest;
        used = dq__rd_total(rd, m, fixed, bits);
    }
    /* then the leftover, and exchanges while they lower the error (each strictly, so it ends) */
    for (round = 0; round < 64u * m + 64u; round++) {
        dq__rd_climb(rd, m, budget_bits, bits_max, fixed, 0, bits, &used);
        if (!dq__rd_exchange(rd, m, budget_bits, bits_min, bits_max, fixed, bits, &used)) break;
    }
    if (err) *err = dq__rd_err(rd, m, bits);
    if (spent) *spent = used;
    return DQ_OK;
}

/* ---------------------------------------------------------------- quantized values of sparse messages
 * A sparse message whose header width is 1..16 bits (a composed message, doc/FORMAT.md 20.10)
 * carries its k values as the body of a QSGD message M' of those values: count k, the sparse
 * header's width, coder, norm, bucket and stochastic flag, no checksum of its own, and the
 * dither key of (seed, step XOR 2^63, stream). This part is the one place where the sparse
 * family meets the level codec: M''s params, its capacity and encoder (dq__lv_capacity,
 * dq__lv_encode), the parse of its body's sizes (dq__lv_header) and a reader that decodes its
 * values a block at a time (dq__fixed_check, dq__cdec_*, dq__decode_run), so that a sparse
 * decoder needs no buffer of k values. */

#define DQ__CM_STEP_FLIP ((uint64_t)1 << 63) /* M''s step: the header's with the top bit flipped */

/* A sparse header width that carries quantized values. */
static inline int dq__cm_bits(unsigned bits) { return bits >= 1u && bits <= 16u; }

/* The params of M' from the caller's sparse params (whose bits are 1..16). */
static inline void dq__cm_params(const dq_params *p, dq_params *q) {
    memset(q, 0, sizeof *q);
    q->scheme = DQ_SCHEME_QSGD;
    q->bits = p->bits;
    q->bucket = p->bucket;
    q->rounding = p->rounding;
    q->norm = p->norm;
    q->seed = p->seed;
    q->step = p->step ^ DQ__CM_STEP_FLIP;
    q->stream = p->stream;
    q->checksum = p->checksum;
    q->coder = p->coder;
}

/* The dst capacity the QSGD encoder needs for M' of k >= 1 values; UINT64_MAX when it does not
 * fit size_t. */
static inline uint64_t dq__cm_capacity(const dq_params *q, size_t k) {
    size_t size = 0;
    return dq__lv_capacity(q, k, &size) == DQ_OK ? (uint64_t)size : UINT64_MAX;
}

/* M''s header fields as a composed message's header gives them (the wire norm byte). */
typedef struct dq__cm_head {
    unsigned bits, coder, norm, stochastic;
    uint32_t bucket; /* as on the wire: 0 = all k values */
} dq__cm_head;

/* The sizes of M''s body at `body` (avail bytes there) for k >= 1 values, as dq__lv_header
 * parses a QSGD message: *lh (count, coder, payload_size, msg_size = 48 + the body) and its
 * configuration *lc. The checks of FORMAT 20.6 step 5 (DQ_ERR_TRUNCATED, DQ_ERR_CORRUPT,
 * DQ_ERR_TOO_LARGE); the fields themselves were checked with the sparse header. */
static inline dq_status dq__cm_parse(const dq__cm_head *f, const uint8_t *body, size_t avail, size_t k,
                                     dq_header *lh, dq__cfg *lc) {
    uint8_t head[DQ_HEADER_SIZE + 8u]; /* the header fields dq__lv_header reads, and the 8-byte length */
    size_t have = avail < 8u ? avail : 8u;
    memset(head, 0, sizeof head);
    memset(lh, 0, sizeof *lh);
    head[DQ__H_NORM] = (uint8_t)f->norm;
    if (have) memcpy(head + DQ_HEADER_SIZE, body, have);
    lh->scheme = DQ_SCHEME_QSGD;
    lh->bits = f->bits;
    lh->coder = f->coder;
    lh->flags = f->stochastic ? DQ_FLAG_STOCHASTIC : 0u;
    lh->bucket = f->bucket;
    return dq__lv_header(head, DQ_HEADER_SIZE + have, (uint64_t)k, lh, lc);
}

/* Writes M' of the k >= 1 values w with params q at dst[0..cap): its 48-byte header, then the
 * body, which the caller keeps. *f gets the header fields the encoder chose (coder, norm),
 * *cs whether it added a payload checksum (the last 4 of *len bytes). */
static inline dq_status dq__cm_encode(const dq_params *q, const float *w, size_t k, uint8_t *dst, size_t cap,
                                      dq__cm_head *f, unsigned *cs, size_t *len) {
    unsigned flags;
    dq_status st = dq__lv_encode(q, DQ_F32, w, k, DQ_F32, NULL, dst, cap, len);
    if (st != DQ_OK) return st;
    flags = dq__ld16(dst + DQ__H_FLAGS);
    f->bits = dst[DQ__H_BITS];
    f->coder = dst[DQ__H_CODER];
    f->norm = dst[DQ__H_NORM];
    f->stochastic = (flags & DQ_FLAG_STOCHASTIC) != 0;
    f->bucket = dq__ld32(dst + DQ__H_BUCKET);
    *cs = (flags & DQ_FLAG_CHECKSUM) != 0;
    return DQ_OK;
}

/* The decoded values of M', a block of 256 at a time, from its body in memory. */
typedef struct dq__cm_reader {
    dq__cfg c;
    const uint8_t *scales, *payload; /* payload: the fixed layout's (coder 0) */
    dq__cdec cd;                     /* coders 1 and 3 */
    int coded;
    size_t k, pos, cnt, at; /* values decoded so far; buffered; the next buffered one */
    float v[DQ__BLOCK];
} dq__cm_reader;

/* Opens the reader on the body of M' (k >= 1 values, coder and bits of its header, lc its
 * configuration); with `check`, validates every scale and the payload first (FORMAT 20.6 step
 * 7), so that the values decode without a failure. */
static inline dq_status dq__cm_open(dq__cm_reader *r, const dq__cfg *lc, unsigned coder, unsigned bits, size_t k,
                                    const uint8_t *body, int check) {
    r->c = *lc;
    r->k = k;
    r->pos = r->cnt = r->at = 0;
    r->coded = dq__coders[coder].open != NULL; /* else the fixed layout, read in place */
    r->scales = body + dq__coders[coder].head;
    r->payload = r->scales + lc->prefix;
    if (!r->coded) return check ? dq__fixed_check(lc, k, r->scales, r->payload) : DQ_OK;
    if (check && dq__fixed_check(lc, 0, r->scales, NULL) != DQ_OK) return DQ_ERR_CORRUPT; /* the scales */
    if (dq__cdec_open(&r->cd, coder, bits, k, r->payload, (size_t)dq__ld64(body)) != DQ_OK) return DQ_ERR_CORRUPT;
    r->cd.trusted = !check;
    return check ? dq__cdec_validate(&r->cd) : DQ_OK; /* decodes it once, then rewinds */
}

/* The next value (called at most k times). */
static inline float dq__cm_next(dq__cm_reader *r) {
    if (r->at == r->cnt) {
        size_t end = r->k - r->pos > DQ__BLOCK ? r->pos + DQ__BLOCK : r->k;
        dq__decode_run(&r->c, r->scales, r->payload, r->coded ? &r->cd : NULL, r->pos, end, 1.0f, 0, r->v);
        r->cnt = end - r->pos;
        r->pos = end;
        r->at = 0;
    }
    return r->v[r->at++];
}
/* ---------------------------------------------------------------- sparsifiers
 * Top-k, random-k and threshold messages (doc/FORMAT.md "Sparse messages", doc/MATHS.md 7),
 * with fused error feedback; their values as float32, or quantized (composed messages, the
 * part before this one).
 *
 * Selection works on keys: the float32 bit pattern of |c| with the sign cleared, which orders
 * like |c| for finite values (+0 and -0 share key 0; Inf and NaN have keys >= 0x7F800000).
 * Top-k is exact and O(n): a strided sample brackets the k-th largest key, one counting pass
 * histograms the keys inside the bracket (and proves the input finite), and one collecting
 * pass gathers the kept indices in ascending order. Most elements fall below the bracket, so
 * both passes are compare-and-skip loops over 64-element masks (dq__k_sp_mask64). Equal keys
 * are broken by index: the lower index is kept. No allocation: the index list lives at the end
 * of the caller's destination buffer (its capacity is checked against the size bound first)
 * and the selection's working set (16 KiB) on the stack. */

#define DQ__SP_FIN 0x7F800000u    /* keys at or above this are Inf or NaN */
#define DQ__SP_MAXKEY 0x7F7FFFFFu /* FLT_MAX */
#define DQ__SP_NB 2048u           /* histogram bins per counting pass */
#define DQ__SP_NS 2048u           /* sample size (inputs of at least 8 x this are sampled) */
#define DQ__SP_NC 2048u           /* most candidates the collecting pass resolves on the stack */
#define DQ__SP_CHUNK 256u         /* indices per chunk when a decoder walks an index stream */
#define DQ__SP_MAX_N ((uint64_t)1 << 32)
#define DQ__SP_K_OFF 48u   /* u64 k */
#define DQ__SP_RAND_VALS 56u /* RANDK: the values */
#define DQ__SP_LEN_OFF 56u /* TOPK, THRESHOLD: u64 byte length of the index stream */
#define DQ__SP_STREAM 64u  /* TOPK, THRESHOLD: the index stream, then the values */

/* The scan of elements i .. min(i + 64, n) (the kernels and the key dq__sp_key are with the
 * scalar kernels). */
static inline uint64_t dq__sp_mask(const float *x, const float *e, float *eo, size_t i, size_t n, uint32_t lo) {
    if (n - i >= 64u) return dq__k_sp_mask64(x + i, e ? e + i : NULL, eo ? eo + i : NULL, lo);
    return dq__sp_mask__scalar(x + i, e ? e + i : NULL, eo ? eo + i : NULL, n - i, lo);
}

/* ---- small sorts (heapsort: bounded time, no recursion) */
static inline void dq__sp_sift(uint64_t *a, size_t m, size_t i) {
    uint64_t v = a[i];
    for (;;) {
        size_t c = 2u * i + 1u;
        if (c >= m) break;
        if (c + 1u < m && a[c + 1u] > a[c]) c++;
        if (a[c] <= v) break;
        a[i] = a[c];
        i = c;
    }
    a[i] = v;
}
static inline void dq__sp_sort64(uint64_t *a, size_t m) {
    size_t i;
    if (m < 2) return;
    for (i = m / 2u; i-- > 0;) dq__sp_sift(a, m, i);
    for (i = m - 1u; i > 0; i--) {
        uint64_t t = a[0];
        a[0] = a[i];
        a[i] = t;
        dq__sp_sift(a, i, 0);
    }
}

/* ---- selection plan
 * A pass keeps every key > bhi; keys in [blo, bhi] are the boundary: when blo == bhi (one key
 * value) the first r of them in index order are kept, otherwise they are candidates (at most
 * DQ__SP_NC) of which the r largest (lower index first among equals) are kept. Threshold:
 * blo = bhi + 1, no boundary. */
typedef struct dq__sp_cut {
    uint32_t blo, bhi;
    size_t r;
} dq__sp_cut;

/* The input of a sparse encoder: x and the residual e (or NULL) of dtypes xt and et, which the
 * passes read a chunk at a time (float data in one piece, in place). `late`: the residual is
 * written by the encoder's last pass only (a composed message can still fail after the
 * selection); otherwise the collecting pass compensates a float residual in place. */
typedef struct dq__sp_src {
    dq_dtype xt, et;
    const void *x;
    void *e;
    int flt, late;
    float xb[DQ__ELCHUNK], eb[DQ__ELCHUNK];
} dq__sp_src;
static inline void dq__sp_src_init(dq__sp_src *s, dq_dtype xt, const void *x, dq_dtype et, void *e) {
    s->xt = xt;
    s->et = et;
    s->x = x;
    s->e = e;
    s->flt = xt == DQ_F32 && (!e || et == DQ_F32);
    s->late = 0;
}
/* The chunk of elements from i0 (of n) as floats in *x, *e (NULL without a residual); returns
 * its length. A float residual comes in place, a 16-bit one as a copy. */
static inline size_t dq__sp_src_get(dq__sp_src *s, size_t i0, size_t n, const float **x, float **e) {
    size_t cnt = dq__el_chunk(s->flt, n);
    if (n - i0 < cnt) cnt = n - i0;
    *x = dq__el_in(s->xt, s->x, i0, cnt, s->xb);
    *e = s->e ? dq__el_inout(s->et, s->e, i0, cnt, s->eb) : NULL;
    return cnt;
}
/* Element i of x (+ e). */
static inline float dq__sp_src_at(const dq__sp_src *s, size_t i) {
    float v = dq__el_get(s->xt, s->x, i);
    if (s->e) v = v + dq__el_get(s->et, s->e, i);
    return v;
}

/* Counting pass over [0, n): DQ_ERR_NONFINITE if a key is >= DQ__SP_FIN (every such key is
 * >= lo, lo <= DQ__SP_FIN), *above = keys > hi, hist[(key - lo) >> s] counts the keys in
 * [lo, hi] (hist may be NULL when hi < lo). */
static inline dq_status dq__sp_count(dq__sp_src *src, size_t n, uint32_t lo, uint32_t hi, unsigned s, uint64_t *hist,
                                     size_t *above) {
    size_t i0, cnt, i, a = 0;
    const float *x;
    float *e;
    for (i0 = 0; i0 < n; i0 += cnt) {
        cnt = dq__sp_src_get(src, i0, n, &x, &e);
        for (i = 0; i < cnt; i += 64u) {
            uint64_t m = dq__sp_mask(x, e, NULL, i, cnt, lo);
            for (; m; m &= m - 1u) {
                size_t j = i + dq__ctz64(m);
                uint32_t key = dq__sp_key(e ? x[j] + e[j] : x[j]);
                if (key >= DQ__SP_FIN) return DQ_ERR_NONFINITE;
                if (key > hi)
                    a++;
                else
                    hist[(key - lo) >> s]++;
            }
        }
    }
    *above = a;
    return DQ_OK;
}

/* Bracket [lo, hi] for the k-th largest key from a strided sample: sample ranks a few standard
 * deviations either side of the expected rank. Only speed depends on it, never the result. */
static inline void dq__sp_bracket(const dq__sp_src *src, size_t n, size_t k, uint64_t *w, uint32_t *lo, uint32_t *hi) {
    const size_t S = DQ__SP_NS;
    double q = (double)k / (double)n, mu = (double)S * q, sd = sqrt(mu * (1.0 - q)), sd4 = 4.0 * sd;
    double rl = ceil(mu + sd4 + 2.0), rh = floor(mu - sd4 - 2.0);
    size_t t;
    uint32_t l, h;
    for (t = 0; t < S; t++) {
        size_t i = (size_t)(((uint64_t)(2u * t + 1u) * (uint64_t)n) / (2u * S));
        w[t] = dq__sp_key(dq__sp_src_at(src, i));
    }
    dq__sp_sort64(w, S); /* ascending: descending rank r is w[S - 1 - r] */
    l = rl >= (double)S ? 0u : (uint32_t)w[S - 1u - (size_t)rl];
    if (rh >= 0.0) {
        h = (uint32_t)w[S - 1u - (size_t)rh];
    } else { /* above the sample's maximum: as far again as the bracket reaches below it */
        uint64_t mx = w[S - 1u], ext = mx + (mx - l);
        h = ext > DQ__SP_MAXKEY ? DQ__SP_MAXKEY : (uint32_t)ext;
    }
    if (l > DQ__SP_MAXKEY) l = DQ__SP_MAXKEY; /* so that Inf and NaN keys stay >= lo */
    if (h > DQ__SP_MAXKEY) h = DQ__SP_MAXKEY;
    *lo = l;
    *hi = h;
}

/* The cut of the k largest keys (1 <= k <= n): counting passes until the k-th largest key lies
 * in a bin that is one key wide or holds at most DQ__SP_NC keys. The first pass also proves
 * the input finite. w: DQ__SP_NB words of scratch. */
static inline dq_status dq__sp_plan_topk(dq__sp_src *src, size_t n, size_t k, uint64_t *w, dq__sp_cut *cut) {
    uint32_t lo = 0, hi = DQ__SP_MAXKEY;
    if (k == n) { /* keep all: one key-0 boundary with room for every zero */
        size_t above;
        cut->blo = cut->bhi = 0;
        cut->r = n;
        return dq__sp_count(src, n, DQ__SP_FIN, DQ__SP_MAXKEY, 0, NULL, &above);
    }
    if (n >= 8u * DQ__SP_NS) dq__sp_bracket(src, n, k, w, &lo, &hi);
    for (;;) {
        unsigned s = 0;
        size_t above = 0, acc, b, nb;
        dq_status st;
        while (((hi - lo) >> s) >= DQ__SP_NB) s++;
        nb = (size_t)((hi - lo) >> s) + 1u;
        memset(w, 0, nb * sizeof *w);
        if ((st = dq__sp_count(src, n, lo, hi, s, w, &above)) != DQ_OK) return st;
        if (above >= k) { /* the k-th largest is above the bracket */
            lo = hi + 1u;
            hi = DQ__SP_MAXKEY;
            continue;
        }
        acc = above;
        for (b = nb; b-- > 0;) {
            if (acc + w[b] >= k) break;
            acc += (size_t)w[b];
        }
        if (b == (size_t)-1) { /* below the bracket (lo > 0 here: all n keys are >= 0) */
            hi = lo - 1u;
            lo = 0;
            continue;
        }
        {
            uint64_t blo = (uint64_t)lo + ((uint64_t)b << s), bhi = blo + (((uint64_t)1 << s) - 1u);
            if (bhi > hi) bhi = hi;
            if (blo == bhi || w[b] <= DQ__SP_NC) {
                cut->blo = (uint32_t)blo;
                cut->bhi = (uint32_t)bhi;
                cut->r = k - acc;
                return DQ_OK;
            }
            lo = (uint32_t)blo; /* refine inside the bin */
            hi = (uint32_t)bhi;
        }
    }
}

/* Collecting pass: the kept indices in ascending order into idx, the boundary candidates into
 * cand as key << 32 | (2^32 - 1 - index). A float residual becomes e = x + e (the compensated
 * vector) here, unless src->late; a 16-bit one is left for the encoder's last pass. Returns the
 * number of indices in idx; *nc the number of candidates. */
static inline size_t dq__sp_collect(dq__sp_src *src, size_t n, const dq__sp_cut *cut, uint32_t *idx, uint64_t *cand,
                                    size_t *nc) {
    size_t i0, cnt, i, na = 0, c = 0, ties = cut->blo == cut->bhi ? cut->r : 0;
    const float *x;
    float *e, *eo;
    for (i0 = 0; i0 < n; i0 += cnt) {
        cnt = dq__sp_src_get(src, i0, n, &x, &e);
        eo = src->flt && !src->late ? e : NULL;
        for (i = 0; i < cnt; i += 64u) {
            uint64_t m = dq__sp_mask(x, e, eo, i, cnt, cut->blo);
            for (; m; m &= m - 1u) {
                size_t j = i + dq__ctz64(m);
                uint32_t key = dq__sp_key(eo ? eo[j] : (e ? x[j] + e[j] : x[j]));
                if (key > cut->bhi) {
                    idx[na++] = (uint32_t)(i0 + j);
                } else if (cut->blo == cut->bhi) {
                    if (ties) {
                        ties--;
                        idx[na++] = (uint32_t)(i0 + j);
                    }
                } else {
                    cand[c++] = (uint64_t)key << 32 | (0xFFFFFFFFu - (uint32_t)(i0 + j));
                }
            }
        }
    }
    *nc = c;
    return na;
}

/* The r best candidates (largest key, then lowest index) merged into idx[0..na) (ascending);
 * idx has room for na + r. */
static inline void dq__sp_resolve(uint32_t *idx, size_t na, uint64_t *cand, size_t nc, size_t r) {
    uint64_t *sel = cand + (nc - r);
    size_t j, w = na + r, i = na;
    dq__sp_sort64(cand, nc);
    for (j = 0; j < r; j++) sel[j] = 0xFFFFFFFFu - (uint32_t)sel[j];
    dq__sp_sort64(sel, r);
    for (j = r; j > 0;) { /* merge from the back */
        if (i > 0 && idx[i - 1u] > sel[j - 1u])
            idx[--w] = idx[--i];
        else
            idx[--w] = (uint32_t)sel[--j];
    }
}

/* Top-k and threshold selection: the indices of the cut in ascending order into idx (room for
 * k); w is the planning scratch, reused for the candidates. */
static inline void dq__sp_select(dq__sp_src *src, size_t n, size_t k, const dq__sp_cut *cut, uint32_t *idx,
                                 uint64_t *w) {
    size_t nc = 0, na = dq__sp_collect(src, n, cut, idx, w, &nc);
    if (na < k) dq__sp_resolve(idx, na, w, nc, k - na);
}

DQ_API dq_status dq_topk_select(const float *x, size_t n, size_t k, uint32_t *idx) {
    uint64_t w[DQ__SP_NB];
    dq__sp_src src;
    dq__sp_cut cut;
    dq_status st;
    if (!x || !idx) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if ((uint64_t)n > DQ__SP_MAX_N) return DQ_ERR_TOO_LARGE;
    if (k == 0 || k > n) return DQ_ERR_PARAM;
    dq__sp_src_init(&src, DQ_F32, x, DQ_F32, NULL);
    if ((st = dq__sp_plan_topk(&src, n, k, w, &cut)) != DQ_OK) return st;
    dq__sp_select(&src, n, k, &cut, idx, w);
    return DQ_OK;
}

/* ---- random-k strata (doc/FORMAT.md "Random-k indices"): stratum j is
 * [floor(j n / k), floor((j + 1) n / k)), of length m = q or q + 1 (q = floor(n / k)), walked
 * with an integer remainder so nothing overflows; its index is start + (h32(j) m >> 32). */
typedef struct dq__sp_strata {
    uint64_t q, r, t, k, start, m;
    uint32_t k0, k1;
} dq__sp_strata;
static inline void dq__sp_strata_init(dq__sp_strata *s, uint64_t n, uint64_t k, uint64_t seed, uint64_t step,
                                      uint32_t stream) {
    dq__key key = dq__key_make(seed, step, stream);
    s->q = n / k;
    s->r = n % k;
    s->t = 0;
    s->k = k;
    s->start = 0;
    s->m = 0;
    s->k0 = key.k0;
    s->k1 = dq__key_hi(key, 0); /* j < 2^32: the high half of the counter is 0 */
}
/* Index of stratum j (called for j = 0, 1, ... in order); s->m is its length afterwards. */
static inline size_t dq__sp_strata_next(dq__sp_strata *s, uint32_t j) {
    uint64_t start = s->start, m = s->q;
    if (s->t + s->r >= s->k) {
        m++;
        s->t = s->t + s->r - s->k;
    } else {
        s->t += s->r;
    }
    s->start = start + m;
    s->m = m;
    return (size_t)(start + (((uint64_t)dq__draw32(s->k0, s->k1, j) * m) >> 32));
}

/* ---- parameters and sizes */
typedef struct dq__sp_cfg {
    unsigned scheme, cs, rescale;
    unsigned bits;   /* 1..16: composed (the values are the body of M', params q); 0: float32 */
    dq_index_coder coder;
    size_t k;        /* TOPK, RANDK; THRESHOLD: 0 until counted */
    uint32_t tkey;   /* THRESHOLD: key of the threshold */
    dq_params q;     /* composed: the params of M' (composed part) */
    dq__cfg lc;      /* composed: M''s configuration for one value (its norm, flags, bucket) */
} dq__sp_cfg;

/* Every field that does not apply must be zero (a set field means the caller expects a
 * behaviour these schemes do not have); bits may also be 32, the width on the wire. With bits
 * 1..16 the fields of the values' QSGD message are checked as for QSGD. */
static inline dq_status dq__sp_cfg_make(const dq_params *p, size_t n, dq__sp_cfg *c) {
    unsigned sc = (unsigned)p->scheme;
    int topk = sc == DQ_SCHEME_TOPK, randk = sc == DQ_SCHEME_RANDK, thr = sc == DQ_SCHEME_THRESHOLD;
    dq_status st;
    if (!topk && !randk && !thr) return DQ_ERR_PARAM;
    c->bits = dq__cm_bits(p->bits) ? p->bits : 0u;
    if (c->bits) {
        dq__cm_params(p, &c->q);
        if ((st = dq__cfg_make(&c->q, 1, &c->lc)) != DQ_OK) return st; /* bucket, rounding, norm, coder, checksum */
    } else if (p->bits != 0 && p->bits != 32u) {
        return DQ_ERR_BITS;
    } else if (p->bucket != 0 || p->rounding != DQ_ROUND_DEFAULT || p->norm != DQ_NORM_DEFAULT ||
               !dq__fixed_asked(p) || p->checksum > 1u) {
        return DQ_ERR_PARAM;
    }
    if (p->alpha != 0.0f || p->levels) return DQ_ERR_PARAM;
    if ((!randk && p->unbiased) || p->unbiased > 1u || (randk && p->index_coder) || p->index_coder > (unsigned)DQ_INDEX_RICE ||
        (!thr && p->threshold != 0.0f) || (thr && p->k))
        return DQ_ERR_PARAM;
    if (n == 0) return DQ_ERR_EMPTY;
    if ((uint64_t)n > DQ__SP_MAX_N) return DQ_ERR_TOO_LARGE;
    if (!thr && (p->k == 0 || p->k > n)) return DQ_ERR_PARAM;
    if (thr && !(p->threshold >= 0.0f && p->threshold <= FLT_MAX)) return DQ_ERR_PARAM; /* NaN, Inf */
    c->scheme = sc;
    c->cs = p->checksum;
    c->rescale = p->unbiased;
    c->coder = (dq_index_coder)p->index_coder;
    c->k = thr ? 0 : p->k;
    c->tkey = thr ? dq__sp_key(p->threshold) : 0u;
    return DQ_OK;
}

/* Largest index stream the encoder writes with `coder` for k indices below n (FORMAT 18.7; RICE
 * with the parameter it picks); AUTO picks the smallest exact size, so the smallest bound holds
 * for it. */
static inline uint64_t dq__sp_ibound(uint64_t k, uint64_t n, dq_index_coder coder) {
    uint64_t b[5], best;
    unsigned c;
    dq__index_bodies_max(k, n, b, &best);
    b[DQ_INDEX_RICE] = best; /* the encoder's parameter, not any */
    if (coder != DQ_INDEX_AUTO) return DQ_INDEX_HEADER_SIZE + b[coder];
    best = b[DQ_INDEX_GAMMA];
    for (c = DQ_INDEX_VARINT; c <= DQ_INDEX_RICE; c++)
        if (b[c] < best) best = b[c];
    return DQ_INDEX_HEADER_SIZE + best;
}
/* The largest stream of any coder, RICE with any parameter (what a decoder accepts; FORMAT
 * 18.7). */
static inline uint64_t dq__sp_ibound_any(uint64_t k, uint64_t n) { return dq__index_bound64(k, n); }
/* Room the encoder needs for k kept elements (FORMAT 20.7): the exact size for float32 RANDK;
 * for TOPK and THRESHOLD the bound with the stream's bound, plus 4 bytes for aligning the index
 * list that the encoder keeps at the end of the buffer. Composed (k >= 1): the capacity of M',
 * whose header goes 48 bytes before the values, then the k gathered values and the index list
 * (4-byte aligned); UINT64_MAX when M''s does not fit size_t. */
static inline uint64_t dq__sp_room(const dq__sp_cfg *c, uint64_t k, uint64_t n) {
    uint64_t lv;
    if (!c->bits || k == 0) {
        if (c->scheme == DQ_SCHEME_RANDK) return DQ__SP_RAND_VALS + 4u * k + 4u * c->cs;
        return DQ__SP_STREAM + dq__sp_ibound(k, n, c->coder) + 4u * k + 4u * c->cs + 4u;
    }
    if ((lv = dq__cm_capacity(&c->q, (size_t)k)) == UINT64_MAX) return UINT64_MAX;
    if (c->scheme == DQ_SCHEME_RANDK) return DQ__SP_RAND_VALS - DQ_HEADER_SIZE + lv + 4u * k + 4u;
    return DQ__SP_STREAM + dq__sp_ibound(k, n, c->coder) - DQ_HEADER_SIZE + lv + 8u * k + 4u;
}

static inline dq_status dq__sp_size(const dq_params *p, size_t n, size_t *size) {
    dq__sp_cfg c;
    uint64_t s;
    dq_status st = dq__sp_cfg_make(p, n, &c);
    if (st != DQ_OK) return st;
    s = dq__sp_room(&c, c.scheme == DQ_SCHEME_THRESHOLD ? (uint64_t)n : (uint64_t)c.k, n);
    if (s > (uint64_t)SIZE_MAX) return DQ_ERR_TOO_LARGE;
    *size = (size_t)s;
    return DQ_OK;
}

/* ---- encoder */
/* The header and k; f: the values' header fields (float32: bits 32, the rest 0; composed: M''s),
 * cs: the payload checksum follows. */
static inline void dq__sp_head(const dq__sp_cfg *c, const dq_params *p, const dq__cm_head *f, unsigned cs, size_t n,
                               size_t k, uint8_t *dst) {
    unsigned flags = (cs ? DQ_FLAG_CHECKSUM : 0u) | (c->rescale ? DQ_FLAG_RESCALED : 0u) |
                     (f->stochastic ? DQ_FLAG_STOCHASTIC : 0u);
    dq__put_header(dst, c->scheme, f->bits, f->coder, f->norm, flags, f->bucket, (uint64_t)n, p);
    dq__st64(dst + DQ__SP_K_OFF, (uint64_t)k);
}
static inline void dq__sp_finish(unsigned cs, uint8_t *dst, size_t size, size_t *len) {
    if (cs) dq__st32(dst + size - 4u, dq__body_crc(dst, size));
    *len = size;
}
/* The values' header fields of a message without quantized values: float32 values, or none
 * (a composed message with k = 0: the params' norm, rounding and bucket, coder 0). */
static inline void dq__sp_fields(const dq__sp_cfg *c, dq__cm_head *f) {
    memset(f, 0, sizeof *f);
    f->bits = c->bits ? c->bits : 32u;
    if (!c->bits) return;
    f->norm = c->lc.norm;
    f->stochastic = c->lc.stochastic;
    f->bucket = c->lc.bucket_wire;
}

/* Composed: the values part at dst + at, M' of the k >= 1 values w[] (FORMAT 20.10), written by
 * the QSGD encoder into dst[at - 48 .. lim), whose header lands on the 48 bytes before the
 * values (saved and put back). With `ef`, w[] then gets the decoded values, for the residual.
 * *f, *cs: M''s header fields and whether it ends in a checksum (which becomes the message's);
 * *vlen: the values part's bytes, that checksum included. */
static inline dq_status dq__sp_values_cm(const dq__sp_cfg *c, float *w, size_t k, uint8_t *dst, size_t at,
                                         size_t lim, int ef, dq__cm_head *f, unsigned *cs, size_t *vlen) {
    uint8_t keep[DQ_HEADER_SIZE], *m = dst + at - DQ_HEADER_SIZE;
    size_t len = 0, j;
    dq_status st;
    memcpy(keep, m, DQ_HEADER_SIZE);
    st = dq__cm_encode(&c->q, w, k, m, lim - (at - DQ_HEADER_SIZE), f, cs, &len);
    memcpy(m, keep, DQ_HEADER_SIZE);
    if (st != DQ_OK) return st;
    *vlen = len - DQ_HEADER_SIZE;
    if (ef) {
        dq__cm_reader rd;
        dq_header lh;
        dq__cfg lc;
        if (dq__cm_parse(f, dst + at, *vlen, k, &lh, &lc) != DQ_OK ||
            dq__cm_open(&rd, &lc, f->coder, f->bits, k, dst + at, 0) != DQ_OK)
            return DQ_ERR_CORRUPT; /* cannot happen: the QSGD encoder wrote it */
        for (j = 0; j < k; j++) w[j] = dq__cm_next(&rd);
    }
    return DQ_OK;
}

/* Random-k: the finiteness pass (residual untouched on failure), the values, then the
 * residual: e = c everywhere, minus the value sent (decoded, when composed) where one was.
 * Composed: the values are gathered at the end of dst first. */
static inline dq_status dq__sp_encode_randk(const dq__sp_cfg *c, const dq_params *p, dq__sp_src *src, size_t n,
                                            uint8_t *dst, size_t cap, size_t *len) {
    dq__sp_strata s;
    dq__cm_head f;
    uint8_t *vals = dst + DQ__SP_RAND_VALS;
    float *w = NULL;
    size_t above, j, k = c->k, i0, cnt, i = 0, top = 0, vlen = 4u * k;
    unsigned cs = c->cs;
    const float *x;
    float *e;
    dq_status st = dq__sp_count(src, n, DQ__SP_FIN, DQ__SP_MAXKEY, 0, NULL, &above);
    if (st != DQ_OK) return st;
    dq__sp_fields(c, &f);
    if (c->bits) { /* the values gathered 4-byte aligned, ending at most 3 bytes before dst + cap */
        top = cap - 4u * k;
        top -= (size_t)(((uintptr_t)(dst + top)) & 3u);
        w = (float *)(void *)(dst + top);
    }
    dq__sp_strata_init(&s, n, k, p->seed, p->step, p->stream);
    for (j = 0; j < k; j++) {
        float v = dq__sp_src_at(src, dq__sp_strata_next(&s, (uint32_t)j));
        if (c->rescale) v = v * (float)s.m;
        if (dq__sp_key(v) >= DQ__SP_FIN) return DQ_ERR_OVERFLOW; /* m c beyond FLT_MAX */
        if (w)
            w[j] = v;
        else
            dq__st32(vals + 4u * j, dq__fbits(v));
    }
    if (w && (st = dq__sp_values_cm(c, w, k, dst, DQ__SP_RAND_VALS, top, src->e != NULL, &f, &cs, &vlen)) != DQ_OK)
        return st;
    if (src->e) { /* the strata are in index order: walk them beside the chunks */
        dq__sp_strata_init(&s, n, k, p->seed, p->step, p->stream);
        j = 0;
        i = dq__sp_strata_next(&s, 0);
        for (i0 = 0; i0 < n; i0 += cnt) {
            cnt = dq__sp_src_get(src, i0, n, &x, &e);
            dq__k_compensate(x, e, cnt);
            for (; j < k && i < i0 + cnt; i = ++j < k ? dq__sp_strata_next(&s, (uint32_t)j) : n)
                e[i - i0] = e[i - i0] - (w ? w[j] : dq__bitsf(dq__ld32(vals + 4u * j)));
            dq__el_out(src->et, e, cnt, src->e, i0);
        }
    }
    dq__sp_head(c, p, &f, cs, n, k, dst);
    dq__sp_finish(cs, dst, DQ__SP_RAND_VALS + vlen + (w ? 0u : 4u * cs), len);
    return DQ_OK;
}

/* Top-k and threshold: plan (read-only), check the room for k, collect into the index list at
 * the end of dst, then the stream, and a last pass for the values and the residual of the kept
 * elements (a 16-bit residual is compensated there, chunk by chunk). Composed: the values are
 * gathered below the index list, quantized after the stream, and the last pass writes the whole
 * residual (the collecting pass leaves it alone, src->late, since quantizing can still fail). */
static inline dq_status dq__sp_encode_idx(dq__sp_cfg *c, const dq_params *p, dq__sp_src *src, size_t n, uint8_t *dst,
                                          size_t cap, size_t *len) {
    uint64_t w[DQ__SP_NB];
    dq__sp_cut cut;
    dq__cm_head f;
    uint32_t *idx;
    uint8_t *vals;
    float *vq = NULL; /* composed: the gathered, then decoded, values */
    size_t k, slen = 0, j = 0, top, i0, cnt, lim, vlen;
    unsigned cs = c->cs;
    const float *x;
    float *e;
    dq_status st;
    if (c->scheme == DQ_SCHEME_TOPK) {
        if (cap < dq__sp_room(c, c->k, n)) return DQ_ERR_DST_TOO_SMALL;
        if ((st = dq__sp_plan_topk(src, n, c->k, w, &cut)) != DQ_OK) return st;
    } else {
        size_t cnt_above = 0;
        cut.bhi = c->tkey;
        cut.blo = c->tkey + 1u; /* <= DQ__SP_FIN: a finite threshold */
        cut.r = 0;
        if ((st = dq__sp_count(src, n, cut.blo, cut.bhi, 0, NULL, &cnt_above)) != DQ_OK) return st;
        if (cap < dq__sp_room(c, cnt_above, n)) return DQ_ERR_DST_TOO_SMALL;
        c->k = cnt_above;
    }
    k = c->k;
    dq__sp_fields(c, &f);
    /* the index list: 4-byte aligned, ending at most 3 bytes before dst + cap */
    top = cap - 4u * k;
    top -= (size_t)(((uintptr_t)(dst + top)) & 3u);
    idx = (uint32_t *)(void *)(dst + top);
    lim = top;
    if (c->bits) { /* composed: the values below the list; the residual in the last pass */
        lim = top - 4u * k;
        vq = (float *)(void *)(dst + lim);
        src->late = 1;
    }
    dq__sp_select(src, n, k, &cut, idx, w);
    /* the stream ends before the list (the room has 4 spare bytes), the values trail it */
    st = dq_index_encode(idx, k, (uint64_t)n, c->coder, dst + DQ__SP_STREAM, lim - DQ__SP_STREAM, &slen);
    if (st != DQ_OK) return st; /* cannot happen: the room bounds the stream */
    vals = dst + DQ__SP_STREAM + slen;
    if (c->bits) {
        vlen = 0;
        if (k) {
            for (j = 0; j < k; j++) vq[j] = dq__sp_src_at(src, idx[j]); /* c = x + e, as compensated below */
            st = dq__sp_values_cm(c, vq, k, dst, DQ__SP_STREAM + slen, lim, src->e != NULL, &f, &cs, &vlen);
            if (st != DQ_OK) return st;
        }
        for (i0 = 0, j = 0; i0 < n && src->e; i0 += cnt) { /* e = c, minus the decoded value where sent */
            cnt = dq__sp_src_get(src, i0, n, &x, &e);
            dq__k_compensate(x, e, cnt);
            for (; j < k && idx[j] < i0 + cnt; j++) e[idx[j] - i0] = e[idx[j] - i0] - vq[j];
            dq__el_out(src->et, e, cnt, src->e, i0);
        }
    } else {
        for (i0 = 0; i0 < n && (src->e || j < k); i0 += cnt) {
            cnt = dq__sp_src_get(src, i0, n, &x, &e);
            if (e && !src->flt) dq__k_compensate(x, e, cnt); /* the collecting pass did it for floats */
            for (; j < k && idx[j] < i0 + cnt; j++) { /* value j lands at or below idx[j], which was read first */
                size_t i = idx[j] - i0;
                float v = e ? e[i] : x[i];
                if (e) e[i] = v - v; /* sent exactly: nothing left over */
                dq__st32(vals + 4u * j, dq__fbits(v));
            }
            if (e) dq__el_out(src->et, e, cnt, src->e, i0);
        }
        vlen = 4u * k + 4u * cs;
    }
    dq__sp_head(c, p, &f, cs, n, k, dst);
    dq__st64(dst + DQ__SP_LEN_OFF, (uint64_t)slen);
    dq__sp_finish(cs, dst, DQ__SP_STREAM + slen + vlen + (c->bits && !k ? 4u * cs : 0u), len);
    return DQ_OK;
}

static inline dq_status dq__sp_encode(const dq_params *p, dq_dtype xt, const void *x, size_t n, dq_dtype rt,
                                      void *residual, void *dst_v, size_t cap, size_t *len) {
    uint8_t *dst = (uint8_t *)dst_v;
    dq__sp_cfg c;
    dq__sp_src src;
    dq_status st;
    if (!x || !dst) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if ((st = dq__sp_cfg_make(p, n, &c)) != DQ_OK) return st;
    dq__sp_src_init(&src, xt, x, rt, residual);
    if (c.scheme == DQ_SCHEME_RANDK) {
        if (cap < dq__sp_room(&c, c.k, n)) return DQ_ERR_DST_TOO_SMALL;
        return dq__sp_encode_randk(&c, p, &src, n, dst, cap, len);
    }
    return dq__sp_encode_idx(&c, p, &src, n, dst, cap, len);
}

/* ---- header (FORMAT 20.6 steps 1 to 6). A composed message's values part is sized as the body
 * of M' (count k), and *c gets M''s configuration, which the decoder reads its values with. */
static inline dq_status dq__sp_header(const uint8_t *in, size_t src_len, uint64_t count, dq_header *h, dq__cfg *c) {
    uint64_t n, k, size, pay, at, cs = (h->flags & DQ_FLAG_CHECKSUM) ? 4u : 0u;
    unsigned ok_flags = DQ_FLAG_CHECKSUM | (h->scheme == DQ_SCHEME_RANDK ? DQ_FLAG_RESCALED : 0u);
    int cm = dq__cm_bits(h->bits);
    if (dq__count_set(count, h) != DQ_OK) return DQ_ERR_TOO_LARGE;
    n = h->count;
    if (cm) { /* M''s fields: as for QSGD, but only a coder encoders send (not coder 2) */
        if (!dq__coder_part_ok(h->coder, h->bits) || !dq__norm_ok(DQ_SCHEME_QSGD, in[DQ__H_NORM]) ||
            h->bucket % 8u != 0 || (h->flags & ~(ok_flags | DQ_FLAG_STOCHASTIC)) || n > DQ__SP_MAX_N)
            return DQ_ERR_CORRUPT;
    } else if (h->bits != 32u || h->coder != DQ_CODER_FIXED || in[DQ__H_NORM] != 0 || h->bucket != 0 ||
               (h->flags & ~ok_flags) || n > DQ__SP_MAX_N) {
        return DQ_ERR_CORRUPT;
    }
    if (src_len < DQ__SP_K_OFF + 8u) return DQ_ERR_TRUNCATED;
    k = dq__ld64(in + DQ__SP_K_OFF);
    if (k > n || (k == 0 && (h->scheme != DQ_SCHEME_THRESHOLD || h->coder != DQ_CODER_FIXED))) return DQ_ERR_CORRUPT;
    if (h->scheme == DQ_SCHEME_RANDK) {
        pay = 0;
        at = DQ__SP_RAND_VALS;
    } else {
        if (src_len < DQ__SP_STREAM) return DQ_ERR_TRUNCATED;
        pay = dq__ld64(in + DQ__SP_LEN_OFF);
        if (pay < DQ_INDEX_HEADER_SIZE || pay > dq__sp_ibound_any(k, n)) return DQ_ERR_CORRUPT;
        at = DQ__SP_STREAM + pay;
    }
    if (cm && k) { /* the values part: the body of M' */
        dq__cm_head f;
        dq_header lh;
        dq_status st;
        f.bits = h->bits;
        f.coder = h->coder;
        f.norm = in[DQ__H_NORM];
        f.stochastic = (h->flags & DQ_FLAG_STOCHASTIC) != 0;
        f.bucket = h->bucket;
        st = dq__cm_parse(&f, in + (src_len > at ? at : src_len), src_len > at ? (size_t)(src_len - at) : 0u, (size_t)k,
                          &lh, c);
        if (st != DQ_OK) return st;
        pay += lh.msg_size - DQ_HEADER_SIZE;
    } else if (!cm) {
        pay += 4u * k;
    }
    size = (h->scheme == DQ_SCHEME_RANDK ? DQ__SP_RAND_VALS : DQ__SP_STREAM) + pay + cs;
    if (size > (uint64_t)SIZE_MAX) return DQ_ERR_TOO_LARGE;
    h->nnz = (size_t)k;
    h->payload_size = (size_t)pay;
    h->msg_size = (size_t)size;
    return DQ_OK;
}

/* ---- decoder: an index stream walked in chunks, so it can be validated in full before the
 * output is touched and then decoded again, without a buffer of k indices. The checks are
 * those of dq_index_decode (FORMAT 18.6). */
typedef struct dq__sp_it {
    dq__ihead h;
    size_t done;     /* indices produced */
    int end;         /* the stream is exhausted (and was found valid) */
    dq_bitreader r;  /* GAMMA, RICE */
    uint64_t next;   /* GAMMA, RICE: the smallest index still allowed */
    unsigned rp;     /* RICE: the parameter */
    size_t cpos, dpos, dlen; /* VARINT: control byte, data byte, data length; BITMAP: cpos = byte */
    dq__svb_acc a;
} dq__sp_it;

static inline dq_status dq__sp_it_open(dq__sp_it *it, const uint8_t *s, size_t len, uint64_t n, size_t k) {
    memset(it, 0, sizeof *it);
    if (dq__index_head(s, len, &it->h) != DQ_OK || it->h.n != n || it->h.k != k) return DQ_ERR_CORRUPT;
    it->end = k == 0 && it->h.coder != DQ_INDEX_BITMAP;
    if (it->h.coder == DQ_INDEX_GAMMA) {
        if (dq_br_init(&it->r, it->h.body, it->h.body_len) != DQ_OK) return DQ_ERR_CORRUPT;
        if (k == 0 && it->h.body_len) return DQ_ERR_CORRUPT; /* a trailing byte */
    } else if (it->h.coder == DQ_INDEX_RICE) {
        it->rp = it->h.body[0];
        if (it->rp > dq__rice_rmax(n) || dq_br_init(&it->r, it->h.body + 1, it->h.body_len - 1u) != DQ_OK)
            return DQ_ERR_CORRUPT;
        if (k == 0 && it->h.body_len != 1u) return DQ_ERR_CORRUPT; /* a trailing byte */
    } else if (it->h.coder == DQ_INDEX_VARINT) {
        size_t clen = (size_t)dq__index_ctrl_len(k), i;
        const uint8_t *ctrl = it->h.body;
        uint64_t dlen = k;
        if (k % 4u && ctrl[clen - 1u] >> (2u * (k % 4u))) return DQ_ERR_CORRUPT;
        for (i = 0; i < clen; i++)
            dlen += (ctrl[i] & 3u) + (ctrl[i] >> 2 & 3u) + (ctrl[i] >> 4 & 3u) + (ctrl[i] >> 6);
        if ((uint64_t)it->h.body_len - clen != dlen) return DQ_ERR_CORRUPT;
        it->dlen = (size_t)dlen;
        it->a.prev = 0xFFFFFFFFu;
    } else {
        size_t blen = (size_t)((n + 7u) / 8u);
        unsigned tail = (unsigned)(n % 8u);
        if (it->h.body_len != blen || (tail && it->h.body[blen - 1u] >> tail)) return DQ_ERR_CORRUPT;
    }
    return DQ_OK;
}

/* Up to DQ__SP_CHUNK indices into buf; *cnt how many. DQ_ERR_CORRUPT for any invalid stream. */
static inline dq_status dq__sp_it_next(dq__sp_it *it, uint32_t *buf, size_t *cnt) {
    size_t got = 0, k = it->h.k;
    if (it->h.coder == DQ_INDEX_GAMMA) {
        dq_bitreader *r = &it->r;
        while (got < DQ__SP_CHUNK && it->done < k) {
            uint64_t g;
            unsigned m;
            if (r->n < 40) dq__br_refill(r);
            m = r->acc ? 2u * dq__clz64(r->acc) + 1u : 129u;
            if (m <= r->n) {
                g = r->acc >> (64u - m);
                r->acc <<= m;
                r->n -= m;
            } else if (dq__gamma_get(r, &g) != DQ_OK) {
                return DQ_ERR_CORRUPT;
            }
            if (g > it->h.n - it->next) return DQ_ERR_CORRUPT;
            it->next += g;
            buf[got++] = (uint32_t)(it->next - 1u);
            it->done++;
        }
        if (it->done == k) {
            if (dq_br_finish(r) != DQ_OK) return DQ_ERR_CORRUPT;
            it->end = 1;
        }
    } else if (it->h.coder == DQ_INDEX_RICE) {
        uint64_t v;
        while (got < DQ__SP_CHUNK && it->done < k) {
            if (dq__rice_get(&it->r, it->rp, it->h.n, it->next, &v) != DQ_OK) return DQ_ERR_CORRUPT;
            it->next += v + 1u;
            buf[got++] = (uint32_t)(it->next - 1u);
            it->done++;
        }
        if (it->done == k) {
            if (dq_br_finish(&it->r) != DQ_OK) return DQ_ERR_CORRUPT;
            it->end = 1;
        }
    } else if (it->h.coder == DQ_INDEX_VARINT) {
        const uint8_t *ctrl = it->h.body + it->cpos, *data = it->h.body + (size_t)dq__index_ctrl_len(k);
        size_t c, i;
        got = k - it->done < DQ__SP_CHUNK ? k - it->done : DQ__SP_CHUNK;
        dq__k_svb_decode(ctrl, data + it->dpos, it->dlen - it->dpos, got, buf, &it->a);
        c = (got + 3u) / 4u;
        for (i = 0; i < c; i++) /* data bytes of these groups (a partial group is the last) */
            it->dpos += 4u + (ctrl[i] & 3u) + (ctrl[i] >> 2 & 3u) + (ctrl[i] >> 4 & 3u) + (ctrl[i] >> 6);
        it->cpos += c;
        it->done += got;
        if (it->done == k) {
            if (it->a.bad || it->a.sum > it->h.n - k) return DQ_ERR_CORRUPT;
            it->end = 1;
        }
    } else {
        const uint8_t *b = it->h.body;
        size_t blen = it->h.body_len;
        while (it->cpos < blen && got + 64u <= DQ__SP_CHUNK) {
            uint64_t w = 0;
            size_t j, nb = blen - it->cpos < 8u ? blen - it->cpos : 8u;
            uint32_t base = (uint32_t)(it->cpos * 8u);
            for (j = nb; j-- > 0;) w = w << 8 | b[it->cpos + j];
            if (dq__popcount64(w) > k - it->done) return DQ_ERR_CORRUPT;
            for (; w; w &= w - 1u) {
                buf[got++] = base + dq__ctz64(w);
                it->done++;
            }
            it->cpos += nb;
        }
        if (it->cpos == blen) {
            if (it->done != k) return DQ_ERR_CORRUPT;
            it->end = 1;
        }
    }
    *cnt = got;
    return DQ_OK;
}

/* out[i] = v, or += w v, for out of dtype t. */
static inline void dq__sp_apply(dq_dtype t, void *out, size_t i, float v, float w, int add) {
    if (add) {
        float wv = w * v;
        v = (t == DQ_F32 ? ((float *)out)[i] : dq__el_get(t, out, i)) + wv;
    }
    if (t == DQ_F32)
        ((float *)out)[i] = v;
    else
        dq__el_set(t, out, i, v);
}

/* Values: k finite float32 (DQ_ERR_CORRUPT otherwise). */
static inline dq_status dq__sp_vals_ok(const uint8_t *v, size_t k) {
    size_t j;
    uint32_t bad = 0;
    for (j = 0; j < k; j++) bad |= (uint32_t)((dq__ld32(v + 4u * j) & DQ__ABS_MASK) >= DQ__SP_FIN);
    return bad ? DQ_ERR_CORRUPT : DQ_OK;
}

/* The values of a message in index order: float32, or decoded from M' (composed). */
typedef struct dq__sp_vals {
    const uint8_t *f32; /* NULL: composed */
    size_t j;
    dq__cm_reader cm;
} dq__sp_vals;
static inline float dq__sp_val(dq__sp_vals *v) {
    return v->f32 ? dq__bitsf(dq__ld32(v->f32 + 4u * v->j++)) : dq__cm_next(&v->cm);
}

/* Decodes an opened message (FORMAT 20.6 step 7 on: the values, the index stream, then the
 * output); c: M''s configuration when composed. */
static inline dq_status dq__sp_decode(const uint8_t *msg, const dq_header *h, const dq__cfg *c, float w, int add,
                                      dq_dtype t, void *out) {
    size_t n = h->count, k = h->nnz, j, slen = 0, at = DQ__SP_RAND_VALS;
    dq__sp_vals v;
    if (h->scheme != DQ_SCHEME_RANDK) { /* checked with the header */
        slen = (size_t)dq__ld64(msg + DQ__SP_LEN_OFF);
        at = DQ__SP_STREAM + slen;
    }
    v.j = 0;
    v.f32 = dq__cm_bits(h->bits) ? NULL : msg + at;
    if (v.f32 ? dq__sp_vals_ok(v.f32, k) != DQ_OK : k && dq__cm_open(&v.cm, c, h->coder, h->bits, k, msg + at, 1) != DQ_OK)
        return DQ_ERR_CORRUPT;
    if (h->scheme == DQ_SCHEME_RANDK) {
        dq__sp_strata s;
        if (!add) memset(out, 0, n * dq_dtype_size(t)); /* +0 in every dtype */
        dq__sp_strata_init(&s, n, k, h->seed, h->step, h->stream);
        for (j = 0; j < k; j++) dq__sp_apply(t, out, dq__sp_strata_next(&s, (uint32_t)j), dq__sp_val(&v), w, add);
        return DQ_OK;
    } else {
        const uint8_t *stream = msg + DQ__SP_STREAM;
        uint32_t buf[DQ__SP_CHUNK];
        dq__sp_it it;
        int pass;
        for (pass = 0; pass < 2; pass++) { /* validate, then decode */
            size_t cnt = 0;
            if (dq__sp_it_open(&it, stream, slen, n, k) != DQ_OK) return DQ_ERR_CORRUPT;
            while (!it.end) {
                if (dq__sp_it_next(&it, buf, &cnt) != DQ_OK) return DQ_ERR_CORRUPT;
                if (pass)
                    for (j = 0; j < cnt; j++) dq__sp_apply(t, out, buf[j], dq__sp_val(&v), w, add);
            }
            if (!pass && !add) memset(out, 0, n * dq_dtype_size(t));
        }
        return DQ_OK;
    }
}
/* ---------------------------------------------------------------- rate and distortion of composed messages
 * dq_rd_sparse_measure: for each density asked, the top-k selection of v = x + residual (exact,
 * dq_topk_select), its error, the exact index stream, and for every width what the values'
 * QSGD message would cost and add: dq_rd_measure over the k gathered values (widths 2..16), and
 * the 1-bit forms exactly. The caller's work area holds v (with a residual), the indices and
 * the gathered values: the library never allocates. */

DQ_API size_t dq_rd_sparse_work_size(size_t n, size_t kmax) {
    uint64_t s = 4u * (uint64_t)n + 8u * (uint64_t)kmax + 4u; /* v, the indices, the values; alignment */
    return n == 0 || kmax > n || s > (uint64_t)SIZE_MAX ? 0u : (size_t)s;
}

/* The 1-bit forms of the k values w (FORMAT 6.1, 6.5): the error, exact for nearest rounding (the
 * mean of each bucket's |w|: sum w^2 - (sum |w|)^2 / len) and expected for stochastic (each value
 * decodes to +-scale with mean w: scale^2 - w^2), the scale as the bucket norm in double. */
static inline double dq__rds_err1(const dq_params *p, const float *w, size_t k) {
    size_t bk = p->bucket == DQ_BUCKET_WHOLE ? k : p->bucket ? (size_t)p->bucket : (size_t)DQ_BUCKET_DEFAULT, b0, i;
    int nearest = p->rounding == DQ_ROUND_NEAREST, mx = p->norm == DQ_NORM_MAX;
    double err = 0.0;
    for (b0 = 0; b0 < k; b0 += bk) {
        size_t end = k - b0 < bk ? k : b0 + bk;
        double sq = 0.0, ab = 0.0, m = 0.0, t;
        for (i = b0; i < end; i++) {
            double a = fabs((double)w[i]);
            t = a * a;
            sq += t;
            ab += a;
            if (a > m) m = a;
        }
        if (nearest) {
            t = ab * ab;
            err += sq - t / (double)(end - b0);
        } else {
            t = mx ? m * m : sq;
            t = t * (double)(end - b0);
            err += t - sq;
        }
    }
    return err > 0.0 ? err : 0.0;
}

DQ_API dq_status dq_rd_sparse_measure(const dq_params *p, const float *x, const float *residual, size_t n,
                                      const double *density, size_t m, void *work, size_t work_cap,
                                      dq_rd_sparse *out) {
    uint8_t *wk = (uint8_t *)work;
    const float *v = x;
    float *w;
    uint32_t *idx;
    size_t j, i, kmax = 0, need, hb = DQ_HEADER_SIZE + 16u; /* the sparse header, k and the stream length */
    double cs;
    dq_params q;
    dq_status st;
    if (!p || !x || !density || !out || (!work && work_cap)) return DQ_ERR_NULL;
    if (n == 0 || m == 0) return DQ_ERR_EMPTY;
    if ((uint64_t)n > DQ_INDEX_MAX_N) return DQ_ERR_TOO_LARGE;
    if (p->scheme != DQ_SCHEME_TOPK || p->index_coder > (unsigned)DQ_INDEX_RICE || p->checksum > 1u ||
        (p->norm != DQ_NORM_DEFAULT && p->norm != DQ_NORM_L2 && p->norm != DQ_NORM_MAX) ||
        (unsigned)p->rounding > (unsigned)DQ_ROUND_NEAREST ||
        (p->bucket && p->bucket != DQ_BUCKET_WHOLE && p->bucket % 8u))
        return DQ_ERR_PARAM;
    for (j = 0; j < m; j++) {
        double d = density[j], kd;
        if (!(d > 0.0 && d <= 1.0)) return DQ_ERR_PARAM;
        kd = d * (double)n; /* each product in its own statement (doc/API.md, Determinism) */
        kd = floor(kd + 0.5);
        out[j].k = kd < 1.0 ? 1u : (size_t)kd;
        if (out[j].k > kmax) kmax = out[j].k;
    }
    need = dq_rd_sparse_work_size(n, kmax);
    if (!need) return DQ_ERR_TOO_LARGE;
    if (work_cap < need) return DQ_ERR_WORKSPACE;
    wk += (4u - ((uintptr_t)wk & 3u)) & 3u; /* floats and indices 4-byte aligned */
    idx = (uint32_t *)(void *)wk;
    w = (float *)(void *)(wk + 4u * kmax);
    if (residual) { /* v = x + residual, in float as the encoder adds it */
        float *c = (float *)(void *)(wk + 8u * kmax);
        for (i = 0; i < n; i++) c[i] = x[i] + residual[i];
        v = c;
    }
    memset(&q, 0, sizeof q); /* the values' QSGD message (FORMAT 20.10) */
    q.scheme = DQ_SCHEME_QSGD;
    q.bucket = p->bucket;
    q.norm = p->norm;
    cs = p->checksum ? 32.0 : 0.0;
    for (j = 0; j < m; j++) {
        dq_rd_sparse *o = &out[j];
        size_t k = o->k, isz = 0, t = 0;
        double sel = 0.0, head;
        unsigned b;
        dq_rd rd;
        if ((st = dq_topk_select(v, n, k, idx)) != DQ_OK) return st; /* NaN, Inf: DQ_ERR_NONFINITE */
        if ((st = dq_index_size(idx, k, (uint64_t)n, (dq_index_coder)p->index_coder, &isz)) != DQ_OK) return st;
        for (i = 0; i < n; i++) { /* the elements not sent, summed directly: no cancellation */
            double a = (double)v[i];
            if (t < k && idx[t] == i) {
                w[t++] = v[i];
                continue;
            }
            a *= a;
            sel += a;
        }
        o->sel_err = sel;
        o->index_bytes = isz;
        if ((st = dq_rd_measure(&q, w, NULL, k, &rd)) != DQ_OK) return st;
        o->err[0] = o->sel_err; /* float32 values: sent exactly */
        o->bits[0] = 8.0 * (double)(hb + isz + 4u * k);
        o->bits[0] += cs;
        /* widths >= 1: the sparse header's 16 bytes past M''s 48, the stream, and M' (FORMAT 20.10) */
        head = 8.0 * (double)(hb - DQ_HEADER_SIZE + isz);
        o->err[1] = o->sel_err + dq__rds_err1(p, w, k);
        o->bits[1] = head + dq_message_bits(k, 1, p->bucket) + cs; /* signs: the fixed layout */
        for (b = DQ_RD_BITS_MIN; b <= DQ_RD_BITS_MAX; b++) { /* rd.bits: the default coder's, with the checksum
                                                              * it adds to a coded form */
            int coded = rd.bits[b] < rd.fixed_bits[b];
            o->err[b] = o->sel_err + rd.err[b];
            o->bits[b] = head + rd.bits[b] + (coded ? 0.0 : cs);
        }
    }
    return DQ_OK;
}
/* ---------------------------------------------------------------- count sketch and data quantization (API above) */

/* ---- hashing (doc/FORMAT.md 21.3). Row j's keys are the generator key of FORMAT.md 7.1 for
 * (seed, step = DQ__SKETCH_DOMAIN, stream = j); coordinate i (< 2^32) hashes to the 32-bit
 * value H (the generator's per-element mix with the full 32-bit output; the hash kernels and
 * the packed form are with the scalar kernels, dq__sk_pack). The bucket is the multiply-shift
 * (H * cols) >> 32, the sign is - when bit 0 of H is set. Buckets use the top bits, the sign
 * the bottom one; cols <= 2^24 leaves 7 bits between them. */
#define DQ__SKETCH_DOMAIN 0x534B45544348ull   /* "SKETCH" */
#define DQ__GATE_DOMAIN 0x4741544530303031ull /* "GATE0001", XORed into the gate's seed */
#define DQ__SKETCH_BLOCK 128u                 /* coordinates per block of the estimators (r x 128 keys on the stack) */
#define DQ__SKETCH_ABLOCK 512u                /* coordinates per block of dq_sketch_add_dense */

typedef struct dq__sk_keys {
    uint32_t k0[DQ_SKETCH_MAX_ROWS], k1[DQ_SKETCH_MAX_ROWS];
} dq__sk_keys;

static inline void dq__sk_keys_make(const dq_sketch *s, dq__sk_keys *k) {
    uint32_t j;
    for (j = 0; j < s->rows; j++) {
        dq__key key = dq__key_make(s->seed, DQ__SKETCH_DOMAIN, j);
        k->k0[j] = key.k0;
        k->k1[j] = key.k1;
    }
}

static inline int dq__sk_ok(const dq_sketch *s) {
    return s->table && s->rows >= 1u && s->rows <= DQ_SKETCH_MAX_ROWS && s->cols >= 1u &&
           s->cols <= DQ_SKETCH_MAX_COLS && s->dim >= 1u && s->dim <= DQ_SKETCH_MAX_DIM;
}
static inline size_t dq__sk_cells(const dq_sketch *s) { return (size_t)s->rows * s->cols; }
static inline int dq__sk_all_finite(const float *x, size_t n) {
    uint32_t bad = 0;
    size_t i;
    for (i = 0; i < n; i++) bad |= (uint32_t)((dq__fbits(x[i]) & 0x7F800000u) == 0x7F800000u);
    return bad == 0;
}

DQ_API dq_status dq_sketch_init(dq_sketch *s, uint32_t rows, uint32_t cols, uint64_t dim, uint64_t seed, float *table,
                                size_t table_len) {
    dq_sketch t;
    if (!s || !table) return DQ_ERR_NULL;
    t.rows = rows;
    t.cols = cols;
    t.dim = dim;
    t.seed = seed;
    t.table = table;
    if (!dq__sk_ok(&t)) return DQ_ERR_PARAM;
    if (table_len < dq__sk_cells(&t)) return DQ_ERR_DST_TOO_SMALL;
    memset(table, 0, dq__sk_cells(&t) * sizeof(float));
    *s = t;
    return DQ_OK;
}

DQ_API dq_status dq_sketch_clear(dq_sketch *s) {
    if (!s || !s->table) return DQ_ERR_NULL;
    if (!dq__sk_ok(s)) return DQ_ERR_PARAM;
    memset(s->table, 0, dq__sk_cells(s) * sizeof(float));
    return DQ_OK;
}

DQ_API dq_status dq_sketch_hash(const dq_sketch *s, uint32_t row, uint64_t i, uint32_t *bucket, int *sign) {
    dq__key key;
    uint32_t h;
    if (!s || !s->table || !bucket || !sign) return DQ_ERR_NULL;
    if (!dq__sk_ok(s) || row >= s->rows) return DQ_ERR_PARAM;
    if (i >= s->dim) return DQ_ERR_RANGE;
    key = dq__key_make(s->seed, DQ__SKETCH_DOMAIN, row);
    h = dq__draw32(key.k0, key.k1, (uint32_t)i);
    *bucket = (uint32_t)(((uint64_t)h * s->cols) >> 32);
    *sign = (h & 1u) ? -1 : 1;
    return DQ_OK;
}

DQ_API dq_status dq_sketch_add_dense(dq_sketch *s, uint64_t offset, const float *x, size_t n) {
    dq__sk_keys k;
    uint32_t hb[DQ__SKETCH_ABLOCK], sv[DQ__SKETCH_ABLOCK];
    size_t b0;
    if (!s || !s->table || (!x && n)) return DQ_ERR_NULL;
    if (!dq__sk_ok(s)) return DQ_ERR_PARAM;
    if (offset > s->dim || (uint64_t)n > s->dim - offset) return DQ_ERR_RANGE;
    if (!dq__sk_all_finite(x, n)) return DQ_ERR_NONFINITE;
    dq__sk_keys_make(s, &k);
    for (b0 = 0; b0 < n; b0 += DQ__SKETCH_ABLOCK) { /* a block of coordinates, row by row: each
                                                     * cell still sees increasing coordinates */
        size_t cnt = n - b0 < DQ__SKETCH_ABLOCK ? n - b0 : DQ__SKETCH_ABLOCK, t;
        const float *xb = x + b0;
        uint32_t j;
        for (j = 0; j < s->rows; j++) {
            float *row = s->table + (size_t)j * s->cols;
            dq__k_sk_hash(k.k0[j], k.k1[j], s->cols, (uint32_t)(offset + b0), cnt, hb);
            for (t = 0; t < cnt; t++) { /* signed values and buckets first (vectorizable) ... */
                sv[t] = dq__fbits(xb[t]) ^ (hb[t] & 0x80000000u);
                hb[t] &= DQ__SK_COL_MASK;
            }
            for (t = 0; t < cnt; t++) { /* ... so the scatter is a plain load, add, store */
                float v;
                memcpy(&v, sv + t, 4);
                row[hb[t]] += v;
            }
        }
    }
    return DQ_OK;
}

DQ_API dq_status dq_sketch_add_sparse(dq_sketch *s, const uint32_t *idx, const float *val, size_t k) {
    dq__sk_keys ks;
    size_t t;
    if (!s || !s->table || ((!idx || !val) && k)) return DQ_ERR_NULL;
    if (!dq__sk_ok(s)) return DQ_ERR_PARAM;
    for (t = 0; t < k; t++)
        if ((uint64_t)idx[t] >= s->dim) return DQ_ERR_RANGE;
    if (!dq__sk_all_finite(val, k)) return DQ_ERR_NONFINITE;
    dq__sk_keys_make(s, &ks);
    for (t = 0; t < k; t++) {
        uint32_t j, u = dq__fbits(val[t]);
        for (j = 0; j < s->rows; j++) {
            uint32_t p = dq__sk_pack(dq__draw32(ks.k0[j], ks.k1[j], idx[t]), s->cols);
            s->table[(size_t)j * s->cols + (p & DQ__SK_COL_MASK)] += dq__bitsf(u ^ (p & 0x80000000u));
        }
    }
    return DQ_OK;
}

static inline int dq__sk_same(const dq_sketch *a, const dq_sketch *b) {
    return a->rows == b->rows && a->cols == b->cols && a->dim == b->dim && a->seed == b->seed;
}

DQ_API dq_status dq_sketch_merge(dq_sketch *dst, const dq_sketch *src) {
    size_t i, n;
    if (!dst || !src || !dst->table || !src->table) return DQ_ERR_NULL;
    if (!dq__sk_ok(dst) || !dq__sk_ok(src) || !dq__sk_same(dst, src)) return DQ_ERR_PARAM;
    n = dq__sk_cells(dst);
    for (i = 0; i < n; i++) dst->table[i] += src->table[i];
    return DQ_OK;
}

/* ---- medians. Floats are compared through an order-preserving unsigned key (negative values
 * complemented, positive ones with the top bit set), a total order (-0 < +0, NaNs at the
 * ends), so the result never depends on how a compiler or ISA treats float comparisons. */
static inline uint32_t dq__sk_fkey(uint32_t u) { /* branch-free: signs are random */
    return u ^ ((0u - (u >> 31)) | 0x80000000u);
}
static inline uint32_t dq__sk_fkey_inv(uint32_t k) { return k ^ (((k >> 31) - 1u) | 0x80000000u); }
#define DQ__SK_CSWAP(a, b)                                                                                             \
    do {                                                                                                               \
        uint32_t lo_ = a < b ? a : b;                                                                                  \
        b = a < b ? b : a;                                                                                             \
        a = lo_;                                                                                                       \
    } while (0)
/* Median of r keys (r <= 32); key[] is reordered. Even r: mean of the two middle values,
 * float((double)a + (double)b) * 0.5), as a key. */
static inline uint32_t dq__sk_median(uint32_t *key, uint32_t r) {
    uint32_t i, j;
    if (r == 1u) return key[0];
    if (r == 3u) {
        uint32_t a = key[0], b = key[1], c = key[2];
        DQ__SK_CSWAP(a, b);
        DQ__SK_CSWAP(b, c);
        DQ__SK_CSWAP(a, b);
        return b;
    }
    if (r == 5u) { /* a 7-exchange median network: after it key position 2 holds the median */
        uint32_t a = key[0], b = key[1], c = key[2], d = key[3], e = key[4];
        DQ__SK_CSWAP(a, b); /* a <= b */
        DQ__SK_CSWAP(d, e); /* d <= e */
        DQ__SK_CSWAP(a, d); /* a = min of the four: not the median */
        DQ__SK_CSWAP(b, e); /* e = max of the four: not the median */
        /* the median of {a..e} is now the median of {b, c, d} */
        DQ__SK_CSWAP(b, c);
        DQ__SK_CSWAP(c, d);
        DQ__SK_CSWAP(b, c);
        return c;
    }
    for (i = 1; i < r; i++) { /* insertion sort */
        uint32_t v = key[i];
        for (j = i; j > 0 && key[j - 1] > v; j--) key[j] = key[j - 1];
        key[j] = v;
    }
    if (r & 1u) return key[r / 2u];
    {
        double a = (double)dq__bitsf(dq__sk_fkey_inv(key[r / 2u - 1u])),
               b = (double)dq__bitsf(dq__sk_fkey_inv(key[r / 2u]));
        return dq__sk_fkey(dq__fbits((float)((a + b) * 0.5)));
    }
}
#undef DQ__SK_CSWAP

/* Estimates of coordinates first .. first+cnt-1 (cnt <= DQ__SKETCH_BLOCK) into out. */
static inline void dq__sk_est_block(const dq_sketch *s, const dq__sk_keys *k, uint32_t first, size_t cnt,
                                        uint32_t (*keys)[DQ__SKETCH_BLOCK], float *out) {
    uint32_t hb[DQ__SKETCH_BLOCK], v[DQ_SKETCH_MAX_ROWS], j;
    size_t t;
    for (j = 0; j < s->rows; j++) {
        const float *row = s->table + (size_t)j * s->cols;
        dq__k_sk_hash(k->k0[j], k->k1[j], s->cols, first, cnt, hb);
        for (t = 0; t < cnt; t++) keys[j][t] = dq__sk_fkey(dq__fbits(row[hb[t] & DQ__SK_COL_MASK]) ^ (hb[t] & 0x80000000u));
    }
    for (t = 0; t < cnt; t++) {
        for (j = 0; j < s->rows; j++) v[j] = keys[j][t];
        out[t] = dq__bitsf(dq__sk_fkey_inv(dq__sk_median(v, s->rows)));
    }
}
static inline float dq__sk_est1(const dq_sketch *s, const dq__sk_keys *k, uint32_t i) {
    uint32_t v[DQ_SKETCH_MAX_ROWS], j;
    for (j = 0; j < s->rows; j++) {
        uint32_t p = dq__sk_pack(dq__draw32(k->k0[j], k->k1[j], i), s->cols);
        v[j] = dq__sk_fkey(dq__fbits(s->table[(size_t)j * s->cols + (p & DQ__SK_COL_MASK)]) ^ (p & 0x80000000u));
    }
    return dq__bitsf(dq__sk_fkey_inv(dq__sk_median(v, s->rows)));
}

DQ_API dq_status dq_sketch_estimate(const dq_sketch *s, const uint32_t *idx, size_t m, float *out) {
    dq__sk_keys k;
    size_t t;
    if (!s || !s->table || ((!idx || !out) && m)) return DQ_ERR_NULL;
    if (!dq__sk_ok(s)) return DQ_ERR_PARAM;
    for (t = 0; t < m; t++)
        if ((uint64_t)idx[t] >= s->dim) return DQ_ERR_RANGE;
    dq__sk_keys_make(s, &k);
    for (t = 0; t < m; t++) out[t] = dq__sk_est1(s, &k, idx[t]);
    return DQ_OK;
}

/* Workspace of the block estimators: r rows of one block of keys (16 KiB at 32 rows). */
typedef struct dq__sk_ws {
    dq__sk_keys k;
    uint32_t keys[DQ_SKETCH_MAX_ROWS][DQ__SKETCH_BLOCK];
    float est[DQ__SKETCH_BLOCK];
} dq__sk_ws;

DQ_API dq_status dq_sketch_estimate_range(const dq_sketch *s, uint64_t offset, float *out, size_t n) {
    dq__sk_ws w;
    size_t b0;
    if (!s || !s->table || (!out && n)) return DQ_ERR_NULL;
    if (!dq__sk_ok(s)) return DQ_ERR_PARAM;
    if (offset > s->dim || (uint64_t)n > s->dim - offset) return DQ_ERR_RANGE;
    dq__sk_keys_make(s, &w.k);
    for (b0 = 0; b0 < n; b0 += DQ__SKETCH_BLOCK) {
        size_t cnt = n - b0 < DQ__SKETCH_BLOCK ? n - b0 : DQ__SKETCH_BLOCK;
        dq__sk_est_block(s, &w.k, (uint32_t)(offset + b0), cnt, w.keys, out + b0);
    }
    return DQ_OK;
}

DQ_API dq_status dq_sketch_norm2(const dq_sketch *s, double *norm2) {
    double sums[DQ_SKETCH_MAX_ROWS];
    uint32_t j, i, r;
    if (!s || !s->table || !norm2) return DQ_ERR_NULL;
    if (!dq__sk_ok(s)) return DQ_ERR_PARAM;
    r = s->rows;
    for (j = 0; j < r; j++) {
        const float *row = s->table + (size_t)j * s->cols;
        double acc = 0.0;
        uint32_t c;
        for (c = 0; c < s->cols; c++) {
            double sq = (double)row[c] * (double)row[c];
            acc += sq;
        }
        sums[j] = acc;
    }
    for (i = 1; i < r; i++) { /* insertion sort; the sums are >= 0 (or NaN after overflow) */
        double v = sums[i];
        for (j = i; j > 0 && sums[j - 1] > v; j--) sums[j] = sums[j - 1];
        sums[j] = v;
    }
    *norm2 = (r & 1u) ? sums[r / 2u] : (sums[r / 2u - 1u] + sums[r / 2u]) * 0.5;
    return DQ_OK;
}

/* ---- top-k: a min-heap (root = the weakest entry) over the caller's output arrays. Entry
 * strength: |value| as the bit pattern of |v| (a total order on non-negative floats; NaN above
 * Inf), then the smaller index, then (for lists) the earlier position, which the scan order
 * gives for free since a later entry never displaces an equal one. */
static inline int dq__sk_tk_weaker(uint32_t ka, uint32_t ia, uint32_t kb, uint32_t ib) {
    return ka < kb || (ka == kb && ia > ib);
}
static inline uint32_t dq__sk_tk_key(float v) { return dq__abs_bits(v); }
static inline void dq__sk_tk_swap(uint32_t *idx, float *val, size_t a, size_t b) {
    uint32_t ti = idx[a];
    float tv = val[a];
    idx[a] = idx[b];
    val[a] = val[b];
    idx[b] = ti;
    val[b] = tv;
}
static inline void dq__sk_tk_down(uint32_t *idx, float *val, size_t n, size_t i) {
    for (;;) {
        size_t l = 2u * i + 1u, r = l + 1u, m = i;
        if (l < n && dq__sk_tk_weaker(dq__sk_tk_key(val[l]), idx[l], dq__sk_tk_key(val[m]), idx[m])) m = l;
        if (r < n && dq__sk_tk_weaker(dq__sk_tk_key(val[r]), idx[r], dq__sk_tk_key(val[m]), idx[m])) m = r;
        if (m == i) return;
        dq__sk_tk_swap(idx, val, i, m);
        i = m;
    }
}
static inline void dq__sk_tk_up(uint32_t *idx, float *val, size_t i) {
    while (i > 0) {
        size_t p = (i - 1u) / 2u;
        if (!dq__sk_tk_weaker(dq__sk_tk_key(val[i]), idx[i], dq__sk_tk_key(val[p]), idx[p])) return;
        dq__sk_tk_swap(idx, val, i, p);
        i = p;
    }
}
typedef struct dq__sk_topk {
    uint32_t *idx;
    float *val;
    size_t k, n;
} dq__sk_topk;
static inline void dq__sk_tk_offer(dq__sk_topk *h, uint32_t i, float v) {
    if (h->n < h->k) {
        h->idx[h->n] = i;
        h->val[h->n] = v;
        dq__sk_tk_up(h->idx, h->val, h->n++);
    } else if (h->k && dq__sk_tk_weaker(dq__sk_tk_key(h->val[0]), h->idx[0], dq__sk_tk_key(v), i)) {
        h->idx[0] = i;
        h->val[0] = v;
        dq__sk_tk_down(h->idx, h->val, h->n, 0);
    }
}
/* Heapsort of (idx, val) by increasing index (a max-heap on the index). */
static inline void dq__sk_tk_idx_down(uint32_t *idx, float *val, size_t n, size_t i) {
    for (;;) {
        size_t l = 2u * i + 1u, r = l + 1u, m = i;
        if (l < n && idx[l] > idx[m]) m = l;
        if (r < n && idx[r] > idx[m]) m = r;
        if (m == i) return;
        dq__sk_tk_swap(idx, val, i, m);
        i = m;
    }
}
static inline void dq__sk_tk_sort_idx(uint32_t *idx, float *val, size_t n) {
    size_t i;
    for (i = n / 2u; i-- > 0;) dq__sk_tk_idx_down(idx, val, n, i);
    for (i = n; i-- > 1;) {
        dq__sk_tk_swap(idx, val, 0, i);
        dq__sk_tk_idx_down(idx, val, i, 0);
    }
}

DQ_API dq_status dq_sketch_topk(const dq_sketch *s, size_t k, uint32_t *idx, float *val) {
    dq__sk_ws w;
    dq__sk_topk h;
    uint64_t b0;
    if (!s || !s->table || ((!idx || !val) && k)) return DQ_ERR_NULL;
    if (!dq__sk_ok(s)) return DQ_ERR_PARAM;
    if ((uint64_t)k > s->dim) return DQ_ERR_PARAM;
    if (k == 0) return DQ_OK;
    h.idx = idx;
    h.val = val;
    h.k = k;
    h.n = 0;
    dq__sk_keys_make(s, &w.k);
    for (b0 = 0; b0 < s->dim; b0 += DQ__SKETCH_BLOCK) {
        size_t cnt = s->dim - b0 < DQ__SKETCH_BLOCK ? (size_t)(s->dim - b0) : DQ__SKETCH_BLOCK, t;
        uint32_t floor_key = h.n == k ? dq__sk_tk_key(val[0]) : 0u;
        dq__sk_est_block(s, &w.k, (uint32_t)b0, cnt, w.keys, w.est);
        for (t = 0; t < cnt; t++) /* most coordinates lose to the heap's root at once */
            if (h.n < k || dq__sk_tk_key(w.est[t]) > floor_key) {
                dq__sk_tk_offer(&h, (uint32_t)(b0 + t), w.est[t]);
                floor_key = h.n == k ? dq__sk_tk_key(val[0]) : 0u;
            }
    }
    dq__sk_tk_sort_idx(idx, val, k);
    return DQ_OK;
}

DQ_API dq_status dq_sketch_heavy(const dq_sketch *s, double eps, uint32_t *idx, float *val, size_t cap, size_t *count) {
    dq__sk_ws w;
    double norm2, tau;
    size_t found = 0;
    uint64_t b0;
    if (!s || !s->table || !count || (!idx && cap)) return DQ_ERR_NULL;
    if (!dq__sk_ok(s) || !(eps >= 0.0 && eps <= DBL_MAX)) return DQ_ERR_PARAM;
    dq_sketch_norm2(s, &norm2);
    tau = eps * sqrt(norm2);
    dq__sk_keys_make(s, &w.k);
    for (b0 = 0; b0 < s->dim; b0 += DQ__SKETCH_BLOCK) {
        size_t cnt = s->dim - b0 < DQ__SKETCH_BLOCK ? (size_t)(s->dim - b0) : DQ__SKETCH_BLOCK, t;
        dq__sk_est_block(s, &w.k, (uint32_t)b0, cnt, w.keys, w.est);
        for (t = 0; t < cnt; t++)
            if ((double)fabsf(w.est[t]) >= tau) {
                if (found < cap) {
                    idx[found] = (uint32_t)(b0 + t);
                    if (val) val[found] = w.est[t];
                }
                found++;
            }
    }
    *count = found;
    return found > cap ? DQ_ERR_DST_TOO_SMALL : DQ_OK;
}

DQ_API dq_status dq_sketch_gather(const float *x, size_t n, const uint32_t *idx, size_t m, float *out) {
    size_t t;
    if ((!x || !idx || !out) && m) return DQ_ERR_NULL;
    for (t = 0; t < m; t++)
        if ((size_t)idx[t] >= n) return DQ_ERR_RANGE;
    for (t = 0; t < m; t++) out[t] = x[idx[t]];
    return DQ_OK;
}

DQ_API dq_status dq_sketch_topk_list(const uint32_t *idx, const float *val, size_t m, size_t k, uint32_t *out_idx,
                                     float *out_val) {
    dq__sk_topk h;
    size_t t;
    if ((!idx || !val) && m) return DQ_ERR_NULL;
    if ((!out_idx || !out_val) && k) return DQ_ERR_NULL;
    if (k > m) return DQ_ERR_PARAM;
    h.idx = out_idx;
    h.val = out_val;
    h.k = k;
    h.n = 0;
    for (t = 0; t < m && k; t++) dq__sk_tk_offer(&h, idx[t], val[t]);
    dq__sk_tk_sort_idx(out_idx, out_val, k);
    return DQ_OK;
}

/* ---- messages (doc/FORMAT.md 21): header, u32 rows, u32 reserved (0), u64 dim, the table as
 * float32, optional CRC32C of bytes 48 .. end of table. */
DQ_API size_t dq_sketch_encoded_size(uint32_t rows, uint32_t cols) {
    if (rows < 1u || rows > DQ_SKETCH_MAX_ROWS || cols < 1u || cols > DQ_SKETCH_MAX_COLS) return 0;
    if ((uint64_t)rows * cols > ((uint64_t)SIZE_MAX - DQ_SKETCH_HEADER_SIZE - 4u) / 4u) return 0;
    return DQ_SKETCH_HEADER_SIZE + 4u * (size_t)rows * cols;
}

DQ_API dq_status dq_sketch_encode(const dq_sketch *s, unsigned checksum, void *dst, size_t cap, size_t *len) {
    uint8_t *out = (uint8_t *)dst;
    dq_params p;
    size_t size, n, i;
    if (!s || !s->table || !dst || !len) return DQ_ERR_NULL;
    if (!dq__sk_ok(s) || checksum > 1u) return DQ_ERR_PARAM;
    size = dq_sketch_encoded_size(s->rows, s->cols);
    if (size == 0 || (checksum && size > SIZE_MAX - 4u)) return DQ_ERR_TOO_LARGE;
    size += checksum ? 4u : 0u;
    if (cap < size) return DQ_ERR_DST_TOO_SMALL;
    n = dq__sk_cells(s);
    if (!dq__sk_all_finite(s->table, n)) return DQ_ERR_NONFINITE;
    memset(&p, 0, sizeof p);
    p.seed = s->seed;
    dq__put_header(out, DQ_SCHEME_SKETCH, 32u, DQ_CODER_FIXED, 0u, checksum ? DQ_FLAG_CHECKSUM : 0u, s->cols,
                   (uint64_t)n, &p);
    dq__st32(out + DQ_HEADER_SIZE, s->rows);
    dq__st32(out + DQ_HEADER_SIZE + 4u, 0u);
    dq__st64(out + DQ_HEADER_SIZE + 8u, s->dim);
    for (i = 0; i < n; i++) dq__st32(out + DQ_SKETCH_HEADER_SIZE + 4u * i, dq__fbits(s->table[i]));
    if (checksum) dq__st32(out + size - 4u, dq__body_crc(out, size));
    *len = size;
    return DQ_OK;
}

/* dq_header_read() for scheme 11, after the common checks (doc/FORMAT.md 21.4). */
static inline dq_status dq__sk_header(const uint8_t *in, size_t src_len, uint64_t count, dq_header *h, dq__cfg *c) {
    uint64_t rows, dim, body;
    (void)c;
    if (dq__count_set(count, h) != DQ_OK) return DQ_ERR_TOO_LARGE;
    if (h->bits != 32u || h->coder != DQ_CODER_FIXED || in[DQ__H_NORM] != 0u || (h->flags & ~DQ_FLAG_CHECKSUM) != 0 ||
        h->bucket < 1u || h->bucket > DQ_SKETCH_MAX_COLS || h->step != 0u || h->stream != 0u)
        return DQ_ERR_CORRUPT;
    rows = (uint64_t)h->count / h->bucket;
    if ((uint64_t)h->count % h->bucket != 0u || rows > DQ_SKETCH_MAX_ROWS) return DQ_ERR_CORRUPT;
    body = 4u * (uint64_t)h->count + ((h->flags & DQ_FLAG_CHECKSUM) ? 4u : 0u);
    if (body > (uint64_t)SIZE_MAX - DQ_SKETCH_HEADER_SIZE) return DQ_ERR_TOO_LARGE;
    if (src_len < DQ_SKETCH_HEADER_SIZE) return DQ_ERR_TRUNCATED;
    dim = dq__ld64(in + DQ_HEADER_SIZE + 8u);
    if (dq__ld32(in + DQ_HEADER_SIZE) != rows || dq__ld32(in + DQ_HEADER_SIZE + 4u) != 0u || dim < 1u ||
        dim > DQ_SKETCH_MAX_DIM)
        return DQ_ERR_CORRUPT;
    h->msg_size = DQ_SKETCH_HEADER_SIZE + (size_t)body;
    h->payload_size = 4u * h->count;
    h->nnz = h->count;
    return DQ_OK;
}

/* dq_decode()/dq_decode_add() for scheme 11, after the header, size and checksum checks. */
static inline dq_status dq__sk_decode(const uint8_t *msg, const dq_header *h, const dq__cfg *c, float w, int add,
                                      dq_dtype t, void *out) {
    const uint8_t *tab = msg + DQ_SKETCH_HEADER_SIZE;
    float buf[DQ__ELCHUNK];
    size_t i, i0, cnt, n = h->count;
    uint32_t bad = 0;
    (void)c;
    for (i = 0; i < n; i++) bad |= (uint32_t)((dq__ld32(tab + 4u * i) & 0x7F800000u) == 0x7F800000u);
    if (bad) return DQ_ERR_CORRUPT; /* a NaN or Inf cell: nothing written */
    for (i0 = 0; i0 < n; i0 += cnt) {
        float *o;
        cnt = dq__el_chunk(t == DQ_F32, n);
        if (n - i0 < cnt) cnt = n - i0;
        o = dq__el_acc(t, out, i0, cnt, add, buf);
        for (i = 0; i < cnt; i++) {
            float v = dq__bitsf(dq__ld32(tab + 4u * (i0 + i)));
            if (add) {
                float wv = w * v;
                v = o[i] + wv;
            }
            o[i] = v;
        }
        dq__el_out(t, o, cnt, out, i0);
    }
    return DQ_OK;
}

/* The sketch fields of a parsed message. */
static inline dq_status dq__sk_msg(const dq_message *m, dq_sketch *shape) {
    if (m->h.scheme != DQ_SCHEME_SKETCH) return DQ_ERR_PARAM;
    shape->rows = (uint32_t)(m->h.count / m->h.bucket);
    shape->cols = m->h.bucket;
    shape->dim = dq__ld64(m->src + DQ_HEADER_SIZE + 8u);
    shape->seed = m->h.seed;
    shape->table = NULL;
    return DQ_OK;
}

DQ_API dq_status dq_sketch_from_message(const void *src, size_t src_len, float *table, size_t table_len, dq_sketch *s) {
    dq_message m;
    dq_sketch k;
    dq_status st;
    if (!src || !table || !s) return DQ_ERR_NULL;
    if ((st = dq__msg_parse((const uint8_t *)src, src_len, &m)) != DQ_OK || (st = dq__sk_msg(&m, &k)) != DQ_OK) return st;
    return dq_sketch_init(s, k.rows, k.cols, k.dim, k.seed, table, table_len);
}

/* The message parsed once: its shape checked against s, then its body opened and added. */
DQ_API dq_status dq_sketch_add_message(dq_sketch *s, const void *src, size_t src_len, float weight) {
    dq_message m;
    dq_sketch k;
    dq_status st;
    if (!s || !s->table || !src) return DQ_ERR_NULL;
    if (!dq__sk_ok(s)) return DQ_ERR_PARAM;
    if ((st = dq__msg_parse((const uint8_t *)src, src_len, &m)) != DQ_OK || (st = dq__sk_msg(&m, &k)) != DQ_OK) return st;
    if (!dq__sk_same(s, &k)) return DQ_ERR_PARAM;
    if ((st = dq__msg_open_body(&m, src_len, 1)) != DQ_OK) return st;
    return dq__decode_opened(&m, weight, 1, DQ_F32, s->table);
}

/* ---- data quantization */
DQ_API dq_status dq_gate(const dq_gate_params *g, uint64_t step, uint64_t sample, double dloss, double xnorm, int *send,
                         double *weight) {
    double a;
    if (!g || !send || !weight) return DQ_ERR_NULL;
    if (!(g->lambda >= 0.0 && g->lambda <= DBL_MAX) || (g->mode != DQ_GATE_UNBIASED && g->mode != DQ_GATE_THRESHOLD))
        return DQ_ERR_PARAM;
    if (!(dloss >= -DBL_MAX && dloss <= DBL_MAX) || !(xnorm >= -DBL_MAX && xnorm <= DBL_MAX)) return DQ_ERR_NONFINITE;
    if (xnorm < 0.0) return DQ_ERR_PARAM;
    a = fabs(dloss) * xnorm; /* may overflow to +Inf: then p = 1 */
    *send = 0;
    *weight = 0.0;
    if (g->mode == DQ_GATE_THRESHOLD) {
        if (a >= g->lambda && (a > 0.0 || g->lambda == 0.0)) {
            *send = 1;
            *weight = 1.0;
        }
        return DQ_OK;
    }
    if (g->lambda == 0.0) { /* send everything */
        *send = 1;
        *weight = 1.0;
        return DQ_OK;
    }
    if (a > 0.0) {
        double p = a / g->lambda;
        uint32_t q, u;
        dq__key key = dq__key_make(g->seed ^ DQ__GATE_DOMAIN, step, g->stream);
        q = p >= 1.0 ? (1u << 24) : (uint32_t)ceil(p * 16777216.0); /* 1 .. 2^24: p > 0 */
        if (q == 0u) q = 1u;                                        /* p below 2^-1074 * 2^24 */
        u = dq__draw24(key.k0, dq__key_hi(key, (uint32_t)(sample >> 32)), (uint32_t)sample);
        if (u < q) {
            *send = 1;
            *weight = 16777216.0 / (double)q;
        }
    }
    return DQ_OK;
}

DQ_API dq_status dq_gate_lambda(const double *a, size_t n, double budget, double *lambda) {
    double sum = 0.0, lam;
    size_t i, pos = 0, sat = 0, it;
    if ((!a && n) || !lambda) return DQ_ERR_NULL;
    if (!(budget > 0.0 && budget <= DBL_MAX)) return DQ_ERR_PARAM;
    for (i = 0; i < n; i++) {
        if (!(a[i] >= 0.0 && a[i] <= DBL_MAX)) return DQ_ERR_PARAM;
        if (a[i] > 0.0) pos++;
        sum += a[i];
    }
    if ((double)pos <= budget) {
        *lambda = 0.0;
        return DQ_OK;
    }
    /* Water filling: with S = {a_i >= lambda} saturated (p = 1), lambda = (sum of the others) /
     * (budget - |S|). Start from lambda = sum / budget (S empty); each round can only lower
     * lambda and grow S, so it ends within n rounds (in practice a handful). */
    lam = sum / budget;
    for (it = 0; it <= n; it++) {
        double rest = 0.0, next;
        size_t s2 = 0;
        for (i = 0; i < n; i++) {
            if (a[i] >= lam)
                s2++;
            else
                rest += a[i];
        }
        if (it > 0 && s2 == sat) break;
        sat = s2;
        if ((double)sat >= budget) break; /* cannot happen while pos > budget; keeps lam */
        next = rest / (budget - (double)sat);
        if (!(next < lam)) break;
        lam = next;
    }
    *lambda = lam;
    return DQ_OK;
}

static inline dq_status dq__sk_sample_params(const dq_params *p, uint64_t sample, dq_params *q) {
    if (!p) return DQ_ERR_NULL;
    *q = *p;
    q->step = sample;
    return DQ_OK;
}
DQ_API dq_status dq_sample_encode(const dq_params *p, uint64_t sample, const float *x, size_t d, void *dst,
                                  size_t dst_cap, size_t *dst_len) {
    dq_params q;
    dq_status st;
    if ((st = dq__sk_sample_params(p, sample, &q)) != DQ_OK) return st;
    return dq_encode(&q, x, d, NULL, dst, dst_cap, dst_len);
}
DQ_API dq_status dq_sample_encode_block(const dq_params *p, uint64_t sample, const float *x, size_t d, void *dst,
                                        size_t dst_cap, size_t *dst_len) {
    dq_params q;
    dq_status st;
    if ((st = dq__sk_sample_params(p, sample, &q)) != DQ_OK) return st;
    return dq_encode_block(&q, x, d, NULL, dst, dst_cap, dst_len);
}
/* ---------------------------------------------------------------- truncation solver (API above) */


#define DQ__TR_SHIFT (23u - DQ__TR_SUB)
#define DQ__TR_Q_DEFAULT 0.002
#define DQ__TR_KMIN_DEFAULT 50u
#define DQ__TR_SCAN 16u /* bins between scan points: 8 points per binade */

DQ_API size_t dq_trunc_workspace_size(size_t n) {
    (void)n;
    return DQ_TRUNC_WORKSPACE_SIZE;
}

typedef struct dq__tr_work {
    uint64_t *cnt;                /* DQ__TR_SEL radix-select counts */
    double *m, *t1, *t2, *cr;     /* DQ__TR_NB + 2 bins */
    double *L;                    /* 128 levels (s <= 127) */
    uint32_t *ne;                 /* DQ__TR_NB + 2 non-empty bin indices */
} dq__tr_work;

static inline void dq__tr_carve(void *work, dq__tr_work *w) {
    uintptr_t a = ((uintptr_t)work + 7u) & ~(uintptr_t)7u;
    double *d;
    w->cnt = (uint64_t *)(void *)a;
    d = (double *)(void *)(w->cnt + DQ__TR_SEL);
    w->m = d;
    w->t1 = d + (DQ__TR_NB + 2u);
    w->t2 = d + 2u * (DQ__TR_NB + 2u);
    w->cr = d + 3u * (DQ__TR_NB + 2u);
    w->L = d + 4u * (DQ__TR_NB + 2u);
    w->ne = (uint32_t *)(void *)(w->L + 128u);
}

/* Levels of the uniform / tabled schemes: s = 2^(b-1) - 1. */
static inline unsigned dq__tr_levels(unsigned bits) { return (1u << (bits - 1u)) - 1u; }

/* Cube root of y >= 0 with + - * / only (bit-identical everywhere): y = z 2^(3q), z in [1, 8),
 * Newton's iteration x <- (2x + z/x^2)/3 from a linear start; 7 steps reach double precision. */
static inline double dq__tr_cbrt(double y) {
    uint64_t u;
    int e, q, r;
    double z, x, sc;
    int i;
    if (!(y > 0.0)) return 0.0;
    memcpy(&u, &y, 8);
    if ((u >> 52) == 0u) { /* subnormal: scale up by 2^54 (cube root 2^18) */
        return dq__tr_cbrt(y * 18014398509481984.0) * (1.0 / 262144.0);
    }
    e = (int)((u >> 52) & 0x7FFu) - 1023;
    u = (u & 0x000FFFFFFFFFFFFFu) | ((uint64_t)1023u << 52);
    memcpy(&z, &u, 8); /* z in [1, 2) */
    q = e >= 0 ? e / 3 : -((-e + 2) / 3);
    r = e - 3 * q; /* 0, 1, 2 */
    if (r == 1) z *= 2.0;
    if (r == 2) z *= 4.0;
    x = 0.1428571428571428 * z;
    x = 0.75 + x;
    for (i = 0; i < 7; i++) {
        double x2 = x * x, tx = 2.0 * x;
        x = (tx + z / x2) / 3.0;
    }
    u = (uint64_t)(q + 1023) << 52; /* 2^q: |q| <= 358, a normal double */
    memcpy(&sc, &u, 8);
    return x * sc;
}

/* Pass 1: NaN/Inf check, max |x| bits, histogram of bits 30..20 of |x|. */
static inline dq_status dq__tr_pass1(const float *x, size_t n, uint64_t *cnt, uint32_t *umax) {
    uint32_t mx = 0;
    size_t i;
    memset(cnt, 0, DQ__TR_SEL * sizeof *cnt);
    for (i = 0; i < n; i++) {
        uint32_t u = dq__abs_bits(x[i]);
        if (u >= 0x7F800000u) return DQ_ERR_NONFINITE;
        cnt[u >> 20]++;
        if (u > mx) mx = u;
    }
    *umax = mx;
    return DQ_OK;
}

/* In counts c[0..nb), the bucket holding the k-th largest (k >= 1) and its rank inside it. */
static inline uint32_t dq__tr_pick(const uint64_t *c, uint32_t nb, uint64_t *k) {
    uint32_t b = nb;
    while (b-- > 0u) {
        if (c[b] >= *k) return b;
        *k -= c[b];
    }
    return 0u; /* not reached: the counts add up to at least k */
}

/* The bit pattern of the k-th largest |x| (1 <= k <= n), given pass 1's histogram. */
static inline uint32_t dq__tr_select(const float *x, size_t n, uint64_t *cnt, uint64_t k) {
    uint32_t b1, b2, b3;
    size_t i;
    b1 = dq__tr_pick(cnt, DQ__TR_SEL, &k);
    memset(cnt, 0, 1024u * sizeof *cnt);
    for (i = 0; i < n; i++) {
        uint32_t u = dq__abs_bits(x[i]);
        if ((u >> 20) == b1) cnt[(u >> 10) & 1023u]++;
    }
    b2 = dq__tr_pick(cnt, 1024u, &k);
    memset(cnt, 0, 1024u * sizeof *cnt);
    for (i = 0; i < n; i++) {
        uint32_t u = dq__abs_bits(x[i]);
        if ((u >> 10) == ((b1 << 10) | b2)) cnt[u & 1023u]++;
    }
    b3 = dq__tr_pick(cnt, 1024u, &k);
    return (b1 << 20) | (b2 << 10) | b3;
}

static inline dq_status dq__tr_tail_params(const dq_trunc_params *p, double *q, size_t *kmin) {
    *q = p && p->tail_fraction != 0.0 ? p->tail_fraction : DQ__TR_Q_DEFAULT;
    *kmin = p && p->tail_min ? p->tail_min : (size_t)DQ__TR_KMIN_DEFAULT;
    if (!(*q > 0.0 && *q <= 0.5) || *kmin < 2u) return DQ_ERR_PARAM;
    return DQ_OK;
}

/* k = max(ceil(q n), kmin), at most n. */
static inline size_t dq__tr_k(double q, size_t kmin, size_t n) {
    double t = q * (double)n;
    size_t k = (size_t)t;
    if ((double)k < t) k++;
    if (k < kmin) k = kmin;
    return k > n ? n : k;
}

/* Fills the tail from the Hill sum over the magnitudes above x_m. */
static inline void dq__tr_tail_finish(dq_tail *t, size_t n, double hsum) {
    t->hill = 0.0;
    t->gamma = 0.0;
    t->c = 0.0;
    t->finite_variance = 0;
    if (t->k < 2u || !(t->x_m > 0.0)) return;
    t->hill = hsum / (double)(t->k - 1u);
    if (!(t->hill > 0.0)) {
        t->gamma = HUGE_VAL;
        t->finite_variance = 1;
        return;
    }
    t->gamma = 1.0 + 1.0 / t->hill;
    t->c = 0.5 * (t->gamma - 1.0) * ((double)t->k / (double)n) * exp((t->gamma - 1.0) * log(t->x_m));
    if (!(t->c <= DBL_MAX)) t->c = HUGE_VAL;
    t->finite_variance = t->gamma > 3.0;
}

DQ_API dq_status dq_tail_estimate(const dq_trunc_params *p, const float *x, size_t n, void *work, size_t work_cap,
                                  dq_tail *tail) {
    dq__tr_work w;
    double q, hsum = 0.0, xm;
    size_t kmin, i;
    uint32_t umax, um;
    dq_status st;
    if (!x || !work || !tail) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if ((st = dq__tr_tail_params(p, &q, &kmin)) != DQ_OK) return st;
    if (work_cap < dq_trunc_workspace_size(n)) return DQ_ERR_WORKSPACE;
    dq__tr_carve(work, &w);
    if ((st = dq__tr_pass1(x, n, w.cnt, &umax)) != DQ_OK) return st;
    memset(tail, 0, sizeof *tail);
    tail->k = dq__tr_k(q, kmin, n);
    um = dq__tr_select(x, n, w.cnt, (uint64_t)tail->k);
    xm = (double)dq__bitsf(um);
    tail->x_m = xm;
    tail->max_abs = (double)dq__bitsf(umax);
    if (xm > 0.0)
        for (i = 0; i < n; i++) {
            uint32_t u = dq__abs_bits(x[i]);
            if (u > um) hsum += log((double)dq__bitsf(u) / xm);
        }
    dq__tr_tail_finish(tail, n, hsum);
    return DQ_OK;
}

/* ---- the moment histogram of |x| */
typedef struct dq__tr_hist {
    const double *m, *t1, *t2, *cr;
    const uint32_t *ne; /* the non-empty bins, increasing */
    size_t nne;
    uint32_t base; /* key (|x| bits >> DQ__TR_SHIFT) of regular bin 1 */
    size_t nb;     /* regular bins 1..nb; 0 = underflow [0, lo(1)); nb + 1 = overflow */
    double n;
} dq__tr_hist;

static inline double dq__tr_lo(const dq__tr_hist *h, size_t i) {
    return i == 0u ? 0.0 : (double)dq__bitsf((h->base + (uint32_t)(i - 1u)) << DQ__TR_SHIFT);
}
static inline double dq__tr_hi(const dq__tr_hist *h, size_t i) { return i <= h->nb ? dq__tr_lo(h, i + 1u) : HUGE_VAL; }

/* Level j of s at alpha: L[j] (L != NULL) or j alpha / s; L_s = alpha exactly. */
static inline double dq__tr_L(const double *L, unsigned j, unsigned s, double alpha) {
    if (j >= s) return alpha;
    return L ? L[j] : (double)j * alpha / (double)s;
}

/* Expected squared error (sums over elements) of the histogram at alpha with levels L (NULL:
 * uniform), split in rounding variance and truncation bias, and a bound on the error of the
 * approximation in the bins that straddle a level or alpha. Needs alpha <= lo(nb + 1). */
static inline void dq__tr_eval(const dq__tr_hist *h, double alpha, const double *L, unsigned s, double *var,
                               double *bias, double *slack) {
    double v = 0.0, b = 0.0, sl = 0.0;
    unsigned j = 0;
    size_t q;
    for (q = 0; q < h->nne; q++) {
        size_t i = h->ne[q];
        double m = h->m[i], lo, hi, A, B;
        lo = dq__tr_lo(h, i);
        if (lo >= alpha) { /* all above alpha: exact bias from the moments */
            double e = lo - alpha, p1 = 2.0 * e * h->t1[i], p2 = m * e * e;
            b += h->t2[i] + p1 + p2;
            continue;
        }
        hi = dq__tr_hi(h, i);
        while (j + 1u < s && dq__tr_L(L, j + 1u, s, alpha) <= lo) j++;
        A = dq__tr_L(L, j, s, alpha);
        B = dq__tr_L(L, j + 1u, s, alpha);
        if (hi <= B) { /* inside one cell [A, B): exact, sum (a - A)(B - a) with a = lo + t */
            double d = lo - A, D = B - A, md = m * d, dt = d * h->t1[i], cell = (D - d) * (h->t1[i] + md);
            v += cell - h->t2[i] - dt;
            continue;
        }
        { /* straddles a level or alpha: density m / (hi - lo), uniform in the bin. Every
           * element's error e(a) ((a - A)(B - a) in its cell, (a - alpha)^2 above alpha) and the
           * modelled average both lie in [0, max of e over the bin], which bounds the error. */
            double rho = m / (hi - lo), end = hi < alpha ? hi : alpha, u = lo, emax = 0.0;
            unsigned jj = j;
            while (u < end) {
                double a0 = dq__tr_L(L, jj, s, alpha), b0 = dq__tr_L(L, jj + 1u, s, alpha);
                double wv = b0 < end ? b0 : end, s1 = u - a0, s2 = wv - a0, D = b0 - a0, c = 0.5 * D, e;
                double q2 = s2 * s2, q1 = s1 * s1, c2 = q2 * s2, c1 = q1 * s1, seg;
                seg = D * (q2 - q1) / 2.0 - (c2 - c1) / 3.0;
                seg = rho * seg;
                v += seg;
                if (s1 <= c && c <= s2)
                    e = c * c;
                else
                    e = s2 < c ? s2 * (D - s2) : s1 * (D - s1);
                if (e > emax) emax = e;
                u = wv;
                if (wv >= b0) jj++;
            }
            if (hi > alpha) {
                double t = hi - alpha;
                b += rho * t * t * t / 3.0;
                if (t * t > emax) emax = t * t;
            }
            emax = m * emax;
            sl += emax;
        }
    }
    *var = v;
    *bias = b;
    *slack = sl;
}

/* Companded levels at alpha: L[j] = Lambda^-1(j/s), j = 0..s, Lambda from the bin-wise
 * constant density; returns G = sum over bins below alpha of cr * width (the integral of
 * f^(1/3), up to the factor n^(-1/3)); G = 0 gives uniform levels. */
static inline double dq__tr_compand(const dq__tr_hist *h, double alpha, unsigned s, double *L) {
    double G = 0.0, cum = 0.0;
    unsigned j;
    size_t e;
    for (e = 0; e < h->nne; e++) {
        size_t i = h->ne[e];
        double lo = dq__tr_lo(h, i), hi;
        if (lo >= alpha || i > h->nb) break;
        hi = dq__tr_hi(h, i);
        hi = h->cr[i] * ((hi < alpha ? hi : alpha) - lo);
        G += hi;
    }
    L[0] = 0.0;
    L[s] = alpha;
    if (!(G > 0.0)) {
        for (j = 1; j < s; j++) L[j] = (double)j * alpha / (double)s;
        return 0.0;
    }
    j = 1;
    for (e = 0; e < h->nne && j < s; e++) {
        size_t i = h->ne[e];
        double lo = dq__tr_lo(h, i), hi, top, g;
        if (lo >= alpha || i > h->nb) break;
        hi = dq__tr_hi(h, i);
        top = hi < alpha ? hi : alpha;
        g = h->cr[i] * (top - lo);
        if (!(g > 0.0)) continue;
        while (j < s) {
            double t = (double)j * G / (double)s, l;
            if (t > cum + g) break;
            l = lo + (t - cum) / h->cr[i];
            L[j++] = l < lo ? lo : (l > top ? top : l);
        }
        cum += g;
    }
    for (; j < s; j++) L[j] = alpha; /* rounding left the last targets past the end */
    return G;
}

typedef struct dq__tr_obj {
    const dq__tr_hist *h;
    unsigned s, nu, model;
    double *L;
} dq__tr_obj;

/* The objective at alpha: expected squared error per element (SEARCH), or V_N* + B (MODEL,
 * non-uniform). */
static inline double dq__tr_f(const dq__tr_obj *o, double alpha) {
    double v, b, sl, G = 0.0;
    if (o->nu) G = dq__tr_compand(o->h, alpha, o->s, o->L);
    dq__tr_eval(o->h, alpha, o->nu ? o->L : NULL, o->s, &v, &b, &sl);
    if (o->model) v = G * G * G / (6.0 * (double)o->s * (double)o->s);
    return (v + b) / o->h->n;
}

/* Minimize over [lo, hi]. The objective is not smooth: with companded levels it moves in
 * narrow steps as alpha passes sparse tail samples, so a bracketing search alone can miss the
 * best dip. Three stages: (1) scan lo, hi and the regular bin edges every DQ__TR_SCAN bins
 * between them (8 per binade); (2) scan every bin edge (128 per binade) within a factor 1.25
 * of the best point; (3) golden-section search (a fixed 48 steps) between the best point's
 * neighbours. Returns the best point seen. */
static inline double dq__tr_minimize(const dq__tr_obj *o, double lo, double hi) {
    const double r = 0.6180339887498949;
    double best, fbest, a, b, x1, x2, f1, f2, prev, next, wlo, whi;
    size_t i, step;
    int it, stage;
    best = lo;
    fbest = dq__tr_f(o, lo);
    if (hi > lo) {
        double fh = dq__tr_f(o, hi);
        if (fh < fbest) {
            fbest = fh;
            best = hi;
        }
    }
    wlo = lo;
    whi = hi;
    for (stage = 0; stage < 2; stage++) {
        step = stage == 0 ? DQ__TR_SCAN : 1u;
        prev = lo;
        next = hi;
        for (i = 1; i <= o->h->nb; i += step) {
            double c = dq__tr_lo(o->h, i), fc;
            if (c <= wlo) continue;
            if (c >= whi) break;
            fc = dq__tr_f(o, c);
            if (fc < fbest) {
                fbest = fc;
                best = c;
            }
        }
        wlo = best * 0.8 > lo ? best * 0.8 : lo;
        whi = best * 1.25 < hi ? best * 1.25 : hi;
    }
    /* neighbours of best among the stage-2 points (bin edges), lo and hi */
    prev = lo;
    next = hi;
    for (i = 1; i <= o->h->nb + 1u; i++) {
        double c = dq__tr_lo(o->h, i);
        if (c < best && c > prev) prev = c;
        if (c > best && c < next) {
            next = c;
            break;
        }
    }
    a = prev;
    b = next;
    if (!(b > a)) return best;
    x1 = r * (b - a);
    x1 = b - x1;
    x2 = r * (b - a);
    x2 = a + x2;
    f1 = dq__tr_f(o, x1);
    f2 = dq__tr_f(o, x2);
    for (it = 0; it < 48; it++) {
        if (f1 <= f2) {
            b = x2;
            x2 = x1;
            f2 = f1;
            x1 = r * (b - a);
            x1 = b - x1;
            f1 = dq__tr_f(o, x1);
        } else {
            a = x1;
            x1 = x2;
            f1 = f2;
            x2 = r * (b - a);
            x2 = a + x2;
            f2 = dq__tr_f(o, x2);
        }
    }
    if (f1 <= f2 && f1 < fbest) return x1;
    if (f2 < f1 && f2 < fbest) return x2;
    return best;
}

/* Float levels l_j = L_j / alpha (j = 1..s), made strictly increasing with l_1 > 0 and l_s = 1. */
static inline void dq__tr_float_levels(const double *L, unsigned s, float alpha, float *lv) {
    unsigned j;
    for (j = 1; j <= s; j++) {
        double l = L[j] / (double)alpha;
        lv[j - 1u] = l < 1.0 ? (float)l : 1.0f;
    }
    lv[s - 1u] = 1.0f;
    for (j = 0; j < s; j++) { /* forward: above the previous (0 for the first) */
        float prev = j ? lv[j - 1u] : 0.0f;
        if (!(lv[j] > prev)) lv[j] = dq__bitsf(dq__fbits(prev) + 1u);
    }
    for (j = s - 1u; j-- > 0u;) /* backward: below the next, l_s = 1 stays */
        if (!(lv[j] < lv[j + 1u])) lv[j] = dq__bitsf(dq__fbits(lv[j + 1u]) - 1u);
}

static inline float dq__tr_clamp_alpha(double a, unsigned *flags) {
    float f = (float)a;
    if (!(f >= DQ__MIN_SCALE)) {
        *flags |= DQ_TRUNC_F_CLAMPED;
        return DQ__MIN_SCALE;
    }
    if (dq__fbits(f) > DQ__MAX_SCALE_BITS) {
        *flags |= DQ_TRUNC_F_CLAMPED;
        return dq__bitsf(DQ__MAX_SCALE_BITS);
    }
    return f;
}

/* dq_trunc_solve step 2: the moment histogram of |x| up to top (bins of 1/128 binade, an
 * underflow and an overflow bin), its non-empty bins and the cube roots of their densities;
 * returns the Hill sum over the magnitudes above x_m (bit pattern um). */
static inline double dq__tr_build(const float *x, size_t n, double top, uint32_t um, double xm, dq__tr_work *w,
                                  dq__tr_hist *h) {
    uint32_t ktop = dq__fbits((float)top) >> DQ__TR_SHIFT, base;
    size_t nb = ktop + 1u < DQ__TR_NB ? (size_t)ktop + 1u : (size_t)DQ__TR_NB, i;
    double hsum = 0.0, lo_over;
    base = ktop + 1u - (uint32_t)nb;
    memset(w->m, 0, 3u * (DQ__TR_NB + 2u) * sizeof(double));
    h->m = w->m;
    h->t1 = w->t1;
    h->t2 = w->t2;
    h->cr = w->cr;
    h->base = base;
    h->nb = nb;
    h->n = (double)n;
    lo_over = dq__tr_lo(h, nb + 1u);
    for (i = 0; i < n; i++) {
        uint32_t u = dq__abs_bits(x[i]), key = u >> DQ__TR_SHIFT;
        double av = (double)dq__bitsf(u), t;
        size_t idx;
        if (key < base) {
            idx = 0;
            t = av;
        } else if (key > ktop) {
            idx = nb + 1u;
            t = av - lo_over;
        } else {
            idx = (size_t)(key - base) + 1u;
            t = av - (double)dq__bitsf(key << DQ__TR_SHIFT);
        }
        w->m[idx] += 1.0;
        w->t1[idx] += t;
        t = t * t;
        w->t2[idx] += t;
        if (u > um && xm > 0.0) hsum += log(av / xm);
    }
    h->ne = w->ne;
    h->nne = 0;
    for (i = 0; i <= nb + 1u; i++) { /* the non-empty bins; cube root of their density */
        double wd = dq__tr_hi(h, i) - dq__tr_lo(h, i);
        w->cr[i] = w->m[i] > 0.0 && wd > 0.0 && i <= nb ? dq__tr_cbrt(w->m[i] / wd) : 0.0;
        if (w->m[i] > 0.0) w->ne[h->nne++] = (uint32_t)i;
    }
    return hsum;
}

/* dq_trunc_solve step 3 under DQ_TRUNC_MODEL with uniform levels (doc/MATHS.md 11.3): alpha
 * from the tail fit into *af; 0 when the closed form does not apply (gamma <= 2). */
static inline int dq__tr_model_alpha(dq_trunc_info *inf, size_t n, unsigned s, double kappa, float *af) {
    double g = inf->tail.gamma, xm = inf->tail.x_m, amax = inf->tail.max_abs, a;
    if (g > 2.0 && g < HUGE_VAL) {
        /* 11.3: alpha*^(gamma-1) = 2 c s^2 / (kappa (gamma-1)(gamma-2)); with c from the fit,
         * alpha* = x_m ((k/n) s^2 / (kappa (gamma-2)))^(1/(gamma-1)) */
        double sd = (double)s;
        a = xm * pow((double)inf->tail.k / (double)n * sd * sd / (kappa * (g - 2.0)), 1.0 / (g - 1.0));
        if (!(a >= xm)) {
            a = xm;
            inf->flags |= DQ_TRUNC_F_CLAMPED;
        }
        if (a > amax) {
            a = amax;
            inf->flags |= DQ_TRUNC_F_CLAMPED;
        }
        *af = dq__tr_clamp_alpha(a, &inf->flags);
        return 1;
    }
    if (g >= HUGE_VAL) { /* the top k are equal: no tail to cut */
        *af = dq__tr_clamp_alpha(amax, &inf->flags);
        return 1;
    }
    return 0;
}

/* dq_trunc_solve step 3, the search: the error's minimum over [lo, top]. lo is the bin of the
 * ceil(nz/8)-th smallest non-zero |x| (nz of them): clipping 7/8 of the non-zero magnitudes
 * never pays (at s = 1 the error still falls as alpha grows unless 7/8 of them lie within 7% of
 * one value, and more levels favour a larger alpha); the underflow bin counts as zero here.
 * Under o->model (non-uniform, V_N* + B) the search starts at x_m at least. */
static inline double dq__tr_search(const dq__tr_obj *o, const dq__tr_hist *h, double top, double xm) {
    double nz = 0.0, need, acc = 0.0, lo_s = 0.0;
    size_t i, nb = h->nb;
    for (i = 1; i <= nb + 1u; i++) nz += h->m[i];
    need = nz / 8.0;
    for (i = 1; i <= nb; i++)
        if (h->m[i] > 0.0 && (acc += h->m[i]) >= need) {
            lo_s = dq__tr_lo(h, i);
            break;
        }
    if (!(lo_s > 0.0)) lo_s = dq__tr_lo(h, 1u) > 0.0 ? dq__tr_lo(h, 1u) : top;
    if (o->model && xm > lo_s) lo_s = xm;
    if (lo_s > top) lo_s = top;
    return dq__tr_minimize(o, lo_s, top);
}

/* dq_trunc_solve step 4: the levels at the final alpha, and the report of exactly what is
 * returned (from the histogram while alpha lies within its range, else the exact sums). */
static inline void dq__tr_finish(const float *x, size_t n, const dq__tr_hist *h, dq__tr_work *w, float af,
                                 unsigned bits, unsigned s, unsigned nu, float *levels, dq_trunc_info *inf) {
    double lvd[128];
    unsigned j;
    /* the histogram describes alpha up to its overflow bin, or any alpha if that bin is empty */
    int inrange = (double)af <= dq__tr_lo(h, h->nb + 1u) || w->m[h->nb + 1u] == 0.0;
    if (nu) {
        if (inrange) {
            dq__tr_compand(h, (double)af, s, w->L);
        } else { /* a given alpha above the histogram's range: uniform levels */
            for (j = 0; j <= s; j++) w->L[j] = (double)j * (double)af / (double)s;
        }
        dq__tr_float_levels(w->L, s, af, levels);
        for (j = 1; j <= s; j++) lvd[j] = (double)levels[j - 1u] * (double)af;
        lvd[0] = 0.0;
        lvd[s] = (double)af;
    }
    if (inrange) {
        dq__tr_eval(h, (double)af, nu ? lvd : NULL, s, &inf->var, &inf->bias, &inf->slack);
        inf->slack /= (double)n;
    } else { /* given alpha above the histogram's range: report the exact sums instead */
        dq_trunc_mse(x, n, af, bits, nu ? levels : NULL, &inf->var, &inf->bias);
    }
    inf->var /= (double)n;
    inf->bias /= (double)n;
    inf->mse = inf->var + inf->bias;
}

DQ_API dq_status dq_trunc_solve(const dq_trunc_params *p, const float *x, size_t n, void *work, size_t work_cap,
                                float *alpha, float *levels, size_t levels_cap, dq_trunc_info *info) {
    dq__tr_work w;
    dq__tr_hist h;
    dq__tr_obj o;
    dq_trunc_info inf;
    dq_status st;
    double q, xm, amax, top, kappa;
    size_t kmin;
    uint32_t umax, um;
    unsigned bits, s, nu, model;
    float af, fixed;
    if (!p || !x || !work || !alpha) return DQ_ERR_NULL;
    bits = p->bits ? p->bits : DQ_BITS_DEFAULT;
    nu = p->nonuniform != 0u;
    if (nu && !levels) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if (bits < 2u || bits > (nu ? 8u : 16u)) return DQ_ERR_BITS;
    if ((unsigned)p->method > (unsigned)DQ_TRUNC_MODEL || p->nonuniform > 1u) return DQ_ERR_PARAM;
    if ((st = dq__tr_tail_params(p, &q, &kmin)) != DQ_OK) return st;
    kappa = p->kappa != 0.0 ? p->kappa : 1.0 / 6.0;
    if (!(kappa > 0.0 && kappa <= 1.0)) return DQ_ERR_PARAM;
    fixed = p->alpha;
    if (fixed != 0.0f && !(fixed >= DQ__MIN_SCALE && dq__fbits(fixed) <= DQ__MAX_SCALE_BITS)) return DQ_ERR_PARAM;
    if (work_cap < dq_trunc_workspace_size(n)) return DQ_ERR_WORKSPACE;
    s = dq__tr_levels(bits);
    if (nu && levels_cap < s) return DQ_ERR_DST_TOO_SMALL;
    model = p->method == DQ_TRUNC_MODEL;
    dq__tr_carve(work, &w);

    /* 1. check, max, select x_m */
    if ((st = dq__tr_pass1(x, n, w.cnt, &umax)) != DQ_OK) return st;
    memset(&inf, 0, sizeof inf);
    inf.tail.k = dq__tr_k(q, kmin, n);
    um = dq__tr_select(x, n, w.cnt, (uint64_t)inf.tail.k);
    xm = (double)dq__bitsf(um);
    amax = (double)dq__bitsf(umax);
    inf.tail.x_m = xm;
    inf.tail.max_abs = amax;

    /* 2. the histogram up to min(max|x|, 2^24 x_m, 2^126), and the tail estimate */
    top = amax;
    if (xm > 0.0 && top > xm * 16777216.0) top = xm * 16777216.0;
    if (top > (double)dq__bitsf(DQ__MAX_SCALE_BITS)) top = (double)dq__bitsf(DQ__MAX_SCALE_BITS);
    dq__tr_tail_finish(&inf.tail, n, dq__tr_build(x, n, top, um, xm, &w, &h));
    if (inf.tail.gamma == 0.0) inf.flags |= DQ_TRUNC_F_NO_TAIL;
    if (inf.tail.gamma != 0.0 && !inf.tail.finite_variance) inf.flags |= DQ_TRUNC_F_HEAVY;

    /* 3. alpha: the caller's; none for an all-zero input; the model's closed form; the search */
    if (fixed != 0.0f) {
        af = fixed;
    } else if (!(top > 0.0)) {
        af = dq__tr_clamp_alpha(0.0, &inf.flags);
    } else if (!(model && !nu && dq__tr_model_alpha(&inf, n, s, kappa, &af))) {
        if (model && !nu) { /* the closed form does not apply: search instead */
            inf.flags |= DQ_TRUNC_F_FALLBACK;
            model = 0;
        }
        o.h = &h;
        o.s = s;
        o.nu = nu;
        o.model = model; /* model here: non-uniform, V_N* + B */
        o.L = w.L;
        af = dq__tr_clamp_alpha(dq__tr_search(&o, &h, top, xm), &inf.flags);
    }

    /* 4. levels and the report */
    dq__tr_finish(x, n, &h, &w, af, bits, s, nu, levels, &inf);
    *alpha = af;
    if (info) *info = inf;
    return DQ_OK;
}

DQ_API dq_status dq_trunc_mse(const float *x, size_t n, float alpha, unsigned bits, const float *levels, double *var,
                              double *bias) {
    double v = 0.0, b = 0.0, A = (double)alpha, L[128];
    unsigned s, j;
    size_t i;
    if (!x || (!var && !bias)) return DQ_ERR_NULL;
    if (n == 0) return DQ_ERR_EMPTY;
    if (bits < 2u || bits > (levels ? 8u : 16u)) return DQ_ERR_BITS;
    if (!(alpha > 0.0f) || !(alpha <= FLT_MAX)) return DQ_ERR_PARAM;
    s = dq__tr_levels(bits);
    if (levels) {
        for (j = 0; j < s; j++)
            if (!(levels[j] > (j ? levels[j - 1u] : 0.0f)) || !(levels[j] <= 1.0f)) return DQ_ERR_PARAM;
        if (levels[s - 1u] != 1.0f) return DQ_ERR_PARAM;
        L[0] = 0.0;
        for (j = 1; j < s; j++) L[j] = (double)levels[j - 1u] * A;
        L[s] = A;
    }
    for (i = 0; i < n; i++) {
        uint32_t u = dq__abs_bits(x[i]);
        double a, lo, hi;
        if (u >= 0x7F800000u) return DQ_ERR_NONFINITE;
        a = (double)dq__bitsf(u);
        if (a >= A) {
            double o = (a - A) * (a - A);
            b += o;
            continue;
        }
        if (levels) { /* the cell [L_j, L_(j+1)) holding a */
            unsigned l0 = 0, l1 = s;
            while (l1 - l0 > 1u) {
                unsigned mid = (l0 + l1) / 2u;
                if (L[mid] <= a)
                    l0 = mid;
                else
                    l1 = mid;
            }
            lo = L[l0];
            hi = L[l1];
        } else {
            double r = a * (double)s / A;
            unsigned l = (unsigned)r;
            if (l >= s) l = s - 1u;
            lo = dq__tr_L(NULL, l, s, A);
            hi = dq__tr_L(NULL, l + 1u, s, A);
            if (a < lo) { /* r rounded up across a level */
                hi = lo;
                lo = dq__tr_L(NULL, l - 1u, s, A);
            } else if (a >= hi && l + 1u < s) {
                lo = hi;
                hi = dq__tr_L(NULL, l + 2u, s, A);
            }
        }
        lo = (a - lo) * (hi - a);
        v += lo;
    }
    if (var) *var = v;
    if (bias) *bias = b;
    return DQ_OK;
}


/* ---------------------------------------------------------------- fp16 and bf16: the typed codec
 * The codec's own pipeline with 16-bit data (the element adapter of the level encoder). The
 * conversions (dq__f32_to_f16_bits and the kernels) are with the scalar kernels. */

DQ_API uint16_t dq_f32_to_f16(float f) { return dq__f32_to_f16_bits(dq__fbits(f)); }
DQ_API float dq_f16_to_f32(uint16_t h) { return dq__bitsf(dq__f16_to_f32_bits(h)); }
DQ_API uint16_t dq_f32_to_bf16(float f) { return dq__f32_to_bf16_bits(dq__fbits(f)); }
DQ_API float dq_bf16_to_f32(uint16_t h) { return dq__bitsf(dq__bf16_to_f32_bits(h)); }

DQ_API dq_status dq_convert(dq_dtype from, const void *src, size_t n, dq_dtype to, void *dst) {
    float buf[DQ__ELCHUNK];
    size_t i;
    if (!src || !dst) return DQ_ERR_NULL;
    if (!dq_dtype_size(from) || !dq_dtype_size(to)) return DQ_ERR_PARAM;
    if (n == 0) return DQ_OK;
    if (from == to) {
        if (src != dst) memmove(dst, src, n * dq_dtype_size(to));
    } else if (from == DQ_F32) { /* narrowing: the kernels store each group behind its loads */
        dq__el_out(to, (const float *)src, n, dst, 0);
    } else if (to == DQ_F32) {
        (void)dq__el_in(from, src, 0, n, (float *)dst);
    } else { /* fp16 <-> bf16 through float, a chunk at a time */
        for (i = 0; i < n; i += DQ__ELCHUNK) {
            size_t cnt = n - i < DQ__ELCHUNK ? n - i : DQ__ELCHUNK;
            dq__el_out(to, dq__el_in(from, src, i, cnt, buf), cnt, dst, i);
        }
    }
    return DQ_OK;
}

DQ_API dq_status dq_encode_typed(const dq_params *p, dq_dtype xt, const void *x, size_t n, dq_dtype rt,
                                 void *residual, void *dst, size_t dst_cap, size_t *dst_len) {
    if (!dst_len || !p || !x || !dst) return DQ_ERR_NULL;
    if (!dq_dtype_size(xt) || !dq_dtype_size(rt)) return DQ_ERR_PARAM;
    return dq__ops_params(p)->encode(p, xt, x, n, rt, residual, dst, dst_cap, dst_len);
}
DQ_API dq_status dq_decode_typed(const void *src, size_t src_len, dq_dtype ot, void *out, size_t out_cap) {
    return dq__decode_msg(src, src_len, 1.0f, 0, ot, out, out_cap);
}
DQ_API dq_status dq_decode_add_typed(const void *src, size_t src_len, float weight, dq_dtype at, void *acc,
                                     size_t acc_len) {
    return dq__decode_msg(src, src_len, weight, 1, at, acc, acc_len);
}


/* ---------------------------------------------------------------- aggregation (API above) */

DQ_API dq_status dq_offsets(const size_t *sizes, size_t m, size_t limit, size_t *offsets) {
    size_t i;
    if (!offsets || (m && !sizes)) return DQ_ERR_NULL;
    offsets[0] = 0;
    for (i = 0; i < m; i++) {
        if (sizes[i] > limit - offsets[i]) return DQ_ERR_OVERFLOW;
        offsets[i + 1] = offsets[i] + sizes[i];
    }
    return DQ_OK;
}

/* The bucket length of p for n elements (n for whole-vector buckets); 0 if invalid. */
static inline size_t dq__agg_bucket(const dq_params *p, size_t n) {
    uint32_t bk = p->bucket ? p->bucket : DQ_BUCKET_DEFAULT;
    if (bk == DQ_BUCKET_WHOLE) return n ? n : 1u;
    return bk % 8u ? 0u : (size_t)bk;
}

DQ_API dq_status dq_chunk(const dq_params *p, size_t n, size_t parts, size_t j, size_t *begin, size_t *end) {
    size_t B, nb, q, r, b0, b1;
    if (!p || !begin || !end) return DQ_ERR_NULL;
    if (!n) return DQ_ERR_EMPTY;
    if ((uint64_t)n > DQ_MAX_ELEMS) return DQ_ERR_TOO_LARGE;
    B = dq__agg_bucket(p, n);
    if (!B || !parts || j >= parts) return DQ_ERR_PARAM;
    nb = n / B + (n % B != 0);
    q = nb / parts;
    r = nb % parts;
    b0 = j * q + (j < r ? j : r); /* the first r chunks get one bucket more */
    b1 = b0 + q + (size_t)(j < r);
    *begin = b0 * B < n ? b0 * B : n;
    *end = b1 * B < n ? b1 * B : n;
    return DQ_OK;
}

DQ_API dq_status dq_requantize(const dq_params *p, const void *const *msgs, const size_t *lens, size_t m, float weight,
                               float *acc, size_t n, float *residual, void *dst, size_t dst_cap, size_t *dst_len) {
    size_t i;
    if (!p || !acc || !dst || !dst_len || (m && (!msgs || !lens))) return DQ_ERR_NULL;
    if (!n) return DQ_ERR_EMPTY;
    for (i = 0; i < n; i++) acc[i] = 0.0f;
    for (i = 0; i < m; i++) {
        dq_status st;
        if (!msgs[i]) return DQ_ERR_NULL;
        st = dq_decode_add(msgs[i], lens[i], weight, acc, n);
        if (st != DQ_OK) return st;
    }
    return dq_encode(p, acc, n, residual, dst, dst_cap, dst_len);
}

DQ_API unsigned dq_shared_width(unsigned bits, uint64_t workers) {
    uint64_t top;
    if (bits < 2u || bits > 16u || !workers || workers > (uint64_t)DQ_SHARED_MAX_SUM) return 0u;
    top = workers * ((1u << (bits - 1u)) - 1u); /* the largest |partial sum| of M levels */
    if (top > (uint64_t)DQ_SHARED_MAX_SUM) return 0u;
    return top <= 127u ? 8u : top <= 32767u ? 16u : 32u;
}

/* The common checks; *B the bucket length, *L the largest level. */
static inline dq_status dq__shared_check(const dq_params *p, size_t n, size_t *B, uint32_t *L) {
    if (!p) return DQ_ERR_NULL;
    if (!n) return DQ_ERR_EMPTY;
    if ((uint64_t)n > DQ_MAX_ELEMS) return DQ_ERR_TOO_LARGE;
    if (p->bits < 2u || p->bits > 16u) return DQ_ERR_BITS;
    if ((p->scheme != 0 && p->scheme != DQ_SCHEME_QSGD) || (p->norm != DQ_NORM_DEFAULT && p->norm != DQ_NORM_MAX) ||
        p->rounding > DQ_ROUND_NEAREST || p->checksum || !dq__fixed_asked(p)) /* integers, not messages */
        return DQ_ERR_PARAM;
    *B = dq__agg_bucket(p, n);
    *L = (1u << (p->bits - 1u)) - 1u;
    return *B ? DQ_OK : DQ_ERR_PARAM;
}

/* 2^e as a float, e in [DQ_SHARED_EXP_MIN, 127]: a normal power of two, or 2^-127 (subnormal). */
static inline float dq__pow2f(int e) {
    return e >= -126 ? dq__bitsf((uint32_t)(e + 127) << 23) : dq__bitsf(0x00400000u);
}

/* The bucket's v = x (+ r) largest magnitude bit pattern (the statistics kernel's maximum);
 * >= 0x7F800000 when it holds a NaN or Inf. */
static inline uint32_t dq__shared_maxbits(const float *x, const float *r, size_t len) {
    dq__stats st;
    dq__k_stats(x, r, len, DQ__ST_MAX, &st);
    return st.maxbits;
}

/* The smallest e in range with m <= L * 2^e (each L * 2^e is an exact float). */
static inline dq_status dq__shared_exp_of(uint32_t mbits, uint32_t L, int8_t *e_out) {
    float m = dq__bitsf(mbits), Lf = (float)L;
    int e;
    if (mbits >= 0x7F800000u) return DQ_ERR_NONFINITE;
    if (!mbits) {
        *e_out = (int8_t)DQ_SHARED_EXP_MIN;
        return DQ_OK;
    }
    e = (int)(mbits >> 23) - 127 - (int)dq__ilog2(L); /* within one or two of the answer */
    if (e < DQ_SHARED_EXP_MIN) e = DQ_SHARED_EXP_MIN;
    if (e > DQ_SHARED_EXP_MAX) e = DQ_SHARED_EXP_MAX;
    while (e < DQ_SHARED_EXP_MAX && m > Lf * dq__pow2f(e)) e++;
    while (e > DQ_SHARED_EXP_MIN && m <= Lf * dq__pow2f(e - 1)) e--;
    if (m > Lf * dq__pow2f(e)) return DQ_ERR_OVERFLOW;
    *e_out = (int8_t)e;
    return DQ_OK;
}

DQ_API size_t dq_shared_buckets(const dq_params *p, size_t n) {
    size_t B;
    uint32_t L;
    if (dq__shared_check(p, n, &B, &L) != DQ_OK) return 0;
    return n / B + (n % B != 0);
}

DQ_API dq_status dq_shared_exponents(const dq_params *p, const float *x, size_t n, const float *residual,
                                     int8_t *exps) {
    size_t B, b0;
    uint32_t L;
    dq_status st = dq__shared_check(p, n, &B, &L);
    if (st != DQ_OK) return st;
    if (!x || !exps) return DQ_ERR_NULL;
    for (b0 = 0; b0 < n; b0 += B) {
        size_t len = n - b0 < B ? n - b0 : B;
        st = dq__shared_exp_of(dq__shared_maxbits(x + b0, residual ? residual + b0 : NULL, len), L, &exps[b0 / B]);
        if (st != DQ_OK) return st;
    }
    return DQ_OK;
}

static inline int dq__shared_width_ok(unsigned w) { return w == 8u || w == 16u || w == 32u; }

DQ_API dq_status dq_shared_encode(const dq_params *p, const float *x, size_t n, float *residual, const int8_t *exps,
                                  unsigned width, void *levels) {
    size_t B, b0, i;
    uint32_t L;
    int stochastic;
    dq__key key;
    dq_status st = dq__shared_check(p, n, &B, &L);
    if (st != DQ_OK) return st;
    if (!x || !exps || !levels) return DQ_ERR_NULL;
    if (!dq__shared_width_ok(width) || L > (1u << (width - 1u)) - 1u) return DQ_ERR_PARAM;
    /* First pass: every bucket fits its unit, so nothing is written on a mismatch. */
    for (b0 = 0; b0 < n; b0 += B) {
        size_t len = n - b0 < B ? n - b0 : B;
        int e = exps[b0 / B];
        uint32_t m = dq__shared_maxbits(x + b0, residual ? residual + b0 : NULL, len);
        if (m >= 0x7F800000u) return DQ_ERR_NONFINITE;
        if (e < DQ_SHARED_EXP_MIN || e > DQ_SHARED_EXP_MAX || dq__bitsf(m) > (float)L * dq__pow2f(e))
            return DQ_ERR_PARAM; /* the unit is smaller than this worker's own */
    }
    stochastic = p->rounding != DQ_ROUND_NEAREST;
    key = dq__key_make(p->seed, p->step, p->stream);
    for (b0 = 0; b0 < n; b0 += B) {
        size_t end = n - b0 < B ? n : b0 + B;
        int e = exps[b0 / B];
        float unit = dq__pow2f(e), inv = e > -127 ? dq__pow2f(-e) : dq__bitsf(0x7F000000u); /* 2^127 */
        for (i = b0; i < end;) {
            /* pieces of DQ__SHARED_PIECE that never cross a multiple of 2^32 (one middle key) */
            size_t cnt = end - i < DQ__SHARED_PIECE ? end - i : DQ__SHARED_PIECE;
            uint64_t hi = (uint64_t)i >> 32;
            int32_t tmp[DQ__SHARED_PIECE], *lv = width == 32u ? (int32_t *)levels + i : tmp;
            size_t j;
            if (((uint64_t)(i + cnt - 1) >> 32) != hi) cnt = (size_t)(((hi + 1u) << 32) - (uint64_t)i);
            dq__k_shared_q(x + i, residual ? residual + i : NULL, cnt, i, inv, unit, key.k0,
                           dq__key_hi(key, (uint32_t)hi), stochastic, lv);
            /* j < n is implied by cnt; said explicitly so gcc -O3 sees the store bounded */
            if (width == 8u)
                for (j = i; j < i + cnt && j < n; j++) ((int8_t *)levels)[j] = (int8_t)tmp[j - i];
            else if (width == 16u)
                for (j = i; j < i + cnt && j < n; j++) ((int16_t *)levels)[j] = (int16_t)tmp[j - i];
            i += cnt;
        }
    }
    return DQ_OK;
}

DQ_API dq_status dq_shared_decode(const dq_params *p, const void *sums, unsigned width, size_t n, const int8_t *exps,
                                  float weight, float *out) {
    size_t B, b0, i;
    uint32_t L;
    dq_status st = dq__shared_check(p, n, &B, &L);
    if (st != DQ_OK) return st;
    if (!sums || !exps || !out) return DQ_ERR_NULL;
    if (!dq__shared_width_ok(width)) return DQ_ERR_PARAM;
    for (b0 = 0; b0 < n; b0 += B) {
        size_t end = n - b0 < B ? n : b0 + B;
        int e = exps[b0 / B];
        float unit;
        if (e > DQ_SHARED_EXP_MAX || e < DQ_SHARED_EXP_MIN) return DQ_ERR_CORRUPT;
        unit = dq__pow2f(e);
        for (i = b0; i < end; i++) {
            int32_t s = width == 8u    ? ((const int8_t *)sums)[i]
                        : width == 16u ? ((const int16_t *)sums)[i]
                                       : ((const int32_t *)sums)[i];
            if (s > DQ_SHARED_MAX_SUM || s < -DQ_SHARED_MAX_SUM) return DQ_ERR_CORRUPT;
            out[i] = weight * ((float)s * unit);
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

