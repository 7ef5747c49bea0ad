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

// Whether each input of the Concat is one contiguous block of its result.
bool inputs_are_blocks(const Node& concat) {
  const Value* out = concat.outputs[0];
  const int64_t axis = concat_axis(concat);
  if (axis < 0 || axis >= out->rank() || !is_static(out->shape)) return false;
  for (int64_t d = 0; d < axis; ++d) {
    if (out->shape[d].value() != 1) return false;
  }
  for (const Value* in : concat.inputs) {
    if (in == nullptr || !is_static(in->shape)) return false;
  }
  return true;
}

std::vector<Dim> contiguous_strides(const Shape& shape) {
  std::vector<Dim> strides(shape.size(), Dim(1));
  for (size_t k = shape.size(); k-- > 1;) strides[k - 1] = strides[k] * shape[k];
  return strides;
}

struct Placement {
  FusionPlan& plan;
  const Graph& graph;
  std::map<const Value*, size_t> written_by;  // step writing each value, kernels and library calls run every time
  std::set<const Value*> placed;               // inputs already inside another Concat's result

  bool distinct_and_written(const Node& concat) const {
    const std::vector<Value*>& inputs = concat.inputs;
    return std::all_of(inputs.begin(), inputs.end(), [&](const Value* in) {
      return written_by.count(in) && !placed.count(in) && std::count(inputs.begin(), inputs.end(), in) == 1;
    });
  }

  // The kernel step writing `part` for nobody but `concat` (its other readers are in the same
  // kernel), as a plain full-size output of its domain; or nullptr.
  PlanStep* sole_writer(const Value* part, const Node& concat) const {
    PlanStep& step = plan.steps[written_by.at(part)];
    if (step.kind != StepKind::Kernel || graph.is_output(part)) return nullptr;
    const FusedKernel& k = step.kernel;
    for (const Node* user : part->users) {
      if (user != &concat && std::find(k.nodes.begin(), k.nodes.end(), user) == k.nodes.end()) return nullptr;
    }
    const TensorAccess& access = k.space.access.at(part);
    const bool plain = access.level == Level::Full && access.offset == Dim(0) && part->shape == k.space.domain &&
                       access.strides == contiguous_strides(part->shape);
    return plain ? &step : nullptr;
  }

  // Each input's kernel stores it at the result's strides from its offset on the axis.
  bool place_strided_parts(const Node& concat) {
    const Value* out = concat.outputs[0];
    const int64_t axis = concat_axis(concat);
    if (axis < 0 || axis >= out->rank() || !is_static(out->shape)) return false;
    std::vector<PlanStep*> writers;
    for (const Value* in : concat.inputs) {
      PlanStep* writer = in != nullptr && is_static(in->shape) ? sole_writer(in, concat) : nullptr;
      if (writer == nullptr || std::find(writers.begin(), writers.end(), writer) != writers.end()) return false;
      writers.push_back(writer);
    }
    const std::vector<Dim> strides = contiguous_strides(out->shape);
    Dim start = 0;
    for (size_t i = 0; i < concat.inputs.size(); ++i) {
      const Value* in = concat.inputs[i];
      writers[i]->kernel.space.access[in] = {Level::Full, strides, start * strides[static_cast<size_t>(axis)]};
      start = start + in->shape[static_cast<size_t>(axis)];
    }
    return true;
  }
};

}  // namespace

bool is_concat_in_place(const PlanStep& step) {
  return step.kind == StepKind::View && step.node != nullptr && step.node->op == "Concat";
}

bool concat_parts_strided(const Node& concat) { return !inputs_are_blocks(concat); }

int64_t concat_input_offset(const Node& concat, size_t input) {
  if (concat_parts_strided(concat)) return 0;
  int64_t offset = 0;
  for (size_t i = 0; i < input; ++i) offset += num_elements(concat.inputs[i]->shape).value();
  return offset;
}

int place_concats_in_place(FusionPlan& plan, const Graph& graph) {
  const std::vector<bool> shape_only = find_shape_only_steps(plan);
  Placement placement{plan, graph, {}, {}};
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& step = plan.steps[i];
    if (shape_only[i]) continue;
    if (step.kind == StepKind::Kernel) {
      for (const Value* v : step.kernel.outputs) placement.written_by[v] = i;
    } else if (step.kind == StepKind::LibraryCall) {
      for (const Value* v : step.node->outputs) placement.written_by[v] = i;
    }
  }
  int made = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    PlanStep& step = plan.steps[i];
    if (step.kind == StepKind::Kernel || step.kind == StepKind::View || step.node->op != "Concat") continue;
    if (shape_only[i] || !placement.distinct_and_written(*step.node)) continue;
    if (!inputs_are_blocks(*step.node) && !placement.place_strided_parts(*step.node)) continue;
    placement.placed.insert(step.node->inputs.begin(), step.node->inputs.end());
    step.kind = StepKind::View;
    ++made;
  }
  return made;
}

}  // namespace tilefuse::fusion
