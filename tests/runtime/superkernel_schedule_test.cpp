#include "runtime/superkernel_schedule.h"

#include <gtest/gtest.h>

namespace tilefuse::runtime {
namespace {

const int kArena = 0;  // a memory space: only its address matters
const int kInput = 0;

ByteRange arena(size_t begin, size_t end) { return {&kArena, begin, end}; }

RegionStepInput kernel(size_t step, std::vector<ByteRange> reads, std::vector<ByteRange> writes, double ns = 1e6) {
  RegionStepInput s;
  s.step = step;
  s.blocks = true;
  s.max_workers = 8;
  s.work_ns = ns;
  s.reads = std::move(reads);
  s.writes = std::move(writes);
  return s;
}

TEST(SuperKernelSchedule, AReaderWaitsForItsWriterOnly) {
  const auto schedule = schedule_region({kernel(0, {{&kInput, 0, 1}}, {arena(0, 64)}),
                                         kernel(1, {{&kInput, 0, 1}}, {arena(64, 128)}),
                                         kernel(2, {arena(0, 64)}, {arena(128, 192)})},
                                        2, kDefaultParallelFloorNs);
  ASSERT_EQ(schedule.size(), 3U);
  EXPECT_TRUE(schedule[0].waits.empty());
  EXPECT_TRUE(schedule[1].waits.empty()) << "independent of step 0: starts early";
  EXPECT_EQ(schedule[2].waits, (std::vector<size_t>{0}));
  EXPECT_EQ(schedule[2].workers, 2);
  EXPECT_EQ(schedule[2].done_target, 2);
}

TEST(SuperKernelSchedule, ReusedArenaBytesWaitForTheirLastReaders) {
  // Step 2 overwrites bytes step 1 still reads (write after read), and step 0 wrote (write after write).
  const auto schedule = schedule_region({kernel(0, {}, {arena(0, 64)}), kernel(1, {arena(0, 64)}, {arena(64, 128)}),
                                         kernel(2, {arena(64, 128)}, {arena(32, 48)})},
                                        2, kDefaultParallelFloorNs);
  EXPECT_EQ(schedule[2].waits, (std::vector<size_t>{1})) << "step 1 waited for step 0, so that wait is implied";
}

TEST(SuperKernelSchedule, WaitsImpliedByAnotherWaitAreLeftOut) {
  // A chain 0 -> 1 -> 2, and 3 reads all three: waiting for 2 implies 1 and 0.
  const auto schedule =
      schedule_region({kernel(0, {}, {arena(0, 8)}), kernel(1, {arena(0, 8)}, {arena(8, 16)}),
                       kernel(2, {arena(8, 16)}, {arena(16, 24)}), kernel(3, {arena(0, 24)}, {arena(24, 32)})},
                      2, kDefaultParallelFloorNs);
  EXPECT_EQ(schedule[3].waits, (std::vector<size_t>{2}));
}

TEST(SuperKernelSchedule, DisjointRangesAndOtherSpacesDoNotOrder) {
  const int other = 0;
  const auto schedule = schedule_region(
      {kernel(0, {}, {arena(0, 64)}), kernel(1, {arena(64, 65), {&other, 0, 64}}, {{&other, 64, 128}})}, 2,
      kDefaultParallelFloorNs);
  EXPECT_TRUE(schedule[1].waits.empty());
}

TEST(SuperKernelSchedule, StepsBelowTheFloorRunOnOneWorker) {
  RegionStepInput call = kernel(1, {}, {arena(64, 128)}, 1e6);
  call.blocks = false;
  call.max_workers = 4;
  RegionStepInput host = call;
  host.step = 2;
  host.max_workers = 1;
  const auto schedule =
      schedule_region({kernel(0, {}, {arena(0, 64)}, 500), call, host, kernel(3, {}, {arena(0, 8)}, 1e6)}, 4, 1000);
  EXPECT_EQ(schedule[0].workers, 1);
  EXPECT_EQ(schedule[0].done_target, 1);
  EXPECT_EQ(schedule[1].workers, 4) << "a call large enough uses every worker";
  EXPECT_EQ(schedule[1].done_target, 1) << "worker 0 completes a call";
  EXPECT_EQ(schedule[2].workers, 1) << "a host step is serial";
  EXPECT_EQ(schedule[3].workers, 4);
  EXPECT_EQ(schedule[3].done_target, 4);
}

TEST(SuperKernelSchedule, AKernelNeverGetsMoreWorkersThanItCanUseOrTheTeamHas) {
  RegionStepInput few = kernel(0, {}, {arena(0, 8)});
  few.max_workers = 3;
  const auto schedule = schedule_region({few, kernel(1, {}, {arena(8, 16)})}, 2, 0);
  EXPECT_EQ(schedule[0].workers, 2);
  EXPECT_EQ(schedule[1].workers, 2);
}

TEST(SuperKernelSchedule, EstimatesTimeFromBytesOrFlopsWhicheverDominates) {
  EXPECT_GT(estimated_step_ns(1e6, 0), estimated_step_ns(1e3, 0));
  EXPECT_GT(estimated_step_ns(0, 1e9), estimated_step_ns(1e6, 0));
  EXPECT_EQ(estimated_step_ns(0, 0), 0);
}

}  // namespace
}  // namespace tilefuse::runtime
