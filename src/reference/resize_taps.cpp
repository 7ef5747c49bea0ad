#include "reference/resize_taps.h"

#include <algorithm>
#include <cmath>

#include "reference/kernel_args.h"

namespace tilefuse::reference {

namespace {

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

std::vector<ResizeTap> cubic_taps(const ResizeParams& p, double x, int64_t in) {
  const double a = p.cubic_a, f = std::floor(x), t = x - f;
  auto w = [a](double d) {
    d = std::abs(d);
    if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
    if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
    return 0.0;
  };
  std::vector<ResizeTap> taps;
  double total = 0;
  for (int k = -1; k <= 2; ++k) {
    const int64_t i = static_cast<int64_t>(f) + k;
    double weight = w(t - k);
    if (p.exclude_outside && (i < 0 || i >= in)) weight = 0;
    total += weight;
    taps.push_back({std::clamp<int64_t>(i, 0, in - 1), weight});
  }
  if (p.exclude_outside && total != 0) {
    for (ResizeTap& tap : taps) tap.weight /= total;
  }
  return taps;
}

}  // namespace

AxisTaps axis_taps(const ResizeParams& p, int64_t in, int64_t out, double scale, double roi_start, double roi_end) {
  AxisTaps a;
  for (int64_t o = 0; o < out; ++o) {
    const double x = original_coordinate(p, static_cast<double>(o), scale, in, out, roi_start, roi_end);
    if (p.transform == "tf_crop_and_resize" && (x < 0 || x > static_cast<double>(in - 1))) {
      a.emplace_back();
      continue;
    }
    if (p.mode == "nearest") {
      a.push_back({{std::clamp<int64_t>(nearest_index(p, x), 0, in - 1), 1.0}});
    } else if (p.mode == "linear") {
      const double xc = std::clamp(x, 0.0, static_cast<double>(in - 1)), f = std::floor(xc);
      const int64_t i = static_cast<int64_t>(f);
      a.push_back({{i, 1 - (xc - f)}, {std::min(i + 1, in - 1), xc - f}});
    } else {
      a.push_back(cubic_taps(p, x, in));
    }
  }
  return a;
}

ResizeParams resize_params(const Node& node) {
  const bool opset10 = node.inputs.size() == 2;
  return {node.attr_string("mode", "nearest"),
          node.attr_string("coordinate_transformation_mode", opset10 ? "asymmetric" : "half_pixel"),
          node.attr_string("nearest_mode", opset10 ? "floor" : "round_prefer_floor"),
          node.attr_float("cubic_coeff_a", -0.75), node.attr_float("extrapolation_value", 0.0),
          node.attr_int("exclude_outside", 0) != 0};
}

ResizeAxes resize_axes(const Node& node, const Tensor& x, const std::vector<Tensor>& in) {
  const bool opset10 = node.inputs.size() == 2;
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
  ResizeAxes r{x.shape(), std::vector<double>(rank, 1.0), std::vector<double>(rank, 0.0), std::vector<double>(rank, 1.0)};
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t d = axes[k];
    if (sizes != nullptr) {
      r.out_shape[d] = sizes->get_i64(static_cast<int64_t>(k));
      r.scale[d] = static_cast<double>(r.out_shape[d]) / static_cast<double>(x.shape()[d]);
    } else if (scales != nullptr) {
      r.scale[d] = scales->get_f64(static_cast<int64_t>(k));
      r.out_shape[d] = static_cast<int64_t>(std::floor(static_cast<double>(x.shape()[d]) * r.scale[d]));
    } else {
      fail_user("{}: one of scales and sizes must be given", node.describe());
    }
    if (roi != nullptr && roi->numel() == 2 * static_cast<int64_t>(axes.size())) {
      r.roi_start[d] = roi->get_f64(static_cast<int64_t>(k));
      r.roi_end[d] = roi->get_f64(static_cast<int64_t>(k + axes.size()));
    }
  }
  return r;
}

}  // namespace tilefuse::reference
