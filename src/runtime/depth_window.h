// The depth axis of a 3-D window (Conv and MaxPool over [N, C, D, H, W]), split from the 2-D
// window over H and W that remains: what conv3d_slices.h and max_pool3d_slices.h run as 2-D
// steps, one output depth slice at a time.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace tilefuse::runtime {

struct DepthWindow {
  int64_t kernel = 1, stride = 1, pad = 0, dilation = 1, in_depth = 0, out_depth = 0;

  // The input slice that tap k of output slice od reads, or -1 where it lies in the padding.
  int64_t input_slice(int64_t od, int64_t k) const {
    const int64_t z = od * stride - pad + k * dilation;
    return z >= 0 && z < in_depth ? z : -1;
  }
};

// The depth window of `node` (input and output shapes known), whose kernel is `kernel` [kd, kh,
// kw]; `attrs` becomes the node's attributes with the 2-D window over H and W.
DepthWindow split_depth_window(const Node& node, const std::vector<int64_t>& kernel, AttributeMap& attrs);

}  // namespace tilefuse::runtime
