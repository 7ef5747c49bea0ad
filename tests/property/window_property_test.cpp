// Property: for random convolutions, transposed convolutions and pools with any legal attributes,
// and what fused mode folds around a convolution (window_spec.h), the fused executor (through
// the SuperKernel's region) and the unfused one compute what the reference interpreter computes
// (reference_check.h: 1e-4 for graphs with a convolution, whose engines sum in other orders). A
// symbolic batch runs with both batch sizes through one executor.
//
// Reproducing a failure: rerun with RC_PARAMS="seed=<seed>" build/property_tests
// --gtest_filter='SlidingWindows.*'; `make property-explore` runs it with random seeds.
//
// Budget: 300 graphs in `make test`, or as many as start within kBudget. Convolutions run on
// the runtime's engines, not generated kernels, so most cases compile nothing; epilogues that
// stay kernels (SiLU written out after a pool, say) repeat across cases.
#include <iostream>

#include <gtest/gtest.h>

#include "property/property_params.h"
#include "property/property_result.h"
#include "property/reference_check.h"
#include "property/temp_cache_dir.h"
#include "property/window_spec.h"

namespace tilefuse::property {
namespace {

constexpr auto kBudget = std::chrono::seconds(60);

TEST(SlidingWindows, FusedAndUnfusedMatchReference) {
  check_property("window ops", 300, kBudget, [](PropertyTally& tally) {
    const WindowSpec spec = *window_spec();
    if (tally.budget.exhausted()) return;
    BuiltGraph built = build_window(spec, spec.image[0]);
    std::vector<Inputs> input_sets = {random_inputs(built, spec.data_seed)};
    if (spec.symbolic_batch) {
      input_sets.push_back(random_inputs(build_window(spec, 3 - spec.image[0]), spec.data_seed + 1));
    }
    std::string report;
    for (bool fuse : {true, false}) {
      report += mismatches_against_reference(built.graph, input_sets, property_options(fuse), tally.counters);
    }
    ++tally.checked;
    if (!report.empty()) std::cerr << "mismatch against the reference:\n" << report;
    RC_ASSERT(report.empty());
  });
}

}  // namespace
}  // namespace tilefuse::property
