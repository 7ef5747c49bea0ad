// The functions of tilefuse_vector_math.h applied to an array the way generated kernels apply
// them: steps of the build's widest float batch, then a scalar tail. vector_math_test.cpp uses
// it directly (the test binary's own ISA) and also compiles it into a probe library with the
// kernels' flags (the host's ISA, which is what generated kernels run).
#pragma once

#include <cstdint>

#include "codegen/support/tilefuse_kernel.h"

namespace tf_test {

enum MathFn : int { kExp, kLog, kTanh, kSigmoid, kErf, kMathFnCount };

template <typename V> V apply_math(int fn, V x) {
  switch (fn) {
    case kExp: return tf::exp(x);
    case kLog: return tf::log(x);
    case kTanh: return tf::tanh(x);
    case kSigmoid: return tf::sigmoid(x);
    default: return tf::erf(x);
  }
}

// y[i] = fn(x[i]) for i < n; with scalar_only every element takes the scalar path.
inline void eval_math(int fn, bool scalar_only, const float* x, float* y, int64_t n) {
  int64_t i = 0;
  if (!scalar_only) {
    for (; i + tf::kLanes <= n; i += tf::kLanes) apply_math(fn, tf::VF::load_unaligned(x + i)).store_unaligned(y + i);
  }
  for (; i < n; ++i) y[i] = apply_math(fn, x[i]);
}

}  // namespace tf_test
