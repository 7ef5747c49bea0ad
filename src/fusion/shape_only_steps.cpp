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

// Whether `node`'s results are fixed once the shapes are, given the values already known to be;
// if so, its outputs join them.
bool take_if_shape_only(const Node& node, std::set<const Value*>& known) {
  if (is_random(node.op)) return false;
  auto is_known = [&](const Value* v) { return v == nullptr || v->is_constant() || known.count(v); };
  // A node with no inputs at all (Constant that import did not fold) is fixed as well.
  if (!reads_shape_only(node.op) && !std::all_of(node.inputs.begin(), node.inputs.end(), is_known)) return false;
  known.insert(node.outputs.begin(), node.outputs.end());
  return true;
}

}  // namespace

std::set<const Node*> shape_only_nodes(const std::vector<Node*>& nodes) {
  std::set<const Node*> out;
  std::set<const Value*> known;  // values fixed by the shapes
  for (const Node* n : nodes) {
    if (take_if_shape_only(*n, known)) out.insert(n);
  }
  return out;
}

std::vector<bool> find_shape_only_steps(const FusionPlan& plan) {
  std::vector<bool> shape_only(plan.steps.size(), false);
  std::set<const Value*> known;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& step = plan.steps[i];
    shape_only[i] = step.kind != StepKind::Kernel && take_if_shape_only(*step.node, known);
  }
  return shape_only;
}

int64_t run_time_launches(const FusionPlan& plan, const std::vector<bool>& shape_only) {
  int64_t n = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) n += plan.steps[i].kind != StepKind::View && !shape_only[i];
  return n;
}

}  // namespace tilefuse::fusion
