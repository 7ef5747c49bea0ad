// Reading If's and Loop's subgraphs (ops/control_flow_ops.cpp describes their operands).
#pragma once

#include <string_view>

#include "ir/graph.h"

namespace tilefuse {

// The graph attribute `attribute` of `node`; UserError naming the node if it has none.
const Graph& subgraph(const Node& node, std::string_view attribute);

}  // namespace tilefuse
