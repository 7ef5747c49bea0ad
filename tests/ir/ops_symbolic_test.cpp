// The shape subgraphs PyTorch's exporter writes, on inputs with a symbolic batch (and sequence)
// dim: the symbols must survive into the Reshape/Expand/Range outputs.
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "ops_test_util.h"

namespace tilefuse {
namespace {

using op_testing::i64_scalar;
using op_testing::i64_vector;
using op_testing::shape_of_output;
using op_testing::sym;
using op_testing::values_of_output;

// Unsqueeze(Gather(Shape(x), index), 0): one dim of x as a 1-element shape piece.
Value* dim_piece(Graph& g, Value* x, int64_t index) {
  std::string tag = std::to_string(index);
  Node* shape = g.add_node("Shape", "shape" + tag, {x}, {""});
  Node* gather = g.add_node("Gather", "gather" + tag, {shape->outputs[0], i64_scalar(g, "idx" + tag, index)}, {""});
  Node* piece = g.add_node("Unsqueeze", "unsqueeze" + tag, {gather->outputs[0], i64_vector(g, "ax" + tag, {0})}, {""});
  return piece->outputs[0];
}

TEST(SymbolicShapes, FlattenHeadsKeepsTheBatchDim) {
  // x.view(x.size(0), -1) on f32[N, 12, 64]
  Graph g;
  Value* x = g.add_input("x", DType::f32, {sym("N"), 12, 64});
  Node* target = g.add_node("Concat", "target", {dim_piece(g, x, 0), i64_vector(g, "rest", {-1})}, {""}, {{"axis", int64_t{0}}});
  Node* reshape = g.add_node("Reshape", "reshape", {x, target->outputs[0]}, {""});
  g.infer_shapes();
  EXPECT_EQ(values_of_output(target), shape_to_string({sym("N"), -1}));
  EXPECT_EQ(shape_of_output(reshape), "[N, 768]");
}

TEST(SymbolicShapes, SplitHeadsWithBatchAndSequence) {
  // x.view(B, S, 12, 64) on f32[B, S, 768], then the scores' scale: Div(Cast(Shape[-1]), ...)
  Graph g;
  Value* x = g.add_input("x", DType::f32, {sym("B"), sym("S"), 768});
  Node* target = g.add_node("Concat", "target", {dim_piece(g, x, 0), dim_piece(g, x, 1), i64_vector(g, "heads", {12, 64})},
                            {""}, {{"axis", int64_t{0}}});
  Node* reshape = g.add_node("Reshape", "reshape", {x, target->outputs[0]}, {""});
  Node* transpose = g.add_node("Transpose", "transpose", {reshape->outputs[0]}, {""}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  g.infer_shapes();
  EXPECT_EQ(shape_of_output(reshape), shape_to_string({sym("B"), sym("S"), 12, 64}));
  EXPECT_EQ(shape_of_output(transpose), shape_to_string({sym("B"), 12, sym("S"), 64}));
}

TEST(SymbolicShapes, MergeHeadsWithArithmeticOnDims) {
  // y.reshape(B, S, H * D) where H * D comes from Mul on two gathered dims
  Graph g;
  Value* y = g.add_input("y", DType::f32, {sym("B"), sym("S"), 12, 64});
  Node* hd = g.add_node("Mul", "hd", {dim_piece(g, y, 2), dim_piece(g, y, 3)}, {""});
  Node* target = g.add_node("Concat", "target", {dim_piece(g, y, 0), dim_piece(g, y, 1), hd->outputs[0]}, {""},
                            {{"axis", int64_t{0}}});
  Node* reshape = g.add_node("Reshape", "reshape", {y, target->outputs[0]}, {""});
  g.infer_shapes();
  EXPECT_EQ(shape_of_output(reshape), shape_to_string({sym("B"), sym("S"), 768}));
}

TEST(SymbolicShapes, ExpandThroughConstantOfShapeAndWhere) {
  // mask.expand(B, 1, S, S), exported as ConstantOfShape / Mul / Equal / Where / Expand
  Graph g;
  Value* ids = g.add_input("ids", DType::i64, {sym("B"), sym("S")});
  Value* mask = g.add_input("mask", DType::boolean, {1, 1, 1, sym("S")});
  Node* target = g.add_node("Concat", "target", {dim_piece(g, ids, 0), i64_vector(g, "one", {1}), dim_piece(g, ids, 1),
                                                 dim_piece(g, ids, 1)},
                            {""}, {{"axis", int64_t{0}}});
  Node* ones = g.add_node("ConstantOfShape", "ones", {i64_vector(g, "four", {4})}, {""},
                          {{"value", Tensor::from_vector(DType::i64, {1}, std::vector<int64_t>{1})}});
  Node* minus = g.add_node("Mul", "minus", {ones->outputs[0], i64_scalar(g, "neg", -1)}, {""});
  Node* eq = g.add_node("Equal", "eq", {target->outputs[0], minus->outputs[0]}, {""});
  Node* where = g.add_node("Where", "where", {eq->outputs[0], ones->outputs[0], target->outputs[0]}, {""});
  Node* expand = g.add_node("Expand", "expand", {mask, where->outputs[0]}, {""});
  g.infer_shapes();
  EXPECT_EQ(shape_of_output(expand), shape_to_string({sym("B"), 1, sym("S"), sym("S")}));
}

TEST(SymbolicShapes, PositionIdsFromRange) {
  // torch.arange(S).unsqueeze(0) with S from the input's shape
  Graph g;
  Value* ids = g.add_input("ids", DType::i64, {sym("B"), sym("S")});
  Node* shape = g.add_node("Shape", "shape", {ids}, {""});
  Node* s = g.add_node("Gather", "s", {shape->outputs[0], i64_scalar(g, "one", 1)}, {""});
  Node* range = g.add_node("Range", "range", {i64_scalar(g, "zero", 0), s->outputs[0], i64_scalar(g, "step", 1)}, {""});
  Node* pos = g.add_node("Unsqueeze", "pos", {range->outputs[0], i64_vector(g, "ax", {0})}, {""});
  Node* sum = g.add_node("Add", "sum", {ids, pos->outputs[0]}, {""});
  g.infer_shapes();
  EXPECT_EQ(shape_of_output(pos), "[1, S]");
  EXPECT_EQ(shape_of_output(sum), shape_to_string({sym("B"), sym("S")}));
}

// Equal(shape - 1, -1): a dim expression is taken to be >= 0, the graph records the assumption,
// and inputs that break it are refused by name instead of being run on a wrong plan.
TEST(SymbolicShapes, DimExpressionComparedWithMinusOneIsAnAssumptionThatRunsCheck) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {sym("seq")});
  Node* shape = g.add_node("Shape", "shape", {x}, {""});
  Node* less = g.add_node("Sub", "less", {shape->outputs[0], i64_vector(g, "one", {1})}, {""});
  Node* eq = g.add_node("Equal", "eq", {less->outputs[0], i64_vector(g, "minus_one", {-1})}, {""});
  g.infer_shapes();
  EXPECT_EQ(values_of_output(eq), "[0]");
  ASSERT_EQ(g.assumptions().size(), 1u);
  EXPECT_EQ(g.assumptions()[0].dim.to_string(), "seq - 1");
  EXPECT_NO_THROW(g.check_assumptions({{"seq", 1}}));
  std::string msg = op_testing::user_error([&] { g.check_assumptions({{"seq", 0}}); });
  EXPECT_NE(msg.find("seq - 1 = -1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("node 'eq' (Equal)"), std::string::npos) << msg;
}

// Scores [B, 128] plus a mask [B, seq]: the sum is [B, max(128, seq)], and the graph takes seq to
// be 1 or that max, so a run with seq = 64 is refused by name rather than read out of bounds.
TEST(SymbolicShapes, BroadcastOfTwoDifferentDimsIsAnAssumptionThatRunsCheck) {
  Graph g;
  Value* scores = g.add_input("scores", DType::f32, {sym("B"), Dim(128)});
  Value* mask = g.add_input("mask", DType::f32, {sym("B"), sym("seq")});
  Node* add = g.add_node("Add", "add", {scores, mask}, {""});
  g.infer_shapes();
  EXPECT_EQ(shape_of_output(add), "[B, max(128, seq)]");
  ASSERT_EQ(g.broadcast_assumptions().size(), 2u);  // 128 and seq, each 1 or the max
  EXPECT_NO_THROW(g.check_assumptions({{"B", 2}, {"seq", 128}}));
  EXPECT_NO_THROW(g.check_assumptions({{"B", 2}, {"seq", 1}}));
  std::string msg = op_testing::user_error([&] { g.check_assumptions({{"B", 2}, {"seq", 64}}); });
  EXPECT_NE(msg.find("seq = 64, which does not broadcast to max(128, seq) = 128"), std::string::npos) << msg;
  EXPECT_NE(msg.find("node 'add' (Add)"), std::string::npos) << msg;
}

// numpy broadcasts an empty dim against a 1 to an empty dim; the graph's max(d, e) would be 1.
// Such a run is refused with that reason, not run at size 1.
TEST(SymbolicShapes, AnEmptyDimAgainstARunTimeOneIsRefusedByName) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {sym("d")});
  Value* y = g.add_input("y", DType::f32, {sym("e")});
  g.add_node("Add", "add", {x, y}, {""});
  g.infer_shapes();
  EXPECT_NO_THROW(g.check_assumptions({{"d", 0}, {"e", 0}}));
  std::string msg = op_testing::user_error([&] { g.check_assumptions({{"d", 0}, {"e", 1}}); });
  EXPECT_NE(msg.find("make d = 0 against a 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("an empty dim broadcast against 1 is not supported"), std::string::npos) << msg;
}

// Equal dims, or a 1 against anything, assume nothing.
TEST(SymbolicShapes, SettledBroadcastsAssumeNothing) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {sym("B"), sym("seq")});
  Value* row = g.add_input("row", DType::f32, {Dim(1), sym("seq")});
  g.add_node("Mul", "mul", {x, row}, {""});
  g.infer_shapes();
  EXPECT_TRUE(g.broadcast_assumptions().empty());
}

}  // namespace
}  // namespace tilefuse
