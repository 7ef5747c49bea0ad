#include "ir/ops/window_geometry.h"

#include <algorithm>

#include "ir/error.h"

namespace tilefuse {

namespace {

std::vector<int64_t> per_dim(const Node& node, const char* attr, size_t count, int64_t fallback, int64_t min_value) {
  std::vector<int64_t> values = node.attr_ints(attr, std::vector<int64_t>(count, fallback));
  if (values.size() != count) {
    fail_user("{}: attribute '{}' {} must have {} entries", node.describe(), attr, dims_to_string(values), count);
  }
  for (int64_t v : values) {
    if (v < min_value) fail_user("{}: attribute '{}' {} has an entry below {}", node.describe(), attr,
                                 dims_to_string(values), min_value);
  }
  return values;
}

}  // namespace

WindowGeometry window_geometry(const Node& node, size_t spatial, std::vector<int64_t> kernel) {
  WindowGeometry g;
  std::vector<int64_t> declared = node.attr_ints("kernel_shape", kernel);
  if (declared != kernel) {
    fail_user("{}: attribute 'kernel_shape' {} does not match the weight's spatial dims {}", node.describe(),
              dims_to_string(declared), dims_to_string(kernel));
  }
  for (int64_t k : kernel) {
    if (k < 1) fail_user("{}: kernel shape {} has an entry below 1", node.describe(), dims_to_string(kernel));
  }
  g.kernel = std::move(kernel);
  g.strides = per_dim(node, "strides", spatial, 1, 1);
  g.dilations = per_dim(node, "dilations", spatial, 1, 1);
  g.pads = per_dim(node, "pads", 2 * spatial, 0, 0);
  g.auto_pad = node.attr_string("auto_pad", "NOTSET");
  if (g.auto_pad != "NOTSET" && g.auto_pad != "VALID" && !g.same()) {
    fail_user("{}: attribute 'auto_pad' is '{}'; it must be NOTSET, SAME_UPPER, SAME_LOWER or VALID", node.describe(),
              g.auto_pad);
  }
  if (g.auto_pad != "NOTSET") std::fill(g.pads.begin(), g.pads.end(), 0);
  g.output_padding = per_dim(node, "output_padding", spatial, 0, 0);
  g.output_shape = node.attr_ints("output_shape");
  if (g.output_shape.size() == spatial + 2) g.output_shape.erase(g.output_shape.begin(), g.output_shape.begin() + 2);
  if (!g.output_shape.empty() && g.output_shape.size() != spatial) {
    fail_user("{}: attribute 'output_shape' {} must have {} entries", node.describe(), dims_to_string(g.output_shape),
              spatial);
  }
  return g;
}

Dim window_output_dim(const Node& node, const WindowGeometry& g, size_t i, const Dim& in, bool ceil_mode) {
  const int64_t s = g.strides[i], eff = g.extent(i);
  if (g.same()) return floordiv(in + Dim(s - 1), Dim(s));
  const int64_t pb = g.pads[i], pe = g.pads[g.spatial() + i];
  Dim span = in + Dim(pb + pe - eff);  // room for the window's start positions, minus one
  if (span.is_const() && span.value() < 0) {
    fail_user("{}: spatial dim {} of size {} (padded by {}+{}) is smaller than the window ({})", node.describe(), i,
              in.to_string(), pb, pe, eff);
  }
  if (!ceil_mode) return floordiv(span, Dim(s)) + Dim(1);
  Dim out = floordiv(span + Dim(s - 1), Dim(s)) + Dim(1);
  // A last window that would start inside the end padding is dropped (ONNX >= 1.16, ONNX Runtime
  // and PyTorch agree); it can only happen when pe + s > extent.
  if (pe + s <= eff) return out;
  if (!out.is_const() || !in.is_const()) {
    fail_user("{}: ceil_mode with end padding {} and stride {} needs a static spatial dim {}, got {}", node.describe(),
              pe, s, i, in.to_string());
  }
  return (out.value() - 1) * s >= in.value() + pb ? Dim(out.value() - 1) : out;
}

Dim transposed_output_dim(const Node& node, const WindowGeometry& g, size_t i, const Dim& in) {
  if (!g.output_shape.empty()) return Dim(g.output_shape[i]);
  const int64_t s = g.strides[i];
  if (g.same()) return in * Dim(s);
  Dim out = Dim(s) * (in - Dim(1)) + Dim(g.output_padding[i] + g.extent(i) - g.pads[i] - g.pads[g.spatial() + i]);
  if (out.is_const() && out.value() < 1) {
    fail_user("{}: spatial dim {} comes out as {}; pads are larger than the output", node.describe(), i, out.value());
  }
  return out;
}

std::vector<int64_t> begin_pads(const WindowGeometry& g, const std::vector<int64_t>& in,
                                const std::vector<int64_t>& out) {
  std::vector<int64_t> begin(g.spatial());
  for (size_t i = 0; i < g.spatial(); ++i) {
    if (!g.same()) {
      begin[i] = g.pads[i];
      continue;
    }
    int64_t total = std::max<int64_t>(0, (out[i] - 1) * g.strides[i] + g.extent(i) - in[i]);
    begin[i] = g.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
  }
  return begin;
}

std::vector<int64_t> transposed_begin_pads(const WindowGeometry& g, const std::vector<int64_t>& in,
                                           const std::vector<int64_t>& out) {
  std::vector<int64_t> begin(g.spatial());
  for (size_t i = 0; i < g.spatial(); ++i) {
    if (g.output_shape.empty() && !g.same()) {
      begin[i] = g.pads[i];
      continue;
    }
    int64_t full = g.strides[i] * (in[i] - 1) + g.output_padding[i] + g.extent(i);
    int64_t total = std::max<int64_t>(0, full - out[i]);
    // As ONNX Runtime distributes it: the odd pad goes to the end for SAME_UPPER, to the start
    // otherwise (SAME_LOWER, and NOTSET with output_shape).
    begin[i] = g.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
  }
  return begin;
}

}  // namespace tilefuse
