/* test_rans_spec.c - coder 3 (rANS in chunks, 32 interleaved states) read by a decoder of its
 * own, written only from doc/FORMAT.md (sections 3, 4, 8, 17.1, the table of 17.3, and 17.6),
 * with none of the library's internals: the library only makes the messages (dq_encode with
 * DQ_CODER_RANS or DQ_CODER_AUTO), re-codes them to the fixed layout (dq_recode) and reads
 * headers (dq_header_read); dq_decode is checked to reject what the spec decoder rejects.
 *
 * The spec decoder parses the header, the u64 payload length at 48, the scales, the bitmap and
 * LEB128 frequency table, then the chunks (u32 length, 32 u32 states, u16 words), decodes each
 * chunk with a plain scalar loop over the 32 states, checks every end condition (each final
 * state 2^16, every word used, the chunks fill the payload), and turns the symbols back into
 * codes: b in {1, 2, 4, 8}: the symbols are the fixed payload's bytes in payload order (compared
 * byte for byte, padding zero); b in {3, 5, 6, 7}: g codes per symbol, the first in the low bits.
 * The codes must be those of dq_recode(msg, DQ_CODER_FIXED), read per FORMAT.md section 8, and
 * the chunks must be byte for byte what the encoding paragraph of 17.6 writes for the decoded
 * symbols and the message's table (spec_encode_chunk, which also builds damaged streams).
 *
 * Covered: widths 1..8 x buckets 8, 512, whole x checksum off/on; counts around the chunk
 * boundary (b = 4: n = 131071, 131072, 131073, 262149 (three chunks); b = 8: 65536, 65537;
 * b = 3: 131073; b = 1: 524289), tails that are not whole blocks, messages DQ_CODER_AUTO sent
 * as coder 3; and damaged messages that both this decoder (for the reason expected) and
 * dq_decode must reject: a chunk length changed or past the payload, the last word dropped, a
 * word left over, an odd word area, bytes after the last chunk, a stored state changed or below
 * 2^16, a lane that ends at 2^16 + 1 with every word read, a frequency sum of 4095 or 4097, a
 * frequency in non-canonical LEB128, a payload length above the bound, a bit past element
 * n - 1, a header bit. DQ_ERR_CORRUPT, or with the checksum on DQ_ERR_CHECKSUM unless the
 * payload CRC32C (FORMAT.md 3.4, bytes 48 to the end of the payload) is recomputed, which it
 * then is so that the library reaches the payload check. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dqsgd.h"
#include "harness.h"

/* ---------------------------------------------------------------- bytes (FORMAT.md 1) */
static uint32_t ld16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t ld32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t ld64(const uint8_t *p) { return (uint64_t)ld32(p) | (uint64_t)ld32(p + 4) << 32; }
static void st32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static void st64(uint8_t *p, uint64_t v) {
    st32(p, (uint32_t)v);
    st32(p + 4, (uint32_t)(v >> 32));
}

/* ---------------------------------------------------------------- the spec decoder */
/* Why a message is rejected (0: accepted). */
enum {
    SP_OK = 0,
    SP_HEADER,      /* magic, version, header size, header CRC, coder, bits, count */
    SP_BOUND,       /* the payload length L above the coder's bound (17.1) */
    SP_SIZE,        /* the message size (17.1) is not the buffer's */
    SP_CHECKSUM,    /* the payload CRC32C (3.4) */
    SP_TABLE,       /* bitmap / LEB128 / sum of the frequencies */
    SP_CHUNK_LEN,   /* a chunk length missing or running past the payload */
    SP_CHUNK_SHAPE, /* a chunk shorter than its states, or an odd word area */
    SP_STATE_LOW,   /* a stored state below 2^16 */
    SP_WORD_PAST,   /* a word needed after the chunk's last one */
    SP_FINAL_STATE, /* a state other than 2^16 after the chunk's last symbol */
    SP_WORDS_LEFT,  /* words left over at the end of a chunk */
    SP_TRAILING,    /* bytes after the last chunk */
    SP_PADDING      /* codes or bits past element n - 1 not zero */
};

typedef struct spec_msg {
    unsigned scheme, bits, flags;
    uint64_t n, nb, ntab, L;
    size_t scales_at, pay_at, size; /* offsets of the scales and the payload; the message size */
    unsigned g, w, A;               /* codes per symbol, symbol width, alphabet (17.3) */
    uint64_t m, chunks;             /* symbols and chunks (17.6) */
    uint32_t f[256], c[256];        /* frequencies and cumulative counts */
    uint8_t *sym;                   /* the m decoded symbols */
    uint32_t *codes;                /* the n codes */
} spec_msg;

static void spec_free(spec_msg *s) {
    free(s->sym);
    free(s->codes);
    s->sym = NULL;
    s->codes = NULL;
}

