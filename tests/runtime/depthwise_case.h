// A depthwise convolution test case and what the reference interpreter computes for it, shared
// by the tests of the plane-by-plane kernels (depthwise_conv_test.cpp) and of the kernel across
// channels (depthwise_across_channels_test.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "reference/interpreter.h"
#include "runtime/conv_unfold.h"

namespace tilefuse::runtime::depthwise_test {

using Ints = std::vector<int64_t>;

struct DepthwiseCase {
  int64_t batch, channels, height, width, kh, kw, stride_h, stride_w, dil;
  Ints pads;  // top, left, bottom, right
};

inline std::string describe(const DepthwiseCase& c) {
  return std::to_string(c.batch) + "x" + std::to_string(c.channels) + "x" + std::to_string(c.height) + "x" +
         std::to_string(c.width) + " kernel " + std::to_string(c.kh) + "x" + std::to_string(c.kw) + " strides " +
         std::to_string(c.stride_h) + "," + std::to_string(c.stride_w) + " dilation " + std::to_string(c.dil) +
         " pads " + std::to_string(c.pads[0]) + "," + std::to_string(c.pads[1]) + "," + std::to_string(c.pads[2]) +
         "," + std::to_string(c.pads[3]);
}

inline ConvShape conv_shape(const DepthwiseCase& c) {
  ConvShape s{};
  s.batch = c.batch, s.channels = s.maps = s.groups = c.channels, s.height = c.height, s.width = c.width;
  s.kh = c.kh, s.kw = c.kw, s.stride_h = c.stride_h, s.stride_w = c.stride_w, s.dil_h = s.dil_w = c.dil;
  s.pad_top = c.pads[0], s.pad_left = c.pads[1];
  s.out_h = (c.height + c.pads[0] + c.pads[2] - c.dil * (c.kh - 1) - 1) / c.stride_h + 1;
  s.out_w = (c.width + c.pads[1] + c.pads[3] - c.dil * (c.kw - 1) - 1) / c.stride_w + 1;
  return s;
}

inline Tensor filled(Ints shape, int salt) {
  Tensor t(DType::f32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, ((i * 37 + salt * 11) % 61) / 17.0 - 1.5);
  return t;
}

// The case as a graph of one Conv with a constant weight and bias, its inputs (x, w, b) and the
// reference interpreter's output.
struct DepthwiseProblem {
  Graph graph;
  Node* conv = nullptr;
  std::vector<Tensor> inputs;
  Tensor expected;
};

inline std::unique_ptr<DepthwiseProblem> depthwise_problem(const DepthwiseCase& c) {
  auto p = std::make_unique<DepthwiseProblem>();
  Graph& g = p->graph;
  const Ints x_shape = {c.batch, c.channels, c.height, c.width}, w_shape = {c.channels, 1, c.kh, c.kw};
  std::vector<Value*> inputs = {g.add_input("x", DType::f32, shape_of(x_shape)), g.add_constant("w", filled(w_shape, 1)),
                                g.add_constant("b", filled({c.channels}, 2))};
  AttributeMap attrs = {{"group", c.channels},
                        {"strides", Ints{c.stride_h, c.stride_w}},
                        {"dilations", Ints{c.dil, c.dil}},
                        {"pads", c.pads}};
  p->conv = g.add_node("Conv", "conv", inputs, {"y"}, attrs);
  g.infer_shapes();
  p->inputs = {filled(x_shape, 3), *inputs[1]->constant, *inputs[2]->constant};
  p->expected = reference::evaluate_node(*p->conv, p->inputs).at(0);
  return p;
}

}  // namespace tilefuse::runtime::depthwise_test
