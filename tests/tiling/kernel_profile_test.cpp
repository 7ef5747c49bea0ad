// What the cost model is told about a fused kernel: here, its passes over a row, which must be
// those the code generator schedules (codegen/kernel_schedule.cpp prints them in each kernel's
// header), or the model charges a second read of every row that the kernel never makes.
#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "fusion/execution_plan.h"
#include "tiling/kernel_profile.h"

namespace tilefuse::tiling {
namespace {

// The one kernel of the fused plan of the graph `build` makes from an input x: f32[8, 64, 256].
fusion::FusedKernel only_kernel(const std::function<Value*(Graph&, Value*)>& build) {
  static std::vector<std::unique_ptr<fusion::ExecutionPlan>> keep;  // kernels point into their graph
  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim(8), Dim(64), Dim(256)});
  g.add_output(build(g, x));
  g.infer_shapes();
  keep.push_back(std::make_unique<fusion::ExecutionPlan>(fusion::plan_for_execution(g, true)));
  const auto& steps = keep.back()->plan.steps;
  EXPECT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps.front().kind, fusion::StepKind::Kernel);
  return steps.front().kernel;
}

Value* reduce(Graph& g, const char* op, Value* x, int64_t axis, const char* name) {
  return g.add_node(op, name, {x}, {name}, {{"axes", std::vector<int64_t>{axis}}})->outputs[0];
}

TEST(KernelProfile, ARowLevelOpAfterAReductionAddsNoPass) {
  // x.sum(1) + x.mean(1): a column reduction whose Add runs on the sums, between passes.
  const fusion::FusedKernel k = only_kernel([](Graph& g, Value* x) {
    Value* add = g.add_node("Add", "add", {reduce(g, "ReduceSum", x, 1, "s"), reduce(g, "ReduceMean", x, 1, "m")}, {"y"})
                     ->outputs[0];
    return add;
  });
  EXPECT_EQ(profile_kernel(k, {}).passes, 1);
}

TEST(KernelProfile, AFullSizeOpAfterAReductionTakesTheNextPass) {
  // sigmoid(x) * relu(x).sum(-1): the product needs the finished sum.
  const fusion::FusedKernel k = only_kernel([](Graph& g, Value* x) {
    Value* sig = g.add_node("Sigmoid", "sig", {x}, {"sig"})->outputs[0];
    Value* relu = g.add_node("Relu", "relu", {x}, {"relu"})->outputs[0];
    return g.add_node("Mul", "mul", {sig, reduce(g, "ReduceSum", relu, 2, "s")}, {"y"})->outputs[0];
  });
  EXPECT_EQ(profile_kernel(k, {}).passes, 2);
}

TEST(KernelProfile, ChainedReductionsTakeAPassEach) {
  // x - max(x) then its sum: softmax's denominator, two passes; a lone sum, one.
  const fusion::FusedKernel chained = only_kernel([](Graph& g, Value* x) {
    Value* shifted = g.add_node("Sub", "sub", {x, reduce(g, "ReduceMax", x, 2, "mx")}, {"d"})->outputs[0];
    return reduce(g, "ReduceSum", shifted, 2, "s");
  });
  EXPECT_EQ(profile_kernel(chained, {}).passes, 2);
  const fusion::FusedKernel lone = only_kernel([](Graph& g, Value* x) { return reduce(g, "ReduceSum", x, 2, "s"); });
  EXPECT_EQ(profile_kernel(lone, {}).passes, 1);
}

}  // namespace
}  // namespace tilefuse::tiling
