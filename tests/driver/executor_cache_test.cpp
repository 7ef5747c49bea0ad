// The executor and the on-disk kernel cache together: a second executor compiles nothing, a
// damaged library is rebuilt (and computes the right thing), and two processes starting on the
// same graph at once compile each kernel once between them.
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "build/build_test_support.h"
#include "ir/tensor_compare.h"
#include "reference/interpreter.h"
#include "driver/executor.h"

namespace tilefuse::driver {
namespace {

namespace fs = std::filesystem;
using tilefuse::testing::TempDir;

// Two kernels: softmax-like rows of exp(x) * w, and relu of x transposed (another domain, so it
// cannot join the first).
Graph two_kernel_graph() {
  Graph g;
  Value* x = g.add_input("x", DType::f32, {8, 33});
  Value* w = g.add_input("w", DType::f32, {33});
  Value* e = g.add_node("Exp", "exp", {x}, {"e"})->outputs[0];
  Value* s = g.add_node("Mul", "scale", {e, w}, {"s"})->outputs[0];
  Value* sum = g.add_node("ReduceSum", "sum", {s}, {"sum"}, {{"axes", std::vector<int64_t>{1}}})->outputs[0];
  Value* rows = g.add_node("Div", "normalize", {s, sum}, {"rows"})->outputs[0];
  Value* t = g.add_node("Transpose", "transpose", {x}, {"t"}, {{"perm", std::vector<int64_t>{1, 0}}})->outputs[0];
  Value* r = g.add_node("Relu", "relu", {t}, {"r"})->outputs[0];
  g.set_outputs({rows, r});
  g.infer_shapes();
  return g;
}

std::map<std::string, Tensor> inputs_for(const Graph& g) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::map<std::string, Tensor> inputs;
  for (const Value* in : g.inputs()) {
    Tensor t(in->dtype, static_dims(in->shape));
    for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, uniform(rng));
    inputs[in->name] = t;
  }
  return inputs;
}

ExecutorOptions options_for(const TempDir& cache) {
  ExecutorOptions o;
  o.device.threads = 2;
  o.compile_threads = 2;
  o.cache_dir = cache.path();
  return o;
}

int64_t generated_kernels(const Executor& exe) {
  int64_t n = 0;
  for (const auto& step : exe.plan().steps) n += step.kind == fusion::StepKind::Kernel;
  return n;
}

std::vector<fs::path> files_ending_in(const std::string& root, const std::string& suffix) {
  std::vector<fs::path> found;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(suffix)) found.push_back(entry.path());
  }
  return found;
}

// Empty if the executor's outputs match the reference interpreter's.
std::string mismatches(Executor& exe, const Graph& g) {
  std::map<std::string, Tensor> inputs = inputs_for(g);
  std::vector<Tensor> expected = reference::run_graph(g, inputs);
  std::vector<Tensor> actual = exe.run(inputs);
  std::string report;
  for (size_t i = 0; i < expected.size(); ++i) {
    CompareResult r = compare_tensors(actual.at(i), expected[i], {1e-5, 1e-6});
    if (!r.ok) report += g.outputs()[i]->name + ": " + r.message + "\n";
  }
  return report;
}

TEST(ExecutorCache, SecondExecutorCompilesNothing) {
  TempDir cache;
  Graph g = two_kernel_graph();
  ExecutorCounters first;
  Executor cold(g, options_for(cache), first);
  ASSERT_EQ(generated_kernels(cold), 2);
  EXPECT_EQ(first.cache.compiles, 2);
  EXPECT_EQ(first.cache.cache_hits, 0);

  ExecutorCounters second;
  Executor warm(g, options_for(cache), second);
  EXPECT_EQ(second.cache.compiles, 0);
  EXPECT_EQ(second.cache.cache_hits, 2);
  EXPECT_EQ(mismatches(warm, g), "");
}

TEST(ExecutorCache, TruncatedLibraryIsRebuilt) {
  TempDir cache;
  Graph g = two_kernel_graph();
  ExecutorCounters first;
  { Executor cold(g, options_for(cache), first); }
  std::vector<fs::path> libraries = files_ending_in(cache.path(), "kernel.so");
  ASSERT_EQ(libraries.size(), 2u);
  fs::resize_file(libraries[0], fs::file_size(libraries[0]) / 2);

  ExecutorCounters second;
  Executor repaired(g, options_for(cache), second);
  EXPECT_EQ(second.cache.rebuilds, 1);
  EXPECT_EQ(second.cache.compiles, 1);
  EXPECT_EQ(second.cache.cache_hits, 1);
  EXPECT_EQ(mismatches(repaired, g), "");
}

// Each child builds an executor for the graph and checks its results; exit status 0 = success.
pid_t start_child(const Graph& g, const TempDir& cache) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  int status = 1;
  try {
    ExecutorCounters counters;
    Executor exe(g, options_for(cache), counters);
    status = mismatches(exe, g).empty() ? 0 : 2;
  } catch (...) {
    status = 3;
  }
  ::_exit(status);  // no gtest or static destructors in the child
}

TEST(ExecutorCache, ConcurrentProcessesCompileEachKernelOnce) {
  TempDir cache;
  TempDir tools;
  const std::string log = tools.file("compiles.log");
  // Each compilation holds on for a second, so the two processes surely overlap.
  tilefuse::testing::ScopedEnv cxx("TILEFUSE_CXX", tilefuse::testing::write_counting_compiler(tools, log, "1"));
  Graph g = two_kernel_graph();
  pid_t a = start_child(g, cache);
  pid_t b = start_child(g, cache);
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  for (pid_t pid : {a, b}) {
    int status = -1;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child " << pid << " status " << status;
  }
  // Two kernel libraries, each compiled once; the precompiled header at most once (a new cache
  // copies the build's when it was made by this compiler for this CPU).
  EXPECT_EQ(files_ending_in(cache.path(), "kernel.so").size(), 2u);
  const std::string compiles = tilefuse::testing::read_text(log);
  size_t headers = 0;
  for (size_t at = compiles.find("c++-header"); at != std::string::npos; at = compiles.find("c++-header", at + 1)) ++headers;
  EXPECT_LE(headers, 1u);
  EXPECT_EQ(tilefuse::testing::count_lines(log) - headers, 2u);
}

}  // namespace
}  // namespace tilefuse::driver
