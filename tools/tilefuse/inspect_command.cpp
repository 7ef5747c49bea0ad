#include "inspect_command.h"

#include <iostream>

#include "api/dot_writer.h"
#include "api/inspect.h"
#include "api/model.h"
#include "api/model_packaging.h"
#include "api/package_report.h"
#include "ir/error.h"
#include "fusion/execution_plan.h"
#include "io/atomic_file.h"

namespace tilefuse::cli {

CLI::App* add_inspect_command(CLI::App& app, InspectCommand& command) {
  CLI::App* sub = app.add_subcommand(
      "inspect", "Show a model's ops, tensor types and sizes in bytes, and its fusion plan (launches and compulsory "
                 "bytes, fused vs unfused)");
  sub->add_option("MODEL", command.model, "ONNX model file, or a model package (model.tfx): its manifest and checksums")
      ->required();
  sub->add_flag("--json", command.json, "Print the report as one JSON object");
  sub->add_option("--dot", command.dot_file,
                  "Also write the planned graph as a Graphviz file, ops coloured by fused kernel (render: dot -Tsvg "
                  "FILE)");
  sub->footer(
      "Symbolic dims are shown by name (N), and sizes of tensors with symbolic dims as expressions (512*N).\n"
      "Compulsory bytes: every step reads its inputs once and writes its outputs once. The plan is the one\n"
      "`tilefuse run` executes: composite ops (Softmax, LayerNormalization) are decomposed first.");
  return sub;
}

void execute_inspect_command(const InspectCommand& command) {
  if (api::is_model_package(command.model)) {
    if (!command.dot_file.empty()) fail_user("--dot needs the ONNX model; a package's plan is listed by inspect itself");
    const nlohmann::json report = api::package_report(command.model);
    std::cout << (command.json ? report.dump(2) + "\n" : api::package_report_to_text(report));
    return;
  }
  const api::Model model = api::load_model(command.model);
  const api::InspectReport report = api::inspect_graph(model.graph);
  if (command.json) {
    std::cout << api::report_to_json(report).dump(2) << "\n";
  } else {
    std::cout << "model " << command.model << "\n" << api::report_to_table(report);
  }
  if (!command.dot_file.empty()) {
    io::write_file_atomically(command.dot_file, api::plan_to_dot(fusion::plan_for_execution(model.graph, true)));
    // On stderr with --json, so that stdout stays one parsable object.
    (command.json ? std::cerr : std::cout) << "wrote " << command.dot_file << "\n";
  }
}

}  // namespace tilefuse::cli
