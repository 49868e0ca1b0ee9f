// cxx_run.cpp - both headers as C++: built with g++ and clang++ at every ISA level (C++11, the
// C++ warnings as errors) and run on the levels the CPU has (`make cxx`, part of `make test`).
// A round trip at every width, rounding, norm and bucket: exact message size, header fields,
// determinism, the per-element error bound, decode-add against decode, the error-feedback
// residual identity, status codes and the backend. Ends "N passed, M failed" (tests/harness.h).
#include "dqsgd.h"
#include "dqsgd_simd.h" // part of dqsgd.h: after it, this include adds nothing

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "harness.h"

namespace {

const unsigned k_n = 1000; // 3 full blocks of 256 and a tail of 232

std::vector<float> gauss_data(std::size_t n, unsigned long long seed) {
    dq_t_rng r = {seed};
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; i++) {
        int k = static_cast<int>(dq_t_next(&r) % 5u) - 2; // magnitudes over 2^-2 .. 2^2
        x[i] = static_cast<float>(std::ldexp(dq_t_gauss(&r), k));
    }
    return x;
}

dq_params make_params(unsigned bits, dq_rounding rounding, dq_norm norm, uint32_t bucket) {
    dq_params p = dq_params();
    p.bits = bits;
    p.rounding = rounding;
    p.norm = norm;
    p.bucket = bucket;
    p.seed = 0xC0FFEEu;
    p.step = bits;
    p.stream = 7;
    return p;
}

// The bucket scale computed independently, in double: L2 norm, max |x| or mean |x|.
double bucket_scale(const float *x, std::size_t len, const dq_params &p) {
    double sq = 0.0, ab = 0.0, mx = 0.0;
    for (std::size_t i = 0; i < len; i++) {
        double a = std::fabs(static_cast<double>(x[i]));
        sq += a * a;
        ab += a;
        if (a > mx) mx = a;
    }
    if (p.bits == 1 && p.rounding == DQ_ROUND_NEAREST) return ab / static_cast<double>(len);
    return p.norm == DQ_NORM_MAX ? mx : std::sqrt(sq);
}

void test_roundtrip() {
    static const dq_rounding rounds[] = {DQ_ROUND_STOCHASTIC, DQ_ROUND_NEAREST};
    static const dq_norm norms[] = {DQ_NORM_L2, DQ_NORM_MAX};
    static const uint32_t buckets[] = {512u, 24u, DQ_BUCKET_WHOLE};
    const std::vector<float> x = gauss_data(k_n, 99);
    const std::size_t cap = dq_encode_bound(k_n, 16);
    std::vector<uint8_t> m(cap), m2(cap);
    std::vector<float> y(k_n), acc(k_n);
    for (unsigned b = 1; b <= 16; b++)
        for (unsigned r = 0; r < 2; r++)
            for (unsigned nm = 0; nm < 2; nm++)
                for (unsigned bk = 0; bk < 3; bk++) {
                    const dq_params p = make_params(b, rounds[r], norms[nm], buckets[bk]);
                    std::size_t len = 0, len2 = 0, want = 0;
                    dq_header h;
                    dq_status st = dq_encode(&p, x.data(), k_n, NULL, m.data(), cap, &len);
                    CHECKF(st == DQ_OK, "bits %u: encode: %s", b, dq_strerror(st));
                    if (st != DQ_OK) continue;
                    CHECK(dq_encode_capacity(&p, k_n, &want) == DQ_OK && want == len && len <= cap);
                    CHECK(dq_encode(&p, x.data(), k_n, NULL, m2.data(), cap, &len2) == DQ_OK && len2 == len &&
                          std::memcmp(m.data(), m2.data(), len) == 0);
                    CHECK(dq_header_read(m.data(), len, &h) == DQ_OK && h.count == k_n && h.msg_size == len &&
                          h.bits == b);
                    CHECK(dq_decode(m.data(), len, y.data(), k_n) == DQ_OK);
                    const std::size_t bsz = buckets[bk] == DQ_BUCKET_WHOLE ? k_n : buckets[bk];
                    const double s = b == 1 ? 1.0 : static_cast<double>((1u << (b - 1)) - 1u);
                    std::size_t bad = 0;
                    for (std::size_t i = 0; i < k_n; i++) {
                        std::size_t b0 = i / bsz * bsz, blen = b0 + bsz <= k_n ? bsz : k_n - b0;
                        double scale = bucket_scale(x.data() + b0, blen, p);
                        double step = b == 1 ? 2.0 * scale : scale / s;
                        double tol = (rounds[r] == DQ_ROUND_NEAREST && b > 1 ? 0.5 : 1.0) * step + 1e-6 * scale;
                        if (b == 1 && rounds[r] == DQ_ROUND_NEAREST) continue; // scaled sign: biased by design
                        if (std::fabs(static_cast<double>(y[i]) - static_cast<double>(x[i])) > tol) bad++;
                    }
                    CHECKF(bad == 0, "bits %u round %u norm %u bucket %u: %lu elements off by more than a step", b,
                           r, nm, bk, static_cast<unsigned long>(bad));
                    // decode-add is decode followed by acc + w * v, bit for bit
                    for (std::size_t i = 0; i < k_n; i++) acc[i] = static_cast<float>(i) * 0.25f;
                    CHECK(dq_decode_add(m.data(), len, 0.5f, acc.data(), k_n) == DQ_OK);
                    bad = 0;
                    for (std::size_t i = 0; i < k_n; i++) {
                        float t = 0.5f * y[i], want_acc = static_cast<float>(i) * 0.25f + t;
                        if (std::memcmp(&want_acc, &acc[i], sizeof want_acc) != 0) bad++;
                    }
                    CHECKF(bad == 0, "bits %u: decode-add differs from decode in %lu elements", b,
                           static_cast<unsigned long>(bad));
                }
}

