// Folds the Transposes around a MatMul into it: one that feeds it (Transpose + MatMul ->
// FusedMatMul with perm_a or perm_b), so the GEMM engine reads the operand through strides instead
// of a kernel copying it to a new layout first, and one that reads its result (MatMul + Transpose
// -> FusedMatMul with perm_y), so the engine writes each row of the product where the transposed
// tensor keeps it. Attention exports transpose Q, K and V into heads this way ([B, S, H, D] ->
// [B, H, S, D], and K on to [B, H, D, S]) and the heads' outputs back ([B, H, S, D] ->
// [B, S, H, D]). Conditions: f32, matrix operands (rank >= 2) on both sides, and a Transpose read
// by nothing else (and, on an operand, not a graph output); on an operand it keeps the source's
// innermost dim as the operand's rows or columns, on the result it keeps the last dim last.
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns the number of Transposes folded away; shapes are re-inferred.
int fold_matmul_transposes(Graph& graph);

}  // namespace tilefuse::passes
