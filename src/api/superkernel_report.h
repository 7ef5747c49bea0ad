// The SuperKernel's schedule of a run (runtime::SuperKernelReport) for people: `run --json`'s
// "superkernel" object, and `run --superkernel-dot FILE`, a Graphviz drawing with one box per
// step (its name and how many workers run it) and an arrow from each step to every step that
// waits for it:
//   tilefuse run model.onnx --superkernel on --superkernel-dot schedule.dot && dot -Tsvg schedule.dot -o schedule.svg
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "runtime/step_runner.h"

namespace tilefuse::api {

nlohmann::json superkernel_to_json(const runtime::SuperKernelReport& report);
std::string superkernel_to_dot(const runtime::SuperKernelReport& report);
// One line: the choice, and for a region its steps and waits.
std::string superkernel_summary(const runtime::SuperKernelReport& report);

}  // namespace tilefuse::api
