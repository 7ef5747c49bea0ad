// Golden tests of the fusion planner: each bundled example model in, the printed plan out.
// Regenerate after an intended change with TILEFUSE_UPDATE_GOLDEN=1 and review the diff.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "frontend/onnx_importer.h"
#include "fusion/execution_plan.h"

namespace tilefuse::fusion {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string plan_text(const std::string& model, bool fuse) {
  Graph g = frontend::import_onnx_file(std::string(TILEFUSE_SOURCE_DIR) + "/examples/models/" + model + ".onnx");
  return print_plan(plan_for_execution(g, fuse).plan);
}

class PlannerGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(PlannerGolden, MatchesGoldenPlan) {
  std::string actual = plan_text(GetParam(), true) + "\n--- unfused ---\n" + plan_text(GetParam(), false);
  fs::path golden = fs::path(TILEFUSE_SOURCE_DIR) / "tests/fusion/golden" / (GetParam() + ".txt");
  if (std::getenv("TILEFUSE_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(golden) << actual;
    GTEST_SKIP() << "golden file rewritten: " << golden;
  }
  ASSERT_TRUE(fs::exists(golden)) << "missing " << golden << "; run with TILEFUSE_UPDATE_GOLDEN=1";
  EXPECT_EQ(actual, read_file(golden));
}

INSTANTIATE_TEST_SUITE_P(BundledModels, PlannerGolden,
                         ::testing::Values("bias_gelu", "elementwise_chain", "layernorm_decomposed",
                                           "layernorm_opset17", "scale_mask_softmax", "mlp_block",
                                           "symbolic_batch"));

}  // namespace
}  // namespace tilefuse::fusion
