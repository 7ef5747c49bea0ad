// PointwiseDepthwiseConv's call (runtime/pointwise_depthwise_call.h) against the reference
// interpreter: band edges (one band, many bands, a band whose window is all padding), channel
// parts (expansions that are not a multiple of 16 or of a part), strides 1 and 2, 3x3, 5x5 and
// 3x5 kernels, dilation, asymmetric padding, two images, with and without biases and
// activations, on teams of 1, 2 and 3 workers (a worker's consecutive bands share expanded rows,
// across an image or part boundary they do not), twice each (the second run reuses the
// scratch); and in bf16.
// runtime_kernels_avx2 and _scalar run it again on the planes path and with OpenBLAS.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "ir/tensor_compare.h"
#include "reference/interpreter.h"
#include "runtime/pointwise_depthwise_call.h"
#include "runtime/sgemm_microkernel.h"

namespace tilefuse::runtime {
namespace {

using Ints = std::vector<int64_t>;

struct Case {
  std::string name;
  Ints x;            // [N, C, H, W]
  int64_t expanded;  // E
  Ints kernel;       // the depthwise kernel [kh, kw]
  AttributeMap attrs;  // the depthwise window and activations
  bool biases = true;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

Tensor filled(const Ints& shape, int salt) {
  Tensor t(DType::f32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, ((i * 29 + salt * 7) % 47) / 12.0 - 2.0);
  return t;
}

// The case's node in `g`; `inputs` gets the tensors a run takes.
Node* build(Graph& g, const Case& c, std::vector<Tensor>& inputs) {
  const int64_t channels = c.x[1], e = c.expanded;
  std::vector<Value*> in = {g.add_input("x", DType::f32, shape_of(c.x)), g.add_constant("w1", filled({e, channels, 1, 1}, 1)),
                            g.add_constant("w2", filled({e, 1, c.kernel[0], c.kernel[1]}, 3))};
  if (c.biases) in.insert(in.end(), {g.add_constant("b1", filled({e}, 2)), g.add_constant("b2", filled({e}, 4))});
  AttributeMap attrs = c.attrs;
  attrs["group"] = e;
  Node* node = g.add_node("PointwiseDepthwiseConv", "pdw", in, {"y"}, attrs);
  g.infer_shapes();
  inputs.clear();
  for (const Value* v : node->inputs) inputs.push_back(v->constant ? *v->constant : filled(c.x, 5));
  return node;
}

class PointwiseDepthwise : public ::testing::TestWithParam<Case> {};

TEST_P(PointwiseDepthwise, MatchesReference) {
  const Case& c = GetParam();
  Graph g;
  std::vector<Tensor> inputs;
  Node* node = build(g, c, inputs);
  ASSERT_TRUE(pointwise_depthwise_supported(*node));
  const Tensor expected = reference::evaluate_node(*node, inputs).at(0);
  std::vector<Tensor> outs = {Tensor(DType::f32, expected.shape())};
  std::unique_ptr<LibraryCall> call = prepare_library_call(*node, default_blocking(48 << 10, 2 << 20));
  EXPECT_EQ(call->packed_bytes() > 0, own_gemm_engine());
  for (int workers : {1, 2, 3}) {
    ThreadTeam team(workers);
    for (int run = 0; run < 2; ++run) {
      call->run(team, inputs, outs);
      const CompareResult r = compare_tensors(outs[0], expected, {1e-4, 1e-4});
      EXPECT_TRUE(r.ok) << c.name << " run " << run << " on " << workers << " workers: " << r.message;
    }
  }
}

// In bf16 the 1x1 convolution's products are rounded (within the README's bound for bf16, 2e-2
// of the largest output) and are not computed in f32.
TEST(PointwiseDepthwiseBf16, StaysWithinTheBoundAndIsNotF32) {
  if (!bf16_supported()) GTEST_SKIP() << "this CPU has no avx512_bf16 (or AVX-512 is not in use)";
  const Case c{"Bf16", {1, 24, 17, 19}, 72, {3, 3}, {{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}}};
  Graph g;
  std::vector<Tensor> inputs;
  Node* node = build(g, c, inputs);
  const Tensor expected = reference::evaluate_node(*node, inputs).at(0);
  double largest = 0;
  for (int64_t i = 0; i < expected.numel(); ++i) largest = std::max(largest, std::abs(expected.get_f64(i)));
  std::vector<Tensor> outs = {Tensor(DType::f32, expected.shape())};
  std::unique_ptr<LibraryCall> call = prepare_library_call(*node, default_blocking(48 << 10, 2 << 20), Precision::bf16);
  ThreadTeam team(2);
  call->run(team, inputs, outs);
  EXPECT_TRUE(compare_tensors(outs[0], expected, {0, 2e-2 * largest}).ok);
  EXPECT_FALSE(compare_tensors(outs[0], expected, {1e-4, 1e-4}).ok) << "f32's accuracy in bf16";
}

const AttributeMap kPad1 = {{"pads", Ints{1, 1, 1, 1}}};

AttributeMap with(AttributeMap attrs, const AttributeMap& more) {
  attrs.insert(more.begin(), more.end());
  return attrs;
}

INSTANTIATE_TEST_SUITE_P(
    Geometry, PointwiseDepthwise,
    ::testing::Values(
        // MobileNetV3's second block, small: ReLU after both, stride 2.
        Case{"Stride2Relu", {1, 16, 20, 23}, 64, {3, 3},
             with(kPad1, {{"strides", Ints{2, 2}}, {"activation", std::string("Relu")},
                          {"pointwise_activation", std::string("Relu")}})},
        // 72 channels: two parts (48 + 24), the last not a whole vector of 16 lanes.
        Case{"PartsHardSwish5x5", {1, 24, 17, 19}, 72, {5, 5},
             {{"pads", Ints{2, 2, 2, 2}}, {"activation", std::string("HardSwish")},
              {"pointwise_activation", std::string("HardSwish")}}},
        // Three parts, two images, no biases, no activations.
        Case{"TwoImagesNoBias", {2, 5, 9, 11}, 130, {3, 3}, kPad1, false},
        // Rows 150 wide: many bands of a few rows each, bands split between workers.
        Case{"ManyBands", {1, 4, 40, 150}, 64, {3, 3},
             with(kPad1, {{"activation", std::string("Clip")}, {"activation_params", std::vector<double>{0.0, 6.0}}})},
        Case{"ManyBandsStride2", {1, 3, 41, 150}, 40, {3, 3}, with(kPad1, {{"strides", Ints{2, 2}}})},
        // A 3x5 kernel, dilation, asymmetric pads, unequal strides.
        Case{"DilatedAsymmetric", {1, 6, 15, 21}, 20, {3, 5},
             {{"pads", Ints{2, 0, 1, 3}}, {"dilations", Ints{2, 1}}, {"strides", Ints{1, 2}},
              {"pointwise_activation", std::string("Sigmoid")}}},
        // Pads of 3 under a 3x3 window: the first and last output rows read only padding.
        Case{"WindowAllPadding", {1, 4, 3, 5}, 16, {3, 3}, {{"pads", Ints{3, 3, 3, 3}}}},
        Case{"SameUpperStride2", {1, 8, 14, 13}, 32, {3, 3},
             {{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2, 2}}, {"activation", std::string("Silu")}}},
        // One input channel, an expansion of one part of 16.
        Case{"OneChannel", {1, 1, 12, 12}, 16, {3, 3}, kPad1}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tilefuse::runtime
