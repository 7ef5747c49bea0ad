#include "fusion/iteration_space.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "fusion/shape_refinement.h"
#include "ir/op_registry.h"
#include "ir/ops/slice_dims.h"
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
      "IsNaN", "IsInf", "Sign", "Round", "Sin", "Cos", "PRelu", "Selu", "Celu", "Mish", "Sum", "Mean", "Slice", "Expand",
      "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Softsign", "ThresholdedRelu", "Shrink",
      "Xor"};
  return ops;
}

const std::set<std::string, std::less<>>& vector_math_op_types() {
  static const std::set<std::string, std::less<>> ops = {
      "Exp", "Log", "Tanh", "Sigmoid", "Softplus", "Erf", "Gelu", "Elu", "Sin", "Cos", "Selu",
      "Celu", "Mish", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"};
  return ops;
}

bool is_lane_dtype(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::boolean; }

bool has_native_values(const IterationSpace& space) {
  auto is_index = [&](const Value* v) {
    return std::any_of(space.gathers.begin(), space.gathers.end(), [&](const auto& g) { return g.second.indices == v; });
  };
  return std::any_of(space.access.begin(), space.access.end(),
                     [&](const auto& e) { return !is_lane_dtype(e.first->dtype) && !is_index(e.first); });
}

namespace {

// Ops a kernel computes on integer and f64 values, in their own types (tilefuse_native.h):
// what index arithmetic, masks built from ids and f64 pipelines use. Division and Mod of
// integers need a constant, non-zero divisor (the host reports a zero one).
const std::set<std::string, std::less<>>& native_op_types() {
  static const std::set<std::string, std::less<>> ops = {
      "Add",     "Sub",         "Mul",           "Div",   "Mod", "Neg", "Abs", "Sign", "Relu",     "Min", "Max",
      "Clip",    "Where",       "Equal",         "Less",  "Greater", "LessOrEqual", "GreaterOrEqual", "Not",
      "And",     "Or",          "Xor",           "Cast",  "Identity", "Transpose", "Slice", "Expand"};
  return ops;
}
// ... and on f64 values, the math functions the reference computes with the C library.
const std::set<std::string, std::less<>>& native_f64_math() {
  static const std::set<std::string, std::less<>> ops = {"Exp",  "Log",  "Sqrt",    "Reciprocal", "Floor", "Ceil",
                                                         "Tanh", "Erf",  "Sigmoid", "Round",      "IsNaN", "Pow"};
  return ops;
}

bool all_lane_types(const std::vector<Value*>& values) {
  return std::all_of(values.begin(), values.end(), [](const Value* v) { return is_lane_dtype(v->dtype); });
}

bool has_nonzero_constant(const Value* v) {
  if (v == nullptr || !v->constant) return false;
  for (int64_t i = 0; i < v->constant->numel(); ++i) {
    if (v->constant->get_i64(i) == 0) return false;
  }
  return true;
}

// A node with an integer or f64 tensor: which of those a generated kernel takes.
bool is_native_kernel_op(const Node& node) {
  const DType t = node.input(0) != nullptr ? node.input(0)->dtype : node.outputs[0]->dtype;
  const bool math = native_f64_math().count(node.op) != 0;
  if (!native_op_types().count(node.op) && !(math && t == DType::f64)) return false;
  // f32 Mod stays on the host, and so does a float Mod without fmod=1 (the host reports it).
  if (node.op == "Mod" && !is_integer(t) && (t != DType::f64 || node.attr_int("fmod", 0) == 0)) return false;
  if ((node.op == "Div" || node.op == "Mod") && is_integer(t) && !has_nonzero_constant(node.input(1))) return false;
  if ((node.op == "Neg" || node.op == "Relu") && t == DType::u8) return false;  // the reference rejects them
  return true;
}

}  // namespace

bool is_gather_op(const Node& node) { return node.op == "Gather" || node.op == "GatherElements"; }

bool is_view_op(const Node& node) {
  static const std::set<std::string, std::less<>> views = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
  return views.count(node.op) != 0 && !node.outputs.empty() && node.input(0) != nullptr &&
         node.input(0)->dtype == node.outputs[0]->dtype;
}

std::vector<Value*> data_inputs(const Node& node) {
  bool shape_operand = is_view_op(node) || node.op.rfind("Reduce", 0) == 0;
  // A Slice's bounds and an Expand's shape are compile-time facts when they are constants;
  // computed ones are read at run time.
  bool constant_operands = node.op == "Slice" || node.op == "Expand";
  std::vector<Value*> out;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    Value* v = node.inputs[i];
    if (v == nullptr || (i > 0 && (shape_operand || (constant_operands && v->is_constant())))) continue;
    out.push_back(v);
  }
  return out;
}

