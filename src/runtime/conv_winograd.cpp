#include "runtime/conv_winograd.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string_view>

#include "ir/shape.h"
#include "runtime/activation_vectors.h"
#include "runtime/cpu_isa.h"
#include "runtime/lane_masks.h"
#include "runtime/scratch_buffer.h"

#define TF_AVX512 __attribute__((target("avx512f")))

// The permutes and broadcasts below pass GCC 12's "undefined" vector as an unused merge source,
// which -Wuninitialized reports (as in sgemm_avx512.cpp); nothing is read uninitialised.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace tilefuse::runtime {

namespace {

constexpr int kPoints = 16;       // transformed values per tile (4 x 4)
constexpr int64_t kBlock = 32;    // tiles per block: one B panel of kNR (64 measured slower)
constexpr int kSegment = 16;      // tiles of one tile row transformed together, one per lane
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

// The tiles of one image: th x tw tiles of 2 x 2 outputs, numbered row by row.
struct TileGrid {
  int64_t rows, cols;
  int64_t count() const { return rows * cols; }
};

// A worker's share: the tiles [first, first + count) of image `image`, maps [map0, map0 + maps).
struct Item {
  int64_t image, first, count, map0, maps;
};

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

// The lanes of a 16-lane load of a row at column `col` that lie inside [0, width).
TF_AVX512 __mmask16 inside(int64_t col, int64_t width) {
  return static_cast<__mmask16>(lanes(width - col) & ~lanes(-col));
}

// 16 values of a row from column `col`, zero outside [0, width).
TF_AVX512 __m512 load_inside(const float* row, int64_t col, int64_t width) {
  return _mm512_maskz_loadu_ps(inside(col, width), address(row, col));
}

// Per input row of a tile segment: the column transform d B of every tile's 4 values
// (d0 - d2, d1 + d2, d2 - d1, d1 - d3), one tile per lane. `row` is null in the padding.
TF_AVX512 void column_transform(const float* row, int64_t col, int64_t width, __m512 (&t)[4]) {
  if (row == nullptr) {
    for (__m512& v : t) v = _mm512_setzero_ps();
    return;
  }
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
  const __m512 a = load_inside(row, col, width), b = load_inside(row, col + 16, width);
  const __m512 c = load_inside(row, col + 2, width), d = load_inside(row, col + 18, width);
  const __m512 d0 = _mm512_permutex2var_ps(a, even, b), d1 = _mm512_permutex2var_ps(a, odd, b);
  const __m512 d2 = _mm512_permutex2var_ps(c, even, d), d3 = _mm512_permutex2var_ps(c, odd, d);
  t[0] = _mm512_sub_ps(d0, d2);
  t[1] = _mm512_add_ps(d1, d2);
  t[2] = _mm512_sub_ps(d2, d1);
  t[3] = _mm512_sub_ps(d1, d3);
}

// Stores lanes [0, n) of v as tiles [tile, tile + n) of one channel's row of B panels (kNR
// tiles per panel, `depth` channels apart): split in two where the tiles cross into the next panel.
TF_AVX512 void store_tiles(float* panels, int64_t depth, int64_t channel, int64_t tile, int n, __m512 v) {
  auto at = [&](int64_t t) { return panels + ((t / kNR) * depth + channel) * kNR + t % kNR; };
  const int first = static_cast<int>(std::min<int64_t>(n, kNR - tile % kNR));
  _mm512_mask_storeu_ps(at(tile), lanes(first), v);
  if (first < n) {
    const __mmask16 rest = static_cast<__mmask16>(lanes(n) & ~lanes(first));
    _mm512_mask_storeu_ps(const_cast<float*>(address(at(tile + first), -first)), rest, v);
  }
}

// V = B^T d B of the block's tiles for every channel of one image `x`, written as 16 B operands
// (transformed position xi at panels + xi * stride), each channels x tiles in kNR-tile panels.
TF_AVX512 void transform_input(const ConvShape& s, const TileGrid& grid, const float* x, int64_t first, int64_t count,
                               float* panels, int64_t stride) {
  const int64_t plane = s.height * s.width;
  for (int64_t c = 0; c < s.channels; ++c) {
    const float* xc = x + c * plane;
    for (int64_t local = 0; local < count;) {
      const int64_t tile = first + local, th = tile / grid.cols, tw = tile % grid.cols;
      const int n = static_cast<int>(std::min({int64_t{kSegment}, grid.cols - tw, count - local}));
      __m512 t[4][4];
      for (int r = 0; r < 4; ++r) {
        const int64_t y = 2 * th - s.pad_top + r;
        column_transform(y >= 0 && y < s.height ? xc + y * s.width : nullptr, 2 * tw - s.pad_left, s.width, t[r]);
      }
      for (int j = 0; j < 4; ++j) {
        const __m512 v[4] = {_mm512_sub_ps(t[0][j], t[2][j]), _mm512_add_ps(t[1][j], t[2][j]),
                             _mm512_sub_ps(t[2][j], t[1][j]), _mm512_sub_ps(t[1][j], t[3][j])};
        for (int i = 0; i < 4; ++i) store_tiles(panels + (4 * i + j) * stride, s.channels, c, local, n, v[i]);
      }
      local += n;
    }
  }
  // The last panel's columns past the block: computed by the micro-kernel, never stored, but
  // kept finite (stale scratch could hold denormals, which are slow to multiply).
  if (const int64_t used = count % kNR; used != 0) {
    const __mmask16 lo = static_cast<__mmask16>(~lanes(used)), hi = static_cast<__mmask16>(~lanes(used - 16));
    for (int xi = 0; xi < kPoints; ++xi) {
      float* last = panels + xi * stride + (count / kNR) * s.channels * kNR;
      for (int64_t c = 0; c < s.channels; ++c) {
        _mm512_mask_storeu_ps(last + c * kNR, lo, _mm512_setzero_ps());
        _mm512_mask_storeu_ps(last + c * kNR + 16, hi, _mm512_setzero_ps());
      }
    }
  }
}

// Y = A^T M A for the block's tiles and maps [item.map0, + item.maps), A^T = [1 1 1 0; 0 1 -1 -1],
// from the 16 products (position xi at products + xi * stride, map rows `ld` apart), then the
// epilogue, into the image's output planes.
TF_AVX512 void transform_output(const ConvShape& s, const TileGrid& grid, const Item& item, const float* products,
                                int64_t stride, int64_t ld, const float* bias, const float* residual,
                                const FusedActivation& activation, float* out) {
  const __m512i lo_idx = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  const __m512i hi_idx = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
  const bool activate = !activation.identity();
  const Avx512Activation act(activation);
  const int64_t plane = s.out_h * s.out_w;
  for (int64_t m = item.map0; m < item.map0 + item.maps; ++m) {
    const float* row = products + (m - item.map0) * ld;
    const __m512 b = _mm512_set1_ps(bias != nullptr ? bias[m] : 0.0f);
    for (int64_t local = 0; local < item.count;) {
      const int64_t tile = item.first + local, th = tile / grid.cols, tw = tile % grid.cols;
      const int n = static_cast<int>(std::min({int64_t{kSegment}, grid.cols - tw, item.count - local}));
      __m512 p[kPoints];
      for (int xi = 0; xi < kPoints; ++xi) p[xi] = _mm512_maskz_loadu_ps(lanes(n), row + xi * stride + local);
      __m512 r[2][4];
      for (int j = 0; j < 4; ++j) {
        r[0][j] = _mm512_add_ps(_mm512_add_ps(p[j], p[4 + j]), p[8 + j]);
        r[1][j] = _mm512_sub_ps(_mm512_sub_ps(p[4 + j], p[8 + j]), p[12 + j]);
      }
      for (int a = 0; a < 2; ++a) {
        const int64_t oy = 2 * th + a;
        if (oy >= s.out_h) break;
        const __m512 y0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(r[a][0], r[a][1]), r[a][2]), b);
        const __m512 y1 = _mm512_add_ps(_mm512_sub_ps(_mm512_sub_ps(r[a][1], r[a][2]), r[a][3]), b);
        const int64_t offset = m * plane + oy * s.out_w + 2 * tw, room = std::min<int64_t>(s.out_w - 2 * tw, 2 * n);
        const __m512 halves[2] = {_mm512_permutex2var_ps(y0, lo_idx, y1), _mm512_permutex2var_ps(y0, hi_idx, y1)};
        for (int h = 0; h < 2; ++h) {
          const __mmask16 mask = lanes(room - 16 * h);
          if (mask == 0) break;
          __m512 v = halves[h];
          if (residual != nullptr) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, residual + offset + 16 * h));
          if (activate) v = act(v);
          _mm512_mask_storeu_ps(out + offset + 16 * h, mask, v);
        }
      }
      local += n;
    }
  }
}

thread_local ScratchBuffer t_transformed, t_products, t_pairs;

}  // namespace

bool winograd_suits(const Node& node) {
  static const bool enabled = [] {
    const char* v = std::getenv("TILEFUSE_CONV_WINOGRAD");
    return v == nullptr || std::string_view(v) != "0";
  }();
  if (!enabled || vector_isa() != VectorIsa::avx512) return false;
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
        transform_input(s, grid, x + image * in_image, item.first, item.count, panels, panels_stride);
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
      transform_output(s, grid, item, products, products_stride, ld, bias,
                       residual != nullptr ? residual + image * out_image : nullptr, activation, out + image * out_image);
    }
  });
}

}  // namespace tilefuse::runtime
