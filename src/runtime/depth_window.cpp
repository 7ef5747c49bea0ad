#include "runtime/depth_window.h"

namespace tilefuse::runtime {

namespace {

std::vector<int64_t> ints_or(const Node& node, const char* name, std::vector<int64_t> fallback) {
  std::vector<int64_t> v = node.attr_ints(name);
  return v.empty() ? fallback : v;
}

}  // namespace

DepthWindow split_depth_window(const Node& node, const std::vector<int64_t>& kernel, AttributeMap& attrs) {
  const std::vector<int64_t> strides = ints_or(node, "strides", {1, 1, 1});
  const std::vector<int64_t> pads = ints_or(node, "pads", {0, 0, 0, 0, 0, 0});
  const std::vector<int64_t> dilations = ints_or(node, "dilations", {1, 1, 1});
  attrs = node.attrs;
  attrs["kernel_shape"] = std::vector<int64_t>{kernel[1], kernel[2]};
  attrs["strides"] = std::vector<int64_t>{strides[1], strides[2]};
  attrs["pads"] = std::vector<int64_t>{pads[1], pads[2], pads[4], pads[5]};
  attrs["dilations"] = std::vector<int64_t>{dilations[1], dilations[2]};
  for (const char* name : {"output_padding", "output_shape"}) {
    const std::vector<int64_t> v = node.attr_ints(name);
    if (v.size() == 3) attrs[name] = std::vector<int64_t>{v[1], v[2]};
  }
  return {kernel[0], strides[0], pads[0], dilations[0], node.input(0)->shape[2].value(),
          node.outputs[0]->shape[2].value(), node.op == "ConvTranspose"};
}

}  // namespace tilefuse::runtime
