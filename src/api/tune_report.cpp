#include "api/tune_report.h"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "api/text_table.h"
#include "ir/error.h"
#include "driver/executor.h"
#include "tiling/solver.h"

namespace tilefuse::api {

namespace {

// Everything the report compiles lives here and is removed afterwards.
class ScratchCache {
 public:
  ScratchCache() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tilefuse_tune_report_XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) fail_user("tune-report: cannot create a scratch cache under /tmp");
    path_ = pattern;
  }
  ~ScratchCache() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Candidates beyond any tiling space's size: the solver then returns the whole space.
constexpr int kWholeSpace = 1 << 20;

KernelTuneReport kernel_report(const driver::TuningSummary& summary) {
  KernelTuneReport k;
  k.kernel = summary.kernel;
  k.best = summary.result.best;
  for (size_t i = 0; i < summary.candidates.size(); ++i) {
    const auto& r = summary.result.candidates[i];
    k.candidates.push_back({summary.candidates[i].tiling.repr(), summary.candidates[i].predicted_us, r.measured,
                            r.median_us, r.excluded});
  }
  const double best = k.candidates[static_cast<size_t>(k.best)].median_us;
  if (k.candidates[0].measured && best > 0) k.first_choice_slowdown = k.candidates[0].median_us / best - 1;
  return k;
}

}  // namespace

TuneReport tune_report(const Graph& graph, const runtime::BoundInputs& inputs, const std::string& model_name,
                       const TuneReportOptions& options) {
  ExecutionOptions execution = options.execution;
  if (!execution.autotune_topn) execution.autotune_topn = tiling::kMaxTopN;
  driver::ExecutorOptions exe_options = executor_options(Mode::fused, execution);
  if (exe_options.autotune_topn < 2 && !options.exhaustive) {
    fail_user("tune-report needs at least 2 candidates per kernel to compare, got --topn {}", exe_options.autotune_topn);
  }
  if (options.exhaustive) exe_options.autotune_topn = kWholeSpace;
  ScratchCache scratch;
  exe_options.cache_dir = scratch.path();
  const auto start = std::chrono::steady_clock::now();
  driver::ExecutorCounters counters;
  driver::Executor executor(graph, exe_options, counters);
  executor.run(inputs.by_name());
  TuneReport report;
  report.model = model_name;
  report.threads = exe_options.device.threads;
  report.topn = exe_options.autotune_topn;
  report.compile_and_tune_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  for (const auto& summary : executor.tuning_summaries()) report.kernels.push_back(kernel_report(summary));
  return report;
}

nlohmann::json tune_report_to_json(const TuneReport& report) {
  nlohmann::json j = {{"model", report.model},
                      {"threads", report.threads},
                      {"topn", report.topn},
                      {"compile_and_tune_ms", report.compile_and_tune_ms},
                      {"kernels", nlohmann::json::array()}};
  for (const auto& k : report.kernels) {
    nlohmann::json kj = {{"kernel", k.kernel},
                         {"best", k.best},
                         {"first_choice_slowdown", k.first_choice_slowdown},
                         {"candidates", nlohmann::json::array()}};
    for (const auto& c : k.candidates) {
      kj["candidates"].push_back({{"tiling", c.tiling},
                                  {"predicted_us", c.predicted_us},
                                  {"measured", c.measured},
                                  {"median_us", c.median_us},
                                  {"excluded", c.excluded}});
    }
    j["kernels"].push_back(kj);
  }
  return j;
}

std::string tune_report_to_table(const TuneReport& report) {
  std::string out = fmt::format("model {}  ({} threads, {} candidates per kernel at most; compile + tune {:.0f} ms)\n",
                                report.model, report.threads, report.topn, report.compile_and_tune_ms);
  for (const auto& k : report.kernels) {
    out += fmt::format("\n{}: measured best = candidate {}; the model's first choice is {:.1f}% slower\n", k.kernel,
                       k.best, 100 * k.first_choice_slowdown);
    std::vector<std::vector<std::string>> rows = {{"#", "tiling", "predicted us", "measured us", ""}};
    for (size_t i = 0; i < k.candidates.size(); ++i) {
      const auto& c = k.candidates[i];
      rows.push_back({std::to_string(i), c.tiling, fmt::format("{:.2f}", c.predicted_us),
                      c.measured ? fmt::format("{:.2f}", c.median_us) : "-",
                      static_cast<int>(i) == k.best ? "best" : c.excluded});
    }
    out += render_table(rows);
  }
  if (report.kernels.empty()) out += "no static kernel had a choice of tilings (jit kernels are tuned at launch)\n";
  return out;
}

}  // namespace tilefuse::api
