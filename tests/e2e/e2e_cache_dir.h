// One kernel cache for the whole e2e test binary (the second mode and repeated runs reuse
// kernels), removed when the binary ends, and the executor options the e2e suites run with.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "driver/executor.h"

namespace tilefuse::e2e {

class CacheDir : public ::testing::Environment {
 public:
  static const std::string& path() {
    static std::string dir = [] {
      std::string templ = (std::filesystem::temp_directory_path() / "tilefuse_e2e_cache_XXXXXX").string();
      return std::string(mkdtemp(templ.data()));
    }();
    return dir;
  }
  void TearDown() override { std::filesystem::remove_all(path()); }
};

inline const std::string& test_cache_dir() {
  static const auto* const registered = ::testing::AddGlobalTestEnvironment(new CacheDir);
  (void)registered;
  return CacheDir::path();
}

// 2 workers, 2 compile threads, the binary's kernel cache, every run in the SuperKernel's
// region with every step split over both workers, however small (runtime/superkernel_schedule.h;
// the step-by-step way is what the unfused and single-threaded suites run).
inline driver::ExecutorOptions executor_options() {
  driver::ExecutorOptions options;
  options.device.threads = 2;
  options.compile_threads = 2;
  options.cache_dir = test_cache_dir();
  options.superkernel = runtime::SuperKernelMode::on;
  options.superkernel_floor_ns = 0;
  return options;
}

}  // namespace tilefuse::e2e
