#include "ir/tensor_compare.h"

#include <cmath>

#include "ir/shape.h"

namespace tilefuse {

CompareResult compare_tensors(const Tensor& actual, const Tensor& expected, Tolerance tol) {
  CompareResult r;
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) {
    r.ok = false;
    r.message = fmt::format("type mismatch: got {}, expected {}", actual.summary(), expected.summary());
    return r;
  }
  int64_t first_bad = -1;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    double a = actual.get_f64(i);
    double e = expected.get_f64(i);
    bool same = (std::isnan(a) && std::isnan(e)) || a == e;
    if (same) continue;
    double abs_err = std::fabs(a - e);
    double rel_err = e != 0 ? abs_err / std::fabs(e) : abs_err;
    // An infinity or NaN on either side that the other does not share is a mismatch whatever
    // the tolerance: rtol * |inf| would otherwise accept NaN or a finite value for an expected inf.
    const bool non_finite = !std::isfinite(a) || !std::isfinite(e);
    if (non_finite) abs_err = rel_err = INFINITY;
    r.max_abs_error = std::max(r.max_abs_error, abs_err);
    r.max_rel_error = std::max(r.max_rel_error, rel_err);
    if (non_finite || !(abs_err <= tol.atol + tol.rtol * std::fabs(e))) {
      ++r.mismatches;
      if (first_bad < 0) first_bad = i;
    }
  }
  if (r.mismatches > 0) {
    r.ok = false;
    r.message = fmt::format(
        "{} of {} elements differ beyond rtol={} atol={}; first at flat index {}: got {}, expected {}; "
        "max abs error {:.3g}, max rel error {:.3g}",
        r.mismatches, actual.numel(), tol.rtol, tol.atol, first_bad, actual.get_f64(first_bad),
        expected.get_f64(first_bad), r.max_abs_error, r.max_rel_error);
  }
  return r;
}

}  // namespace tilefuse
