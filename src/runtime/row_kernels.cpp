#include "runtime/row_kernels.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "runtime/cpu_isa.h"

#define TF_AVX512 __attribute__((target("avx512f")))
#define TF_AVX2 __attribute__((target("avx2,fma")))

namespace tilefuse::runtime {

namespace {

struct Axpy {
  float a;
  void scalar(float x, float& y) const { y += a * x; }
  TF_AVX512 __m512 vector(__m512 x, __m512 y) const { return _mm512_fmadd_ps(_mm512_set1_ps(a), x, y); }
  TF_AVX2 __m256 vector(__m256 x, __m256 y) const { return _mm256_fmadd_ps(_mm256_set1_ps(a), x, y); }
};

struct Max {
  void scalar(float x, float& y) const {
    if (std::isnan(x) || x > y) y = std::isnan(y) ? y : x;
  }
  TF_AVX512 __m512 vector(__m512 x, __m512 y) const { return max_keeping_nan(x, y); }
  TF_AVX2 __m256 vector(__m256 x, __m256 y) const {
    return _mm256_blendv_ps(_mm256_max_ps(x, y), x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  }
};

template <typename Op>
void scalar_rows(const Op& op, const float* x, int64_t stride, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) op.scalar(x[i * stride], y[i]);
}

template <typename Op>
TF_AVX512 void avx512_rows(const Op& op, const float* x, int64_t stride, float* y, int64_t n) {
  int64_t i = 0;
  if (stride == 1) {
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, op.vector(_mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
    if (i < n) {
      const auto m = static_cast<__mmask16>((1u << (n - i)) - 1);
      _mm512_mask_storeu_ps(y + i, m, op.vector(_mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, y + i)));
    }
    return;
  }
  // Stride 2: lanes 0, 2, ..., 30 of 32 consecutive inputs. The vector of the last r <= 16
  // outputs reads its 2r - 1 inputs only (x[2 * (n - 1)] is the last): masked loads, and a masked
  // store of r lanes. (A row of 56 outputs, as ResNet's MaxPool has, left 8 to a scalar loop.)
  const __m512i evens = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  for (; i < n; i += 16) {
    const int64_t r = std::min<int64_t>(16, n - i), inputs = 2 * r - 1;
    const auto lo_mask = static_cast<__mmask16>((1u << std::min<int64_t>(16, inputs)) - 1);
    const auto hi_mask = static_cast<__mmask16>((1u << std::max<int64_t>(0, inputs - 16)) - 1);
    const auto out_mask = static_cast<__mmask16>((1u << r) - 1);
    const __m512 xs = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(lo_mask, x + 2 * i), evens,
                                             _mm512_maskz_loadu_ps(hi_mask, x + 2 * i + 16));
    _mm512_mask_storeu_ps(y + i, out_mask, op.vector(xs, _mm512_maskz_loadu_ps(out_mask, y + i)));
  }
}

// The same with 8 lanes; the tail of fewer than 8 is scalar. (A row of 56 outputs at stride 2,
// as ResNet's MaxPool has, used to leave its last whole vector to the scalar loop too.)
template <typename Op>
TF_AVX2 void avx2_rows(const Op& op, const float* x, int64_t stride, float* y, int64_t n) {
  int64_t i = 0;
  if (stride == 1) {
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, op.vector(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  } else {
    const __m256i evens = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    const __m256i all_but_last = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, -1, 0);
    for (; i + 8 <= n; i += 8) {
      // The second load's last lane is one past x[2 * (n - 1)] when i + 8 == n: masked off.
      const __m256 second = i + 8 < n ? _mm256_loadu_ps(x + 2 * i + 8) : _mm256_maskload_ps(x + 2 * i + 8, all_but_last);
      const __m256 lo = _mm256_permutevar8x32_ps(_mm256_loadu_ps(x + 2 * i), evens);
      const __m256 hi = _mm256_permutevar8x32_ps(second, evens);
      _mm256_storeu_ps(y + i, op.vector(_mm256_blend_ps(lo, hi, 0xf0), _mm256_loadu_ps(y + i)));
    }
  }
  scalar_rows(op, x + stride * i, stride, y + i, n - i);
}

template <typename Op>
void rows(const Op& op, const float* x, int64_t stride, float* y, int64_t n) {
  if (n <= 0) return;
  if (stride == 1 || stride == 2) {
    if (vector_isa() == VectorIsa::avx512) return avx512_rows(op, x, stride, y, n);
    if (vector_isa() == VectorIsa::avx2) return avx2_rows(op, x, stride, y, n);
  }
  scalar_rows(op, x, stride, y, n);
}

void scalar_tap_sum(const float* x, int64_t stride, const int64_t* offsets, const float* weights, int64_t taps,
                    float bias, float* out, int64_t n) {
  for (int64_t q = 0; q < n; ++q) {
    float acc = bias;
    for (int64_t t = 0; t < taps; ++t) acc += weights[t] * x[q * stride + offsets[t]];
    out[q] = acc;
  }
}

// Loads 16 inputs of output vector q at tap offset `offset`: contiguous at stride 1; at stride 2,
// lanes 0, 2, ..., 30 of 32 consecutive inputs.
TF_AVX512 inline __m512 tap_inputs(const float* x, int64_t stride, int64_t q, int64_t offset) {
  if (stride == 1) return _mm512_loadu_ps(x + q + offset);
  const __m512i evens = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const float* p = x + 2 * q + offset;
  return _mm512_permutex2var_ps(_mm512_loadu_ps(p), evens, _mm512_loadu_ps(p + 16));
}

TF_AVX512 void avx512_tap_sum(const float* x, int64_t stride, const int64_t* offsets, const float* weights,
                              int64_t taps, float bias, float* out, int64_t n) {
  // Four output vectors at a time: four independent FMA chains hide the FMA latency. At stride 2
  // the last vector stops one short (the de-interleaving load reads one input past its last).
  const int64_t end = stride == 1 ? n : n - 1;
  int64_t q = 0;
  for (; q + 64 <= end; q += 64) {
    __m512 a0 = _mm512_set1_ps(bias), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t t = 0; t < taps; ++t) {
      const __m512 w = _mm512_set1_ps(weights[t]);
      a0 = _mm512_fmadd_ps(w, tap_inputs(x, stride, q, offsets[t]), a0);
      a1 = _mm512_fmadd_ps(w, tap_inputs(x, stride, q + 16, offsets[t]), a1);
      a2 = _mm512_fmadd_ps(w, tap_inputs(x, stride, q + 32, offsets[t]), a2);
      a3 = _mm512_fmadd_ps(w, tap_inputs(x, stride, q + 48, offsets[t]), a3);
    }
    _mm512_storeu_ps(out + q, a0);
    _mm512_storeu_ps(out + q + 16, a1);
    _mm512_storeu_ps(out + q + 32, a2);
    _mm512_storeu_ps(out + q + 48, a3);
  }
  for (; q + 16 <= end; q += 16) {
    __m512 acc = _mm512_set1_ps(bias);
    for (int64_t t = 0; t < taps; ++t) {
      acc = _mm512_fmadd_ps(_mm512_set1_ps(weights[t]), tap_inputs(x, stride, q, offsets[t]), acc);
    }
    _mm512_storeu_ps(out + q, acc);
  }
  if (stride == 1 && q < n) {
    const auto m = static_cast<__mmask16>((1u << (n - q)) - 1);
    __m512 acc = _mm512_set1_ps(bias);
    for (int64_t t = 0; t < taps; ++t) {
      acc = _mm512_fmadd_ps(_mm512_set1_ps(weights[t]), _mm512_maskz_loadu_ps(m, x + q + offsets[t]), acc);
    }
    _mm512_mask_storeu_ps(out + q, m, acc);
    return;
  }
  scalar_tap_sum(x + stride * q, stride, offsets, weights, taps, bias, out + q, n - q);
}

}  // namespace

void tap_sum(const float* x, int64_t stride, const int64_t* offsets, const float* weights, int64_t taps, float bias,
             float* out, int64_t n) {
  if (n <= 0) return;
  if ((stride == 1 || stride == 2) && vector_isa() == VectorIsa::avx512) {
    return avx512_tap_sum(x, stride, offsets, weights, taps, bias, out, n);
  }
  scalar_tap_sum(x, stride, offsets, weights, taps, bias, out, n);
}

ColumnRange valid_columns(int64_t shift, int64_t stride, int64_t width, int64_t out_w) {
  const int64_t lo = shift >= 0 ? 0 : (-shift + stride - 1) / stride;
  const int64_t hi = std::min(out_w, width - shift <= 0 ? 0 : (width - 1 - shift) / stride + 1);
  return {std::min(lo, out_w), std::max(hi, std::min(lo, out_w))};
}

void strided_axpy(float a, const float* x, int64_t stride, float* y, int64_t n) { rows(Axpy{a}, x, stride, y, n); }

void strided_max(const float* x, int64_t stride, float* y, int64_t n) { rows(Max{}, x, stride, y, n); }

}  // namespace tilefuse::runtime
