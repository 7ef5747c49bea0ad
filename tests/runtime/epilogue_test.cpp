// The epilogue's vector activations against their scalar forms: GELU (a polynomial erf on
// vectors) and its tanh approximation (an exp on vectors) over a dense sweep of [-12, 12] and
// their special values, and the clamp form. Run on
// every ISA the machine has (runtime_kernels_avx2 / _scalar cap it).
#include "runtime/epilogue.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace tilefuse::runtime {
namespace {

double exact_gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

TEST(Epilogue, GeluIsWithinAMillionthOfTheInputAcrossTheSweep) {
  const FusedActivation gelu{.form = FusedActivation::Form::gelu};
  std::vector<float> xs;
  for (double x = -12.0; x <= 12.0; x += 1.0 / 1024) xs.push_back(static_cast<float>(x));
  std::vector<float> y = xs;
  apply_epilogue(y.data(), nullptr, static_cast<int64_t>(y.size()), gelu);
  for (size_t i = 0; i < xs.size(); ++i) {
    // The unfused graph rounds x / sqrt 2, erf and 1 + erf to floats: its own error is of this
    // order, relative to x (1 + erf cancels for negative x).
    ASSERT_NEAR(y[i], exact_gelu(xs[i]), 1e-6 * std::max(1.0f, std::abs(xs[i]))) << "x = " << xs[i];
  }
}

TEST(Epilogue, GeluKeepsSpecialValues) {
  const FusedActivation gelu{.form = FusedActivation::Form::gelu};
  constexpr float inf = std::numeric_limits<float>::infinity();
  // Eight of each, so the vector body sees them, then a scalar tail.
  for (float x : {inf, -inf, std::numeric_limits<float>::quiet_NaN(), -0.0f, 1e-30f, -1e30f}) {
    std::vector<float> y(11, x);
    apply_epilogue(y.data(), nullptr, static_cast<int64_t>(y.size()), gelu);
    const double want = exact_gelu(x);  // NaN for -inf: -inf * (1 + erf(-inf)) = -inf * 0
    for (float v : y) {
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(v)) << "x = " << x;
      } else {
        EXPECT_EQ(v, static_cast<float>(want)) << "x = " << x;
        EXPECT_EQ(std::signbit(v), std::signbit(want)) << "x = " << x;
      }
    }
  }
}

double exact_gelu_tanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

TEST(Epilogue, GeluTanhIsWithinAMillionthOfTheInputAcrossTheSweep) {
  const FusedActivation gelu{.form = FusedActivation::Form::gelu_tanh};
  std::vector<float> xs;
  for (double x = -12.0; x <= 12.0; x += 1.0 / 1024) xs.push_back(static_cast<float>(x));
  std::vector<float> y = xs;
  apply_epilogue(y.data(), nullptr, static_cast<int64_t>(y.size()), gelu);
  for (size_t i = 0; i < xs.size(); ++i) {
    ASSERT_NEAR(y[i], exact_gelu_tanh(xs[i]), 1e-6 * std::max(1.0f, std::abs(xs[i]))) << "x = " << xs[i];
  }
}

TEST(Epilogue, GeluTanhKeepsSpecialValues) {
  const FusedActivation gelu{.form = FusedActivation::Form::gelu_tanh};
  constexpr float inf = std::numeric_limits<float>::infinity();
  // What the unfused graph gives in float: x^3 overflows for -1e30, and tanh then rounds to -1.
  const std::vector<std::pair<float, float>> cases = {
      {inf, inf}, {-inf, std::numeric_limits<float>::quiet_NaN()}, {-0.0f, -0.0f}, {1e-30f, 5e-31f}, {-1e30f, -0.0f}};
  for (auto [x, want] : cases) {
    std::vector<float> y(11, x);  // a vector body, then a scalar tail
    apply_epilogue(y.data(), nullptr, static_cast<int64_t>(y.size()), gelu);
    for (float v : y) {
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(v)) << "x = " << x;
      } else {
        EXPECT_EQ(v, want) << "x = " << x;
        EXPECT_EQ(std::signbit(v), std::signbit(want)) << "x = " << x;
      }
    }
  }
  std::vector<float> nan(11, std::numeric_limits<float>::quiet_NaN());
  apply_epilogue(nan.data(), nullptr, 11, gelu);
  for (float v : nan) EXPECT_TRUE(std::isnan(v));
}

