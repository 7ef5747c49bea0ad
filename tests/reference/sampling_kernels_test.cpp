// GridSample and OneHot against hand-computed values, with the edges the ONNX node tests skip:
// grid points beyond the image in each padding mode, non-finite grid values, an empty image,
// and OneHot's negative, out-of-range and fractional indices.
#include <cmath>
#include <limits>

#include "reference_test_util.h"

namespace tilefuse::testing {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A 2 x 3 image [[1, 2, 3], [4, 5, 6]], sampled at one point per grid entry.
Tensor image() { return f32({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6}); }
Tensor grid_of(const std::vector<double>& xy) { return f32({1, 1, static_cast<int64_t>(xy.size() / 2), 2}, xy); }

TEST(GridSample, BilinearWithCornersAligned) {
  // align_corners: x = -1 .. 1 spans columns 0 .. 2, y rows 0 .. 1. (0, 0) is the centre: 3.5;
  // (0.5, -1) is column 1.5 of row 0: 2.5.
  const Tensor y = run1("GridSample", {image(), grid_of({0, 0, 0.5, -1, 1, 1})}, {{"align_corners", int64_t{1}}});
  expect_tensor(y, DType::f32, {1, 1, 1, 3}, {3.5, 2.5, 6});
}

TEST(GridSample, PointsBeyondTheImageInEachPaddingMode) {
  // Without aligned corners x = 1.5 is column 3.25 (past the last, 2), y = 0 is row 0.5.
  const Tensor grid = grid_of({1.5, 0});
  // zeros: taps at columns 3 and 4 read 0.
  expect_tensor(run1("GridSample", {image(), grid}), DType::f32, {1, 1, 1, 1}, {0});
  // border: the coordinate clamps to column 2: the mean of 3 and 6.
  expect_tensor(run1("GridSample", {image(), grid}, {{"padding_mode", std::string("border")}}), DType::f32, {1, 1, 1, 1},
                {4.5});
  // reflection about the edge at 2.5: column 1.75, between 2|3 and 5|6 -> 3.25 and 0.5 of a row.
  expect_tensor(run1("GridSample", {image(), grid}, {{"padding_mode", std::string("reflection")}}), DType::f32,
                {1, 1, 1, 1}, {4.25});
}

TEST(GridSample, NonFiniteGridValuesGiveNaN) {
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor y = run1("GridSample", {image(), grid_of({kNaN, 0, 0, inf})});
  expect_tensor(y, DType::f32, {1, 1, 1, 2}, {kNaN, kNaN});  // as PyTorch
  // Border padding clamps an infinite coordinate to the edge: row 1 at column 1.
  const Tensor z = run1("GridSample", {image(), grid_of({0, inf})}, {{"padding_mode", std::string("border")}});
  expect_tensor(z, DType::f32, {1, 1, 1, 1}, {5});
}

TEST(GridSample, AnEmptyImageGivesZeros) {
  const Tensor y = run1("GridSample", {f32({1, 2, 0, 3}, {}), grid_of({0, 0, 0.5, 0.5})},
                        {{"padding_mode", std::string("border")}});
  expect_tensor(y, DType::f32, {1, 2, 1, 2}, {0, 0, 0, 0});
}

TEST(OneHot, NegativeOutOfRangeAndFractionalIndices) {
  // depth 3 on the last axis: -1 is class 2, 3 and -4 are out of range (all off), 1.7 is class 1.
  const Tensor y = run1("OneHot", {f32({4}, {-1, 3, -4, 1.7}), f32({}, {3}), f32({2}, {0, 5})});
  expect_tensor(y, DType::f32, {4, 3}, {0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 5, 0});
  // axis 0: the classes become the first axis.
  const Tensor z = run1("OneHot", {i64s({2, 0}), i64({}, {3}), f32({2}, {-1, 1})}, {{"axis", int64_t{0}}});
  expect_tensor(z, DType::f32, {3, 2}, {-1, 1, -1, -1, 1, -1});
}

}  // namespace
}  // namespace tilefuse::testing
