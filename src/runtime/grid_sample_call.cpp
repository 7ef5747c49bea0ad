#include "runtime/grid_sample_call.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>

#include "ir/error.h"
#include "reference/grid_sample_taps.h"

namespace tilefuse::runtime {

namespace {

constexpr int64_t kBlock = 64;  // output positions whose taps are computed together

// One position's taps with f32 weights.
struct Taps {
  int count = 0;
  bool nan = false;
  std::array<int64_t, 16> offset{};
  std::array<float, 16> weight{};
};

struct Sizes {
  int64_t batch, channels, height, width, positions;
};

// Output positions [first, end) of image n, every channel.
void sample_block(const reference::GridSampleGeometry& g, const Sizes& s, const float* x, const float* grid, float* out,
                  int64_t n, int64_t first, int64_t end) {
  std::array<Taps, kBlock> block;
  for (int64_t p = first; p < end; ++p) {
    const float* at = grid + (n * s.positions + p) * 2;
    const reference::GridTaps t = reference::grid_taps(g, at[0], at[1]);
    Taps& taps = block[static_cast<size_t>(p - first)];
    taps.count = t.count;
    taps.nan = t.nan;
    for (int k = 0; k < t.count; ++k) {
      taps.offset[static_cast<size_t>(k)] = t.offset[static_cast<size_t>(k)];
      taps.weight[static_cast<size_t>(k)] = static_cast<float>(t.weight[static_cast<size_t>(k)]);
    }
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t c = 0; c < s.channels; ++c) {
    const float* plane = x + (n * s.channels + c) * s.height * s.width;
    float* o = out + (n * s.channels + c) * s.positions;
    for (int64_t p = first; p < end; ++p) {
      const Taps& taps = block[static_cast<size_t>(p - first)];
      const float* w = taps.weight.data();
      const int64_t* at = taps.offset.data();
      float sum = 0.0f;
      if (taps.count == 4) {  // bilinear inside the image: two chains, not one of four adds
        sum = (w[0] * plane[at[0]] + w[1] * plane[at[1]]) + (w[2] * plane[at[2]] + w[3] * plane[at[3]]);
      } else {
        for (int k = 0; k < taps.count; ++k) sum += w[k] * plane[at[k]];
      }
      o[p] = taps.nan ? nan : sum;
    }
  }
}

class GridSampleCall : public LibraryCall {
 public:
  explicit GridSampleCall(const Node& node) : node_(node) {}

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    const Tensor &x = in[0], &grid = in[1];
    Tensor& out = outs[0];
    if (!out.defined()) return;
    if (x.rank() != 4 || grid.rank() != 4 || grid.shape()[3] != 2 || grid.shape()[0] != x.shape()[0]) {
      fail_user("{}: input {} and grid {} must be [N, C, H, W] and [N, H_out, W_out, 2]", node_.describe(),
                x.summary(), grid.summary());
    }
    const Sizes s{x.shape()[0], x.shape()[1], x.shape()[2], x.shape()[3], grid.shape()[1] * grid.shape()[2]};
    if (out.numel() != s.batch * s.channels * s.positions) {
      fail_user("{}: input {} and grid {} do not fill the planned output {}", node_.describe(), x.summary(),
                grid.summary(), out.summary());
    }
    if (out.numel() == 0) return;
    if (s.height == 0 || s.width == 0) {  // every tap lies outside
      std::memset(out.raw(), 0, out.nbytes());
      return;
    }
    const reference::GridSampleGeometry g = reference::GridSampleGeometry::of(node_, s.height, s.width);
    const int64_t blocks_per_image = (s.positions + kBlock - 1) / kBlock;
    team.run(s.batch * blocks_per_image, [&](int, int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const int64_t n = b / blocks_per_image, first = (b % blocks_per_image) * kBlock;
        sample_block(g, s, x.data<float>(), grid.data<float>(), out.data<float>(), n, first,
                     std::min(first + kBlock, s.positions));
      }
    });
  }

 private:
  const Node& node_;
};

}  // namespace

bool grid_sample_call_supports(const Node& node) {
  if (node.op != "GridSample" || node.inputs.size() != 2 || node.input(0) == nullptr || node.input(1) == nullptr) {
    return false;
  }
  const std::string mode = node.attr_string("mode", "bilinear");
  const bool known = mode == "nearest" || mode == "bilinear" || mode == "linear" || mode == "bicubic" || mode == "cubic";
  return known && node.input(0)->dtype == DType::f32 && node.input(1)->dtype == DType::f32 &&
         node.input(0)->rank() == 4;
}

std::unique_ptr<LibraryCall> prepare_grid_sample_call(const Node& node) {
  return std::make_unique<GridSampleCall>(node);
}

}  // namespace tilefuse::runtime
