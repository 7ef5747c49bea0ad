// Elementwise ops of one operand, against values computed by hand or well-known constants.
#include <cmath>
#include <limits>

#include "reference_test_util.h"

namespace tilefuse::testing {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kE = 2.718281828459045;

TEST(UnaryKernels, MathFunctions) {
  expect_tensor(run1("Exp", {f32({3}, {0, 1, -1})}), DType::f32, {3}, {1, kE, 1 / kE});
  expect_tensor(run1("Log", {f32({4}, {1, kE, 0, -1})}), DType::f32, {4}, {0, 1, -kInf, kNaN});
  expect_tensor(run1("Sqrt", {f32({3}, {4, 9, 2})}), DType::f32, {3}, {2, 3, std::sqrt(2.0)});
  expect_tensor(run1("Reciprocal", {f32({2}, {2, -4})}), DType::f32, {2}, {0.5, -0.25});
  expect_tensor(run1("Floor", {f32({3}, {-1.5, 1.5, 2})}), DType::f32, {3}, {-2, 1, 2});
  expect_tensor(run1("Ceil", {f32({3}, {-1.5, 1.5, 2})}), DType::f32, {3}, {-1, 2, 2});
  expect_tensor(run1("Tanh", {f32({2}, {0, 1})}), DType::f32, {2}, {0, 0.7615941559557649});
  expect_tensor(run1("Erf", {f32({2}, {0, 1})}), DType::f32, {2}, {0, 0.8427007929497149});
}

TEST(UnaryKernels, SignedOpsOnIntegers) {
  // -(-128) does not fit in i8: it wraps, as in numpy.
  expect_tensor(run1("Neg", {make(DType::i8, {2}, {-128, 5})}), DType::i8, {2}, {-128, -5});
  expect_tensor(run1("Neg", {f32({2}, {1, -2})}), DType::f32, {2}, {-1, 2});
  expect_tensor(run1("Abs", {make(DType::i32, {2}, {-3, 4})}), DType::i32, {2}, {3, 4});
  expect_tensor(run1("Abs", {make(DType::u8, {1}, {200})}), DType::u8, {1}, {200});
  expect_tensor(run1("Relu", {make(DType::i32, {2}, {-5, 7})}), DType::i32, {2}, {0, 7});
  EXPECT_NE(user_error([] { run1("Neg", {make(DType::u8, {1}, {1})}); }).find("u8"), std::string::npos);
}

TEST(UnaryKernels, Not) {
  expect_tensor(run1("Not", {make(DType::boolean, {2}, {1, 0})}), DType::boolean, {2}, {0, 1});
  EXPECT_NE(user_error([] { run1("Not", {f32({1}, {1})}); }).find("bool"), std::string::npos);
}

TEST(UnaryKernels, Activations) {
  expect_tensor(run1("Relu", {f32({3}, {-1, 0, 2})}), DType::f32, {3}, {0, 0, 2});
  expect_tensor(run1("Sigmoid", {f32({4}, {0, 1, -1000, 1000})}), DType::f32, {4}, {0.5, 0.7310585786300049, 0, 1});
  expect_tensor(run1("Softplus", {make(DType::f64, {3}, {0, 100, -100})}), DType::f64, {3},
                {std::log(2.0), 100, 3.720075976020836e-44}, {1e-12, 0});
  expect_tensor(run1("LeakyRelu", {f32({2}, {-2, 3})}), DType::f32, {2}, {-0.02, 3});
  expect_tensor(run1("LeakyRelu", {f32({1}, {-2})}, {{"alpha", 0.5}}), DType::f32, {1}, {-1});
  expect_tensor(run1("Elu", {f32({2}, {-1, 2})}), DType::f32, {2}, {1 / kE - 1, 2});
  expect_tensor(run1("Elu", {f32({1}, {-1})}, {{"alpha", 2.0}}), DType::f32, {1}, {2 * (1 / kE - 1)});
  expect_tensor(run1("HardSigmoid", {f32({4}, {-5, 0, 1, 5})}), DType::f32, {4}, {0, 0.5, 0.7, 1});
  expect_tensor(run1("HardSigmoid", {f32({1}, {1})}, {{"alpha", 0.5}, {"beta", 0.0}}), DType::f32, {1}, {0.5});
  expect_tensor(run1("HardSwish", {f32({5}, {-4, -1, 0, 1, 4})}), DType::f32, {5}, {0, -1.0 / 3, 0, 2.0 / 3, 4});
}

TEST(UnaryKernels, GeluBothForms) {
  // Phi(1) = 0.841344746..., the normal CDF; the tanh form is the usual approximation of it.
  expect_tensor(run1("Gelu", {f32({2}, {1, -1})}), DType::f32, {2}, {0.8413447460685429, -0.15865525393145707});
  expect_tensor(run1("Gelu", {f32({2}, {1, -1})}, {{"approximate", std::string("tanh")}}), DType::f32, {2},
                {0.8411919906082768, -0.15880800939172324});
  EXPECT_NE(user_error([] { run1("Gelu", {f32({1}, {1})}, {{"approximate", std::string("fast")}}); })
                .find("approximate"),
            std::string::npos);
}

TEST(UnaryKernels, HalfTypesComputeInF32AndRound) {
  // e rounds to 2.71875 in both f16 (ulp 2^-9 near e) and bf16 (ulp 2^-6).
  expect_tensor(run1("Exp", {make(DType::f16, {1}, {1})}), DType::f16, {1}, {2.71875}, {0, 0});
  expect_tensor(run1("Exp", {make(DType::bf16, {1}, {1})}), DType::bf16, {1}, {2.71875}, {0, 0});
  expect_tensor(run1("Sqrt", {make(DType::f16, {2}, {4, 0.25})}), DType::f16, {2}, {2, 0.5}, {0, 0});
}

TEST(UnaryKernels, FloatOnlyOpsRejectIntegers) {
  std::string message = user_error([] { run1("Exp", {make(DType::i32, {1}, {1})}); });
  EXPECT_NE(message.find("node 'n' (Exp)"), std::string::npos) << message;
  EXPECT_NE(message.find("i32"), std::string::npos) << message;
}

TEST(UnaryKernels, MissingInputIsAUserError) {
  EXPECT_NE(user_error([] { run1("Exp", {Tensor()}); }).find("input 0 is required"), std::string::npos);
}

TEST(UnaryKernels, ClipWithBothBounds) {
  expect_tensor(run1("Clip", {f32({3}, {-2, 0, 2}), f32({}, {-1}), f32({}, {1})}), DType::f32, {3}, {-1, 0, 1});
}

TEST(UnaryKernels, ClipMissingBoundsDoNotClip) {
  expect_tensor(run1("Clip", {f32({3}, {-5, 5, -kInf}), Tensor(), f32({}, {0})}), DType::f32, {3}, {-5, 0, -kInf});
  expect_tensor(run1("Clip", {f32({2}, {-kInf, kInf})}), DType::f32, {2}, {-kInf, kInf});
  expect_tensor(run1("Clip", {make(DType::i8, {2}, {-128, 127}), Tensor(), make(DType::i8, {}, {100})}), DType::i8, {2},
                {-128, 100});
}

TEST(UnaryKernels, ClipLikeNumpy) {
  // numpy.clip = minimum(maximum(x, lo), hi): lo > hi gives hi everywhere; NaN passes through.
  expect_tensor(run1("Clip", {f32({3}, {0, 5, kNaN}), f32({}, {2}), f32({}, {1})}), DType::f32, {3}, {1, 1, kNaN});
}

TEST(UnaryKernels, ClipBoundMustMatchType) {
  EXPECT_NE(user_error([] { run1("Clip", {f32({1}, {0}), make(DType::f64, {}, {1})}); }).find("same element type"),
            std::string::npos);
  EXPECT_NE(user_error([] { run1("Clip", {f32({1}, {0}), f32({2}, {1, 2})}); }).find("exactly one element"),
            std::string::npos);
}

}  // namespace
}  // namespace tilefuse::testing
