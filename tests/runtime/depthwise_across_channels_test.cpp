// The depthwise convolution across channels against the reference interpreter's Conv, called
// directly (whatever depthwise_across_channels_suits picks) on AVX-512: channel counts below, at
// and past a block of 16 (a partial last block, blocks spanning two images), plane ranges that
// start mid-block, output rows of 1 to 20 (partial groups of 8 outputs), bands of rows (a plane
// too tall for one), every stride, dilation and padding on any side.
#include "runtime/depthwise_across_channels.h"

#include <gtest/gtest.h>

#include <string>

#include "ir/tensor_compare.h"
#include "reference/interpreter.h"
#include "runtime/cpu_isa.h"

namespace tilefuse::runtime {
namespace {

using Ints = std::vector<int64_t>;

struct Case {
  int64_t batch, channels, height, width, kh, kw, stride_h, stride_w, dil;
  Ints pads;  // top, left, bottom, right
};

std::string describe(const Case& c) {
  return std::to_string(c.batch) + "x" + std::to_string(c.channels) + "x" + std::to_string(c.height) + "x" +
         std::to_string(c.width) + " kernel " + std::to_string(c.kh) + "x" + std::to_string(c.kw) + " strides " +
         std::to_string(c.stride_h) + "," + std::to_string(c.stride_w) + " dilation " + std::to_string(c.dil) +
         " pads " + std::to_string(c.pads[0]) + "," + std::to_string(c.pads[1]) + "," + std::to_string(c.pads[2]) +
         "," + std::to_string(c.pads[3]);
}

Tensor filled(Ints shape, int salt) {
  Tensor t(DType::f32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, ((i * 37 + salt * 11) % 61) / 17.0 - 1.5);
  return t;
}

// Runs the planes in the given ranges (together they cover all) and compares with the reference.
void expect_matches_reference(const Case& c, const std::vector<std::pair<int64_t, int64_t>>& ranges = {}) {
  Graph g;
  const Ints x_shape = {c.batch, c.channels, c.height, c.width}, w_shape = {c.channels, 1, c.kh, c.kw};
  std::vector<Value*> inputs = {g.add_input("x", DType::f32, shape_of(x_shape)), g.add_constant("w", filled(w_shape, 1)),
                                g.add_constant("b", filled({c.channels}, 2))};
  AttributeMap attrs = {{"group", c.channels},
                        {"strides", Ints{c.stride_h, c.stride_w}},
                        {"dilations", Ints{c.dil, c.dil}},
                        {"pads", c.pads}};
  Node* conv = g.add_node("Conv", "conv", inputs, {"y"}, attrs);
  g.infer_shapes();
  const Tensor x = filled(x_shape, 3);
  const Tensor expected = reference::evaluate_node(*conv, {x, *inputs[1]->constant, *inputs[2]->constant}).at(0);
  ConvShape s{};
  s.batch = c.batch, s.channels = s.maps = s.groups = c.channels, s.height = c.height, s.width = c.width;
  s.kh = c.kh, s.kw = c.kw, s.stride_h = c.stride_h, s.stride_w = c.stride_w, s.dil_h = s.dil_w = c.dil;
  s.pad_top = c.pads[0], s.pad_left = c.pads[1], s.out_h = expected.shape()[2], s.out_w = expected.shape()[3];
  Tensor out(DType::f32, expected.shape());
  const std::vector<std::pair<int64_t, int64_t>> all = {{0, c.batch * c.channels}};
  for (const auto& [first, end] : ranges.empty() ? all : ranges) {
    depthwise_across_channels(s, x.data<float>(), inputs[1]->constant->data<float>(),
                              inputs[2]->constant->data<float>(), out.data<float>(), first, end);
  }
  const CompareResult r = compare_tensors(out, expected, {1e-5, 1e-5});
  EXPECT_TRUE(r.ok) << describe(c) << ": " << r.message;
}

class DepthwiseAcrossChannels : public ::testing::Test {
 protected:
  void SetUp() override {
    if (vector_isa() != VectorIsa::avx512) GTEST_SKIP() << "no AVX-512 in use (this CPU, or TILEFUSE_MAX_CPU_ISA)";
  }
};

TEST_F(DepthwiseAcrossChannels, MatchesReferenceOverChannelsAndWidths) {
  for (int64_t channels : {1, 16, 37}) {
    for (int64_t width : {1, 7, 14, 20}) {
      for (int64_t stride : {1, 2}) {
        expect_matches_reference({2, channels, 9, width, 3, 3, stride, stride, 1, {1, 1, 1, 1}});
      }
    }
  }
}

TEST_F(DepthwiseAcrossChannels, MatchesReferenceOnEveryGeometry) {
  const Case cases[] = {
      {1, 20, 7, 7, 7, 7, 1, 1, 1, {3, 3, 3, 3}},        // ConvNeXt's last stage
      {1, 24, 14, 14, 5, 5, 2, 2, 1, {1, 2, 2, 1}},      // asymmetric padding (SAME_UPPER)
      {1, 18, 13, 21, 3, 3, 1, 1, 2, {2, 2, 2, 2}},      // dilated
      {2, 17, 13, 21, 3, 3, 2, 1, 1, {1, 1, 1, 1}},      // unequal strides
      {1, 17, 13, 40, 3, 3, 3, 3, 1, {1, 1, 1, 1}},      // stride 3
      {1, 5, 10, 10, 7, 7, 1, 1, 1, {6, 6, 6, 6}},       // padding wider than the kernel reaches
      {1, 9, 12, 33, 3, 5, 1, 1, 1, {0, 0, 0, 0}},       // no padding, a non-square kernel
      {1, 40, 112, 112, 3, 3, 2, 2, 1, {0, 0, 1, 1}},    // MobileNet's stride 2: several bands
      {1, 3, 1, 30, 1, 3, 1, 1, 1, {0, 1, 0, 1}},        // a one-row plane, a 1-D kernel
  };
  for (const Case& c : cases) expect_matches_reference(c);
}

TEST_F(DepthwiseAcrossChannels, PlaneRangesStartingMidBlock) {
  // As a team of workers splits the planes: ranges of any length, across the images' boundary.
  const Case c{2, 21, 8, 8, 3, 3, 1, 1, 1, {1, 1, 1, 1}};
  expect_matches_reference(c, {{0, 5}, {5, 23}, {23, 40}, {40, 42}});
}

}  // namespace
}  // namespace tilefuse::runtime
