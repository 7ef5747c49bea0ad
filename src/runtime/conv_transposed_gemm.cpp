#include "runtime/conv_transposed_gemm.h"

#include <immintrin.h>

#include <algorithm>

#include "ir/shape.h"
#include "runtime/activation_vectors.h"
#include "runtime/cpu_isa.h"
#include "runtime/lane_masks.h"
#include "runtime/transpose_avx512.h"

#define TF_AVX512 __attribute__((target("avx512f,avx512vl,fma")))

// transpose16's shuffles pass GCC 12's "undefined" vector as an unused merge source, which
// -Wuninitialized reports (see transpose_avx512.h); nothing is read uninitialised.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace tilefuse::runtime {

namespace {

constexpr int64_t kMaxPositions = 256;  // the scratch product stays in L2

// out[m][p] = activation(product[p][m] + residual[m][p]) for maps [m0, m0 + 16) and every
// position: 16 x 16 blocks of the product transposed in registers.
TF_AVX512 void transpose_out(const float* product, int64_t positions, int64_t maps, int64_t m0, const float* residual,
                             const FusedActivation& activation, float* out) {
  const bool activate = !activation.identity();
  const Avx512Activation act(activation);
  const int depth = static_cast<int>(std::min<int64_t>(16, maps - m0));
  for (int64_t p0 = 0; p0 < positions; p0 += 16) {
    const int count = static_cast<int>(std::min<int64_t>(16, positions - p0));
    __m512 v[16];
    avx512::load_transposed(product + p0 * maps + m0, maps, count, depth, v);
    const __mmask16 mask = lanes(count);
    for (int e = 0; e < depth; ++e) {
      const int64_t at = (m0 + e) * positions + p0;
      __m512 y = v[e];
      if (residual != nullptr) y = _mm512_add_ps(y, _mm512_maskz_loadu_ps(mask, residual + at));
      if (activate) y = act(y);
      _mm512_mask_storeu_ps(out + at, mask, y);
    }
  }
}

}  // namespace

bool transposed_gemm_suits(const Node& node) {
  if (vector_isa() != VectorIsa::avx512) return false;
  if ((node.op != "Conv" && node.op != "FusedConv") || node.attr_int("group", 1) != 1) return false;
  const Value* w = node.input(1);
  if (!w->constant.has_value() || w->dtype != DType::f32 || node.input(0)->dtype != DType::f32) return false;
  const std::vector<int64_t>& ws = w->constant->shape();
  const Shape& out = node.outputs[0]->shape;
  if (ws.size() != 4 || ws[1] <= 4 || !is_static(out)) return false;
  const std::vector<int64_t> o = static_dims(out);
  const int64_t positions = o[2] * o[3], maps = ws[0];
  if (positions > kMaxPositions) return false;
  // Multiplications, padding included, with positions as columns and as rows.
  const double as_columns = micro_tiles(maps, positions);
  const double as_rows = micro_tiles(positions, maps);
  return as_rows < 0.9 * as_columns;
}

TransposedConvGemm::TransposedConvGemm(const Tensor& w, Precision precision) {
  const int64_t maps = w.shape()[0], depth = w.numel() / maps;
  const MatrixView transposed{w.data<float>(), 1, depth};  // w^T: element (k, m) is w[m][k]
  w_.push_back(precision == Precision::bf16 ? PackedOperand::pack_b_bf16(transposed, depth, maps)
                                            : PackedOperand::pack_b(transposed, depth, maps));
}

void TransposedConvGemm::run(ThreadTeam& team, const ConvShape& s, const float* x, const float* bias,
                             const float* residual, const FusedActivation& activation, float* out,
                             const GemmBlocking& blocking) {
  const int64_t positions = s.positions(), depth = s.rows();
  const int64_t in_image = s.channels * s.height * s.width, out_image = s.maps * positions;
  if (!s.pointwise()) cols_.resize(static_cast<size_t>(depth * positions));
  product_.resize(static_cast<size_t>(positions * s.maps));
  for (int64_t n = 0; n < s.batch; ++n) {
    const float* xn = x + n * in_image;
    if (!s.pointwise()) {
      // Channel c's kernel-size rows come from its plane alone: the workers unfold channels apart.
      team.run(s.channels, [&](int, int64_t first, int64_t end) {
        ConvShape part = s;
        part.channels = end - first;
        unfold(part, xn + first * s.height * s.width, cols_.data() + first * s.kh * s.kw * positions);
      });
    }
    GemmProblem p;
    p.m = positions, p.n = s.maps, p.k = depth;
    // unfold(x)^T: element (position, k) at k * positions + position.
    p.a.view = {s.pointwise() ? xn : cols_.data(), 1, positions};
    p.b.packed = &w_[0];
    p.c = product_.data(), p.ldc = s.maps;
    p.col_bias = bias;
    sgemm(team, {&p, 1}, blocking);
    const float* res = residual != nullptr ? residual + n * out_image : nullptr;
    team.run((s.maps + 15) / 16, [&](int, int64_t first, int64_t end) {
      for (int64_t b = first; b < end; ++b) transpose_out(product_.data(), positions, s.maps, 16 * b, res, activation, out + n * out_image);
    });
  }
}

}  // namespace tilefuse::runtime
