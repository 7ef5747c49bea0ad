// Broadcasting elementwise ops of several operands, with values computed by hand.
#include <limits>

#include "reference_test_util.h"

namespace tilefuse::testing {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor bools(const std::vector<double>& values) {
  return make(DType::boolean, {static_cast<int64_t>(values.size())}, values);
}

TEST(BinaryKernels, AddBroadcastsTrailingDims) {
  Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_tensor(run1("Add", {a, f32({3}, {10, 20, 30})}), DType::f32, {2, 3}, {11, 22, 33, 14, 25, 36});
  expect_tensor(run1("Add", {f32({}, {100}), a}), DType::f32, {2, 3}, {101, 102, 103, 104, 105, 106});
}

TEST(BinaryKernels, BroadcastExpandsBothOperands) {
  expect_tensor(run1("Add", {f32({2, 1}, {1, 2}), f32({1, 3}, {10, 20, 30})}), DType::f32, {2, 3},
                {11, 21, 31, 12, 22, 32});
  expect_tensor(run1("Mul", {f32({2, 1, 1}, {1, -1}), f32({2, 2}, {1, 2, 3, 4})}), DType::f32, {2, 2, 2},
                {1, 2, 3, 4, -1, -2, -3, -4});
}

TEST(BinaryKernels, IncompatibleShapesNameTheNode) {
  std::string message = user_error([] { run1("Add", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2}, {1, 2})}); });
  EXPECT_NE(message.find("node 'n' (Add)"), std::string::npos) << message;
  EXPECT_NE(message.find("broadcast"), std::string::npos) << message;
}

TEST(BinaryKernels, OperandTypesMustMatch) {
  EXPECT_NE(user_error([] { run1("Add", {f32({1}, {1}), i64s({1})}); }).find("same element type"), std::string::npos);
  EXPECT_NE(user_error([] { run1("Add", {bools({1}), bools({1})}); }).find("bool"), std::string::npos);
}

TEST(BinaryKernels, IntegerArithmeticWraps) {
  expect_tensor(run1("Add", {make(DType::i8, {2}, {127, -128}), make(DType::i8, {2}, {1, -1})}), DType::i8, {2},
                {-128, 127});
  expect_tensor(run1("Sub", {make(DType::i32, {1}, {5}), make(DType::i32, {1}, {7})}), DType::i32, {1}, {-2});
  expect_tensor(run1("Mul", {i64s({3}), i64s({-4})}), DType::i64, {1}, {-12});
  expect_tensor(run1("Mul", {make(DType::u8, {1}, {16}), make(DType::u8, {1}, {17})}), DType::u8, {1}, {16});
}

TEST(BinaryKernels, FloatDivision) {
  expect_tensor(run1("Div", {f32({3}, {1, -7, 0}), f32({3}, {0, 2, 0})}), DType::f32, {3}, {kInf, -3.5, kNaN});
}

TEST(BinaryKernels, IntegerDivisionTruncatesTowardZero) {
  Tensor a = make(DType::i32, {4}, {7, -7, 7, -7});
  Tensor b = make(DType::i32, {4}, {2, 2, -2, -2});
  expect_tensor(run1("Div", {a, b}), DType::i32, {4}, {3, -3, -3, 3});
  expect_tensor(run1("Div", {make(DType::u8, {1}, {200}), make(DType::u8, {1}, {7})}), DType::u8, {1}, {28});
  // INT_MIN / -1 overflows: wraps to INT_MIN as in numpy (and never traps).
  expect_tensor(run1("Div", {make(DType::i32, {1}, {-2147483648.0}), make(DType::i32, {1}, {-1})}), DType::i32, {1},
                {-2147483648.0});
  EXPECT_NE(user_error([] { run1("Div", {i64s({1}), i64s({0})}); }).find("division by zero"), std::string::npos);
}

TEST(BinaryKernels, PowFollowsTheBaseType) {
  expect_tensor(run1("Pow", {f32({2}, {2, 4}), f32({2}, {3, 0.5})}), DType::f32, {2}, {8, 2});
  expect_tensor(run1("Pow", {i64s({2, 3, -2}), i64s({10, 3, 3})}), DType::i64, {3}, {1024, 27, -8});
  // Mixed types: the result has the base's type; an integer base truncates (2^0.5 -> 1, 2^-1 -> 0).
  expect_tensor(run1("Pow", {make(DType::i32, {2}, {2, 2}), f32({2}, {0.5, 3})}), DType::i32, {2}, {1, 8});
  expect_tensor(run1("Pow", {i64s({2}), i64s({-1})}), DType::i64, {1}, {0});
  expect_tensor(run1("Pow", {f32({1}, {4}), i64s({2})}), DType::f32, {1}, {16});
  expect_tensor(run1("Pow", {make(DType::f16, {1}, {3}), make(DType::f16, {1}, {2})}), DType::f16, {1}, {9});
  EXPECT_NE(user_error([] { run1("Pow", {make(DType::u8, {1}, {2}), f32({1}, {2})}); }).find("base"),
            std::string::npos);
}

