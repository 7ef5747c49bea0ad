// Computes a 1x1 convolution and the depthwise convolution that reads it as one op,
// PointwiseDepthwiseConv: the expansion and depthwise stage of an inverted residual block
// (MobileNetV2/V3, EfficientNet, MnasNet). The runtime computes the expanded channels a band of
// rows at a time, in cache, and convolves each band as soon as it exists
// (runtime/pointwise_depthwise_call.h), so the expanded tensor, the largest of the block (six
// times its input), is never written to memory and read back.
//
// Conditions: an f32 Conv or FusedConv with a constant [E, C, 1, 1] weight, stride 1, no
// padding, one group and no residual, whose output only a 2-D depthwise Conv or FusedConv reads
// (a constant [E, 1, kh, kw] weight, group E, no residual) and is not a graph output. Both keep
// their biases and activations. Only where that output is at least `min_expanded_bytes` per
// image: a smaller one stays in cache between the two convolutions anyway, and the 1x1
// convolution alone may be computed faster (positions as rows, conv_transposed_gemm.h).
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace tilefuse::passes {

// The smallest expanded tensor (per image) worth folding: more than a core's L2 (1 MiB here).
inline constexpr int64_t kMinExpandedBytes = int64_t{1} << 20;

// Returns the number of pairs folded; shapes are re-inferred.
int fold_pointwise_depthwise(Graph& graph, int64_t min_expanded_bytes = kMinExpandedBytes);

}  // namespace tilefuse::passes
