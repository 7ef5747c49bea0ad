// Integer arithmetic as numpy and ONNX define it: two's-complement wrap-around instead of C++'s
// undefined signed overflow, division truncating toward zero, and conversions from floating
// point that never invoke undefined behaviour.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace tilefuse::reference {

// Computes in uint64 (where overflow is defined) and converts back, which C++20 defines modulo 2^N.
template <typename T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else return a + b;
}
template <typename T>
T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  else return a - b;
}
template <typename T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else return a * b;
}
template <typename T>
T wrap_neg(T a) {
  return wrap_sub(T(0), a);
}

// Integer quotient truncated toward zero; `b` must not be 0. MIN / -1 wraps to MIN, as in numpy.
template <typename T>
T int_div(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return wrap_neg(a);
  }
  return static_cast<T>(a / b);
}

// Float to integer: truncation toward zero; NaN and infinities give 0 and out-of-range values
// saturate to int64 before wrapping to T (ONNX leaves both undefined; this never traps).
template <typename T>
T float_to_int(double v) {
  if (!std::isfinite(v)) return T(0);
  constexpr double kLimit = 9223372036854775807.0;  // 2^63
  int64_t i = v >= kLimit ? std::numeric_limits<int64_t>::max()
              : v <= -kLimit ? std::numeric_limits<int64_t>::min()
                             : static_cast<int64_t>(std::trunc(v));
  return static_cast<T>(i);
}

}  // namespace tilefuse::reference
