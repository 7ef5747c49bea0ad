#include "runtime/resize_call.h"

#include <algorithm>
#include <vector>

#include "ir/error.h"
#include "reference/resize_taps.h"
#include "runtime/resize_blend.h"

namespace tilefuse::runtime {

namespace {

// The tensor as [volumes, depth, height, width]: the resized axes are the last three at most (a
// rank-1 tensor is one row, a rank-2 one a plane).
struct PlaneShape {
  int64_t volumes = 1, depth = 1, height = 1, width = 1, out_d = 1, out_h = 1, out_w = 1;
  bool operator==(const PlaneShape&) const = default;
};

PlaneShape plane_shape(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  PlaneShape s;
  const size_t rank = in.size();
  s.width = in[rank - 1], s.out_w = out[rank - 1];
  if (rank >= 2) s.height = in[rank - 2], s.out_h = out[rank - 2];
  if (rank >= 3) s.depth = in[rank - 3], s.out_d = out[rank - 3];
  for (size_t d = 0; d + 3 < rank; ++d) s.volumes *= in[d];
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
    if (!(s == shape_) || rows_.index.empty()) lay_out_taps(x, in, s);
    const float* src = x.data<float>();
    float* dst = out.data<float>();
    team.run(s.volumes * s.out_d * s.out_h, [&](int, int64_t first, int64_t end) {
      for (int64_t r = first; r < end; ++r) output_row(s, src, dst, r / (s.out_d * s.out_h), r / s.out_h % s.out_d, r % s.out_h);
    });
  }

 private:
  // The taps of the three axes for shape `s`, recomputed only when the shapes change.
  void lay_out_taps(const Tensor& x, const std::vector<Tensor>& in, const PlaneShape& s) {
    const reference::ResizeAxes axes = reference::resize_axes(node_, x, in);
    const int64_t rank = x.rank();
    for (int64_t d = 0; d + 3 < rank; ++d) {
      if (axes.out_shape[d] != x.shape()[d] || axes.scale[d] != 1.0) {
        fail_internal("{}: axis {} is resized; the runtime's Resize resizes only the last three", node_.describe(), d);
      }
    }
    auto axis = [&](int64_t d, int64_t in_size, int64_t out_size) {
      const int64_t zero_index = in_size;  // rows: a tap skipped; columns: the 0.0f after the row
      if (d < 0) return AxisTable::of(reference::AxisTaps(1, {{0, 1.0}}), zero_index);
      return AxisTable::of(
          reference::axis_taps(params_, in_size, out_size, axes.scale[d], axes.roi_start[d], axes.roi_end[d]),
          zero_index);
    };
    slices_ = axis(rank - 3, s.depth, s.out_d);
    rows_ = axis(rank - 2, s.height, s.out_h);
    columns_ = axis(rank - 1, s.width, s.out_w);
    if (slices_.width > 4 || rows_.width > 4 || columns_.width > 4) {
      fail_internal("{}: more than 4 taps per axis", node_.describe());
    }
    doubled_ = DoubledColumns::of(columns_, s.width);
    shape_ = s;
  }

  // Output row oy of slice od of one volume: the input rows under it (the rows' taps in each
  // of the depth taps' slices, up to 16) blended, then each output column from its taps of that
  // row. A row read whole (nearest) is read in place where no column tap needs the 0.0f after a
  // blended row.
  void output_row(const PlaneShape& s, const float* x, float* out, int64_t volume, int64_t od, int64_t oy) const {
    thread_local std::vector<float> blended;
    const size_t z0 = static_cast<size_t>(od * slices_.width), y0 = static_cast<size_t>(oy * rows_.width);
    const float* row = x + ((volume * s.depth + slices_.index[z0]) * s.height + rows_.index[y0]) * s.width;
    const bool one_row = slices_.width == 1 && rows_.width == 1 && slices_.weight[z0] == 1.0f && rows_.weight[y0] == 1.0f;
    if (!one_row || columns_.zero_taps) {
      const float* rows[16];
      float weights[16];
      int64_t count = 0;
      for (int64_t i = 0; i < slices_.width; ++i) {
        // A tap of weight 0 has zero_index, one past the axis: weight 0 skips it, the clamp keeps
        // the pointer inside the input.
        const int64_t z = std::min(slices_.index[z0 + i], s.depth - 1);
        for (int64_t k = 0; k < rows_.width; ++k) {
          const int64_t y = std::min(rows_.index[y0 + k], s.height - 1);
          rows[count] = x + ((volume * s.depth + z) * s.height + y) * s.width;
          weights[count++] = slices_.weight[z0 + i] * rows_.weight[y0 + k];
        }
      }
      blended.resize(static_cast<size_t>(s.width) + 1);
      blend_rows(rows, weights, count, s.width, blended.data());
      row = blended.data();
    }
    blend_columns(row, columns_, doubled_, out + ((volume * s.out_d + od) * s.out_h + oy) * s.out_w, s.out_w);
  }

  const Node& node_;
  reference::ResizeParams params_;
  PlaneShape shape_;
  AxisTable slices_, rows_, columns_;
  DoubledColumns doubled_;
};

// True where a Resize leaves every axis but the last three as they are: sizes or scales known
// when the model is compiled say so, or the output's leading dims are the input's own.
bool resizes_only_last_three(const Node& node) {
  const Value* x = node.input(0);
  const Value* y = node.outputs[0];
  for (int64_t d = 0; d + 3 < x->rank(); ++d) {
    if (!(x->shape[d] == y->shape[d])) return false;
  }
  if (!node.attr_ints("axes").empty()) return false;  // opset 18's axes: left to the reference
  const bool opset10 = node.inputs.size() == 2;
  const Value* scales = node.input(opset10 ? 1 : 2);
  if (scales != nullptr && scales->constant && scales->constant->numel() > 0) {
    for (int64_t d = 0; d + 3 < x->rank(); ++d) {
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
  if ((mode != "nearest" && mode != "linear" && mode != "cubic") || transform == "tf_crop_and_resize") return false;
  return resizes_only_last_three(node);
}

std::unique_ptr<LibraryCall> prepare_resize_call(const Node& node) { return std::make_unique<ResizeCall>(node); }

}  // namespace tilefuse::runtime
