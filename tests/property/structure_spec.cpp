#include "property/structure_spec.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ir/printer.h"

namespace tilefuse::property {
namespace {

const char* const kUnary[] = {"Relu", "Neg", "Abs"};
const char* const kBinary[] = {"Add", "Mul", "Sub"};

template <size_t N>
const char* pick(const char* const (&ops)[N], int which) {
  return ops[static_cast<size_t>(which) % N];
}

class StructureBuilder {
 public:
  explicit StructureBuilder(const StructureSpec& spec) : spec_(spec) {
    Shape domain;
    for (size_t i = 0; i < spec.dims.size(); ++i) {
      std::string symbol = fmt::format("d{}", i);
      bindings_[symbol] = spec.dims[i];
      domain.push_back(spec.symbolic ? Dim(SymExpr::symbol(symbol)) : Dim(spec.dims[i]));
    }
    pool_.push_back(input(domain));
  }

  BuiltGraph run() {
    if (spec_.unused_input) input({Dim(3)});
    for (const StepSpec& step : spec_.steps) pool_.push_back(apply(step));
    mark_outputs();
    return std::move(out_);
  }

 private:
  Graph& graph() { return out_.graph; }

  Value* input(const Shape& shape) {
    std::string name = fmt::format("in{}", out_.input_dims.size());
    std::vector<int64_t>& dims = out_.input_dims[name];
    for (const Dim& d : shape) dims.push_back(d.evaluate(bindings_));
    return graph().add_input(name, DType::f32, shape);
  }

  Value* node(const std::string& op, std::vector<Value*> inputs, AttributeMap attrs = {}) {
    std::string id = fmt::format("{}", next_id_++);
    Value* v = graph().add_node(op, op + id, std::move(inputs), {"v" + id}, std::move(attrs))->outputs[0];
    graph().infer_shapes();
    return v;
  }

  Value* constant(Tensor t) { return graph().add_constant(fmt::format("c{}", next_id_++), std::move(t)); }
  Value* i64_constant(const std::vector<int64_t>& values) {
    return constant(Tensor::from_vector(DType::i64, {static_cast<int64_t>(values.size())}, values));
  }

  Value* operand(int choice) { return pool_[static_cast<size_t>(choice) % pool_.size()]; }

  // An earlier value of the same shape, else a new input of `lhs`'s shape.
  Value* same_shape(Value* lhs, int choice) {
    for (size_t k = 0; k < pool_.size(); ++k) {
      Value* v = pool_[(static_cast<size_t>(choice) + k) % pool_.size()];
      if (v != lhs && v->shape == lhs->shape) return v;
    }
    return input(lhs->shape);
  }

  Value* apply(const StepSpec& step) {
    Value* x = operand(step.operand);
    switch (step.kind) {
      case StepKind::Unary: return node(pick(kUnary, step.which), {x});
      case StepKind::Binary: return node(pick(kBinary, step.which), {x, same_shape(x, step.other)});
      case StepKind::View: return view(x, step.which);
      case StepKind::MatMul: return matmul(x, step.which);
      case StepKind::Concat: return node("Concat", {x, same_shape(x, step.other)}, {{"axis", int64_t{0}}});
      case StepKind::RewrittenProduct: return rewritten_product(x, step.which);
      case StepKind::Convolution: return convolution(x, step.which);
    }
    return nullptr;
  }

  // Each kind of view the executor aliases instead of copying, and index maps that become a
  // product's operand strides or a kernel's reads (a transposed operand, every other column, rows
  // reversed, a product joined to itself). The slices hold for every length, empty included.
  Value* view(Value* x, int which) {
    const int64_t last = x->rank() - 1;
    if (last < 0 && which % 9 >= 5) return node("Identity", {x});
    switch (which % 9) {
      case 0: return node("Reshape", {x, i64_constant({-1})});
      case 1: return node("Flatten", {x}, {{"axis", int64_t{x->rank() > 1 ? 1 : 0}}});
      case 2: return node("Unsqueeze", {x, i64_constant({0})});
      case 3: return node("Squeeze", {node("Unsqueeze", {x, i64_constant({-1})}), i64_constant({-1})});
      case 4: return node("Identity", {x});
      case 5: {
        std::vector<int64_t> perm(static_cast<size_t>(x->rank()));
        for (int64_t a = 0; a <= last; ++a) perm[static_cast<size_t>(a)] = a;
        if (last > 0) std::swap(perm[static_cast<size_t>(last)], perm[static_cast<size_t>(last - 1)]);
        return node("Transpose", {x}, {{"perm", perm}});
      }
      case 6: return node("Slice", {x, i64_constant({0}), i64_constant({kOpenEnd}), i64_constant({last}), i64_constant({2})});
      case 7: return node("Slice", {x, i64_constant({-1}), i64_constant({-kOpenEnd}), i64_constant({0}), i64_constant({-1})});
      default: return node("Concat", {x, x}, {{"axis", last}});
    }
  }
  static constexpr int64_t kOpenEnd = std::numeric_limits<int64_t>::max();

