/* Checkpoints: a job stopped and resumed from saved error-feedback memory and scheduler state
 * sends bit-identical messages; damaged checkpoints are refused before anything is written. */
#include "../dqsgd.h"
#include "harness.h"
#include "internals.h"

#define D 3000u
#define T 60u

/* P2 (budget) re-plans its scale every step, which makes its widths depend on the spent bits;
 * a fixed scale makes them follow the norm ring. Both must survive a restart. */
static dq_sched_params sched_params(int fixed_scale) {
    dq_sched_params q;
    memset(&q, 0, sizeof q);
    q.mode = DQ_SCHED_DQSGD;
    q.steps = T;
    q.dim = D;
    q.alpha = 0.9;
    q.bits_min = 2;
    q.bits_max = 12;
    q.window = 3;
    q.norm_prior = 10.0;
    if (fixed_scale)
        q.scale = 0.05;
    else
        q.budget_bits = (double)T * dq_message_bits(D, 4, 0);
    return q;
}

/* A synthetic gradient for step t whose norm jumps around (so the norm ring matters). */
static void grad(float *g, unsigned t) {
    dq_t_rng r;
    size_t i;
    r.s = 1000u + t;
    for (i = 0; i < D; i++) g[i] = (float)(dq_t_gauss(&r) * (double)(1u + t * 5u % 11u));
}

/* Runs steps [from, T): schedule, encode with error feedback, update. Appends each message's
 * bytes to log (at *log_len) and stops early after `stop_after` steps (returns the step). */
static unsigned run(dq_sched *s, float *res, unsigned from, unsigned stop_after, uint8_t *log, size_t *log_len) {
    static float g[D];
    static uint8_t msg[DQ_ENCODE_BOUND(D, 16)];
    unsigned t;
    for (t = from; t < T && t - from < stop_after; t++) {
        unsigned bits = 0;
        size_t len = 0;
        double n2 = 0.0;
        dq_params p;
        CHECK(dq_sched_next(s, &bits) == DQ_OK);
        memset(&p, 0, sizeof p);
        p.bits = bits;
        p.seed = 9;
        p.step = t;
        grad(g, t);
        CHECK(dq_encode(&p, g, D, res, msg, sizeof msg, &len) == DQ_OK);
        CHECK(dq_message_norm2(msg, len, &n2) == DQ_OK);
        memcpy(log + *log_len, msg, len);
        *log_len += len;
        CHECK(dq_sched_update(s, sqrt(n2), 0.0, 8.0 * (double)len) == DQ_OK);
    }
    return t;
}

/* Runs q uninterrupted and stopped after `at` steps, saved, wiped, loaded and resumed: the
 * messages, residuals and states must be identical. Returns how often the width changed. */
