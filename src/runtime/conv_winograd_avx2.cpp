// Winograd's transforms with AVX2: a segment of up to 8 tiles of one tile row is transformed at
// once, one tile per lane. Rows, segments and panels are cut by masks only where they must be:
// masked loads and stores are slower than plain ones on AMD, and most segments lie inside.
#include <immintrin.h>

#include <algorithm>

#include "runtime/activation_vectors.h"
#include "runtime/conv_winograd_isa.h"
#include "runtime/lane_masks.h"
#include "runtime/sgemm_microkernel.h"

#define TF_AVX2 __attribute__((target("avx2,fma")))

namespace tilefuse::runtime::winograd::avx2 {

namespace {

constexpr int kSegment = 8;  // tiles of one tile row transformed together, one per lane

// 8 values of a row from column `col`, zero outside [0, width).
TF_AVX2 __m256 load_inside(const float* row, int64_t col, int64_t width) {
  return _mm256_maskload_ps(address(row, col), lanes8_between(-col, width - col));
}

// The even and the odd values of a (8 values) followed by b (8 more).
TF_AVX2 __m256 evens(__m256 a, __m256 b) {
  const __m256 pairs = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));  // a0 a2 b0 b2 | a4 a6 b4 b6
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(pairs), _MM_SHUFFLE(3, 1, 2, 0)));
}
TF_AVX2 __m256 odds(__m256 a, __m256 b) {
  const __m256 pairs = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(pairs), _MM_SHUFFLE(3, 1, 2, 0)));
}

// Per input row of a tile segment: the column transform d B of every tile's 4 values
// (d0 - d2, d1 + d2, d2 - d1, d1 - d3), one tile per lane; tile k reads columns col + 2k to
// col + 2k + 3. `row` is null in the padding.
TF_AVX2 void column_transform(const float* row, int64_t col, int64_t width, __m256 (&t)[4]) {
  if (row == nullptr) {
    for (__m256& v : t) v = _mm256_setzero_ps();
    return;
  }
  __m256 a, b, c, d;
  if (col >= 0 && col + 2 * kSegment + 2 <= width) {
    a = _mm256_loadu_ps(row + col), b = _mm256_loadu_ps(row + col + 8);
    c = _mm256_loadu_ps(row + col + 2), d = _mm256_loadu_ps(row + col + 10);
  } else {
    a = load_inside(row, col, width), b = load_inside(row, col + 8, width);
    c = load_inside(row, col + 2, width), d = load_inside(row, col + 10, width);
  }
  const __m256 d0 = evens(a, b), d1 = odds(a, b), d2 = evens(c, d), d3 = odds(c, d);
  t[0] = _mm256_sub_ps(d0, d2);
  t[1] = _mm256_add_ps(d1, d2);
  t[2] = _mm256_sub_ps(d2, d1);
  t[3] = _mm256_sub_ps(d1, d3);
}

// Stores lanes [0, n) of v as tiles [tile, tile + n) of one channel's row of B panels (kNR
// tiles per panel, `depth` channels apart): split in two where the tiles cross into the next panel.
TF_AVX2 void store_tiles(float* panels, int64_t depth, int64_t channel, int64_t tile, int n, __m256 v) {
  auto at = [&](int64_t t) { return panels + ((t / kNR) * depth + channel) * kNR + t % kNR; };
  const int first = static_cast<int>(std::min<int64_t>(n, kNR - tile % kNR));
  if (first == kSegment) {
    _mm256_storeu_ps(at(tile), v);
    return;
  }
  _mm256_maskstore_ps(at(tile), lanes8(first), v);
  if (first < n) _mm256_maskstore_ps(const_cast<float*>(address(at(tile + first), -first)), lanes8_between(first, n), v);
}

}  // namespace

