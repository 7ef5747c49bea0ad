#include "api/superkernel_report.h"

#include <map>

#include <fmt/format.h>

namespace tilefuse::api {

nlohmann::json superkernel_to_json(const runtime::SuperKernelReport& report) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& step : report.steps) {
    steps.push_back({{"step", step.name}, {"workers", step.workers}, {"waits_for", step.waits_for}});
  }
  return {{"choice", report.choice}, {"steps", steps}};
}

std::string superkernel_to_dot(const runtime::SuperKernelReport& report) {
  std::string dot = fmt::format(
      "digraph superkernel {{\n  rankdir=TB;\n  label=\"SuperKernel: {}\";\n  node [shape=box, fontname=\"monospace\"];\n",
      report.choice);
  for (size_t i = 0; i < report.steps.size(); ++i) {
    const auto& step = report.steps[i];
    dot += fmt::format("  s{} [label=\"{}\\n{} worker{}\"{}];\n", i, step.name, step.workers,
                       step.workers == 1 ? "" : "s", step.workers > 1 ? ", style=filled, fillcolor=\"#cfe8ff\"" : "");
  }
  std::map<std::string, size_t> node_of;  // a step's name -> its node (waits name earlier steps)
  for (size_t i = 0; i < report.steps.size(); ++i) {
    for (const std::string& wait : report.steps[i].waits_for) {
      if (auto it = node_of.find(wait); it != node_of.end()) dot += fmt::format("  s{} -> s{};\n", it->second, i);
    }
    node_of.emplace(report.steps[i].name, i);
  }
  return dot + "}\n";
}

std::string superkernel_summary(const runtime::SuperKernelReport& report) {
  if (report.steps.empty()) return report.choice;
  size_t waits = 0, parallel = 0;
  for (const auto& step : report.steps) waits += step.waits_for.size(), parallel += step.workers > 1;
  return fmt::format("{}: {} steps in one region ({} on several workers), {} waits for earlier steps", report.choice,
                     report.steps.size(), parallel, waits);
}

}  // namespace tilefuse::api
