// `tilefuse compile` and model packages on the command line: compile, run and inspect a package,
// `run --cpp-wrapper` (and TILEFUSE_CPP_WRAPPER) giving the executor's results bit for bit, and
// the errors a user meets.
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_process.h"
#include "io/npy.h"
#include "ir/tensor_compare.h"

namespace tilefuse::testing {
namespace {

using ::testing::HasSubstr;

const std::string kModel = std::string(TILEFUSE_SOURCE_DIR) + "/examples/models/mlp_block.onnx";

class CliCompile : public ::testing::Test {
 protected:
  // Every command shares one kernel cache, so that the TopN winners agree between them.
  CliResult cli(std::vector<std::string> args, const std::string& env = "") {
    return run_cli(dir, args, "TILEFUSE_CACHE_DIR=" + shell_quoted(dir.file("cache")) + " " + env);
  }
  std::string package() const { return dir.file("mlp.tfx"); }
  Tensor output(const std::string& out_dir) { return io::read_npy(dir.file(out_dir + "/y.npy")); }
  ScratchDir dir;
};

TEST_F(CliCompile, APackageRunsWithoutCompilingAndGivesTheExecutorsResults) {
  CliResult r = cli({"compile", kModel, "-o", package(), "--topn", "2", "--threads", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto built = nlohmann::json::parse(r.out);
  EXPECT_GT(built.at("counters").at("kernels_tuned").get<int>(), 0);

  r = cli({"run", package(), "--seed", "4", "--output-dir", dir.file("from_package"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto ran = nlohmann::json::parse(r.out);
  EXPECT_EQ(ran.at("counters").at("compiles"), 0);
  EXPECT_TRUE(ran.at("compile_phases_ms").contains("package_load"));

  r = cli({"run", kModel, "--seed", "4", "--topn", "2", "--threads", "2", "--output-dir", dir.file("executor")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(output("from_package").same_bytes(output("executor")));

  r = cli({"run", kModel, "--seed", "4", "--topn", "2", "--threads", "2", "--cpp-wrapper", "--output-dir",
           dir.file("wrapper"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("counters").at("package_built"), 1);
  EXPECT_TRUE(output("wrapper").same_bytes(output("executor")));
  r = cli({"run", kModel, "--seed", "4", "--topn", "2", "--threads", "2", "--output-dir", dir.file("wrapper2"), "--json"},
          "TILEFUSE_CPP_WRAPPER=1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("counters").at("package_built"), 0);  // the cached package
  EXPECT_TRUE(output("wrapper2").same_bytes(output("executor")));
}

// The package maps the GEMM weights as the compiler packed them, for its GEMM micro-kernel; a
// process capped to another one (TILEFUSE_MAX_CPU_ISA) packs them again and computes the same.
TEST_F(CliCompile, PackedWeightsForAnotherMicroKernelArePackedAgain) {
  ASSERT_EQ(cli({"compile", kModel, "-o", package()}).exit_code, 0);
  const auto manifest = nlohmann::json::parse(read_bytes(package() + "/manifest.json"));
  const std::string packed_for = manifest.at("packed_weights_isa");
  if (packed_for == "none") GTEST_SKIP() << "this CPU's GEMM is OpenBLAS: nothing is packed";
  const std::string other = packed_for == "avx512" ? "avx2" : "scalar";
  int packed_steps = 0;
  for (const auto& step : manifest.at("steps")) packed_steps += step.contains("packed_weights");
  EXPECT_EQ(packed_steps, 2);  // the two FusedMatMuls

  ASSERT_EQ(cli({"run", package(), "--seed", "4", "--output-dir", dir.file("native")}).exit_code, 0);
  CliResult r = cli({"run", package(), "--seed", "4", "--output-dir", dir.file("other"), "--log-level", "info"},
                    "TILEFUSE_MAX_CPU_ISA=" + other);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("packing again"));
  ASSERT_EQ(cli({"run", kModel, "--seed", "4", "--mode", "reference", "--output-dir", dir.file("ref")}).exit_code, 0);
  for (const char* out : {"native", "other"}) {
    const CompareResult c = compare_tensors(output(out), output("ref"), {1e-4, 1e-4});
    EXPECT_TRUE(c.ok) << out << ": " << c.message;
  }
}

TEST_F(CliCompile, InspectListsThePackageAndNoticesAChangedFile) {
  ASSERT_EQ(cli({"compile", kModel, "-o", package()}).exit_code, 0);
  CliResult r = cli({"inspect", package()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("graph 'mlp_block'"));
  EXPECT_THAT(r.out, HasSubstr("kernel"));
  EXPECT_THAT(r.out, HasSubstr("checksums ok"));
  std::ofstream(package() + "/model.cpp", std::ios::app) << "// edited\n";
  r = cli({"inspect", package(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto report = nlohmann::json::parse(r.out);
  EXPECT_FALSE(report.at("intact").get<bool>());
  EXPECT_EQ(report.at("checksums").at("model.cpp"), "mismatch");
  EXPECT_EQ(report.at("checksums").at("model.so"), "ok");
}

TEST_F(CliCompile, ASymbolicModelCompilesWithoutInputsAndRunsAtAnySize) {
  write_add_model(dir);
  CliResult r = cli({"compile", dir.file("add.onnx"), "-o", dir.file("add.tfx"), "--symbol-value", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(run_python(dir, "import numpy as np\nnp.save(" + shell_quoted(dir.file("x.npy")) +
                                ", np.ones((7, 4), dtype=np.float32))"),
            0);
  r = cli({"run", dir.file("add.tfx"), "--input", "x=" + dir.file("x.npy"), "--output-dir", dir.file("out")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("f32[7, 4]"));
  EXPECT_THAT(r.out, HasSubstr("nothing compiled or tuned"));
}

TEST_F(CliCompile, MistakesGetClearErrors) {
  std::ofstream(dir.file("notes.txt")) << "mine";
  CliResult r = cli({"compile", kModel, "-o", dir.file("notes.txt")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("not a model package"));

  r = cli({"compile", kModel, "-o", package(), "--mode", "reference"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("fused or unfused"));

  ASSERT_EQ(cli({"compile", kModel, "-o", package()}).exit_code, 0);
  r = cli({"run", package(), "--mode", "reference"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("need the ONNX model"));

  r = cli({"run", kModel}, "TILEFUSE_CPP_WRAPPER=yes");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("TILEFUSE_CPP_WRAPPER must be 0 or 1"));
}

}  // namespace
}  // namespace tilefuse::testing
