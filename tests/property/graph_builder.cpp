#include "property/graph_builder.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "runtime/random_fill.h"

namespace tilefuse::property {

namespace {

const char* const kUnary[] = {"Neg", "Abs", "Exp", "Log", "Sqrt", "Tanh", "Sigmoid", "Erf", "Relu", "Gelu"};
const char* const kBinary[] = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
const char* const kCompare[] = {"Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Equal"};
const char* const kReduce[] = {"ReduceSum", "ReduceMean", "ReduceMax"};

template <size_t N>
const char* pick(const char* const (&ops)[N], int which) {
  return ops[static_cast<size_t>(which) % N];
}

// Numpy broadcasting where every pair of dims is equal or a literal 1. Stricter than
// broadcast_shapes for symbols: d0 against d1 could conflict at run time.
bool broadcastable(const Shape& a, const Shape& b) {
  for (size_t i = 1; i <= std::min(a.size(), b.size()); ++i) {
    const Dim& x = a[a.size() - i];
    const Dim& y = b[b.size() - i];
    if (!(x == y || x == Dim(1) || y == Dim(1))) return false;
  }
  return true;
}

class Builder {
 public:
  explicit Builder(const GraphSpec& spec) : spec_(spec) {
    for (size_t i = 0; i < spec.dims.size(); ++i) {
      std::string symbol = fmt::format("d{}", i);
      bindings_[symbol] = spec.dims[i];
      domain_.push_back(spec.symbolic ? Dim(SymExpr::symbol(symbol)) : Dim(spec.dims[i]));
    }
  }

  BuiltGraph run() {
    Value* x = input(domain_, spec_.input_dtype);
    pool_.push_back(half() ? cast(x, DType::f32) : x);
    for (const OpSpec& op : spec_.ops) pool_.push_back(apply(op));
    mark_outputs();
    return std::move(out_);
  }

 private:
  bool half() const { return spec_.input_dtype != DType::f32; }
  Graph& graph() { return out_.graph; }

  Value* input(const Shape& shape, DType dtype) {
    std::string name = fmt::format("in{}", out_.input_dims.size());
    std::vector<int64_t>& dims = out_.input_dims[name];
    for (const Dim& d : shape) dims.push_back(d.evaluate(bindings_));
    return graph().add_input(name, dtype, shape);
  }

  Value* node(const std::string& op, std::vector<Value*> inputs, AttributeMap attrs = {}) {
    std::string id = fmt::format("{}", next_id_++);
    Value* v = graph().add_node(op, op + id, std::move(inputs), {"v" + id}, std::move(attrs))->outputs[0];
    graph().infer_shapes();
    return v;
  }

  Value* cast(Value* v, DType to) { return node("Cast", {v}, {{"to", int64_t{dtype_to_onnx(to)}}}); }
  Value* constant(Tensor t) { return graph().add_constant(fmt::format("c{}", next_id_++), std::move(t)); }
  Value* plus_one(Value* v) { return node("Add", {v, constant(Tensor::scalar_f32(1.0f))}); }

  // The operand `choice` picks among the values so far; ops that need an axis skip scalars.
  Value* operand(int choice, bool need_axis) {
    for (size_t k = 0; k < pool_.size(); ++k) {
      Value* v = pool_[(static_cast<size_t>(choice) + k) % pool_.size()];
      if (!need_axis || v->rank() > 0) return v;
    }
    return pool_.front();  // the first input always has rank >= 1
  }

  // A value to combine with `lhs`: an earlier one if it broadcasts with it, else a new input of
  // lhs's shape with leading axes dropped and some axes set to 1 (both chosen by `axes`).
  Value* second_operand(Value* lhs, const OpSpec& op) {
    size_t choice = static_cast<size_t>(op.other) % (pool_.size() + 1);
    if (choice < pool_.size() && broadcastable(lhs->shape, pool_[choice]->shape)) return pool_[choice];
    Shape shape(lhs->shape.begin() + (op.axes >> 4) % (lhs->rank() + 1), lhs->shape.end());
    for (size_t i = 0; i < shape.size(); ++i) {
      if (op.axes & (1 << i)) shape[i] = Dim(1);
    }
    return input(shape, DType::f32);
  }

