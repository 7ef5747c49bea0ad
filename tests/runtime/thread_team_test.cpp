#include "runtime/thread_team.h"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ir/error.h"
#include "support/scoped_cpu.h"

namespace tilefuse::runtime {
namespace {

struct Range {
  int worker;
  int64_t first;
  int64_t end;
};

// Runs one job and records which worker got which range and how often each block was visited.
struct Recording {
  std::vector<std::atomic<int>> visits;
  std::mutex mutex;
  std::vector<Range> ranges;

  explicit Recording(int64_t num_blocks) : visits(num_blocks) {}

  void run(ThreadTeam& team) {
    team.run(static_cast<int64_t>(visits.size()), [&](int worker, int64_t first, int64_t end) {
      for (int64_t block = first; block < end; ++block) visits[block].fetch_add(1);
      std::lock_guard lock(mutex);
      ranges.push_back({worker, first, end});
    });
  }
};

void expect_balanced_cover(const Recording& recording, int team_size) {
  const auto num_blocks = static_cast<int64_t>(recording.visits.size());
  for (int64_t block = 0; block < num_blocks; ++block) {
    EXPECT_EQ(recording.visits[block].load(), 1) << "block " << block;
  }
  const auto expected_workers = static_cast<size_t>(std::min<int64_t>(team_size, num_blocks));
  ASSERT_EQ(recording.ranges.size(), expected_workers);
  std::set<int> workers;
  int64_t smallest = num_blocks;
  int64_t largest = 0;
  for (const Range& range : recording.ranges) {
    EXPECT_GE(range.worker, 0);
    EXPECT_LT(range.worker, team_size);
    workers.insert(range.worker);
    smallest = std::min(smallest, range.end - range.first);
    largest = std::max(largest, range.end - range.first);
  }
  EXPECT_EQ(workers.size(), expected_workers) << "a worker ran two ranges";
  EXPECT_LE(largest - smallest, 1) << "ranges are not balanced";
  EXPECT_GE(smallest, 1) << "a worker was called with no blocks";
}

TEST(ThreadTeam, VisitsEveryBlockExactlyOnceInBalancedRanges) {
  for (int size : {1, 2, 3, 4, 7, 8}) {
    ThreadTeam team(size);
    EXPECT_EQ(team.size(), size);
    for (int64_t num_blocks : {1, 2, 3, 5, 7, 8, 9, 64, 1000, 1001}) {
      SCOPED_TRACE("team of " + std::to_string(size) + ", " + std::to_string(num_blocks) + " blocks");
      Recording recording(num_blocks);
      recording.run(team);
      expect_balanced_cover(recording, size);
    }
  }
}

TEST(ThreadTeam, NeedsAtLeastOneThread) { EXPECT_THROW(ThreadTeam(0), InternalError); }

TEST(ThreadTeam, ZeroBlocksCallsNothing) {
  ThreadTeam team(3);
  bool called = false;
  team.run(0, [&](int, int64_t, int64_t) { called = true; });
  EXPECT_FALSE(called);
}

// (A worker found asleep may have its range run by the caller: tried, for up to 2 s on a loaded
// machine, until the woken worker runs it.)
TEST(ThreadTeam, CallerIsWorkerZeroAndOthersAreOtherThreads) {
  ThreadTeam team(2);
  std::thread::id ids[2];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  do {
    team.run(2, [&](int worker, int64_t, int64_t) { ids[worker] = std::this_thread::get_id(); });
    EXPECT_EQ(ids[0], std::this_thread::get_id());
  } while (ids[1] == std::this_thread::get_id() && std::chrono::steady_clock::now() < deadline);
  EXPECT_NE(ids[1], std::this_thread::get_id());
  EXPECT_NE(ids[1], std::thread::id());
}

// Waits (up to a second) until a worker of `team` sleeps in the kernel: 2 ms after its last job.
bool helpers_fall_asleep(const ThreadTeam& team) {
  for (int ms = 0; ms < 1000 && !team.helpers_asleep(); ++ms) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return team.helpers_asleep();
}

// A caller does not wait 150-250 us (on a VM) for a sleeping worker to wake: it runs the worker's
// range itself after its own, unless the worker got to it first (tried until the caller does).
// That the job also wakes the worker for the next ones is SuperKernelChoice's test (e2e).
TEST(ThreadTeam, ACallerRunsTheRangeOfAWorkerThatSleeps) {
  ThreadTeam team(2);
  bool caller_ran_it = false;
  for (int attempt = 0; attempt < 50 && !caller_ran_it; ++attempt) {
    ASSERT_TRUE(helpers_fall_asleep(team)) << "the worker never slept";
    Recording recording(2);
    std::thread::id second;
    team.run(2, [&](int worker, int64_t first, int64_t end) {
      for (int64_t block = first; block < end; ++block) recording.visits[block].fetch_add(1);
      if (worker == 1) second = std::this_thread::get_id();
    });
    EXPECT_EQ(recording.visits[0].load(), 1);
    EXPECT_EQ(recording.visits[1].load(), 1);
    caller_ran_it = second == std::this_thread::get_id();
  }
  EXPECT_TRUE(caller_ran_it);
}

// Jobs and regions after pauses long and short, so that workers are found asleep, waking, or
// spinning, and some come late to a job whose ranges the caller has already run: every block of
// every job is run exactly once, every region on every worker.
TEST(ThreadTeam, JobsAfterPausesOfEveryLengthLoseNoWork) {
  ThreadTeam team(3);
  const std::chrono::microseconds pauses[] = {std::chrono::microseconds(0), std::chrono::microseconds(30),
                                               std::chrono::microseconds(2500)};
  for (int job = 0; job < 240; ++job) {
    std::this_thread::sleep_for(pauses[(job * 7) % 3]);
    if (job % 5 == 4) {
      std::atomic<int> workers{0};
      team.region([&](int) { workers.fetch_add(1); });
      ASSERT_EQ(workers.load(), 3) << "region " << job;
      continue;
    }
    Recording recording(1 + job % 6);
    recording.run(team);
    for (size_t block = 0; block < recording.visits.size(); ++block) {
      ASSERT_EQ(recording.visits[block].load(), 1) << "job " << job << ", block " << block;
    }
  }
}

TEST(ThreadTeam, TeamOfOneRunsEverythingOnTheCaller) {
  ThreadTeam team(1);
  std::vector<Range> calls;
  std::thread::id id;
  team.run(10, [&](int worker, int64_t first, int64_t end) {
    calls.push_back({worker, first, end});
    id = std::this_thread::get_id();
  });
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].worker, 0);
  EXPECT_EQ(calls[0].first, 0);
  EXPECT_EQ(calls[0].end, 10);
  EXPECT_EQ(id, std::this_thread::get_id());
}

