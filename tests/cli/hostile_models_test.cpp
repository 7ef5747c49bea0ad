// Models and files written to hurt: shapes whose sizes overflow, a 200-byte model that asks for a
// terabyte, .npy header bombs, bad memory caps. Each must end with exit code 1 and a message
// naming the value, the size or the setting; never a crash, an OOM kill or a wrong answer.
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/cli_process.h"

namespace tilefuse::testing {
namespace {

using ::testing::HasSubstr;

// y = Relu(Expand(c, shape)), c a one-element constant, the output's dims symbolic in the file.
void write_expand_model(const ScratchDir& dir, const std::string& name, const std::string& shape) {
  write_onnx_model(dir, name, R"(
shape = )" + shape + R"(
graph = helper.make_graph(
    [helper.make_node('Expand', ['c', 's'], ['big'], name='expand'),
     helper.make_node('Relu', ['big'], ['y'], name='relu')], 'bomb', [],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, ['a%d' % i for i in range(len(shape))])],
    [helper.make_tensor('c', TensorProto.FLOAT, [1], [1.0]),
     helper.make_tensor('s', TensorProto.INT64, [len(shape)], shape)])
)");
}

struct Bomb {
  const char* name;
  const char* shape;
  const char* message;
};

void PrintTo(const Bomb& bomb, std::ostream* os) { *os << bomb.name; }

class CliHostileModel : public ::testing::TestWithParam<Bomb> {};

TEST_P(CliHostileModel, FailsWithAClearErrorInEveryMode) {
  ScratchDir dir;
  const Bomb& bomb = GetParam();
  write_expand_model(dir, bomb.name, bomb.shape);
  for (const char* mode : {"fused", "unfused", "reference"}) {
    SCOPED_TRACE(mode);
    CliResult r = run_cli(dir, {"run", dir.file(std::string(bomb.name) + ".onnx"), "--mode", mode, "--output-dir",
                                dir.file("out"), "--cache-dir", dir.file("cache")});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr(bomb.message));
  }
  CliResult inspect = run_cli(dir, {"inspect", dir.file(std::string(bomb.name) + ".onnx")});
  EXPECT_NE(inspect.exit_code, 2) << inspect.err;  // a user error or a plan, never an internal error or a crash
  EXPECT_GE(inspect.exit_code, 0) << inspect.err;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CliHostileModel,
    ::testing::Values(Bomb{"expand_2_66", "[2**22] * 3", "element count does not fit in 64 bits"},
                      Bomb{"expand_2_56", "[2**28, 2**28]", "memory limit"},
                      Bomb{"expand_1tb", "[2**20, 2**18]", "memory limit"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(CliMemoryCap, MaxMemoryFlagAndVariableAreChecked) {
  ScratchDir dir;
  write_expand_model(dir, "small", "[256, 1024]");  // 1 MiB of f32
  const std::vector<std::string> run = {"run", dir.file("small.onnx"), "--mode", "reference", "--output-dir",
                                        dir.file("out")};
  std::vector<std::string> capped = run;
  capped.insert(capped.end(), {"--max-memory", "64K"});
  CliResult r = run_cli(dir, capped);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("memory limit of 64.0 KiB"));
  EXPECT_EQ(run_cli(dir, run, "TILEFUSE_MAX_MEMORY=1G").exit_code, 0);
  CliResult bad = run_cli(dir, run, "TILEFUSE_MAX_MEMORY=lots");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("TILEFUSE_MAX_MEMORY is 'lots'"));
  std::vector<std::string> bad_flag = run;
  bad_flag.insert(bad_flag.end(), {"--max-memory", "-5"});
  EXPECT_THAT(run_cli(dir, bad_flag).err, HasSubstr("--max-memory is '-5'"));
}

TEST(CliCpuIsaCap, UnknownIsaNamesTheVariableAndTheChoices) {
  ScratchDir dir;
  write_expand_model(dir, "small", "[4, 4]");
  const std::vector<std::string> run = {"run", dir.file("small.onnx"), "--output-dir", dir.file("out")};
  EXPECT_EQ(run_cli(dir, run, "TILEFUSE_MAX_CPU_ISA=scalar").exit_code, 0);
  CliResult bad = run_cli(dir, run, "TILEFUSE_MAX_CPU_ISA=avx3");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("TILEFUSE_MAX_CPU_ISA must be one of scalar, avx2 or avx512, got 'avx3'"));
}

// An input file that claims a 4 GiB header in 12 bytes is refused before anything is allocated.
TEST(CliHostileInput, NpyHeaderBombIsRefused) {
  ScratchDir dir;
  write_add_model(dir);
  {
    std::ofstream out(dir.file("bomb.npy"), std::ios::binary);
    out << "\x93NUMPY" << std::string("\x02\x00\xff\xff\xff\xff", 6);
  }
  CliResult r = run_cli(dir, {"run", dir.file("add.onnx"), "--input", "x=" + dir.file("bomb.npy"), "--output-dir",
                              dir.file("out")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("numpy's limit of 10000"));
}

}  // namespace
}  // namespace tilefuse::testing
