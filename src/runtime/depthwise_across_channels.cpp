#include "runtime/depthwise_across_channels.h"

#include <immintrin.h>

#include <algorithm>

#include "runtime/activation_vectors.h"
#include "runtime/cpu_isa.h"
#include "runtime/depthwise_across_channels_isa.h"
#include "runtime/epilogue.h"
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

constexpr int kLanes = 16;       // channels per block
constexpr int kRowOutputs = 8;   // outputs of a row summed together, in registers


// The padded block's geometry with this kernel's lanes and row outputs.
struct Block : AcrossChannelsBlock {
  explicit Block(const ConvShape& s) : AcrossChannelsBlock(s, kLanes, kRowOutputs) {}
};

// True for the identity and the activations sum_taps applies itself.
bool is_clamp(const FusedActivation& activation) { return activation.form == FusedActivation::Form::clamp; }

// A worker's buffers.
thread_local ScratchBuffer t_input, t_output, t_weights;

// Rows [first_row, first_row + rows) of the padded block of planes p0 .. p0 + n: input row
// first_row - pad_top + r of each plane, transposed, at block row r; zeros in the padding.
TF_AVX512 void fill_rows(const ConvShape& s, const float* planes, int n, int64_t first_row, int64_t rows,
                         int64_t columns, float* block) {
  const int64_t plane_size = s.height * s.width;
  for (int64_t r = 0; r < rows; ++r) {
    float* row = block + r * columns * kLanes;
    const int64_t y = first_row + r - s.pad_top;
    if (!AcrossChannelsBlock::zero_padding(s, y, columns, kLanes, row)) continue;
    for (int64_t x0 = 0; x0 < s.width; x0 += kLanes) {
      const int count = static_cast<int>(std::min<int64_t>(kLanes, s.width - x0));
      __m512 v[kLanes];
      avx512::load_transposed(planes + y * s.width + x0, plane_size, n, count, v);
      float* to = row + (s.pad_left + x0) * kLanes;
      // Unrolled with a test, not a loop of `count`, which GCC turns into a slow memcpy call.
#pragma GCC unroll 16
      for (int q = 0; q < kLanes; ++q) {
        if (q < count) _mm512_store_ps(to + q * kLanes, v[q]);
      }
    }
  }
}

// acc[u] += the taps of one kernel row for outputs u = 0..7 of a row at stride 1 without
// dilation: the 7 + KW input vectors under them are loaded once and each used for up to KW taps,
// where loading per tap would load 8 for every 8 FMAs. Columns of the block lie `step` floats
// apart (a multiple of 16).
template <int KW>
TF_AVX512 void add_kernel_row(const float* inputs, int64_t step, const float* weights, __m512 acc[kRowOutputs]) {
  __m512 in[kRowOutputs + KW - 1];
#pragma GCC unroll 16
  for (int c = 0; c < kRowOutputs + KW - 1; ++c) in[c] = _mm512_load_ps(inputs + c * step);
#pragma GCC unroll 7
  for (int j = 0; j < KW; ++j) {
    const __m512 wv = _mm512_load_ps(weights + j * kLanes);
#pragma GCC unroll 8
    for (int u = 0; u < kRowOutputs; ++u) acc[u] = _mm512_fmadd_ps(wv, in[u + j], acc[u]);
  }
}

// The same for any kernel width, stride and dilation: one load per tap and output.
TF_AVX512 void add_kernel_row(const ConvShape& s, const float* inputs, int64_t step, const float* weights,
                              __m512 acc[kRowOutputs]) {
  for (int64_t j = 0; j < s.kw; ++j) {
    const __m512 wv = _mm512_load_ps(weights + j * kLanes);
    const float* first = inputs + j * s.dil_w * step;
#pragma GCC unroll 8
    for (int u = 0; u < kRowOutputs; ++u) {
      acc[u] = _mm512_fmadd_ps(wv, _mm512_load_ps(first + u * s.stride_w * step), acc[u]);
    }
  }
}

