/* Aggregation primitives (doc/MATHS.md 14, doc/DISTRIBUTED.md): allgatherv displacements, bucket-aligned chunks,
 * re-quantization of a reduced chunk with the reducer's error feedback, and the shared-scale
 * integer path (exponents, accumulator width, encode, decode). The checks are exact where the
 * arithmetic is (integer sums against float sums, widths against the worst case) and use bounds
 * derived from the rounding rules elsewhere. All seeds are fixed. */
#include "../dqsgd.h"
#include "harness.h"
#include "internals.h"

static void gen_gauss(float *x, size_t n, double sd, unsigned long long seed) {
    dq_t_rng r;
    size_t i;
    r.s = seed;
    for (i = 0; i < n; i++) x[i] = (float)(sd * dq_t_gauss(&r));
}
static dq_params shared_params(unsigned bits, uint32_t bucket, uint64_t step, uint32_t stream) {
    dq_params p;
    memset(&p, 0, sizeof p);
    p.bits = bits;
    p.bucket = bucket;
    p.seed = 77;
    p.step = step;
    p.stream = stream;
    return p;
}
static double pow2(int e) { return ldexp(1.0, e); }

/* ---- helpers for variable-size messages */
static void t_offsets(void) {
    size_t sizes[4] = {10, 0, 7, 5}, off[5];
    CHECK(dq_offsets(sizes, 4, 100, off) == DQ_OK);
    CHECK(off[0] == 0 && off[1] == 10 && off[2] == 10 && off[3] == 17 && off[4] == 22);
    CHECK(dq_offsets(sizes, 4, 22, off) == DQ_OK && off[4] == 22); /* the limit itself is allowed */
    CHECK(dq_offsets(sizes, 4, 21, off) == DQ_ERR_OVERFLOW);
    CHECK(dq_offsets(NULL, 0, 0, off) == DQ_OK && off[0] == 0);
    CHECK(dq_offsets(NULL, 1, 0, off) == DQ_ERR_NULL);
    sizes[0] = (size_t)-1; /* a wrapping sum is an overflow, not a small total */
    CHECK(dq_offsets(sizes, 4, (size_t)-1, off) == DQ_ERR_OVERFLOW);
}

