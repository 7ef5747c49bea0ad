// The direct Resize against the reference kernel: nearest (every rounding mode), linear and cubic
// (torch's bicubic, other coefficients, exclude_outside), upsampling by 2 (the columns' own loop),
// each coordinate transformation but tf_crop_and_resize, up- and downsampling by scales and sizes,
// rank 3 and 4, and volumes (rank 5: trilinear, and nearest and cubic over three axes), on 1 and
// 2 workers; inputs with NaN and inf where an exact sample leaves a
// neighbour's weight at 0 (the reference does not read it, so neither may the call); and the
// Resizes the call leaves to the reference.
#include "runtime/resize_call.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ir/tensor_compare.h"
#include "reference/interpreter.h"

namespace tilefuse::runtime {
namespace {

using Ints = std::vector<int64_t>;

struct ResizeCase {
  std::string name;
  Ints x;
  AttributeMap attrs;
  std::vector<float> scales;  // empty: sizes
  Ints sizes;
  bool specials = false;  // NaN and inf among the inputs
};

// A Resize-13 node (X, roi, scales, sizes) with constant scales or sizes.
Node* resize_node(Graph& g, const ResizeCase& c) {
  Value* x = g.add_input("x", DType::f32, shape_of(c.x));
  Value* roi = g.add_constant("roi", Tensor(DType::f32, {0}));
  Value* scales = nullptr;
  Value* sizes = nullptr;
  if (!c.scales.empty()) {
    Tensor s(DType::f32, {static_cast<int64_t>(c.scales.size())});
    for (size_t i = 0; i < c.scales.size(); ++i) s.data<float>()[i] = c.scales[i];
    scales = g.add_constant("scales", s);
  } else {
    scales = g.add_constant("no_scales", Tensor(DType::f32, {0}));
    Tensor s(DType::i64, {static_cast<int64_t>(c.sizes.size())});
    for (size_t i = 0; i < c.sizes.size(); ++i) s.data<int64_t>()[i] = c.sizes[i];
    sizes = g.add_constant("sizes", s);
  }
  std::vector<Value*> inputs = {x, roi, scales};
  if (sizes != nullptr) inputs.push_back(sizes);
  Node* node = g.add_node("Resize", "resize", inputs, {"y"}, c.attrs);
  g.infer_shapes();
  return node;
}

Tensor input_for(const ResizeCase& c) {
  Tensor x(DType::f32, c.x);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(((i * 37) % 53) / 9.0 - 2.5);
  if (c.specials) {
    x.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
    x.data<float>()[x.numel() - 1] = std::numeric_limits<float>::infinity();
  }
  return x;
}

class ResizeCall : public ::testing::TestWithParam<ResizeCase> {};

TEST_P(ResizeCall, MatchesReference) {
  const ResizeCase& c = GetParam();
  Graph g;
  Node* node = resize_node(g, c);
  ASSERT_TRUE(resize_call_supports(*node));
  std::vector<Tensor> in = {input_for(c)};
  for (size_t i = 1; i < node->inputs.size(); ++i) in.push_back(*node->input(i)->constant);
  const Tensor expected = reference::evaluate_node(*node, in).at(0);
  std::unique_ptr<LibraryCall> call = prepare_resize_call(*node);
  for (int workers : {1, 2}) {
    ThreadTeam team(workers);
    std::vector<Tensor> outs = {Tensor(DType::f32, expected.shape())};
    call->run(team, in, outs);
    const CompareResult r = compare_tensors(outs[0], expected, {1e-6, 1e-6});
    EXPECT_TRUE(r.ok) << c.name << " on " << workers << " workers: " << r.message;
  }
}

AttributeMap linear(const std::string& transform) {
  return {{"mode", std::string("linear")}, {"coordinate_transformation_mode", transform}};
}
AttributeMap cubic(const std::string& transform, double a = -0.75, int64_t exclude_outside = 0) {
  return {{"mode", std::string("cubic")}, {"coordinate_transformation_mode", transform}, {"cubic_coeff_a", a},
          {"exclude_outside", exclude_outside}};
}
AttributeMap nearest(const std::string& transform, const std::string& rounding) {
  return {{"mode", std::string("nearest")}, {"coordinate_transformation_mode", transform}, {"nearest_mode", rounding}};
}

INSTANTIATE_TEST_SUITE_P(
    Geometry, ResizeCall,
    ::testing::Values(
        ResizeCase{"SegmentationHeadUp8", {1, 5, 8, 8}, linear("half_pixel"), {}, {1, 5, 64, 64}},
        ResizeCase{"LinearUp2Scales", {2, 3, 7, 9}, linear("half_pixel"), {1, 1, 2, 2}, {}},
        ResizeCase{"LinearPytorchHalfPixel", {1, 2, 5, 6}, linear("pytorch_half_pixel"), {}, {1, 2, 11, 1}},
        ResizeCase{"LinearAlignCorners", {1, 2, 6, 5}, linear("align_corners"), {}, {1, 2, 13, 17}},
        ResizeCase{"LinearAsymmetricDown", {1, 3, 20, 17}, linear("asymmetric"), {1, 1, 0.5f, 0.4f}, {}},
        ResizeCase{"LinearHalfPixelSymmetric", {1, 1, 9, 10}, linear("half_pixel_symmetric"), {1, 1, 1.5f, 0.7f}, {}},
        ResizeCase{"LinearRank3", {4, 6, 7}, linear("half_pixel"), {}, {4, 12, 3}},
        ResizeCase{"LinearSpecialsStayPut", {1, 2, 4, 4}, linear("align_corners"), {}, {1, 2, 7, 7}, true},
        ResizeCase{"CubicTorchBicubicUp2", {1, 3, 16, 16}, cubic("pytorch_half_pixel"), {1, 1, 2, 2}, {}},
        ResizeCase{"CubicHalfPixelDown", {2, 2, 17, 23}, cubic("half_pixel", -0.5), {}, {2, 2, 7, 9}},
        ResizeCase{"CubicAlignCornersExcludeOutside", {1, 2, 6, 5}, cubic("align_corners", -0.75, 1), {},
                   {1, 2, 13, 17}},
        ResizeCase{"CubicAsymmetricRank3", {3, 5, 8}, cubic("asymmetric"), {}, {3, 9, 11}},
        ResizeCase{"CubicSpecialsStayPut", {1, 1, 5, 5}, cubic("align_corners"), {}, {1, 1, 9, 9}, true},
        ResizeCase{"LinearAsymmetricUp2", {1, 2, 6, 12}, linear("asymmetric"), {1, 1, 2, 2}, {}},
        ResizeCase{"CubicAsymmetricUp2", {1, 2, 5, 10}, cubic("asymmetric"), {1, 1, 2, 2}, {}},
        ResizeCase{"NearestUp2Wide", {1, 2, 5, 12}, nearest("asymmetric", "floor"), {1, 1, 2, 2}, {}},
        ResizeCase{"TrilinearUp2", {1, 2, 4, 5, 9}, linear("half_pixel"), {1, 1, 2, 2, 2}, {}},
        ResizeCase{"TrilinearAlignCornersSizes", {2, 1, 3, 4, 5}, linear("align_corners"), {}, {2, 1, 7, 3, 11}},
        ResizeCase{"NearestVolumeUp2", {1, 3, 2, 3, 12}, nearest("asymmetric", "floor"), {1, 1, 2, 2, 2}, {}},
        ResizeCase{"CubicVolumeSpecials", {1, 1, 4, 5, 5}, cubic("align_corners"), {}, {1, 1, 7, 9, 9}, true},
        ResizeCase{"LinearChannelsToo", {2, 3, 4, 6}, linear("half_pixel"), {1, 2, 2, 2}, {}},
        ResizeCase{"NearestUp2", {1, 3, 5, 7}, nearest("asymmetric", "floor"), {1, 1, 2, 2}, {}},
        ResizeCase{"NearestRoundPreferFloor", {1, 2, 9, 6}, nearest("half_pixel", "round_prefer_floor"), {},
                   {1, 2, 14, 15}},
        ResizeCase{"NearestRoundPreferCeil", {1, 2, 9, 6}, nearest("half_pixel", "round_prefer_ceil"), {},
                   {1, 2, 4, 13}},
        ResizeCase{"NearestCeilSpecials", {2, 1, 6, 6}, nearest("asymmetric", "ceil"), {1, 1, 1.7f, 0.6f}, {}, true}),
    [](const auto& info) { return info.param.name; });

TEST(ResizeCallSupport, LeavesOtherAxesModesAndTypesToTheReference) {
  auto supports = [](ResizeCase c, DType dtype = DType::f32) {
    Graph g;
    Node* node = resize_node(g, c);
    node->input(0)->dtype = dtype;
    return resize_call_supports(*node);
  };
  EXPECT_TRUE(supports({"", {1, 3, 4, 4}, linear("half_pixel"), {1, 1, 2, 2}, {}}));
  EXPECT_TRUE(supports({"", {1, 3, 4, 4}, linear("half_pixel"), {1, 2, 2, 2}, {}}));  // the third-last axis too
  EXPECT_FALSE(supports({"", {2, 1, 3, 4, 4}, linear("half_pixel"), {2, 1, 1, 2, 2}, {}}));  // batch of a volume
  EXPECT_FALSE(supports({"", {1, 3, 4, 4}, linear("half_pixel"), {}, {2, 3, 8, 8}}));  // batch resized
  EXPECT_TRUE(supports({"", {1, 3, 4, 4}, cubic("half_pixel"), {1, 1, 2, 2}, {}}));
  EXPECT_FALSE(supports({"", {1, 3, 4, 4}, linear("tf_crop_and_resize"), {1, 1, 2, 2}, {}}));
  EXPECT_FALSE(supports({"", {1, 3, 4, 4}, linear("half_pixel"), {1, 1, 2, 2}, {}}, DType::f16));
}

}  // namespace
}  // namespace tilefuse::runtime
