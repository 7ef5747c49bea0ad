#include "runtime/matmul_call.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "ir/error.h"
#include "ir/ops/fused_activation.h"
#include "ir/shape.h"
#include "runtime/blas_on_team.h"
#include "runtime/epilogue.h"

namespace tilefuse::runtime {

namespace {

// A constant B, packed once: in bf16 pairs where products run in bf16 (runtime/precision.h).
PackedOperand pack_weight(const MatrixView& view, int64_t k, int64_t n, Precision precision) {
  if (effective_precision(precision) == Precision::bf16) return PackedOperand::pack_b_bf16(view, k, n);
  return PackedOperand::pack_b(view, k, n);
}

// An operand as the product sees it: its shape and element strides after FusedMatMul's perm (a
// transposed operand is the same memory read through permuted strides).
struct Operand {
  std::vector<int64_t> shape, strides;
  Operand(const Node& node, const Tensor& t, const char* perm_attr)
      : shape(t.shape()), strides(contiguous_strides(t.shape())) {
    if (!node.has_attr(perm_attr)) return;
    const std::vector<int64_t> perm = node.attr_ints(perm_attr);
    std::vector<int64_t> s, st;
    for (int64_t p : perm) s.push_back(shape[p]), st.push_back(strides[p]);
    shape = s, strides = st;
  }
};

// The strides at which a product [batch..., M, N] is written: contiguous, or through
// FusedMatMul's perm_y (the result transposed, its last dim still last) at the transposed
// tensor's strides.
std::vector<int64_t> product_strides(const Node& node, const std::vector<int64_t>& product_shape) {
  std::vector<int64_t> strides = contiguous_strides(product_shape);
  if (!node.has_attr("perm_y")) return strides;
  const std::vector<int64_t> perm = node.attr_ints("perm_y");
  std::vector<int64_t> result_shape;
  for (int64_t p : perm) result_shape.push_back(product_shape[p]);
  const std::vector<int64_t> result = contiguous_strides(result_shape);
  for (size_t i = 0; i < perm.size(); ++i) strides[perm[i]] = result[i];
  return strides;
}

// A MatMul's operands as batches of strided matrices: 1-D A is one row, 1-D B one column; the
// batch dims broadcast, and batch i reads A and B and writes C at the offsets below.
struct MatMulShape {
  int64_t m = 0, k = 0, n = 0;
  MatrixView a_matrix, b_matrix;  // strides only; data is set per batch
  int64_t ldc = 0;                // C's row stride
  std::vector<int64_t> a_offsets, b_offsets, c_offsets;  // per batch element, in floats

  MatMulShape(const Node& node, Operand a, Operand b) {
    if (a.shape.size() == 1) a.shape.insert(a.shape.begin(), 1), a.strides.insert(a.strides.begin(), 0);
    if (b.shape.size() == 1) b.shape.push_back(1), b.strides.push_back(0);
    const size_t ra = a.shape.size(), rb = b.shape.size();
    m = a.shape[ra - 2], k = a.shape[ra - 1], n = b.shape[rb - 1];
    a_matrix = {nullptr, a.strides[ra - 2], a.strides[ra - 1]};
    b_matrix = {nullptr, b.strides[rb - 2], b.strides[rb - 1]};
    std::vector<int64_t> a_batch(a.shape.begin(), a.shape.end() - 2), b_batch(b.shape.begin(), b.shape.end() - 2);
    const std::vector<int64_t> batch = broadcast_dims(a_batch, b_batch, "MatMul batch dims");
    // C as [batch..., M, N] (a 1-D operand's dim dropped from the result is a size-1 dim here).
    std::vector<int64_t> product_shape = batch;
    product_shape.push_back(m), product_shape.push_back(n);
    const std::vector<int64_t> c_strides = product_strides(node, product_shape);
    ldc = c_strides[batch.size()];
    for (int64_t i = 0; i < product(batch); ++i) {
      // Offsets of batch element i, broadcasting size-1 (and missing) batch dims.
      int64_t rest = i, a_off = 0, b_off = 0, c_off = 0;
      for (size_t d = batch.size(); d-- > 0;) {
        const int64_t idx = rest % batch[d];
        rest /= batch[d];
        c_off += idx * c_strides[d];
        const size_t from_end = batch.size() - d;  // 1 for the last batch dim
        if (from_end <= a_batch.size() && a_batch[a_batch.size() - from_end] != 1) {
          a_off += idx * a.strides[a_batch.size() - from_end];
        }
        if (from_end <= b_batch.size() && b_batch[b_batch.size() - from_end] != 1) {
          b_off += idx * b.strides[b_batch.size() - from_end];
        }
      }
      a_offsets.push_back(a_off);
      b_offsets.push_back(b_off);
      c_offsets.push_back(c_off);
    }
    fold_batches_into_rows();
  }

