// Conversions between the float storage types (f32, f16, bf16) over arrays, vectorised: the Cast
// steps outside kernels, and the operands and results of f16/bf16 products, which the GEMM
// engine computes in f32 (runtime/half_precision_call.h). Bit for bit ir/half.h's conversions
// (round to nearest even, quiet NaNs), as the reference interpreter converts.
#pragma once

#include <cstdint>

#include "ir/dtype.h"

namespace tilefuse::runtime {

// Whether convert_floats takes this pair: both types among f32, f16 and bf16.
bool converts_floats(DType from, DType to);

// to[i] = from[i] converted, for i in [begin, end); `from` and `to` are whole arrays of their
// types. AVX-512 or AVX2 with F16C where the CPU has them (vector_isa() caps it), scalar otherwise.
void convert_floats(const void* from, DType from_type, void* to, DType to_type, int64_t begin, int64_t end);

}  // namespace tilefuse::runtime
