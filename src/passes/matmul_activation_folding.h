// Folds the activation after a MatMul into it (MatMul [+ bias] + activation -> FusedMatMul with
// an `activation` attribute): the GEMM engine then applies it in its store epilogue, while the
// output tile is in registers, instead of a separate kernel reading the whole product back. The
// activations: Relu, Clip (constant bounds), HardSigmoid, HardSwish, Gelu (exact form), and GELU
// as PyTorch exports it before opset 20, five ops:
//   Mul(Mul(x, S), 0.5)  (TorchScript),  Mul(x, Mul(S, 0.5))  (dynamo),  Mul(Mul(x, 0.5), S)
// where S = Add(Erf(Div(x, sqrt 2)), 1) (Div by sqrt 2 or Mul by 1 / sqrt 2, any operand
// order). Conditions: an f32 MatMul of two matrices (rank >= 2) or a FusedMatMul, without an
// activation, whose output is no graph output and is read by the activation's ops alone. Run it
// after MatMul bias folding: the bias Add sits between the two.
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns the number of activations folded away; shapes are re-inferred.
int fold_matmul_activations(Graph& graph);

}  // namespace tilefuse::passes
