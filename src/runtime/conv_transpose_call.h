// ConvTranspose (1-D and 2-D, f32, constant weight) as a product and a scatter. Per image and
// group, the weight's transpose ([maps/group * kernel, channels/group], packed once) times the
// input ([channels/group, positions]) gives every tap's contribution of every input position;
// then each output plane (planes spread over the team) starts at its bias and adds each tap's
// row at that tap's place: input position i lands at i * stride - pad + k * dilation. The
// reference kernel multiplies element by element in double; a U-Net decoder's upsampling
// spent its time there.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

// True where tilefuse's own GEMM runs (AVX2 or AVX-512) and the node is a 1-D or 2-D f32
// ConvTranspose whose weight is a constant.
bool conv_transpose_call_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_conv_transpose_call(const Node& node, const GemmBlocking& blocking);

}  // namespace tilefuse::runtime
