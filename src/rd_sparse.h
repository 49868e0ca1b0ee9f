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
