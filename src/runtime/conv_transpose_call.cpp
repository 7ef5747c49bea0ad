#include "runtime/conv_transpose_call.h"

#include <algorithm>
#include <vector>

#include "ir/ops/window_geometry.h"
#include "runtime/scratch_buffer.h"

namespace tilefuse::runtime {

namespace {

// The sizes of one ConvTranspose, 1-D taken as 2-D of height 1.
struct TransposedShape {
  int64_t batch = 0, channels = 0, groups = 1, group_maps = 0;  // maps per group
  int64_t height = 1, width = 0, out_h = 1, out_w = 0;
  int64_t kh = 1, kw = 0, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, pad_top = 0, pad_left = 0;

  int64_t taps() const { return kh * kw; }
  int64_t positions() const { return height * width; }
  int64_t group_channels() const { return channels / groups; }
  int64_t maps() const { return group_maps * groups; }
  int64_t rows() const { return group_maps * taps(); }  // of one group's product
};

TransposedShape transposed_shape(const Node& node, const Tensor& x, const Tensor& w, const Tensor& out) {
  auto spatial = [](const std::vector<int64_t>& s) { return std::vector<int64_t>(s.begin() + 2, s.end()); };
  const std::vector<int64_t> in_sp = spatial(x.shape()), out_sp = spatial(out.shape()), kernel = spatial(w.shape());
  const WindowGeometry g = window_geometry(node, in_sp.size(), kernel);
  const std::vector<int64_t> pads = transposed_begin_pads(g, in_sp, out_sp);
  const size_t last = in_sp.size() - 1;  // the width axis; a 2-D window's first axis is the height
  TransposedShape s;
  s.batch = x.shape()[0], s.channels = x.shape()[1], s.groups = node.attr_int("group", 1), s.group_maps = w.shape()[1];
  s.width = in_sp[last], s.out_w = out_sp[last], s.kw = kernel[last];
  s.stride_w = g.strides[last], s.dil_w = g.dilations[last], s.pad_left = pads[last];
  if (last == 1) {
    s.height = in_sp[0], s.out_h = out_sp[0], s.kh = kernel[0];
    s.stride_h = g.strides[0], s.dil_h = g.dilations[0], s.pad_top = pads[0];
  }
  return s;
}

// Inputs i in [0, n) whose output i * stride + shift lies in [0, size).
std::pair<int64_t, int64_t> landing_inputs(int64_t shift, int64_t stride, int64_t n, int64_t size) {
  const int64_t lo = shift >= 0 ? 0 : (-shift + stride - 1) / stride;
  const int64_t hi = size - 1 - shift < 0 ? 0 : (size - 1 - shift) / stride + 1;
  return {lo, std::min(n, std::max(lo, hi))};
}

// Output planes [first, end) (image-major): each starts at its bias and gathers every tap's row
// of `taps` (per image and group, rows() rows of positions()) at the tap's place.
void scatter_taps(const TransposedShape& s, const float* taps, const float* bias, float* out, int64_t first,
                  int64_t end) {
  for (int64_t plane = first; plane < end; ++plane) {
    const int64_t n = plane / s.maps(), m = plane % s.maps(), group = m / s.group_maps, map = m % s.group_maps;
    float* o = out + plane * s.out_h * s.out_w;
    std::fill(o, o + s.out_h * s.out_w, bias != nullptr ? bias[m] : 0.0f);
    const float* rows = taps + ((n * s.groups + group) * s.rows() + map * s.taps()) * s.positions();
    for (int64_t i = 0; i < s.kh; ++i) {
      const auto [h_lo, h_hi] = landing_inputs(i * s.dil_h - s.pad_top, s.stride_h, s.height, s.out_h);
      for (int64_t j = 0; j < s.kw; ++j) {
        const int64_t shift = j * s.dil_w - s.pad_left;
        const auto [w_lo, w_hi] = landing_inputs(shift, s.stride_w, s.width, s.out_w);
        const float* tap = rows + (i * s.kw + j) * s.positions();
        for (int64_t h = h_lo; h < h_hi; ++h) {
          float* row = o + (h * s.stride_h - s.pad_top + i * s.dil_h) * s.out_w;
          const float* src = tap + h * s.width;
          if (s.stride_w == 1) {
            for (int64_t w = w_lo; w < w_hi; ++w) row[w + shift] += src[w];
          } else {
            for (int64_t w = w_lo; w < w_hi; ++w) row[w * s.stride_w + shift] += src[w];
          }
        }
      }
    }
  }
}

class ConvTransposeCall : public LibraryCall {
 public:
  ConvTransposeCall(const Node& node, const GemmBlocking& blocking) : node_(node), blocking_(blocking) {
    const Tensor& w = *node.input(1)->constant;
    const int64_t groups = node.attr_int("group", 1), group_channels = w.shape()[0] / groups;
    const int64_t rows = w.numel() / w.shape()[0];  // maps per group * taps
    for (int64_t g = 0; g < groups; ++g) {
      // Element (r, c) of the transpose is w[g * group_channels + c][r].
      const MatrixView transposed{w.data<float>() + g * group_channels * rows, 1, rows};
      packed_.push_back(PackedOperand::pack_a(transposed, rows, group_channels));
    }
  }

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    const Tensor& x = in[0];
    Tensor& out = outs[0];
    const float* bias = in.size() > 2 && in[2].defined() ? in[2].data<float>() : nullptr;
    const TransposedShape s = transposed_shape(node_, x, in[1], out);
    float* taps = taps_.floats(static_cast<size_t>(s.batch * s.groups * s.rows() * s.positions()));
    problems_.clear();
    for (int64_t n = 0; n < s.batch; ++n) {
      for (int64_t g = 0; g < s.groups; ++g) {
        GemmProblem p;
        p.m = s.rows(), p.n = s.positions(), p.k = s.group_channels();
        p.a.view = {in[1].data<float>(), 1, s.rows()};  // unused: the packed transpose is read
        p.a.packed = &packed_[static_cast<size_t>(g)];
        p.b.view = {x.data<float>() + (n * s.channels + g * s.group_channels()) * s.positions(), s.positions(), 1};
        p.c = taps + (n * s.groups + g) * s.rows() * s.positions(), p.ldc = s.positions();
        problems_.push_back(p);
      }
    }
    sgemm(team, problems_, blocking_);
    team.run(s.batch * s.maps(), [&](int, int64_t first, int64_t end) {
      scatter_taps(s, taps, bias, out.data<float>(), first, end);
    });
  }

  size_t packed_bytes() const override { return total_bytes(packed_); }
  std::vector<const PackedOperand*> packed_operands() const override { return operands_of(packed_); }

 private:
  const Node& node_;
  GemmBlocking blocking_;
  std::vector<PackedOperand> packed_;  // per group, the weight's transpose
  std::vector<GemmProblem> problems_;
  ScratchBuffer taps_;                 // every tap's contribution, kept between runs
};

}  // namespace

bool conv_transpose_call_supports(const Node& node) {
  if (node.op != "ConvTranspose" || !own_gemm_engine()) return false;
  const Value* x = node.input(0);
  const Value* w = node.input(1);
  const bool bias_ok = !node.has_input(2) || node.input(2)->dtype == DType::f32;
  return x->dtype == DType::f32 && w->dtype == DType::f32 && w->constant.has_value() && bias_ok &&
         (w->rank() == 3 || w->rank() == 4) && x->rank() == w->rank() && node.outputs[0]->dtype == DType::f32;
}

std::unique_ptr<LibraryCall> prepare_conv_transpose_call(const Node& node, const GemmBlocking& blocking) {
  return std::make_unique<ConvTransposeCall>(node, blocking);
}

}  // namespace tilefuse::runtime
