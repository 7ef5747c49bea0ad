#include "ir/ops/infer_util.h"

#include <algorithm>
#include <set>

#include "ir/error.h"

namespace tilefuse::ops {

const std::vector<DType> kFloatTypes = {DType::f16, DType::f32, DType::f64, DType::bf16};
const std::vector<DType> kNumericTypes = {DType::f16, DType::f32, DType::f64, DType::bf16,
                                          DType::i8,  DType::i32, DType::i64, DType::u8};
const std::vector<DType> kSignedTypes = {DType::f16, DType::f32, DType::f64, DType::bf16,
                                         DType::i8,  DType::i32, DType::i64};
const std::vector<DType> kAllTypes(std::begin(kAllDTypes), std::end(kAllDTypes));
const std::vector<DType> kIndexTypes = {DType::i32, DType::i64};

namespace {

bool is_int_like(DType t) { return is_integer(t) || t == DType::boolean; }

}  // namespace

std::optional<Values> known_int_values(const Value* value) {
  if (value == nullptr) return std::nullopt;
  if (value->sym_value) return value->sym_value;
  if (value->constant && is_int_like(value->dtype) && value->constant->numel() <= kMaxSymValueElements) {
    std::vector<int64_t> ints = value->constant->to_i64_vector();
    return Values(ints.begin(), ints.end());
  }
  // An empty tensor's contents are known whatever produced it.
  if (is_static(value->shape) && num_elements(value->shape) == Dim(0)) return Values{};
  return std::nullopt;
}

std::optional<std::vector<int64_t>> known_const_ints(const Value* value) {
  auto values = known_int_values(value);
  if (!values) return std::nullopt;
  std::vector<int64_t> out;
  for (const Dim& d : *values) {
    if (!d.is_const()) return std::nullopt;
    out.push_back(d.value());
  }
  return out;
}

std::optional<double> known_scalar(const Value* value) {
  if (value == nullptr) return std::nullopt;
  if (value->constant && value->constant->numel() == 1) return value->constant->get_f64(0);
  if (value->sym_value && value->sym_value->size() == 1 && value->sym_value->front().is_const()) {
    return static_cast<double>(value->sym_value->front().value());
  }
  return std::nullopt;
}

std::optional<int64_t> static_length(const Value* value) {
  if (value == nullptr || value->rank() != 1 || !value->shape[0].is_const()) return std::nullopt;
  return value->shape[0].value();
}

std::optional<Values> sym_value_for(DType dtype, const Shape& shape, std::optional<Values> values) {
  if (!values || !is_int_like(dtype) || shape.size() > 1) return std::nullopt;
  if (static_cast<int64_t>(values->size()) > kMaxSymValueElements) return std::nullopt;
  if (num_elements(shape) != Dim(static_cast<int64_t>(values->size()))) {
    fail_internal("sym_value of {} entries for shape {}", values->size(), shape_to_string(shape));
  }
  return values;
}

void set_output(Node& node, size_t index, DType dtype, Shape shape, std::optional<Values> sym_value) {
  if (index >= node.outputs.size() || node.outputs[index] == nullptr) return;
  Value* out = node.outputs[index];
  out->sym_value = sym_value_for(dtype, shape, std::move(sym_value));
  out->dtype = dtype;
  out->shape = std::move(shape);
}

void infer_like_input(Node& node, Graph& /*graph*/) {
  const Value* in = node.input(0);
  set_output(node, 0, in->dtype, in->shape);
}

std::string describe_input(const Node& node, size_t index) {
  const Value* v = node.input(index);
  return v ? fmt::format("input {} ('{}')", index, v->name) : fmt::format("input {}", index);
}

void require_dtype(const Node& node, size_t index, const std::vector<DType>& allowed) {
  const Value* v = node.input(index);
  if (v == nullptr || std::find(allowed.begin(), allowed.end(), v->dtype) != allowed.end()) return;
  std::string names;
  for (DType t : allowed) names += (names.empty() ? "" : ", ") + std::string(dtype_name(t));
  fail_user("{}: {} has element type {}; {} accepts {} there", node.describe(), describe_input(node, index),
            dtype_name(v->dtype), node.op, names);
}

void require_same_dtype(const Node& node, size_t index, size_t like) {
  const Value* v = node.input(index);
  const Value* ref = node.input(like);
  if (v == nullptr || ref == nullptr || v->dtype == ref->dtype) return;
  fail_user("{}: {} has element type {} but {} has {}; {} needs them equal", node.describe(),
            describe_input(node, index), dtype_name(v->dtype), describe_input(node, like),
            dtype_name(ref->dtype), node.op);
}

void require_rank(const Node& node, size_t index, int64_t rank) {
  const Value* v = node.input(index);
  if (v == nullptr || v->rank() == rank) return;
  fail_user("{}: {} must have rank {}, got {}", node.describe(), describe_input(node, index), rank,
            v->type_string());
}

void require_scalar(const Node& node, size_t index) {
  const Value* v = node.input(index);
  if (v == nullptr || v->rank() == 0 || (v->rank() == 1 && v->shape[0] == Dim(1))) return;
  fail_user("{}: {} must be a scalar (rank 0 or one element), got {}", node.describe(),
            describe_input(node, index), v->type_string());
}

int64_t node_axis(const Node& node, int64_t axis, int64_t rank, std::string_view what) {
  return normalize_axis(axis, rank, fmt::format("{} {}", node.describe(), what));
}

std::vector<int64_t> node_axes(const Node& node, const std::vector<int64_t>& axes, int64_t rank,
                               std::string_view what) {
  std::vector<int64_t> out;
  std::set<int64_t> seen;
  for (int64_t axis : axes) {
    int64_t a = node_axis(node, axis, rank, what);
    if (!seen.insert(a).second) {
      fail_user("{}: {} names axis {} twice ({})", node.describe(), what, a, dims_to_string(axes));
    }
    out.push_back(a);
  }
  return out;
}

Shape broadcast_assuming(Graph& graph, const Shape& a, const Shape& b, const std::string& where) {
  Shape out = broadcast_shapes(a, b, where);
  for (const Shape* operand : {&a, &b}) {
    const size_t offset = out.size() - operand->size();
    for (size_t i = 0; i < operand->size(); ++i) {
      const Dim& d = (*operand)[i];
      if (d == Dim(1) || d == out[offset + i]) continue;
      graph.assume_broadcast(d, out[offset + i],
                             fmt::format("{} broadcasts {} against {}", where, shape_to_string(a), shape_to_string(b)));
    }
  }
  return out;
}

Shape broadcast_inputs(const Node& node, Graph& graph) {
  Shape out;
  bool first = true;
  for (const Value* in : node.inputs) {
    if (in == nullptr) continue;
    out = first ? in->shape : broadcast_assuming(graph, out, in->shape, node.describe());
    first = false;
  }
  return out;
}

Dim unify_dims(const Node& node, const Dim& a, const Dim& b, std::string_view what) {
  if (a == b || !b.is_const()) return a;
  if (!a.is_const()) return b;
  fail_user("{}: {} must be equal, got {} and {}", node.describe(), what, a.to_string(), b.to_string());
}

void require_unidirectional_broadcast(const Node& node, size_t index, const Shape& to) {
  const Value* v = node.input(index);
  if (v == nullptr) return;
  bool ok = v->shape.size() <= to.size();
  for (size_t i = 0; ok && i < v->shape.size(); ++i) {
    const Dim& from = v->shape[v->shape.size() - 1 - i];
    const Dim& target = to[to.size() - 1 - i];
    ok = from == target || from == Dim(1) || !from.is_const() || !target.is_const();
  }
  if (!ok) {
    fail_user("{}: {} of shape {} cannot be broadcast to {} (unidirectional rule: each trailing dim "
              "equal or 1)", node.describe(), describe_input(node, index), shape_to_string(v->shape),
              shape_to_string(to));
  }
}

Shape fresh_shape(Graph& graph, size_t rank) {
  Shape out;
  for (size_t i = 0; i < rank; ++i) out.push_back(graph.fresh_symbol());
  return out;
}

Shape fresh_shape_without_axes(const Node& node, Graph& graph, size_t axes_input) {
  int64_t rank = node.input(0)->rank();
  auto count = static_length(node.input(axes_input));
  if (!count) fail_unknown_rank(node, axes_input);
  if (*count > rank) {
    fail_user("{}: {} names {} axes but the input has rank {}", node.describe(), describe_input(node, axes_input),
              *count, rank);
  }
  return fresh_shape(graph, static_cast<size_t>(rank - *count));
}

void fail_unknown_rank(const Node& node, size_t index) {
  fail_user("{}: {} is not known at compile time and its length is not static, so the output rank "
            "cannot be inferred (the IR needs ranks; make the input a constant or fix its length)",
            node.describe(), describe_input(node, index));
}

}  // namespace tilefuse::ops