/* Code i of a fixed payload P of n codes of b bits (FORMAT.md 8). */
static uint32_t fixed_code(const uint8_t *P, uint64_t n, unsigned b, uint64_t i) {
    uint64_t F = n / 256u;
    uint32_t code = 0;
    unsigned e;
    if (i < 256u * F) { /* block k, lane L = m mod 8, row r = m div 8; bit p of S_L in W[L][p/32] */
        uint64_t k = i / 256u, mm = i % 256u, lane = mm % 8u, r = mm / 8u;
        const uint8_t *blk = P + 32u * b * k;
        for (e = 0; e < b; e++) {
            uint64_t p = r * b + e, j = p / 32u;
            code |= (ld32(blk + 4u * (8u * j + lane)) >> (p % 32u) & 1u) << e;
        }
    } else { /* the tail: a plain LSB-first bit stream */
        const uint8_t *tail = P + 32u * b * F;
        uint64_t t = i - 256u * F;
        for (e = 0; e < b; e++) {
            uint64_t p = t * b + e;
            code |= (uint32_t)(tail[p / 8u] >> (p % 8u) & 1u) << e;
        }
    }
    return code;
}

/* One chunk of mi symbols from stream st[0..len) into sym[0..mi): FORMAT.md 17.6, "Decoding". */
static int spec_chunk(const spec_msg *s, const uint16_t *slot_sym, const uint8_t *st, uint64_t len, uint8_t *sym,
                      uint64_t mi) {
    uint32_t x[32];
    uint64_t at = 128, j;
    unsigned k;
    if (len < 128u || (len - 128u) % 2u) return SP_CHUNK_SHAPE;
    for (k = 0; k < 32u; k++) {
        x[k] = ld32(st + 4u * k);
        if (x[k] < 65536u) return SP_STATE_LOW;
    }
    for (j = 0; j < mi; j++) {
        uint32_t *xk = &x[j % 32u], slot = *xk & 4095u, sy = slot_sym[slot];
        sym[j] = (uint8_t)sy;
        *xk = s->f[sy] * (*xk >> 12) + slot - s->c[sy];
        if (*xk < 65536u) {
            if (len - at < 2u) return SP_WORD_PAST;
            *xk = *xk << 16 | ld16(st + at);
            at += 2;
        }
    }
    for (k = 0; k < 32u; k++)
        if (x[k] != 65536u) return SP_FINAL_STATE;
    return at == len ? SP_OK : SP_WORDS_LEFT;
}

/* Parse and decode a coder-3 message msg[0..len) into s (codes in s->codes). */
static int spec_decode3(const uint8_t *msg, size_t len, spec_msg *s) {
    uint64_t B, at, pos, i, bound, ci;
    const uint8_t *pay;
    uint16_t slot_sym[4096];
    uint32_t sum = 0, smax;
    unsigned k;
    memset(s, 0, sizeof *s);
    if (len < 56u || memcmp(msg, "DQSG", 4) != 0 || msg[4] != 1u || msg[5] != 48u) return SP_HEADER;
    if (ld32(msg + 44) != dq_t_crc32c(msg, 44)) return SP_HEADER;
    s->scheme = msg[6];
    s->bits = msg[7];
    s->flags = ld16(msg + 10);
    s->n = ld64(msg + 16);
    B = ld32(msg + 12);
    if (msg[8] != 3u || s->bits < 1u || s->bits > 8u || s->n == 0 || s->n > ((uint64_t)1 << 40) || B % 8u)
        return SP_HEADER;
    if (B == 0) B = s->n;
    s->nb = (s->n + B - 1u) / B;
    smax = s->bits >= 2u ? (1u << (s->bits - 1u)) - 1u : 1u;
    s->ntab = s->scheme == 10u ? smax : s->scheme == 5u ? s->nb : 0u; /* sections 19.4, 22 */
    s->L = ld64(msg + 48);
    s->g = 8u / s->bits;
    s->w = s->g * s->bits;
    s->A = 1u << s->w;
    s->m = (s->n + s->g - 1u) / s->g;
    s->chunks = (s->m + 65535u) / 65536u;
    bound = s->A / 8u + 2u * s->A + s->chunks * (4u + 128u) + 2u * s->m; /* 17.1, 17.6 */
    s->scales_at = 56;
    s->pay_at = 56u + 4u * (size_t)(s->nb + s->ntab);
    if (s->L > bound) return SP_BOUND;
    s->size = s->pay_at + (size_t)s->L + ((s->flags & 2u) ? 4u : 0u);
    if (s->size != len) return SP_SIZE;
    if ((s->flags & 2u) && ld32(msg + s->pay_at + s->L) != dq_t_crc32c(msg + 48, s->pay_at + (size_t)s->L - 48u))
        return SP_CHECKSUM;
    pay = msg + s->pay_at;
    /* the table (17.3): bitmap, then f_s - 1 in LEB128 for each set bit, in increasing s */
    at = s->A / 8u;
    if (s->L < at) return SP_TABLE;
    for (k = 0; k < s->A; k++) {
        uint32_t v;
        s->c[k] = sum;
        s->f[k] = 0;
        if (!(pay[k / 8u] >> (k % 8u) & 1u)) continue;
        if (at >= s->L) return SP_TABLE;
        v = pay[at++];
        if (v & 0x80u) {
            if (at >= s->L || pay[at] < 1u || pay[at] > 31u) return SP_TABLE; /* canonical, at most 4095 */
            v = (v & 0x7Fu) | (uint32_t)pay[at++] << 7;
        }
        s->f[k] = v + 1u;
        sum += s->f[k];
    }
    if (sum != 4096u) return SP_TABLE;
    for (k = 0; k < s->A; k++) { /* slot -> the symbol with c_s <= slot < c_s + f_s */
        uint32_t t;
        for (t = s->c[k]; t < s->c[k] + s->f[k]; t++) slot_sym[t] = (uint16_t)k;
    }
    /* the chunks, in order; they fill the payload exactly */
    s->sym = (uint8_t *)xmalloc((size_t)s->m);
    pos = at;
    for (ci = 0; ci < s->chunks; ci++) {
        uint64_t lo = ci * 65536u, hi = lo + 65536u < s->m ? lo + 65536u : s->m, li;
        int r;
        if (s->L - pos < 4u) return SP_CHUNK_LEN;
        li = ld32(pay + pos);
        pos += 4;
        if (li > s->L - pos) return SP_CHUNK_LEN;
        r = spec_chunk(s, slot_sym, pay + pos, li, s->sym + lo, hi - lo);
        if (r) return r;
        pos += li;
    }
    if (pos != s->L) return SP_TRAILING;
    /* symbols back into codes */
    s->codes = (uint32_t *)xmalloc(4u * (size_t)s->n);
    if (8u % s->bits == 0) { /* the fixed payload's bytes: padding bits zero, codes per section 8 */
        for (i = s->n * s->bits; i < 8u * s->m; i++)
            if (s->sym[i / 8u] >> (i % 8u) & 1u) return SP_PADDING;
        for (i = 0; i < s->n; i++) s->codes[i] = fixed_code(s->sym, s->n, s->bits, i);
    } else { /* g codes per symbol, the first in the low bits; codes past n - 1 zero */
        for (i = 0; i < s->g * s->m; i++) {
            uint32_t code = (uint32_t)(s->sym[i / s->g] >> (s->bits * (i % s->g))) & ((1u << s->bits) - 1u);
            if (i < s->n)
                s->codes[i] = code;
            else if (code)
                return SP_PADDING;
        }
    }
    return SP_OK;
}

