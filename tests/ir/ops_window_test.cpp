// Shape inference of Conv, ConvTranspose, the pools and our PointwiseDepthwiseConv, with symbolic
// batch and spatial dims.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "ops_test_util.h"

namespace tilefuse {
namespace {

using ::testing::HasSubstr;
using op_testing::infer;
using op_testing::shape_of_output;
using op_testing::sym;
using op_testing::user_error;
using Ints = std::vector<int64_t>;

Value* weight(Graph& g, std::vector<Dim> shape) { return g.add_input("w", DType::f32, std::move(shape)); }

TEST(WindowOps, ConvOutputFollowsStridesPadsAndDilations) {
  Graph g;
  Node* n = infer(g, "Conv", {g.add_input("x", DType::f32, {sym("N"), 3, 224, sym("W")}), weight(g, {64, 3, 7, 7})},
                  {{"strides", Ints{2, 2}}, {"pads", Ints{3, 3, 3, 3}}});
  EXPECT_EQ(shape_of_output(n), "[N, 64, 112, (W - 1)//2 + 1]");
  Graph g2;
  Node* d = infer(g2, "Conv", {g2.add_input("x", DType::f32, {1, 4, 10}), weight(g2, {8, 2, 3})},
                  {{"dilations", Ints{2}}, {"group", int64_t{2}}});
  EXPECT_EQ(shape_of_output(d), "[1, 8, 6]");
}

TEST(WindowOps, SamePaddingKeepsCeilOfSizeOverStride) {
  Graph g;
  Node* n = infer(g, "Conv", {g.add_input("x", DType::f32, {1, 3, sym("H"), 9}), weight(g, {4, 3, 3, 3})},
                  {{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2, 2}}});
  EXPECT_EQ(shape_of_output(n), "[1, 4, (H + 1)//2, 5]");
}

TEST(WindowOps, ConvRejectsChannelMismatchAndBadGroups) {
  Graph g;
  std::string msg = user_error([&] {
    infer(g, "Conv", {g.add_input("x", DType::f32, {1, 3, 8, 8}), weight(g, {4, 2, 3, 3})});
  });
  EXPECT_THAT(msg, HasSubstr("input channels and weight dim 1 * group"));
  Graph g2;
  msg = user_error([&] {
    infer(g2, "Conv", {g2.add_input("x", DType::f32, {1, 4, 8, 8}), weight(g2, {6, 1, 3, 3})}, {{"group", int64_t{4}}});
  });
  EXPECT_THAT(msg, HasSubstr("not a multiple of group"));
  Graph g3;
  msg = user_error([&] { infer(g3, "Conv", {g3.add_input("x", DType::f32, {1, 3, 2, 2}), weight(g3, {4, 3, 3, 3})}); });
  EXPECT_THAT(msg, HasSubstr("smaller than the window"));
}

TEST(WindowOps, ConvTransposeOutputShape) {
  Graph g;
  Node* n = infer(g, "ConvTranspose", {g.add_input("x", DType::f32, {sym("N"), 8, sym("H"), 5}), weight(g, {8, 2, 4, 4})},
                  {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"group", int64_t{2}}});
  EXPECT_EQ(shape_of_output(n), "[N, 4, 2*H, 10]");
  Graph g2;
  Node* s = infer(g2, "ConvTranspose", {g2.add_input("x", DType::f32, {1, 2, 3, 3}), weight(g2, {2, 1, 3, 3})},
                  {{"output_shape", Ints{7, 8}}, {"strides", Ints{2, 2}}});
  EXPECT_EQ(shape_of_output(s), "[1, 1, 7, 8]");
}

TEST(WindowOps, PoolsAndCeilMode) {
  Graph g;
  Node* n = infer(g, "MaxPool", {g.add_input("x", DType::f32, {sym("N"), 64, 112, 112})},
                  {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}, 2);
  EXPECT_EQ(shape_of_output(n), "[N, 64, 56, 56]");
  EXPECT_EQ(n->outputs[1]->dtype, DType::i64);  // Indices
  Graph g2;
  Node* c = infer(g2, "AveragePool", {g2.add_input("x", DType::f32, {1, 1, 6, 6})},
                  {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}});
  EXPECT_EQ(shape_of_output(c), "[1, 1, 3, 3]");
  // The last window would start in the end padding: dropped, as ONNX Runtime and PyTorch do.
  Graph g3;
  Node* d = infer(g3, "MaxPool", {g3.add_input("x", DType::f32, {1, 1, 5, 5})},
                  {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"pads", Ints{0, 0, 1, 1}}, {"ceil_mode", int64_t{1}}});
  EXPECT_EQ(shape_of_output(d), "[1, 1, 3, 3]");
}

TEST(WindowOps, GlobalPoolsKeepBatchAndChannels) {
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    Graph g;
    Node* n = infer(g, op, {g.add_input("x", DType::f32, {sym("N"), 32, sym("H"), sym("W")})});
    EXPECT_EQ(shape_of_output(n), "[N, 32, 1, 1]") << op;
  }
}

TEST(WindowOps, KernelShapeMustMatchTheWeight) {
  Graph g;
  std::string msg = user_error([&] {
    infer(g, "Conv", {g.add_input("x", DType::f32, {1, 3, 8, 8}), weight(g, {4, 3, 3, 3})},
          {{"kernel_shape", Ints{5, 5}}});
  });
  EXPECT_THAT(msg, HasSubstr("does not match the weight's spatial dims"));
}

// PointwiseDepthwiseConv (X, W1, W2, B1, B2): the depthwise window over the 1x1 expansion's E
// channels; a wrong weight or group, or an unknown activation, is named with its rule.
TEST(WindowOps, PointwiseDepthwiseConvShapeAndErrors) {
  auto pdw = [](Graph& g, std::vector<Dim> w1, std::vector<Dim> w2, AttributeMap attrs) {
    return infer(g, "PointwiseDepthwiseConv",
                 {g.add_input("x", DType::f32, {sym("N"), 16, 112, 112}), g.add_input("w1", DType::f32, std::move(w1)),
                  g.add_input("w2", DType::f32, std::move(w2))},
                 std::move(attrs));
  };
  const AttributeMap window = {{"group", int64_t{64}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}},
                               {"pointwise_activation", std::string("Relu")}, {"activation", std::string("HardSwish")}};
  Graph g;
  EXPECT_EQ(shape_of_output(pdw(g, {64, 16, 1, 1}, {64, 1, 3, 3}, window)), "[N, 64, 56, 56]");
  Graph g2;
  EXPECT_THAT(user_error([&] { pdw(g2, {64, 16, 3, 3}, {64, 1, 3, 3}, window); }), HasSubstr("must be a 1x1 weight"));
  Graph g3;
  AttributeMap grouped = window;
  grouped["group"] = int64_t{32};
  EXPECT_THAT(user_error([&] { pdw(g3, {64, 16, 1, 1}, {64, 1, 3, 3}, grouped); }), HasSubstr("must be the 64 channels"));
  Graph g4;
  EXPECT_THAT(user_error([&] { pdw(g4, {64, 16, 1, 1}, {32, 1, 3, 3}, window); }),
              HasSubstr("depthwise and pointwise weight dim 0"));
  Graph g5;
  AttributeMap unknown = window;
  unknown["pointwise_activation"] = std::string("Softplus");
  EXPECT_THAT(user_error([&] { pdw(g5, {64, 16, 1, 1}, {64, 1, 3, 3}, unknown); }),
              HasSubstr("pointwise_activation 'Softplus' is not one of"));
}

}  // namespace
}  // namespace tilefuse
