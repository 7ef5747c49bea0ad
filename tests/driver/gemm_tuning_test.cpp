// TopN + PGO of the GEMM engine's blockings: the record's text round trip, the candidates each
// kind of call varies, and tune_blocking end to end (a measured winner recorded, reused by a
// second call without measuring, a corrupt record tuned again, nothing measured with TopN 1 or
// symbolic shapes), the tuned call still matching the reference.
#include "driver/gemm_tuning.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "build/build_test_support.h"
#include "ir/tensor_compare.h"
#include "reference/interpreter.h"
#include "support/scoped_cpu.h"

namespace tilefuse::driver {
namespace {

namespace fs = std::filesystem;
using tilefuse::testing::TempDir;

const runtime::GemmBlocking kModel = runtime::default_blocking(48 << 10, 1 << 20);

Tensor filled(std::vector<int64_t> shape, int salt) {
  Tensor t(DType::f32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, ((i * 13 + salt * 5) % 23) / 9.0 - 1.2);
  return t;
}

// y = relu(x [150, 200] x w [200, 300] + b), w and b constant.
struct Projection {
  Graph g;
  Node* node = nullptr;
  Projection() {
    Value* x = g.add_input("x", DType::f32, shape_of({150, 200}));
    Value* w = g.add_constant("w", filled({200, 300}, 1));
    Value* b = g.add_constant("b", filled({300}, 2));
    node = g.add_node("FusedMatMul", "proj", {x, w, b}, {"y"}, {{"activation", std::string("Relu")}});
    g.infer_shapes();
  }
};

BlockingTuning tuning(const TempDir& dir, int topn) { return {dir.path(), topn, 2, 48 << 10, 1 << 20}; }

fs::path only_record(const TempDir& dir) {
  std::vector<fs::path> found;
  for (const auto& e : fs::recursive_directory_iterator(dir.path())) {
    if (e.path().filename() == "optimize_tiling") found.push_back(e.path());
  }
  EXPECT_EQ(found.size(), 1u);
  return found.empty() ? fs::path() : found[0];
}

TEST(GemmTuning, RecordTextRoundTrips) {
  const runtime::GemmBlocking b{96, 384, 1024, 320};
  EXPECT_EQ(blocking_record(b), "mc=96;kc=384;nc=1024;nb=320");
  auto parsed = parse_blocking_record(blocking_record(b));
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(blocking_record(*parsed), blocking_record(b));
  for (const char* bad : {"", "mc=96;kc=384;nc=1024", "mc=96;kc=384;nc=1024;nb=320;x", "mc=0;kc=384;nc=1024;nb=3",
                          "mc=96;kc=0;nc=1024;nb=320"}) {
    EXPECT_FALSE(parse_blocking_record(bad).has_value()) << bad;
  }
}

TEST(GemmTuning, CandidatesStartWithTheModelAndVaryWhatTheCallUses) {
  Projection p;
  const std::vector<runtime::GemmBlocking> three = blocking_candidates(*p.node, kModel, 3);
  ASSERT_EQ(three.size(), 3u);
  EXPECT_EQ(blocking_record(three[0]), blocking_record(kModel));
  EXPECT_EQ(three[1].mc, 96);  // a weight as B: row blocks first
  EXPECT_EQ(blocking_candidates(*p.node, kModel, 1).size(), 1u);
  EXPECT_LE(blocking_candidates(*p.node, kModel, 10).size(), 10u);

  // A convolution's weight is A: its rows stay whole, so mc never varies.
  Graph g;
  Value* x = g.add_input("x", DType::f32, shape_of({1, 8, 10, 10}));
  Node* conv = g.add_node("Conv", "conv", {x, g.add_constant("w", filled({16, 8, 3, 3}, 1))}, {"y"});
  g.infer_shapes();
  for (const runtime::GemmBlocking& b : blocking_candidates(*conv, kModel, 10)) EXPECT_EQ(b.mc, kModel.mc);
}

TEST(GemmTuning, MeasuresOnceThenReusesTheRecord) {
  if (!runtime::own_gemm_engine()) GTEST_SKIP() << "blockings are tilefuse's sgemm's; this CPU runs OpenBLAS";
  TempDir dir;
  Projection p;
  auto call = runtime::prepare_library_call(*p.node, kModel);
  const BlockingTuneResult first = tune_blocking(*call, *p.node, kModel, tuning(dir, 3));
  EXPECT_TRUE(first.measured);
  EXPECT_FALSE(first.reused);
  const fs::path record = only_record(dir);

  // The tuned call computes what the reference does.
  std::vector<Tensor> ins = {filled({150, 200}, 3), *p.node->input(1)->constant, *p.node->input(2)->constant};
  Tensor expected = reference::evaluate_node(*p.node, ins).at(0);
  runtime::ThreadTeam team(2);
  std::vector<Tensor> outs = {Tensor(DType::f32, expected.shape())};
  call->run(team, ins, outs);
  EXPECT_TRUE(compare_tensors(outs[0], expected, {1e-5, 1e-5}).ok);

  auto again = runtime::prepare_library_call(*p.node, kModel);
  const BlockingTuneResult second = tune_blocking(*again, *p.node, kModel, tuning(dir, 3));
  EXPECT_TRUE(second.reused);
  EXPECT_FALSE(second.measured);
  EXPECT_EQ(blocking_record(second.blocking), blocking_record(first.blocking));

  // A torn record is ignored and the GEMM measured again.
  std::ofstream(record, std::ios::trunc) << "mc=96;kc=384\n";
  const BlockingTuneResult third = tune_blocking(*again, *p.node, kModel, tuning(dir, 3));
  EXPECT_TRUE(third.measured);
  EXPECT_FALSE(third.reused);
}

// A blocking measured while another process keeps every CPU busy is used but not recorded: the
// next call measures again.
TEST(GemmTuning, AWinnerMeasuredBesideABusyProcessIsNotRecorded) {
  if (!runtime::own_gemm_engine()) GTEST_SKIP() << "blockings are tilefuse's sgemm's; this CPU runs OpenBLAS";
  const testing_support::ScopedEnv strict("TILEFUSE_RECORD_BUSY_MEASUREMENTS", std::nullopt);
  TempDir dir;
  Projection p;
  auto call = runtime::prepare_library_call(*p.node, kModel);
  BlockingTuneResult first;
  {
    const testing_support::BusyCpus busy;
    first = tune_blocking(*call, *p.node, kModel, tuning(dir, 3));
  }
  EXPECT_TRUE(first.measured);
  EXPECT_TRUE(first.withheld);
  for (const auto& e : fs::recursive_directory_iterator(dir.path())) {
    EXPECT_NE(e.path().filename(), "optimize_tiling") << "nothing recorded";
  }
  const BlockingTuneResult second = tune_blocking(*call, *p.node, kModel, tuning(dir, 3));
  EXPECT_TRUE(second.measured) << "measured again";
  EXPECT_FALSE(second.reused);
}

TEST(GemmTuning, NothingMeasuredWithTopNOneOrSymbolicShapes) {
  TempDir dir;
  Projection p;
  auto call = runtime::prepare_library_call(*p.node, kModel);
  EXPECT_FALSE(tune_blocking(*call, *p.node, kModel, tuning(dir, 1)).measured);

  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim::symbol("n"), Dim(200)});
  Node* node = g.add_node("MatMul", "mm", {x, g.add_constant("w", filled({200, 300}, 1))}, {"y"});
  g.infer_shapes();
  auto symbolic = runtime::prepare_library_call(*node, kModel);
  const BlockingTuneResult r = tune_blocking(*symbolic, *node, kModel, tuning(dir, 3));
  EXPECT_FALSE(r.measured);
  EXPECT_EQ(blocking_record(r.blocking), blocking_record(kModel));
  EXPECT_FALSE(fs::exists(fs::path(dir.path()) / "gemm_blocking"));
}

}  // namespace
}  // namespace tilefuse::driver
