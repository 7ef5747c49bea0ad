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

#include <bit>
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

// ---- f64 math. exp and log are written without calls or branches, so that the compiler
// vectorises the loops around them: the C library's, called per element, kept an f64 chain with
// an exp at a third of TorchInductor's speed. Bounds against the exact result (tested in
// tests/codegen/native_math_test.cpp, with the C library's special values): exp 1.5 ulp (1 where
// the compiler fuses multiply-adds), log 1 ulp, sigmoid 2.5 ulp. tanh and erf are
// the C library's; abs, sqrt, floor and ceil come through tilefuse_kernel.h's
// using-declarations of xsimd's ----
namespace f64 {
inline int64_t bits(double x) { return std::bit_cast<int64_t>(x); }
inline double from_bits(int64_t i) { return std::bit_cast<double>(i); }
// ln 2 in two parts (fdlibm's): n * kLn2Hi is exact for |n| < 2^20.
constexpr double kLn2Hi = 6.93147180369123816490e-01, kLn2Lo = 1.90821492927058770002e-10;
// Adding it rounds a double below 2^51 in magnitude to an integer, kept in the low bits.
constexpr double kRounder = 0x1.8p52;
// x * 2^n for n in [-1076, 1024], in two steps so that each factor is a normal double: subnormal
// results round once, in the last product, and too large ones become infinity.
inline double scale_by_pow2(double x, int64_t n) {
  const int64_t half = n >> 1;
  return x * from_bits((half + 1023) << 52) * from_bits((n - half + 1023) << 52);
}
}  // namespace f64

// e^x = 2^n e^r, n = round(x / ln 2), |r| <= ln 2 / 2, e^r by its Taylor series to r^13 (the
// rest is below 2^-60 of the result).
inline double exp(double x) {
  // Past these bounds e^x is infinite or rounds to zero; NaN passes (both comparisons false).
  x = x > 710.0 ? 710.0 : x;
  x = x < -746.0 ? -746.0 : x;
  const double t = x * 1.4426950408889634 + f64::kRounder;
  const double n = t - f64::kRounder;
  const double r = (x - n * f64::kLn2Hi) - n * f64::kLn2Lo;
  double p = 1.0 / 6227020800.0;  // 1/13!
  for (double c : {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0,
                   1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0}) {
    p = p * r + c;
  }
  return f64::scale_by_pow2(p, f64::bits(t) - f64::bits(f64::kRounder));
}

// log x = k ln 2 + log m, m = x / 2^k in [sqrt(2)/2, sqrt(2)), log m from s = (m-1)/(m+1) by
// fdlibm's polynomial (__ieee754_log). Subnormal x are scaled by 2^54 first; x < 0 gives NaN,
// 0 gives -infinity, infinity and NaN themselves.
inline double log(double x) {
  const bool subnormal = x < 0x1p-1022;
  const double y = subnormal ? x * 0x1p54 : x;
  // The exponent of y relative to sqrt(2)/2, so that m = y / 2^k lands in [sqrt(2)/2, sqrt(2)).
  const int64_t shifted = f64::bits(y) - f64::bits(0.70710678118654752440);
  const int64_t k = (shifted >> 52) - (subnormal ? 54 : 0);
  const double m = f64::from_bits(f64::bits(y) - ((shifted >> 52) << 52));
  const double f = m - 1.0, hfsq = 0.5 * f * f, s = f / (2.0 + f), z = s * s, w = z * z;
  const double t1 = w * (3.999999999940941908e-01 + w * (2.222219843214978396e-01 + w * 1.531383769920937332e-01));
  const double t2 = z * (6.666666666666735130e-01 +
                         w * (2.857142874366239149e-01 + w * (1.818357216161805012e-01 + w * 1.479819860511658591e-01)));
  const double dk = double(k);
  const double result = dk * f64::kLn2Hi - ((hfsq - (s * (hfsq + t1 + t2) + dk * f64::kLn2Lo)) - f);
  const double inf = std::numeric_limits<double>::infinity();
  return x == inf || x != x ? x : x == 0.0 ? -inf : x < 0.0 ? std::numeric_limits<double>::quiet_NaN() : result;
}
inline double tanh(double x) { return std::tanh(x); }
inline double erf(double x) { return std::erf(x); }
inline double round_even(double x) { return std::nearbyint(x); }
inline bool isnan(double x) { return std::isnan(x); }
// From e^-|x|, which never overflows: below x = -709.8 the results are subnormal, not 0.
inline double sigmoid(double x) {
  const double e = exp(-std::fabs(x)), s = 1.0 / (1.0 + e);
  return x >= 0.0 ? s : e * s;
}

}  // namespace tf
