// Tile with constant repeats becomes Reshape -> Expand -> Reshape (a repeat count on the first,
// the last, both or no axis), an Expand to its input's own shape is its input, and a rewritten
// Tile or Expand that is a graph output keeps its name. Left alone: repeats computed at run
// time. Each rewritten graph computes what the original did (reference interpreter).
#include "passes/tile_as_expand.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace tilefuse::passes {
namespace {

using namespace pass_testing;

Value* ints(Graph& g, const std::string& name, const std::vector<int64_t>& v) {
  return g.add_constant(name, Tensor::from_vector<int64_t>(DType::i64, {static_cast<int64_t>(v.size())}, v));
}

// y = Tile(x [3, 5], repeats), then Neg unless the Tile is the output itself.
Graph tile_graph(const std::vector<int64_t>& repeats, bool tile_is_output = false) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {3, 5});
  Value* tiled = g.add_node("Tile", "tile", {x, ints(g, "repeats", repeats)}, {"tiled"})->outputs[0];
  g.set_outputs({tile_is_output ? tiled : g.add_node("Neg", "neg", {tiled}, {"y"})->outputs[0]});
  g.infer_shapes();
  return g;
}

TEST(TileAsExpand, RepeatsOfAnyAxisBecomeABroadcast) {
  for (const std::vector<int64_t>& repeats : std::vector<std::vector<int64_t>>{{4, 1}, {1, 3}, {2, 3}}) {
    Graph before = tile_graph(repeats), after = tile_graph(repeats);
    EXPECT_EQ(tile_as_expand(after), 1);
    EXPECT_EQ(count_op(after, "Tile"), 0);
    EXPECT_EQ(count_op(after, "Expand"), 1);
    EXPECT_EQ(count_op(after, "Reshape"), 2);
    expect_same_results(before, after);
  }
}

TEST(TileAsExpand, RepeatsOfOneAreTheInputAndOutputsKeepTheirNames) {
  Graph before = tile_graph({1, 1}), after = tile_graph({1, 1});
  EXPECT_EQ(tile_as_expand(after), 1);
  EXPECT_EQ(count_op(after, "Tile"), 0);
  expect_same_results(before, after);
  Graph out_before = tile_graph({2, 1}, true), out_after = tile_graph({2, 1}, true);
  EXPECT_EQ(tile_as_expand(out_after), 1);
  EXPECT_EQ(out_after.outputs()[0]->name, "tiled");
  expect_same_results(out_before, out_after);
}

TEST(TileAsExpand, AnExpandToItsOwnShapeIsItsInput) {
  auto build = [](std::vector<int64_t> shape) {
    Graph g;
    Value* x = g.add_input("x", DType::f32, {4, 1, 6});
    Value* e = g.add_node("Expand", "expand", {x, ints(g, "shape", shape)}, {"e"})->outputs[0];
    g.set_outputs({g.add_node("Exp", "exp", {e}, {"y"})->outputs[0]});
    g.infer_shapes();
    return g;
  };
  Graph before = build({1, 1, 1}), after = build({1, 1, 1});
  EXPECT_EQ(tile_as_expand(after), 1);
  EXPECT_EQ(count_op(after, "Expand"), 0);
  expect_same_results(before, after);
  Graph broadcast = build({4, 3, 6});  // a real broadcast stays
  EXPECT_EQ(tile_as_expand(broadcast), 0);
}

TEST(TileAsExpand, LeavesRepeatsComputedAtRunTime) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {3, 5});
  Value* repeats = g.add_input("repeats", DType::i64, {2});
  g.set_outputs({g.add_node("Tile", "tile", {x, repeats}, {"y"})->outputs[0]});
  g.infer_shapes();
  EXPECT_EQ(tile_as_expand(g), 0);
}

}  // namespace
}  // namespace tilefuse::passes
