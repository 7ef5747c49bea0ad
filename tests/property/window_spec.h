// Random sliding-window graphs: a Conv, ConvTranspose, MaxPool or AveragePool with any legal
// attributes (kernel, strides, dilations, explicit or automatic padding, groups from 1 to
// depthwise, ceil_mode, count_include_pad), then what fused mode folds into a convolution's
// store (a bias, Relu, ReLU6, HardSwish, Sigmoid, SiLU written out, a residual Add) and maybe
// ResNet's stem pool after it. Small shapes reach every engine path: the implicit GEMM, Winograd
// (3x3, stride 1, 32 output tiles or more), positions as the GEMM's rows (few positions), the
// depthwise kernels, and the pools' separable passes.
//
// As in graph_spec.h, every field is a free choice that the builder interprets modulo what is
// valid, so every shrunk spec still builds a valid graph.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include <rapidcheck.h>

#include "property/graph_builder.h"

namespace tilefuse::property {

enum class WindowOp { Conv, ConvTranspose, MaxPool, AveragePool };

// A shape class that picks one engine, overriding what it needs of the drawn fields: 0 none
// (everything as drawn), 1 Winograd (3x3 Conv, stride and dilation 1, one group, 32 channels and
// more, 12 x 12 maps and more), 2 a stem (Conv of 3 channels, 7x7 / 2 or 3x3 / 2, to 8-16
// maps), 3 depthwise (a Conv per channel, 3x3 or 5x5, stride 1 or 2).
enum class Engine { AsDrawn, Winograd, Stem, Depthwise };

struct WindowSpec {
  Engine engine = Engine::AsDrawn;
  WindowOp op = WindowOp::Conv;
  std::vector<int64_t> image;  // [N, C, H, W] as drawn: N 1-2, C 1-12, H and W 1-20
  std::vector<int64_t> kernel;     // [kh, kw], 1-7, mostly square, mostly 3
  std::vector<int64_t> strides;    // 1-3, mostly 1
  std::vector<int64_t> dilations;  // 1-2, mostly 1
  std::vector<int64_t> pads;  // [top, left, bottom, right] as drawn, 0-5, bounded by the kernel
  int auto_pad = 0;           // 0 explicit pads, 1 SAME_UPPER, 2 SAME_LOWER, 3 VALID
  int groups = 0;             // 0: 1 group, 1: depthwise, 2: two groups where C is even
  int64_t maps = 1;           // output maps per group, 1-8
  bool wide = false;          // 32-40 channels and 16 more maps a group: Winograd's sizes
  bool bias = true;
  int epilogue = 0;           // 0 none, 1 Relu, 2 ReLU6, 3 HardSwish, 4 Sigmoid, 5 SiLU, 6 + residual and Relu
  bool stem_pool = false;     // a MaxPool 3x3 / 2 with padding 1 after the epilogue
  bool ceil_mode = false;     // pools
  bool count_include_pad = false;  // AveragePool
  bool symbolic_batch = false;     // N symbolic: also run with the other batch size
  uint64_t data_seed = 0;
};

rc::Gen<WindowSpec> window_spec();

// The graph, and (symbolic batch) the same spec's input dims for the other batch size.
BuiltGraph build_window(const WindowSpec& spec, int64_t batch);

void showValue(const WindowSpec& spec, std::ostream& os);

}  // namespace tilefuse::property
