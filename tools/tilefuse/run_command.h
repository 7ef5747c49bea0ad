// `tilefuse run MODEL`: runs a model on inputs from .npy files (or seeded random data) and
// writes every output as DIR/<output name>.npy.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "execution_flags.h"

namespace tilefuse::cli {

struct RunCommand {
  std::string model;
  std::vector<std::string> inputs;  // "NAME=FILE.npy"
  std::string output_dir = ".";
  std::string mode = "fused";
  uint64_t seed = 0;
  ExecutionFlags execution;
  std::string profile;  // Chrome trace file, empty: no profiling
  std::string superkernel_dot;  // Graphviz file of the SuperKernel's schedule, empty: none
  bool json = false;
};

CLI::App* add_run_command(CLI::App& app, RunCommand& command);
// Throws UserError for anything the user can fix.
void execute_run_command(const RunCommand& command);

}  // namespace tilefuse::cli
