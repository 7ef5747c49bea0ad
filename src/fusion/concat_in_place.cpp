#include "fusion/concat_in_place.h"

#include <algorithm>
#include <map>
#include <optional>
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

// Whether every dim of `shape` from `axis` on is a constant.
bool constant_from(const Shape& shape, int64_t axis) {
  return std::all_of(shape.begin() + axis, shape.end(), [](const Dim& d) { return d.is_const(); });
}

std::vector<Dim> contiguous_strides(const Shape& shape) {
  std::vector<Dim> strides(shape.size(), Dim(1));
  for (size_t k = shape.size(); k-- > 1;) strides[k - 1] = strides[k] * shape[k];
  return strides;
}

struct Placement {
  FusionPlan& plan;
  const Graph& graph;
  std::map<const Value*, size_t> written_by;  // step writing each value on every run (not shape-only)
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

  // Each input's kernel stores it at the result's strides from its offset on the axis. Dims
  // before the axis may be symbolic (a dynamic batch): the offsets lie along constant dims.
  bool place_strided_parts(const Node& concat) {
    const Value* out = concat.outputs[0];
    const int64_t axis = concat_axis(concat);
    if (axis < 0 || axis >= out->rank() || !constant_from(out->shape, axis)) return false;
    std::vector<PlanStep*> writers;
    for (const Value* in : concat.inputs) {
      PlanStep* writer = in != nullptr && constant_from(in->shape, axis) ? sole_writer(in, concat) : nullptr;
      if (writer == nullptr) return false;
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

namespace {

// Where `inner`'s inputs begin among `outer`'s, when they are a consecutive run of them.
std::optional<size_t> run_start(const Node& inner, const Node& outer) {
  const std::vector<Value*>& run = inner.inputs;
  const std::vector<Value*>& all = outer.inputs;
  auto at = std::search(all.begin(), all.end(), run.begin(), run.end());
  if (run.empty() || at == all.end()) return std::nullopt;
  return static_cast<size_t>(at - all.begin());
}

// Whether the Concat views `inner` and `outer` are one a run of the other's blocks, `inner` the
// smaller (or, as large, the later in the plan).
bool is_run_of(const Node& inner, size_t inner_step, const Node& outer, size_t outer_step) {
  if (inner_step == outer_step || concat_parts_strided(inner) || concat_parts_strided(outer)) return false;
  if (concat_axis(inner) != concat_axis(outer)) return false;
  const size_t a = inner.inputs.size(), b = outer.inputs.size();
  return (a < b || (a == b && outer_step < inner_step)) && run_start(inner, outer).has_value();
}

}  // namespace

int place_concats_in_place(FusionPlan& plan, const Graph& graph) {
  const std::vector<bool> shape_only = find_shape_only_steps(plan);
  Placement placement{plan, graph, {}, {}};
  std::vector<size_t> concats;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& step = plan.steps[i];
    if (shape_only[i]) continue;
    if (step.kind == StepKind::Kernel) {
      for (const Value* v : step.kernel.outputs) placement.written_by[v] = i;
    } else if (step.kind == StepKind::LibraryCall || step.kind == StepKind::Host) {
      for (const Value* v : step.node->outputs) placement.written_by[v] = i;  // into its place, wherever it is
    }
    if (step.kind != StepKind::Kernel && step.kind != StepKind::View && step.node->op == "Concat") concats.push_back(i);
  }
  // The Concats with the most inputs claim theirs first: in a DenseNet block every layer's
  // Concat is a prefix of the block's last one, which then holds them all.
  std::stable_sort(concats.begin(), concats.end(), [&](size_t a, size_t b) {
    return plan.steps[a].node->inputs.size() > plan.steps[b].node->inputs.size();
  });
  int made = 0;
  std::vector<size_t> left;
  for (size_t i : concats) {
    PlanStep& step = plan.steps[i];
    const bool placed = placement.distinct_and_written(*step.node) &&
                        (inputs_are_blocks(*step.node) || placement.place_strided_parts(*step.node));
    if (!placed) {
      left.push_back(i);
      continue;
    }
    placement.placed.insert(step.node->inputs.begin(), step.node->inputs.end());
    step.kind = StepKind::View;
    ++made;
  }
  // A Concat whose inputs are a run of blocks of one placed above is a view of that run. Its
  // own result must not be placed elsewhere, nor be a graph input or output (those own bytes).
  for (size_t i : left) {
    PlanStep& step = plan.steps[i];
    const Value* out = step.node->outputs[0];
    if (!inputs_are_blocks(*step.node) || placement.placed.count(out) || graph.is_output(out)) continue;
    if (enclosing_concat(plan, i) == nullptr) continue;
    step.kind = StepKind::View;
    ++made;
  }
  return made;
}

const Node* enclosing_concat(const FusionPlan& plan, size_t step) {
  const PlanStep& inner = plan.steps[step];
  if (inner.node == nullptr || inner.node->op != "Concat") return nullptr;
  // The largest such Concat (the first of equals) is the one whose blocks the inputs are.
  const Node* largest = nullptr;
  for (size_t j = 0; j < plan.steps.size(); ++j) {
    const PlanStep& outer = plan.steps[j];
    if (!is_concat_in_place(outer) || !is_run_of(*inner.node, step, *outer.node, j)) continue;
    if (largest == nullptr || outer.node->inputs.size() > largest->inputs.size()) largest = outer.node;
  }
  return largest;
}

int64_t enclosing_concat_offset(const Node& inner, const Node& outer) {
  return concat_input_offset(outer, *run_start(inner, outer));
}

}  // namespace tilefuse::fusion
