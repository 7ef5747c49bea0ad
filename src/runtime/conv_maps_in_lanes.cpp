#include "runtime/conv_maps_in_lanes.h"

#include <algorithm>

#include "runtime/conv_maps_in_lanes_isa.h"
#include "runtime/cpu_isa.h"
#include "runtime/scratch_buffer.h"

namespace tilefuse::runtime {

namespace {

using maps_in_lanes::Band;
using maps_in_lanes::kMapsPadding;

constexpr int64_t kBandOutputs = 1024;     // output positions per band: their sums stay in L2
constexpr int64_t kMaxWeightBytes = 256 << 10;  // the laid-out weights, read at every output, stay in L2

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// A worker's buffers.
thread_local ScratchBuffer t_input, t_sums;

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

int64_t padded_maps(const ConvShape& g) { return ceil_div(g.maps, kMapsPadding) * kMapsPadding; }
// A group's laid-out weights and biases, in floats.
int64_t group_floats(const ConvShape& g) { return (g.channels * g.kh * g.kw + 1) * padded_maps(g); }

// With AVX2's 8 lanes, two map vectors a pass: a stem of few maps (the GEMM's 12-row panels
// would be a third empty with 16) or of a large kernel (each input value used by many taps).
// At 1 thread, best of 5 (bench/README.md, "Maps in lanes on AVX2"): 16 maps 3x3 stride 2
// 0.374 -> 0.272 ms, 64 maps 7x7 stride 2 3.49 -> 3.32; 32 maps 3x3 even; 4x4 patches at
// stride 4 with 64 and 96 maps 0.378 and 0.493 as a GEMM, 0.431 and 0.623 here.
bool avx2_stem_suits(const ConvShape& s) { return s.maps <= 16 || s.kh * s.kw >= 49; }

}  // namespace

bool conv_maps_in_lanes_suits(const ConvShape& s) {
  if (vector_isa() < VectorIsa::avx2) return false;
  const int64_t channels = s.group_channels(), maps = s.group_maps();
  const int64_t weight_bytes = (channels * s.kh * s.kw + 1) * ceil_div(maps, kMapsPadding) * kMapsPadding * 4;
  if (weight_bytes > kMaxWeightBytes) return false;
  if (s.groups == 1) return channels <= 4 && (vector_isa() == VectorIsa::avx512 || avx2_stem_suits(s));
  // Grouped: each group's maps fill at least half of their vectors' lanes (RegNet's and
  // ResNeXt's groups of 8 and more), and a group reads more than one channel (depthwise
  // convolutions have kernels of their own).
  return channels > 1 && 2 * maps >= ceil_div(maps, kMapsPadding) * kMapsPadding;
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
  // Whole groups of row outputs (6, 8 or 12: 24 is a multiple of each; AVX-512 takes 7 only
  // where groups of 7 end before groups of 8 would) read at most this many columns.
  const int64_t columns = (ceil_div(s.out_w, 24) * 24 - 1) * s.stride_w + (s.kw - 1) * s.dil_w + 1;
  const int64_t padded_columns = std::max(columns, s.pad_left + s.width);
  const bool avx512 = vector_isa() == VectorIsa::avx512;
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
    (avx512 ? maps_in_lanes::avx512::sum_band : maps_in_lanes::avx2::sum_band)(
        g, b, block, weights + group * group_floats(g), maps_padded, sums);
    const int64_t at = b.image * out_image + group * g.maps * s.positions();
    (avx512 ? maps_in_lanes::avx512::store_planes : maps_in_lanes::avx2::store_planes)(
        g, b, sums, maps_padded, residual != nullptr ? residual + at : nullptr, activation, out + at);
    item += b.rows;
  }
}

}  // namespace tilefuse::runtime
