// The flat index maps every movement kernel is built on.
#include "reference/index_map.h"

#include <gtest/gtest.h>

namespace tilefuse::reference {
namespace {

using Indices = std::vector<int64_t>;

TEST(IndexMap, StridedIndicesWalkRowMajor) {
  // A [2, 3] tensor read transposed: shape [3, 2], strides [1, 3].
  EXPECT_EQ(strided_indices({3, 2}, {1, 3}), (Indices{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(strided_indices({2}, {-2}, 4), (Indices{4, 2}));
  EXPECT_EQ(strided_indices({}, {}), (Indices{0}));
  EXPECT_EQ(strided_indices({0, 3}, {3, 1}), (Indices{}));
}

TEST(IndexMap, BroadcastIndicesRepeatSizeOneAndMissingDims) {
  EXPECT_EQ(broadcast_indices({3}, {2, 3}), (Indices{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(broadcast_indices({2, 1}, {2, 3}), (Indices{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(broadcast_indices({}, {2}), (Indices{0, 0}));
  EXPECT_THROW(broadcast_indices({2}, {3}), InternalError);
}

}  // namespace
}  // namespace tilefuse::reference
