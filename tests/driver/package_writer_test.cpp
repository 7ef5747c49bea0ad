// Model packages end to end: an executor's model saved (driver/package_writer.h), loaded back by
// the runtime alone (runtime/model_package.h) and run; damaged or foreign packages refused by name.
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "build/build_test_support.h"
#include "driver/executor.h"
#include "ir/parser.h"
#include "ir/tensor_compare.h"
#include "reference/interpreter.h"
#include "runtime/model_package.h"
#include "tilefuse/kernel_abi.h"
#include "tiling/hardware_model.h"

namespace tilefuse::driver {
namespace {

namespace fs = std::filesystem;
using tilefuse::testing::TempDir;

Tensor random_tensor(std::vector<int64_t> dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  Tensor t(DType::f32, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, uniform(rng));
  return t;
}

// A GEMM on a constant weight (a library call with packed weights), a softmax-like row kernel
// after it, and a second kernel on its transpose.
Graph model(Dim rows) {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {rows, Dim(64)});
  Value* w = g.add_constant("w", random_tensor({64, 48}, 1));
  Value* b = g.add_constant("b", random_tensor({48}, 2));
  Value* h = g.add_node("MatMul", "mm", {x, w}, {"h"})->outputs[0];
  Value* a = g.add_node("Add", "bias", {h, b}, {"a"})->outputs[0];
  Value* e = g.add_node("Exp", "exp", {a}, {"e"})->outputs[0];
  Value* sum = g.add_node("ReduceSum", "sum", {e}, {"sum"}, {{"axes", std::vector<int64_t>{1}}})->outputs[0];
  Value* y = g.add_node("Div", "normalize", {e, sum}, {"y"})->outputs[0];
  Value* t = g.add_node("Transpose", "transpose", {a}, {"t"}, {{"perm", std::vector<int64_t>{1, 0}}})->outputs[0];
  Value* z = g.add_node("Relu", "relu", {t}, {"z"})->outputs[0];
  g.set_outputs({y, z});
  g.infer_shapes();
  return g;
}

// One kernel cache for every test here (a cache's first use builds the precompiled header):
// packages are written elsewhere, and nothing here depends on what the cache held before.
const TempDir& shared_cache() {
  static const TempDir cache;
  return cache;
}

ExecutorOptions options(int topn, const TempDir& cache = shared_cache()) {
  ExecutorOptions o;
  o.device.threads = 2;
  o.compile_threads = 2;
  o.cache_dir = cache.path();
  o.autotune_topn = topn;
  o.hardware = tiling::detect_hardware();  // uncalibrated: tests need no bandwidth probe
  return o;
}

std::map<std::string, Tensor> inputs(int64_t rows) { return {{"x", random_tensor({rows, 64}, 7)}}; }

nlohmann::json read_json(const fs::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in);
}

void write_json(const fs::path& file, const nlohmann::json& j) { std::ofstream(file) << j.dump(2); }

