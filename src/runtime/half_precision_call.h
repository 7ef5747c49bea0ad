// MatMul, FusedMatMul, Gemm, Conv and FusedConv on f16 or bf16 tensors (a model exported in half
// precision), on the GEMM engine instead of the reference interpreter's loops: the f32 call
// (matmul_call.h, conv_gemm.h) is prepared on a copy of the node whose constants are converted to
// f32 once (a constant weight is then packed as for an f32 model); a run converts the other
// operands to f32 on the team, runs that call and converts the result to the output's type. A
// product of bf16 operands multiplies them as bf16 pairs (exactly their values, summed in f32);
// the rest computes in f32, or in bf16 under --precision bf16.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

// True for one of those ops whose float operands and output are all f16, or all bf16 (and 1 or 2
// spatial dims for a convolution).
bool half_precision_call_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_half_precision_call(const Node& node, const GemmBlocking& blocking,
                                                         Precision precision);

}  // namespace tilefuse::runtime
