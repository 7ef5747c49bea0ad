// A 3x3 convolution with stride 1 by Winograd's minimal filtering F(2x2, 3x3) (Lavin and Gray,
// "Fast Algorithms for Convolutional Neural Networks", 2015). Each 4x4 input tile d and 3x3 filter
// g are transformed into 16 values (V = B^T d B, U = G g G^T); a 2x2 output tile is
// A^T (sum over channels of U * V) A. The sums over channels are 16 GEMMs (maps x channels times
// channels x tiles) on the GEMM engine, with 2.25x fewer multiplications than the implicit-GEMM
// convolution (16 products per 4 outputs instead of 36). The transforms add and subtract only,
// and multiply by 1/2 in G: the results stay within the reference's tolerance (the tests check it).
//
// The filters are transformed and packed once (16 packed A operands). A run splits each image's
// tiles into blocks and, where there are too few blocks for the team, the maps into chunks; a
// worker transforms a block's input straight into B panels, runs the 16 GEMMs on its own, and
// transforms the products back into the output with FusedConv's bias, residual and activation.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"
#include "runtime/conv_algorithm.h"
#include "runtime/precision.h"

namespace tilefuse::runtime {

// Whether a Conv or FusedConv is computed by WinogradConv: 2-D, one group, a constant 3x3 f32
// weight with at least 32 channels and 16 maps (below that the GEMMs are too thin to gain),
// strides and dilations 1, on a CPU with AVX2 or AVX-512 (conv_winograd_isa.h), and, where
// the output's shape is static, at least 32 tiles of 2 x 2 outputs per run. Unless
// TILEFUSE_CONV_WINOGRAD=0, which keeps every convolution on the implicit GEMM (for comparisons;
// a model package must then be loaded with the same setting, its packed weights differ).
bool winograd_suits(const Node& node);

class WinogradConv : public ConvAlgorithm {
 public:
  // `w`: the constant weight, [maps, channels, 3, 3]. In bf16 (the effective precision,
  // runtime/precision.h) the transformed filters and inputs are multiplied as bf16 pairs.
  WinogradConv(const Tensor& w, Precision precision);

  // `s` is a 3x3, stride-1 shape.
  void run(ThreadTeam& team, const ConvShape& s, const float* x, const float* bias, const float* residual,
           const FusedActivation& activation, float* out, const GemmBlocking& blocking) override;

  // The 16 transformed filters.
  const std::vector<PackedOperand>& packed() const override { return u_; }

 private:
  int64_t maps_ = 0, channels_ = 0;
  bool bf16_ = false;
  std::vector<PackedOperand> u_;  // per transformed position xi = 4 i + j: maps x channels, packed as A
};

}  // namespace tilefuse::runtime
