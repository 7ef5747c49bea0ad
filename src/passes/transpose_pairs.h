// Transpose(Transpose(x, p), q) as one Transpose(x, r), r[i] = p[q[i]], or as x itself where r
// keeps every axis in place. Rewrites leave such pairs behind (a LayerNorm over a transposed
// tensor's last axis computed in the source's layout, decompose_composites.h, returns a
// Transpose that the model's own Transpose back then undoes); fused, the pair was a copy kernel.
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns the number of outer Transposes rewritten.
int fold_transpose_pairs(Graph& graph);

}  // namespace tilefuse::passes
