// Folds a Transpose that feeds a MatMul into it (Transpose + MatMul -> FusedMatMul with perm_a or
// perm_b): the GEMM engine reads the operand through strides instead of a kernel copying it to a
// new layout first. Attention exports transpose Q, K and V into heads this way
// ([B, S, H, D] -> [B, H, S, D], and K on to [B, H, D, S]). Conditions: an f32 Transpose read by
// nothing else (and not a graph output) that keeps the source's innermost dim as the operand's
// rows or columns, and matrix operands (rank >= 2) on both sides.
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns the number of Transposes folded away; shapes are re-inferred.
int fold_matmul_transposes(Graph& graph);

}  // namespace tilefuse::passes
