#include "api/package_report.h"

#include <filesystem>

#include <fmt/format.h>

#include "api/text_table.h"
#include "build/hashing.h"
#include "io/file_reading.h"
#include "ir/error.h"
#include "runtime/model_package.h"

namespace tilefuse::api {

namespace fs = std::filesystem;
using nlohmann::json;

json package_report(const std::string& path) {
  const fs::path manifest_file = fs::path(path) / runtime::package::kManifest;
  if (!fs::is_regular_file(manifest_file)) fail_user("'{}' is not a model package: no {}", path, runtime::package::kManifest);
  json report;
  try {
    report = json::parse(io::read_file(manifest_file.string()));
  } catch (const json::exception& e) {
    fail_user("model package file '{}': malformed: {}", manifest_file.string(), e.what());
  }
  bool intact = true;
  json checksums = json::object();
  const json files = report.value("files", json::object());
  for (const auto& [name, info] : files.items()) {
    const fs::path file = fs::path(path) / name;
    std::string state = "missing";
    if (fs::is_regular_file(file)) {
      state = build::sha256_file_hex(file.string()) == info.value("sha256", "") ? "ok" : "mismatch";
    }
    intact = intact && state == "ok";
    checksums[name] = state;
  }
  report["checksums"] = checksums;
  report["intact"] = intact;
  return report;
}

namespace {

std::string specs_text(const json& specs) {
  std::string out;
  for (const json& s : specs) out += fmt::format("  {} {}\n", s.value("name", "?"), s.value("type", "?"));
  return out;
}

std::string step_detail(const json& step) {
  if (step.value("kind", "") != "kernel") {
    std::string detail = step.value("node", "");
    if (step.contains("branches")) {
      detail += fmt::format("  branches {} and {}", step["branches"].value("then_branch", "?"),
                            step["branches"].value("else_branch", "?"));
    }
    return detail;
  }
  std::string detail = fmt::format("{}  key {}  {}", step.value("name", ""), step.value("kernel_key", ""),
                                   step.value("tiling", ""));
  if (step.value("unmeasured", false)) detail += "  (first candidate, unmeasured)";
  return detail;
}

}  // namespace

std::string package_report_to_text(const json& r) {
  std::string out = fmt::format("package  graph '{}', {} mode, tilefuse {}, format {}\n", r.value("graph", "?"),
                                r.value("mode", "?"), r.value("tilefuse_version", "?"), r.value("format_version", 0));
  out += fmt::format("target   {}\ncompiler {}\ntuned for {} thread(s)\ninputs\n", r.value("target", "?"),
                     r.value("compiler", "?"), r.value("device_threads", 0));
  out += specs_text(r.value("inputs", json::array())) + "outputs\n" + specs_text(r.value("outputs", json::array()));
  std::vector<std::vector<std::string>> rows;
  const json steps = r.value("steps", json::array());
  for (size_t i = 0; i < steps.size(); ++i) rows.push_back({std::to_string(i), steps[i].value("kind", "?"), step_detail(steps[i])});
  out += fmt::format("steps ({})\n", steps.size()) + render_table(rows) + "files\n";
  rows.clear();
  const json files = r.value("files", json::object());
  for (const auto& [name, info] : files.items()) {
    rows.push_back({name, fmt::format("{} bytes", info.value("bytes", 0)), r["checksums"].value(name, "?")});
  }
  out += render_table(rows);
  out += r.value("intact", false) ? "checksums ok\n" : "CHECKSUMS DO NOT MATCH: the package was changed after it was written\n";
  return out;
}

}  // namespace tilefuse::api
