// Resize's geometry (opset 10-19), shared by the reference kernel (resize_kernel.cpp) and the
// runtime's direct call (runtime/resize_call.h), so that both read the same input coordinates
// with the same weights: per resized axis and output coordinate, the input coordinates read and
// their weights (the taps; an output element is the sum over all combinations of its axes'
// taps), and each axis's scale, region of interest and output size from the node's inputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace tilefuse::reference {

struct ResizeTap {
  int64_t index;
  double weight;
};

// Per output coordinate of one axis; an empty list stands for the extrapolation value
// (tf_crop_and_resize outside the region).
using AxisTaps = std::vector<std::vector<ResizeTap>>;

struct ResizeParams {
  std::string mode, transform, nearest;
  double cubic_a = -0.75, extrapolation = 0;
  bool exclude_outside = false;
};

// The node's attributes, with opset 10's defaults where it has two inputs.
ResizeParams resize_params(const Node& node);

// Per axis of x: output size, scale and region of interest, from the node's roi, scales and
// sizes (inputs in the node's order, absent ones undefined). Throws UserError where neither
// scales nor sizes is given.
struct ResizeAxes {
  std::vector<int64_t> out_shape;
  std::vector<double> scale, roi_start, roi_end;
};
ResizeAxes resize_axes(const Node& node, const Tensor& x, const std::vector<Tensor>& inputs);

// The taps of one axis of `in` input and `out` output coordinates.
AxisTaps axis_taps(const ResizeParams& p, int64_t in, int64_t out, double scale, double roi_start, double roi_end);

}  // namespace tilefuse::reference
