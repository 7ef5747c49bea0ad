// RoiAlign's geometry, shared by the reference kernel (detection_kernels.cpp) and the runtime's
// direct call (runtime/roi_align_call.h), so that both read the same pixels with the same
// weights: each region's bins sampled on a grid (sampling_ratio per side, or as many as the bin
// is pixels high and wide), each sample bilinear in the four pixels around it (a sample more than
// one pixel outside the map has weights 0), as the ONNX reference (op_roi_align.py) and ONNX
// Runtime compute them.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace tilefuse::reference {

struct RoiAlignParams {
  int64_t out_h = 1, out_w = 1, ratio = 0;
  double scale = 1.0;
  bool half_pixel = true;  // coordinate_transformation_mode (opset 16's default; opset 10's is output_half_pixel)
  bool max_mode = false;   // the largest of the samples' weighted corner values, else their mean

  static RoiAlignParams of(const Node& node);
};

// One sample's four pixels (offsets in the plane) and bilinear weights.
struct RoiSample {
  int64_t at[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

// The samples of one region, bin by bin in row-major order, `per_bin` each; `count` is what the
// mean divides by (at least 1, as the reference's).
struct RoiSamples {
  std::vector<RoiSample> samples;
  int64_t per_bin = 0;
  double count = 1;
};

// The samples of the region (x1, y1, x2, y2), in input coordinates before spatial_scale, over a
// map of height x width pixels.
void roi_samples(const RoiAlignParams& p, const double roi[4], int64_t height, int64_t width, RoiSamples& out);

}  // namespace tilefuse::reference