  // x @ w with w a new input [k, 3] or [k, 1] (a BLAS step); for a matrix x, sometimes as Gemm
  // with a bias row; sometimes a Linear layer with GELU as PyTorch exports it.
  Value* matmul(Value* x, int which) {
    const Dim n(which % 2 == 0 ? 3 : 1);
    if (which % 8 >= 4) return linear_gelu(x, n, which);
    Value* w = input({x->shape.back(), n});
    if (x->rank() == 2 && which % 4 >= 2) return node("Gemm", {x, w, input({n})}, {{"beta", 0.5}});
    return node("MatMul", {x, w});
  }

  // x @ w + b, then GELU's five ops in one of the three arrangements the exporters write (which
  // the fused mode folds into one FusedMatMul): w constant when x's last dim is static, else a new
  // input; b a constant [n]. Sometimes the biased product joins the pool, so that a later step
  // may read it too and the fold must be refused.
  Value* linear_gelu(Value* x, const Dim& n, int which) {
    const Dim& k = x->shape.back();
    Value* w = k.is_const() ? constant(values({k.value(), n.value()})) : input({k, n});
    Value* y = node("Add", {node("MatMul", {x, w}), constant(values({n.value()}))});
    if (which % 3 == 0) pool_.push_back(y);
    auto scalar = [&](float v) { return constant(Tensor::scalar_f32(v)); };
    Value* s = node("Add", {node("Erf", {node("Div", {y, scalar(std::sqrt(2.0f))})}), scalar(1.0f)});
    switch ((which / 8) % 3) {
      case 0: return node("Mul", {node("Mul", {y, s}), scalar(0.5f)});
      case 1: return node("Mul", {y, node("Mul", {s, scalar(0.5f)})});
      default: return node("Mul", {node("Mul", {y, scalar(0.5f)}), s});
    }
  }

  // A weight [rows, cols]: a constant when both are known, else a new input (which no fold takes).
  Value* weight(const Dim& rows, const Dim& cols) {
    if (rows.is_const() && cols.is_const()) return constant(values({rows.value(), cols.value()}));
    return input({rows, cols});
  }

  // x with rank >= `rank`: size-1 dims put in front.
  Value* at_least_rank(Value* x, int64_t rank) {
    while (x->rank() < rank) x = node("Unsqueeze", {x, i64_constant({0})});
    return x;
  }

  // Products the fused mode rewrites before it plans kernels. Sometimes an intermediate joins the
  // pool, so that a later step reads it too and the rewrite must be refused.
  Value* rewritten_product(Value* x, int which) {
    const Dim k = x->shape.back();  // a copy: every node() infers the shapes again
    switch (which % 5) {
      case 0: {  // a Linear layer as Gemm: [rows, k] x [3, k]^T + [3] (passes/gemm_as_matmul.h)
        Value* rows = node("Flatten", {x}, {{"axis", x->rank() - 1}});
        return node("Gemm", {rows, weight(Dim(3), k), constant(values({3}))}, {{"transB", int64_t{1}}});
      }
      case 1: {  // the result's leading dims rotated, its last kept (FusedMatMul's perm_y)
        Value* matrices = at_least_rank(x, 3);
        Value* p = node("MatMul", {matrices, weight(k, Dim(3))});
        if (which % 3 == 0) pool_.push_back(p);
        std::vector<int64_t> perm = {p->rank() - 2};
        for (int64_t d = 0; d + 2 < p->rank(); ++d) perm.push_back(d);
        perm.push_back(p->rank() - 1);
        return node("Transpose", {p}, {{"perm", perm}});
      }
      case 2: {  // a product's 96 columns split into 64 and 32 (passes/matmul_split_folding.h)
        Value* p = node("MatMul", {x, weight(k, Dim(96))});
        if (which % 3 == 0) pool_.push_back(p);
        Node* split = graph().add_node("Split", fmt::format("Split{}", next_id_), {p, i64_constant({64, 32})},
                                       {fmt::format("v{}a", next_id_), fmt::format("v{}b", next_id_)}, {{"axis", int64_t{-1}}});
        ++next_id_;
        graph().infer_shapes();
        pool_.push_back(split->outputs[1]);
        return split->outputs[0];
      }
      case 3: return linear_tanh_gelu(x, which);
      default: {  // SiLU after a product, as x * Sigmoid(x)
        Value* p = node("MatMul", {at_least_rank(x, 2), weight(k, Dim(3))});
        if (which % 3 == 0) pool_.push_back(p);
        return node("Mul", {node("Sigmoid", {p}), p});
      }
    }
  }

