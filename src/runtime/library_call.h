// Compute-bound ops the executor hands to a library instead of generating code for them:
// MatMul, Gemm and Conv (through im2col, conv_gemm.h) on f32 through OpenBLAS's sgemm, writing
// straight into the executor's buffer.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace tilefuse::runtime {

// True if `node` runs through the BLAS path (MatMul/Gemm on f32); other library ops and dtypes
// run on the host (reference) kernels.
bool blas_supports(const Node& node);

// Computes node into `output` (preallocated with the right shape). `threads` caps the BLAS's own
// thread pool to the device limit.
void run_blas(const Node& node, const std::vector<Tensor>& inputs, Tensor& output, int threads);

}  // namespace tilefuse::runtime
