// Control flow that compiling settles: an If whose condition is known becomes the nodes of the
// branch it takes; a Loop whose trip count is known (at most kMaxUnrolledTrips) and whose body
// never stops it early becomes its body repeated, each iteration's scan outputs stacked with
// Unsqueeze and Concat. Both then fuse with the graph around them. Control flow left after this
// runs as a host step on the reference interpreter (correct, not fast).
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace tilefuse::passes {

inline constexpr int64_t kMaxUnrolledTrips = 64;

// Returns the number of Ifs and Loops replaced; shapes are re-inferred.
int inline_control_flow(Graph& graph);

}  // namespace tilefuse::passes
