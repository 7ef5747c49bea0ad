// How every property ends: its counts on one line (printed whether it passed or not, so a
// `make test` log shows how much was checked), then the test fails with rapidcheck's message
// (the seed and the shrunk case) unless it passed.
#pragma once

#include <iostream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "driver/executor.h"
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

}  // namespace tilefuse::property