std::string load_error(const std::string& path) {
  try {
    Executable::load(path);
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "loaded without error: " << path;
  return "";
}

void expect_same(const std::map<std::string, Tensor>& actual, const std::vector<Tensor>& expected,
                 const Graph& g, double tolerance) {
  for (size_t i = 0; i < expected.size(); ++i) {
    const Tensor& a = actual.at(g.outputs()[i]->name);
    if (tolerance == 0) {
      EXPECT_TRUE(a.same_bytes(expected[i])) << g.outputs()[i]->name;
    } else {
      const CompareResult r = compare_tensors(a, expected[i], {tolerance, tolerance});
      EXPECT_TRUE(r.ok) << g.outputs()[i]->name << ": " << r.message;
    }
  }
}

TEST(PackageWriter, ALoadedPackageComputesWhatTheExecutorDidBitForBit) {
  TempDir dir;
  const Graph g = model(Dim(32));
  ExecutorCounters counters;
  Executor exe(g, options(3), counters);
  const std::vector<Tensor> expected = exe.run(inputs(32));
  EXPECT_GT(counters.tuning.kernels_tuned, 0);
  const std::string path = dir.file("model.tfx");
  exe.save_package(path);

  // Elsewhere, as a deployment would: nothing of the cache is needed.
  const std::string moved = dir.file("deployed.tfx");
  fs::rename(path, moved);
  fs::remove_all(dir.file("include"));
  const Executable loaded = Executable::load(moved);
  expect_same(loaded.run(inputs(32)), expected, g, 0);
  EXPECT_EQ(loaded.launches(), exe.launches());
  EXPECT_EQ(loaded.counters().at("compiles"), 0);
  EXPECT_GT(loaded.counters().at("packed_weight_bytes"), 0);  // the GEMM's constant weights

  const nlohmann::json manifest = read_json(fs::path(moved) / "manifest.json");
  EXPECT_EQ(manifest.at("device_threads"), 2);
  int kernels = 0;
  for (const auto& step : manifest.at("steps")) {
    if (step.at("kind") != "kernel") continue;
    ++kernels;
    EXPECT_FALSE(step.at("unmeasured").get<bool>());
    EXPECT_NE(step.at("kernel_key"), "jit");
    EXPECT_TRUE(fs::exists(fs::path(moved) / step.at("source").get<std::string>()));
  }
  EXPECT_EQ(kernels, 2);
  EXPECT_TRUE(fs::exists(fs::path(moved) / "model.cpp"));
  EXPECT_EQ(manifest.at("files").at("weights.bin").at("bytes").get<int64_t>() % 64, 0);
}

// A 3x3 convolution that Winograd's F(2x2, 3x3) computes on AVX-512 (its 16 transformed filters
// are the packed weights) then a residual ReLU: the package maps the transformed filters and
// computes the executor's bits.
TEST(PackageWriter, TransformedConvolutionFiltersSurviveTheRoundTrip) {
  TempDir dir;
  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim(1), Dim(16), Dim(14), Dim(14)});
  Value* w = g.add_constant("w", random_tensor({24, 16, 3, 3}, 3));
  Value* b = g.add_constant("b", random_tensor({24}, 4));
  Value* c = g.add_node("Conv", "conv", {x, w, b}, {"c"}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}})->outputs[0];
  Value* y = g.add_node("Relu", "relu", {c}, {"y"})->outputs[0];
  g.set_outputs({y});
  g.infer_shapes();
  const std::map<std::string, Tensor> in = {{"x", random_tensor({1, 16, 14, 14}, 5)}};
  ExecutorCounters counters;
  Executor exe(g, options(1), counters);
  const std::vector<Tensor> expected = exe.run(in);
  expect_same({{"y", expected[0]}}, reference::run_graph(g, in), g, 1e-4);
  const std::string path = dir.file("conv.tfx");
  exe.save_package(path);
  const Executable loaded = Executable::load(path);
  expect_same(loaded.run(in), expected, g, 0);
  EXPECT_GT(loaded.counters().at("packed_weight_bytes"), 0);
}

// A model compiled for bf16 products: the manifest says so, and the loaded package maps the
// weights packed in bf16 pairs and computes the executor's bits.
TEST(PackageWriter, Bf16ProductsSurviveTheRoundTrip) {
  TempDir dir;
  const Graph g = model(Dim(32));
  ExecutorOptions o = options(1);
  o.precision = runtime::Precision::bf16;
  ExecutorCounters counters;
  Executor exe(g, o, counters);
  const std::vector<Tensor> expected = exe.run(inputs(32));
  const std::string path = dir.file("bf16.tfx");
  exe.save_package(path);
  EXPECT_EQ(read_json(fs::path(path) / "manifest.json").at("precision"),
            runtime::precision_name(runtime::effective_precision(runtime::Precision::bf16)));
  const Executable loaded = Executable::load(path);
  expect_same(loaded.run(inputs(32)), expected, g, 0);
  expect_same(loaded.run(inputs(32)), reference::run_graph(g, inputs(32)), g, 2e-2);
}

// softmax(q kt) v over 4 MiB of scores: a row chain (fusion/row_chains.h). The manifest lists
// it, the loaded package runs it and computes the executor's bits; a chain that names other
// steps is refused.
Graph attention() {
  Graph g;
  Value* q = g.add_input("q", DType::f32, {Dim(1), Dim(1024), Dim(16)});
  Value* kt = g.add_input("kt", DType::f32, {Dim(1), Dim(16), Dim(1024)});
  Value* v = g.add_input("v", DType::f32, {Dim(1), Dim(1024), Dim(16)});
  Value* s = g.add_node("MatMul", "scores", {q, kt}, {"s"})->outputs[0];
  Value* p = g.add_node("Softmax", "softmax", {s}, {"p"}, {{"axis", int64_t{-1}}})->outputs[0];
  g.set_outputs({g.add_node("MatMul", "weighted", {p, v}, {"y"})->outputs[0]});
  g.infer_shapes();
  return g;
}

