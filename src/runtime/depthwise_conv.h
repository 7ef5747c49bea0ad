// A depthwise convolution (one input and one output channel per group, NCHW) computed
// directly: a GEMM of one row per group is all call overhead, and unfolding copies the input
// kernel-size times. On AVX-512 most shapes run across channels (depthwise_across_channels.h);
// the rest run plane by plane, as described here.
//
// The common shapes (square 3x3, 5x5 and 7x7 kernels with equal strides of 1 or 2, no dilation,
// which is every depthwise layer of MobileNet, EfficientNet and ConvNeXt) run register-blocked
// on AVX-512 or AVX2 (depthwise_blocks.inc): a block of output rows by up to 64 output columns
// (AVX2: 8) stays in registers while every input row under it is loaded once per kernel column
// and added, with the kernel column's weights, into each output row it touches. The rest go
// through a padded copy of each plane.
#pragma once

#include <cstdint>

#include "ir/ops/fused_activation.h"
#include "runtime/conv_unfold.h"

namespace tilefuse::runtime {

// out[plane] = activation(bias[c] + the depthwise convolution of x[plane]) for the planes
// [first_plane, end_plane) of the batch's N * C planes (c = plane % C); `bias` may be null.
// Across channels (depthwise_across_channels.h) where that suits the shape, otherwise plane by
// plane. The activation is applied to each block of outputs while it is in cache: a second pass
// over 16 planes of 112 x 112 would read them back from L3.
void depthwise_conv(const ConvShape& s, const float* x, const float* w, const float* bias, float* out,
                    int64_t first_plane, int64_t end_plane, const FusedActivation& activation = {});

// The same plane by plane, whatever the shape (bench/gemm/depthwise_ab.cpp compares the two).
void depthwise_planes(const ConvShape& s, const float* x, const float* w, const float* bias, float* out,
                      int64_t first_plane, int64_t end_plane, const FusedActivation& activation = {});

// True where depthwise_conv runs the shape register-blocked (the CPU has AVX-512 or AVX2 too).
bool depthwise_register_blocked(const ConvShape& s);

}  // namespace tilefuse::runtime
