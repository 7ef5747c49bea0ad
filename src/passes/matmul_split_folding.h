// Folds a Split of a product's columns into the product (MatMul, FusedMatMul or Gemm with a
// constant weight, then Reshapes that keep its last dim, then a Split along that dim): each part
// becomes its own product of the weight's columns for that part, so every part is written where
// its readers find it and no step copies the parts out of one output. GPT-2 computes Q, K and V
// as one [768, 2304] product and splits it this way. Conditions: f32, a rank-2 constant B (Gemm's
// transB, FusedMatMul's perm_b [1, 0] and a constant bias or C are sliced with it), a chain read
// by nothing else and not a graph output up to the Split, parts at least kMinPartWidth columns
// wide (a product of a few columns runs far below the engine's peak). A Reshape's target for a
// part is a constant, or computed from the original target where more than one of its dims is a
// symbol (a dynamic export's [batch, seq, 2304]).
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns the number of Splits folded away; shapes are re-inferred.
int fold_matmul_splits(Graph& graph);

}  // namespace tilefuse::passes