TEST(PackageWriter, RowChainsSurviveTheRoundTrip) {
  TempDir dir;
  const Graph g = attention();
  const std::map<std::string, Tensor> in = {
      {"q", random_tensor({1, 1024, 16}, 8)}, {"kt", random_tensor({1, 16, 1024}, 9)}, {"v", random_tensor({1, 1024, 16}, 10)}};
  ExecutorCounters counters;
  Executor exe(g, options(1), counters);
  ASSERT_EQ(exe.plan().row_chains.size(), 1u);
  exe.run(in);  // its kernel's first launch, step by step
  const std::vector<Tensor> expected = exe.run(in);
  expect_same({{"y", expected[0]}}, reference::run_graph(g, in), g, 1e-5);
  const std::string path = dir.file("attention.tfx");
  exe.save_package(path);
  nlohmann::json manifest = read_json(fs::path(path) / "manifest.json");
  const fusion::RowChain& c = exe.plan().row_chains[0];
  EXPECT_EQ(manifest.at("row_chains"), nlohmann::json::array({{c.first_product, c.kernel, c.second_product}}));
  const Executable loaded = Executable::load(path);
  expect_same(loaded.run(in), expected, g, 0);

  manifest["row_chains"] = nlohmann::json::array({{c.kernel, c.first_product, c.second_product}});
  write_json(fs::path(path) / "manifest.json", manifest);
  EXPECT_NE(load_error(path).find("row chain"), std::string::npos);
}

TEST(PackageWriter, SymbolicDimsRunAtEverySizeOnTheGenericKernels) {
  TempDir dir;
  const Graph g = model(Dim::symbol("N"));
  ExecutorCounters counters;
  Executor exe(g, options(1), counters);
  exe.run(inputs(8));
  exe.save_package(dir.file("model.tfx"));
  const Executable loaded = Executable::load(dir.file("model.tfx"));
  EXPECT_EQ(loaded.inputs().at(0).shape, (std::vector<int64_t>{-1, 64}));
  for (int64_t rows : {1, 3, 8, 100, 1000}) {
    expect_same(loaded.run(inputs(rows)), reference::run_graph(g, inputs(rows)), g, 1e-5);
  }
}

// x [N, 64] plus a mask [N, seq]: the kernel reads the mask at a stride the run settles, and
// the package keeps the graph's assumption that seq is 1 or 64, so it refuses seq = 5 by name
// rather than let the kernel read past the mask.
TEST(PackageWriter, BroadcastAssumptionsSurviveTheRoundTrip) {
  TempDir dir;
  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim::symbol("N"), Dim(64)});
  Value* mask = g.add_input("mask", DType::f32, {Dim::symbol("N"), Dim::symbol("seq")});
  g.add_output(g.add_node("Add", "add", {g.add_node("Exp", "exp", {x}, {"e"})->outputs[0], mask}, {"y"})->outputs[0]);
  g.infer_shapes();
  auto feed = [](int64_t seq) {
    return std::map<std::string, Tensor>{{"x", random_tensor({3, 64}, 8)}, {"mask", random_tensor({3, seq}, 9)}};
  };
  ExecutorCounters counters;
  Executor exe(g, options(1), counters);
  exe.run(feed(64));
  exe.save_package(dir.file("model.tfx"));
  const Executable loaded = Executable::load(dir.file("model.tfx"));
  for (int64_t seq : {64, 1}) expect_same(loaded.run(feed(seq)), reference::run_graph(g, feed(seq)), g, 1e-5);
  try {
    loaded.run(feed(5));
    ADD_FAILURE() << "a package ran a mask of 5 against rows of 64";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("seq = 5, which does not broadcast"), std::string::npos) << e.what();
  }
}

