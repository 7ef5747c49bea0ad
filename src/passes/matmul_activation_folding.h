// Folds the activation after a MatMul into it (MatMul [+ bias] + activation -> FusedMatMul with
// an `activation` attribute): the GEMM engine then applies it in its store epilogue, while the
// output tile is in registers, instead of a separate kernel reading the whole product back. The
// activations: Relu, Clip (constant bounds), HardSigmoid, HardSwish, Sigmoid, Gelu (exact or
// tanh), and GELU, its tanh approximation and SiLU written out in elementwise ops, as PyTorch
// exports them (passes/written_activation.h: recognised by what they compute, not by how their
// ops are arranged), directly after the product or after Reshapes of it. Conditions: an f32
// MatMul of two matrices (rank >= 2) or a FusedMatMul, without an activation, whose output is no
// graph output and is read by the activation's ops (or the Reshapes) alone. Run it after MatMul
// bias folding: the bias Add sits between the two.
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns the number of activations folded away; shapes are re-inferred.
int fold_matmul_activations(Graph& graph);

}  // namespace tilefuse::passes
