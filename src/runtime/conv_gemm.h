// Conv (1-D and 2-D, f32) as matrix multiplies: the input is unfolded (im2col) into a
// [C/group * kernel, output positions] matrix per image and group, which the GEMM engine
// multiplies by the [M/group, C/group * kernel] weight (packed once when constant), with the
// bias added in the engine's epilogue; all images and groups are one engine call. A 1x1
// convolution with stride 1 and no padding multiplies the input directly. A depthwise
// convolution runs as direct loops, its channels spread over the team.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

// True for a Conv this path runs: f32 throughout, 1 or 2 spatial dims.
bool conv_gemm_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_conv_call(const Node& node, const GemmBlocking& blocking);

}  // namespace tilefuse::runtime