/* ---------------------------------------------------------------- the spec encoder
 * FORMAT.md 17.6, "Encoding": states start at 2^16; symbols j = mi - 1 down to 0 on state
 * j mod 32: if X >= f 2^20, emit the word X & 0xFFFF and X >>= 16; then
 * X = (X div f) 4096 + (X mod f) + c. The last word emitted is the first in the stream; the
 * stream is the 32 final states, then the words. Writes it to out (room: 128 + 2 mi bytes),
 * returns its length. */
static unsigned g_bump_lane = 32u; /* damage: a lane below 32 starts at 2^16 + 1 instead */
static size_t spec_encode_chunk(const spec_msg *s, const uint8_t *sym, uint64_t mi, uint8_t *out) {
    uint32_t x[32];
    uint16_t *words = (uint16_t *)xmalloc(2u * (size_t)mi);
    size_t nw = 0, i;
    uint64_t j;
    unsigned k;
    for (k = 0; k < 32u; k++) x[k] = k == g_bump_lane ? 65537u : 65536u;
    for (j = mi; j-- > 0;) {
        uint32_t *xk = &x[j % 32u], f = s->f[sym[j]];
        if ((uint64_t)*xk >= (uint64_t)f << 20) { /* never for f = 4096: X < 2^32 */
            words[nw++] = (uint16_t)(*xk & 0xFFFFu);
            *xk >>= 16;
        }
        *xk = (*xk / f) * 4096u + *xk % f + s->c[sym[j]];
    }
    for (k = 0; k < 32u; k++) st32(out + 4u * k, x[k]);
    for (i = 0; i < nw; i++) { /* last emitted first */
        out[128u + 2u * i] = (uint8_t)words[nw - 1u - i];
        out[129u + 2u * i] = (uint8_t)(words[nw - 1u - i] >> 8);
    }
    free(words);
    return 128u + 2u * nw;
}

/* A message like msg (parsed into s, same header, scales and table) whose chunks are sym[0..m)
 * coded by the spec encoder; payload length and (with the checksum) CRC recomputed. */
static uint8_t *spec_rebuild(const uint8_t *msg, const spec_msg *s, const uint8_t *sym, size_t *nlen) {
    size_t table_end = s->pay_at + s->A / 8u, cap, pos;
    uint8_t *d;
    uint64_t ci;
    unsigned k;
    for (k = 0; k < s->A; k++)
        if (s->f[k]) table_end += s->f[k] - 1u >= 128u ? 2u : 1u;
    cap = table_end + (size_t)s->chunks * 132u + 2u * (size_t)s->m + 4u;
    d = (uint8_t *)xmalloc(cap);
    memcpy(d, msg, table_end);
    pos = table_end;
    for (ci = 0; ci < s->chunks; ci++) {
        uint64_t lo = ci * 65536u, hi = lo + 65536u < s->m ? lo + 65536u : s->m;
        size_t li = spec_encode_chunk(s, sym + lo, hi - lo, d + pos + 4u);
        st32(d + pos, (uint32_t)li);
        pos += 4u + li;
    }
    st64(d + 48, (uint64_t)(pos - s->pay_at));
    if (s->flags & 2u) {
        st32(d + pos, dq_t_crc32c(d + 48, pos - 48u));
        pos += 4u;
    }
    *nlen = pos;
    return d;
}

