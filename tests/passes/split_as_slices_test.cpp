// A Split becomes a Slice per used part, each part's bounds its place along the axis: equal and
// unequal parts, a negative axis, a part that is a graph output (it keeps its name), an unused
// part (no Slice); parts after the first slice the input through an Identity. Left alone: a
// split whose parts are symbolic along the axis. Each rewritten graph computes what the
// original did (reference interpreter, before and after).
#include "passes/split_as_slices.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace tilefuse::passes {
namespace {

using namespace pass_testing;

// x [4, 9, 6] split on `axis` into `sizes`; each part through Exp to an output, except `unused`.
Graph split_graph(int64_t axis, const std::vector<int64_t>& sizes, int unused = -1, bool part_is_output = false) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {4, 9, 6});
  const auto n = static_cast<int64_t>(sizes.size());
  Value* split_sizes = g.add_constant("sizes", Tensor::from_vector<int64_t>(DType::i64, {n}, sizes));
  std::vector<std::string> names;
  for (int64_t i = 0; i < n; ++i) names.push_back("part" + std::to_string(i));
  const std::vector<Value*> parts = g.add_node("Split", "split", {x, split_sizes}, names, {{"axis", axis}})->outputs;
  std::vector<Value*> outs;
  for (int64_t i = 0; i < n; ++i) {
    if (i != unused) outs.push_back(g.add_node("Exp", "exp" + std::to_string(i), {parts[i]}, {"y" + std::to_string(i)})->outputs[0]);
  }
  if (part_is_output) outs.push_back(parts[0]);
  g.set_outputs(outs);
  g.infer_shapes();
  return g;
}

TEST(SplitAsSlices, EqualAndUnequalPartsOnAnyAxis) {
  for (const auto& [axis, sizes] : std::vector<std::pair<int64_t, std::vector<int64_t>>>{
           {1, {3, 3, 3}}, {1, {2, 7}}, {-1, {1, 4, 1}}, {0, {4}}}) {
    Graph before = split_graph(axis, sizes), after = split_graph(axis, sizes);
    EXPECT_EQ(split_as_slices(after), 1);
    EXPECT_EQ(count_op(after, "Split"), 0);
    EXPECT_EQ(count_op(after, "Slice"), static_cast<int>(sizes.size()));
    EXPECT_EQ(count_op(after, "Identity"), static_cast<int>(sizes.size()) - 1);  // a name of its own per later part
    expect_same_results(before, after);
  }
}

TEST(SplitAsSlices, AnOutputPartKeepsItsNameAndAnUnusedPartIsDropped) {
  Graph before = split_graph(2, {2, 2, 2}, 1, true), after = split_graph(2, {2, 2, 2}, 1, true);
  EXPECT_EQ(split_as_slices(after), 1);
  EXPECT_EQ(count_op(after, "Slice"), 2);
  EXPECT_EQ(after.outputs().back()->name, "part0");
  EXPECT_EQ(after.outputs().back()->producer->op, "Slice");
  expect_same_results(before, after);
}

TEST(SplitAsSlices, LeavesPartsOfSymbolicLength) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim::symbol("N"), Dim(4)});
  const std::vector<Value*> parts =
      g.add_node("Split", "split", {x}, {"a", "b"}, {{"axis", int64_t{0}}, {"num_outputs", int64_t{2}}})->outputs;
  g.set_outputs({g.add_node("Add", "add", {parts[0], parts[1]}, {"y"})->outputs[0]});
  g.infer_shapes();
  EXPECT_EQ(split_as_slices(g), 0);
  EXPECT_EQ(count_op(g, "Split"), 1);
}

}  // namespace
}  // namespace tilefuse::passes
