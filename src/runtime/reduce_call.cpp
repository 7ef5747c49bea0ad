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

namespace tilefuse::runtime {

namespace {

enum class Fold { Sum, Mean, Max, Min, Prod };

// The input as [outer, reduced, inner] around the run of reduced axes.
struct Block {
  int64_t outer = 1, reduced = 1, inner = 1;
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

// Output elements (o, [i0, i1)) of one work item, each folded down the reduced axis in order.
template <Fold fold, typename T>
void fold_columns(const T* x, T* y, const Block& b, int64_t o, int64_t i0, int64_t i1) {
  using A = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  const int64_t n = i1 - i0;
  std::array<A, kColumns> acc;
  std::fill_n(acc.begin(), n, initial<A>(fold));
  const T* row = x + o * b.reduced * b.inner + i0;
  for (int64_t r = 0; r < b.reduced; ++r, row += b.inner) {
    for (int64_t i = 0; i < n; ++i) acc[i] = combine<fold>(acc[i], static_cast<A>(row[i]));
  }
  T* out = y + o * b.inner + i0;
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(finish<fold>(acc[i], b.reduced));
}

// A row folded in order, as the reference folds it: floating-point sums round at each step.
template <Fold fold, typename A, typename T>
A fold_in_order(const T* row, int64_t n) {
  A acc = initial<A>(fold);
  for (int64_t r = 0; r < n; ++r) acc = combine<fold>(acc, static_cast<A>(row[r]));
  return acc;
}

// A row of integers folded as kWays interleaved partial folds, then those folded together.
// Wrapping add and multiply, max and min are associative and commutative on integers, so this
// is bit for bit the in-order result; the partial folds are independent chains, where the
// in-order loop waits a full add on every element.
template <Fold fold, typename A, typename T>
A fold_interleaved(const T* row, int64_t n) {
  constexpr int64_t kWays = 8;
  std::array<A, kWays> part;
  part.fill(initial<A>(fold));
  int64_t r = 0;
  for (; r + kWays <= n; r += kWays) {
    for (int64_t k = 0; k < kWays; ++k) part[k] = combine<fold>(part[k], static_cast<A>(row[r + k]));
  }
  for (; r < n; ++r) part[0] = combine<fold>(part[0], static_cast<A>(row[r]));
  A acc = part[0];
  for (int64_t k = 1; k < kWays; ++k) acc = combine<fold>(acc, part[k]);
  return acc;
}

// One output element per row: x's rows are contiguous.
template <Fold fold, typename T>
void fold_rows(const T* x, T* y, const Block& b, int64_t o0, int64_t o1) {
  using A = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  for (int64_t o = o0; o < o1; ++o) {
    const T* row = x + o * b.reduced;
    const A acc = std::is_integral_v<A> ? fold_interleaved<fold, A>(row, b.reduced) : fold_in_order<fold, A>(row, b.reduced);
    y[o] = static_cast<T>(finish<fold>(acc, b.reduced));
  }
}

template <Fold fold, typename T>
void fold_block(ThreadTeam& team, const T* x, T* y, const Block& b) {
  if (b.inner == 1) {
    team.run(b.outer, [&](int, int64_t first, int64_t end) { fold_rows<fold>(x, y, b, first, end); });
    return;
  }
  const int64_t tiles = (b.inner + kColumns - 1) / kColumns;
  team.run(b.outer * tiles, [&](int, int64_t first, int64_t end) {
    for (int64_t item = first; item < end; ++item) {
      const int64_t o = item / tiles, i0 = item % tiles * kColumns;
      fold_columns<fold>(x, y, b, o, i0, std::min(b.inner, i0 + kColumns));
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
    const Block b = block_of(x.shape());
    if (b.reduced == 0 && fold_ == Fold::Mean && x.dtype() != DType::f64) {
      fail_user("{}: the mean of an empty integer set is undefined", node_.describe());
    }
    switch (x.dtype()) {
      case DType::f64: return by_fold(team, x.data<double>(), y.data<double>(), b);
      case DType::i32: return by_fold(team, x.data<int32_t>(), y.data<int32_t>(), b);
      case DType::i64: return by_fold(team, x.data<int64_t>(), y.data<int64_t>(), b);
      default: fail_internal("{}: reduce_call of {}", node_.describe(), dtype_name(x.dtype()));
    }
  }

 private:
  Block block_of(const std::vector<int64_t>& shape) const {
    Block b;
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
      int64_t& part = d < axes_.front() ? b.outer : d <= axes_.back() ? b.reduced : b.inner;
      part *= shape[static_cast<size_t>(d)];
    }
    return b;
  }

  template <typename T>
  void by_fold(ThreadTeam& team, const T* x, T* y, const Block& b) const {
    switch (fold_) {
      case Fold::Sum: return fold_block<Fold::Sum>(team, x, y, b);
      case Fold::Mean: return fold_block<Fold::Mean>(team, x, y, b);
      case Fold::Max: return fold_block<Fold::Max>(team, x, y, b);
      case Fold::Min: return fold_block<Fold::Min>(team, x, y, b);
      case Fold::Prod: return fold_block<Fold::Prod>(team, x, y, b);
    }
  }

  const Node& node_;
  Fold fold_;
  std::vector<int64_t> axes_;  // sorted, one run; empty: the identity
};

}  // namespace

bool reduce_call_supports(const Node& node) {
  if (!fold_of(node.op) || node.input(0) == nullptr || node.outputs.empty()) return false;
  const DType t = node.input(0)->dtype;
  if (t != DType::f64 && t != DType::i32 && t != DType::i64) return false;
  const auto axes = passes::reduced_axes(node);
  if (!axes) return false;
  for (size_t i = 1; i < axes->size(); ++i) {
    if ((*axes)[i] != (*axes)[i - 1] + 1) return false;
  }
  return true;
}

std::unique_ptr<LibraryCall> prepare_reduce_call(const Node& node) {
  return std::make_unique<ReduceCall>(node, *fold_of(node.op), *passes::reduced_axes(node));
}

}  // namespace tilefuse::runtime
