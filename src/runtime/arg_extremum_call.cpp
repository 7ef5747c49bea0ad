#include "runtime/arg_extremum_call.h"

#include <algorithm>

#include "ir/error.h"

namespace tilefuse::runtime {

namespace {

// Kept columns one unit scans together when the axis is not the innermost.
constexpr int64_t kColumnTile = 256;

// Whether v replaces the best so far (best_v not NaN): a NaN always does, ties only for `last`.
template <bool is_max> bool replaces(float v, float best_v, bool last) {
  return v != v || (is_max ? v > best_v : v < best_v) || (last && v == best_v);
}

// out[c] = the extremum's index along n rows of stride `stride`, for columns [0, count) of x.
template <bool is_max>
void scan(const float* x, int64_t n, int64_t stride, int64_t count, bool last, int64_t* out) {
  float best_v[kColumnTile];
  for (int64_t c = 0; c < count; ++c) best_v[c] = x[c], out[c] = 0;
  for (int64_t k = 1; k < n; ++k) {
    const float* row = x + k * stride;
    for (int64_t c = 0; c < count; ++c) {
      if (best_v[c] == best_v[c] && replaces<is_max>(row[c], best_v[c], last)) best_v[c] = row[c], out[c] = k;
    }
  }
}

// The innermost axis: one contiguous row per output element.
template <bool is_max> int64_t scan_row(const float* x, int64_t n, bool last) {
  int64_t best = 0;
  float best_v = x[0];
  for (int64_t k = 1; k < n && best_v == best_v; ++k) {
    if (replaces<is_max>(x[k], best_v, last)) best = k, best_v = x[k];
  }
  return best;
}

class ArgExtremumCall : public LibraryCall {
 public:
  explicit ArgExtremumCall(const Node& node) : node_(node), is_max_(node.op == "ArgMax") {}

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    Tensor& out = outs[0];
    if (!out.defined()) return;
    const Tensor& x = in[0];
    const int64_t rank = x.rank();
    int64_t axis = node_.attr_int("axis", 0);
    if (axis < -rank || axis >= rank) fail_user("{}: axis {} is out of range for rank {}", node_.describe(), axis, rank);
    if (axis < 0) axis += rank;
    const int64_t n = x.shape()[axis];
    if (n == 0) fail_user("{}: axis {} is empty; there is no extremum to find", node_.describe(), axis);
    int64_t inner = 1;
    for (int64_t d = axis + 1; d < rank; ++d) inner *= x.shape()[d];
    const int64_t outer = x.numel() / (n * inner);
    if (out.numel() != outer * inner) {
      fail_user("{}: {} gives {} indices, but the planned output {} has {}", node_.describe(), x.summary(),
                outer * inner, out.summary(), out.numel());
    }
    const bool last = node_.attr_int("select_last_index", 0) != 0;
    if (is_max_) return run_as<true>(team, x.data<float>(), outer, n, inner, last, out.data<int64_t>());
    run_as<false>(team, x.data<float>(), outer, n, inner, last, out.data<int64_t>());
  }

 private:
  template <bool is_max>
  static void run_as(ThreadTeam& team, const float* x, int64_t outer, int64_t n, int64_t inner, bool last, int64_t* out) {
    if (inner == 1) {
      team.run(outer, [&](int, int64_t first, int64_t end) {
        for (int64_t o = first; o < end; ++o) out[o] = scan_row<is_max>(x + o * n, n, last);
      });
      return;
    }
    const int64_t tiles = (inner + kColumnTile - 1) / kColumnTile;
    team.run(outer * tiles, [&](int, int64_t first, int64_t end) {
      for (int64_t u = first; u < end; ++u) {
        const int64_t o = u / tiles, c0 = u % tiles * kColumnTile;
        scan<is_max>(x + o * n * inner + c0, n, inner, std::min(kColumnTile, inner - c0), last, out + o * inner + c0);
      }
    });
  }

  const Node& node_;
  const bool is_max_;
};

}  // namespace

bool arg_extremum_call_supports(const Node& node) {
  return (node.op == "ArgMax" || node.op == "ArgMin") && node.input(0) != nullptr &&
         node.input(0)->dtype == DType::f32 && node.input(0)->rank() > 0;
}

std::unique_ptr<LibraryCall> prepare_arg_extremum_call(const Node& node) {
  return std::make_unique<ArgExtremumCall>(node);
}

}  // namespace tilefuse::runtime