  Value* apply(const OpSpec& op) {
    switch (op.kind) {
      case OpKind::Unary: return unary(op);
      case OpKind::Binary: return binary(op);
      case OpKind::Select: return select(op);
      case OpKind::Reduce: return reduce(op);
      case OpKind::Transpose: return transpose(op);
      case OpKind::Softmax: return softmax(op);
      case OpKind::LayerNorm: return layer_norm(op);
      case OpKind::HalfRoundTrip: return half_round_trip(op);
      case OpKind::IntegerDetour: return integer_detour(op);
      case OpKind::DenseConcat: return dense_concat(op);
    }
    return nullptr;
  }

  Value* half_round_trip(const OpSpec& op) {
    DType half_type = op.variant & 1 ? DType::bf16 : DType::f16;
    return cast(cast(operand(op.operand, false), half_type), DType::f32);
  }

  // Integer arithmetic (kernels over native types) on the first input's values, which every
  // mode has exactly, so truncation to integers agrees: scaled, cast to an integer type, a
  // chain of wrapping, dividing and Mod-ing ops, maybe transposed, and back to f32.
  Value* integer_detour(const OpSpec& op) {
    static const DType kTypes[] = {DType::i64, DType::i32, DType::i8};
    const DType t = kTypes[static_cast<size_t>(op.which) % 3];
    auto integer = [&](int64_t v) {
      Tensor k(t, {});
      k.set_i64(0, v);
      return constant(k);
    };
    Value* i = cast(node("Mul", {pool_.front(), constant(Tensor::scalar_f32(64.0f))}), t);
    i = node("Add", {node("Mul", {i, integer(3)}), integer(5)});  // i8 wraps
    if (op.variant & 1) i = node("Div", {i, integer(op.variant & 2 ? -4 : 7)});
    if (op.variant & 4) i = node("Mod", {i, integer(op.variant & 8 ? -5 : 6)});
    if (op.axes & 1) i = node("Max", {i, integer(-20)});
    if ((op.axes & 2) && i->rank() >= 2) i = node("Transpose", {i});
    return cast(i, DType::f32);
  }

  // A DenseNet block on an axis: each layer reduces the Concat of the block's input and the
  // layers before it over that axis (keeping it, so the result is one more part), and the
  // block's value is the Concat of them all, each layer's Concat a prefix of it. Variant 8: a
  // Concat of the layers alone joins the pool too (a run that does not start the block).
  Value* dense_concat(const OpSpec& op) {
    Value* x = operand(op.operand, true);
    const int64_t axis = op.axes % x->rank();
    AttributeMap on_axis = {{"axis", op.variant & 4 ? axis - x->rank() : axis}};
    std::vector<Value*> parts = {x};
    for (int layer = 0; layer < 1 + op.variant % 3; ++layer) {
      Value* features = node("Concat", parts, on_axis);
      Value* grown = node(op.which % 2 ? "ReduceMax" : "ReduceSum", {node("Tanh", {features})},
                          {{"axes", std::vector<int64_t>{axis}}, {"keepdims", int64_t{1}}});
      parts.push_back(grown);
    }
    if (op.variant & 8) pool_.push_back(node("Concat", std::vector<Value*>(parts.begin() + 1, parts.end()), on_axis));
    return node("Concat", parts, on_axis);
  }

  Value* unary(const OpSpec& op) {
    std::string name = pick(kUnary, op.which);
    Value* x = operand(op.operand, false);
    if (name == "Log") return node("Log", {plus_one(node("Abs", {x}))});
    if (name == "Sqrt") return node("Sqrt", {node("Abs", {x})});
    if (name == "Gelu") return node("Gelu", {x}, {{"approximate", std::string(op.variant & 1 ? "tanh" : "none")}});
    return node(name, {x});
  }

