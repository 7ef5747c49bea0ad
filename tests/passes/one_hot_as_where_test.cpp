// OneHot becomes a Where over Equal(indices, classes), and computes what the reference's OneHot
// does: every axis (negative too), i32 and i64 indices, negative indices counted from the end,
// indices out of [-depth, depth) all `off`, float and integer values; a rewritten graph output
// keeps its name. Left alone: float indices, and a depth that is an input.
#include "passes/one_hot_as_where.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace tilefuse::passes {
namespace {

using namespace pass_testing;

Graph one_hot_graph(DType index_type, const Shape& shape, int64_t axis, DType value_type, bool depth_input = false) {
  Graph g;
  Value* indices = g.add_input("i", index_type, shape);
  Value* depth = depth_input ? g.add_input("depth", DType::i64, {})
                             : g.add_constant("depth", Tensor::from_vector<int64_t>(DType::i64, {}, {5}));
  Value* values = g.add_constant("values", Tensor::from_vector<double>(value_type, {2}, {-2, 7}));
  g.set_outputs({g.add_node("OneHot", "one_hot", {indices, depth, values}, {"y"}, {{"axis", axis}})->outputs[0]});
  g.infer_shapes();
  return g;
}

// Indices 2 x 3 with a negative, an out-of-range positive and an out-of-range negative one.
Tensor sample_indices(DType index_type) {
  return Tensor::from_vector<int64_t>(index_type, {2, 3}, {0, 4, -1, 5, -5, -6});
}

TEST(OneHotAsWhere, EveryAxisComputesTheReferencesOneHot) {
  for (DType index_type : {DType::i64, DType::i32}) {
    for (DType value_type : {DType::f32, DType::i64}) {
      for (int64_t axis : {0, 1, 2, -1, -3}) {
        SCOPED_TRACE(::testing::Message() << dtype_name(index_type) << " " << dtype_name(value_type) << " axis " << axis);
        Graph before = one_hot_graph(index_type, {Dim(2), Dim(3)}, axis, value_type);
        Graph after = one_hot_graph(index_type, {Dim(2), Dim(3)}, axis, value_type);
        EXPECT_EQ(one_hot_as_where(after), 1);
        EXPECT_EQ(count_op(after, "OneHot"), 0);
        EXPECT_EQ(after.outputs()[0]->name, "y");
        EXPECT_EQ(after.outputs()[0]->dtype, value_type);
        const std::map<std::string, Tensor> feeds = {{"i", sample_indices(index_type)}};
        const Tensor want = reference::run_graph(before, feeds)[0];
        const Tensor got = reference::run_graph(after, feeds)[0];
        EXPECT_EQ(got.shape(), want.shape());
        EXPECT_TRUE(got.same_bytes(want));
      }
    }
  }
}

TEST(OneHotAsWhere, LeavesFloatIndicesAndComputedDepth) {
  Graph floats = one_hot_graph(DType::f32, {Dim(4)}, -1, DType::f32);
  EXPECT_EQ(one_hot_as_where(floats), 0);
  Graph computed = one_hot_graph(DType::i64, {Dim(4)}, -1, DType::f32, true);
  EXPECT_EQ(one_hot_as_where(computed), 0);
}

}  // namespace
}  // namespace tilefuse::passes
