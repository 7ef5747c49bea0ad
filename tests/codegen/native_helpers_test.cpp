// The helpers of kernels over native types (tilefuse_native.h) against the reference
// interpreter's rules (reference/integer_math.h, Tensor::cast_into), case by case over the
// values where the rules differ from plain C++: overflow, MIN / -1, negative divisors, casts of
// NaN, infinities and out-of-range floats.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "codegen/support/tilefuse_kernel.h"
#include "ir/tensor.h"
#include "reference/integer_math.h"

namespace {

namespace ref = tilefuse::reference;

template <typename T>
std::vector<T> edge_integers() {
  using L = std::numeric_limits<T>;
  std::vector<T> v = {L::min(), static_cast<T>(L::min() + 1), L::max(), static_cast<T>(L::max() - 1), 0, 1, 2, 7};
  if constexpr (std::is_signed_v<T>) {
    for (int x : {-1, -2, -7}) v.push_back(static_cast<T>(x));
  }
  return v;
}

template <typename T>
void expect_arithmetic_matches() {
  for (T a : edge_integers<T>()) {
    EXPECT_EQ(tf::wrap_neg(a), ref::wrap_neg(a)) << +a;
    for (T b : edge_integers<T>()) {
      EXPECT_EQ(tf::wrap_add(a, b), ref::wrap_add(a, b)) << +a << " + " << +b;
      EXPECT_EQ(tf::wrap_sub(a, b), ref::wrap_sub(a, b)) << +a << " - " << +b;
      EXPECT_EQ(tf::wrap_mul(a, b), ref::wrap_mul(a, b)) << +a << " * " << +b;
      if (b == 0) continue;
      EXPECT_EQ(tf::int_div(a, b), ref::int_div(a, b)) << +a << " / " << +b;
      // The reference's Mod: the remainder, moved to the divisor's sign for fmod=0.
      T r = std::is_signed_v<T> && b == T(-1) ? T(0) : static_cast<T>(a % b);
      EXPECT_EQ(tf::int_mod<false>(a, b), r) << +a << " fmod " << +b;
      if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
      EXPECT_EQ(tf::int_mod<true>(a, b), r) << +a << " mod " << +b;
    }
  }
}

TEST(NativeHelpers, IntegerArithmeticIsTheReferences) {
  expect_arithmetic_matches<int64_t>();
  expect_arithmetic_matches<int32_t>();
  expect_arithmetic_matches<int8_t>();
  expect_arithmetic_matches<uint8_t>();
}

TEST(NativeHelpers, PythonModOfDoublesTakesTheDivisorsSign) {
  EXPECT_DOUBLE_EQ(tf::float_mod<true>(-5.5, 2.0), 0.5);
  EXPECT_DOUBLE_EQ(tf::float_mod<true>(5.5, -2.0), -0.5);
  EXPECT_DOUBLE_EQ(tf::float_mod<false>(-5.5, 2.0), -1.5);
  EXPECT_EQ(tf::float_mod<true>(4.0, 2.0), 0.0);
}

// Casts through a one-element tensor, as the reference's Cast does.
template <typename To, typename From>
void expect_cast_matches(tilefuse::DType from_type, tilefuse::DType to_type, From x) {
  tilefuse::Tensor in = tilefuse::Tensor::from_vector<From>(from_type, {1}, {x});
  tilefuse::Tensor out = in.cast(to_type);
  const auto got = tf::convert<To>(x);
  if constexpr (std::is_floating_point_v<decltype(got)>) {
    const double want = out.get_f64(0);
    if (std::isnan(want)) EXPECT_TRUE(std::isnan(got)) << x;
    else EXPECT_EQ(static_cast<double>(got), want) << x;
  } else {
    EXPECT_EQ(static_cast<int64_t>(got), out.get_i64(0)) << x;
  }
}

TEST(NativeHelpers, CastsAreTheReferences) {
  using tilefuse::DType;
  const float floats[] = {NAN, INFINITY, -INFINITY, 1e30f, -1e30f, 2.5f, -2.5f, 255.9f, 256.0f, -0.7f, 3e9f, -3e9f};
  for (float x : floats) {
    expect_cast_matches<int64_t>(DType::f32, DType::i64, x);
    expect_cast_matches<int32_t>(DType::f32, DType::i32, x);
    expect_cast_matches<int8_t>(DType::f32, DType::i8, x);
    expect_cast_matches<uint8_t>(DType::f32, DType::u8, x);
    expect_cast_matches<bool>(DType::f32, DType::boolean, x);
    expect_cast_matches<double>(DType::f32, DType::f64, x);
  }
  for (int64_t x : edge_integers<int64_t>()) {
    expect_cast_matches<int32_t>(DType::i64, DType::i32, x);
    expect_cast_matches<uint8_t>(DType::i64, DType::u8, x);
    expect_cast_matches<float>(DType::i64, DType::f32, x);
    expect_cast_matches<double>(DType::i64, DType::f64, x);
    expect_cast_matches<bool>(DType::i64, DType::boolean, x);
  }
  // f16 and bf16 targets: rounded to their precision, computed on as float.
  for (int64_t x : {int64_t{70000}, int64_t{-2049}, int64_t{12345}}) {
    expect_cast_matches<tf::f16>(DType::i64, DType::f16, x);
    expect_cast_matches<tf::bf16>(DType::i64, DType::bf16, x);
  }
}

TEST(NativeHelpers, MinMaxOfDoublesPropagateNaN) {
  EXPECT_TRUE(std::isnan(tf::max(1.0, std::nan(""))));
  EXPECT_TRUE(std::isnan(tf::min(std::nan(""), 1.0)));
  EXPECT_EQ(tf::max(int64_t{-3}, int64_t{2}), 2);
  EXPECT_EQ(tf::select(true, uint8_t{3}, -1), 3);  // mixed operands: their common type
}

}  // namespace
