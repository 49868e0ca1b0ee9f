/* ---------------------------------------------------------------- fp16 and bf16: the typed codec
 * The codec's own pipeline with 16-bit data (the element adapter of the level encoder). The
 * conversions (dq__f32_to_f16_bits and the kernels) are with the scalar kernels. */

DQ_API uint16_t dq_f32_to_f16(float f) { return dq__f32_to_f16_bits(dq__fbits(f)); }
DQ_API float dq_f16_to_f32(uint16_t h) { return dq__bitsf(dq__f16_to_f32_bits(h)); }
DQ_API uint16_t dq_f32_to_bf16(float f) { return dq__f32_to_bf16_bits(dq__fbits(f)); }
DQ_API float dq_bf16_to_f32(uint16_t h) { return dq__bitsf(dq__bf16_to_f32_bits(h)); }

DQ_API dq_status dq_convert(dq_dtype from, const void *src, size_t n, dq_dtype to, void *dst) {
    float buf[DQ__ELCHUNK];
    size_t i;
    if (!src || !dst) return DQ_ERR_NULL;
    if (!dq_dtype_size(from) || !dq_dtype_size(to)) return DQ_ERR_PARAM;
    if (n == 0) return DQ_OK;
    if (from == to) {
        if (src != dst) memmove(dst, src, n * dq_dtype_size(to));
    } else if (from == DQ_F32) { /* narrowing: the kernels store each group behind its loads */
        dq__el_out(to, (const float *)src, n, dst, 0);
    } else if (to == DQ_F32) {
        (void)dq__el_in(from, src, 0, n, (float *)dst);
    } else { /* fp16 <-> bf16 through float, a chunk at a time */
        for (i = 0; i < n; i += DQ__ELCHUNK) {
            size_t cnt = n - i < DQ__ELCHUNK ? n - i : DQ__ELCHUNK;
            dq__el_out(to, dq__el_in(from, src, i, cnt, buf), cnt, dst, i);
        }
    }
    return DQ_OK;
}

DQ_API dq_status dq_encode_typed(const dq_params *p, dq_dtype xt, const void *x, size_t n, dq_dtype rt,
                                 void *residual, void *dst, size_t dst_cap, size_t *dst_len) {
    if (!dst_len || !p || !x || !dst) return DQ_ERR_NULL;
    if (!dq_dtype_size(xt) || !dq_dtype_size(rt)) return DQ_ERR_PARAM;
    return dq__ops_params(p)->encode(p, xt, x, n, rt, residual, dst, dst_cap, dst_len);
}
DQ_API dq_status dq_decode_typed(const void *src, size_t src_len, dq_dtype ot, void *out, size_t out_cap) {
    return dq__decode_msg(src, src_len, 1.0f, 0, ot, out, out_cap);
}
DQ_API dq_status dq_decode_add_typed(const void *src, size_t src_len, float weight, dq_dtype at, void *acc,
                                     size_t acc_len) {
    return dq__decode_msg(src, src_len, weight, 1, at, acc, acc_len);
}


