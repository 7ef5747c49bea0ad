#include "ir/checked_size.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/error.h"
#include "support/user_error.h"

namespace tilefuse {
namespace {

using ::testing::HasSubstr;
using testing_support::user_error;

TEST(CheckedSize, CountsAndBytesOfOrdinaryShapes) {
  EXPECT_EQ(checked_numel({}, "t"), 1);
  EXPECT_EQ(checked_numel({2, 0, 5}, "t"), 0);
  EXPECT_EQ(checked_nbytes(DType::f32, {3, 4}, "t"), 48u);
  EXPECT_EQ(checked_nbytes(DType::f16, {1 << 20}, "t"), size_t{2} << 20);
}

TEST(CheckedSize, OverflowNamesTheTensorAndItsShape) {
  const int64_t big = int64_t{1} << 22;
  EXPECT_THAT(user_error([&] { checked_numel({big, big, big}, "tensor 'y'"); }),
              HasSubstr("tensor 'y' has shape [4194304, 4194304, 4194304]: its element count does not fit in 64 bits"));
  // A zero dim after an overflowing prefix still overflows on the way: the count is refused.
  EXPECT_THROW(checked_numel({big, big, big, 0}, "t"), UserError);
  EXPECT_THAT(user_error([] { checked_numel({2, -3}, "t"); }), HasSubstr("dimension -3 is negative"));
}

TEST(CheckedSize, BytesAboveTwoToTheSixtyTwoAreRefused) {
  EXPECT_THAT(user_error([] { checked_nbytes(DType::f64, {int64_t{1} << 60}, "tensor 'w'"); }),
              HasSubstr("exceed the largest tensor size of 2^62 bytes"));
  EXPECT_THROW(checked_add_bytes(kMaxTensorBytes, 1, "arena"), UserError);
  EXPECT_EQ(checked_add_bytes(1, 2, "arena"), 3u);
}

}  // namespace
}  // namespace tilefuse
