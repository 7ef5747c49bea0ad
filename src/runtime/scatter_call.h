// ScatterND, ScatterElements (and the older Scatter) into the executor's buffer. A decoder's
// KV-cache update is a ScatterND of one position's keys into the cache, and scatter_add exports
// as ScatterElements; the reference kernels cloned the data into a fresh tensor and wrote one
// element at a time on one thread.
//
// The output is the data, copied over the team, with the updates written or combined (reduction
// none, add, mul, max or min) in the reference's order wherever two updates meet the same
// element, so results are bit-for-bit the reference's on any team size:
// - ScatterND: each worker owns a range of the output, copies the data into it, and applies the
//   parts of every slice, in index order, that fall inside it. One pass; the slices may overlap.
// - ScatterElements: updates with different coordinates off the axis never meet, so the work is
//   split over those coordinates, and each part walks the axis in index order.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

// Data of any 1, 2, 4 or 8-byte type for reduction none, f32/f64/i32/i64 for the others; i32 or
// i64 indices. ScatterND without batch dims (the ONNX op has none).
bool scatter_call_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_scatter_call(const Node& node);

}  // namespace tilefuse::runtime
