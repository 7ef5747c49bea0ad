// Taps that read only padding are cut from a convolution: DeepLab's dilated 3 x 3 on a map
// smaller than its dilation becomes 1 x 1; one axis may be cut while the other keeps its taps; a
// strided, a grouped and a 1-D convolution are cut too. Left alone: a convolution every tap of
// which reads the input, auto_pad, a weight that is not a constant, a symbolic input size, and a
// cut that would need negative pads. Each trimmed graph computes what the original did
// (reference interpreter).
#include "passes/conv_tap_trimming.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace tilefuse::passes {
namespace {

using namespace pass_testing;
using Ints = std::vector<int64_t>;

struct ConvSpec {
  Ints x, w;
  AttributeMap attrs;
  bool weight_is_input = false;
};

Graph conv_graph(const ConvSpec& c) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, shape_of(c.x));
  Value* w = c.weight_is_input ? g.add_input("w", DType::f32, shape_of(c.w)) : g.add_constant("w", filled(c.w, 5));
  Value* b = g.add_constant("b", filled({c.w[0]}, 2));
  g.add_output(g.add_node("Conv", "conv", {x, w, b}, {"y"}, c.attrs)->outputs[0]);
  g.infer_shapes();
  return g;
}

const Node& only_conv(const Graph& g) {
  for (const Node* n : g.nodes()) {
    if (n->op == "Conv") return *n;
  }
  throw std::runtime_error("no Conv");
}

// Trims the convolution, expects its weight's spatial shape and pads, and the same results.
void expect_trimmed(const ConvSpec& c, const Ints& kernel, const Ints& pads) {
  Graph before = conv_graph(c), after = conv_graph(c);
  ASSERT_EQ(trim_conv_taps(after), 1);
  const Node& conv = only_conv(after);
  const std::vector<int64_t>& w = conv.input(1)->constant->shape();
  EXPECT_EQ(Ints(w.begin() + 2, w.end()), kernel);
  EXPECT_EQ(conv.attr_ints("pads"), pads);
  EXPECT_EQ(after.outputs()[0]->shape, before.outputs()[0]->shape);
  expect_same_results(before, after);
}

void expect_untouched(const ConvSpec& c) {
  Graph g = conv_graph(c);
  EXPECT_EQ(trim_conv_taps(g), 0);
}

AttributeMap dilated(int64_t d, int64_t pad) {
  return {{"dilations", Ints{d, d}}, {"pads", Ints{pad, pad, pad, pad}}, {"kernel_shape", Ints{3, 3}}};
}

TEST(ConvTapTrimming, AsppBranchOnASmallMapBecomesOneByOne) {
  expect_trimmed({{1, 8, 4, 4}, {6, 8, 3, 3}, dilated(12, 12)}, {1, 1}, {0, 0, 0, 0});
  expect_trimmed({{1, 8, 3, 3}, {6, 8, 3, 3}, dilated(4, 4)}, {1, 1}, {0, 0, 0, 0});
}

TEST(ConvTapTrimming, OneAxisCutTheOtherKept) {
  // Rows: 6 of them, every tap lands on some; columns: 2, only the centre tap does.
  expect_trimmed({{1, 2, 6, 2}, {3, 2, 3, 3}, dilated(2, 2)}, {3, 1}, {2, 0, 2, 0});
}

TEST(ConvTapTrimming, StridedGroupedAndOneDimensional) {
  expect_trimmed({{1, 4, 5, 3}, {4, 2, 3, 3},
                  {{"dilations", Ints{3, 3}}, {"pads", Ints{3, 3, 3, 3}}, {"strides", Ints{2, 2}}, {"group", int64_t{2}}}},
                 {3, 1}, {3, 0, 3, 0});
  expect_trimmed({{2, 3, 3}, {5, 3, 5}, {{"dilations", Ints{4}}, {"pads", Ints{8, 8}}}}, {1}, {0, 0});
}

TEST(ConvTapTrimming, AsymmetricPadsKeepTheReadTaps) {
  // Pads 4 before, 0 after, width 3, dilation 2: taps 0 and 1 read -4..-2 and -2..0: tap 1 reads
  // column 0 at the last output; tap 0 never reads the input.
  expect_trimmed({{1, 1, 3, 3}, {1, 1, 1, 3}, {{"dilations", Ints{1, 2}}, {"pads", Ints{0, 4, 0, 0}}}}, {1, 2},
                 {0, 2, 0, 0});
}

TEST(ConvTapTrimming, LeavesAlone) {
  expect_untouched({{1, 3, 9, 9}, {4, 3, 3, 3}, dilated(2, 2)});  // every tap reads the input
  expect_untouched({{1, 8, 4, 4}, {6, 8, 3, 3}, {{"dilations", Ints{12, 12}}, {"auto_pad", std::string("SAME_UPPER")}}});
  expect_untouched({{1, 8, 4, 4}, {6, 8, 3, 3}, dilated(12, 12), true});  // the weight is an input
  // One output, whose tap 0 reads column -1 and taps 1 and 2 columns 3 and 7: cutting tap 0
  // would need a pad of -3.
  expect_untouched({{1, 1, 1, 8}, {1, 1, 1, 3}, {{"dilations", Ints{1, 4}}, {"pads", Ints{0, 1, 0, 0}}}});
}

TEST(ConvTapTrimming, LeavesSymbolicSizesAlone) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim(1), Dim(8), Dim::symbol("h"), Dim(4)});
  Value* w = g.add_constant("w", filled({6, 8, 3, 3}, 5));
  g.add_output(g.add_node("Conv", "conv", {x, w}, {"y"}, dilated(12, 12))->outputs[0]);
  g.infer_shapes();
  EXPECT_EQ(trim_conv_taps(g), 0);
}

}  // namespace
}  // namespace tilefuse::passes
