#include "fusion/iteration_space.h"

#include <algorithm>
#include <set>

#include "ir/op_registry.h"
#include "passes/pattern.h"

namespace tilefuse::fusion {

Shape IterationSpace::reduced_shape() const {
  Shape r = domain;
  for (int64_t a : reduced_axes) r[a] = Dim(1);
  return r;
}

const std::set<std::string, std::less<>>& kernel_op_types() {
  static const std::set<std::string, std::less<>> ops = {
      "Add", "Sub", "Mul", "Div", "Pow", "Neg", "Abs", "Exp", "Log", "Sqrt", "Reciprocal", "Floor", "Ceil", "Relu",
      "LeakyRelu", "Elu", "Sigmoid", "HardSigmoid", "HardSwish", "Softplus", "Tanh", "Erf", "Gelu", "Clip", "Min",
      "Max", "Where", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Cast",
      "Identity", "Dropout", "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "Transpose",
      "IsNaN", "IsInf", "Sign", "Round", "Sin", "Cos", "PRelu", "Selu", "Celu", "Mish", "Sum", "Mean"};
  return ops;
}

namespace {

// Kernels compute in f32 (f16/bf16 converted at loads/stores) and keep bools as masks; integer
// and f64 tensors stay with the host (reference) kernels.
bool kernel_dtype(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::boolean; }

}  // namespace

bool is_view_op(const Node& node) {
  static const std::set<std::string, std::less<>> views = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
  return views.count(node.op) != 0 && !node.outputs.empty() && node.input(0) != nullptr &&
         node.input(0)->dtype == node.outputs[0]->dtype;
}

std::vector<Value*> data_inputs(const Node& node) {
  bool shape_operand = is_view_op(node) || node.op.rfind("Reduce", 0) == 0;
  std::vector<Value*> out;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] != nullptr && !(shape_operand && i > 0)) out.push_back(node.inputs[i]);
  }
  return out;
}

bool is_kernel_op(const Node& node) {
  if (!kernel_op_types().count(node.op)) return false;
  bool reduction = node.op.rfind("Reduce", 0) == 0;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const Value* v = node.inputs[i];
    if (v == nullptr) continue;
    // A reduction's axes operand is not data: it must be known when the kernel is generated.
    if (reduction && i == 1) {
      if (!v->constant) return false;
      continue;
    }
    if (!kernel_dtype(v->dtype)) return false;
  }
  for (const Value* v : node.outputs) {
    if (!kernel_dtype(v->dtype)) return false;
  }
  // Dropout's mask output is not computed by kernels.
  if (node.op == "Dropout" && node.outputs.size() > 1 && !node.outputs[1]->users.empty()) return false;
  return true;
}

namespace {

bool is_reduction(const Node& node) { return node.def().has(kReduction); }

// Strides of `shape` right-aligned onto `domain` (numpy broadcasting); nullopt if it does not
// broadcast. Axes in `collapsed` must be 1 in `shape` (the value lives at reduced level).
std::optional<std::vector<Dim>> broadcast_strides(const Shape& shape, const Shape& domain) {
  if (shape.size() > domain.size()) return std::nullopt;
  std::vector<Dim> strides(domain.size(), Dim(0));
  size_t offset = domain.size() - shape.size();
  Dim stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    const Dim& d = shape[i];
    if (d == Dim(1)) {
      strides[offset + i] = 0;
    } else if (d == domain[offset + i]) {
      strides[offset + i] = stride;
    } else {
      return std::nullopt;
    }
    stride = stride * d;
  }
  return strides;
}

class Deriver {
 public:
  explicit Deriver(const std::vector<Node*>& nodes) : nodes_(nodes), members_(nodes.begin(), nodes.end()) {}

  IterationSpaceResult run() {
    for (Node* n : nodes_) {
      if (!is_kernel_op(*n)) return fail(fmt::format("{} cannot be part of a generated kernel", n->describe()));
    }
    if (!choose_domain()) return {std::nullopt, reason_};
    for (Node* n : nodes_) {
      bool ok = n->op == "Transpose" ? add_transpose(*n) : is_reduction(*n) ? add_reduction(*n) : add_pointwise(*n);
      if (!ok) return {std::nullopt, reason_};
    }
    return {std::move(space_), ""};
  }

 private:
  IterationSpaceResult fail(std::string why) { return {std::nullopt, std::move(why)}; }
  bool reject(std::string why) {
    reason_ = std::move(why);
    return false;
  }
  bool internal(const Value* v) const { return v->producer != nullptr && members_.count(v->producer) != 0; }

  // The domain is the reductions' common input shape, else the (common) output shape.
  bool choose_domain() {
    std::optional<std::vector<int64_t>> axes;
    for (Node* n : nodes_) {
      if (!is_reduction(*n)) continue;
      auto r = passes::reduced_axes(*n);
      if (!r) return reject(fmt::format("{}: reduced axes are not known at compile time", n->describe()));
      if (axes && *axes != *r) return reject(fmt::format("{} reduces other axes than the rest of the group", n->describe()));
      if (!space_.domain.empty() && space_.domain != n->input(0)->shape) {
        return reject(fmt::format("{} reduces a tensor of another shape than the rest of the group", n->describe()));
      }
      axes = r;
      space_.domain = n->input(0)->shape;
    }
    if (axes) {
      space_.reduced_axes = *axes;
      return true;
    }
    for (Node* n : nodes_) {
      if (n->outputs[0]->rank() > static_cast<int64_t>(space_.domain.size()) || space_.domain.empty()) {
        space_.domain = n->outputs[0]->shape;
      }
    }
    return true;
  }

