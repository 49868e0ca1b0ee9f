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

