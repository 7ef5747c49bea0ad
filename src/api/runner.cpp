#include "api/runner.h"

#include <chrono>

#include "ir/error.h"
#include "reference/interpreter.h"

namespace tilefuse::api {
namespace {

// An output the executor produced must have the type the graph promised: anything else means a
// shape-inference or executor bug, and silently writing such a tensor would hide it.
void check_output_type(const Value& declared, const Tensor& actual, const SymbolBindings& symbols) {
  auto fail = [&](const std::string& detail) {
    fail_internal("output '{}': the graph declares {}, the run produced {} ({})", declared.name,
                  declared.type_string(), actual.summary(), detail);
  };
  if (actual.dtype() != declared.dtype) fail("dtype differs");
  if (actual.rank() != declared.rank()) fail("rank differs");
  for (size_t i = 0; i < declared.shape.size(); ++i) {
    // Dims with symbols no input fixes (sizes only known after running, e.g. from data) are
    // not checkable here.
    Dim dim = declared.shape[i].substitute(symbols);
    if (dim.is_const() && dim.value() != actual.shape()[i]) fail(fmt::format("dim {} should be {}", i, dim.value()));
  }
}

}  // namespace

std::string_view mode_name(Mode mode) {
  switch (mode) {
    case Mode::reference: return "reference";
    case Mode::fused: return "fused";
    case Mode::unfused: return "unfused";
  }
  fail_internal("mode_name: bad mode");
}

std::string mode_choices() {
  std::string out;
  for (Mode mode : kAllModes) out += (out.empty() ? "" : ", ") + std::string(mode_name(mode));
  return out;
}

Mode parse_mode(std::string_view text) {
  for (Mode mode : kAllModes) {
    if (mode_name(mode) == text) return mode;
  }
  fail_user("unknown mode '{}' (valid: {})", text, mode_choices());
}

RunResult run_model(const Graph& graph, const BoundInputs& inputs, Mode mode) {
  if (mode != Mode::reference) fail_user("mode '{}' is not implemented yet (use --mode reference)", mode_name(mode));
  const auto start = std::chrono::steady_clock::now();
  std::vector<Tensor> tensors = reference::run_graph(graph, inputs.by_name());
  RunResult result;
  result.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const auto& outputs = graph.outputs();
  if (tensors.size() != outputs.size()) {
    fail_internal("the run produced {} outputs, the graph has {}", tensors.size(), outputs.size());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    check_output_type(*outputs[i], tensors[i], inputs.symbols);
    result.outputs.push_back({outputs[i]->name, std::move(tensors[i])});
  }
  return result;
}

}  // namespace tilefuse::api