TEST(PackageWriter, KernelsThatNeverRanTakeTheirFirstCandidateUnmeasured) {
  TempDir dir;  // its own cache: no tuning record from another test
  const Graph g = model(Dim(32));
  ExecutorCounters counters;
  Executor exe(g, options(3, dir), counters);
  exe.save_package(dir.file("model.tfx"));
  const nlohmann::json manifest = read_json(dir.file("model.tfx/manifest.json"));
  bool any_unmeasured = false;
  for (const auto& step : manifest.at("steps")) any_unmeasured |= step.value("unmeasured", false);
  EXPECT_TRUE(any_unmeasured);
  const Executable loaded = Executable::load(dir.file("model.tfx"));
  expect_same(loaded.run(inputs(32)), reference::run_graph(g, inputs(32)), g, 1e-5);
}

TEST(PackageWriter, ConcurrentRunsOfALoadedPackageMatchSequentialOnes) {
  TempDir dir;
  const Graph g = model(Dim::symbol("N"));
  ExecutorCounters counters;
  Executor exe(g, options(1), counters);
  exe.save_package(dir.file("model.tfx"));
  const Executable loaded = Executable::load(dir.file("model.tfx"));
  std::map<int64_t, std::map<std::string, Tensor>> sequential;
  for (int64_t rows : {5, 32}) sequential[rows] = loaded.run(inputs(rows));
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const int64_t rows = (t + i) % 2 ? 5 : 32;
        const auto out = loaded.run(inputs(rows));
        for (const auto& [name, tensor] : out) mismatches += !tensor.same_bytes(sequential[rows].at(name));
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches, 0);
}

// An If on a run-time condition runs its branches as executors of their own; the package holds
// each as a package inside it. The tuning run took one branch: the other's kernels take their
// first candidate, unmeasured, and the package still computes both right.
TEST(PackageWriter, IfBranchesBecomePackagesAndTheUntakenOneIsUnmeasured) {
  TempDir dir;  // its own cache: no tuning record from another test
  const Graph g = parse_graph(
      "graph branchy(%x: f32[64, 256]) -> (%y) {\n"
      "  %zero: f32[] = const dense<0>\n"
      "  %s: f32[] = ReduceSum(%x) {keepdims = 0} @sum\n"
      "  %c: bool[] = Greater(%s, %zero) @positive\n"
      "  %y: f32[64, 256] = If(%c, %x) {else_branch = graph no(%x: f32[64, 256]) -> (%n) {\n"
      "      %e: f32[64, 256] = Exp(%x) @exp\n"
      "      %n: f32[64, 256] = Neg(%e) @neg\n"
      "    }, then_branch = graph yes(%x: f32[64, 256]) -> (%t) {\n"
      "      %r: f32[64, 256] = Sigmoid(%x) @sigmoid\n"
      "      %t: f32[64, 256] = Mul(%r, %x) @mul\n"
      "    }} @branch\n"
      "}\n");
  ExecutorCounters counters;
  Executor exe(g, options(3, dir), counters);
  Tensor positive = random_tensor({64, 256}, 3), negative = random_tensor({64, 256}, 4);
  for (int64_t i = 0; i < positive.numel(); ++i) {
    positive.set_f64(i, std::abs(positive.get_f64(i)));
    negative.set_f64(i, -std::abs(negative.get_f64(i)));
  }
  exe.run({{"x", positive}});
  exe.save_package(dir.file("branchy.tfx"));

  const nlohmann::json outer = read_json(dir.file("branchy.tfx/manifest.json"));
  const nlohmann::json& steps = outer.at("steps");
  const auto branch_step = std::find_if(steps.begin(), steps.end(), [](const auto& step) { return step.contains("branches"); });
  ASSERT_NE(branch_step, steps.end());
  const nlohmann::json& branches = branch_step->at("branches");
  auto unmeasured = [&](const std::string& relative) {
    bool any = false;
    const nlohmann::json manifest = read_json(fs::path(dir.file("branchy.tfx")) / relative / "manifest.json");
    for (const auto& step : manifest.at("steps")) any |= step.value("unmeasured", false);
    return any;
  };
  EXPECT_FALSE(unmeasured(branches.at("then_branch")));  // taken by the tuning run
  EXPECT_TRUE(unmeasured(branches.at("else_branch")));

  const Executable loaded = Executable::load(dir.file("branchy.tfx"));
  for (const Tensor& x : {positive, negative}) {
    const CompareResult r = compare_tensors(loaded.run({{"x", x}}).at("y"), reference::run_graph(g, {{"x", x}}).at(0),
                                            {1e-5, 1e-6});
    EXPECT_TRUE(r.ok) << r.message;
  }
}