TEST(BinaryKernels, Comparisons) {
  Tensor x = f32({3}, {1, 2, 3}), two = f32({}, {2});
  expect_tensor(run1("Less", {x, two}), DType::boolean, {3}, {1, 0, 0});
  expect_tensor(run1("LessOrEqual", {x, two}), DType::boolean, {3}, {1, 1, 0});
  expect_tensor(run1("Greater", {x, two}), DType::boolean, {3}, {0, 0, 1});
  expect_tensor(run1("GreaterOrEqual", {x, two}), DType::boolean, {3}, {0, 1, 1});
  expect_tensor(run1("Equal", {i64s({1, 2, 3}), i64s({1, 5, 3})}), DType::boolean, {3}, {1, 0, 1});
  expect_tensor(run1("Equal", {bools({1, 0}), bools({1, 1})}), DType::boolean, {2}, {1, 0});
  // NaN compares false with everything, itself included.
  expect_tensor(run1("Equal", {f32({1}, {kNaN}), f32({1}, {kNaN})}), DType::boolean, {1}, {0});
  expect_tensor(run1("Less", {f32({1}, {kNaN}), f32({1}, {1})}), DType::boolean, {1}, {0});
  EXPECT_NE(user_error([] { run1("Less", {bools({1}), bools({0})}); }).find("bool"), std::string::npos);
}

TEST(BinaryKernels, Logic) {
  Tensor a = bools({1, 1, 0, 0}), b = bools({1, 0, 1, 0});
  expect_tensor(run1("And", {a, b}), DType::boolean, {4}, {1, 0, 0, 0});
  expect_tensor(run1("Or", {a, b}), DType::boolean, {4}, {1, 1, 1, 0});
  expect_tensor(run1("And", {make(DType::boolean, {2, 1}, {1, 0}), bools({1, 0})}), DType::boolean, {2, 2},
                {1, 0, 0, 0});
  EXPECT_NE(user_error([] { run1("And", {f32({1}, {1}), bools({1})}); }).find("bool"), std::string::npos);
}

TEST(BinaryKernels, WhereSelectsWithBroadcasting) {
  expect_tensor(run1("Where", {bools({1, 0, 1}), f32({3}, {1, 2, 3}), f32({}, {0})}), DType::f32, {3}, {1, 0, 3});
  Tensor cond = make(DType::boolean, {2, 1}, {1, 0});
  expect_tensor(run1("Where", {cond, i64({1, 3}, {1, 2, 3}), i64({2, 1}, {-1, -2})}), DType::i64, {2, 3},
                {1, 2, 3, -2, -2, -2});
  expect_tensor(run1("Where", {bools({0, 1}), make(DType::f16, {2}, {1.5, 2.5}), make(DType::f16, {2}, {-1, -2})}),
                DType::f16, {2}, {-1, 2.5});
  EXPECT_NE(user_error([] { run1("Where", {f32({1}, {1}), f32({1}, {1}), f32({1}, {1})}); }).find("condition"),
            std::string::npos);
}

TEST(BinaryKernels, MinMaxOfSeveralOperands) {
  std::vector<Tensor> in = {f32({3}, {1, 5, 3}), f32({2, 1}, {4, 0}), f32({}, {2})};
  expect_tensor(run1("Max", in), DType::f32, {2, 3}, {4, 5, 4, 2, 5, 3});
  expect_tensor(run1("Min", in), DType::f32, {2, 3}, {1, 2, 2, 0, 0, 0});
  expect_tensor(run1("Min", {make(DType::i32, {2}, {3, -9})}), DType::i32, {2}, {3, -9});
  expect_tensor(run1("Max", {make(DType::u8, {2}, {3, 250}), make(DType::u8, {2}, {7, 1})}), DType::u8, {2}, {7, 250});
}

TEST(BinaryKernels, MinMaxPropagateNaN) {
  expect_tensor(run1("Max", {f32({2}, {kNaN, 1}), f32({2}, {0, kNaN})}), DType::f32, {2}, {kNaN, kNaN});
  expect_tensor(run1("Min", {f32({2}, {kNaN, 1}), f32({2}, {0, kNaN})}), DType::f32, {2}, {kNaN, kNaN});
  EXPECT_NE(user_error([] { run1("Max", {f32({1}, {1}), i64s({1})}); }).find("same element type"), std::string::npos);
}

TEST(BinaryKernels, Bfloat16Arithmetic) {
  // 1 + 2^-8 is not representable in bf16 (8 significant bits): the sum rounds to even, 1.
  expect_tensor(run1("Add", {make(DType::bf16, {2}, {1, 1}), make(DType::bf16, {2}, {0.00390625, 0.5})}), DType::bf16,
                {2}, {1, 1.5}, {0, 0});
}

}  // namespace
}  // namespace tilefuse::testing
