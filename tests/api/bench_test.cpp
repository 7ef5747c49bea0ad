// `bench` is judged by its numbers, which tests cannot pin down (machines are noisy): these tests
// check the report's shape and the relations that must hold whatever the timings are.
#include "api/bench.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/model.h"
#include "runtime/thread_team.h"
#include "runtime/stream_probe.h"

namespace tilefuse::api {
namespace {

namespace fs = std::filesystem;

// A kernel cache of this test's own, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string templ = (fs::temp_directory_path() / "tilefuse_bench_test_XXXXXX").string();
    path_ = mkdtemp(templ.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

BenchOptions small_options(const std::string& cache_dir) {
  BenchOptions options;
  options.iterations = 3;
  options.warmup = 1;
  options.execution = {.threads = 2, .compile_threads = 2, .cache_dir = cache_dir};
  options.stream = {.array_bytes = size_t{8} << 20, .repetitions = 2};
  return options;
}

TEST(Quantile, InterpolatesBetweenOrderStatistics) {
  const std::vector<double> values{5, 1, 4, 2, 3};  // unsorted on purpose
  EXPECT_DOUBLE_EQ(quantile(values, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile(values, 0.5), 3.0);
  EXPECT_DOUBLE_EQ(quantile(values, 1.0), 5.0);
  EXPECT_DOUBLE_EQ(quantile(values, 0.1), 1.4);
  EXPECT_DOUBLE_EQ(quantile({2, 4}, 0.5), 3.0);
}

TEST(StreamProbe, MeasuresPositiveBandwidthOnTheTeam) {
  runtime::ThreadTeam team(2);
  const runtime::StreamResult r = runtime::measure_stream(team, {.array_bytes = size_t{4} << 20, .repetitions = 2});
  EXPECT_GT(r.triad_gbps, 0.0);
  EXPECT_GT(r.copy_nt_gbps, 0.0);
  EXPECT_EQ(r.threads, 2);
  EXPECT_EQ(r.array_bytes, size_t{4} << 20);  // a whole number of the probe's blocks
}

TEST(Bench, ReportsEveryModeWithConsistentNumbers) {
  TempDir cache;
  const Model model = load_model(std::string(TILEFUSE_SOURCE_DIR) + "/examples/models/layernorm_decomposed.onnx");
  const runtime::BoundInputs inputs = runtime::bind_inputs(model.graph, {}, {.fill_missing_randomly = true, .seed = 7});
  const BenchReport report = bench_model(model.graph, inputs, "layernorm", small_options(cache.path()));

  const nlohmann::json json = bench_to_json(report);
  std::vector<std::string> keys;
  for (const auto& [key, value] : json.items()) keys.push_back(key);
  EXPECT_THAT(keys, ::testing::UnorderedElementsAre("model", "stream_triad_gbps", "copy_nt_gbps", "threads", "modes"));
  EXPECT_EQ(json["model"], "layernorm");
  EXPECT_EQ(json["threads"], 2);
  EXPECT_GT(json["stream_triad_gbps"].get<double>(), 0.0);
  EXPECT_GT(json["copy_nt_gbps"].get<double>(), 0.0);
  for (const char* mode : {"fused", "unfused", "reference"}) {
    SCOPED_TRACE(mode);
    const nlohmann::json& m = json["modes"].at(mode);
    for (const char* key : {"median_ms", "min_ms", "p10_ms", "p90_ms", "kernels", "bytes", "gbps", "stream_ratio",
                            "copy_nt_ratio"}) {
      ASSERT_TRUE(m.contains(key)) << key;
      EXPECT_GT(m[key].get<double>(), 0.0) << key;
    }
    EXPECT_LE(m["min_ms"].get<double>(), m["p10_ms"].get<double>());
    EXPECT_LE(m["p10_ms"].get<double>(), m["median_ms"].get<double>());
    EXPECT_LE(m["median_ms"].get<double>(), m["p90_ms"].get<double>());
    EXPECT_NEAR(m["gbps"].get<double>(), m["bytes"].get<double>() / m["median_ms"].get<double>() / 1e6,
                1e-9 * m["gbps"].get<double>());
    EXPECT_NEAR(m["stream_ratio"].get<double>(), m["gbps"].get<double>() / json["stream_triad_gbps"].get<double>(), 1e-9);
  }
  const nlohmann::json& modes = json["modes"];
  EXPECT_LT(modes["fused"]["bytes"].get<int64_t>(), modes["unfused"]["bytes"].get<int64_t>());
  EXPECT_LT(modes["fused"]["kernels"].get<int64_t>(), modes["unfused"]["kernels"].get<int64_t>());
  EXPECT_EQ(modes["reference"]["bytes"], modes["unfused"]["bytes"]);
  EXPECT_EQ(modes["reference"]["kernels"].get<int64_t>(), static_cast<int64_t>(model.graph.num_nodes()));
  for (const ModeBench& m : report.modes) EXPECT_EQ(m.times_ms.size(), 3u);
}

TEST(Bench, TableNamesEveryModeAndTheBandwidth) {
  TempDir cache;
  const Model model = load_model(std::string(TILEFUSE_SOURCE_DIR) + "/examples/models/bias_gelu.onnx");
  BenchOptions options = small_options(cache.path());
  options.modes = {Mode::fused};
  const std::string table = bench_to_table(bench_model(model.graph, runtime::bind_inputs(model.graph, {}, {.fill_missing_randomly = true}),
                                                       "bias_gelu", options));
  EXPECT_THAT(table, ::testing::HasSubstr("STREAM triad"));
  EXPECT_THAT(table, ::testing::HasSubstr("fused"));
  EXPECT_THAT(table, ::testing::Not(::testing::HasSubstr("unfused")));
}

// A new team's workers can share a CPU for ~10 ms: warm-up goes on for 20 ms however few runs
// --warmup asks, and --warmup 0 means none.
TEST(Bench, WarmsUpForTwentyMillisecondsUnlessTold0) {
  using Clock = std::chrono::steady_clock;
  BenchOptions options;
  options.iterations = 2;
  int runs = 0;
  const auto run = [&] { ++runs; };
  options.warmup = 1;
  const auto start = Clock::now();
  EXPECT_EQ(time_runs(run, "test", options).size(), 2U);
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(20));
  EXPECT_GT(runs, 3) << "more than the one warm-up run asked";
  runs = 0;
  options.warmup = 0;
  EXPECT_EQ(time_runs(run, "test", options).size(), 2U);
  EXPECT_EQ(runs, 2) << "no warm-up at all";
}

TEST(Bench, RejectsBadOptions) {
  Graph g;
  g.add_input("x", DType::f32, {2});
  g.set_outputs({g.inputs()[0]});
  const runtime::BoundInputs inputs = runtime::bind_inputs(g, {}, {.fill_missing_randomly = true});
  BenchOptions options;
  options.iterations = 0;
  EXPECT_THROW(bench_model(g, inputs, "g", options), UserError);
  options = {};
  options.modes = {Mode::fused, Mode::fused};
  EXPECT_THROW(bench_model(g, inputs, "g", options), UserError);
  options = {};
  options.modes.clear();
  EXPECT_THROW(bench_model(g, inputs, "g", options), UserError);
  options = {};
  options.warmup = -1;
  EXPECT_THROW(bench_model(g, inputs, "g", options), UserError);
}

}  // namespace
}  // namespace tilefuse::api
