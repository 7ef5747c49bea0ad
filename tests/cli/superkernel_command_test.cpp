// `--superkernel` and `TILEFUSE_SUPERKERNEL` end to end: the choice and schedule `run --json`
// reports, the Graphviz drawing of the schedule, and configuration errors that name the rule.
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_process.h"

namespace tilefuse::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kModelDir = std::string(TILEFUSE_SOURCE_DIR) + "/tests/models/real/gpt2/";

std::vector<std::string> run_gpt2(const ScratchDir& dir, std::vector<std::string> extra) {
  std::vector<std::string> args = {"run", kModelDir + "dynamo_dynamic.onnx", "--output-dir", dir.file("out"),
                                   "--threads", "2", "--cache-dir", dir.file("cache"), "--input",
                                   "input_ids=" + kModelDir + "inputs/input_ids.npy", "--input",
                                   "attention_mask=" + kModelDir + "inputs/attention_mask.npy"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(CliSuperKernel, RunReportsTheScheduleAndDrawsIt) {
  ScratchDir dir;
  CliResult r = run_cli(dir, run_gpt2(dir, {"--superkernel", "on", "--superkernel-dot", dir.file("s.dot"), "--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["counters"]["superkernel"], 1);
  const nlohmann::json& sk = json["superkernel"];
  EXPECT_THAT(sk["choice"].get<std::string>(), StartsWith("on floor_ns="));
  ASSERT_GT(sk["steps"].size(), 10u);
  EXPECT_TRUE(sk["steps"][0]["waits_for"].empty()) << "the first step waits for nothing";
  size_t waits = 0;
  for (const auto& step : sk["steps"]) waits += step["waits_for"].size();
  EXPECT_GT(waits, 0u);
  std::ifstream dot(dir.file("s.dot"));
  std::stringstream text;
  text << dot.rdbuf();
  EXPECT_THAT(text.str(), StartsWith("digraph superkernel {"));
  EXPECT_THAT(text.str(), HasSubstr(" -> "));
}

TEST(CliSuperKernel, OffRunsStepByStepAndSaysSo) {
  ScratchDir dir;
  CliResult r = run_cli(dir, run_gpt2(dir, {"--json"}), "TILEFUSE_SUPERKERNEL=off");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["counters"]["superkernel"], 0);
  EXPECT_EQ(json["superkernel"]["choice"], "off");
  EXPECT_TRUE(json["superkernel"]["steps"].empty());
}

TEST(CliSuperKernel, ABadChoiceIsAConfigurationErrorNamingTheRule) {
  ScratchDir dir;
  CliResult flag = run_cli(dir, run_gpt2(dir, {"--superkernel", "maybe"}));
  EXPECT_NE(flag.exit_code, 0);
  EXPECT_THAT(flag.err, HasSubstr("--superkernel"));
  CliResult env = run_cli(dir, run_gpt2(dir, {}), "TILEFUSE_SUPERKERNEL=maybe");
  EXPECT_NE(env.exit_code, 0);
  EXPECT_THAT(env.err, HasSubstr("TILEFUSE_SUPERKERNEL must be auto, on or off, got 'maybe'"));
}

}  // namespace
}  // namespace tilefuse::testing
