#include "runtime/reduce_call.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>

#include "ir/error.h"
#include "passes/pattern.h"
#include "reference/integer_math.h"
#include "runtime/in_order_row_sums.h"

namespace tilefuse::runtime {

namespace {

enum class Fold { Sum, Mean, Max, Min, Prod };

// Inputs of rank <= 16 have at most 16 segments (kept and reduced ones alternate).
constexpr int64_t kMaxRank = 16;

// A few segments in place: a run allocates nothing.
template <typename T>
struct Segments {
  std::array<T, kMaxRank> items{};
  size_t size = 0;
  void push_back(const T& t) { items[size++] = t; }
  bool empty() const { return size == 0; }
  T& back() { return items[size - 1]; }
  const T& back() const { return items[size - 1]; }
  const T& operator[](size_t i) const { return items[i]; }
};

// x's axes merged into segments of consecutive kept or reduced axes. Each output element (the
// kept coordinates, row-major) folds its reduced elements in x's row-major order, as the
// reference does. A kept last segment is `inner`: that many output columns are folded at once,
// down contiguous rows of x.
struct Layout {
  struct Segment {
    int64_t extent = 1, stride = 1;
  };
  Segments<Segment> kept;     // kept segments before `inner`, outermost first
  Segments<Segment> reduced;  // outermost first
  int64_t inner = 1;
  int64_t outputs = 1;   // product of the kept extents but `inner`
  int64_t count = 1;     // elements each output folds

  Layout(const std::vector<int64_t>& shape, const std::vector<int64_t>& axes) {
    Segments<std::pair<Segment, bool>> segments;  // (segment, reduced), innermost first
    int64_t stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      const bool r = std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(d));
      if (segments.empty() || segments.back().second != r) {
        segments.push_back({{shape[d], stride}, r});
      } else {
        segments.back().first.extent *= shape[d];
      }
      stride *= shape[d];
    }
    const bool inner_kept = !segments.empty() && !segments[0].second;
    if (inner_kept) inner = segments[0].first.extent;
    for (size_t k = segments.size; k-- > (inner_kept ? 1u : 0u);) {
      const auto& [segment, r] = segments[k];
      (r ? reduced : kept).push_back(segment);
      (r ? count : outputs) *= segment.extent;
    }
  }

  // Where output element o's elements start: its kept coordinates' offset.
  int64_t kept_offset(int64_t o) const {
    int64_t offset = 0;
    for (size_t k = kept.size; k-- > 0;) {
      offset += o % kept[k].extent * kept[k].stride;
      o /= kept[k].extent;
    }
    return offset;
  }

  // Calls f(offset) for the reduced coordinates in row-major order, over the first `segments`
  // reduced segments (the others at 0).
  template <typename F>
  void for_each_reduced(size_t segments, F&& f) const {
    int64_t total = 1;
    for (size_t k = 0; k < segments; ++k) total *= reduced[k].extent;
    std::array<int64_t, kMaxRank> coord{};
    int64_t offset = 0;
    for (int64_t n = 0; n < total; ++n) {
      f(offset);
      for (size_t k = segments; k-- > 0;) {  // odometer: the innermost segment moves first
        offset += reduced[k].stride;
        if (++coord[k] < reduced[k].extent) break;
        offset -= coord[k] * reduced[k].stride;
        coord[k] = 0;
      }
    }
  }
};

// Output columns one work item folds at once: its accumulators stay in L1.
constexpr int64_t kColumns = 512;

template <typename A>
A initial(Fold fold) {
  using L = std::numeric_limits<A>;
  switch (fold) {
    case Fold::Prod: return A(1);
    case Fold::Max: return L::has_infinity ? -L::infinity() : L::lowest();
    case Fold::Min: return L::has_infinity ? L::infinity() : L::max();
    default: return A(0);
  }
}

// The reference's combine (reference/reduction_kernels.cpp): wrapping integers, NaN wins.
template <Fold fold, typename A>
A combine(A acc, A v) {
  if constexpr (fold == Fold::Prod) return reference::wrap_mul(acc, v);
  if constexpr (fold == Fold::Sum || fold == Fold::Mean) return reference::wrap_add(acc, v);
  if constexpr (std::is_floating_point_v<A>) {
    if (acc != acc || v != v) return acc != acc ? acc : v;
  }
  if constexpr (fold == Fold::Max) return std::max(acc, v);
  return std::min(acc, v);
}

