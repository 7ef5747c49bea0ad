// chain_rows (through plan_for_execution): attention whose scores are too large for the caches
// becomes a row chain whose steps are consecutive, with its kernel made row_by_row and the V
// projection between them moved before; scores that stay in cache, are read twice, or feed the
// second product as its B are no chain. (tests/e2e/row_chain_test.cpp runs chains.)
#include <gtest/gtest.h>

#include "fusion/execution_plan.h"
#include "fusion/row_chains.h"

namespace tilefuse::fusion {
namespace {

Value* op(Graph& g, const std::string& type, std::vector<Value*> inputs, AttributeMap attrs = {}) {
  const std::string name = type + std::to_string(g.num_nodes());
  return g.add_node(type, name, std::move(inputs), {name + "_out"}, std::move(attrs))->outputs[0];
}

Value* softmax(Graph& g, Value* x) { return op(g, "Softmax", {x}, {{"axis", int64_t{-1}}}); }

// softmax(q kt) v with q [1, rows, 16], kt [1, 16, rows], v = x w computed after the softmax.
Graph attention(int64_t rows) {
  Graph g;
  Value* q = g.add_input("q", DType::f32, {1, rows, 16});
  Value* kt = g.add_input("kt", DType::f32, {1, 16, rows});
  Value* x = g.add_input("x", DType::f32, {1, rows, 8});
  Value* p = softmax(g, op(g, "MatMul", {q, kt}));
  Value* v = op(g, "MatMul", {x, g.add_constant("w", Tensor(DType::f32, {8, 16}))});
  g.add_output(op(g, "MatMul", {p, v}));
  g.infer_shapes();
  return g;
}

TEST(RowChains, AttentionOverLargeScoresIsAChainOfConsecutiveSteps) {
  const ExecutionPlan planned = plan_for_execution(attention(1024), true);  // 4 MiB of scores
  const FusionPlan& plan = planned.plan;
  ASSERT_EQ(plan.row_chains.size(), 1u) << print_plan(plan);
  const RowChain& c = plan.row_chains[0];
  EXPECT_EQ(c.kernel, c.first_product + 1);
  EXPECT_EQ(c.second_product, c.kernel + 1);
  EXPECT_EQ(plan.steps[c.first_product].node->op, "MatMul");
  EXPECT_TRUE(plan.steps[c.kernel].kernel.row_by_row);
  EXPECT_EQ(plan.steps[c.second_product].node->input(0), plan.steps[c.kernel].kernel.outputs[0]);
  // The V projection, after the softmax in the graph, now runs before the chain.
  const Value* v = plan.steps[c.second_product].node->input(1);
  bool v_before = false;
  for (size_t s = 0; s < c.first_product; ++s) v_before = v_before || (plan.steps[s].node && plan.steps[s].node->outputs[0] == v);
  EXPECT_TRUE(v_before) << print_plan(plan);
  EXPECT_NE(print_plan(plan).find("row chain"), std::string::npos);
}

TEST(RowChains, ScoresThatStayInCacheAreNoChain) {
  const ExecutionPlan planned = plan_for_execution(attention(256), true);  // 256 KiB
  EXPECT_TRUE(planned.plan.row_chains.empty());
  for (const PlanStep& step : planned.plan.steps) EXPECT_FALSE(step.kind == StepKind::Kernel && step.kernel.row_by_row);
}

TEST(RowChains, ProbabilitiesReadTwiceAreNoChain) {
  Graph g;
  Value* q = g.add_input("q", DType::f32, {1, 1024, 16});
  Value* kt = g.add_input("kt", DType::f32, {1, 16, 1024});
  Value* v = g.add_input("v", DType::f32, {1, 1024, 16});
  Value* p = softmax(g, op(g, "MatMul", {q, kt}));
  g.add_output(op(g, "MatMul", {p, v}));
  g.add_output(op(g, "ReduceSum", {p}, {{"keepdims", int64_t{1}}}));
  g.infer_shapes();
  EXPECT_TRUE(plan_for_execution(g, true).plan.row_chains.empty());
}

TEST(RowChains, ProbabilitiesAsTheSecondProductsBAreNoChain) {
  Graph g;
  Value* q = g.add_input("q", DType::f32, {1, 1024, 16});
  Value* kt = g.add_input("kt", DType::f32, {1, 16, 1024});
  Value* v = g.add_input("vt", DType::f32, {1, 16, 1024});
  g.add_output(op(g, "MatMul", {v, softmax(g, op(g, "MatMul", {q, kt}))}));
  g.infer_shapes();
  EXPECT_TRUE(plan_for_execution(g, true).plan.row_chains.empty());
}

TEST(RowChains, UnfusedPlansHaveNone) {
  EXPECT_TRUE(plan_for_execution(attention(1024), false).plan.row_chains.empty());
}

}  // namespace
}  // namespace tilefuse::fusion
