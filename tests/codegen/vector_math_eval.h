// The functions of tilefuse_vector_math.h applied to an array the way generated kernels apply
// them: packs of batches (tilefuse_pack.h), steps of the build's widest float batch, then a
// scalar tail. vector_math_test.cpp uses
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

// Where elements are computed: in packs first, in single vectors first, or all on the scalar path.
enum MathPath : int { kPacks, kVectors, kScalar };

// y[i] = fn(x[i]) for i < n, the whole vectors and packs first as `path` says, then a scalar tail.
inline void eval_math(int fn, int path, const float* x, float* y, int64_t n) {
  int64_t i = 0;
  if (path == kPacks) {
    for (; i + tf::kPackVectors * tf::kLanes <= n; i += tf::kPackVectors * tf::kLanes) {
      tf::store(y + i, apply_math(fn, tf::load<tf::VP>(x + i)));
    }
  }
  if (path != kScalar) {
    for (; i + tf::kLanes <= n; i += tf::kLanes) apply_math(fn, tf::VF::load_unaligned(x + i)).store_unaligned(y + i);
  }
  for (; i < n; ++i) y[i] = apply_math(fn, x[i]);
}

}  // namespace tf_test
