#include "runtime/library_call.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>

#include "ir/error.h"
#include "ir/shape.h"
#include "runtime/conv_gemm.h"

namespace tilefuse::runtime {

bool blas_supports(const Node& node) {
  if (node.op == "Conv") return conv_gemm_supports(node);
  if (node.op != "MatMul" && node.op != "Gemm") return false;
  for (const Value* v : node.inputs) {
    if (v != nullptr && v->dtype != DType::f32) return false;
  }
  return node.outputs[0]->dtype == DType::f32;
}

namespace {

// Batched C[b] = A[b] x B[b] with numpy matmul broadcasting over the batch dims.
void matmul(const Tensor& a, const Tensor& b, Tensor& out) {
  std::vector<int64_t> as = a.shape(), bs = b.shape();
  bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  std::vector<int64_t> a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  std::vector<int64_t> batch = broadcast_dims(a_batch, b_batch, "MatMul batch dims");
  int64_t batches = product(batch);
  std::vector<int64_t> a_full = a_batch, b_full = b_batch;
  a_full.insert(a_full.begin(), batch.size() - a_batch.size(), 1);
  b_full.insert(b_full.begin(), batch.size() - b_batch.size(), 1);
  const float* ap = a.data<float>();
  const float* bp = b.data<float>();
  float* cp = out.data<float>();
  for (int64_t i = 0; i < batches; ++i) {
    // Offsets of batch i in A and B, broadcasting size-1 batch dims.
    int64_t rest = i, a_off = 0, b_off = 0, a_stride = m * k, b_stride = k * n;
    for (size_t d = batch.size(); d-- > 0;) {
      int64_t idx = rest % batch[d];
      rest /= batch[d];
      if (a_full[d] != 1) a_off += idx * a_stride;
      if (b_full[d] != 1) b_off += idx * b_stride;
      a_stride *= a_full[d];
      b_stride *= b_full[d];
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
                1.0f, ap + a_off, static_cast<int>(k), bp + b_off, static_cast<int>(n), 0.0f, cp + i * m * n,
                static_cast<int>(n));
  }
}

void gemm(const Node& node, const std::vector<Tensor>& in, Tensor& out) {
  bool ta = node.attr_int("transA", 0) != 0, tb = node.attr_int("transB", 0) != 0;
  float alpha = static_cast<float>(node.attr_float("alpha", 1.0));
  float beta = static_cast<float>(node.attr_float("beta", 1.0));
  int64_t m = out.shape()[0], n = out.shape()[1];
  int64_t k = ta ? in[0].shape()[0] : in[0].shape()[1];
  float* cp = out.data<float>();
  bool has_c = in.size() > 2 && in[2].defined() && beta != 0.0f;
  if (has_c) {
    // C broadcasts (unidirectionally) to [M, N]: copy it in, then let sgemm scale and add.
    const Tensor& c = in[2];
    std::vector<int64_t> cs = c.shape();
    cs.insert(cs.begin(), 2 - cs.size(), 1);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        cp[i * n + j] = c.data<float>()[(cs[0] == 1 ? 0 : i) * cs[1] + (cs[1] == 1 ? 0 : j)];
      }
    }
  }
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), alpha, in[0].data<float>(), static_cast<int>(in[0].shape()[1]),
              in[1].data<float>(), static_cast<int>(in[1].shape()[1]), has_c ? beta : 0.0f, cp, static_cast<int>(n));
}

}  // namespace

void run_blas(const Node& node, const std::vector<Tensor>& inputs, Tensor& output, int threads) {
  openblas_set_num_threads(threads);
  if (node.op == "MatMul") {
    matmul(inputs[0], inputs[1], output);
  } else if (node.op == "Gemm") {
    gemm(node, inputs, output);
  } else if (node.op == "Conv") {
    run_conv_gemm(node, inputs, output);
  } else {
    fail_internal("run_blas: {} is not a BLAS op", node.describe());
  }
}

}  // namespace tilefuse::runtime
