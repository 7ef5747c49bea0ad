// DepthToSpace (DCR and CRD) and SpaceToDepth become Reshape -> Transpose -> Reshape, with a
// static or a symbolic batch, and a rewritten node that is a graph output keeps its name. Left
// alone: a symbolic height (the Reshapes could not name it). Each rewritten graph computes what
// the original did (reference interpreter).
#include "passes/depth_space_as_transpose.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace tilefuse::passes {
namespace {

using namespace pass_testing;

// y = op(x [batch, 8, 4, 6]) (then Neg unless the op is the output), blocksize 2.
Graph graph_of(const std::string& op, const std::string& mode, Dim batch = Dim(2), bool op_is_output = false,
               Dim height = Dim(4)) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {batch, Dim(8), height, Dim(6)});
  AttributeMap attrs = {{"blocksize", int64_t{2}}};
  if (!mode.empty()) attrs["mode"] = mode;
  Value* moved = g.add_node(op, "op", {x}, {"moved"}, attrs)->outputs[0];
  g.set_outputs({op_is_output ? moved : g.add_node("Neg", "neg", {moved}, {"y"})->outputs[0]});
  g.infer_shapes();
  return g;
}

TEST(DepthSpaceAsTranspose, EveryModeBecomesATransposeBetweenReshapes) {
  for (const auto& [op, mode] : std::vector<std::pair<std::string, std::string>>{
           {"DepthToSpace", ""}, {"DepthToSpace", "DCR"}, {"DepthToSpace", "CRD"}, {"SpaceToDepth", ""}}) {
    Graph before = graph_of(op, mode), after = graph_of(op, mode);
    EXPECT_EQ(depth_space_as_transpose(after), 1) << op << " " << mode;
    EXPECT_EQ(count_op(after, op), 0);
    EXPECT_EQ(count_op(after, "Transpose"), 1);
    EXPECT_EQ(count_op(after, "Reshape"), 2);
    EXPECT_EQ(after.outputs()[0]->shape, before.outputs()[0]->shape);
    expect_same_results(before, after);
  }
}

TEST(DepthSpaceAsTranspose, KeepsASymbolicBatchAndTheOutputsName) {
  Graph symbolic = graph_of("DepthToSpace", "CRD", Dim::symbol("N"));
  EXPECT_EQ(depth_space_as_transpose(symbolic), 1);
  EXPECT_EQ(symbolic.outputs()[0]->shape, (Shape{Dim::symbol("N"), Dim(2), Dim(8), Dim(12)}));
  Graph before = graph_of("SpaceToDepth", "", Dim(1), true), after = graph_of("SpaceToDepth", "", Dim(1), true);
  EXPECT_EQ(depth_space_as_transpose(after), 1);
  EXPECT_EQ(after.outputs()[0]->name, "moved");
  expect_same_results(before, after);
}

TEST(DepthSpaceAsTranspose, LeavesASymbolicHeight) {
  Graph g = graph_of("DepthToSpace", "DCR", Dim(1), false, Dim::symbol("H"));
  EXPECT_EQ(depth_space_as_transpose(g), 0);
}

}  // namespace
}  // namespace tilefuse::passes