// Output rows [0, rows) of a band into `sums` ([position][16 channels], the band's positions in
// order), from the band's padded block (`step` floats from one column to the next) and one weight
// vector per tap, a clamp activation (ReLU, HardSwish...) applied inline as they are stored: a
// pass of its own over the sums cost a quarter as much as the taps. Any other activation is
// applied afterwards by the caller (a call here would spill the accumulators).
TF_AVX512 void sum_taps(const ConvShape& s, const float* block, int64_t columns, int64_t step, const float* tap_weights,
                        __m512 bias, const FusedActivation& activation, int64_t rows, float* sums) {
  const Avx512Activation act(activation);
  const bool activate = !activation.identity() && act.is_clamp();
  const bool unit = s.stride_w == 1 && s.dil_w == 1;
  for (int64_t oy = 0; oy < rows; ++oy) {
    const float* top = block + oy * s.stride_h * columns * step;
    for (int64_t ox0 = 0; ox0 < s.out_w; ox0 += kRowOutputs) {
      __m512 acc[kRowOutputs];
#pragma GCC unroll 8
      for (int u = 0; u < kRowOutputs; ++u) acc[u] = bias;
      for (int64_t i = 0; i < s.kh; ++i) {
        const float* inputs = top + (i * s.dil_h * columns + ox0 * s.stride_w) * step;
        const float* weights = tap_weights + i * s.kw * kLanes;
        if (unit && s.kw == 3) {
          add_kernel_row<3>(inputs, step, weights, acc);
        } else if (unit && s.kw == 5) {
          add_kernel_row<5>(inputs, step, weights, acc);
        } else if (unit && s.kw == 7) {
          add_kernel_row<7>(inputs, step, weights, acc);
        } else {
          add_kernel_row(s, inputs, step, weights, acc);
        }
      }
      float* to = sums + (oy * s.out_w + ox0) * kLanes;
      const int64_t count = std::min<int64_t>(kRowOutputs, s.out_w - ox0);
#pragma GCC unroll 8
      for (int u = 0; u < kRowOutputs; ++u) {
        if (u < count) _mm512_store_ps(to + u * kLanes, activate ? act.clamp(acc[u]) : acc[u]);
      }
    }
  }
}

// `count` positions of `sums` from `first` (a band's, [position][16 channels]) into the planes
// p0 .. p0 + n of `out`, transposed back.
TF_AVX512 void store_planes(const float* sums, int64_t count, int64_t first, int64_t plane_size, int n, float* out) {
  for (int64_t q0 = 0; q0 < count; q0 += kLanes) {
    const int positions = static_cast<int>(std::min<int64_t>(kLanes, count - q0));
    __m512 v[kLanes];
    avx512::load_transposed(sums + q0 * kLanes, kLanes, positions, kLanes, v);
    for (int e = 0; e < n; ++e) _mm512_mask_storeu_ps(out + e * plane_size + first + q0, lanes(positions), v[e]);
  }
}

// Tap t's weights of the channels of planes p0 .. p0 + n at tap_weights[t * 16], their biases
// at biases[0 .. 16); zero in the lanes past n.
TF_AVX512 void lay_out_weights(const ConvShape& s, const float* w, const float* bias, int64_t p0, int n,
                               float* tap_weights, float* biases) {
  const int64_t taps = s.kh * s.kw, c0 = p0 % s.channels;
  auto next_channel = [&](int c) { return c + 1 == s.channels ? 0 : c + 1; };  // a block may span two images
  std::fill(biases, biases + kLanes, 0.0f);
  for (int e = 0, c = static_cast<int>(c0); e < n; ++e, c = next_channel(c)) {
    if (bias != nullptr) biases[e] = bias[c];
  }
  if (c0 + n > s.channels) {
    std::fill(tap_weights, tap_weights + taps * kLanes, 0.0f);
    for (int e = 0, c = static_cast<int>(c0); e < n; ++e, c = next_channel(c)) {
      for (int64_t t = 0; t < taps; ++t) tap_weights[t * kLanes + e] = w[c * taps + t];
    }
    return;
  }
  // The channels are consecutive: 16 taps of each at a time, transposed.
  for (int64_t t0 = 0; t0 < taps; t0 += kLanes) {
    const int depth = static_cast<int>(std::min<int64_t>(kLanes, taps - t0));
    __m512 v[kLanes];
    avx512::load_transposed(w + c0 * taps + t0, taps, n, depth, v);
#pragma GCC unroll 16
    for (int t = 0; t < kLanes; ++t) {
      if (t < depth) _mm512_store_ps(tap_weights + (t0 + t) * kLanes, v[t]);
    }
  }
}

