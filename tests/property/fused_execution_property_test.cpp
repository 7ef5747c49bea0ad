// Property: for random graphs of elementwise, broadcast, reduce, transpose, composite ops, views
// and index maps (graph_spec.h, graph_builder.h) on random small shapes, the generated kernels
// compute what the reference interpreter computes (reference_check.h states the tolerance), and
// shapes outside a graph's domain (outside_domain) are refused by name, never a crash.
//
// Reproducing a failure: rapidcheck prints the seed, the minimal spec and its graph; rerun with
//   RC_PARAMS="seed=<seed>" build/property_tests --gtest_filter='FusedExecution.*'
// (RC_PARAMS="max_success=N" changes the number of cases; "verbose_progress=1" shows them.)
//
// Budget (the suite must stay within minutes on 2 cores): kernel compiles dominate, so each
// test binary shares one kernel cache over all its cases, and most cases use symbolic shapes,
// whose kernels do not depend on the dims, so equal op structures compile once; the first
// cases are small (one or two ops), so their kernels repeat most; and each symbolic graph runs
// on three sets of dims with one executor (one compile). The unfused mode, covered op by op by
// the e2e and conformance suites, is checked on one symbolic graph in eight. A case that would
// start past the property's time budget is skipped and counted (CaseBudget).
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include "property/graph_builder.h"
#include "ir/log.h"
#include "property/property_params.h"
#include "property/property_result.h"
#include "property/reference_check.h"
#include "property/temp_cache_dir.h"
#include "reference/interpreter.h"

