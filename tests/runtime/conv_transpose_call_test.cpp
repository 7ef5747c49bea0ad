// ConvTranspose as a product and a scatter against the reference kernel: 1-D and 2-D, strides 1-3,
// kernels smaller and larger than the stride (taps that overlap and taps that leave gaps), pads
// that crop, output_padding, dilations, groups, SAME padding, output_shape, with and without a
// bias, a batch of images, on 1 and 2 workers.
#include "runtime/conv_transpose_call.h"

#include <gtest/gtest.h>

#include "reference/interpreter.h"

namespace tilefuse::runtime {
namespace {

using Ints = std::vector<int64_t>;

struct TransposeCase {
  std::string name;
  Ints x, w;
  AttributeMap attrs;
  bool bias = true;
};

class ConvTransposeCall : public ::testing::TestWithParam<TransposeCase> {};

Tensor values(const Ints& shape, int salt) {
  Tensor t(DType::f32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(((i * 31 + salt) % 43) / 11.0 - 2.0);
  return t;
}

TEST_P(ConvTransposeCall, MatchesReference) {
  const TransposeCase& c = GetParam();
  if (!own_gemm_engine()) GTEST_SKIP() << "no AVX2: ConvTranspose stays on the reference kernel";
  Graph g;
  std::vector<Value*> inputs = {g.add_input("x", DType::f32, shape_of(c.x)), g.add_constant("w", values(c.w, 1))};
  const int64_t groups = c.attrs.count("group") ? std::get<int64_t>(c.attrs.at("group")) : 1, maps = c.w[1] * groups;
  if (c.bias) inputs.push_back(g.add_constant("b", values({maps}, 2)));
  Node* node = g.add_node("ConvTranspose", "up", inputs, {"y"}, c.attrs);
  g.infer_shapes();
  ASSERT_TRUE(conv_transpose_call_supports(*node));
  std::vector<Tensor> in = {values(c.x, 3), *node->input(1)->constant};
  if (c.bias) in.push_back(*node->input(2)->constant);
  const Tensor expected = reference::evaluate_node(*node, in).at(0);
  std::unique_ptr<LibraryCall> call = prepare_conv_transpose_call(*node, default_blocking(48 << 10, 2 << 20));
  for (int workers : {1, 2}) {
    ThreadTeam team(workers);
    std::vector<Tensor> outs = {Tensor(DType::f32, expected.shape())};
    call->run(team, in, outs);
    for (int64_t i = 0; i < expected.numel(); ++i) {
      // Sums of products in f32 in another order than the reference's double.
      EXPECT_NEAR(outs[0].data<float>()[i], expected.data<float>()[i], 2e-4) << c.name << " at " << i << " on "
                                                                             << workers << " workers";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Geometry, ConvTransposeCall,
    ::testing::Values(
        TransposeCase{"UNetUpsample", {1, 16, 12, 12}, {16, 8, 2, 2}, {{"strides", Ints{2, 2}}}},
        TransposeCase{"OverlappingTapsCropped", {2, 6, 7, 9}, {6, 5, 3, 3},
                      {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"output_padding", Ints{1, 1}}}},
        TransposeCase{"StrideOne", {1, 5, 8, 21}, {5, 4, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, false},
        TransposeCase{"GapsBetweenTaps", {1, 3, 5, 6}, {3, 2, 2, 2}, {{"strides", Ints{3, 3}}}},
        TransposeCase{"AsymmetricPadsDilated", {1, 4, 6, 10}, {4, 3, 3, 2},
                      {{"strides", Ints{2, 1}}, {"pads", Ints{2, 0, 0, 1}}, {"dilations", Ints{2, 3}}}},
        TransposeCase{"Groups", {2, 8, 5, 5}, {8, 3, 3, 3}, {{"strides", Ints{2, 2}}, {"group", int64_t{2}}}},
        TransposeCase{"SameUpper", {1, 4, 5, 7}, {4, 6, 3, 3},
                      {{"strides", Ints{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}},
        TransposeCase{"OutputShape", {1, 3, 4, 4}, {3, 2, 3, 3},
                      {{"strides", Ints{3, 2}}, {"output_shape", Ints{12, 9}}}},
        TransposeCase{"OneD", {2, 6, 30}, {6, 4, 5}, {{"strides", Ints{2}}, {"pads", Ints{2, 1}}}}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tilefuse::runtime
