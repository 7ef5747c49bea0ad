// tilefuse_half.h: f16 and bf16, the 16-bit float storage types of generated kernels, and their
// conversions to and from f32: one value at a time, and a vector (VF) at a time.
//
// Kernels compute in f32; a 16-bit tensor is widened as it is loaded and rounded to nearest even
// as it is stored. The vector conversions give bit for bit what the scalar ones give, NaN
// payloads included, so a kernel's scalar tail agrees with its vector body
// (tests/codegen/half_lanes_test.cpp checks every 16-bit value and a sweep of f32 values on the
// AVX-512, AVX2 and baseline x86-64 targets).
//
// Why vectors: converting lane by lane through memory made a bf16 bias+GELU over 64 MiB three
// times slower than the same graph in f32, although it moves half the bytes. Widening is a zero
// extension (bf16: and a shift; f16: F16C's vcvtph2ps). Narrowing bf16 is integer rounding, or
// avx512_bf16's vcvtneps2bf16 where no lane is subnormal (it flushes those to zero, which the
// scalar rounding keeps); f16 is F16C's vcvtps2ph.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <xsimd/xsimd.hpp>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "tilefuse_pack.h"

namespace tf {

// 16-bit float storage types; arithmetic never happens on them directly.
struct f16 { uint16_t bits; };
struct bf16 { uint16_t bits; };
template <typename T> inline constexpr bool kIsHalf = std::is_same_v<T, f16> || std::is_same_v<T, bf16>;

// ---- one value (round to nearest even; NaN stays NaN, made quiet as x86's conversions do) ----
inline float to_f32(float x) { return x; }
inline float to_f32(bf16 x) { uint32_t u = uint32_t(x.bits) << 16; float f; std::memcpy(&f, &u, 4); return f; }
inline float to_f32(f16 h) {
  uint32_t sign = uint32_t(h.bits & 0x8000u) << 16, exp = (h.bits >> 10) & 0x1fu, mant = h.bits & 0x3ffu, u;
  if (exp == 0) {
    float f = std::ldexp(float(mant), -24);  // zero or subnormal
    return sign ? -f : f;
  }
  if (exp == 31) {
    u = sign | 0x7f800000u | mant << 13 | (mant != 0 ? 0x00400000u : 0u);  // inf, or a quiet NaN
  } else {
    u = sign | (exp + 112) << 23 | mant << 13;
  }
  float f; std::memcpy(&f, &u, 4); return f;
}
inline void from_f32(float v, float* p) { *p = v; }
inline void from_f32(float v, bf16* p) {
  uint32_t u; std::memcpy(&u, &v, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) { p->bits = uint16_t((u >> 16) | 0x40); return; }
  u += 0x7fffu + ((u >> 16) & 1u);
  p->bits = uint16_t(u >> 16);
}
inline void from_f32(float v, f16* p) {
  uint32_t u; std::memcpy(&u, &v, 4);
  uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) { p->bits = sign | 0x7e00u | uint16_t((a >> 13) & 0x3ffu); return; }  // payload's top bits
  if (a >= 0x477ff000u) { p->bits = sign | 0x7c00u; return; }
  if (a < 0x38800000u) { float f; std::memcpy(&f, &a, 4); p->bits = sign | uint16_t(std::nearbyint(f * 16777216.0f)); return; }
  uint32_t r = a + 0xfffu + ((a >> 13) & 1u);
  p->bits = sign | uint16_t(((r >> 13) - (112u << 10)) & 0xffffu);
}

// ---- a vector (VF::size lanes) of 16-bit values ----
// The target decides VF's width: 16 lanes with AVX-512, 8 with AVX2, 4 with SSE2 alone; each
// branch below is compiled only for its own width.
namespace half_lanes {

constexpr size_t kBytes = VF::size * sizeof(uint16_t);  // one vector's worth of 16-bit values
inline bool aligned(const void* p) { return (reinterpret_cast<uintptr_t>(p) & (kBytes - 1)) == 0; }

// True where this target converts f16 lanes in registers (F16C); elsewhere the callers go lane
// by lane through memory.
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__F16C__))
constexpr bool kF16 = true;
#else
constexpr bool kF16 = false;
#endif

// The VF::size 16-bit values at p, each in the high half of its 32-bit lane (a bf16's f32 bits).
inline VI high_halves(const uint16_t* p) {
#if defined(__AVX512F__)
  static_assert(VF::size == 16);
  return _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))), 16);
#elif defined(__AVX2__)
  static_assert(VF::size == 8);
  return _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), 16);
#elif defined(__SSE2__) && !defined(__AVX__)
  static_assert(VF::size == 4);
  return _mm_unpacklo_epi16(_mm_setzero_si128(), _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
#else
  alignas(64) int32_t lanes[VF::size];
  for (size_t i = 0; i < VF::size; ++i) lanes[i] = int32_t(uint32_t(p[i]) << 16);
  return VI::load_aligned(lanes);
#endif
}

// The high half of each 32-bit lane, as 16-bit values: stored at p, non-temporally where
// `kStream` and p is aligned to kBytes (an ordinary store otherwise).
template <bool kStream> inline void store_high_halves(VI v, uint16_t* p) {
#if defined(__AVX512F__)
  const __m256i h = _mm512_cvtepi32_epi16(_mm512_srli_epi32(v, 16));
  if (kStream && aligned(p)) return _mm256_stream_si256(reinterpret_cast<__m256i*>(p), h);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), h);
