// gather_last_axis.h with AVX2: indices are wrapped and checked 4 (int64) or 8 (int32) at a
// time, an index outside the row becomes 0 (and is reported), and the elements are picked by
// vpgatherqd / vpgatherdd. The tail is the scalar loop.
#include "runtime/gather_last_axis.h"

#include <immintrin.h>

#define TF_AVX2 __attribute__((target("avx2")))

namespace tilefuse::runtime::avx2 {

namespace {

template <typename I>
bool gather_tail(const uint32_t* row, const I* indices, uint32_t* out, int64_t count, int64_t n) {
  bool ok = true;
  for (int64_t e = 0; e < count; ++e) {
    int64_t k = static_cast<int64_t>(indices[e]);
    k += k < 0 ? n : 0;
    const bool inside = k >= 0 && k < n;
    ok &= inside;
    out[e] = row[inside ? k : 0];
  }
  return ok;
}

// k wrapped once if negative; lanes still outside [0, n) become 0 and are set in `outside`.
TF_AVX2 __m256i wrapped64(__m256i k, __m256i n, __m256i& outside) {
  const __m256i zero = _mm256_setzero_si256();
  k = _mm256_add_epi64(k, _mm256_and_si256(_mm256_cmpgt_epi64(zero, k), n));
  const __m256i inside = _mm256_andnot_si256(_mm256_cmpgt_epi64(zero, k), _mm256_cmpgt_epi64(n, k));
  outside = _mm256_or_si256(outside, _mm256_andnot_si256(inside, _mm256_set1_epi64x(-1)));
  return _mm256_and_si256(k, inside);
}

TF_AVX2 __m256i wrapped32(__m256i k, __m256i n, __m256i& outside) {
  const __m256i zero = _mm256_setzero_si256();
  k = _mm256_add_epi32(k, _mm256_and_si256(_mm256_cmpgt_epi32(zero, k), n));
  const __m256i inside = _mm256_andnot_si256(_mm256_cmpgt_epi32(zero, k), _mm256_cmpgt_epi32(n, k));
  outside = _mm256_or_si256(outside, _mm256_andnot_si256(inside, _mm256_set1_epi32(-1)));
  return _mm256_and_si256(k, inside);
}

}  // namespace

TF_AVX2 bool gather_last_axis(const uint32_t* row, const int64_t* indices, uint32_t* out, int64_t count, int64_t n) {
  const auto* base = reinterpret_cast<const int*>(row);
  const __m256i vn = _mm256_set1_epi64x(n);
  __m256i outside = _mm256_setzero_si256();
  int64_t e = 0;
  for (; e + 8 <= count; e += 8) {
    const __m256i lo = wrapped64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(indices + e)), vn, outside);
    const __m256i hi = wrapped64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(indices + e + 4)), vn, outside);
    const __m256i picked = _mm256_set_m128i(_mm256_i64gather_epi32(base, hi, 4), _mm256_i64gather_epi32(base, lo, 4));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + e), picked);
  }
  const bool ok = _mm256_testz_si256(outside, outside) != 0;
  return gather_tail(row, indices + e, out + e, count - e, n) && ok;
}

TF_AVX2 bool gather_last_axis(const uint32_t* row, const int32_t* indices, uint32_t* out, int64_t count, int64_t n) {
  if (n > INT32_MAX) return gather_tail(row, indices, out, count, n);
  const auto* base = reinterpret_cast<const int*>(row);
  const __m256i vn = _mm256_set1_epi32(static_cast<int32_t>(n));
  __m256i outside = _mm256_setzero_si256();
  int64_t e = 0;
  for (; e + 8 <= count; e += 8) {
    const __m256i k = wrapped32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(indices + e)), vn, outside);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + e), _mm256_i32gather_epi32(base, k, 4));
  }
  const bool ok = _mm256_testz_si256(outside, outside) != 0;
  return gather_tail(row, indices + e, out + e, count - e, n) && ok;
}

}  // namespace tilefuse::runtime::avx2
