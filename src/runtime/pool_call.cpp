#include "runtime/pool_call.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "ir/ops/window_geometry.h"
#include "runtime/row_kernels.h"

namespace tilefuse::runtime {

namespace {

// A pool's sizes with 1-D treated as 2-D of height 1.
struct PoolShape {
  int64_t planes, height, width, kh, kw, out_h, out_w, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
};

PoolShape pool_shape(const Node& node, const Tensor& x, const Tensor& out) {
  auto spatial = [](const std::vector<int64_t>& s) { return std::vector<int64_t>(s.begin() + 2, s.end()); };
  const std::vector<int64_t> in_sp = spatial(x.shape()), out_sp = spatial(out.shape());
  const WindowGeometry g = window_geometry(node, in_sp.size(), node.attr_ints("kernel_shape"));
  const std::vector<int64_t> pads = begin_pads(g, in_sp, out_sp);
  const bool one_d = in_sp.size() == 1;
  auto at = [one_d](const std::vector<int64_t>& v, int d, int64_t fallback) { return one_d ? (d == 0 ? fallback : v[0]) : v[d]; };
  return {x.shape()[0] * x.shape()[1], at(in_sp, 0, 1), at(in_sp, 1, 1), at(g.kernel, 0, 1), at(g.kernel, 1, 1),
          at(out_sp, 0, 1), at(out_sp, 1, 1), at(g.strides, 0, 1), at(g.strides, 1, 1), at(g.dilations, 0, 1),
          at(g.dilations, 1, 1), at(pads, 0, 0), at(pads, 1, 0)};
}

// A max over a window is a max over its rows of the max down its column: per output row, the
// rows under the window are first reduced into one row (contiguous vector maxima), then each
// kernel column takes one strided pass over that row, kw passes instead of kh * kw.
void max_pool(const PoolShape& s, const float* x, float* out, int64_t first_plane, int64_t end_plane) {
  thread_local std::vector<float> column_max;
  column_max.resize(static_cast<size_t>(s.width));
  for (int64_t plane = first_plane; plane < end_plane; ++plane) {
    const float* src = x + plane * s.height * s.width;
    for (int64_t oy = 0; oy < s.out_h; ++oy) {
      float* o = out + (plane * s.out_h + oy) * s.out_w;
      std::fill(o, o + s.out_w, -std::numeric_limits<float>::infinity());
      bool any_row = false;
      for (int64_t i = 0; i < s.kh; ++i) {
        const int64_t y = oy * s.stride_h - s.pad_top + i * s.dil_h;
        if (y < 0 || y >= s.height) continue;
        const float* row = src + y * s.width;
        if (any_row) {
          strided_max(row, 1, column_max.data(), s.width);
        } else {
          std::copy(row, row + s.width, column_max.begin());
        }
        any_row = true;
      }
      if (!any_row) continue;  // the window lies in the padding: -inf, as the reference
      for (int64_t j = 0; j < s.kw; ++j) {
        const int64_t shift = j * s.dil_w - s.pad_left;  // input column = ox * stride + shift
        const auto [lo, hi] = valid_columns(shift, s.stride_w, s.width, s.out_w);
        if (hi > lo) strided_max(column_max.data() + lo * s.stride_w + shift, s.stride_w, o + lo, hi - lo);
      }
    }
  }
}

class PoolCall : public LibraryCall {
 public:
  explicit PoolCall(const Node& node) : node_(node) {}

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    const PoolShape s = pool_shape(node_, in[0], outs[0]);
    team.run(s.planes, [&](int, int64_t first, int64_t end) {
      max_pool(s, in[0].data<float>(), outs[0].data<float>(), first, end);
    });
  }

 private:
  const Node& node_;
};

}  // namespace

bool pool_call_supports(const Node& node) {
  if (node.op != "MaxPool" || node.outputs.size() != 1) return false;
  const int64_t rank = node.input(0)->rank();
  return node.input(0)->dtype == DType::f32 && (rank == 3 || rank == 4);
}

std::unique_ptr<LibraryCall> prepare_pool_call(const Node& node) { return std::make_unique<PoolCall>(node); }

}  // namespace tilefuse::runtime
