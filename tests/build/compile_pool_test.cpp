#include "build/compile_pool.h"

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "build_test_support.h"
#include "ir/error.h"

namespace tilefuse::build {
namespace {

TEST(CompilePool, RunsEveryJobOnSeveralThreads) {
  std::atomic<int> ran{0};
  std::mutex mutex;
  std::set<std::thread::id> workers;
  std::vector<CompileJob> jobs;
  for (int i = 0; i < 16; ++i) {
    jobs.push_back({fmt::format("job{}", i), [&] {
                      std::this_thread::sleep_for(std::chrono::milliseconds(20));
                      std::lock_guard<std::mutex> guard(mutex);
                      workers.insert(std::this_thread::get_id());
                      ++ran;
                    }});
  }
  run_compile_jobs(std::move(jobs), 4);
  EXPECT_EQ(ran, 16);
  EXPECT_GT(workers.size(), 1u);
  EXPECT_EQ(workers.count(std::this_thread::get_id()), 0u);
}

TEST(CompilePool, AllJobsRunThenTheFirstFailureIsRethrown) {
  for (int threads : {1, 3}) {
    std::atomic<int> ran{0};
    std::vector<CompileJob> jobs;
    for (int i = 0; i < 8; ++i) {
      jobs.push_back({fmt::format("job{}", i), [&ran, i] {
                        ++ran;
                        if (i == 2 || i == 5) throw UserError(fmt::format("job {} failed", i));
                      }});
    }
    try {
      run_compile_jobs(std::move(jobs), threads);
      ADD_FAILURE() << "expected UserError with " << threads << " threads";
    } catch (const UserError& error) {
      EXPECT_STREQ(error.what(), "job 2 failed");
    }
    EXPECT_EQ(ran, 8) << threads << " threads";
  }
}

TEST(CompilePool, OneThreadRunsInOrderOnTheCallersThread) {
  std::vector<int> order;
  std::vector<std::thread::id> runners;
  std::vector<CompileJob> jobs;
  for (int i = 0; i < 5; ++i) {
    jobs.push_back({fmt::format("job{}", i), [&, i] {
                      order.push_back(i);
                      runners.push_back(std::this_thread::get_id());
                    }});
  }
  run_compile_jobs(std::move(jobs), 1);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_THAT(runners, ::testing::Each(std::this_thread::get_id()));
}

TEST(CompilePool, ThreadsComeFromTheEnvironment) {
  {
    testing::ScopedEnv threads("TILEFUSE_COMPILE_THREADS", std::nullopt);
    EXPECT_GE(compile_threads_from_environment(), 1);
  }
  testing::ScopedEnv threads("TILEFUSE_COMPILE_THREADS", "3");
  EXPECT_EQ(compile_threads_from_environment(), 3);
}

TEST(CompilePool, InvalidThreadCountIsUserError) {
  for (const char* value : {"0", "-2", "abc", "4x", "", " 4", "99999999999"}) {
    testing::ScopedEnv threads("TILEFUSE_COMPILE_THREADS", value);
    try {
      compile_threads_from_environment();
      ADD_FAILURE() << "accepted '" << value << "'";
    } catch (const UserError& error) {
      EXPECT_THAT(error.what(), ::testing::HasSubstr("TILEFUSE_COMPILE_THREADS must be a positive integer"));
    }
  }
}

}  // namespace
}  // namespace tilefuse::build
