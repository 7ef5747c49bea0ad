// MatMul (numpy semantics) and Gemm, for BLAS types (f32/f64) and plain-loop types.
#include "reference_test_util.h"

namespace tilefuse::testing {
namespace {

Tensor a23(DType t = DType::f32) { return make(t, {2, 3}, {1, 2, 3, 4, 5, 6}); }
Tensor b32(DType t = DType::f32) { return make(t, {3, 2}, {7, 8, 9, 10, 11, 12}); }

TEST(MatMulKernels, MatrixTimesMatrix) {
  for (DType t : {DType::f32, DType::f64, DType::f16, DType::bf16, DType::i32, DType::i64}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    expect_tensor(run1("MatMul", {a23(t), b32(t)}), t, {2, 2}, {58, 64, 139, 154});
  }
}

TEST(MatMulKernels, VectorOperandsFollowNumpy) {
  Tensor v = f32({3}, {1, 2, 3});
  expect_tensor(run1("MatMul", {v, f32({3}, {4, 5, 6})}), DType::f32, {}, {32});
  expect_tensor(run1("MatMul", {f32({2}, {1, 2}), a23()}), DType::f32, {3}, {9, 12, 15});
  expect_tensor(run1("MatMul", {a23(), f32({3}, {1, 0, -1})}), DType::f32, {2}, {-2, -2});
}

TEST(MatMulKernels, BatchDimsBroadcast) {
  // a: two 1x2 rows [1 2], [3 4]; b: three 2x1 columns [1 1], [1 0], [0 1].
  Tensor a = f32({2, 1, 2}, {1, 2, 3, 4});
  Tensor b = f32({3, 1, 2, 1}, {1, 1, 1, 0, 0, 1});
  expect_tensor(run1("MatMul", {a, b}), DType::f32, {3, 2, 1, 1}, {3, 7, 1, 3, 2, 4});
  expect_tensor(run1("MatMul", {make(DType::i64, {2, 1, 2}, {1, 2, 3, 4}), make(DType::i64, {2, 1}, {1, 1})}),
                DType::i64, {2, 1, 1}, {3, 7});
}

TEST(MatMulKernels, EmptyInnerDimGivesZeros) {
  expect_tensor(run1("MatMul", {f32({2, 0}, {}), f32({0, 3}, {})}), DType::f32, {2, 3}, {0, 0, 0, 0, 0, 0});
}

TEST(MatMulKernels, Errors) {
  std::string message = user_error([] { run1("MatMul", {a23(), a23()}); });
  EXPECT_NE(message.find("node 'n' (MatMul)"), std::string::npos) << message;
  EXPECT_NE(message.find("inner dims"), std::string::npos) << message;
  EXPECT_NE(user_error([] { run1("MatMul", {a23(DType::u8), b32(DType::u8)}); }).find("u8"), std::string::npos);
  EXPECT_NE(user_error([] { run1("MatMul", {a23(), b32(DType::f64)}); }).find("same element type"), std::string::npos);
}

TEST(GemmKernels, AlphaBetaAndBroadcastC) {
  // 2 * [[58, 64], [139, 154]] + 3 * [1, -1]
  AttributeMap attrs = {{"alpha", 2.0}, {"beta", 3.0}};
  for (DType t : {DType::f32, DType::f64, DType::f16}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    expect_tensor(run1("Gemm", {a23(t), b32(t), make(t, {2}, {1, -1})}, attrs), t, {2, 2}, {119, 125, 281, 305});
  }
  expect_tensor(run1("Gemm", {a23(), b32(), f32({}, {1})}), DType::f32, {2, 2}, {59, 65, 140, 155});
  expect_tensor(run1("Gemm", {a23(), b32()}), DType::f32, {2, 2}, {58, 64, 139, 154});
}

TEST(GemmKernels, Transposes) {
  Tensor at = f32({3, 2}, {1, 4, 2, 5, 3, 6}), bt = f32({2, 3}, {7, 9, 11, 8, 10, 12});
  expect_tensor(run1("Gemm", {at, bt}, {{"transA", int64_t{1}}, {"transB", int64_t{1}}}), DType::f32, {2, 2},
                {58, 64, 139, 154});
  expect_tensor(run1("Gemm", {at, bt, Tensor()}, {{"transA", int64_t{1}}, {"transB", int64_t{1}}}), DType::f32, {2, 2},
                {58, 64, 139, 154});
  expect_tensor(run1("Gemm", {make(DType::bf16, {3, 2}, {1, 4, 2, 5, 3, 6}), b32(DType::bf16)}, {{"transA", int64_t{1}}}),
                DType::bf16, {2, 2}, {58, 64, 139, 154});
}

TEST(GemmKernels, IntegerGemm) {
  expect_tensor(run1("Gemm", {i64({1, 2}, {1, 2}), i64({2, 1}, {3, 4}), i64({1, 1}, {10})}), DType::i64, {1, 1}, {21});
}

TEST(GemmKernels, Errors) {
  EXPECT_NE(user_error([] { run1("Gemm", {a23(), b32(), f32({3}, {1, 2, 3})}); }).find("broadcast"), std::string::npos);
  EXPECT_NE(user_error([] { run1("Gemm", {a23(), a23()}); }).find("inner dims"), std::string::npos);
  EXPECT_NE(user_error([] { run1("Gemm", {f32({3}, {1, 2, 3}), b32()}); }).find("2-D"), std::string::npos);
}

}  // namespace
}  // namespace tilefuse::testing
