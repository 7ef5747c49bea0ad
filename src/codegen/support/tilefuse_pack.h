// tilefuse_pack.h: Pack, N SIMD vectors that generated kernels treat as one value.
//
// Why: a fused elementwise body is one long dependency chain per vector (sigmoid, then tanh,
// then exp, then log: ~150 instructions, each waiting for the one before). Out-of-order
// execution overlaps only the two or three loop iterations its window holds, so such a kernel
// runs at about one instruction per cycle while the core could issue two vector instructions.
// A Pack applies every operation to its N vectors one after the other, so the instruction
// stream itself interleaves N independent chains and the cores' two vector pipes stay busy.
//
// Pack<B, N> holds N batches of type B: float vectors (PackF), their masks and 32-bit integer
// vectors (the bit manipulation of exp and log). Every operator applies lane-wise, vector by
// vector, exactly as on one B, so a Pack computes bit-identical results to N separate vectors.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include <xsimd/xsimd.hpp>

// Packs are values of 128-512 bytes: a call that is not inlined passes them through memory
// and loses what they are for, so everything that takes one is forced inline.
#define TF_INLINE inline __attribute__((always_inline))

namespace tf {

using VF = xsimd::batch<float>;
using MF = xsimd::batch_bool<float>;
using VI = xsimd::batch<int32_t>;

// f(k) for the compile-time constants k = 0..N-1, in order. Packs index their vectors only
// this way: with constant indices the compiler keeps every vector of a pack in a register (a
// loop over k would leave the pack in memory until it is unrolled, too late for that).
template <typename F, int... K> TF_INLINE void unrolled_at(F& f, std::integer_sequence<int, K...>) {
  (f(std::integral_constant<int, K>()), ...);
}
template <int N, typename F> TF_INLINE void unrolled(F&& f) { unrolled_at(f, std::make_integer_sequence<int, N>()); }

template <typename B, int N> struct Pack {
  B v[N];
  Pack() = default;
  // A scalar (float, int or bool) in every lane of every vector.
  template <typename S>
    requires std::is_arithmetic_v<S>
  TF_INLINE explicit Pack(S s) {
    unrolled<N>([&](auto k) { v[k] = B(s); });
  }
};

template <int N> using PackF = Pack<VF, N>;
template <int N> using PackM = Pack<MF, N>;
template <int N> using PackI = Pack<VI, N>;

template <typename T> inline constexpr bool kIsPack = false;
template <typename B, int N> inline constexpr bool kIsPack<Pack<B, N>> = true;

// f applied to the k-th vector of every argument, for k = 0..N-1: one operation, N times.
template <typename F, typename B, int N, int... K>
TF_INLINE auto each_at(F& f, std::integer_sequence<int, K...>, const Pack<B, N>& a) {
  Pack<decltype(f(a.v[0])), N> r;
  ((r.v[K] = f(a.v[K])), ...);
  return r;
}
template <typename F, typename B, typename C, int N, int... K>
TF_INLINE auto each_at(F& f, std::integer_sequence<int, K...>, const Pack<B, N>& a, const Pack<C, N>& b) {
  Pack<decltype(f(a.v[0], b.v[0])), N> r;
  ((r.v[K] = f(a.v[K], b.v[K])), ...);
  return r;
}
template <typename F, typename B, typename C, typename D, int N, int... K>
TF_INLINE auto each_at(F& f, std::integer_sequence<int, K...>, const Pack<B, N>& a, const Pack<C, N>& b,
                       const Pack<D, N>& c) {
  Pack<decltype(f(a.v[0], b.v[0], c.v[0])), N> r;
  ((r.v[K] = f(a.v[K], b.v[K], c.v[K])), ...);
  return r;
}
template <typename F, typename B, int N, typename... Rest> TF_INLINE auto each(F&& f, const Pack<B, N>& a, const Rest&... rest) {
  return each_at(f, std::make_integer_sequence<int, N>(), a, rest...);
}

// Binary operators on two packs of the same vectors; shifts by a count.
#define TF_PACK_BINARY(op)                                                                      \
  template <typename B, int N> TF_INLINE auto operator op(const Pack<B, N>& a, const Pack<B, N>& b) { \
    return each([](const B& x, const B& y) { return x op y; }, a, b);                            \
  }
TF_PACK_BINARY(+)
TF_PACK_BINARY(-)
TF_PACK_BINARY(*)
TF_PACK_BINARY(/)
TF_PACK_BINARY(&)
TF_PACK_BINARY(==)
TF_PACK_BINARY(!=)
TF_PACK_BINARY(<)
TF_PACK_BINARY(<=)
TF_PACK_BINARY(>)
TF_PACK_BINARY(>=)
TF_PACK_BINARY(&&)
TF_PACK_BINARY(||)
#undef TF_PACK_BINARY

template <int N> TF_INLINE PackI<N> operator>>(const PackI<N>& a, int32_t s) {
  return each([s](const VI& x) { return x >> s; }, a);
}
template <int N> TF_INLINE PackI<N> operator<<(const PackI<N>& a, int32_t s) {
  return each([s](const VI& x) { return x << s; }, a);
}
template <typename B, int N> TF_INLINE Pack<B, N> operator-(const Pack<B, N>& a) {
  return each([](const B& x) { return -x; }, a);
}
template <int N> TF_INLINE PackM<N> operator~(const PackM<N>& a) {
  return each([](const MF& x) { return ~x; }, a);
}

// The N vectors of a pack folded into one by a binary f, as a balanced tree (short latency).
template <typename F, typename B, int N> TF_INLINE B fold(F&& f, const Pack<B, N>& a) {
  if constexpr (N == 1) {
    return a.v[0];
  } else {
    // Pairs of neighbours, then pairs of those: the vectors are combined in the same tree
    // whatever N is.
    Pack<B, (N + 1) / 2> half;
    unrolled<N / 2>([&](auto k) { half.v[k] = f(a.v[2 * k], a.v[2 * k + 1]); });
    if constexpr (N % 2 != 0) half.v[N / 2] = a.v[N - 1];
    return fold(f, half);
  }
}

}  // namespace tf
