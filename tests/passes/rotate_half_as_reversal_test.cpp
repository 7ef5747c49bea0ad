// rotate_half (Concat of x's halves, swapped, one negated) becomes a reversed Slice of x split
// in halves, signed and merged back: on the last axis and on a middle one, with the other half
// negated, and through a Transpose that keeps the last axis last (the halves are then split
// before it). Left alone: halves not x's exactly, and halves in their own order. Each rewritten
// graph computes what the original did (reference interpreter, before and after).
#include "passes/rotate_half_as_reversal.h"

#include <limits>

#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace tilefuse::passes {
namespace {

using namespace pass_testing;

Value* ints(Graph& g, const std::string& name, const std::vector<int64_t>& v) {
  return g.add_constant(g.unique_value_name(name), Tensor::from_vector<int64_t>(DType::i64, {static_cast<int64_t>(v.size())}, v));
}

Value* slice(Graph& g, Value* x, int64_t start, int64_t end, int64_t axis) {
  return g.add_node("Slice", g.unique_value_name("slice"), {x, ints(g, "s", {start}), ints(g, "e", {end}), ints(g, "a", {axis})},
                    {g.unique_value_name("sliced")})->outputs[0];
}

struct Rotation {
  int64_t axis = -1;                 // of x [2, 3, 8] (or its transpose)
  int64_t first_start = 4, first_end = std::numeric_limits<int64_t>::max(), second_start = 0, second_end = 4;
  bool negate_first = true, negate_second = false, transposed = false;
};

// y = x * 3 + rotate(x): x read directly too, as attention reads q.
Graph rotation_graph(const Rotation& r) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {2, 3, 8});
  if (r.transposed) x = g.add_node("Transpose", "t", {x}, {"xt"}, {{"perm", std::vector<int64_t>{1, 0, 2}}})->outputs[0];
  Value* a = slice(g, x, r.first_start, r.first_end, r.axis);
  Value* b = slice(g, x, r.second_start, r.second_end, r.axis);
  if (r.negate_first) a = g.add_node("Neg", "neg_a", {a}, {"na"})->outputs[0];
  if (r.negate_second) b = g.add_node("Neg", "neg_b", {b}, {"nb"})->outputs[0];
  Value* rotated = g.add_node("Concat", "cat", {a, b}, {"rotated"}, {{"axis", r.axis}})->outputs[0];
  Value* scaled = g.add_node("Mul", "mul", {x, g.add_constant("three", Tensor::scalar_f32(3.0f))}, {"scaled"})->outputs[0];
  g.set_outputs({g.add_node("Add", "add", {scaled, rotated}, {"y"})->outputs[0]});
  g.infer_shapes();
  return g;
}

void expect_rewritten(const Rotation& r) {
  Graph before = rotation_graph(r), after = rotation_graph(r);
  EXPECT_EQ(rotate_half_as_reversal(after), 1);
  EXPECT_EQ(count_op(after, "Concat"), 0);
  expect_same_results(before, after);
}

TEST(RotateHalfAsReversal, TheLastAxisTheMiddleOneAndEitherHalfNegated) {
  expect_rewritten({});
  Rotation middle;  // axis 1 of the transpose [3, 2, 8]: halves of length 1
  middle.transposed = true;
  middle.axis = 1;
  middle.first_start = 1;
  middle.first_end = 2;
  middle.second_end = 1;
  expect_rewritten(middle);
  Rotation second;
  second.negate_first = false;
  second.negate_second = true;
  expect_rewritten(second);
  Rotation neither;
  neither.negate_first = false;
  expect_rewritten(neither);
}

TEST(RotateHalfAsReversal, ThroughATransposeThatKeepsTheLastAxis) {
  Rotation r;
  r.transposed = true;
  Graph after = rotation_graph(r);
  ASSERT_EQ(rotate_half_as_reversal(after), 1);
  EXPECT_EQ(count_op(after, "Transpose"), 2);  // x's own, and the split halves moved the same way
  expect_rewritten(r);
}

TEST(RotateHalfAsReversal, LeavesOtherConcats) {
  Rotation not_halves;
  not_halves.first_start = 3;  // [3, 7) and [0, 4): 8 elements, but not x's halves
  not_halves.first_end = 7;
  Rotation in_order;
  in_order.first_start = 0;
  in_order.first_end = 4;
  in_order.second_start = 4;
  in_order.second_end = 8;
  for (const Rotation& r : {not_halves, in_order}) {
    Graph g = rotation_graph(r);
    EXPECT_EQ(rotate_half_as_reversal(g), 0);
    EXPECT_EQ(count_op(g, "Concat"), 1);
  }
}

}  // namespace
}  // namespace tilefuse::passes
