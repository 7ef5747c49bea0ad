// The flags every command that compiles and runs a model's kernels shares (`run`, `bench`):
// device limit, compile threads, TopN, kernel cache and debug dumps.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "api/runner.h"

namespace tilefuse::cli {

struct ExecutionFlags {
  std::optional<int> threads;
  std::optional<int> compile_threads;
  std::optional<int> topn;
  std::string cache_dir;
  std::string debug_dir;
  std::string max_memory;
  bool cpp_wrapper = false;
  std::string superkernel;
  std::string precision;
};

void add_execution_flags(CLI::App* sub, ExecutionFlags& flags);

// The flags as the API takes them, TopN (flag or TILEFUSE_AUTOTUNE_TOPN) validated here: call
// it before any other work so a configuration error comes first. Sets the process's memory cap
// (--max-memory, else TILEFUSE_MAX_MEMORY, else physical memory) before the model is loaded.
api::ExecutionOptions execution_options(const ExecutionFlags& flags);

}  // namespace tilefuse::cli
