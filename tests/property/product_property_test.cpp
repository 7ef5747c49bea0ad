// Property: for random products (MatMul with every batch arrangement, Gemm with every flag,
// attention as exported) with transposed operands, constant or input weights, epilogues and
// Splits the fused mode folds into the GEMM, at sizes around the SIMD widths and past the
// engine's cache blocks (product_spec.h), the fused executor (through the SuperKernel's region)
// and the unfused one compute what the reference interpreter computes, within a bound that
// grows with the products' depth (product_tolerance). A symbolic dim runs at two sizes through
// one executor.
//
// Reproducing a failure: rerun with RC_PARAMS="seed=<seed>" build/property_tests
// --gtest_filter='Products.*'; `make property-explore` runs it with random seeds.
//
// Budget: 200 graphs in `make test`, or as many as start within kBudget. Products run on the
// runtime's GEMM engine; kernels are compiled only for epilogues that stay kernels.
#include <iostream>

#include <gtest/gtest.h>

#include "property/product_spec.h"
#include "property/property_params.h"
#include "property/property_result.h"
#include "property/reference_check.h"
#include "property/temp_cache_dir.h"

namespace tilefuse::property {
namespace {

constexpr auto kBudget = std::chrono::seconds(60);

TEST(Products, FusedAndUnfusedMatchReference) {
  check_property("products", 200, kBudget, [](PropertyTally& tally) {
    const ProductSpec spec = *product_spec();
    if (tally.budget.exhausted()) return;
    const int64_t size = drawn_size(spec);
    BuiltGraph built = build_product(spec, size);
    std::vector<Inputs> input_sets = {random_inputs(built, spec.data_seed)};
    if (spec.symbolic && spec.other_size != size) {
      input_sets.push_back(random_inputs(build_product(spec, spec.other_size), spec.data_seed + 1));
    }
    std::string report;
    for (bool fuse : {true, false}) {
      report += mismatches_against_reference(built.graph, input_sets, property_options(fuse), tally.counters,
                                             product_tolerance(spec));
    }
    ++tally.checked;
    if (!report.empty()) std::cerr << "mismatch against the reference:\n" << report;
    RC_ASSERT(report.empty());
  });
}

}  // namespace
}  // namespace tilefuse::property