/* ---------------------------------------------------------------- messages */
/* n values: a fraction `zeros` (per mille) of +0.0, the rest Gaussian. */
static float *make_input(size_t n, unsigned zeros, unsigned long long seed) {
    float *x = (float *)xmalloc(4u * n);
    dq_t_rng r;
    size_t i;
    r.s = seed;
    for (i = 0; i < n; i++) x[i] = dq_t_next(&r) % 1000u < zeros ? 0.0f : (float)dq_t_gauss(&r);
    return x;
}

typedef struct msgbuf {
    uint8_t *b;
    size_t len;
} msgbuf;

static msgbuf encode(const float *x, size_t n, unsigned bits, uint32_t bucket, int nearest, unsigned checksum,
                     unsigned coder, uint64_t seed) {
    dq_params p;
    msgbuf m;
    size_t cap = dq_encode_bound_coded(n, bits);
    dq_status st;
    memset(&p, 0, sizeof p);
    p.scheme = DQ_SCHEME_QSGD;
    p.bits = bits;
    p.bucket = bucket;
    p.rounding = nearest ? DQ_ROUND_NEAREST : DQ_ROUND_STOCHASTIC;
    p.norm = DQ_NORM_L2;
    p.seed = seed;
    p.step = 7;
    p.stream = 3;
    p.checksum = checksum;
    p.coder = coder;
    m.b = (uint8_t *)xmalloc(cap);
    m.len = 0;
    st = dq_encode(&p, x, n, NULL, m.b, cap, &m.len);
    CHECKF(st == DQ_OK, "dq_encode: %s", dq_strerror(st));
    if (st != DQ_OK) m.len = 0;
    return m;
}

/* The spec decoder's reading of msg agrees with dq_header_read and with the fixed re-coding:
 * the same header fields, scales (and tables) and codes; for b in {1, 2, 4, 8} the symbols are
 * the fixed payload's bytes. Returns 1 when it checked a coder-3 message. */
static unsigned g_checked; /* coder-3 messages read and compared with the fixed re-coding */
static int check_against_fixed(const char *what, const uint8_t *msg, size_t len) {
    spec_msg s;
    dq_header h;
    uint8_t *fx;
    size_t cap, flen = 0, i;
    int r = spec_decode3(msg, len, &s);
    dq_status st;
    CHECKF(r == SP_OK, "%s: the spec decoder rejects the library's message (reason %d)", what, r);
    if (r != SP_OK) {
        spec_free(&s);
        return 0;
    }
    st = dq_header_read(msg, len, &h);
    CHECKF(st == DQ_OK && h.coder == 3u && h.bits == s.bits && h.count == s.n && h.msg_size == len &&
               h.scheme == s.scheme && h.flags == s.flags,
           "%s: dq_header_read: %s", what, dq_strerror(st));
    { /* the chunks are what the spec's encoding writes for these symbols and this table */
        size_t rlen = 0;
        uint8_t *re = spec_rebuild(msg, &s, s.sym, &rlen);
        for (i = 0; i < len && i < rlen; i++)
            if (re[i] != msg[i]) break;
        CHECKF(rlen == len && i == len, "%s: the spec encoder writes other chunks (%lu bytes, %lu; first difference at %lu)",
               what, (unsigned long)rlen, (unsigned long)len, (unsigned long)i);
        free(re);
    }
    cap = 48u + 4u * (size_t)(s.nb + s.ntab) + (size_t)((s.n * s.bits + 7u) / 8u) + 4u;
    fx = (uint8_t *)xmalloc(cap);
    st = dq_recode(msg, len, DQ_CODER_FIXED, fx, cap, &flen);
    CHECKF(st == DQ_OK && fx[8] == DQ_CODER_FIXED, "%s: dq_recode to fixed: %s", what, dq_strerror(st));
    if (st == DQ_OK) {
        const uint8_t *P = fx + 48u + 4u * (s.nb + s.ntab);
        size_t psize = (size_t)((s.n * s.bits + 7u) / 8u);
        CHECKF(flen == 48u + 4u * (size_t)(s.nb + s.ntab) + psize + ((s.flags & 2u) ? 4u : 0u),
               "%s: fixed size %lu", what, (unsigned long)flen);
        CHECKF(memcmp(fx, msg, 8) == 0 && memcmp(fx + 9, msg + 9, 35) == 0, "%s: header fields differ", what);
        CHECKF(memcmp(fx + 48, msg + s.scales_at, 4u * (size_t)(s.nb + s.ntab)) == 0, "%s: scales differ", what);
        if (8u % s.bits == 0)
            CHECKF(s.m == psize && memcmp(s.sym, P, psize) == 0, "%s: the symbols are not the fixed payload", what);
        for (i = 0; i < s.n; i++)
            if (s.codes[i] != fixed_code(P, s.n, s.bits, i)) break;
        CHECKF(i == s.n, "%s: code %lu is %lu, the fixed re-coding has %lu", what, (unsigned long)i,
               i < s.n ? (unsigned long)s.codes[i] : 0ul, i < s.n ? (unsigned long)fixed_code(P, s.n, s.bits, i) : 0ul);
    }
    free(fx);
    spec_free(&s);
    g_checked++;
    return 1;
}

