// Flags and exit codes of the command itself, independent of any model.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/cli_process.h"

namespace tilefuse::testing {
namespace {

using ::testing::HasSubstr;

TEST(CliHelp, EverySubcommandHasHelp) {
  ScratchDir dir;
  CliResult top = run_cli(dir, {"--help"});
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_THAT(top.out, HasSubstr("run"));
  EXPECT_THAT(top.out, HasSubstr("inspect"));
  EXPECT_THAT(top.out, HasSubstr("--log-level"));
  CliResult run = run_cli(dir, {"run", "--help"});
  EXPECT_EQ(run.exit_code, 0);
  for (const char* flag : {"--input", "--output-dir", "--mode", "--seed", "--json"}) EXPECT_THAT(run.out, HasSubstr(flag));
  CliResult inspect = run_cli(dir, {"inspect", "--help"});
  EXPECT_EQ(inspect.exit_code, 0);
  EXPECT_THAT(inspect.out, HasSubstr("--dot"));
}

TEST(CliHelp, VersionFlag) {
  ScratchDir dir;
  CliResult r = run_cli(dir, {"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("tilefuse 0."));
}

TEST(CliHelp, ParseErrorsAreUserErrors) {
  ScratchDir dir;
  EXPECT_EQ(run_cli(dir, {}).exit_code, 1);                           // no subcommand
  EXPECT_EQ(run_cli(dir, {"run"}).exit_code, 1);                      // no model
  EXPECT_EQ(run_cli(dir, {"run", "m.onnx", "--bogus"}).exit_code, 1);  // unknown flag
  EXPECT_EQ(run_cli(dir, {"frobnicate"}).exit_code, 1);
}

TEST(CliHelp, InvalidLogLevelNamesTheVariable) {
  ScratchDir dir;
  CliResult env = run_cli(dir, {"inspect", "m.onnx"}, "TILEFUSE_LOG_LEVEL=loud");
  EXPECT_EQ(env.exit_code, 1);
  EXPECT_THAT(env.err, HasSubstr("TILEFUSE_LOG_LEVEL: 'loud' is not a log level"));
  CliResult flag = run_cli(dir, {"inspect", "m.onnx", "--log-level", "loud"});
  EXPECT_EQ(flag.exit_code, 1);
  EXPECT_THAT(flag.err, HasSubstr("--log-level: 'loud' is not a log level"));
}

}  // namespace
}  // namespace tilefuse::testing
