#include "runtime/strided_axpy.h"

#include <immintrin.h>

#include "runtime/sgemm_microkernel.h"

namespace tilefuse::runtime {

namespace {

void scalar_axpy(float a, const float* x, int64_t stride, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i * stride];
}

__attribute__((target("avx512f"))) void avx512_axpy(float a, const float* x, int64_t stride, float* y, int64_t n) {
  const __m512 av = _mm512_set1_ps(a);
  int64_t i = 0;
  if (stride == 1) {
    for (; i + 16 <= n; i += 16) {
      _mm512_storeu_ps(y + i, _mm512_fmadd_ps(av, _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
    }
    if (i < n) {
      const auto m = static_cast<__mmask16>((1u << (n - i)) - 1);
      _mm512_mask_storeu_ps(y + i, m, _mm512_fmadd_ps(av, _mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, y + i)));
    }
    return;
  }
  // Stride 2: lanes 0, 2, ..., 30 of 32 consecutive inputs. The last input read is
  // x[2 * (i + 15) + 1], one past x[2 * (n - 1)] only when i + 16 == n: stop one vector early.
  const __m512i evens = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  for (; i + 16 < n; i += 16) {
    const __m512 lo = _mm512_loadu_ps(x + 2 * i), hi = _mm512_loadu_ps(x + 2 * i + 16);
    const __m512 xs = _mm512_permutex2var_ps(lo, evens, hi);
    _mm512_storeu_ps(y + i, _mm512_fmadd_ps(av, xs, _mm512_loadu_ps(y + i)));
  }
  scalar_axpy(a, x + 2 * i, 2, y + i, n - i);
}

}  // namespace

void strided_axpy(float a, const float* x, int64_t stride, float* y, int64_t n) {
  if (n <= 0) return;
  if ((stride == 1 || stride == 2) && microkernel_supported()) return avx512_axpy(a, x, stride, y, n);
  scalar_axpy(a, x, stride, y, n);
}

}  // namespace tilefuse::runtime
