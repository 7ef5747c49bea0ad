// Trilu becomes a Where under a constant mask of its last two dims, and computes what the
// reference's Trilu does: upper and lower, k absent, positive and negative, beyond the matrix,
// wide and tall matrices, a batch, integers; a rewritten graph output keeps its name. Left
// alone: last dims that are symbolic, and a k that is an input.
#include "passes/trilu_as_where.h"

#include <gtest/gtest.h>

#include <optional>

#include "pass_test_util.h"

namespace tilefuse::passes {
namespace {

using namespace pass_testing;

Graph trilu_graph(Shape shape, int64_t upper, std::optional<int64_t> k, DType dtype = DType::f32, bool k_input = false) {
  Graph g;
  Value* x = g.add_input("x", dtype, shape);
  std::vector<Value*> inputs = {x};
  if (k_input) inputs.push_back(g.add_input("k", DType::i64, {}));
  if (k) inputs.push_back(g.add_constant("k", Tensor::from_vector<int64_t>(DType::i64, {}, {*k})));
  g.set_outputs({g.add_node("Trilu", "trilu", inputs, {"y"}, {{"upper", upper}})->outputs[0]});
  g.infer_shapes();
  return g;
}

TEST(TriluAsWhere, EveryTriangleIsAWhereUnderAConstantMask) {
  for (const Shape& shape : {Shape{Dim(5), Dim(7)}, Shape{Dim(7), Dim(5)}, Shape{Dim(2), Dim(4), Dim(4)}}) {
    for (int64_t upper : {0, 1}) {
      for (std::optional<int64_t> k : {std::optional<int64_t>{}, std::optional<int64_t>{1}, std::optional<int64_t>{-2},
                                       std::optional<int64_t>{9}, std::optional<int64_t>{-9}}) {
        SCOPED_TRACE(::testing::Message() << "upper " << upper << " k " << (k ? *k : 0) << " rank " << shape.size());
        Graph before = trilu_graph(shape, upper, k), after = trilu_graph(shape, upper, k);
        EXPECT_EQ(trilu_as_where(after), 1);
        EXPECT_EQ(count_op(after, "Trilu"), 0);
        EXPECT_EQ(count_op(after, "Where"), 1);
        EXPECT_EQ(after.outputs()[0]->name, "y");
        expect_same_results(before, after);
      }
    }
  }
}

TEST(TriluAsWhere, IntegersKeepTheirType) {
  Graph g = trilu_graph({Dim(3), Dim(3)}, 1, 0, DType::i64);
  EXPECT_EQ(trilu_as_where(g), 1);
  EXPECT_EQ(g.outputs()[0]->dtype, DType::i64);
  const Tensor x = Tensor::from_vector<int64_t>(DType::i64, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const std::vector<Tensor> y = reference::run_graph(g, {{"x", x}});
  EXPECT_EQ(y[0].to_i64_vector(), (std::vector<int64_t>{1, 2, 3, 0, 5, 6, 0, 0, 9}));
}

TEST(TriluAsWhere, LeavesSymbolicMatricesAndComputedK) {
  Graph symbolic = trilu_graph({Dim::symbol("S"), Dim::symbol("S")}, 1, 1);
  EXPECT_EQ(trilu_as_where(symbolic), 0);
  Graph computed = trilu_graph({Dim(4), Dim(4)}, 1, std::nullopt, DType::f32, true);
  EXPECT_EQ(trilu_as_where(computed), 0);
}

}  // namespace
}  // namespace tilefuse::passes