  // x @ w + b, sometimes reshaped to [-1, 3], then GELU's tanh approximation as GPT-2 writes it:
  // 0.5 * y * (1 + tanh(sqrt(2 / pi) * (y + 0.044715 * y^3))).
  Value* linear_tanh_gelu(Value* x, int which) {
    const Dim k = x->shape.back();
    Value* matrix = at_least_rank(x, 2);
    Value* y = node("Add", {node("MatMul", {matrix, weight(k, Dim(3))}), constant(values({3}))});
    if (which % 8 >= 4) y = node("Reshape", {y, i64_constant({-1, 3})});
    if (which % 3 == 0) pool_.push_back(y);
    auto scalar = [&](float v) { return constant(Tensor::scalar_f32(v)); };
    Value* cube = node("Mul", {scalar(0.044715f), node("Pow", {y, scalar(3.0f)})});
    Value* t = node("Tanh", {node("Mul", {scalar(0.7978845608f), node("Add", {y, cube})})});
    return node("Mul", {node("Mul", {scalar(0.5f), y}), node("Add", {scalar(1.0f), t})});
  }

  // x as a one-channel image [1, 1, rows, last dim] (its leading dims folded into the rows).
  Value* as_image(Value* x) {
    std::vector<int64_t> axes;
    for (int64_t d = 0; d < 4 - x->rank(); ++d) axes.push_back(d);
    Value* image = axes.empty() ? x : node("Unsqueeze", {x, i64_constant(axes)});
    return node("Reshape", {image, i64_constant({1, 1, -1, 0})});  // 0: the last dim as it is
  }

  // Conv of `x` to `maps` maps with a constant weight and bias; `group` groups.
  Value* conv(Value* x, int64_t maps, int64_t kernel, AttributeMap attrs, int64_t group = 1) {
    const int64_t channels = x->shape[1].value();
    attrs["group"] = group;
    return node("Conv", {x, constant(values({maps, channels / group, kernel, kernel})), constant(values({maps}))},
                std::move(attrs));
  }

  // Convolutions and what fused mode folds around them (passes/conv_epilogue_folding.h,
  // passes/pointwise_depthwise_folding.h): a residual Add, activations, a 1x1 expansion read by
  // a depthwise convolution. Sometimes an intermediate joins the pool, so a later step reads it
  // too and the fold must be refused.
  Value* convolution(Value* x, int which) {
    const AttributeMap pad1 = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
    auto share = [&](Value* v) {
      if (which % 3 == 0) pool_.push_back(v);
      return v;
    };
    auto relu6 = [&](Value* v) {
      return node("Clip", {v, constant(Tensor::scalar_f32(0.0f)), constant(Tensor::scalar_f32(6.0f))});
    };
    switch (which % 5) {
      case 0: return node("Relu", {share(conv(as_image(x), 4, 3, pad1))});  // a stem: maps in lanes
      case 1: {  // a residual block: 3x3 to 8 maps, 1x1 back to 1, + the image, Relu
        Value* image = as_image(x);
        Value* mid = share(node("Relu", {conv(image, 8, 3, pad1)}));
        return node("Relu", {node("Add", {conv(mid, 1, 1, {}), image})});
      }
      case 2: {  // an inverted residual's expansion and depthwise convolution, stride 1 or 2
        Value* expanded = share(node("HardSwish", {conv(as_image(x), 16, 1, {})}));
        AttributeMap attrs = pad1;
        attrs["strides"] = std::vector<int64_t>{which % 2 + 1, which % 2 + 1};
        return relu6(conv(expanded, 16, 3, attrs, 16));
      }
      case 3: {  // depthwise 5x5 with SiLU written out
        Value* expanded = conv(as_image(x), 16, 1, {});
        Value* d = share(conv(expanded, 16, 5, {{"pads", std::vector<int64_t>{2, 2, 2, 2}}}, 16));
        return node("Mul", {d, node("Sigmoid", {d})});
      }
      default: {  // MobileNetV3's first expansion at its full size, a new input: the expansion
                  // (1 MiB) and the depthwise convolution become one PointwiseDepthwiseConv
        Value* image = input({Dim(1), Dim(16), Dim(64), Dim(64)});
        Value* expanded = share(node("Relu", {conv(image, 64, 1, {})}));
        AttributeMap attrs = pad1;
        attrs["strides"] = std::vector<int64_t>{2, 2};
        return conv(node("HardSwish", {conv(expanded, 64, 3, attrs, 64)}), 8, 1, {});
      }
    }
  }

