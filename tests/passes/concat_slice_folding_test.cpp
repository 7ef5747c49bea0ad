// Slice(Concat(...)) that takes back one input whole is that input: both halves of torch.cat then
// chunk (the Concat is then gone), negative bounds and an open end, a slice that is a graph
// output (renamed, not lost); left alone: a slice across the boundary, part of another axis, a
// step of 2, and a Concat that something else still reads (it stays, the slice still folds).
// Each folded graph computes what the original did (reference interpreter, before and after).
#include "passes/concat_slice_folding.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace tilefuse::passes {
namespace {

using namespace pass_testing;

using Ints = std::vector<int64_t>;

Value* ints(Graph& g, const std::string& name, Ints v) {
  const auto n = static_cast<int64_t>(v.size());
  return g.add_constant(name, Tensor::from_vector<int64_t>(DType::i64, {n}, v));
}

// x = Concat(a [2, 3, 4], b [2, 5, 4], axis 1); slices of x as `slices` lists them
// ({starts, ends, axes, steps}), each through Exp to an output.
struct Joined {
  Graph g;
  explicit Joined(const std::vector<std::vector<Ints>>& slices, bool concat_is_output = false) {
    Value* a = g.add_input("a", DType::f32, {2, 3, 4});
    Value* b = g.add_input("b", DType::f32, {2, 5, 4});
    Value* x = g.add_node("Concat", "cat", {a, b}, {"x"}, {{"axis", int64_t{1}}})->outputs[0];
    std::vector<Value*> outs;
    for (size_t i = 0; i < slices.size(); ++i) {
      const std::string n = std::to_string(i);
      const std::vector<Ints>& s = slices[i];
      Value* part = g.add_node("Slice", "slice" + n,
                               {x, ints(g, "starts" + n, s[0]), ints(g, "ends" + n, s[1]), ints(g, "axes" + n, s[2]),
                                ints(g, "steps" + n, s[3])},
                               {"part" + n})->outputs[0];
      outs.push_back(g.add_node("Exp", "exp" + n, {part}, {"y" + n})->outputs[0]);
    }
    if (concat_is_output) outs.push_back(x);
    g.set_outputs(outs);
    g.infer_shapes();
  }
};

TEST(ConcatSliceFolding, BothHalvesOfAChunkAreTheConcatsInputs) {
  const std::vector<std::vector<Ints>> chunk = {{{0}, {3}, {1}, {1}}, {{3}, {INT64_MAX}, {-2}, {1}}};
  Joined before(chunk), after(chunk);
  EXPECT_EQ(fold_slices_of_concats(after.g), 2);
  EXPECT_EQ(count_op(after.g, "Slice"), 0);
  EXPECT_EQ(count_op(after.g, "Concat"), 0);
  expect_same_results(before.g, after.g);
}

TEST(ConcatSliceFolding, NegativeBoundsAndASliceThatIsAnOutput) {
  auto build = [] {
    Graph g;
    Value* a = g.add_input("a", DType::f32, {2, 3, 4});
    Value* b = g.add_input("b", DType::f32, {2, 5, 4});
    Value* x = g.add_node("Concat", "cat", {a, b}, {"x"}, {{"axis", int64_t{-2}}})->outputs[0];
    Value* tail = g.add_node("Slice", "tail", {x, ints(g, "s", {-5}), ints(g, "e", {8}), ints(g, "ax", {1})}, {"tail"})->outputs[0];
    g.set_outputs({tail});
    g.infer_shapes();
    return g;
  };
  Graph before = build(), after = build();
  EXPECT_EQ(fold_slices_of_concats(after), 1);
  EXPECT_EQ(count_op(after, "Concat"), 0);
  ASSERT_EQ(after.outputs().size(), 1u);
  EXPECT_EQ(after.outputs()[0]->name, "tail");
  expect_same_results(before, after);
}

TEST(ConcatSliceFolding, LeavesSlicesThatAreNotOneInput) {
  for (const std::vector<Ints>& s : std::vector<std::vector<Ints>>{
           {{1}, {5}, {1}, {1}},                // across the boundary
           {{0, 0}, {3, 2}, {1, 2}, {1, 1}},    // part of the last axis too
           {{3}, {8}, {1}, {2}}}) {             // every other element
    Joined before({s}), after({s});
    EXPECT_EQ(fold_slices_of_concats(after.g), 0);
    EXPECT_EQ(count_op(after.g, "Slice"), 1);
    expect_same_results(before.g, after.g);
  }
}

TEST(ConcatSliceFolding, AConcatStillReadElsewhereStays) {
  const std::vector<std::vector<Ints>> first = {{{0}, {3}, {1}, {1}}};
  Joined before(first, true), after(first, true);
  EXPECT_EQ(fold_slices_of_concats(after.g), 1);
  EXPECT_EQ(count_op(after.g, "Slice"), 0);
  EXPECT_EQ(count_op(after.g, "Concat"), 1);
  expect_same_results(before.g, after.g);
}

}  // namespace
}  // namespace tilefuse::passes
