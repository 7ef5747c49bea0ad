// Long reductions with few results become partial reductions of 16 slabs and a combine step:
// split where a reduced axis divides into the slabs and the kernel would have too few units, left
// alone otherwise; the split graph computes what the original did (reference interpreter).
#include "passes/reduction_splitting.h"

#include <gtest/gtest.h>

#include "ir/tensor_compare.h"
#include "reference/interpreter.h"
#include "pass_test_util.h"

namespace tilefuse::passes {
namespace {

using pass_testing::count_op;

Tensor filled(std::vector<int64_t> shape) {
  Tensor t(DType::f32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, ((i * 7) % 11) / 5.0 - 0.5);
  return t;
}

// y = op(x, axes, keepdims) over x of `shape`.
Graph reduction(const std::string& op, std::vector<int64_t> shape, std::vector<int64_t> axes, bool keepdims) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, shape_of(shape));
  Node* r = g.add_node(op, "r", {x}, {"y"}, {{"axes", axes}, {"keepdims", int64_t{keepdims ? 1 : 0}}});
  g.set_outputs({r->outputs[0]});
  g.infer_shapes();
  return g;
}

TEST(ReductionSplitting, LongReductionsWithFewResultsBecomeSlabsAndACombine) {
  struct Case {
    std::string op;
    std::vector<int64_t> shape, axes;
    bool keepdims;
  };
  for (const Case& c : {Case{"ReduceMean", {1024, 512}, {0, 1}, false}, Case{"ReduceSum", {262144, 4}, {0}, true},
                        Case{"ReduceMax", {2, 4096, 128}, {1, 2}, false}, Case{"ReduceMin", {4, 262144}, {1}, true}}) {
    Graph g = reduction(c.op, c.shape, c.axes, c.keepdims);
    const Tensor x = filled(c.shape);
    const Tensor expected = reference::run_graph(g, {{"x", x}})[0];
    ASSERT_EQ(split_long_reductions(g), 1) << c.op;
    EXPECT_EQ(count_op(g, c.op), 2) << c.op;  // the partial reduction and the combine
    EXPECT_EQ(g.outputs()[0]->name, "y");
    const Tensor actual = reference::run_graph(g, {{"x", x}})[0];
    EXPECT_TRUE(compare_tensors(actual, expected, {1e-5, 1e-6}).ok) << c.op;
  }
}

// y = op(x, axes), keepdims 0, over x of a shape with symbolic dims.
Graph symbolic_reduction(const std::string& op, std::vector<Dim> shape, std::vector<int64_t> axes) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, Shape(shape.begin(), shape.end()));
  g.set_outputs({g.add_node(op, "r", {x}, {"y"}, {{"axes", axes}, {"keepdims", int64_t{0}}})->outputs[0]});
  g.infer_shapes();
  return g;
}

TEST(ReductionSplitting, AReducedSymbolicBatchIsCopiedIntoTheSlabView) {
  // x.mean() under a dynamic batch: the slabs split axis 1; Reshape's 0 copies the batch.
  Graph g = symbolic_reduction("ReduceMean", {Dim::symbol("N"), Dim(512), Dim(512)}, {0, 1, 2});
  Graph original = symbolic_reduction("ReduceMean", {Dim::symbol("N"), Dim(512), Dim(512)}, {0, 1, 2});
  ASSERT_EQ(split_long_reductions(g), 1);
  EXPECT_EQ(count_op(g, "ReduceMean"), 2);
  for (int64_t batch : {1, 3}) {
    const Tensor x = filled({batch, 512, 512});
    const Tensor expected = reference::run_graph(original, {{"x", x}})[0];
    EXPECT_TRUE(compare_tensors(reference::run_graph(g, {{"x", x}})[0], expected, {1e-5, 1e-6}).ok) << batch;
  }
}

TEST(ReductionSplitting, ShortOrWideReductionsStayAsTheyAre) {
  // Too little to reduce per result; too many results (the kernel has units enough); no reduced
  // axis that divides into 16 slabs; a symbolic reduced axis.
  Graph small = reduction("ReduceSum", {64, 64}, {0, 1}, false);
  Graph wide = reduction("ReduceSum", {65536, 64}, {0}, false);
  Graph odd = reduction("ReduceSum", {1, 524287}, {1}, false);
  EXPECT_EQ(split_long_reductions(small), 0);
  EXPECT_EQ(split_long_reductions(wide), 0);
  EXPECT_EQ(split_long_reductions(odd), 0);
  Graph symbolic;
  Value* x = symbolic.add_input("x", DType::f32, {Dim::symbol("N"), Dim(1024)});
  symbolic.set_outputs({symbolic.add_node("ReduceSum", "r", {x}, {"y"}, {{"axes", std::vector<int64_t>{0, 1}}})->outputs[0]});
  symbolic.infer_shapes();
  EXPECT_EQ(split_long_reductions(symbolic), 0);
  // A kept symbolic dim (as many results as the batch), and one after the split axis (Reshape's
  // 0 would copy the wrong dim).
  Graph kept = symbolic_reduction("ReduceSum", {Dim::symbol("N"), Dim(262144)}, {1});
  Graph after = symbolic_reduction("ReduceSum", {Dim(4096), Dim::symbol("N"), Dim(64)}, {0, 1, 2});
  EXPECT_EQ(split_long_reductions(kept), 0);
  EXPECT_EQ(split_long_reductions(after), 0);
}

}  // namespace
}  // namespace tilefuse::passes
