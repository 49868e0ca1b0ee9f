/* tests/python/binding_ref.c - the C library's own results for tests/python/test_binding.py.
 *
 * Usage: binding_ref DIR. Reads the float32 vectors the test wrote (DIR/x.f32: the small
 * vector, DIR/r.f32: its residual, DIR/xb.f32 and DIR/rb.f32: the job vector and residual,
 * DIR/c.f32: the conversion vector, with special values), makes the calls the binding wraps
 * (typed encode and decoders, ranges, jobs, sizes, conversions, dq_verify) with the parameter
 * sets of PSETS below, and writes each result to DIR/<name>. The test makes the same calls
 * through the binding and compares the bytes. A status is written as an int32; a call that
 * fails where the test expects data writes its status instead, so the test reports it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dqsgd.h"

static const char *g_dir;

static void path_of(char *buf, size_t cap, const char *name) {
    if ((size_t)snprintf(buf, cap, "%s/%s", g_dir, name) >= cap) {
        fprintf(stderr, "binding_ref: path too long: %s\n", name);
        exit(2);
    }
}

static void put(const char *name, const void *data, size_t len) {
    char path[512];
    FILE *f;
    path_of(path, sizeof path, name);
    f = fopen(path, "wb");
    if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f) != 0) {
        fprintf(stderr, "binding_ref: cannot write %s\n", path);
        exit(2);
    }
}

static void put_i64(const char *name, int64_t v) { put(name, &v, sizeof v); }

static void put_status(const char *name, dq_status st) {
    int32_t v = (int32_t)st;
    put(name, &v, sizeof v);
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "binding_ref: out of memory\n");
        exit(2);
    }
    return p;
}

/* A float32 vector from DIR/name; *n its element count. */
static float *read_f32(const char *name, size_t *n) {
    char path[512];
    FILE *f;
    long len;
    float *v;
    path_of(path, sizeof path, name);
    f = fopen(path, "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "binding_ref: cannot read %s\n", path);
        exit(2);
    }
    *n = (size_t)len / sizeof(float);
    v = (float *)xmalloc(*n * sizeof(float));
    if (fread(v, sizeof(float), *n, f) != *n) {
        fprintf(stderr, "binding_ref: short read %s\n", path);
        exit(2);
    }
    fclose(f);
    return v;
}

static const dq_dtype DTYPE[3] = {DQ_F32, DQ_F16, DQ_BF16};
static const char *const DTYPE_NAME[3] = {"float32", "float16", "bfloat16"};

/* src (float32) converted to dtype t, in a new buffer. */
static void *typed_copy(const float *src, size_t n, dq_dtype t) {
    void *v = xmalloc(n * dq_dtype_size(t));
    if (dq_convert(DQ_F32, src, n, t, v) != DQ_OK) {
        fprintf(stderr, "binding_ref: dq_convert failed\n");
        exit(2);
    }
    return v;
}

/* The parameter sets; tests/python/test_binding.py has the same table (PSETS). */
typedef struct pset {
    const char *name;
    unsigned bits, scheme, rounding, norm, checksum, coder;
    uint32_t bucket;
    float alpha;
    size_t k;
} pset;
/* Zero fields are the library's defaults, as the binding's keyword arguments left out. */
static const pset PSETS[] = {
    {"q4", 4, 0, 0, 0, 0, 0, 0, 0.0f, 0},
    {"q2ef", 2, 0, DQ_ROUND_NEAREST, DQ_NORM_MAX, 0, DQ_CODER_RANS, 0, 0.0f, 0},
    {"q8elias", 8, 0, 0, 0, 1, DQ_CODER_ELIAS, 0, 0.0f, 0},
    {"q3fixed", 3, 0, 0, DQ_NORM_MAX, 0, DQ_CODER_FIXED_ONLY, 1024, 0.0f, 0},
    {"nuq5", 5, DQ_SCHEME_NUQSGD, 0, 0, 0, DQ_CODER_AUTO, 256, 0.0f, 0},
    {"topk", 0, DQ_SCHEME_TOPK, 0, 0, 0, 0, 0, 0.0f, 1001},
    {"trunc", 4, DQ_SCHEME_TRUNC, 0, 0, 0, 0, 0, 1.5f, 0},
};
#define NPSETS (sizeof PSETS / sizeof PSETS[0])
/* The jobs: these parameter sets, cut into JOB_PARTS parts. */
static const char *const JOB_PSETS[] = {"q4", "q2ef", "q8elias", "q3fixed"};
#define JOB_PARTS 3u

