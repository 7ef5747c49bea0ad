// The per-step summary of a profile: spans from a step's first worker start to its last worker
// end, their mean, median and minimum over the runs, shares, rates and order.
#include "api/profile_report.h"

#include <gtest/gtest.h>

namespace tilefuse::api {
namespace {

using Clock = runtime::StepProfile::Clock;

// Records `step` on `worker` from `start_ms` to `end_ms` after `base`.
void record(runtime::StepProfile& p, Clock::time_point base, int64_t step, int worker, double start_ms, double end_ms) {
  auto at = [&](double ms) { return base + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(ms)); };
  p.record(step, worker, at(start_ms), at(end_ms));
}

TEST(ProfileReport, StepsHaveMeanMedianAndFastestRunAndRatesAtTheMedian) {
  runtime::StepProfile profile;
  profile.steps = {{"gemm", "library", "MatMul", 4'000'000, 2e9, {"/layer1/MatMul"}},
                   {"add", "kernel", "Add", 1'000'000, 0, {"/layer1/Add", "/layer2/Add"}}};
  const Clock::time_point base = Clock::now();
  // Step 0 takes 1, 2 and 9 ms in three runs (one noisy), two workers each: the span runs from
  // the first start to the last end. Step 1 takes 1 ms each time.
  const double spans[3] = {1, 2, 9};
  for (int run = 0; run < 3; ++run) {
    profile.begin_run();
    const double t = 100.0 * run;
    record(profile, base, 0, 0, t, t + spans[run] - 0.5);
    record(profile, base, 0, 1, t + 0.25, t + spans[run]);
    record(profile, base, 1, 0, t + 20, t + 21);
  }
  const std::vector<StepSummary> steps = summarize_steps(profile);
  ASSERT_EQ(steps.size(), 2u);
  const StepSummary& gemm = steps[0];
  EXPECT_EQ(gemm.name, "gemm") << "slowest first";
  EXPECT_NEAR(gemm.mean_ms, 4.0, 1e-3);
  EXPECT_NEAR(gemm.median_ms, 2.0, 1e-3);
  EXPECT_NEAR(gemm.min_ms, 1.0, 1e-3);
  EXPECT_NEAR(gemm.gflops, 1000.0, 0.5) << "2 GFLOP in the median run's 2 ms";
  EXPECT_NEAR(gemm.gbps, 2.0, 1e-2);
  EXPECT_NEAR(gemm.share, 0.8, 1e-3) << "4 of the 5 ms the steps take on average";
  EXPECT_NEAR(steps[1].median_ms, 1.0, 1e-3);
  EXPECT_NEAR(steps[1].share, 0.2, 1e-3);

  const nlohmann::json json = per_step_json(steps);
  EXPECT_NEAR(json[0]["median_ms"].get<double>(), 2.0, 1e-3);
  EXPECT_NEAR(json[0]["min_ms"].get<double>(), 1.0, 1e-3);
  EXPECT_EQ(json[1]["nodes"], nlohmann::json({"/layer1/Add", "/layer2/Add"})) << "the nodes a step computes, by name";
  EXPECT_NE(per_step_table(steps).find("median ms"), std::string::npos);
}

}  // namespace
}  // namespace tilefuse::api
