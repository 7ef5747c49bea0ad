// Conv and ConvTranspose over three spatial dims (video and volumetric models: 3-D U-Nets, I3D,
// SlowFast) as 2-D steps on the GEMM engine, one output depth slice at a time: the input slices
// under the slice's kd depth taps, every channel's, are copied side by side as kd times as many
// channels (zeros where a tap has no slice: the padding, or for a ConvTranspose a tap that falls
// between input slices), so the 3-D weight with its depth taps next to the input channels
// multiplies them as one 2-D Conv (conv_gemm.h) or ConvTranspose (conv_transpose_call.h),
// weights packed once. The reference kernel took 879 ms for a Conv of a [1, 16, 16, 64, 64]
// input by 32 3x3x3 filters (ONNX Runtime 29), 22 ms for a ConvTranspose of [1, 16, 16, 32, 32]
// by 2x2x2 taps at stride 2 (ONNX Runtime 2).
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

// Conv, FusedConv (its residual too) and ConvTranspose of f32 [N, C, D, H, W] with a constant
// weight, explicit pads (no auto_pad), known C, D, H and W.
bool conv3d_slices_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_conv3d_slices(const Node& node, const GemmBlocking& blocking);

}  // namespace tilefuse::runtime
