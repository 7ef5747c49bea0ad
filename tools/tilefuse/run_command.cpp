#include "run_command.h"

#include <filesystem>
#include <iostream>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/input_binding.h"
#include "api/profile_report.h"
#include "input_flags.h"
#include "api/model.h"
#include "api/model_packaging.h"
#include "api/output_files.h"
#include "api/runner.h"
#include "api/superkernel_report.h"
#include "api/tensor_stats.h"
#include "api/text_table.h"
#include "io/atomic_file.h"
#include "io/npy.h"
#include "ir/error.h"

namespace tilefuse::cli {
namespace {

struct WrittenOutput {
  std::string name;
  std::string path;
  Tensor tensor;
  api::TensorStats stats;
};

void create_output_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail_user("cannot create output directory '{}': {}", dir, ec.message());
}

std::vector<WrittenOutput> write_outputs(const std::vector<api::NamedTensor>& outputs, const std::string& dir) {
  std::vector<std::string> names;
  for (const api::NamedTensor& out : outputs) names.push_back(out.name);
  const std::vector<std::string> files = api::output_file_names(names);
  std::vector<WrittenOutput> written;
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string path = (std::filesystem::path(dir) / files[i]).string();
    io::write_npy(path, outputs[i].tensor);
    written.push_back({outputs[i].name, path, outputs[i].tensor, api::compute_stats(outputs[i].tensor)});
  }
  return written;
}

nlohmann::json stats_to_json(const api::TensorStats& stats) {
  if (stats.count == 0) return {{"min", nullptr}, {"mean", nullptr}, {"max", nullptr}, {"nan_count", stats.nan_count}};
  return {{"min", stats.min}, {"mean", stats.mean}, {"max", stats.max}, {"nan_count", stats.nan_count}};
}

void print_json(const RunCommand& command, const runtime::BoundInputs& inputs,
                const std::map<std::string, std::string>& input_files, const std::vector<WrittenOutput>& outputs,
                const api::RunResult& result) {
  nlohmann::json json{{"model", command.model}, {"mode", command.mode}, {"seed", command.seed}};
  json["inputs"] = nlohmann::json::array();
  for (const runtime::BoundInput& in : inputs.inputs) {
    auto file = input_files.find(in.name);
    json["inputs"].push_back({{"name", in.name},
                              {"dtype", dtype_name(in.tensor.dtype())},
                              {"shape", in.tensor.shape()},
                              {"random", in.random},
                              {"file", file == input_files.end() ? nlohmann::json() : nlohmann::json(file->second)}});
  }
  json["outputs"] = nlohmann::json::array();
  for (const WrittenOutput& out : outputs) {
    json["outputs"].push_back({{"name", out.name},
                               {"path", out.path},
                               {"dtype", dtype_name(out.tensor.dtype())},
                               {"shape", out.tensor.shape()},
                               {"stats", stats_to_json(out.stats)}});
  }
  json["precision"] = result.precision;
  json["elapsed_ms"] = result.elapsed_ms;
  json["compile_ms"] = result.compile_ms;
  json["compile_phases_ms"] = result.compile_phases_ms;
  json["counters"] = nlohmann::json::object();
  for (const auto& [name, value] : result.counters) json["counters"][name] = value;
  if (result.superkernel) json["superkernel"] = api::superkernel_to_json(*result.superkernel);
  std::cout << json.dump(2) << "\n";
}

std::string describe_stats(const api::TensorStats& stats) {
  std::string text = stats.count == 0 ? "no values"
                                      : fmt::format("min {:.4g}  mean {:.4g}  max {:.4g}", stats.min, stats.mean, stats.max);
  if (stats.nan_count > 0) text += fmt::format("  ({} NaN)", stats.nan_count);
  return text;
}

