// `tilefuse run` end to end: real models (built with python3-onnx), real .npy files, checked by
// numpy where the output is data.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_process.h"
#include "io/npy.h"
#include "ir/tensor_compare.h"

namespace tilefuse::testing {
namespace {

using ::testing::HasSubstr;

// x = arange(12).reshape(3, 4) / 4, y = [1, 2, 3, 4] as float32, plus badly typed variants.
void write_inputs(const ScratchDir& dir) {
  ASSERT_EQ(run_python(dir, "import numpy as np\nd = " + shell_quoted(dir.path().string()) + R"(
np.save(d + '/x.npy', (np.arange(12).reshape(3, 4) / 4).astype(np.float32))
np.save(d + '/y.npy', np.array([1, 2, 3, 4], dtype=np.float32))
np.save(d + '/x_wide.npy', np.zeros((3, 5), dtype=np.float32))
np.save(d + '/x_int.npy', np.zeros((3, 4), dtype=np.int64))
)"),
            0);
}

class CliRun : public ::testing::Test {
 protected:
  void SetUp() override {
    write_add_model(dir);
    write_inputs(dir);
  }
  CliResult run(std::vector<std::string> extra) {
    std::vector<std::string> args = {"run", dir.file("add.onnx"), "--output-dir", dir.file("out")};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(dir, args);
  }
  ScratchDir dir;
};

TEST_F(CliRun, WritesOutputsThatNumpyLoads) {
  CliResult r = run({"--input", "x=" + dir.file("x.npy"), "--input", "y=" + dir.file("y.npy")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("sum:0"));
  EXPECT_THAT(r.out, HasSubstr("f32[3, 4]"));
  EXPECT_THAT(r.out, HasSubstr("elapsed"));
  // The output name "sum:0" is written as sum_0.npy; numpy recomputes the sum independently.
  EXPECT_EQ(run_python(dir, "import numpy as np\nd = " + shell_quoted(dir.path().string()) + R"(
z = np.load(d + '/out/sum_0.npy')
assert z.dtype == np.float32 and z.shape == (3, 4), (z.dtype, z.shape)
assert np.array_equal(z, np.load(d + '/x.npy') + np.load(d + '/y.npy')), z
)"),
            0);
}

TEST_F(CliRun, MissingInputsAreRandomAndSeeded) {
  CliResult first = run({"--input", "x=" + dir.file("x.npy"), "--seed", "11"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_THAT(first.out, HasSubstr("random (seed 11)"));
  Tensor a = io::read_npy(dir.file("out/sum_0.npy"));
  ASSERT_EQ(run({"--input", "x=" + dir.file("x.npy"), "--seed", "11"}).exit_code, 0);
  EXPECT_TRUE(io::read_npy(dir.file("out/sum_0.npy")).same_bytes(a));
  ASSERT_EQ(run({"--input", "x=" + dir.file("x.npy"), "--seed", "12"}).exit_code, 0);
  EXPECT_FALSE(io::read_npy(dir.file("out/sum_0.npy")).same_bytes(a));
}

TEST_F(CliRun, JsonSummary) {
  CliResult r = run({"--input", "x=" + dir.file("x.npy"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["mode"], "fused");
  for (const char* counter : {"compiles", "cache_hits", "rebuilds", "launches"}) {
    EXPECT_TRUE(json["counters"].contains(counter)) << counter;
  }
  EXPECT_EQ(json["counters"]["launches"], 1);
  EXPECT_EQ(json["inputs"][0]["name"], "x");
  EXPECT_EQ(json["inputs"][0]["random"], false);
  EXPECT_EQ(json["inputs"][1]["random"], true);
  EXPECT_EQ(json["outputs"][0]["path"], dir.file("out/sum_0.npy"));
  EXPECT_EQ(json["outputs"][0]["shape"], nlohmann::json::array({3, 4}));
  EXPECT_EQ(json["outputs"][0]["dtype"], "f32");
  EXPECT_TRUE(json["outputs"][0]["stats"]["mean"].is_number());
  EXPECT_TRUE(json["counters"].is_object());
  EXPECT_TRUE(json["elapsed_ms"].is_number());
}

TEST_F(CliRun, WrongInputShapeNamesExpectedAndActual) {
  CliResult r = run({"--input", "x=" + dir.file("x_wide.npy")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("input 'x': expected f32[N, 4], got f32[3, 5] (dim 1 is 5, expected 4)"));
}

TEST_F(CliRun, WrongInputDtype) {
  CliResult r = run({"--input", "x=" + dir.file("x_int.npy")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("input 'x': expected f32[N, 4], got i64[3, 4] (dtype is i64, expected f32)"));
}

TEST_F(CliRun, SymbolicDimWithoutInputFile) {
  CliResult r = run({});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("symbolic dim N"));
  EXPECT_THAT(r.err, HasSubstr("--input x=FILE.npy"));
}

TEST_F(CliRun, BadInputArguments) {
  EXPECT_THAT(run({"--input", "x.npy"}).err, HasSubstr("expected NAME=FILE.npy"));
  EXPECT_THAT(run({"--input", "nope=" + dir.file("x.npy")}).err, HasSubstr("unknown input 'nope'"));
  CliResult missing = run({"--input", "x=" + dir.file("absent.npy")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("absent.npy"));
}

TEST_F(CliRun, TruncatedInputFile) {
  std::string bytes = read_bytes(dir.file("x.npy"));
  write_bytes(dir.file("x_cut.npy"), bytes.substr(0, bytes.size() - 8));
  CliResult r = run({"--input", "x=" + dir.file("x_cut.npy")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("x_cut.npy: truncated data"));
}

TEST_F(CliRun, EveryModeGivesTheReferenceResult) {
  ASSERT_EQ(run({"--input", "x=" + dir.file("x.npy"), "--mode", "reference"}).exit_code, 0);
  Tensor expected = io::read_npy(dir.file("out/sum_0.npy"));
  for (const char* mode : {"fused", "unfused"}) {
    CliResult r = run({"--input", "x=" + dir.file("x.npy"), "--mode", mode});
    ASSERT_EQ(r.exit_code, 0) << mode << ": " << r.err;
    auto cmp = compare_tensors(io::read_npy(dir.file("out/sum_0.npy")), expected, {1e-6, 0});
    EXPECT_TRUE(cmp.ok) << mode << ": " << cmp.message;
  }
  EXPECT_THAT(run({"--mode", "turbo"}).err, HasSubstr("unknown mode 'turbo'"));
}

TEST(CliBadModel, UnsupportedOpIsNamed) {
  ScratchDir dir;
  write_onnx_model(dir, "unique", R"(
graph = helper.make_graph(
    [helper.make_node('Unique', ['a'], ['c'], name='distinct')], 'unique',
    [helper.make_tensor_value_info('a', TensorProto.FLOAT, [6])],
    [helper.make_tensor_value_info('c', TensorProto.FLOAT, [None])])
)");
  CliResult r = run_cli(dir, {"run", dir.file("unique.onnx"), "--output-dir", dir.file("out")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("unsupported op 'Unique' (node 'distinct'"));
}

TEST(CliBadModel, TruncatedAndRandomFilesAreUserErrors) {
  ScratchDir dir;
  write_add_model(dir);
  std::string bytes = read_bytes(dir.file("add.onnx"));
  write_bytes(dir.file("cut.onnx"), bytes.substr(0, bytes.size() / 2));
  std::string noise;
  for (int i = 0; i < 4096; ++i) noise += static_cast<char>((i * 7919 + 13) % 251);
  write_bytes(dir.file("noise.onnx"), noise);
  for (const char* name : {"cut.onnx", "noise.onnx", "absent.onnx"}) {
    SCOPED_TRACE(name);
    for (const char* command : {"run", "inspect"}) {
      CliResult r = run_cli(dir, {command, dir.file(name)});
      EXPECT_EQ(r.exit_code, 1) << command << ": " << r.err;
      EXPECT_THAT(r.err, HasSubstr(name));
    }
  }
}

}  // namespace
}  // namespace tilefuse::testing
