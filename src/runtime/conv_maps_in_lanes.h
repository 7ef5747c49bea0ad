// A convolution with few input channels (a network's stem: the 3 channels of an image) computed
// directly, with output maps in the lanes of a vector (AVX-512): each output position's maps are
// a sum over (channel, tap) of a weight vector (the tap's weight for 16 maps) times the input
// value there, broadcast; the sums are transposed back into the maps' planes, with FusedConv's
// residual and activation applied on the way.
//
// Implicit GEMM (conv_gemm.h) packs the unfolded input, and with a depth of 27 to 147 and 16 to
// 96 maps each packed value is used by few multiplications: MobileNetV3's 3x3 stem spent as
// long packing as multiplying. Here nothing is packed; the input rows a band of outputs needs
// are copied once into a zero-padded block.
#pragma once

#include <cstdint>

#include "ir/ops/fused_activation.h"
#include "runtime/conv_unfold.h"

namespace tilefuse::runtime {

// True where conv_maps_in_lanes runs the shape and is the faster: the CPU has AVX-512, one group,
// at most 4 input channels, and weights that stay in L2 (every output reads all of them: ViT's
// 16x16 patch embedding, with 768 maps and 2.4 MB of weights, ran 2.4x slower here than as a GEMM).
bool conv_maps_in_lanes_suits(const ConvShape& s);

// Output rows [first_row, end_row) of the batch (row r: image r / out_h, output row r % out_h)
// of out = activation(conv(x, w) + bias + residual). `bias` and `residual` (laid out as out) may
// be null; `activation` may be the identity.
void conv_maps_in_lanes(const ConvShape& s, const float* x, const float* w, const float* bias, const float* residual,
                        const FusedActivation& activation, float* out, int64_t first_row, int64_t end_row);

}  // namespace tilefuse::runtime
