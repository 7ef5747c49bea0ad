#include "runtime/memory_planner.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "ir/error.h"

namespace tilefuse::runtime {
namespace {

bool lifetimes_overlap(const BufferRequest& a, const BufferRequest& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

// The planner's contract, checked independently of how it places buffers.
void expect_valid_plan(const std::vector<BufferRequest>& requests, const MemoryPlan& plan) {
  ASSERT_EQ(plan.offsets.size(), requests.size());
  size_t max_end = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % 64, 0u) << "buffer " << i;
    max_end = std::max(max_end, plan.offsets[i] + requests[i].bytes);
    for (size_t j = i + 1; j < requests.size(); ++j) {
      if (!lifetimes_overlap(requests[i], requests[j])) continue;
      const bool disjoint = plan.offsets[i] + requests[i].bytes <= plan.offsets[j] ||
                            plan.offsets[j] + requests[j].bytes <= plan.offsets[i];
      EXPECT_TRUE(disjoint) << "buffers " << i << " and " << j << " are live together but overlap";
    }
  }
  EXPECT_EQ(plan.arena_bytes, max_end);
}

TEST(MemoryPlanner, NoRequestsNeedNoArena) {
  const MemoryPlan plan = plan_memory({});
  EXPECT_TRUE(plan.offsets.empty());
  EXPECT_EQ(plan.arena_bytes, 0u);
}

TEST(MemoryPlanner, RandomLifetimesNeverOverlapWhileLive) {
  std::mt19937 random(12345);
  for (int trial = 0; trial < 200; ++trial) {
    const int steps = 1 + static_cast<int>(random() % 30);
    std::vector<BufferRequest> requests(1 + random() % 40);
    for (BufferRequest& request : requests) {
      request.bytes = random() % 4 == 0 ? random() % 100 : random() % 100000;
      request.first_step = static_cast<int>(random() % steps);
      request.last_step = request.first_step + static_cast<int>(random() % (steps - request.first_step));
    }
    SCOPED_TRACE("trial " + std::to_string(trial));
    expect_valid_plan(requests, plan_memory(requests));
  }
}

TEST(MemoryPlanner, DisjointLifetimesShareMemory) {
  const std::vector<BufferRequest> requests = {{1000, 0, 1}, {1000, 2, 3}};
  const MemoryPlan plan = plan_memory(requests);
  EXPECT_EQ(plan.offsets[0], plan.offsets[1]);
  EXPECT_EQ(plan.arena_bytes, 1000u);
}

TEST(MemoryPlanner, AChainReusesEveryOtherBuffer) {
  // a -> b -> c -> d: each tensor is live only with its neighbours, so two slots suffice.
  const std::vector<BufferRequest> requests = {{4096, 0, 1}, {4096, 1, 2}, {4096, 2, 3}, {4096, 3, 4}};
  const MemoryPlan plan = plan_memory(requests);
  expect_valid_plan(requests, plan);
  EXPECT_EQ(plan.arena_bytes, 2u * 4096u);
}

TEST(MemoryPlanner, LiveTogetherMeansSideBySideAligned) {
  const std::vector<BufferRequest> requests = {{1, 0, 5}, {3, 0, 5}, {65, 0, 5}, {64, 0, 5}};
  const MemoryPlan plan = plan_memory(requests);
  expect_valid_plan(requests, plan);
  std::vector<size_t> offsets = plan.offsets;
  std::sort(offsets.begin(), offsets.end());
  EXPECT_EQ(offsets, (std::vector<size_t>{0, 128, 192, 256}));  // 65 bytes take two lines
}

TEST(MemoryPlanner, SmallBuffersFillTheGapsOfLargeOnes) {
  // The big buffer dies at step 1; the two small ones live later and fit inside its bytes.
  const std::vector<BufferRequest> requests = {{10000, 0, 1}, {100, 2, 3}, {100, 2, 3}, {5000, 1, 2}};
  const MemoryPlan plan = plan_memory(requests);
  expect_valid_plan(requests, plan);
  EXPECT_LE(std::max(plan.offsets[1], plan.offsets[2]) + 100, 10000u);
  EXPECT_EQ(plan.arena_bytes, 10048u + 5000u);  // the big one, then the middle one after it
}

TEST(MemoryPlanner, ABackwardsLifetimeIsABug) {
  EXPECT_THROW(plan_memory({{64, 3, 2}}), InternalError);
}

TEST(Arena, EmptyArenaHasNoMemory) {
  Arena arena(0);
  EXPECT_EQ(arena.data(), nullptr);
  EXPECT_EQ(arena.size(), 0u);
}

TEST(Arena, IsAlignedAndWritable) {
  for (size_t bytes : {size_t{1}, size_t{100}, size_t{4097}, size_t{3} << 20}) {
    Arena arena(bytes);
    ASSERT_NE(arena.data(), nullptr);
    EXPECT_GE(arena.size(), bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(arena.data()) % 64, 0u);
    std::memset(arena.data(), 0xab, arena.size());
    EXPECT_EQ(arena.data()[arena.size() - 1], 0xab);
  }
}

TEST(Arena, IsPrefaultedAtCreation) {
  constexpr size_t kBytes = size_t{64} << 20;
  Arena arena(kBytes);
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  std::memset(arena.data(), 1, arena.size());
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  // Touching 16384 fresh 4 KiB pages would fault thousands of times; pre-faulted ones do not.
  EXPECT_LT(after.ru_minflt - before.ru_minflt, 100) << "page faults while writing a pre-faulted arena";
}

TEST(Arena, MovesOwnership) {
  Arena first(1000);
  uint8_t* const data = first.data();
  Arena second(std::move(first));
  EXPECT_EQ(second.data(), data);
  EXPECT_EQ(first.data(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from state is specified
  Arena third(10);
  third = std::move(second);
  EXPECT_EQ(third.data(), data);
}

}  // namespace
}  // namespace tilefuse::runtime
