// The loops of the direct Resize (resize_call.h), per output row: the input rows under it
// blended into one, then each output column from its taps of that row. Both are compiled for
// AVX-512 and AVX2 where the CPU has them (vector_clones.h); the columns of an upsampling by 2
// (torch's nearest, bilinear and bicubic interpolate with scale_factor=2: YOLO and FPN necks,
// U-Net decoders) take a loop without indirection over most of the row, where every pair of
// output columns reads the same taps, one input column further on.
#pragma once

#include <cstdint>
#include <vector>

#include "reference/resize_taps.h"

namespace tilefuse::runtime {

// One axis's taps: per output coordinate, `width` (input index, weight) pairs, as many as the
// coordinate with the most has (1 nearest, 2 linear, 4 cubic). The reference does not read a tap
// of weight 0 (so a NaN or inf beside an exact sample does not spread); here such a tap has index
// `zero_index`, which the blends skip (rows) or find a 0.0f at (columns: the blended row's end).
struct AxisTable {
  int64_t width = 1;
  std::vector<int64_t> index;
  std::vector<float> weight;
  bool zero_taps = false;  // some tap has weight 0

  static AxisTable of(const reference::AxisTaps& taps, int64_t zero_index);
};

// Where an axis of n inputs has 2n outputs: output columns 2k + p for k in [first, end) read
// input k + offset[p][t] with weight[p][t], t < taps[p] (its taps of weight not 0, in order).
// first == end where no such run exists.
struct DoubledColumns {
  int64_t first = 0, end = 0;
  int taps[2] = {0, 0};
  int64_t offset[2][4] = {};
  float weight[2][4] = {};

  static DoubledColumns of(const AxisTable& columns, int64_t in_width);
};

// b[0, width) = the sum of weight[k] * rows[k] over the k < count whose weight is not 0 (0.0f
// where none is), in order; b[width] = 0.0f.
void blend_rows(const float* const* rows, const float* weight, int64_t count, int64_t width, float* b);

// out[c] for c < out_width from `row` (whose element at `zero_index` is 0.0f where the table has
// zero taps).
void blend_columns(const float* row, const AxisTable& columns, const DoubledColumns& doubled, float* out,
                   int64_t out_width);

}  // namespace tilefuse::runtime
