// The TopN solver on real fused kernels: distinct candidates, best predicted first, within the
// device limit; the compile-path decision; the cost model's basic sense.
#include <gtest/gtest.h>

#include <set>

#include "fusion/execution_plan.h"
#include "tiling/compile_path.h"
#include "tiling/cost_model.h"
#include "tiling/kernel_profile.h"
#include "tiling/solver.h"

namespace tilefuse::tiling {
namespace {

// x[rows, cols] -> (x * 2 + 1) -> Tanh, one elementwise kernel.
fusion::FusedKernel elementwise_kernel(Dim rows, int64_t cols) {
  static std::vector<std::unique_ptr<fusion::ExecutionPlan>> keep;  // kernels point into their graph
  Graph g;
  Value* x = g.add_input("x", DType::f32, {rows, Dim(cols)});
  Value* two = g.add_constant("two", Tensor::scalar_f32(2.0f));
  Value* one = g.add_constant("one", Tensor::scalar_f32(1.0f));
  Value* a = g.add_node("Mul", "mul", {x, two}, {"a"})->outputs[0];
  Value* b = g.add_node("Add", "add", {a, one}, {"b"})->outputs[0];
  Value* c = g.add_node("Tanh", "tanh", {b}, {"c"})->outputs[0];
  g.add_output(c);
  g.infer_shapes();
  keep.push_back(std::make_unique<fusion::ExecutionPlan>(fusion::plan_for_execution(g, true)));
  for (const auto& step : keep.back()->plan.steps) {
    if (step.kind == fusion::StepKind::Kernel) return step.kernel;
  }
  ADD_FAILURE() << "no kernel in the plan";
  return {};
}

// Sum over axis 0 of x[rows, cols]: a column reduction.
fusion::FusedKernel column_sum_kernel(int64_t rows, int64_t cols) {
  static std::vector<std::unique_ptr<fusion::ExecutionPlan>> keep;
  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim(rows), Dim(cols)});
  g.add_output(g.add_node("ReduceSum", "sum", {x}, {"s"}, {{"axes", std::vector<int64_t>{0}}})->outputs[0]);
  g.infer_shapes();
  keep.push_back(std::make_unique<fusion::ExecutionPlan>(fusion::plan_for_execution(g, true)));
  return keep.back()->plan.steps.front().kernel;
}

HardwareModel machine() {
  HardwareModel hw;
  hw.cores = 4;
  hw.core_gbps = 12;
  hw.shared_gbps = 24;
  hw.ghz = 3;
  return hw;
}

TEST(Solver, CandidatesAreDistinctBestFirstAndWithinTheLimit) {
  const fusion::FusedKernel k = elementwise_kernel(Dim(4096), 1024);
  const auto all = top_candidates(k, machine(), 4, 0);
  ASSERT_GT(all.size(), 10u);
  std::set<std::string> reprs;
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_TRUE(reprs.insert(all[i].tiling.repr()).second) << all[i].tiling.repr();
    EXPECT_LE(all[i].tiling.block_dim, 4);
    EXPECT_GE(all[i].tiling.units_per_block, 1);
    if (i > 0) {
      EXPECT_LE(all[i - 1].predicted_us, all[i].predicted_us);
    }
    EXPECT_FALSE(all[i].explanation.empty());
  }
  const auto top3 = top_candidates(k, machine(), 4, 3);
  ASSERT_EQ(top3.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(top3[i].tiling, all[i].tiling);
}

TEST(Solver, ADeviceLimitOfOneMeansOneWorker) {
  for (const auto& c : top_candidates(elementwise_kernel(Dim(4096), 1024), machine(), 1, 0)) {
    EXPECT_EQ(c.tiling.block_dim, 1) << c.tiling.repr();
  }
}

TEST(Solver, LargeKernelsUseEveryWorkerAndSmallOnesFewer) {
  const auto large = top_candidates(elementwise_kernel(Dim(65536), 1024), machine(), 4, 1);
  ASSERT_EQ(large.size(), 1u);
  EXPECT_EQ(large[0].tiling.block_dim, 4) << large[0].explanation;
  // 4 KiB of work: waking three more workers costs more than it saves.
  const auto tiny = top_candidates(elementwise_kernel(Dim(1), 1024), machine(), 4, 1);
  EXPECT_EQ(tiny[0].tiling.block_dim, 1) << tiny[0].explanation;
}

TEST(Solver, LargeOutputsStreamPastTheCaches) {
  const auto best = top_candidates(elementwise_kernel(Dim(65536), 1024), machine(), 4, 1);
  EXPECT_TRUE(best[0].tiling.stream_stores) << best[0].explanation;
  const auto small = top_candidates(elementwise_kernel(Dim(64), 1024), machine(), 4, 1);
  EXPECT_FALSE(small[0].tiling.stream_stores) << small[0].explanation;
}

