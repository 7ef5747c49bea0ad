// TILEFUSE_DEBUG_DIR's artifacts for a kernel with bf16, bool and f32 buffers: every file the
// header promises exists, and the standalone benchmark compiles with the real compiler and runs
// (it once declared `std::vector<tf::bf16> b(n, {})`, which does not compile, and took `.data()`
// of a std::vector<bool>).
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "build/build_test_support.h"
#include "build/process.h"
#include "build/toolchain.h"
#include "driver/executor.h"
#include "ir/graph.h"
#include "tiling/solver.h"

namespace tilefuse::driver {
namespace {

namespace fs = std::filesystem;
using tilefuse::testing::TempDir;

// probs = bf16(Where(mask, f32(x) * 2, -100)): one kernel over a bf16 input, a bool mask
// broadcast along the rows, and a bf16 output.
Graph mixed_types_graph() {
  Graph g;
  Value* x = g.add_input("x", DType::bf16, {Dim(64), Dim(256)});
  Value* mask = g.add_input("mask", DType::boolean, {Dim(256)});
  Value* wide = g.add_node("Cast", "widen", {x}, {"wide"}, {{"to", int64_t{1}}})->outputs[0];
  Value* two = g.add_constant("two", Tensor::scalar_f32(2.0f));
  Value* fill = g.add_constant("fill", Tensor::scalar_f32(-100.0f));
  Value* scaled = g.add_node("Mul", "scale", {wide, two}, {"scaled"})->outputs[0];
  Value* picked = g.add_node("Where", "pick", {mask, scaled, fill}, {"picked"})->outputs[0];
  Value* y = g.add_node("Cast", "narrow", {picked}, {"y"}, {{"to", int64_t{16}}})->outputs[0];
  g.add_output(y);
  g.infer_shapes();
  return g;
}

std::string read(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(DebugDump, StandaloneBenchmarkCompilesAndRunsForEveryBufferType) {
  TempDir cache, dump;
  ExecutorOptions o;
  o.device.threads = 1;
  o.cache_dir = cache.path();
  o.debug_dir = dump.path();
  o.hardware = tiling::detect_hardware();
  ExecutorCounters counters;
  Executor exe(mixed_types_graph(), o, counters);

  fs::path kernel_dir;
  for (const auto& e : fs::directory_iterator(dump.path())) kernel_dir = e.path();
  ASSERT_FALSE(kernel_dir.empty()) << "nothing dumped under " << dump.path();
  for (const char* name : {"tiling.txt", "launch_map.cpp"}) EXPECT_TRUE(fs::exists(kernel_dir / name)) << name;
  fs::path bench;
  for (const auto& e : fs::directory_iterator(kernel_dir)) {
    if (e.path().filename().string().starts_with("bench_")) bench = e.path();
  }
  ASSERT_FALSE(bench.empty()) << "no bench_<key>.cpp in " << kernel_dir;
  const std::string source = read(bench);
  EXPECT_NE(source.find("buffer<tf::bf16>"), std::string::npos) << source;
  EXPECT_NE(source.find("buffer<bool>"), std::string::npos) << source;

  // Built as its own first lines say: the toolchain's compiler, the cache's kernel headers.
  fs::path headers;
  for (const auto& e : fs::recursive_directory_iterator(cache.path())) {
    if (e.path().filename() == "tilefuse_kernel.h") headers = e.path().parent_path();
  }
  ASSERT_FALSE(headers.empty()) << "no kernel headers in the cache";
  EXPECT_NE(source.find("-I " + headers.string()), std::string::npos) << source;
  std::vector<std::string> argv = build::Toolchain::from_environment().command;
  const std::string program = (kernel_dir / "bench").string();
  argv.insert(argv.end(), {"-O3", "-march=native", "-std=c++20", "-I", headers.string(), "-I", kernel_dir.string(),
                           bench.string(), "-o", program});
  const build::ProcessResult compiled = build::run_process(argv);
  ASSERT_TRUE(compiled.succeeded()) << build::command_line_text(argv) << "\n" << compiled.output;
  const build::ProcessResult ran = build::run_process({program});
  ASSERT_TRUE(ran.succeeded()) << ran.status_text() << "\n" << ran.output;
  EXPECT_NE(ran.output.find("median"), std::string::npos) << ran.output;
}

}  // namespace
}  // namespace tilefuse::driver
