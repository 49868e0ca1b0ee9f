/* ================================================================ CRC32C with SSE4.2
 * The crc32 instruction computes the raw CRC32C register update; eight bytes at a time in one
 * dependency chain (3-cycle latency) gives about 8 bytes per 3 cycles, ample beside the codec. */
#if defined(SIMDE_X86_SSE4_2_NATIVE)
static inline uint32_t dq__crc32c__sse42(uint32_t c, const uint8_t *p, size_t n) {
    uint64_t c64 = c, w;
    for (; n >= 8; p += 8, n -= 8) {
        memcpy(&w, p, 8); /* x86 is little-endian: the bytes in memory order */
        c64 = simde_mm_crc32_u64(c64, w);
    }
    c = (uint32_t)c64;
    for (; n; p++, n--) c = simde_mm_crc32_u8(c, *p);
    return c;
}
#define dq__k_crc32c dq__crc32c__sse42
#endif

/* ================================================================ VARINT index decoder (SSSE3) */
#if DQ__HAS_SSSE3_KERNELS
/* Four values a control byte: the byte's two nibbles each describe two values. For a nibble
 * q (lengths (q & 3) + 1 and (q >> 2) + 1) nib[q] holds the 8 shuffle indices that spread
 * their bytes over two 32-bit lanes (0x80: zero); the high nibble's indices are shifted by
 * the low nibble's byte count (0x80 + 8 keeps the zeroing bit). least[q]: each lane's
 * smallest value for its length, XOR 2^31 (for a signed compare). Full groups run while 16
 * data bytes remain readable; the rest, and the k % 4 tail, go to the scalar twin. */
static inline void dq__svb_decode__ssse3(const uint8_t *ctrl, const uint8_t *data, size_t data_len, size_t k,
                                         uint32_t *out, dq__svb_acc *a) {
    static const uint64_t nib[16] = {
        0x8080800180808000u, 0x8080800280800100u, 0x8080800380020100u, 0x8080800403020100u,
        0x8080020180808000u, 0x8080030280800100u, 0x8080040380020100u, 0x8080050403020100u,
        0x8003020180808000u, 0x8004030280800100u, 0x8005040380020100u, 0x8006050403020100u,
        0x0403020180808000u, 0x0504030280800100u, 0x0605040380020100u, 0x0706050403020100u};
    static const uint64_t least[16] = {
        0x8000000080000000u, 0x8000000080000100u, 0x8000000080010000u, 0x8000000081000000u,
        0x8000010080000000u, 0x8000010080000100u, 0x8000010080010000u, 0x8000010081000000u,
        0x8001000080000000u, 0x8001000080000100u, 0x8001000080010000u, 0x8001000081000000u,
        0x8100000080000000u, 0x8100000080000100u, 0x8100000080010000u, 0x8100000081000000u};
    const simde__m128i zero = simde_mm_setzero_si128(), one = simde_mm_set1_epi32(1);
    const simde__m128i sign = simde_mm_set1_epi32(INT32_MIN);
    simde__m128i prev = simde_mm_set1_epi32((int32_t)a->prev), bad = zero, s0 = zero, s1 = zero;
    uint64_t sums[4];
    size_t g = 0, groups = k / 4u, pos = 0;
    for (; g < groups && data_len - pos >= 16; g++) {
        unsigned c = ctrl[g], lo = c & 15u, hi = c >> 4, nlo = (lo & 3u) + (lo >> 2) + 2u;
        uint64_t mhi = nib[hi] + nlo * 0x0101010101010101u;
        simde__m128i m = simde_mm_set_epi64x((int64_t)mhi, (int64_t)nib[lo]);
        simde__m128i v = simde_mm_shuffle_epi8(simde_mm_loadu_si128((const simde__m128i *)(data + pos)), m);
        simde__m128i mn = simde_mm_set_epi64x((int64_t)least[hi], (int64_t)least[lo]);
        bad = simde_mm_or_si128(bad, simde_mm_cmpgt_epi32(mn, simde_mm_xor_si128(v, sign)));
        s0 = simde_mm_add_epi64(s0, simde_mm_unpacklo_epi32(v, zero));
        s1 = simde_mm_add_epi64(s1, simde_mm_unpackhi_epi32(v, zero));
        pos += nlo + (hi & 3u) + (hi >> 2) + 2u;
        v = simde_mm_add_epi32(v, one); /* gaps */
        v = simde_mm_add_epi32(v, simde_mm_slli_si128(v, 4));
        v = simde_mm_add_epi32(v, simde_mm_slli_si128(v, 8));
        v = simde_mm_add_epi32(v, prev);
        simde_mm_storeu_si128((simde__m128i *)(out + 4u * g), v);
        prev = simde_mm_shuffle_epi32(v, 0xFF);
    }
    simde_mm_storeu_si128((simde__m128i *)sums, s0);
    simde_mm_storeu_si128((simde__m128i *)(sums + 2), s1);
    a->sum += sums[0] + sums[1] + sums[2] + sums[3];
    a->prev = (uint32_t)simde_mm_cvtsi128_si32(prev);
    a->bad |= (uint32_t)(simde_mm_movemask_epi8(bad) != 0);
    dq__svb_decode__scalar(ctrl + g, data + pos, data_len - pos, k - 4u * g, out + 4u * g, a);
}
#define dq__k_svb_decode dq__svb_decode__ssse3
#endif /* DQ__HAS_SSSE3_KERNELS */

#ifdef __cplusplus
}
#endif

