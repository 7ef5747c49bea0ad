#include "runtime/pool_call.h"

#include <algorithm>
#include <limits>

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

void max_pool(const PoolShape& s, const float* x, float* out, int64_t first_plane, int64_t end_plane) {
  for (int64_t plane = first_plane; plane < end_plane; ++plane) {
    const float* src = x + plane * s.height * s.width;
    for (int64_t oy = 0; oy < s.out_h; ++oy) {
      float* o = out + (plane * s.out_h + oy) * s.out_w;
      std::fill(o, o + s.out_w, -std::numeric_limits<float>::infinity());
      for_each_tap_run(s, oy, [&](int64_t, int64_t offset, int64_t lo, int64_t hi) {
        strided_max(src + offset, s.stride_w, o + lo, hi - lo);
      });
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
