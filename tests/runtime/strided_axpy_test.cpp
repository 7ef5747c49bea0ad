// strided_axpy against the obvious loop, for every length around the vector width (full
// vectors, masked tails, the stride-2 path's early stop) and strides 1-3.
#include "runtime/strided_axpy.h"

#include <gtest/gtest.h>

#include <vector>

namespace tilefuse::runtime {
namespace {

TEST(StridedAxpy, MatchesTheObviousLoop) {
  for (int64_t stride : {1, 2, 3}) {
    for (int64_t n = 0; n <= 50; ++n) {
      // x holds exactly the elements read, so reading past them would show under ASan.
      std::vector<float> x(static_cast<size_t>(n == 0 ? 0 : (n - 1) * stride + 1));
      for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 13) - 6.0f;
      std::vector<float> y(static_cast<size_t>(n) + 1, 0.5f), want = y;
      for (int64_t i = 0; i < n; ++i) want[i] += 1.5f * x[i * stride];
      strided_axpy(1.5f, x.data(), stride, y.data(), n);
      EXPECT_EQ(y, want) << "n=" << n << " stride=" << stride;  // y[n] must stay untouched
    }
  }
}

}  // namespace
}  // namespace tilefuse::runtime
