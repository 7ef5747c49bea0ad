// A deep copy of a Graph (values, nodes, constants sharing their immutable data), so a pass
// pipeline can rewrite a copy while the original keeps serving the reference interpreter.
#pragma once

#include "ir/graph.h"

namespace tilefuse {

Graph clone_graph(const Graph& graph);

}  // namespace tilefuse
