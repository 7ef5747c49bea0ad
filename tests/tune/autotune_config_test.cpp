// TILEFUSE_AUTOTUNE_TOPN validation: the exact messages the configuration contract promises.
#include <gtest/gtest.h>

#include <cstdlib>

#include "support/user_error.h"
#include "tune/autotune_config.h"

namespace tilefuse::tune {
namespace {

using testing_support::user_error;

class TopNEnvironment : public ::testing::Test {
 protected:
  void TearDown() override { ::unsetenv("TILEFUSE_AUTOTUNE_TOPN"); }
  static void set(const char* value) { ::setenv("TILEFUSE_AUTOTUNE_TOPN", value, 1); }
};

TEST_F(TopNEnvironment, DefaultsToOne) { EXPECT_EQ(resolve_autotune_topn(), 1); }

TEST_F(TopNEnvironment, ReadsAPositiveInteger) {
  set("3");
  EXPECT_EQ(resolve_autotune_topn(), 3);
}

TEST_F(TopNEnvironment, NonIntegersAreRejectedWithTheExactMessage) {
  for (const char* bad : {"", "abc", "3x", "2.5", " 3", "99999999999999999999999"}) {
    set(bad);
    EXPECT_EQ(user_error([] { resolve_autotune_topn(); }), "TILEFUSE_AUTOTUNE_TOPN must be a positive integer") << bad;
  }
}

TEST_F(TopNEnvironment, BelowOneIsRejectedWithTheExactMessage) {
  for (const char* bad : {"0", "-3"}) {
    set(bad);
    EXPECT_EQ(user_error([] { resolve_autotune_topn(); }), "TILEFUSE_AUTOTUNE_TOPN must be >= 1") << bad;
  }
}

TEST_F(TopNEnvironment, AboveTenIsCappedAtTen) {
  set("25");
  EXPECT_EQ(resolve_autotune_topn(), 10);
}

TEST_F(TopNEnvironment, AnExplicitValueOverridesTheEnvironmentAndIsCheckedAlike) {
  set("abc");
  EXPECT_EQ(resolve_autotune_topn(4), 4);
  EXPECT_EQ(resolve_autotune_topn(12), 10);
  EXPECT_EQ(user_error([] { resolve_autotune_topn(0); }), "TILEFUSE_AUTOTUNE_TOPN must be >= 1");
}

}  // namespace
}  // namespace tilefuse::tune
