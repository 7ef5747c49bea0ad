// The f64 functions of tilefuse_native.h applied to an array in the loop generated native kernels
// run them in: plain C++ that the compiler vectorises. native_math_test.cpp uses it directly (the
// test binary's flags) and compiled into a probe library with the kernels' flags (-O3
// -march=native: the vectorised code generated kernels run).
#pragma once

#include <cstdint>

#include "codegen/support/tilefuse_kernel.h"

namespace tf_test {

enum NativeMathFn : int { kExp64, kLog64, kSigmoid64 };

inline void eval_native_math(int fn, const double* x, double* y, int64_t n) {
  switch (fn) {
    case kExp64:
      for (int64_t i = 0; i < n; ++i) y[i] = tf::exp(x[i]);
      break;
    case kLog64:
      for (int64_t i = 0; i < n; ++i) y[i] = tf::log(x[i]);
      break;
    default:
      for (int64_t i = 0; i < n; ++i) y[i] = tf::sigmoid(x[i]);
  }
}

}  // namespace tf_test
