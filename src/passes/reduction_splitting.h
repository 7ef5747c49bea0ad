// Splits a reduction too long for one worker into partial reductions and a combine step, so that
// every worker of the team takes part. A kernel spreads its units over the workers, and a
// reduction has one unit per kept element (or column tile): a sum over all of f32[4096, 4096] is
// one unit, one worker, half the machine's bandwidth. Rewritten, x -> Reshape to [16, 256, 4096]
// -> the same reduction of each of the 16 slabs -> the reduction of the 16 partial results ->
// Reshape to the original result. Views inside kernels (fusion/iteration_space.h) keep the ops
// that produce x in the partial kernel. The split is a fact of the shape, never of the thread
// count, so results do not depend on how many workers run (and mean of equal slabs' means is the
// mean). A symbolic dim may be among the reduced ones (x.mean() under a dynamic batch): it counts
// as 1 towards the length, and the slab view copies it. Fused mode only.
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns how many reductions were split.
int split_long_reductions(Graph& graph);

}  // namespace tilefuse::passes
