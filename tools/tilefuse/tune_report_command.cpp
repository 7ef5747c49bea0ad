#include "tune_report_command.h"

#include <iostream>

#include "input_flags.h"

#include "runtime/input_binding.h"
#include "api/model.h"
#include "api/tune_report.h"
#include "tune/autotune_config.h"

namespace tilefuse::cli {

CLI::App* add_tune_report_command(CLI::App& app, TuneReportCommand& command) {
  CLI::App* sub = app.add_subcommand("tune-report", "Measure every static kernel's tiling candidates against the cost model");
  sub->add_option("MODEL", command.model, "ONNX model file")->required();
  sub->add_option("--topn", command.topn, "Candidates per kernel (2-10); default TILEFUSE_AUTOTUNE_TOPN if > 1, else 10");
  sub->add_flag("--exhaustive", command.exhaustive, "Measure the whole tiling space of every kernel (slow: compiles it all)");
  sub->add_option("--threads", command.threads, "Worker threads (device limit); default TILEFUSE_NUM_THREADS or all cores");
  sub->add_option("--compile-threads", command.compile_threads, "Parallel kernel compiles; default TILEFUSE_COMPILE_THREADS");
  sub->add_option("--seed", command.seed, "Seed of the random data for inputs not given")->capture_default_str();
  add_input_option(sub, command.inputs);
  sub->add_flag("--json", command.json, "Print the report as one JSON object");
  sub->footer(
      "Kernels are compiled into a scratch cache that is removed afterwards, so the report always measures.\n"
      "first_choice_slowdown = time of the model's first choice / measured best - 1.");
  return sub;
}

void execute_tune_report_command(const TuneReportCommand& command) {
  std::optional<int> topn = command.topn;
  if (const int configured = tune::resolve_autotune_topn(); !topn && configured > 1) topn = configured;
  const api::Model model = api::load_model(command.model);
  std::map<std::string, std::string> files;
  const runtime::BoundInputs inputs = runtime::bind_inputs(model.graph, read_given_inputs(command.inputs, files), {.fill_missing_randomly = true, .seed = command.seed});
  api::TuneReportOptions options;
  options.execution = {.threads = command.threads, .compile_threads = command.compile_threads, .autotune_topn = topn};
  options.exhaustive = command.exhaustive;
  const api::TuneReport report = api::tune_report(model.graph, inputs, command.model, options);
  if (command.json) {
    std::cout << api::tune_report_to_json(report).dump(2) << "\n";
  } else {
    std::cout << api::tune_report_to_table(report);
  }
}

}  // namespace tilefuse::cli
