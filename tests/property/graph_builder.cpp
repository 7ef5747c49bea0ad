#include "property/graph_builder.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <random>

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
    out_.bindings = bindings_;
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
    if (spec_.symbolic && (op.variant & 2)) settled_by_the_run(shape, op.axes >> 6);
    return input(shape, DType::f32);
  }

  // Gives the first symbolic dim of `shape` from `from` on a symbol of its own, which the run binds
  // to 1 or to the dim's value (which one depends on the input set's dims, so a graph sees both):
  // a broadcast that only the run settles, as exporters write for masks (`max(d, e)` shapes).
  void settled_by_the_run(Shape& shape, int from) {
    for (size_t k = 0; k < shape.size(); ++k) {
      Dim& d = shape[(static_cast<size_t>(from) + k) % shape.size()];
      if (d.is_const()) continue;
      const std::string symbol = fmt::format("e{}", next_id_++);
      const int64_t value = d.evaluate(bindings_);
      // An empty dim against a run-time 1 is refused by name (Graph::check_assumptions): not drawn.
      bindings_[symbol] = value != 0 && (value + static_cast<int64_t>(next_id_) + dims_sum()) % 2 ? 1 : value;
      d = Dim(SymExpr::symbol(symbol));
      return;
    }
  }

  int64_t dims_sum() const { return std::accumulate(spec_.dims.begin(), spec_.dims.end(), int64_t{0}); }

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
      case OpKind::IndexMap: return index_map(op);
    }
    return nullptr;
  }

  Value* half_round_trip(const OpSpec& op) {
    DType half_type = op.variant & 1 ? DType::bf16 : DType::f16;
    return cast(cast(operand(op.operand, false), half_type), DType::f32);
  }

  // Integer arithmetic (kernels over native types) on the first input's values, which every
  // mode has exactly, so truncation to integers agrees: scaled, cast to an integer type, a
  // chain of wrapping, dividing and Mod-ing ops, maybe gathered or transposed, and back to f32
  // (maybe times a gather of the input: a float gather in the same scalar kernel). `which` 3:
  // f64 arithmetic instead.
  Value* integer_detour(const OpSpec& op) {
    if (op.which % 4 == 3) return float64_detour(op);
    static const DType kTypes[] = {DType::i64, DType::i32, DType::i8};
    const DType t = kTypes[static_cast<size_t>(op.which) % 4];
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
    // Gathers inside the scalar kernel: of the integers (axes bit 4), and of the f32 input beside
    // them (bit 8), both with constant indices in [-n, n) along an axis, keeping the shape.
    const bool gathers = is_static(i->shape);
    const int64_t axis = (op.axes >> 4) % i->rank();
    if (gathers && (op.axes & 4)) i = gather_elements_in_place(i, axis, op.variant);
    Value* f = nullptr;
    if (gathers && (op.axes & 8)) f = gather_elements_in_place(pool_.front(), axis, op.variant + 1);
    if ((op.axes & 2) && i->rank() >= 2 && f == nullptr) i = node("Transpose", {i});
    // Scaled back to O(1) by 2^-8 (exactly), as the tolerances assume: integers up to ~200 put
    // f32's rounding at 1e-5 where later ops cancel them (a mean minus its values).
    Value* out = node("Mul", {cast(i, DType::f32), constant(Tensor::scalar_f32(0x1p-8f))});
    return f == nullptr ? out : node("Mul", {out, f});
  }

  // f64 arithmetic (kernels over doubles) on any value: exp, a product, a sigmoid, maybe a sum
  // over an axis (variant 1), and back to f32.
  Value* float64_detour(const OpSpec& op) {
    Value* x = operand(op.operand, op.variant & 1);
    Value* d = cast(x, DType::f64);
    d = node("Sigmoid", {node("Mul", {node("Exp", {d}), d})});
    if (op.variant & 1) {
      d = node("ReduceSum", {d}, {{"axes", std::vector<int64_t>{op.axes % x->rank()}}, {"keepdims", int64_t{op.variant & 2}}});
    }
    return cast(d, DType::f32);
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

  // Views and index maps, which fusion turns into the index maps of the kernels around them:
  // Slice, Gather, Expand, Pad, Tile, Reshape (its shape computed from Shape, as exporters write
  // it), Split, Concat, GatherElements. Symbolic dims may be 0 at run time, so an op that needs
  // a dim's value (a gather's index, a reflecting pad) pads a symbolic axis first or falls back.
  Value* index_map(const OpSpec& op) {
    Value* x = operand(op.operand, true);
    const int64_t axis = op.axes % x->rank();
    switch (op.which % 9) {
      case 0: return slice(x, axis, op.variant);
      case 1: return gather(x, axis, op.variant);
      case 2: return expand(x, op.variant);
      case 3: return pad(x, axis, op.variant);
      case 4: return tile(x, axis, op.variant);
      case 5: return reshape(x, op.axes, op.variant);
      case 6: return split(x, axis, op.variant);
      case 7: return concat(x, axis, op.variant);
      default: return gather_elements(x, axis, op);
    }
  }

  Value* i64(std::vector<int64_t> values) {
    const auto n = static_cast<int64_t>(values.size());
    return constant(Tensor::from_vector(DType::i64, {n}, values));
  }

  // The static value of x's dim on `axis`, or nothing.
  static std::optional<int64_t> static_dim(const Value* x, int64_t axis) {
    return x->shape[static_cast<size_t>(axis)].const_value();
  }

  Value* slice(Value* x, int64_t axis, int variant) {
    constexpr int64_t kEnd = std::numeric_limits<int64_t>::max(), kBegin = std::numeric_limits<int64_t>::min();
    // {start, end, step}: x[1:], x[:-1], x[-3:], x[1::2], x.flip(axis), x[-2:0:-2]
    static const int64_t kSlices[6][3] = {{1, kEnd, 1}, {0, -1, 1}, {-3, kEnd, 1},
                                          {1, kEnd, 2}, {-1, kBegin, -1}, {-2, 0, -2}};
    const int64_t* s = kSlices[variant % 6];
    const int64_t on = variant & 8 ? axis - x->rank() : axis;
    return node("Slice", {x, i64({s[0]}), i64({s[1]}), i64({on}), i64({s[2]})});
  }

  // x padded with `extra` zeros at the end of `axis`.
  Value* pad_end(Value* x, int64_t axis, int64_t extra) {
    std::vector<int64_t> pads(2 * static_cast<size_t>(x->rank()), 0);
    pads[static_cast<size_t>(x->rank() + axis)] = extra;
    return node("Pad", {x, i64(pads)});
  }

  Value* gather(Value* x, int64_t axis, int variant) {
    if (static_dim(x, axis).value_or(0) == 0) x = pad_end(x, axis, 2);  // symbolic, or emptied by a slice
    const int64_t last = std::min<int64_t>(static_dim(x, axis).value_or(2), 2) - 1;  // 0 or 1
    Value* indices = nullptr;
    switch (variant % 3) {
      case 0: indices = constant(Tensor::from_vector(DType::i64, {}, std::vector<int64_t>{-1})); break;  // drops the axis
      case 1: indices = i64({0, -1, last}); break;
      default: indices = constant(Tensor::from_vector(DType::i64, {2, 1}, std::vector<int64_t>{last, 0})); break;
    }
    return node("Gather", {x, indices}, {{"axis", variant & 4 ? axis - x->rank() : axis}});
  }

  // Every literal 1 of x's shape broadcast to 3 (variant 1) or kept, and a leading 2 (variant 2).
  Value* expand(Value* x, int variant) {
    std::vector<int64_t> to;
    if (variant & 2) to.push_back(2);
    for (const Dim& d : x->shape) to.push_back(d == Dim(1) && (variant & 1) ? 3 : 1);
    return node("Expand", {x, i64(to)});
  }

  Value* pad(Value* x, int64_t axis, int variant) {
    std::vector<int64_t> pads(2 * static_cast<size_t>(x->rank()), 0);
    pads[static_cast<size_t>(axis)] = 1;
    pads[static_cast<size_t>(x->rank() + axis)] = variant & 4 ? 2 : 0;
    const std::optional<int64_t> n = static_dim(x, axis);
    const char* const modes[] = {"constant", "reflect", "edge"};
    std::string mode = modes[variant % 3];
    if (!n || (mode == "reflect" && *n <= 2)) mode = "constant";  // reflect needs pad < dim
    std::vector<Value*> inputs = {x, i64(pads)};
    if (mode == "constant" && (variant & 8)) inputs.push_back(constant(Tensor::scalar_f32(0.25f)));
    return node("Pad", inputs, {{"mode", mode}});
  }

  Value* tile(Value* x, int64_t axis, int variant) {
    std::vector<int64_t> repeats(static_cast<size_t>(x->rank()), 1);
    repeats[static_cast<size_t>(axis)] = 2 + variant % 2;
    return node("Tile", {x, i64(repeats)});
  }

  // Variant 1: x flattened from an axis on, with a shape computed as exporters write
  // x.reshape(x.shape[0], -1): Concat(Slice(Shape(x)), [-1]). Else: the last dim split in two
  // where it is static and even, or a 1 put before it ([0, ..., 0, 1, -1]: 0 keeps a dim).
  Value* reshape(Value* x, int axes, int variant) {
    if ((variant & 1) && x->rank() >= 2) {
      const int64_t keep = 1 + axes % (x->rank() - 1);
      Value* kept = node("Slice", {node("Shape", {x}), i64({0}), i64({keep}), i64({0})});
      return node("Reshape", {x, node("Concat", {kept, i64({-1})}, {{"axis", int64_t{0}}})});
    }
    std::vector<int64_t> to(static_cast<size_t>(x->rank() - 1), 0);
    const std::optional<int64_t> last = static_dim(x, x->rank() - 1);
    to.push_back(last && *last % 2 == 0 ? 2 : 1);
    to.push_back(-1);
    return node("Reshape", {x, i64(to)});
  }

  // Both parts of a split join the pool; a symbolic axis is sliced instead.
  Value* split(Value* x, int64_t axis, int variant) {
    const std::optional<int64_t> n = static_dim(x, axis);
    if (!n || *n < 2) return slice(x, axis, variant);
    const int64_t first = variant & 1 ? 1 : *n / 2;
    Node* s = graph().add_node("Split", fmt::format("Split{}", next_id_), {x, i64({first, *n - first})},
                               {fmt::format("v{}a", next_id_), fmt::format("v{}b", next_id_)},
                               {{"axis", variant & 2 ? axis - x->rank() : axis}});
    ++next_id_;
    graph().infer_shapes();
    pool_.push_back(s->outputs[variant & 4 ? 0 : 1]);
    return s->outputs[variant & 4 ? 1 : 0];
  }

  // x joined on `axis` with its Tanh, and with x again (variant 1).
  Value* concat(Value* x, int64_t axis, int variant) {
    std::vector<Value*> parts = {x, node("Tanh", {x})};
    if (variant & 1) parts.push_back(x);
    return node("Concat", parts, {{"axis", variant & 2 ? axis - x->rank() : axis}});
  }

  // Constant indices in [-n, n) of x's shape with the axis shortened to at most 3; a symbolic
  // shape gathers instead.
  Value* gather_elements(Value* x, int64_t axis, const OpSpec& op) {
    if (!is_static(x->shape)) return gather(x, axis, op.variant);
    std::vector<int64_t> dims = static_dims(x->shape);
    dims[static_cast<size_t>(axis)] = std::min<int64_t>(dims[static_cast<size_t>(axis)], 3);
    return gather_elements(x, axis, dims, static_cast<uint64_t>(op.axes * 16 + op.variant));
  }

  // The same with indices of x's (static) shape.
  Value* gather_elements_in_place(Value* x, int64_t axis, int seed) {
    return gather_elements(x, axis, static_dims(x->shape), static_cast<uint64_t>(seed));
  }

  // GatherElements of x on `axis` with constant random indices of `dims`, in [-n, n).
  Value* gather_elements(Value* x, int64_t axis, const std::vector<int64_t>& dims, uint64_t seed) {
    const int64_t n = static_dims(x->shape)[static_cast<size_t>(axis)];
    std::vector<int64_t> indices(static_cast<size_t>(std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>())));
    std::mt19937_64 rng(seed);
    for (int64_t& i : indices) i = static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * n)) - n;
    return node("GatherElements", {x, constant(Tensor::from_vector(DType::i64, dims, indices))}, {{"axis", axis}});
  }

  Value* unary(const OpSpec& op) {
    std::string name = pick(kUnary, op.which);
    Value* x = operand(op.operand, false);
    if (name == "Log") return node("Log", {plus_one(node("Abs", {x}))});
    // Away from 0, where sqrt turns a statistic's last bits (a LayerNorm over 300000 values is
    // 1e-8 off an output of 3e-5) into 1e-5.
    if (name == "Sqrt") return node("Sqrt", {node("Add", {node("Abs", {x}), constant(Tensor::scalar_f32(0x1p-10f))})});
    if (name == "Gelu") return node("Gelu", {x}, {{"approximate", std::string(op.variant & 1 ? "tanh" : "none")}});
    return node(name, {x});
  }

  Value* binary(const OpSpec& op) {
    std::string name = pick(kBinary, op.which);
    Value* a = operand(op.operand, false);
    Value* b = second_operand(a, op);
    if (op.variant & 1) std::swap(a, b);  // the broadcast operand on the left too
    if (name == "Div") b = plus_one(node("Abs", {b}));  // after the swap: the divisor is guarded
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
      return node(pick(kReduce, op.which), {x, i64(axes)}, attrs);
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

bool within_assumptions(const Graph& graph, const SymbolBindings& bindings) {
  try {
    graph.check_assumptions(bindings);
    return true;
  } catch (const UserError&) {
    return false;
  }
}

std::map<std::string, Tensor> random_inputs(const BuiltGraph& built, uint64_t seed) {
  std::map<std::string, Tensor> inputs;
  for (const Value* in : built.graph.inputs()) {
    std::mt19937_64 rng = runtime::input_rng(seed, in->name);
    inputs[in->name] = runtime::random_tensor(in->dtype, built.input_dims.at(in->name), rng);
  }
  return inputs;
}

}  // namespace tilefuse::property
