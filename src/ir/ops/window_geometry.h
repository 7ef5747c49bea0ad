// The window of Conv, ConvTranspose and the pools: kernel shape, strides, dilations, pads and
// auto_pad, read from a node's attributes and checked once. Shape inference uses it with
// symbolic dims; the reference kernels use it with concrete ones, so both agree by construction.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace tilefuse {

struct WindowGeometry {
  std::vector<int64_t> kernel, strides, dilations;
  std::vector<int64_t> pads;  // begin of every spatial dim, then end of every spatial dim
  std::string auto_pad;       // NOTSET, SAME_UPPER, SAME_LOWER or VALID
  std::vector<int64_t> output_padding, output_shape;  // ConvTranspose only (output_shape: spatial dims)

  size_t spatial() const { return kernel.size(); }
  int64_t extent(size_t i) const { return dilations[i] * (kernel[i] - 1) + 1; }  // dilated kernel size
  bool same() const { return auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER"; }
};

// Reads and checks the attributes of `node` for `spatial` dims and the given kernel shape.
// Throws UserError naming the node and the attribute.
WindowGeometry window_geometry(const Node& node, size_t spatial, std::vector<int64_t> kernel);

// Output size along spatial dim i of Conv or a pool for input size `in`.
Dim window_output_dim(const Node& node, const WindowGeometry& g, size_t i, const Dim& in, bool ceil_mode);
// Output size along spatial dim i of ConvTranspose.
Dim transposed_output_dim(const Node& node, const WindowGeometry& g, size_t i, const Dim& in);

// Concrete begin pads (per spatial dim) for inputs `in` and outputs `out`: the explicit pads, or
// the ones auto_pad implies (SAME splits the total, the extra one at the end for SAME_UPPER).
std::vector<int64_t> begin_pads(const WindowGeometry& g, const std::vector<int64_t>& in,
                                const std::vector<int64_t>& out);
// The same for ConvTranspose, whose SAME padding is taken from the full (uncropped) output.
std::vector<int64_t> transposed_begin_pads(const WindowGeometry& g, const std::vector<int64_t>& in,
                                           const std::vector<int64_t>& out);

}  // namespace tilefuse
