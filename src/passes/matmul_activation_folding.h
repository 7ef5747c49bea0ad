// Folds the activation after a MatMul into it (MatMul [+ bias] + activation -> FusedMatMul with
// an `activation` attribute): the GEMM engine then applies it in its store epilogue, while the
// output tile is in registers, instead of a separate kernel reading the whole product back. The
// activations: Relu, Clip (constant bounds), HardSigmoid, HardSwish, Gelu (exact or tanh), and
// GELU or its tanh approximation written out in elementwise ops, as PyTorch exports them before
// opset 20 (TorchScript's Mul(Mul(x, S), 0.5), dynamo's Mul(x, Mul(S, 0.5)), GPT-2's
// 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * Pow(x, 3)))), ...). Those are recognised by
// what they compute, not by their arrangement: the ops that compute a function of each product
// element alone (x, scalar constants and each other in) are evaluated by the reference
// interpreter on points across the curve and compared with each GELU. Conditions: an f32 MatMul
// of two matrices (rank >= 2) or a FusedMatMul, without an activation, whose output is no graph
// output and is read by the activation's ops alone. Run it after MatMul bias folding: the bias
// Add sits between the two.
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns the number of activations folded away; shapes are re-inferred.
int fold_matmul_activations(Graph& graph);

}  // namespace tilefuse::passes
