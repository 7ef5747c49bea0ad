// find_shape_only_steps: what a dynamic export computes from shapes alone (Shape, Size and every
// op fed only by them and constants, views included) is marked; a step that reads input data,
// directly or through another step, and every generated kernel are not.
#include "fusion/shape_only_steps.h"

#include <gtest/gtest.h>

#include "fusion/execution_plan.h"

namespace tilefuse::fusion {
namespace {

Value* scalar_i64(Graph& g, const std::string& name, int64_t v) { return g.add_constant(name, Tensor::scalar_i64(v)); }

// x: f32[N, 8], mask: i64[N]. Position ids from x's shape are added to x; the mask is cast and
// multiplied in; Size(x) is an output of its own.
Graph positions_graph() {
  Graph g;
  g.name = "positions";
  Value* x = g.add_input("x", DType::f32, {Dim::symbol("N"), 8});
  Value* mask = g.add_input("mask", DType::i64, {Dim::symbol("N")});
  Value* shape = g.add_node("Shape", "shape", {x}, {"shape"})->outputs[0];
  Value* n = g.add_node("Gather", "n", {shape, scalar_i64(g, "zero", 0)}, {"n"})->outputs[0];
  Value* pos = g.add_node("Range", "range", {scalar_i64(g, "start", 0), n, scalar_i64(g, "step", 1)}, {"pos"})->outputs[0];
  Value* posf = g.add_node("Cast", "pos_f32", {pos}, {"posf"}, {{"to", int64_t{1}}})->outputs[0];
  Value* axes = g.add_constant("axes", Tensor::from_vector<int64_t>(DType::i64, {1}, {1}));
  Value* column = g.add_node("Unsqueeze", "column", {posf, axes}, {"column"})->outputs[0];
  Value* shifted = g.add_node("Add", "shift", {x, column}, {"shifted"})->outputs[0];
  Value* maskf = g.add_node("Cast", "mask_f32", {mask}, {"maskf"}, {{"to", int64_t{1}}})->outputs[0];
  Value* mask_column = g.add_node("Unsqueeze", "mask_column", {maskf, axes}, {"mask_column"})->outputs[0];
  g.add_output(g.add_node("Mul", "masked", {shifted, mask_column}, {"y"})->outputs[0]);
  g.add_output(g.add_node("Size", "size", {x}, {"size"})->outputs[0]);
  g.add_output(pos);
  g.infer_shapes();
  return g;
}

std::string step_name(const PlanStep& step) { return step.kind == StepKind::Kernel ? step.kernel.name : step.node->name; }

TEST(ShapeOnlySteps, MarksWhatShapesAloneDetermine) {
  const ExecutionPlan planned = plan_for_execution(positions_graph(), true);
  const std::vector<bool> shape_only = find_shape_only_steps(planned.plan);
  ASSERT_EQ(shape_only.size(), planned.plan.steps.size());
  std::set<std::string> marked, unmarked;
  for (size_t i = 0; i < shape_only.size(); ++i) (shape_only[i] ? marked : unmarked).insert(step_name(planned.plan.steps[i]));
  SCOPED_TRACE(print_plan(planned.plan));
  EXPECT_EQ(marked, (std::set<std::string>{"shape", "n", "range", "pos_f32", "column", "size"}));
  EXPECT_TRUE(unmarked.count("kernel_cast_0"));  // the mask's Cast reads data: a generated kernel
  EXPECT_TRUE(unmarked.count("mask_column"));
  for (size_t i = 0; i < shape_only.size(); ++i) {
    if (planned.plan.steps[i].kind == StepKind::Kernel) {
      EXPECT_FALSE(shape_only[i]) << step_name(planned.plan.steps[i]);
    }
  }
  // The kernel and the mask's Cast run; the views of the mask are free.
  EXPECT_EQ(run_time_launches(planned.plan, shape_only), 2);
}

TEST(ShapeOnlySteps, DataReachesThroughAnyOperand) {
  // Shape(x) + x[0]: one operand is shape-only, the other is data, so the sum is data.
  Graph g;
  Value* x = g.add_input("x", DType::i64, {Dim::symbol("N")});
  Value* shape = g.add_node("Shape", "shape", {x}, {"shape"})->outputs[0];
  Value* first = g.add_node("Gather", "first", {x, scalar_i64(g, "zero", 0)}, {"first"})->outputs[0];
  g.add_output(g.add_node("Add", "sum", {shape, first}, {"sum"})->outputs[0]);
  g.infer_shapes();
  const ExecutionPlan planned = plan_for_execution(g, true);
  const std::vector<bool> shape_only = find_shape_only_steps(planned.plan);
  for (size_t i = 0; i < shape_only.size(); ++i) {
    EXPECT_EQ(shape_only[i], step_name(planned.plan.steps[i]) == "shape") << step_name(planned.plan.steps[i]);
  }
}

// Integer arithmetic can be a generated kernel, but not on shape-only values: those stay steps
// the executor computes once per shape, never on a run.
TEST(ShapeOnlySteps, ThePlannerKeepsThemOutOfKernels) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim::symbol("N")});
  Value* shape = g.add_node("Shape", "shape", {x}, {"shape"})->outputs[0];
  Value* twice = g.add_node("Mul", "twice", {shape, scalar_i64(g, "two", 2)}, {"twice"})->outputs[0];
  Value* as_float = g.add_node("Cast", "as_float", {twice}, {"as_float"}, {{"to", int64_t{1}}})->outputs[0];
  g.add_output(g.add_node("Add", "shifted", {x, as_float}, {"y"})->outputs[0]);
  g.infer_shapes();
  EXPECT_EQ(shape_only_nodes(g.nodes()).size(), 3u);
  const ExecutionPlan planned = plan_for_execution(g, true);
  const std::vector<bool> shape_only = find_shape_only_steps(planned.plan);
  SCOPED_TRACE(print_plan(planned.plan));
  ASSERT_EQ(planned.plan.steps.size(), 4u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NE(planned.plan.steps[i].kind, StepKind::Kernel) << step_name(planned.plan.steps[i]);
    EXPECT_TRUE(shape_only[i]) << step_name(planned.plan.steps[i]);
  }
  EXPECT_EQ(planned.plan.steps[3].kind, StepKind::Kernel);
}

}  // namespace
}  // namespace tilefuse::fusion
