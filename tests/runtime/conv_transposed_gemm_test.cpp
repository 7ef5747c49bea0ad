// The convolution with output positions as the GEMM's rows against the reference kernel:
// pointwise and 3x3 (unfolded) convolutions with 7 x 7 outputs, a stride, two images, a row of
// positions that is not a multiple of 16, maps that are not a multiple of 16 (a partial block in
// the transposing copy), without a bias, with FusedConv's residual and activations; images
// multiplied together (three of 2 x 2 positions in one product; five of 10 x 10 in three, the
// last of one image; pointwise ones gathered side by side); on 1 and 2 workers. And which
// convolutions it takes, with a static or a symbolic batch.
#include <gtest/gtest.h>

#include "runtime/conv_case.h"
#include "runtime/conv_transposed_gemm.h"
#include "runtime/conv_winograd.h"
#include "runtime/cpu_isa.h"

namespace tilefuse::runtime {
namespace {

using namespace conv_test;

class ConvTransposedGemm : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvTransposedGemm, MatchesReference) {
  if (vector_isa() != VectorIsa::avx512) GTEST_SKIP() << "the transposing copy needs AVX-512";
  const ConvCase& c = GetParam();
  Graph g;
  std::vector<Tensor> inputs;
  Node* conv = build_conv(g, c, inputs);
  ASSERT_TRUE(transposed_gemm_suits(*conv)) << c.name;
  ASSERT_FALSE(winograd_suits(*conv)) << c.name << ": the call would run Winograd's algorithm, which comes first";
  expect_matches_reference(c, *conv, inputs, {1, 2});
}

const Ints kPad1 = {1, 1, 1, 1};

INSTANTIATE_TEST_SUITE_P(
    Geometry, ConvTransposedGemm,
    ::testing::Values(ConvCase{"Pointwise7x7", {1, 32, 7, 7}, {64, 32, 1, 1}, {}},
                      ConvCase{"Pointwise7x7TwoImagesResidualRelu", {2, 48, 7, 7}, {96, 48, 1, 1}, {}, true, true,
                               true, "Relu"},
                      ConvCase{"Padded3x3", {1, 24, 7, 7}, {64, 24, 3, 3}, {{"pads", kPad1}}},
                      ConvCase{"Strided3x3", {1, 16, 14, 14}, {64, 16, 3, 3}, {{"pads", kPad1}, {"strides", Ints{2, 2}}}},
                      ConvCase{"TenByTen", {1, 20, 10, 10}, {64, 20, 1, 1}, {}},
                      ConvCase{"OddMaps", {1, 16, 7, 7}, {90, 16, 1, 1}, {}},
                      ConvCase{"NoBiasHardSwish", {1, 32, 5, 11}, {64, 32, 3, 3}, {{"pads", kPad1}}, false, true, false,
                               "HardSwish"},
                      ConvCase{"ThreeImagesOfFourPositions", {3, 64, 2, 2}, {96, 64, 3, 3}, {{"pads", kPad1}}, true, true,
                               true, "Relu"},
                      ConvCase{"FiveImagesInThreeProducts", {5, 12, 10, 10}, {64, 12, 3, 3}, {{"pads", kPad1}}, true,
                               true, true},
                      ConvCase{"PointwiseImagesGathered", {4, 40, 3, 3}, {80, 40, 1, 1}, {}, true, true, false, "Relu"}),
    [](const auto& info) { return info.param.name; });

// Few positions, one group, more than 4 channels (fewer is a stem), a constant weight, a static
// output, and a real saving in padded multiplications.
TEST(ConvTransposedGemm, TakesOnlyTheConvolutionsItComputes) {
  if (vector_isa() != VectorIsa::avx512) GTEST_SKIP() << "the transposing copy needs AVX-512";
  auto suits = [](ConvCase c) {
    Graph g;
    std::vector<Tensor> inputs;
    return transposed_gemm_suits(*build_conv(g, c, inputs));
  };
  EXPECT_TRUE(suits({"ResNetLayer4", {1, 64, 7, 7}, {128, 64, 1, 1}, {}}));
  EXPECT_FALSE(suits({"ManyPositions", {1, 64, 17, 17}, {128, 64, 1, 1}, {}}));
  EXPECT_FALSE(suits({"PositionsFillTheColumns", {1, 64, 8, 8}, {128, 64, 1, 1}, {}}));  // 64: two full tiles
  EXPECT_FALSE(suits({"FewMaps", {1, 64, 7, 7}, {24, 64, 1, 1}, {}}));
  EXPECT_FALSE(suits({"Grouped", {1, 64, 7, 7}, {128, 32, 1, 1}, {{"group", int64_t{2}}}}));
  EXPECT_FALSE(suits({"Stem", {1, 3, 14, 14}, {64, 3, 3, 3}, {{"pads", kPad1}, {"strides", Ints{2, 2}}}}));
  EXPECT_FALSE(suits({"WeightNotConstant", {1, 64, 7, 7}, {128, 64, 1, 1}, {}, true, false}));
}

// A dynamic export's symbolic batch: the choice is made per image, as with a static batch.
TEST(ConvTransposedGemm, ChoosesPerImageWhereTheBatchIsSymbolic) {
  if (vector_isa() != VectorIsa::avx512) GTEST_SKIP() << "the transposing copy needs AVX-512";
  auto suits = [](Shape x, Ints w) {
    Graph g;
    Node* conv = g.add_node("Conv", "conv", {g.add_input("x", DType::f32, std::move(x)), g.add_constant("w", filled(w, 1))},
                            {"y"}, {{"pads", kPad1}});
    g.infer_shapes();
    return transposed_gemm_suits(*conv);
  };
  EXPECT_TRUE(suits({Dim::symbol("N"), Dim(64), Dim(2), Dim(2)}, {128, 64, 3, 3}));
  EXPECT_FALSE(suits({Dim::symbol("N"), Dim(64), Dim(17), Dim(17)}, {128, 64, 3, 3}));
  EXPECT_FALSE(suits({Dim(1), Dim(64), Dim::symbol("H"), Dim(4)}, {128, 64, 3, 3}));
}

}  // namespace
}  // namespace tilefuse::runtime
