// Two Transposes in a row become one with the composed permutation, or an Identity where it keeps
// every axis in place, and compute what the pair did; a graph output keeps its name; a Transpose
// of anything else is left alone.
#include "passes/transpose_pairs.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace tilefuse::passes {
namespace {

using namespace pass_testing;

Graph pair_graph(const std::vector<int64_t>& p, const std::vector<int64_t>& q) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim(2), Dim(3), Dim(4)});
  Value* t = g.add_node("Transpose", "inner", {x}, {"t"}, {{"perm", p}})->outputs[0];
  AttributeMap outer;
  if (!q.empty()) outer["perm"] = q;  // empty: the default, which reverses the axes
  g.set_outputs({g.add_node("Transpose", "outer", {t}, {"y"}, outer)->outputs[0]});
  g.infer_shapes();
  return g;
}

TEST(TransposePairs, InversePermutationsLeaveAnIdentity) {
  Graph before = pair_graph({0, 2, 1}, {0, 2, 1}), after = pair_graph({0, 2, 1}, {0, 2, 1});
  EXPECT_EQ(fold_transpose_pairs(after), 1);
  EXPECT_EQ(count_op(after, "Transpose"), 0);
  EXPECT_EQ(count_op(after, "Identity"), 1);
  EXPECT_EQ(after.outputs()[0]->name, "y");
  expect_same_results(before, after);
}

TEST(TransposePairs, OtherPermutationsComposeIntoOne) {
  for (const auto& [p, q] : {std::pair<std::vector<int64_t>, std::vector<int64_t>>{{1, 2, 0}, {1, 2, 0}},
                             {{2, 0, 1}, {}}, {{0, 2, 1}, {1, 0, 2}}}) {
    Graph before = pair_graph(p, q), after = pair_graph(p, q);
    EXPECT_EQ(fold_transpose_pairs(after), 1);
    EXPECT_EQ(count_op(after, "Transpose"), 1);
    EXPECT_EQ(after.outputs()[0]->shape, before.outputs()[0]->shape);
    expect_same_results(before, after);
  }
}

TEST(TransposePairs, LeavesATransposeOfAnythingElse) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim(2), Dim(3)});
  Value* r = g.add_node("Relu", "relu", {x}, {"r"})->outputs[0];
  g.set_outputs({g.add_node("Transpose", "t", {r}, {"y"}, {{"perm", std::vector<int64_t>{1, 0}}})->outputs[0]});
  g.infer_shapes();
  EXPECT_EQ(fold_transpose_pairs(g), 0);
}

}  // namespace
}  // namespace tilefuse::passes
