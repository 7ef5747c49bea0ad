#include "runtime/conv_gemm.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>

#include "ir/ops/window_geometry.h"

namespace tilefuse::runtime {

namespace {

// A convolution's sizes with 1-D treated as 2-D of height 1.
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

ConvShape conv_shape(const Node& node, const Tensor& x, const Tensor& w, const Tensor& out) {
  const bool one_d = x.rank() == 3;
  auto spatial = [](const std::vector<int64_t>& s) { return std::vector<int64_t>(s.begin() + 2, s.end()); };
  std::vector<int64_t> in_sp = spatial(x.shape()), out_sp = spatial(out.shape());
  WindowGeometry g = window_geometry(node, in_sp.size(), spatial(w.shape()));
  std::vector<int64_t> pads = begin_pads(g, in_sp, out_sp);
  ConvShape s{};
  s.batch = x.shape()[0], s.channels = x.shape()[1], s.maps = w.shape()[0], s.groups = node.attr_int("group", 1);
  auto at = [one_d](const std::vector<int64_t>& v, int d, int64_t fallback) { return one_d ? (d == 0 ? fallback : v[0]) : v[d]; };
  s.height = at(in_sp, 0, 1), s.width = at(in_sp, 1, 1);
  s.kh = at(g.kernel, 0, 1), s.kw = at(g.kernel, 1, 1);
  s.out_h = at(out_sp, 0, 1), s.out_w = at(out_sp, 1, 1);
  s.stride_h = at(g.strides, 0, 1), s.stride_w = at(g.strides, 1, 1);
  s.dil_h = at(g.dilations, 0, 1), s.dil_w = at(g.dilations, 1, 1);
  s.pad_top = at(pads, 0, 0), s.pad_left = at(pads, 1, 0);
  return s;
}

// cols[(c * kh + i) * kw + j][oy * out_w + ox] = x[c][oy * sh - pt + i * dh][ox * sw - pl + j * dw], 0 in the padding.
void unfold(const ConvShape& s, const float* x, float* cols) {
  for (int64_t c = 0; c < s.group_channels(); ++c) {
    const float* plane = x + c * s.height * s.width;
    for (int64_t i = 0; i < s.kh; ++i) {
      for (int64_t j = 0; j < s.kw; ++j) {
        float* row = cols + ((c * s.kh + i) * s.kw + j) * s.positions();
        for (int64_t oy = 0; oy < s.out_h; ++oy) {
          const int64_t y = oy * s.stride_h - s.pad_top + i * s.dil_h;
          float* dst = row + oy * s.out_w;
          if (y < 0 || y >= s.height) {
            std::fill(dst, dst + s.out_w, 0.0f);
            continue;
          }
          for (int64_t ox = 0; ox < s.out_w; ++ox) {
            const int64_t xx = ox * s.stride_w - s.pad_left + j * s.dil_w;
            dst[ox] = xx >= 0 && xx < s.width ? plane[y * s.width + xx] : 0.0f;
          }
        }
      }
    }
  }
}

// A depthwise convolution (one input and one output channel per group) directly: a GEMM of one
// row per group is all call overhead, and the unfold copies the input kernel-size times. Each
// kernel tap adds w * shifted input row into the output row; the valid output columns of a tap
// are computed once, so the inner loop has no bounds tests (and vectorises at stride 1).
void depthwise(const ConvShape& s, const float* x, const float* w, const float* bias, float* out) {
  for (int64_t plane = 0; plane < s.batch * s.channels; ++plane) {
    const int64_t c = plane % s.channels;
    const float* src = x + plane * s.height * s.width;
    float* dst = out + plane * s.positions();
    std::fill(dst, dst + s.positions(), bias != nullptr ? bias[c] : 0.0f);
    for (int64_t i = 0; i < s.kh; ++i) {
      for (int64_t j = 0; j < s.kw; ++j) {
        const float wv = w[(c * s.kh + i) * s.kw + j];
        const int64_t shift = j * s.dil_w - s.pad_left;  // input column = ox * stride + shift
        const int64_t lo = shift >= 0 ? 0 : (-shift + s.stride_w - 1) / s.stride_w;
        const int64_t hi = std::min(s.out_w, s.width - shift <= 0 ? 0 : (s.width - 1 - shift) / s.stride_w + 1);
        for (int64_t oy = 0; oy < s.out_h; ++oy) {
          const int64_t y = oy * s.stride_h - s.pad_top + i * s.dil_h;
          if (y < 0 || y >= s.height) continue;
          const float* row = src + y * s.width + shift;
          float* o = dst + oy * s.out_w;
          for (int64_t ox = lo; ox < hi; ++ox) o[ox] += wv * row[ox * s.stride_w];
        }
      }
    }
  }
}

}  // namespace

bool conv_gemm_supports(const Node& node) {
  if (node.op != "Conv" || node.outputs[0]->dtype != DType::f32) return false;
  for (const Value* v : node.inputs) {
    if (v != nullptr && v->dtype != DType::f32) return false;
  }
  const int64_t rank = node.input(0)->rank();
  return rank == 3 || rank == 4;
}

void run_conv_gemm(const Node& node, const std::vector<Tensor>& in, Tensor& out) {
  const Tensor& x = in[0];
  const Tensor& w = in[1];
  const Tensor* bias = in.size() > 2 && in[2].defined() ? &in[2] : nullptr;
  const ConvShape s = conv_shape(node, x, w, out);
  if (s.groups == s.channels && s.maps == s.channels) {
    depthwise(s, x.data<float>(), w.data<float>(), bias ? bias->data<float>() : nullptr, out.data<float>());
    return;
  }
  // One unfolded matrix, reused across runs (its pages are touched once per process).
  thread_local std::vector<float> cols;
  if (!s.pointwise()) cols.resize(static_cast<size_t>(s.rows() * s.positions()));
  const int64_t in_image = s.channels * s.height * s.width, out_image = s.maps * s.positions();
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t g = 0; g < s.groups; ++g) {
      const float* xg = x.data<float>() + n * in_image + g * s.group_channels() * s.height * s.width;
      float* og = out.data<float>() + n * out_image + g * s.group_maps() * s.positions();
      const float* b = s.pointwise() ? xg : cols.data();
      if (!s.pointwise()) unfold(s, xg, cols.data());
      float beta = 0.0f;
      if (bias != nullptr) {
        for (int64_t m = 0; m < s.group_maps(); ++m) {
          std::fill(og + m * s.positions(), og + (m + 1) * s.positions(), bias->data<float>()[g * s.group_maps() + m]);
        }
        beta = 1.0f;
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(s.group_maps()),
                  static_cast<int>(s.positions()), static_cast<int>(s.rows()), 1.0f,
                  w.data<float>() + g * s.group_maps() * s.rows(), static_cast<int>(s.rows()), b,
                  static_cast<int>(s.positions()), beta, og, static_cast<int>(s.positions()));
    }
  }
}

}  // namespace tilefuse::runtime
