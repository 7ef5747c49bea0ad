#include "runtime/topk_call.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>
#include <vector>

#include "ir/error.h"

namespace tilefuse::runtime {

namespace {

struct Lines {
  int64_t n = 0, inner = 1, k = 0;
  bool largest = true;
};

// The reference's order (reference/index_kernels.cpp, a stable sort): NaN first, then larger
// (or smaller) values, equal ones by index. A strict total order, so any sort gives its result.
template <typename T>
struct Ranks {
  bool largest;
  bool operator()(const std::pair<T, int64_t>& a, const std::pair<T, int64_t>& b) const {
    if constexpr (std::is_floating_point_v<T>) {
      const bool nan_a = std::isnan(a.first), nan_b = std::isnan(b.first);
      if (nan_a || nan_b) return nan_a && !nan_b ? true : (nan_a == nan_b && a.second < b.second);
    }
    if (a.first != b.first) return largest ? a.first > b.first : a.first < b.first;
    return a.second < b.second;
  }
};

// The first k of one line (x[0], x[stride], ...) into `ranked`, best first. For a few of many, a
// heap of the k best seen so far, worst on top, which most elements only compare with; past an
// eighth of the line (argsort, sort), a full sort of all, two to three times faster than a heap.
template <typename T>
void rank_line(const T* x, int64_t stride, const Lines& s, std::vector<std::pair<T, int64_t>>& ranked) {
  const Ranks<T> before{s.largest};
  if (s.k * 8 > s.n) {
    ranked.resize(static_cast<size_t>(s.n));
    for (int64_t j = 0; j < s.n; ++j) ranked[static_cast<size_t>(j)] = {x[j * stride], j};
    std::sort(ranked.begin(), ranked.end(), before);
    return;
  }
  ranked.resize(static_cast<size_t>(s.k));
  for (int64_t j = 0; j < s.k; ++j) ranked[static_cast<size_t>(j)] = {x[j * stride], j};
  std::make_heap(ranked.begin(), ranked.end(), before);
  for (int64_t j = s.k; j < s.n; ++j) {
    const std::pair<T, int64_t> candidate{x[j * stride], j};
    if (!before(candidate, ranked.front())) continue;
    std::pop_heap(ranked.begin(), ranked.end(), before);
    ranked.back() = candidate;
    std::push_heap(ranked.begin(), ranked.end(), before);
  }
  std::sort_heap(ranked.begin(), ranked.end(), before);
}

template <typename T>
void top_lines(const T* x, T* values, int64_t* indices, const Lines& s, int64_t begin, int64_t end) {
  thread_local std::vector<std::pair<T, int64_t>> ranked;
  for (int64_t l = begin; l < end; ++l) {
    const int64_t base = (l / s.inner) * s.n * s.inner + l % s.inner;
    const int64_t out_base = (l / s.inner) * s.k * s.inner + l % s.inner;
    rank_line(x + base, s.inner, s, ranked);
    for (int64_t j = 0; j < s.k; ++j) {
      if (values != nullptr) values[out_base + j * s.inner] = ranked[static_cast<size_t>(j)].first;
      if (indices != nullptr) indices[out_base + j * s.inner] = ranked[static_cast<size_t>(j)].second;
    }
  }
}

class TopKCall : public LibraryCall {
 public:
  explicit TopKCall(const Node& node) : node_(node) {}

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    const Tensor& x = in[0];
    const int64_t rank = x.rank();
    int64_t axis = node_.attr_int("axis", -1);
    axis = axis < 0 ? axis + rank : axis;
    Lines s;
    s.n = x.shape()[static_cast<size_t>(axis)];
    for (int64_t d = axis + 1; d < rank; ++d) s.inner *= x.shape()[static_cast<size_t>(d)];
    if (in[1].numel() != 1) fail_user("{}: K must be one value, got {}", node_.describe(), in[1].summary());
    s.k = in[1].get_i64(0);
    if (s.k < 0 || s.k > s.n) {
      fail_user("{}: K = {} must be in [0, {}] (the size of axis {})", node_.describe(), s.k, s.n, axis);
    }
    s.largest = node_.attr_int("largest", 1) != 0;
    if (s.k == 0 || s.n == 0) return;
    int64_t* indices = outs.size() > 1 && outs[1].defined() ? outs[1].data<int64_t>() : nullptr;
    auto over_team = [&](auto element) {
      using T = decltype(element);
      T* values = outs[0].defined() ? outs[0].data<T>() : nullptr;
      team.run(x.numel() / s.n, [&](int, int64_t begin, int64_t end) {
        top_lines(x.data<T>(), values, indices, s, begin, end);
      });
    };
    switch (x.dtype()) {
      case DType::f32: return over_team(float{});
      case DType::f64: return over_team(double{});
      case DType::i32: return over_team(int32_t{});
      case DType::i64: return over_team(int64_t{});
      default: fail_internal("{}: topk_call of {}", node_.describe(), dtype_name(x.dtype()));
    }
  }

 private:
  const Node& node_;
};

}  // namespace

bool topk_call_supports(const Node& node) {
  if (node.op != "TopK" || node.inputs.size() != 2 || node.input(1) == nullptr || node.input(0)->rank() == 0) return false;
  const DType t = node.input(0)->dtype;
  return t == DType::f32 || t == DType::f64 || t == DType::i32 || t == DType::i64;
}

std::unique_ptr<LibraryCall> prepare_topk_call(const Node& node) { return std::make_unique<TopKCall>(node); }

}  // namespace tilefuse::runtime
