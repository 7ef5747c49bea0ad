// A convolution with few input channels (a network's stem: the 3 channels of an image), or one
// of small groups (RegNet, ResNeXt), computed directly, with output maps in the lanes of a
// vector (AVX-512 or AVX2, conv_maps_in_lanes_isa.h): each output position's maps are a sum over (channel, tap) of a weight vector
// (the tap's weight for 16 maps) times the input value there, broadcast; the sums are transposed
// back into the maps' planes, with FusedConv's residual and activation applied on the way. A
// group is a convolution of its own: its channels in, its maps out.
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

// True where conv_maps_in_lanes runs the shape and is the faster: the CPU has AVX2, weights
// (a group's) that stay in L2 (every output reads all of them: ViT's 16x16 patch embedding, with
// 768 maps and 2.4 MB of weights, ran 2.4x slower here than as a GEMM), and either one group of
// at most 4 input channels (a stem; with AVX2 only, one of at most 16 maps or of 49 taps and
// more) or groups of more than one channel whose maps fill most of their vectors (RegNet,
// ResNeXt: 8, 16, 32 or 48 maps a group; a GEMM per group and image had 16 rows of maps and a
// few positions).
bool conv_maps_in_lanes_suits(const ConvShape& s);

// The work items conv_maps_in_lanes splits: output rows of every image, for every group (item
// g * batch * out_h + n * out_h + oy).
int64_t conv_maps_in_lanes_items(const ConvShape& s);

// The weight ([maps, group channels, kh, kw]) and bias (may be null) as conv_maps_in_lanes reads
// them, into `laid_out` (maps_in_lanes_weight_floats of them, 64-byte aligned): per group, every
// tap's weights for the group's maps ([channel][tap][maps padded to 16]), then its biases. Laid
// out once for constant weights: per run and group it was a quarter of RegNetX's 7 x 7 grouped
// layers.
int64_t maps_in_lanes_weight_floats(const ConvShape& s);
void lay_out_maps_in_lanes_weights(const ConvShape& s, const float* w, const float* bias, float* laid_out);

// Items [first_item, end_item) of out = activation(conv(x, w) + bias + residual), the weight
// and bias laid out by maps_in_lanes_weights. `residual` (laid out as out) may be null;
// `activation` may be the identity.
void conv_maps_in_lanes(const ConvShape& s, const float* x, const float* weights, const float* residual,
                        const FusedActivation& activation, float* out, int64_t first_item, int64_t end_item);

}  // namespace tilefuse::runtime
