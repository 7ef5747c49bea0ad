// plan_for_execution: the graph copy it plans is decomposed, the caller's graph is untouched,
// and the plan stays bound to its own graph copy, also after a move.
#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "fusion/execution_plan.h"

namespace tilefuse::fusion {
namespace {

// y = Relu(Softmax(x)), x: f32[4, 8].
Graph softmax_relu() {
  Graph g;
  g.name = "softmax_relu";
  Value* x = g.add_input("x", DType::f32, {4, 8});
  Value* s = g.add_node("Softmax", "softmax", {x}, {"s"})->outputs[0];
  g.add_output(g.add_node("Relu", "relu", {s}, {"y"})->outputs[0]);
  g.infer_shapes();
  return g;
}

std::vector<const Node*> planned_nodes(const FusionPlan& plan) {
  std::vector<const Node*> nodes;
  for (const PlanStep& step : plan.steps) {
    if (step.kind == StepKind::Kernel) {
      nodes.insert(nodes.end(), step.kernel.nodes.begin(), step.kernel.nodes.end());
    } else {
      nodes.push_back(step.node);
    }
  }
  return nodes;
}

// Every node the plan runs is a node of `graph` (not of the caller's graph or a stale copy).
void expect_plan_points_into(const FusionPlan& plan, const Graph& graph) {
  std::vector<Node*> owned = graph.nodes();
  const std::set<const Node*> nodes(owned.begin(), owned.end());
  for (const Node* n : planned_nodes(plan)) EXPECT_TRUE(nodes.count(n)) << n->name << " is not in the planned graph";
}

TEST(ExecutionPlan, PlansTheDecomposedCopyAndLeavesTheGraphAlone) {
  const Graph original = softmax_relu();
  ExecutionPlan planned = plan_for_execution(original, true);
  EXPECT_EQ(original.num_nodes(), 2u);
  EXPECT_EQ(original.nodes()[0]->op, "Softmax");
  for (const Node* n : planned_nodes(planned.plan)) EXPECT_NE(n->op, "Softmax");
  EXPECT_GT(planned.graph.num_nodes(), 2u);
  expect_plan_points_into(planned.plan, planned.graph);
  ASSERT_EQ(planned.plan.num_kernels(), 1);  // the decomposed Softmax and its Relu epilogue
  EXPECT_EQ(planned.plan.compulsory_bytes(), Dim(2 * 4 * 8 * 4));
}

TEST(ExecutionPlan, UnfusedRunsEveryDecomposedOpOnItsOwn) {
  ExecutionPlan planned = plan_for_execution(softmax_relu(), false);
  EXPECT_EQ(planned.plan.num_kernels(), static_cast<int64_t>(planned.graph.num_nodes()));
  EXPECT_EQ(planned_nodes(planned.plan).size(), planned.graph.num_nodes());
}

TEST(ExecutionPlan, StaysValidAfterAMove) {
  ExecutionPlan planned = plan_for_execution(softmax_relu(), true);
  const std::vector<const Node*> before = planned_nodes(planned.plan);
  ExecutionPlan moved = std::move(planned);
  expect_plan_points_into(moved.plan, moved.graph);
  EXPECT_EQ(planned_nodes(moved.plan), before);
}

}  // namespace
}  // namespace tilefuse::fusion
