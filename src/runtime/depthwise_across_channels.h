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

#include "ir/ops/fused_activation.h"
#include "runtime/conv_unfold.h"

namespace tilefuse::runtime {

// True where depthwise_across_channels runs the shape and is the faster of the two: the CPU has
// AVX-512, and the kernel is wider than 3, the stride is not 1 or the output rows are shorter
// than 28 (measured on MobileNetV3's and ConvNeXt's depthwise layers, bench/README.md).
bool depthwise_across_channels_suits(const ConvShape& s);

// As depthwise_conv (depthwise_conv.h): out[plane] = activation(bias[c] + the depthwise
// convolution of x[plane]) for the planes [first_plane, end_plane) of the batch's N * C
// (c = plane % C), 16 at a time; `bias` may be null. Any kernel size, stride, dilation and
// padding.
void depthwise_across_channels(const ConvShape& s, const float* x, const float* w, const float* bias, float* out,
                               int64_t first_plane, int64_t end_plane, const FusedActivation& activation = {});

// A band of channels-last input rows, as a 1x1 convolution computes them for the depthwise one
// that reads them (pointwise_depthwise_call.h): laid out [row][column][channel], `step` floats
// (a multiple of 16, 64-byte aligned) from one column to the next, `columns` columns per row
// (channels_last_columns: the input at [pad_left, pad_left + width), zeros around), and row 0
// the first row the window of output row `first_row` reads (zeros where that is padding).
struct ChannelsLastBand {
  const float* data = nullptr;  // at channel c0 of row 0, column 0
  int64_t columns = 0, step = 0;
  int64_t first_row = 0, rows = 0;  // the output rows [first_row, first_row + rows) it computes
};

// Columns per row of a ChannelsLastBand for `s`.
int64_t channels_last_columns(const ConvShape& s);

// The band's output rows of channels [c0, c0 + n) (n <= 16) of one image, with `bias`, then
// `activation`, into their planes: `out` is channel c0's plane (planes s.positions() apart).
// AVX-512 only (as depthwise_across_channels).
void depthwise_channels_last(const ConvShape& s, const ChannelsLastBand& band, const float* w, const float* bias,
                             int64_t c0, int n, const FusedActivation& activation, float* out);

}  // namespace tilefuse::runtime