template <Fold fold, typename A>
A finish(A acc, int64_t count) {
  if constexpr (fold != Fold::Mean) return acc;
  if constexpr (std::is_integral_v<A>) return reference::int_div(acc, A(count));
  return acc / static_cast<double>(count);
}

// Output elements (o, [i0, i1)) of one work item, each folded down its reduced rows in order.
template <Fold fold, typename T>
void fold_columns(const T* x, T* y, const Layout& l, int64_t o, int64_t i0, int64_t i1) {
  using A = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  const int64_t n = i1 - i0;
  std::array<A, kColumns> acc;
  std::fill_n(acc.begin(), n, initial<A>(fold));
  const T* base = x + l.kept_offset(o) + i0;
  l.for_each_reduced(l.reduced.size, [&](int64_t offset) {
    const T* row = base + offset;
    for (int64_t i = 0; i < n; ++i) acc[i] = combine<fold>(acc[i], static_cast<A>(row[i]));
  });
  T* out = y + o * l.inner + i0;
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(finish<fold>(acc[i], l.count));
}

// A row folded on from `acc` in order, as the reference folds it: floating-point sums round at
// each step.
template <Fold fold, typename A, typename T>
A fold_in_order(A acc, const T* row, int64_t n) {
  for (int64_t r = 0; r < n; ++r) acc = combine<fold>(acc, static_cast<A>(row[r]));
  return acc;
}

// The runtime is built for the baseline x86-64 (two int64 lanes): these clones let the integer
// folds' interleaved chains take AVX2 or AVX-512 registers where the CPU has them (an int64
// row sum of 16 MiB ran at half of TorchInductor's speed).
#if defined(__GNUC__) && !defined(__clang__)
#define TF_FOLD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TF_FOLD_CLONES
#endif

// A row of integers folded as kWays interleaved partial folds, then those folded into `acc`.
// Wrapping add and multiply, max and min are associative and commutative on integers, so this
// is bit for bit the in-order result; the partial folds are independent chains, where the
// in-order loop waits a full add on every element.
template <Fold fold, typename A, typename T>
TF_FOLD_CLONES A fold_interleaved(A acc, const T* row, int64_t n) {
  constexpr int64_t kWays = 8;
  std::array<A, kWays> part;
  part.fill(initial<A>(fold));
  int64_t r = 0;
  for (; r + kWays <= n; r += kWays) {
    for (int64_t k = 0; k < kWays; ++k) part[k] = combine<fold>(part[k], static_cast<A>(row[r + k]));
  }
  for (; r < n; ++r) part[0] = combine<fold>(part[0], static_cast<A>(row[r]));
  for (int64_t k = 0; k < kWays; ++k) acc = combine<fold>(acc, part[k]);
  return acc;
}

// Floating-point rows of n outputs (`step` apart) folded on in order, eight outputs' chains at a
// time: each output rounds as the reference's does, and the eight independent chains hide the
// adds' latency (a single chain ran an f64 mean over axes 0 and 2 of [8, 512, 512] at 2x ONNX
// Runtime's time).
template <Fold fold, typename A, typename T>
TF_FOLD_CLONES void fold_side_by_side(A* acc, const T* rows, int64_t step, int64_t n, int64_t length) {
  constexpr int64_t kChains = 8;
  int64_t j = 0;
  for (; j + kChains <= n; j += kChains) {
    for (int64_t r = 0; r < length; ++r) {
      for (int64_t k = 0; k < kChains; ++k) acc[j + k] = combine<fold>(acc[j + k], static_cast<A>(rows[(j + k) * step + r]));
    }
  }
  for (; j < n; ++j) acc[j] = fold_in_order<fold>(acc[j], rows + j * step, length);
}

// Outputs one call of fold_rows folds side by side.
constexpr int64_t kRowOutputs = 64;

