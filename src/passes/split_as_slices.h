// Rewrites a Split into one Slice per part: Slice(x, [start], [end], [axis]) with constant
// bounds. Fusion takes a constant Slice of a kernel's input as a load through an index map
// (fusion/iteration_space.h), so a kernel reads its part of x where it lies; a Split copied every
// part into a tensor of its own first, a pass over x for nothing (`a, b = torch.split(x * 2, n,
// 1)` then `a * b`: three steps became two). A part that nothing fuses with runs as a strided
// copy, as the Split did. The parts' lengths along the axis must be static.
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns the number of Splits rewritten.
int split_as_slices(Graph& graph);

}  // namespace tilefuse::passes