TF_AVX2 void transform_input(const ConvShape& s, const TileGrid& grid, const float* x, int64_t first, int64_t count,
                             float* panels, int64_t stride) {
  const int64_t plane = s.height * s.width;
  for (int64_t c = 0; c < s.channels; ++c) {
    const float* xc = x + c * plane;
    for (int64_t local = 0; local < count;) {
      const int64_t tile = first + local, th = tile / grid.cols, tw = tile % grid.cols;
      const int n = static_cast<int>(std::min({int64_t{kSegment}, grid.cols - tw, count - local}));
      __m256 t[4][4];
      for (int r = 0; r < 4; ++r) {
        const int64_t y = 2 * th - s.pad_top + r;
        column_transform(y >= 0 && y < s.height ? xc + y * s.width : nullptr, 2 * tw - s.pad_left, s.width, t[r]);
      }
      for (int j = 0; j < 4; ++j) {
        const __m256 v[4] = {_mm256_sub_ps(t[0][j], t[2][j]), _mm256_add_ps(t[1][j], t[2][j]),
                             _mm256_sub_ps(t[2][j], t[1][j]), _mm256_sub_ps(t[1][j], t[3][j])};
        for (int i = 0; i < 4; ++i) store_tiles(panels + (4 * i + j) * stride, s.channels, c, local, n, v[i]);
      }
      local += n;
    }
  }
  // The last panel's columns past the block: computed by the micro-kernel, never stored, but
  // kept finite (stale scratch could hold denormals, which are slow to multiply).
  if (const int64_t used = count % kNR; used != 0) {
    for (int xi = 0; xi < kPoints; ++xi) {
      float* last = panels + xi * stride + (count / kNR) * s.channels * kNR;
      for (int64_t c = 0; c < s.channels; ++c) {
        for (int v = static_cast<int>(used / kSegment); v < kNR / kSegment; ++v) {
          _mm256_maskstore_ps(last + c * kNR + kSegment * v, lanes8_between(used - kSegment * v, kSegment),
                              _mm256_setzero_ps());
        }
      }
    }
  }
}

// A^T = [1 1 1 0; 0 1 -1 -1]; a segment's two output columns are interleaved by unpacks.
TF_AVX2 void transform_output(const ConvShape& s, const TileGrid& grid, const Item& item, const Products& products,
                              const Epilogue& epilogue, float* out) {
  const bool activate = !epilogue.activation.identity();
  const Avx2Activation act(epilogue.activation);
  const int64_t plane = s.out_h * s.out_w;
  for (int64_t m = item.map0; m < item.map0 + item.maps; ++m) {
    const float* row = products.data + (m - item.map0) * products.ld;
    const __m256 b = _mm256_set1_ps(epilogue.bias != nullptr ? epilogue.bias[m] : 0.0f);
    for (int64_t local = 0; local < item.count;) {
      const int64_t tile = item.first + local, th = tile / grid.cols, tw = tile % grid.cols;
      const int n = static_cast<int>(std::min({int64_t{kSegment}, grid.cols - tw, item.count - local}));
      const __m256i used = lanes8(n);
      __m256 p[kPoints];
      for (int xi = 0; xi < kPoints; ++xi) {
        const float* at = row + xi * products.stride + local;
        p[xi] = n == kSegment ? _mm256_loadu_ps(at) : _mm256_maskload_ps(at, used);
      }
      __m256 r[2][4];
      for (int j = 0; j < 4; ++j) {
        r[0][j] = _mm256_add_ps(_mm256_add_ps(p[j], p[4 + j]), p[8 + j]);
        r[1][j] = _mm256_sub_ps(_mm256_sub_ps(p[4 + j], p[8 + j]), p[12 + j]);
      }
      for (int a = 0; a < 2; ++a) {
        const int64_t oy = 2 * th + a;
        if (oy >= s.out_h) break;
        const __m256 y0 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(r[a][0], r[a][1]), r[a][2]), b);
        const __m256 y1 = _mm256_add_ps(_mm256_sub_ps(_mm256_sub_ps(r[a][1], r[a][2]), r[a][3]), b);
        const __m256 lo = _mm256_unpacklo_ps(y0, y1), hi = _mm256_unpackhi_ps(y0, y1);
        const __m256 halves[2] = {_mm256_permute2f128_ps(lo, hi, 0x20), _mm256_permute2f128_ps(lo, hi, 0x31)};
        const int64_t offset = m * plane + oy * s.out_w + 2 * tw, room = std::min<int64_t>(s.out_w - 2 * tw, 2 * n);
        for (int h = 0; h < 2; ++h) {
          const int64_t left = room - kSegment * h;
          if (left <= 0) break;
          float* dst = out + offset + kSegment * h;
          const __m256i mask = lanes8(left);
          __m256 v = halves[h];
          if (epilogue.residual != nullptr) {
            const float* res = epilogue.residual + offset + kSegment * h;
            v = _mm256_add_ps(v, left >= kSegment ? _mm256_loadu_ps(res) : _mm256_maskload_ps(res, mask));
          }
          if (activate) v = act(v);
          if (left >= kSegment) {
            _mm256_storeu_ps(dst, v);
          } else {
            _mm256_maskstore_ps(dst, mask, v);
          }
        }
      }
      local += n;
    }
  }
}

}  // namespace tilefuse::runtime::winograd::avx2
