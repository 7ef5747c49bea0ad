// `tilefuse inspect MODEL`: nodes by op type, every tensor's type and bytes, the fusion plan as
// `tilefuse run` executes it with launches and compulsory bytes fused vs unfused, optionally a
// Graphviz file of the plan.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace tilefuse::cli {

struct InspectCommand {
  std::string model;
  bool json = false;
  std::string dot_file;  // empty: no Graphviz output
};

CLI::App* add_inspect_command(CLI::App& app, InspectCommand& command);
void execute_inspect_command(const InspectCommand& command);

}  // namespace tilefuse::cli
