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

