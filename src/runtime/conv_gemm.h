// Conv (1-D and 2-D, f32) as matrix multiplies: per image and group, the [M/group, C/group *
// kernel] weight (packed once when constant) times the unfolded input, a [C/group * kernel,
// output positions] matrix that is built panel by panel inside the engine's packing routine
// (implicit GEMM) and never written whole; the bias, and a FusedConv's residual and activation,
// are applied in the engine's epilogue, and all images and groups are one engine call. A 1x1 convolution with stride 1 and no padding
// multiplies the input directly. A depthwise convolution runs directly (depthwise_conv.h), its
// channels spread over the team. Without AVX2: explicit im2col and OpenBLAS.
#pragma once

#include <memory>

#include "runtime/conv_unfold.h"
#include "runtime/library_call.h"

namespace tilefuse::runtime {

// The sizes of a convolution with the window of `node`'s attributes: input, weight and output
// dims `x`, `w` and `out` ([N, C, H, W] or [N, C, W]).
ConvShape conv_shape(const Node& node, const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                     const std::vector<int64_t>& out);

// True for a Conv this path runs: f32 throughout, 1 or 2 spatial dims.
bool conv_gemm_supports(const Node& node);

// Convolutions that run on the GEMM engine multiply in `precision` (runtime/precision.h).
std::unique_ptr<LibraryCall> prepare_conv_call(const Node& node, const GemmBlocking& blocking,
                                               Precision precision = Precision::f32);

}  // namespace tilefuse::runtime
