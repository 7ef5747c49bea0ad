// `tilefuse bench MODEL`: latency, launches, bytes and achieved bandwidth of a model per execution
// mode, next to the machine's STREAM-triad and non-temporal copy bandwidth measured in the same
// run on the same number of threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "execution_flags.h"

namespace tilefuse::cli {

struct BenchCommand {
  std::string model;
  std::vector<std::string> modes = {"fused", "unfused", "reference"};
  int iterations = 20;
  int warmup = 3;
  uint64_t seed = 0;
  std::vector<std::string> inputs;  // "NAME=FILE.npy"
  ExecutionFlags execution;
  int stream_mib = 128;
  std::string profile;  // Chrome trace of the fused mode's timed runs
  bool per_step = false;
  bool json = false;
  bool accuracy = false;  // also compare --precision's outputs with f32's
  int samples = 4;        // seeded inputs the accuracy is measured on
};

CLI::App* add_bench_command(CLI::App& app, BenchCommand& command);
// Throws UserError for anything the user can fix.
void execute_bench_command(const BenchCommand& command);

}  // namespace tilefuse::cli