#elif defined(__AVX2__)
  // packus works within 128-bit halves: lanes 0-3 and 4-7 land in 64-bit quarters 0 and 2.
  const __m256i packed = _mm256_packus_epi32(_mm256_srli_epi32(v, 16), _mm256_setzero_si256());
  const __m128i h = _mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0x08));
  if (kStream && aligned(p)) return _mm_stream_si128(reinterpret_cast<__m128i*>(p), h);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), h);
#elif defined(__SSE2__) && !defined(__AVX__)
  // The arithmetic shift leaves each value sign-extended, which packs (signed) takes back exactly.
  _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packs_epi32(_mm_srai_epi32(v, 16), _mm_setzero_si128()));
#else
  alignas(64) int32_t lanes[VF::size];
  v.store_aligned(lanes);
  for (size_t i = 0; i < VF::size; ++i) p[i] = uint16_t(uint32_t(lanes[i]) >> 16);
#endif
}

// v's lanes rounded to bf16, each in the high half of its lane: from_f32(float, bf16*) per lane.
inline VI bf16_rounded(VF v) {
  const VI u = xsimd::bitwise_cast<VI>(v);
  const VI odd = (u >> 16) & VI(1);  // the arithmetic shift leaves bit 16 in bit 0 all the same
  const VI quiet_nan = u | VI(0x00400000);
  return xsimd::select((u & VI(0x7fffffff)) > VI(0x7f800000), quiet_nan, u + VI(0x7fff) + odd);
}

inline VF load(const bf16* p) { return xsimd::bitwise_cast<VF>(high_halves(&p->bits)); }
template <bool kStream> inline void store(bf16* p, VF v) {
#if defined(__AVX512BF16__) && defined(__AVX512F__)
  // vcvtneps2bf16 rounds as bf16_rounded does in one instruction, but treats subnormal inputs
  // as zero: a vector with one (rare) takes the integer rounding.
  if (_mm512_fpclass_ps_mask(v, 0x20) == 0) {
    const __m256i h = __m256i(_mm512_cvtneps_pbh(v));
    if (kStream && aligned(p)) return _mm256_stream_si256(reinterpret_cast<__m256i*>(p), h);
    return _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), h);
  }
#endif
  store_high_halves<kStream>(bf16_rounded(v), &p->bits);
}

// Two vectors stored as bf16 at p (lo first): on AVX-512 with bf16 instructions, one
// vcvtne2ps2bf16 rounds both into one 64-byte vector, where neither has a subnormal lane.
template <bool kStream> inline void store_pair(bf16* p, VF lo, VF hi) {
#if defined(__AVX512BF16__) && defined(__AVX512F__)
  if ((_mm512_fpclass_ps_mask(lo, 0x20) | _mm512_fpclass_ps_mask(hi, 0x20)) == 0) {
    const __m512i h = __m512i(_mm512_cvtne2ps_pbh(hi, lo));
    if (kStream && (reinterpret_cast<uintptr_t>(p) & 63) == 0) return _mm512_stream_si512(reinterpret_cast<__m512i*>(p), h);
    if (kStream && aligned(p)) {  // a row aligned to one vector's 32 bytes, not to a pair's 64
      _mm256_stream_si256(reinterpret_cast<__m256i*>(p), _mm512_castsi512_si256(h));
      return _mm256_stream_si256(reinterpret_cast<__m256i*>(p + VF::size), _mm512_extracti64x4_epi64(h, 1));
    }
    return _mm512_storeu_si512(p, h);
  }
#endif
  store<kStream>(p, lo);
  store<kStream>(p + VF::size, hi);
}

#if defined(__AVX512F__)
inline VF load(const f16* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
template <bool kStream> inline void store(f16* p, VF v) {
  const __m256i h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  if (kStream && aligned(p)) return _mm256_stream_si256(reinterpret_cast<__m256i*>(p), h);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), h);
}
#elif defined(__AVX2__) && defined(__F16C__)
inline VF load(const f16* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
template <bool kStream> inline void store(f16* p, VF v) {
  const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  if (kStream && aligned(p)) return _mm_stream_si128(reinterpret_cast<__m128i*>(p), h);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), h);
}
#endif

// v rounded to a 16-bit type's precision and widened back (a Cast inside a kernel).
inline VF round_trip(bf16, VF v) { return xsimd::bitwise_cast<VF>(bf16_rounded(v) & VI(int32_t(0xffff0000u))); }
#if defined(__AVX512F__)
inline VF round_trip(f16, VF v) { return _mm512_cvtph_ps(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)); }
#elif defined(__AVX2__) && defined(__F16C__)
inline VF round_trip(f16, VF v) { return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)); }
#endif

}  // namespace half_lanes

// True where T's vectors convert in registers (half_lanes above) rather than lane by lane.
template <typename T>
inline constexpr bool kHalfInLanes = std::is_same_v<T, bf16> || (std::is_same_v<T, f16> && half_lanes::kF16);
}  // namespace tf
