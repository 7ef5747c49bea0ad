// A pointwise op applied to a Concat is applied to each of its parts: y = f(Concat(a, b), c)
// becomes Concat(f(a, c), f(b, c)) when the Concat feeds nothing else and every other operand of
// f is the same along the concatenated axis (a scalar, a bias of another axis), and each part is
// a graph input or read by the Concat alone. Each part's op then fuses into the kernel that
// writes the part, and the parts are written straight into the result (fusion/concat_in_place.h):
// `torch.cat([x, x.exp()], -1) * 2` was a kernel, a copy of both parts and a kernel over the
// whole result (80 MB moved for an 8 MB x); it is one kernel that reads x once and writes both
// halves in place. Chains (Concat, then Mul, then Add) move through one op at a time.
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns the number of ops moved into the parts.
int pointwise_through_concat(Graph& graph);

}  // namespace tilefuse::passes
