// Resize (opset 10-19): nearest, linear and cubic interpolation, separable over the axes. For
// every axis and output coordinate the kernel lists the input coordinates it reads with their
// weights (its taps); an output element is the sum over all combinations of its axes' taps.
#include <algorithm>
#include <cmath>
#include <functional>

#include "reference/element_types.h"
#include "reference/kernel_args.h"
#include "reference/kernel_table.h"

namespace tilefuse::reference {

namespace {

struct Tap {
  int64_t index;
  double weight;
};

struct AxisTaps {
  std::vector<std::vector<Tap>> taps;  // per output coordinate; empty: the extrapolation value
};

struct ResizeParams {
  std::string mode, transform, nearest;
  double cubic_a, extrapolation;
  bool exclude_outside;
};

double original_coordinate(const ResizeParams& p, double x, double scale, int64_t in, int64_t out, double roi_start,
                           double roi_end) {
  const std::string& t = p.transform;
  if (t == "asymmetric") return x / scale;
  if (t == "align_corners") {
    // The ONNX spec's length_resized is input * scale, not rounded down to the output size.
    const double length = static_cast<double>(in) * scale;
    return out == 1 ? 0.0 : x * static_cast<double>(in - 1) / (length - 1);
  }
  if (t == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (t == "tf_crop_and_resize") {
    return out > 1 ? roi_start * (in - 1) + x * (roi_end - roi_start) * (in - 1) / static_cast<double>(out - 1)
                   : 0.5 * (roi_start + roi_end) * (in - 1);
  }
  if (t == "half_pixel_symmetric") {
    const double adjustment = static_cast<double>(out) / (scale * static_cast<double>(in));
    const double center = static_cast<double>(in) / 2;
    return center * (1 - adjustment) + (x + 0.5) / scale - 0.5;
  }
  return (x + 0.5) / scale - 0.5;  // half_pixel, the default
}

int64_t nearest_index(const ResizeParams& p, double x) {
  const double f = std::floor(x);
  if (p.nearest == "floor") return static_cast<int64_t>(f);
  if (p.nearest == "ceil") return static_cast<int64_t>(std::ceil(x));
  if (x - f == 0.5) return static_cast<int64_t>(p.nearest == "round_prefer_ceil" ? f + 1 : f);
  return static_cast<int64_t>(std::round(x));
}

std::vector<Tap> cubic_taps(const ResizeParams& p, double x, int64_t in) {
  const double a = p.cubic_a, f = std::floor(x), t = x - f;
  auto w = [a](double d) {
    d = std::abs(d);
    if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
    if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
    return 0.0;
  };
  std::vector<Tap> taps;
  double total = 0;
  for (int k = -1; k <= 2; ++k) {
    const int64_t i = static_cast<int64_t>(f) + k;
    double weight = w(t - k);
    if (p.exclude_outside && (i < 0 || i >= in)) weight = 0;
    total += weight;
    taps.push_back({std::clamp<int64_t>(i, 0, in - 1), weight});
  }
  if (p.exclude_outside && total != 0) {
    for (Tap& tap : taps) tap.weight /= total;
  }
  return taps;
}

AxisTaps axis_taps(const ResizeParams& p, int64_t in, int64_t out, double scale, double roi_start, double roi_end) {
  AxisTaps a;
  for (int64_t o = 0; o < out; ++o) {
    const double x = original_coordinate(p, static_cast<double>(o), scale, in, out, roi_start, roi_end);
    if (p.transform == "tf_crop_and_resize" && (x < 0 || x > static_cast<double>(in - 1))) {
      a.taps.emplace_back();
      continue;
    }
    if (p.mode == "nearest") {
      a.taps.push_back({{std::clamp<int64_t>(nearest_index(p, x), 0, in - 1), 1.0}});
    } else if (p.mode == "linear") {
      const double xc = std::clamp(x, 0.0, static_cast<double>(in - 1)), f = std::floor(xc);
      const int64_t i = static_cast<int64_t>(f);
      a.taps.push_back({{i, 1 - (xc - f)}, {std::min(i + 1, in - 1), xc - f}});
    } else {
      a.taps.push_back(cubic_taps(p, x, in));
    }
  }
  return a;
}

std::vector<Tensor> resize_kernel(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  require_type_set<TypeSet::Numeric>(node, x.dtype());
  const bool opset10 = node.inputs.size() == 2;
  ResizeParams p{node.attr_string("mode", "nearest"),
                 node.attr_string("coordinate_transformation_mode", opset10 ? "asymmetric" : "half_pixel"),
                 node.attr_string("nearest_mode", opset10 ? "floor" : "round_prefer_floor"),
                 node.attr_float("cubic_coeff_a", -0.75), node.attr_float("extrapolation_value", 0.0),
                 node.attr_int("exclude_outside", 0) != 0};
  const int64_t rank = x.rank();
  std::vector<int64_t> axes = node.attr_ints("axes");
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  } else {
    axes = node_axes(node, axes, rank);
  }
  auto present = [&](size_t i) { const Tensor* t = optional_input(in, i); return t && t->numel() > 0 ? t : nullptr; };
  const Tensor* roi = opset10 ? nullptr : present(1);
  const Tensor* scales = present(opset10 ? 1 : 2);
  const Tensor* sizes = opset10 ? nullptr : present(3);
  std::vector<int64_t> out_shape = x.shape();
  std::vector<double> scale(rank, 1.0), roi_start(rank, 0.0), roi_end(rank, 1.0);
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t d = axes[k];
    if (sizes != nullptr) {
      out_shape[d] = sizes->get_i64(static_cast<int64_t>(k));
      scale[d] = static_cast<double>(out_shape[d]) / static_cast<double>(x.shape()[d]);
    } else if (scales != nullptr) {
      scale[d] = scales->get_f64(static_cast<int64_t>(k));
      out_shape[d] = static_cast<int64_t>(std::floor(static_cast<double>(x.shape()[d]) * scale[d]));
    } else {
      fail_user("{}: one of scales and sizes must be given", node.describe());
    }
    if (roi != nullptr && roi->numel() == 2 * static_cast<int64_t>(axes.size())) {
      roi_start[d] = roi->get_f64(static_cast<int64_t>(k));
      roi_end[d] = roi->get_f64(static_cast<int64_t>(k + axes.size()));
    }
  }
  std::vector<AxisTaps> taps;
  for (int64_t d = 0; d < rank; ++d) taps.push_back(axis_taps(p, x.shape()[d], out_shape[d], scale[d], roi_start[d], roi_end[d]));
  std::vector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 1; d > 0; --d) strides[d - 1] = strides[d] * x.shape()[d];
  Tensor y(x.dtype(), out_shape);
  std::vector<int64_t> coord(rank, 0);
  // Sums the taps of axes d.. for output coordinate `coord`, starting at input offset `base`.
  std::function<double(int64_t, int64_t)> sum = [&](int64_t d, int64_t base) -> double {
    if (d == rank) return x.get_f64(base);
    const std::vector<Tap>& axis = taps[d].taps[coord[d]];
    if (axis.empty()) return std::nan("");
    double total = 0;
    for (const Tap& t : axis) {
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
