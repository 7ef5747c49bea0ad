// Pointwise ops move into a Concat's parts: a chain of them one op at a time (on any axis, a
// negative one too), an operand constant along the axis stays shared, and a graph output keeps
// its name. Left alone: an operand that varies along the axis, a Concat read twice or that is a
// graph output. Each rewritten graph computes what the original did (reference interpreter).
#include "passes/pointwise_through_concat.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace tilefuse::passes {
namespace {

using namespace pass_testing;

// y = (Concat(a, Exp(b), axis) * scale) + 1, with scale of the given shape.
Graph chain(int64_t axis, const std::vector<int64_t>& scale_shape) {
  Graph g;
  Value* a = g.add_input("a", DType::f32, {3, 4, 5});
  Value* b = g.add_input("b", DType::f32, {3, 4, 5});
  Value* e = g.add_node("Exp", "exp", {b}, {"e"})->outputs[0];
  Value* joined = g.add_node("Concat", "cat", {a, e}, {"joined"}, {{"axis", axis}})->outputs[0];
  Value* scale = g.add_constant("scale", filled(scale_shape, 3));
  Value* scaled = g.add_node("Mul", "mul", {joined, scale}, {"scaled"})->outputs[0];
  g.set_outputs({g.add_node("Add", "add", {scaled, g.add_constant("one", Tensor::scalar_f32(1.0f))}, {"y"})->outputs[0]});
  g.infer_shapes();
  return g;
}

TEST(PointwiseThroughConcat, AChainMovesIntoTheParts) {
  for (int64_t axis : {0, 1, 2, -1}) {
    Graph before = chain(axis, {}), after = chain(axis, {});
    EXPECT_EQ(pointwise_through_concat(after), 2) << axis;
    ASSERT_EQ(after.outputs()[0]->producer->op, "Concat");
    EXPECT_EQ(after.outputs()[0]->name, "y");
    EXPECT_EQ(count_op(after, "Mul"), 2);
    EXPECT_EQ(count_op(after, "Add"), 2);
    EXPECT_EQ(count_op(after, "Concat"), 1);
    expect_same_results(before, after);
  }
}

TEST(PointwiseThroughConcat, AnOperandConstantAlongTheAxisIsShared) {
  Graph before = chain(1, {5}), after = chain(1, {5});  // a bias of the last axis, concat on axis 1
  EXPECT_EQ(pointwise_through_concat(after), 2);
  expect_same_results(before, after);
  Graph kept = chain(0, {6, 1, 1});  // varies along the concatenated axis: each part would need its slice
  EXPECT_EQ(pointwise_through_concat(kept), 0);
}

TEST(PointwiseThroughConcat, AConcatReadElsewhereStays) {
  Graph twice = chain(0, {});
  Value* joined = twice.find_value("joined");
  ASSERT_NE(joined, nullptr);
  twice.set_outputs({twice.outputs()[0], twice.add_node("Neg", "neg", {joined}, {"z"})->outputs[0]});
  twice.infer_shapes();
  EXPECT_EQ(pointwise_through_concat(twice), 0);
  Graph output = chain(0, {});
  output.set_outputs({output.outputs()[0], output.find_value("joined")});
  EXPECT_EQ(pointwise_through_concat(output), 0);
}

}  // namespace
}  // namespace tilefuse::passes
