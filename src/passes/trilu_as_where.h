// Trilu (torch.triu / torch.tril: causal masks, upper-triangular scores) as a Where between the
// input and zero under a constant mask of the last two dims, so that it runs in a generated
// kernel and fuses with its neighbours: on the reference kernel, triu(x, 1) + x of
// f32[8, 512, 512] took 17.6 ms, ONNX Runtime 0.57. Upper keeps the elements with
// column - row >= k, lower those with column - row <= k. Left alone: last two dims that are not
// known (the mask is built when the model is planned), masks over 16M elements, and a k that is
// not a constant.
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns the number of Trilu nodes rewritten.
int trilu_as_where(Graph& graph);

}  // namespace tilefuse::passes
