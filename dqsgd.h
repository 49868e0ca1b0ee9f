/* dqsgd.h - v0.2.0 - dynamic quantized SGD: gradient quantizers, wire format, error feedback
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
#define DQSGD_VERSION_MINOR 2
#define DQSGD_VERSION_PATCH 0
#define DQSGD_VERSION_NUMBER (DQSGD_VERSION_MAJOR * 10000 + DQSGD_VERSION_MINOR * 100 + DQSGD_VERSION_PATCH)
#define DQSGD_VERSION_STRING "0.2.0"
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
} dq_params;

/* A parsed, validated message header (doc/FORMAT.md). */
typedef struct dq_header {
    unsigned version, header_size, scheme, bits, coder, flags;
    dq_norm norm; /* DQ_NORM_L2, DQ_NORM_MAX or DQ_NORM_MEAN (1-bit nearest) */
    uint32_t bucket; /* as on the wire: 0 = whole vector */
    uint64_t seed, step;
    uint32_t stream;
    size_t count;    /* element count */
    size_t msg_size; /* bytes of the whole message: header + scales + payload (+ checksum) */
} dq_header;

#define DQ_FLAG_STOCHASTIC 0x0001u
#define DQ_FLAG_CHECKSUM 0x0002u /* a CRC32C of scales + payload follows the payload */
#define DQ_CODER_FIXED 0u

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
    if ((uint64_t)n > DQ_MAX_ELEMS) return DQ_ERR_TOO_LARGE;
    c->bits = bits;
    c->stochastic = p->rounding != DQ_ROUND_NEAREST;
    c->norm = p->norm == DQ_NORM_MAX ? DQ__NORM_WIRE_MAX : DQ__NORM_WIRE_L2;
    if (bits == 1 && !c->stochastic) c->norm = DQ__NORM_WIRE_MEAN; /* scaled sign */
    c->checksum = p->checksum;
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
    if (!framed && c.checksum) return DQ_ERR_PARAM;
    *size = dq__size(&c, n, framed, &ok);
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
    if (!framed && c.checksum) return DQ_ERR_PARAM;
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

DQ_API dq_status dq_encode(const dq_params *p, const float *x, size_t n, float *residual, void *dst, size_t dst_cap,
                           size_t *dst_len) {
    size_t size = 0;
    dq_status st;
    if (!dst_len) return DQ_ERR_NULL;
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
    if (h->scheme != DQ_SCHEME_QSGD || h->coder != DQ_CODER_FIXED || h->bits < 1 || h->bits > 16 ||
        in[9] > DQ__NORM_WIRE_MEAN || (h->flags & ~(DQ_FLAG_STOCHASTIC | DQ_FLAG_CHECKSUM)) != 0 ||
        (h->bucket % 8u) != 0 || count == 0)
        return DQ_ERR_CORRUPT;
    if (count > DQ_MAX_ELEMS || count > (uint64_t)SIZE_MAX) return DQ_ERR_TOO_LARGE;
    h->count = (size_t)count;
    memset(&p, 0, sizeof p);
    p.bits = h->bits;
    p.bucket = h->bucket ? h->bucket : DQ_BUCKET_WHOLE;
    p.checksum = (h->flags & DQ_FLAG_CHECKSUM) ? 1u : 0u;
    if (dq__cfg_make(&p, h->count, &c) != DQ_OK) return DQ_ERR_CORRUPT;
    h->msg_size = dq__size(&c, h->count, 1, &ok);
    return ok ? DQ_OK : DQ_ERR_TOO_LARGE;
}

