// The code generator's placement decisions, read from the generated text: which loops run over
// packs, which pass carries the software prefetch of the next rows, how a column reduction
// walks its rows, how a materialised transpose reads its input, and how a gather loads.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "codegen/kernel_emitter.h"
#include "fusion/execution_plan.h"

namespace tilefuse::codegen {
namespace {

// The single fused kernel of graph g (kept alive: kernels point into their graph).
fusion::FusedKernel only_kernel(std::unique_ptr<Graph> g) {
  static std::vector<std::unique_ptr<Graph>> graphs;
  static std::vector<std::unique_ptr<fusion::ExecutionPlan>> plans;
  g->infer_shapes();
  plans.push_back(std::make_unique<fusion::ExecutionPlan>(fusion::plan_for_execution(*g, true)));
  graphs.push_back(std::move(g));
  for (const auto& step : plans.back()->plan.steps) {
    if (step.kind == fusion::StepKind::Kernel) return step.kernel;
  }
  ADD_FAILURE() << "no kernel in the plan";
  return {};
}

// softmax(x * 0.125) over rows of `cols`: three passes (max; exp and sum; divide).
fusion::FusedKernel softmax_kernel(int64_t cols) {
  auto g = std::make_unique<Graph>();
  Value* x = g->add_input("x", DType::f32, {Dim(64), Dim(cols)});
  Value* s = g->add_constant("s", Tensor::scalar_f32(0.125f));
  Value* scaled = g->add_node("Mul", "mul", {x, s}, {"scaled"})->outputs[0];
  g->add_output(g->add_node("Softmax", "softmax", {scaled}, {"y"})->outputs[0]);  // axis -1
  return only_kernel(std::move(g));
}

std::string emit(const fusion::FusedKernel& k, int64_t prefetch_ahead) {
  KernelTiling tiling;
  tiling.units_per_block = 8;
  tiling.prefetch_ahead = prefetch_ahead;
  return emit_kernel(k, tiling, KernelVariant::Static).code;
}

// The text of pass p's loop (from its "// pass p" comment to the next pass or the end).
std::string pass_text(const std::string& source, int p) {
  const size_t begin = source.find("// pass " + std::to_string(p));
  if (begin == std::string::npos) return "";
  const size_t end = source.find("// pass " + std::to_string(p + 1), begin);
  return source.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

TEST(KernelEmitter, PrefetchGoesIntoThePassWithTheMostArithmetic) {
  const std::string source = emit(softmax_kernel(512), 512);
  ASSERT_NE(pass_text(source, 2), "") << source;
  EXPECT_EQ(pass_text(source, 0).find("tf::prefetch"), std::string::npos) << source;
  EXPECT_NE(pass_text(source, 1).find("tf::prefetch<V>(b0_row + i + kPrefetchAhead);"), std::string::npos) << source;
  EXPECT_EQ(pass_text(source, 2).find("tf::prefetch"), std::string::npos) << source;
}

TEST(KernelEmitter, NoPrefetchWhenTheTilingHasNone) {
  EXPECT_EQ(emit(softmax_kernel(512), 0).find("tf::prefetch"), std::string::npos);
}

TEST(KernelEmitter, RowsThatHoldAPackLoopOverPacks) {
  const std::string long_rows = emit(softmax_kernel(512), 0);
  EXPECT_NE(long_rows.find("tf::for_lanes_packed("), std::string::npos);
  const std::string short_rows = emit(softmax_kernel(20), 0);
  EXPECT_EQ(short_rows.find("tf::for_lanes_packed("), std::string::npos);
  EXPECT_NE(short_rows.find("tf::for_lanes("), std::string::npos);
}

// x^T + b over x[rows, cols]: b a scalar, or a bias per row of the result (bias_per_row).
fusion::FusedKernel transpose_kernel(bool bias_per_row) {
  auto g = std::make_unique<Graph>();
  Value* x = g->add_input("x", DType::f32, {Dim(512), Dim(256)});
  Value* t = g->add_node("Transpose", "t", {x}, {"t"}, {{"perm", std::vector<int64_t>{1, 0}}})->outputs[0];
  Value* b = bias_per_row ? g->add_constant("b", Tensor(DType::f32, {256, 1})) : g->add_constant("b", Tensor::scalar_f32(1.0f));
  g->add_output(g->add_node("Add", "add", {t, b}, {"y"})->outputs[0]);
  return only_kernel(std::move(g));
}

TEST(KernelEmitter, MaterialisedTransposesReadBlocksTransposedInRegisters) {
  KernelTiling tiling;
  tiling.column_tile = 128;
  const std::string source = emit_kernel(transpose_kernel(false), tiling, KernelVariant::Static).code;
  EXPECT_NE(source.find("const int64_t outer = int64_t{1} * tf::ceil_div(int64_t{256}, tf::kLanes);"), std::string::npos)
      << source;
  EXPECT_NE(source.find("tf::load_transposed(b0_row + i * int64_t{256}, int64_t{256}, v"), std::string::npos) << source;
  // What whole blocks leave is read with strided loads, a row of the block at a time.
  EXPECT_NE(source.find("for (int64_t r = 0; r < block_rows; ++r) {"), std::string::npos) << source;
  EXPECT_NE(source.find("tf::load_strided<V>(b0_sub + i * int64_t{256}, int64_t{256})"), std::string::npos) << source;
  // A bias per row differs within a block: rows one at a time, as before.
  const std::string per_row = emit_kernel(transpose_kernel(true), tiling, KernelVariant::Static).code;
  EXPECT_EQ(per_row.find("load_transposed"), std::string::npos) << per_row;
  EXPECT_NE(per_row.find("tf::load_strided<V>(b0_row + i * int64_t{256}, int64_t{256})"), std::string::npos) << per_row;
}

// torch.gather(x, 1, index) + 1: the gather loads through the index, and a kernel with a gather
// reports an index out of range at the start of its scratch.
TEST(KernelEmitter, GathersLoadThroughTheirIndices) {
  auto g = std::make_unique<Graph>();
  Value* x = g->add_input("x", DType::f32, {Dim(64), Dim(300)});
  Value* index = g->add_input("index", DType::i64, {Dim(64), Dim(100)});
  Value* picked = g->add_node("GatherElements", "gather", {x, index}, {"picked"}, {{"axis", int64_t{1}}})->outputs[0];
  g->add_output(g->add_node("Add", "add", {picked, g->add_constant("one", Tensor::scalar_f32(1.0f))}, {"y"})->outputs[0]);
  const std::string source = emit(only_kernel(std::move(g)), 0);
  EXPECT_NE(source.find("tf::load_gathered<V>(b0_row, int64_t{0}, b1_row + i, int64_t{1}, int64_t{1}, int64_t{300}, "
                        "gather_error, 1)"),
            std::string::npos)
      << source;
  EXPECT_NE(source.find("return tf::kGatherErrorBytes;"), std::string::npos) << source;
}

// An embedding lookup times a mask cast from integers (a native kernel: values keep their types):
// the row's index is checked and turned into an offset once per row, so the loop over the hidden
// dim has no branch and vectorises (before, it was checked per element: 5x slower).
TEST(KernelEmitter, NativeGathersCheckARowsIndexOnceBeforeTheLoop) {
  auto g = std::make_unique<Graph>();
  Value* table = g->add_input("table", DType::f32, {Dim(1000), Dim(64)});
  Value* ids = g->add_input("ids", DType::i64, {Dim(32)});
  Value* mask = g->add_input("mask", DType::i64, {Dim(32), Dim(1)});
  Value* rows = g->add_node("Gather", "gather", {table, ids}, {"rows"})->outputs[0];
  Value* weight = g->add_node("Cast", "cast", {mask}, {"weight"}, {{"to", int64_t{1}}})->outputs[0];
  g->add_output(g->add_node("Mul", "mul", {rows, weight}, {"y"})->outputs[0]);
  const std::string source = emit(only_kernel(std::move(g)), 0);
  ASSERT_NE(source.find("values keep their element types"), std::string::npos) << source;
  const size_t offset = source.find("const int64_t gather1_offset = tf::gathered_offset(int64_t(*b1_row), int64_t{64}, "
                                    "int64_t{1000}, gather_error, 1);");
  const size_t loop = source.find("for (int64_t i = c_begin; i < c_end; ++i)");
  ASSERT_NE(offset, std::string::npos) << source;
  EXPECT_LT(offset, loop) << source;
  EXPECT_NE(source.find("tf::to_compute((b0_row + i)[gather1_offset])"), std::string::npos) << source;
  EXPECT_EQ(source.find("load_gathered_element"), std::string::npos) << source;
}

// Sum over axis 0 of [rows, cols], or (normalise) the mean, variance and normalised tensor.
fusion::FusedKernel column_kernel(int64_t rows, int64_t cols, bool normalise) {
  auto g = std::make_unique<Graph>();
  Value* x = g->add_input("x", DType::f32, {Dim(rows), Dim(cols)});
  auto mean = [&](Value* v, const std::string& name) {
    return g->add_node("ReduceMean", name, {v}, {name + "_out"}, {{"axes", std::vector<int64_t>{0}}})->outputs[0];
  };
  if (!normalise) {
    g->add_output(g->add_node("ReduceSum", "sum", {x}, {"s"}, {{"axes", std::vector<int64_t>{0}}})->outputs[0]);
    return only_kernel(std::move(g));
  }
  Value* m = mean(x, "mean");
  Value* d = g->add_node("Sub", "sub", {x, m}, {"d"})->outputs[0];
  Value* var = mean(g->add_node("Mul", "sq", {d, d}, {"d2"})->outputs[0], "var");
  g->add_output(g->add_node("Div", "div", {d, var}, {"y"})->outputs[0]);
  return only_kernel(std::move(g));
}

TEST(KernelEmitter, ColumnReductionsReadRowsContiguously) {
  KernelTiling tiling;
  tiling.column_tile = 128;
  tiling.prefetch_ahead = 4;
  const std::string source = emit_kernel(column_kernel(512, 256, false), tiling, KernelVariant::Static).code;
  EXPECT_NE(source.find("column reduction: 1 outer x 512 reduced x 256 columns"), std::string::npos) << source;
  EXPECT_NE(source.find("tf::ColumnSumAcc<kColumnTile> acc"), std::string::npos) << source;
  EXPECT_NE(source.find("tf::load<V>(b0_row + (j0 * int64_t{256}) + i)"), std::string::npos) << source;
  EXPECT_EQ(source.find("load_strided"), std::string::npos) << source;
  // The same columns of a row further down, not the next elements of this row.
  EXPECT_NE(source.find("tf::prefetch<V>(b0_row + (j0 * int64_t{256}) + i + kPrefetchAhead * int64_t{256})"),
            std::string::npos)
      << source;
}

TEST(KernelEmitter, ColumnReductionsComputeCarriedValuesAgain) {
  KernelTiling tiling;
  tiling.column_tile = 64;
  const std::string source = emit_kernel(column_kernel(300, 100, true), tiling, KernelVariant::Static).code;
  // x - mean feeds the variance (pass 1) and the output (pass 2): no scratch, computed again.
  EXPECT_NE(source.find("3 pass(es)"), std::string::npos) << source;
  EXPECT_NE(pass_text(source, 2).find("// Sub, computed again"), std::string::npos) << source;
  EXPECT_NE(source.find("tf_scratch_bytes(const int64_t* symbols) {\n  (void)symbols;\n  return 0;"), std::string::npos)
      << source;
  EXPECT_NE(source.find("alignas(64) float v0_col[kColumnTile];"), std::string::npos) << source;
}

// x * 2 over [N, 256]: a jit kernel.
fusion::FusedKernel symbolic_scale_kernel() {
  auto g = std::make_unique<Graph>();
  Value* x = g->add_input("x", DType::f32, {Dim::symbol("N"), Dim(256)});
  Value* two = g->add_constant("two", Tensor::scalar_f32(2.0f));
  g->add_output(g->add_node("Mul", "mul", {x, two}, {"y"})->outputs[0]);
  return only_kernel(std::move(g));
}

// A jit kernel whose tiling streams its stores decides at launch, from its outputs' bytes at the
// run's sizes; given no threshold (and in a static kernel) the tiling's choice is final.
TEST(KernelEmitter, JitKernelChoosesNonTemporalStoresAtLaunch) {
  KernelTiling tiling;
  tiling.stream_stores = true;
  const std::string chooses = emit_kernel(symbolic_scale_kernel(), tiling, KernelVariant::Jit, 1 << 20).code;
  EXPECT_NE(chooses.find("constexpr int64_t kStreamAboveBytes = 1048576;"), std::string::npos) << chooses;
  EXPECT_NE(chooses.find("constexpr bool kStreamStores = decltype(streaming)::value;"), std::string::npos) << chooses;
  EXPECT_NE(chooses.find("const int64_t output_bytes = (int64_t{1024} * sym_N);"), std::string::npos) << chooses;
  EXPECT_NE(chooses.find("non-temporal stores above 1048576 output bytes"), std::string::npos) << chooses;
  for (const std::string& fixed : {emit_kernel(symbolic_scale_kernel(), tiling, KernelVariant::Jit).code,
                                   emit_kernel(softmax_kernel(512), tiling, KernelVariant::Static, 1 << 20).code}) {
    EXPECT_EQ(fixed.find("run_units"), std::string::npos) << fixed;
  }
  tiling.stream_stores = false;
  const std::string never = emit_kernel(symbolic_scale_kernel(), tiling, KernelVariant::Jit, 1 << 20).code;
  EXPECT_EQ(never.find("run_units"), std::string::npos) << never;
}

// A jit row kernel prefetches one row ahead at the run's row length, not at the length the
// tiling was planned at; a static one at the tiling's distance.
TEST(KernelEmitter, JitRowKernelPrefetchesOneRowOfTheRunsLength) {
  auto g = std::make_unique<Graph>();
  Value* x = g->add_input("x", DType::f32, {Dim(4), Dim::symbol("N")});
  g->add_output(g->add_node("Softmax", "softmax", {x}, {"y"})->outputs[0]);
  KernelTiling tiling;
  tiling.prefetch_ahead = 16384;  // the row length at the planning size
  const std::string jit = emit_kernel(only_kernel(std::move(g)), tiling, KernelVariant::Jit).code;
  EXPECT_NE(jit.find("tf::prefetch<V>(b0_row + i + sym_N);"), std::string::npos) << jit;
  const std::string fixed = emit(softmax_kernel(512), 512);
  EXPECT_NE(fixed.find("tf::prefetch<V>(b0_row + i + kPrefetchAhead);"), std::string::npos) << fixed;
}

}  // namespace
}  // namespace tilefuse::codegen