/* ---------------------------------------------------------------- tests */
static void widths_buckets_checksum(void) {
    static const uint32_t buckets[3] = {8u, 512u, DQ_BUCKET_WHOLE};
    unsigned b, bi, ck, sent = 0, total = 0;
    for (b = 1; b <= 8u; b++)
        for (bi = 0; bi < 3u; bi++)
            for (ck = 0; ck < 2u; ck++) {
                /* n % 256 != 0 (a tail) for most; sparse inputs (coder 3 is then smaller) */
                size_t n = 6000u + 37u * b + 101u * bi + 256u * ck;
                unsigned long long seed = 1000u * b + 10u * bi + ck;
                float *x = make_input(n, b == 1u ? 900u : 700u, seed);
                char what[64];
                msgbuf m = encode(x, n, b, buckets[bi], b == 1u || (bi + ck) % 2u, ck, DQ_CODER_RANS, seed);
                snprintf(what, sizeof what, "b=%u bucket=%lu ck=%u n=%lu", b, (unsigned long)buckets[bi], ck,
                         (unsigned long)n);
                total++;
                CHECKF(m.len >= 56u && m.b[8] == 3u, "%s: sent as coder %u", what, m.len ? m.b[8] : 0u);
                if (m.len >= 56u && m.b[8] == 3u) sent += (unsigned)check_against_fixed(what, m.b, m.len);
                free(m.b);
                free(x);
            }
    CHECKF(sent == total, "%u of %u messages were coder 3 and checked", sent, total);
}

/* Counts around the chunk boundary of 65536 symbols (m = ceil(n / g) for b = 3, 5..8; ceil(n b / 8)
 * bytes for b = 1, 2, 4, 8), with the number of chunks the spec gives. */
static void chunk_boundaries(void) {
    static const struct {
        unsigned bits;
        size_t n;
        unsigned chunks;
    } k[] = {{4, 131071u, 1}, {4, 131072u, 1}, {4, 131073u, 2}, {4, 2u * 65536u * 2u + 5u, 3},
             {8, 65536u, 1},  {8, 65537u, 2},  {3, 131073u, 2}, {6, 65600u, 2},
             {1, 524289u, 2}, {2, 262145u, 2}};
    size_t t;
    for (t = 0; t < sizeof k / sizeof k[0]; t++) {
        float *x = make_input(k[t].n, k[t].bits == 1u ? 950u : 600u, 77u + t);
        msgbuf m = encode(x, k[t].n, k[t].bits, t % 2u ? DQ_BUCKET_WHOLE : 512u, k[t].bits == 1u, (unsigned)(t % 2u),
                          DQ_CODER_RANS, 5u + t);
        char what[64];
        snprintf(what, sizeof what, "b=%u n=%lu", k[t].bits, (unsigned long)k[t].n);
        CHECKF(m.len >= 56u && m.b[8] == 3u, "%s: sent as coder %u", what, m.len ? m.b[8] : 0u);
        if (m.len >= 56u && m.b[8] == 3u) {
            spec_msg s;
            int r = spec_decode3(m.b, m.len, &s);
            CHECKF(r == SP_OK && s.chunks == k[t].chunks, "%s: reason %d, %lu chunks, expected %u", what, r,
                   (unsigned long)s.chunks, k[t].chunks);
            spec_free(&s);
            check_against_fixed(what, m.b, m.len);
        }
        free(m.b);
        free(x);
    }
}

/* DQ_CODER_AUTO on dense inputs, where coder 3 is the smallest: what it sends is coder 3 and
 * reads as the spec says. */
static void auto_picks_rans(void) {
    static const struct {
        unsigned bits;
        size_t n;
        uint32_t bucket;
        unsigned zeros;
    } k[] = {{4, 20000u, 512u, 0}, {3, 9000u, 512u, 0}, {8, 70000u, DQ_BUCKET_WHOLE, 0}, {5, 30001u, 64u, 100}};
    size_t t;
    for (t = 0; t < sizeof k / sizeof k[0]; t++) {
        float *x = make_input(k[t].n, k[t].zeros, 300u + t);
        msgbuf m = encode(x, k[t].n, k[t].bits, k[t].bucket, 0, (unsigned)(t % 2u), DQ_CODER_AUTO, 9u + t);
        char what[64];
        snprintf(what, sizeof what, "AUTO b=%u n=%lu", k[t].bits, (unsigned long)k[t].n);
        CHECKF(m.len >= 56u && m.b[8] == 3u, "%s: AUTO sent coder %u", what, m.len ? m.b[8] : 0u);
        if (m.len >= 56u && m.b[8] == 3u) check_against_fixed(what, m.b, m.len);
        free(m.b);
        free(x);
    }
}

