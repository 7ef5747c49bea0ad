// 3-D MaxPool as 2-D MaxPools of depth maxima, against the reference kernel: the 2x2x2 pool of
// 3-D U-Nets, depth padding at both ends, stride and dilation, ceil_mode, NaN inputs (which
// propagate), two images, on 1 and 2 workers; and what it leaves to the reference.
#include "runtime/max_pool3d_slices.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reference/interpreter.h"

namespace tilefuse::runtime {
namespace {

using Ints = std::vector<int64_t>;

TEST(MaxPool3dSlices, MatchesReference) {
  const std::vector<std::pair<Ints, AttributeMap>> cases = {
      {{2, 3, 6, 8, 10}, {{"kernel_shape", Ints{2, 2, 2}}, {"strides", Ints{2, 2, 2}}}},
      {{1, 2, 7, 9, 6}, {{"kernel_shape", Ints{3, 3, 3}}, {"pads", Ints{1, 1, 0, 2, 1, 1}}, {"strides", Ints{2, 1, 2}}}},
      {{1, 2, 9, 5, 5}, {{"kernel_shape", Ints{2, 2, 1}}, {"dilations", Ints{3, 1, 1}}, {"ceil_mode", int64_t{1}},
                         {"strides", Ints{2, 2, 1}}}}};
  for (size_t k = 0; k < cases.size(); ++k) {
    const auto& [shape, attrs] = cases[k];
    Graph g;
    Node* node = g.add_node("MaxPool", "pool", {g.add_input("x", DType::f32, shape_of(shape))}, {"y"}, attrs);
    g.infer_shapes();
    ASSERT_TRUE(max_pool3d_slices_supports(*node)) << "case " << k;
    Tensor x(DType::f32, shape);
    for (int64_t i = 0; i < x.numel(); ++i) {
      x.data<float>()[i] = i % 61 == 7 ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(((i * 29) % 41) / 7.0 - 3.0);
    }
    const Tensor expected = reference::evaluate_node(*node, {x}).at(0);
    std::unique_ptr<LibraryCall> call = prepare_max_pool3d_slices(*node);
    for (int workers : {1, 2}) {
      ThreadTeam team(workers);
      std::vector<Tensor> outs = {Tensor(DType::f32, expected.shape())};
      call->run(team, {x}, outs);
      for (int64_t i = 0; i < expected.numel(); ++i) {
        const float want = expected.data<float>()[i], got = outs[0].data<float>()[i];
        if (std::isnan(want)) ASSERT_TRUE(std::isnan(got)) << "case " << k << " at " << i;
        else ASSERT_EQ(got, want) << "case " << k << " at " << i << " on " << workers << " workers";
      }
    }
  }
}

TEST(MaxPool3dSlices, LeavesIndicesAndAutoPadToTheReference) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, shape_of({1, 2, 4, 4, 4}));
  Node* indices = g.add_node("MaxPool", "with_indices", {x}, {"y", "i"}, {{"kernel_shape", Ints{2, 2, 2}}});
  Node* same = g.add_node("MaxPool", "same", {x}, {"z"}, {{"kernel_shape", Ints{2, 2, 2}}, {"auto_pad", std::string("SAME_UPPER")}});
  g.infer_shapes();
  EXPECT_FALSE(max_pool3d_slices_supports(*indices));
  EXPECT_FALSE(max_pool3d_slices_supports(*same));
}

}  // namespace
}  // namespace tilefuse::runtime
