// Winograd's F(2x2, 3x3) convolution against the reference kernel, through the prepared library
// call that chooses it: outputs with odd sides (half-used tiles), tile rows longer than a
// transform segment and crossing B panels, asymmetric, missing and SAME padding, two images,
// more channels than a depth block, maps that are not a multiple of the micro-kernel's rows,
// few tiles (the maps split between the workers), FusedConv's residual and activations; on 1,
// 2 and 3 workers. And which convolutions it takes.
#include <gtest/gtest.h>

#include "runtime/conv_winograd.h"
#include "runtime/cpu_isa.h"
#include "runtime/conv_case.h"

namespace tilefuse::runtime {
namespace {

using namespace conv_test;

class ConvWinograd : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvWinograd, MatchesReference) {
  if (vector_isa() < VectorIsa::avx2) GTEST_SKIP() << "Winograd's transforms need AVX2";
  const ConvCase& c = GetParam();
  Graph g;
  std::vector<Tensor> inputs;
  Node* conv = build_conv(g, c, inputs);
  ASSERT_TRUE(winograd_suits(*conv)) << c.name;
  expect_matches_reference(c, *conv, inputs, {1, 2, 3});
}

const Ints kPad1 = {1, 1, 1, 1};

INSTANTIATE_TEST_SUITE_P(
    Geometry, ConvWinograd,
    ::testing::Values(ConvCase{"ResNetLike", {1, 32, 14, 14}, {48, 32, 3, 3}, {{"pads", kPad1}}},
                      ConvCase{"OddSidesTwoImages", {2, 32, 13, 11}, {20, 32, 3, 3}, {{"pads", kPad1}}},
                      ConvCase{"Unpadded", {1, 32, 20, 37}, {16, 32, 3, 3}, {}},
                      ConvCase{"AsymmetricPads", {1, 33, 15, 19}, {19, 33, 3, 3}, {{"pads", Ints{0, 2, 1, 0}}}},
                      ConvCase{"SameUpper", {1, 32, 16, 9}, {24, 32, 3, 3}, {{"auto_pad", std::string("SAME_UPPER")}}},
                      ConvCase{"WideRows", {1, 32, 6, 100}, {16, 32, 3, 3}, {{"pads", kPad1}}},
                      ConvCase{"DeeperThanADepthBlock", {1, 400, 12, 12}, {30, 400, 3, 3}, {{"pads", kPad1}}},
                      ConvCase{"ManyMapsFewTiles", {1, 40, 11, 11}, {100, 40, 3, 3}, {{"pads", kPad1}}},
                      ConvCase{"NoBias", {1, 32, 12, 12}, {16, 32, 3, 3}, {{"pads", kPad1}}, false},
                      ConvCase{"ResidualRelu", {2, 40, 15, 13}, {50, 40, 3, 3}, {{"pads", kPad1}}, true, true, true, "Relu"},
                      ConvCase{"ResidualHardSwish", {1, 32, 9, 21}, {16, 32, 3, 3}, {{"pads", kPad1}}, true, true, true,
                               "HardSwish"},
                      ConvCase{"Gelu", {1, 32, 12, 12}, {16, 32, 3, 3}, {{"pads", kPad1}}, true, true, false, "Gelu"},
                      ConvCase{"ResidualSilu", {1, 32, 12, 12}, {16, 32, 3, 3}, {{"pads", kPad1}}, true, true, true, "Silu"}),
    [](const auto& info) { return info.param.name; });

// Only 3x3, stride 1, dilation 1, one group, a constant weight of 32 or more channels and 16 or
// more maps, and enough tiles where the output's shape is known.
TEST(ConvWinograd, TakesOnlyTheConvolutionsItComputes) {
  if (vector_isa() < VectorIsa::avx2) GTEST_SKIP() << "Winograd's transforms need AVX2";
  auto suits = [](ConvCase c) {
    Graph g;
    std::vector<Tensor> inputs;
    return winograd_suits(*build_conv(g, c, inputs));
  };
  EXPECT_TRUE(suits({"Plain", {1, 32, 14, 14}, {16, 32, 3, 3}, {}}));
  EXPECT_FALSE(suits({"Stride2", {1, 32, 24, 24}, {16, 32, 3, 3}, {{"strides", Ints{2, 2}}}}));
  EXPECT_FALSE(suits({"Dilated", {1, 32, 16, 16}, {16, 32, 3, 3}, {{"dilations", Ints{2, 2}}}}));
  EXPECT_FALSE(suits({"Grouped", {1, 32, 12, 12}, {32, 16, 3, 3}, {{"group", int64_t{2}}}}));
  EXPECT_FALSE(suits({"FiveByFive", {1, 32, 12, 12}, {16, 32, 5, 5}, {}}));
  EXPECT_FALSE(suits({"FewChannels", {1, 16, 12, 12}, {16, 16, 3, 3}, {}}));
  EXPECT_FALSE(suits({"FewMaps", {1, 32, 12, 12}, {8, 32, 3, 3}, {}}));
  EXPECT_FALSE(suits({"WeightNotConstant", {1, 32, 12, 12}, {16, 32, 3, 3}, {}, true, false}));
  // 7 x 7 outputs: 16 tiles, where the transformed filters cost more to read than they save.
  EXPECT_FALSE(suits({"FewTiles", {1, 32, 7, 7}, {16, 32, 3, 3}, {{"pads", kPad1}}}));
  EXPECT_TRUE(suits({"FewTilesTwoImages", {2, 32, 7, 7}, {16, 32, 3, 3}, {{"pads", kPad1}}}));
}

}  // namespace
}  // namespace tilefuse::runtime
