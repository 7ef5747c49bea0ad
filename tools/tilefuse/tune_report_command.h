// `tilefuse tune-report MODEL`: every static kernel's tiling candidates with the cost model's
// prediction and the measured time, the winner, and how far the model's first choice was from it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace tilefuse::cli {

struct TuneReportCommand {
  std::string model;
  std::optional<int> topn;
  bool exhaustive = false;
  std::optional<int> threads;
  std::optional<int> compile_threads;
  uint64_t seed = 0;
  std::vector<std::string> inputs;  // "NAME=FILE.npy"
  bool json = false;
};

CLI::App* add_tune_report_command(CLI::App& app, TuneReportCommand& command);
void execute_tune_report_command(const TuneReportCommand& command);

}  // namespace tilefuse::cli