static dq_params params_of(const pset *s) {
    dq_params p;
    memset(&p, 0, sizeof p);
    p.bits = s->bits;
    p.scheme = (dq_scheme)s->scheme;
    p.rounding = (dq_rounding)s->rounding;
    p.norm = (dq_norm)s->norm;
    p.checksum = s->checksum;
    p.coder = s->coder;
    p.bucket = s->bucket;
    p.alpha = s->alpha;
    p.k = s->k;
    p.seed = 7;
    p.step = 3;
    p.stream = 1;
    return p;
}

static const pset *pset_named(const char *name) {
    size_t i;
    for (i = 0; i < NPSETS; i++)
        if (strcmp(PSETS[i].name, name) == 0) return &PSETS[i];
    fprintf(stderr, "binding_ref: no parameter set %s\n", name);
    exit(2);
}

/* encode: every input dtype with no residual or one of every dtype; the message, the residual. */
static void typed_encodes(const float *x, const float *r, size_t n) {
    size_t i, xt, rt, cap, len;
    char name[128];
    for (i = 0; i < NPSETS; i++) {
        dq_params p = params_of(&PSETS[i]);
        uint8_t *dst;
        if (dq_encode_capacity(&p, n, &cap) != DQ_OK) {
            fprintf(stderr, "binding_ref: dq_encode_capacity failed for %s\n", PSETS[i].name);
            exit(2);
        }
        dst = (uint8_t *)xmalloc(cap);
        for (xt = 0; xt < 3; xt++) {
            void *xv = typed_copy(x, n, DTYPE[xt]);
            for (rt = 0; rt < 4; rt++) { /* rt 0: no residual; rt k: dtype k - 1 */
                void *rv = rt ? typed_copy(r, n, DTYPE[rt - 1]) : NULL;
                dq_status st = dq_encode_typed(&p, DTYPE[xt], xv, n, rt ? DTYPE[rt - 1] : DQ_F32, rv, dst, cap, &len);
                const char *rname = rt ? DTYPE_NAME[rt - 1] : "none";
                snprintf(name, sizeof name, "enc_%s_%s_%s", PSETS[i].name, DTYPE_NAME[xt], rname);
                if (st != DQ_OK) {
                    put_status(name, st);
                } else {
                    put(name, dst, len);
                    if (rv) {
                        snprintf(name, sizeof name, "res_%s_%s_%s", PSETS[i].name, DTYPE_NAME[xt], rname);
                        put(name, rv, n * dq_dtype_size(DTYPE[rt - 1]));
                    }
                }
                free(rv);
            }
            free(xv);
        }
        free(dst);
    }
}

/* The float32 message of a parameter set (no residual) in a new buffer. */
static uint8_t *message_of(const pset *s, const float *x, size_t n, size_t *len) {
    dq_params p = params_of(s);
    size_t cap;
    uint8_t *dst;
    if (dq_encode_capacity(&p, n, &cap) != DQ_OK) exit(2);
    dst = (uint8_t *)xmalloc(cap);
    if (dq_encode(&p, x, n, NULL, dst, cap, len) != DQ_OK) {
        fprintf(stderr, "binding_ref: dq_encode failed for %s\n", s->name);
        exit(2);
    }
    return dst;
}

