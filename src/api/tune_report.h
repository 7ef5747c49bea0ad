// `tilefuse tune-report`: how good the tiling cost model is on a model, measured. Every static
// kernel's candidates (TopN, or the whole tiling space with `exhaustive`) are compiled into a
// private scratch cache (so an existing optimize_tiling never hides the measurement) and
// measured on the model's inputs; per kernel the report lists each candidate's predicted and
// measured time, the winner, where the winner ranked in the model's order, and how much slower
// the model's first choice was than the measured best.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/input_binding.h"
#include "api/runner.h"
#include "ir/graph.h"

namespace tilefuse::api {

struct TuneReportOptions {
  ExecutionOptions execution;  // threads; topn (default 10); cache_dir ignored (a scratch cache is used)
  bool exhaustive = false;     // every point of the tiling space, not only the TopN
};

struct CandidateReport {
  std::string tiling;
  double predicted_us = 0;
  bool measured = false;
  double median_us = 0;
  std::string excluded;
};

struct KernelTuneReport {
  std::string kernel;
  std::vector<CandidateReport> candidates;  // in the cost model's order (its first choice first)
  int best = 0;                             // index of the measured fastest
  double first_choice_slowdown = 0;         // model's first choice / measured best - 1
};

struct TuneReport {
  std::string model;
  int threads = 0;
  int topn = 0;  // candidates per kernel asked for (exhaustive: the largest tiling space)
  std::vector<KernelTuneReport> kernels;
  double compile_and_tune_ms = 0;
};

TuneReport tune_report(const Graph& graph, const runtime::BoundInputs& inputs, const std::string& model_name,
                       const TuneReportOptions& options);
nlohmann::json tune_report_to_json(const TuneReport& report);
std::string tune_report_to_table(const TuneReport& report);

}  // namespace tilefuse::api
