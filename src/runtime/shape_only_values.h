// Computes a plan's shape-only steps (fusion/shape_only_steps.h) for one set of input shapes,
// with the reference kernels, when the executor prepares those shapes. Their results are kept
// with the prepared shapes and read by the steps that run, which then never recompute them.
#pragma once

#include <functional>
#include <map>
#include <vector>

#include "fusion/fusion_plan.h"
#include "ir/tensor.h"

namespace tilefuse::runtime {

using ValueShapes = std::map<const Value*, std::vector<int64_t>>;
using ShapeOnlyValues = std::map<const Value*, Tensor>;

// `shape_only` from find_shape_only_steps; `shapes`: the concrete dims of every value the plan
// reads or writes; `root`: the value whose bytes a view's output is. Returns the outputs of
// every shape-only step that is not a view. Throws UserError when an op fails or a result's shape
// is not the planned one.
ShapeOnlyValues compute_shape_only_values(const fusion::FusionPlan& plan, const std::vector<bool>& shape_only,
                                          const ValueShapes& shapes,
                                          const std::function<const Value*(const Value*)>& root);

}  // namespace tilefuse::runtime
