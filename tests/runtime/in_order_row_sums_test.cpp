// f64 rows summed eight at a time in vector lanes against the plain in-order loop, bit for bit:
// groups of eight rows and a remainder, rows with and without a tail after whole blocks of eight,
// rows apart by more than their length, empty rows.
#include "runtime/in_order_row_sums.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "runtime/cpu_isa.h"

namespace tilefuse::runtime {
namespace {

TEST(InOrderRowSums, AddsEachRowInItsOwnOrder) {
  if (vector_isa() != VectorIsa::avx512) GTEST_SKIP() << "no AVX-512 here: sum_rows_in_order declines";
  std::mt19937_64 gen(3);
  std::uniform_real_distribution<double> dist(-1e3, 1e3);
  for (int64_t n : {1, 7, 8, 9, 17, 64}) {
    for (int64_t length : {0, 1, 7, 8, 9, 21, 512}) {
      const int64_t step = length + 3;
      std::vector<double> rows(n * step);
      for (double& x : rows) x = dist(gen) / 3.0;  // thirds: every addition rounds
      std::vector<double> acc(n), want(n);
      for (int64_t j = 0; j < n; ++j) acc[j] = want[j] = dist(gen);
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t t = 0; t < length; ++t) want[j] += rows[j * step + t];
      }
      ASSERT_TRUE(sum_rows_in_order(acc.data(), rows.data(), step, n, length));
      EXPECT_EQ(std::memcmp(acc.data(), want.data(), n * sizeof(double)), 0) << n << " rows of " << length;
    }
  }
}

}  // namespace
}  // namespace tilefuse::runtime
