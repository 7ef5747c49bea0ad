// MatMul (numpy broadcasting over batch dims, 1-D operands) and Gemm (transA/transB, alpha,
// beta, broadcast C) on f32 as GEMM problems: transposed operands are strides, a constant B is
// packed once, a batch is one engine call, and a C that is a row or column vector is the bias of
// the engine's epilogue instead of a copy.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

bool matmul_call_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_matmul_call(const Node& node, const GemmBlocking& blocking,
                                                 Precision precision = Precision::f32);

}  // namespace tilefuse::runtime
