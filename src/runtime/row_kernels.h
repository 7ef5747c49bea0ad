// The vectorised row loops of the runtime's direct kernels (depthwise convolution, max pooling):
// one kernel tap applied along one output row, y[i] op= x[i * stride] for i < n. AVX-512 for
// strides 1 and 2 where the CPU has it (a stride-2 row is de-interleaved from two loads), scalar
// otherwise.
#pragma once

#include <cstdint>

namespace tilefuse::runtime {

// The output columns [lo, hi) of a kernel tap whose input column, ox * stride + shift, lies in
// [0, width): the rest of the row reads padding.
struct ColumnRange {
  int64_t lo, hi;
};
ColumnRange valid_columns(int64_t shift, int64_t stride, int64_t width, int64_t out_w);

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
