// MatMul (numpy matmul: 1-D operands promoted, batch dims broadcast) and Gemm
// (Y = alpha * op(A) * op(B) + beta * C). f32/f64 run through the BLAS; the other element types
// through a plain loop that accumulates in double (f16/bf16) or wrapping int64 (integers).
#include <algorithm>

#include "ir/ops/fused_activation.h"
#include "ir/shape.h"
#include "reference/index_map.h"
#include "reference/integer_math.h"
#include "reference/kernel_args.h"
#include "reference/kernel_table.h"
#include "reference/openblas.h"

namespace tilefuse::reference {

namespace {

// One row-major matrix inside a tensor: element (r, c) of the (possibly transposed) view.
struct MatrixView {
  const Tensor* tensor;
  int64_t offset;
  int64_t rows, cols;      // of the view, after transposition
  bool transposed = false;  // stored as [cols, rows]
  int64_t index(int64_t r, int64_t c) const { return offset + (transposed ? c * rows + r : r * cols + c); }
  int64_t leading_dim() const { return std::max<int64_t>(1, transposed ? rows : cols); }
};

// out[out_offset + m*N + n] = alpha * sum_k a(m, k) b(k, n) + beta * out[...] (out prefilled).
void gemm_block(const MatrixView& a, const MatrixView& b, Tensor& out, int64_t out_offset, double alpha,
                double beta) {
  int64_t m_size = a.rows, n_size = b.cols, k_size = a.cols;
  if (m_size == 0 || n_size == 0) return;
  auto ta = a.transposed ? CblasTrans : CblasNoTrans, tb = b.transposed ? CblasTrans : CblasNoTrans;
  int64_t ldc = std::max<int64_t>(1, n_size);
  if (out.dtype() == DType::f32) {
    openblas::sgemm(ta, tb, m_size, n_size, k_size, static_cast<float>(alpha),
                a.tensor->data<float>() + a.offset, a.leading_dim(), b.tensor->data<float>() + b.offset,
                b.leading_dim(), static_cast<float>(beta), out.data<float>() + out_offset, ldc);
    return;
  }
  if (out.dtype() == DType::f64) {
    openblas::dgemm(ta, tb, m_size, n_size, k_size, alpha, a.tensor->data<double>() + a.offset,
                a.leading_dim(), b.tensor->data<double>() + b.offset, b.leading_dim(), beta,
                out.data<double>() + out_offset, ldc);
    return;
  }
  bool integer = is_integer(out.dtype());
  for (int64_t m = 0; m < m_size; ++m) {
    for (int64_t n = 0; n < n_size; ++n) {
      int64_t o = out_offset + m * n_size + n;
      if (integer) {
        int64_t acc = 0;
        for (int64_t k = 0; k < k_size; ++k) {
          acc = wrap_add(acc, wrap_mul(a.tensor->get_i64(a.index(m, k)), b.tensor->get_i64(b.index(k, n))));
        }
        // Exact for MatMul (alpha 1, beta 0); a scaled integer Gemm is computed in double.
        if (alpha == 1 && beta == 0) out.set_i64(o, acc);
        else out.set_i64(o, float_to_int<int64_t>(alpha * static_cast<double>(acc) + beta * out.get_f64(o)));
      } else {
        double acc = 0;
        for (int64_t k = 0; k < k_size; ++k) acc += a.tensor->get_f64(a.index(m, k)) * b.tensor->get_f64(b.index(k, n));
        out.set_f64(o, alpha * acc + (beta == 0 ? 0.0 : beta * out.get_f64(o)));
      }
    }
  }
}

void check_matmul_dtypes(const Node& node, const Tensor& a, const Tensor& b) {
  require_same_dtype(node, a, b);
  require_dtype(node, a, {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i32, DType::i64}, "input 0");
}

std::vector<Tensor> matmul(const Node& node, const std::vector<Tensor>& in) {
  Tensor a = required_input(node, in, 0), b = required_input(node, in, 1);
  check_matmul_dtypes(node, a, b);
  if (a.rank() == 0 || b.rank() == 0) {
    fail_user("{}: operands must have rank >= 1, got {} and {}", node.describe(), a.summary(), b.summary());
  }
  // numpy: a 1-D left operand is a row [1, K], a 1-D right operand a column [K, 1]; the added
  // dim is removed from the result.
  bool a_vector = a.rank() == 1, b_vector = b.rank() == 1;
  if (a_vector) a = a.reshaped({1, a.shape()[0]});
  if (b_vector) b = b.reshaped({b.shape()[0], 1});
  int64_t m_size = a.shape()[a.rank() - 2], k_size = a.shape()[a.rank() - 1];
  int64_t n_size = b.shape()[b.rank() - 1];
  if (b.shape()[b.rank() - 2] != k_size) {
    fail_user("{}: inner dims differ: {} x {} (K = {} vs {})", node.describe(), in[0].summary(), in[1].summary(),
              k_size, b.shape()[b.rank() - 2]);
  }
  std::vector<int64_t> a_batch(a.shape().begin(), a.shape().end() - 2);
  std::vector<int64_t> b_batch(b.shape().begin(), b.shape().end() - 2);
  std::vector<int64_t> batch = broadcast_dims(a_batch, b_batch, node.describe());
  std::vector<int64_t> a_index = broadcast_indices(a_batch, batch), b_index = broadcast_indices(b_batch, batch);

  std::vector<int64_t> out_shape = batch;
  if (!a_vector) out_shape.push_back(m_size);
  if (!b_vector) out_shape.push_back(n_size);
  Tensor out(a.dtype(), out_shape);
  for (size_t i = 0; i < a_index.size(); ++i) {
    MatrixView va{&a, a_index[i] * m_size * k_size, m_size, k_size};
    MatrixView vb{&b, b_index[i] * k_size * n_size, k_size, n_size};
    gemm_block(va, vb, out, static_cast<int64_t>(i) * m_size * n_size, 1.0, 0.0);
  }
  return {out};
}

// Operand or result `attr` of a FusedMatMul: the tensor transposed by the node's perm, if it has one.
Tensor fused_operand(const Node& node, const Tensor& x, const char* attr) {
  if (!node.has_attr(attr)) return x;
  const std::vector<int64_t> perm = node.attr_ints(attr);
  const std::vector<int64_t> in_strides = contiguous_strides(x.shape());
  std::vector<int64_t> shape, strides;
  for (int64_t p : perm) {
    shape.push_back(x.shape()[p]);
    strides.push_back(in_strides[p]);
  }
  return gather_elements(x, strided_indices(shape, strides), shape);
}

// MatMul of the (transposed) operands, then bias[j] added to every output row, then the
// activation (in double, on the product rounded to the output's type, as the unfused graph does),
// then the transpose of the result.
std::vector<Tensor> fused_matmul(const Node& node, const std::vector<Tensor>& in) {
  const Tensor a = fused_operand(node, required_input(node, in, 0), "perm_a");
  const Tensor b = fused_operand(node, required_input(node, in, 1), "perm_b");
  Tensor out = matmul(node, {a, b}).at(0);
  const Tensor* bias = optional_input(in, 2);
  const int64_t n = out.shape().back();
  if (bias != nullptr && (bias->rank() != 1 || bias->numel() != n)) {
    fail_user("{}: bias {} must be [{}], the output's last dim", node.describe(), bias->summary(), n);
  }
  if (bias != nullptr) {
    for (int64_t i = 0; i < out.numel(); ++i) out.set_f64(i, out.get_f64(i) + bias->get_f64(i % n));
  }
  const FusedActivation act = fused_activation(node);
  for (int64_t i = 0; !act.identity() && i < out.numel(); ++i) out.set_f64(i, act(out.get_f64(i)));
  return {fused_operand(node, out, "perm_y")};
}

std::vector<Tensor> gemm(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& a = required_input(node, in, 0);
  const Tensor& b = required_input(node, in, 1);
  const Tensor* c = optional_input(in, 2);
  check_matmul_dtypes(node, a, b);
  if (a.rank() != 2 || b.rank() != 2) {
    fail_user("{}: A and B must be 2-D, got {} and {}", node.describe(), a.summary(), b.summary());
  }
  bool trans_a = node.attr_int("transA", 0) != 0, trans_b = node.attr_int("transB", 0) != 0;
  MatrixView va{&a, 0, a.shape()[trans_a ? 1 : 0], a.shape()[trans_a ? 0 : 1], trans_a};
  MatrixView vb{&b, 0, b.shape()[trans_b ? 1 : 0], b.shape()[trans_b ? 0 : 1], trans_b};
  if (va.cols != vb.rows) {
    fail_user("{}: inner dims differ: op(A) is [{}, {}], op(B) is [{}, {}]", node.describe(), va.rows, va.cols,
              vb.rows, vb.cols);
  }
  std::vector<int64_t> out_shape{va.rows, vb.cols};
  double beta = node.attr_float("beta", 1.0);
  Tensor out(a.dtype(), out_shape);
  if (c != nullptr) {
    require_same_dtype(node, a, *c);
    if (broadcast_dims(c->shape(), out_shape, node.describe()) != out_shape) {
      fail_user("{}: C {} does not broadcast to the result shape {}", node.describe(), c->summary(),
                dims_to_string(out_shape));
    }
    out = gather_elements(*c, broadcast_indices(c->shape(), out_shape), out_shape);
  } else {
    beta = 0;
  }
  gemm_block(va, vb, out, 0, node.attr_float("alpha", 1.0), beta);
  return {out};
}

}  // namespace

void register_matmul_kernels(KernelTable& table) {
  table["MatMul"] = matmul;
  table["FusedMatMul"] = fused_matmul;
  table["Gemm"] = gemm;
}

}  // namespace tilefuse::reference
