// rapidcheck's parameters for one property: what RC_PARAMS says, and otherwise `cases` cases
// from a fixed seed, so that `make test` checks the same cases every run and a failure there can
// always be rerun. (The seed lives here rather than in ctest's ENVIRONMENT: a list-valued
// ENVIRONMENT through gtest_discover_tests lost every variable after the first.)
#pragma once

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>

#include <rapidcheck.h>

namespace tilefuse::property {

inline constexpr uint64_t kFixedSeed = 20261129;

// What RC_PARAMS says ("" when it is not set).
inline std::string rc_params() {
  const char* env = std::getenv("RC_PARAMS");
  return env != nullptr ? env : "";
}

// True when RC_PARAMS sets the number of cases (`make property-explore`): then every case runs.
inline bool cases_from_environment() { return rc_params().find("max_success") != std::string::npos; }

// A deadline for a property's cases in `make test`: a case that would start after it is skipped
// and counted, so a slow machine makes the test shorter, never a timeout (and CI stays short).
// Cases counted by RC_PARAMS have no deadline.
class CaseBudget {
 public:
  explicit CaseBudget(std::chrono::seconds budget)
      : deadline_(std::chrono::steady_clock::now() + budget), unlimited_(cases_from_environment()) {}

  // True (and the case is counted as skipped) once the deadline has passed.
  bool exhausted() {
    if (unlimited_ || std::chrono::steady_clock::now() < deadline_) return false;
    ++skipped_;
    return true;
  }
  int skipped() const { return skipped_; }

 private:
  std::chrono::steady_clock::time_point deadline_;
  bool unlimited_;
  int skipped_ = 0;
};

inline rc::detail::TestParams property_params(const char* name, int cases) {
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  const std::string given = rc_params();
  if (!cases_from_environment()) params.maxSuccess = cases;
  if (given.find("seed") == std::string::npos && given.find("reproduce") == std::string::npos) params.seed = kFixedSeed;
  std::cout << name << ": " << params.maxSuccess << " cases, seed " << params.seed << " (rerun: RC_PARAMS=\"seed="
            << params.seed << "\")" << std::endl;
  return params;
}

}  // namespace tilefuse::property
