// 1x1 Conv -> depthwise Conv -> PointwiseDepthwiseConv: folded in an inverted residual block's
// shape with each convolution's bias and activation kept, and the folded graph computes what
// the original did (reference interpreter, before and after); left alone where the expanded
// tensor is small, has another reader or is a graph output, where the 1x1 convolution is
// strided or has a residual, and where the second convolution is not depthwise.
#include "passes/pointwise_depthwise_folding.h"

#include <gtest/gtest.h>

#include "passes/conv_epilogue_folding.h"
#include "pass_test_util.h"

namespace tilefuse::passes {
namespace {

using namespace pass_testing;
using Ints = std::vector<int64_t>;

// x[1, 4, 9, 8] -> 1x1 conv to 12 channels (`pointwise_attrs`) [+ residual] [-> HardSwish] ->
// 3x3 conv (pads 1, stride 2, `groups`) [-> Relu].
struct Options {
  AttributeMap pointwise_attrs;
  int64_t groups = 12;
  bool activations = true;
  bool biases = true;
  bool residual = false;  // the expansion adds another 1x1 convolution of x
};

struct Block {
  Graph g;
  Value* x = nullptr;
  Value* expanded = nullptr;
  Value* y = nullptr;
  explicit Block(const Options& o = {}) {
    x = g.add_input("x", DType::f32, {1, 4, 9, 8});
    std::vector<Value*> in = {x, g.add_constant("w1", filled({12, 4, 1, 1}, 1))};
    if (o.biases) in.push_back(g.add_constant("b1", filled({12}, 2)));
    expanded = g.add_node("Conv", "expand", in, {"e"}, o.pointwise_attrs)->outputs[0];
    if (o.residual) {
      Value* other = g.add_node("Conv", "other", {x, g.add_constant("w3", filled({12, 4, 1, 1}, 5))}, {"o"})->outputs[0];
      expanded = g.add_node("Add", "add", {expanded, other}, {"s"})->outputs[0];
    }
    if (o.activations) expanded = g.add_node("HardSwish", "hs", {expanded}, {"e_act"})->outputs[0];
    in = {expanded, g.add_constant("w2", filled({12, 12 / o.groups, 3, 3}, 3))};
    if (o.biases) in.push_back(g.add_constant("b2", filled({12}, 4)));
    y = g.add_node("Conv", "dw", in, {"d"}, {{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}, {"group", o.groups}})
            ->outputs[0];
    if (o.activations) y = g.add_node("Relu", "relu", {y}, {"y"})->outputs[0];
  }
  void finish(std::vector<Value*> outputs = {}) {
    g.set_outputs(outputs.empty() ? std::vector<Value*>{y} : outputs);
    g.infer_shapes();
  }
  // The epilogues folded first, as the planner does, then this pass with no size limit.
  int fold() {
    fold_conv_epilogues(g);
    return fold_pointwise_depthwise(g, 0);
  }
};

TEST(PointwiseDepthwiseFolding, FoldsAnExpansionAndItsDepthwiseConvolution) {
  Block before, after;
  before.finish(), after.finish();
  EXPECT_EQ(after.fold(), 1);
  ASSERT_EQ(after.g.num_nodes(), 1u);
  const Node& n = *after.g.nodes()[0];
  EXPECT_EQ(n.op, "PointwiseDepthwiseConv");
  EXPECT_EQ(n.attr_string("pointwise_activation", ""), "HardSwish");
  EXPECT_EQ(n.attr_string("activation", ""), "Relu");
  EXPECT_EQ(n.attr_ints("strides"), (Ints{2, 2}));
  EXPECT_EQ(n.input(2)->name, "w2");
  EXPECT_EQ(n.input(3)->name, "b1");
  EXPECT_EQ(n.outputs[0]->name, "y");  // the graph output keeps its name
  expect_same_results(before.g, after.g);
}

TEST(PointwiseDepthwiseFolding, FoldsWithoutActivationsOrBiases) {
  const Options bare{.activations = false, .biases = false};
  Block before(bare), after(bare);
  before.finish(), after.finish();
  EXPECT_EQ(after.fold(), 1);
  const Node& n = *after.g.nodes()[0];
  EXPECT_FALSE(n.has_input(3));
  EXPECT_FALSE(n.has_attr("pointwise_activation"));
  expect_same_results(before.g, after.g);
}

TEST(PointwiseDepthwiseFolding, LeavesASmallExpansionToTheCache) {
  Block b;
  b.finish();
  fold_conv_epilogues(b.g);
  EXPECT_EQ(fold_pointwise_depthwise(b.g), 0);  // 12 x 9 x 8 floats, far below kMinExpandedBytes
  EXPECT_EQ(fold_pointwise_depthwise(b.g, 12 * 9 * 8 * 4), 1);
}

TEST(PointwiseDepthwiseFolding, LeavesAnExpansionAnotherOpReads) {
  Block b;
  b.finish({b.y, b.g.add_node("Neg", "neg", {b.expanded}, {"n"})->outputs[0]});
  EXPECT_EQ(b.fold(), 0);
  Block out;
  out.finish({out.y, out.expanded});  // a graph output
  EXPECT_EQ(out.fold(), 0);
}

TEST(PointwiseDepthwiseFolding, LeavesOtherConvolutions) {
  Block strided({.pointwise_attrs = {{"strides", Ints{2, 2}}}});
  strided.finish();
  EXPECT_EQ(strided.fold(), 0);
  Block padded({.pointwise_attrs = {{"pads", Ints{1, 1, 1, 1}}}});
  padded.finish();
  EXPECT_EQ(padded.fold(), 0);
  Block grouped({.groups = 3});  // not depthwise: 4 channels per group
  grouped.finish();
  EXPECT_EQ(grouped.fold(), 0);
}

TEST(PointwiseDepthwiseFolding, LeavesAnExpansionWithAResidual) {
  Block b({.residual = true});
  b.finish();
  fold_conv_epilogues(b.g);
  ASSERT_EQ(count_op(b.g, "FusedConv"), 2);  // the residual folded into the expansion
  EXPECT_EQ(fold_pointwise_depthwise(b.g, 0), 0);
}

}  // namespace
}  // namespace tilefuse::passes
