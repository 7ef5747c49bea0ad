// Constant folding: a node whose inputs are all constants is evaluated once (by the reference
// interpreter) and its outputs become constants. This is what folds the Shape -> Gather ->
// Concat -> Reshape subgraphs PyTorch's exporter writes, when the shapes are static.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace tilefuse::passes {

struct ConstantFoldingOptions {
  // Outputs larger than this many elements are not materialised (they would bloat the model).
  int64_t max_output_elements = int64_t{1} << 20;
};

// Returns the number of nodes folded. Dead nodes left behind are removed.
int fold_constants(Graph& graph, const ConstantFoldingOptions& options = {});

}  // namespace tilefuse::passes
