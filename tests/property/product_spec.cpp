#include "property/product_spec.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/printer.h"
#include "property/graph_assembly.h"

namespace tilefuse::property {
namespace {

// Multiply-adds per case at most: the reference interpreter's double loop runs every case twice.
constexpr int64_t kMaxMultiplyAdds = int64_t{1} << 21;

int64_t batch_size(const std::vector<int64_t>& batch) {
  return std::accumulate(batch.begin(), batch.end(), int64_t{1}, std::multiplies<>());
}

// An Einsum's labels: a letter, a size and the terms it is in.
struct EinsumLabel {
  char letter;
  int64_t size;
  bool a, b, out;
};

// The labels of an Einsum spec, in role order: batch; a second row label (3) where bit 0 of
// `einsum` is set, then m; a second column label (2) where bit 1 is, then n; k, none where bits
// 2-3 are 1 (an outer product), and a second contracted label (2) where they are 2; a label
// summed in A only (2) where bit 4 is.
std::vector<EinsumLabel> einsum_labels(const ProductSpec& s) {
  std::vector<EinsumLabel> labels;
  auto add = [&](int64_t size, bool a, bool b, bool out) {
    labels.push_back({static_cast<char>('a' + labels.size()), size, a, b, out});
  };
  for (int64_t d : s.batch) add(d, true, true, true);
  if (s.einsum & 1) add(3, true, false, true);
  add(s.m, true, false, true);
  if (s.einsum & 2) add(2, false, true, true);
  add(s.n, false, true, true);
  const int contracted = s.einsum >> 2 & 3;
  if (contracted != 1) add(s.k, true, true, false);
  if (contracted == 2) add(2, true, true, false);
  if (s.einsum & 16) add(2, true, false, false);
  return labels;
}

// Multiply-adds of an Einsum beyond batch x m x n x k: its extra labels' sizes.
int64_t einsum_factor(const ProductSpec& s) {
  if (s.form != ProductForm::Einsum) return 1;
  const int contracted = s.einsum >> 2 & 3;
  return (s.einsum & 1 ? 3 : 1) * (s.einsum & 2 ? 2 : 1) * (contracted == 2 ? 2 : 1) * (s.einsum & 16 ? 2 : 1);
}

// The elements an Einsum's outputs sum: its contracted labels' and its summed one's.
int64_t einsum_depth(const ProductSpec& s) {
  const int contracted = s.einsum >> 2 & 3;
  return (contracted == 1 ? 1 : s.k) * (contracted == 2 ? 2 : 1) * (s.einsum & 16 ? 2 : 1);
}

int64_t multiply_adds(const ProductSpec& s) {
  const int64_t products = s.form == ProductForm::Attention ? 2 : 1;  // Q K^T, then times V
  return products * batch_size(s.batch) * s.m * s.n * s.k * einsum_factor(s);
}

// Whether the symbol is A's first batch dim (else its rows, or attention's sequence).
bool symbolic_batch(const ProductSpec& s) {
  return s.symbolic && s.form == ProductForm::MatMul && !s.batch.empty() && s.b_batch != 3;
}

// A dim that is the symbol where `symbolic`.
Dim symbolic_or(bool symbolic, int64_t size) { return symbolic ? Dim(SymExpr::symbol("S")) : Dim(size); }

class ProductBuilder {
 public:
  ProductBuilder(const ProductSpec& spec, int64_t size) : s_(normalised(spec)), g_(s_.data_seed) {
    g_.bind("S", size);
  }

  BuiltGraph run() {
    switch (s_.form) {
      case ProductForm::Attention: return g_.finish({attention()});
      case ProductForm::Einsum: return g_.finish({einsum()});
      case ProductForm::Gemm: return finish_after(epilogue(gemm()));
      default: return finish_after(epilogue(matmul()));
    }
  }

 private:
  DType dtype() const { return s_.dtype; }

