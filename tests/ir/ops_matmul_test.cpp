// MatMul (numpy matmul semantics) and Gemm shape inference.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "ops_test_util.h"

namespace tilefuse {
namespace {

using ::testing::HasSubstr;
using op_testing::infer;
using op_testing::shape_of_output;
using op_testing::sym;
using op_testing::user_error;

std::string matmul_shape(Shape a, Shape b) {
  Graph g;
  return shape_of_output(infer(g, "MatMul", {g.add_input("a", DType::f32, std::move(a)), g.add_input("b", DType::f32, std::move(b))}));
}

TEST(MatMulOps, MatricesAndVectors) {
  EXPECT_EQ(matmul_shape({2, 3}, {3, 4}), "[2, 4]");
  EXPECT_EQ(matmul_shape({3}, {3, 4}), "[4]");
  EXPECT_EQ(matmul_shape({2, 3}, {3}), "[2]");
  EXPECT_EQ(matmul_shape({3}, {3}), "[]");
  EXPECT_EQ(matmul_shape({7, 3}, {5, 3, 4}), "[5, 7, 4]");
}

TEST(MatMulOps, BatchDimsBroadcastAndKeepSymbols) {
  EXPECT_EQ(matmul_shape({sym("N"), 1, 2, 3}, {5, 3, 4}), "[N, 5, 2, 4]");
  EXPECT_EQ(matmul_shape({sym("N"), sym("S"), 64}, {64, 128}), shape_to_string({sym("N"), sym("S"), 128}));
  EXPECT_EQ(matmul_shape({2, sym("K")}, {64, 8}), "[2, 8]");
}

TEST(MatMulOps, MismatchesAreUserErrors) {
  EXPECT_THAT(user_error([] { matmul_shape({2, 3}, {4, 5}); }), HasSubstr("must be equal, got 3 and 4"));
  EXPECT_THAT(user_error([] { matmul_shape({2, 2, 3}, {3, 3, 4}); }), HasSubstr("cannot be broadcast"));
  EXPECT_THAT(user_error([] { matmul_shape({}, {3}); }), HasSubstr("MatMul needs rank >= 1"));
  Graph g;
  EXPECT_THROW(infer(g, "MatMul", {g.add_input("a", DType::f32, {2, 3}), g.add_input("b", DType::f16, {3, 2})}), UserError);
  Graph g2;
  EXPECT_THROW(infer(g2, "MatMul", {g2.add_input("a", DType::boolean, {2, 3}), g2.add_input("b", DType::boolean, {3, 2})}),
               UserError);
}

TEST(GemmOps, TransposesAndBias) {
  Graph g;
  Node* n = infer(g, "Gemm",
                  {g.add_input("a", DType::f32, {3, sym("M")}), g.add_input("b", DType::f32, {4, 3}), g.add_input("c", DType::f32, {4})},
                  {{"transA", int64_t{1}}, {"transB", int64_t{1}}, {"alpha", 0.5}});
  EXPECT_EQ(shape_of_output(n), "[M, 4]");
  Graph g2;
  Node* plain = infer(g2, "Gemm", {g2.add_input("a", DType::f64, {2, 3}), g2.add_input("b", DType::f64, {3, 5})});
  EXPECT_EQ(plain->outputs[0]->dtype, DType::f64);
  EXPECT_EQ(shape_of_output(plain), "[2, 5]");
}

TEST(GemmOps, BadOperandsAreUserErrors) {
  Graph g;
  EXPECT_THAT(user_error([&] {
                infer(g, "Gemm", {g.add_input("a", DType::f32, {2, 3}), g.add_input("b", DType::f32, {3, 5}),
                                  g.add_input("c", DType::f32, {3})});
              }),
              HasSubstr("input 2 ('c') of shape [3] cannot be broadcast to [2, 5]"));
  Graph g2;
  EXPECT_THAT(user_error([&] {
                infer(g2, "Gemm", {g2.add_input("a", DType::f32, {1, 2, 3}), g2.add_input("b", DType::f32, {3, 5})});
              }),
              HasSubstr("input 0 ('a') must have rank 2"));
  Graph g3;
  EXPECT_THAT(user_error([&] {
                infer(g3, "Gemm", {g3.add_input("a", DType::f32, {2, 3}), g3.add_input("b", DType::f32, {5, 3})});
              }),
              HasSubstr("must be equal, got 3 and 5"));
}

}  // namespace
}  // namespace tilefuse
