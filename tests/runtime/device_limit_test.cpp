#include "runtime/device_limit.h"

#include <sched.h>

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "ir/error.h"

namespace tilefuse::runtime {
namespace {

constexpr const char* kVar = "TILEFUSE_NUM_THREADS";

// Sets (or unsets, for nullptr) TILEFUSE_NUM_THREADS for one test and restores it afterwards.
class ScopedNumThreads {
 public:
  explicit ScopedNumThreads(const char* value) {
    if (const char* old = std::getenv(kVar)) saved_ = old;
    value != nullptr ? setenv(kVar, value, 1) : unsetenv(kVar);
  }
  ~ScopedNumThreads() { saved_.empty() ? unsetenv(kVar) : setenv(kVar, saved_.c_str(), 1); }

 private:
  std::string saved_;
};

void expect_rejected(const char* value) {
  ScopedNumThreads env(value);
  try {
    resolve_device_limit();
    ADD_FAILURE() << "TILEFUSE_NUM_THREADS='" << value << "' was accepted";
  } catch (const UserError& error) {
    EXPECT_EQ(std::string(error.what()).rfind("TILEFUSE_NUM_THREADS must be a positive integer", 0), 0u)
        << error.what();
  }
}

TEST(DeviceLimit, HardwareCoresIsTheAffinityMask) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  EXPECT_EQ(hardware_cores(), CPU_COUNT(&set));
  EXPECT_GE(hardware_cores(), 1);
}

TEST(DeviceLimit, UnsetMeansAllCores) {
  ScopedNumThreads env(nullptr);
  const DeviceLimit limit = resolve_device_limit();
  EXPECT_EQ(limit.threads, hardware_cores());
  EXPECT_FALSE(limit.explicit_limit);
}

TEST(DeviceLimit, EmptyMeansUnset) {
  ScopedNumThreads env("");
  EXPECT_EQ(resolve_device_limit().threads, hardware_cores());
  EXPECT_FALSE(resolve_device_limit().explicit_limit);
}

TEST(DeviceLimit, ReadsThePositiveIntegerFromTheEnvironment) {
  ScopedNumThreads env("1");
  const DeviceLimit limit = resolve_device_limit();
  EXPECT_EQ(limit.threads, 1);
  EXPECT_TRUE(limit.explicit_limit);
}

TEST(DeviceLimit, RejectsWhatIsNotAPositiveInteger) {
  for (const char* value : {"0", "-2", "abc", "2x", " 2", "+2", "1.5", "99999999999999999999"}) {
    expect_rejected(value);
  }
}

TEST(DeviceLimit, CapsAtTheCoreCount) {
  ScopedNumThreads env("100000");
  const DeviceLimit limit = resolve_device_limit();
  EXPECT_EQ(limit.threads, hardware_cores());
  EXPECT_TRUE(limit.explicit_limit);
}

TEST(DeviceLimit, RequestedValueOverridesTheEnvironment) {
  ScopedNumThreads env("not a number");
  EXPECT_EQ(resolve_device_limit(1).threads, 1);
  EXPECT_TRUE(resolve_device_limit(1).explicit_limit);
  EXPECT_EQ(resolve_device_limit(100000).threads, hardware_cores());
}

TEST(DeviceLimit, RejectsANonPositiveRequest) {
  ScopedNumThreads env(nullptr);
  EXPECT_THROW(resolve_device_limit(0), UserError);
  EXPECT_THROW(resolve_device_limit(-1), UserError);
}

}  // namespace
}  // namespace tilefuse::runtime