namespace {

// An Expand's target shape that is not a constant but whose value shape inference knows
// (`x.expand_as(y)` under a symbolic batch: Expand(v, Shape(y)), whose result has y's shape):
// inside a kernel the Expand is the index map of the inferred shapes, and the operand is not read.
bool known_expand_target(const Node& node, size_t i) {
  return node.op == "Expand" && i == 1 && node.inputs[i] != nullptr && node.inputs[i]->sym_value.has_value();
}

}  // namespace

std::vector<Value*> kernel_data_inputs(const Node& node) {
  std::vector<Value*> out = data_inputs(node);
  if (known_expand_target(node, 1)) std::erase(out, node.inputs[1]);
  return out;
}

namespace {

// A Gather or GatherElements a kernel reads through: data of a float lane type (not bool),
// indices of i64 or i32 (read as addresses, not computed with).
bool is_kernel_gather(const Node& node) {
  if (!is_gather_op(node) || node.outputs.size() != 1) return false;
  const DType data = node.input(0)->dtype, index = node.input(1)->dtype;
  return is_lane_dtype(data) && data != DType::boolean && (index == DType::i64 || index == DType::i32);
}

// Whether every tensor the node computes with (kernel_data_inputs, outputs) is of a lane type.
bool computes_in_lanes(const Node& node) {
  if (is_kernel_gather(node)) return true;
  return all_lane_types(node.outputs) && all_lane_types(kernel_data_inputs(node));
}

}  // namespace

bool is_kernel_op(const Node& node) {
  if (node.outputs.empty()) return false;
  if (is_gather_op(node)) return is_kernel_gather(node);
  const bool reduction = node.op.rfind("Reduce", 0) == 0;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const Value* v = node.inputs[i];
    if (v == nullptr) continue;
    // A reduction's axes, a Slice's bounds and an Expand's shape are not data: they must be
    // known when the kernel is generated.
    const bool bound = (reduction && i == 1) || ((node.op == "Slice" || node.op == "Expand") && i >= 1);
    if (bound && !v->is_constant() && !known_expand_target(node, i)) return false;
  }
  if (!computes_in_lanes(node)) return !reduction && is_native_kernel_op(node);
  if (!kernel_op_types().count(node.op)) return false;
  // Dropout's mask output is not computed by kernels.
  if (node.op == "Dropout" && node.outputs.size() > 1 && !node.outputs[1]->users.empty()) return false;
  return true;
}

namespace {

bool is_reduction(const Node& node) { return node.def().has(kReduction); }

// Whether `d` is one of the dims whose broadcast made `result`: max(a, max(b, c)) holds a, b
// and c. Inference made that max and assumed each of them to be 1 or the max
// (Graph::assume_broadcast), which every run checks before its kernels are launched.
bool broadcasts_into(const Dim& d, const Dim& result) {
  if (result.kind() != Dim::Kind::Max) return false;
  return std::any_of(result.operands().begin(), result.operands().end(),
                     [&](const Dim& part) { return part == d || broadcasts_into(d, part); });
}

// Whether `shape` is `domain` on every run: dim by dim the same, or a constant other than 1 that
// the broadcast making the domain's dim assumed to be 1 or that dim (128 in max(128, seq)).
bool same_at_run_time(const Shape& shape, const Shape& domain) {
  if (shape.size() != domain.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    const bool settled = shape[i].is_const() && shape[i] != Dim(1) && broadcasts_into(shape[i], domain[i]);
    if (shape[i] != domain[i] && !settled) return false;
  }
  return true;
}

// Whether `shape` reaches `wider` (of the same rank) only through broadcasts the run settles:
// [N, s] and [N, max(s, t)].
bool widens_at_run_time(const Shape& shape, const Shape& wider) {
  if (shape.size() != wider.size() || shape == wider) return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] != wider[i] && !broadcasts_into(shape[i], wider[i])) return false;
  }
  return true;
}