// Outputs [o0, o1) whose last reduced segment is x's last axes: each folds contiguous rows. A
// run of outputs that differ only in the innermost kept segment is folded side by side, reduced
// row by reduced row: their rows lie next to each other in x (a sum over axes 0 and 2 of
// [8, 512, 512] reads 64 neighbouring rows at a time instead of one row of each 2 MiB plane),
// and each output still folds its own elements in x's order.
template <Fold fold, typename T>
void fold_rows(const T* x, T* y, const Layout& l, int64_t o0, int64_t o1) {
  using A = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  constexpr bool kSums = fold == Fold::Sum || fold == Fold::Mean;
  const int64_t length = l.reduced.back().extent;
  const int64_t run = l.kept.empty() ? 1 : l.kept.back().extent;
  const int64_t step = l.kept.empty() ? 0 : l.kept.back().stride;
  std::array<A, kRowOutputs> acc;
  for (int64_t o = o0; o < o1;) {
    const int64_t n = std::min({o1 - o, run - o % run, kRowOutputs});
    const T* base = x + l.kept_offset(o);
    std::fill_n(acc.begin(), n, initial<A>(fold));
    l.for_each_reduced(l.reduced.size - 1, [&](int64_t offset) {
      if constexpr (std::is_integral_v<A>) {
        for (int64_t j = 0; j < n; ++j) acc[j] = fold_interleaved<fold>(acc[j], base + offset + j * step, length);
      } else if (!(kSums && sum_rows_in_order(acc.data(), base + offset, step, n, length))) {
        fold_side_by_side<fold>(acc.data(), base + offset, step, n, length);
      }
    });
    for (int64_t j = 0; j < n; ++j) y[o + j] = static_cast<T>(finish<fold>(acc[j], l.count));
    o += n;
  }
}

template <Fold fold, typename T>
void fold_layout(ThreadTeam& team, const T* x, T* y, const Layout& l) {
  if (l.inner == 1) {
    team.run(l.outputs, [&](int, int64_t first, int64_t end) { fold_rows<fold>(x, y, l, first, end); });
    return;
  }
  const int64_t tiles = (l.inner + kColumns - 1) / kColumns;
  team.run(l.outputs * tiles, [&](int, int64_t first, int64_t end) {
    for (int64_t item = first; item < end; ++item) {
      const int64_t o = item / tiles, i0 = item % tiles * kColumns;
      fold_columns<fold>(x, y, l, o, i0, std::min(l.inner, i0 + kColumns));
    }
  });
}

std::optional<Fold> fold_of(const std::string& op) {
  if (op == "ReduceSum") return Fold::Sum;
  if (op == "ReduceMean") return Fold::Mean;
  if (op == "ReduceMax") return Fold::Max;
  if (op == "ReduceMin") return Fold::Min;
  if (op == "ReduceProd") return Fold::Prod;
  return std::nullopt;
}

class ReduceCall : public LibraryCall {
 public:
  ReduceCall(const Node& node, Fold fold, std::vector<int64_t> axes) : node_(node), fold_(fold), axes_(std::move(axes)) {}

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    Tensor& y = outs[0];
    const Tensor& x = in[0];
    if (!y.defined() || y.numel() == 0) return;
    if (axes_.empty()) {  // noop_with_empty_axes: the identity
      std::memcpy(y.raw(), x.raw(), x.nbytes());
      return;
    }
    const Layout l(x.shape(), axes_);
    if (l.count == 0 && fold_ == Fold::Mean && x.dtype() != DType::f64) {
      fail_user("{}: the mean of an empty integer set is undefined", node_.describe());
    }
    switch (x.dtype()) {
      case DType::f64: return by_fold(team, x.data<double>(), y.data<double>(), l);
      case DType::i32: return by_fold(team, x.data<int32_t>(), y.data<int32_t>(), l);
      case DType::i64: return by_fold(team, x.data<int64_t>(), y.data<int64_t>(), l);
      default: fail_internal("{}: reduce_call of {}", node_.describe(), dtype_name(x.dtype()));
    }
  }

 private:
  template <typename T>
  void by_fold(ThreadTeam& team, const T* x, T* y, const Layout& l) const {
    switch (fold_) {
      case Fold::Sum: return fold_layout<Fold::Sum>(team, x, y, l);
      case Fold::Mean: return fold_layout<Fold::Mean>(team, x, y, l);
      case Fold::Max: return fold_layout<Fold::Max>(team, x, y, l);
      case Fold::Min: return fold_layout<Fold::Min>(team, x, y, l);
      case Fold::Prod: return fold_layout<Fold::Prod>(team, x, y, l);
    }
  }

  const Node& node_;
  Fold fold_;
  std::vector<int64_t> axes_;  // sorted; empty: the identity
};

}  // namespace

bool reduce_call_supports(const Node& node) {
  if (!fold_of(node.op) || node.input(0) == nullptr || node.outputs.empty()) return false;
  const DType t = node.input(0)->dtype;
  if (t != DType::f64 && t != DType::i32 && t != DType::i64) return false;
  return node.input(0)->rank() <= kMaxRank && passes::reduced_axes(node).has_value();
}

std::unique_ptr<LibraryCall> prepare_reduce_call(const Node& node) {
  return std::make_unique<ReduceCall>(node, *fold_of(node.op), *passes::reduced_axes(node));
}

}  // namespace tilefuse::runtime
