// Cast, Identity and Dropout in inference mode.
#include <limits>

#include "reference_test_util.h"

namespace tilefuse::testing {
namespace {

AttributeMap to(DType t) { return {{"to", int64_t{dtype_to_onnx(t)}}}; }

TEST(ConversionKernels, CastFloatToIntTruncates) {
  expect_tensor(run1("Cast", {f32({4}, {1.7, -1.7, 0.5, -0.5})}, to(DType::i32)), DType::i32, {4}, {1, -1, 0, 0});
  expect_tensor(run1("Cast", {f32({3}, {0, -2, 0.25})}, to(DType::boolean)), DType::boolean, {3}, {0, 1, 1});
  expect_tensor(run1("Cast", {make(DType::boolean, {2}, {1, 0})}, to(DType::f32)), DType::f32, {2}, {1, 0});
}

TEST(ConversionKernels, CastBetweenFloatTypesRounds) {
  // 1 + 2^-11 is halfway between two f16 values: ties to even gives 1.
  expect_tensor(run1("Cast", {f32({2}, {1.00048828125, 65504})}, to(DType::f16)), DType::f16, {2}, {1, 65504}, {0, 0});
  expect_tensor(run1("Cast", {make(DType::f16, {1}, {0.333251953125})}, to(DType::f64)), DType::f64, {1},
                {0.333251953125}, {0, 0});
  expect_tensor(run1("Cast", {i64s({-3})}, to(DType::u8)), DType::u8, {1}, {253});
}

TEST(ConversionKernels, CastErrors) {
  EXPECT_NE(user_error([] { run1("Cast", {f32({1}, {1})}); }).find("'to'"), std::string::npos);
  EXPECT_NE(user_error([] { run1("Cast", {f32({1}, {1})}, {{"to", int64_t{8}}}); }).find("8"), std::string::npos);
}

TEST(ConversionKernels, IdentityCopies) {
  Tensor x = make(DType::bf16, {2}, {1, 2});
  Tensor y = run1("Identity", {x});
  expect_tensor(y, DType::bf16, {2}, {1, 2});
  EXPECT_NE(y.raw(), x.raw());
}

TEST(ConversionKernels, DropoutIsIdentityWithTrueMask) {
  auto out = run_node("Dropout", {f32({3}, {1, 2, 3}), f32({}, {0.5})}, {}, 2);
  ASSERT_EQ(out.size(), 2u);
  expect_tensor(out[0], DType::f32, {3}, {1, 2, 3});
  expect_tensor(out[1], DType::boolean, {3}, {1, 1, 1});
  EXPECT_EQ(run_node("Dropout", {f32({1}, {4})}).size(), 1u);
}

TEST(ConversionKernels, DropoutTrainingModeOnlyWithZeroRatio) {
  Tensor yes = make(DType::boolean, {}, {1});
  expect_tensor(run1("Dropout", {f32({2}, {1, 2}), f32({}, {0}), yes}), DType::f32, {2}, {1, 2});
  EXPECT_NE(user_error([&] { run1("Dropout", {f32({2}, {1, 2}), f32({}, {0.5}), yes}); }).find("training_mode"),
            std::string::npos);
}

}  // namespace
}  // namespace tilefuse::testing
