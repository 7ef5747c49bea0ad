// Conv [+ Add(residual)] [+ activation] -> FusedConv: folded in a ResNet block's shape and for
// each activation the pass knows (SiLU written out as x * Sigmoid(x) too), left alone where the Conv's output has another reader, the
// Add broadcasts, or Clip's bounds are not constant; the folded graph computes what the
// original did (reference interpreter, before and after).
#include "passes/conv_epilogue_folding.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace tilefuse::passes {
namespace {

using namespace pass_testing;



// x[1, 4, 5, 5] -> conv 3x3 (pads 1, 4 maps) -> y; then whatever a test adds after it.
struct ConvGraph {
  Graph g;
  Value* x = nullptr;
  Value* y = nullptr;
  ConvGraph() {
    x = g.add_input("x", DType::f32, {1, 4, 5, 5});
    Node* conv = g.add_node("Conv", "conv", {x, g.add_constant("w", filled({4, 4, 3, 3}, 1)), g.add_constant("b", filled({4}, 2))},
                            {"c"}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
    y = conv->outputs[0];
  }
  Value* then(const std::string& op, std::vector<Value*> more = {}, AttributeMap attrs = {}) {
    more.insert(more.begin(), y);
    y = g.add_node(op, op + "_" + std::to_string(g.num_nodes()), more, {op + "_out"}, std::move(attrs))->outputs[0];
    return y;
  }
  void finish(std::vector<Value*> outputs = {}) {
    if (outputs.empty()) outputs = {y};
    g.set_outputs(outputs);
    g.infer_shapes();
  }
};


TEST(ConvEpilogueFolding, FoldsSiluWrittenOutAndTheSigmoidOp) {
  // y * Sigmoid(y) in both operand orders, after the residual or right after the Conv; Sigmoid.
  for (int form = 0; form < 3; ++form) {
    auto build = [&](ConvGraph& c) {
      if (form == 1) c.y = c.g.add_node("Add", "add", {c.y, c.x}, {"sum"})->outputs[0];
      Value* pre = c.y;
      Value* sig = c.then("Sigmoid");
      if (form < 2) c.y = c.g.add_node("Mul", "silu", form == 0 ? std::vector<Value*>{pre, sig} : std::vector<Value*>{sig, pre}, {"s"})->outputs[0];
      c.finish();
    };
    ConvGraph before, after;
    build(before), build(after);
    EXPECT_EQ(fold_conv_epilogues(after.g), form == 1 ? 2 : 1) << form;
    ASSERT_EQ(after.g.num_nodes(), 1u) << form;
    EXPECT_EQ(after.g.nodes()[0]->attr_string("activation", ""), form < 2 ? "Silu" : "Sigmoid") << form;
    expect_same_results(before.g, after.g);
  }
}

TEST(ConvEpilogueFolding, FoldsAResidualBlockIntoOneConv) {
  for (bool residual_first : {false, true}) {
    auto build = [&](ConvGraph& c) {
      Value* skip = c.x;  // the block's input, added back
      Node* add = c.g.add_node("Add", "add", residual_first ? std::vector<Value*>{skip, c.y} : std::vector<Value*>{c.y, skip},
                               {"sum"});
      c.y = add->outputs[0];
      c.then("Relu");
      c.finish();
    };
    ConvGraph before, after;
    build(before), build(after);
    EXPECT_EQ(fold_conv_epilogues(after.g), 2);
    ASSERT_EQ(after.g.num_nodes(), 1u);
    const Node& fused = *after.g.nodes()[0];
    EXPECT_EQ(fused.op, "FusedConv");
    EXPECT_EQ(fused.attr_string("activation", ""), "Relu");
    EXPECT_EQ(fused.input(3)->name, "x");
    EXPECT_EQ(after.g.outputs()[0]->name, "Relu_out");
    expect_same_results(before.g, after.g);
  }
}

TEST(ConvEpilogueFolding, FoldsEachActivation) {
  auto constant = [](ConvGraph& c, const char* name, float v) {
    Tensor t(DType::f32, {});
    t.set_f64(0, v);
    return c.g.add_constant(name, t);
  };
  using Build = std::function<void(ConvGraph&)>;
  const std::vector<std::pair<std::string, Build>> cases = {
      {"Relu6", [&](ConvGraph& c) { c.then("Clip", {constant(c, "lo", 0.0f), constant(c, "hi", 6.0f)}); }},
      {"ClipBelowOnly", [&](ConvGraph& c) { c.then("Clip", {constant(c, "lo", -1.0f)}); }},
      {"HardSigmoid", [&](ConvGraph& c) { c.then("HardSigmoid", {}, {{"alpha", 0.3}, {"beta", 0.4}}); }},
      {"HardSwish", [&](ConvGraph& c) { c.then("HardSwish"); }},
  };
  for (const auto& [name, build] : cases) {
    SCOPED_TRACE(name);
    ConvGraph before, after;
    build(before), build(after);
    before.finish(), after.finish();
    EXPECT_EQ(fold_conv_epilogues(after.g), 1);
    EXPECT_EQ(count_op(after.g, "FusedConv"), 1);
    EXPECT_EQ(after.g.num_nodes(), 1u);
    expect_same_results(before.g, after.g);
  }
}

TEST(ConvEpilogueFolding, LeavesAnythingElseAlone) {
  {
    ConvGraph c;  // the Conv's output is also a graph output
    Value* conv_out = c.y;
    c.then("Relu");
    c.finish({c.y, conv_out});
    EXPECT_EQ(fold_conv_epilogues(c.g), 0);
  }
  {
    ConvGraph c;  // the Add broadcasts a per-channel vector: not a residual
    Tensor v = filled({1, 4, 1, 1}, 5);
    c.then("Add", {c.g.add_constant("v", v)});
    c.finish();
    EXPECT_EQ(fold_conv_epilogues(c.g), 0);
  }
  {
    ConvGraph c;  // Clip with a bound computed at run time
    Value* hi = c.g.add_input("hi", DType::f32, {});
    c.then("Clip", {c.g.add_constant("lo", Tensor(DType::f32, {})), hi});
    c.finish();
    EXPECT_EQ(fold_conv_epilogues(c.g), 0);
  }
  {
    ConvGraph c;  // an activation it cannot express, then one it can: the Relu is not after the Conv
    c.then("Tanh");
    c.then("Relu");
    c.finish();
    EXPECT_EQ(fold_conv_epilogues(c.g), 0);
  }
  {
    ConvGraph c;  // two activations: only the first folds
    c.then("Relu");
    c.then("HardSwish");
    c.finish();
    EXPECT_EQ(fold_conv_epilogues(c.g), 1);
    EXPECT_EQ(count_op(c.g, "HardSwish"), 1);
  }
}

}  // namespace
}  // namespace tilefuse::passes
