// The depthwise convolution against the reference interpreter's Conv, over a grid that walks
// every register-blocked kernel (3x3, 5x5, 7x7 and non-square widths; strides 1 and 2; one to
// four output vectors per strip and several strips; planes shorter than a row block; padding
// on any side, including more than the kernel reaches) and the padded-plane fallbacks
// (dilation, unequal strides, wide kernels), on 1 and 2 workers.
#include "runtime/depthwise_conv.h"

#include <gtest/gtest.h>

#include <string>

#include "ir/tensor_compare.h"
#include "reference/interpreter.h"
#include "runtime/library_call.h"

namespace tilefuse::runtime {
namespace {

using Ints = std::vector<int64_t>;

struct Case {
  int64_t channels, height, width, kh, kw, stride_h, stride_w, dil;
  Ints pads;  // top, left, bottom, right
};

std::string describe(const Case& c) {
  return std::to_string(c.channels) + "x" + std::to_string(c.height) + "x" + std::to_string(c.width) + " kernel " +
         std::to_string(c.kh) + "x" + std::to_string(c.kw) + " strides " + std::to_string(c.stride_h) + "," +
         std::to_string(c.stride_w) + " dilation " + std::to_string(c.dil) + " pads " + std::to_string(c.pads[0]) +
         "," + std::to_string(c.pads[1]) + "," + std::to_string(c.pads[2]) + "," + std::to_string(c.pads[3]);
}

Tensor filled(Ints shape, int salt) {
  Tensor t(DType::f32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, ((i * 37 + salt * 11) % 61) / 17.0 - 1.5);
  return t;
}

ConvShape shape_of_case(const Case& c) {
  ConvShape s{};
  s.batch = 2, s.channels = s.maps = s.groups = c.channels, s.height = c.height, s.width = c.width;
  s.kh = c.kh, s.kw = c.kw, s.stride_h = c.stride_h, s.stride_w = c.stride_w, s.dil_h = s.dil_w = c.dil;
  s.pad_top = c.pads[0], s.pad_left = c.pads[1];
  s.out_h = (c.height + c.pads[0] + c.pads[2] - c.dil * (c.kh - 1) - 1) / c.stride_h + 1;
  s.out_w = (c.width + c.pads[1] + c.pads[3] - c.dil * (c.kw - 1) - 1) / c.stride_w + 1;
  return s;
}

// AVX-512 or AVX2 with FMA: the register-blocked kernels run.
bool vector_cpu() { return depthwise_register_blocked(shape_of_case({1, 8, 8, 3, 3, 1, 1, 1, {1, 1, 1, 1}})); }

void expect_matches_reference(const Case& c) {
  Graph g;
  const Ints x_shape = {2, c.channels, c.height, c.width}, w_shape = {c.channels, 1, c.kh, c.kw};
  std::vector<Value*> inputs = {g.add_input("x", DType::f32, shape_of(x_shape)), g.add_constant("w", filled(w_shape, 1)),
                                g.add_constant("b", filled({c.channels}, 2))};
  AttributeMap attrs = {{"group", c.channels},
                        {"strides", Ints{c.stride_h, c.stride_w}},
                        {"dilations", Ints{c.dil, c.dil}},
                        {"pads", c.pads}};
  Node* conv = g.add_node("Conv", "conv", inputs, {"y"}, attrs);
  g.infer_shapes();
  std::vector<Tensor> ins = {filled(x_shape, 3), *inputs[1]->constant, *inputs[2]->constant};
  const Tensor expected = reference::evaluate_node(*conv, ins).at(0);
  std::vector<Tensor> outs = {Tensor(DType::f32, expected.shape())};
  std::unique_ptr<LibraryCall> call = prepare_library_call(*conv, default_blocking(48 << 10, 2 << 20));
  for (int workers : {1, 2}) {
    ThreadTeam team(workers);
    call->run(team, ins, outs);
    const CompareResult r = compare_tensors(outs[0], expected, {1e-5, 1e-5});
    EXPECT_TRUE(r.ok) << describe(c) << " on " << workers << " workers: " << r.message;
  }
}

TEST(DepthwiseConv, RegisterBlockedKernelsMatchReference) {
  if (!vector_cpu()) GTEST_SKIP() << "neither AVX-512 nor AVX2 in use (this CPU, or TILEFUSE_MAX_CPU_ISA)";
  // Widths give 1, 2, 3 and 4 output vectors per strip and two strips (70 and 150 columns).
  for (int64_t k : {3, 5, 7}) {
    for (int64_t stride : {1, 2}) {
      for (int64_t width : {5, 20, 45, 64, 70, 150}) {
        for (int64_t height : {3, 9, 23}) {
          const int64_t pad = k / 2;
          const Case c{3, height, width, k, k, stride, stride, 1, {pad, pad, pad, pad}};
          if (shape_of_case(c).out_h < 1 || shape_of_case(c).out_w < 1) continue;
          ASSERT_TRUE(depthwise_register_blocked(shape_of_case(c))) << describe(c);
          expect_matches_reference(c);
        }
      }
    }
  }
}

TEST(DepthwiseConv, RegisterBlockedEdgesMatchReference) {
  if (!vector_cpu()) GTEST_SKIP() << "neither AVX-512 nor AVX2 in use (this CPU, or TILEFUSE_MAX_CPU_ISA)";
  const Case cases[] = {
      {2, 12, 33, 3, 3, 1, 1, 1, {0, 0, 0, 0}},      // no padding
      {2, 12, 33, 5, 5, 2, 2, 1, {0, 2, 1, 0}},      // padding on two sides only
      {2, 10, 40, 7, 7, 1, 1, 1, {6, 6, 6, 6}},      // padding wider than half the kernel
      {3, 11, 50, 7, 3, 1, 1, 1, {3, 1, 3, 1}},      // non-square: 7 rows by 3 columns
      {3, 11, 50, 3, 8, 2, 2, 1, {1, 4, 1, 3}},      // eight kernel columns
      {1, 1, 30, 3, 3, 1, 1, 1, {1, 1, 1, 1}},       // a one-row plane
      {4, 7, 7, 7, 7, 1, 1, 1, {3, 3, 3, 3}},        // ConvNeXt's last stage
      {2, 112, 112, 3, 3, 2, 2, 1, {0, 0, 1, 1}},    // MobileNet's SAME_UPPER stride 2
  };
  for (const Case& c : cases) {
    ASSERT_TRUE(depthwise_register_blocked(shape_of_case(c))) << describe(c);
    expect_matches_reference(c);
  }
}

TEST(DepthwiseConv, PaddedPlaneFallbacksMatchReference) {
  const Case cases[] = {
      {2, 13, 21, 3, 3, 1, 1, 2, {2, 2, 2, 2}},  // dilated
      {2, 13, 21, 3, 3, 2, 1, 1, {1, 1, 1, 1}},  // unequal strides
      {2, 13, 40, 9, 9, 1, 1, 1, {4, 4, 4, 4}},  // a 9x9 kernel
      {2, 13, 40, 3, 3, 3, 3, 1, {1, 1, 1, 1}},  // stride 3
  };
  for (const Case& c : cases) {
    EXPECT_FALSE(depthwise_register_blocked(shape_of_case(c))) << describe(c);
    expect_matches_reference(c);
  }
}

}  // namespace
}  // namespace tilefuse::runtime