/* decode and decode_add into every dtype; the ranges (data after an int32 status). */
static void typed_decodes(const float *x, size_t n) {
    size_t i, t, len, a, j;
    char name[128];
    for (i = 0; i < NPSETS; i++) {
        dq_params p = params_of(&PSETS[i]);
        uint8_t *msg = message_of(&PSETS[i], x, n, &len);
        for (t = 0; t < 3; t++) {
            size_t es = dq_dtype_size(DTYPE[t]);
            void *out = xmalloc(n * es), *acc = typed_copy(x, n, DTYPE[t]);
            dq_status st = dq_decode_typed(msg, len, DTYPE[t], out, n);
            snprintf(name, sizeof name, "dec_%s_%s", PSETS[i].name, DTYPE_NAME[t]);
            if (st != DQ_OK) put_status(name, st); else put(name, out, n * es);
            st = dq_decode_add_typed(msg, len, 0.375f, DTYPE[t], acc, n);
            snprintf(name, sizeof name, "add_%s_%s", PSETS[i].name, DTYPE_NAME[t]);
            if (st != DQ_OK) put_status(name, st); else put(name, acc, n * es);
            free(out);
            free(acc);
        }
        a = dq_range_align(&p, n);
        snprintf(name, sizeof name, "align_%s", PSETS[i].name);
        put_i64(name, (int64_t)a);
        if (a) {
            /* [a, min(3a, n)) and the last range [a * floor((n - 1) / a), n) */
            size_t begins[2], ends[2];
            begins[0] = a < n ? a : 0;
            ends[0] = begins[0] + 2 * a < n ? begins[0] + 2 * a : n;
            begins[1] = (n - 1) / a * a;
            ends[1] = n;
            for (j = 0; j < 2; j++) {
                size_t m = ends[j] - begins[j];
                float *buf = (float *)xmalloc(sizeof(int32_t) + m * sizeof(float));
                int32_t st;
                st = (int32_t)dq_decode_range(msg, len, begins[j], ends[j], buf + 1);
                memcpy(buf, &st, sizeof st);
                snprintf(name, sizeof name, "rng_%s_%u", PSETS[i].name, (unsigned)j);
                put(name, buf, st == DQ_OK ? sizeof(int32_t) + m * sizeof(float) : sizeof(int32_t));
                memcpy(buf + 1, x + begins[j], m * sizeof(float));
                st = (int32_t)dq_decode_add_range(msg, len, begins[j], ends[j], -1.25f, buf + 1);
                memcpy(buf, &st, sizeof st);
                snprintf(name, sizeof name, "rngadd_%s_%u", PSETS[i].name, (unsigned)j);
                put(name, buf, st == DQ_OK ? sizeof(int32_t) + m * sizeof(float) : sizeof(int32_t));
                free(buf);
            }
        }
        free(msg);
    }
}

/* One job per JOB_PSETS entry, without and with a residual, parts run in order. */
static void jobs(const float *x, const float *r0, size_t n) {
    size_t i, j, k, cap, work_cap, len = 0;
    char name[128];
    for (i = 0; i < sizeof JOB_PSETS / sizeof JOB_PSETS[0]; i++) {
        dq_params p = params_of(pset_named(JOB_PSETS[i]));
        for (k = 0; k < 2; k++) {
            float *r = NULL;
            uint8_t *dst, *work;
            dq_job job;
            dq_status st;
            if (dq_encode_capacity(&p, n, &cap) != DQ_OK || dq_job_work_size(&p, n, JOB_PARTS, &work_cap) != DQ_OK)
                exit(2);
            dst = (uint8_t *)xmalloc(cap);
            work = (uint8_t *)xmalloc(work_cap);
            if (k) {
                r = (float *)xmalloc(n * sizeof(float));
                memcpy(r, r0, n * sizeof(float));
            }
            st = dq_job_init(&job, &p, n, JOB_PARTS, dst, cap, work, work_cap);
            for (j = 0; st == DQ_OK && j < job.parts; j++) st = dq_job_quantize(&job, j, x, r);
            if (st == DQ_OK) st = dq_job_plan(&job);
            for (j = 0; st == DQ_OK && j < job.parts; j++) st = dq_job_code(&job, j);
            if (st == DQ_OK) st = dq_job_finish(&job, &len);
            snprintf(name, sizeof name, "job_%s_%s", JOB_PSETS[i], k ? "ef" : "none");
            if (st != DQ_OK) put_status(name, st); else put(name, dst, len);
            if (k && st == DQ_OK) {
                snprintf(name, sizeof name, "jobres_%s", JOB_PSETS[i]);
                put(name, r, n * sizeof(float));
            }
            if (!k) {
                int64_t bounds[2 * JOB_PARTS + 1];
                size_t b, e;
                bounds[0] = (int64_t)job.parts;
                for (j = 0; j < job.parts; j++) {
                    if (dq_job_range(&job, j, &b, &e) != DQ_OK) exit(2);
                    bounds[1 + 2 * j] = (int64_t)b;
                    bounds[2 + 2 * j] = (int64_t)e;
                }
                snprintf(name, sizeof name, "jobparts_%s", JOB_PSETS[i]);
                put(name, bounds, (1 + 2 * job.parts) * sizeof(int64_t));
                snprintf(name, sizeof name, "work_%s", JOB_PSETS[i]);
                put_i64(name, (int64_t)work_cap);
            }
            free(r);
            free(work);
            free(dst);
        }
    }
}

