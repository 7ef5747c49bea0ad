// GridSample's geometry (2-D, opset 16 and 20), shared by the reference kernel
// (grid_sample_kernel.cpp) and the runtime's direct call (runtime/grid_sample_call.h), so that
// both read the same pixels with the same weights. Every output position reads X at the grid's
// normalised (x, y), denormalised to pixel coordinates (align_corners: -1 and 1 are the corner
// pixels' centres, else their outer edges), with nearest (half to even, as PyTorch), bilinear or
// bicubic (Keys, a = -0.75) taps. A coordinate outside the image is clamped (border) or
// reflected (reflection) before the taps are taken, and each tap outside is zero (zeros),
// clamped or reflected again. Computed in double, as the ONNX reference
// (onnx/reference/ops/op_grid_sample.py). A grid value that leaves the coordinate NaN or infinite
// (inf is clamped by border padding) gives NaN; engines disagree there (PyTorch: NaN with zeros
// padding; ONNX Runtime: a number).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "ir/graph.h"

namespace tilefuse::reference {

struct GridSampleGeometry {
  enum class Mode { nearest, linear, cubic };
  enum class Padding { zeros, border, reflection };
  struct Axis {
    int64_t size;
    double low, high;  // the borders a coordinate reflects at
  };

  Mode mode = Mode::linear;  // the attribute's nearest, bilinear or linear, bicubic or cubic
  Padding padding = Padding::zeros;
  bool align_corners = false;
  Axis x{}, y{};

  // The node's attributes, for an image of `height` x `width` pixels (both at least 1).
  static GridSampleGeometry of(const Node& node, int64_t height, int64_t width);
};

// One output position's taps: pixel offsets into the plane (row * width + column) and their
// weights, in the reference's order, those that read a zero left out; `nan` where the grid
// value leaves no finite coordinate.
struct GridTaps {
  bool nan = false;
  int count = 0;
  std::array<int64_t, 16> offset{};
  std::array<double, 16> weight{};
};

// The taps of the position whose grid value is (gx, gy), normalised.
GridTaps grid_taps(const GridSampleGeometry& g, double gx, double gy);

}  // namespace tilefuse::reference
