#include "api/bench.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "api/text_table.h"
#include "build/progress_line.h"
#include "fusion/execution_plan.h"
#include "ir/error.h"
#include "reference/interpreter.h"
#include "runtime/device_limit.h"
#include "runtime/thread_team.h"

namespace tilefuse::api {
namespace {

void check_options(const BenchOptions& options) {
  if (options.modes.empty()) fail_user("bench: no modes to measure (valid: {})", mode_choices());
  std::set<Mode> seen;
  for (Mode mode : options.modes) {
    if (!seen.insert(mode).second) fail_user("bench: mode '{}' is listed twice", mode_name(mode));
  }
  if (options.iterations < 1) fail_user("bench: --iters must be at least 1, got {}", options.iterations);
  if (options.warmup < 0) fail_user("bench: --warmup must not be negative, got {}", options.warmup);
}

// Warm-up lasts at least this long, whatever --warmup says: a new team's two threads can start on
// one CPU, and the kernel took up to 10 ms to move one on this project's VM (ThreadTeam::
// spread_workers), during which a small model's runs whose workers wait on each other (a forced
// SuperKernel region) took 0.15 ms instead of 0.02.
constexpr auto kMinWarmup = std::chrono::milliseconds(20);

}  // namespace

std::vector<double> time_runs(const std::function<void()>& run, const std::string& label, const BenchOptions& options,
                              runtime::StepProfile* profile) {
  using Clock = std::chrono::steady_clock;
  build::ProgressLine progress(label, options.warmup + options.iterations);
  const auto warm_from = Clock::now() + kMinWarmup;
  for (int i = 0; i < options.warmup || (options.warmup > 0 && Clock::now() < warm_from); ++i) {
    run();
    if (i < options.warmup) progress.advance("warm-up");
  }
  if (profile) profile->clear();
  std::vector<double> times;
  for (int i = 0; i < options.iterations; ++i) {
    const auto start = Clock::now();
    run();
    times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    progress.advance(fmt::format("{:.2f} ms", times.back()));
  }
  return times;
}

namespace {

int64_t evaluate_bytes(const Dim& bytes, const runtime::BoundInputs& inputs) { return bytes.evaluate(inputs.symbols); }

// The reference interpreter has no plan; it moves at least what the unfused plan moves.
int64_t unfused_bytes(const Graph& graph, const runtime::BoundInputs& inputs) {
  return evaluate_bytes(fusion::plan_for_execution(graph, /*fuse=*/false).plan.compulsory_bytes(), inputs);
}

ModeBench bench_mode(const Graph& graph, const runtime::BoundInputs& inputs, Mode mode, const BenchOptions& options) {
  ModeBench bench;
  bench.mode = mode;
  const std::map<std::string, Tensor> by_name = inputs.by_name();
  if (mode == Mode::reference) {
    bench.times_ms = time_runs([&] { reference::run_graph(graph, by_name); }, fmt::format("bench {}", mode_name(mode)), options);
    bench.kernels = static_cast<int64_t>(graph.num_nodes());
    bench.bytes = unfused_bytes(graph, inputs);
    return bench;
  }
  driver::ExecutorCounters counters;
  ExecutionOptions execution = options.execution;
  // The profiler watches the fused mode, the one users deploy.
  if (mode != Mode::fused) execution.profile = nullptr;
  driver::Executor executor(graph, executor_options(mode, execution), counters);
  std::vector<Tensor> outputs;  // reused by every run: no allocation or page fault once warm
  bench.times_ms = time_runs([&] { executor.run(by_name, outputs); }, fmt::format("bench {}", mode_name(mode)), options,
                             execution.profile);
  bench.kernels = executor.launches();
  bench.bytes = evaluate_bytes(executor.plan().compulsory_bytes(), inputs);
  return bench;
}

void summarise(ModeBench& bench, const runtime::StreamResult& stream) {
  bench.median_ms = quantile(bench.times_ms, 0.5);
  bench.min_ms = quantile(bench.times_ms, 0.0);
  bench.p10_ms = quantile(bench.times_ms, 0.1);
  bench.p90_ms = quantile(bench.times_ms, 0.9);
  bench.gbps = static_cast<double>(bench.bytes) / (bench.median_ms * 1e-3) / 1e9;
  bench.stream_ratio = bench.gbps / stream.triad_gbps;
  bench.copy_nt_ratio = bench.gbps / stream.copy_nt_gbps;
}

}  // namespace

double quantile(std::vector<double> values, double q) {
  if (values.empty()) fail_internal("quantile of no values");
  std::sort(values.begin(), values.end());
  const double position = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const size_t below = static_cast<size_t>(position);
  const size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (position - static_cast<double>(below)) * (values[above] - values[below]);
}

BenchReport bench_model(const Graph& graph, const runtime::BoundInputs& inputs, const std::string& model_name,
                        const BenchOptions& options) {
  check_options(options);
  BenchReport report;
  report.model = model_name;
  report.threads = runtime::resolve_device_limit(options.execution.threads).threads;
  {
    // Its own team of the model's size: the executor's team is private, and thread count is
    // what the comparison needs to share.
    runtime::ThreadTeam team(report.threads);
    build::ProgressLine progress("bench", 1);
    progress.advance("measuring STREAM triad and non-temporal copy bandwidth");
    report.stream = runtime::measure_stream(team, options.stream);
  }
  for (Mode mode : options.modes) {
    report.modes.push_back(bench_mode(graph, inputs, mode, options));
    summarise(report.modes.back(), report.stream);
  }
  return report;
}

nlohmann::json bench_to_json(const BenchReport& report) {
  nlohmann::json modes = nlohmann::json::object();
  for (const ModeBench& m : report.modes) {
    modes[std::string(mode_name(m.mode))] = {
        {"median_ms", m.median_ms}, {"min_ms", m.min_ms},   {"p10_ms", m.p10_ms},
        {"p90_ms", m.p90_ms},       {"kernels", m.kernels}, {"bytes", m.bytes},
        {"gbps", m.gbps},           {"stream_ratio", m.stream_ratio}, {"copy_nt_ratio", m.copy_nt_ratio}};
  }
  return {{"model", report.model},
          {"stream_triad_gbps", report.stream.triad_gbps},
          {"copy_nt_gbps", report.stream.copy_nt_gbps},
          {"threads", report.threads},
          {"modes", modes}};
}

std::string bench_to_table(const BenchReport& report) {
  std::string out = fmt::format("model    {}\nthreads  {}\nmachine  STREAM triad {:.1f} GB/s, non-temporal copy {:.1f} GB/s\n",
                                report.model, report.threads, report.stream.triad_gbps, report.stream.copy_nt_gbps);
  std::vector<std::vector<std::string>> rows{
      {"mode", "median ms", "min ms", "p10-p90 ms", "kernels", "MiB", "GB/s", "x STREAM", "x NT copy"}};
  for (const ModeBench& m : report.modes) {
    rows.push_back({std::string(mode_name(m.mode)), fmt::format("{:.3f}", m.median_ms), fmt::format("{:.3f}", m.min_ms),
                    fmt::format("{:.3f}-{:.3f}", m.p10_ms, m.p90_ms), std::to_string(m.kernels),
                    fmt::format("{:.1f}", static_cast<double>(m.bytes) / (1 << 20)), fmt::format("{:.1f}", m.gbps),
                    fmt::format("{:.2f}", m.stream_ratio), fmt::format("{:.2f}", m.copy_nt_ratio)});
  }
  return out + render_table(rows);
}

}  // namespace tilefuse::api
