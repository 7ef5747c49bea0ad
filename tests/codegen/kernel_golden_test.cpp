// Golden tests of the generated code: every kernel of each bundled example model, tiled by the
// cost model for one fixed machine and emitted, against tests/codegen/golden/<model>.cpp.txt. A
// reviewer reads what a change does to the kernels a user gets; the text must also come out the
// same in every process (no pointer-ordered naming). Regenerate after an intended change with
// TILEFUSE_UPDATE_GOLDEN=1 and review the diff.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <tuple>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "io/test_support.h"

#include "codegen/kernel_compiler.h"
#include "codegen/kernel_emitter.h"
#include "codegen/probe_targets.h"
#include "frontend/onnx_importer.h"
#include "fusion/execution_plan.h"
#include "tiling/compile_path.h"
#include "tiling/solver.h"

namespace tilefuse::codegen {
namespace {

namespace fs = std::filesystem;

// The machine the goldens are tiled for (the cost model's numbers, not this host's): two Zen 5
// cores with AVX-512.
tiling::HardwareModel golden_machine() {
  tiling::HardwareModel hw;
  hw.cores = 2;
  hw.l1d_bytes = 48 << 10;
  hw.l2_bytes = 1 << 20;
  hw.l3_bytes = 32 << 20;
  hw.vector_bytes = 64;
  hw.isa = "avx512";
  hw.ghz = 2.6;
  hw.core_gbps = 40;
  hw.shared_gbps = 45;
  hw.fork_join_us = 0.5;
  hw.calibrated = true;
  return hw;
}

std::string kernels_text(const std::string& model) {
  Graph g = frontend::import_onnx_file(std::string(TILEFUSE_SOURCE_DIR) + "/examples/models/" + model + ".onnx");
  const fusion::ExecutionPlan planned = fusion::plan_for_execution(g, true);
  std::string text;
  for (const fusion::PlanStep& step : planned.plan.steps) {
    if (step.kind != fusion::StepKind::Kernel) continue;
    const std::vector<tiling::TilingCandidate> best = tiling::top_candidates(step.kernel, golden_machine(), 2, 1);
    if (best.empty()) {
      ADD_FAILURE() << "no tiling for " << step.kernel.name;
      continue;
    }
    const bool symbolic = tiling::decide_compile_path(step.kernel, 1) == tiling::CompilePath::Jit;
    text += emit_kernel(step.kernel, best.front().tiling, symbolic ? KernelVariant::Jit : KernelVariant::Static).code;
    text += "\n";
  }
  return text;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class KernelGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(KernelGolden, MatchesGoldenKernels) {
  const std::string actual = kernels_text(GetParam());
  const fs::path golden = fs::path(TILEFUSE_SOURCE_DIR) / "tests/codegen/golden" / (GetParam() + ".cpp.txt");
  if (std::getenv("TILEFUSE_UPDATE_GOLDEN") != nullptr) {
    fs::create_directories(golden.parent_path());
    std::ofstream(golden) << actual;
    GTEST_SKIP() << "golden file rewritten: " << golden;
  }
  ASSERT_TRUE(fs::exists(golden)) << "missing " << golden << "; run with TILEFUSE_UPDATE_GOLDEN=1";
  EXPECT_EQ(actual, read_file(golden));
}

const auto kBundledModels =
    ::testing::Values("bias_gelu", "layernorm_opset17", "mlp_block", "scale_mask_softmax", "symbolic_batch");

INSTANTIATE_TEST_SUITE_P(BundledModels, KernelGolden, kBundledModels);

// The kernels compile for every target a user's machine may be, not only for this host's: the
// support headers pick code per ISA with the preprocessor and `if constexpr`, and a branch only
// an AVX-512 compiler sees once broke every kernel there while an AVX2 host's tests passed.
class KernelGoldenOnTarget : public ::testing::TestWithParam<std::tuple<std::string, tf_test::ProbeTarget>> {};

TEST_P(KernelGoldenOnTarget, CompilesForTheTarget) {
  const auto& [model, target] = GetParam();
  const tilefuse::testing::ScratchDir dir;
  const std::string source = dir.file(model + ".cpp");
  std::ofstream(source) << kernels_text(model);
  const std::string command =
      tf_test::kernel_compiler_command("-fsyntax-only -I" TILEFUSE_SOURCE_DIR "/src/codegen/support -march=" +
                                       std::string(target.march) + " " + source + " 2>&1");
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

INSTANTIATE_TEST_SUITE_P(BundledModels, KernelGoldenOnTarget,
                         ::testing::Combine(kBundledModels, ::testing::ValuesIn(tf_test::probe_targets())),
                         [](const auto& info) {
                           std::string target = std::get<1>(info.param).march;
                           std::replace(target.begin(), target.end(), '-', '_');
                           return std::get<0>(info.param) + "_" + target;
                         });

}  // namespace
}  // namespace tilefuse::codegen