  // A constant (f32 or the model's half type) or an input of that shape.
  Value* operand(const Shape& shape, bool constant) {
    if (!constant) return g_.input(shape, dtype());
    std::vector<int64_t> dims;
    for (const Dim& d : shape) dims.push_back(d.value());
    return g_.weights(dims, dtype());
  }

  Value* swap_last_two(Value* v) {
    std::vector<int64_t> perm(static_cast<size_t>(v->rank()));
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    return g_.node("Transpose", {v}, {{"perm", perm}});
  }

  // A [.., m, k], written as drawn (transposed, or with its heads between m and k).
  Value* a_operand(Shape batch) {
    const Dim m = symbolic_or(s_.symbolic && !symbolic_batch(s_), s_.m);
    if (s_.transpose_a == 2) {  // [b0, m, b1, k] -> [b0, b1, m, k]
      Value* a = g_.input({batch[0], m, batch[1], Dim(s_.k)}, dtype());
      return g_.node("Transpose", {a}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
    }
    if (s_.transpose_a == 1) {
      batch.insert(batch.end(), {Dim(s_.k), m});
      return swap_last_two(g_.input(batch, dtype()));
    }
    batch.insert(batch.end(), {m, Dim(s_.k)});
    return g_.input(batch, dtype());
  }

  Value* matmul() {
    Shape a_batch, b_batch;
    for (size_t d = 0; d < s_.batch.size(); ++d) {
      const Dim dim = symbolic_or(d == 0 && symbolic_batch(s_), s_.batch[d]);
      a_batch.push_back(dim);
      const bool ones = s_.b_batch == 2 && (s_.broadcast >> d & 1);
      if (s_.b_batch != 0) b_batch.push_back(ones ? Dim(1) : dim);
    }
    if (s_.b_batch == 3) a_batch.clear();
    Value* a = a_operand(a_batch);
    Shape b_shape = b_batch;
    b_shape.insert(b_shape.end(), s_.transpose_b ? std::initializer_list<Dim>{Dim(s_.n), Dim(s_.k)}
                                                 : std::initializer_list<Dim>{Dim(s_.k), Dim(s_.n)});
    const bool static_b = std::all_of(b_shape.begin(), b_shape.end(), [](const Dim& d) { return d.is_const(); });
    Value* b = operand(b_shape, s_.constant_b && static_b);
    return g_.node("MatMul", {a, s_.transpose_b ? swap_last_two(b) : b});
  }

  Value* gemm() {
    const Dim m = symbolic_or(s_.symbolic, s_.m), k(s_.k), n(s_.n);
    const bool trans_a = s_.gemm & 1;
    Value* a = g_.input(trans_a ? Shape{k, m} : Shape{m, k}, dtype());
    Value* b = operand(s_.transpose_b ? Shape{n, k} : Shape{k, n}, s_.constant_b);
    std::vector<Value*> inputs = {a, b};
    switch ((s_.gemm >> 3) % 5) {
      case 1: inputs.push_back(g_.weights({s_.n}, dtype())); break;
      case 2: inputs.push_back(g_.input({m, n}, dtype())); break;
      case 3: inputs.push_back(g_.weights({}, dtype())); break;
      case 4: inputs.push_back(g_.input({m, Dim(1)}, dtype())); break;
      default: break;
    }
    return g_.node("Gemm", inputs,
                   {{"transA", int64_t{trans_a}}, {"transB", int64_t{s_.transpose_b}},
                    {"alpha", s_.gemm & 2 ? 0.5 : 1.0}, {"beta", s_.gemm & 4 ? 0.5 : 1.0}});
  }

  Value* bias() { return g_.node("Add", {current_, g_.weights({s_.n}, dtype())}); }

  Value* epilogue(Value* y) {
    current_ = y;
    auto scalar = [&](float v) { return g_.scalar(v); };
    switch (s_.epilogue) {
      case 1: return bias();
      case 2: return g_.node("Relu", {bias()});
      case 3: {  // TorchScript's GELU: x * (erf(x / sqrt 2) + 1) * 0.5
        Value* x = bias();
        Value* e = g_.node("Add", {g_.node("Erf", {g_.node("Div", {x, scalar(std::sqrt(2.0f))})}), scalar(1.0f)});
        return g_.node("Mul", {g_.node("Mul", {x, e}), scalar(0.5f)});
      }
      case 4: {  // GPT-2's: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
        Value* x = bias();
        Value* cube = g_.node("Mul", {scalar(0.044715f), g_.node("Pow", {x, scalar(3.0f)})});
        Value* t = g_.node("Tanh", {g_.node("Mul", {scalar(0.7978845608f), g_.node("Add", {x, cube})})});
        return g_.node("Mul", {g_.node("Mul", {scalar(0.5f), x}), g_.node("Add", {scalar(1.0f), t})});
      }
      case 5: return g_.node("Mul", {y, g_.node("Sigmoid", {y})});
      case 6: return g_.node("Add", {g_.node("Mul", {y, scalar(0.125f)}), g_.input(y->shape, dtype())});
      case 7: return g_.node("Clip", {bias(), scalar(0.0f), scalar(6.0f)});
      case 8: return g_.node("HardSwish", {y});
      case 9: return g_.node("Sigmoid", {g_.node("Add", {y, g_.input({Dim(s_.n)}, dtype())})});
      default: return y;
    }
  }

  BuiltGraph finish_after(Value* y) {
    switch (s_.after) {
      case 1: {
        const int64_t first = s_.split;
        Node* split = g_.graph().add_node("Split", "Split", {y, g_.i64s({first, s_.n - first})}, {"part0", "part1"},
                                          {{"axis", int64_t{-1}}});
        g_.graph().infer_shapes();
        return g_.finish({split->outputs[0], split->outputs[1]});
      }
      case 2: {
        const int64_t r = y->rank();
        std::vector<int64_t> perm = {r - 2};
        for (int64_t d = 0; d + 2 < r; ++d) perm.push_back(d);
        perm.push_back(r - 1);
        if (r == 2) perm = {1, 0};
        return g_.finish({g_.node("Transpose", {y}, {{"perm", perm}})});
      }
      case 3: return g_.finish({g_.node("Softmax", {y}, {{"axis", int64_t{-1}}})});
      default: return g_.finish({y});
    }
  }

  // Attention as exporters write it: Q, K and V [b, seq, h, k] with their heads split out,
  // softmax(Q K^T / sqrt(k) + mask) V, and the heads merged back into [b, m, h * k].
  Value* attention() {
    const Dim b(s_.batch[0]), h(s_.batch[1]), k(s_.k);
    const Dim m = symbolic_or(s_.symbolic, s_.m), n = symbolic_or(s_.symbolic, s_.n);
    auto heads = [&](const Dim& seq, std::vector<int64_t> perm) {
      return g_.node("Transpose", {g_.input({b, seq, h, k})}, {{"perm", std::move(perm)}});
    };
    Value* q = heads(m, {0, 2, 1, 3});
    Value* kt = heads(n, {0, 2, 3, 1});
    Value* v = heads(n, {0, 2, 1, 3});
    Value* scores = g_.node("MatMul", {q, kt});
    const float root = std::sqrt(static_cast<float>(s_.k));
    scores = s_.gemm & 2 ? g_.node("Div", {scores, g_.scalar(root)}) : g_.node("Mul", {scores, g_.scalar(1.0f / root)});
    switch (s_.epilogue) {
      case 1: scores = g_.node("Add", {scores, g_.input({n})}); break;
      case 2: scores = g_.node("Add", {scores, g_.input({m, n})}); break;
      case 3: scores = g_.node("Add", {scores, g_.input({b, Dim(1), Dim(1), n})}); break;
      default: break;
    }
    Value* context = g_.node("MatMul", {g_.node("Softmax", {scores}, {{"axis", int64_t{-1}}}), v});
    Value* merged = g_.node("Transpose", {context}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
    return g_.node("Reshape", {merged, g_.i64s({0, 0, s_.batch[1] * s_.k})});
  }

  // An Einsum with the spec's labels; A's term rotated by transpose_a, B's by gemm (and reversed
  // where transpose_b), the output's by after.
  Value* einsum() {
    const std::vector<EinsumLabel> labels = einsum_labels(s_);
    auto term = [&](bool EinsumLabel::*in, int rotation, bool reversed) {
      std::string letters;
      for (const EinsumLabel& l : labels) {
        if (l.*in) letters += l.letter;
      }
      if (reversed) std::reverse(letters.begin(), letters.end());
      if (!letters.empty()) std::rotate(letters.begin(), letters.begin() + rotation % letters.size(), letters.end());
      return letters;
    };
    auto shape = [&](const std::string& letters) {
      Shape dims;
      for (char c : letters) dims.push_back(Dim(labels[static_cast<size_t>(c - 'a')].size));
      return dims;
    };
    const std::string a = term(&EinsumLabel::a, s_.transpose_a, false), b = term(&EinsumLabel::b, s_.gemm, s_.transpose_b),
                      out = term(&EinsumLabel::out, s_.after, false);
    return g_.node("Einsum", {g_.input(shape(a), dtype()), operand(shape(b), s_.constant_b)},
                   {{"equation", a + "," + b + "->" + out}});
  }

  const ProductSpec s_;
  GraphAssembly g_;
  Value* current_ = nullptr;  // the product, before its epilogue
};

// Around the SIMD widths (8 and 16 lanes, 6-row tiles), and past the AVX2 engine's blocks
// (kc 384, mc 168, nb 80 with a 32 KiB L1 and 512 KiB L2) and AVX-512's.
rc::Gen<int64_t> size_gen() {
  return rc::gen::element<int64_t>(1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 15, 16, 17, 23, 24, 31, 32, 33, 47, 48, 64, 65, 81,
                                   96, 100, 127, 128, 129, 169, 200, 257, 300, 385, 520);
}

}  // namespace

ProductSpec normalised(ProductSpec s) {
  if (s.dtype != DType::f32) {
    if (s.form == ProductForm::Attention) s.form = ProductForm::MatMul;
    s.epilogue %= 3;
    s.after %= 2;
  }
  if (s.form == ProductForm::Gemm) s.batch.clear();
  if (s.form == ProductForm::Einsum) s.symbolic = false;
  if (s.form == ProductForm::Attention) {
    while (s.batch.size() < 2) s.batch.push_back(2);
    s.epilogue %= 4;
    if (s.symbolic) s.n = s.m;
  }
  if (s.batch.empty()) s.b_batch = 0;
  if (s.transpose_a == 2 && s.batch.size() != 2) s.transpose_a = 1;
  if (s.b_batch == 3 && s.transpose_a == 2) s.transpose_a = 0;
  // Halve the largest of m, n and k (the batch last) until the case is small enough.
  while (multiply_adds(s) > kMaxMultiplyAdds) {
    int64_t* largest = &s.m;
    for (int64_t* d : {&s.n, &s.k}) {
      if (*d > *largest) largest = d;
    }
    if (*largest > 16) {
      *largest = (*largest + 1) / 2;
    } else {
      for (int64_t& d : s.batch) d = std::max<int64_t>(1, d / 2);
    }
    if (s.form == ProductForm::Attention && s.symbolic) s.n = s.m;
  }
  if (s.n < 2 && s.after == 1) s.after = 0;
  s.split = s.n >= 2 ? 1 + s.split % (s.n - 1) : 1;
  return s;
}

rc::Gen<ProductSpec> product_spec() {
  return rc::gen::build<ProductSpec>(
      rc::gen::set(&ProductSpec::form, rc::gen::element(ProductForm::MatMul, ProductForm::MatMul, ProductForm::MatMul,
                                                        ProductForm::Gemm, ProductForm::Attention, ProductForm::Einsum)),
      rc::gen::set(&ProductSpec::batch, rc::gen::apply(
                                            [](std::vector<int64_t> dims, size_t count) {
                                              dims.resize(count);
                                              return dims;
                                            },
                                            rc::gen::container<std::vector<int64_t>>(2, rc::gen::inRange<int64_t>(1, 5)),
                                            rc::gen::inRange<size_t>(0, 3))),
      rc::gen::set(&ProductSpec::b_batch, rc::gen::inRange(0, 4)), rc::gen::set(&ProductSpec::broadcast, rc::gen::inRange(0, 4)),
      rc::gen::set(&ProductSpec::m, size_gen()), rc::gen::set(&ProductSpec::k, size_gen()),
      rc::gen::set(&ProductSpec::n, size_gen()), rc::gen::set(&ProductSpec::transpose_a, rc::gen::inRange(0, 3)),
      rc::gen::set(&ProductSpec::transpose_b), rc::gen::set(&ProductSpec::constant_b),
      rc::gen::set(&ProductSpec::epilogue, rc::gen::inRange(0, 10)), rc::gen::set(&ProductSpec::after, rc::gen::inRange(0, 4)),
      rc::gen::set(&ProductSpec::split, rc::gen::inRange<int64_t>(0, 600)), rc::gen::set(&ProductSpec::symbolic),
      rc::gen::set(&ProductSpec::other_size, rc::gen::inRange<int64_t>(1, 40)),
      rc::gen::set(&ProductSpec::dtype, rc::gen::element(DType::f32, DType::f32, DType::f32, DType::f32, DType::f16, DType::bf16)),
      rc::gen::set(&ProductSpec::gemm, rc::gen::inRange(0, 40)), rc::gen::set(&ProductSpec::einsum, rc::gen::inRange(0, 32)),
      rc::gen::set(&ProductSpec::data_seed));
}

BuiltGraph build_product(const ProductSpec& spec, int64_t size) { return ProductBuilder(spec, size).run(); }

int64_t drawn_size(const ProductSpec& drawn) {
  const ProductSpec s = normalised(drawn);
  return symbolic_batch(s) ? s.batch[0] : s.m;
}

Tolerance product_tolerance(const ProductSpec& drawn) {
  const ProductSpec s = normalised(drawn);
  const double depth = static_cast<double>(s.form == ProductForm::Attention ? std::max(s.k, s.n)
                                           : s.form == ProductForm::Einsum  ? einsum_depth(s)
                                                                            : s.k);
  if (s.dtype == DType::f32) return {1e-5, 1e-6 * (depth + 1)};
  const double ulp = s.dtype == DType::f16 ? 0x1p-10 : 0x1p-7;
  return {2 * ulp, 2 * ulp * (std::sqrt(depth) + 1)};
}

void showValue(const ProductSpec& drawn, std::ostream& os) {
  static const char* const kForms[] = {"MatMul", "Gemm", "attention", "Einsum"};
  const ProductSpec s = normalised(drawn);
  os << fmt::format("{} batch {} b_batch {} broadcast {} m {} k {} n {} transpose_a {} transpose_b {} constant_b {} epilogue {} "
                    "after {} split {} symbolic {} other_size {} dtype {} gemm {} einsum {} data_seed {}\n",
                    kForms[static_cast<int>(s.form)], s.batch, s.b_batch, s.broadcast, s.m, s.k, s.n, s.transpose_a,
                    s.transpose_b, s.constant_b, s.epilogue, s.after, s.split, s.symbolic, s.other_size, dtype_name(s.dtype),
                    s.gemm, s.einsum, s.data_seed);
  os << print_graph(build_product(s, drawn_size(s)).graph, {.elide_large_constants = true});
}

}  // namespace tilefuse::property
