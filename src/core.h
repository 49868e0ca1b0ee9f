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
#define DQ__ABS_MASK 0x7FFFFFFFu /* a binary32 pattern without its sign bit */
#define DQ__2P32 ((uint64_t)1 << 32)
/* The bit pattern of |f|: orders like |f| for finite values; Inf and NaN are >= 0x7F800000. */
static inline uint32_t dq__abs_bits(float f) { return dq__fbits(f) & DQ__ABS_MASK; }
/* Bytes of one packed block of 256 b-bit codes (8 lanes x 32 rows, doc/FORMAT.md 8). */
#define DQ__BLOCK_BYTES(b) (32u * (b))


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
/* The generator of FORMAT 7.2: the 32-bit draw for counter lo (the low half of the element
 * index, or j) under the keys k0 and k1h. The one scalar definition of the dither: levels take
 * its top 24 bits (dq__draw24), random-k its 32 bits, the count sketch its hashes. */
static inline uint32_t dq__draw32(uint32_t k0, uint32_t k1h, uint32_t lo) {
    uint32_t x = lo ^ k0;
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= (x >> 15) ^ k1h;
    x *= 0x846CA68Bu;
    x ^= x >> 16;
    return x;
}
/* 24-bit uniform draw for the element whose index has low half lo. */
static inline uint32_t dq__draw24(uint32_t k0, uint32_t k1h, uint32_t lo) { return dq__draw32(k0, k1h, lo) >> 8; }