  Value* binary(const OpSpec& op) {
    std::string name = pick(kBinary, op.which);
    Value* a = operand(op.operand, false);
    Value* b = second_operand(a, op);
    if (name == "Div") b = plus_one(node("Abs", {b}));
    if (op.variant & 1) std::swap(a, b);  // the broadcast operand on the left too
    return node(name, {a, b});
  }

  Value* select(const OpSpec& op) {
    Value* a = operand(op.operand, false);
    Value* b = second_operand(a, op);
    Value* condition = node(pick(kCompare, op.which), {a, b});
    return op.variant & 1 ? node("Where", {condition, b, a}) : node("Where", {condition, a, b});
  }

  Value* reduce(const OpSpec& op) {
    Value* x = operand(op.operand, true);
    int64_t rank = x->rank();
    std::vector<int64_t> axes;
    for (int64_t a = 0; a < rank; ++a) {
      if (op.axes & (1 << a)) axes.push_back(op.variant & 4 ? a - rank : a);  // negative axes too
    }
    if (axes.empty()) axes.push_back(op.axes % rank);
    AttributeMap attrs = {{"keepdims", int64_t{op.variant & 1}}};
    if (op.variant & 2) {  // opset-18 form: axes as a constant input
      Value* axes_input = constant(Tensor::from_vector(DType::i64, {static_cast<int64_t>(axes.size())}, axes));
      return node(pick(kReduce, op.which), {x, axes_input}, attrs);
    }
    attrs["axes"] = axes;
    return node(pick(kReduce, op.which), {x}, attrs);
  }

  Value* transpose(const OpSpec& op) {
    Value* x = operand(op.operand, false);
    if (op.variant & 1) return node("Transpose", {x});  // default perm: reversed axes
    std::vector<int64_t> perm(static_cast<size_t>(x->rank()));
    std::iota(perm.begin(), perm.end(), 0);
    for (int k = op.axes % 24; k > 0; --k) std::next_permutation(perm.begin(), perm.end());
    return node("Transpose", {x}, {{"perm", perm}});
  }

  Value* softmax(const OpSpec& op) {
    Value* x = operand(op.operand, true);
    int64_t axis = op.axes % x->rank();
    return node("Softmax", {x}, {{"axis", op.variant & 1 ? axis - x->rank() : axis}});
  }

  Value* layer_norm(const OpSpec& op) {
    Value* x = operand(op.operand, true);
    int64_t axis = op.axes % x->rank();
    Shape normalized(x->shape.begin() + axis, x->shape.end());
    std::vector<Value*> inputs = {x, input(normalized, DType::f32)};
    if (op.variant & 2) inputs.push_back(input(normalized, DType::f32));
    return node("LayerNormalization", inputs, {{"axis", axis}, {"epsilon", 1e-5}});
  }

  // Every computed value nothing else uses is an output; with half inputs the last one is
  // cast back to the input type, so stores of f16/bf16 are tested too.
  void mark_outputs() {
    for (size_t i = 1; i < pool_.size(); ++i) {
      Value* v = pool_[i];
      if (i + 1 == pool_.size() && half()) v = cast(v, spec_.input_dtype);
      if (v->users.empty()) graph().add_output(v);
    }
    if (graph().outputs().empty()) graph().add_output(pool_.back());
  }

  const GraphSpec& spec_;
  SymbolBindings bindings_;
  Shape domain_;
  BuiltGraph out_;
  std::vector<Value*> pool_;  // f32 values the next ops may use
  int next_id_ = 0;
};

}  // namespace

BuiltGraph build_graph(const GraphSpec& spec) { return Builder(spec).run(); }

std::map<std::string, Tensor> random_inputs(const BuiltGraph& built, uint64_t seed) {
  std::map<std::string, Tensor> inputs;
  for (const Value* in : built.graph.inputs()) {
    std::mt19937_64 rng = runtime::input_rng(seed, in->name);
    inputs[in->name] = runtime::random_tensor(in->dtype, built.input_dims.at(in->name), rng);
  }
  return inputs;
}

}  // namespace tilefuse::property
