#include "fusion/shape_only_steps.h"

#include <algorithm>
#include <set>
#include <string_view>

namespace tilefuse::fusion {

namespace {

// Ops whose outputs are not a function of their inputs.
bool is_random(std::string_view op) {
  return op.starts_with("Random") || op == "Bernoulli" || op == "Multinomial";
}

// Shape and Size read a tensor's dims, never its data.
bool reads_shape_only(std::string_view op) { return op == "Shape" || op == "Size"; }

}  // namespace

std::vector<bool> find_shape_only_steps(const FusionPlan& plan) {
  std::vector<bool> shape_only(plan.steps.size(), false);
  std::set<const Value*> known;  // values fixed by the shapes
  auto is_known = [&](const Value* v) { return v == nullptr || v->is_constant() || known.count(v); };
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& step = plan.steps[i];
    if (step.kind == StepKind::Kernel || is_random(step.node->op)) continue;
    const Node& node = *step.node;
    // A node with no inputs at all (Constant that import did not fold) is fixed as well.
    if (!reads_shape_only(node.op) && !std::all_of(node.inputs.begin(), node.inputs.end(), is_known)) continue;
    shape_only[i] = true;
    known.insert(node.outputs.begin(), node.outputs.end());
  }
  return shape_only;
}

int64_t run_time_launches(const FusionPlan& plan, const std::vector<bool>& shape_only) {
  int64_t n = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) n += plan.steps[i].kind != StepKind::View && !shape_only[i];
  return n;
}

}  // namespace tilefuse::fusion
