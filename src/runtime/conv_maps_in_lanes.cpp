#include "runtime/conv_maps_in_lanes.h"

#include <immintrin.h>

#include <algorithm>

#include "runtime/activation_vectors.h"
#include "runtime/cpu_isa.h"
#include "runtime/lane_masks.h"
#include "runtime/scratch_buffer.h"
#include "runtime/transpose_avx512.h"

#define TF_AVX512 __attribute__((target("avx512f,avx512vl,fma")))

// transpose16's shuffles, inlined here, pass GCC 12's "undefined" vector as their unused merge
// source, which -Wuninitialized reports; nothing here is read uninitialised.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace tilefuse::runtime {

namespace {

constexpr int kLanes = 16;                 // maps per vector
constexpr int kMaxBlocks = 4;              // map vectors summed together
constexpr int64_t kBandOutputs = 1024;     // output positions per band: their sums stay in L2
constexpr int64_t kMaxWeightBytes = 256 << 10;  // the laid-out weights, read at every output, stay in L2

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Outputs of a row summed together for B vectors of maps: 24 accumulators at most (of 32
// registers), and at least 8 independent FMA chains.
constexpr int row_outputs(int blocks) { return blocks >= 4 ? 6 : 8; }

// A worker's buffers.
thread_local ScratchBuffer t_input, t_sums;

// The geometry of one band: output rows oy0 .. oy0 + rows of one image, which read `input_rows`
// rows of each channel from input row oy0 * stride_h - pad_top, held in a zero-padded block of
// `columns` columns that covers whole groups of row outputs.
struct Band {
  int64_t image, oy0, rows, input_rows, columns;
};

// The band's input rows of every channel into `block` ([channel][row][column]), zeros where
// they lie in the padding.
void fill_block(const ConvShape& s, const float* image, const Band& b, float* block) {
  std::fill(block, block + s.channels * b.input_rows * b.columns, 0.0f);
  for (int64_t c = 0; c < s.channels; ++c) {
    for (int64_t r = 0; r < b.input_rows; ++r) {
      const int64_t y = b.oy0 * s.stride_h - s.pad_top + r;
      if (y < 0 || y >= s.height) continue;
      const float* from = image + (c * s.height + y) * s.width;
      std::copy(from, from + s.width, block + (c * b.input_rows + r) * b.columns + s.pad_left);
    }
  }
}

// The sums of B map vectors (maps 16 * blocks0 ..) for every output of the band into `sums`
// ([position][maps_padded]), U outputs of a row at a time.
template <int B>
TF_AVX512 void sum_products(const ConvShape& s, const Band& b, const float* block, const float* weights,
                            int64_t maps_padded, int64_t block0, float* sums) {
  constexpr int U = row_outputs(B);
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

// The band's sums ([position][maps_padded]) transposed into the maps' planes of `out` (the
// image's first map), plus the residual, then the activation.
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
      avx512::load_transposed(sums + q0 * maps_padded + m0, maps_padded, count, kLanes, v);
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

// Every tap's weights for all maps, [channel][tap][maps_padded] (zeros past the maps), then the
// biases.
void lay_out_weights(const ConvShape& s, const float* w, const float* bias, int64_t maps_padded, float* weights) {
  const int64_t depth = s.channels * s.kh * s.kw;
  std::fill(weights, weights + (depth + 1) * maps_padded, 0.0f);
  for (int64_t m = 0; m < s.maps; ++m) {
    for (int64_t k = 0; k < depth; ++k) weights[k * maps_padded + m] = w[m * depth + k];
    if (bias != nullptr) weights[depth * maps_padded + m] = bias[m];
  }
}

// One group as a convolution of its own; images keep the whole tensor's strides.
ConvShape group_shape(const ConvShape& s) {
  ConvShape g = s;
  g.channels = s.group_channels(), g.maps = s.group_maps(), g.groups = 1;
  return g;
}

int64_t padded_maps(const ConvShape& g) { return ceil_div(g.maps, kLanes) * kLanes; }
// A group's laid-out weights and biases, in floats.
int64_t group_floats(const ConvShape& g) { return (g.channels * g.kh * g.kw + 1) * padded_maps(g); }

TF_AVX512 void sum_band(const ConvShape& s, const Band& b, const float* block, const float* weights,
                        int64_t maps_padded, float* sums) {
  const int64_t blocks = maps_padded / kLanes;
  for (int64_t b0 = 0; b0 < blocks; b0 += kMaxBlocks) {
    switch (std::min<int64_t>(kMaxBlocks, blocks - b0)) {
      case 1: sum_products<1>(s, b, block, weights, maps_padded, b0, sums); break;
      case 2: sum_products<2>(s, b, block, weights, maps_padded, b0, sums); break;
      case 3: sum_products<3>(s, b, block, weights, maps_padded, b0, sums); break;
      default: sum_products<4>(s, b, block, weights, maps_padded, b0, sums); break;
    }
  }
}

}  // namespace

bool conv_maps_in_lanes_suits(const ConvShape& s) {
  if (vector_isa() != VectorIsa::avx512) return false;
  const int64_t channels = s.group_channels(), maps = s.group_maps();
  const int64_t weight_bytes = (channels * s.kh * s.kw + 1) * ceil_div(maps, kLanes) * kLanes * 4;
  if (weight_bytes > kMaxWeightBytes) return false;
  if (s.groups == 1) return channels <= 4;
  // Grouped: each group's maps fill at least half of their vectors' lanes (RegNet's and
  // ResNeXt's groups of 8 and more), and a group reads more than one channel (depthwise
  // convolutions have kernels of their own).
  return channels > 1 && 2 * maps >= ceil_div(maps, kLanes) * kLanes;
}

int64_t conv_maps_in_lanes_items(const ConvShape& s) { return s.groups * s.batch * s.out_h; }

int64_t maps_in_lanes_weight_floats(const ConvShape& s) { return s.groups * group_floats(group_shape(s)); }

void lay_out_maps_in_lanes_weights(const ConvShape& s, const float* w, const float* bias, float* laid_out) {
  const ConvShape g = group_shape(s);
  const int64_t depth = g.channels * s.kh * s.kw, floats = group_floats(g);
  for (int64_t group = 0; group < s.groups; ++group) {
    lay_out_weights(g, w + group * g.maps * depth, bias != nullptr ? bias + group * g.maps : nullptr, padded_maps(g),
                    laid_out + group * floats);
  }
}

void conv_maps_in_lanes(const ConvShape& s, const float* x, const float* weights, const float* residual,
                        const FusedActivation& activation, float* out, int64_t first_item, int64_t end_item) {
  const ConvShape g = group_shape(s);
  const int64_t rows = s.batch * s.out_h, maps_padded = padded_maps(g);
  const int64_t in_image = s.channels * s.height * s.width, out_image = s.maps * s.positions();
  const int64_t band_rows = std::max<int64_t>(1, kBandOutputs / s.out_w);
  // Whole groups of row outputs (6 or 8: 24 is a multiple of both) read this many columns.
  const int64_t columns = (ceil_div(s.out_w, 24) * 24 - 1) * s.stride_w + (s.kw - 1) * s.dil_w + 1;
  const int64_t padded_columns = std::max(columns, s.pad_left + s.width);
  for (int64_t item = first_item; item < end_item;) {
    const int64_t group = item / rows, row = item % rows;
    Band b;
    b.image = row / s.out_h, b.oy0 = row % s.out_h;
    b.rows = std::min({band_rows, s.out_h - b.oy0, end_item - item});
    b.input_rows = (b.rows - 1) * s.stride_h + (s.kh - 1) * s.dil_h + 1;
    b.columns = padded_columns;
    float* block = t_input.floats(g.channels * b.input_rows * b.columns);
    float* sums = t_sums.floats(b.rows * s.out_w * maps_padded);
    fill_block(g, x + b.image * in_image + group * g.channels * s.height * s.width, b, block);
    sum_band(g, b, block, weights + group * group_floats(g), maps_padded, sums);
    const int64_t at = b.image * out_image + group * g.maps * s.positions();
    store_planes(g, b, sums, maps_padded, residual != nullptr ? residual + at : nullptr, activation, out + at);
    item += b.rows;
  }
}

}  // namespace tilefuse::runtime
