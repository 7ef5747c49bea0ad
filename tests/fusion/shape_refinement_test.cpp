// Common refinements of shapes (what lets a kernel span a view): exact cases with constant and
// symbolic dims, size-1 dims, and the shapes that have none.
#include "fusion/shape_refinement.h"

#include <gtest/gtest.h>

namespace tilefuse::fusion {
namespace {

const Dim N = Dim::symbol("N");

TEST(ShapeRefinement, SplitsAndMergesMeetInTheFinestShape) {
  EXPECT_EQ(common_refinement({N, 32, 128}, {N, 32, 4, 32}), (Shape{N, 32, 4, 32}));
  EXPECT_EQ(common_refinement({6, 4}, {2, 12}), (Shape{2, 3, 4}));
  EXPECT_EQ(common_refinement({1, 24, 1}, {24}), (Shape{24}));  // size-1 dims drop out
  EXPECT_EQ(common_refinement({1}, {1, 1}), Shape{});
}

TEST(ShapeRefinement, NoneWhereTheBoundariesCross) {
  EXPECT_FALSE(common_refinement({4, 6}, {6, 4}));
  EXPECT_FALSE(common_refinement({4, 6}, {4, 5}));      // different element counts
  EXPECT_FALSE(common_refinement({N, 8}, {8, N}));      // symbolic dims that do not line up
  EXPECT_FALSE(common_refinement({N * 2}, {N, 2}));     // not provable symbolically
}

TEST(ShapeRefinement, GroupsNameTheRefinedAxesOfEachAxis) {
  const auto groups = refinement_groups({N, 32, 128}, {N, 32, 4, 32});
  ASSERT_TRUE(groups);
  EXPECT_EQ(*groups, (std::vector<std::vector<int64_t>>{{0}, {1}, {2, 3}}));
  const auto with_ones = refinement_groups({1, 12, 1}, {3, 4});
  ASSERT_TRUE(with_ones);
  EXPECT_EQ(*with_ones, (std::vector<std::vector<int64_t>>{{}, {0, 1}, {}}));
  EXPECT_FALSE(refinement_groups({12}, {5, 2}));
}

}  // namespace
}  // namespace tilefuse::fusion