class DamagedPackage : public ::testing::Test {
 protected:
  void SetUp() override {
    ExecutorCounters counters;
    Executor exe(model(Dim(16)), options(1), counters);
    exe.save_package(path());
  }
  std::string path() const { return dir_.file("model.tfx"); }
  fs::path file(const std::string& name) const { return fs::path(path()) / name; }
  TempDir dir_;
};

TEST_F(DamagedPackage, ATruncatedWeightsFileIsRefusedBeforeAnythingIsMapped) {
  fs::resize_file(file("weights.bin"), fs::file_size(file("weights.bin")) / 2);
  const std::string error = load_error(path());
  EXPECT_NE(error.find("weights.bin"), std::string::npos) << error;
  EXPECT_NE(error.find("truncated or replaced"), std::string::npos) << error;
}

TEST_F(DamagedPackage, AMissingLibraryIsNamed) {
  fs::remove(file("model.so"));
  const std::string error = load_error(path());
  EXPECT_NE(error.find("model.so"), std::string::npos) << error;
  EXPECT_NE(error.find("missing"), std::string::npos) << error;
}

TEST_F(DamagedPackage, AnotherFormatVersionSaysToCompileAgain) {
  nlohmann::json manifest = read_json(file("manifest.json"));
  manifest["format_version"] = 99;
  write_json(file("manifest.json"), manifest);
  const std::string error = load_error(path());
  EXPECT_NE(error.find("format version 99"), std::string::npos) << error;
  EXPECT_NE(error.find("compile the model again"), std::string::npos) << error;
}

TEST_F(DamagedPackage, AManifestThatIsNotJsonOrNotAPackageIsRefused) {
  std::ofstream(file("manifest.json")) << "{ not json";
  EXPECT_NE(load_error(path()).find("malformed"), std::string::npos);
  write_json(file("manifest.json"), {{"format", "something-else"}});
  EXPECT_NE(load_error(path()).find("not a tilefuse model package manifest"), std::string::npos);
  // The right format, but a field missing: named as malformed, not an internal error.
  write_json(file("manifest.json"), {{"format", "tilefuse-model-package"}, {"format_version", 1}, {"kernel_abi_version", TILEFUSE_KERNEL_ABI_VERSION}});
  EXPECT_NE(load_error(path()).find("malformed"), std::string::npos);
  EXPECT_NE(load_error(dir_.file("nowhere")).find("not a directory"), std::string::npos);
}

TEST_F(DamagedPackage, APlanThatNamesNodesTheGraphLacksIsRefused) {
  nlohmann::json manifest = read_json(file("manifest.json"));
  for (auto& step : manifest["steps"]) {
    if (step["kind"] == "kernel") step["nodes"][0] = "ghost";
  }
  write_json(file("manifest.json"), manifest);
  const std::string error = load_error(path());
  EXPECT_NE(error.find("node 'ghost'"), std::string::npos) << error;
}

TEST_F(DamagedPackage, SavingReplacesAPackageButNeverAnythingElse) {
  ExecutorCounters counters;
  Executor exe(model(Dim(16)), options(1), counters);
  exe.save_package(path());  // over the package SetUp wrote
  EXPECT_TRUE(fs::exists(file("manifest.json")));
  std::ofstream(dir_.file("notes.txt")) << "mine";
  try {
    exe.save_package(dir_.file("notes.txt"));
    ADD_FAILURE() << "saved over a file that is not a package";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("not a model package"), std::string::npos) << e.what();
  }
  std::ifstream in(dir_.file("notes.txt"));
  std::string text;
  in >> text;
  EXPECT_EQ(text, "mine");
}

TEST(PackageCpu, FeaturesThisCpuHasAreNotMissingAndUnknownOnesAreNotChecked) {
  EXPECT_TRUE(runtime::missing_cpu_features({"SSE4_2", "NOT_A_FEATURE"}).empty());
}

}  // namespace
}  // namespace tilefuse::driver