// A symbolic kernel is planned at the bindings it is given (a jit shape bucket) exactly as the
// static kernel of those sizes, and without them at the planning size.
TEST(Solver, SymbolicKernelsArePlannedAtTheGivenBindings) {
  const fusion::FusedKernel symbolic = elementwise_kernel(Dim::symbol("N"), 1024);
  const auto at_bucket = top_candidates(symbolic, machine(), 4, 0, {{"N", 65536}});
  const auto static_large = top_candidates(elementwise_kernel(Dim(65536), 1024), machine(), 4, 0);
  ASSERT_EQ(at_bucket.size(), static_large.size());
  for (size_t i = 0; i < at_bucket.size(); ++i) EXPECT_EQ(at_bucket[i].tiling, static_large[i].tiling) << i;
  EXPECT_TRUE(at_bucket[0].tiling.stream_stores);
  const auto planned = top_candidates(symbolic, machine(), 4, 1);
  EXPECT_EQ(planned[0].tiling, top_candidates(elementwise_kernel(Dim(kJitPlanningSize), 1024), machine(), 4, 1)[0].tiling);
}

TEST(Solver, ColumnReductionsTileTheKeptColumns) {
  const KernelProfile p = profile_kernel(column_sum_kernel(4096, 1000));
  EXPECT_TRUE(p.column_reduction);
  EXPECT_EQ(p.columns, 1000);
  EXPECT_EQ(p.inner, 4096 * 1000);
  EXPECT_EQ(p.streamed_read_bytes, 4096 * 1000 * 4);  // every unit reads rows of its own
  EXPECT_EQ(p.scratch_row_bytes, 0);
  const auto all = top_candidates(column_sum_kernel(4096, 1000), machine(), 4, 0);
  std::set<int64_t> tiles;
  for (const auto& c : all) tiles.insert(c.tiling.column_tile);
  // Accumulator arrays need a tile: never 0 ("whole row"), at most 512 columns.
  EXPECT_EQ(tiles, (std::set<int64_t>{64, 128, 256, 512})) << all.front().explanation;
  // Few columns: one tile holds them all, rounded up to whole vectors.
  std::set<int64_t> narrow;
  for (const auto& c : top_candidates(column_sum_kernel(4096, 37), machine(), 4, 0)) narrow.insert(c.tiling.column_tile);
  EXPECT_EQ(narrow, (std::set<int64_t>{48}));
  // 1000 columns in tiles of 128 are 8 units: enough for every worker.
  EXPECT_EQ(all.front().tiling.block_dim, 4) << all.front().explanation;
}

TEST(CompilePath, StaticShapesGoStaticSymbolicOnesJit) {
  const fusion::FusedKernel fixed = elementwise_kernel(Dim(64), 256);
  const fusion::FusedKernel symbolic = elementwise_kernel(Dim::symbol("N"), 256);
  EXPECT_EQ(decide_compile_path(fixed, 1), CompilePath::StaticOne);
  EXPECT_EQ(decide_compile_path(fixed, 3), CompilePath::StaticTopN);
  EXPECT_EQ(decide_compile_path(symbolic, 1), CompilePath::Jit);
  EXPECT_EQ(decide_compile_path(symbolic, 3), CompilePath::Jit);
}

TEST(CostModel, MoreBandwidthIsNeverSlower) {
  const KernelProfile p = profile_kernel(elementwise_kernel(Dim(4096), 1024));
  const KernelTiling t{.units_per_block = 64, .column_tile = 0, .stream_stores = true, .prefetch_ahead = 0, .block_dim = 4};
  HardwareModel slow = machine(), fast = machine();
  fast.core_gbps *= 2;
  fast.shared_gbps *= 2;
  EXPECT_LT(estimate_cost(p, t, fast).total_us, estimate_cost(p, t, slow).total_us);
}

TEST(CostModel, ImbalanceIsCounted) {
  // 5 x 1024 contiguous elements are one flat row: tiles of 1024 make 5 units for 4 workers.
  const KernelProfile p = profile_kernel(elementwise_kernel(Dim(5), 1024));
  const KernelTiling t{.units_per_block = 1, .column_tile = 1024, .stream_stores = false, .prefetch_ahead = 0, .block_dim = 4};
  const CostEstimate e = estimate_cost(p, t, machine());
  EXPECT_DOUBLE_EQ(e.imbalance, 2.0 * 4 / 5);
}

}  // namespace
}  // namespace tilefuse::tiling
