// The vectorised row loops of the runtime's direct kernels (depthwise convolution, max pooling):
// one kernel tap applied along one output row, y[i] op= x[i * stride] for i < n. AVX-512 for
// strides 1 and 2 where the CPU has it (a stride-2 row is de-interleaved from two loads), scalar
// otherwise.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace tilefuse::runtime {

// max(x, y), a NaN in either kept (the reference's MaxPool rule): max_ps(x, y) is (x > y ? x :
// y), which keeps a NaN y; a NaN x is put back by the blend. For AVX-512 kernels.
__attribute__((target("avx512f"))) inline __m512 max_keeping_nan(__m512 x, __m512 y) {
  const __m512 larger = _mm512_mask_max_ps(y, static_cast<__mmask16>(0xffff), x, y);
  return _mm512_mask_mov_ps(larger, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}

// The output columns [lo, hi) of a kernel tap whose input column, ox * stride + shift, lies in
// [0, width): the rest of the row reads padding.
struct ColumnRange {
  int64_t lo, hi;
};
ColumnRange valid_columns(int64_t shift, int64_t stride, int64_t width, int64_t out_w);

// Every kernel tap that reads inside the input for output row `oy` of a 2-D window (a struct
// with height, width, kh, kw, out_w, stride_h/w, dil_h/w, pad_top and pad_left):
// fn(tap, offset, lo, hi) with tap = i * kw + j, its valid output columns [lo, hi) (not empty)
// and the plane offset of the input that output column lo reads (column stride: stride_w).
template <typename Window, typename Fn>
void for_each_tap_run(const Window& s, int64_t oy, Fn&& fn) {
  for (int64_t i = 0; i < s.kh; ++i) {
    const int64_t y = oy * s.stride_h - s.pad_top + i * s.dil_h;
    if (y < 0 || y >= s.height) continue;
    for (int64_t j = 0; j < s.kw; ++j) {
      const int64_t shift = j * s.dil_w - s.pad_left;  // input column = ox * stride + shift
      const auto [lo, hi] = valid_columns(shift, s.stride_w, s.width, s.out_w);
      if (hi > lo) fn(i * s.kw + j, y * s.width + lo * s.stride_w + shift, lo, hi);
    }
  }
}

// y[i] += a * x[i * stride]
void strided_axpy(float a, const float* x, int64_t stride, float* y, int64_t n);

// out[q] = bias + sum over taps t of weights[t] * x[q * stride + offsets[t]], for q < n: all
// taps of a direct convolution over a flattened (padded) plane, each output vector kept in a
// register across the taps and stored once.
void tap_sum(const float* x, int64_t stride, const int64_t* offsets, const float* weights, int64_t taps, float bias,
             float* out, int64_t n);

// y[i] = max(y[i], x[i * stride]), NaN if either is NaN (as PyTorch's and NumPy's max).
void strided_max(const float* x, int64_t stride, float* y, int64_t n);

}  // namespace tilefuse::runtime
