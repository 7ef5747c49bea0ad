#include "runtime/random_fill.h"

#include <gtest/gtest.h>

#include "runtime/input_binding.h"

namespace tilefuse::runtime {
namespace {

Tensor draw(DType dtype, uint64_t seed, const std::string& name = "x") {
  std::mt19937_64 rng = input_rng(seed, name);
  return random_tensor(dtype, {64, 16}, rng);
}

TEST(RandomFill, SameSeedSameData) {
  for (DType dtype : kAllDTypes) {
    EXPECT_TRUE(draw(dtype, 42).same_bytes(draw(dtype, 42))) << dtype_name(dtype);
  }
}

TEST(RandomFill, SeedAndInputNameBothChangeTheData) {
  EXPECT_FALSE(draw(DType::f32, 1).same_bytes(draw(DType::f32, 2)));
  EXPECT_FALSE(draw(DType::f32, 1, "x").same_bytes(draw(DType::f32, 1, "y")));
}

TEST(RandomFill, FloatsAreInMinusOneToOneAndSpreadOut) {
  for (DType dtype : {DType::f32, DType::f16, DType::bf16, DType::f64}) {
    Tensor t = draw(dtype, 7);
    double lo = 1, hi = -1;
    for (int64_t i = 0; i < t.numel(); ++i) {
      lo = std::min(lo, t.get_f64(i));
      hi = std::max(hi, t.get_f64(i));
    }
    EXPECT_GE(lo, -1.0) << dtype_name(dtype);
    EXPECT_LT(hi, 1.0) << dtype_name(dtype);
    EXPECT_LT(lo, -0.9) << dtype_name(dtype);  // 1024 uniform draws cover the range
    EXPECT_GT(hi, 0.9) << dtype_name(dtype);
  }
}

TEST(RandomFill, IntegersAreSmallAndNonNegativeBoolsAreZeroOrOne) {
  for (DType dtype : {DType::i8, DType::i32, DType::i64, DType::u8, DType::boolean}) {
    Tensor t = draw(dtype, 9);
    const int64_t high = dtype == DType::boolean ? 1 : 3;
    std::set<int64_t> seen;
    for (int64_t i = 0; i < t.numel(); ++i) seen.insert(t.get_i64(i));
    EXPECT_EQ(*seen.begin(), 0) << dtype_name(dtype);
    EXPECT_EQ(*seen.rbegin(), high) << dtype_name(dtype);
  }
}

TEST(RandomFill, GivingOneInputDoesNotChangeTheOthers) {
  Graph g;
  g.add_input("a", DType::f32, {8});
  g.add_input("b", DType::f32, {8});
  const BindOptions options{.fill_missing_randomly = true, .seed = 5};
  BoundInputs both_random = bind_inputs(g, {}, options);
  BoundInputs a_given = bind_inputs(g, {{"a", Tensor(DType::f32, {8})}}, options);
  EXPECT_TRUE(both_random.inputs[1].tensor.same_bytes(a_given.inputs[1].tensor));
}

}  // namespace
}  // namespace tilefuse::runtime