namespace tilefuse::property {
namespace {

struct Totals {
  driver::ExecutorCounters counters;
  int cases = 0;
  int refused = 0;  // (graph, shape) pairs outside the graph's domain (refusal_report)
};

Totals& totals() {
  static Totals t;
  return t;
}

// Input shapes outside a graph's domain: against the assumptions its symbolic shapes were
// inferred under (a slice's bounds inside its axis), which the executor must refuse by name; or
// refused by the reference interpreter, as PyTorch and ONNX Runtime refuse them (a Reshape's -1
// on an empty tensor), where a plan that settled the shape ahead may also run them.
struct Outside {
  Inputs inputs;
  bool assumed_away = false;  // against the graph's assumptions
};

std::optional<Outside> outside_domain(const Graph& graph, const BuiltGraph& with_dims, Inputs inputs) {
  if (!within_assumptions(graph, with_dims.bindings)) return Outside{std::move(inputs), true};
  try {
    reference::run_graph(graph, inputs);
    return std::nullopt;
  } catch (const UserError&) {
    return Outside{std::move(inputs), false};
  }
}

// Shapes outside the domain are refused by name (a UserError) or, where allowed, run; never a
// crash or another error.
std::string refusal_report(const Graph& graph, const std::vector<Outside>& outside) {
  if (outside.empty()) return "";
  std::optional<driver::Executor> executor;
  try {
    executor.emplace(graph, property_options(true), totals().counters);
  } catch (const UserError&) {
    return "";  // the graph itself refused by name when planned (an index into an axis it makes empty)
  }
  std::string report;
  for (const Outside& o : outside) {
    try {
      executor->run(o.inputs);
      if (o.assumed_away) report += "the fused executor ran input shapes against the graph's assumptions\n";
    } catch (const UserError&) {
    }
  }
  return report;
}

// Runs the spec's graph on its own dims and on each of `more_dims` (same rank: symbolic graphs
// only), fused, and unfused too if asked.
void check_case(const GraphSpec& spec, const std::vector<std::vector<int64_t>>& more_dims, bool also_unfused) {
  BuiltGraph built = build_graph(spec);
  std::vector<Inputs> input_sets;
  std::vector<Outside> outside;
  for (size_t k = 0; k <= more_dims.size(); ++k) {
    GraphSpec rebound = spec;
    if (k > 0) rebound.dims = more_dims[k - 1];
    BuiltGraph with_dims = build_graph(rebound);
    Inputs inputs = random_inputs(with_dims, spec.data_seed + k);
    if (std::optional<Outside> o = outside_domain(built.graph, with_dims, inputs)) {
      outside.push_back(std::move(*o));
    } else {
      input_sets.push_back(std::move(inputs));
    }
  }
  std::string report = refusal_report(built.graph, outside);
  if (!input_sets.empty()) {
    report += mismatches_against_reference(built.graph, input_sets, property_options(true), totals().counters);
    if (also_unfused) report += mismatches_against_reference(built.graph, input_sets, property_options(false), totals().counters);
  }
  totals().cases += static_cast<int>(input_sets.size());
  totals().refused += static_cast<int>(outside.size());
  if (!report.empty()) RC_FAIL(report);
}

// Runs `property` for `cases` cases unless RC_PARAMS sets max_success (those that start within
// `budget`), and always says which seed it used, so a failure (or a timeout) can be rerun exactly.
// (property_result.h's check_property counts graphs; these properties count (graph, shape, data)
// cases and the shapes refused as outside a graph's domain.)
template <typename Property>
void check_cases_property(const char* name, int cases, std::chrono::seconds budget, Property property) {
  logger().set_level(spdlog::level::warn);  // one "kernels ready" line per case would bury a failure
  const rc::detail::TestParams params = property_params(name, cases);
  const auto& c = totals().counters.cache;
  const int cases_before = totals().cases, refused_before = totals().refused;
  const int64_t compiles_before = c.compiles, hits_before = c.cache_hits;
  rc::detail::TestMetadata metadata;
  metadata.id = name;
  CaseBudget deadline(budget);
  rc::detail::TestResult result = rc::detail::checkTestable(
      [&] {
        if (!deadline.exhausted()) property();
      },
      metadata, params);
  std::ostringstream counts;
  counts << name << ": " << totals().cases - cases_before << " (graph, shape, data) cases run, "
         << c.compiles - compiles_before << " kernels compiled, " << c.cache_hits - hits_before << " from the cache, "
         << deadline.skipped() << " skipped past the time budget, " << totals().refused - refused_before
         << " shapes outside the graphs' domain";
  expect_passed(result, counts.str());
}

// Each graph runs on three sets of dims: 170 graphs, 510 (graph, shape, data) cases.
TEST(FusedExecution, MatchesReferenceWithSymbolicShapes) {
  check_cases_property("symbolic shapes", 170, std::chrono::seconds(75), [] {
    GraphSpec spec = *graph_spec(true);
    // The graph's dims rebound, now and then to 0 (an empty batch or sequence).
    const auto rebound = rc::gen::weightedOneOf<int64_t>({{1, rc::gen::just<int64_t>(0)}, {9, dim_gen()}});
    auto more_dims = *rc::gen::container<std::vector<std::vector<int64_t>>>(
        2, rc::gen::container<std::vector<int64_t>>(spec.dims.size(), rebound));
    check_case(spec, more_dims, spec.data_seed % 8 == 0);
  });
}

TEST(FusedExecution, MatchesReferenceWithStaticShapes) {
  check_cases_property("static shapes", 100, std::chrono::seconds(45), [] { check_case(*graph_spec(false), {}, false); });
}

// Shapes big enough for the paths small ones never take: column tiles (a jit kernel's are 8192
// floats), rows split across workers, reductions of 2^18 elements and more split into slabs and
// combined (passes/reduction_splitting.h). One long dim (8191 to 300000 elements), the others
// 1-3, at a rank of 1-3. Few cases: each has up to a million elements through the reference.
rc::Gen<std::vector<int64_t>> large_dims() {
  return rc::gen::mapcat(rc::gen::inRange<size_t>(1, 4), [](size_t rank) {
    return rc::gen::apply(
        [rank](int64_t long_dim, size_t at, std::vector<int64_t> small) {
          small.resize(rank);
          small[at % rank] = long_dim;
          return small;
        },
        rc::gen::element<int64_t>(8191, 8193, 12289, 40000, 70001, 300000), rc::gen::inRange<size_t>(0, 3),
        rc::gen::container<std::vector<int64_t>>(3, rc::gen::inRange<int64_t>(1, 4)));
  });
}

// A spec on large dims (drawn as one value, so that a counterexample shows the graph it built).
rc::Gen<GraphSpec> large_graph_spec() {
  return rc::gen::mapcat(rc::gen::arbitrary<bool>(), [](bool symbolic) {
    return rc::gen::apply(
        [](GraphSpec spec, std::vector<int64_t> dims) {
          spec.dims = std::move(dims);
          return spec;
        },
        graph_spec(symbolic), large_dims());
  });
}

TEST(FusedExecution, MatchesReferenceWithLargeShapes) {
  check_cases_property("large shapes", 24, std::chrono::seconds(40), [] {
    const GraphSpec spec = *large_graph_spec();
    std::vector<std::vector<int64_t>> more_dims;
    if (spec.symbolic) more_dims.push_back(*rc::gen::container<std::vector<int64_t>>(spec.dims.size(), dim_gen()));
    check_case(spec, more_dims, false);
  });
}

}  // namespace
}  // namespace tilefuse::property
