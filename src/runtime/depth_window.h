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
  bool transposed = false;  // ConvTranspose: input slice z, tap k feeds output slice z * stride - pad + k * dilation

  // The input slice that tap k of output slice od reads, or -1 where there is none (the padding,
  // or for a transposed window a tap that meets od between input slices).
  int64_t input_slice(int64_t od, int64_t k) const {
    int64_t z = od * stride - pad + k * dilation;
    if (transposed) {
      const int64_t scaled = od + pad - k * dilation;
      if (scaled < 0 || scaled % stride != 0) return -1;
      z = scaled / stride;
    }
    return z >= 0 && z < in_depth ? z : -1;
  }
};

// The depth window of `node` (input and output shapes known), whose kernel is `kernel` [kd, kh,
// kw]; `attrs` becomes the node's attributes with the 2-D window over H and W (a ConvTranspose's
// output_padding and output_shape too).
DepthWindow split_depth_window(const Node& node, const std::vector<int64_t>& kernel, AttributeMap& attrs);

}  // namespace tilefuse::runtime
