// The depthwise convolution across channels against the reference interpreter's Conv, called
// directly (whatever depthwise_across_channels_suits picks) on AVX-512 and AVX2: channel counts
// below, at and past a block (16 or 8 channels: partial last blocks, blocks spanning two images), plane ranges that
// start mid-block, output rows of 1 to 20 (partial groups of 8 outputs), bands of rows (a plane
// too tall for one), every stride, dilation and padding on any side.
#include "runtime/depthwise_across_channels.h"

#include <gtest/gtest.h>

#include <string>

#include "ir/tensor_compare.h"
#include "runtime/cpu_isa.h"
#include "runtime/depthwise_case.h"

namespace tilefuse::runtime {
namespace {

using depthwise_test::conv_shape;
using depthwise_test::depthwise_problem;
using Case = depthwise_test::DepthwiseCase;

// Runs the planes in the given ranges (together they cover all) and compares with the reference.
void expect_matches_reference(const Case& c, const std::vector<std::pair<int64_t, int64_t>>& ranges = {}) {
  const auto p = depthwise_problem(c);
  Tensor out(DType::f32, p->expected.shape());
  const std::vector<std::pair<int64_t, int64_t>> all = {{0, c.batch * c.channels}};
  for (const auto& [first, end] : ranges.empty() ? all : ranges) {
    depthwise_across_channels(conv_shape(c), p->inputs[0].data<float>(), p->inputs[1].data<float>(),
                              p->inputs[2].data<float>(), out.data<float>(), first, end);
  }
  const CompareResult r = compare_tensors(out, p->expected, {1e-5, 1e-5});
  EXPECT_TRUE(r.ok) << describe(c) << ": " << r.message;
}

class DepthwiseAcrossChannels : public ::testing::Test {
 protected:
  void SetUp() override {
    if (vector_isa() < VectorIsa::avx2) GTEST_SKIP() << "neither AVX-512 nor AVX2 in use (this CPU, or TILEFUSE_MAX_CPU_ISA)";
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
