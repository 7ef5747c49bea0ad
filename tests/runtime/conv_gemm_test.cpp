// The im2col + GEMM Conv against the reference kernel, over the geometry a model can have:
// 1-D and 2-D, strides, asymmetric and SAME padding, dilations, groups (depthwise included),
// 1x1 (the no-unfold path), few input channels (maps in lanes on AVX-512: a stem), small groups
// (maps in lanes per group: RegNet, ResNeXt), with and without bias, weights constant (packed
// when prepared) or not, on 1 and 2 workers; and FusedConv's residual and activation epilogue on
// each path (the GEMM engine's tiles, depthwise, pointwise, OpenBLAS where there is no AVX2).
#include <gtest/gtest.h>

#include "runtime/conv_gemm.h"
#include "runtime/conv_maps_in_lanes.h"
#include "runtime/cpu_isa.h"
#include "runtime/sgemm_microkernel.h"
#include "runtime/conv_case.h"

namespace tilefuse::runtime {
namespace {

using namespace conv_test;

class ConvGemm : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvGemm, MatchesReference) {
  const ConvCase& c = GetParam();
  Graph g;
  std::vector<Tensor> inputs;
  Node* conv = build_conv(g, c, inputs);
  ASSERT_TRUE(conv_gemm_supports(*conv));
  expect_matches_reference(c, *conv, inputs, {1, 2});
}

INSTANTIATE_TEST_SUITE_P(
    Geometry, ConvGemm,
    ::testing::Values(ConvCase{"Plain3x3", {2, 3, 8, 9}, {4, 3, 3, 3}, {}},
                      ConvCase{"Padded", {1, 3, 7, 7}, {5, 3, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}}},
                      ConvCase{"AsymmetricPadsStrides", {1, 2, 9, 8}, {3, 2, 3, 2},
                               {{"pads", Ints{0, 1, 2, 0}}, {"strides", Ints{2, 3}}}},
                      ConvCase{"SameUpper", {1, 2, 7, 6}, {2, 2, 4, 3}, {{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2, 2}}}},
                      ConvCase{"SameLower", {1, 2, 7, 6}, {2, 2, 4, 3}, {{"auto_pad", std::string("SAME_LOWER")}}},
                      ConvCase{"Dilated", {1, 2, 11, 10}, {3, 2, 3, 3}, {{"dilations", Ints{2, 3}}, {"pads", Ints{2, 3, 2, 3}}}},
                      ConvCase{"Grouped", {2, 6, 6, 6}, {9, 2, 3, 3}, {{"group", int64_t{3}}, {"pads", Ints{1, 1, 1, 1}}}},
                      ConvCase{"Depthwise", {1, 4, 7, 7}, {4, 1, 3, 3}, {{"group", int64_t{4}}, {"strides", Ints{2, 2}}}},
                      ConvCase{"DepthwisePaddedDilated", {2, 3, 9, 8}, {3, 1, 3, 3},
                               {{"group", int64_t{3}}, {"pads", Ints{2, 1, 0, 3}}, {"dilations", Ints{2, 1}}}},
                      ConvCase{"DepthwiseSameStrided", {1, 5, 12, 11}, {5, 1, 7, 7},
                               {{"group", int64_t{5}}, {"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2, 3}}}, false},
                      ConvCase{"DepthwiseWideStride2", {1, 3, 9, 70}, {3, 1, 3, 3},
                               {{"group", int64_t{3}}, {"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}}},
                      ConvCase{"DepthwiseWide7x7", {1, 2, 9, 45}, {2, 1, 7, 7}, {{"group", int64_t{2}}, {"pads", Ints{3, 3, 3, 3}}}},
                      ConvCase{"DepthwiseOneD", {2, 4, 17}, {4, 1, 5}, {{"group", int64_t{4}}, {"pads", Ints{2, 2}}}},
                      ConvCase{"Pointwise", {2, 8, 5, 5}, {6, 8, 1, 1}, {}, false},
                      ConvCase{"StridedPointwise", {1, 8, 6, 6}, {4, 8, 1, 1}, {{"strides", Ints{2, 2}}}},
                      ConvCase{"OneD", {2, 3, 20}, {4, 3, 5}, {{"pads", Ints{2, 2}}, {"strides", Ints{2}}}},
                      ConvCase{"OneDGroupedDilated", {1, 4, 30}, {4, 2, 3}, {{"group", int64_t{2}}, {"dilations", Ints{4}}}},
                      ConvCase{"WeightNotConstant", {2, 3, 8, 9}, {4, 3, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, true, false},
                      ConvCase{"ManyTiles", {2, 40, 15, 13}, {50, 40, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}}},
                      ConvCase{"ManyTilesPointwise", {1, 70, 9, 9}, {45, 70, 1, 1}, {}},
                      // Output rows longer than a 32-position panel: runs split at panel edges,
                      // padding at both ends of a row, strides 2 and 3 and dilation gathered.
                      ConvCase{"WideRowsPadded", {1, 5, 6, 75}, {7, 5, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}}},
                      ConvCase{"WideStemStride2", {1, 3, 21, 90}, {8, 3, 7, 7}, {{"pads", Ints{3, 3, 3, 3}}, {"strides", Ints{2, 2}}}},
                      ConvCase{"WideStride3Dilated", {1, 4, 9, 100}, {5, 4, 3, 3},
                               {{"pads", Ints{2, 4, 1, 3}}, {"strides", Ints{1, 3}}, {"dilations", Ints{2, 2}}}},
                      ConvCase{"WideOneD", {2, 6, 131}, {9, 6, 5}, {{"pads", Ints{2, 3}}}},
                      // At most 4 input channels: maps in vector lanes on AVX-512 (a stem):
                      // maps not a multiple of 16, more maps than one pass sums (96: 4 + 2
                      // vectors), rows of outputs not a multiple of 6 or 8, two images split
                      // between workers, dilation, 1-D, and the epilogue.
                      ConvCase{"StemOddMaps", {2, 3, 30, 29}, {20, 3, 7, 7}, {{"pads", Ints{3, 3, 3, 3}}, {"strides", Ints{2, 2}}}},
                      ConvCase{"StemManyMaps", {1, 3, 17, 33}, {96, 3, 4, 4}, {{"strides", Ints{4, 4}}}},
                      ConvCase{"StemDilated", {1, 4, 12, 12}, {16, 4, 3, 3}, {{"dilations", Ints{2, 2}}, {"pads", Ints{2, 1, 0, 2}}}},
                      ConvCase{"StemOneD", {2, 2, 40}, {33, 2, 5}, {{"pads", Ints{2, 2}}, {"strides", Ints{3}}}},
                      ConvCase{"StemResidualHardSwish", {2, 3, 11, 11}, {16, 3, 3, 3},
                               {{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}}, true, true, true, "HardSwish"},
                      // Three channels whose weights do not stay in L2 (a ViT patch embedding):
                      // the GEMM engine's path.
                      ConvCase{"PatchEmbeddingManyMaps", {1, 3, 32, 48}, {200, 3, 16, 16}, {{"strides", Ints{16, 16}}}},
                      // FusedConv: y = activation(conv + z), on the engine's tiles over several
                      // depth blocks, pointwise, grouped, depthwise, and without a bias.
                      ConvCase{"ResidualRelu", {2, 40, 15, 13}, {50, 40, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, true, true, true, "Relu"},
                      ConvCase{"PointwiseResidual", {1, 70, 9, 9}, {45, 70, 1, 1}, {}, false, true, true},
                      ConvCase{"StridedPointwiseClip", {1, 8, 6, 6}, {4, 8, 1, 1},
                               {{"strides", Ints{2, 2}}, {"activation_params", std::vector<double>{-0.5, 1.5}}}, true, true, false, "Clip"},
                      ConvCase{"GroupedHardSigmoid", {2, 6, 6, 6}, {9, 2, 3, 3},
                               {{"group", int64_t{3}}, {"activation_params", std::vector<double>{0.3, 0.4}}}, true, true, true, "HardSigmoid"},
                      ConvCase{"DepthwiseResidualHardSwish", {1, 4, 7, 7}, {4, 1, 3, 3},
                               {{"group", int64_t{4}}, {"pads", Ints{1, 1, 1, 1}}}, true, true, true, "HardSwish"},
                      // 37 channels: blocks of 16 across channels, the last one partial and
                      // spanning the two images; the epilogue applied 16 planes at a time.
                      ConvCase{"DepthwiseManyChannelsResidualRelu", {2, 37, 7, 7}, {37, 1, 5, 5},
                               {{"group", int64_t{37}}, {"pads", Ints{2, 2, 2, 2}}}, true, true, true, "Relu"},
                      ConvCase{"DepthwiseGelu", {1, 4, 7, 7}, {4, 1, 3, 3},
                               {{"group", int64_t{4}}, {"pads", Ints{1, 1, 1, 1}}}, true, true, false, "Gelu"},
                      ConvCase{"ResidualGelu", {1, 20, 9, 9}, {30, 20, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, true, true, true, "Gelu"},
                      ConvCase{"ResidualSilu", {1, 20, 9, 9}, {30, 20, 1, 1}, {}, true, true, true, "Silu"},
                      ConvCase{"DepthwiseSigmoid", {1, 4, 7, 7}, {4, 1, 3, 3},
                               {{"group", int64_t{4}}, {"pads", Ints{1, 1, 1, 1}}}, true, true, false, "Sigmoid"},
                      // Rows of 40 at stride 1: plane by plane on AVX-512 too, a clamp applied
                      // by the kernel as it stores, a curve to each plane as it is finished;
                      // two images.
                      ConvCase{"DepthwiseWideRowsHardSwish", {2, 5, 6, 40}, {5, 1, 3, 3},
                               {{"group", int64_t{5}}, {"pads", Ints{1, 1, 1, 1}}}, true, true, false, "HardSwish"},
                      ConvCase{"DepthwiseWideRowsClip", {1, 3, 9, 40}, {3, 1, 5, 5},
                               {{"group", int64_t{3}}, {"pads", Ints{2, 2, 2, 2}}, {"activation_params", std::vector<double>{-0.5, 1.5}}},
                               true, true, false, "Clip"},
                      ConvCase{"DepthwiseWideRowsSilu", {2, 5, 6, 40}, {5, 1, 3, 3},
                               {{"group", int64_t{5}}, {"pads", Ints{1, 1, 1, 1}}}, true, true, false, "Silu"},
                      // Across channels at stride 2 (AVX-512): a clamp on the sums as they are
                      // stored, 18 channels in two blocks.
                      ConvCase{"DepthwiseStridedHardSigmoid", {1, 18, 13, 13}, {18, 1, 3, 3},
                               {{"group", int64_t{18}}, {"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}},
                                {"activation_params", std::vector<double>{0.3, 0.4}}}, true, true, false, "HardSigmoid"},
                      ConvCase{"WeightNotConstantRelu", {2, 3, 8, 9}, {4, 3, 3, 3}, {}, true, false, false, "Relu"}),
    [](const auto& info) { return info.param.name; });

// In bf16 every convolution on the GEMM engine (implicit GEMM, pointwise, Winograd, positions
// as rows, grouped) stays within bf16's bound and is not computed in f32.
TEST(ConvGemmBf16, EveryEnginePathStaysWithinTheBound) {
  if (!bf16_supported()) GTEST_SKIP() << "this CPU has no avx512_bf16 (or AVX-512 is not in use)";
  const Ints pad1 = {1, 1, 1, 1};
  for (const ConvCase& c : {ConvCase{"ImplicitGemm", {2, 20, 9, 11}, {30, 20, 3, 3}, {{"strides", Ints{2, 1}}}},
                            ConvCase{"Pointwise", {1, 70, 9, 9}, {45, 70, 1, 1}, {}, true, true, true, "Relu"},
                            ConvCase{"Winograd", {1, 33, 14, 13}, {40, 33, 3, 3}, {{"pads", pad1}}},
                            ConvCase{"PositionsAsRows", {1, 48, 7, 7}, {96, 48, 3, 3}, {{"pads", pad1}}},
                            ConvCase{"Grouped", {2, 32, 6, 6}, {48, 16, 3, 3}, {{"group", int64_t{2}}, {"pads", pad1}}}}) {
    Graph g;
    std::vector<Tensor> inputs;
    Node* conv = build_conv(g, c, inputs);
    expect_matches_reference(c, *conv, inputs, {1, 2}, Precision::bf16);
  }
}

// Groups of 8 to 48 maps by maps in lanes: one vector (RegNet's 16, two images), half of one
// (ResNeXt's 8, strided), two and three partly filled (24 and 40, dilated), three full ones,
// rows of 7, 13 and 14 outputs, with FusedConv's residual and activation; on 1 and 2 workers.
TEST(ConvMapsInLanes, GroupedMatchesReference) {
  if (vector_isa() < VectorIsa::avx2) GTEST_SKIP() << "maps in lanes needs AVX2";
  const Ints pad1 = {1, 1, 1, 1};
  for (const ConvCase& c :
       {ConvCase{"RegNetGroups", {2, 32, 6, 7}, {32, 16, 3, 3}, {{"group", int64_t{2}}, {"pads", pad1}}},
        ConvCase{"ResNeXtGroupsStrided", {1, 32, 9, 9}, {32, 8, 3, 3},
                 {{"group", int64_t{4}}, {"pads", pad1}, {"strides", Ints{2, 2}}}, false},
        ConvCase{"TwoVectorsResidualRelu", {1, 48, 5, 5}, {48, 24, 3, 3}, {{"group", int64_t{2}}, {"pads", pad1}}, true,
                 true, true, "Relu"},
        ConvCase{"ThreeVectorsDilated", {1, 80, 8, 8}, {80, 40, 3, 3},
                 {{"group", int64_t{2}}, {"pads", Ints{2, 2, 2, 2}}, {"dilations", Ints{2, 2}}}},
        // Rows summed 7 outputs at a time (14 and 13 wide) rather than 8.
        ConvCase{"RegNetRowsOfFourteen", {1, 32, 14, 14}, {32, 16, 3, 3}, {{"group", int64_t{2}}, {"pads", pad1}}},
        ConvCase{"ThreeVectorsRowsOfThirteen", {1, 96, 6, 13}, {96, 48, 3, 3}, {{"group", int64_t{2}}, {"pads", pad1}},
                 true, true, true, "Relu"}}) {
    Graph g;
    std::vector<Tensor> inputs;
    Node* conv = build_conv(g, c, inputs);
    ASSERT_TRUE(conv_maps_in_lanes_suits(
        conv_shape(*conv, c.x, c.w, static_dims(conv->outputs[0]->shape))))
        << c.name;
    expect_matches_reference(c, *conv, inputs, {1, 2});
  }
}

// Groups whose maps leave most of a vector empty (4 of 16), or of one channel (depthwise), are
// left to the GEMM and the depthwise kernels.
TEST(ConvMapsInLanes, LeavesSparseGroupsAndDepthwiseAlone) {
  if (vector_isa() < VectorIsa::avx2) GTEST_SKIP() << "maps in lanes needs AVX2";
  auto grouped = [](int64_t channels, int64_t maps, int64_t groups) {
    return ConvShape{1, channels, 14, 14, maps, groups, 3, 3, 14, 14, 1, 1, 1, 1, 1, 1};
  };
  EXPECT_TRUE(conv_maps_in_lanes_suits(grouped(400, 400, 25)));   // RegNetX-400MF: 16 a group
  EXPECT_FALSE(conv_maps_in_lanes_suits(grouped(128, 128, 32)));  // ResNeXt's first stage: 4 a group
  EXPECT_FALSE(conv_maps_in_lanes_suits(grouped(64, 64, 64)));   // depthwise
  EXPECT_TRUE(conv_maps_in_lanes_suits(grouped(256, 256, 32)));  // 8 a group: half a vector
}

// Maps in lanes takes the stems whose weights stay in L2 (ResNet-50's 7x7 with 64 maps,
// MobileNet's 3x3 with 16) and leaves ViT's 16x16 patches with 768 maps to the GEMM. With AVX2's
// 8 lanes only stems of at most 16 maps or of 49 taps and more: ConvNeXt's 4x4 patches with 96
// maps, and 3x3 ones with 32, were as fast or faster as a GEMM.
TEST(ConvMapsInLanes, SuitsStemsWhoseWeightsStayInL2) {
  if (vector_isa() < VectorIsa::avx2) GTEST_SKIP() << "maps in lanes needs AVX2";
  auto stem = [](int64_t maps, int64_t kernel, int64_t stride, int64_t size) {
    const int64_t out = size / stride;
    return ConvShape{1, 3, size, size, maps, 1, kernel, kernel, out, out, stride, stride, 1, 1, 0, 0};
  };
  const bool avx512 = vector_isa() == VectorIsa::avx512;
  EXPECT_TRUE(conv_maps_in_lanes_suits(stem(64, 7, 2, 224)));
  EXPECT_TRUE(conv_maps_in_lanes_suits(stem(16, 3, 2, 224)));
  EXPECT_EQ(conv_maps_in_lanes_suits(stem(96, 4, 4, 224)), avx512);
  EXPECT_EQ(conv_maps_in_lanes_suits(stem(32, 3, 2, 224)), avx512);
  EXPECT_FALSE(conv_maps_in_lanes_suits(stem(768, 16, 16, 224)));
}

}  // namespace
}  // namespace tilefuse::runtime
