#include "passes/decompose_composites.h"

#include <cmath>
#include <optional>

#include "ir/error.h"
#include "ir/op_registry.h"

namespace tilefuse::passes {

namespace {

// Emits primitive nodes named after the composite they replace ("<name>/<step>").
class Emitter {
 public:
  Emitter(Graph& graph, const Node& composite) : graph_(graph), base_(composite.name) {}

  Value* op(const std::string& type, std::vector<Value*> inputs, AttributeMap attrs = {}) {
    std::string name = fmt::format("{}/{}_{}", base_, type, counter_++);
    Node* n = graph_.add_node(type, name, std::move(inputs), {graph_.unique_value_name(name)}, std::move(attrs));
    infer_node(*n, graph_);
    return n->outputs[0];
  }

  Value* scalar(double value, DType dtype) {
    Tensor t(dtype, {});
    t.set_f64(0, value);
    return graph_.add_constant(graph_.unique_value_name(fmt::format("{}/const_{}", base_, counter_++)), t);
  }

  Value* axes(const std::vector<int64_t>& axes) {
    Tensor t(DType::i64, {static_cast<int64_t>(axes.size())});
    for (size_t i = 0; i < axes.size(); ++i) t.set_i64(static_cast<int64_t>(i), axes[i]);
    return graph_.add_constant(graph_.unique_value_name(fmt::format("{}/axes_{}", base_, counter_++)), t);
  }

  Value* reduce(const std::string& type, Value* x, const std::vector<int64_t>& reduce_axes) {
    return op(type, {x, axes(reduce_axes)}, {{"keepdims", int64_t{1}}});
  }

  Value* cast(Value* x, DType to) {
    if (x->dtype == to) return x;
    return op("Cast", {x}, {{"to", int64_t{dtype_to_onnx(to)}}});
  }

