// `--precision` and `TILEFUSE_PRECISION` end to end: bf16 products stay within the README's bound
// of f32's outputs (and differ from them where the CPU multiplies bf16), `run --json` says which
// precision ran, and configuration errors name the setting.
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_process.h"
#include "ir/tensor.h"
#include "runtime/sgemm_microkernel.h"
#include "tilefuse/npy.h"

namespace tilefuse::testing {
namespace {

using ::testing::HasSubstr;

const std::string kModel = std::string(TILEFUSE_SOURCE_DIR) + "/examples/models/mlp_block.onnx";

// Runs the MLP block with seeded random inputs and returns its one output.
Tensor run_mlp(const ScratchDir& dir, const std::string& precision, nlohmann::json& json) {
  const std::string out = dir.file("out-" + precision);
  CliResult r = run_cli(dir, {"run", kModel, "--seed", "3", "--threads", "2", "--cache-dir", dir.file("cache"),
                              "--output-dir", out, "--precision", precision, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  json = nlohmann::json::parse(r.out);
  return read_npy(json["outputs"][0]["path"].get<std::string>());
}

TEST(CliPrecision, Bf16StaysWithinItsBoundOfF32) {
  ScratchDir dir;
  nlohmann::json f32_json, bf16_json;
  const Tensor f32 = run_mlp(dir, "f32", f32_json);
  const Tensor bf16 = run_mlp(dir, "bf16", bf16_json);
  EXPECT_EQ(f32_json["precision"], "f32");
  const bool multiplies_bf16 = runtime::bf16_supported();
  EXPECT_EQ(bf16_json["precision"], multiplies_bf16 ? "bf16" : "f32");
  double largest = 0, worst = 0;
  for (int64_t i = 0; i < f32.numel(); ++i) {
    largest = std::max(largest, std::abs(f32.get_f64(i)));
    worst = std::max(worst, std::abs(f32.get_f64(i) - bf16.get_f64(i)));
  }
  EXPECT_LE(worst, 2e-2 * largest);  // the README's bound for bf16
  if (multiplies_bf16) {
    EXPECT_GT(worst, 0.0) << "bf16 products gave f32's bits: bf16 was not used";
  }
}

TEST(CliPrecision, BenchReportsTheAccuracyOfBf16) {
  ScratchDir dir;
  CliResult r = run_cli(dir, {"bench", kModel, "--modes", "fused", "--iters", "2", "--stream-mib", "8", "--cache-dir",
                              dir.file("cache"), "--precision", "bf16", "--accuracy", "--samples", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json accuracy = nlohmann::json::parse(r.out)["accuracy"];
  EXPECT_EQ(accuracy["against"], "f32");
  EXPECT_EQ(accuracy["samples"], 2);
  EXPECT_LE(accuracy["outputs"][0]["worst_relative_error"].get<double>(), 2e-2);
  CliResult f32 = run_cli(dir, {"bench", kModel, "--modes", "fused", "--cache-dir", dir.file("cache"), "--accuracy"});
  EXPECT_NE(f32.exit_code, 0);
  EXPECT_THAT(f32.err, HasSubstr("--accuracy compares a lower precision with f32"));
}

TEST(CliPrecision, AnUnknownPrecisionIsAConfigurationErrorNamingTheSetting) {
  ScratchDir dir;
  CliResult flag = run_cli(dir, {"run", kModel, "--cache-dir", dir.file("cache"), "--precision", "f16"});
  EXPECT_NE(flag.exit_code, 0);
  EXPECT_THAT(flag.err, HasSubstr("--precision f16 is not supported"));
  CliResult env = run_cli(dir, {"run", kModel, "--cache-dir", dir.file("cache")}, "TILEFUSE_PRECISION=double");
  EXPECT_NE(env.exit_code, 0);
  EXPECT_THAT(env.err, HasSubstr("TILEFUSE_PRECISION must be f32 or bf16, got 'double'"));
}

}  // namespace
}  // namespace tilefuse::testing