static unsigned resume_at(const dq_sched_params *q, unsigned at) {
    static float res_a[D], res_b[D];
    static uint8_t log_a[T * DQ_ENCODE_BOUND(D, 16)], log_b[T * DQ_ENCODE_BOUND(D, 16)];
    static uint8_t ck_res[16 + 4 * D + 4], ck_sched[DQ_SCHED_SAVE_SIZE];
    dq_sched a, b, before;
    size_t la = 0, lb = 0, lr = 0, ls = 0;
    unsigned stop, widths = 0, prev = 0, t;
    memset(res_a, 0, sizeof res_a);
    memset(res_b, 0, sizeof res_b);
    CHECK(dq_sched_init(&a, q) == DQ_OK && dq_sched_init(&b, q) == DQ_OK);
    run(&a, res_a, 0, T, log_a, &la); /* uninterrupted */
    stop = run(&b, res_b, 0, at, log_b, &lb);
    CHECK(stop == at);
    CHECK(dq_residual_save_size(D) == sizeof ck_res);
    CHECK(dq_residual_save(res_b, D, ck_res, sizeof ck_res, &lr) == DQ_OK && lr == sizeof ck_res);
    CHECK(dq_sched_save(&b, ck_sched, sizeof ck_sched, &ls) == DQ_OK && ls == DQ_SCHED_SAVE_SIZE);
    /* the process dies: its state is gone */
    before = b;
    memset(res_b, 0xFF, sizeof res_b);
    memset(&b, 0xFF, sizeof b);
    CHECK(dq_residual_load(ck_res, lr, res_b, D) == DQ_OK);
    CHECKF(dq_sched_load(ck_sched, ls, &b) == DQ_OK, "saved after step %u (warm %u at %u bits, bits_max %u)", at,
           (unsigned)q->warm_steps, q->warm_bits, q->bits_max);
    CHECK(memcmp(&b.p, &before.p, sizeof b.p) == 0 && b.step == before.step && b.bits == before.bits);
    CHECK(b.c == before.c && b.spent_bits == before.spent_bits && b.loss0 == before.loss0 && b.loss == before.loss);
    CHECK(memcmp(b.norms, before.norms, sizeof b.norms) == 0 && b.n_norms == before.n_norms && b.head == before.head);
    run(&b, res_b, stop, T, log_b, &lb);
    CHECKF(la == lb && memcmp(log_a, log_b, la) == 0, "resumed run differs (%lu vs %lu bytes)", (unsigned long)la,
           (unsigned long)lb);
    CHECK(memcmp(res_a, res_b, sizeof res_a) == 0);
    CHECK(memcmp(&a.p, &b.p, sizeof a.p) == 0 && a.step == b.step && a.spent_bits == b.spent_bits && a.c == b.c);
    /* the run exercised the state: the width changed along the way */
    for (t = 0, la = 0; t < T; t++) {
        dq_header h;
        CHECK(dq_header_read(log_a + la, sizeof log_a - la, &h) == DQ_OK);
        widths += h.bits != prev;
        prev = h.bits;
        la += h.msg_size;
    }
    return widths;
}
static void test_resume_bit_identical(void) {
    dq_sched_params q = sched_params(0);
    unsigned widths = resume_at(&q, 23);
    CHECKF(widths >= 3, "the schedule changed width only %u times", widths);
    q = sched_params(1);
    widths = resume_at(&q, 23);
    CHECKF(widths >= 3, "the schedule changed width only %u times", widths);
}

/* A warm start wider than bits_max (the default warm width, 16, with any bits_max below it):
 * a checkpoint saved during the warm steps, or right after them before the next width is
 * chosen, loads and resumes bit-identically, in every mode that chooses widths itself. */
static void test_resume_warm_above_max(void) {
    static const dq_sched_mode modes[] = {DQ_SCHED_DQSGD, DQ_SCHED_FIXED, DQ_SCHED_DECREASING};
    unsigned m, at, scale;
    for (m = 0; m < sizeof modes / sizeof modes[0]; m++)
        for (scale = 0; scale < 2; scale++)
            for (at = 1; at <= 5; at++) {
                dq_sched_params q = sched_params((int)scale);
                q.mode = modes[m];
                q.warm_steps = 3;
                q.warm_bits = scale ? 0 : 14; /* 0: the default, 16; both above bits_max = 12 */
                if (modes[m] == DQ_SCHED_DQSGD && !scale) q.budget_bits += 3.0 * dq_message_bits(D, 16, 0);
                resume_at(&q, at);
            }
}

