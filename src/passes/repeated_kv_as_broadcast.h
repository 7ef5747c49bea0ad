// Grouped-query attention's repeated keys and values as a broadcast batch. Llama-style models
// with fewer key/value heads than query heads repeat each key/value head n times before the
// attention products (repeat_kv: x[:, :, None].expand(..., n, ...).reshape(...)); exported, that
// is Unsqueeze -> Expand -> Reshape, and the Expand is written out in full before each product.
// A MatMul broadcasts its batch dims, so the repeat can be a batch dim of size 1 instead:
//   MatMul(a, [Transpose] Reshape(Expand(Unsqueeze(x, g))))
//     -> Reshape(MatMul(Reshape(a, [.., kv_heads, n, ..]), [Transpose'] Unsqueeze(x, g)))
// where the Reshape merged the new axis g with the heads before it and a Transpose may swap the
// last two axes (K^T). Nothing is copied; each of the n query heads of a group reads its key
// or value head in place. Static dims only.
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns the number of MatMuls rewritten.
int repeated_kv_as_broadcast(Graph& graph);

}  // namespace tilefuse::passes
