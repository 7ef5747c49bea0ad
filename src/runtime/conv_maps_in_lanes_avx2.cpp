// conv_maps_in_lanes's sums and stores with AVX2: 8 maps a vector, two vectors of maps by 6
// outputs of a row (or one by 12) summed together: 12 accumulators, the tap's weight vectors and
// a broadcast in 16 registers. The sums go back to planes through 8 x 8 transposes
// (transpose_avx2.h).
#include <immintrin.h>

#include <algorithm>

#include "runtime/activation_vectors.h"
#include "runtime/conv_maps_in_lanes_isa.h"
#include "runtime/transpose_avx2.h"

#define TF_AVX2 __attribute__((target("avx2,fma")))

namespace tilefuse::runtime::maps_in_lanes::avx2 {

namespace {

constexpr int kLanes = 8;  // maps per vector

// Outputs of a row summed together for B vectors of maps.
constexpr int row_outputs(int blocks) { return blocks >= 2 ? 6 : 12; }

// The sums of B map vectors (maps 8 * block0 ..) for every output of the band into `sums`
// ([position][maps_padded]), U outputs of a row at a time.
template <int B>
TF_AVX2 void sum_products(const ConvShape& s, const Band& b, const float* block, const float* weights,
                          int64_t maps_padded, int64_t block0, float* sums) {
  constexpr int U = row_outputs(B);
  const int64_t taps = s.kh * s.kw;
  for (int64_t oy = 0; oy < b.rows; ++oy) {
    for (int64_t ox0 = 0; ox0 < s.out_w; ox0 += U) {
      __m256 acc[B][U];
#pragma GCC unroll 2
      for (int v = 0; v < B; ++v) {
        const __m256 bias = _mm256_load_ps(weights + (s.channels * taps) * maps_padded + (block0 + v) * kLanes);
#pragma GCC unroll 12
        for (int u = 0; u < U; ++u) acc[v][u] = bias;
      }
      for (int64_t c = 0; c < s.channels; ++c) {
        for (int64_t i = 0; i < s.kh; ++i) {
          const float* row = block + (c * b.input_rows + oy * s.stride_h + i * s.dil_h) * b.columns + ox0 * s.stride_w;
          const float* tap_weights = weights + (c * taps + i * s.kw) * maps_padded + block0 * kLanes;
          for (int64_t j = 0; j < s.kw; ++j) {
            __m256 wv[B];
#pragma GCC unroll 2
            for (int v = 0; v < B; ++v) wv[v] = _mm256_load_ps(tap_weights + j * maps_padded + v * kLanes);
            const float* in = row + j * s.dil_w;
#pragma GCC unroll 12
            for (int u = 0; u < U; ++u) {
              const __m256 xv = _mm256_broadcast_ss(in + u * s.stride_w);
#pragma GCC unroll 2
              for (int v = 0; v < B; ++v) acc[v][u] = _mm256_fmadd_ps(wv[v], xv, acc[v][u]);
            }
          }
        }
      }
      const int64_t count = std::min<int64_t>(U, s.out_w - ox0);
      float* to = sums + (oy * s.out_w + ox0) * maps_padded + block0 * kLanes;
#pragma GCC unroll 12
      for (int u = 0; u < U; ++u) {
        if (u >= count) break;
#pragma GCC unroll 2
        for (int v = 0; v < B; ++v) _mm256_store_ps(to + u * maps_padded + v * kLanes, acc[v][u]);
      }
    }
  }
}

}  // namespace

TF_AVX2 void sum_band(const ConvShape& s, const Band& b, const float* block, const float* weights, int64_t maps_padded,
                      float* sums) {
  // Vectors past the maps (the padding to 16) are not summed: their sums are never stored.
  const int64_t blocks = (s.maps + kLanes - 1) / kLanes;
  for (int64_t b0 = 0; b0 < blocks; b0 += 2) {
    if (blocks - b0 >= 2) {
      sum_products<2>(s, b, block, weights, maps_padded, b0, sums);
    } else {
      sum_products<1>(s, b, block, weights, maps_padded, b0, sums);
    }
  }
}

TF_AVX2 void store_planes(const ConvShape& s, const Band& b, const float* sums, int64_t maps_padded,
                          const float* residual, const FusedActivation& activation, float* out) {
  const Avx2Activation act(activation);
  const bool activate = !activation.identity();
  const int64_t positions = b.rows * s.out_w, first = b.oy0 * s.out_w, plane = s.positions();
  for (int64_t m0 = 0; m0 < s.maps; m0 += kLanes) {
    const int maps = static_cast<int>(std::min<int64_t>(kLanes, s.maps - m0));
    for (int64_t q0 = 0; q0 < positions; q0 += kLanes) {
      const int count = static_cast<int>(std::min<int64_t>(kLanes, positions - q0));
      const __m256i mask = lanes8(count);
      __m256 v[kLanes];
      runtime::avx2::load_transposed(sums + q0 * maps_padded + m0, maps_padded, count, kLanes, v);
#pragma GCC unroll 8
      for (int e = 0; e < kLanes; ++e) {
        if (e >= maps) break;
        const int64_t at = (m0 + e) * plane + first + q0;
        __m256 y = v[e];
        if (count == kLanes) {
          if (residual != nullptr) y = _mm256_add_ps(y, _mm256_loadu_ps(residual + at));
          if (activate) y = act(y);
          _mm256_storeu_ps(out + at, y);
        } else {
          if (residual != nullptr) y = _mm256_add_ps(y, _mm256_maskload_ps(residual + at, mask));
          if (activate) y = act(y);
          _mm256_maskstore_ps(out + at, mask, y);
        }
      }
    }
  }
}

}  // namespace tilefuse::runtime::maps_in_lanes::avx2
