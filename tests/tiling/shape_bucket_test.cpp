// Shape buckets: each symbol rounds up to a power of two (0 and 1 stay), the key lists the
// symbols in the kernel's order, and sizes in one bucket share it.
#include "tiling/shape_bucket.h"

#include <gtest/gtest.h>

namespace tilefuse::tiling {
namespace {

TEST(ShapeBucket, RoundsEachSymbolUpToAPowerOfTwo) {
  const ShapeBucket b = shape_bucket({"S", "B"}, {129, 1});
  EXPECT_EQ(b.key, "S=256;B=1");
  EXPECT_EQ(b.sizes, (SymbolBindings{{"S", 256}, {"B", 1}}));
  EXPECT_EQ(shape_bucket({"N"}, {0}).key, "N=0");
  EXPECT_EQ(shape_bucket({"N"}, {128}).key, "N=128");
  EXPECT_EQ(shape_bucket({"N"}, {3}).key, "N=4");
}

TEST(ShapeBucket, SizesOfOneBucketShareItsKey) {
  for (int64_t n = 4097; n <= 8192; n += 97) EXPECT_EQ(shape_bucket({"N"}, {n}).key, "N=8192") << n;
  EXPECT_EQ(shape_bucket({"N"}, {8193}).key, "N=16384");
  EXPECT_EQ(shape_bucket({}, {}).key, "");
}

}  // namespace
}  // namespace tilefuse::tiling
