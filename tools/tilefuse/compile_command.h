// `tilefuse compile MODEL -o model.tfx`: compiles a model, tunes every kernel with TopN
// candidates on the given (or seeded random) inputs, and writes a model package that
// `tilefuse run`, `tilefuse inspect` and Executable::load use without compiling anything.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "execution_flags.h"

namespace tilefuse::cli {

struct CompileCommand {
  std::string model;
  std::string output;
  std::vector<std::string> inputs;  // "NAME=FILE.npy"
  std::string mode = "fused";
  uint64_t seed = 0;
  int64_t symbol_value = 1;
  ExecutionFlags execution;
  bool json = false;
};

CLI::App* add_compile_command(CLI::App& app, CompileCommand& command);
void execute_compile_command(const CompileCommand& command);

}  // namespace tilefuse::cli