static void t_chunk(void) {
    static const size_t ns[] = {1, 8, 511, 512, 513, 4096, 100000};
    static const uint32_t buckets[] = {0, 8, 64, DQ_BUCKET_WHOLE};
    size_t a, b, parts;
    for (a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (b = 0; b < sizeof buckets / sizeof buckets[0]; b++)
            for (parts = 1; parts <= 9; parts++) {
                dq_params p = shared_params(4, buckets[b], 0, 0);
                size_t B = buckets[b] == DQ_BUCKET_WHOLE ? ns[a] : buckets[b] ? buckets[b] : 512u;
                size_t nb = (ns[a] + B - 1) / B, j, prev = 0, lo = (size_t)-1, hi = 0;
                for (j = 0; j < parts; j++) {
                    size_t s = 0, e = 0, k;
                    CHECK(dq_chunk(&p, ns[a], parts, j, &s, &e) == DQ_OK);
                    CHECKF(s == prev && s <= e && e <= ns[a], "n %zu B %zu parts %zu j %zu: [%zu,%zu)", ns[a], B,
                           parts, j, s, e);
                    CHECK((s % B == 0 || s == ns[a]) && (e % B == 0 || e == ns[a]));
                    k = (e - s + B - 1) / B; /* buckets in this chunk */
                    if (k < lo) lo = k;
                    if (k > hi) hi = k;
                    prev = e;
                }
                CHECK(prev == ns[a]);                          /* the chunks cover the vector */
                CHECK(hi - lo <= 1 && hi == (nb + parts - 1) / parts); /* as even as buckets allow */
            }
    {
        dq_params p = shared_params(4, 0, 0, 0);
        size_t s, e;
        CHECK(dq_chunk(&p, 100, 3, 3, &s, &e) == DQ_ERR_PARAM);
        CHECK(dq_chunk(&p, 100, 0, 0, &s, &e) == DQ_ERR_PARAM);
        CHECK(dq_chunk(&p, 0, 3, 0, &s, &e) == DQ_ERR_EMPTY);
        p.bucket = 12;
        CHECK(dq_chunk(&p, 100, 3, 0, &s, &e) == DQ_ERR_PARAM);
    }
}

/* ---- re-quantization */
#define RQ_N 1536u
#define RQ_M 3u
static void encode_workers(uint64_t step, uint8_t msg[RQ_M][4096], size_t len[RQ_M], const void *ptrs[RQ_M]) {
    float x[RQ_N];
    unsigned k;
    for (k = 0; k < RQ_M; k++) {
        dq_params p = shared_params(4, 256, step, k);
        gen_gauss(x, RQ_N, 1.0, 1000u * step + k + 1u);
        CHECK(dq_encode(&p, x, RQ_N, NULL, msg[k], sizeof msg[k], &len[k]) == DQ_OK);
        ptrs[k] = msg[k];
    }
}

static void t_requantize_matches_calls(void) {
    static uint8_t msg[RQ_M][4096], out1[4096], out2[4096];
    static float acc1[RQ_N], acc2[RQ_N], r1[RQ_N], r2[RQ_N];
    const void *ptrs[RQ_M];
    size_t len[RQ_M], l1 = 0, l2 = 0, i;
    unsigned k;
    dq_params q = shared_params(2, 512, 5, 9);
    encode_workers(5, msg, len, ptrs);
    for (i = 0; i < RQ_N; i++) r1[i] = r2[i] = (float)i * 1e-4f;
    CHECK(dq_requantize(&q, ptrs, len, RQ_M, 1.0f / 3.0f, acc1, RQ_N, r1, out1, sizeof out1, &l1) == DQ_OK);
    for (i = 0; i < RQ_N; i++) acc2[i] = 0.0f;
    for (k = 0; k < RQ_M; k++) CHECK(dq_decode_add(msg[k], len[k], 1.0f / 3.0f, acc2, RQ_N) == DQ_OK);
    CHECK(dq_encode(&q, acc2, RQ_N, r2, out2, sizeof out2, &l2) == DQ_OK);
    CHECK(l1 == l2 && !memcmp(out1, out2, l1));
    CHECK(!memcmp(acc1, acc2, sizeof acc1) && !memcmp(r1, r2, sizeof r1));
    /* errors: a message of another length, a NULL message, a zero count */
    CHECK(dq_requantize(&q, ptrs, len, RQ_M, 1.0f, acc1, RQ_N - 8, NULL, out1, sizeof out1, &l1) ==
          DQ_ERR_SIZE_MISMATCH);
    ptrs[1] = NULL;
    CHECK(dq_requantize(&q, ptrs, len, RQ_M, 1.0f, acc1, RQ_N, NULL, out1, sizeof out1, &l1) == DQ_ERR_NULL);
    CHECK(dq_requantize(&q, ptrs, len, RQ_M, 1.0f, acc1, 0, NULL, out1, sizeof out1, &l1) == DQ_ERR_EMPTY);
    memcpy(r2, r1, sizeof r1); /* a failed encode leaves the reducer's residual alone */
    ptrs[1] = msg[1];
    CHECK(dq_requantize(&q, ptrs, len, RQ_M, 1.0f, acc1, RQ_N, r1, out1, 10, &l1) == DQ_ERR_DST_TOO_SMALL);
    CHECK(!memcmp(r1, r2, sizeof r1));
    /* no messages: the sum is zero */
    CHECK(dq_requantize(&q, NULL, NULL, 0, 1.0f, acc1, RQ_N, NULL, out1, sizeof out1, &l1) == DQ_OK);
    CHECK(dq_decode(out1, l1, acc2, RQ_N) == DQ_OK);
    for (i = 0; i < RQ_N; i++) CHECK(acc2[i] == 0.0f);
}

/* Over T steps the reducer sends q_t = Q(v_t), v_t = y_t + r_(t-1), keeping r_t = v_t - q_t.
 * In exact arithmetic sum_t q_t = sum_t y_t - r_T, so the running sum's error is the last
 * residual, bounded for every T. Float rounding of the two updates adds at most
 * 2^-24 (|v_t| + |r_t|) per step and element. Without the residual the errors of independent
 * roundings add up and grow like sqrt(T). The reducer's quantizer must be a contraction
 * (E|Q(v) - v|^2 < |v|^2, here max-norm scaling at 3 bits); with L2 scaling at 2 bits (variance
 * factor ~ sqrt(512)) the residual grows without bound. */
static void t_requantize_error_feedback(void) {
    enum { T = 200 };
    static uint8_t msg[RQ_M][4096], out[4096];
    static float acc[RQ_N], dec[RQ_N], r[RQ_N], v[RQ_N];
    static double sum_q[RQ_N], sum_y[RQ_N], slack[RQ_N], sum_q0[RQ_N];
    const void *ptrs[RQ_M];
    size_t len[RQ_M], l = 0, i;
    uint64_t t;
    double e_ef = 0.0, e_last = 0.0, e_plain = 0.0, worst = 0.0;
    for (i = 0; i < RQ_N; i++) r[i] = 0.0f;
    for (t = 0; t < T; t++) {
        dq_params q = shared_params(3, 512, t, 100);
        q.norm = DQ_NORM_MAX; /* a contraction: E|Q(v) - v|^2 < |v|^2, which error feedback needs */
        encode_workers(t, msg, len, ptrs);
        for (i = 0; i < RQ_N; i++) v[i] = r[i]; /* v_t is formed inside; keep r_(t-1) to bound it */
        CHECK(dq_requantize(&q, ptrs, len, RQ_M, 1.0f / 3.0f, acc, RQ_N, r, out, sizeof out, &l) == DQ_OK);
        CHECK(dq_decode(out, l, dec, RQ_N) == DQ_OK);
        for (i = 0; i < RQ_N; i++) {
            double vt = (double)(acc[i] + v[i]);
            sum_q[i] += (double)dec[i];
            sum_y[i] += (double)acc[i];
            slack[i] += ldexp(fabs(vt) + fabs((double)r[i]), -24);
        }
        CHECK(dq_requantize(&q, ptrs, len, RQ_M, 1.0f / 3.0f, acc, RQ_N, NULL, out, sizeof out, &l) == DQ_OK);
        CHECK(dq_decode(out, l, dec, RQ_N) == DQ_OK);
        for (i = 0; i < RQ_N; i++) sum_q0[i] += (double)dec[i];
    }
    for (i = 0; i < RQ_N; i++) {
        double err = sum_q[i] - sum_y[i], gap = fabs(err + (double)r[i]);
        CHECKF(gap <= slack[i], "element %zu: |E_T + r_T| = %g > %g", i, gap, slack[i]);
        if (gap / (slack[i] > 0 ? slack[i] : 1) > worst) worst = gap / (slack[i] > 0 ? slack[i] : 1);
        e_ef += err * err;
        e_last += (double)r[i] * (double)r[i];
        e_plain += (sum_q0[i] - sum_y[i]) * (sum_q0[i] - sum_y[i]);
    }
    if (dq_t_verbose())
        printf("  requantize EF, T=%d: |sum error| %.4g, |r_T| %.4g, without EF %.4g (worst gap/slack %.3f)\n", T,
               sqrt(e_ef), sqrt(e_last), sqrt(e_plain), worst);
    CHECK(sqrt(e_plain) > 3.0 * sqrt(e_ef));
}

/* ---- shared scale */
static void t_shared_width(void) {
    unsigned bits;
    CHECK(dq_shared_width(4, 18) == 8 && dq_shared_width(4, 19) == 16); /* 7 * 18 = 126 <= 127 */
    CHECK(dq_shared_width(8, 1) == 8 && dq_shared_width(8, 2) == 16);
    CHECK(dq_shared_width(8, 258) == 16 && dq_shared_width(8, 259) == 32); /* 127 * 258 = 32766 */
    CHECK(dq_shared_width(16, 512) == 32 && dq_shared_width(16, 513) == 0); /* 32767 * 512 < 2^24 */
    CHECK(dq_shared_width(1, 4) == 0 && dq_shared_width(17, 4) == 0 && dq_shared_width(4, 0) == 0);
    /* For every width and worker count around each boundary: the worst case (every worker at
     * +L, or every one at -L) summed in the accumulator type, in any order, equals the exact sum. */
    for (bits = 2; bits <= 16; bits++) {
        int64_t L = ((int64_t)1 << (bits - 1)) - 1;
        uint64_t M;
        for (M = 1; M <= 70000; M = M < 300 ? M + 1 : M * 2 + 1) {
            unsigned w = dq_shared_width(bits, M);
            int64_t top = (int64_t)M * L, tmax;
            if (top > ((int64_t)1 << 24)) {
                CHECK(w == 0);
                continue;
            }
            tmax = w == 8 ? INT8_MAX : w == 16 ? INT16_MAX : INT32_MAX;
            CHECKF(w != 0 && top <= tmax, "bits %u M %llu width %u", bits, (unsigned long long)M, w);
            /* minimal: the next narrower type would overflow */
            if (w == 16) CHECK(top > INT8_MAX);
            if (w == 32) CHECK(top > INT16_MAX);
        }
    }
}

static void t_shared_exponents(void) {
    enum { N = 4096 };
    static float x[N], r[N];
    int8_t e[N / 64];
    size_t b, i;
    unsigned bits;
    gen_gauss(x, N, 1.0, 3);
    for (i = 0; i < N; i++) x[i] *= (float)pow2((int)(i / 64) - 40); /* buckets across 64 binades */
    for (i = 0; i < 64; i++) x[i] = 0.0f;                                /* an all-zero bucket */
    x[64] = 1e-44f;                                                      /* a subnormal maximum */
    gen_gauss(r, N, 1e-3, 4);
    for (bits = 2; bits <= 16; bits += 7) {
        dq_params p = shared_params(bits, 64, 0, 0);
        double L = (double)((1u << (bits - 1)) - 1);
        CHECK(dq_shared_buckets(&p, N) == N / 64);
        CHECK(dq_shared_exponents(&p, x, N, r, e) == DQ_OK);
        for (b = 0; b < N / 64; b++) {
            double m = 0.0;
            for (i = b * 64; i < b * 64 + 64; i++) {
                double a = fabs((double)(x[i] + r[i]));
                if (a > m) m = a;
            }
            CHECKF(m <= L * pow2(e[b]), "bucket %zu", b);
            CHECKF(e[b] == DQ_SHARED_EXP_MIN || m > L * pow2(e[b] - 1), "bucket %zu: e %d not minimal", b, e[b]);
        }
    }
    {
        dq_params p = shared_params(4, 64, 0, 0);
        CHECK(dq_shared_exponents(&p, x, 64, NULL, e) == DQ_OK && e[0] == DQ_SHARED_EXP_MIN);
        x[3] = 3e38f; /* needs 2^e >= 3e38 / 7: more than 2^103 */
        CHECK(dq_shared_exponents(&p, x, 64, NULL, e) == DQ_ERR_OVERFLOW);
        x[3] = NAN;
        CHECK(dq_shared_exponents(&p, x, 64, NULL, e) == DQ_ERR_NONFINITE);
        x[3] = 0.0f;
    }
}

/* M workers, combined exponents, integer sums: the sum times the unit equals the float sum of
 * the individually decoded vectors exactly, forwards and backwards. */
static void t_shared_exact_sum(void) {
    enum { N = 3000, M = 5 };
    static float x[M][N], dec[M][N], fwd[N], bwd[N], isum[N];
    static int16_t lv[M][N], sum[N];
    int8_t e[M][8], ec[8];
    size_t i, b;
    unsigned k, w;
    dq_params p = shared_params(8, 512, 3, 0);
    size_t nb = dq_shared_buckets(&p, N);
    CHECK(nb == 6);
    w = dq_shared_width(8, M);
    CHECK(w == 16);
    for (k = 0; k < M; k++) {
        gen_gauss(x[k], N, 0.01 * (k + 1), 50u + k);
        CHECK(dq_shared_exponents(&p, x[k], N, NULL, e[k]) == DQ_OK);
    }
    for (b = 0; b < nb; b++) {
        ec[b] = e[0][b];
        for (k = 1; k < M; k++)
            if (e[k][b] > ec[b]) ec[b] = e[k][b];
    }
    for (i = 0; i < N; i++) sum[i] = 0;
    for (k = 0; k < M; k++) {
        p.stream = k;
        CHECK(dq_shared_encode(&p, x[k], N, NULL, ec, w, lv[k]) == DQ_OK);
        CHECK(dq_shared_decode(&p, lv[k], w, N, ec, 1.0f, dec[k]) == DQ_OK);
        for (i = 0; i < N; i++) sum[i] = (int16_t)(sum[i] + lv[k][i]);
    }
    CHECK(dq_shared_decode(&p, sum, w, N, ec, 1.0f, isum) == DQ_OK);
    for (i = 0; i < N; i++) {
        fwd[i] = bwd[i] = 0.0f;
        for (k = 0; k < M; k++) fwd[i] += dec[k][i];
        for (k = M; k-- > 0;) bwd[i] += dec[k][i];
    }
    CHECK(!memcmp(fwd, isum, sizeof isum) && !memcmp(bwd, isum, sizeof isum));
    /* with a weight, one rounding of the exact sum */
    CHECK(dq_shared_decode(&p, sum, w, N, ec, 0.2f, fwd) == DQ_OK);
    for (i = 0; i < N; i++) CHECK(fwd[i] == 0.2f * isum[i]);
    /* the worst case: every worker at +L on the largest unit sums without wrapping */
    for (i = 0; i < N; i++) x[0][i] = (float)(127.0 * pow2(ec[i / 512]));
    for (i = 0; i < N; i++) sum[i] = 0;
    for (k = 0; k < M; k++) {
        p.stream = k;
        CHECK(dq_shared_encode(&p, x[0], N, NULL, ec, w, lv[k]) == DQ_OK);
        for (i = 0; i < N; i++) sum[i] = (int16_t)(sum[i] + lv[k][i]);
    }
    for (i = 0; i < N; i++) CHECK(sum[i] == 127 * M);
}

/* Stochastic rounding is unbiased: E[level] = t = |v| / unit, Var = f (1 - f) <= 1/4. Over K
 * independent steps the mean level of each test value lies within 5 standard errors of t. */
static void t_shared_unbiased(void) {
    enum { N = 64, K = 4000 };
    float x[N];
    int8_t lv[N], e[1];
    double s1[N], s2[N];
    size_t i;
    uint64_t step;
    dq_params p = shared_params(3, 64, 0, 2); /* L = 3 */
    for (i = 0; i < N; i++) x[i] = (float)(((double)i / (N - 1)) * 3.0 - 1.5) * 0.25f; /* |x| <= 3 * 2^-3 */
    x[N - 1] = 0.375f;
    CHECK(dq_shared_exponents(&p, x, N, NULL, e) == DQ_OK && e[0] == -3);
    for (i = 0; i < N; i++) s1[i] = s2[i] = 0.0;
    for (step = 0; step < K; step++) {
        p.step = step;
        CHECK(dq_shared_encode(&p, x, N, NULL, e, 8, lv) == DQ_OK);
        for (i = 0; i < N; i++) {
            s1[i] += lv[i];
            s2[i] += (double)lv[i] * lv[i];
        }
    }
    for (i = 0; i < N; i++) {
        double t = (double)x[i] * 8.0, f = fabs(t) - floor(fabs(t)), mean = s1[i] / K;
        double var = s2[i] / K - mean * mean, se = sqrt(f * (1 - f) / K);
        CHECKF(fabs(mean - t) <= 5.0 * se + 1e-12, "x %g: mean level %g, t %g, se %g", (double)x[i], mean, t, se);
        CHECKF(var <= 0.25 + 5.0 * 0.25 / sqrt((double)K), "x %g: variance %g", (double)x[i], var);
    }
    /* nearest: the error is at most half a unit, and zero at the grid points */
    p.rounding = DQ_ROUND_NEAREST;
    CHECK(dq_shared_encode(&p, x, N, NULL, e, 8, lv) == DQ_OK);
    for (i = 0; i < N; i++) CHECK(fabs((double)lv[i] - (double)x[i] * 8.0) <= 0.5);
}

static void t_shared_residual(void) {
    enum { N = 1000 };
    static float x[N], r[N], r0[N], dec[N];
    static int32_t lv[N];
    int8_t e[2];
    size_t i;
    dq_params p = shared_params(5, 512, 1, 1);
    gen_gauss(x, N, 2.0, 8);
    gen_gauss(r, N, 0.1, 9);
    memcpy(r0, r, sizeof r);
    CHECK(dq_shared_exponents(&p, x, N, r, e) == DQ_OK);
    CHECK(dq_shared_encode(&p, x, N, r, e, 32, lv) == DQ_OK);
    CHECK(dq_shared_decode(&p, lv, 32, N, e, 1.0f, dec) == DQ_OK);
    for (i = 0; i < N; i++) {
        float v = x[i] + r0[i];
        CHECK(r[i] == v - dec[i]);
        CHECK(fabs((double)r[i]) < pow2(e[i / 512])); /* within one unit */
    }
}

static void t_shared_errors(void) {
    enum { N = 128 };
    float x[N], r[N], out[N];
    int8_t e[2], lv[N];
    int32_t big[N];
    size_t i;
    dq_params p = shared_params(4, 64, 0, 0);
    gen_gauss(x, N, 1.0, 10);
    for (i = 0; i < N; i++) r[i] = 0.5f;
    CHECK(dq_shared_exponents(&p, x, N, NULL, e) == DQ_OK);
    /* a unit smaller than this worker's own: refused before anything is written */
    memset(lv, 0x55, sizeof lv);
    e[1] = (int8_t)(e[1] - 1);
    CHECK(dq_shared_encode(&p, x, N, r, e, 8, lv) == DQ_ERR_PARAM);
    for (i = 0; i < N; i++) CHECK(lv[i] == 0x55 && r[i] == 0.5f);
    e[1] = (int8_t)(e[1] + 1);
    CHECK(dq_shared_encode(&p, x, N, NULL, e, 12, lv) == DQ_ERR_PARAM); /* no such width */
    p.bits = 9;
    CHECK(dq_shared_encode(&p, x, N, NULL, e, 8, lv) == DQ_ERR_PARAM); /* L = 255 > int8 */
    p.bits = 1;
    CHECK(dq_shared_exponents(&p, x, N, NULL, e) == DQ_ERR_BITS);
    p.bits = 4;
    p.norm = DQ_NORM_MEAN;
    CHECK(dq_shared_exponents(&p, x, N, NULL, e) == DQ_ERR_PARAM);
    p.norm = DQ_NORM_MAX;
    p.scheme = DQ_SCHEME_NATURAL;
    CHECK(dq_shared_exponents(&p, x, N, NULL, e) == DQ_ERR_PARAM);
    p.scheme = DQ_SCHEME_QSGD;
    p.coder = DQ_CODER_RANS;
    CHECK(dq_shared_exponents(&p, x, N, NULL, e) == DQ_ERR_PARAM);
    p.coder = 0;
    x[70] = INFINITY;
    CHECK(dq_shared_encode(&p, x, N, NULL, e, 8, lv) == DQ_ERR_NONFINITE);
    x[70] = 0.0f;
    CHECK(dq_shared_encode(&p, x, 0, NULL, e, 8, lv) == DQ_ERR_EMPTY);
    CHECK(dq_shared_encode(&p, NULL, N, NULL, e, 8, lv) == DQ_ERR_NULL);
    /* decoder: sums no valid worker count produces, and exponents out of range */
    for (i = 0; i < N; i++) big[i] = 0;
    big[5] = DQ_SHARED_MAX_SUM + 1;
    CHECK(dq_shared_decode(&p, big, 32, N, e, 1.0f, out) == DQ_ERR_CORRUPT);
    big[5] = -DQ_SHARED_MAX_SUM;
    CHECK(dq_shared_decode(&p, big, 32, N, e, 1.0f, out) == DQ_OK);
    e[0] = DQ_SHARED_EXP_MAX + 1;
    CHECK(dq_shared_decode(&p, big, 32, N, e, 1.0f, out) == DQ_ERR_CORRUPT);
    e[0] = -128;
    CHECK(dq_shared_decode(&p, big, 32, N, e, 1.0f, out) == DQ_ERR_CORRUPT);
    /* the largest sum on the largest unit stays finite */
    e[0] = e[1] = DQ_SHARED_EXP_MAX;
    big[5] = DQ_SHARED_MAX_SUM;
    CHECK(dq_shared_decode(&p, big, 32, N, e, 1.0f, out) == DQ_OK && isfinite(out[5]) && out[5] == 0x1p127f);
}

/* Every shared-scale kernel of this build equals the scalar twin bit for bit: levels and
 * residuals, stochastic and nearest, with and without a residual, every count 0..67 (the
 * tails), edge values (grid points, half points, -0, subnormals, the top level). */
static void t_shared_kernels(void) {
    enum { N = 67 };
    static const float inv_of[3] = {8.0f, 0x1p127f, 0x1p-20f};
    float x[N], r0[N], ra[N], rb[N];
    int32_t la[N], lb[N];
    unsigned kk, trial, cnt, mode;
    dq_t_rng g;
    g.s = 99;
    for (kk = 0; DQT_SHQ_K[kk].fn; kk++)
        for (trial = 0; trial < 300; trial++) {
            float inv = inv_of[trial % 3], unit = 1.0f / inv;
            double L = 127.0;
            size_t i0 = trial % 5 == 4 ? 0xFFFFFF00u : (size_t)dq_t_next(&g) % 100000u, i;
            uint32_t k0 = (uint32_t)dq_t_next(&g), k1h = (uint32_t)dq_t_next(&g);
            for (i = 0; i < N; i++) {
                double u = dq_t_unif(&g) * 2.0 - 1.0;
                switch (dq_t_next(&g) % 6u) {
                case 0: x[i] = (float)(floor(u * L) * (double)unit); break;         /* a grid point */
                case 1: x[i] = (float)((floor(u * L) + 0.5) * (double)unit); break; /* a half point */
                case 2: x[i] = dq_t_next(&g) & 1u ? -0.0f : 0.0f; break;
                case 3: x[i] = (float)(u * 1e-40); break; /* subnormal */
                case 4: x[i] = (float)(u < 0 ? -L : L) * unit; break;
                default: x[i] = (float)(u * (L - 1.0)) * unit;
                }
                r0[i] = (float)(0.4 * dq_t_unif(&g)) * unit * (dq_t_next(&g) & 1u ? 1.0f : -1.0f);
            }
            for (mode = 0; mode < 4; mode++)
                for (cnt = 0; cnt <= N; cnt += 1u + (trial % 7u)) {
                    int stoch = (int)(mode & 1u), with_r = (int)(mode >> 1);
                    memcpy(ra, r0, sizeof ra);
                    memcpy(rb, r0, sizeof rb);
                    memset(la, 0x11, sizeof la);
                    memset(lb, 0x11, sizeof lb);
                    dqt_scalar(shared_q)(x, with_r ? ra : NULL, cnt, i0, inv, unit, k0, k1h, stoch, la);
                    DQT_SHQ_K[kk].fn(x, with_r ? rb : NULL, cnt, i0, inv, unit, k0, k1h, stoch, lb);
                    CHECKF(!memcmp(la, lb, sizeof la) && !memcmp(ra, rb, sizeof ra), "%s trial %u mode %u cnt %u",
                           DQT_SHQ_K[kk].name, trial, mode, cnt);
                }
        }
}

int main(void) {
    RUN(t_offsets);
    RUN(t_chunk);
    RUN(t_requantize_matches_calls);
    RUN(t_requantize_error_feedback);
    RUN(t_shared_width);
    RUN(t_shared_exponents);
    RUN(t_shared_exact_sum);
    RUN(t_shared_unbiased);
    RUN(t_shared_residual);
    RUN(t_shared_errors);
    RUN(t_shared_kernels);
    return dq_t_finish();
}
