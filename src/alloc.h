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

