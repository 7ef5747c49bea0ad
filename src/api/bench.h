// Benchmarking a model: latency per execution mode over repeated runs after a warm-up, next to
// the machine's memory bandwidth measured in the same process on the same number of threads, so
// a memory-bound model's speed reads as a fraction of what the machine can do:
//   bytes          compulsory traffic of the mode's plan (every kernel reads its inputs once and
//                  writes its outputs once); reference mode counts the unfused plan's bytes
//   gbps           bytes / median time
//   stream_ratio   gbps / STREAM triad;  copy_nt_ratio  gbps / non-temporal copy
// Compiling happens before timing and is never timed.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/input_binding.h"
#include "api/runner.h"
#include "ir/graph.h"
#include "runtime/stream_probe.h"

namespace tilefuse::api {

struct BenchOptions {
  std::vector<Mode> modes = {Mode::fused, Mode::unfused, Mode::reference};
  int iterations = 20;  // timed runs per mode
  int warmup = 3;       // untimed runs first (page faults, caches, thread wake-up), 20 ms at least unless 0
  ExecutionOptions execution;
  runtime::StreamOptions stream;
};

struct ModeBench {
  Mode mode = Mode::fused;
  std::vector<double> times_ms;  // every timed run, in run order
  double median_ms = 0, min_ms = 0, p10_ms = 0, p90_ms = 0;
  int64_t kernels = 0;  // launches per inference; reference mode: graph nodes
  int64_t bytes = 0;
  double gbps = 0, stream_ratio = 0, copy_nt_ratio = 0;
};

struct BenchReport {
  std::string model;
  int threads = 0;
  runtime::StreamResult stream;
  std::vector<ModeBench> modes;  // in the order asked for
};

// Throws UserError for bad options (no modes, a mode twice, iterations < 1, warmup < 0) and
// whatever compiling or running the model throws.
BenchReport bench_model(const Graph& graph, const runtime::BoundInputs& inputs, const std::string& model_name,
                        const BenchOptions& options);

// Runs `run` for the warm-up (options.warmup times, and for at least 20 ms unless that is 0: a
// new thread team's workers can share one CPU that long), then options.iterations times, timing
// each: the timed runs' milliseconds. `label` names the progress line; a profile keeps the timed
// runs only.
std::vector<double> time_runs(const std::function<void()>& run, const std::string& label, const BenchOptions& options,
                              runtime::StepProfile* profile = nullptr);

// The q-quantile (0..1) of `values`, linearly interpolated between order statistics.
double quantile(std::vector<double> values, double q);

// {model, stream_triad_gbps, copy_nt_gbps, threads, modes: {fused: {median_ms, ...}, ...}}.
nlohmann::json bench_to_json(const BenchReport& report);
// Aligned plain-text table for people.
std::string bench_to_table(const BenchReport& report);

}  // namespace tilefuse::api
