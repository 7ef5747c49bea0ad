#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_process.h"

namespace tilefuse::testing {
namespace {

using ::testing::HasSubstr;

TEST(CliInspect, TableShowsOpsAndSymbolicTypes) {
  ScratchDir dir;
  write_add_model(dir);
  CliResult r = run_cli(dir, {"inspect", dir.file("add.onnx")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Add"));
  EXPECT_THAT(r.out, HasSubstr("f32[N, 4]"));
  EXPECT_THAT(r.out, HasSubstr("16*N"));  // bytes of x: N * 4 floats
}

TEST(CliInspect, JsonAndDot) {
  ScratchDir dir;
  write_add_model(dir);
  CliResult r = run_cli(dir, {"inspect", dir.file("add.onnx"), "--json", "--dot", dir.file("g.dot")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["ops"]["Add"], 1);
  EXPECT_EQ(json["bytes"]["input"], "16*N + 16");
  std::string dot = read_bytes(dir.file("g.dot"));
  EXPECT_THAT(dot, HasSubstr("digraph"));
  EXPECT_THAT(dot, HasSubstr("label=\"f32[N, 4]\""));
}

}  // namespace
}  // namespace tilefuse::testing
