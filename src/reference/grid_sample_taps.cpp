#include "reference/grid_sample_taps.h"

#include <algorithm>
#include <cmath>

namespace tilefuse::reference {

namespace {

using Axis = GridSampleGeometry::Axis;
using Mode = GridSampleGeometry::Mode;
using Padding = GridSampleGeometry::Padding;

Axis axis_of(int64_t size, bool align_corners) {
  return align_corners ? Axis{size, 0.0, static_cast<double>(size - 1)} : Axis{size, -0.5, size - 0.5};
}

double denormalize(double n, const Axis& a, bool align_corners) {
  return align_corners ? (n + 1) / 2.0 * static_cast<double>(a.size - 1) : ((n + 1) * static_cast<double>(a.size) - 1) / 2.0;
}

// Folds v back between the borders as often as it takes.
double reflect(double v, double low, double high) {
  const double range = high - low;
  if (range <= 0) return low;
  if (v < low) {
    const double d = low - v, r = std::fmod(d, range);
    return static_cast<int64_t>(d / range) % 2 == 0 ? low + r : high - r;
  }
  if (v > high) {
    const double d = v - high, r = std::fmod(d, range);
    return static_cast<int64_t>(d / range) % 2 == 0 ? high - r : low + r;
  }
  return v;
}

// The coordinate to take taps around.
double source_coordinate(double v, const Axis& a, Padding padding) {
  if (v >= a.low && v <= a.high) return v;
  if (padding == Padding::border) return std::clamp(v, 0.0, static_cast<double>(a.size - 1));
  if (padding == Padding::reflection) return reflect(v, a.low, a.high);
  return v;
}

// The pixel a tap reads along one axis, or -1 for a zero.
int64_t tap_index(int64_t i, const Axis& a, Padding padding) {
  if (i >= 0 && i < a.size) return i;
  if (padding == Padding::zeros) return -1;
  if (padding == Padding::border) return std::clamp<int64_t>(i, 0, a.size - 1);
  return static_cast<int64_t>(reflect(static_cast<double>(i), a.low, a.high));
}

std::array<double, 4> cubic_weights(double t) {
  const double a = -0.75;
  auto near = [a](double x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };           // |x| <= 1
  auto far = [a](double x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };     // 1 < |x| < 2
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

// The taps along one axis: first pixel and weights (1, 2 or 4 of them).
struct AxisTaps {
  int64_t first = 0;
  std::array<double, 4> weights{};
  int count = 0;
};

AxisTaps taps_of(double v, GridSampleGeometry::Mode mode) {
  v = std::clamp(v, -1e15, 1e15);  // far outside either way, and an integer can hold it
  if (mode == GridSampleGeometry::Mode::nearest) return {static_cast<int64_t>(v), {1.0}, 1};
  const double floor = std::floor(v), t = v - floor;
  const auto base = static_cast<int64_t>(floor);
  if (mode == GridSampleGeometry::Mode::linear) return {base, {1 - t, t}, 2};
  return {base - 1, cubic_weights(t), 4};
}

}  // namespace

GridSampleGeometry GridSampleGeometry::of(const Node& node, int64_t height, int64_t width) {
  GridSampleGeometry g;
  const std::string mode = node.attr_string("mode", "bilinear");
  g.mode = mode == "nearest" ? Mode::nearest : mode == "bilinear" || mode == "linear" ? Mode::linear : Mode::cubic;
  const std::string p = node.attr_string("padding_mode", "zeros");
  g.padding = p == "border" ? Padding::border : p == "reflection" ? Padding::reflection : Padding::zeros;
  g.align_corners = node.attr_int("align_corners", 0) != 0;
  g.x = axis_of(width, g.align_corners);
  g.y = axis_of(height, g.align_corners);
  return g;
}

GridTaps grid_taps(const GridSampleGeometry& g, double gx, double gy) {
  GridTaps taps;
  double x = denormalize(gx, g.x, g.align_corners), y = denormalize(gy, g.y, g.align_corners);
  if (g.mode == Mode::nearest) x = std::nearbyint(x), y = std::nearbyint(y);
  const double sx = source_coordinate(x, g.x, g.padding), sy = source_coordinate(y, g.y, g.padding);
  if (!std::isfinite(sx) || !std::isfinite(sy)) {
    taps.nan = true;
    return taps;
  }
  const AxisTaps tx = taps_of(sx, g.mode), ty = taps_of(sy, g.mode);
  for (int i = 0; i < ty.count; ++i) {
    const int64_t row = tap_index(ty.first + i, g.y, g.padding);
    for (int j = 0; j < tx.count && row >= 0; ++j) {
      const int64_t col = tap_index(tx.first + j, g.x, g.padding);
      if (col < 0) continue;
      taps.offset[static_cast<size_t>(taps.count)] = row * g.x.size + col;
      taps.weight[static_cast<size_t>(taps.count++)] = ty.weights[i] * tx.weights[j];
    }
  }
  return taps;
}

}  // namespace tilefuse::reference
