// ReduceSum/Mean/Max/Min/Prod, the norms and log-sums (ReduceL1/L2/SumSquare/LogSum/LogSumExp),
// and ArgMax/ArgMin. Axes come from the `axes` attribute (opset <= 17) or from input 1
// (opset 18); `keepdims` (default 1) keeps reduced dims as 1; with no axes, every axis is reduced
// unless `noop_with_empty_axes` is 1, which makes the op the identity. Float reductions
// accumulate in double, integer ones in int64 (wrapping like numpy).
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "reference/element_types.h"
#include "reference/index_map.h"
#include "reference/integer_math.h"
#include "reference/kernel_args.h"
#include "reference/kernel_table.h"

namespace tilefuse::reference {

namespace {

enum class ReduceKind { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };

// The axes to reduce, normalised; empty means the op is the identity.
std::vector<int64_t> reduce_axes(const Node& node, const std::vector<Tensor>& in, int64_t rank) {
  const Tensor* axes_input = optional_input(in, 1);
  if (node.has_attr("axes") && axes_input != nullptr) {
    fail_user("{}: axes are given both as attribute and as input 1; give one", node.describe());
  }
  std::vector<int64_t> axes =
      axes_input != nullptr ? int_list(node, *axes_input, "input 1 (axes)") : node.attr_ints("axes");
  if (axes.empty()) {
    if (node.attr_int("noop_with_empty_axes", 0) != 0) return {};
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    return axes;
  }
  return node_axes(node, axes, rank);
}

// The accumulator of element type E: double for floats, int64 for integers.
template <typename E>
using Acc = std::conditional_t<std::is_floating_point_v<typename E::Compute>, double, int64_t>;

template <typename A>
A initial_value(ReduceKind kind) {
  using L = std::numeric_limits<A>;
  switch (kind) {
    case ReduceKind::Prod: return A(1);
    case ReduceKind::Max: return L::has_infinity ? -L::infinity() : L::lowest();
    case ReduceKind::Min: return L::has_infinity ? L::infinity() : L::max();
    default: return A(0);
  }
}

template <typename A>
A combine(ReduceKind kind, A acc, A v) {
  switch (kind) {
    case ReduceKind::Prod: return wrap_mul(acc, v);
    // numpy's max/min propagate NaN.
    case ReduceKind::Max: return acc != acc || v != v ? (acc != acc ? acc : v) : std::max(acc, v);
    case ReduceKind::Min: return acc != acc || v != v ? (acc != acc ? acc : v) : std::min(acc, v);
    default: return wrap_add(acc, v);
  }
}

// What element v contributes to the sum of the norm and log-sum kinds.
template <typename A>
A term(ReduceKind kind, A v, A shift) {
  switch (kind) {
    case ReduceKind::L1: return v < A(0) ? A(0) - v : v;
    case ReduceKind::L2:
    case ReduceKind::SumSquare: return wrap_mul(v, v);
    case ReduceKind::LogSumExp: return static_cast<A>(std::exp(static_cast<double>(v) - static_cast<double>(shift)));
    default: return v;
  }
}

template <typename E>
Tensor reduce(const Node& node, ReduceKind kind, const Tensor& x, const std::vector<int64_t>& axes) {
  using A = Acc<E>;
  std::vector<int64_t> kept_shape = x.shape(), dropped_shape;
  int64_t count = 1;  // elements per reduced group
  for (int64_t a : axes) {
    kept_shape[a] = 1;
    count *= x.shape()[a];
  }
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) dropped_shape.push_back(x.shape()[d]);
  }
  // Element i of x accumulates into element target[i] of the (kept-dims) result.
  std::vector<int64_t> target = broadcast_indices(kept_shape, x.shape());
  std::vector<A> acc(static_cast<size_t>(product(kept_shape)), initial_value<A>(kind));
  const auto* in = x.data<typename E::Storage>();
  // LogSumExp subtracts each group's maximum before exp, so that exp cannot overflow.
  std::vector<A> shift(acc.size(), A(0));
  if (kind == ReduceKind::LogSumExp) {
    std::fill(shift.begin(), shift.end(), initial_value<A>(ReduceKind::Max));
    for (int64_t i = 0; i < x.numel(); ++i) shift[target[i]] = combine(ReduceKind::Max, shift[target[i]], A(E::load(in[i])));
    for (A& m : shift) {
      if (!std::isfinite(static_cast<double>(m))) m = A(0);
    }
  }
  for (int64_t i = 0; i < x.numel(); ++i) {
    acc[target[i]] = combine(kind, acc[target[i]], term(kind, A(E::load(in[i])), shift[target[i]]));
  }
  if (kind == ReduceKind::L2 || kind == ReduceKind::LogSum || kind == ReduceKind::LogSumExp) {
    for (size_t j = 0; j < acc.size(); ++j) {
      double v = static_cast<double>(acc[j]);
      acc[j] = static_cast<A>(kind == ReduceKind::L2 ? std::sqrt(v) : std::log(v) + static_cast<double>(shift[j]));
    }
  }
  if (kind == ReduceKind::Mean) {
    for (A& a : acc) {
      if constexpr (std::is_integral_v<A>) {
        if (count == 0) fail_user("{}: the mean of an empty integer set is undefined", node.describe());
        a = int_div(a, count);
      } else {
        a = a / static_cast<double>(count);
      }
    }
  }
  Tensor out(x.dtype(), node.attr_int("keepdims", 1) != 0 ? kept_shape : dropped_shape);
  auto* po = out.data<typename E::Storage>();
  for (size_t i = 0; i < acc.size(); ++i) po[i] = E::store(static_cast<typename E::Compute>(acc[i]));
  return out;
}

