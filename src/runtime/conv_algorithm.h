// A way of computing a convolution that is chosen when its call is prepared, with the weights
// packed for it (conv_gemm.cpp's ConvCall holds one where one applies): Winograd's F(2x2, 3x3)
// (conv_winograd.h) and the product with positions as rows (conv_transposed_gemm.h).
#pragma once

#include <vector>

#include "ir/ops/fused_activation.h"
#include "runtime/conv_unfold.h"
#include "runtime/sgemm.h"
#include "runtime/thread_team.h"

namespace tilefuse::runtime {

class ConvAlgorithm {
 public:
  virtual ~ConvAlgorithm() = default;

  // out = activation(conv(x, w) + bias + residual) for the shape `s`, whose maps and channels are
  // the weight's. `bias` and `residual` (laid out as out) may be null.
  virtual void run(ThreadTeam& team, const ConvShape& s, const float* x, const float* bias, const float* residual,
                   const FusedActivation& activation, float* out, const GemmBlocking& blocking) = 0;

  // The weights as packed for it (a model package stores them).
  virtual const std::vector<PackedOperand>& packed() const = 0;
};

}  // namespace tilefuse::runtime
