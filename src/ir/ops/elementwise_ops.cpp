// Elementwise ops with ONNX opset-17 semantics: arithmetic, unary math, comparisons, logic,
// Where, Clip, Min/Max, Cast and Identity. (Activations live in nn_ops.cpp.)
//
// Integer arithmetic, comparisons, Where, Cast and Identity also compute sym_value when their
// inputs' contents are known: that is how the shape arithmetic PyTorch's exporter writes
// (Shape -> Gather -> Mul/Div -> Concat -> Reshape) keeps a symbolic batch dim.
#include <functional>

#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/ops/infer_util.h"

namespace tilefuse {
namespace {

using namespace ops;

// One entry of a sym_value computation; nullopt when the result is not known at compile time.
using ValueFn = std::function<std::optional<Dim>(const Dim&, const Dim&)>;

// Applies `fn` to the known contents of inputs 0 and 1 with numpy broadcasting of 0-D/1-D
// contents. Shapes are checked by the caller; here a mismatch just means "unknown".
std::optional<Values> combine_known(const Node& node, const ValueFn& fn) {
  auto a = known_int_values(node.input(0));
  auto b = known_int_values(node.input(1));
  if (!a || !b) return std::nullopt;
  if (a->size() != b->size() && a->size() != 1 && b->size() != 1) return std::nullopt;
  size_t n = a->size() == 1 ? b->size() : a->size();
  Values out;
  for (size_t i = 0; i < n; ++i) {
    auto v = fn((*a)[a->size() == 1 ? 0 : i], (*b)[b->size() == 1 ? 0 : i]);
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

// Integer Div on known values. Constants truncate toward zero like C++ (and ONNX Runtime);
// symbolic values are dims, which are non-negative, where truncation and floor agree.
std::optional<Dim> divide_known(const Dim& a, const Dim& b) {
  if (b == Dim(0)) return std::nullopt;
  if (a.is_const() && b.is_const()) return Dim(a.value() / b.value());
  return floordiv(a, b);
}

// Equality of known values; symbols stand for dims, so a bare symbol never equals a negative
// constant (this settles the `Equal(shape, -1)` test PyTorch writes before Expand). An expression
// of symbols (`seq - 1`, a sliced dim) is taken to be a dim too, and the graph records that
// assumption so every run checks it.
std::optional<Dim> equal_known(const Node& node, Graph& graph, const Dim& a, const Dim& b) {
  if (a == b) return Dim(1);
  if (a.is_const() && b.is_const()) return Dim(0);
  auto negative_const = [](const Dim& d) { return d.is_const() && d.value() < 0; };
  if ((a.is_symbol() && negative_const(b)) || (b.is_symbol() && negative_const(a))) return Dim(0);
  const Dim& expr = a.is_const() ? b : a;
  if (negative_const(a.is_const() ? a : b)) {
    graph.assume_nonnegative(expr, fmt::format("{} compares it with {}", node.describe(),
                                               (a.is_const() ? a : b).to_string()));
    return Dim(0);
  }
  return std::nullopt;
}

void infer_arithmetic(Node& node, Graph& graph, const ValueFn& fn) {
  require_same_dtype(node, 1, 0);
  DType t = node.input(0)->dtype;
  Shape shape = broadcast_inputs(node, graph);
  set_output(node, 0, t, shape, is_integer(t) ? combine_known(node, fn) : std::nullopt);
}

void add_arithmetic(OpRegistry& r, std::string name, ValueFn fn) {
  r.add({.name = std::move(name),
         .traits = kPointwise | kBroadcasting,
         .min_inputs = 2,
         .max_inputs = 2,
         .input_dtypes = kNumericTypes,
         .infer = [fn](Node& node, Graph& graph) { infer_arithmetic(node, graph, fn); }});
}

// Mod: fmod=0 takes the divisor's sign (Python %), fmod=1 the dividend's (C fmod); ONNX
// requires fmod=1 for floats. PyTorch writes Mod on constant shape values inside attention.
std::optional<Dim> mod_known(const Node& node, const Dim& a, const Dim& b) {
  if (b == Dim(0)) return std::nullopt;
  if (node.attr_int("fmod", 0) == 0) return mod(a, b);
  if (a.is_const() && b.is_const()) return Dim(b.value() == -1 ? 0 : a.value() % b.value());
  return std::nullopt;
}

void infer_mod(Node& node, Graph& graph) {
  require_same_dtype(node, 1, 0);
  DType t = node.input(0)->dtype;
  if (is_float(t) && node.attr_int("fmod", 0) == 0) {
    fail_user("{}: Mod of floating-point input '{}' needs attribute fmod=1 (ONNX rule)", node.describe(),
              node.input(0)->name);
  }
  ValueFn fn = [&node](const Dim& a, const Dim& b) { return mod_known(node, a, b); };
  set_output(node, 0, t, broadcast_inputs(node, graph), is_integer(t) ? combine_known(node, fn) : std::nullopt);
}

void infer_pow(Node& node, Graph& graph) {
  require_dtype(node, 1, kNumericTypes);
  set_output(node, 0, node.input(0)->dtype, broadcast_inputs(node, graph));
}

void add_unary(OpRegistry& r, std::string name, const std::vector<DType>& types) {
  r.add({.name = std::move(name), .traits = kPointwise, .input_dtypes = types, .infer = infer_like_input});
}

// Comparisons and logic: inputs share a type, the output is bool.
void infer_predicate(Node& node, Graph& graph) {
  for (size_t i = 1; i < node.inputs.size(); ++i) require_same_dtype(node, i, 0);
  bool is_equal = node.op == "Equal";
  ValueFn equal = [&](const Dim& a, const Dim& b) { return equal_known(node, graph, a, b); };
  set_output(node, 0, DType::boolean, broadcast_inputs(node, graph), is_equal ? combine_known(node, equal) : std::nullopt);
}

void add_predicate(OpRegistry& r, std::string name, const std::vector<DType>& types, int arity = 2) {
  r.add({.name = std::move(name),
         .traits = arity > 1 ? kPointwise | kBroadcasting : kPointwise,
         .min_inputs = arity,
         .max_inputs = arity,
         .input_dtypes = types,
         .infer = infer_predicate});
}

// Where selects between known contents when the condition is known.
std::optional<Values> select_known(const Node& node, const Shape& shape) {
  auto cond = known_int_values(node.input(0));
  auto x = known_int_values(node.input(1));
  auto y = known_int_values(node.input(2));
  if (!cond || !x || !y || shape.size() > 1) return std::nullopt;
  if (!shape.empty() && !shape[0].is_const()) return std::nullopt;
  size_t n = shape.empty() ? 1 : static_cast<size_t>(shape[0].value());
  auto at = [n](const Values& v, size_t i) -> const Dim& { return v[v.size() == n ? i : 0]; };
  Values out;
  for (size_t i = 0; i < n; ++i) out.push_back(at(*cond, i) == Dim(0) ? at(*y, i) : at(*x, i));
  return out;
}

void infer_where(Node& node, Graph& graph) {
  require_dtype(node, 1, kAllTypes);
  require_same_dtype(node, 2, 1);
  Shape shape = broadcast_inputs(node, graph);
  set_output(node, 0, node.input(1)->dtype, shape, select_known(node, shape));
}

// Clip's optional min and max are scalars of the input's type.
void infer_clip(Node& node, Graph&) {
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    require_same_dtype(node, i, 0);
    require_scalar(node, i);
  }
  set_output(node, 0, node.input(0)->dtype, node.input(0)->shape);
}

void infer_variadic(Node& node, Graph& graph) {
  for (size_t i = 1; i < node.inputs.size(); ++i) require_same_dtype(node, i, 0);
  set_output(node, 0, node.input(0)->dtype, broadcast_inputs(node, graph));
}

void infer_cast(Node& node, Graph&) {
  int64_t to = node.attr_int("to", 0);
  auto dtype = dtype_from_onnx(static_cast<int>(to));
  if (!dtype) {
    fail_user("{}: attribute 'to' = {} is not a supported element type (ONNX TensorProto codes: "
              "1 f32, 2 u8, 3 i8, 6 i32, 7 i64, 9 bool, 10 f16, 11 f64, 16 bf16)", node.describe(), to);
  }
  const Value* in = node.input(0);
  // Shape tensors stay known through integer-to-integer casts (i64 <-> i32).
  bool keeps_values = is_integer(*dtype) && is_integer(in->dtype);
  set_output(node, 0, *dtype, in->shape, keeps_values ? known_int_values(in) : std::nullopt);
}

void infer_identity(Node& node, Graph&) {
  const Value* in = node.input(0);
  set_output(node, 0, in->dtype, in->shape, known_int_values(in));
}

void register_arithmetic(OpRegistry& r) {
  add_arithmetic(r, "Add", [](const Dim& a, const Dim& b) { return std::optional<Dim>(a + b); });
  add_arithmetic(r, "Sub", [](const Dim& a, const Dim& b) { return std::optional<Dim>(a - b); });
  add_arithmetic(r, "Mul", [](const Dim& a, const Dim& b) { return std::optional<Dim>(a * b); });
  add_arithmetic(r, "Div", divide_known);
  r.add({.name = "Mod",
         .traits = kPointwise | kBroadcasting,
         .min_inputs = 2,
         .max_inputs = 2,
         .attrs = {{"fmod", AttrKind::Int, false}},
         .input_dtypes = kNumericTypes,
         .infer = infer_mod});
  r.add({.name = "Pow",
         .traits = kPointwise | kBroadcasting,
         .min_inputs = 2,
         .max_inputs = 2,
         .input_dtypes = {DType::i32, DType::i64, DType::f16, DType::f32, DType::f64, DType::bf16},
         .infer = infer_pow});
  for (const char* name : {"Min", "Max"}) {
    r.add({.name = name,
           .traits = kPointwise | kBroadcasting,
           .min_inputs = 1,
           .max_inputs = kVariadic,
           .input_dtypes = kNumericTypes,
           .infer = infer_variadic});
  }
  r.add({.name = "Clip",
         .traits = kPointwise | kBroadcasting,
         .min_inputs = 1,
         .max_inputs = 3,
         .input_dtypes = kNumericTypes,
         .infer = infer_clip});
}

// Neg keeps known integer contents (the expanded LayerNorm function negates its axis).
void infer_neg(Node& node, Graph&) {
  const Value* in = node.input(0);
  std::optional<Values> values;
  if (is_integer(in->dtype)) {
    if (auto known = known_int_values(in)) {
      values = Values{};
      for (const Dim& d : *known) values->push_back(-d);
    }
  }
  set_output(node, 0, in->dtype, in->shape, values);
}

void register_unary_math(OpRegistry& r) {
  r.add({.name = "Neg", .traits = kPointwise, .input_dtypes = kSignedTypes, .infer = infer_neg});
  add_unary(r, "Abs", kNumericTypes);
  add_unary(r, "Sign", kNumericTypes);
  for (const char* name : {"Exp", "Log", "Sqrt", "Reciprocal", "Floor", "Ceil", "Round", "Sin", "Cos", "Tan", "Asin",
                           "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"}) {
    add_unary(r, name, kFloatTypes);
  }
  // Variadic Sum and Mean broadcast all their operands, like Min and Max.
  for (const char* name : {"Sum", "Mean"}) {
    r.add({.name = name,
           .traits = kPointwise | kBroadcasting,
           .min_inputs = 1,
           .max_inputs = kVariadic,
           .input_dtypes = kFloatTypes,
           .infer = infer_variadic});
  }
}

void infer_float_test(Node& node, Graph&) { set_output(node, 0, DType::boolean, node.input(0)->shape); }

void register_predicates(OpRegistry& r) {
  add_predicate(r, "Equal", kAllTypes);
  for (const char* name : {"Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) add_predicate(r, name, kNumericTypes);
  add_predicate(r, "And", {DType::boolean});
  add_predicate(r, "Or", {DType::boolean});
  add_predicate(r, "Xor", {DType::boolean});
  add_predicate(r, "Not", {DType::boolean}, 1);
  r.add({.name = "IsNaN", .traits = kPointwise, .input_dtypes = kFloatTypes, .infer = infer_float_test});
  r.add({.name = "IsInf",
         .traits = kPointwise,
         .attrs = {{"detect_negative", AttrKind::Int}, {"detect_positive", AttrKind::Int}},
         .input_dtypes = kFloatTypes,
         .infer = infer_float_test});
  r.add({.name = "Where",
         .traits = kPointwise | kBroadcasting,
         .min_inputs = 3,
         .max_inputs = 3,
         .input_dtypes = {DType::boolean},
         .infer = infer_where});
}

void register_conversions(OpRegistry& r) {
  r.add({.name = "Cast",
         .traits = kPointwise,
         .attrs = {{"to", AttrKind::Int, true}},
         .input_dtypes = kAllTypes,
         .infer = infer_cast});
  r.add({.name = "Identity", .traits = kPointwise | kDataMovement, .input_dtypes = kAllTypes, .infer = infer_identity});
}

}  // namespace

void register_elementwise_ops(OpRegistry& registry) {
  register_arithmetic(registry);
  register_unary_math(registry);
  register_predicates(registry);
  register_conversions(registry);
}

}  // namespace tilefuse
