// The row kernels against the obvious loops, for every length around the vector width (full
// vectors, masked tails, the stride-2 path's masked last vector) and strides 1-3; strided_max with NaN
// on either side.
#include "runtime/row_kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
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

TEST(StridedMax, MatchesTheObviousLoopAndPropagatesNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t stride : {1, 2, 3}) {
    for (int64_t n = 0; n <= 50; ++n) {
      std::vector<float> x(static_cast<size_t>(n == 0 ? 0 : (n - 1) * stride + 1));
      for (size_t i = 0; i < x.size(); ++i) x[i] = i % 11 == 4 ? nan : static_cast<float>(i % 7) - 3.0f;
      std::vector<float> y(static_cast<size_t>(n) + 1);
      for (size_t i = 0; i < y.size(); ++i) y[i] = i % 13 == 6 ? nan : static_cast<float>(i % 5) - 2.0f;
      std::vector<float> got = y;
      strided_max(x.data(), stride, got.data(), n);
      for (int64_t i = 0; i <= n; ++i) {
        const bool inside = i < n;
        const float xv = inside ? x[i * stride] : 0.0f;
        const bool want_nan = std::isnan(y[i]) || (inside && std::isnan(xv));
        if (want_nan) {
          EXPECT_TRUE(std::isnan(got[i])) << "n=" << n << " stride=" << stride << " i=" << i;
        } else {
          EXPECT_EQ(got[i], inside ? std::max(y[i], xv) : y[i]) << "n=" << n << " stride=" << stride << " i=" << i;
        }
      }
    }
  }
}

TEST(ValidColumns, ClipsToTheInput) {
  EXPECT_EQ(valid_columns(-1, 1, 10, 10).lo, 1);   // column 0 reads padding
  EXPECT_EQ(valid_columns(1, 1, 10, 10).hi, 9);    // the last column reads past the end
  EXPECT_EQ(valid_columns(-3, 2, 10, 6).lo, 2);    // 0*2-3, 1*2-3 < 0
  EXPECT_EQ(valid_columns(-3, 2, 10, 6).hi, 6);
  const ColumnRange none = valid_columns(-50, 1, 10, 5);  // all padding: empty, lo <= hi
  EXPECT_LE(none.lo, none.hi);
  EXPECT_EQ(none.hi - none.lo, 0);
}

}  // namespace
}  // namespace tilefuse::runtime
