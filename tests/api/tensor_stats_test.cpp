#include "api/tensor_stats.h"

#include <cmath>

#include <gtest/gtest.h>

namespace tilefuse::api {
namespace {

TEST(TensorStats, IgnoresNaNsButCountsThem) {
  Tensor t = Tensor::from_vector(DType::f32, {4}, std::vector<double>{1.0, NAN, -3.0, 5.0});
  TensorStats s = compute_stats(t);
  EXPECT_EQ(s.count, 3);
  EXPECT_EQ(s.nan_count, 1);
  EXPECT_EQ(s.min, -3.0);
  EXPECT_EQ(s.max, 5.0);
  EXPECT_DOUBLE_EQ(s.mean, 1.0);
}

TEST(TensorStats, EmptyTensorHasNoValues) {
  EXPECT_EQ(compute_stats(Tensor(DType::i64, {0, 3})).count, 0);
}

}  // namespace
}  // namespace tilefuse::api
