// RoiAlign of an f32 feature map into the executor's buffer (Faster and Mask R-CNN's box and mask
// heads): regions spread over the team, each region's samples (the reference's pixels and
// weights: reference/roi_align_samples.h) computed once for all its channels, then every
// channel's bins summed from them in f32. The reference kernel, in double through element
// conversions, took 41 ms for 300 regions of a [1, 256, 50, 50] map, ONNX Runtime 18.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

// f32 map and regions, i64 batch indices, either mode and coordinate transformation.
bool roi_align_call_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_roi_align_call(const Node& node);

}  // namespace tilefuse::runtime
