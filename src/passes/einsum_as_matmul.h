// Einsum of one or two float operands as the ops it stands for, so that its contractions run on
// the GEMM engine instead of the reference kernel's loops (PyTorch's
// `einsum("bsd,df->bsf")` of f32[8, 128, 768] by [768, 768] took 2.1 s there, its MatMul about
// 10 ms). For two operands A and B, every label is one of
//   batch: in A, B and the output;   m: in A and the output;   n: in B and the output;
//   k: in A and B only (contracted);  summed: in one operand only (a ReduceSum of it first).
// A is arranged as [batch, m..., 1 per n but the last, M, K] and B as [batch, 1 per m but the
// last, n..., N, K], where M and N are the last m and n labels (a size-1 dim where there are
// none) and K the k labels merged into one (a Reshape; a size-1 dim for an outer product). The
// extra m and n labels are batch dims of the product, which MatMul broadcasts; B goes in
// transposed (fold_matmul_transposes makes that its operand's strides), and a last Transpose
// puts the result's labels in the output's order. One operand: ReduceSum, then Transpose.
// Left on the reference kernel: three or more operands, a label repeated within one operand (a
// diagonal), integer and f64 operands.
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns the number of Einsum nodes rewritten.
int einsum_as_matmul(Graph& graph);

}  // namespace tilefuse::passes
