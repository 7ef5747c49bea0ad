#include "runtime/resize_call.h"

#include <vector>

#include "ir/error.h"
#include "reference/resize_taps.h"

namespace tilefuse::runtime {

namespace {

// One axis's taps, at most two per output coordinate: value = w0 * in[i0] + w1 * in[i1], the
// second read only where w1 is not 0. The reference's nearest and linear taps lie in the input.
struct TwoTaps {
  std::vector<int64_t> i0, i1;
  std::vector<float> w0, w1;

  static TwoTaps of(const reference::AxisTaps& taps) {
    TwoTaps t;
    for (const auto& list : taps) {
      const reference::ResizeTap first = list.at(0);
      const reference::ResizeTap second = list.size() > 1 ? list[1] : reference::ResizeTap{first.index, 0.0};
      t.i0.push_back(first.index);
      t.i1.push_back(second.index);
      t.w0.push_back(static_cast<float>(first.weight));
      t.w1.push_back(static_cast<float>(second.weight));
    }
    return t;
  }
};

// The tensor as [planes, height, width]: the resized axes are the last two (a rank-1 tensor is
// one row).
struct PlaneShape {
  int64_t planes = 1, height = 1, width = 1, out_h = 1, out_w = 1;
  bool operator==(const PlaneShape&) const = default;
};

PlaneShape plane_shape(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  PlaneShape s;
  const size_t rank = in.size();
  s.width = in[rank - 1], s.out_w = out[rank - 1];
  if (rank >= 2) s.height = in[rank - 2], s.out_h = out[rank - 2];
  for (size_t d = 0; d + 2 < rank; ++d) s.planes *= in[d];
  return s;
}

class ResizeCall : public LibraryCall {
 public:
  explicit ResizeCall(const Node& node) : node_(node), params_(reference::resize_params(node)) {}

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    const Tensor& x = in[0];
    Tensor& out = outs[0];
    if (out.numel() == 0) return;
    if (x.numel() == 0) {
      fail_user("{}: an empty input has no values to resize into {}", node_.describe(), out.summary());
    }
    const PlaneShape s = plane_shape(x.shape(), out.shape());
    if (!(s == shape_) || rows_.i0.empty()) lay_out_taps(x, in, s);
    const float* src = x.data<float>();
    float* dst = out.data<float>();
    team.run(s.planes * s.out_h, [&](int, int64_t first, int64_t end) {
      for (int64_t r = first; r < end; ++r) output_row(s, src, dst, r / s.out_h, r % s.out_h);
    });
  }

 private:
  // The taps of both axes for shape `s`, recomputed only when the shapes change.
  void lay_out_taps(const Tensor& x, const std::vector<Tensor>& in, const PlaneShape& s) {
    const reference::ResizeAxes axes = reference::resize_axes(node_, x, in);
    const int64_t rank = x.rank();
    for (int64_t d = 0; d + 2 < rank; ++d) {
      if (axes.out_shape[d] != x.shape()[d] || axes.scale[d] != 1.0) {
        fail_internal("{}: axis {} is resized; the runtime's Resize resizes only the last two", node_.describe(), d);
      }
    }
    auto axis = [&](int64_t d, int64_t in_size, int64_t out_size) {
      if (d < 0) return TwoTaps::of(reference::AxisTaps(1, {{0, 1.0}}));
      return TwoTaps::of(
          reference::axis_taps(params_, in_size, out_size, axes.scale[d], axes.roi_start[d], axes.roi_end[d]));
    };
    rows_ = axis(rank - 2, s.height, s.out_h);
    columns_ = axis(rank - 1, s.width, s.out_w);
    shape_ = s;
  }

  // Output row oy of one plane: the input rows under it blended (where the lower one counts),
  // then each output column from its taps of that row.
  void output_row(const PlaneShape& s, const float* x, float* out, int64_t plane, int64_t oy) const {
    thread_local std::vector<float> blended;
    const float* plane_in = x + plane * s.height * s.width;
    const float* row = plane_in + rows_.i0[oy] * s.width;
    const float w1 = rows_.w1[oy];
    if (w1 != 0.0f) {
      blended.resize(static_cast<size_t>(s.width));
      const float w0 = rows_.w0[oy];
      const float* lower = plane_in + rows_.i1[oy] * s.width;
      for (int64_t c = 0; c < s.width; ++c) blended[c] = w0 * row[c] + w1 * lower[c];
      row = blended.data();
    } else if (rows_.w0[oy] != 1.0f) {
      blended.resize(static_cast<size_t>(s.width));
      const float w0 = rows_.w0[oy];
      for (int64_t c = 0; c < s.width; ++c) blended[c] = w0 * row[c];
      row = blended.data();
    }
    float* o = out + (plane * s.out_h + oy) * s.out_w;
    for (int64_t c = 0; c < s.out_w; ++c) {
      const float first = columns_.w0[c] * row[columns_.i0[c]];
      o[c] = columns_.w1[c] != 0.0f ? first + columns_.w1[c] * row[columns_.i1[c]] : first;
    }
  }

  const Node& node_;
  reference::ResizeParams params_;
  PlaneShape shape_;
  TwoTaps rows_, columns_;
};

// True where a Resize leaves every axis but the last two as they are: sizes or scales known when
// the model is compiled say so, or the output's leading dims are the input's own.
bool resizes_only_last_two(const Node& node) {
  const Value* x = node.input(0);
  const Value* y = node.outputs[0];
  for (int64_t d = 0; d + 2 < x->rank(); ++d) {
    if (!(x->shape[d] == y->shape[d])) return false;
  }
  if (!node.attr_ints("axes").empty()) return false;  // opset 18's axes: left to the reference
  const bool opset10 = node.inputs.size() == 2;
  const Value* scales = node.input(opset10 ? 1 : 2);
  if (scales != nullptr && scales->constant && scales->constant->numel() > 0) {
    for (int64_t d = 0; d + 2 < x->rank(); ++d) {
      if (scales->constant->get_f64(d) != 1.0) return false;
    }
    return true;
  }
  return !opset10 && node.input(3) != nullptr;  // sizes: the leading dims matched above
}

}  // namespace

bool resize_call_supports(const Node& node) {
  if (node.op != "Resize" || node.input(0)->dtype != DType::f32 || node.input(0)->rank() < 1) return false;
  const std::string mode = node.attr_string("mode", "nearest");
  const std::string transform =
      node.attr_string("coordinate_transformation_mode", node.inputs.size() == 2 ? "asymmetric" : "half_pixel");
  if ((mode != "nearest" && mode != "linear") || transform == "tf_crop_and_resize") return false;
  return resizes_only_last_two(node);
}

std::unique_ptr<LibraryCall> prepare_resize_call(const Node& node) { return std::make_unique<ResizeCall>(node); }

}  // namespace tilefuse::runtime
