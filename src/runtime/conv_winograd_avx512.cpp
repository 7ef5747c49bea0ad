// Winograd's transforms with AVX-512: a segment of up to 16 tiles of one tile row is
// transformed at once, one tile per lane; masked loads and stores cut rows, panels and segments.
#include <immintrin.h>

#include <algorithm>

#include "runtime/activation_vectors.h"
#include "runtime/conv_winograd_isa.h"
#include "runtime/lane_masks.h"
#include "runtime/sgemm_microkernel.h"

#define TF_AVX512 __attribute__((target("avx512f")))

// The permutes and broadcasts below pass GCC 12's "undefined" vector as an unused merge source,
// which -Wuninitialized reports (as in sgemm_avx512.cpp); nothing is read uninitialised.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace tilefuse::runtime::winograd::avx512 {

namespace {

constexpr int kSegment = 16;  // tiles of one tile row transformed together, one per lane

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

}  // namespace

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

// A^T = [1 1 1 0; 0 1 -1 -1]; a segment's two output columns are interleaved by permutes.
TF_AVX512 void transform_output(const ConvShape& s, const TileGrid& grid, const Item& item, const Products& products,
                                const Epilogue& epilogue, float* out) {
  const __m512i lo_idx = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  const __m512i hi_idx = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
  const bool activate = !epilogue.activation.identity();
  const Avx512Activation act(epilogue.activation);
  const int64_t plane = s.out_h * s.out_w;
  for (int64_t m = item.map0; m < item.map0 + item.maps; ++m) {
    const float* row = products.data + (m - item.map0) * products.ld;
    const __m512 b = _mm512_set1_ps(epilogue.bias != nullptr ? epilogue.bias[m] : 0.0f);
    for (int64_t local = 0; local < item.count;) {
      const int64_t tile = item.first + local, th = tile / grid.cols, tw = tile % grid.cols;
      const int n = static_cast<int>(std::min({int64_t{kSegment}, grid.cols - tw, item.count - local}));
      __m512 p[kPoints];
      for (int xi = 0; xi < kPoints; ++xi) p[xi] = _mm512_maskz_loadu_ps(lanes(n), row + xi * products.stride + local);
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
          if (epilogue.residual != nullptr) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, epilogue.residual + offset + 16 * h));
          if (activate) v = act(v);
          _mm512_mask_storeu_ps(out + offset + 16 * h, mask, v);
        }
      }
      local += n;
    }
  }
}

}  // namespace tilefuse::runtime::winograd::avx512