TEST(ThreadTeam, CountsTheBarriersOfTheCallingThread) {
  ThreadTeam team(3);
  const std::thread::id caller = std::this_thread::get_id();
  const int64_t before = ThreadTeam::barriers_on_this_thread();
  std::thread::id ran_on;
  team.run(5, [&](int, int64_t, int64_t) { ran_on = std::this_thread::get_id(); }, /*max_workers=*/1);
  EXPECT_EQ(ran_on, caller);
  EXPECT_EQ(ThreadTeam::barriers_on_this_thread(), before) << "one worker allowed: the caller alone, no barrier";
  team.run(1, [&](int worker, int64_t, int64_t) { EXPECT_EQ(worker, 0); });
  team.run(5, [](int, int64_t, int64_t) {});
  EXPECT_EQ(ThreadTeam::barriers_on_this_thread(), before + 2) << "one block still wakes the team";
  int64_t others = -1;
  std::thread([&] { others = ThreadTeam::barriers_on_this_thread(); }).join();
  EXPECT_EQ(others, 0) << "counted per calling thread";
}

TEST(ThreadTeam, ManyRepeatedRunsLoseNoWork) {
  ThreadTeam team(4);
  std::atomic<int64_t> total{0};
  constexpr int kRuns = 3000;
  for (int i = 0; i < kRuns; ++i) {
    team.run(1 + i % 7, [&](int, int64_t first, int64_t end) { total.fetch_add(end - first); });
  }
  int64_t expected = 0;
  for (int i = 0; i < kRuns; ++i) expected += 1 + i % 7;
  EXPECT_EQ(total.load(), expected);
}