  // A constant of `shape` with values in [-0.5, 0.5).
  static Tensor values(std::vector<int64_t> shape) {
    Tensor t(DType::f32, std::move(shape));
    for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, static_cast<double>((i * 7) % 13) / 13.0 - 0.5);
    return t;
  }

  // Every value nothing uses is an output, then the spec's extra ones (views, values read later,
  // repeats), then an input and a constant if asked.
  void mark_outputs() {
    for (size_t i = 1; i < pool_.size(); ++i) {
      if (pool_[i]->users.empty()) graph().add_output(pool_[i]);
    }
    for (int choice : spec_.extra_outputs) graph().add_output(operand(choice));
    if (spec_.input_as_output) graph().add_output(pool_.front());
    if (spec_.constant_as_output) {
      graph().add_output(constant(Tensor::from_vector(DType::f32, {2}, std::vector<float>{1.5f, -2.0f})));
    }
    if (graph().outputs().empty()) graph().add_output(pool_.back());
  }

  const StructureSpec& spec_;
  SymbolBindings bindings_;
  BuiltGraph out_;
  std::vector<Value*> pool_;
  int next_id_ = 0;
};

rc::Gen<StepSpec> step_spec() {
  return rc::gen::build<StepSpec>(
      rc::gen::set(&StepSpec::kind, rc::gen::weightedElement<StepKind>({{25, StepKind::Unary},
                                                                        {20, StepKind::Binary},
                                                                        {30, StepKind::View},
                                                                        {12, StepKind::MatMul},
                                                                        {8, StepKind::Concat},
                                                                        {8, StepKind::RewrittenProduct},
                                                                        {5, StepKind::Convolution}})),
      rc::gen::set(&StepSpec::which, rc::gen::inRange(0, 60)), rc::gen::set(&StepSpec::operand, rc::gen::inRange(0, 60)),
      rc::gen::set(&StepSpec::other, rc::gen::inRange(0, 60)));
}

}  // namespace

rc::Gen<StructureSpec> structure_spec() {
  auto dims = rc::gen::mapcat(rc::gen::inRange<size_t>(1, 4), [](size_t rank) {
    return rc::gen::container<std::vector<int64_t>>(rank, rc::gen::inRange<int64_t>(1, 10));
  });
  auto steps = rc::gen::mapcat(rc::gen::inRange(1, 8), [](int n) {
    return rc::gen::container<std::vector<StepSpec>>(static_cast<size_t>(n), step_spec());
  });
  auto extra = rc::gen::mapcat(rc::gen::inRange(0, 4), [](int n) {
    return rc::gen::container<std::vector<int>>(static_cast<size_t>(n), rc::gen::inRange(0, 60));
  });
  auto one_in = [](int n) { return rc::gen::map(rc::gen::inRange(0, n), [](int v) { return v == 0; }); };
  return rc::gen::build<StructureSpec>(
      rc::gen::set(&StructureSpec::dims, dims),
      rc::gen::set(&StructureSpec::symbolic, rc::gen::map(rc::gen::inRange(0, 8), [](int v) { return v != 0; })),
      rc::gen::set(&StructureSpec::steps, steps), rc::gen::set(&StructureSpec::extra_outputs, extra),
      rc::gen::set(&StructureSpec::input_as_output, one_in(6)),
      rc::gen::set(&StructureSpec::constant_as_output, one_in(6)),
      rc::gen::set(&StructureSpec::unused_input, one_in(4)),
      rc::gen::set(&StructureSpec::data_seed, rc::gen::arbitrary<uint64_t>()));
}

BuiltGraph build_structure(const StructureSpec& spec) { return StructureBuilder(spec).run(); }

StructureSpec with_dims(StructureSpec spec, std::vector<int64_t> dims) {
  spec.dims = std::move(dims);
  return spec;
}

void showValue(const StructureSpec& spec, std::ostream& os) {
  os << "dims [";
  for (size_t i = 0; i < spec.dims.size(); ++i) os << (i ? ", " : "") << spec.dims[i];
  os << "] " << (spec.symbolic ? "symbolic" : "static") << " data_seed " << spec.data_seed
     << (spec.input_as_output ? " input-as-output" : "") << (spec.constant_as_output ? " constant-as-output" : "")
     << (spec.unused_input ? " unused-input" : "") << "\n";
  for (const StepSpec& s : spec.steps) {
    os << "  step kind " << static_cast<int>(s.kind) << " which " << s.which << " operand " << s.operand << " other "
       << s.other << "\n";
  }
  os << "  extra outputs:";
  for (int o : spec.extra_outputs) os << " " << o;
  os << "\n" << print_graph(build_structure(spec).graph);
}

}  // namespace tilefuse::property
