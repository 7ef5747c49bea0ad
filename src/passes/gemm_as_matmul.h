// Rewrites a Gemm that is a plain product plus a bias vector as the MatMul forms the other fused
// passes work on: Gemm(A, B, c) with alpha 1, no transA, and c absent or a constant of N values
// along the columns at beta 1 becomes FusedMatMul(A, B, c as [N]) (perm_b [1, 0] for transB), or
// a MatMul when there is neither c nor transB. The GEMM engine computes both forms alike; the
// point is that an activation, a result transpose or a Split after the product then folds into it
// (GPT-2's Linear layers export as Gemm, its GELU after one of them).
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns the number of Gemms rewritten; shapes are re-inferred.
int express_gemms_as_matmuls(Graph& graph);

}  // namespace tilefuse::passes
