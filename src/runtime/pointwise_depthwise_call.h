// PointwiseDepthwiseConv (passes/pointwise_depthwise_folding.h): a 1x1 convolution expanding C
// channels to E, and the depthwise convolution over its output, computed a band of output rows
// at a time so that the expanded tensor never leaves the worker's L2.
//
// For output rows [r0, r1) the depthwise convolution reads expanded rows [lo, hi) (its window,
// clipped to the image). A worker computes those rows of the expansion for its channels with
// the GEMM engine (bias and activation in the store) into its scratch, convolves them at once
// and writes only the depthwise output. Bands overlap by the window's extent less the stride:
// those rows of the expansion are computed twice, a few percent of a GEMM only C deep.
//   - AVX-512: channels-last. Each expanded row is the product of the input row's positions (as
//     rows) with one part of at most 64 channels of the weight (packed once per part), written
//     into a zero-padded [row][column][channel] block that depthwise_channels_last reads 16
//     channels a vector, with no transpose in (depthwise_across_channels.h). Work items are
//     (image, part, band), a band about kBandBytes of one part's rows.
//   - Otherwise: planes. The band's rows of every channel in the part are expanded as planes of
//     hi - lo rows (the engine, or OpenBLAS without AVX2) and convolved by depthwise_conv as an
//     image of that height. Work items are (image, band, part), parts only where there are too
//     few bands to keep the team busy.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

// The expanded rows of one band (of its channels), in bytes: with the input rows under them and
// the band's output, about half of a 1 MiB L2.
inline constexpr int64_t kBandBytes = int64_t{384} << 10;

// True where PointwiseDepthwiseConv runs as this call: 2-D, f32, both weights constant (as the
// pass forms it), on any CPU.
bool pointwise_depthwise_supported(const Node& node);

// The 1x1 convolution multiplies in `precision` (runtime/precision.h: bf16 products where the
// CPU has them); the depthwise one is f32.
std::unique_ptr<LibraryCall> prepare_pointwise_depthwise_call(const Node& node, const GemmBlocking& blocking,
                                                              Precision precision = Precision::f32);

}  // namespace tilefuse::runtime
