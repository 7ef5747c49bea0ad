#include "runtime/matmul_call.h"

#include <cblas.h>

#include <algorithm>
#include <vector>

#include "ir/error.h"
#include "ir/shape.h"

namespace tilefuse::runtime {

namespace {

// A MatMul's operand shapes as matrices: 1-D A is one row, 1-D B one column; the batch dims
// broadcast, and batch i reads A and B at the offsets below.
struct MatMulShape {
  int64_t m = 0, k = 0, n = 0;
  std::vector<int64_t> a_offsets, b_offsets;  // per batch element, in floats
  std::vector<int64_t> b_batch;               // B's own batch dims (each packed when B is constant)

  MatMulShape(std::vector<int64_t> as, std::vector<int64_t> bs) {
    if (as.size() == 1) as.insert(as.begin(), 1);
    if (bs.size() == 1) bs.push_back(1);
    m = as[as.size() - 2], k = as.back(), n = bs.back();
    std::vector<int64_t> a_batch(as.begin(), as.end() - 2);
    b_batch.assign(bs.begin(), bs.end() - 2);
    const std::vector<int64_t> batch = broadcast_dims(a_batch, b_batch, "MatMul batch dims");
    a_batch.insert(a_batch.begin(), batch.size() - a_batch.size(), 1);
    std::vector<int64_t> b_full = b_batch;
    b_full.insert(b_full.begin(), batch.size() - b_full.size(), 1);
    for (int64_t i = 0; i < product(batch); ++i) {
      // Offsets of batch element i, broadcasting size-1 batch dims.
      int64_t rest = i, a_off = 0, b_off = 0, a_stride = m * k, b_stride = k * n;
      for (size_t d = batch.size(); d-- > 0;) {
        const int64_t idx = rest % batch[d];
        rest /= batch[d];
        if (a_batch[d] != 1) a_off += idx * a_stride;
        if (b_full[d] != 1) b_off += idx * b_stride;
        a_stride *= a_batch[d];
        b_stride *= b_full[d];
      }
      a_offsets.push_back(a_off);
      b_offsets.push_back(b_off);
    }
  }
};

class MatMulCall : public LibraryCall {
 public:
  MatMulCall(const Node& node, const GemmBlocking& blocking) : blocking_(blocking) {
    const Value* b = node.input(1);
    if (!own_gemm_engine() || !b->constant.has_value()) return;
    // A constant B: each of its batch matrices packed once.
    const std::vector<int64_t>& bs = b->constant->shape();
    const int64_t k = bs.size() == 1 ? bs[0] : bs[bs.size() - 2], n = bs.size() == 1 ? 1 : bs.back();
    const int64_t count = bs.size() <= 2 ? 1 : product(std::vector<int64_t>(bs.begin(), bs.end() - 2));
    for (int64_t i = 0; i < count; ++i) {
      const MatrixView view{b->constant->data<float>() + i * k * n, n, 1};
      packed_.push_back(PackedOperand::pack_b(view, k, n));
    }
  }

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    Tensor& out = outs[0];
    const MatMulShape s(in[0].shape(), in[1].shape());
    const float* a = in[0].data<float>();
    const float* b = in[1].data<float>();
    float* c = out.data<float>();
    const auto batches = static_cast<int64_t>(s.a_offsets.size());
    if (!own_gemm_engine()) {
      openblas_set_num_threads(team.size());
      for (int64_t i = 0; i < batches; ++i) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(s.m), static_cast<int>(s.n),
                    static_cast<int>(s.k), 1.0f, a + s.a_offsets[i], static_cast<int>(s.k), b + s.b_offsets[i],
                    static_cast<int>(s.n), 0.0f, c + i * s.m * s.n, static_cast<int>(s.n));
      }
      return;
    }
    problems_.resize(static_cast<size_t>(batches));
    for (int64_t i = 0; i < batches; ++i) {
      GemmProblem& p = problems_[i];
      p = GemmProblem{};
      p.m = s.m, p.n = s.n, p.k = s.k;
      p.a.view = {a + s.a_offsets[i], s.k, 1};
      p.b.view = {b + s.b_offsets[i], s.n, 1};
      if (!packed_.empty()) p.b.packed = &packed_[s.b_offsets[i] / std::max<int64_t>(1, s.k * s.n)];
      p.c = c + i * s.m * s.n, p.ldc = s.n;
    }
    sgemm(team, problems_, blocking_);
  }

  size_t packed_bytes() const override {
    size_t bytes = 0;
    for (const PackedOperand& p : packed_) bytes += p.bytes();
    return bytes;
  }

 private:
  GemmBlocking blocking_;
  std::vector<PackedOperand> packed_;
  std::vector<GemmProblem> problems_;  // reused across runs
};

class GemmCall : public LibraryCall {
 public:
  GemmCall(const Node& node, const GemmBlocking& blocking)
      : blocking_(blocking),
        trans_a_(node.attr_int("transA", 0) != 0),
        trans_b_(node.attr_int("transB", 0) != 0),
        alpha_(static_cast<float>(node.attr_float("alpha", 1.0))),
        beta_(static_cast<float>(node.attr_float("beta", 1.0))) {
    const Value* b = node.input(1);
    if (!own_gemm_engine() || !b->constant.has_value()) return;
    const std::vector<int64_t>& bs = b->constant->shape();
    const int64_t k = trans_b_ ? bs[1] : bs[0], n = trans_b_ ? bs[0] : bs[1];
    packed_ = std::make_unique<PackedOperand>(PackedOperand::pack_b(b_view(b->constant->data<float>(), bs), k, n));
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
    p.c = out.data<float>(), p.ldc = n;
    if (in.size() > 2 && in[2].defined() && beta_ != 0.0f) add_c(in[2], p);
    if (!own_gemm_engine()) return run_openblas(team, in, p);
    sgemm(team, {&p, 1}, blocking_);
  }

  size_t packed_bytes() const override { return packed_ ? packed_->bytes() : 0; }

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
    openblas_set_num_threads(team.size());
    cblas_sgemm(CblasRowMajor, trans_a_ ? CblasTrans : CblasNoTrans, trans_b_ ? CblasTrans : CblasNoTrans,
                static_cast<int>(p.m), static_cast<int>(p.n), static_cast<int>(p.k), alpha_, in[0].data<float>(),
                static_cast<int>(in[0].shape()[1]), in[1].data<float>(), static_cast<int>(in[1].shape()[1]),
                p.accumulate ? 1.0f : 0.0f, p.c, static_cast<int>(p.n));
  }

  GemmBlocking blocking_;
  bool trans_a_, trans_b_;
  float alpha_, beta_;
  std::unique_ptr<PackedOperand> packed_;
};

}  // namespace

bool matmul_call_supports(const Node& node) {
  if (node.op != "MatMul" && node.op != "Gemm") return false;
  for (const Value* v : node.inputs) {
    if (v != nullptr && v->dtype != DType::f32) return false;
  }
  return node.outputs[0]->dtype == DType::f32;
}

std::unique_ptr<LibraryCall> prepare_matmul_call(const Node& node, const GemmBlocking& blocking) {
  if (node.op == "Gemm") return std::make_unique<GemmCall>(node, blocking);
  return std::make_unique<MatMulCall>(node, blocking);
}

}  // namespace tilefuse::runtime
