// A depthwise convolution with channels in the lanes of a vector (AVX-512). 16 planes at a time
// are transposed into a zero-padded block laid out [row][column][16 channels]; each output is
// then a sum over the taps of one weight vector (the tap's weight for all 16 channels) times one
// input vector, and the outputs are transposed back into their planes.
//
// depthwise_conv's register-blocked kernel runs along a plane's rows instead. Where the rows are
// short (7 or 14 outputs: MobileNet's and ConvNeXt's last stages) most of its lanes are empty,
// and at stride 2 each of its loads is de-interleaved; across channels every lane is used and
// every input is one aligned load, for two transposes per value.
#pragma once

#include <cstdint>

#include "runtime/conv_unfold.h"

namespace tilefuse::runtime {

// True where depthwise_across_channels runs the shape and is the faster of the two: the CPU has
// AVX-512, and the kernel is wider than 3, the stride is not 1 or the output rows are shorter
// than 28 (measured on MobileNetV3's and ConvNeXt's depthwise layers, bench/README.md).
bool depthwise_across_channels_suits(const ConvShape& s);

// As depthwise_conv (depthwise_conv.h): out[plane] = bias[c] + the depthwise convolution of
// x[plane] for the planes [first_plane, end_plane) of the batch's N * C (c = plane % C), 16 at
// a time; `bias` may be null. Any kernel size, stride, dilation and padding.
void depthwise_across_channels(const ConvShape& s, const float* x, const float* w, const float* bias, float* out,
                               int64_t first_plane, int64_t end_plane);

}  // namespace tilefuse::runtime
