// Behaviour of the planner on small hand-built graphs: what fuses, what must not, and that a
// user-registered pattern changes the plan.
#include <gtest/gtest.h>

#include "fusion/planner.h"
#include "ir/op_registry.h"

namespace tilefuse::fusion {
namespace {

int64_t kernel_count(const FusionPlan& plan) {
  int64_t n = 0;
  for (const auto& s : plan.steps) n += s.kind == StepKind::Kernel;
  return n;
}

// x -> Exp -> Neg -> Sigmoid, all [64, 128]: one kernel fused, three unfused.
Graph chain() {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {64, 128});
  Value* a = g.add_node("Exp", "exp", {x}, {"a"})->outputs[0];
  Value* b = g.add_node("Neg", "neg", {a}, {"b"})->outputs[0];
  Value* c = g.add_node("Sigmoid", "sig", {b}, {"c"})->outputs[0];
  g.add_output(c);
  g.infer_shapes();
  return g;
}

TEST(Planner, FusesElementwiseChainIntoOneKernel) {
  Graph g = chain();
  FusionPlan fused = plan_fusion(g, passes::PatternRegistry::with_builtins());
  ASSERT_EQ(kernel_count(fused), 1);
  EXPECT_EQ(fused.steps[0].kernel.nodes.size(), 3u);
  EXPECT_EQ(fused.compulsory_bytes(), Dim(2 * 64 * 128 * 4));
  PlannerOptions off;
  off.fuse = false;
  FusionPlan unfused = plan_fusion(g, passes::PatternRegistry::with_builtins(), off);
  EXPECT_EQ(kernel_count(unfused), 3);
  EXPECT_EQ(unfused.compulsory_bytes(), Dim(6 * 64 * 128 * 4));
}

TEST(Planner, WithoutPatternsNothingFuses) {
  Graph g = chain();
  FusionPlan plan = plan_fusion(g, passes::PatternRegistry::empty());
  EXPECT_EQ(kernel_count(plan), 3);
}

TEST(Planner, UserPatternChangesThePlan) {
  Graph g = chain();
  // Only Exp -> Neg is fusable with this registry: two kernels instead of three.
  passes::PatternRegistry registry = passes::PatternRegistry::empty();
  passes::Pattern p;
  p.name = "exp_then_neg";
  p.nodes = {{"e", {.op_types = {"Exp"}}}, {"n", {.op_types = {"Neg"}}}};
  p.edges = {{"e", "n", 0}};
  registry.add(p);
  FusionPlan plan = plan_fusion(g, registry);
  ASSERT_EQ(kernel_count(plan), 2);
  EXPECT_EQ(plan.steps[0].kernel.nodes.size(), 2u);
  EXPECT_EQ(plan.steps[0].kernel.patterns, std::vector<std::string>{"exp_then_neg"});
}

TEST(Planner, MatmulStaysALibraryCallAndItsEpilogueFuses) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {32, 64});
  Value* w = g.add_constant("w", Tensor(DType::f32, {64, 16}));
  Value* b = g.add_constant("b", Tensor(DType::f32, {16}));
  Value* mm = g.add_node("MatMul", "mm", {x, w}, {"mm"})->outputs[0];
  Value* add = g.add_node("Add", "bias", {mm, b}, {"add"})->outputs[0];
  Value* y = g.add_node("Relu", "relu", {add}, {"y"})->outputs[0];
  g.add_output(y);
  g.infer_shapes();
  FusionPlan plan = plan_fusion(g, passes::PatternRegistry::with_builtins());
  ASSERT_EQ(plan.steps.size(), 2u);
  EXPECT_EQ(plan.steps[0].kind, StepKind::LibraryCall);
  EXPECT_EQ(plan.steps[1].kind, StepKind::Kernel);
  EXPECT_EQ(plan.steps[1].kernel.nodes.size(), 2u);
}

