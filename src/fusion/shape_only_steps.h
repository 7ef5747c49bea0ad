// Steps whose results depend on the input shapes but not on any input's data: Shape and Size of
// any tensor, and every deterministic op all of whose inputs are constants or such results. A
// model exported with dynamic axes computes its reshape targets, position ids and causal masks
// this way (Shape -> Gather -> Range -> Equal -> Where ...). Constant folding cannot take them
// (the shapes are symbols at import), but once the symbols are bound they are fixed: the
// executor computes them once per set of input shapes, so they leave the run path.
#pragma once

#include <set>
#include <vector>

#include "fusion/fusion_plan.h"

namespace tilefuse::fusion {

// The nodes (in topological order) that depend on shapes only. The planner keeps them out of
// kernels, so that they stay steps the executor computes once per shape.
std::set<const Node*> shape_only_nodes(const std::vector<Node*>& nodes);

// Per step of `plan`: true for a host, library or view step that depends on shapes only.
// Generated kernels are never marked (they run on every call).
std::vector<bool> find_shape_only_steps(const FusionPlan& plan);

// The launches a run makes: non-view steps that are not shape-only.
int64_t run_time_launches(const FusionPlan& plan, const std::vector<bool>& shape_only);

}  // namespace tilefuse::fusion
