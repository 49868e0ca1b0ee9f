/* ---------------------------------------------------------------- elements: float32, fp16 and bf16 vectors
 * One pipeline for the three element types. The codec works on floats; a 16-bit vector moves
 * through it in chunks of DQ__ELCHUNK elements converted on the stack, so nothing is allocated
 * and each element is read from memory once per pass. A float vector is used in place, in one
 * piece. The encoders (quantize.h), the decoders and the sketch use it. */
#define DQ__ELCHUNK 2048u /* elements per chunk: a multiple of the 256-element block and of 64 */

DQ_API size_t dq_dtype_size(dq_dtype t) {
    switch (t) {
        case DQ_F32: return 4u;
        case DQ_F16:
        case DQ_BF16: return 2u;
        default: return 0u;
    }
}
/* cnt elements of dtype t starting at element i0 of src, as floats in buf; a float source is
 * returned in place. */
static inline const float *dq__el_in(dq_dtype t, const void *src, size_t i0, size_t cnt, float *buf) {
    const uint8_t *s = (const uint8_t *)src + i0 * dq_dtype_size(t);
    if (t == DQ_F32) return (const float *)(const void *)s;
    if (t == DQ_F16)
        dq__k_f16_to_f32(s, buf, cnt);
    else
        dq__k_bf16_to_f32(s, buf, cnt);
    return buf;
}
/* The same for memory that is updated in place (a float residual) or through buf. */
static inline float *dq__el_inout(dq_dtype t, void *src, size_t i0, size_t cnt, float *buf) {
    if (t == DQ_F32) return (float *)src + i0;
    (void)dq__el_in(t, src, i0, cnt, buf);
    return buf;
}
/* buf[0..cnt) rounded to dtype t at element i0 of dst (nothing to do for float in place). */
static inline void dq__el_out(dq_dtype t, const float *buf, size_t cnt, void *dst, size_t i0) {
    uint8_t *d = (uint8_t *)dst + i0 * dq_dtype_size(t);
    if (t == DQ_F16)
        dq__k_f32_to_f16(buf, d, cnt);
    else if (t == DQ_BF16)
        dq__k_f32_to_bf16(buf, d, cnt);
    else if ((const void *)buf != (const void *)d)
        memcpy(d, buf, 4u * cnt);
}
/* Single elements, for the scattered reads and writes of the sparse schemes. */
static inline float dq__el_get(dq_dtype t, const void *src, size_t i) {
    float v;
    return *dq__el_in(t, src, i, 1, &v);
}
static inline void dq__el_set(dq_dtype t, void *dst, size_t i, float v) { dq__el_out(t, &v, 1, dst, i); }
/* The chunk length of a pass over n elements: all of them for float data. */
static inline size_t dq__el_chunk(int flt, size_t n) { return flt ? n : DQ__ELCHUNK; }
/* Chunk [i0, i0 + cnt) of an output of dtype t as floats to update: in place for float data,
 * otherwise in buf, loaded from the output only when the update reads it (add). */
static inline float *dq__el_acc(dq_dtype t, void *out, size_t i0, size_t cnt, int add, float *buf) {
    if (t == DQ_F32) return (float *)out + i0;
    if (add) (void)dq__el_in(t, out, i0, cnt, buf);
    return buf;
}
