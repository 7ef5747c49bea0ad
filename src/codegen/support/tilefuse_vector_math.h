// tilefuse_vector_math.h: exp, log, tanh, sigmoid and erf for generated kernels.
//
// In place of xsimd 8.1's versions: its avx512f backend has no fma kernel (every a*b+c of its
// polynomials is two rounded instructions), its erf divides and evaluates exp on every lane, and
// its tanh and sigmoid divide (vdivps). These are polynomial versions written once over a value
// type V: `float`, any `xsimd::batch<float, A>` (SSE, AVX2, AVX-512) or a Pack of batches
// (tilefuse_pack.h), built from a handful of primitives (`fmadd`, `pick`, bit casts,
// `fast_reciprocal`) that give the same result for a scalar as for a vector lane on the same
// build, so a kernel's scalar tail agrees with its vector body. Branches: exp's rare pass for subnormal results.
//
// Accuracy, versus the correctly rounded result, checked on dense sweeps of all finite floats
// by tests/codegen/vector_math_test.cpp: exp, log <= 2 ulp; sigmoid, erf <= 3 ulp; tanh <= 5.5 ulp. Special
// values follow the C library (the reference interpreter's std:: functions): exp overflows to
// +inf and underflows through the subnormals to +0; log(+-0) = -inf, log(x < 0) = NaN,
// log(+inf) = +inf, subnormal inputs are exact; tanh, sigmoid and erf saturate at +-1 (0 and 1
// for sigmoid) and keep -0; NaN in gives NaN out everywhere.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <xsimd/xsimd.hpp>
#if defined(__SSE__)
#include <immintrin.h>
#endif

#include "tilefuse_pack.h"

