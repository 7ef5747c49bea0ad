// Runs every tests/passes/ir/*.ir file: parses the graph, runs the passes its `# RUN:` line
// names, checks the printed result against its `# CHECK` lines (ir_check.h), and checks that the
// rewritten graph computes what the original did (reference interpreter, the same inputs).
// Also the checker's own tests: each kind of check can fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "ir_check.h"
#include "pass_test_util.h"
#include "passes/batch_norm_folding.h"
#include "passes/concat_slice_folding.h"
#include "passes/control_flow_inlining.h"
#include "passes/constant_folding.h"
#include "passes/conv_epilogue_folding.h"
#include "passes/decompose_composites.h"
#include "passes/matmul_activation_folding.h"
#include "passes/matmul_bias_folding.h"
#include "passes/matmul_transpose_folding.h"
#include "passes/reduction_splitting.h"

namespace tilefuse::passes {
namespace {

namespace fs = std::filesystem;
using ir_check::Check;

// The passes a `# RUN:` line may name.
const std::map<std::string, std::function<int(Graph&)>>& named_passes() {
  static const std::map<std::string, std::function<int(Graph&)>> passes = {
      {"decompose-composites", decompose_composites},
      {"fold-batch-norms", fold_batch_norms},
      {"fold-constants", [](Graph& g) { return fold_constants(g); }},
      {"fold-conv-epilogues", fold_conv_epilogues},
      {"fold-matmul-activations", fold_matmul_activations},
      {"fold-matmul-biases", fold_matmul_biases},
      {"fold-matmul-transposes", fold_matmul_transposes},
      {"fold-slices-of-concats", fold_slices_of_concats},
      {"inline-control-flow", inline_control_flow},
      {"split-long-reductions", split_long_reductions},
  };
  return passes;
}

fs::path ir_dir() { return fs::path(TILEFUSE_SOURCE_DIR) / "tests/passes/ir"; }

std::vector<std::string> ir_files() {
  std::vector<std::string> names;
  for (const auto& f : fs::directory_iterator(ir_dir())) {
    if (f.path().extension() == ".ir") names.push_back(f.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class IrFile : public ::testing::TestWithParam<std::string> {};

TEST_P(IrFile, PassesGiveTheCheckedResultAndComputeTheSame) {
  std::ifstream in(ir_dir() / (GetParam() + ".ir"));
  std::stringstream text;
  text << in.rdbuf();
  const ir_check::IrCheckFile file = ir_check::parse_directives(text.str());
  ASSERT_FALSE(file.passes.empty()) << "no '# RUN: <passes>' line";
  ASSERT_FALSE(file.checks.empty()) << "no '# CHECK:' line";
  const Graph before = parse_graph(text.str());
  Graph after = parse_graph(text.str());
  for (const std::string& name : file.passes) {
    auto pass = named_passes().find(name);
    ASSERT_NE(pass, named_passes().end()) << "unknown pass '" << name << "' in RUN";
    pass->second(after);
  }
  verify_graph(after);
  EXPECT_EQ(ir_check::run_checks(print_graph(after), file.checks), "");
  pass_testing::expect_same_results(before, after);
}

INSTANTIATE_TEST_SUITE_P(Files, IrFile, ::testing::ValuesIn(ir_files()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// ---- the checker itself ----

const char* kOutput = "graph g(%x: f32[4]) -> (%y) {\n  %a = Exp(%x)\n  %y = Neg(%a)\n}\n";

std::vector<Check> checks(const std::string& directives) { return ir_check::parse_directives(directives).checks; }

TEST(IrCheck, ChecksMatchInOrder) {
  EXPECT_EQ(ir_check::run_checks(kOutput, checks("# CHECK: Exp(%x)\n# CHECK-NEXT: Neg(%a)\n# CHECK: }")), "");
  EXPECT_NE(ir_check::run_checks(kOutput, checks("# CHECK: Neg\n# CHECK: Exp")), "");  // order matters
  EXPECT_NE(ir_check::run_checks(kOutput, checks("# CHECK: Relu")), "");
}

TEST(IrCheck, CheckNextMeansTheVeryNextLine) {
  EXPECT_NE(ir_check::run_checks(kOutput, checks("# CHECK: graph g\n# CHECK-NEXT: Neg")), "");
}

TEST(IrCheck, CheckNotLooksOnlyBetweenItsNeighbours) {
  EXPECT_EQ(ir_check::run_checks(kOutput, checks("# CHECK: Exp\n# CHECK-NOT: Exp\n# CHECK: Neg")), "");
  EXPECT_NE(ir_check::run_checks(kOutput, checks("# CHECK: graph\n# CHECK-NOT: Exp\n# CHECK: Neg")), "");
  EXPECT_NE(ir_check::run_checks(kOutput, checks("# CHECK: Exp\n# CHECK-NOT: Neg")), "");  // up to the end
}

TEST(IrCheck, ReadsRunAndCheckDirectives) {
  const ir_check::IrCheckFile f = ir_check::parse_directives("# RUN: a, b\ngraph\n# CHECK-NOT: x\n#CHECK: y z\n");
  EXPECT_EQ(f.passes, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(f.checks.size(), 2u);
  EXPECT_EQ(f.checks[0].kind, Check::Kind::absent);
  EXPECT_EQ(f.checks[1].text, "y z");
  EXPECT_EQ(f.checks[1].file_line, 4);
}

}  // namespace
}  // namespace tilefuse::passes
