// Ops that compute shape metadata or constants: Shape, Constant, ConstantOfShape and Range.
// Shape is where sym_value starts: its output's contents are the input's (possibly symbolic) dims.
#include <algorithm>
#include <cmath>

#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/ops/infer_util.h"

namespace tilefuse {
namespace {

using namespace ops;

// Shape-15: dims [start, end) of the input, both clamped to [0, rank] after adding rank to a
// negative value.
void infer_shape(Node& node, Graph&) {
  const Shape& dims = node.input(0)->shape;
  int64_t rank = static_cast<int64_t>(dims.size());
  auto clamp = [rank](int64_t i) { return std::clamp(i < 0 ? i + rank : i, int64_t{0}, rank); };
  int64_t start = clamp(node.attr_int("start", 0));
  int64_t end = std::max(start, clamp(node.attr_int("end", rank)));
  Values values(dims.begin() + start, dims.begin() + end);
  set_output(node, 0, DType::i64, {Dim(end - start)}, values);
}

// The one value attribute of a Constant node as a tensor.
Tensor constant_tensor(const Node& node) {
  const char* kinds[] = {"value", "value_float", "value_floats", "value_int", "value_ints"};
  int given = 0;
  for (const char* kind : kinds) given += node.has_attr(kind) ? 1 : 0;
  if (given != 1) {
    fail_user("{}: needs exactly one of the attributes value, value_float, value_floats, value_int, "
              "value_ints, got {} (sparse and string constants are not supported)", node.describe(), given);
  }
  if (const Tensor* t = node.attr_tensor("value")) return *t;
  if (node.has_attr("value_float")) return Tensor::scalar_f32(static_cast<float>(node.attr_float("value_float", 0)));
  if (node.has_attr("value_int")) return Tensor::scalar_i64(node.attr_int("value_int", 0));
  if (node.has_attr("value_ints")) {
    auto ints = node.attr_ints("value_ints");
    return Tensor::from_vector(DType::i64, {static_cast<int64_t>(ints.size())}, ints);
  }
  auto floats = node.attr_floats("value_floats");
  return Tensor::from_vector(DType::f32, {static_cast<int64_t>(floats.size())}, floats);
}

void infer_constant(Node& node, Graph&) {
  Tensor t = constant_tensor(node);
  std::optional<Values> values;
  if (t.numel() <= kMaxSymValueElements && !is_float(t.dtype())) {
    std::vector<int64_t> ints = t.to_i64_vector();
    values = Values(ints.begin(), ints.end());
  }
  set_output(node, 0, t.dtype(), shape_of(t.shape()), values);
}

// The output shape described by a 1-D shape input: its contents if known, else fresh symbols
// when its length is static.
Shape shape_from_input(const Node& node, Graph& graph, size_t index) {
  require_dtype(node, index, {DType::i64});
  require_rank(node, index, 1);
  auto values = known_int_values(node.input(index));
  if (!values) {
    auto length = static_length(node.input(index));
    if (!length) fail_unknown_rank(node, index);
    return fresh_shape(graph, static_cast<size_t>(*length));
  }
  for (const Dim& d : *values) {
    if (d.is_const() && d.value() < 0) {
      fail_user("{}: {} asks for shape {} with a negative dim", node.describe(), describe_input(node, index),
                shape_to_string(*values));
    }
  }
  return *values;
}

void infer_constant_of_shape(Node& node, Graph& graph) {
  Tensor fill = Tensor::scalar_f32(0.0f);
  if (const Tensor* t = node.attr_tensor("value")) {
    if (t->numel() != 1) fail_user("{}: attribute 'value' must have one element, got {}", node.describe(), t->summary());
    fill = *t;
  }
  Shape shape = shape_from_input(node, graph, 0);
  std::optional<Values> values;
  if (!is_float(fill.dtype()) && shape.size() <= 1 && is_static(shape)) {
    int64_t count = shape.empty() ? 1 : shape[0].value();
    if (count <= kMaxSymValueElements) values = Values(static_cast<size_t>(count), Dim(fill.get_i64(0)));
  }
  set_output(node, 0, fill.dtype(), shape, values);
}

// Number of elements of Range(start, limit, delta): max(ceil((limit - start) / delta), 0).
std::optional<Dim> range_length(const Node& node) {
  auto start = known_int_values(node.input(0));
  auto limit = known_int_values(node.input(1));
  auto delta = known_const_ints(node.input(2));
  if (start && limit && delta && start->size() == 1 && limit->size() == 1 && delta->size() == 1) {
    int64_t d = delta->front();
    if (d == 0) fail_user("{}: delta is 0; Range needs a non-zero step", node.describe());
    Dim span = d > 0 ? limit->front() - start->front() : start->front() - limit->front();
    Dim n = floordiv(span + Dim(std::abs(d) - 1), Dim(std::abs(d)));
    // A symbolic span is assumed non-negative (a dim minus what precedes it), as in Slice.
    return n.is_const() ? Dim(std::max<int64_t>(n.value(), 0)) : n;
  }
  auto fstart = known_scalar(node.input(0));
  auto flimit = known_scalar(node.input(1));
  auto fdelta = known_scalar(node.input(2));
  if (!fstart || !flimit || !fdelta) return std::nullopt;
  if (*fdelta == 0) fail_user("{}: delta is 0; Range needs a non-zero step", node.describe());
  double n = std::ceil((*flimit - *fstart) / *fdelta);
  return Dim(n > 0 ? static_cast<int64_t>(n) : 0);
}

void infer_range(Node& node, Graph& graph) {
  for (size_t i : {0, 1, 2}) {
    require_same_dtype(node, i, 0);
    require_scalar(node, i);
  }
  auto length = range_length(node);
  Dim n = length ? *length : graph.fresh_symbol();
  std::optional<Values> values;
  auto start = known_const_ints(node.input(0));
  auto delta = known_const_ints(node.input(2));
  if (n.is_const() && n.value() <= kMaxSymValueElements && start && delta && !is_float(node.input(0)->dtype)) {
    values.emplace();
    for (int64_t i = 0; i < n.value(); ++i) values->push_back(start->front() + i * delta->front());
  }
  set_output(node, 0, node.input(0)->dtype, {n}, values);
}

}  // namespace

void register_shape_ops(OpRegistry& registry) {
  registry.add({.name = "Shape",
                .traits = kShapeOp,
                .attrs = {{"start", AttrKind::Int}, {"end", AttrKind::Int}},
                .infer = infer_shape});
  registry.add({.name = "Constant",
                .traits = kShapeOp,
                .min_inputs = 0,
                .max_inputs = 0,
                .attrs = {{"value", AttrKind::Tensor},
                          {"value_float", AttrKind::Float},
                          {"value_floats", AttrKind::Floats},
                          {"value_int", AttrKind::Int},
                          {"value_ints", AttrKind::Ints}},
                .infer = infer_constant});
  registry.add({.name = "ConstantOfShape",
                .traits = kShapeOp,
                .attrs = {{"value", AttrKind::Tensor}},
                .infer = infer_constant_of_shape});
  registry.add({.name = "Range",
                .traits = kShapeOp,
                .min_inputs = 3,
                .max_inputs = 3,
                .input_dtypes = {DType::f32, DType::f64, DType::i32, DType::i64},
                .infer = infer_range});
}

}  // namespace tilefuse
