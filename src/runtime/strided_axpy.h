// y[i] += a * x[i * stride] for i < n: the inner loop of a depthwise convolution (one kernel tap
// over one output row). AVX-512 for strides 1 and 2 where the CPU has it (a stride-2 row is
// de-interleaved from two loads), scalar otherwise.
#pragma once

#include <cstdint>

namespace tilefuse::runtime {

void strided_axpy(float a, const float* x, int64_t stride, float* y, int64_t n);

}  // namespace tilefuse::runtime
