// A private kernel cache directory (mkdtemp) for one test process, removed with everything in it
// at exit: property cases share it, so equal kernels compile once per process. And the executor
// options every property runs with: two workers, two compile threads, that cache.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "driver/executor.h"

namespace tilefuse::property {

inline const std::string& temp_cache_dir() {
  struct Dir {
    std::string path;
    Dir() {
      std::string pattern = (std::filesystem::temp_directory_path() / "tilefuse_property_cache_XXXXXX").string();
      if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
      path = pattern;
    }
    ~Dir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static Dir dir;
  return dir.path;
}

inline driver::ExecutorOptions property_options(bool fuse) {
  driver::ExecutorOptions o;
  o.fuse = fuse;
  o.device.threads = 2;
  o.compile_threads = 2;
  o.cache_dir = temp_cache_dir();
  // Fused runs go through the SuperKernel's region, unfused ones step by step: every random
  // graph checks the region's schedule against the reference.
  o.superkernel = fuse ? runtime::SuperKernelMode::on : runtime::SuperKernelMode::off;
  o.superkernel_floor_ns = 0;
  return o;
}

}  // namespace tilefuse::property
