// The loop nest of a fused kernel: which axes its units walk, and in which order they are
// numbered (units in the order of the largest input, where that input holds whole rows in
// another order than the output).
#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "fusion/execution_plan.h"
#include "fusion/loop_nest.h"

namespace tilefuse::fusion {
namespace {

// The one kernel of the fused plan of the graph `build` makes from x.
FusedKernel only_kernel(std::vector<int64_t> x_shape, const std::function<Value*(Graph&, Value*)>& build) {
  static std::vector<std::unique_ptr<ExecutionPlan>> keep;  // kernels point into their graph
  Graph g;
  Shape shape(x_shape.begin(), x_shape.end());
  Value* x = g.add_input("x", DType::f32, shape);
  g.add_output(build(g, x));
  g.infer_shapes();
  keep.push_back(std::make_unique<ExecutionPlan>(plan_for_execution(g, true)));
  const auto& steps = keep.back()->plan.steps;
  EXPECT_EQ(steps.size(), 1u);
  return steps.front().kernel;
}

Value* transpose(Graph& g, Value* x, std::vector<int64_t> perm) {
  return g.add_node("Transpose", "t", {x}, {"t"}, {{"perm", std::move(perm)}})->outputs[0];
}

Value* tanh(Graph& g, Value* x) { return g.add_node("Tanh", "tanh", {x}, {"y"})->outputs[0]; }

std::vector<int64_t> outer_strides_of(const LoopNest& nest, const Value* v) {
  std::vector<int64_t> strides;
  for (const LoopAxis& a : nest.outer) strides.push_back(a.strides.at(v).value());
  return strides;
}

TEST(LoopNest, UnitsFollowAnInputWhoseRowsLieInAnotherOrder) {
  // x[2, 8, 4, 16] -> [2, 4, 8, 16]: heads split off the rows; every row of 16 stays whole.
  const FusedKernel k = only_kernel({2, 8, 4, 16}, [](Graph& g, Value* x) { return tanh(g, transpose(g, x, {0, 2, 1, 3})); });
  const LoopNest nest = build_loop_nest(k.space, k.inputs);
  const Value* x = k.inputs.at(0);
  EXPECT_EQ(outer_strides_of(nest, x), (std::vector<int64_t>{512, 64, 16}));  // x's own order: it streams
  EXPECT_EQ(outer_strides_of(nest, k.outputs.at(0)), (std::vector<int64_t>{512, 16, 128}));
  EXPECT_EQ(nest.inner.back().strides.at(x), Dim(1));
}

TEST(LoopNest, UnitsOfAPlainKernelAndOfAnElementTransposeKeepTheDomainOrder) {
  const FusedKernel plain = only_kernel({6, 8, 16}, [](Graph& g, Value* x) { return tanh(g, x); });
  const LoopNest flat = build_loop_nest(plain.space, plain.inputs);
  EXPECT_TRUE(flat.outer.empty());  // merged into one flat loop, cut in column tiles
  EXPECT_EQ(flat.inner.back().extent, Dim(768));
  // The last axis moves: x is read across rows (walks_across_rows), and the rows (the output's
  // [8, 16], one merged axis) keep the output's order.
  const FusedKernel across = only_kernel({6, 8, 16}, [](Graph& g, Value* x) { return tanh(g, transpose(g, x, {1, 2, 0})); });
  const LoopNest nest = build_loop_nest(across.space, across.inputs);
  EXPECT_EQ(outer_strides_of(nest, across.outputs.at(0)), (std::vector<int64_t>{6}));
  EXPECT_TRUE(nest.walks_across_rows(across.inputs));
}

}  // namespace
}  // namespace tilefuse::fusion
