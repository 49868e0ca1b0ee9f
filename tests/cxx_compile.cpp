// Both headers must compile as C++ (g++ and clang++, every ISA level); this file is compiled only.
#include "dqsgd_simd.h"
#include "dqsgd.h"

int dq_cxx_probe(const float *x, size_t n, unsigned char *buf, size_t cap);
int dq_cxx_probe(const float *x, size_t n, unsigned char *buf, size_t cap) {
    dq_params p = dq_params();
    size_t len = 0;
    dq_header h;
    p.bits = 3;
    if (dq_encode(&p, x, n, NULL, buf, cap, &len) != DQ_OK) return -1;
    if (dq_header_read(buf, len, &h) != DQ_OK) return -2;
    return static_cast<int>(h.bits) + (dq_simd_backend()[0] == 's' ? 0 : 1);
}