/* Decode the elements [begin, end) of a body (size already checked) into out[0..end-begin). */
static inline dq_status dq__decode_body(const dq__cfg *c, const uint8_t *body, size_t n, size_t begin, size_t end,
                                        float w, int add, float *out) {
    const uint8_t *scales = body, *payload = body + 4u * c->nbuckets;
    float rowstep[DQ__ROWS], step = 0.0f;
    uint32_t codes[DQ__BLOCK];
    size_t bi, pos, bucket_end = begin, bi_end = (end - 1u) / c->bucket + 1u;
    for (bi = begin / c->bucket; bi < bi_end; bi++) { /* validate every scale before touching out */
        uint32_t u = dq__ld32(scales + 4u * bi);
        if (u > DQ__MAX_SCALE_BITS) return DQ_ERR_CORRUPT; /* negative, above 2^126, Inf or NaN */
    }
    bi = begin / c->bucket;
    if (end == n && n % DQ__BLOCK) { /* and the tail's padding bits */
        size_t full = n - n % DQ__BLOCK;
        if (!dq__unpack_tail(payload + (full / DQ__BLOCK) * 32u * c->bits, n - full, c->bits, codes))
            return DQ_ERR_CORRUPT;
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
        dq__k_decode_block(payload + (pos / DQ__BLOCK) * 32u * c->bits, c->bits, rowstep, w, add, out + (pos - begin));
    }
    if (pos < end) {
        size_t i = pos;
        dq__unpack_tail(payload + (pos / DQ__BLOCK) * 32u * c->bits, end - pos, c->bits, codes);
        while (i < end) {
            size_t b_end = (i / c->bucket + 1u) * c->bucket;
            size_t seg_end = b_end < end ? b_end : end;
            float st = dq__step(c->bits, dq__bitsf(dq__ld32(scales + 4u * (i / c->bucket))));
            dq__decode_codes(codes + (i - pos), seg_end - i, c->bits, st, w, add, out + (i - begin));
            i = seg_end;
        }
    }
    return DQ_OK;
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
    return dq__decode_body(&c, (const uint8_t *)src + DQ_HEADER_SIZE, h.count, 0, h.count, w, add, out);
}
static inline dq_status dq__decode_rng(const void *src, size_t src_len, size_t begin, size_t end, float w, int add,
                                       float *out) {
    dq_header h;
    dq__cfg c;
    dq_status st;
    if (!src || !out) return DQ_ERR_NULL;
    if ((st = dq_header_read(src, src_len, &h)) != DQ_OK) return st;
    if ((st = dq__msg_open(src, src_len, 0, &h, &c)) != DQ_OK) return st;
    if (!dq__range_ok(&c, h.count, begin, end)) return DQ_ERR_RANGE;
    return dq__decode_body(&c, (const uint8_t *)src + DQ_HEADER_SIZE, h.count, begin, end, w, add, out);
}

DQ_API dq_status dq_message_norm2(const void *src, size_t src_len, double *norm2) {
    dq_header h;
    dq_status st;
    size_t nb, i;
    double sum = 0.0;
    if (!src || !norm2) return DQ_ERR_NULL;
    if ((st = dq_header_read(src, src_len, &h)) != DQ_OK) return st;
    if (h.norm != DQ_NORM_L2) return DQ_ERR_PARAM;
    nb = h.bucket ? (h.count - 1u) / h.bucket + 1u : 1u;
    if (src_len < DQ_HEADER_SIZE + 4u * nb) return DQ_ERR_TRUNCATED;
    for (i = 0; i < nb; i++) {
        uint32_t u = dq__ld32((const uint8_t *)src + DQ_HEADER_SIZE + 4u * i);
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
    if (c.checksum) return DQ_ERR_PARAM;
    body = dq__size(&c, n, 0, &ok);
    if (!ok) return DQ_ERR_TOO_LARGE;
    if (src_len < body) return DQ_ERR_TRUNCATED;
    return dq__decode_body(&c, (const uint8_t *)src, n, 0, n, w, add, out);
}
DQ_API dq_status dq_decode_block(const dq_params *p, const void *src, size_t src_len, size_t n, float *out) {
    return dq__decode_blk(p, src, src_len, n, 1.0f, 0, out);
}
DQ_API dq_status dq_decode_add_block(const dq_params *p, const void *src, size_t src_len, size_t n, float weight,
                                     float *acc) {
    return dq__decode_blk(p, src, src_len, n, weight, 1, acc);
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
