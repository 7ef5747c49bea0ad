#include "ir/tensor.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "ir/half.h"

namespace tilefuse {
namespace {

float bits_f32(uint32_t bits) { return std::bit_cast<float>(bits); }

// ---- f16: expected patterns from the IEEE 754 binary16 layout (1 sign, 5 exponent, 10 mantissa).

TEST(HalfTest, F32ToF16Normals) {
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_f16(0.5f), 0x3800);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);   // largest finite half
  EXPECT_EQ(f32_to_f16(0.1f), 0x2e66);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(f32_to_f16(0.0f), 0x0000);
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
}

TEST(HalfTest, F32ToF16RoundsToNearestEven) {
  float ulp = std::ldexp(1.0f, -10);  // half ulp at 1.0 is 2^-10
  EXPECT_EQ(f32_to_f16(1.0f + ulp / 2), 0x3c00);              // tie, even stays down
  EXPECT_EQ(f32_to_f16(1.0f + 3 * ulp / 2), 0x3c02);          // tie, odd rounds up
  EXPECT_EQ(f32_to_f16(1.0f + ulp / 2 + ulp / 64), 0x3c01);   // above the tie
  EXPECT_EQ(f32_to_f16(1.0f + ulp / 2 - ulp / 64), 0x3c00);   // below the tie
  EXPECT_EQ(f32_to_f16(2.0f - ulp / 4), 0x4000);              // carry into the exponent
}

TEST(HalfTest, F32ToF16Overflow) {
  EXPECT_EQ(f32_to_f16(65519.0f), 0x7bff);  // below the midpoint to 65536
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);  // the midpoint rounds to even: infinity
  EXPECT_EQ(f32_to_f16(1e10f), 0x7c00);
  EXPECT_EQ(f32_to_f16(-1e10f), 0xfc00);
  EXPECT_EQ(f32_to_f16(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(f32_to_f16(-std::numeric_limits<float>::infinity()), 0xfc00);
}

TEST(HalfTest, F32ToF16Subnormals) {
  float tiny = std::ldexp(1.0f, -24);  // smallest half subnormal
  EXPECT_EQ(f32_to_f16(tiny), 0x0001);
  EXPECT_EQ(f32_to_f16(-tiny), 0x8001);
  EXPECT_EQ(f32_to_f16(tiny / 2), 0x0000);      // tie with 0: even
  EXPECT_EQ(f32_to_f16(tiny * 1.5f), 0x0002);   // tie between 1 and 2: even
  EXPECT_EQ(f32_to_f16(tiny * 2.5f), 0x0002);   // tie between 2 and 3: even
  EXPECT_EQ(f32_to_f16(tiny * 0.75f), 0x0001);
  EXPECT_EQ(f32_to_f16(1023 * tiny), 0x03ff);   // largest subnormal
  EXPECT_EQ(f32_to_f16(1023.5f * tiny), 0x0400);  // rounds up into the smallest normal
  EXPECT_EQ(f32_to_f16(1e-10f), 0x0000);
  EXPECT_EQ(f32_to_f16(-1e-10f), 0x8000);
}

TEST(HalfTest, F32ToF16NaN) {
  uint16_t h = f32_to_f16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(h & 0x7c00, 0x7c00);
  EXPECT_NE(h & 0x03ff, 0);
  uint16_t s = f32_to_f16(bits_f32(0x7f800001));  // signalling NaN stays a NaN, not inf
  EXPECT_NE(s & 0x03ff, 0);
}

TEST(HalfTest, F16ToF32) {
  EXPECT_EQ(f16_to_f32(0x3c00), 1.0f);
  EXPECT_EQ(f16_to_f32(0x3555), 0.333251953125f);
  EXPECT_EQ(f16_to_f32(0x7bff), 65504.0f);
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_to_f32(0x03ff), 1023 * std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_to_f32(0x8001), -std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_to_f32(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(f16_to_f32(0xfc00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(f16_to_f32(0x7e00)));
  EXPECT_TRUE(std::isnan(f16_to_f32(0x7c01)));
  EXPECT_TRUE(std::signbit(f16_to_f32(0x8000)));
  EXPECT_EQ(f16_to_f32(0x8000), 0.0f);
}

TEST(HalfTest, EveryF16PatternRoundTripsThroughF32) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    float f = f16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_f16(f), h) << std::hex << h;
  }
}

