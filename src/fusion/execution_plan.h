// The one way a graph is prepared and planned for execution: a private copy of the graph with
// its composite ops decomposed (passes/decompose_composites.h), then the fusion plan of that copy
// with the built-in patterns. The executor runs it and `tilefuse inspect` reports it, so what a
// user inspects is exactly what runs.
#pragma once

#include "fusion/fusion_plan.h"
#include "ir/graph.h"

namespace tilefuse::fusion {

// The plan's steps point at nodes and values of `graph`, so the two live together. Moving keeps
// those pointers valid (a Graph owns its nodes and values on the heap); copying is not possible.
struct ExecutionPlan {
  Graph graph;
  FusionPlan plan;
};

// `fuse` false gives the unfused baseline: one kernel per op, the same code generator.
ExecutionPlan plan_for_execution(const Graph& graph, bool fuse);

}  // namespace tilefuse::fusion
