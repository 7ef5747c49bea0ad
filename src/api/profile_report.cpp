#include "api/profile_report.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "api/text_table.h"
#include "io/atomic_file.h"

namespace tilefuse::api {

std::vector<StepSummary> summarize_steps(const runtime::StepProfile& profile) {
  // Per (run, step): the span from the first worker's start to the last worker's end.
  std::map<std::pair<int64_t, int64_t>, std::pair<double, double>> spans;
  for (const runtime::StepInterval& i : profile.intervals()) {
    auto [it, fresh] = spans.emplace(std::make_pair(i.run, i.step), std::make_pair(i.start_us, i.end_us));
    if (!fresh) it->second = {std::min(it->second.first, i.start_us), std::max(it->second.second, i.end_us)};
  }
  std::map<int64_t, std::vector<double>> run_us;  // per step, one span per run it ran in
  for (const auto& [key, span] : spans) run_us[key.second].push_back(span.second - span.first);
  std::vector<StepSummary> out;
  double sum_ms = 0;
  const double runs = static_cast<double>(std::max<int64_t>(profile.runs(), 1));
  for (auto& [step, us] : run_us) {
    if (step < 0 || step >= static_cast<int64_t>(profile.steps.size())) continue;
    const runtime::ProfiledStep& s = profile.steps[step];
    std::sort(us.begin(), us.end());
    double total = 0;
    for (double u : us) total += u;
    StepSummary summary{s.name, s.kind, s.ops, s.nodes};
    summary.mean_ms = total / runs / 1e3;
    summary.median_ms = us[us.size() / 2] / 1e3, summary.min_ms = us.front() / 1e3;
    summary.bytes = s.bytes;
    if (const double seconds = summary.median_ms * 1e-3; seconds > 0) {
      summary.gbps = static_cast<double>(s.bytes) / seconds / 1e9;
      summary.gflops = s.flops / seconds / 1e9;
    }
    sum_ms += summary.mean_ms;
    out.push_back(std::move(summary));
  }
  for (StepSummary& s : out) s.share = sum_ms > 0 ? s.mean_ms / sum_ms : 0;
  std::sort(out.begin(), out.end(), [](const StepSummary& a, const StepSummary& b) { return a.mean_ms > b.mean_ms; });
  return out;
}

nlohmann::json chrome_trace(const runtime::StepProfile& profile) {
  nlohmann::json events = nlohmann::json::array();
  for (const runtime::StepInterval& i : profile.intervals()) {
    if (i.step < 0 || i.step >= static_cast<int64_t>(profile.steps.size())) continue;
    const runtime::ProfiledStep& s = profile.steps[i.step];
    events.push_back({{"name", s.name}, {"cat", s.kind}, {"ph", "X"}, {"ts", i.start_us},
                      {"dur", i.end_us - i.start_us}, {"pid", 1}, {"tid", i.worker},
                      {"args", {{"step", i.step}, {"run", i.run}, {"kind", s.kind}, {"ops", s.ops},
                                {"bytes", s.bytes}, {"flops", s.flops}}}});
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

void write_chrome_trace(const std::string& path, const runtime::StepProfile& profile) {
  io::write_file_atomically(path, chrome_trace(profile).dump());
}

std::string per_step_table(const std::vector<StepSummary>& steps) {
  std::vector<std::vector<std::string>> rows = {
      {"step", "kind", "ops", "ms/run", "median ms", "min ms", "share", "GB/s", "GFLOP/s"}};
  for (const StepSummary& s : steps) {
    std::string ops = s.ops.size() > 48 ? s.ops.substr(0, 45) + "..." : s.ops;
    rows.push_back({s.name, s.kind, ops, fmt::format("{:.3f}", s.mean_ms), fmt::format("{:.3f}", s.median_ms),
                    fmt::format("{:.3f}", s.min_ms), fmt::format("{:.1f}%", 100 * s.share), fmt::format("{:.1f}", s.gbps),
                    s.gflops > 0 ? fmt::format("{:.1f}", s.gflops) : "-"});
  }
  return render_table(rows);
}

nlohmann::json per_step_json(const std::vector<StepSummary>& steps) {
  nlohmann::json out = nlohmann::json::array();
  for (const StepSummary& s : steps) {
    out.push_back({{"name", s.name}, {"kind", s.kind}, {"ops", s.ops}, {"nodes", s.nodes},
                   {"mean_ms", s.mean_ms}, {"median_ms", s.median_ms}, {"min_ms", s.min_ms}, {"share", s.share},
                   {"bytes", s.bytes}, {"gbps", s.gbps}, {"gflops", s.gflops}});
  }
  return out;
}

}  // namespace tilefuse::api
