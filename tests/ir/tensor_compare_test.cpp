// compare_tensors, the judge of every fused-vs-reference test: a tolerance bounds finite
// differences only; infinities and NaN must match exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ir/tensor_compare.h"

namespace tilefuse {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

bool same_within(std::vector<float> actual, std::vector<float> expected) {
  const auto n = static_cast<int64_t>(actual.size());
  return compare_tensors(Tensor::from_vector(DType::f32, {n}, actual), Tensor::from_vector(DType::f32, {n}, expected),
                         {1e-5, 1e-30})
      .ok;
}

TEST(TensorCompare, FiniteValuesWithinTheToleranceMatch) {
  EXPECT_TRUE(same_within({1.0f, -2.0f, 0.0f}, {1.000001f, -2.0f, -0.0f}));
  EXPECT_FALSE(same_within({1.0f}, {1.01f}));
}

TEST(TensorCompare, InfinitiesAndNaNMatchOnlyThemselves) {
  EXPECT_TRUE(same_within({kInf, -kInf, kNaN}, {kInf, -kInf, kNaN}));
  // rtol * |inf| is inf: without the rule these all passed, (-inf)^0.5 as NaN among them.
  EXPECT_FALSE(same_within({kNaN}, {kInf}));
  EXPECT_FALSE(same_within({1e30f}, {kInf}));
  EXPECT_FALSE(same_within({-kInf}, {kInf}));
  EXPECT_FALSE(same_within({kInf}, {1e30f}));
  EXPECT_FALSE(same_within({kNaN}, {1.0f}));
  EXPECT_FALSE(same_within({1.0f}, {kNaN}));
}

}  // namespace
}  // namespace tilefuse
