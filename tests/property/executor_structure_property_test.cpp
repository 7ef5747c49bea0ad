// Property: for random graphs of views, library (MatMul, Gemm) and host (Concat) steps between
// kernels, with several outputs of every kind the executor must wire specially (views of
// intermediates, values later steps also read, graph inputs, constants, repeats) and unused
// inputs, the fused and the unfused executor return exactly what the reference interpreter
// returns, on every output, run after run (structure_spec.h).
//
// Reproducing a failure: rapidcheck prints the seed and the minimal spec with its graph; rerun
//   RC_PARAMS="seed=<seed>" build/property_tests --gtest_filter='ExecutorStructure.*'
// `make property-explore` runs every property with random seeds and more cases.
//
// Budget: 1,000 graphs in `make test`, or as many as start within kBudget (CaseBudget). Their
// arithmetic is a few cheap ops on symbolic shapes, so kernels repeat and most come from the
// test's kernel cache.
#include <cstdlib>
#include <fstream>
#include <iostream>

#include <gtest/gtest.h>

#include "property/property_params.h"
#include "property/property_result.h"
#include "property/reference_check.h"
#include "property/structure_spec.h"
#include "property/temp_cache_dir.h"
#include "reference/interpreter.h"

namespace tilefuse::property {
namespace {

constexpr auto kBudget = std::chrono::seconds(150);

// Runs every input set twice through one executor into the same output tensors (the second run
// reuses the buffers of the first) and compares each output with the reference. Empty if all agree.
std::string mismatches(const Graph& graph, const std::vector<Inputs>& input_sets, bool fuse,
                       driver::ExecutorCounters& counters) {
  driver::Executor executor(graph, property_options(fuse), counters);
  std::string report;
  std::vector<Tensor> actual;
  for (size_t set = 0; set < input_sets.size(); ++set) {
    std::vector<Tensor> expected = reference::run_graph(graph, input_sets[set]);
    for (int repeat = 0; repeat < 2; ++repeat) {
      executor.run(input_sets[set], actual);
      if (actual.size() != expected.size()) return fmt::format("{} outputs, the reference has {}\n", actual.size(), expected.size());
      for (size_t i = 0; i < actual.size(); ++i) {
        CompareResult r = compare_tensors(actual[i], expected[i], tolerance_for(graph));
        if (!r.ok) {
          report += fmt::format("output {} '{}' {} ({}, input set {}, run {}): {}\n", i, graph.outputs()[i]->name,
                                actual[i].summary(), fuse ? "fused" : "unfused", set, repeat + 1, r.message);
        }
      }
    }
  }
  return report;
}

// A crash ends the process before rapidcheck can report: with TILEFUSE_PROPERTY_TRACE=<file>,
// each case is written there before it runs, so the file's last case is the one that crashed.
void trace_case(const StructureSpec& spec) {
  static const char* path = std::getenv("TILEFUSE_PROPERTY_TRACE");
  if (path == nullptr) return;
  std::ofstream out(path, std::ios::trunc);
  showValue(spec, out);
}

TEST(ExecutorStructure, FusedAndUnfusedMatchReferenceOnEveryOutput) {
  check_property("executor structure", 1000, kBudget, [](PropertyTally& tally) {
    StructureSpec spec = *structure_spec();
    std::vector<std::vector<int64_t>> more_dims;
    if (spec.symbolic) {
      more_dims.push_back(*rc::gen::container<std::vector<int64_t>>(spec.dims.size(), rc::gen::inRange<int64_t>(1, 10)));
    }
    if (tally.budget.exhausted()) return;
    trace_case(spec);
    BuiltGraph built = build_structure(spec);
    std::vector<Inputs> input_sets = {random_inputs(built, spec.data_seed)};
    for (const auto& dims : more_dims) {
      input_sets.push_back(random_inputs(build_structure(with_dims(spec, dims)), spec.data_seed + 1));
    }
    std::string report = mismatches(built.graph, input_sets, true, tally.counters);
    report += mismatches(built.graph, input_sets, false, tally.counters);
    ++tally.checked;
    // Printed as it happens (rapidcheck shows only the shrunk case), then failed.
    if (!report.empty()) std::cerr << "mismatch against the reference:\n" << report;
    RC_ASSERT(report.empty());
  });
}

}  // namespace
}  // namespace tilefuse::property
