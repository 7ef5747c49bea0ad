// A convolution with few output positions (a deep layer's 7 x 7 maps) as the transposed product
// out^T = unfold(x)^T w^T: the output positions are the GEMM's rows (12 per micro-kernel tile,
// with 4- and 8-row tiles for the rest) and the maps its columns (32 per tile). The implicit GEMM
// (conv_gemm.h) has them the other way round, and 49 positions there are a full 32-column tile
// and one of 17: a quarter of the multiplications are padding. As rows they are four 12-row
// tiles and a 4-row one. The product goes to a scratch matrix (positions x maps), which is
// transposed into the output planes with FusedConv's residual and activation; the bias is the
// GEMM's column bias. Images of a batch are multiplied together, their positions stacked as rows
// (up to 256 of them): a batch of 3 at 2 x 2 positions is one 12-row tile, not three 4-row ones.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"
#include "runtime/conv_algorithm.h"
#include "runtime/precision.h"

namespace tilefuse::runtime {

// Whether a Conv or FusedConv is computed by TransposedConvGemm: 2-D, one group, a constant f32
// weight with more than 4 channels (fewer is a stem: conv_maps_in_lanes.h), output maps of a
// static size of at most 256 positions (the batch may be symbolic), on AVX-512, and positions as
// rows waste at least 10% fewer multiplications on padding than positions as columns (judged
// per image).
bool transposed_gemm_suits(const Node& node);

class TransposedConvGemm : public ConvAlgorithm {
 public:
  // `w`: the constant weight, [maps, channels, kh, kw], packed in `precision` (f32 or bf16 pairs:
  // the effective one, runtime/precision.h).
  TransposedConvGemm(const Tensor& w, Precision precision);

  void run(ThreadTeam& team, const ConvShape& s, const float* x, const float* bias, const float* residual,
           const FusedActivation& activation, float* out, const GemmBlocking& blocking) override;

  // The weight, transposed and packed as the B operand.
  const std::vector<PackedOperand>& packed() const override { return w_; }

 private:
  std::vector<PackedOperand> w_;  // one: depth (channels x kernel) x maps
  std::vector<float> cols_;       // one image's unfolded input (depth x positions), reused across runs
  std::vector<float> product_;    // positions x maps, reused across runs
};

}  // namespace tilefuse::runtime
