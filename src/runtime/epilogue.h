// A convolution's epilogue (FusedConv: y = activation(y + residual)) over outputs already
// written, for the paths whose kernels do not take it in their store: the depthwise kernels and
// OpenBLAS. The GEMM engine's micro-kernels apply it on each tile instead (TileStore).
#pragma once

#include <cstdint>

#include "ir/ops/fused_activation.h"

namespace tilefuse::runtime {

// y[i] = act(y[i] + residual[i]) for i < count; residual may be null.
void apply_epilogue(float* y, const float* residual, int64_t count, const FusedActivation& act);

}  // namespace tilefuse::runtime
