// The length of one sliced axis under ONNX Slice semantics, for constant and symbolic dims.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/sym_expr.h"

namespace tilefuse::ops {

// Number of elements Slice keeps along an axis of length `dim` for `start`, `end` and a
// non-zero `step`.
//
// With a constant dim and constant bounds this is exactly the ONNX rule: a negative bound has
// the dim added, then bounds are clamped ([0, dim] for a positive step, [-1, dim - 1] for a
// negative one). With a symbolic dim or bound the clamping cannot be decided at compile time;
// bounds are then taken to be in range, except that |bound| >= 2^31 means "to the end" (the
// INT64_MAX / INT64_MIN PyTorch writes for open slices). So x[:, 1:] on a dim S has S - 1 elements,
// and a run time S < 1 is a shape error found when the symbols are bound, not a silent result.
Dim slice_dim(const Dim& dim, const Dim& start, const Dim& end, int64_t step);

// What slice_dim takes to hold when its answer is symbolic: each returned expression is >= 0 at
// run time exactly when the bounds lie in the axis and do not cross, so that its formula is
// ONNX's count (x[1:] on an empty axis, x[-3:] on an axis of 2 would break it). The graph
// records them as assumptions that every run's shapes are checked against.
std::vector<Dim> slice_dim_assumptions(const Dim& dim, const Dim& start, const Dim& end, int64_t step);

// ONNX's normalisation of one constant bound against a constant dim: add dim to a negative
// bound, then clamp to [0, dim] (positive step) or [-1, dim - 1] (negative step).
int64_t clamp_slice_bound(int64_t bound, int64_t dim, int64_t step);

}  // namespace tilefuse::ops
