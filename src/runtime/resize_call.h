// Resize of f32 tensors whose resized axes are among the last three (images and feature maps:
// what segmentation heads and FPNs upsample; volumes: 3-D U-Nets' trilinear upsampling), nearest,
// linear or cubic (super-resolution, torch's bicubic interpolate), with any coordinate
// transformation but tf_crop_and_resize, as direct loops on the team: per output row, the input
// rows under it (up to four per resized axis above the last) blended once (contiguous,
// vectorised), then each output column from its taps of the blended row. The geometry (which
// input coordinates each output reads, with what weights) is the reference kernel's own
// (reference/resize_taps.h), so both read the same inputs; a tap of weight 0 is not read, as
// there, so a NaN or inf beside an exact sample does not spread. The reference kernel's
// per-element walk took 0.67 ms for LR-ASPP's [1, 5, 64, 64] output, three times ONNX Runtime's
// whole model; its bicubic [1, 3, 512, 512] output took 88 ms, a trilinear [1, 16, 32, 64, 64]
// one 190 ms.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

bool resize_call_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_resize_call(const Node& node);

}  // namespace tilefuse::runtime