  int64_t batches() const { return static_cast<int64_t>(a_offsets.size()); }

  // Whether batch i's C rows follow batch i - 1's at the row stride, for every i.
  bool c_rows_follow() const {
    for (int64_t i = 0; i < batches(); ++i) {
      if (c_offsets[i] != i * m * ldc) return false;
    }
    return true;
  }

  // Batches that share one B but whose A rows are scattered: a seq-first activation read
  // batch-first through a transpose (nn.MultiheadAttention's input projection: [128, 2, 256] x
  // [256, 768] is 128 products of 2 rows). Their rows gathered into one matrix make one product
  // of all of them; the copy is O(m k) against the product's O(m k n), so only for n >= 16.
  bool gathers_rows() const {
    if (batches() < 2 || n < 16 || !c_rows_follow()) return false;
    return std::all_of(b_offsets.begin(), b_offsets.end(), [&](int64_t o) { return o == b_offsets[0]; });
  }

  // Batches that share one B and whose A and C rows follow each other at their row strides are
  // one product of all their rows: ConvNeXt's [1, 7, 7, 768] x [768, 3072] is one GEMM of 49
  // rows, not 7 of 7 rows each (a loop of calls, each too small for any engine to run well).
  void fold_batches_into_rows() {
    const auto batches = static_cast<int64_t>(a_offsets.size());
    if (!c_rows_follow()) return;
    for (int64_t i = 1; i < batches; ++i) {
      if (b_offsets[i] != b_offsets[0] || a_offsets[i] != a_offsets[0] + i * m * a_matrix.row_stride) return;
    }
    m *= batches;
    a_offsets.resize(std::min<int64_t>(batches, 1));
    b_offsets.resize(std::min<int64_t>(batches, 1));
    c_offsets.resize(std::min<int64_t>(batches, 1));
  }
};

class MatMulCall : public LibraryCall {
 public:
  MatMulCall(const Node& node, const GemmBlocking& blocking, Precision precision)
      : node_(node),
        blocking_(blocking),
        activation_(fused_activation(node)),
        bf16_(effective_precision(precision) == Precision::bf16) {
    const Value* b = node.input(1);
    if (!own_gemm_engine() || !b->constant.has_value()) return;
    // A constant B: each of its batch matrices packed once; a transposed one (a Linear layer's
    // [out, in] weight read through perm_b [1, 0]) when it is a single matrix.
    const std::vector<int64_t>& bs = b->constant->shape();
    if (node.has_attr("perm_b")) {
      if (bs.size() != 2 || node.attr_ints("perm_b") != std::vector<int64_t>{1, 0}) return;
      const MatrixView view{b->constant->data<float>(), 1, bs[1]};
      packed_.push_back(pack_weight(view, bs[1], bs[0], precision));
      return;
    }
    const int64_t k = bs.size() == 1 ? bs[0] : bs[bs.size() - 2], n = bs.size() == 1 ? 1 : bs.back();
    const int64_t count = bs.size() <= 2 ? 1 : product(std::vector<int64_t>(bs.begin(), bs.end() - 2));
    for (int64_t i = 0; i < count; ++i) {
      const MatrixView view{b->constant->data<float>() + i * k * n, n, 1};
      packed_.push_back(pack_weight(view, k, n, precision));
    }
  }

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    const MatMulShape& s = shape_of(in[0], in[1]);
    if (!own_gemm_engine()) {
      const float* bias = in.size() > 2 && in[2].defined() ? in[2].data<float>() : nullptr;  // FusedMatMul's [N]
      return run_openblas(team, s, in[0].data<float>(), in[1].data<float>(), bias, outs[0].data<float>());
    }
    const bool gathered = s.gathers_rows();
    fill_problems(s, in, outs, gathered ? 1 : s.batches());
    if (gathered) problems_[0].m = s.m * s.batches(), problems_[0].a.view = gather_rows(team, s, in[0].data<float>());
    sgemm(team, problems_, blocking_);
  }