TEST(Planner, DoesNotFuseAcrossAPathThroughAnotherStep) {
  // a = Exp(x); m = MatMul(a, w); y = Add(a, m): fusing Exp with Add would make a cycle through
  // the MatMul, so they stay apart.
  Graph g;
  Value* x = g.add_input("x", DType::f32, {16, 16});
  Value* w = g.add_constant("w", Tensor(DType::f32, {16, 16}));
  Value* a = g.add_node("Exp", "exp", {x}, {"a"})->outputs[0];
  Value* m = g.add_node("MatMul", "mm", {a, w}, {"m"})->outputs[0];
  Value* y = g.add_node("Add", "add", {a, m}, {"y"})->outputs[0];
  g.add_output(y);
  g.infer_shapes();
  FusionPlan plan = plan_fusion(g, passes::PatternRegistry::with_builtins());
  EXPECT_EQ(kernel_count(plan), 2);
}

TEST(Planner, SiblingsReadingOneTensorBecomeOneKernel) {
  // A row sum and an elementwise Exp of the same x: one kernel with two outputs reads x once.
  Graph g;
  Value* x = g.add_input("x", DType::f32, {64, 128});
  Value* axes = g.add_constant("axes", Tensor::from_vector<int64_t>(DType::i64, {1}, {1}));
  g.add_output(g.add_node("ReduceSum", "sum", {x, axes}, {"s"})->outputs[0]);
  g.add_output(g.add_node("Exp", "exp", {x}, {"e"})->outputs[0]);
  g.infer_shapes();
  FusionPlan plan = plan_fusion(g, passes::PatternRegistry::with_builtins());
  ASSERT_EQ(kernel_count(plan), 1);
  EXPECT_EQ(plan.steps[0].kernel.outputs.size(), 2u);
  EXPECT_EQ(plan.steps[0].kernel.patterns, std::vector<std::string>{"siblings"});
  EXPECT_EQ(plan.compulsory_bytes(), Dim((64 * 128 + 64 + 64 * 128) * 4));
  PlannerOptions apart;
  apart.fuse_siblings = false;
  EXPECT_EQ(kernel_count(plan_fusion(g, passes::PatternRegistry::with_builtins(), apart)), 2);
}

TEST(Planner, SiblingsStayApartWhenOneDependsOnTheOtherOrTheyShareOnlyABroadcast) {
  // e = Exp(x); m = MatMul(e, w); y = Add(x, m): Add reads x, but depends on Exp's kernel
  // through the MatMul.
  Graph g;
  Value* x = g.add_input("x", DType::f32, {16, 16});
  Value* w = g.add_constant("w", Tensor(DType::f32, {16, 16}));
  Value* e = g.add_node("Exp", "exp", {x}, {"e"})->outputs[0];
  Value* m = g.add_node("MatMul", "mm", {e, w}, {"m"})->outputs[0];
  g.add_output(g.add_node("Add", "add", {x, m}, {"y"})->outputs[0]);
  // Two kernels of independent inputs that read the same bias row: nothing to gain.
  Value* bias = g.add_input("bias", DType::f32, {16});
  Value* p = g.add_input("p", DType::f32, {16, 16});
  Value* q = g.add_input("q", DType::f32, {16, 16});
  g.add_output(g.add_node("Add", "add_p", {p, bias}, {"pb"})->outputs[0]);
  g.add_output(g.add_node("Mul", "mul_q", {q, bias}, {"qb"})->outputs[0]);
  g.infer_shapes();
  FusionPlan plan = plan_fusion(g, passes::PatternRegistry::with_builtins());
  EXPECT_EQ(kernel_count(plan), 4);
}

TEST(Planner, ReductionsOverDifferentAxesStayApart) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {8, 16});
  Value* axes1 = g.add_constant("axes1", Tensor::from_vector<int64_t>(DType::i64, {1}, {1}));
  Value* axes0 = g.add_constant("axes0", Tensor::from_vector<int64_t>(DType::i64, {1}, {0}));
  Value* s1 = g.add_node("ReduceSum", "s1", {x, axes1}, {"s1"})->outputs[0];
  Value* d = g.add_node("Sub", "d", {x, s1}, {"d"})->outputs[0];
  Value* s0 = g.add_node("ReduceSum", "s0", {d, axes0}, {"s0"})->outputs[0];
  g.add_output(s0);
  g.infer_shapes();
  FusionPlan plan = plan_fusion(g, passes::PatternRegistry::with_builtins());
  EXPECT_EQ(kernel_count(plan), 2);
}

}  // namespace
}  // namespace tilefuse::fusion
