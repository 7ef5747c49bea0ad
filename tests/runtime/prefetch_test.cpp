// runtime/prefetch.h exists because GCC 12 deletes a function or loop that does nothing but
// __builtin_prefetch. This compiles such a loop, written with the helpers, with the compiler and
// optimisation the library is built with, and reads the assembly: the prefetches must be there.
#include "runtime/prefetch.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "build/process.h"
#include "io/file_reading.h"

namespace tilefuse::runtime {
namespace {

namespace fs = std::filesystem;

// Functions in an anonymous namespace whose only effect is prefetching, kept out of line as the
// compiler chose to for sgemm_avx2.cpp's fetch of the next C tile: with __builtin_prefetch, GCC
// 12 finds them free of effects and deletes their calls and their bodies.
constexpr const char* kSource = R"(
#include "runtime/prefetch.h"
namespace {
__attribute__((noinline)) void fetch_rows(const float* c, long rows, long ldc) {
  for (long r = 0; r < rows; ++r) tilefuse::runtime::prefetch_line(c + r * ldc);
}
__attribute__((noinline)) void fetch_block(const float* block, unsigned long bytes) {
  tilefuse::runtime::prefetch_bytes(block, bytes);
}
}  // namespace
void next_tile(const float* c, long rows, long ldc) { fetch_rows(c, rows, ldc); }
void next_block(const float* block, unsigned long bytes) { fetch_block(block, bytes); }
)";

// The assembly of the function whose label names `name`, up to its end.
std::string function_body(const std::string& assembly, const std::string& name) {
  for (size_t at = assembly.find(name); at != std::string::npos; at = assembly.find(name, at + 1)) {
    const size_t line_end = assembly.find('\n', at);
    if (line_end == std::string::npos || assembly[line_end - 1] != ':') continue;  // a use, not the label
    return assembly.substr(line_end, assembly.find(".cfi_endproc", line_end) - line_end);
  }
  return "";
}

TEST(Prefetch, PrefetchOnlyLoopsSurviveOptimisation) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the check reads x86 assembly";
#endif
  const fs::path dir = fs::temp_directory_path() / ("tilefuse_prefetch_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "fetch.cpp") << kSource;
  const build::ProcessResult result = build::run_process(
      {TILEFUSE_CXX_COMPILER, "-std=c++20", "-O2", "-I", TILEFUSE_SOURCE_DIR "/src", "-S",
       (dir / "fetch.cpp").string(), "-o", (dir / "fetch.s").string()});
  ASSERT_TRUE(result.succeeded()) << result.output;
  const std::string assembly = io::read_file((dir / "fetch.s").string());
  fs::remove_all(dir);
  for (const char* name : {"fetch_rows", "fetch_block"}) {
    const std::string body = function_body(assembly, name);
    ASSERT_FALSE(body.empty()) << name << " was not emitted:\n" << assembly;
    EXPECT_NE(body.find("prefetcht0"), std::string::npos) << name << " lost its prefetches:\n" << body;
  }
}

}  // namespace
}  // namespace tilefuse::runtime
