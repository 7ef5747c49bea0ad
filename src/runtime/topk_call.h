// TopK of f32, f64, i32 and i64 data into the executor's buffers (a mixture-of-experts router's
// top experts per token, a detector's best proposals, a classifier's top 5, argsort): per line
// along the axis, the k largest (or smallest) values and their indices, in the reference's order:
// NaN first, then by value, equal values by index. Per line, a heap of the k best seen so far (a
// full sort where k is more than an eighth of the line), lines spread over the team.
// The reference kernel sorted every line whole and allocated both outputs on each run.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

// f32, f64, i32 or i64 data, any axis, K constant or computed.
bool topk_call_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_topk_call(const Node& node);

}  // namespace tilefuse::runtime
