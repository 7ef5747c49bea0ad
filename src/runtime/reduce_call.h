// The reductions generated kernels leave out (they reduce in float lanes): ReduceSum, ReduceMean,
// ReduceMax, ReduceMin and ReduceProd of i32, i64 and f64 tensors, as in counts of ids and mask
// positions and float64 pipelines. On the reference kernel they walked every element through a
// broadcast index table (7 ms for an int64 [8, 512, 512] row sum, ONNX Runtime 4 ms).
//
// Any set of reduced axes: the input's axes merge into alternating segments of kept and reduced
// axes, and each output element folds its elements in the input's row-major order, as the
// reference does, with the reference's rules: f64 in double, integers in int64 wrapping as numpy
// does, NaN winning Max and Min. Each output element has one worker and one order, so results
// are bit for bit the reference's whatever the team size. Where the last axes are kept, outputs
// are spread over the team in runs of those columns, the columns being the vector lanes of the
// fold; else each output folds contiguous rows.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

// True for those ops and types with constant axes (attribute or input), inputs of rank <= 16.
bool reduce_call_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_reduce_call(const Node& node);

}  // namespace tilefuse::runtime