/* ---------------------------------------------------------------- damaged messages */
static unsigned g_padding_tested; /* messages in which a bit past element n - 1 was set */
static unsigned g_rejected;       /* damaged messages both decoders rejected as expected */

/* After a change to the payload: fix the payload CRC (when the message has one and fixcrc). */
static void refresh_crc(uint8_t *msg, const spec_msg *s, int fixcrc) {
    if ((s->flags & 2u) && fixcrc) st32(msg + s->pay_at + s->L, dq_t_crc32c(msg + 48, s->pay_at + (size_t)s->L - 48u));
}

/* Offset (in the message) of chunk ci's u32 length, from a good parse. */
static size_t chunk_at(const uint8_t *msg, const spec_msg *s, uint64_t ci) {
    size_t pos = s->pay_at + s->A / 8u;
    unsigned k;
    uint64_t i;
    for (k = 0; k < s->A; k++) /* skip the LEB128 frequencies */
        if (s->f[k]) pos += s->f[k] - 1u >= 128u ? 2u : 1u;
    for (i = 0; i < ci; i++) pos += 4u + ld32(msg + pos);
    return pos;
}

/* Both decoders reject d[0..len): the spec decoder (with reason `why`, or any when why is 0) and
 * dq_decode (with `want`). */
static void expect_reject(const char *what, const uint8_t *d, size_t len, int why, dq_status want, uint64_t n) {
    spec_msg s;
    if (want == DQ_ERR_CHECKSUM && why != SP_HEADER) why = SP_CHECKSUM; /* a stale CRC is seen first, by both */
    float *out = (float *)xmalloc(4u * (size_t)n);
    int r = spec_decode3(d, len, &s);
    dq_status st = dq_decode(d, len, out, (size_t)n);
    CHECKF(r != SP_OK && (why == 0 || r == why), "%s: the spec decoder gives reason %d, expected %d", what, r, why);
    CHECKF(st == want, "%s: dq_decode gives %s, expected %s", what, dq_strerror(st), dq_strerror(want));
    if (r != SP_OK && (why == 0 || r == why) && st == want) g_rejected++;
    spec_free(&s);
    free(out);
}

/* A copy of msg with `grow` bytes inserted (grow > 0) or removed (grow < 0) at `at`, and the
 * payload length at 48 changed to match. */
static uint8_t *resize_copy(const uint8_t *msg, size_t len, size_t at, long grow, size_t *nlen) {
    uint8_t *d = (uint8_t *)xmalloc(len + 8u);
    *nlen = (size_t)((long)len + grow);
    memcpy(d, msg, at);
    if (grow >= 0) {
        memset(d + at, 0, (size_t)grow);
        memcpy(d + at + grow, msg + at, len - at);
    } else {
        memcpy(d + at, msg + at + (size_t)(-grow), len - at - (size_t)(-grow));
    }
    st64(d + 48, (uint64_t)((long)ld64(msg + 48) + grow));
    return d;
}

