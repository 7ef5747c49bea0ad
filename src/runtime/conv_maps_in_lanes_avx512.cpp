// conv_maps_in_lanes's sums and stores with AVX-512: 16 maps a vector, up to 4 vectors of maps
// by 6 or 8 outputs of a row summed together (24 accumulators at most, of 32 registers, and at
// least 8 independent FMA chains); the sums go back to planes through 16 x 16 transposes.
#include <immintrin.h>

#include <algorithm>

#include "runtime/activation_vectors.h"
#include "runtime/conv_maps_in_lanes_isa.h"
#include "runtime/lane_masks.h"
#include "runtime/transpose_avx512.h"

#define TF_AVX512 __attribute__((target("avx512f,avx512vl,fma")))

// transpose16's shuffles, inlined here, pass GCC 12's "undefined" vector as their unused merge
// source, which -Wuninitialized reports; nothing here is read uninitialised.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace tilefuse::runtime::maps_in_lanes::avx512 {

namespace {

constexpr int kLanes = 16;     // maps per vector
constexpr int kMaxBlocks = 4;  // map vectors summed together

// Outputs of a row summed together for B vectors of maps in a row of `width` outputs: 6 for
// four vectors (24 accumulators), else 8, or 7 where that computes fewer outputs past the row's
// end (rows of 7, 14 and 28: RegNet's grouped layers computed 8 for 7 and 16 for 14).
int row_outputs(int blocks, int64_t width) {
  if (blocks >= 4) return 6;
  const auto computed = [width](int64_t u) { return (width + u - 1) / u * u; };
  return computed(7) < computed(8) ? 7 : 8;
}

// The sums of B map vectors (maps 16 * blocks0 ..) for every output of the band into `sums`
// ([position][maps_padded]), U outputs of a row at a time.
template <int B, int U>
TF_AVX512 void sum_products(const ConvShape& s, const Band& b, const float* block, const float* weights,
                            int64_t maps_padded, int64_t block0, float* sums) {
  const int64_t taps = s.kh * s.kw;
  for (int64_t oy = 0; oy < b.rows; ++oy) {
    for (int64_t ox0 = 0; ox0 < s.out_w; ox0 += U) {
      __m512 acc[B][U];
#pragma GCC unroll 4
      for (int v = 0; v < B; ++v) {
        const __m512 bias = _mm512_load_ps(weights + (s.channels * taps) * maps_padded + (block0 + v) * kLanes);
#pragma GCC unroll 8
        for (int u = 0; u < U; ++u) acc[v][u] = bias;
      }
      for (int64_t c = 0; c < s.channels; ++c) {
        for (int64_t i = 0; i < s.kh; ++i) {
          const float* row = block + (c * b.input_rows + oy * s.stride_h + i * s.dil_h) * b.columns + ox0 * s.stride_w;
          const float* tap_weights = weights + (c * taps + i * s.kw) * maps_padded + block0 * kLanes;
          for (int64_t j = 0; j < s.kw; ++j) {
            __m512 wv[B];
#pragma GCC unroll 4
            for (int v = 0; v < B; ++v) wv[v] = _mm512_load_ps(tap_weights + j * maps_padded + v * kLanes);
            const float* in = row + j * s.dil_w;
#pragma GCC unroll 8
            for (int u = 0; u < U; ++u) {
              const __m512 xv = _mm512_set1_ps(in[u * s.stride_w]);
#pragma GCC unroll 4
              for (int v = 0; v < B; ++v) acc[v][u] = _mm512_fmadd_ps(wv[v], xv, acc[v][u]);
            }
          }
        }
      }
      const int64_t count = std::min<int64_t>(U, s.out_w - ox0);
      float* to = sums + (oy * s.out_w + ox0) * maps_padded + block0 * kLanes;
#pragma GCC unroll 8
      for (int u = 0; u < U; ++u) {
        if (u >= count) break;
#pragma GCC unroll 4
        for (int v = 0; v < B; ++v) _mm512_store_ps(to + u * maps_padded + v * kLanes, acc[v][u]);
      }
    }
  }
}

}  // namespace

TF_AVX512 void store_planes(const ConvShape& s, const Band& b, const float* sums, int64_t maps_padded,
                            const float* residual, const FusedActivation& activation, float* out) {
  const Avx512Activation act(activation);
  const bool activate = !activation.identity();
  const int64_t positions = b.rows * s.out_w, first = b.oy0 * s.out_w, plane = s.positions();
  for (int64_t m0 = 0; m0 < s.maps; m0 += kLanes) {
    const int maps = static_cast<int>(std::min<int64_t>(kLanes, s.maps - m0));
    for (int64_t q0 = 0; q0 < positions; q0 += kLanes) {
      const int count = static_cast<int>(std::min<int64_t>(kLanes, positions - q0));
      const __mmask16 mask = lanes(count);
      __m512 v[kLanes];
      runtime::avx512::load_transposed(sums + q0 * maps_padded + m0, maps_padded, count, kLanes, v);
#pragma GCC unroll 16
      for (int e = 0; e < kLanes; ++e) {
        if (e >= maps) break;
        const int64_t at = (m0 + e) * plane + first + q0;
        __m512 y = v[e];
        if (residual != nullptr) y = _mm512_add_ps(y, _mm512_maskz_loadu_ps(mask, residual + at));
        if (activate) y = act(y);
        _mm512_mask_storeu_ps(out + at, mask, y);
      }
    }
  }
}

TF_AVX512 void sum_band(const ConvShape& s, const Band& b, const float* block, const float* weights,
                        int64_t maps_padded, float* sums) {
  const int64_t blocks = maps_padded / kLanes;
  for (int64_t b0 = 0; b0 < blocks; b0 += kMaxBlocks) {
    const int vectors = static_cast<int>(std::min<int64_t>(kMaxBlocks, blocks - b0));
    const bool seven = row_outputs(vectors, s.out_w) == 7;
    switch (vectors) {
      case 1: (seven ? sum_products<1, 7> : sum_products<1, 8>)(s, b, block, weights, maps_padded, b0, sums); break;
      case 2: (seven ? sum_products<2, 7> : sum_products<2, 8>)(s, b, block, weights, maps_padded, b0, sums); break;
      case 3: (seven ? sum_products<3, 7> : sum_products<3, 8>)(s, b, block, weights, maps_padded, b0, sums); break;
      default: sum_products<4, 6>(s, b, block, weights, maps_padded, b0, sums); break;
    }
  }
}

}  // namespace tilefuse::runtime::maps_in_lanes::avx512