/* Flip every bit, cut at every length: never DQ_OK, never a write to the destination. */
static void test_damage(void) {
    float r[40], back[40];
    uint8_t ck[16 + 4 * 40 + 4], sc[DQ_SCHED_SAVE_SIZE];
    dq_sched s, t;
    dq_sched_params q = sched_params(0);
    size_t len = 0, slen = 0, i, k;
    int bit;
    for (i = 0; i < 40; i++) r[i] = (float)i * 0.25f - 3.0f;
    CHECK(dq_residual_save(r, 40, ck, sizeof ck, &len) == DQ_OK);
    for (i = 0; i < len; i++)
        for (bit = 0; bit < 8; bit++) {
            ck[i] ^= (uint8_t)(1u << bit);
            for (k = 0; k < 40; k++) back[k] = 7.0f;
            CHECKF(dq_residual_load(ck, len, back, 40) != DQ_OK, "byte %lu bit %d", (unsigned long)i, bit);
            for (k = 0; k < 40; k++) CHECK(back[k] == 7.0f);
            ck[i] ^= (uint8_t)(1u << bit);
        }
    for (i = 0; i < len; i++) CHECK(dq_residual_load(ck, i, back, 40) == DQ_ERR_TRUNCATED);
    CHECK(dq_residual_load(ck, len, back, 39) == DQ_ERR_SIZE_MISMATCH);
    CHECK(dq_residual_load(ck, len, back, 40) == DQ_OK && memcmp(back, r, sizeof r) == 0);

    CHECK(dq_sched_init(&s, &q) == DQ_OK);
    CHECK(dq_sched_save(&s, sc, sizeof sc, &slen) == DQ_OK);
    for (i = 0; i < slen; i++)
        for (bit = 0; bit < 8; bit++) {
            sc[i] ^= (uint8_t)(1u << bit);
            memset(&t, 0x5A, sizeof t);
            CHECKF(dq_sched_load(sc, slen, &t) != DQ_OK, "sched byte %lu bit %d", (unsigned long)i, bit);
            CHECK(((const uint8_t *)&t)[0] == 0x5A);
            sc[i] ^= (uint8_t)(1u << bit);
        }
    for (i = 0; i < slen; i++) CHECK(dq_sched_load(sc, i, &t) == DQ_ERR_TRUNCATED);
    /* kinds do not mix */
    CHECK(dq_sched_load(ck, len, &t) == DQ_ERR_PARAM);
    CHECK(dq_residual_load(sc, slen, back, 40) == DQ_ERR_PARAM);
    CHECK(dq_residual_save(r, 40, ck, len - 1u, &len) == DQ_ERR_DST_TOO_SMALL);
    CHECK(dq_sched_save(&s, sc, DQ_SCHED_SAVE_SIZE - 1u, &slen) == DQ_ERR_DST_TOO_SMALL);
    CHECK(dq_residual_save(r, 0, ck, sizeof ck, &len) == DQ_ERR_EMPTY);
    CHECK(dq_residual_save(NULL, 40, ck, sizeof ck, &len) == DQ_ERR_NULL);
    CHECK(dq_sched_load(NULL, slen, &t) == DQ_ERR_NULL);
}

/* Well-formed checkpoints (valid CRC) holding values no run can produce are refused. */
static void reseal(uint8_t *c, size_t len) { dq_t_st32(c + len - 4u, dqt_crc32c(c, len - 4u)); }
static void test_invalid_values(void) {
    uint8_t ck[16 + 4 * 8 + 4], sc[DQ_SCHED_SAVE_SIZE], bad[DQ_SCHED_SAVE_SIZE];
    float r[8] = {0}, back[8];
    dq_sched s, t;
    dq_sched_params q = sched_params(0);
    size_t len = 0, slen = 0, k;
    /* byte offsets (doc/FORMAT.md "Checkpoints"): the body starts at 16; in it bits_max is at
     * 36, window 44, bits 108, c 112, norms 128, n_norms 2176, head 2180 */
    static const struct {
        size_t off, size;
        uint64_t value;
        const char *what;
    } cases[] = {{16 + 0, 4, 9, "mode"},           {16 + 4, 8, 0, "steps"},
                 {16 + 36, 4, 17, "bits_max"},     {16 + 44, 4, 300, "window"},
                 {16 + 112, 8, 0x7FF8000000000000u, "c NaN"},
                 {16 + 128, 8, 0xBFF0000000000000u, "norm -1"},
                 {16 + 2176, 4, 4, "n_norms > window"}, {16 + 2180, 4, 3, "head >= window"},
                 {16 + 108, 4, 13, "bits > bits_max"}, {16 + 108, 4, 1, "bits < bits_min"}, {6, 2, 1, "reserved"},
                 {8, 8, 2199, "count"}};
    r[3] = (float)INFINITY;
    CHECK(dq_residual_save(r, 8, ck, sizeof ck, &len) == DQ_OK);
    CHECK(dq_residual_load(ck, len, back, 8) == DQ_ERR_CORRUPT);
    CHECK(dq_sched_init(&s, &q) == DQ_OK);
    CHECK(dq_sched_save(&s, sc, sizeof sc, &slen) == DQ_OK);
    CHECK(dq_sched_load(sc, slen, &t) == DQ_OK);
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t j;
        memcpy(bad, sc, slen);
        for (j = 0; j < cases[k].size; j++) bad[cases[k].off + j] = (uint8_t)(cases[k].value >> (8u * j));
        reseal(bad, slen);
        CHECKF(dq_sched_load(bad, slen, &t) == DQ_ERR_CORRUPT, "%s", cases[k].what);
    }
    /* the warm width is valid only while the warm start is in force (step <= warm_steps) */
    q.warm_steps = 3;
    q.warm_bits = 16;
    q.budget_bits += 3.0 * dq_message_bits(D, 16, 0);
    CHECK(dq_sched_init(&s, &q) == DQ_OK);
    s.bits = 16;
    for (k = 0; k < 6; k++) {
        s.step = k;
        CHECK(dq_sched_save(&s, bad, sizeof bad, &slen) == DQ_OK);
        CHECKF(dq_sched_load(bad, slen, &t) == (k <= 3 ? DQ_OK : DQ_ERR_CORRUPT), "warm width at step %u", (unsigned)k);
    }
    q = sched_params(0);
    /* the layout the offsets above assume */
    CHECK(dq_t_ld32(sc + 16 + 44) == 3u && dq_t_ld32(sc + 16 + 36) == 12u && dq_t_ld32(sc + 16 + 2176) == 0u);
}

