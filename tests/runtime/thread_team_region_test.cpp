// ThreadTeam's parallel regions: one fork for many steps, counters between them, worker 0's
// run() calls served by the assisting workers, and failures that unwind every worker.
#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ir/error.h"
#include "runtime/thread_team.h"

namespace tilefuse::runtime {
namespace {

struct alignas(64) Counter {
  std::atomic<int64_t> value{0};
};

TEST(ThreadTeamRegion, RunsEveryWorkerOnceForOneBarrier) {
  ThreadTeam team(3);
  std::mutex mutex;
  std::multiset<int> workers;
  const int64_t before = ThreadTeam::barriers_on_this_thread();
  team.region([&](int worker) {
    std::lock_guard lock(mutex);
    workers.insert(worker);
  });
  EXPECT_EQ(workers, (std::multiset<int>{0, 1, 2}));
  EXPECT_EQ(ThreadTeam::barriers_on_this_thread(), before + 1);
}

// Each step's workers read what the other workers wrote in the step before, ordered only by the
// step's counter: a missing or early wait shows as a wrong sum.
TEST(ThreadTeamRegion, CountersOrderEveryWorkersWritesBeforeTheNextStep) {
  constexpr int kWorkers = 3, kSteps = 2000;
  ThreadTeam team(kWorkers);
  std::vector<std::vector<int64_t>> value(kSteps + 1, std::vector<int64_t>(kWorkers, 1));
  std::vector<Counter> done(kSteps + 1);
  team.region([&](int worker) {
    for (int s = 1; s <= kSteps; ++s) {
      team.wait_at_least(done[s - 1].value, s == 1 ? 0 : kWorkers);
      value[s][worker] = value[s - 1][(worker + 1) % kWorkers] + value[s - 1][worker];
      done[s].value.fetch_add(1, std::memory_order_release);
    }
  });
  // Every entry doubles per step (all start equal): 2^kSteps overflows, so compare modulo 2^64.
  uint64_t expected = 1;
  for (int s = 0; s < kSteps; ++s) expected *= 2;
  for (int w = 0; w < kWorkers; ++w) EXPECT_EQ(static_cast<uint64_t>(value[kSteps][w]), expected) << "worker " << w;
}

TEST(ThreadTeamRegion, WorkerZerosRunIsServedByTheAssistingWorkers) {
  constexpr int64_t kBlocks = 64;
  ThreadTeam team(3);
  std::vector<std::atomic<int>> visits(kBlocks);
  std::mutex mutex;
  std::set<int> workers;
  Counter step_done;
  const int64_t before = ThreadTeam::barriers_on_this_thread();
  team.region([&](int worker) {
    if (worker > 0) return team.assist(worker, step_done.value, 1);
    EXPECT_TRUE(team.in_region());
    for (int round = 0; round < 5; ++round) {
      team.run(kBlocks, [&](int w, int64_t first, int64_t end) {
        for (int64_t b = first; b < end; ++b) visits[b].fetch_add(1);
        std::lock_guard lock(mutex);
        workers.insert(w);
      });
    }
    step_done.value.store(1, std::memory_order_release);
  });
  for (int64_t b = 0; b < kBlocks; ++b) EXPECT_EQ(visits[b].load(), 5) << "block " << b;
  EXPECT_EQ(workers, (std::set<int>{0, 1, 2}));
  EXPECT_EQ(ThreadTeam::barriers_on_this_thread(), before + 1 + 5) << "the region and each inner job";
  EXPECT_FALSE(team.in_region());
}

TEST(ThreadTeamRegion, OneRegionWorkerRunsInnerJobsAlone) {
  ThreadTeam team(2);
  std::set<int> workers;
  const int64_t before = ThreadTeam::barriers_on_this_thread();
  team.region([&](int worker) {
    if (worker > 0) return;  // not assisting: worker 0 must not wait for it
    team.set_region_workers(1);
    team.run(16, [&](int w, int64_t, int64_t) { workers.insert(w); });
  });
  EXPECT_EQ(workers, (std::set<int>{0}));
  EXPECT_EQ(ThreadTeam::barriers_on_this_thread(), before + 1);
}

// A worker that fails leaves the others waiting for a counter it will never bump: the region
// must unwind them all and report the failure, and the team must work afterwards.
TEST(ThreadTeamRegion, AFailingHelperAbortsWaitsAndIsRethrown) {
  ThreadTeam team(3);
  Counter never;
  EXPECT_THROW(team.region([&](int worker) {
    if (worker == 2) throw std::runtime_error("helper failed");
    team.wait_at_least(never.value, 1);
  }),
               std::runtime_error);
  std::atomic<int> ran{0};
  team.region([&](int) { ran.fetch_add(1); });
  EXPECT_EQ(ran.load(), 3);
}

TEST(ThreadTeamRegion, AFailingWorkerZeroReleasesTheAssistingWorkers) {
  ThreadTeam team(3);
  Counter never;
  try {
    team.region([&](int worker) {
      if (worker > 0) return team.assist(worker, never.value, 1);
      team.run(8, [](int, int64_t, int64_t) {});
      fail_user("step {} failed", 7);
    });
    FAIL() << "the region did not rethrow";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "step 7 failed");
  }
}

TEST(ThreadTeamRegion, AnInnerJobsFailureIsRethrownByWorkerZerosRun) {
  ThreadTeam team(2);
  Counter done;
  bool caught = false;
  team.region([&](int worker) {
    if (worker > 0) return team.assist(worker, done.value, 1);
    try {
      team.run(2, [](int w, int64_t, int64_t) {
        if (w == 1) throw std::runtime_error("block failed");
      });
    } catch (const std::runtime_error&) {
      caught = true;
    }
    done.value.store(1, std::memory_order_release);
  });
  EXPECT_TRUE(caught);
}

TEST(ThreadTeamRegion, AOneWorkerTeamCallsItsWorkerDirectly) {
  ThreadTeam team(1);
  int calls = 0;
  const int64_t before = ThreadTeam::barriers_on_this_thread();
  team.region([&](int worker) {
    EXPECT_EQ(worker, 0);
    ++calls;
    team.run(4, [&](int, int64_t first, int64_t end) { calls += static_cast<int>(end - first); });
  });
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(ThreadTeam::barriers_on_this_thread(), before);
}

TEST(ThreadTeamRegion, ARegionOfOneWorkerRunsOnTheCallerWithoutABarrier) {
  ThreadTeam team(3);
  std::set<int> workers;
  std::set<std::thread::id> threads;
  const int64_t before = ThreadTeam::barriers_on_this_thread();
  team.region(
      [&](int worker) {
        workers.insert(worker);
        team.run(8, [&](int w, int64_t, int64_t) {
          workers.insert(w);
          threads.insert(std::this_thread::get_id());
        });
      },
      1);
  EXPECT_EQ(workers, (std::set<int>{0}));
  EXPECT_EQ(threads, (std::set<std::thread::id>{std::this_thread::get_id()}));
  EXPECT_EQ(ThreadTeam::barriers_on_this_thread(), before);
  std::vector<std::atomic<int>> used(3);
  team.run(8, [&](int w, int64_t, int64_t) { used[w].fetch_add(1); });  // and the team is whole again afterwards
  for (int w = 0; w < 3; ++w) EXPECT_EQ(used[w].load(), 1) << "worker " << w;
}

TEST(ThreadTeamRegion, ARegionInsideARegionIsABug) {
  ThreadTeam team(2);
  Counter done;
  EXPECT_THROW(team.region([&](int worker) {
    if (worker > 0) return team.assist(worker, done.value, 1);
    team.region([](int) {});
  }),
               InternalError);
}

TEST(WorkerBlocks, SplitsIntoContiguousRangesDifferingByAtMostOne) {
  int64_t next = 0;
  for (int w = 0; w < 4; ++w) {
    const auto [first, end] = worker_blocks(10, 4, w);
    EXPECT_EQ(first, next);
    EXPECT_TRUE(end - first == 2 || end - first == 3);
    next = end;
  }
  EXPECT_EQ(next, 10);
}

}  // namespace
}  // namespace tilefuse::runtime
