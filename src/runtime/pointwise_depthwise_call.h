// PointwiseDepthwiseConv (passes/pointwise_depthwise_folding.h): a 1x1 convolution expanding C
// channels to E, and the depthwise convolution over its output, computed a band of output rows
// at a time so that the expanded tensor never leaves the worker's L2.
//
// For output rows [r0, r1) the depthwise convolution reads expanded rows [lo, hi) (its window,
// clipped to the image). A worker computes those rows of the expansion for its channels with
// the GEMM engine (the packed weight times the input's rows, bias and activation in the store)
// into its scratch, runs the depthwise kernel (depthwise_conv.h) over that band as if it were
// an image of hi - lo rows, then applies the depthwise activation and copies the band's rows into
// the output. Bands overlap by the window's extent less the stride: those rows of the
// expansion are computed twice, a few percent of a cheap GEMM (its depth is C). Work items are
// (image, band, channel part): a band is sized to about kBandBytes of expanded rows, and the
// channels are split into parts only when there are too few bands to keep the team busy.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

// The expanded rows of one band (all channels), in bytes: with the input rows under them and the
// band's output, about half of a 1 MiB L2.
inline constexpr int64_t kBandBytes = int64_t{384} << 10;

// True where PointwiseDepthwiseConv runs as this call: the CPU runs tilefuse's GEMM engine
// (own_gemm_engine()), and the node's weights are constant (the pass only forms it so).
bool pointwise_depthwise_supported(const Node& node);

// The 1x1 convolution multiplies in `precision` (runtime/precision.h: bf16 products where the
// CPU has them); the depthwise one is f32.
std::unique_ptr<LibraryCall> prepare_pointwise_depthwise_call(const Node& node, const GemmBlocking& blocking,
                                                              Precision precision = Precision::f32);

}  // namespace tilefuse::runtime