// With error feedback the message carries x + e and the residual becomes (x + e) - decoded.
void test_error_feedback() {
    const std::vector<float> x = gauss_data(k_n, 5), e0 = gauss_data(k_n, 6);
    const std::size_t cap = dq_encode_bound(k_n, 16);
    std::vector<uint8_t> m(cap);
    std::vector<float> y(k_n);
    for (unsigned b = 1; b <= 16; b += 3) {
        const dq_params p = make_params(b, DQ_ROUND_STOCHASTIC, DQ_NORM_L2, 512u);
        std::vector<float> e(e0);
        std::size_t len = 0, bad = 0;
        for (std::size_t i = 0; i < k_n; i++) e[i] *= 0.1f;
        const std::vector<float> before(e);
        CHECK(dq_encode(&p, x.data(), k_n, e.data(), m.data(), cap, &len) == DQ_OK);
        CHECK(dq_decode(m.data(), len, y.data(), k_n) == DQ_OK);
        for (std::size_t i = 0; i < k_n; i++) {
            float c = x[i] + before[i], want = c - y[i];
            if (std::memcmp(&want, &e[i], sizeof want) != 0) bad++;
        }
        CHECKF(bad == 0, "bits %u: %lu residuals differ from (x + e) - decoded", b, static_cast<unsigned long>(bad));
    }
}

void test_status() {
    const std::vector<float> x = gauss_data(64, 3);
    std::vector<float> bad(x), e(64, 0.0f);
    std::vector<uint8_t> m(dq_encode_bound(64, 16));
    std::vector<float> y(64);
    dq_params p = dq_params();
    std::size_t len = 0;
    p.bits = 17;
    CHECK(dq_encode(&p, x.data(), 64, NULL, m.data(), m.size(), &len) == DQ_ERR_BITS);
    p.bits = 4;
    CHECK(dq_encode(&p, x.data(), 0, NULL, m.data(), m.size(), &len) == DQ_ERR_EMPTY);
    bad[17] = std::numeric_limits<float>::quiet_NaN();
    CHECK(dq_encode(&p, bad.data(), 64, e.data(), m.data(), m.size(), &len) == DQ_ERR_NONFINITE);
    CHECK(std::memcmp(e.data(), std::vector<float>(64, 0.0f).data(), 64 * sizeof(float)) == 0); // untouched
    CHECK(dq_encode(&p, x.data(), 64, NULL, m.data(), 10, &len) == DQ_ERR_DST_TOO_SMALL);
    CHECK(dq_encode(&p, x.data(), 64, NULL, m.data(), m.size(), &len) == DQ_OK);
    CHECK(dq_decode(m.data(), len - 1, y.data(), 64) != DQ_OK);
    m[0] ^= 1u;
    CHECK(dq_decode(m.data(), len, y.data(), 64) == DQ_ERR_BAD_MAGIC);
    CHECK(std::strcmp(dq_strerror(DQ_ERR_BITS), dq_strerror(DQ_OK)) != 0);
}

void test_backend() {
#if defined(DQ_NO_SIMD)
    const char *want = "scalar";
#elif defined(__AVX512F__)
    const char *want = "avx512";
#elif defined(__AVX2__)
    const char *want = "avx2";
#elif defined(__aarch64__) && defined(__ARM_NEON)
    const char *want = "neon";
#elif defined(__SSE2__)
    const char *want = "sse2";
#else
    const char *want = "scalar";
#endif
    CHECKF(std::strcmp(dq_simd_backend(), want) == 0, "backend %s, expected %s", dq_simd_backend(), want);
    CHECK(dq_version_number() == DQSGD_VERSION_NUMBER);
}

} // namespace

int main() {
    RUN(test_backend);
    RUN(test_roundtrip);
    RUN(test_error_feedback);
    RUN(test_status);
    return dq_t_finish();
}
