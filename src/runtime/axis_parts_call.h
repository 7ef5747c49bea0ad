// Split and Concat into the executor's buffers: both copy between a whole tensor and its parts
// along one axis, which in row-major order is one contiguous run per part and outer index
// (memcpy, the outer rows spread over the team), where the reference kernels allocate every
// result and copy element by element. GPT-2 splits its fused QKV projection and Llama
// concatenates its rotary halves this way in every layer. Any dtype; the parts' sizes are the
// planned shapes.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

bool axis_parts_call_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_axis_parts_call(const Node& node);

}  // namespace tilefuse::runtime
