// depthwise_across_channels (depthwise_across_channels.h) with AVX2, 8 channels a block: the
// public function runs it where vector_isa() is AVX2. Compiled for AVX2 whatever the build's
// target; call it only where the CPU has it.
#pragma once

#include <cstdint>

#include "ir/ops/fused_activation.h"
#include "runtime/conv_unfold.h"

namespace tilefuse::runtime::avx2 {

void depthwise_across_channels(const ConvShape& s, const float* x, const float* w, const float* bias, float* out,
                               int64_t first_plane, int64_t end_plane, const FusedActivation& activation);

}  // namespace tilefuse::runtime::avx2