namespace tf {

// The value types the math below accepts, with the integer type of the same lanes.
template <typename V> struct Lanes;
template <> struct Lanes<float> {
  using I = int32_t;
};
template <typename A> struct Lanes<xsimd::batch<float, A>> {
  using I = xsimd::batch<int32_t, A>;
};
template <int N> struct Lanes<PackF<N>> {
  using I = PackI<N>;
};
template <typename V> concept FloatLanes = requires { typename Lanes<V>::I; };

namespace vmath {

// ---- primitives, overloaded for float and for batches ----

// a * b + c, rounded once where the target has FMA (and then on scalars and vectors alike).
inline float fmadd(float a, float b, float c) {
#if defined(__FMA__)
  return __builtin_fmaf(a, b, c);
#else
  return a * b + c;
#endif
}
template <typename A> inline xsimd::batch<float, A> fmadd(xsimd::batch<float, A> a, xsimd::batch<float, A> b,
                                                          xsimd::batch<float, A> c) {
  using B [[maybe_unused]] = xsimd::batch<float, A>;
#if defined(__AVX512F__)
  if constexpr (sizeof(B) == 64) return B(_mm512_fmadd_ps(a, b, c));
#endif
#if defined(__FMA__)
  if constexpr (sizeof(B) == 32) return B(_mm256_fmadd_ps(a, b, c));
  if constexpr (sizeof(B) == 16) return B(_mm_fmadd_ps(a, b, c));
#endif
  return a * b + c;
}

inline float pick(bool m, float a, float b) { return m ? a : b; }
template <typename A>
inline xsimd::batch<float, A> pick(xsimd::batch_bool<float, A> m, xsimd::batch<float, A> a, xsimd::batch<float, A> b) {
  return xsimd::select(m, a, b);
}

// max(x, lo) and min(x, hi) that keep NaN. x86's maxps/minps return their second operand when
// either is NaN, so with x second they clamp in one instruction; elsewhere compare and select.
template <typename V> inline V at_least(V x, float lo) {
#if defined(__SSE__)
  if constexpr (!std::is_same_v<V, float>) return xsimd::max(V(lo), x);
#endif
  return pick(x < V(lo), V(lo), x);
}
template <typename V> inline V at_most(V x, float hi) {
#if defined(__SSE__)
  if constexpr (!std::is_same_v<V, float>) return xsimd::min(V(hi), x);
#endif
  return pick(x > V(hi), V(hi), x);
}

inline bool any_lane(bool m) { return m; }
template <typename A> inline bool any_lane(xsimd::batch_bool<float, A> m) { return xsimd::any(m); }
inline bool all_lanes(bool m) { return m; }
template <typename A> inline bool all_lanes(xsimd::batch_bool<float, A> m) { return xsimd::all(m); }

inline int32_t as_bits(float x) { return std::bit_cast<int32_t>(x); }
template <typename A> inline xsimd::batch<int32_t, A> as_bits(xsimd::batch<float, A> x) {
  return xsimd::bitwise_cast<xsimd::batch<int32_t, A>>(x);
}
inline float from_bits(int32_t i) { return std::bit_cast<float>(i); }
template <typename A> inline xsimd::batch<float, A> from_bits(xsimd::batch<int32_t, A> i) {
  return xsimd::bitwise_cast<xsimd::batch<float, A>>(i);
}
inline float to_float(int32_t i) { return float(i); }
template <typename A> inline xsimd::batch<float, A> to_float(xsimd::batch<int32_t, A> i) { return xsimd::to_float(i); }

inline float magnitude(float x) { return std::fabs(x); }
template <typename A> inline xsimd::batch<float, A> magnitude(xsimd::batch<float, A> x) { return xsimd::abs(x); }
inline float with_sign_of(float mag, float s) { return std::copysign(mag, s); }
template <typename A> inline xsimd::batch<float, A> with_sign_of(xsimd::batch<float, A> mag, xsimd::batch<float, A> s) {
  return xsimd::copysign(mag, s);
}

// One Newton step takes a 14-bit reciprocal estimate to within about 1 ulp.
template <typename V> TF_INLINE V refine_reciprocal(V d, V r) { return fmadd(r, fmadd(-d, r, V(1.0f)), r); }

// 1 / d for d whose reciprocal is a normal float (here always d in [1, 2]): on AVX-512 the
// rcp14 estimate plus a Newton step, a quarter of the cost of vdivps and within ~1 ulp; other
// targets divide (SSE/AVX's 12-bit estimate would need two steps to be as accurate).
inline float fast_reciprocal(float d) {
#if defined(__AVX512F__)
  const __m128 v = _mm_set_ss(d);
  return refine_reciprocal(d, _mm_cvtss_f32(_mm_rcp14_ss(v, v)));
#else
  return 1.0f / d;
#endif
}
template <typename A> inline xsimd::batch<float, A> fast_reciprocal(xsimd::batch<float, A> d) {
  using B = xsimd::batch<float, A>;
#if defined(__AVX512F__)
  if constexpr (sizeof(B) == 64) return refine_reciprocal(d, B(_mm512_rcp14_ps(d)));
#endif
  return B(1.0f) / d;
}

// a / d for d in [2^-126, 2^126] (so its reciprocal estimate is a normal float): on AVX-512 the
// quotient by rcp14's estimate, corrected once by its residual a - d q (Markstein), within ~1 ulp
// of the rounded quotient at a third of vdivps's cost, which bounds a loop of divisions on a
// core with one divider; other targets divide.
inline float fast_divide(float a, float d) {
#if defined(__AVX512F__)
  const __m128 v = _mm_set_ss(d);
  const float r = _mm_cvtss_f32(_mm_rcp14_ss(v, v));
  const float q = a * r;
  return fmadd(r, fmadd(-d, q, a), q);
#else
  return a / d;
#endif
}
template <typename A> inline xsimd::batch<float, A> fast_divide(xsimd::batch<float, A> a, xsimd::batch<float, A> d) {
  using B [[maybe_unused]] = xsimd::batch<float, A>;
#if defined(__AVX512F__)
  if constexpr (sizeof(B) == 64) {
    const B r(_mm512_rcp14_ps(d));
    const B q = a * r;
    return fmadd(r, fmadd(-d, q, a), q);
  }
#endif
  return a / d;
}

// y * 2^n for an integral n in [-150, 128] held as a float (t's low bits hold it as an integer,
// see exp): one rounding, so subnormal results and overflow to inf come out right.
template <typename V> TF_INLINE V scale_by_pow2(V y, V n, V t) {
#if defined(__AVX512F__)
  if constexpr (sizeof(V) == 64) return V(_mm512_scalef_ps(y, n));
#endif
  // 2^n does not fit a float's exponent at both ends of the range, so scale in two halves,
  // each a normal power of two; y * 2^n1 is exact, the second product rounds once.
  using I = typename Lanes<V>::I;
  const I k = as_bits(t) - I(as_bits(0x1.8p23f));
  const I k1 = k >> 1, k2 = k - k1;
  return y * from_bits((k1 + I(127)) << 23) * from_bits((k2 + I(127)) << 23);
}

// ---- the same primitives on packs: each vector as above ----
template <int N> TF_INLINE PackF<N> fmadd(const PackF<N>& a, const PackF<N>& b, const PackF<N>& c) {
  return each([](VF x, VF y, VF z) { return fmadd(x, y, z); }, a, b, c);
}
template <int N> TF_INLINE PackF<N> pick(const PackM<N>& m, const PackF<N>& a, const PackF<N>& b) {
  return each([](MF k, VF x, VF y) { return pick(k, x, y); }, m, a, b);
}
template <int N> TF_INLINE PackF<N> at_least(const PackF<N>& x, float lo) {
  return each([lo](VF v) { return at_least(v, lo); }, x);
}
template <int N> TF_INLINE PackF<N> at_most(const PackF<N>& x, float hi) {
  return each([hi](VF v) { return at_most(v, hi); }, x);
}
template <int N> TF_INLINE bool any_lane(const PackM<N>& m) { return any_lane(fold([](MF a, MF b) { return a || b; }, m)); }
template <int N> TF_INLINE bool all_lanes(const PackM<N>& m) { return all_lanes(fold([](MF a, MF b) { return a && b; }, m)); }
template <int N> TF_INLINE PackI<N> as_bits(const PackF<N>& x) { return each([](VF v) { return as_bits(v); }, x); }
template <int N> TF_INLINE PackF<N> from_bits(const PackI<N>& i) { return each([](VI v) { return from_bits(v); }, i); }
template <int N> TF_INLINE PackF<N> to_float(const PackI<N>& i) { return each([](VI v) { return to_float(v); }, i); }
template <int N> TF_INLINE PackF<N> magnitude(const PackF<N>& x) { return each([](VF v) { return magnitude(v); }, x); }
template <int N> TF_INLINE PackF<N> with_sign_of(const PackF<N>& mag, const PackF<N>& s) {
  return each([](VF m, VF v) { return with_sign_of(m, v); }, mag, s);
}
template <int N> TF_INLINE PackF<N> fast_reciprocal(const PackF<N>& d) {
  return each([](VF v) { return fast_reciprocal(v); }, d);
}
template <int N> TF_INLINE PackF<N> fast_divide(const PackF<N>& a, const PackF<N>& d) {
  return each([](VF x, VF y) { return fast_divide(x, y); }, a, d);
}
template <int N> TF_INLINE PackF<N> scale_by_pow2(const PackF<N>& y, const PackF<N>& n, const PackF<N>& t) {
  return each([](VF a, VF b, VF c) { return scale_by_pow2(a, b, c); }, y, n, t);
}

// c0 x^n + c1 x^(n-1) + ... + cn by Horner's rule, one FMA a step, highest coefficient first.
template <typename V, typename... C> TF_INLINE V horner(V x, float c0, C... rest) {
  V p = V(c0);
  ((p = fmadd(p, x, V(rest))), ...);
  return p;
}

// e^r for |r| <= ln2/2 (and NaN): 1 + r + r^2 p(r), p of degree 4 fitted minimax to the
// relative error on that interval (a degree below Cephes' expf, as accurate: 1.01 ulp at most
// over every float, bench/README.md "Against SLEEF").
template <typename V> TF_INLINE V exp_of_reduced(V r) {
  const V p = horner(r, 1.381461276e-03f, 8.368710056e-03f, 4.166838899e-02f, 1.666652113e-01f, 4.999999404e-01f);
  return fmadd(p, r * r, r) + V(1.0f);
}

// r = x - n ln2 by Cody-Waite: ln2's high part has trailing zeros, so n times it is exact.
template <typename V> TF_INLINE V reduce_by_ln2(V x, V n) {
  return fmadd(n, V(2.12194440e-4f), fmadd(n, V(-0.693359375f), x));
}

// e^x for x in [-104, 89] or NaN: x = n ln2 + r, |r| <= ln2/2; 2^n applied with one rounding,
// so subnormal results and overflow to inf come out right.
template <typename V> TF_INLINE V exp_in_range(V x) {
  // Adding 1.5 * 2^23 rounds x log2(e) to an integer n, left in t's low mantissa bits too.
  const V t = fmadd(x, V(1.44269504088896341f), V(0x1.8p23f));
  const V n = t - V(0x1.8p23f);
  return scale_by_pow2(exp_of_reduced(reduce_by_ln2(x, n)), n, t);
}

// e^x for x in [-87.34, kNormalExpTo] (n in [-126, 127], so 2^n is a normal float) or NaN: as
// exp_in_range, but 2^n is one shift of t, whose low bits hold n + 127, and one product. Without
// AVX-512's vscalefps this is a third of the scaling's instructions (bench/vector_math.cpp).
constexpr float kNormalExpTo = 88.37626f;  // x log2(e) rounds to 127 at most
template <typename V> TF_INLINE V exp_normal(V x) {
  constexpr float kRounder = 0x1.8p23f + 127.0f;
  const V t = fmadd(x, V(1.44269504088896341f), V(kRounder));
  const V n = t - V(kRounder);
  return exp_of_reduced(reduce_by_ln2(x, n)) * from_bits(as_bits(t) << 23);
}

}  // namespace vmath

// e^x. Results below FLT_MIN are kept off the common path: an x86 instruction whose result is
// subnormal or underflows to 0 takes a microcode assist (~100 cycles) while FTZ is off, and a
// masked softmax exponentiates -inf in most vectors. So those lanes are set to 0 by a select,
// and only a vector that has a lane with a subnormal result (x in [-104, -87.34), rare in
// practice) computes it, exactly, on a second pass; so does one with a lane above kCommonTo.
template <FloatLanes V> TF_INLINE V exp(V x) {
  using namespace vmath;
  constexpr float kNormalFrom = -87.33654f;  // e^x >= FLT_MIN from here on
#if defined(__AVX512F__)
  constexpr float kCommonTo = 89.0f;  // vscalefps scales to inf in one instruction (e^89 overflows)
  const V r0 = exp_in_range(at_most(at_least(x, kNormalFrom), kCommonTo));
#else
  constexpr float kCommonTo = kNormalExpTo;
  const V r0 = exp_normal(at_most(at_least(x, kNormalFrom), kCommonTo));
#endif
  const auto tiny = x < V(kNormalFrom);
  V r = pick(tiny, V(0.0f), r0);
  // e^x rounds to 0 below -103.97; above kCommonTo it is a large normal float or inf.
  const auto rare = (tiny && x >= V(-104.0f)) || x > V(kCommonTo);
  if (any_lane(rare)) r = pick(rare, exp_in_range(at_most(at_least(x, -104.0f), 89.0f)), r);
  return r;
}

// ln x. x = m 2^k with m in [sqrt(1/2), sqrt(2)); ln(m) by Cephes' logf polynomial in f = m - 1.
template <FloatLanes V> TF_INLINE V log(V x) {
  using namespace vmath;
  using I = typename Lanes<V>::I;
  // Subnormals are scaled into the normal range so the exponent/mantissa split holds.
  const auto subnormal = x < V(std::numeric_limits<float>::min());
  const V xs = pick(subnormal, x * V(0x1p23f), x);
  const I j = as_bits(xs) - I(0x3f3504f3);  // 0x3f3504f3 = sqrt(1/2)
  const V k = to_float(j >> 23) - pick(subnormal, V(23.0f), V(0.0f));
  const V f = from_bits((j & I(0x007fffff)) + I(0x3f3504f3)) - V(1.0f);
  const V z = f * f;
  const V p = horner(f, 7.0376836292e-2f, -1.1514610310e-1f, 1.1676998740e-1f, -1.2420140846e-1f,
                        1.4249322787e-1f, -1.6668057665e-1f, 2.0000714765e-1f, -2.4999993993e-1f,
                        3.3333331174e-1f);
  V y = fmadd(k, V(-2.12194440e-4f), p * f * z);  // ln2 split as in exp: k * 0.693359375 is exact
  y = fmadd(z, V(-0.5f), y);
  V r = fmadd(k, V(0.693359375f), f + y);
  constexpr float kInf = std::numeric_limits<float>::infinity();
  r = pick(x >= V(0.0f), r, V(std::numeric_limits<float>::quiet_NaN()));  // negative or NaN
  r = pick(x == V(0.0f), V(-kInf), r);
  return pick(x == V(kInf), x, r);
}

// tanh x: Eigen's 13/6-degree rational interpolant x P(x^2) / Q(x^2) on [-9, 9] (tanh rounds to
// +-1 beyond), and x itself below |x| = 0.0004, where x - x^3/3 rounds to within an ulp of x. No
// branch and no exp: a third of the instructions of 1 - 2 / (e^2x + 1) with a separate small-x
// polynomial, which took GELU-tanh's kernel off memory speed (bench/README.md). The price is the
// bound: 5.5 ulp (4.5 with FMA, 4.1 on AVX-512, whose quotient needs no vdivps) instead of 3
// (ONNX Runtime's MLAS tanh is a rational function of this kind too).
template <FloatLanes V> TF_INLINE V tanh(V x) {
  using namespace vmath;
  const V c = at_most(at_least(x, -9.0f), 9.0f);
  const V z = c * c;
  const V p = horner(z, -2.76076847742355e-16f, 2.00018790482477e-13f, -8.60467152213735e-11f, 5.12229709037114e-08f,
                     1.48572235717979e-05f, 6.37261928875436e-04f, 4.89352455891786e-03f);
  const V q = horner(z, 1.19825839466702e-06f, 1.18534705686654e-04f, 2.26843463243900e-03f, 4.89352518554385e-03f);
  return pick(magnitude(x) < V(0.0004f), x, fast_divide(c * p, q));  // q is in [0.0049, 1.61]
}

// 1 / (1 + e^-x), from e = e^-|x| <= 1 on both sides (as the reference computes it), so
// nothing overflows and tiny results for very negative x keep their precision.
template <FloatLanes V> TF_INLINE V sigmoid(V x) {
  using namespace vmath;
  const V e = tf::exp(-magnitude(x));
  const V s = fast_reciprocal(V(1.0f) + e);
  return pick(x >= V(0.0f), s, e * s);
}

// softplus x = log(1 + e^x) = max(x, 0) + log1p(e^-|x|), as the reference computes it, so e^x
// never overflows and tiny results for very negative x keep their precision. log1p(e) is
// log(u) * e / (u - 1) with u = 1 + e (exact to a few ulp even where u rounds; Goldberg), and e
// itself where u rounds to 1.
template <FloatLanes V> TF_INLINE V softplus(V x) {
  using namespace vmath;
  const V e = tf::exp(-magnitude(x));
  const V u = V(1.0f) + e;
  const V d = u - V(1.0f);
  const V log1p_e = pick(d == V(0.0f), e, tf::log(u) * (e / pick(d == V(0.0f), V(1.0f), d)));
  return pick(x > V(0.0f), x, V(0.0f)) + log1p_e;
}

// erf x: x + x P(x^2) below |x| = 1.25; above, a polynomial in |x| - 2.625 fitted to erf on
// [1.25, 4], and 1 where erf rounds to 1. Both are near-minimax fits (iterated
// weighted least squares, float-rounded coefficients); no exp and no division.
template <FloatLanes V> TF_INLINE V erf(V x) {
  using namespace vmath;
  const V z = x * x;
  const V p = horner(z, 6.203354860e-05f, -7.426498923e-04f, 5.110062659e-03f, -2.680496685e-02f,
                        1.128219590e-01f, -3.761247993e-01f, 1.283791363e-01f);
  const V small = fmadd(x, p, x);

  const V a = magnitude(x);
  const V u = a - V(2.625f);
  const V q = horner(u, -7.520457075e-06f, 7.904445738e-06f, 7.321613521e-05f, -1.896673348e-04f,
                        3.750296673e-05f, 7.193413330e-04f, -2.249558456e-03f, 4.197936039e-03f,
                        -5.413231440e-03f, 4.894915968e-03f, -3.013318405e-03f, 1.147584757e-03f,
                        9.997946024e-01f);
  // erf(x) rounds to 1 from 3.9195 on; the comparisons keep NaN.
  const V large = pick(q > V(1.0f) || a > V(3.9195f), V(1.0f), q);
  return pick(a < V(1.25f), small, with_sign_of(large, x));
}

}  // namespace tf
