#include "property/reference_check.h"

#include <fmt/format.h>

#include "reference/interpreter.h"

namespace tilefuse::property {

Tolerance tolerance_for(const Graph& graph) {
  double bound = 0;
  for (const Value* v : graph.values()) {
    if (v->dtype == DType::f16) bound = std::max(bound, 0x1p-9);
    if (v->dtype == DType::bf16) bound = std::max(bound, 0x1p-6);
  }
  if (bound != 0) return {bound, bound};
  // A convolution's engines sum its window in other orders than the reference (Winograd's
  // transforms most of all), so graphs with one get 1e-4, as the convolution tests do; a
  // transposed one's sums are as long (33 maps x 49 taps summed to 2e-3 came out 3e-6 off).
  for (const Node* n : graph.nodes()) {
    if (n->op == "Conv" || n->op == "ConvTranspose") return {1e-4, 1e-5};
  }
  for (const Node* n : graph.nodes()) {
    if (n->op == "ReduceSum") return {1e-5, 1e-5};
  }
  return {1e-5, 1e-6};
}

std::string mismatches_against_reference(const Graph& graph, const std::vector<Inputs>& input_sets,
                                         const driver::ExecutorOptions& options,
                                         driver::ExecutorCounters& counters, std::optional<Tolerance> given) {
  driver::Executor executor(graph, options, counters);
  const Tolerance tolerance = given.value_or(tolerance_for(graph));
  std::string report;
  for (size_t set = 0; set < input_sets.size(); ++set) {
    std::vector<Tensor> expected = reference::run_graph(graph, input_sets[set]);
    std::vector<Tensor> actual = executor.run(input_sets[set]);
    if (actual.size() != expected.size()) {
      return fmt::format("{} outputs, the reference has {}\n", actual.size(), expected.size());
    }
    for (size_t i = 0; i < actual.size(); ++i) {
      CompareResult r = compare_tensors(actual[i], expected[i], tolerance);
      if (!r.ok) {
        report += fmt::format("output '{}' {} ({}, input set {}): {}\n", graph.outputs()[i]->name,
                              actual[i].summary(), options.fuse ? "fused" : "unfused", set, r.message);
      }
    }
  }
  return report;
}

}  // namespace tilefuse::property
