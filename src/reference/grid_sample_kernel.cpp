// GridSample (2-D, opset 16 and 20) of float inputs: each output element the sum of its
// position's taps (grid_sample_taps.h) over the channel's plane, in double.
#include <cmath>

#include "reference/element_types.h"
#include "reference/grid_sample_taps.h"
#include "reference/kernel_args.h"
#include "reference/kernel_table.h"

namespace tilefuse::reference {

namespace {

std::vector<Tensor> grid_sample_kernel(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  const Tensor& grid = required_input(node, in, 1);
  require_type_set<TypeSet::Float>(node, x.dtype());
  if (x.rank() != 4 || grid.rank() != 4 || grid.shape()[3] != 2 || grid.shape()[0] != x.shape()[0]) {
    fail_user("{}: input {} and grid {} must be [N, C, H, W] and [N, H_out, W_out, 2]", node.describe(), x.summary(),
              grid.summary());
  }
  const int64_t batch = x.shape()[0], channels = x.shape()[1], out_h = grid.shape()[1], out_w = grid.shape()[2];
  const int64_t height = x.shape()[2], width = x.shape()[3];
  Tensor y(x.dtype(), {batch, channels, out_h, out_w});
  if (height == 0 || width == 0) {  // nothing to sample: every tap lies outside
    for (int64_t i = 0; i < y.numel(); ++i) y.set_f64(i, 0.0);
    return {y};
  }
  const GridSampleGeometry g = GridSampleGeometry::of(node, height, width);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t p = 0; p < out_h * out_w; ++p) {
      const GridTaps taps = grid_taps(g, grid.get_f64((n * out_h * out_w + p) * 2),
                                      grid.get_f64((n * out_h * out_w + p) * 2 + 1));
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t plane = (n * channels + c) * height * width;
        double sum = 0;
        for (int k = 0; k < taps.count; ++k) sum += taps.weight[k] * x.get_f64(plane + taps.offset[k]);
        y.set_f64((n * channels + c) * out_h * out_w + p, taps.nan ? std::nan("") : sum);
      }
    }
  }
  return {y};
}

}  // namespace

void register_grid_sample_kernel(KernelTable& table) { table["GridSample"] = grid_sample_kernel; }

}  // namespace tilefuse::reference
