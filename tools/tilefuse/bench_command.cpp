#include "bench_command.h"

#include <iostream>

#include "api/bench.h"
#include "runtime/input_binding.h"
#include "api/model.h"
#include "api/precision_accuracy.h"
#include "api/profile_report.h"
#include "input_flags.h"
#include "ir/error.h"

namespace tilefuse::cli {

CLI::App* add_bench_command(CLI::App& app, BenchCommand& command) {
  CLI::App* sub = app.add_subcommand("bench", "Measure a model's latency and bandwidth per execution mode");
  sub->add_option("MODEL", command.model, "ONNX model file")->required();
  sub->add_option("--modes", command.modes, "Comma-separated execution modes: " + api::mode_choices())
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--iters", command.iterations, "Timed runs per mode")->capture_default_str();
  sub->add_option("--warmup", command.warmup, "Untimed runs per mode before timing; unless 0, they go on for at least 20 ms (a new thread team's workers may share a CPU that long)")->capture_default_str();
  sub->add_option("--seed", command.seed, "Seed of the random data for inputs not given")->capture_default_str();
  add_input_option(sub, command.inputs);
  add_execution_flags(sub, command.execution);
  sub->add_option("--stream-mib", command.stream_mib,
                  "MiB per array of the bandwidth probes (triad uses three); keep it well above the last-level cache")
      ->capture_default_str();
  sub->add_option("--profile", command.profile, "Write a Chrome trace of the fused mode's timed runs");
  sub->add_flag("--per-step", command.per_step,
                "Also print the fused mode's steps sorted by time, with their share, GB/s and GFLOP/s");
  sub->add_flag("--json", command.json, "Print the results as one JSON object");
  sub->add_flag("--accuracy", command.accuracy,
                "With --precision bf16: also run the model in f32 and in bf16 on --samples seeded inputs and report "
                "each output's worst relative error and, for classifiers, top-1 agreement");
  sub->add_option("--samples", command.samples, "Seeded inputs for --accuracy")->capture_default_str();
  sub->footer(
      "Inputs not given with --input are seeded random data; compiling is not timed. bytes = compulsory traffic of the mode's plan\n"
      "(inputs read once, outputs written once per kernel; reference counts the unfused plan), GB/s = bytes /\n"
      "median, x STREAM = GB/s / STREAM triad. Machines are noisy: compare medians of repeated runs.");
  return sub;
}

void execute_bench_command(const BenchCommand& command) {
  if (command.stream_mib < 1) fail_user("--stream-mib must be a positive integer, got {}", command.stream_mib);
  api::BenchOptions options;
  options.modes.clear();
  for (const std::string& mode : command.modes) options.modes.push_back(api::parse_mode(mode));
  options.iterations = command.iterations;
  options.warmup = command.warmup;
  options.execution = execution_options(command.execution);
  options.stream.array_bytes = static_cast<size_t>(command.stream_mib) << 20;
  const api::Model model = api::load_model(command.model);
  std::map<std::string, std::string> files;
  const std::map<std::string, Tensor> given = read_given_inputs(command.inputs, files);
  const runtime::BoundInputs inputs =
      runtime::bind_inputs(model.graph, given, {.fill_missing_randomly = true, .seed = command.seed});
  runtime::StepProfile profile;
  const bool profiling = !command.profile.empty() || command.per_step;
  if (profiling) options.execution.profile = &profile;
  std::optional<api::AccuracyReport> accuracy;  // first: a configuration error comes before any timing
  if (command.accuracy) {
    accuracy = api::measure_accuracy(model.graph, given, command.seed, command.samples, options.execution);
  }
  const api::BenchReport report = api::bench_model(model.graph, inputs, command.model, options);
  if (!command.profile.empty()) api::write_chrome_trace(command.profile, profile);
  const std::vector<api::StepSummary> steps = profiling ? api::summarize_steps(profile) : std::vector<api::StepSummary>{};
  if (command.json) {
    nlohmann::json json = api::bench_to_json(report);
    if (command.per_step) json["per_step"] = api::per_step_json(steps);
    if (accuracy) json["accuracy"] = api::accuracy_to_json(*accuracy);
    std::cout << json.dump(2) << "\n";
    return;
  }
  std::cout << api::bench_to_table(report);
  if (accuracy) std::cout << api::accuracy_to_table(*accuracy);
  if (command.per_step) std::cout << "\nfused steps, slowest first (per run):\n" << api::per_step_table(steps);
}

}  // namespace tilefuse::cli