 private:
  Graph& graph_;
  std::string base_;
  int counter_ = 0;
};

std::vector<int64_t> axes_from(int64_t first, int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t a = first; a < rank; ++a) axes.push_back(a);
  return axes;
}

// The value the composite's outputs are replaced by, per output index (nullptr: unused).
std::vector<Value*> expand_softmax(Graph& graph, const Node& n, bool log) {
  Emitter e(graph, n);
  Value* x = n.input(0);
  DType out_type = x->dtype;
  Value* xf = e.cast(x, DType::f32);
  std::vector<int64_t> axis = {normalize_axis(n.attr_int("axis", -1), x->rank(), n.describe())};
  Value* d = e.op("Sub", {xf, e.reduce("ReduceMax", xf, axis)});
  Value* ex = e.op("Exp", {d});
  Value* sum = e.reduce("ReduceSum", ex, axis);
  Value* y = log ? e.op("Sub", {d, e.op("Log", {sum})}) : e.op("Div", {ex, sum});
  return {e.cast(y, out_type)};
}

// xf centred over `axes`, by the corrected two-pass algorithm: d0 = x - mean(x), then the mean
// of d0 (zero but for the first mean's rounding) taken out again, and the variance corrected by
// it. A row of equal values (padding) centres to zero, or to within an ulp of its rounding, as
// in ONNX Runtime and PyTorch; centred on the first mean alone it was off by an ulp of x, which
// 1 / sqrt(epsilon) made 2e-5 in a LayerNorm's output. The second mean is summed in the pass that
// sums the squares: an addition per element, not another pass over the row.
struct Centred {
  Value* d;     // x - mean
  Value* var;   // mean of d^2, never negative
  Value* mean;  // the corrected mean, kept as dims of 1
};

Centred centre(Emitter& e, Value* xf, const std::vector<int64_t>& axes) {
  Value* mean = e.reduce("ReduceMean", xf, axes);
  Value* d0 = e.op("Sub", {xf, mean});
  Value* correction = e.reduce("ReduceMean", d0, axes);
  Value* squares = e.reduce("ReduceMean", e.op("Mul", {d0, d0}), axes);
  Value* var = e.op("Max", {e.op("Sub", {squares, e.op("Mul", {correction, correction})}), e.scalar(0.0, DType::f32)});
  return {e.op("Sub", {d0, correction}), var, e.op("Add", {mean, correction})};
}

// 1 / sqrt(var + epsilon).
Value* inverse_std(Emitter& e, Value* var, double epsilon) {
  return e.op("Reciprocal", {e.op("Sqrt", {e.op("Add", {var, e.scalar(epsilon, DType::f32)})})});
}

// A LayerNorm over the last axis of Transpose(x, perm), when the mean and inverse deviation are
// not read: the same LayerNorm over axis perm[-1] of x, its weights set along that axis, and the
// result transposed as the graph asked. The reductions then run in x's own memory order (a column
// reduction where the axis is not x's last) instead of through the transpose's strides; the
// Transpose back that speech and vision models put after it meets the new one and both vanish.
// Transpose, LayerNorm, Transpose over f32[8, 256, 512] ran at 0.7x ONNX Runtime.
std::vector<Value*> expand_layer_norm_of_transpose(Graph& graph, const Node& n) {
  Value* t = n.input(0);
  const Node* transpose = t == nullptr ? nullptr : t->producer;
  if (transpose == nullptr || transpose->op != "Transpose" || t->rank() < 2) return {};
  if (normalize_axis(n.attr_int("axis", -1), t->rank(), n.describe()) != t->rank() - 1) return {};
  for (size_t i = 1; i < n.outputs.size(); ++i) {
    if (n.outputs[i] != nullptr && (!n.outputs[i]->users.empty() || graph.is_output(n.outputs[i]))) return {};
  }
  std::vector<int64_t> perm = transpose->attr_ints("perm");
  if (perm.empty()) {
    for (int64_t a = t->rank(); a-- > 0;) perm.push_back(a);
  }
  const int64_t axis = perm.back(), rank = t->rank();
  if (axis == rank - 1) return {};  // already the source's last axis: the plain expansion reads it in order
  Emitter e(graph, n);
  Value* x = transpose->input(0);
  // The weights as [C, 1, ...]: broadcast along `axis` of x.
  std::vector<int64_t> along(static_cast<size_t>(rank - axis), 1);
  along[0] = -1;
  auto set_along = [&](Value* w) {
    if (!w->constant) return e.op("Reshape", {e.cast(w, DType::f32), e.axes(along)});
    along[0] = w->constant->numel();
    return graph.add_constant(graph.unique_value_name(w->name + "/along"), w->constant->cast(DType::f32).reshaped(along));
  };
  const Centred c = centre(e, e.cast(x, DType::f32), {axis});
  Value* y = e.op("Mul", {e.op("Mul", {c.d, inverse_std(e, c.var, n.attr_float("epsilon", 1e-5))}), set_along(n.input(1))});
  if (n.has_input(2)) y = e.op("Add", {y, set_along(n.input(2))});
  return {e.op("Transpose", {e.cast(y, t->dtype)}, {{"perm", perm}})};
}

std::vector<Value*> expand_layer_norm(Graph& graph, const Node& n) {
  if (std::vector<Value*> in_source = expand_layer_norm_of_transpose(graph, n); !in_source.empty()) return in_source;
  Emitter e(graph, n);
  Value* x = n.input(0);
  DType out_type = x->dtype;
  std::vector<int64_t> axes = axes_from(normalize_axis(n.attr_int("axis", -1), x->rank(), n.describe()), x->rank());
  const Centred c = centre(e, e.cast(x, DType::f32), axes);
  Value* inv_std = inverse_std(e, c.var, n.attr_float("epsilon", 1e-5));
  Value* y = e.op("Mul", {e.op("Mul", {c.d, inv_std}), e.cast(n.input(1), DType::f32)});
  if (n.has_input(2)) y = e.op("Add", {y, e.cast(n.input(2), DType::f32)});
  return {e.cast(y, out_type), c.mean, inv_std};
}

// A per-channel constant vector as a constant of shape [C, 1, ...] (rank - 1 dims), in f32, so
// that it broadcasts over [N, C, spatial...]. `values[c]` is channel c's entry.
Value* channel_constant(Graph& graph, const std::string& name, const std::vector<double>& values, int64_t rank) {
  std::vector<int64_t> shape(static_cast<size_t>(rank - 1), 1);
  shape[0] = static_cast<int64_t>(values.size());
  Tensor t(DType::f32, shape);
  for (size_t c = 0; c < values.size(); ++c) t.set_f64(static_cast<int64_t>(c), values[c]);
  return graph.add_constant(graph.unique_value_name(name), t);
}

std::optional<std::vector<double>> constant_values(const Value* v) {
  if (v == nullptr || !v->constant) return std::nullopt;
  std::vector<double> out;
  for (int64_t i = 0; i < v->constant->numel(); ++i) out.push_back(v->constant->get_f64(i));
  return out;
}

// Inference BatchNormalization with constant statistics: y = x * s + (B - mean * s), with
// s = scale / sqrt(var + epsilon) per channel: two elementwise ops that fuse with their neighbours.
std::vector<Value*> expand_batch_norm(Graph& graph, const Node& n) {
  auto scale = constant_values(n.input(1)), bias = constant_values(n.input(2));
  auto mean = constant_values(n.input(3)), var = constant_values(n.input(4));
  if (n.attr_int("training_mode", 0) != 0 || !scale || !bias || !mean || !var) return {};
  const double epsilon = n.attr_float("epsilon", 1e-5);
  std::vector<double> mul(scale->size()), add(scale->size());
  for (size_t c = 0; c < scale->size(); ++c) {
    mul[c] = (*scale)[c] / std::sqrt((*var)[c] + epsilon);
    add[c] = (*bias)[c] - (*mean)[c] * mul[c];
  }
  Emitter e(graph, n);
  Value* x = n.input(0);
  const int64_t rank = x->rank();
  Value* y = e.op("Mul", {e.cast(x, DType::f32), channel_constant(graph, n.name + "/scale", mul, rank)});
  y = e.op("Add", {y, channel_constant(graph, n.name + "/shift", add, rank)});
  return {e.cast(y, x->dtype)};
}

// (x - mean) / sqrt(var + epsilon) over `axes` of xf (f32), both statistics kept as dims of 1.
Value* normalize(Emitter& e, Value* xf, const std::vector<int64_t>& axes, double epsilon) {
  const Centred c = centre(e, xf, axes);
  return e.op("Mul", {c.d, inverse_std(e, c.var, epsilon)});
}

// InstanceNormalization (and GroupNormalization, which normalises groups of channels): the
// statistics are row reductions; scale and bias are per-channel constants.
std::vector<Value*> expand_group_norm(Graph& graph, const Node& n) {
  Value* x = n.input(0);
  auto scale = constant_values(n.input(1)), bias = constant_values(n.input(2));
  if (!scale || !bias || !x->shape[1].is_const()) return {};
  const int64_t channels = x->shape[1].value(), rank = x->rank();
  const int64_t groups = n.op == "InstanceNormalization" ? channels : n.attr_int("num_groups", 1);
  // Opset-18 GroupNormalization gives one scale and bias per group: repeat them per channel.
  auto per_channel = [&](const std::vector<double>& v) {
    if (static_cast<int64_t>(v.size()) == channels) return v;
    std::vector<double> out;
    for (int64_t c = 0; c < channels; ++c) out.push_back(v[c / (channels / groups)]);
    return out;
  };
  Emitter e(graph, n);
  const double epsilon = n.attr_float("epsilon", 1e-5);
  Value* xf = e.cast(x, DType::f32);
  Value* y = nullptr;
  if (groups == channels) {
    y = normalize(e, xf, axes_from(2, rank), epsilon);
  } else {
    Tensor grouped(DType::i64, {3});  // [N, groups, rest]
    grouped.set_i64(0, 0), grouped.set_i64(1, groups), grouped.set_i64(2, -1);
    Value* rows = e.op("Reshape", {xf, graph.add_constant(graph.unique_value_name(n.name + "/groups"), grouped)});
    y = e.op("Reshape", {normalize(e, rows, {2}, epsilon), e.op("Shape", {x})});
  }
  y = e.op("Mul", {y, channel_constant(graph, n.name + "/scale", per_channel(*scale), rank)});
  y = e.op("Add", {y, channel_constant(graph, n.name + "/bias", per_channel(*bias), rank)});
  return {e.cast(y, x->dtype)};
}

std::vector<Value*> expand_rms_norm(Graph& graph, const Node& n) {
  Emitter e(graph, n);
  Value* x = n.input(0);
  std::vector<int64_t> axes = axes_from(normalize_axis(n.attr_int("axis", -1), x->rank(), n.describe()), x->rank());
  Value* xf = e.cast(x, DType::f32);
  Value* mean_square = e.reduce("ReduceMean", e.op("Mul", {xf, xf}), axes);
  Value* inv_rms = e.op("Reciprocal", {e.op("Sqrt", {e.op("Add", {mean_square, e.scalar(n.attr_float("epsilon", 1e-5), DType::f32)})})});
  Value* y = e.op("Mul", {e.op("Mul", {xf, inv_rms}), e.cast(n.input(1), DType::f32)});
  return {e.cast(y, x->dtype)};
}

std::vector<Value*> expand_global_pool(Graph& graph, const Node& n) {
  Emitter e(graph, n);
  Value* x = n.input(0);
  return {e.reduce(n.op == "GlobalAveragePool" ? "ReduceMean" : "ReduceMax", x, axes_from(2, x->rank()))};
}

// The norm and log-sum reductions in terms of ReduceSum/ReduceMax and elementwise ops, on
// float inputs with constant axes (the form fused kernels take).
std::vector<Value*> expand_norm_reduction(Graph& graph, const Node& n) {
  Value* x = n.input(0);
  if (!is_float(x->dtype) || (n.has_input(1) && !n.input(1)->constant)) return {};
  Emitter e(graph, n);
  auto reduce = [&](const std::string& type, Value* v) {
    std::vector<Value*> inputs = {v};
    if (n.has_input(1)) inputs.push_back(n.input(1));
    return e.op(type, inputs, n.attrs);
  };
  Value* xf = e.cast(x, DType::f32);
  Value* y = nullptr;
  if (n.op == "ReduceL1") y = reduce("ReduceSum", e.op("Abs", {xf}));
  if (n.op == "ReduceL2") y = e.op("Sqrt", {reduce("ReduceSum", e.op("Mul", {xf, xf}))});
  if (n.op == "ReduceSumSquare") y = reduce("ReduceSum", e.op("Mul", {xf, xf}));
  if (n.op == "ReduceLogSum") y = e.op("Log", {reduce("ReduceSum", xf)});
  if (n.op == "ReduceLogSumExp") {
    // Shifted by the maximum so that exp cannot overflow; an infinite maximum shifts by 0, as
    // the reference kernel does (a row of -inf gives -inf, not NaN). The shift needs the maximum
    // with the reduced axes kept; without keepdims the result adds it again without them (one
    // more maximum in the same kernel, where a Squeeze would need the axes resolved here).
    auto finite_max = [&](int64_t keepdims) {
      std::vector<Value*> inputs = {xf};
      if (n.has_input(1)) inputs.push_back(n.input(1));
      AttributeMap attrs = n.attrs;
      attrs["keepdims"] = keepdims;
      Value* m = e.op("ReduceMax", inputs, attrs);
      return e.op("Where", {e.op("IsInf", {m}), e.scalar(0.0, DType::f32), m});
    };
    Value* shift = finite_max(1);
    Value* sum = reduce("ReduceSum", e.op("Exp", {e.op("Sub", {xf, shift})}));
    y = e.op("Add", {e.op("Log", {sum}), n.attr_int("keepdims", 1) == 1 ? shift : finite_max(0)});
  }
  return y ? std::vector<Value*>{e.cast(y, x->dtype)} : std::vector<Value*>{};
}

std::vector<Value*> expand(Graph& graph, const Node& n) {
  if (n.op == "Softmax" || n.op == "LogSoftmax") return expand_softmax(graph, n, n.op == "LogSoftmax");
  if (n.op == "LayerNormalization") return expand_layer_norm(graph, n);
  if (n.op == "BatchNormalization") return expand_batch_norm(graph, n);
  if (n.op == "RMSNormalization") return expand_rms_norm(graph, n);
  if (n.op == "InstanceNormalization" || n.op == "GroupNormalization") return expand_group_norm(graph, n);
  if (n.op == "GlobalAveragePool" || n.op == "GlobalMaxPool") return expand_global_pool(graph, n);
  if (n.op == "ReduceL1" || n.op == "ReduceL2" || n.op == "ReduceSumSquare" || n.op == "ReduceLogSum" ||
      n.op == "ReduceLogSumExp") {
    return expand_norm_reduction(graph, n);
  }
  return {};
}

}  // namespace

int decompose_composites(Graph& graph) {
  int rewritten = 0;
  for (Node* n : graph.nodes()) {
    std::vector<Value*> replacement = expand(graph, *n);
    if (replacement.empty()) continue;
    for (size_t i = 0; i < n->outputs.size() && i < replacement.size(); ++i) {
      graph.replace_all_uses(n->outputs[i], replacement[i]);
      // Graph outputs are known to users by name: the replacement takes the original's name.
      std::swap(n->outputs[i]->name, replacement[i]->name);
    }
    ++rewritten;
  }
  if (rewritten > 0) {
    graph.topo_sort();
    graph.remove_dead_nodes();
  }
  return rewritten;
}

}  // namespace tilefuse::passes