static void damage_one(const char *name, const uint8_t *msg, size_t len) {
    spec_msg s;
    int r = spec_decode3(msg, len, &s), fix;
    char what[128];
    CHECKF(r == SP_OK, "%s: the undamaged message: reason %d", name, r);
    if (r != SP_OK) {
        spec_free(&s);
        return;
    }
    for (fix = 0; fix < 2; fix++) {
        /* with the checksum on and the CRC left stale, the library sees the checksum first */
        dq_status want = (s.flags & 2u) && !fix ? DQ_ERR_CHECKSUM : DQ_ERR_CORRUPT;
        uint64_t last = s.chunks - 1u;
        size_t c0 = chunk_at(msg, &s, 0), cl = chunk_at(msg, &s, last), nlen = 0;
        uint32_t l0 = ld32(msg + c0), ll = ld32(msg + cl);
        uint8_t *d;
        spec_msg t;
        if (fix && !(s.flags & 2u)) break; /* nothing to recompute */
        if (!fix) { /* 0. the header: the seed changed under its CRC */
            d = bdup(msg, len);
            d[30] ^= 1u;
            snprintf(what, sizeof what, "%s: header seed bit", name);
            expect_reject(what, d, len, SP_HEADER, DQ_ERR_CHECKSUM, s.n);
            free(d);
        }
        /* 1. chunk 0's length two bytes longer, and two shorter */
        d = bdup(msg, len);
        st32(d + c0, l0 + 2u);
        t = s;
        refresh_crc(d, &t, fix);
        snprintf(what, sizeof what, "%s: chunk 0 length + 2%s", name, fix ? " (CRC fixed)" : "");
        expect_reject(what, d, len, 0, want, s.n);
        st32(d + c0, l0 - 2u);
        refresh_crc(d, &t, fix);
        snprintf(what, sizeof what, "%s: chunk 0 length - 2%s", name, fix ? " (CRC fixed)" : "");
        expect_reject(what, d, len, 0, want, s.n);
        st32(d + c0, l0 + 1u); /* odd */
        refresh_crc(d, &t, fix);
        snprintf(what, sizeof what, "%s: chunk 0 length + 1%s", name, fix ? " (CRC fixed)" : "");
        expect_reject(what, d, len, 0, want, s.n);
        free(d);
        /* 2. the last word of the last chunk dropped (lengths and payload length adjusted) */
        if (ll > 128u) {
            size_t end = cl + 4u + ll;
            d = resize_copy(msg, len, end - 2u, -2, &nlen);
            st32(d + cl, ll - 2u);
            t = s;
            t.L -= 2u;
            refresh_crc(d, &t, fix);
            snprintf(what, sizeof what, "%s: last word dropped%s", name, fix ? " (CRC fixed)" : "");
            expect_reject(what, d, nlen, SP_WORD_PAST, want, s.n);
            free(d);
        }
        /* 3. two bytes after the last chunk */
        {
            size_t end = cl + 4u + ll;
            d = resize_copy(msg, len, end, 2, &nlen);
            t = s;
            t.L += 2u;
            refresh_crc(d, &t, fix);
            snprintf(what, sizeof what, "%s: bytes after the last chunk%s", name, fix ? " (CRC fixed)" : "");
            expect_reject(what, d, nlen, SP_TRAILING, want, s.n);
            free(d);
        }
        /* 4. a stored state changed (+1, and the top bit flipped), and one below 2^16 */
        {
            static const unsigned ks[3] = {0u, 5u, 31u};
            unsigned q;
            for (q = 0; q < 3u; q++) {
                size_t at = cl + 4u + 4u * ks[q];
                uint32_t v = ld32(msg + at);
                d = bdup(msg, len);
                st32(d + at, v + 1u);
                refresh_crc(d, &s, fix);
                snprintf(what, sizeof what, "%s: state %u + 1%s", name, ks[q], fix ? " (CRC fixed)" : "");
                expect_reject(what, d, len, 0, want, s.n);
                st32(d + at, v ^ 0x80000000u);
                refresh_crc(d, &s, fix);
                snprintf(what, sizeof what, "%s: state %u top bit%s", name, ks[q], fix ? " (CRC fixed)" : "");
                expect_reject(what, d, len, 0, want, s.n);
                st32(d + at, 0xFFFFu);
                refresh_crc(d, &s, fix);
                snprintf(what, sizeof what, "%s: state %u below 2^16%s", name, ks[q], fix ? " (CRC fixed)" : "");
                expect_reject(what, d, len, SP_STATE_LOW, want, s.n);
                free(d);
            }
        }
        /* 5. the table: a one-byte frequency one higher and one lower (sum 4097, 4095) */
        {
            size_t at = s.pay_at + s.A / 8u;
            unsigned k;
            for (k = 0; k < s.A; k++) /* the first f_s - 1 in 1..126: stays one byte either way */
                if (s.f[k]) {
                    if (msg[at] >= 1u && msg[at] <= 126u) break;
                    at += s.f[k] - 1u >= 128u ? 2u : 1u;
                }
            if (k < s.A) {
                d = bdup(msg, len);
                d[at]++;
                refresh_crc(d, &s, fix);
                snprintf(what, sizeof what, "%s: frequency + 1%s", name, fix ? " (CRC fixed)" : "");
                expect_reject(what, d, len, SP_TABLE, want, s.n);
                d[at] = (uint8_t)(msg[at] - 1u);
                refresh_crc(d, &s, fix);
                snprintf(what, sizeof what, "%s: frequency - 1%s", name, fix ? " (CRC fixed)" : "");
                expect_reject(what, d, len, SP_TABLE, want, s.n);
                free(d);
            }
        }
        /* 6. the last chunk's length past the payload's end */
        d = bdup(msg, len);
        st32(d + cl, (uint32_t)(s.pay_at + s.L - (cl + 4u)) + 2u);
        refresh_crc(d, &s, fix);
        snprintf(what, sizeof what, "%s: last length past the end%s", name, fix ? " (CRC fixed)" : "");
        expect_reject(what, d, len, SP_CHUNK_LEN, want, s.n);
        free(d);
        /* 7. a word appended to the last chunk (its length and the payload's grown to match):
         * it is never read */
        d = resize_copy(msg, len, cl + 4u + ll, 2, &nlen);
        st32(d + cl, ll + 2u);
        t = s;
        t.L += 2u;
        refresh_crc(d, &t, fix);
        snprintf(what, sizeof what, "%s: a word left over%s", name, fix ? " (CRC fixed)" : "");
        expect_reject(what, d, nlen, SP_WORDS_LEFT, want, s.n);
        free(d);
        /* 8. an odd word area: one byte appended to the last chunk, its length + 1 */
        d = resize_copy(msg, len, cl + 4u + ll, 1, &nlen);
        st32(d + cl, ll + 1u);
        t = s;
        t.L += 1u;
        refresh_crc(d, &t, fix);
        snprintf(what, sizeof what, "%s: odd word area%s", name, fix ? " (CRC fixed)" : "");
        expect_reject(what, d, nlen, SP_CHUNK_SHAPE, want, s.n);
        free(d);
        /* 9. the payload length one above the bound: DQ_ERR_CORRUPT before the size is looked at */
        d = bdup(msg, len);
        st64(d + 48, (uint64_t)s.A / 8u + 2u * s.A + s.chunks * 132u + 2u * s.m + 1u);
        snprintf(what, sizeof what, "%s: payload length above the bound%s", name, fix ? " (CRC fixed)" : "");
        expect_reject(what, d, len, SP_BOUND, DQ_ERR_CORRUPT, s.n);
        free(d);
        /* 10. a one-byte frequency written in two bytes (not canonical LEB128), the rest moved up */
        {
            size_t at = s.pay_at + s.A / 8u;
            unsigned k;
            for (k = 0; k < s.A; k++)
                if (s.f[k]) {
                    if (msg[at] <= 126u) break;
                    at += s.f[k] - 1u >= 128u ? 2u : 1u;
                }
            if (k < s.A) {
                d = resize_copy(msg, len, at + 1u, 1, &nlen);
                d[at] = (uint8_t)(msg[at] | 0x80u);
                d[at + 1u] = 0;
                t = s;
                t.L += 1u;
                refresh_crc(d, &t, fix);
                snprintf(what, sizeof what, "%s: frequency in two bytes%s", name, fix ? " (CRC fixed)" : "");
                expect_reject(what, d, nlen, SP_TABLE, want, s.n);
                free(d);
            }
        }
        /* Streams the spec encoder writes (the CRC always fresh): once per message */
        if (want != DQ_ERR_CORRUPT) continue;
        /* 11. lane k started at 2^16 + 1: every word is read, only its final state is wrong */
        {
            static const unsigned lanes[3] = {0u, 17u, 31u};
            unsigned q;
            for (q = 0; q < 3u; q++) {
                g_bump_lane = lanes[q];
                d = spec_rebuild(msg, &s, s.sym, &nlen);
                g_bump_lane = 32u;
                snprintf(what, sizeof what, "%s: lane %u ends at 2^16 + 1", name, lanes[q]);
                expect_reject(what, d, nlen, SP_FINAL_STATE, DQ_ERR_CORRUPT, s.n);
                free(d);
            }
        }
        /* 12. a bit past element n - 1 set (b in {1, 2, 4, 8}: padding of the last byte; else a
         * code past n - 1 in the last symbol), in a symbol the table has */
        {
            unsigned used = 8u % s.bits == 0 ? (unsigned)((s.n * s.bits) % 8u)
                                              : (unsigned)((s.n % s.g) * s.bits); /* low bits in use */
            unsigned v;
            if (used == 0) continue; /* no bit past n - 1 */
            for (v = 0; v < s.A; v++)
                if (s.f[v] && (v >> used) != 0) break;
            if (v == s.A) continue; /* no symbol of the table has such a bit */
            {
                uint8_t *sym = bdup(s.sym, (size_t)s.m);
                sym[s.m - 1u] = (uint8_t)v;
                d = spec_rebuild(msg, &s, sym, &nlen);
                snprintf(what, sizeof what, "%s: a bit past element n - 1 (symbol %u)", name, v);
                expect_reject(what, d, nlen, SP_PADDING, DQ_ERR_CORRUPT, s.n);
                free(d);
                free(sym);
                g_padding_tested++;
            }
        }
    }
    spec_free(&s);
}