  // Places an input that comes from outside the group, or checks an internal one.
  bool add_operand(const Value* v, Level consumer_level, const Node& consumer) {
    if (internal(v)) {
      Level produced = space_.access.at(v).level;
      if (produced == Level::Full && consumer_level == Level::Reduced) {
        return reject(fmt::format("{} uses full-size '{}' at row level", consumer.describe(), v->name));
      }
      return true;
    }
    if (transposed_inputs_.count(v)) {
      return reject(fmt::format("{}: input '{}' is also read through a transpose", consumer.describe(), v->name));
    }
    if (space_.access.count(v)) return true;
    const Shape& target = consumer_level == Level::Full ? space_.domain : space_.reduced_shape();
    auto strides = broadcast_strides(v->shape, target);
    if (!strides) {
      return reject(fmt::format("{}: input '{}' {} does not broadcast to the kernel domain {}", consumer.describe(),
                                v->name, shape_to_string(v->shape), shape_to_string(target)));
    }
    space_.access[v] = {consumer_level, *strides};
    return true;
  }

  bool place_output(const Value* v, const Node& node) {
    if (v->shape == space_.domain) {
      space_.access[v] = {Level::Full, *broadcast_strides(v->shape, space_.domain)};
      return true;
    }
    if (!space_.reduced_axes.empty() && v->shape == space_.reduced_shape()) {
      space_.access[v] = {Level::Reduced, *broadcast_strides(v->shape, space_.domain)};
      return true;
    }
    return reject(fmt::format("{}: output '{}' {} is neither the kernel domain {} nor its reduced shape",
                              node.describe(), v->name, shape_to_string(v->shape), shape_to_string(space_.domain)));
  }

  bool add_pointwise(const Node& n) {
    if (!place_output(n.outputs[0], n)) return false;
    Level level = space_.access.at(n.outputs[0]).level;
    for (const Value* in : n.inputs) {
      if (in != nullptr && !add_operand(in, level, n)) return false;
    }
    for (size_t i = 1; i < n.outputs.size(); ++i) {
      if (!n.outputs[i]->users.empty()) return reject(fmt::format("{}: extra outputs are not supported in kernels", n.describe()));
    }
    return true;
  }

  bool add_reduction(const Node& n) {
    const Value* in = n.input(0);
    if (in->shape != space_.domain) return reject(fmt::format("{}: reduces a tensor that is not the kernel domain", n.describe()));
    if (!add_operand(in, Level::Full, n)) return false;
    const Value* out = n.outputs[0];
    if (n.attr_int("keepdims", 1) != 0) {
      // A row value, even where it also equals the domain (every reduced axis has size 1).
      space_.access[out] = {Level::Reduced, *broadcast_strides(out->shape, space_.domain)};
      return true;
    }
    // keepdims=0: the output drops the reduced axes; it may leave the kernel but not feed it.
    for (const Node* user : out->users) {
      if (members_.count(const_cast<Node*>(user))) {
        return reject(fmt::format("{}: keepdims=0 output is used inside the group", n.describe()));
      }
    }
    std::vector<Dim> strides(space_.domain.size(), Dim(0));
    Dim stride = 1;
    for (size_t a = space_.domain.size(); a-- > 0;) {
      if (std::binary_search(space_.reduced_axes.begin(), space_.reduced_axes.end(), static_cast<int64_t>(a))) continue;
      strides[a] = stride;
      stride = stride * space_.domain[a];
    }
    space_.access[out] = {Level::Reduced, strides};
    return true;
  }

  // A transpose is a load with permuted strides: its input must come from outside the group.
  bool add_transpose(const Node& n) {
    const Value* in = n.input(0);
    if (internal(in)) return reject(fmt::format("{}: transposing a value computed in the same kernel", n.describe()));
    if (!place_output(n.outputs[0], n)) return false;
    if (space_.access.at(n.outputs[0]).level != Level::Full) return reject(fmt::format("{}: row-level transpose", n.describe()));
    std::vector<int64_t> perm = n.attr_ints("perm");
    if (perm.empty()) {
      for (int64_t i = in->rank() - 1; i >= 0; --i) perm.push_back(i);
    }
    std::vector<Dim> in_strides(in->shape.size(), Dim(1));
    for (size_t i = in->shape.size(); i-- > 1;) in_strides[i - 1] = in_strides[i] * in->shape[i];
    std::vector<Dim> strides(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) strides[i] = in_strides[perm[i]];
    if (space_.access.count(in)) return reject(fmt::format("{}: input '{}' is also read untransposed", n.describe(), in->name));
    space_.access[in] = {Level::Full, strides};
    transposed_inputs_.insert(in);
    return true;
  }

  const std::vector<Node*>& nodes_;
  std::set<Node*> members_;
  std::set<const Value*> transposed_inputs_;
  IterationSpace space_;
  std::string reason_;
};

}  // namespace

IterationSpaceResult derive_iteration_space(const std::vector<Node*>& nodes) {
  if (nodes.empty()) return {std::nullopt, "empty group"};
  return Deriver(nodes).run();
}

}  // namespace tilefuse::fusion
