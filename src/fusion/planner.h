// The fusion planner: turns pattern matches into fusion candidates (producer/consumer pairs),
// orders them by benefit (bytes of memory traffic the fusion saves), and merges greedily over a
// few rounds while each merge stays legal: no cycle through outside nodes, one iteration space
// (see iteration_space.h), caps on ops and inputs per kernel. Then views: a Reshape-like view
// between two kernels joins them when one iteration space spans both shapes. Then siblings: kernels that read the
// same full-size tensor and can share one iteration space become one multi-output kernel, which
// reads the tensor once. Compute-bound library calls (MatMul/Gemm) are never merged into
// kernels; their elementwise epilogues fuse after them.
#pragma once

#include "fusion/fusion_plan.h"
#include "ir/graph.h"
#include "passes/pattern_registry.h"

namespace tilefuse::fusion {

struct PlannerOptions {
  bool fuse = true;              // false: one kernel per op (the `unfused` baseline)
  bool fuse_siblings = true;     // kernels reading the same full-size tensor merge (when `fuse`)
  bool fuse_views = true;        // a view between two kernels joins them (when `fuse`)
  int max_ops_per_kernel = 64;
  int max_inputs_per_kernel = 16;
  int max_rounds = 10;
};

FusionPlan plan_fusion(const Graph& graph, const passes::PatternRegistry& patterns,
                       const PlannerOptions& options = {});

}  // namespace tilefuse::fusion
