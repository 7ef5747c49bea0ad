// How every property ends: its counts on one line (printed whether it passed or not, so a
// `make test` log shows how much was checked), then the test fails with rapidcheck's message
// (the seed and the shrunk case) unless it passed; and check_property, which runs one.
#pragma once

#include <iostream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <spdlog/spdlog.h>

#include "driver/executor.h"
#include "ir/log.h"
#include "property/property_params.h"

namespace tilefuse::property {

inline void expect_passed(const rc::detail::TestResult& result, const std::string& counts) {
  std::ostringstream message;
  rc::detail::printResultMessage(result, message);
  std::cout << counts << std::endl;
  EXPECT_TRUE(result.template is<rc::detail::SuccessResult>()) << message.str();
}

// "<name>: N graphs checked fused and unfused, S skipped past the time budget, K kernels
// compiled, H from the cache".
inline std::string graphs_checked(const std::string& name, int checked, const CaseBudget& budget,
                                  const driver::ExecutorCounters& counters) {
  std::ostringstream out;
  out << name << ": " << checked << " graphs checked fused and unfused, " << budget.skipped()
      << " skipped past the time budget, " << counters.cache.compiles << " kernels compiled, "
      << counters.cache.cache_hits << " from the cache";
  return out.str();
}

// What a property's cases count as they run.
struct PropertyTally {
  driver::ExecutorCounters counters;
  CaseBudget budget;
  int checked = 0;  // graphs compared with the reference
};

// Checks property `name`: `cases` cases from the fixed seed, those that start within `budget`
// (property_params.h), or as RC_PARAMS says; then prints the counts and fails the test with
// rapidcheck's message unless every case passed. `check_case(tally)` draws its case with
// rapidcheck, returns at once when tally.budget.exhausted(), counts what it compared and asserts
// with RC_ASSERT.
template <typename CheckCase>
void check_property(const char* name, int cases, std::chrono::seconds budget, CheckCase&& check_case) {
  logger().set_level(spdlog::level::warn);
  const rc::detail::TestParams params = property_params(name, cases);
  PropertyTally tally{.budget = CaseBudget(budget)};
  rc::detail::TestMetadata metadata;
  metadata.id = name;
  const rc::detail::TestResult result = rc::detail::checkTestable([&] { check_case(tally); }, metadata, params);
  expect_passed(result, graphs_checked(name, tally.checked, tally.budget, tally.counters));
}

}  // namespace tilefuse::property
