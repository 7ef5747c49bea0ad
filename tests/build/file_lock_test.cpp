#include "build/file_lock.h"

#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "build_test_support.h"
#include "ir/error.h"
#include "ir/log.h"

namespace tilefuse::build {
namespace {

using ::testing::HasSubstr;

// Captures what tilefuse's logger prints while it lives.
class CapturedLog {
 public:
  CapturedLog() : previous_(logger().sinks()) {
    logger().sinks() = {std::make_shared<spdlog::sinks::ostream_sink_mt>(text_)};
  }
  ~CapturedLog() { logger().sinks() = previous_; }
  std::string text() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::vector<spdlog::sink_ptr> previous_;
};

TEST(FileLock, WaiterSaysSoAndGivesUpAfterTheTimeout) {
  testing::TempDir dir;
  const std::string path = dir.file("compile.lock");
  FileLock held(path);
  testing::ScopedEnv timeout("TILEFUSE_LOCK_TIMEOUT", "1.5");
  CapturedLog log;
  try {
    FileLock waiter(path);
    FAIL() << "the second lock was granted while the first was held";
  } catch (const UserError& error) {
    EXPECT_THAT(error.what(), HasSubstr("gave up waiting for " + path + " after 1.5 s"));
    EXPECT_THAT(error.what(), HasSubstr("TILEFUSE_LOCK_TIMEOUT"));
  }
  EXPECT_THAT(log.text(), HasSubstr("waiting for " + path + ": held by another tilefuse process"));
}

TEST(FileLock, WaiterGetsTheLockWhenItIsReleased) {
  testing::TempDir dir;
  const std::string path = dir.file("compile.lock");
  auto held = std::make_unique<FileLock>(path);
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    held.reset();
  });
  EXPECT_NO_THROW(FileLock waiter(path));
  releaser.join();
}

TEST(FileLock, InvalidTimeoutNamesTheVariable) {
  testing::TempDir dir;
  const std::string path = dir.file("compile.lock");
  FileLock held(path);
  testing::ScopedEnv timeout("TILEFUSE_LOCK_TIMEOUT", "soon");
  try {
    FileLock waiter(path);
    FAIL();
  } catch (const UserError& error) {
    EXPECT_THAT(error.what(), HasSubstr("TILEFUSE_LOCK_TIMEOUT is 'soon': it must be a positive number of seconds"));
  }
}

TEST(FileLock, PlantedSymlinkIsNotFollowed) {
  testing::TempDir dir;
  testing::write_text(dir.file("victim"), "data");
  ASSERT_EQ(::symlink(dir.file("victim").c_str(), dir.file("compile.lock").c_str()), 0);
  EXPECT_THROW(FileLock lock(dir.file("compile.lock")), UserError);
}

}  // namespace
}  // namespace tilefuse::build