// Planes p0 .. p0 + n (n <= 16) of the batch, band by band.
TF_AVX512 void convolve_block(const ConvShape& s, const Block& geometry, const float* x, const float* w,
                              const float* bias, const FusedActivation& activation, float* out, int64_t p0, int n) {
  const int64_t taps = s.kh * s.kw, plane_in = s.height * s.width, plane_out = s.positions();
  float* tap_weights = t_weights.floats(taps * kLanes + kLanes);
  float* biases = tap_weights + taps * kLanes;
  lay_out_weights(s, w, bias, p0, n, tap_weights, biases);
  const __m512 bias_vector = _mm512_loadu_ps(biases);
  float* block = t_input.floats(Block::input_rows(s, geometry.band) * geometry.columns * kLanes);
  float* sums = t_output.floats(geometry.band * s.out_w * kLanes);
  for (int64_t oy0 = 0; oy0 < s.out_h; oy0 += geometry.band) {
    const int64_t rows = std::min(geometry.band, s.out_h - oy0);
    fill_rows(s, x + p0 * plane_in, n, oy0 * s.stride_h, Block::input_rows(s, rows), geometry.columns, block);
    sum_taps(s, block, geometry.columns, kLanes, tap_weights, bias_vector, activation, rows, sums);
    if (!is_clamp(activation)) apply_epilogue(sums, nullptr, rows * s.out_w * kLanes, activation);
    store_planes(sums, rows * s.out_w, oy0 * s.out_w, plane_out, n, out + p0 * plane_out);
  }
}

}  // namespace

int64_t channels_last_columns(const ConvShape& s) { return Block(s).columns; }

TF_AVX512 void depthwise_channels_last(const ConvShape& s, const ChannelsLastBand& band, const float* w,
                                       const float* bias, int64_t c0, int n, const FusedActivation& activation,
                                       float* out) {
  const int64_t taps = s.kh * s.kw;
  float* tap_weights = t_weights.floats(taps * kLanes + kLanes);
  float* biases = tap_weights + taps * kLanes;
  lay_out_weights(s, w, bias, c0, n, tap_weights, biases);
  const int64_t count = band.rows * s.out_w;
  float* sums = t_output.floats(count * kLanes);
  sum_taps(s, band.data, band.columns, band.step, tap_weights, _mm512_loadu_ps(biases), activation, band.rows, sums);
  if (!is_clamp(activation)) apply_epilogue(sums, nullptr, count * kLanes, activation);
  store_planes(sums, count, band.first_row * s.out_w, s.positions(), n, out);
}

bool depthwise_across_channels_suits(const ConvShape& s) {
  // The planes' kernel keeps 3x3 kernels at stride 1 on rows of 28 outputs or more, where its
  // vectors are full and a row's loads serve every tap of the row (bench/README.md).
  const bool planes_faster = s.stride_w == 1 && s.kw <= 3 && s.out_w >= 28;
  return vector_isa() >= VectorIsa::avx2 && !planes_faster;
}

void depthwise_across_channels(const ConvShape& s, const float* x, const float* w, const float* bias, float* out,
                               int64_t first_plane, int64_t end_plane, const FusedActivation& activation) {
  if (vector_isa() != VectorIsa::avx512) {
    return avx2::depthwise_across_channels(s, x, w, bias, out, first_plane, end_plane, activation);
  }
  const Block geometry(s);
  for (int64_t p0 = first_plane; p0 < end_plane; p0 += kLanes) {
    const int n = static_cast<int>(std::min<int64_t>(kLanes, end_plane - p0));
    convolve_block(s, geometry, x, w, bias, activation, out, p0, n);
  }
}

}  // namespace tilefuse::runtime