TEST(HalfTest, Bf16) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(-2.0f), 0xc000);
  EXPECT_EQ(bf16_to_f32(0x4049), 3.140625f);
  EXPECT_EQ(f32_to_bf16(bits_f32(0x3f808000)), 0x3f80);  // tie, even stays
  EXPECT_EQ(f32_to_bf16(bits_f32(0x3f818000)), 0x3f82);  // tie, odd rounds up
  EXPECT_EQ(f32_to_bf16(bits_f32(0x3f808001)), 0x3f81);  // above the tie
  EXPECT_EQ(f32_to_bf16(bits_f32(0x3f807fff)), 0x3f80);  // below the tie
  EXPECT_EQ(f32_to_bf16(bits_f32(0x7f7fffff)), 0x7f80);  // max float rounds to inf
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(f32_to_bf16(bits_f32(0x00010000)), 0x0001);  // subnormals keep their top bits
  EXPECT_EQ(f32_to_bf16(-0.0f), 0x8000);
  uint16_t nan = f32_to_bf16(bits_f32(0x7f800001));  // would round to inf if not special-cased
  EXPECT_TRUE(std::isnan(bf16_to_f32(nan)));
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    float f = bf16_to_f32(static_cast<uint16_t>(b));
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_bf16(f), b) << std::hex << b;
  }
}

// ---- Tensor

TEST(TensorTest, ZeroFilledAndShaped) {
  Tensor t(DType::i32, {2, 3});
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.rank(), 2);
  EXPECT_EQ(t.nbytes(), 24u);
  EXPECT_EQ(t.summary(), "i32[2, 3]");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw()) % 64, 0u);
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(t.get_i64(i), 0);
  Tensor scalar(DType::f64, {});
  EXPECT_EQ(scalar.numel(), 1);
  Tensor empty(DType::f32, {0, 4});
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_NE(empty.raw(), nullptr);
  EXPECT_THROW(Tensor(DType::f32, {2, -1}), UserError);
}

TEST(TensorTest, HalfElementsAreStoredAsBits) {
  Tensor t = Tensor::from_vector(DType::f16, {3}, std::vector<float>{1.0f, 65520.0f, 0.1f});
  EXPECT_EQ(t.data<uint16_t>()[0], 0x3c00);
  EXPECT_EQ(t.data<uint16_t>()[1], 0x7c00);
  EXPECT_EQ(t.data<uint16_t>()[2], 0x2e66);
  EXPECT_EQ(t.get_f64(0), 1.0);
  Tensor b = Tensor::from_vector(DType::bf16, {1}, std::vector<double>{3.140625});
  EXPECT_EQ(b.data<uint16_t>()[0], 0x4049);
}

TEST(TensorTest, CopiesShareCloneDoesNot) {
  Tensor a = Tensor::from_vector(DType::f32, {2}, std::vector<float>{1, 2});
  Tensor shared = a;
  Tensor copy = a.clone();
  a.data<float>()[0] = 7;
  EXPECT_EQ(shared.data<float>()[0], 7);
  EXPECT_EQ(copy.data<float>()[0], 1);
  Tensor r = a.reshaped({2, 1});
  EXPECT_EQ(r.shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(r.raw(), a.raw());
  EXPECT_THROW(a.reshaped({3}), InternalError);
}

TEST(TensorTest, CastFollowsOnnx) {
  Tensor f = Tensor::from_vector(DType::f32, {5}, std::vector<float>{-2.7f, 2.7f, 0.0f, 0.4f, -0.0f});
  EXPECT_EQ(f.cast(DType::i32).to_i64_vector(), (std::vector<int64_t>{-2, 2, 0, 0, 0}));  // truncation
  EXPECT_EQ(f.cast(DType::boolean).to_i64_vector(), (std::vector<int64_t>{1, 1, 0, 1, 0}));
  Tensor big = Tensor::from_vector(DType::i64, {1}, std::vector<int64_t>{(int64_t{1} << 53) + 1});
  EXPECT_EQ(big.cast(DType::i32).get_i64(0), 1);  // int->int does not go through double
  EXPECT_EQ(big.cast(DType::i64).get_i64(0), (int64_t{1} << 53) + 1);
  Tensor i = Tensor::from_vector(DType::i8, {2}, std::vector<int>{-3, 100});
  Tensor as_f = i.cast(DType::f16);
  EXPECT_EQ(as_f.get_f64(0), -3.0);
  EXPECT_EQ(as_f.get_f64(1), 100.0);
}

TEST(TensorTest, SameBytes) {
  Tensor a = Tensor::from_vector(DType::i64, {2}, std::vector<int64_t>{1, 2});
  EXPECT_TRUE(a.same_bytes(a.clone()));
  EXPECT_FALSE(a.same_bytes(a.reshaped({2, 1})));
  EXPECT_FALSE(a.same_bytes(a.cast(DType::i32)));
  Tensor b = a.clone();
  b.set_i64(1, 3);
  EXPECT_FALSE(a.same_bytes(b));
}

TEST(TensorTest, StridesAndProduct) {
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(contiguous_strides({}), (std::vector<int64_t>{}));
  EXPECT_EQ(product({2, 3, 4}), 24);
  EXPECT_EQ(product({}), 1);
}

}  // namespace
}  // namespace tilefuse
