// GridSample (2-D, opset 16 and 20): every output position reads X at the grid's normalised
// (x, y), denormalised to pixel coordinates (align_corners: -1 and 1 are the corner pixels'
// centres, else their outer edges), with nearest (half to even, as PyTorch), bilinear or bicubic
// (Keys, a = -0.75) taps. A coordinate outside the image is clamped (border) or reflected
// (reflection) before the taps are taken, and each tap outside is zero (zeros), clamped or
// reflected again. Computed in double, as the ONNX reference (onnx/reference/ops/op_grid_sample.py).
// A grid value that leaves the coordinate NaN or infinite (inf is clamped by border padding)
// gives NaN; engines disagree there (PyTorch: NaN with zeros padding; ONNX Runtime: a number).
#include <algorithm>
#include <array>
#include <cmath>

#include "reference/element_types.h"
#include "reference/kernel_args.h"
#include "reference/kernel_table.h"

namespace tilefuse::reference {

namespace {

enum class Padding { zeros, border, reflection };

struct Axis {
  int64_t size;
  double low, high;  // the borders a coordinate reflects at
};

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
struct Taps {
  int64_t first = 0;
  std::array<double, 4> weights{};
  int count = 0;
};

Taps taps_of(double v, const std::string& mode) {
  v = std::clamp(v, -1e15, 1e15);  // far outside either way, and an integer can hold it
  if (mode == "nearest") return {static_cast<int64_t>(v), {1.0}, 1};
  const double floor = std::floor(v), t = v - floor;
  const auto base = static_cast<int64_t>(floor);
  if (mode == "bilinear" || mode == "linear") return {base, {1 - t, t}, 2};
  return {base - 1, cubic_weights(t), 4};
}

Padding padding_of(const Node& node) {
  const std::string p = node.attr_string("padding_mode", "zeros");
  return p == "border" ? Padding::border : p == "reflection" ? Padding::reflection : Padding::zeros;
}

std::vector<Tensor> grid_sample_kernel(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  const Tensor& grid = required_input(node, in, 1);
  require_type_set<TypeSet::Float>(node, x.dtype());
  if (x.rank() != 4 || grid.rank() != 4 || grid.shape()[3] != 2 || grid.shape()[0] != x.shape()[0]) {
    fail_user("{}: input {} and grid {} must be [N, C, H, W] and [N, H_out, W_out, 2]", node.describe(), x.summary(),
              grid.summary());
  }
  const std::string mode = node.attr_string("mode", "bilinear");
  const Padding padding = padding_of(node);
  const bool align = node.attr_int("align_corners", 0) != 0;
  const int64_t batch = x.shape()[0], channels = x.shape()[1], out_h = grid.shape()[1], out_w = grid.shape()[2];
  const Axis ax = axis_of(x.shape()[3], align), ay = axis_of(x.shape()[2], align);
  Tensor y(x.dtype(), {batch, channels, out_h, out_w});
  if (ax.size == 0 || ay.size == 0) {  // nothing to sample: every tap lies outside
    for (int64_t i = 0; i < y.numel(); ++i) y.set_f64(i, 0.0);
    return {y};
  }
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t p = 0; p < out_h * out_w; ++p) {
      double gx = denormalize(grid.get_f64((n * out_h * out_w + p) * 2), ax, align);
      double gy = denormalize(grid.get_f64((n * out_h * out_w + p) * 2 + 1), ay, align);
      if (mode == "nearest") gx = std::nearbyint(gx), gy = std::nearbyint(gy);
      const double sx = source_coordinate(gx, ax, padding), sy = source_coordinate(gy, ay, padding);
      if (!std::isfinite(sx) || !std::isfinite(sy)) {  // NaN, as PyTorch gives with zeros padding
        for (int64_t c = 0; c < channels; ++c) y.set_f64((n * channels + c) * out_h * out_w + p, std::nan(""));
        continue;
      }
      const Taps tx = taps_of(sx, mode), ty = taps_of(sy, mode);
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t plane = (n * channels + c) * ay.size * ax.size;
        double sum = 0;
        for (int i = 0; i < ty.count; ++i) {
          const int64_t row = tap_index(ty.first + i, ay, padding);
          for (int j = 0; j < tx.count && row >= 0; ++j) {
            const int64_t col = tap_index(tx.first + j, ax, padding);
            if (col >= 0) sum += ty.weights[i] * tx.weights[j] * x.get_f64(plane + row * ax.size + col);
          }
        }
        y.set_f64((n * channels + c) * out_h * out_w + p, sum);
      }
    }
  }
  return {y};
}

}  // namespace

void register_grid_sample_kernel(KernelTable& table) { table["GridSample"] = grid_sample_kernel; }

}  // namespace tilefuse::reference
