// A zero Pad before a Conv folds into the Conv's pads: asymmetric pads added to the Conv's own,
// pads given as attributes (opset < 11), as inputs with an axes list (opset 18), a Pad read by
// two Convs, a 1-D convolution, a strided and dilated one. Left alone: a nonzero value, reflect
// mode, pads on the batch axis, negative pads, a Pad a Relu reads too, a padded weight, a Conv
// with auto_pad, a Pad that is a graph output. Each folded graph computes what the original did
// (reference interpreter).
#include "passes/pad_into_conv.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace tilefuse::passes {
namespace {

using namespace pass_testing;

Value* ints(Graph& g, const std::string& name, const std::vector<int64_t>& v) {
  return g.add_constant(name, Tensor::from_vector<int64_t>(DType::i64, {static_cast<int64_t>(v.size())}, v));
}

struct PadSpec {
  std::vector<int64_t> pads;            // ONNX order: begins, then ends
  std::vector<int64_t> axes;            // empty: every axis
  float value = 0.0f;
  std::string mode = "constant";
  bool as_attributes = false;           // opset < 11
};

// y = Conv(Pad(x [1, 3, 9, 8]), w [4, 3, 3, 3], conv_attrs), and a Relu of the padded x or the
// padded x itself as outputs too where asked.
Graph pad_conv(const PadSpec& spec, AttributeMap conv_attrs = {{"pads", std::vector<int64_t>{1, 0, 0, 1}}},
               bool relu_reads_pad = false, bool pad_is_output = false) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {1, 3, 9, 8});
  Node* pad;
  if (spec.as_attributes) {
    pad = g.add_node("Pad", "pad", {x}, {"padded"}, {{"pads", spec.pads}, {"value", spec.value}, {"mode", spec.mode}});
  } else {
    std::vector<Value*> in = {x, ints(g, "pads", spec.pads), g.add_constant("value", Tensor::scalar_f32(spec.value))};
    if (!spec.axes.empty()) in.push_back(ints(g, "axes", spec.axes));
    pad = g.add_node("Pad", "pad", in, {"padded"}, {{"mode", spec.mode}});
  }
  Value* w = g.add_constant("w", filled({4, 3, 3, 3}, 5));
  std::vector<Value*> outs = {g.add_node("Conv", "conv", {pad->outputs[0], w}, {"y"}, std::move(conv_attrs))->outputs[0]};
  if (relu_reads_pad) outs.push_back(g.add_node("Relu", "relu", {pad->outputs[0]}, {"r"})->outputs[0]);
  if (pad_is_output) outs.push_back(pad->outputs[0]);
  g.set_outputs(outs);
  g.infer_shapes();
  return g;
}

void expect_folded(const PadSpec& spec, AttributeMap conv_attrs, const std::vector<int64_t>& want_pads) {
  Graph before = pad_conv(spec, conv_attrs), after = pad_conv(spec, conv_attrs);
  EXPECT_EQ(fold_pads_into_convs(after), 1);
  EXPECT_EQ(count_op(after, "Pad"), 0);
  for (Node* n : after.nodes()) {
    if (n->op == "Conv") {
      EXPECT_EQ(n->attr_ints("pads"), want_pads);
    }
  }
  expect_same_results(before, after);
}

TEST(PadIntoConv, ZeroPadsAddToTheConvsOwn) {
  expect_folded({{0, 0, 2, 1, 0, 0, 1, 3}}, {{"pads", std::vector<int64_t>{1, 0, 0, 1}}}, {3, 1, 1, 4});
}
TEST(PadIntoConv, PadsAsAttributes) {
  expect_folded({{0, 0, 1, 1, 0, 0, 1, 1}, {}, 0.0f, "constant", true}, {}, {1, 1, 1, 1});
}
TEST(PadIntoConv, PadsOfListedAxes) {
  expect_folded({{2, 0, 1, 2}, {2, 3}}, {}, {2, 0, 1, 2});  // opset 18
}
TEST(PadIntoConv, StridedAndDilated) {
  expect_folded({{0, 0, 1, 2, 0, 0, 2, 1}},
                {{"strides", std::vector<int64_t>{2, 2}}, {"dilations", std::vector<int64_t>{2, 1}}}, {1, 2, 2, 1});
}

TEST(PadIntoConv, APadReadByTwoConvsFoldsIntoBoth) {
  auto build = [] {
    Graph g;
    Value* x = g.add_input("x", DType::f32, {2, 2, 11});  // 1-D convolutions
    Value* p = g.add_node("Pad", "pad", {x, ints(g, "pads", {0, 0, 3, 0, 0, 1})}, {"p"})->outputs[0];
    Value* a = g.add_node("Conv", "a", {p, g.add_constant("wa", filled({3, 2, 5}, 1))}, {"ya"})->outputs[0];
    Value* b = g.add_node("Conv", "b", {p, g.add_constant("wb", filled({1, 2, 2}, 2))}, {"yb"},
                          {{"pads", std::vector<int64_t>{1, 1}}})->outputs[0];
    g.set_outputs({a, b});
    g.infer_shapes();
    return g;
  };
  Graph before = build(), after = build();
  EXPECT_EQ(fold_pads_into_convs(after), 1);
  EXPECT_EQ(count_op(after, "Pad"), 0);
  expect_same_results(before, after);
}

TEST(PadIntoConv, PadsThatAreNotTheConvsOwnStay) {
  const std::vector<PadSpec> kept = {
      {{0, 0, 1, 1, 0, 0, 1, 1}, {}, 0.5f},                 // not zeros
      {{0, 0, 1, 1, 0, 0, 1, 1}, {}, 0.0f, "reflect"},      // not constant
      {{1, 0, 1, 1, 0, 0, 1, 1}},                           // the batch axis
      {{0, 0, 1, -1, 0, 0, 1, 1}},                          // a crop
  };
  for (const PadSpec& spec : kept) {
    Graph g = pad_conv(spec);
    EXPECT_EQ(fold_pads_into_convs(g), 0) << spec.mode << " " << spec.value;
    EXPECT_EQ(count_op(g, "Pad"), 1);
  }
  const PadSpec zero{{0, 0, 1, 1, 0, 0, 1, 1}};
  Graph read_twice = pad_conv(zero, {}, true);
  EXPECT_EQ(fold_pads_into_convs(read_twice), 0);
  Graph output = pad_conv(zero, {}, false, true);
  EXPECT_EQ(fold_pads_into_convs(output), 0);
  Graph same = pad_conv(zero, {{"auto_pad", std::string("SAME_UPPER")}});
  EXPECT_EQ(fold_pads_into_convs(same), 0);
}

TEST(PadIntoConv, APaddedWeightStays) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {1, 2, 6, 6});
  Value* w = g.add_input("w", DType::f32, {2, 2, 1, 1});
  Value* pw = g.add_node("Pad", "pad", {w, ints(g, "pads", {0, 0, 1, 1, 0, 0, 1, 1})}, {"pw"})->outputs[0];
  g.set_outputs({g.add_node("Conv", "conv", {x, pw}, {"y"})->outputs[0]});
  g.infer_shapes();
  EXPECT_EQ(fold_pads_into_convs(g), 0);
}

}  // namespace
}  // namespace tilefuse::passes
