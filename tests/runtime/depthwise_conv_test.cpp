// The depthwise convolution against the reference interpreter's Conv, through the library call
// (across channels where that suits the shape on AVX-512) and plane by plane, over a grid that
// walks every register-blocked kernel (3x3, 5x5, 7x7 and non-square widths; strides 1 and 2; one to
// four output vectors per strip and several strips; planes shorter than a row block; padding
// on any side, including more than the kernel reaches) and the padded-plane fallbacks
// (dilation, unequal strides, wide kernels), on 1 and 2 workers.
#include "runtime/depthwise_conv.h"

#include <gtest/gtest.h>

#include <string>

#include "ir/tensor_compare.h"
#include "runtime/depthwise_case.h"
#include "runtime/library_call.h"

namespace tilefuse::runtime {
namespace {

using depthwise_test::conv_shape;
using depthwise_test::depthwise_problem;
using depthwise_test::Ints;
using Case = depthwise_test::DepthwiseCase;

// AVX-512 or AVX2 with FMA: the register-blocked kernels run.
bool vector_cpu() { return depthwise_register_blocked(conv_shape({1, 1, 8, 8, 3, 3, 1, 1, 1, {1, 1, 1, 1}})); }

void expect_matches_reference(const Case& c) {
  const auto p = depthwise_problem(c);
  std::vector<Tensor> outs = {Tensor(DType::f32, p->expected.shape())};
  std::unique_ptr<LibraryCall> call = prepare_library_call(*p->conv, default_blocking(48 << 10, 2 << 20));
  for (int workers : {1, 2}) {
    ThreadTeam team(workers);
    call->run(team, p->inputs, outs);
    const CompareResult r = compare_tensors(outs[0], p->expected, {1e-5, 1e-5});
    EXPECT_TRUE(r.ok) << describe(c) << " on " << workers << " workers: " << r.message;
  }
  // The planes' kernels themselves: on AVX-512 the call above runs most shapes across channels.
  Tensor planes(DType::f32, p->expected.shape());
  depthwise_planes(conv_shape(c), p->inputs[0].data<float>(), p->inputs[1].data<float>(), p->inputs[2].data<float>(),
                   planes.data<float>(), 0, c.batch * c.channels);
  const CompareResult r = compare_tensors(planes, p->expected, {1e-5, 1e-5});
  EXPECT_TRUE(r.ok) << describe(c) << " plane by plane: " << r.message;
}

TEST(DepthwiseConv, RegisterBlockedKernelsMatchReference) {
  if (!vector_cpu()) GTEST_SKIP() << "neither AVX-512 nor AVX2 in use (this CPU, or TILEFUSE_MAX_CPU_ISA)";
  // Widths give 1, 2, 3 and 4 output vectors per strip and two strips (70 and 150 columns).
  for (int64_t k : {3, 5, 7}) {
    for (int64_t stride : {1, 2}) {
      for (int64_t width : {5, 20, 45, 64, 70, 150}) {
        for (int64_t height : {3, 9, 23}) {
          const int64_t pad = k / 2;
          const Case c{2, 3, height, width, k, k, stride, stride, 1, {pad, pad, pad, pad}};
          if (conv_shape(c).out_h < 1 || conv_shape(c).out_w < 1) continue;
          ASSERT_TRUE(depthwise_register_blocked(conv_shape(c))) << describe(c);
          expect_matches_reference(c);
        }
      }
    }
  }
}

TEST(DepthwiseConv, RegisterBlockedEdgesMatchReference) {
  if (!vector_cpu()) GTEST_SKIP() << "neither AVX-512 nor AVX2 in use (this CPU, or TILEFUSE_MAX_CPU_ISA)";
  const Case cases[] = {
      {2, 2, 12, 33, 3, 3, 1, 1, 1, {0, 0, 0, 0}},      // no padding
      {2, 2, 12, 33, 5, 5, 2, 2, 1, {0, 2, 1, 0}},      // padding on two sides only
      {2, 2, 10, 40, 7, 7, 1, 1, 1, {6, 6, 6, 6}},      // padding wider than half the kernel
      {2, 3, 11, 50, 7, 3, 1, 1, 1, {3, 1, 3, 1}},      // non-square: 7 rows by 3 columns
      {2, 3, 11, 50, 3, 8, 2, 2, 1, {1, 4, 1, 3}},      // eight kernel columns
      {2, 1, 1, 30, 3, 3, 1, 1, 1, {1, 1, 1, 1}},       // a one-row plane
      {2, 4, 7, 7, 7, 7, 1, 1, 1, {3, 3, 3, 3}},        // ConvNeXt's last stage
      {2, 2, 112, 112, 3, 3, 2, 2, 1, {0, 0, 1, 1}},    // MobileNet's SAME_UPPER stride 2
  };
  for (const Case& c : cases) {
    ASSERT_TRUE(depthwise_register_blocked(conv_shape(c))) << describe(c);
    expect_matches_reference(c);
  }
}

TEST(DepthwiseConv, PaddedPlaneFallbacksMatchReference) {
  const Case cases[] = {
      {2, 2, 13, 21, 3, 3, 1, 1, 2, {2, 2, 2, 2}},  // dilated
      {2, 2, 13, 21, 3, 3, 2, 1, 1, {1, 1, 1, 1}},  // unequal strides
      {2, 2, 13, 40, 9, 9, 1, 1, 1, {4, 4, 4, 4}},  // a 9x9 kernel
      {2, 2, 13, 40, 3, 3, 3, 3, 1, {1, 1, 1, 1}},  // stride 3
  };
  for (const Case& c : cases) {
    EXPECT_FALSE(depthwise_register_blocked(conv_shape(c))) << describe(c);
    expect_matches_reference(c);
  }
}

}  // namespace
}  // namespace tilefuse::runtime
