// The convolution with output positions as the GEMM's rows against the reference kernel:
// pointwise and 3x3 (unfolded) convolutions with 7 x 7 outputs, a stride, two images, a row of
// positions that is not a multiple of 16, maps that are not a multiple of 16 (a partial block in
// the transposing copy), without a bias, with FusedConv's residual and activations; on 1 and 2
// workers. And which convolutions it takes.
#include <gtest/gtest.h>

#include "runtime/conv_case.h"
#include "runtime/conv_transposed_gemm.h"
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
                               "HardSwish"}),
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

}  // namespace
}  // namespace tilefuse::runtime
