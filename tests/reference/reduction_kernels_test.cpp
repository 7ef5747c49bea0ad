// Reductions, Softmax/LogSoftmax and LayerNormalization, against sums and means done by hand.
#include <cmath>
#include <limits>

#include "reference_test_util.h"

namespace tilefuse::testing {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor matrix() { return f32({2, 3}, {1, 2, 3, 4, 5, 6}); }
AttributeMap axes_attr(std::vector<int64_t> axes, int64_t keepdims) {
  return {{"axes", std::move(axes)}, {"keepdims", keepdims}};
}

TEST(ReductionKernels, SumWithAxesAttributeOrInput) {
  expect_tensor(run1("ReduceSum", {matrix()}, axes_attr({1}, 1)), DType::f32, {2, 1}, {6, 15});
  expect_tensor(run1("ReduceSum", {matrix()}, axes_attr({0}, 0)), DType::f32, {3}, {5, 7, 9});
  expect_tensor(run1("ReduceSum", {matrix(), i64s({-1})}, {{"keepdims", int64_t{0}}}), DType::f32, {2}, {6, 15});
}

TEST(ReductionKernels, EmptyAxesReduceAllOrNothing) {
  expect_tensor(run1("ReduceSum", {matrix()}), DType::f32, {1, 1}, {21});
  expect_tensor(run1("ReduceSum", {matrix(), i64s({})}, {{"keepdims", int64_t{0}}}), DType::f32, {}, {21});
  expect_tensor(run1("ReduceSum", {matrix()}, {{"noop_with_empty_axes", int64_t{1}}}), DType::f32, {2, 3},
                {1, 2, 3, 4, 5, 6});
}

TEST(ReductionKernels, BadAxesAreUserErrors) {
  EXPECT_NE(user_error([] { run1("ReduceSum", {matrix(), i64s({0})}, {{"axes", std::vector<int64_t>{0}}}); })
                .find("both"),
            std::string::npos);
  std::string message = user_error([] { run1("ReduceMax", {matrix()}, axes_attr({2}, 1)); });
  EXPECT_NE(message.find("node 'n' (ReduceMax)"), std::string::npos) << message;
  EXPECT_NE(message.find("axis 2"), std::string::npos) << message;
  EXPECT_NE(user_error([] { run1("ReduceSum", {matrix()}, axes_attr({1, -1}, 1)); }).find("twice"),
            std::string::npos);
}

TEST(ReductionKernels, MeanProdMaxMin) {
  expect_tensor(run1("ReduceMean", {matrix()}, axes_attr({0}, 0)), DType::f32, {3}, {2.5, 3.5, 4.5});
  expect_tensor(run1("ReduceProd", {f32({3}, {2, 3, 4})}, axes_attr({0}, 0)), DType::f32, {}, {24});
  expect_tensor(run1("ReduceMax", {matrix()}, axes_attr({1}, 0)), DType::f32, {2}, {3, 6});
  expect_tensor(run1("ReduceMin", {matrix()}, axes_attr({0, 1}, 1)), DType::f32, {1, 1}, {1});
}

TEST(ReductionKernels, MaxAndMinPropagateNaN) {
  Tensor x = f32({2, 2}, {1, kNaN, 3, 2});
  expect_tensor(run1("ReduceMax", {x}, axes_attr({1}, 0)), DType::f32, {2}, {kNaN, 3});
  expect_tensor(run1("ReduceMin", {x}, axes_attr({0}, 0)), DType::f32, {2}, {1, kNaN});
}

TEST(ReductionKernels, IntegerReductions) {
  Tensor x = make(DType::i32, {2, 2}, {1, 2, -3, 0});
  // The integer mean truncates toward zero: 1.5 -> 1, -1.5 -> -1.
  expect_tensor(run1("ReduceMean", {x}, axes_attr({1}, 0)), DType::i32, {2}, {1, -1});
  expect_tensor(run1("ReduceSum", {x}, axes_attr({0}, 0)), DType::i32, {2}, {-2, 2});
  expect_tensor(run1("ReduceMax", {make(DType::u8, {3}, {7, 250, 3})}, axes_attr({0}, 0)), DType::u8, {}, {250});
  expect_tensor(run1("ReduceProd", {i64s({-2, 3})}, axes_attr({0}, 0)), DType::i64, {}, {-6});
}

TEST(ReductionKernels, EmptyReductionsGiveTheIdentity) {
  Tensor empty = f32({0, 2}, {});
  expect_tensor(run1("ReduceSum", {empty}, axes_attr({0}, 0)), DType::f32, {2}, {0, 0});
  expect_tensor(run1("ReduceProd", {empty}, axes_attr({0}, 0)), DType::f32, {2}, {1, 1});
  expect_tensor(run1("ReduceMax", {empty}, axes_attr({0}, 0)), DType::f32, {2}, {-kInf, -kInf});
}

TEST(ReductionKernels, HalfSumsAccumulateInDouble) {
  // Accumulated in f16, 2048 + 1 rounds back to 2048 twice; in double the sum is 2050, exact in f16.
  expect_tensor(run1("ReduceSum", {make(DType::f16, {3}, {2048, 1, 1})}, axes_attr({0}, 0)), DType::f16, {}, {2050},
                {0, 0});
}

TEST(ReductionKernels, ReduceRejectsBool) {
  EXPECT_NE(user_error([] { run1("ReduceSum", {make(DType::boolean, {1}, {1})}); }).find("bool"), std::string::npos);
}

TEST(NormalizationKernels, SoftmaxAlongLastAxis) {
  // exp(-2), exp(-1), 1 over their sum 1.5032147244...
  expect_tensor(run1("Softmax", {f32({3}, {1, 2, 3})}), DType::f32, {3},
                {0.09003057317038046, 0.24472847105479764, 0.6652409557748219});
  expect_tensor(run1("LogSoftmax", {f32({3}, {1, 2, 3})}), DType::f32, {3},
                {-2.4076059644443806, -1.4076059644443806, -0.4076059644443806});
  // Large inputs do not overflow.
  expect_tensor(run1("Softmax", {f32({2}, {1000, 1000})}), DType::f32, {2}, {0.5, 0.5});
}

TEST(NormalizationKernels, SoftmaxAlongAnyAxis) {
  expect_tensor(run1("Softmax", {f32({2, 3}, {1, 2, 3, 1, 2, 3})}, {{"axis", int64_t{0}}}), DType::f32, {2, 3},
                {0.5, 0.5, 0.5, 0.5, 0.5, 0.5});
  expect_tensor(run1("Softmax", {f32({2, 2, 1}, {0, 0, 5, 5})}, {{"axis", int64_t{1}}}), DType::f32, {2, 2, 1},
                {0.5, 0.5, 0.5, 0.5});
  EXPECT_NE(user_error([] { run1("Softmax", {f32({3}, {1, 2, 3})}, {{"axis", int64_t{1}}}); }).find("axis 1"),
            std::string::npos);
  EXPECT_NE(user_error([] { run1("Softmax", {i64s({1})}); }).find("i64"), std::string::npos);
}

TEST(NormalizationKernels, LayerNormalizationOverLastAxis) {
  // Rows [1, 3] and [0, 4]: mean 2, variance 1 and 4, both normalise to [-1, 1].
  Tensor x = f32({2, 2}, {1, 3, 0, 4});
  auto out = run_node("LayerNormalization", {x, f32({2}, {2, 1}), f32({2}, {0.5, -0.5})}, {{"epsilon", 0.0}}, 3);
  ASSERT_EQ(out.size(), 3u);
  expect_tensor(out[0], DType::f32, {2, 2}, {-1.5, 0.5, -1.5, 0.5});
  expect_tensor(out[1], DType::f32, {2, 1}, {2, 2});
  expect_tensor(out[2], DType::f32, {2, 1}, {1, 0.5});
}

TEST(NormalizationKernels, LayerNormalizationOverAllAxesWithEpsilon) {
  // Mean 2, variance (1 + 1 + 4 + 4) / 4 = 2.5; epsilon 1.5 makes the inverse std 1/2.
  auto out = run_node("LayerNormalization", {f32({2, 2}, {1, 3, 0, 4}), f32({1}, {1})},
                      {{"axis", int64_t{0}}, {"epsilon", 1.5}}, 3);
  expect_tensor(out[0], DType::f32, {2, 2}, {-0.5, 0.5, -1, 1});
  expect_tensor(out[2], DType::f32, {1, 1}, {0.5});
}

TEST(NormalizationKernels, LayerNormalizationHalfKeepsF32Statistics) {
  auto out = run_node("LayerNormalization", {make(DType::f16, {2}, {1, 3}), make(DType::f16, {2}, {1, 1})},
                      {{"epsilon", 0.0}}, 3);
  expect_tensor(out[0], DType::f16, {2}, {-1, 1});
  expect_tensor(out[1], DType::f32, {1}, {2});
}

TEST(NormalizationKernels, LayerNormalizationScaleMustFit) {
  std::string message = user_error([] { run1("LayerNormalization", {f32({2, 2}, {1, 3, 0, 4}), f32({3}, {1, 1, 1})}); });
  EXPECT_NE(message.find("node 'n' (LayerNormalization)"), std::string::npos) << message;
  EXPECT_NE(message.find("[3]"), std::string::npos) << message;
}

}  // namespace
}  // namespace tilefuse::testing
