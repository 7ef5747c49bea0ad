#include "api/runner.h"

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/library_call.h"

namespace tilefuse::api {
namespace {

using ::testing::HasSubstr;

TEST(Runner, ParsesEveryModeName) {
  for (Mode mode : kAllModes) EXPECT_EQ(parse_mode(mode_name(mode)), mode);
  EXPECT_THROW(parse_mode("turbo"), UserError);
}

TEST(Runner, FusedAndUnfusedMatchReferenceAndReuseTheCache) {
  // y = Neg(x) over a symbolic N, plus x passed straight through as a second output.
  Graph g;
  Value* x = g.add_input("x", DType::f32, {SymExpr::symbol("N")});
  Node* neg = g.add_node("Neg", "neg", {x}, {"y"});
  g.infer_shapes();
  g.set_outputs({neg->outputs[0], x});
  Tensor input = Tensor::from_vector(DType::f32, {37}, std::vector<double>(37, 1.5));
  std::string templ = (std::filesystem::temp_directory_path() / "tilefuse_runner_XXXXXX").string();
  ExecutionOptions options{.threads = 2, .compile_threads = 1, .cache_dir = mkdtemp(templ.data())};
  for (Mode mode : {Mode::fused, Mode::unfused}) {
    for (int run = 0; run < 2; ++run) {
      RunResult result = run_model(g, runtime::bind_inputs(g, {{"x", input}}), mode, options);
      ASSERT_EQ(result.outputs.size(), 2u);
      EXPECT_EQ(result.outputs[0].tensor.get_f64(36), -1.5);
      EXPECT_TRUE(result.outputs[1].tensor.same_bytes(input));
      EXPECT_EQ(result.counters.at("launches"), 1);
      // Fused and unfused make the same single kernel: only the very first run compiles it.
      bool first = mode == Mode::fused && run == 0;
      EXPECT_EQ(result.counters.at("compiles"), first ? 1 : 0) << mode_name(mode) << " run " << run;
      EXPECT_EQ(result.counters.at("cache_hits"), first ? 0 : 1);
    }
  }
  std::filesystem::remove_all(options.cache_dir);
}

TEST(Runner, ConstantMatMulWeightsArePackedOnceWhenPrepared) {
  // y = x[2, 8] x w[8, 40]: w is packed into two 32-column panels of depth 8 by tilefuse's own
  // GEMM (on CPUs with AVX-512; OpenBLAS, the fallback, packs nothing ahead).
  Graph g;
  Value* x = g.add_input("x", DType::f32, {2, 8});
  std::vector<double> weights(8 * 40);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<double>(i % 5) - 2;
  Value* w = g.add_constant("w", Tensor::from_vector(DType::f32, {8, 40}, weights));
  Node* mm = g.add_node("MatMul", "mm", {x, w}, {"y"});
  g.infer_shapes();
  g.set_outputs({mm->outputs[0]});
  Tensor input = Tensor::from_vector(DType::f32, {2, 8}, std::vector<double>(16, 0.5));
  std::string templ = (std::filesystem::temp_directory_path() / "tilefuse_runner_XXXXXX").string();
  ExecutionOptions options{.threads = 2, .compile_threads = 1, .cache_dir = mkdtemp(templ.data())};
  RunResult result = run_model(g, runtime::bind_inputs(g, {{"x", input}}), Mode::fused, options);
  const int64_t expected = runtime::own_gemm_engine() ? 2 * 8 * 32 * 4 : 0;
  EXPECT_EQ(result.counters.at("packed_weight_bytes"), expected);
  for (int64_t j = 0; j < 40; ++j) {
    double want = 0;
    for (int64_t k = 0; k < 8; ++k) want += 0.5 * weights[k * 40 + j];
    EXPECT_EQ(result.outputs[0].tensor.get_f64(40 + j), want) << "column " << j;
  }
  std::filesystem::remove_all(options.cache_dir);
}

TEST(Runner, ReferenceModeRunsTheGraph) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {SymExpr::symbol("N")});
  Node* neg = g.add_node("Neg", "neg", {x}, {"y"});
  neg->outputs[0]->shape = {SymExpr::symbol("N")};
  g.set_outputs({neg->outputs[0]});
  Tensor input = Tensor::from_vector(DType::f32, {3}, std::vector<double>{1, -2, 3});
  RunResult result = run_model(g, runtime::bind_inputs(g, {{"x", input}}), Mode::reference);
  ASSERT_EQ(result.outputs.size(), 1u);
  EXPECT_EQ(result.outputs[0].name, "y");
  EXPECT_EQ(result.outputs[0].tensor.get_f64(1), 2.0);
  EXPECT_TRUE(result.counters.empty());
}

}  // namespace
}  // namespace tilefuse::api
