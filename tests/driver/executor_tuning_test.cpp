// The static TopN path through the executor: TopN=1 records the model's choice without
// measuring; TopN=3 builds one static kernel per candidate, measures them on the first run and
// records one winner, which a second executor reuses without compiling or measuring; device
// limits get isolated entries; the jit path has one shared generic entry and is tuned per shape
// bucket.
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "build/build_test_support.h"
#include "ir/tensor_compare.h"
#include "reference/interpreter.h"
#include "driver/executor.h"
#include "tiling/solver.h"
#include "support/scoped_cpu.h"
#include "tune/tuning_record.h"

namespace tilefuse::driver {
namespace {

namespace fs = std::filesystem;
using tilefuse::testing::TempDir;

// y = tanh(x * 2 + b) over [rows, 1024]: an elementwise kernel with a real choice of tilings.
Graph elementwise_graph(Dim rows) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {rows, Dim(1024)});
  Value* b = g.add_input("b", DType::f32, {1024});
  Value* two = g.add_constant("two", Tensor::scalar_f32(2.0f));
  Value* a = g.add_node("Mul", "mul", {x, two}, {"a"})->outputs[0];
  Value* s = g.add_node("Add", "add", {a, b}, {"s"})->outputs[0];
  Value* y = g.add_node("Tanh", "tanh", {s}, {"y"})->outputs[0];
  g.add_output(y);
  g.infer_shapes();
  return g;
}

std::map<std::string, Tensor> inputs_for(int64_t rows) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> uniform(-2, 2);
  Tensor x(DType::f32, {rows, 1024}), b(DType::f32, {1024});
  for (Tensor* t : {&x, &b}) {
    for (int64_t i = 0; i < t->numel(); ++i) t->set_f64(i, uniform(rng));
  }
  return {{"x", x}, {"b", b}};
}

ExecutorOptions options(const TempDir& cache, int threads, int topn) {
  ExecutorOptions o;
  o.device.threads = threads;
  o.compile_threads = 2;
  o.cache_dir = cache.path();
  o.autotune_topn = topn;
  o.hardware = tiling::detect_hardware();  // uncalibrated: tests need no bandwidth probe
  return o;
}

std::vector<fs::path> find(const std::string& root, const std::string& name) {
  std::vector<fs::path> found;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.path().filename() == name) found.push_back(e.path());
  }
  return found;
}

