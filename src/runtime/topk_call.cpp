#include "runtime/topk_call.h"

#include <algorithm>
#include <cmath>
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
// (or smaller) values, equal ones by index.
struct Ranks {
  bool largest;
  bool operator()(const std::pair<float, int64_t>& a, const std::pair<float, int64_t>& b) const {
    const bool nan_a = std::isnan(a.first), nan_b = std::isnan(b.first);
    if (nan_a || nan_b) return nan_a && !nan_b ? true : (nan_a == nan_b && a.second < b.second);
    if (a.first != b.first) return largest ? a.first > b.first : a.first < b.first;
    return a.second < b.second;
  }
};

void top_lines(const float* x, float* values, int64_t* indices, const Lines& s, int64_t begin, int64_t end) {
  thread_local std::vector<std::pair<float, int64_t>> line;
  line.resize(static_cast<size_t>(s.n));
  for (int64_t l = begin; l < end; ++l) {
    const int64_t base = (l / s.inner) * s.n * s.inner + l % s.inner;
    const int64_t out_base = (l / s.inner) * s.k * s.inner + l % s.inner;
    for (int64_t j = 0; j < s.n; ++j) line[static_cast<size_t>(j)] = {x[base + j * s.inner], j};
    std::partial_sort(line.begin(), line.begin() + s.k, line.end(), Ranks{s.largest});
    for (int64_t j = 0; j < s.k; ++j) {
      if (values != nullptr) values[out_base + j * s.inner] = line[static_cast<size_t>(j)].first;
      if (indices != nullptr) indices[out_base + j * s.inner] = line[static_cast<size_t>(j)].second;
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
    float* values = outs[0].defined() ? outs[0].data<float>() : nullptr;
    int64_t* indices = outs.size() > 1 && outs[1].defined() ? outs[1].data<int64_t>() : nullptr;
    team.run(x.numel() / s.n, [&](int, int64_t begin, int64_t end) {
      top_lines(x.data<float>(), values, indices, s, begin, end);
    });
  }

 private:
  const Node& node_;
};

}  // namespace

bool topk_call_supports(const Node& node) {
  return node.op == "TopK" && node.inputs.size() == 2 && node.input(1) != nullptr && node.input(0)->dtype == DType::f32 &&
         node.input(0)->rank() > 0;
}

std::unique_ptr<LibraryCall> prepare_topk_call(const Node& node) { return std::make_unique<TopKCall>(node); }

}  // namespace tilefuse::runtime