// Strides of `shape` right-aligned onto `domain` (numpy broadcasting); nullopt if it does not
// broadcast. A dim that only the run's shapes settle (`seq` against max(128, seq): 1 or 128)
// gets a stride settled then too, min(seq - 1, 1) times its own: 0 where it is 1.
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
    } else if (broadcasts_into(d, domain[offset + i])) {
      strides[offset + i] = stride * min(d - Dim(1), Dim(1));
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
    bool views = false;
    for (Node* n : nodes_) {
      if (is_view_op(*n)) {
        views = true;
        continue;
      }
      if (!is_kernel_op(*n)) return fail(fmt::format("{} cannot be part of a generated kernel", n->describe()));
    }
    if (!native_values_fit()) {
      return fail("a kernel with integer or f64 values is a scalar elementwise loop: no reductions, no f32 vector math");
    }
    if (views) {
      for (const Node* n : nodes_) {
        if (is_gather_op(*n)) return fail(fmt::format("{}: a gather and a view in one kernel", n->describe()));
      }
      return run_with_views();
    }
    if (!choose_domain(nodes_)) return {std::nullopt, reason_};
    for (Node* n : nodes_) {
      if (!add_node(*n)) return {std::nullopt, reason_};
    }
    return {std::move(space_), ""};
  }

 private:
  bool add_node(const Node& n) {
    if (is_gather_op(n)) return add_gather(n);
    if (is_index_map_op(n)) return add_index_map_load(n);
    return is_reduction(n) ? add_reduction(n) : add_pointwise(n);
  }

  // ---- groups with views (Reshape, Flatten, Squeeze, Unsqueeze inside the kernel) ----
  //
  // The views cut the group into sides, each with a domain of its own ([N, 32, 128] before a
  // head split, [N, 32, 4, 32] after it). A view leaves the flat index of every element as it
  // is, so all sides can share one domain: the common refinement of theirs. Each side is derived
  // in its own domain as a group without views is, and its strides and reduced axes are then
  // spread over the refined axes they are made of. A view is then a plain copy of a value at
  // the same point, and its input and output must be full-size on their sides.
  IterationSpaceResult run_with_views() {
    if (!assign_sides()) return {std::nullopt, reason_};
    Shape refined;
    for (size_t side = 0; side < side_nodes_.size(); ++side) {
      if (!choose_domain(side_nodes_[side])) return {std::nullopt, reason_};
      side_domain_.push_back(space_.domain);
      side_reduced_.push_back(space_.reduced_axes);
      std::optional<Shape> r = side == 0 ? std::optional<Shape>(space_.domain) : common_refinement(refined, space_.domain);
      if (!r) {
        return fail(fmt::format("no common iteration space for {} and {} across a view", shape_to_string(refined),
                                shape_to_string(space_.domain)));
      }
      refined = *r;
    }
    if (refined.empty()) refined = {Dim(1)};
    refined_ = refined;
    std::optional<std::vector<int64_t>> reduced;
    for (size_t side = 0; side < side_nodes_.size(); ++side) {
      auto groups = refinement_groups(side_domain_[side], refined);
      if (!groups) return fail(fmt::format("{} does not refine {}", shape_to_string(refined), shape_to_string(side_domain_[side])));
      side_groups_.push_back(*groups);
      if (side_reduced_[side].empty()) continue;
      std::vector<int64_t> axes;
      for (int64_t a : side_reduced_[side]) axes.insert(axes.end(), (*groups)[a].begin(), (*groups)[a].end());
      // Size-1 axes have no refined axes: a reduction over those alone would become a kernel
      // that reduces nothing while its nodes still accumulate (a sum over a row it does not have).
      if (axes.empty()) return fail("a reduction over size-1 axes only does not span a view");
      std::sort(axes.begin(), axes.end());
      if (reduced && *reduced != axes) return fail("reductions on the two sides of a view reduce different elements");
      reduced = axes;
    }
    for (Node* n : nodes_) {
      if (is_view_op(*n)) {
        if (!add_view(*n, refined)) return {std::nullopt, reason_};
        continue;
      }
      const int side = side_of_.at(n);
      space_.domain = side_domain_[side];
      space_.reduced_axes = side_reduced_[side];
      std::set<const Value*> before;
      for (const auto& [v, access] : space_.access) before.insert(v);
      if (!add_node(*n)) return {std::nullopt, reason_};
      for (auto& [v, access] : space_.access) {
        if (before.count(v)) continue;
        access.strides = refined_strides(access.strides, side_domain_[side], side_groups_[side], refined);
        placed_side_[v] = side;
      }
      if (!same_placement_on_this_side(*n, side)) return {std::nullopt, reason_};
    }
    space_.domain = refined;
    space_.reduced_axes = reduced ? *reduced : std::vector<int64_t>{};
    return {std::move(space_), ""};
  }

  // Sides: the nodes connected by values that no view sits on. A view's input and output are
  // on two different sides (a chain of views is one boundary).
  bool assign_sides() {
    std::map<const Node*, const Node*> parent;
    std::function<const Node*(const Node*)> find = [&](const Node* n) {
      while (parent.at(n) != n) n = parent[n] = parent.at(parent.at(n));
      return n;
    };
    for (const Node* n : nodes_) {
      if (!is_view_op(*n)) parent[n] = n;
    }
    for (const Node* n : nodes_) {
      if (is_view_op(*n)) continue;
      for (const Value* in : kernel_data_inputs(*n)) {
        if (internal(in) && !is_view_op(*in->producer)) parent[find(n)] = find(in->producer);
      }
    }
    std::map<const Node*, int> index;
    for (const Node* n : nodes_) {
      if (is_view_op(*n)) continue;
      const Node* root = find(n);
      if (!index.count(root)) {
        index[root] = static_cast<int>(side_nodes_.size());
        side_nodes_.emplace_back();
      }
      side_of_[n] = index.at(root);
      side_nodes_[index.at(root)].push_back(const_cast<Node*>(n));
    }
    return true;
  }

  // Strides over a side's domain, spread over the refined axes each of its axes is made of.
  static std::vector<Dim> refined_strides(const std::vector<Dim>& local, const Shape& domain,
                                          const std::vector<std::vector<int64_t>>& groups, const Shape& refined) {
    std::vector<Dim> out(refined.size(), Dim(0));
    for (size_t a = 0; a < domain.size(); ++a) {
      Dim inner = 1;
      for (size_t k = groups[a].size(); k-- > 0;) {
        const int64_t r = groups[a][k];
        out[r] = local[a] * inner;
        inner = inner * refined[r];
      }
    }
    return out;
  }

  // A view's output is its input at the same refined point: both contiguous, full-size values.
  bool add_view(const Node& n, const Shape& refined) {
    const Value* in = n.input(0);
    const Value* out = n.outputs[0];
    const std::vector<Dim> contiguous = contiguous_strides(refined);
    for (const Value* v : {in, out}) {
      if (!(num_elements(v->shape) == num_elements(refined))) {
        return reject(fmt::format("{}: '{}' {} is not full-size in the kernel domain {}", n.describe(), v->name,
                                  shape_to_string(v->shape), shape_to_string(refined)));
      }
    }
    if (internal(in)) {
      if (space_.access.at(in).level != Level::Full || space_.access.at(in).strides != contiguous) {
        return reject(fmt::format("{}: its input '{}' is not a full-size value of the kernel", n.describe(), in->name));
      }
    } else if (space_.access.count(in) ? space_.access.at(in).strides != contiguous : transposed_inputs_.count(in)) {
      return reject(fmt::format("{}: input '{}' is also read another way", n.describe(), in->name));
    } else {
      space_.access[in] = {Level::Full, contiguous};
    }
    space_.access[out] = {Level::Full, contiguous};
    return true;
  }

  // An external input read on two sides must be read at the same place on both.
  bool same_placement_on_this_side(const Node& n, int side) {
    for (const Value* in : kernel_data_inputs(n)) {
      if (internal(in) || !placed_side_.count(in) || placed_side_.at(in) == side) continue;
      const TensorAccess& placed = space_.access.at(in);
      auto local = broadcast_strides(in->shape, placed.level == Level::Full ? side_domain_[side] : reduced_shape_of(side));
      if (!local || refined_strides(*local, side_domain_[side], side_groups_[side], refined_) != placed.strides) {
        return reject(fmt::format("{}: input '{}' is read at other places on the two sides of a view", n.describe(), in->name));
      }
    }
    return true;
  }

  Shape reduced_shape_of(int side) const {
    Shape r = side_domain_[side];
    for (int64_t a : side_reduced_[side]) r[a] = Dim(1);
    return r;
  }

  // Kernels with values outside the lane types are scalar elementwise loops (is_lane_dtype):
  // they hold no reduction, and f32 transcendental math stays in a SIMD kernel of its own.
  bool native_values_fit() const {
    bool lane_heavy = false, native = false;
    for (const Node* n : nodes_) {
      const bool lanes = computes_in_lanes(*n);
      native = native || !lanes;
      lane_heavy = lane_heavy || is_reduction(*n) || (lanes && (n->op == "Pow" || vector_math_op_types().count(n->op)));
    }
    return !(native && lane_heavy);
  }

  IterationSpaceResult fail(std::string why) { return {std::nullopt, std::move(why)}; }
  bool reject(std::string why) {
    reason_ = std::move(why);
    return false;
  }
  bool internal(const Value* v) const { return v->producer != nullptr && members_.count(v->producer) != 0; }

  // The domain is the reductions' common input shape, else the (common) output shape.
  bool choose_domain(const std::vector<Node*>& nodes) {
    space_.domain.clear();
    space_.reduced_axes.clear();
    std::optional<std::vector<int64_t>> axes;
    for (Node* n : nodes) {
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
    for (Node* n : nodes) {
      if (feeds_only_index_maps(n->outputs[0])) continue;  // a link inside a Slice/Transpose chain
      // The widest output: of [N, s] and [N, max(s, t)], the max.
      const Shape& shape = n->outputs[0]->shape;
      if (shape.size() > space_.domain.size() || space_.domain.empty() || widens_at_run_time(space_.domain, shape)) {
        space_.domain = shape;
      }
    }
    return true;
  }

  // Places an input that comes from outside the group, or checks an internal one.
  bool add_operand(const Value* v, Level consumer_level, const Node& consumer) {
    if (internal(v)) {
      const TensorAccess& produced = space_.access.at(v);
      if (produced.level == Level::Full && consumer_level == Level::Reduced) {
        return reject(fmt::format("{} uses full-size '{}' at row level", consumer.describe(), v->name));
      }
      if (!reads_as_broadcast(v, produced, consumer, consumer_level)) {
        return reject(fmt::format("{} broadcasts '{}' {} along other axes than its row's", consumer.describe(), v->name,
                                  shape_to_string(v->shape)));
      }
      return true;
    }
    if (transposed_inputs_.count(v)) {
      return reject(fmt::format("{}: input '{}' is also read through a transpose", consumer.describe(), v->name));
    }
    if (space_.access.count(v)) return true;
    // A row value without the reduced axes (after a keepdims=0 reduction) broadcasts as numpy
    // does against that shape; its strides then skip the reduced axes of the domain.
    const bool dropped = consumer_level == Level::Reduced && consumer.outputs[0]->shape == dropped_shape();
    const Shape target = consumer_level == Level::Full ? space_.domain : dropped ? dropped_shape() : space_.reduced_shape();
    auto strides = broadcast_strides(v->shape, target);
    if (!strides) {
      return reject(fmt::format("{}: input '{}' {} does not broadcast to the kernel domain {}", consumer.describe(),
                                v->name, shape_to_string(v->shape), shape_to_string(target)));
    }
    space_.access[v] = {consumer_level, dropped ? spread_over_kept_axes(*strides) : *strides};
    return true;
  }

  // Whether numpy's broadcasting of a computed row value `v` to what `consumer` makes reads it
  // where the kernel holds it. A result without the reduced axes (keepdims=0) is aligned from the
  // last axis: x[i, j] + sum(x, axis=1)[j] reads the sum of row j, not of row i, unless the
  // consumer's result drops the same axes (then both are the dropped shape).
  bool reads_as_broadcast(const Value* v, const TensorAccess& produced, const Node& consumer, Level consumer_level) const {
    if (v->shape.size() == space_.domain.size() || consumer.outputs[0]->shape == dropped_shape()) return true;
    const auto as_read = broadcast_strides(v->shape, consumer_level == Level::Full ? space_.domain : space_.reduced_shape());
    return as_read && *as_read == produced.strides;
  }

  // The domain without its reduced axes: the shape of a keepdims=0 reduction's result.
  Shape dropped_shape() const {
    Shape kept;
    for (size_t a = 0; a < space_.domain.size(); ++a) {
      if (!is_reduced_axis(a)) kept.push_back(space_.domain[a]);
    }
    return kept;
  }

  bool is_reduced_axis(size_t a) const {
    return std::binary_search(space_.reduced_axes.begin(), space_.reduced_axes.end(), static_cast<int64_t>(a));
  }

  // Strides over dropped_shape()'s axes as strides over the domain's (0 along reduced axes).
  std::vector<Dim> spread_over_kept_axes(const std::vector<Dim>& kept) const {
    std::vector<Dim> strides(space_.domain.size(), Dim(0));
    size_t k = 0;
    for (size_t a = 0; a < space_.domain.size(); ++a) {
      if (!is_reduced_axis(a)) strides[a] = kept[k++];
    }
    return strides;
  }

  bool place_output(const Value* v, const Node& node) {
    if (same_at_run_time(v->shape, space_.domain)) {
      space_.access[v] = {Level::Full, *broadcast_strides(v->shape, space_.domain)};
      return true;
    }
    if (!space_.reduced_axes.empty() && same_at_run_time(v->shape, space_.reduced_shape())) {
      space_.access[v] = {Level::Reduced, *broadcast_strides(v->shape, space_.domain)};
      return true;
    }
    if (!space_.reduced_axes.empty() && v->shape == dropped_shape()) {
      space_.access[v] = {Level::Reduced, spread_over_kept_axes(contiguous_strides(v->shape))};
      return true;
    }
    return reject(fmt::format("{}: output '{}' {} is neither the kernel domain {} nor its reduced shape",
                              node.describe(), v->name, shape_to_string(v->shape), shape_to_string(space_.domain)));
  }

  bool add_pointwise(const Node& n) {
    if (!place_output(n.outputs[0], n) && !place_computed_broadcast(n.outputs[0])) return false;
    Level level = space_.access.at(n.outputs[0]).level;
    for (const Value* in : n.inputs) {
      if (in != nullptr && !add_operand(in, level, n)) return false;
    }
    for (size_t i = 1; i < n.outputs.size(); ++i) {
      if (!n.outputs[i]->users.empty()) return reject(fmt::format("{}: extra outputs are not supported in kernels", n.describe()));
    }
    return true;
  }

  // A pointwise result whose shape reaches the domain only through broadcasts the run settles
  // ([.., s] against [.., max(s, t)]): computed at every point of the domain from operands read
  // the same way, it is what broadcasting it would give, since pointwise ops commute with
  // broadcasts. It must stay inside the kernel (the planner checks).
  bool place_computed_broadcast(const Value* v) {
    auto strides = broadcast_strides(v->shape, space_.domain);
    if (v->shape.size() != space_.domain.size() || !strides) return false;
    space_.access[v] = {Level::Full, *strides};
    space_.computed_broadcast.insert(v);
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
    // keepdims=0: the output drops the reduced axes (row-level ops may follow it in that shape).
    space_.access[out] = {Level::Reduced, spread_over_kept_axes(contiguous_strides(dropped_shape()))};
    return true;
  }

  // Transpose, Slice and Expand are loads through an index map of an input from outside the group:
  // element i of the result is source[offset + sum_k i_k * strides_k]. A chain of them (a Slice
  // then a Transpose) composes into one map; the values between are passed along.
  struct IndexMap {
    const Value* source = nullptr;
    Dim offset = 0;
    std::vector<Dim> strides;  // per axis of the mapped value
  };

  bool add_index_map_load(const Node& n) {
    const Value* in = n.input(0);
    IndexMap base;
    if (internal(in)) {
      if (!space_.passed_along.count(in)) {
        return reject(fmt::format("{}: moving a value computed in the same kernel", n.describe()));
      }
      base = maps_.at(in);
    } else {
      if (transposed_inputs_.count(in) || space_.access.count(in)) {
        return reject(fmt::format("{}: input '{}' is also read another way", n.describe(), in->name));
      }
      base = {in, Dim(0), contiguous_strides(in->shape)};
    }
    std::optional<IndexMap> map = n.op == "Transpose" ? transposed(n, base)
                                  : n.op == "Slice"   ? sliced(n, base)
                                                      : expanded(n, base);
    if (!map) return false;
    const Value* out = n.outputs[0];
    maps_[out] = *map;
    transposed_inputs_.insert(map->source);
    if (feeds_only_index_maps(out)) {
      // A link in the middle of a chain: the last link places the source's access.
      space_.passed_along.insert(out);
      space_.access[out] = {Level::Full, std::vector<Dim>(space_.domain.size(), Dim(0))};
      return true;
    }
    if (!place_output(out, n)) return false;
    if (space_.access.at(out).level != Level::Full || out->shape != space_.domain) {
      return reject(fmt::format("{}: its result is not full-size in the kernel domain", n.describe()));
    }
    space_.access[map->source] = {Level::Full, map->strides, map->offset};
    return true;
  }

  // A gather whose data and indices come from outside the group and are read by it alone: a load
  // of data at the domain point with the index read there in place of the gathered axis's
  // coordinate (GatherLoad). GatherElements: indices of the result's shape that agree with data
  // on every axis but `axis` (torch.gather's usual case). Gather: the result's axes are data's
  // before `axis`, then the indices' (data does not move along them), then data's after it
  // (the index does not move along those): an embedding lookup, index_select, x[:, 0].
  bool add_gather(const Node& n) {
    const Value* data = n.input(0);
    const Value* indices = n.input(1);
    const Value* out = n.outputs[0];
    for (const Value* v : {data, indices}) {
      if (internal(v)) return reject(fmt::format("{}: '{}' is computed in the same kernel", n.describe(), v->name));
      if (space_.access.count(v) || transposed_inputs_.count(v)) {
        return reject(fmt::format("{}: input '{}' is also read another way", n.describe(), v->name));
      }
      for (const Node* user : v->users) {
        if (user != &n && members_.count(const_cast<Node*>(user))) {
          return reject(fmt::format("{}: input '{}' is also read another way", n.describe(), v->name));
        }
      }
    }
    if (!place_output(out, n)) return false;
    if (space_.access.at(out).level != Level::Full || out->shape != space_.domain) {
      return reject(fmt::format("{}: its result is not full-size in the kernel domain", n.describe()));
    }
    const int64_t rank = data->rank(), q = indices->rank();
    int64_t axis = n.attr_int("axis", 0);
    axis = axis < 0 ? axis + rank : axis;
    if (axis < 0 || axis >= rank) return reject(fmt::format("{}: axis out of range", n.describe()));
    const std::vector<Dim> data_strides = contiguous_strides(data->shape), index_strides = contiguous_strides(indices->shape);
    std::vector<Dim> on_data(space_.domain.size(), Dim(0)), on_indices(space_.domain.size(), Dim(0));
    if (n.op == "GatherElements") {
      if (q != rank || indices->shape != out->shape) return reject(fmt::format("{}: indices are not the result's shape", n.describe()));
      for (int64_t d = 0; d < rank; ++d) {
        if (d != axis && !(data->shape[d] == indices->shape[d])) {
          return reject(fmt::format("{}: data and indices differ on axis {}, which is not gathered", n.describe(), d));
        }
        on_data[d] = d == axis ? Dim(0) : data_strides[d];
      }
      on_indices = index_strides;
    } else {
      if (out->rank() != rank - 1 + q) return reject(fmt::format("{}: result rank does not fit", n.describe()));
      for (int64_t d = 0; d < rank; ++d) {
        if (d != axis) on_data[d < axis ? d : d - 1 + q] = data_strides[d];
      }
      for (int64_t k = 0; k < q; ++k) on_indices[axis + k] = index_strides[k];
    }
    space_.gathers.push_back({out, {data, indices, axis, data_strides[axis], data->shape[axis]}});
    space_.access[data] = {Level::Full, on_data};
    space_.access[indices] = {Level::Full, on_indices};
    transposed_inputs_.insert(data);
    transposed_inputs_.insert(indices);
    return true;
  }

  // Whether every reader of `v` in the group is another Transpose or Slice (and there is one).
  bool feeds_only_index_maps(const Value* v) const {
    bool any = false;
    for (const Node* u : v->users) {
      if (!members_.count(const_cast<Node*>(u))) continue;
      if (!is_index_map_op(*u)) return false;
      any = true;
    }
    return any;
  }

  static std::vector<Dim> contiguous_strides(const Shape& shape) {
    std::vector<Dim> strides(shape.size(), Dim(1));
    for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
    return strides;
  }

  static IndexMap transposed(const Node& n, const IndexMap& base) {
    std::vector<int64_t> perm = n.attr_ints("perm");
    if (perm.empty()) {
      for (auto i = static_cast<int64_t>(base.strides.size()); i-- > 0;) perm.push_back(i);
    }
    IndexMap out{base.source, base.offset, std::vector<Dim>(perm.size())};
    for (size_t i = 0; i < perm.size(); ++i) out.strides[i] = base.strides[perm[i]];
    return out;
  }

  static bool is_index_map_op(const Node& n) { return n.op == "Transpose" || n.op == "Slice" || n.op == "Expand"; }

  // Expand: the input right-aligned onto the result, stride 0 along the axes it broadcasts.
  static std::optional<IndexMap> expanded(const Node& n, const IndexMap& base) {
    const Shape& in = n.input(0)->shape;
    const Shape& out = n.outputs[0]->shape;
    if (out.size() < in.size()) return std::nullopt;
    IndexMap m{base.source, base.offset, std::vector<Dim>(out.size(), Dim(0))};
    const size_t lead = out.size() - in.size();
    for (size_t a = 0; a < in.size(); ++a) {
      if (!(in[a] == Dim(1))) m.strides[lead + a] = base.strides[a];
    }
    return m;
  }

  // ONNX Slice bounds (ops/slice_dims.h) on axes of constant length.
  std::optional<IndexMap> sliced(const Node& n, const IndexMap& base) {
    const Value* in = n.input(0);
    auto ints = [&](size_t i) {
      std::vector<int64_t> v;
      const Tensor& t = *n.input(i)->constant;
      for (int64_t k = 0; k < t.numel(); ++k) v.push_back(t.get_i64(k));
      return v;
    };
    const std::vector<int64_t> starts = ints(1), ends = ints(2);
    std::vector<int64_t> axes(starts.size()), steps(starts.size(), 1);
    for (size_t k = 0; k < axes.size(); ++k) axes[k] = static_cast<int64_t>(k);
    if (n.has_input(3)) axes = ints(3);
    if (n.has_input(4)) steps = ints(4);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
      reject(fmt::format("{}: starts, ends, axes and steps differ in length", n.describe()));
      return std::nullopt;
    }
    IndexMap out = base;
    for (size_t k = 0; k < axes.size(); ++k) {
      const int64_t axis = axes[k] < 0 ? axes[k] + in->rank() : axes[k];
      if (axis < 0 || axis >= in->rank() || !in->shape[axis].is_const() || steps[k] == 0) {
        reject(fmt::format("{}: axis {} cannot be sliced in a kernel", n.describe(), axes[k]));
        return std::nullopt;
      }
      const int64_t start = ops::clamp_slice_bound(starts[k], in->shape[axis].value(), steps[k]);
      out.offset = out.offset + base.strides[axis] * Dim(start);
      out.strides[axis] = base.strides[axis] * Dim(steps[k]);
    }
    return out;
  }

  const std::vector<Node*>& nodes_;
  std::set<Node*> members_;
  std::set<const Value*> transposed_inputs_;  // read through an index map (Transpose, Slice)
  std::map<const Value*, IndexMap> maps_;     // results of index-map loads
  IterationSpace space_;
  std::string reason_;
  // Groups with views only (run_with_views).
  std::vector<std::vector<Node*>> side_nodes_;
  std::map<const Node*, int> side_of_;
  std::vector<Shape> side_domain_;
  std::vector<std::vector<int64_t>> side_reduced_;
  std::vector<std::vector<std::vector<int64_t>>> side_groups_;
  std::map<const Value*, int> placed_side_;  // external inputs: the side that placed them
  Shape refined_;                            // the kernel's domain
};

}  // namespace

bool is_run_time_unit_stride(const Dim& stride) {
  if (stride.kind() != Dim::Kind::Min) return false;
  const auto& parts = stride.operands();
  return std::any_of(parts.begin(), parts.end(), [](const Dim& part) { return part == Dim(1); });
}

IterationSpaceResult derive_iteration_space(const std::vector<Node*>& nodes) {
  if (nodes.empty()) return {std::nullopt, "empty group"};
  return Deriver(nodes).run();
}

}  // namespace tilefuse::fusion
