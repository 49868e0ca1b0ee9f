/* ================================================================ end of dqsgd_simd.h
 * Closes the C linkage block and the include guard that src/simd_setup.h opens. */
#ifdef __cplusplus
}
#endif

#endif /* DQ__SIMD_PART && !DQSGD_SIMD_H_INCLUDED */
