// Finds every occurrence of a Pattern in a Graph: walks the graph in data-flow order, tries each
// node as the pattern's anchor, and extends along the pattern's edges (to producers or users)
// with backtracking until the whole pattern is matched or fails.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "passes/pattern.h"

namespace tilefuse::passes {

struct Match {
  const Pattern* pattern = nullptr;
  std::vector<Node*> nodes;  // nodes[i] matched pattern->nodes[i]
};

std::vector<Match> match_pattern(const Graph& graph, const Pattern& pattern);

}  // namespace tilefuse::passes
