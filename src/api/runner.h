// Running a model on bound inputs in one of the execution modes.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "api/input_binding.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace tilefuse::api {

enum class Mode {
  reference,  // the op-by-op reference interpreter
  fused,      // fused kernels (generated, compiled, cached)
  unfused,    // one generated kernel per op: the baseline fusion is measured against
};
inline constexpr Mode kAllModes[] = {Mode::reference, Mode::fused, Mode::unfused};

std::string_view mode_name(Mode mode);
// "reference, fused, unfused": for help texts and error messages.
std::string mode_choices();
// Throws UserError naming the text and the valid modes.
Mode parse_mode(std::string_view text);

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

struct RunResult {
  std::vector<NamedTensor> outputs;  // in the graph's output order
  double elapsed_ms = 0;             // execution only, not loading or binding
  // Events of the run by name (compiles, cache hits, ...); empty in reference mode.
  std::map<std::string, int64_t> counters;
};

// Throws UserError for a mode not implemented yet. Every output is checked against the type the
// graph declares for it (with the input symbols bound); a disagreement is an InternalError.
RunResult run_model(const Graph& graph, const BoundInputs& inputs, Mode mode);

}  // namespace tilefuse::api