template <ReduceKind kind>
std::vector<Tensor> reduce_kernel(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  std::vector<int64_t> axes = reduce_axes(node, in, x.rank());
  return {visit_dtype<TypeSet::Numeric>(node, x.dtype(), [&](auto elem) {
    return axes.empty() ? x.clone() : reduce<decltype(elem)>(node, kind, x, axes);
  })};
}

// ArgMax/ArgMin along one axis: the first index of the extremum, or the last with
// select_last_index=1. A NaN counts as the extremum (numpy.argmax), the first NaN wins.
template <bool is_max>
std::vector<Tensor> arg_extremum_kernel(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  const int64_t axis = node_axis(node, node.attr_int("axis", 0), x.rank());
  const bool last = node.attr_int("select_last_index", 0) != 0;
  std::vector<int64_t> out_shape = x.shape();
  const int64_t n = x.shape()[axis];
  if (n == 0) fail_user("{}: axis {} is empty; there is no extremum to find", node.describe(), axis);
  out_shape[axis] = 1;
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];
  Tensor out(DType::i64, out_shape);
  auto* po = out.data<int64_t>();
  visit_dtype<TypeSet::Numeric>(node, x.dtype(), [&](auto elem) {
    using E = decltype(elem);
    const auto* px = x.data<typename E::Storage>();
    for (int64_t o = 0; o < out.numel(); ++o) {
      const int64_t base = (o / inner) * n * inner + o % inner;
      int64_t best = 0;
      auto best_v = E::load(px[base]);
      for (int64_t k = 1; k < n; ++k) {
        auto v = E::load(px[base + k * inner]);
        if (best_v != best_v) break;  // a NaN already won
        bool better = v != v || (is_max ? v > best_v : v < best_v) || (last && v == best_v);
        if (better) best = k, best_v = v;
      }
      po[o] = best;
    }
  });
  if (node.attr_int("keepdims", 1) == 0) out_shape.erase(out_shape.begin() + axis);
  return {out.reshaped(out_shape)};
}

}  // namespace

void register_reduction_kernels(KernelTable& table) {
  table["ReduceSum"] = reduce_kernel<ReduceKind::Sum>;
  table["ReduceMean"] = reduce_kernel<ReduceKind::Mean>;
  table["ReduceMax"] = reduce_kernel<ReduceKind::Max>;
  table["ReduceMin"] = reduce_kernel<ReduceKind::Min>;
  table["ReduceProd"] = reduce_kernel<ReduceKind::Prod>;
  table["ReduceL1"] = reduce_kernel<ReduceKind::L1>;
  table["ReduceL2"] = reduce_kernel<ReduceKind::L2>;
  table["ReduceSumSquare"] = reduce_kernel<ReduceKind::SumSquare>;
  table["ReduceLogSum"] = reduce_kernel<ReduceKind::LogSum>;
  table["ReduceLogSumExp"] = reduce_kernel<ReduceKind::LogSumExp>;
  table["ArgMax"] = arg_extremum_kernel<true>;
  table["ArgMin"] = arg_extremum_kernel<false>;
}

}  // namespace tilefuse::reference
