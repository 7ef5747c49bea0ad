// Common refinements of shapes: what lets a kernel span a view. A Reshape keeps every element's
// flat index, so the ops before and after it can share one iteration space when both shapes are
// regroupings of a finer one: [N, 32, 128] and [N, 32, 4, 32] are both regroupings of
// [N, 32, 4, 32] (128 = 4 x 32). Strides over either shape then spread over the finer axes.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/shape.h"

namespace tilefuse::fusion {

// The finest shape both `a` and `b` are regroupings of (every dim of either is a product of
// consecutive dims of the result), size-1 dims dropped. nullopt if there is none ([4, 6] and
// [6, 4]), if the element counts differ, or if symbolic dims do not let it be proven.
std::optional<Shape> common_refinement(const Shape& a, const Shape& b);

// For each axis of `shape`, the consecutive axes of its refinement `r` it is made of (none for a
// size-1 axis); nullopt if `r` does not refine `shape`.
std::optional<std::vector<std::vector<int64_t>>> refinement_groups(const Shape& shape, const Shape& r);

}  // namespace tilefuse::fusion