  std::span<const GemmProblem> row_problems(const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    const MatMulShape& s = shape_of(in[0], in[1]);
    if (!own_gemm_engine() || s.gathers_rows()) return {};
    fill_problems(s, in, outs, s.batches());
    return problems_;
  }

  size_t packed_bytes() const override { return total_bytes(packed_); }
  std::vector<const PackedOperand*> packed_operands() const override { return operands_of(packed_); }
  // Blockings are tuned in f32 (their records do not say the precision).
  bool tunes_blocking() const override { return own_gemm_engine() && !bf16_; }
  void set_blocking(const GemmBlocking& blocking) override { blocking_ = blocking; }
  GemmBlocking blocking() const override { return blocking_; }

 private:
  // cblas_sgemm takes a transposed operand only as a whole-matrix transpose with unit stride. A
  // single row or column has stride 0 along the other dim; BLAS still wants ld >= its length.
  static CBLAS_TRANSPOSE blas_layout(const MatrixView& v, int64_t rows, int64_t cols, int64_t& ld) {
    if (v.col_stride == 1) return ld = std::max(v.row_stride, cols), CblasNoTrans;
    if (v.row_stride == 1) return ld = std::max(v.col_stride, rows), CblasTrans;
    fail_internal("MatMul operand with strides {} x {} has no BLAS layout", v.row_stride, v.col_stride);
  }

  void run_openblas(ThreadTeam& team, const MatMulShape& s, const float* a, const float* b, const float* bias,
                    float* c) {
    int64_t lda = 0, ldb = 0;
    const CBLAS_TRANSPOSE ta = blas_layout(s.a_matrix, s.m, s.k, lda), tb = blas_layout(s.b_matrix, s.k, s.n, ldb);
    blas_calls_.clear();
    for (size_t i = 0; i < s.a_offsets.size(); ++i) {
      float* ci = c + s.c_offsets[i];
      for (int64_t r = 0; bias != nullptr && r < s.m; ++r) std::copy(bias, bias + s.n, ci + r * s.ldc);
      BlasGemm g;
      g.trans_a = ta, g.trans_b = tb, g.m = s.m, g.n = s.n, g.k = s.k;
      g.a = a + s.a_offsets[i], g.lda = std::max<int64_t>(1, lda);
      g.b = b + s.b_offsets[i], g.ldb = std::max<int64_t>(1, ldb);
      g.beta = bias != nullptr ? 1.0f : 0.0f, g.c = ci, g.ldc = std::max<int64_t>(1, s.ldc);
      blas_calls_.push_back(g);
    }
    blas_sgemm_on_team(team, blas_calls_);
    if (activation_.identity()) return;
    const int64_t count = static_cast<int64_t>(s.a_offsets.size()) * s.m * s.n;  // the whole result
    team.run(count, [&](int, int64_t first, int64_t end) { apply_epilogue(c + first, nullptr, end - first, activation_); });
  }

  // Every batch's A rows, one after another in rows_ (see MatMulShape::gathers_rows).
  MatrixView gather_rows(ThreadTeam& team, const MatMulShape& s, const float* a) {
    rows_.resize(static_cast<size_t>(s.batches() * s.m * s.k));
    team.run(s.batches() * s.m, [&](int, int64_t first, int64_t end) {
      for (int64_t row = first; row < end; ++row) {
        const float* src = a + s.a_offsets[row / s.m] + row % s.m * s.a_matrix.row_stride;
        float* dst = rows_.data() + row * s.k;
        if (s.a_matrix.col_stride == 1) {
          std::copy(src, src + s.k, dst);
        } else {
          for (int64_t j = 0; j < s.k; ++j) dst[j] = src[j * s.a_matrix.col_stride];
        }
      }
    });
    return {rows_.data(), s.k, 1};
  }

