#include "passes/pointwise_depthwise_folding.h"

#include <string>

#include "passes/node_rewrite.h"

namespace tilefuse::passes {

namespace {

bool is_conv(const Node* node) { return node != nullptr && (node->op == "Conv" || node->op == "FusedConv"); }

// A constant f32 weight of rank 4 whose dims 1, 2 and 3 are `inner`.
bool constant_weight(const Value* w, const std::vector<int64_t>& inner) {
  if (w == nullptr || !w->constant || w->dtype != DType::f32 || w->constant->rank() != 4) return false;
  const std::vector<int64_t>& shape = w->constant->shape();
  for (size_t d = 0; d < inner.size(); ++d) {
    if (inner[d] >= 0 && shape[d + 1] != inner[d]) return false;
  }
  return true;
}

bool all_equal(const std::vector<int64_t>& values, int64_t expected) {
  for (int64_t v : values) {
    if (v != expected) return false;
  }
  return true;
}

// A 1x1, stride 1, unpadded, one-group convolution without a residual.
bool pointwise(const Node& conv) {
  const Value* w = conv.input(1);
  if (!constant_weight(w, {-1, 1, 1}) || conv.has_input(3) || conv.attr_int("group", 1) != 1) return false;
  return all_equal(conv.attr_ints("strides"), 1) && all_equal(conv.attr_ints("pads"), 0);
}

// A 2-D depthwise convolution (group = channels, one input channel per map) without a residual.
bool depthwise(const Node& conv) {
  const Value* w = conv.input(1);
  if (!constant_weight(w, {1, -1, -1}) || conv.has_input(3)) return false;
  return conv.attr_int("group", 1) == w->constant->shape()[0] && conv.input(0)->rank() == 4;
}

// The expanded tensor's bytes per image, when its channels and spatial dims are known.
std::optional<int64_t> bytes_per_image(const Value& v) {
  int64_t elements = 1;
  for (size_t d = 1; d < v.shape.size(); ++d) {
    if (!v.shape[d].is_const()) return std::nullopt;
    elements *= v.shape[d].value();
  }
  return elements * static_cast<int64_t>(sizeof(float));
}

bool fold(Graph& graph, Node& dw, int64_t min_expanded_bytes) {
  Value* expanded = dw.input(0);
  Node* pw = expanded->producer;
  if (!is_conv(pw) || expanded->dtype != DType::f32 || dw.outputs[0]->dtype != DType::f32) return false;
  if (expanded->users.size() != 1 || graph.is_output(expanded) || !pointwise(*pw) || !depthwise(dw)) return false;
  if (pw->input(0)->dtype != DType::f32) return false;
  const std::optional<int64_t> bytes = bytes_per_image(*expanded);
  if (!bytes || *bytes < min_expanded_bytes) return false;
  AttributeMap attrs = dw.attrs;
  for (const char* name : {"activation", "activation_params"}) {
    if (pw->has_attr(name)) attrs["pointwise_" + std::string(name)] = pw->attrs.at(name);
  }
  std::vector<Value*> inputs = {pw->input(0), pw->input(1), dw.input(1), pw->input(2), dw.input(2)};
  while (inputs.back() == nullptr) inputs.pop_back();
  replace_value(graph, dw.outputs[0], "PointwiseDepthwiseConv", dw.name, inputs, attrs);
  return true;
}

}  // namespace

int fold_pointwise_depthwise(Graph& graph, int64_t min_expanded_bytes) {
  return rewrite_nodes(graph, [&](Node& n) { return is_conv(&n) && fold(graph, n, min_expanded_bytes); });
}

}  // namespace tilefuse::passes