TEST(ThreadTeam, RethrowsAWorkersExceptionAndStaysUsable) {
  for (int thrower : {0, 1, 3}) {
    ThreadTeam team(4);
    std::atomic<int> finished{0};
    try {
      team.run(4, [&](int worker, int64_t, int64_t) {
        if (worker == thrower) throw std::runtime_error("worker " + std::to_string(worker) + " failed");
        finished.fetch_add(1);
      });
      ADD_FAILURE() << "no exception from worker " << thrower;
    } catch (const std::runtime_error& error) {
      EXPECT_EQ(std::string(error.what()), "worker " + std::to_string(thrower) + " failed");
    }
    EXPECT_EQ(finished.load(), 3) << "run returned before the other workers finished";
    Recording recording(100);
    recording.run(team);
    expect_balanced_cover(recording, 4);
  }
}

TEST(ThreadTeam, TeamOfOnePropagatesExceptions) {
  ThreadTeam team(1);
  EXPECT_THROW(team.run(3, [](int, int64_t, int64_t) { throw std::runtime_error("boom"); }), std::runtime_error);
}

TEST(ThreadTeam, NestedRunIsReportedAsABug) {
  for (int size : {1, 3}) {
    ThreadTeam team(size);
    EXPECT_THROW(team.run(size, [&](int, int64_t, int64_t) { team.run(1, [](int, int64_t, int64_t) {}); }),
                 InternalError);
  }
}

TEST(ThreadTeam, RunsFromTwoCallersAreSerialised) {
  ThreadTeam team(3);
  std::atomic<int64_t> total{0};
  auto caller = [&] {
    for (int i = 0; i < 500; ++i) team.run(5, [&](int, int64_t first, int64_t end) { total.fetch_add(end - first); });
  };
  std::thread other(caller);
  caller();
  other.join();
  EXPECT_EQ(total.load(), 2 * 500 * 5);
}

TEST(ThreadTeam, DestroysCleanlyWhileIdle) {
  { ThreadTeam never_used(4); }
  ThreadTeam team(4);
  Recording recording(8);
  recording.run(team);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // workers now asleep, not spinning
  // The destructor runs at scope exit; a hang or crash here fails the test.
}

double process_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

TEST(ThreadTeam, AnIdleTeamUsesNoCpu) {
  ThreadTeam team(4);
  Recording recording(4);
  recording.run(team);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));  // past the short spin
  const double before = process_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // Three workers spinning would burn up to 0.9 s of CPU here; sleeping ones burn none. The
  // bound is loose because a loaded machine (ctest -j) adds scheduling noise to any process.
  EXPECT_LT(process_cpu_seconds() - before, 0.25);
}

// The CPU each worker runs its part of one job on (of a job whose parts all ran on their own
// workers: the caller runs the part of one it finds asleep).
std::vector<int> worker_cpus(ThreadTeam& team) {
  std::vector<int> cpus(static_cast<size_t>(team.size()));
  for (bool own_threads = false; !own_threads;) {
    std::vector<std::thread::id> threads(cpus.size());
    team.run(team.size(), [&](int worker, int64_t, int64_t) {
      cpus[static_cast<size_t>(worker)] = sched_getcpu();
      threads[static_cast<size_t>(worker)] = std::this_thread::get_id();
    });
    std::sort(threads.begin(), threads.end());
    own_threads = std::adjacent_find(threads.begin(), threads.end()) == threads.end();
  }
  return cpus;
}

TEST(ThreadTeam, PinnedWorkersRunOnCpusOfTheirOwn) {
  if (testing_support::allowed_cpus() < 2) GTEST_SKIP() << "one CPU: nothing to pin apart";
  const testing_support::SavedAffinity restored;  // pin_workers pins the calling thread too
  ThreadTeam team(2);
  team.pin_workers();
  for (int round = 0; round < 20; ++round) {
    const std::vector<int> cpus = worker_cpus(team);
    EXPECT_NE(cpus[0], cpus[1]) << "round " << round;
  }
}

TEST(ThreadTeam, PinningAndSpreadingDoNothingWithFewerCpusThanWorkers) {
  const testing_support::OneCpuScope one_cpu;
  ThreadTeam team(2);
  const auto start = std::chrono::steady_clock::now();
  team.spread_workers(std::chrono::milliseconds(2000));
  team.pin_workers();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500)) << "no waiting for the impossible";
  const std::vector<int> cpus = worker_cpus(team);
  EXPECT_EQ(cpus[0], cpus[1]) << "both stay on the one CPU";
}

}  // namespace
}  // namespace tilefuse::runtime
