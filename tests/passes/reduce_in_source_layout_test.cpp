// Reductions of transposed tensors reduce the source: through a chain of pointwise ops with
// single-value operands, keepdims either way, kept axes in the same order (the result as it is,
// or a Reshape) or another (a Transpose of the result), axes as attribute or input. Left alone:
// a Transpose read elsewhere, an operand that is not a single value. Each rewritten graph computes
// what the original did (reference interpreter).
#include "passes/reduce_in_source_layout.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace tilefuse::passes {
namespace {

using namespace pass_testing;

struct Spec {
  std::vector<int64_t> perm;
  std::vector<int64_t> axes;
  int64_t keepdims = 0;
  bool axes_as_input = false;
  bool transpose_read_twice = false;
  bool full_operand = false;  // a second operand of the transposed shape
};

// y = Reduce(Sigmoid(Transpose(x [2, 3, 4]) + c), axes).
Graph reduce_of_transpose(const Spec& s) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {2, 3, 4});
  Value* t = g.add_node("Transpose", "t", {x}, {"t"}, {{"perm", s.perm}})->outputs[0];
  g.infer_shapes();
  Value* c = s.full_operand ? g.add_input("c", DType::f32, t->shape) : g.add_constant("c", Tensor::scalar_f32(0.5f));
  Value* f = g.add_node("Sigmoid", "sig", {g.add_node("Add", "add", {t, c}, {"a"})->outputs[0]}, {"f"})->outputs[0];
  std::vector<Value*> inputs = {f};
  AttributeMap attrs = {{"keepdims", s.keepdims}};
  if (s.axes_as_input) {
    inputs.push_back(g.add_constant("axes", Tensor::from_vector<int64_t>(DType::i64, {static_cast<int64_t>(s.axes.size())}, s.axes)));
  } else {
    attrs["axes"] = s.axes;
  }
  Value* y = g.add_node(s.axes_as_input ? "ReduceSum" : "ReduceMean", "reduce", inputs, {"y"}, attrs)->outputs[0];
  g.set_outputs({y});
  if (s.transpose_read_twice) g.add_output(g.add_node("Neg", "neg", {t}, {"z"})->outputs[0]);
  g.infer_shapes();
  return g;
}

void expect_rewritten(const Spec& s, int transposes_left, int reshapes) {
  Graph before = reduce_of_transpose(s), after = reduce_of_transpose(s);
  EXPECT_EQ(reduce_in_source_layout(after), 1);
  EXPECT_EQ(count_op(after, "Transpose"), transposes_left);
  EXPECT_EQ(count_op(after, "Reshape"), reshapes);
  EXPECT_EQ(after.outputs()[0]->name, "y");
  EXPECT_EQ(after.outputs()[0]->shape, before.outputs()[0]->shape);
  expect_same_results(before, after);
}

TEST(ReduceInSourceLayout, KeptAxesInTheSameOrderNeedNothingAfter) {
  expect_rewritten({.perm = {0, 2, 1}, .axes = {1}}, 0, 0);                  // the transposed sum of rows
  expect_rewritten({.perm = {0, 2, 1}, .axes = {-2}, .axes_as_input = true}, 0, 0);
  expect_rewritten({.perm = {0, 2, 1}, .axes = {1}, .keepdims = 1}, 0, 1);  // a size-1 axis moves: a view
}

TEST(ReduceInSourceLayout, KeptAxesInAnotherOrderAreTransposedBack) {
  expect_rewritten({.perm = {2, 0, 1}, .axes = {1}}, 1, 0);
  expect_rewritten({.perm = {2, 0, 1}, .axes = {1}, .keepdims = 1}, 1, 0);
  expect_rewritten({.perm = {1, 2, 0}, .axes = {0, 2}}, 0, 0);
}

TEST(ReduceInSourceLayout, LeavesATransposeReadElsewhereOrAnOperandOfItsShape) {
  Graph twice = reduce_of_transpose({.perm = {0, 2, 1}, .axes = {1}, .transpose_read_twice = true});
  EXPECT_EQ(reduce_in_source_layout(twice), 0);
  Graph full = reduce_of_transpose({.perm = {0, 2, 1}, .axes = {1}, .full_operand = true});
  EXPECT_EQ(reduce_in_source_layout(full), 0);
}

}  // namespace
}  // namespace tilefuse::passes