void print_summary(const RunCommand& command, const runtime::BoundInputs& inputs,
                   const std::map<std::string, std::string>& input_files, const std::vector<WrittenOutput>& outputs,
                   const api::RunResult& result) {
  std::cout << fmt::format("model    {}  (mode {})\ninputs\n", command.model, command.mode);
  std::vector<std::vector<std::string>> rows;
  for (const runtime::BoundInput& in : inputs.inputs) {
    auto file = input_files.find(in.name);
    rows.push_back({in.name, in.tensor.summary(),
                    in.random ? fmt::format("random (seed {})", command.seed) : "from " + file->second});
  }
  std::cout << api::render_table(rows) << "outputs\n";
  rows.clear();
  for (const WrittenOutput& out : outputs) {
    rows.push_back({out.name, out.tensor.summary(), describe_stats(out.stats), "-> " + out.path});
  }
  std::cout << api::render_table(rows) << fmt::format("elapsed  {:.2f} ms", result.elapsed_ms);
  if (result.compile_phases_ms.count("package_load") && !result.compile_phases_ms.count("package_build")) {
    std::cout << fmt::format(" (package loaded in {:.1f} ms, nothing compiled or tuned; {} launches per run)",
                             result.compile_phases_ms.at("package_load"), result.counters.at("launches"));
  } else if (command.mode != "reference") {
    std::cout << fmt::format(" (compile {:.0f} ms: {} kernels compiled, {} from cache; {} launches per run)",
                             result.compile_ms, result.counters.at("compiles"), result.counters.at("cache_hits"),
                             result.counters.at("launches"));
    if (const int64_t measured = result.counters.at("candidates_measured"); measured > 0) {
      std::cout << fmt::format("\ntuned    {} kernels: {} tiling candidates measured on this run's inputs (included in elapsed)",
                               result.counters.at("kernels_tuned"), measured);
    }
  }
  if (result.superkernel) std::cout << "\nsuperkernel  " << api::superkernel_summary(*result.superkernel);
  std::cout << "\n";
}

}  // namespace

CLI::App* add_run_command(CLI::App& app, RunCommand& command) {
  CLI::App* sub = app.add_subcommand("run", "Run a model and write its outputs as .npy files");
  sub->add_option("MODEL", command.model, "ONNX model file, or a model package (model.tfx) from `tilefuse compile`")
      ->required();
  add_input_option(sub, command.inputs);
  sub->add_option("--output-dir", command.output_dir, "Where to write <output name>.npy files (created if missing)")
      ->capture_default_str();
  sub->add_option("--mode", command.mode, "Execution mode: " + api::mode_choices())->capture_default_str();
  sub->add_option("--seed", command.seed, "Seed of the random data for inputs not given")->capture_default_str();
  add_execution_flags(sub, command.execution);
  sub->add_option("--profile", command.profile,
                  "Write a Chrome trace of the run (one event per step and worker; open in Perfetto or chrome://tracing)");
  sub->add_option("--superkernel-dot", command.superkernel_dot,
                  "Write the SuperKernel's schedule of this run as Graphviz: a box per step with its workers, an "
                  "arrow to each step that waits for it (render: dot -Tsvg FILE)");
  sub->add_flag("--json", command.json, "Print the summary as one JSON object");
  sub->footer(
      "Inputs not given with --input are filled with seeded random data (floats in [-1, 1), integers in [0, 4),\n"
      "random bools). A symbolic dim (e.g. batch N) must be fixed by at least one input given as a .npy file.\n"
      "Output names are made filesystem-safe: characters other than letters, digits, '-', '_', '.' become '_'.");
  return sub;
}

void execute_run_command(const RunCommand& command) {
  const api::Mode mode = api::parse_mode(command.mode);
  api::ExecutionOptions execution = execution_options(command.execution);  // configuration errors first
  runtime::StepProfile profile;
  if (!command.profile.empty()) {
    if (mode == api::Mode::reference) fail_user("--profile needs --mode fused or unfused (the reference interpreter has no steps)");
    execution.profile = &profile;
  }
  std::map<std::string, std::string> input_files;
  const std::map<std::string, Tensor> given = read_given_inputs(command.inputs, input_files);
  const runtime::BindOptions bind{.fill_missing_randomly = true, .seed = command.seed};
  api::RunResult result;
  std::optional<runtime::BoundInputs> inputs;
  if (api::is_model_package(command.model)) {
    if (mode == api::Mode::reference || !command.profile.empty()) {
      fail_user("a model package runs its compiled kernels: --mode reference and --profile need the ONNX model");
    }
    const api::LoadedPackage package = api::load_package(command.model, execution.threads);
    inputs = runtime::bind_inputs(package.executable->graph(), given, bind);
    result = api::run_package(package, *inputs);
  } else {
    const api::Model model = api::load_model(command.model);
    inputs = runtime::bind_inputs(model.graph, given, bind);
    result = api::run_model(model.graph, *inputs, mode, execution);
  }
  create_output_dir(command.output_dir);
  const std::vector<WrittenOutput> outputs = write_outputs(result.outputs, command.output_dir);
  if (!command.profile.empty()) api::write_chrome_trace(command.profile, profile);
  if (!command.superkernel_dot.empty()) {
    if (!result.superkernel) fail_user("--superkernel-dot needs an ONNX model run in fused or unfused mode");
    io::write_file_atomically(command.superkernel_dot, api::superkernel_to_dot(*result.superkernel));
  }
  if (command.json) {
    print_json(command, *inputs, input_files, outputs, result);
  } else {
    print_summary(command, *inputs, input_files, outputs, result);
  }
}

}  // namespace tilefuse::cli