// SiLU and the sigmoid, x / (1 + e^-x) and 1 / (1 + e^-x), against the same in double, and their
// special values: the unfused graph's x * Sigmoid(x) is NaN at -inf (-inf * 0).
TEST(Epilogue, SiluAndSigmoidAreWithinAMillionthAcrossTheSweep) {
  for (auto form : {FusedActivation::Form::silu, FusedActivation::Form::sigmoid}) {
    const FusedActivation act{.form = form};
    std::vector<float> xs;
    for (double x = -100.0; x <= 100.0; x += 1.0 / 256) xs.push_back(static_cast<float>(x));
    std::vector<float> y = xs;
    apply_epilogue(y.data(), nullptr, static_cast<int64_t>(y.size()), act);
    for (size_t i = 0; i < xs.size(); ++i) {
      const double sigmoid = 1.0 / (1.0 + std::exp(-static_cast<double>(xs[i])));
      const double want = form == FusedActivation::Form::silu ? xs[i] * sigmoid : sigmoid;
      ASSERT_NEAR(y[i], want, 1e-6 * std::max(1.0f, std::abs(xs[i]))) << "x = " << xs[i];
    }
    constexpr float inf = std::numeric_limits<float>::infinity();
    const bool silu = form == FusedActivation::Form::silu;
    for (auto [x, want] : std::vector<std::pair<float, float>>{{inf, silu ? inf : 1.0f}, {-inf, silu ? std::nanf("") : 0.0f}}) {
      std::vector<float> v(11, x);  // a vector body, then a scalar tail
      apply_epilogue(v.data(), nullptr, 11, act);
      for (float got : v) {
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(got)) << x;
        } else {
          EXPECT_EQ(got, want) << x;
        }
      }
    }
  }
}

TEST(Epilogue, AddsTheResidualBeforeTheActivation) {
  const FusedActivation relu6{.lo = 0.0f, .hi = 6.0f};
  std::vector<float> y(19), residual(19);
  for (int i = 0; i < 19; ++i) y[i] = static_cast<float>(i) - 9.0f, residual[i] = 0.5f * static_cast<float>(i);
  apply_epilogue(y.data(), residual.data(), 19, relu6);
  for (int i = 0; i < 19; ++i) EXPECT_EQ(y[i], std::clamp(1.5f * static_cast<float>(i) - 9.0f, 0.0f, 6.0f)) << i;
}

// The clamp form skips the steps that change nothing (ReLU is a max alone): every combination
// of bounds, affine or not, times the input or not, agrees with the scalar form, NaN included
// (value for value without the affine step).
TEST(Epilogue, ClampFormsAgreeWithTheScalarForm) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  const std::vector<FusedActivation> forms = {
      {.lo = 0.0f},                                                              // Relu
      {.hi = 2.0f},                                                              // a bound above only
      {.lo = 0.0f, .hi = 6.0f},                                                  // Relu6
      {.scale = 0.2f, .shift = 0.5f, .lo = 0.0f, .hi = 1.0f},                    // HardSigmoid
      {.scale = 1.0f / 6.0f, .shift = 0.5f, .lo = 0.0f, .hi = 1.0f, .times_input = true},  // HardSwish
      {.scale = 2.0f},                                                           // affine, unbounded
  };
  std::vector<float> xs;
  for (float x = -9.0f; x <= 9.0f; x += 0.25f) xs.push_back(x);
  for (float x : {inf, -inf, std::numeric_limits<float>::quiet_NaN(), -0.0f}) xs.push_back(x);
  for (const FusedActivation& a : forms) {
    std::vector<float> y = xs;
    apply_epilogue(y.data(), nullptr, static_cast<int64_t>(y.size()), a);
    for (size_t i = 0; i < xs.size(); ++i) {
      const float want = a(xs[i]);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(y[i])) << "x = " << xs[i] << " scale " << a.scale << " lo " << a.lo << " hi " << a.hi;
      } else if (std::isinf(want) || a.scale == 1.0f) {  // without the affine step: exact
        EXPECT_EQ(y[i], want) << "x = " << xs[i] << " lo " << a.lo << " hi " << a.hi;
      } else {  // the vectors fuse scale * x + shift into one rounding
        EXPECT_NEAR(y[i], want, 2e-7 * std::max(1.0f, std::abs(want))) << "x = " << xs[i] << " scale " << a.scale;
      }
    }
  }
}

}  // namespace
}  // namespace tilefuse::runtime
