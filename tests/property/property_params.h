// rapidcheck's parameters for one property: what RC_PARAMS says, and otherwise `cases` cases
// from a fixed seed, so that `make test` checks the same cases every run and a failure there can
// always be rerun. (The seed lives here rather than in ctest's ENVIRONMENT: a list-valued
// ENVIRONMENT through gtest_discover_tests lost every variable after the first.)
#pragma once

#include <cstdlib>
#include <iostream>
#include <string>

#include <rapidcheck.h>

namespace tilefuse::property {

inline constexpr uint64_t kFixedSeed = 20261129;

inline rc::detail::TestParams property_params(const char* name, int cases) {
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  const char* env = std::getenv("RC_PARAMS");
  const std::string given = env != nullptr ? env : "";
  if (given.find("max_success") == std::string::npos) params.maxSuccess = cases;
  if (given.find("seed") == std::string::npos && given.find("reproduce") == std::string::npos) params.seed = kFixedSeed;
  std::cout << name << ": " << params.maxSuccess << " cases, seed " << params.seed << " (rerun: RC_PARAMS=\"seed="
            << params.seed << "\")" << std::endl;
  return params;
}

}  // namespace tilefuse::property