static void damaged(void) {
    static const struct {
        unsigned bits;
        size_t n;
        unsigned checksum, zeros;
    } k[] = {{4, 20000u, 0, 500},  {4, 20001u, 1, 500}, {8, 70000u, 1, 500}, {3, 9001u, 0, 500},
             {1, 600003u, 1, 950}, {6, 5000u, 0, 500},  {2, 30003u, 1, 500}, {4, 2001u, 0, 1000}};
    size_t t;
    g_padding_tested = 0;
    for (t = 0; t < sizeof k / sizeof k[0]; t++) {
        float *x = make_input(k[t].n, k[t].zeros, 500u + t);
        msgbuf m = encode(x, k[t].n, k[t].bits, 512u, k[t].bits == 1u, k[t].checksum, DQ_CODER_RANS, 11u + t);
        char name[64];
        snprintf(name, sizeof name, "b=%u n=%lu ck=%u", k[t].bits, (unsigned long)k[t].n, k[t].checksum);
        CHECKF(m.len >= 56u && m.b[8] == 3u, "%s: sent as coder %u", name, m.len ? m.b[8] : 0u);
        if (m.len >= 56u && m.b[8] == 3u) damage_one(name, m.b, m.len);
        free(m.b);
        free(x);
    }
    CHECKF(g_padding_tested >= 3u, "a bit past n - 1 was set in %u messages only", g_padding_tested);
    CHECKF(g_rejected >= 200u, "only %u damaged messages rejected", g_rejected);
    if (dq_t_verbose()) printf("damaged: %u rejected by both decoders\n", g_rejected);
}

int main(void) {
    RUN(widths_buckets_checksum);
    RUN(chunk_boundaries);
    RUN(auto_picks_rans);
    RUN(damaged);
    if (dq_t_verbose()) printf("%u coder-3 messages read against the fixed re-coding\n", g_checked);
    return dq_t_finish();
}
