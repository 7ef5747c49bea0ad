// Numeric comparison of tensors, as numpy.testing.assert_allclose does it:
// |actual - expected| <= atol + rtol * |expected|, NaN equal to NaN, infinities equal by sign.
// Used by tests against the reference and by the autotuner's check of each candidate.
#pragma once

#include <string>

#include "ir/tensor.h"

namespace tilefuse {

struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-8;
};

struct CompareResult {
  bool ok = true;
  int64_t mismatches = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;
  std::string message;  // empty when ok; otherwise names the first mismatch and the worst error
};

CompareResult compare_tensors(const Tensor& actual, const Tensor& expected, Tolerance tolerance = {});

}  // namespace tilefuse
