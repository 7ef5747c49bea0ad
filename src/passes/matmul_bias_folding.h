// Folds the Add of a constant bias vector into the MatMul before it (MatMul + Add -> FusedMatMul
// with a bias input):
// the GEMM engine then adds the bias in its store epilogue, while the output tile is in cache,
// instead of a separate kernel reading the whole output back. PyTorch exports every nn.Linear on
// a 3-D input this way. Conditions: an f32 MatMul with a matrix B whose only reader is the Add
// (and not a graph output), and a constant bias of N values broadcast along the last dim only.
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns the number of Adds folded away; shapes are re-inferred.
int fold_matmul_biases(Graph& graph);

}  // namespace tilefuse::passes
