// What the code generator decides before printing (codegen/kernel_schedule.h), read as data.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "codegen/kernel_schedule.h"
#include "fusion/execution_plan.h"

namespace tilefuse::codegen {
namespace {

// softmax(x * 0.125) over rows of 512, one fused kernel; its plan lives as long as the test.
struct SoftmaxKernel {
  Graph graph;
  std::unique_ptr<fusion::ExecutionPlan> planned;
  const fusion::FusedKernel* kernel = nullptr;

  SoftmaxKernel() {
    Value* x = graph.add_input("x", DType::f32, {Dim::symbol("N"), Dim(512)});
    Value* s = graph.add_constant("s", Tensor::scalar_f32(0.125f));
    Value* scaled = graph.add_node("Mul", "mul", {x, s}, {"scaled"})->outputs[0];
    graph.add_output(graph.add_node("Softmax", "softmax", {scaled}, {"y"})->outputs[0]);
    graph.infer_shapes();
    planned = std::make_unique<fusion::ExecutionPlan>(fusion::plan_for_execution(graph, true));
    for (const auto& step : planned->plan.steps) {
      if (step.kind == fusion::StepKind::Kernel) kernel = &step.kernel;
    }
  }
};

TEST(KernelSchedule, SoftmaxTakesThreePassesAndKeepsTwoRowsForLaterPasses) {
  SoftmaxKernel k;
  ASSERT_NE(k.kernel, nullptr);
  const KernelSchedule s = schedule_kernel(*k.kernel, KernelTiling{}, KernelVariant::Jit);
  EXPECT_EQ(s.num_passes, 3);  // max; exp and sum; divide
  EXPECT_EQ(s.prefetch_pass, 1);  // the exp pass has the most arithmetic
  std::vector<int> reduction_passes;
  for (const Node* n : k.kernel->nodes) {
    if (is_reduction(*n)) reduction_passes.push_back(s.reduction_pass.at(n));
  }
  EXPECT_EQ(reduction_passes, (std::vector<int>{0, 1}));
  // Kept in scratch rows: x * 0.125 (made in pass 0, read again by exp in pass 1) and the
  // exponentials (made in pass 1, divided in pass 2).
  EXPECT_EQ(s.scratch_slot.size(), 2u);
  EXPECT_EQ(s.symbols, (std::vector<std::string>{"N"}));
  ASSERT_FALSE(s.buffers.empty());
  EXPECT_EQ(s.buffers.front()->name, "x");
  EXPECT_EQ(s.streamed, (std::vector<const Value*>{s.buffers.front()}));
  EXPECT_TRUE(s.transposed.empty());
}

TEST(KernelSchedule, IsTheSameWhereverTheGraphLies) {
  // Two copies of one graph at different addresses schedule alike (no pointer order leaks in).
  SoftmaxKernel a, b;
  const KernelSchedule sa = schedule_kernel(*a.kernel, KernelTiling{}, KernelVariant::Jit);
  const KernelSchedule sb = schedule_kernel(*b.kernel, KernelTiling{}, KernelVariant::Jit);
  for (size_t i = 0; i < a.kernel->nodes.size(); ++i) {
    const Value* va = a.kernel->nodes[i]->outputs[0];
    const Value* vb = b.kernel->nodes[i]->outputs[0];
    EXPECT_EQ(sa.scratch_slot.count(va), sb.scratch_slot.count(vb));
    if (sa.scratch_slot.count(va)) {
      EXPECT_EQ(sa.scratch_slot.at(va), sb.scratch_slot.at(vb));
    }
    EXPECT_EQ(sa.pass_of.count(va) ? sa.pass_of.at(va) : -1, sb.pass_of.count(vb) ? sb.pass_of.at(vb) : -1);
  }
}

}  // namespace
}  // namespace tilefuse::codegen
