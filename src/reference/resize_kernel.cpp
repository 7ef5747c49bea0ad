// Resize (opset 10-19): nearest, linear and cubic interpolation, separable over the axes. For
// every axis and output coordinate the kernel lists the input coordinates it reads with their
// weights (its taps); an output element is the sum over all combinations of its axes' taps.
#include <cmath>
#include <functional>

#include "reference/element_types.h"
#include "reference/kernel_args.h"
#include "reference/kernel_table.h"
#include "reference/resize_taps.h"

namespace tilefuse::reference {

namespace {

std::vector<Tensor> resize_kernel(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  require_type_set<TypeSet::Numeric>(node, x.dtype());
  const ResizeParams p = resize_params(node);
  const ResizeAxes geometry = resize_axes(node, x, in);
  const int64_t rank = x.rank();
  const std::vector<int64_t>& out_shape = geometry.out_shape;
  std::vector<AxisTaps> taps;
  for (int64_t d = 0; d < rank; ++d) {
    taps.push_back(axis_taps(p, x.shape()[d], out_shape[d], geometry.scale[d], geometry.roi_start[d],
                             geometry.roi_end[d]));
  }
  std::vector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 1; d > 0; --d) strides[d - 1] = strides[d] * x.shape()[d];
  Tensor y(x.dtype(), out_shape);
  std::vector<int64_t> coord(rank, 0);
  // Sums the taps of axes d.. for output coordinate `coord`, starting at input offset `base`.
  std::function<double(int64_t, int64_t)> sum = [&](int64_t d, int64_t base) -> double {
    if (d == rank) return x.get_f64(base);
    const std::vector<ResizeTap>& axis = taps[d][coord[d]];
    if (axis.empty()) return std::nan("");
    double total = 0;
    for (const ResizeTap& t : axis) {
      if (t.weight != 0) total += t.weight * sum(d + 1, base + t.index * strides[d]);
    }
    return total;
  };
  for (int64_t i = 0; i < y.numel(); ++i) {
    int64_t rest = i;
    for (int64_t d = rank - 1; d >= 0; --d) coord[d] = rest % out_shape[d], rest /= out_shape[d];
    double v = sum(0, 0);
    if (std::isnan(v) && p.transform == "tf_crop_and_resize") v = p.extrapolation;
    if (is_integer(x.dtype())) v = std::nearbyint(v);
    y.set_f64(i, v);
  }
  return {y};
}

}  // namespace

void register_resize_kernel(KernelTable& table) { table["Resize"] = resize_kernel; }

}  // namespace tilefuse::reference
