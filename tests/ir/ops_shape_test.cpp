// Shape, Constant, ConstantOfShape and Range: types, shapes and the values they make known.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "ops_test_util.h"

namespace tilefuse {
namespace {

using ::testing::HasSubstr;
using op_testing::i64_scalar;
using op_testing::i64_vector;
using op_testing::infer;
using op_testing::shape_of_output;
using op_testing::sym;
using op_testing::user_error;
using op_testing::values_of_output;

TEST(ShapeOps, ShapeKnowsSymbolicDims) {
  Graph g;
  Node* n = infer(g, "Shape", {g.add_input("x", DType::f32, {sym("N"), 3, 4})});
  EXPECT_EQ(n->outputs[0]->dtype, DType::i64);
  EXPECT_EQ(shape_of_output(n), "[3]");
  EXPECT_EQ(values_of_output(n), "[N, 3, 4]");
}

TEST(ShapeOps, ShapeStartAndEndAreClamped) {
  Graph g1, g2, g3;
  EXPECT_EQ(values_of_output(infer(g1, "Shape", {g1.add_input("x", DType::f32, {sym("N"), 3, 4})}, {{"start", int64_t{1}}})),
            "[3, 4]");
  EXPECT_EQ(values_of_output(infer(g2, "Shape", {g2.add_input("x", DType::f32, {sym("N"), 3, 4})}, {{"end", int64_t{-1}}})),
            "[N, 3]");
  Node* empty = infer(g3, "Shape", {g3.add_input("x", DType::f32, {2})}, {{"start", int64_t{5}}});
  EXPECT_EQ(shape_of_output(empty), "[0]");
  EXPECT_EQ(values_of_output(empty), "[]");
}

TEST(ShapeOps, ConstantFromEachAttributeForm) {
  Graph g;
  Node* ints = g.add_node("Constant", "ints", {}, {""}, {{"value_ints", std::vector<int64_t>{4, -1}}});
  Node* f = g.add_node("Constant", "f", {}, {""}, {{"value_float", 0.5}});
  Node* fs = g.add_node("Constant", "fs", {}, {""}, {{"value_floats", std::vector<double>{1, 2, 3}}});
  Node* i = g.add_node("Constant", "i", {}, {""}, {{"value_int", int64_t{7}}});
  Node* t = g.add_node("Constant", "t", {}, {""},
                       {{"value", Tensor::from_vector(DType::i32, {2, 2}, std::vector<int>{1, 2, 3, 4})}});
  g.infer_shapes();
  EXPECT_EQ(ints->outputs[0]->dtype, DType::i64);
  EXPECT_EQ(values_of_output(ints), "[4, -1]");
  EXPECT_EQ(f->outputs[0]->dtype, DType::f32);
  EXPECT_EQ(shape_of_output(f), "[]");
  EXPECT_EQ(values_of_output(f), "none");
  EXPECT_EQ(shape_of_output(fs), "[3]");
  EXPECT_EQ(values_of_output(i), "[7]");
  EXPECT_EQ(t->outputs[0]->dtype, DType::i32);
  EXPECT_EQ(shape_of_output(t), "[2, 2]");
  EXPECT_EQ(values_of_output(t), "none");  // rank 2 is not a shape tensor
}

TEST(ShapeOps, ConstantNeedsExactlyOneValue) {
  Graph g;
  EXPECT_THAT(user_error([&] { infer(g, "Constant", {}); }), HasSubstr("got 0"));
  Graph g2;
  EXPECT_THAT(user_error([&] { infer(g2, "Constant", {}, {{"value_int", int64_t{1}}, {"value_float", 1.0}}); }),
              HasSubstr("got 2"));
}

TEST(ShapeOps, ConstantOfShapeTakesTypeFromValue) {
  Graph g;
  Node* zeros = infer(g, "ConstantOfShape", {i64_vector(g, "s", {2, 3})});
  EXPECT_EQ(zeros->outputs[0]->dtype, DType::f32);
  EXPECT_EQ(shape_of_output(zeros), "[2, 3]");
  Graph g2;
  Node* ones = infer(g2, "ConstantOfShape", {i64_vector(g2, "s", {3})}, {{"value", Tensor::from_vector(DType::i64, {1}, std::vector<int64_t>{1})}});
  EXPECT_EQ(ones->outputs[0]->dtype, DType::i64);
  EXPECT_EQ(values_of_output(ones), "[1, 1, 1]");
}

TEST(ShapeOps, ConstantOfShapeWithSymbolicOrRuntimeShape) {
  Graph g;
  Node* shape = g.add_node("Shape", "shape", {g.add_input("x", DType::f32, {sym("N"), 4})}, {""});
  Node* n = g.add_node("ConstantOfShape", "c", {shape->outputs[0]}, {""});
  g.infer_shapes();
  EXPECT_EQ(shape_of_output(n), "[N, 4]");
  Graph g2;
  Node* runtime = infer(g2, "ConstantOfShape", {g2.add_input("s", DType::i64, {2})});
  EXPECT_EQ(runtime->outputs[0]->shape.size(), 2u);
  Graph g3;
  EXPECT_THROW(infer(g3, "ConstantOfShape", {g3.add_input("s", DType::i64, {sym("K")})}), UserError);
  Graph g4;
  EXPECT_THAT(user_error([&] { infer(g4, "ConstantOfShape", {i64_vector(g4, "s", {2, -3})}); }), HasSubstr("negative dim"));
}

TEST(ShapeOps, RangeOfConstants) {
  Graph g;
  Node* n = infer(g, "Range", {i64_scalar(g, "a", 0), i64_scalar(g, "b", 10), i64_scalar(g, "c", 3)});
  EXPECT_EQ(n->outputs[0]->dtype, DType::i64);
  EXPECT_EQ(shape_of_output(n), "[4]");
  EXPECT_EQ(values_of_output(n), "[0, 3, 6, 9]");
  Graph g2;
  Node* down = infer(g2, "Range", {i64_scalar(g2, "a", 5), i64_scalar(g2, "b", 0), i64_scalar(g2, "c", -2)});
  EXPECT_EQ(values_of_output(down), "[5, 3, 1]");
  Graph g3;
  Node* floats = infer(g3, "Range", {g3.add_constant("a", Tensor::scalar_f32(0)), g3.add_constant("b", Tensor::scalar_f32(1)),
                                     g3.add_constant("c", Tensor::scalar_f32(0.3f))});
  EXPECT_EQ(floats->outputs[0]->dtype, DType::f32);
  EXPECT_EQ(shape_of_output(floats), "[4]");
}

TEST(ShapeOps, RangeUpToASymbolicLimit) {
  Graph g;
  Node* shape = g.add_node("Shape", "shape", {g.add_input("x", DType::f32, {sym("N"), sym("S")})}, {""});
  Node* s = g.add_node("Gather", "s", {shape->outputs[0], i64_scalar(g, "one", 1)}, {""});
  Node* n = g.add_node("Range", "r", {i64_scalar(g, "zero", 0), s->outputs[0], i64_scalar(g, "step", 1)}, {""});
  g.infer_shapes();
  EXPECT_EQ(shape_of_output(n), "[S]");
}

TEST(ShapeOps, RangeWithRuntimeOperandsHasAFreshLength) {
  Graph g;
  Node* n = infer(g, "Range", {i64_scalar(g, "a", 0), g.add_input("b", DType::i64, {}), i64_scalar(g, "c", 1)});
  ASSERT_EQ(n->outputs[0]->shape.size(), 1u);
  EXPECT_TRUE(n->outputs[0]->shape[0].is_symbol());
}

TEST(ShapeOps, RangeRejectsZeroStepAndMixedTypes) {
  Graph g;
  EXPECT_THAT(user_error([&] { infer(g, "Range", {i64_scalar(g, "a", 0), i64_scalar(g, "b", 4), i64_scalar(g, "c", 0)}); }),
              HasSubstr("delta is 0"));
  Graph g2;
  EXPECT_THROW(infer(g2, "Range", {i64_scalar(g2, "a", 0), g2.add_constant("b", Tensor::scalar_f32(4)), i64_scalar(g2, "c", 1)}),
               UserError);
}

}  // namespace
}  // namespace tilefuse
