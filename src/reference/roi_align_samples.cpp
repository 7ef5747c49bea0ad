#include "reference/roi_align_samples.h"

#include <algorithm>
#include <cmath>

namespace tilefuse::reference {

namespace {

RoiSample sample_at(double y, double x, int64_t height, int64_t width) {
  RoiSample s;
  if (y < -1.0 || y > static_cast<double>(height) || x < -1.0 || x > static_cast<double>(width)) return s;
  y = std::max(y, 0.0), x = std::max(x, 0.0);
  auto y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x), y_high = y_low + 1, x_high = x_low + 1;
  if (y_low >= height - 1) y_high = y_low = height - 1, y = static_cast<double>(y_low);
  if (x_low >= width - 1) x_high = x_low = width - 1, x = static_cast<double>(x_low);
  const double ly = y - static_cast<double>(y_low), lx = x - static_cast<double>(x_low), hy = 1 - ly, hx = 1 - lx;
  s.at[0] = y_low * width + x_low, s.at[1] = y_low * width + x_high;
  s.at[2] = y_high * width + x_low, s.at[3] = y_high * width + x_high;
  s.w[0] = hy * hx, s.w[1] = hy * lx, s.w[2] = ly * hx, s.w[3] = ly * lx;
  return s;
}

}  // namespace

RoiAlignParams RoiAlignParams::of(const Node& node) {
  RoiAlignParams p;
  p.out_h = node.attr_int("output_height", 1);
  p.out_w = node.attr_int("output_width", 1);
  p.ratio = node.attr_int("sampling_ratio", 0);
  p.scale = node.attr_float("spatial_scale", 1.0);
  p.half_pixel = node.attr_string("coordinate_transformation_mode", "half_pixel") == "half_pixel";
  p.max_mode = node.attr_string("mode", "avg") == "max";
  return p;
}

void roi_samples(const RoiAlignParams& p, const double roi[4], int64_t height, int64_t width, RoiSamples& out) {
  const double offset = p.half_pixel ? 0.5 : 0.0;
  const double start_w = roi[0] * p.scale - offset, start_h = roi[1] * p.scale - offset;
  double roi_w = roi[2] * p.scale - offset - start_w, roi_h = roi[3] * p.scale - offset - start_h;
  if (!p.half_pixel) roi_w = std::max(roi_w, 1.0), roi_h = std::max(roi_h, 1.0);  // malformed regions as 1 x 1
  const double bin_h = roi_h / static_cast<double>(p.out_h), bin_w = roi_w / static_cast<double>(p.out_w);
  const auto grid_h = p.ratio > 0 ? p.ratio : static_cast<int64_t>(std::ceil(roi_h / static_cast<double>(p.out_h)));
  const auto grid_w = p.ratio > 0 ? p.ratio : static_cast<int64_t>(std::ceil(roi_w / static_cast<double>(p.out_w)));
  out.count = static_cast<double>(std::max<int64_t>(grid_h * grid_w, 1));
  out.per_bin = std::max<int64_t>(grid_h, 0) * std::max<int64_t>(grid_w, 0);
  out.samples.clear();
  for (int64_t ph = 0; ph < p.out_h; ++ph) {
    for (int64_t pw = 0; pw < p.out_w; ++pw) {
      for (int64_t iy = 0; iy < grid_h; ++iy) {
        const double y = start_h + static_cast<double>(ph) * bin_h +
                         (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(grid_h);
        for (int64_t ix = 0; ix < grid_w; ++ix) {
          const double x = start_w + static_cast<double>(pw) * bin_w +
                           (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(grid_w);
          out.samples.push_back(sample_at(y, x, height, width));
        }
      }
    }
  }
}

}  // namespace tilefuse::reference