/* Sizes, conversions and dq_verify. */
static void misc(const float *x, size_t n, const float *c, size_t cn) {
    size_t i, f, t, cap;
    unsigned bits;
    char name[128];
    for (i = 0; i < NPSETS; i++) {
        dq_params p = params_of(&PSETS[i]);
        dq_status st = dq_encode_capacity(&p, n, &cap);
        snprintf(name, sizeof name, "cap_%s", PSETS[i].name);
        put_i64(name, st == DQ_OK ? (int64_t)cap : (int64_t)st);
    }
    for (bits = 0; bits <= 17; bits++) {
        snprintf(name, sizeof name, "bound_%u", bits);
        put_i64(name, (int64_t)dq_encode_bound(n, bits));
        snprintf(name, sizeof name, "boundc_%u", bits);
        put_i64(name, (int64_t)dq_encode_bound_coded(n, bits));
    }
    for (f = 0; f < 3; f++) {
        void *src = typed_copy(c, cn, DTYPE[f]);
        for (t = 0; t < 3; t++) {
            void *dst = xmalloc(cn * dq_dtype_size(DTYPE[t]));
            if (dq_convert(DTYPE[f], src, cn, DTYPE[t], dst) != DQ_OK) exit(2);
            snprintf(name, sizeof name, "cvt_%s_%s", DTYPE_NAME[f], DTYPE_NAME[t]);
            put(name, dst, cn * dq_dtype_size(DTYPE[t]));
            free(dst);
        }
        free(src);
    }
    {
        size_t len;
        uint8_t *msg = message_of(pset_named("q8elias"), x, n, &len); /* carries the payload checksum */
        put_status("verify_ok", dq_verify(msg, len));
        msg[len - 10] ^= 0x10; /* a payload byte */
        put_status("verify_bad", dq_verify(msg, len));
        free(msg);
    }
}

int main(int argc, char **argv) {
    size_t n, rn, nb, rbn, cn;
    float *x, *r, *xb, *rb, *c;
    if (argc != 2) {
        fprintf(stderr, "usage: binding_ref DIR\n");
        return 2;
    }
    g_dir = argv[1];
    x = read_f32("x.f32", &n);
    r = read_f32("r.f32", &rn);
    xb = read_f32("xb.f32", &nb);
    rb = read_f32("rb.f32", &rbn);
    c = read_f32("c.f32", &cn);
    if (rn != n || rbn != nb) {
        fprintf(stderr, "binding_ref: residual lengths differ from the vectors'\n");
        return 2;
    }
    typed_encodes(x, r, n);
    typed_decodes(x, n);
    jobs(xb, rb, nb);
    misc(x, n, c, cn);
    free(x);
    free(r);
    free(xb);
    free(rb);
    free(c);
    return 0;
}
