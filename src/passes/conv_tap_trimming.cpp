#include "passes/conv_tap_trimming.h"

#include <optional>
#include <string>
#include <vector>

#include "passes/node_rewrite.h"

namespace tilefuse::passes {

namespace {

// The taps [first, last] of one spatial axis that read the input for some output position.
struct TapRange {
  int64_t first = 0, last = -1;
  bool empty() const { return last < first; }
};

// One spatial axis of the convolution.
struct AxisGeometry {
  int64_t in, kernel, stride, dilation, pad_begin, pad_end;

  int64_t outputs() const { return (in + pad_begin + pad_end - (kernel - 1) * dilation - 1) / stride + 1; }

  // Tap j reads input coordinate o * stride - pad_begin + j * dilation for output o.
  bool reads_input(int64_t j) const {
    for (int64_t o = 0; o < outputs(); ++o) {
      const int64_t x = o * stride - pad_begin + j * dilation;
      if (x >= 0 && x < in) return true;
    }
    return false;
  }

  TapRange used_taps() const {
    TapRange r{0, kernel - 1};
    while (r.first < kernel && !reads_input(r.first)) ++r.first;
    while (r.last >= r.first && !reads_input(r.last)) --r.last;
    return r;
  }
};

// The weight cut to taps [first[d], first[d] + size[d]) on every spatial axis d.
Tensor cut_weight(const Tensor& w, const std::vector<int64_t>& first, const std::vector<int64_t>& size) {
  std::vector<int64_t> shape = {w.shape()[0], w.shape()[1]};
  shape.insert(shape.end(), size.begin(), size.end());
  Tensor out(w.dtype(), shape);
  const size_t spatial = size.size();
  std::vector<int64_t> coord(spatial + 2, 0);
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t rest = i;
    for (size_t d = spatial + 2; d-- > 0;) coord[d] = rest % shape[d], rest /= shape[d];
    int64_t from = 0;
    for (size_t d = 0; d < spatial + 2; ++d) {
      from = from * w.shape()[d] + coord[d] + (d >= 2 ? first[d - 2] : 0);
    }
    out.set_f64(i, w.get_f64(from));
  }
  return out;
}

bool trim(Graph& graph, Node& conv) {
  const Value* x = conv.input(0);
  const Value* w = conv.input(1);
  if (x == nullptr || w == nullptr || !w->constant || x->rank() < 3) return false;
  if (conv.attr_string("auto_pad", "NOTSET") != "NOTSET") return false;
  const int64_t spatial = x->rank() - 2;
  for (int64_t d = 0; d < spatial; ++d) {
    if (!x->shape[static_cast<size_t>(d + 2)].is_const()) return false;
  }
  const std::vector<int64_t> ones(static_cast<size_t>(spatial), 1);
  const std::vector<int64_t> strides = conv.attr_ints("strides", ones), dilations = conv.attr_ints("dilations", ones);
  std::vector<int64_t> pads = conv.attr_ints("pads", std::vector<int64_t>(static_cast<size_t>(2 * spatial), 0));
  std::vector<int64_t> first(static_cast<size_t>(spatial), 0), size(static_cast<size_t>(spatial));
  bool cut = false;
  for (int64_t d = 0; d < spatial; ++d) {
    const size_t a = static_cast<size_t>(d);
    const AxisGeometry g{x->shape[a + 2].value(), w->constant->shape()[a + 2], strides[a], dilations[a], pads[a],
                         pads[a + static_cast<size_t>(spatial)]};
    size[a] = g.kernel;
    const TapRange used = g.used_taps();
    if (used.empty() || (used.first == 0 && used.last == g.kernel - 1)) continue;
    const int64_t begin = g.pad_begin - used.first * g.dilation;
    const int64_t end = g.pad_end - (g.kernel - 1 - used.last) * g.dilation;
    if (begin < 0 || end < 0) continue;
    first[a] = used.first, size[a] = used.last - used.first + 1;
    pads[a] = begin, pads[a + static_cast<size_t>(spatial)] = end;
    cut = true;
  }
  if (!cut) return false;
  AttributeMap attrs = conv.attrs;
  attrs["pads"] = pads;
  if (attrs.contains("kernel_shape")) attrs["kernel_shape"] = size;
  std::vector<Value*> inputs = conv.inputs;
  inputs[1] = graph.add_constant(graph.unique_value_name(w->name + "_trimmed"), cut_weight(*w->constant, first, size));
  replace_value(graph, conv.outputs[0], conv.op, conv.name, inputs, attrs);
  return true;
}

}  // namespace

int trim_conv_taps(Graph& graph) {
  const int trimmed = rewrite_nodes(graph, [&](Node& n) { return n.op == "Conv" && trim(graph, n); });
  if (trimmed > 0) graph.infer_shapes();
  return trimmed;
}

}  // namespace tilefuse::passes