/* A warm start round-trips; a checkpoint as library 0.8 wrote it (a 2200-byte body, no warm
 * start) still loads, to the same state as today's layout of it. */
static void test_warm_and_08(void) {
    uint8_t sc[DQ_SCHED_SAVE_SIZE], old[DQ_SCHED_SAVE_SIZE], again[DQ_SCHED_SAVE_SIZE];
    dq_sched s, t;
    dq_sched_params q = sched_params(0);
    size_t slen = 0, alen = 0, olen;
    unsigned b = 0;
    q.warm_steps = 3;
    q.warm_bits = 10;
    CHECK(dq_sched_init(&s, &q) == DQ_OK && dq_sched_next(&s, &b) == DQ_OK && b == 10u);
    CHECK(dq_sched_update(&s, 1.0, 0.5, 1000.0) == DQ_OK);
    CHECK(dq_sched_save(&s, sc, sizeof sc, &slen) == DQ_OK && slen == DQ_SCHED_SAVE_SIZE);
    CHECK(dq_t_ld64(sc + 8) == 2212u && dq_t_ld64(sc + 16 + 2200) == 3u && dq_t_ld32(sc + 16 + 2208) == 10u);
    CHECK(dq_sched_load(sc, slen, &t) == DQ_OK && t.p.warm_steps == 3u && t.p.warm_bits == 10u && t.step == 1u);
    /* 0.8's bytes of a state without a warm start */
    q = sched_params(0);
    CHECK(dq_sched_init(&s, &q) == DQ_OK && dq_sched_save(&s, sc, sizeof sc, &slen) == DQ_OK);
    olen = 16u + 2200u + 4u;
    memcpy(old, sc, 16u + 2200u);
    dq_t_st64(old + 8, 2200u);
    dq_t_st32(old + olen - 4u, dqt_crc32c(old, olen - 4u));
    CHECK(dq_sched_load(old, olen, &t) == DQ_OK);
    CHECK(dq_sched_save(&t, again, sizeof again, &alen) == DQ_OK && alen == slen && memcmp(again, sc, slen) == 0);
    CHECK(dq_sched_load(old, olen - 1u, &t) == DQ_ERR_TRUNCATED);
    dq_t_st64(old + 8, 2204u); /* neither layout */
    dq_t_st32(old + olen - 4u, dqt_crc32c(old, olen - 4u));
    CHECK(dq_sched_load(old, olen, &t) == DQ_ERR_CORRUPT);
}

int main(void) {
    RUN(test_resume_bit_identical);
    RUN(test_resume_warm_above_max);
    RUN(test_damage);
    RUN(test_invalid_values);
    RUN(test_warm_and_08);
    return dq_t_finish();
}
