// The meter of how long a team's threads waited for a CPU, and the rule that decides whether a
// measurement is recorded: two workers kept on one CPU wait for it, and what they measure is not
// trusted unless TILEFUSE_RECORD_BUSY_MEASUREMENTS=1 says to record anyway.
#include "runtime/cpu_wait.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "support/scoped_cpu.h"

namespace tilefuse::runtime {
namespace {

using testing_support::OneCpuScope;
using testing_support::ScopedEnv;

bool kernel_reports_run_delay() {
  return std::filesystem::exists("/proc/self/task/" + std::to_string(::gettid()) + "/schedstat");
}

// Every worker busy for `us` microseconds, `jobs` times.
void busy_jobs(ThreadTeam& team, int jobs, int us) {
  for (int j = 0; j < jobs; ++j) {
    team.run(team.size(), [us](int, int64_t, int64_t) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
      while (std::chrono::steady_clock::now() < until) {
      }
    });
  }
}

TEST(CpuWait, TwoWorkersOnOneCpuWaitForItAndWhatTheyMeasureIsNotTrusted) {
  if (!kernel_reports_run_delay()) GTEST_SKIP() << "this kernel keeps no scheduler statistics";
  const OneCpuScope one_cpu;
  ThreadTeam team(2);  // its helper inherits the one CPU
  const CpuWaitMeter meter(team);
  busy_jobs(team, 100, 300);
  const double share = meter.waiting_share();
  EXPECT_GT(share, kTrustedCpuWaitingShare) << "each worker waits while the other has the CPU";
  EXPECT_LE(share, 1.0);
  const ScopedEnv strict("TILEFUSE_RECORD_BUSY_MEASUREMENTS", std::nullopt);
  EXPECT_FALSE(trusted_measurement(share));
  EXPECT_FALSE(may_record(share, "the test's measurement"));
}

TEST(CpuWait, TheThresholdDecidesUnlessTheEnvironmentSaysToRecordAnyway) {
  {
    const ScopedEnv strict("TILEFUSE_RECORD_BUSY_MEASUREMENTS", std::nullopt);
    EXPECT_TRUE(trusted_measurement(0));
    EXPECT_TRUE(may_record(kTrustedCpuWaitingShare, "a measurement at the threshold"));
    EXPECT_FALSE(trusted_measurement(kTrustedCpuWaitingShare + 0.01));
  }
  const ScopedEnv any("TILEFUSE_RECORD_BUSY_MEASUREMENTS", "1");
  EXPECT_TRUE(trusted_measurement(0.9));
  EXPECT_TRUE(may_record(0.9, "a measurement the environment records anyway"));
}

TEST(CpuWait, ATeamOfOneThreadCountsTheCallerAlone) {
  ThreadTeam team(1);
  const CpuWaitMeter meter(team);
  busy_jobs(team, 10, 100);
  const double share = meter.waiting_share();
  EXPECT_GE(share, 0.0);
  EXPECT_LE(share, 1.0);
}

TEST(CpuWait, AHandoffIsTheMedianOfEmptyJobsOnEveryWorker) {
  ThreadTeam one(1);
  EXPECT_EQ(handoff_us(one), 0.0) << "a team of one hands nothing off";
  ThreadTeam two(2);
  const double us = handoff_us(two, 51);
  EXPECT_GT(us, 0.0);
  EXPECT_LT(us, 1e6);
}

TEST(CpuWait, AMeasurementWithSlowHandoffsIsNotRecordedUnlessTheEnvironmentSaysSo) {
  {
    const ScopedEnv strict("TILEFUSE_RECORD_BUSY_MEASUREMENTS", std::nullopt);
    EXPECT_TRUE(may_record(0, kTrustedHandoffUs, "a measurement at the handoff threshold"));
    EXPECT_FALSE(may_record(0, kTrustedHandoffUs * 1.5, "a measurement with slow handoffs"));
    EXPECT_FALSE(may_record(kTrustedCpuWaitingShare + 0.01, 0, "a measurement that waited for a CPU"));
  }
  const ScopedEnv any("TILEFUSE_RECORD_BUSY_MEASUREMENTS", "1");
  EXPECT_TRUE(may_record(0, 1000, "a measurement the environment records anyway"));
}

// Jobs whose sleeping worker's part the caller ran measured one thread, not the team: never
// trusted, though the sleeper waited for no CPU.
TEST(CpuWait, JobsRunForASleepingWorkerAreNotTrusted) {
  ThreadTeam team(2);
  for (int attempt = 0; attempt < 50; ++attempt) {
    for (int ms = 0; ms < 1000 && !team.helpers_asleep(); ++ms) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const CpuWaitMeter meter(team);
    const int64_t before = team.parts_taken_over();
    team.run(2, [](int, int64_t, int64_t) {});
    if (team.parts_taken_over() == before) continue;  // the worker woke in time: try again
    EXPECT_EQ(meter.waiting_share(), 1.0);
    return;
  }
  FAIL() << "the caller never ran a sleeping worker's part";
}

}  // namespace
}  // namespace tilefuse::runtime
