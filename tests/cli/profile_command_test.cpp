// The profiler end to end: `run --profile` and `bench --profile --per-step` on a real model with
// a symbolic batch, whose inputs come from .npy files (`bench --input`).
#include <fstream>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_process.h"

namespace tilefuse::testing {
namespace {

using ::testing::HasSubstr;

const std::string kModelDir = std::string(TILEFUSE_SOURCE_DIR) + "/tests/models/real/bert/";

std::vector<std::string> bert_inputs() {
  return {"--input", "input_ids=" + kModelDir + "inputs/input_ids.npy", "--input",
          "attention_mask=" + kModelDir + "inputs/attention_mask.npy"};
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

TEST(CliProfile, RunWritesAChromeTraceWithOneEventPerStepAndWorker) {
  ScratchDir dir;
  std::vector<std::string> args = {"run", kModelDir + "dynamo_dynamic.onnx", "--output-dir", dir.file("out"),
                                   "--threads", "2", "--cache-dir", dir.file("cache"), "--profile", dir.file("t.json")};
  for (const std::string& a : bert_inputs()) args.push_back(a);
  CliResult r = run_cli(dir, args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json trace = read_json(dir.file("t.json"));
  ASSERT_TRUE(trace["traceEvents"].is_array());
  std::set<std::string> kinds;
  std::set<int> workers;
  for (const auto& e : trace["traceEvents"]) {
    EXPECT_EQ(e["ph"], "X");
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    kinds.insert(e["cat"].get<std::string>());
    if (e["cat"] == "kernel") workers.insert(e["tid"].get<int>());
    EXPECT_TRUE(e["args"].contains("bytes"));
  }
  EXPECT_TRUE(kinds.count("kernel") && kinds.count("library")) << trace.dump().substr(0, 400);
  // The export's mask and position arithmetic is computed per input shape, never in a run, and
  // nothing is left to the reference kernels.
  EXPECT_FALSE(kinds.count("per-shape")) << trace.dump().substr(0, 400);
  EXPECT_FALSE(kinds.count("host")) << trace.dump().substr(0, 400);
  EXPECT_EQ(workers.size(), 2u) << "kernel events come from both workers";
}

TEST(CliProfile, BenchPerStepListsStepsWithShares) {
  ScratchDir dir;
  std::vector<std::string> args = {"bench", kModelDir + "dynamo_dynamic.onnx", "--modes", "fused", "--iters", "3",
                                   "--warmup", "1", "--stream-mib", "8", "--cache-dir", dir.file("cache"),
                                   "--per-step", "--json"};
  for (const std::string& a : bert_inputs()) args.push_back(a);
  CliResult r = run_cli(dir, args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json report = nlohmann::json::parse(r.out);
  ASSERT_TRUE(report["per_step"].is_array());
  ASSERT_FALSE(report["per_step"].empty());
  double share = 0, previous = 1e300;
  for (const auto& s : report["per_step"]) {
    share += s["share"].get<double>();
    EXPECT_LE(s["mean_ms"].get<double>(), previous) << "sorted slowest first";
    previous = s["mean_ms"].get<double>();
    EXPECT_LE(s["min_ms"].get<double>(), s["median_ms"].get<double>());
  }
  EXPECT_NEAR(share, 1.0, 1e-6);
}

TEST(CliProfile, ReferenceModeCannotBeProfiled) {
  ScratchDir dir;
  write_add_model(dir);
  CliResult r = run_cli(dir, {"run", dir.file("add.onnx"), "--output-dir", dir.file("out"), "--mode", "reference",
                              "--profile", dir.file("t.json")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("--profile needs --mode fused or unfused"));
}

}  // namespace
}  // namespace tilefuse::testing
