#include "fusion/concat_in_place.h"

#include <algorithm>
#include <map>
#include <set>

#include "fusion/shape_only_steps.h"

namespace tilefuse::fusion {

namespace {

int64_t concat_axis(const Node& concat) {
  const int64_t rank = concat.outputs[0]->rank();
  const int64_t axis = concat.attr_int("axis", 0);
  return axis < 0 ? axis + rank : axis;
}

bool is_static(const Value* v) {
  for (const Dim& d : v->shape) {
    if (!d.is_const()) return false;
  }
  return true;
}

// Whether each input of the Concat is one contiguous block of its result.
bool inputs_are_blocks(const Node& concat) {
  const Value* out = concat.outputs[0];
  const int64_t axis = concat_axis(concat);
  if (axis < 0 || axis >= out->rank() || !is_static(out)) return false;
  for (int64_t d = 0; d < axis; ++d) {
    if (out->shape[d].value() != 1) return false;
  }
  for (const Value* in : concat.inputs) {
    if (in == nullptr || !is_static(in)) return false;
  }
  return true;
}

}  // namespace

bool is_concat_in_place(const PlanStep& step) {
  return step.kind == StepKind::View && step.node != nullptr && step.node->op == "Concat";
}

int64_t concat_input_offset(const Node& concat, size_t input) {
  int64_t offset = 0;
  for (size_t i = 0; i < input; ++i) offset += num_elements(concat.inputs[i]->shape).value();
  return offset;
}

int place_concats_in_place(FusionPlan& plan) {
  const std::vector<bool> shape_only = find_shape_only_steps(plan);
  // The step that writes each value, where it is a kernel or a library call computed on every run.
  std::map<const Value*, size_t> written_by;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& step = plan.steps[i];
    if (shape_only[i]) continue;
    if (step.kind == StepKind::Kernel) {
      for (const Value* v : step.kernel.outputs) written_by[v] = i;
    } else if (step.kind == StepKind::LibraryCall) {
      for (const Value* v : step.node->outputs) written_by[v] = i;
    }
  }
  std::set<const Value*> placed;  // inputs already inside another Concat's result
  int made = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    PlanStep& step = plan.steps[i];
    if (step.kind == StepKind::Kernel || step.kind == StepKind::View || step.node->op != "Concat") continue;
    if (shape_only[i] || !inputs_are_blocks(*step.node)) continue;
    const std::vector<Value*>& inputs = step.node->inputs;
    const bool all_written = std::all_of(inputs.begin(), inputs.end(), [&](const Value* in) {
      return written_by.count(in) && !placed.count(in) && std::count(inputs.begin(), inputs.end(), in) == 1;
    });
    if (!all_written) continue;
    placed.insert(inputs.begin(), inputs.end());
    step.kind = StepKind::View;
    ++made;
  }
  return made;
}

}  // namespace tilefuse::fusion
