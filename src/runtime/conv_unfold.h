// A convolution's geometry and its unfolded (im2col) matrix: row (c, i, j) of the matrix is
// input channel c shifted by kernel tap (i, j), one column per output position. The matrix is
// written whole for OpenBLAS (unfold) or, for tilefuse's own GEMM, packed straight into B
// micro-panels one depth block at a time and never written whole (pack_unfolded: implicit GEMM).
#pragma once

#include <cstdint>

namespace tilefuse::runtime {

// A convolution's sizes, 1-D treated as 2-D of height 1.
struct ConvShape {
  int64_t batch, channels, height, width, maps, groups, kh, kw, out_h, out_w;
  int64_t stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
  int64_t group_channels() const { return channels / groups; }
  int64_t group_maps() const { return maps / groups; }
  int64_t rows() const { return group_channels() * kh * kw; }  // of the unfolded matrix
  int64_t positions() const { return out_h * out_w; }
  bool pointwise() const {
    return kh == 1 && kw == 1 && stride_h == 1 && stride_w == 1 && pad_top == 0 && pad_left == 0 && out_h == height &&
           out_w == width;
  }
};

// cols[(c * kh + i) * kw + j][oy * out_w + ox] = x[c][oy * sh - pt + i * dh][ox * sw - pl + j * dw],
// 0 in the padding; `x` is one image and group's first channel. Rows of `cols` lie `row_stride`
// floats apart (0: s.positions(), packed).
void unfold(const ConvShape& s, const float* x, float* cols, int64_t row_stride = 0);

// Packs the unfolded matrix's rows [k0, k0 + kc) x output positions [col0, col0 + cols) into
// pack_b's panels (sgemm_microkernel.h), the layout and zero padding pack_b gives. Call it only
// when microkernel_supported().
void pack_unfolded(const ConvShape& s, const float* x, int64_t k0, int64_t kc, int64_t col0, int64_t cols,
                   float* dst);

}  // namespace tilefuse::runtime
