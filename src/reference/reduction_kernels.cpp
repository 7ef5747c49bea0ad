// ReduceSum/Mean/Max/Min/Prod. Axes come from the `axes` attribute (opset <= 17) or from input 1
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

enum class ReduceKind { Sum, Mean, Max, Min, Prod };

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
  for (int64_t i = 0; i < x.numel(); ++i) acc[target[i]] = combine(kind, acc[target[i]], A(E::load(in[i])));
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

}  // namespace

void register_reduction_kernels(KernelTable& table) {
  table["ReduceSum"] = reduce_kernel<ReduceKind::Sum>;
  table["ReduceMean"] = reduce_kernel<ReduceKind::Mean>;
  table["ReduceMax"] = reduce_kernel<ReduceKind::Max>;
  table["ReduceMin"] = reduce_kernel<ReduceKind::Min>;
  table["ReduceProd"] = reduce_kernel<ReduceKind::Prod>;
}

}  // namespace tilefuse::reference
