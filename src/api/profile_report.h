// What the profiler shows: a Chrome trace (one event per step and worker, viewable in Perfetto or
// chrome://tracing) and a table of steps sorted by time, with their share, GB/s and GFLOP/s.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/step_profile.h"

namespace tilefuse::api {

struct StepSummary {
  std::string name, kind, ops;
  std::vector<std::string> nodes;  // the graph's nodes the step computes
  // Per run, from the step's first worker start to its last worker end: the mean over the runs,
  // and the median and the fastest, which a noisy machine (another tenant, a preempted worker)
  // spoils far less than the mean.
  double mean_ms = 0, median_ms = 0, min_ms = 0;
  double share = 0;  // of the sum over steps of the mean
  int64_t bytes = 0;
  double gbps = 0, gflops = 0;  // at the median
};

// Steps that ran, slowest first (by the mean), over the profile's runs.
std::vector<StepSummary> summarize_steps(const runtime::StepProfile& profile);

// {"traceEvents": [...], "displayTimeUnit": "ms"} in the Trace Event Format.
nlohmann::json chrome_trace(const runtime::StepProfile& profile);
void write_chrome_trace(const std::string& path, const runtime::StepProfile& profile);

std::string per_step_table(const std::vector<StepSummary>& steps);
nlohmann::json per_step_json(const std::vector<StepSummary>& steps);

}  // namespace tilefuse::api