  // problems_: the first `batches` batches of the product, each its own problem.
  void fill_problems(const MatMulShape& s, const std::vector<Tensor>& in, std::vector<Tensor>& outs, int64_t batches) {
    const float* a = in[0].data<float>();
    const float* b = in[1].data<float>();
    float* c = outs[0].data<float>();
    const float* bias = in.size() > 2 && in[2].defined() ? in[2].data<float>() : nullptr;  // FusedMatMul's [N]
    problems_.resize(static_cast<size_t>(batches));
    for (int64_t i = 0; i < batches; ++i) {
      GemmProblem& p = problems_[i];
      p = GemmProblem{};
      p.m = s.m, p.n = s.n, p.k = s.k;
      p.a.view = s.a_matrix, p.a.view.data = a + s.a_offsets[i];
      p.b.view = s.b_matrix, p.b.view.data = b + s.b_offsets[i];
      if (!packed_.empty()) p.b.packed = &packed_[s.b_offsets[i] / std::max<int64_t>(1, s.k * s.n)];
      p.c = c + s.c_offsets[i], p.ldc = s.ldc;
      p.col_bias = bias;
      if (!activation_.identity()) p.activation = &activation_;
      p.bf16 = bf16_;  // attention's products too, whose B is computed during the run
    }
  }

  // The batches and strides of these operand shapes: worked out again only when they change.
  const MatMulShape& shape_of(const Tensor& a, const Tensor& b) {
    if (!shape_ || a.shape() != a_dims_ || b.shape() != b_dims_) {
      shape_.emplace(node_, Operand(node_, a, "perm_a"), Operand(node_, b, "perm_b"));
      a_dims_ = a.shape(), b_dims_ = b.shape();
    }
    return *shape_;
  }

  const Node& node_;
  GemmBlocking blocking_;
  FusedActivation activation_;  // FusedMatMul's; the identity for a MatMul
  bool bf16_;                   // products in bf16 (runtime/precision.h)
  std::optional<MatMulShape> shape_;
  std::vector<int64_t> a_dims_, b_dims_;  // the operand shapes shape_ is for
  std::vector<float> rows_;     // gather_rows', reused across runs
  std::vector<PackedOperand> packed_;
  std::vector<GemmProblem> problems_;  // reused across runs
  std::vector<BlasGemm> blas_calls_;   // the OpenBLAS path's, reused across runs
};

class GemmCall : public LibraryCall {
 public:
  GemmCall(const Node& node, const GemmBlocking& blocking, Precision precision)
      : blocking_(blocking),
        bf16_(effective_precision(precision) == Precision::bf16),
        trans_a_(node.attr_int("transA", 0) != 0),
        trans_b_(node.attr_int("transB", 0) != 0),
        alpha_(static_cast<float>(node.attr_float("alpha", 1.0))),
        beta_(static_cast<float>(node.attr_float("beta", 1.0))) {
    const Value* b = node.input(1);
    if (!own_gemm_engine() || !b->constant.has_value()) return;
    const std::vector<int64_t>& bs = b->constant->shape();
    const int64_t k = trans_b_ ? bs[1] : bs[0], n = trans_b_ ? bs[0] : bs[1];
    packed_ = std::make_unique<PackedOperand>(pack_weight(b_view(b->constant->data<float>(), bs), k, n, precision));
  }

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    Tensor& out = outs[0];
    const int64_t m = out.shape()[0], n = out.shape()[1];
    const int64_t k = trans_a_ ? in[0].shape()[0] : in[0].shape()[1];
    GemmProblem p;
    p.m = m, p.n = n, p.k = k, p.alpha = alpha_;
    p.a.view = trans_a_ ? MatrixView{in[0].data<float>(), 1, m} : MatrixView{in[0].data<float>(), k, 1};
    p.b.view = b_view(in[1].data<float>(), in[1].shape());
    p.b.packed = packed_.get();
    p.bf16 = bf16_;
    p.c = out.data<float>(), p.ldc = n;
    if (in.size() > 2 && in[2].defined() && beta_ != 0.0f) add_c(in[2], p);
    if (!own_gemm_engine()) return run_openblas(team, in, p);
    sgemm(team, {&p, 1}, blocking_);
  }

