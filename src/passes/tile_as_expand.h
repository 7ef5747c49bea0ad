// Repeats as broadcasts. Fusion reads an Expand of a kernel's input through an index map (a
// stride 0 on each broadcast axis), but a Tile is a copy of its own; so:
//   - Tile(x, repeats) with constant repeats becomes Reshape -> Expand -> Reshape: each repeated
//     axis d gets a new axis of length 1 before it, broadcast to the repeat count r and merged
//     back ([r, d] -> r * d, the same order as Tile's); `x.repeat(2, 1) + 1` went from three
//     steps to two (the Reshapes are views);
//   - an Expand whose result has its input's shape (PyTorch's repeat exports one, to a shape of
//     ones) is its input.
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns the number of Tiles and Expands rewritten.
int tile_as_expand(Graph& graph);

}  // namespace tilefuse::passes
