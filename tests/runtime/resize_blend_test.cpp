// The Resize loops' tables: which output columns of an upsampling by 2 take the doubled loop (all
// but the edge ones, whose taps are clamped), with which taps; none where the scale is not 2 or
// the taps drift (align_corners); and the row blend's skipped taps of weight 0.
#include "runtime/resize_blend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace tilefuse::runtime {
namespace {

AxisTable columns(const std::string& mode, const std::string& transform, int64_t in, int64_t out) {
  reference::ResizeParams p{mode, transform, "floor"};
  const double scale = static_cast<double>(out) / static_cast<double>(in);
  return AxisTable::of(reference::axis_taps(p, in, out, scale, 0.0, 1.0), in);
}

TEST(DoubledColumns, LinearHalfPixelDoublesAllButTheEdges) {
  const DoubledColumns d = DoubledColumns::of(columns("linear", "half_pixel", 16, 32), 16);
  EXPECT_EQ(d.first, 1);
  EXPECT_EQ(d.end, 15);
  ASSERT_EQ(d.taps[0], 2);
  ASSERT_EQ(d.taps[1], 2);
  // Output 2k sits at input k - 0.25, output 2k + 1 at k + 0.25.
  EXPECT_EQ(d.offset[0][0], -1);
  EXPECT_EQ(d.weight[0][0], 0.25f);
  EXPECT_EQ(d.offset[0][1], 0);
  EXPECT_EQ(d.weight[0][1], 0.75f);
  EXPECT_EQ(d.offset[1][0], 0);
  EXPECT_EQ(d.weight[1][0], 0.75f);
}

TEST(DoubledColumns, NearestAsymmetricDoublesTheWholeRow) {
  const DoubledColumns d = DoubledColumns::of(columns("nearest", "asymmetric", 12, 24), 12);
  EXPECT_EQ(d.first, 0);
  EXPECT_EQ(d.end, 12);
  EXPECT_EQ(d.taps[0], 1);
  EXPECT_EQ(d.taps[1], 1);
}

TEST(DoubledColumns, NoneWhereTheTapsDriftOrTheScaleIsNotTwo) {
  const DoubledColumns drift = DoubledColumns::of(columns("linear", "align_corners", 16, 32), 16);
  EXPECT_EQ(drift.end - drift.first, 1);  // only the middle pair's own taps
  const DoubledColumns triple = DoubledColumns::of(columns("linear", "half_pixel", 16, 48), 16);
  EXPECT_EQ(triple.first, triple.end);
}

TEST(BlendRows, SkipsTapsOfWeightZero) {
  const float inf = std::numeric_limits<float>::infinity();
  const float a[3] = {1, 2, 3}, b[3] = {inf, inf, inf}, c[3] = {10, 20, 30};
  const float* rows[3] = {a, b, c};
  const float weights[3] = {0.5f, 0.0f, 0.25f};
  float out[4] = {-1, -1, -1, -1};
  blend_rows(rows, weights, 3, 3, out);
  EXPECT_EQ(out[0], 3.0f);
  EXPECT_EQ(out[1], 6.0f);
  EXPECT_EQ(out[2], 9.0f);
  EXPECT_EQ(out[3], 0.0f);  // what the columns' taps of weight 0 read
}

}  // namespace
}  // namespace tilefuse::runtime
