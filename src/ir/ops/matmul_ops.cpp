// MatMul (numpy matmul semantics), FusedMatMul (ours), Gemm and Einsum: compute-bound contractions.
#include <algorithm>
#include <map>

#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/ops/einsum_equation.h"
#include "ir/ops/infer_util.h"

namespace tilefuse {
namespace {

using namespace ops;

const std::vector<DType> kMatMulTypes = {DType::f16, DType::f32, DType::f64, DType::bf16, DType::i32, DType::i64};

// numpy.matmul: a 1-D A is a row vector and a 1-D B a column vector (the added dim is dropped
// from the result); the leading (batch) dims broadcast.
void infer_matmul(Node& node, Graph& graph) {
  require_same_dtype(node, 1, 0);
  Shape a = node.input(0)->shape;
  Shape b = node.input(1)->shape;
  for (size_t i : {0, 1}) {
    if (node.input(i)->rank() == 0) {
      fail_user("{}: {} is a scalar; MatMul needs rank >= 1", node.describe(), describe_input(node, i));
    }
  }
  bool a_vector = a.size() == 1;
  bool b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), Dim(1));
  if (b_vector) b.push_back(Dim(1));
  unify_dims(node, a[a.size() - 1], b[b.size() - 2],
             fmt::format("contracted dims (last of A {}, second to last of B {})",
                         shape_to_string(node.input(0)->shape), shape_to_string(node.input(1)->shape)));
  Shape out = broadcast_assuming(graph, Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2),
                               node.describe() + " batch dims");
  if (!a_vector) out.push_back(a[a.size() - 2]);
  if (!b_vector) out.push_back(b.back());
  set_output(node, 0, node.input(0)->dtype, out);
}

// Transpose(act(MatMul(Transpose(A, perm_a), Transpose(B, perm_b)) + bias), perm_y): every part
// optional (no perm: the operand or result as it is; no bias input: nothing added), bias a [N]
// vector along the product's last dim. Not an ONNX op: fused mode's passes make it
// (matmul_bias_folding, matmul_transpose_folding) so the GEMM engine reads transposed operands
// and writes a transposed result through strides, and adds the bias while the output tile is in
// cache, instead of separate kernels passing through memory.
Shape permuted(const Node& node, const char* attr, const Shape& shape) {
  if (!node.has_attr(attr)) return shape;
  const std::vector<int64_t> perm = node.attr_ints(attr);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t d = 0; d < sorted.size(); ++d) {
    if (sorted.size() != shape.size() || sorted[d] != static_cast<int64_t>(d)) {
      fail_user("{}: {} {} is not a permutation of the {} dims of {}", node.describe(), attr, dims_to_string(perm),
                shape.size(), shape_to_string(shape));
    }
  }
  Shape out;
  for (int64_t p : perm) out.push_back(shape[p]);
  return out;
}

void infer_fused_matmul(Node& node, Graph& graph) {
  require_same_dtype(node, 1, 0);
  const Shape a = permuted(node, "perm_a", node.input(0)->shape), b = permuted(node, "perm_b", node.input(1)->shape);
  if (a.size() < 2 || b.size() < 2) {
    fail_user("{}: needs matrices, got {} and {}", node.describe(), shape_to_string(a), shape_to_string(b));
  }
  unify_dims(node, a.back(), b[b.size() - 2],
             fmt::format("contracted dims (last of A {}, second to last of B {})", shape_to_string(a),
                         shape_to_string(b)));
  Shape out = broadcast_assuming(graph, Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2), node.describe() + " batch dims");
  out.push_back(a[a.size() - 2]);
  out.push_back(b.back());
  const Dim n = out.back();
  set_output(node, 0, node.input(0)->dtype, permuted(node, "perm_y", out));
  if (!node.has_input(2)) return;
  require_same_dtype(node, 2, 0);
  if (node.input(2)->rank() != 1) {
    fail_user("{}: the bias must be a [N] vector, got {}", node.describe(), shape_to_string(node.input(2)->shape));
  }
  unify_dims(node, node.input(2)->shape[0], n, "bias size and the product's last dim");
}

// Y = alpha * op(A) * op(B) + beta * C, op = optional transpose; C broadcasts to [M, N].
void infer_gemm(Node& node, Graph&) {
  require_same_dtype(node, 1, 0);
  require_same_dtype(node, 2, 0);
  require_rank(node, 0, 2);
  require_rank(node, 1, 2);
  const Shape& a = node.input(0)->shape;
  const Shape& b = node.input(1)->shape;
  bool trans_a = node.attr_int("transA", 0) != 0;
  bool trans_b = node.attr_int("transB", 0) != 0;
  Dim m = a[trans_a ? 1 : 0];
  Dim n = b[trans_b ? 0 : 1];
  unify_dims(node, a[trans_a ? 0 : 1], b[trans_b ? 1 : 0],
             fmt::format("contracted dims of A {} (transA={}) and B {} (transB={})", shape_to_string(a),
                         int{trans_a}, shape_to_string(b), int{trans_b}));
  Shape out = {m, n};
  require_unidirectional_broadcast(node, 2, out);
  set_output(node, 0, node.input(0)->dtype, out);
}

// Every label's dim must agree across operands (ellipsis dims broadcast: a 1 gives way).
void infer_einsum(Node& node, Graph&) {
  std::vector<int64_t> ranks;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    require_same_dtype(node, i, 0);
    ranks.push_back(node.input(i)->rank());
  }
  EinsumEquation eq = parse_einsum(node, node.attr_string("equation", ""), ranks);
  std::map<int, Dim> dims;
  for (size_t i = 0; i < eq.inputs.size(); ++i) {
    for (size_t d = 0; d < eq.inputs[i].size(); ++d) {
      const Dim& dim = node.input(i)->shape[d];
      auto [it, fresh] = dims.emplace(eq.inputs[i][d], dim);
      if (fresh || dim == Dim(1)) continue;
      it->second = it->second == Dim(1) ? dim : unify_dims(node, it->second, dim, "dims of one subscript");
    }
  }
  Shape out;
  for (int l : eq.output) out.push_back(dims.at(l));
  set_output(node, 0, node.input(0)->dtype, out);
}

}  // namespace

void register_matmul_ops(OpRegistry& registry) {
  registry.add({.name = "MatMul",
                .traits = kLibraryCall,
                .min_inputs = 2,
                .max_inputs = 2,
                .input_dtypes = kMatMulTypes,
                .infer = infer_matmul});
  registry.add({.name = "FusedMatMul",
                .traits = kLibraryCall,
                .min_inputs = 2,
                .max_inputs = 3,
                .attrs = {{"perm_a", AttrKind::Ints},
                          {"perm_b", AttrKind::Ints},
                          {"perm_y", AttrKind::Ints},
                          {"activation", AttrKind::String},
                          {"activation_params", AttrKind::Floats}},
                .input_dtypes = kMatMulTypes,
                .infer = infer_fused_matmul});
  registry.add({.name = "Gemm",
                .traits = kLibraryCall,
                .min_inputs = 2,
                .max_inputs = 3,
                .attrs = {{"alpha", AttrKind::Float},
                          {"beta", AttrKind::Float},
                          {"transA", AttrKind::Int},
                          {"transB", AttrKind::Int}},
                .input_dtypes = kMatMulTypes,
                .infer = infer_gemm});
  registry.add({.name = "Einsum",
                .min_inputs = 1,
                .max_inputs = kVariadic,
                .attrs = {{"equation", AttrKind::String, true}},
                .input_dtypes = kMatMulTypes,
                .infer = infer_einsum});
}

}  // namespace tilefuse
