#include "runtime/conv_winograd.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string_view>

#include "ir/shape.h"
#include "runtime/conv_winograd_isa.h"
#include "runtime/cpu_isa.h"
#include "runtime/scratch_buffer.h"

namespace tilefuse::runtime {

namespace {

using winograd::Item;
using winograd::kPoints;
using winograd::TileGrid;

constexpr int64_t kBlock = 32;    // tiles per block: one B panel of kNR (64 measured slower)
constexpr int64_t kMinTiles = 32;  // per run, for the transformed filters to pay for their bytes

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// U = G g G^T for one 3x3 filter g (row-major), G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1].
std::array<double, kPoints> transform_filter(const float* g) {
  auto rows = [](const double (&x)[3][3]) {
    std::array<std::array<double, 3>, 4> r{};
    for (int j = 0; j < 3; ++j) {
      r[0][j] = x[0][j];
      r[1][j] = (x[0][j] + x[1][j] + x[2][j]) / 2;
      r[2][j] = (x[0][j] - x[1][j] + x[2][j]) / 2;
      r[3][j] = x[2][j];
    }
    return r;
  };
  double x[3][3];
  for (int i = 0; i < 9; ++i) x[i / 3][i % 3] = g[i];
  const auto gx = rows(x);  // G g: 4 x 3
  std::array<double, kPoints> u{};
  for (int i = 0; i < 4; ++i) {
    const auto& r = gx[i];
    u[4 * i + 0] = r[0];
    u[4 * i + 1] = (r[0] + r[1] + r[2]) / 2;
    u[4 * i + 2] = (r[0] - r[1] + r[2]) / 2;
    u[4 * i + 3] = r[2];
  }
  return u;
}

// How a run is split: blocks of tiles per image, and chunks of maps per block.
struct Split {
  int64_t blocks, block_tiles, chunks, chunk_maps;
};

// Enough items for the team: tiles in blocks of about kBlock; where an image has fewer blocks
// than 4 per worker, the maps are cut into one chunk per worker as well (each reads a share of
// the transformed filters, which are megabytes for the deep layers, instead of all of them).
Split split_for(int64_t batch, int64_t tiles, int64_t maps, int workers) {
  Split s{};
  s.blocks = std::max<int64_t>(1, ceil_div(tiles, kBlock));
  s.chunks = 1;
  if (batch * s.blocks < 4 * workers) s.chunks = std::min<int64_t>(workers, ceil_div(maps, kMR));
  if ((batch * s.blocks * s.chunks) % workers != 0 && batch * s.blocks * s.chunks < 8 * workers) {
    s.blocks = std::min(tiles, round_up(batch * s.blocks * s.chunks, workers) / (batch * s.chunks));
  }
  s.block_tiles = ceil_div(tiles, s.blocks);
  s.blocks = ceil_div(tiles, s.block_tiles);
  s.chunk_maps = round_up(ceil_div(maps, s.chunks), kMR);
  s.chunks = ceil_div(maps, s.chunk_maps);
  return s;
}

thread_local ScratchBuffer t_transformed, t_products, t_pairs;

}  // namespace

bool winograd_suits(const Node& node) {
  static const bool enabled = [] {
    const char* v = std::getenv("TILEFUSE_CONV_WINOGRAD");
    return v == nullptr || std::string_view(v) != "0";
  }();
  if (!enabled || vector_isa() < VectorIsa::avx2) return false;
  if ((node.op != "Conv" && node.op != "FusedConv") || node.attr_int("group", 1) != 1) return false;
  const Value* w = node.input(1);
  if (!w->constant.has_value() || w->dtype != DType::f32 || node.input(0)->dtype != DType::f32) return false;
  const std::vector<int64_t>& ws = w->constant->shape();
  // 32 channels and more: with 16 (SqueezeNet's first expansions, 16 -> 64 at 55 x 55) the input
  // and output transforms cost more than the multiplications they save (0.18 ms against 0.15 as
  // an implicit GEMM at 2 threads; SqueezeNet 1.1 2.00 -> 1.93 ms at 224 x 224).
  if (ws.size() != 4 || ws[2] != 3 || ws[3] != 3 || ws[0] < 16 || ws[1] < 32) return false;
  const std::vector<int64_t> ones = {1, 1};
  if (node.attr_ints("strides", ones) != ones || node.attr_ints("dilations", ones) != ones) return false;
  // Few tiles per run: the transformed filters (16/9 of the weight's bytes) come from memory for
  // too few products. ResNet-50's 7x7 layers (16 tiles, 16 MB of them) ran slower inside the
  // model than by implicit GEMM, though faster alone, where the filters stay in L3.
  // A symbolic batch counts as one image: a dynamic export's 2 x 2 maps took Winograd's path
  // and ran 3.5 times slower than the static export's products.
  const Shape& out = node.outputs[0]->shape;
  if (out.size() != 4 || !out[2].is_const() || !out[3].is_const()) return true;
  const int64_t images = out[0].is_const() ? out[0].value() : 1;
  return images * ceil_div(out[2].value(), 2) * ceil_div(out[3].value(), 2) >= kMinTiles;
}

WinogradConv::WinogradConv(const Tensor& w, Precision precision)
    : maps_(w.shape()[0]), channels_(w.shape()[1]), bf16_(precision == Precision::bf16) {
  // u[xi][m][c]: the transformed filters, one maps x channels matrix per position.
  std::vector<float> u(static_cast<size_t>(kPoints * maps_ * channels_));
  const float* g = w.data<float>();
  for (int64_t m = 0; m < maps_; ++m) {
    for (int64_t c = 0; c < channels_; ++c) {
      const std::array<double, kPoints> t = transform_filter(g + (m * channels_ + c) * 9);
      for (int xi = 0; xi < kPoints; ++xi) u[(xi * maps_ + m) * channels_ + c] = static_cast<float>(t[xi]);
    }
  }
  for (int xi = 0; xi < kPoints; ++xi) {
    const MatrixView filters{u.data() + xi * maps_ * channels_, channels_, 1};
    u_.push_back(bf16_ ? PackedOperand::pack_a_bf16(filters, maps_, channels_)
                       : PackedOperand::pack_a(filters, maps_, channels_));
  }
}

void WinogradConv::run(ThreadTeam& team, const ConvShape& s, const float* x, const float* bias, const float* residual,
                       const FusedActivation& activation, float* out, const GemmBlocking& blocking) {
  const TileGrid grid{ceil_div(s.out_h, 2), ceil_div(s.out_w, 2)};
  const Split split = split_for(s.batch, grid.count(), maps_, team.size());
  const int64_t in_image = s.channels * s.height * s.width, out_image = maps_ * s.out_h * s.out_w;
  // Per worker: the block's transformed input (16 operands of channels x block tiles, in B
  // panels) and the 16 products (chunk maps x block tiles each).
  const int64_t panels_stride = round_up(split.block_tiles, kNR) * channels_;
  const int64_t ld = round_up(split.block_tiles, 16), products_stride = split.chunk_maps * ld;
  const int64_t pairs_stride = round_up(split.block_tiles, kNR) * ((channels_ + 1) / 2);  // in bf16
  const int64_t items = s.batch * split.blocks * split.chunks;
  const bool avx512 = vector_isa() == VectorIsa::avx512;
  team.run(items, [&](int, int64_t begin, int64_t end) {
    float* panels = t_transformed.floats(static_cast<size_t>(kPoints * panels_stride));
    float* products = t_products.floats(static_cast<size_t>(kPoints * products_stride));
    float* pairs = bf16_ ? t_pairs.floats(static_cast<size_t>(kPoints * pairs_stride)) : nullptr;
    int64_t transformed = -1;  // the image block whose input `panels` holds
    for (int64_t i = begin; i < end; ++i) {
      const int64_t image_block = i / split.chunks, chunk = i % split.chunks;
      const int64_t image = image_block / split.blocks, block = image_block % split.blocks;
      Item item{image, block * split.block_tiles, 0, chunk * split.chunk_maps, 0};
      item.count = std::min(split.block_tiles, grid.count() - item.first);
      item.maps = std::min(split.chunk_maps, maps_ - item.map0);
      if (image_block != transformed) {
        (avx512 ? winograd::avx512::transform_input : winograd::avx2::transform_input)(
            s, grid, x + image * in_image, item.first, item.count, panels, panels_stride);
        if (bf16_) {
          for (int xi = 0; xi < kPoints; ++xi) {
            b_panels_to_bf16(panels + xi * panels_stride, ceil_div(item.count, kNR), channels_, pairs + xi * pairs_stride);
          }
        }
        transformed = image_block;
      }
      for (int xi = 0; xi < kPoints; ++xi) {
        const PackedOperand a = PackedOperand::view(u_[xi].panel(item.map0 / kMR, 0), kMR, channels_, bf16_);
        const PackedOperand b = bf16_ ? PackedOperand::view(pairs + xi * pairs_stride, kNR, channels_, true)
                                      : PackedOperand::view(panels + xi * panels_stride, kNR, channels_);
        GemmProblem p;
        p.m = item.maps, p.n = item.count, p.k = channels_;
        p.a.packed = &a, p.b.packed = &b;
        p.c = products + xi * products_stride, p.ldc = ld;
        sgemm_rows(p, 0, item.maps, blocking);
      }
      const winograd::Epilogue epilogue{bias, residual != nullptr ? residual + image * out_image : nullptr, activation};
      (avx512 ? winograd::avx512::transform_output : winograd::avx2::transform_output)(
          s, grid, item, {products, products_stride, ld}, epilogue, out + image * out_image);
    }
  });
}

}  // namespace tilefuse::runtime
