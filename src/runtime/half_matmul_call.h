// MatMul, FusedMatMul and Gemm on f16 or bf16 tensors (a model exported in half precision), on
// the GEMM engine instead of the reference interpreter's loops: the f32 call (matmul_call.h) is
// prepared on a copy of the node whose constants are converted to f32 once (a constant weight is
// then packed as for an f32 model); a run converts the other operands to f32 on the team, runs
// that call and converts the product to the output's type. bf16 operands multiply as bf16 pairs
// (exactly their values, summed in f32); f16 ones in f32, or in bf16 under --precision bf16.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

// True for a MatMul, FusedMatMul or Gemm whose float operands and output are all f16, or all bf16.
bool half_matmul_call_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_half_matmul_call(const Node& node, const GemmBlocking& blocking,
                                                      Precision precision);

}  // namespace tilefuse::runtime
