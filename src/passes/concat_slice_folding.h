// Folds a Slice that takes back exactly one input of a Concat: Slice(Concat(x1, .., xn, axis))
// over [offset of xk, offset of xk + its length) on the Concat's axis, the whole of every other
// axis and step 1, is xk. Gated layers write this (torch.cat then chunk at the same boundary:
// `g, v = torch.cat([a, b], 1).chunk(2, 1)` is just a and b), and without the fold the Concat
// copies both halves into a new tensor only for the slices to read them back. A Concat that no
// slice needs any more is removed. Constant bounds and the Concat's dims along its axis must be
// static.
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns the number of Slices folded away.
int fold_slices_of_concats(Graph& graph);

}  // namespace tilefuse::passes
