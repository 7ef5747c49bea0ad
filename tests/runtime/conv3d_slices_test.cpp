// 3-D Conv and ConvTranspose as 2-D steps over depth slices, against the reference kernel:
// stride, padding (unequal at the two ends) and dilation in depth, groups, a bias, two images, a
// FusedConv's activation and residual, a ConvTranspose's output_padding, on 1 and 2 workers; and
// what it leaves to the reference (auto_pad, a weight that is no constant).
#include "runtime/conv3d_slices.h"

#include <gtest/gtest.h>

#include "ir/tensor_compare.h"
#include "reference/interpreter.h"

namespace tilefuse::runtime {
namespace {

using Ints = std::vector<int64_t>;

Tensor values(const Ints& shape, int salt, double scale) {
  Tensor t(DType::f32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, scale * (((i * 37 + salt * 11) % 97) / 48.5 - 1.0));
  return t;
}

int64_t group_of(const AttributeMap& attrs) {
  auto it = attrs.find("group");
  return it == attrs.end() ? 1 : std::get<int64_t>(it->second);
}

struct Case {
  std::string name;
  Ints x, w;
  AttributeMap attrs;
  bool bias = true;
  std::string op = "Conv";
  bool residual = false;  // a FusedConv's Z, added before its activation
};

TEST(Conv3dSlices, MatchesReference) {
  const std::vector<Case> cases = {
      {"Same3x3x3", {2, 4, 6, 7, 9}, {5, 4, 3, 3, 3}, {{"pads", Ints{1, 1, 1, 1, 1, 1}}}},
      {"DepthStridePadDilation", {1, 3, 11, 6, 5}, {4, 3, 3, 2, 2},
       {{"strides", Ints{2, 1, 2}}, {"pads", Ints{2, 0, 1, 1, 1, 0}}, {"dilations", Ints{2, 1, 1}}}},
      {"Grouped", {1, 6, 5, 8, 8}, {6, 2, 3, 1, 1}, {{"group", int64_t{3}}, {"pads", Ints{1, 0, 0, 1, 0, 0}}}, false},
      {"FusedRelu", {1, 2, 4, 5, 6}, {3, 2, 2, 3, 3},
       {{"pads", Ints{0, 1, 1, 0, 1, 1}}, {"activation", std::string("Relu")}}, true, "FusedConv"},
      // ConvTranspose's weight is [C, M/g, kd, kh, kw].
      {"TransposedUNetUp2", {2, 4, 3, 5, 6}, {4, 3, 2, 2, 2}, {{"strides", Ints{2, 2, 2}}}, true, "ConvTranspose"},
      {"TransposedPadsOutputPadding", {1, 3, 4, 5, 5}, {3, 2, 3, 3, 3},
       {{"strides", Ints{2, 2, 1}}, {"pads", Ints{1, 0, 1, 1, 1, 0}}, {"output_padding", Ints{1, 1, 0}}}, false,
       "ConvTranspose"},
      {"TransposedGroupedDilated", {1, 4, 5, 4, 4}, {4, 1, 2, 2, 2},
       {{"group", int64_t{2}}, {"dilations", Ints{2, 1, 1}}, {"strides", Ints{1, 2, 2}}}, true, "ConvTranspose"},
      // R3D's basic block: the second convolution adds the shortcut before its ReLU.
      {"FusedResidualRelu", {2, 3, 4, 5, 6}, {3, 3, 3, 3, 3},
       {{"pads", Ints{1, 1, 1, 1, 1, 1}}, {"activation", std::string("Relu")}}, true, "FusedConv", true},
      {"FusedResidualNoBias", {1, 2, 5, 4, 4}, {4, 2, 3, 1, 1}, {{"strides", Ints{2, 1, 1}}}, false, "FusedConv", true}};
  for (const Case& c : cases) {
    Graph g;
    std::vector<Value*> inputs = {g.add_input("x", DType::f32, shape_of(c.x)), g.add_constant("w", values(c.w, 2, 0.3))};
    const int64_t maps = c.op == "ConvTranspose" ? c.w[1] * group_of(c.attrs) : c.w[0];
    inputs.push_back(c.bias ? g.add_constant("b", values({maps}, 3, 1.0)) : nullptr);
    Node* probe = nullptr;  // the output's shape, for the residual
    if (c.residual) {
      Graph shapes;
      std::vector<Value*> probe_inputs = {shapes.add_input("x", DType::f32, shape_of(c.x)), shapes.add_constant("w", values(c.w, 2, 0.3))};
      probe = shapes.add_node("Conv", "conv", probe_inputs, {"y"}, AttributeMap{});
      for (const auto& [name, value] : c.attrs) {
        if (name != "activation") probe->attrs[name] = value;
      }
      shapes.infer_shapes();
      inputs.push_back(g.add_input("z", DType::f32, probe->outputs[0]->shape));
    }
    while (inputs.back() == nullptr) inputs.pop_back();
    Node* node = g.add_node(c.op, "conv", inputs, {"y"}, c.attrs);
    g.infer_shapes();
    ASSERT_TRUE(conv3d_slices_supports(*node)) << c.name;
    std::vector<Tensor> in = {values(c.x, 1, 1.0)};
    for (size_t i = 1; i < inputs.size(); ++i) {
      if (inputs[i] == nullptr) in.emplace_back();
      else in.push_back(inputs[i]->constant ? *inputs[i]->constant : values(static_dims(inputs[i]->shape), 4, 1.0));
    }
    const Tensor expected = reference::evaluate_node(*node, in).at(0);
    std::unique_ptr<LibraryCall> call = prepare_conv3d_slices(*node, default_blocking(48 << 10, 2 << 20));
    for (int workers : {1, 2}) {
      ThreadTeam team(workers);
      std::vector<Tensor> outs = {Tensor(DType::f32, expected.shape())};
      call->run(team, in, outs);
      const CompareResult r = compare_tensors(outs[0], expected, {1e-5, 1e-5});
      EXPECT_TRUE(r.ok) << c.name << " on " << workers << " workers: " << r.message;
    }
  }
}

TEST(Conv3dSlices, LeavesAutoPadAndComputedWeightsToTheReference) {
  auto supports = [](const std::function<void(Graph&, std::vector<Value*>&, AttributeMap&, std::string&)>& edit) {
    Graph g;
    std::vector<Value*> inputs = {g.add_input("x", DType::f32, shape_of({1, 2, 4, 4, 4})),
                                  g.add_constant("w", values({2, 2, 1, 1, 1}, 1, 1.0))};
    AttributeMap attrs;
    std::string op = "Conv";
    edit(g, inputs, attrs, op);
    Node* node = g.add_node(op, "conv", inputs, {"y"}, attrs);
    g.infer_shapes();
    return conv3d_slices_supports(*node);
  };
  EXPECT_TRUE(supports([](Graph&, std::vector<Value*>&, AttributeMap&, std::string&) {}));
  EXPECT_TRUE(supports([](Graph& g, std::vector<Value*>& in, AttributeMap&, std::string& op) {
    op = "FusedConv";
    in.push_back(nullptr);
    in.push_back(g.add_input("z", DType::f32, shape_of({1, 2, 4, 4, 4})));
  }));
  EXPECT_FALSE(supports([](Graph&, std::vector<Value*>&, AttributeMap& a, std::string&) {
    a["auto_pad"] = std::string("SAME_UPPER");
  }));
  EXPECT_FALSE(supports([](Graph& g, std::vector<Value*>& in, AttributeMap&, std::string&) {
    in[1] = g.add_input("w_in", DType::f32, shape_of({2, 2, 1, 1, 1}));
  }));
}

}  // namespace
}  // namespace tilefuse::runtime
