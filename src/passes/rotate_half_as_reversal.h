// Rotary embeddings' rotate_half as index maps. Llama-style attention computes
// `q * cos + rotate_half(q) * sin` with rotate_half(x) = cat(-x[..., h:], x[..., :h]); exported,
// that is two Slices, a Neg and a Concat, which fusion cannot take into one kernel (a Concat
// copies). The same values are x's halves in reverse order, signed: split x's axis into
// [2, h], reverse the new axis of 2 (a Slice of step -1), multiply by [-1, 1] and merge back:
//   Concat(Neg(Slice(x, h:2h)), Slice(x, 0:h))  ->  Reshape(Mul(Slice(Reshape(x, [.., 2, h]),
//                                                   reversed), [[-1], [1]]), [.., 2h])
// Reshapes are views, the reversed Slice is an index map, the Mul is elementwise: the rotation
// and what reads it become one kernel. Either half may or may not be negated; the halves must
// be x's exactly, on an axis of static even length, with every dim after it static.
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns the number of Concats rewritten.
int rotate_half_as_reversal(Graph& graph);

}  // namespace tilefuse::passes
