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

