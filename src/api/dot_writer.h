// Graphviz rendering of a planned graph (fusion/execution_plan.h), so a reader sees what fused:
// the ops of each fused kernel sit in one cluster labelled with the kernel's name and share its
// fill colour; library calls (BLAS), host ops (reference kernels) and views (no data moves) each
// have their own style, and ops the plan never runs (shape computations) are dotted. Graph
// inputs, constants and outputs are distinct nodes, edges carry the type of their tensor, and a
// legend explains the styles.
//   tilefuse inspect model.onnx --dot plan.dot && dot -Tsvg plan.dot -o plan.svg
#pragma once

#include <string>

#include "fusion/execution_plan.h"

namespace tilefuse::api {

std::string plan_to_dot(const fusion::ExecutionPlan& planned);

}  // namespace tilefuse::api
