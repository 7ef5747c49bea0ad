// depthwise_across_channels (depthwise_across_channels.h) with AVX2, 8 channels a block: the
// public function runs it where vector_isa() is AVX2. Compiled for AVX2 whatever the build's
// target; call it only where the CPU has it. And the padded block's geometry, which both ISAs'
// kernels share.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "ir/ops/fused_activation.h"
#include "runtime/conv_unfold.h"

namespace tilefuse::runtime {

// The padded block of a band of input rows, `lanes` channels a column. A band of output rows
// reads `input_rows(rows)` rows of the block from its first; each row holds `columns` columns,
// the input at [pad_left, pad_left + width) and zeros around it, enough for whole groups of
// `row_outputs` outputs. `band`: the output rows whose input rows fit in 128 KiB (in L2).
struct AcrossChannelsBlock {
  int64_t columns = 0, band = 0;
  AcrossChannelsBlock(const ConvShape& s, int64_t lanes, int64_t row_outputs) {
    constexpr int64_t kBandBytes = 128 << 10;
    const int64_t groups = (s.out_w + row_outputs - 1) / row_outputs;
    const int64_t reach = (groups * row_outputs - 1) * s.stride_w + (s.kw - 1) * s.dil_w + 1;
    columns = std::max(reach, s.pad_left + s.width);
    const int64_t row_bytes = columns * lanes * static_cast<int64_t>(sizeof(float));
    band = 1;
    while (band < s.out_h && input_rows(s, band + 1) * row_bytes <= kBandBytes) ++band;
  }
  static int64_t input_rows(const ConvShape& s, int64_t out_rows) {
    return (out_rows - 1) * s.stride_h + (s.kh - 1) * s.dil_h + 1;
  }
  // Zeroes what block row `row` (`columns` columns of `lanes` floats) holds of padding for input
  // row y: all of it above and below the input, else the columns left and right of it. Returns
  // whether the row has input columns to fill, at [pad_left, pad_left + width).
  static bool zero_padding(const ConvShape& s, int64_t y, int64_t columns, int64_t lanes, float* row) {
    if (y < 0 || y >= s.height) {
      std::memset(row, 0, static_cast<size_t>(columns * lanes) * sizeof(float));
      return false;
    }
    std::memset(row, 0, static_cast<size_t>(s.pad_left * lanes) * sizeof(float));
    const int64_t right = s.pad_left + s.width;
    std::memset(row + right * lanes, 0, static_cast<size_t>((columns - right) * lanes) * sizeof(float));
    return true;
  }
};

}  // namespace tilefuse::runtime

namespace tilefuse::runtime::avx2 {

void depthwise_across_channels(const ConvShape& s, const float* x, const float* w, const float* bias, float* out,
                               int64_t first_plane, int64_t end_plane, const FusedActivation& activation);

}  // namespace tilefuse::runtime::avx2
