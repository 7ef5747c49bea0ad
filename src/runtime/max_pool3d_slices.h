// MaxPool over three spatial dims (3-D U-Nets, video models) as 2-D MaxPools of depth maxima: a
// window's maximum is the maximum over its kh x kw positions of the maximum down its kd slices,
// so per output depth slice, every channel's kd input slices are first reduced to one (NaN wins,
// as in the reference), then pooled as a 2-D map by the runtime's MaxPool (pool_call.h). The
// reference kernel took 44 ms for a [1, 32, 32, 64, 64] input, ONNX Runtime 1.0.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

// f32 [N, C, D, H, W] without the Indices output, explicit pads (no auto_pad), known C, D, H, W.
bool max_pool3d_slices_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_max_pool3d_slices(const Node& node);

}  // namespace tilefuse::runtime
