// GridSample of an f32 [N, C, H, W] image by an f32 grid into the executor's buffer (spatial
// transformers, optical-flow warps, deformable attention's sampling). The taps of a block of 64
// output positions (the reference's pixels and weights: reference/grid_sample_taps.h) are
// computed once, then every channel's plane is sampled through them: the block's outputs are
// contiguous in each channel, and the positions' taps are shared by all channels. Blocks are
// spread over the team. The reference kernel, converting every element through double, took
// 2.2 ms for a [1, 32, 64, 64] image and grid, ONNX Runtime 0.53.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

// f32 image and grid, every mode and padding the reference kernel takes.
bool grid_sample_call_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_grid_sample_call(const Node& node);

}  // namespace tilefuse::runtime
