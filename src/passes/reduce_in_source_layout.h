// A reduction of a transposed tensor reduces the tensor itself: Reduce(f(Transpose(x, perm)),
// axes) becomes Reduce(f(x), perm[axes]), then the result is put back in the order the graph
// asked for (a Reshape where only size-1 axes move, else a Transpose of the small result). f is a
// chain of pointwise ops whose other operands are single values, each read by the next alone.
// Fused, the kernel then walks x in its own memory order, its loads contiguous, instead of through
// the transpose's strides: `(x.transpose(1, 2) + 1).sigmoid().sum(1)` over f32[8, 512, 512] read
// a 2 KiB stride per element of a row.
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns the number of reductions rewritten.
int reduce_in_source_layout(Graph& graph);

}  // namespace tilefuse::passes