void expect_matches_reference(Executor& exe, const Graph& g, int64_t rows) {
  const auto inputs = inputs_for(rows);
  const std::vector<Tensor> expected = reference::run_graph(g, inputs);
  const std::vector<Tensor> actual = exe.run(inputs);
  const CompareResult r = compare_tensors(actual.at(0), expected.at(0), {1e-5, 1e-6});
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(ExecutorTuning, TopNOneRecordsTheModelsChoiceWithoutMeasuring) {
  TempDir cache;
  const Graph g = elementwise_graph(Dim(256));
  ExecutorCounters counters;
  Executor exe(g, options(cache, 2, 1), counters);
  expect_matches_reference(exe, g, 256);
  EXPECT_EQ(counters.tuning.candidates_measured, 0);
  EXPECT_EQ(counters.cache.compiles, 1);
  const auto records = find(cache.path(), "optimize_tiling");
  ASSERT_EQ(records.size(), 1u);
  const auto record = tune::read_tuning_record(records[0].string());
  ASSERT_TRUE(record);
  EXPECT_EQ(record->topn, 1);
  EXPECT_TRUE(fs::exists(records[0].parent_path() / "static_kernel" / tune::kernel_key(record->winner) / "kernel.so"));
}

TEST(ExecutorTuning, TopNThreeMeasuresOnceAndASecondExecutorReusesTheWinner) {
  TempDir cache;
  const Graph g = elementwise_graph(Dim(512));
  ExecutorCounters first;
  {
    Executor exe(g, options(cache, 2, 3), first);
    EXPECT_EQ(first.cache.compiles, 3);
    expect_matches_reference(exe, g, 512);
    expect_matches_reference(exe, g, 512);  // the second run measures nothing more
  }
  EXPECT_EQ(first.tuning.kernels_tuned, 1);
  EXPECT_EQ(first.tuning.candidates_measured, 3);
  ASSERT_EQ(find(cache.path(), "optimize_tiling").size(), 1u);
  EXPECT_EQ(find(cache.path(), "kernel.so").size(), 3u);

  ExecutorCounters second;
  Executor warm(g, options(cache, 2, 3), second);
  expect_matches_reference(warm, g, 512);
  EXPECT_EQ(second.cache.compiles, 0);
  EXPECT_EQ(second.tuning.candidates_measured, 0);
  EXPECT_EQ(second.tuning.records_reused, 1);
}

// Candidates timed while another process keeps every CPU busy: the winner is used, not
// recorded, and the next executor measures again (a record made so chose one-worker tilings and
// kept every later run of the model at half speed).
TEST(ExecutorTuning, AWinnerMeasuredBesideABusyProcessIsNotRecorded) {
  const testing_support::ScopedEnv strict("TILEFUSE_RECORD_BUSY_MEASUREMENTS", std::nullopt);
  TempDir cache;
  const Graph g = elementwise_graph(Dim(512));
  ExecutorCounters first;
  {
    Executor exe(g, options(cache, 2, 3), first);
    const testing_support::BusyCpus busy;
    expect_matches_reference(exe, g, 512);
  }
  EXPECT_EQ(first.tuning.kernels_tuned, 1);
  EXPECT_EQ(first.tuning.records_withheld, 1);
  EXPECT_TRUE(find(cache.path(), "optimize_tiling").empty());

  ExecutorCounters second;
  Executor again(g, options(cache, 2, 3), second);
  expect_matches_reference(again, g, 512);
  EXPECT_EQ(second.cache.compiles, 0) << "the candidates' libraries are cached";
  EXPECT_EQ(second.tuning.candidates_measured, 3) << "measured again";
}

TEST(ExecutorTuning, EachDeviceLimitHasItsOwnStaticEntry) {
  TempDir cache;
  const Graph g = elementwise_graph(Dim(64));
  for (int threads : {1, 2}) {
    ExecutorCounters counters;
    Executor exe(g, options(cache, threads, 1), counters);
    EXPECT_EQ(counters.cache.compiles, 1) << threads << " threads";
    expect_matches_reference(exe, g, 64);
  }
  EXPECT_EQ(find(cache.path(), "optimize_tiling").size(), 2u);
}

// The generic jit kernel is one entry for every limit and shape; with TopN each shape bucket
// above the planning size (rows rounded up to a power of two) is measured once on its first run
// and recorded under its key, per device limit, and a second executor reuses the records
// without compiling or measuring. Sizes up to the planning size run the generic kernel.
TEST(ExecutorTuning, JitKernelsAreTunedOncePerShapeBucket) {
  TempDir cache;
  const Graph g = elementwise_graph(Dim::symbol("N"));
  for (int threads : {1, 2}) {
    ExecutorCounters counters;
    Executor exe(g, options(cache, threads, 3), counters);
    EXPECT_EQ(counters.cache.compiles, threads == 1 ? 1 : 0) << threads << " threads";
    for (int64_t rows : std::vector<int64_t>{3, 200, 130, 300, tiling::kJitPlanningSize})
      expect_matches_reference(exe, g, rows);
    EXPECT_EQ(counters.tuning.kernels_tuned, 2) << threads << " threads";  // buckets 256 and 512
    EXPECT_EQ(counters.jit_buckets, 2) << threads << " threads";
    EXPECT_GE(counters.tuning.candidates_measured, 4) << threads << " threads";
  }
  std::set<std::string> buckets;
  for (const fs::path& record : find(cache.path(), "optimize_tiling")) {
    std::ifstream meta(record.parent_path() / "meta.json");
    buckets.insert(nlohmann::json::parse(meta)["meta"]["shape_bucket"].get<std::string>());
  }
  EXPECT_EQ(buckets, (std::set<std::string>{"N=256", "N=512"}));
  EXPECT_EQ(find(cache.path(), "optimize_tiling").size(), 4u);  // two buckets at two limits

  ExecutorCounters warm;
  Executor again(g, options(cache, 2, 3), warm);
  for (int64_t rows : {200, 3, 400}) expect_matches_reference(again, g, rows);
  EXPECT_EQ(warm.cache.compiles, 0);
  EXPECT_EQ(warm.tuning.candidates_measured, 0);
  EXPECT_EQ(warm.tuning.records_reused, 2);
}

// Without TopN a bucket takes the cost model's choice at its sizes, recorded for the next
// process; where that is what the generic kernel has baked in, nothing more is compiled.
TEST(ExecutorTuning, JitBucketsTakeTheModelsChoiceWithoutMeasuring) {
  TempDir cache;
  const Graph g = elementwise_graph(Dim::symbol("N"));
  ExecutorCounters counters;
  Executor exe(g, options(cache, 2, 1), counters);
  expect_matches_reference(exe, g, 3);
  EXPECT_EQ(counters.cache.compiles, 1);  // the generic kernel only
  EXPECT_EQ(find(cache.path(), "optimize_tiling").size(), 0u);
  expect_matches_reference(exe, g, 1000);
  EXPECT_LE(counters.cache.compiles, 2);
  EXPECT_EQ(counters.tuning.candidates_measured, 0);
  const std::vector<fs::path> records = find(cache.path(), "optimize_tiling");
  ASSERT_EQ(records.size(), 1u);
  const auto record = tune::read_tuning_record(records[0].string());
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->winner.tiling.units_per_block, 1);  // the split stays at launch
}

// A jit kernel planned with non-temporal stores (at kJitPlanningSize rows its output outgrows
// these small caches) chooses them at launch: only for runs whose outputs outgrow the caches,
// so a run that fits keeps its output where the next kernel finds it. Both kinds of run match
// the reference.
TEST(ExecutorTuning, JitKernelsStreamStoresOnlyWhereTheOutputsOutgrowTheCaches) {
  TempDir cache;
  const Graph g = elementwise_graph(Dim::symbol("N"));
  ExecutorOptions o = options(cache, 2, 1);
  o.hardware->cores = 1, o.hardware->l2_bytes = 16 << 10, o.hardware->l3_bytes = 64 << 10;
  ExecutorCounters counters;
  Executor exe(g, o, counters);
  for (int64_t rows : {3, 100, 7}) expect_matches_reference(exe, g, rows);  // 12 KiB, 400 KiB, 28 KiB
  const std::vector<fs::path> sources = find(cache.path(), "kernel.cpp");
  ASSERT_EQ(sources.size(), 1u);  // the generic kernel: both sizes are within the planning size
  std::ifstream in(sources[0]);
  const std::string code{std::istreambuf_iterator<char>(in), {}};
  EXPECT_NE(code.find("constexpr int64_t kStreamAboveBytes = 40960;"), std::string::npos) << code;  // (16 + 64) KiB / 2
  EXPECT_NE(code.find("if (output_bytes > kStreamAboveBytes) run_units(std::true_type{});"), std::string::npos) << code;
}

}  // namespace
}  // namespace tilefuse::driver