  size_t packed_bytes() const override { return packed_ ? packed_->bytes() : 0; }
  std::vector<const PackedOperand*> packed_operands() const override {
    return packed_ ? std::vector<const PackedOperand*>{packed_.get()} : std::vector<const PackedOperand*>{};
  }
  bool tunes_blocking() const override { return own_gemm_engine() && !bf16_; }
  void set_blocking(const GemmBlocking& blocking) override { blocking_ = blocking; }
  GemmBlocking blocking() const override { return blocking_; }

 private:
  MatrixView b_view(const float* data, const std::vector<int64_t>& shape) const {
    return trans_b_ ? MatrixView{data, 1, shape[1]} : MatrixView{data, shape[1], 1};
  }

  // C broadcasts (unidirectionally) to [M, N]. A row or column vector at beta 1 is the epilogue's
  // bias; anything else is copied in, scaled by beta, and accumulated onto.
  void add_c(const Tensor& c, GemmProblem& p) const {
    std::vector<int64_t> cs = c.shape();
    cs.insert(cs.begin(), 2 - cs.size(), 1);
    const float* src = c.data<float>();
    if (beta_ == 1.0f && own_gemm_engine() && cs[0] == 1 && cs[1] == p.n && p.n > 1) {
      p.col_bias = src;
      return;
    }
    if (beta_ == 1.0f && own_gemm_engine() && cs[1] == 1 && cs[0] == p.m && p.m > 1) {
      p.row_bias = src;
      return;
    }
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) {
        p.c[i * p.n + j] = beta_ * src[(cs[0] == 1 ? 0 : i) * cs[1] + (cs[1] == 1 ? 0 : j)];
      }
    }
    p.accumulate = true;
  }

  void run_openblas(ThreadTeam& team, const std::vector<Tensor>& in, const GemmProblem& p) const {
    BlasGemm g;
    g.trans_a = trans_a_ ? CblasTrans : CblasNoTrans, g.trans_b = trans_b_ ? CblasTrans : CblasNoTrans;
    g.m = p.m, g.n = p.n, g.k = p.k, g.alpha = alpha_;
    g.a = in[0].data<float>(), g.lda = in[0].shape()[1];
    g.b = in[1].data<float>(), g.ldb = in[1].shape()[1];
    g.beta = p.accumulate ? 1.0f : 0.0f, g.c = p.c, g.ldc = p.n;
    blas_sgemm_on_team(team, {g});
  }

  GemmBlocking blocking_;
  bool bf16_;  // products in bf16 (runtime/precision.h)
  bool trans_a_, trans_b_;
  float alpha_, beta_;
  std::unique_ptr<PackedOperand> packed_;
};

}  // namespace

bool matmul_call_supports(const Node& node) {
  if (node.op != "MatMul" && node.op != "FusedMatMul" && node.op != "Gemm") return false;
  // The engines write rows of the product, so a transposed result must keep them contiguous.
  if (node.has_attr("perm_y")) {
    const std::vector<int64_t> perm = node.attr_ints("perm_y");
    if (perm.empty() || perm.back() != static_cast<int64_t>(perm.size()) - 1) return false;
  }
  for (const Value* v : node.inputs) {
    if (v != nullptr && v->dtype != DType::f32) return false;
  }
  return node.outputs[0]->dtype == DType::f32;
}

std::unique_ptr<LibraryCall> prepare_matmul_call(const Node& node, const GemmBlocking& blocking, Precision precision) {
  if (node.op == "Gemm") return std::make_unique<GemmCall>(node, blocking, precision);
  return std::make_unique<MatMulCall>(node, blocking, precision);  // MatMul and FusedMatMul
}

}  // namespace tilefuse::runtime
