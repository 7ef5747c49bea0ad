// Constant folding: folds what is fixed before run time, leaves what depends on input data.
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "passes/constant_folding.h"
#include "pass_test_util.h"

namespace tilefuse::passes {
namespace {

using pass_testing::count_op;

Value* i64_const(Graph& g, const std::string& name, std::vector<int64_t> dims, std::vector<int64_t> values) {
  return g.add_constant(name, Tensor::from_vector(DType::i64, std::move(dims), values));
}


// x -> Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [32])), as PyTorch exports x.view(B, -1).
Graph shape_chain(Dim batch) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {batch, Dim(4), Dim(8)});
  Node* shape = g.add_node("Shape", "shape", {x}, {"s"});
  Node* gather =
      g.add_node("Gather", "gather", {shape->outputs[0], i64_const(g, "zero", {}, {0})}, {"d0"}, {{"axis", int64_t{0}}});
  Node* unsq = g.add_node("Unsqueeze", "unsq", {gather->outputs[0], i64_const(g, "axes", {1}, {0})}, {"d0_1d"});
  Node* concat = g.add_node("Concat", "concat", {unsq->outputs[0], i64_const(g, "rest", {1}, {32})}, {"shp"},
                            {{"axis", int64_t{0}}});
  Node* reshape = g.add_node("Reshape", "reshape", {x, concat->outputs[0]}, {"y"});
  g.add_output(reshape->outputs[0]);
  g.infer_shapes();
  return g;
}

TEST(ConstantFolding, FoldsStaticShapeChain) {
  Graph g = shape_chain(Dim(2));
  EXPECT_EQ(fold_constants(g), 4);
  ASSERT_EQ(g.num_nodes(), 1u);
  Node* reshape = g.nodes()[0];
  EXPECT_EQ(reshape->op, "Reshape");
  ASSERT_TRUE(reshape->inputs[1]->is_constant());
  EXPECT_EQ(reshape->inputs[1]->name, "shp");
  EXPECT_EQ(reshape->inputs[1]->constant->to_i64_vector(), (std::vector<int64_t>{2, 32}));
  EXPECT_EQ(g.outputs()[0]->name, "y");
}

TEST(ConstantFolding, KeepsShapeOfSymbolicInput) {
  Graph g = shape_chain(Dim::symbol("batch"));
  fold_constants(g);
  EXPECT_EQ(count_op(g, "Shape"), 1);
  EXPECT_EQ(count_op(g, "Gather"), 1);
  EXPECT_EQ(count_op(g, "Reshape"), 1);
  EXPECT_FALSE(g.find_value("shp")->is_constant());
  EXPECT_EQ(g.outputs()[0]->shape, (Shape{Dim::symbol("batch"), Dim(32)}));
}

TEST(ConstantFolding, EvaluatesConstantArithmeticLeavesInputWork) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim(3)});
  Value* a = g.add_constant("a", Tensor::from_vector(DType::f32, {3}, std::vector<double>{1, 2, 3}));
  Value* b = g.add_constant("b", Tensor::from_vector(DType::f32, {3}, std::vector<double>{10, 20, 30}));
  Node* add = g.add_node("Add", "add", {a, b}, {"ab"});
  Node* mul = g.add_node("Mul", "mul", {x, add->outputs[0]}, {"y"});
  g.add_output(mul->outputs[0]);
  g.infer_shapes();
  EXPECT_EQ(fold_constants(g), 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.nodes()[0]->op, "Mul");
  const Value* ab = g.nodes()[0]->inputs[1];
  ASSERT_TRUE(ab->is_constant());
  EXPECT_EQ(ab->constant->get_f64(0), 11.0);
  EXPECT_EQ(ab->constant->get_f64(2), 33.0);
}

TEST(ConstantFolding, FoldedGraphOutputKeepsItsName) {
  Graph g;
  Value* a = g.add_constant("a", Tensor::from_vector(DType::i64, {2}, std::vector<int64_t>{1, 2}));
  Node* neg = g.add_node("Neg", "neg", {a}, {"out"});
  g.add_output(neg->outputs[0]);
  g.infer_shapes();
  EXPECT_EQ(fold_constants(g), 1);
  ASSERT_EQ(g.outputs().size(), 1u);
  EXPECT_EQ(g.outputs()[0]->name, "out");
  ASSERT_TRUE(g.outputs()[0]->is_constant());
  EXPECT_EQ(g.outputs()[0]->constant->to_i64_vector(), (std::vector<int64_t>{-1, -2}));
}

TEST(ConstantFolding, RespectsOutputSizeCap) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim(1000), Dim(1000)});
  Node* fill = g.add_node("ConstantOfShape", "fill", {i64_const(g, "dims", {2}, {1000, 1000})}, {"zeros"});
  Node* add = g.add_node("Add", "add", {x, fill->outputs[0]}, {"y"});
  g.add_output(add->outputs[0]);
  g.infer_shapes();
  ConstantFoldingOptions options;
  options.max_output_elements = 1000;
  EXPECT_EQ(fold_constants(g, options), 0);
  EXPECT_EQ(count_op(g, "ConstantOfShape"), 1);
}

}  // namespace
}  // namespace tilefuse::passes
