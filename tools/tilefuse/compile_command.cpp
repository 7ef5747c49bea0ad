#include "compile_command.h"

#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "api/model.h"
#include "api/model_packaging.h"
#include "input_flags.h"
#include "runtime/input_binding.h"

namespace tilefuse::cli {

CLI::App* add_compile_command(CLI::App& app, CompileCommand& command) {
  CLI::App* sub = app.add_subcommand(
      "compile", "Compile and tune a model into a package (model.tfx) that runs with only the runtime library");
  sub->add_option("MODEL", command.model, "ONNX model file")->required();
  sub->add_option("-o,--output", command.output, "The package directory to write, e.g. model.tfx")->required();
  add_input_option(sub, command.inputs);
  sub->add_option("--mode", command.mode, "fused or unfused")->capture_default_str();
  sub->add_option("--seed", command.seed, "Seed of the random tuning data for inputs not given")->capture_default_str();
  sub->add_option("--symbol-value", command.symbol_value,
                  "Size of a symbolic dim (e.g. batch N) that no given input fixes, for the tuning run")
      ->capture_default_str();
  add_execution_flags(sub, command.execution);
  sub->add_flag("--json", command.json, "Print the summary as one JSON object");
  sub->footer(
      "The model runs once on the inputs (given with --input, else seeded random data) so that every kernel with\n"
      "TopN candidates (--topn) is measured on them; the package keeps the winners. Symbolic dims stay symbolic:\n"
      "their kernels are the generic (jit) ones. Run it with `tilefuse run model.tfx` or\n"
      "tilefuse::Executable::load(\"model.tfx\").");
  return sub;
}

void execute_compile_command(const CompileCommand& command) {
  const api::Mode mode = api::parse_mode(command.mode);
  const api::ExecutionOptions execution = execution_options(command.execution);
  const api::Model model = api::load_model(command.model);
  std::map<std::string, std::string> files;
  const runtime::BoundInputs inputs = runtime::bind_inputs(model.graph, read_given_inputs(command.inputs, files),
                                                           {.fill_missing_randomly = true,
                                                            .seed = command.seed,
                                                            .unbound_symbol_value = command.symbol_value});
  const api::PackageBuild built = api::build_package(model.graph, inputs, mode, execution, command.output);
  if (command.json) {
    nlohmann::json j{{"model", command.model},       {"package", command.output},    {"mode", command.mode},
                     {"compile_ms", built.compile_ms}, {"tune_ms", built.tune_ms}, {"write_ms", built.write_ms},
                     {"counters", built.counters}};
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format(
      "wrote {}\n  compile {:.0f} ms ({} kernels compiled, {} from cache), tuning run {:.0f} ms ({} kernels "
      "measured), package {:.0f} ms\n",
      command.output, built.compile_ms, built.counters.at("compiles"), built.counters.at("cache_hits"), built.tune_ms,
      built.counters.at("kernels_tuned"), built.write_ms);
}

}  // namespace tilefuse::cli
