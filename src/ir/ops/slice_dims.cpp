#include "ir/ops/slice_dims.h"

#include <algorithm>

#include "ir/error.h"

namespace tilefuse::ops {
namespace {

constexpr int64_t kOpenBound = int64_t{1} << 31;

// A bound normalised against the dim: exactly when both are constant, else as the header says.
Dim resolve_bound(const Dim& dim, const Dim& bound, int64_t step) {
  if (!bound.is_const()) return bound;
  int64_t b = bound.value();
  if (dim.is_const()) return clamp_slice_bound(b, dim.value(), step);
  if (b >= kOpenBound) return step > 0 ? dim : dim - Dim(1);
  if (b <= -kOpenBound) return step > 0 ? Dim(0) : Dim(-1);
  return b < 0 ? dim + bound : bound;
}

}  // namespace

int64_t clamp_slice_bound(int64_t bound, int64_t dim, int64_t step) {
  if (bound < 0) bound += dim;
  return step > 0 ? std::clamp<int64_t>(bound, 0, dim) : std::clamp<int64_t>(bound, -1, dim - 1);
}

Dim slice_dim(const Dim& dim, const Dim& start, const Dim& end, int64_t step) {
  if (step == 0) fail_internal("slice_dim: step 0");
  Dim s = resolve_bound(dim, start, step);
  Dim e = resolve_bound(dim, end, step);
  Dim span = step > 0 ? e - s : s - e;
  Dim stride = step > 0 ? step : -step;
  Dim n = floordiv(span + stride - Dim(1), stride);
  return n.is_const() ? Dim(std::max<int64_t>(n.value(), 0)) : n;
}

std::vector<Dim> slice_dim_assumptions(const Dim& dim, const Dim& start, const Dim& end, int64_t step) {
  if (dim.is_const() && start.is_const() && end.is_const()) return {};
  const Dim s = resolve_bound(dim, start, step), e = resolve_bound(dim, end, step);
  // A positive step keeps bounds in [0, dim], a negative one in [-1, dim - 1].
  const Dim low = step > 0 ? Dim(0) : Dim(-1), high = step > 0 ? dim : dim - Dim(1);
  std::vector<Dim> nonnegative;
  for (const Dim& d : {s - low, high - s, e - low, high - e, step > 0 ? e - s : s - e}) {
    if (d.is_const() || d.is_symbol()) continue;  // a constant is settled here, a dim is >= 0
    if (std::find(nonnegative.begin(), nonnegative.end(), d) == nonnegative.end()) nonnegative.push_back(d);
  }
  return nonnegative;
}

}  // namespace tilefuse::ops
