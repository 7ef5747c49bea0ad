// Conv over three spatial dims (video and volumetric models: 3-D U-Nets, I3D, SlowFast) as 2-D
// convolutions on the GEMM engine, one output depth slice at a time: the kd input slices under
// the slice, every channel's, are copied side by side as kd times as many channels (zeros for
// slices in the padding), so the 3-D weight [M, C/g, kd, kh, kw] read as [M, C/g * kd, kh, kw]
// multiplies them as one 2-D convolution (conv_gemm.h), weights packed once. The reference
// kernel took 879 ms for a [1, 16, 16, 64, 64] input and 32 3x3x3 filters, ONNX Runtime 29.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

// Conv and FusedConv (without a residual) of f32 [N, C, D, H, W] with a constant weight, explicit
// pads (no auto_pad), known C, D, H and W.
bool conv3d_slices_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_conv3d_slices(const Node& node, const GemmBlocking& blocking);

}  // namespace tilefuse::runtime
