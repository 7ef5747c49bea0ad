// Tile and Pad into the executor's buffers. In both, each output coordinate on each axis reads
// one input coordinate: Tile's wraps around the input's extent, Pad's is shifted by the begin pad
// and, outside the input, is the constant (mode "constant") or an edge, reflected or wrapped
// coordinate. The maps are worked out per axis once per run (a few hundred integers), then each
// output row is copied from its source row over the team, where the reference kernels build a
// source index per element and allocate the result. Any dtype.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

bool axis_map_call_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_axis_map_call(const Node& node);

}  // namespace tilefuse::runtime
