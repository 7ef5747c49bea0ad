// The runtime's branch-free exp, sigmoid and tanh of floats against the exact result (long
// double): within their stated ulp bounds over their whole range (results that underflow and
// overflow included) and densely near 0, and the C library's infinities, zeros and NaN.
#include "runtime/vectorisable_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace tilefuse::runtime {
namespace {

// |got - exact| in ulps of the float nearest `exact` (subnormal ulps below FLT_MIN).
double ulp_error(float got, long double exact) {
  const float rounded = static_cast<float>(exact);
  if (std::isnan(got) || std::isnan(rounded)) return std::isnan(got) && std::isnan(rounded) ? 0.0 : INFINITY;
  if (std::isinf(got) || std::isinf(rounded)) return got == rounded ? 0.0 : INFINITY;
  const int e = std::max(std::ilogb(rounded), std::numeric_limits<float>::min_exponent - 2);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - exact) / std::ldexp(1.0L, e - 23));
}

TEST(VectorisableMath, WithinTheirBounds) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> wide(-110.0f, 95.0f), near(-2.0f, 2.0f), tiny(-1e-3f, 1e-3f);
  double exp_worst = 0, sigmoid_worst = 0, tanh_worst = 0;
  for (int i = 0; i < 300000; ++i) {
    const float x = i % 3 == 0 ? wide(gen) : i % 3 == 1 ? near(gen) : tiny(gen);
    const long double lx = x;
    exp_worst = std::max(exp_worst, ulp_error(vmath::exp(x), std::exp(lx)));
    sigmoid_worst = std::max(sigmoid_worst, ulp_error(vmath::sigmoid(x), 1.0L / (1.0L + std::exp(-lx))));
    tanh_worst = std::max(tanh_worst, ulp_error(vmath::tanh(x), std::tanh(lx)));
  }
  EXPECT_LE(exp_worst, 2.0);
  EXPECT_LE(sigmoid_worst, 3.0);
  EXPECT_LE(tanh_worst, 2.0);
}

TEST(VectorisableMath, SpecialValues) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(vmath::exp(inf), inf);
  EXPECT_EQ(vmath::exp(-inf), 0.0f);
  EXPECT_EQ(vmath::exp(0.0f), 1.0f);
  EXPECT_EQ(vmath::exp(89.0f), inf);
  EXPECT_EQ(vmath::exp(-105.0f), 0.0f);
  EXPECT_EQ(vmath::sigmoid(inf), 1.0f);
  EXPECT_EQ(vmath::sigmoid(-inf), 0.0f);
  EXPECT_EQ(vmath::tanh(inf), 1.0f);
  EXPECT_EQ(vmath::tanh(-inf), -1.0f);
  EXPECT_EQ(vmath::tanh(0.0f), 0.0f);
  for (float nan : {std::nanf(""), -std::nanf("")}) {
    EXPECT_TRUE(std::isnan(vmath::exp(nan)));
    EXPECT_TRUE(std::isnan(vmath::sigmoid(nan)));
    EXPECT_TRUE(std::isnan(vmath::tanh(nan)));
  }
}

}  // namespace
}  // namespace tilefuse::runtime
