// CumSum into the executor's buffer (RoBERTa's position ids are a cumulative sum of the padding
// mask; torch.cumsum exports): the running sum along one axis, inclusive or exclusive, forward
// or reversed, with the reference's rules (floats accumulate in double, integers in int64 with
// wrap-around). The lines along the axis are spread over the team; neighbouring lines are
// neighbouring columns, so a worker's loads stay within the same cache lines.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

// f32, f64, i32 and i64 data with a constant or run-time axis.
bool cumsum_call_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_cumsum_call(const Node& node);

}  // namespace tilefuse::runtime
