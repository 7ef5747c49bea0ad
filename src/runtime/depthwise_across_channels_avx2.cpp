// depthwise_across_channels with AVX2: 8 channels a block, in the lanes of a vector. The same
// steps as the AVX-512 kernel (depthwise_across_channels.cpp): a band of input rows of 8 planes
// transposed into a zero-padded [row][column][8 channels] block, 8 outputs of a row summed in
// registers with one load per tap and output (AVX2's 16 registers hold the 8 sums, a weight and
// an input, not the row's inputs as well), the sums transposed back into their planes.
#include <immintrin.h>

#include <algorithm>

#include "runtime/activation_vectors.h"
#include "runtime/depthwise_across_channels_isa.h"
#include "runtime/epilogue.h"
#include "runtime/scratch_buffer.h"
#include "runtime/transpose_avx2.h"

#define TF_AVX2 __attribute__((target("avx2,fma")))

namespace tilefuse::runtime::avx2 {

namespace {

constexpr int kLanes = 8;        // channels per block
constexpr int kRowOutputs = 8;   // outputs of a row summed together, in registers


// The padded block's geometry with this kernel's lanes and row outputs.
struct Block : AcrossChannelsBlock {
  explicit Block(const ConvShape& s) : AcrossChannelsBlock(s, kLanes, kRowOutputs) {}
};

thread_local ScratchBuffer t_input, t_output, t_weights;

// Rows [first_row, first_row + rows) of the padded block of planes p0 .. p0 + n: input row
// first_row - pad_top + r of each plane, transposed, at block row r; zeros in the padding.
TF_AVX2 void fill_rows(const ConvShape& s, const float* planes, int n, int64_t first_row, int64_t rows,
                       int64_t columns, float* block) {
  const int64_t plane_size = s.height * s.width;
  for (int64_t r = 0; r < rows; ++r) {
    float* row = block + r * columns * kLanes;
    const int64_t y = first_row + r - s.pad_top;
    if (!AcrossChannelsBlock::zero_padding(s, y, columns, kLanes, row)) continue;
    for (int64_t x0 = 0; x0 < s.width; x0 += kLanes) {
      const int count = static_cast<int>(std::min<int64_t>(kLanes, s.width - x0));
      __m256 v[kLanes];
      load_transposed(planes + y * s.width + x0, plane_size, n, count, v);
      float* to = row + (s.pad_left + x0) * kLanes;
#pragma GCC unroll 8
      for (int q = 0; q < kLanes; ++q) {
        if (q < count) _mm256_store_ps(to + q * kLanes, v[q]);
      }
    }
  }
}

// Output rows [0, rows) of a band into `sums` ([position][8 channels]), a clamp activation
// applied as they are stored (any other is applied afterwards by the caller).
TF_AVX2 void sum_taps(const ConvShape& s, const float* block, int64_t columns, const float* tap_weights, __m256 bias,
                      const FusedActivation& activation, int64_t rows, float* sums) {
  const Avx2Activation act(activation);
  const bool activate = !activation.identity() && act.is_clamp();
  const int64_t step = kLanes, column_step = s.stride_w * step;
  for (int64_t oy = 0; oy < rows; ++oy) {
    const float* top = block + oy * s.stride_h * columns * step;
    for (int64_t ox0 = 0; ox0 < s.out_w; ox0 += kRowOutputs) {
      __m256 acc[kRowOutputs];
#pragma GCC unroll 8
      for (int u = 0; u < kRowOutputs; ++u) acc[u] = bias;
      for (int64_t i = 0; i < s.kh; ++i) {
        const float* inputs = top + (i * s.dil_h * columns + ox0 * s.stride_w) * step;
        const float* weights = tap_weights + i * s.kw * kLanes;
        for (int64_t j = 0; j < s.kw; ++j) {
          const __m256 wv = _mm256_load_ps(weights + j * kLanes);
          const float* first = inputs + j * s.dil_w * step;
#pragma GCC unroll 8
          for (int u = 0; u < kRowOutputs; ++u) acc[u] = _mm256_fmadd_ps(wv, _mm256_load_ps(first + u * column_step), acc[u]);
        }
      }
      float* to = sums + (oy * s.out_w + ox0) * kLanes;
      const int64_t count = std::min<int64_t>(kRowOutputs, s.out_w - ox0);
#pragma GCC unroll 8
      for (int u = 0; u < kRowOutputs; ++u) {
        if (u < count) _mm256_store_ps(to + u * kLanes, activate ? act.clamp(acc[u]) : acc[u]);
      }
    }
  }
}

// `count` positions of `sums` from `first` into the planes p0 .. p0 + n of `out`, transposed back.
TF_AVX2 void store_planes(const float* sums, int64_t count, int64_t first, int64_t plane_size, int n, float* out) {
  for (int64_t q0 = 0; q0 < count; q0 += kLanes) {
    const int positions = static_cast<int>(std::min<int64_t>(kLanes, count - q0));
    __m256 v[kLanes];
    load_transposed(sums + q0 * kLanes, kLanes, positions, kLanes, v);
    if (positions == kLanes) {
      for (int e = 0; e < n; ++e) _mm256_storeu_ps(out + e * plane_size + first + q0, v[e]);
    } else {
      const __m256i mask = lanes8(positions);
      for (int e = 0; e < n; ++e) _mm256_maskstore_ps(out + e * plane_size + first + q0, mask, v[e]);
    }
  }
}

// Tap t's weights of the channels of planes p0 .. p0 + n at tap_weights[t * 8], their biases at
// biases[0 .. 8); zero in the lanes past n. A block may span two images.
void lay_out_weights(const ConvShape& s, const float* w, const float* bias, int64_t p0, int n, float* tap_weights,
                     float* biases) {
  const int64_t taps = s.kh * s.kw;
  std::fill(tap_weights, tap_weights + taps * kLanes, 0.0f);
  std::fill(biases, biases + kLanes, 0.0f);
  for (int e = 0; e < n; ++e) {
    const int64_t c = (p0 + e) % s.channels;
    for (int64_t t = 0; t < taps; ++t) tap_weights[t * kLanes + e] = w[c * taps + t];
    if (bias != nullptr) biases[e] = bias[c];
  }
}

// Planes p0 .. p0 + n (n <= 8) of the batch, band by band.
TF_AVX2 void convolve_block(const ConvShape& s, const Block& geometry, const float* x, const float* w,
                            const float* bias, const FusedActivation& activation, float* out, int64_t p0, int n) {
  const int64_t taps = s.kh * s.kw, plane_in = s.height * s.width, plane_out = s.positions();
  float* tap_weights = t_weights.floats(taps * kLanes + kLanes);
  float* biases = tap_weights + taps * kLanes;
  lay_out_weights(s, w, bias, p0, n, tap_weights, biases);
  const __m256 bias_vector = _mm256_loadu_ps(biases);
  float* block = t_input.floats(Block::input_rows(s, geometry.band) * geometry.columns * kLanes);
  float* sums = t_output.floats(geometry.band * s.out_w * kLanes);
  for (int64_t oy0 = 0; oy0 < s.out_h; oy0 += geometry.band) {
    const int64_t rows = std::min(geometry.band, s.out_h - oy0);
    fill_rows(s, x + p0 * plane_in, n, oy0 * s.stride_h, Block::input_rows(s, rows), geometry.columns, block);
    sum_taps(s, block, geometry.columns, tap_weights, bias_vector, activation, rows, sums);
    if (activation.form != FusedActivation::Form::clamp) apply_epilogue(sums, nullptr, rows * s.out_w * kLanes, activation);
    store_planes(sums, rows * s.out_w, oy0 * s.out_w, plane_out, n, out + p0 * plane_out);
  }
}

}  // namespace

void depthwise_across_channels(const ConvShape& s, const float* x, const float* w, const float* bias, float* out,
                               int64_t first_plane, int64_t end_plane, const FusedActivation& activation) {
  const Block geometry(s);
  for (int64_t p0 = first_plane; p0 < end_plane; p0 += kLanes) {
    const int n = static_cast<int>(std::min<int64_t>(kLanes, end_plane - p0));
    convolve_block(s, geometry, x, w, bias, activation, out, p0, n);
  }
}

}  // namespace tilefuse::runtime::avx2
