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
  // The batch may be symbolic: the choice is made per image.
  if (ws.size() != 4 || ws[1] <= 4 || out.size() != 4 || !out[2].is_const() || !out[3].is_const()) return false;
  const int64_t positions = out[2].value() * out[3].value(), maps = ws[0];
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
  // Images multiplied together: their positions are rows of one product, as many as fit the
  // scratch's L2 budget (a batch of 3 at 2 x 2 positions is one 12-row tile, not three 4-row ones).
  const int64_t per_product = std::max<int64_t>(1, kMaxPositions / positions);
  for (int64_t n0 = 0; n0 < s.batch; n0 += per_product) {
    const int64_t images = std::min(per_product, s.batch - n0), rows = images * positions;
    const float* xn = x + n0 * in_image;
    // unfold(x)^T of the images side by side: element (image * positions + p, k) at k * rows + row.
    const bool in_place = s.pointwise() && images == 1;
    if (!in_place) {
      cols_.resize(static_cast<size_t>(depth * rows));
      // Channel c's kernel-size rows come from its plane alone: the workers unfold channels apart.
      team.run(images * s.channels, [&](int, int64_t first, int64_t end) {
        for (int64_t item = first; item < end; ++item) {
          const int64_t image = item / s.channels, c = item % s.channels;
          ConvShape part = s;
          part.channels = 1;
          unfold(part, xn + image * in_image + c * s.height * s.width,
                 cols_.data() + c * s.kh * s.kw * rows + image * positions, rows);
        }
      });
    }
    product_.resize(static_cast<size_t>(rows * s.maps));
    GemmProblem p;
    p.m = rows, p.n = s.maps, p.k = depth;
    p.a.view = {in_place ? xn : cols_.data(), 1, rows};
    p.b.packed = &w_[0];
    p.c = product_.data(), p.ldc = s.maps;
    p.col_bias = bias;
    sgemm(team, {&p, 1}, blocking);
    team.run(images * ((s.maps + 15) / 16), [&](int, int64_t first, int64_t end) {
      const int64_t blocks = (s.maps + 15) / 16;
      for (int64_t item = first; item < end; ++item) {
        const int64_t image = item / blocks, n = n0 + image;
        const float* res = residual != nullptr ? residual + n * out_image : nullptr;
        transpose_out(product_.data() + image * positions * s.maps, positions, s.maps, 16 * (item % blocks), res,
                      activation, out + n * out_image);
      }
    });
  }
}

}  // namespace tilefuse::runtime
