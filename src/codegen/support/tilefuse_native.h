// tilefuse_native.h: helpers for kernels whose values keep their own element types.
//
// A kernel that touches an integer or f64 tensor (position ids, index arithmetic, a mask built
// from token ids, f64 math) is generated as a plain scalar loop in which every value has the C++
// type of its ONNX element type: int64_t stays int64_t, double stays double, bool stays bool,
// and f32/f16/bf16 values compute in float as everywhere else. The compiler vectorises those
// loops itself. The rules below are the reference interpreter's (src/reference/integer_math.h,
// Tensor::cast_into): two's-complement wrap-around, division truncating toward zero, float to
// integer conversions that never invoke undefined behaviour. A test compares them case by case.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace tf {

template <typename T> inline constexpr bool kIsIntegral = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// The value a kernel computes with, from a loaded element: f16/bf16 widen to float.
template <typename T> inline auto to_compute(T x) {
  if constexpr (kIsHalf<T>) return to_f32(x);
  else return x;
}
// Stores a computed value as element type T (f16/bf16 round to nearest even).
template <typename T, typename C> inline void store_value(T* p, C v) {
  if constexpr (kIsHalf<T>) from_f32(float(v), p);
  else *p = static_cast<T>(v);
}

// A Gather's element at this point: `data` (already at the point along every other axis) read
// at the index found at `index`, along the gathered axis (tilefuse_kernel.h: gathered_offset).
template <typename T, typename I>
inline auto load_gathered_element(const T* data, const I* index, int64_t stride, int64_t extent, int64_t* error,
                                  int64_t gather) {
  return to_compute(data[gathered_offset(int64_t(*index), stride, extent, error, gather)]);
}

// ---- integer arithmetic: computed in uint64, where overflow is defined, then wrapped to T ----
template <typename T> inline uint64_t as_u64(T a) { return static_cast<uint64_t>(a); }
template <typename T> inline T wrap_add(T a, T b) { return static_cast<T>(as_u64(a) + as_u64(b)); }
template <typename T> inline T wrap_sub(T a, T b) { return static_cast<T>(as_u64(a) - as_u64(b)); }
template <typename T> inline T wrap_mul(T a, T b) { return static_cast<T>(as_u64(a) * as_u64(b)); }
template <typename T> inline T wrap_neg(T a) { return wrap_sub(T(0), a); }
template <typename T> inline T int_abs(T a) {
  if constexpr (std::is_signed_v<T>) return a < 0 ? wrap_neg(a) : a;
  else return a;
}
// Quotient truncated toward zero. Kernels divide only by constants known to be non-zero (the
// planner keeps other integer divisions on the host, which reports a zero divisor).
template <typename T> inline T int_div(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return wrap_neg(a);  // MIN / -1 wraps to MIN, as in numpy
  }
  return static_cast<T>(a / b);
}
// ONNX Mod: `kPython` (fmod=0) gives the divisor's sign, otherwise (fmod=1) the dividend's.
template <bool kPython, typename T> inline T int_mod(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return T(0);  // avoids the overflow of MIN % -1
  }
  T r = static_cast<T>(a % b);
  if (kPython && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
  return r;
}
template <bool kPython> inline double float_mod(double a, double b) {
  double r = std::fmod(a, b);
  if (kPython && r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// ---- Cast: integers convert through int64 (wrapping), anything with a float side through
// double; float to integer truncates, NaN and infinities give 0, out-of-range values saturate to
// int64 before wrapping ----
template <typename To, typename From> inline auto convert(From x) {
  if constexpr (std::is_same_v<To, bool>) {
    return x != From(0);
  } else if constexpr (kIsHalf<To>) {
    To t; from_f32(float(double(x)), &t); return to_f32(t);
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(static_cast<double>(x));
  } else if constexpr (std::is_floating_point_v<From>) {
    const double v = x;
    if (!std::isfinite(v)) return To(0);
    constexpr double kLimit = 9223372036854775807.0;  // 2^63
    const int64_t i = v >= kLimit ? std::numeric_limits<int64_t>::max()
                      : v <= -kLimit ? std::numeric_limits<int64_t>::min()
                                     : static_cast<int64_t>(std::trunc(v));
    return static_cast<To>(i);
  } else {
    return static_cast<To>(static_cast<int64_t>(x));
  }
}

// ---- selection, min and max of integers, doubles and bools (floats have their own overloads
// in tilefuse_kernel.h, which overload resolution prefers) ----
// Operands may differ in type where an expression mixes a value with a literal (-1 next to a
// uint8_t): the result is their common type, and the kernel converts it to the node's type.
template <typename A, typename B> concept Scalars = std::is_arithmetic_v<A> && std::is_arithmetic_v<B>;
template <typename A, typename B> requires Scalars<A, B> inline std::common_type_t<A, B> select(bool m, A a, B b) {
  return m ? a : b;
}
template <typename A, typename B> requires Scalars<A, B> inline std::common_type_t<A, B> max(A a, B b) {
  using T = std::common_type_t<A, B>;
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a || b != b) return std::numeric_limits<T>::quiet_NaN();
  }
  return a > b ? T(a) : T(b);
}
template <typename A, typename B> requires Scalars<A, B> inline std::common_type_t<A, B> min(A a, B b) {
  using T = std::common_type_t<A, B>;
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a || b != b) return std::numeric_limits<T>::quiet_NaN();
  }
  return a < b ? T(a) : T(b);
}

// ---- f64 math, computed as the reference computes it (the C library in double; abs, sqrt,
// floor and ceil of doubles come through tilefuse_kernel.h's using-declarations of xsimd's) ----
inline double exp(double x) { return std::exp(x); }
inline double log(double x) { return std::log(x); }
inline double tanh(double x) { return std::tanh(x); }
inline double erf(double x) { return std::erf(x); }
inline double round_even(double x) { return std::nearbyint(x); }
inline bool isnan(double x) { return std::isnan(x); }
// Both branches avoid overflow of exp for large |x|.
inline double sigmoid(double x) { return x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x)); }

}  // namespace tf
