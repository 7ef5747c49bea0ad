// Split into the executor's buffers: each output's rows are copied straight from the input
// (memcpy of contiguous runs, the outer rows spread over the team), where the reference kernel
// allocates every output and copies element by element. GPT-2 splits its fused QKV projection
// this way in every layer. Any dtype; the part sizes are the planned output shapes.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

bool split_call_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_split_call(const Node& node);

}  // namespace tilefuse::runtime
