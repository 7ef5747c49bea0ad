#include "runtime/float_conversion.h"

#include <immintrin.h>

#include <cstring>

#include "ir/half.h"
#include "runtime/cpu_isa.h"

#define TF_AVX512 __attribute__((target("avx512f,avx512bw,f16c")))
#define TF_AVX2 __attribute__((target("avx2,f16c")))

// GCC 12's AVX-512 conversion and shift intrinsics pass an "undefined" vector as their unused
// merge source, which -Wmaybe-uninitialized reports; nothing here is read uninitialised.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace tilefuse::runtime {

namespace {

// A loop over [i, end) that converts whole vectors and returns where it stopped.
using VectorLoop = int64_t (*)(const void* from, void* to, int64_t i, int64_t end);

constexpr int kNearestEven = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

// ---- AVX-512: 16 elements a step ----
template <DType From> TF_AVX512 __m512 load16(const void* p, int64_t i) {
  const auto* halves = reinterpret_cast<const __m256i*>(static_cast<const uint16_t*>(p) + i);
  if constexpr (From == DType::f16) return _mm512_cvtph_ps(_mm256_loadu_si256(halves));
  if constexpr (From == DType::bf16) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(halves)), 16));
  }
  return _mm512_loadu_ps(static_cast<const float*>(p) + i);
}

// f32_to_bf16 on 16 lanes: round to nearest even in the integer lanes, NaNs made quiet.
TF_AVX512 __m256i bf16_from(__m512 v) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), odd);
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  const __m512i bits = _mm512_mask_or_epi32(rounded, nan, u, _mm512_set1_epi32(0x00400000));
  return _mm512_cvtepi32_epi16(_mm512_srli_epi32(bits, 16));
}

template <DType To> TF_AVX512 void store16(__m512 v, void* p, int64_t i) {
  auto* halves = reinterpret_cast<__m256i*>(static_cast<uint16_t*>(p) + i);
  if constexpr (To == DType::f16) _mm256_storeu_si256(halves, _mm512_cvtps_ph(v, kNearestEven));
  if constexpr (To == DType::bf16) _mm256_storeu_si256(halves, bf16_from(v));
  if constexpr (To == DType::f32) _mm512_storeu_ps(static_cast<float*>(p) + i, v);
}

template <DType From, DType To> struct Avx512Loop {
  TF_AVX512 static int64_t run(const void* from, void* to, int64_t i, int64_t end) {
    for (; i + 16 <= end; i += 16) store16<To>(load16<From>(from, i), to, i);
    return i;
  }
};

// ---- AVX2 with F16C: 8 elements a step ----
template <DType From> TF_AVX2 __m256 load8(const void* p, int64_t i) {
  const auto* halves = reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(p) + i);
  if constexpr (From == DType::f16) return _mm256_cvtph_ps(_mm_loadu_si128(halves));
  if constexpr (From == DType::bf16) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(halves)), 16));
  }
  return _mm256_loadu_ps(static_cast<const float*>(p) + i);
}

TF_AVX2 __m128i bf16_from(__m256 v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), odd);
  const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  const __m256i bits = _mm256_blendv_epi8(rounded, _mm256_or_si256(u, _mm256_set1_epi32(0x00400000)), nan);
  // packus works within 128-bit halves: lanes 0-3 and 4-7 land in 64-bit quarters 0 and 2.
  const __m256i packed = _mm256_packus_epi32(_mm256_srli_epi32(bits, 16), _mm256_setzero_si256());
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0x08));
}

template <DType To> TF_AVX2 void store8(__m256 v, void* p, int64_t i) {
  auto* halves = reinterpret_cast<__m128i*>(static_cast<uint16_t*>(p) + i);
  if constexpr (To == DType::f16) _mm_storeu_si128(halves, _mm256_cvtps_ph(v, kNearestEven));
  if constexpr (To == DType::bf16) _mm_storeu_si128(halves, bf16_from(v));
  if constexpr (To == DType::f32) _mm256_storeu_ps(static_cast<float*>(p) + i, v);
}

template <DType From, DType To> struct Avx2Loop {
  TF_AVX2 static int64_t run(const void* from, void* to, int64_t i, int64_t end) {
    for (; i + 8 <= end; i += 8) store8<To>(load8<From>(from, i), to, i);
    return i;
  }
};

// The loop of `Loop` (Avx512Loop or Avx2Loop) for a pair of different float types.
template <template <DType, DType> class Loop> VectorLoop vector_loop(DType from, DType to) {
  switch (from) {
    case DType::f32: return to == DType::f16 ? &Loop<DType::f32, DType::f16>::run : &Loop<DType::f32, DType::bf16>::run;
    case DType::f16: return to == DType::f32 ? &Loop<DType::f16, DType::f32>::run : &Loop<DType::f16, DType::bf16>::run;
    default: return to == DType::f32 ? &Loop<DType::bf16, DType::f32>::run : &Loop<DType::bf16, DType::f16>::run;
  }
}

VectorLoop vector_loop_for_this_cpu(DType from, DType to) {
  static const bool f16c = (__builtin_cpu_init(), __builtin_cpu_supports("f16c"));
  switch (vector_isa()) {
    case VectorIsa::avx512: return vector_loop<Avx512Loop>(from, to);
    case VectorIsa::avx2: return f16c ? vector_loop<Avx2Loop>(from, to) : nullptr;
    case VectorIsa::scalar: break;
  }
  return nullptr;
}

// ---- one element: ir/half.h ----
float load_one(const void* p, DType type, int64_t i) {
  switch (type) {
    case DType::f16: return f16_to_f32(static_cast<const uint16_t*>(p)[i]);
    case DType::bf16: return bf16_to_f32(static_cast<const uint16_t*>(p)[i]);
    default: return static_cast<const float*>(p)[i];
  }
}

void store_one(float v, void* p, DType type, int64_t i) {
  switch (type) {
    case DType::f16: static_cast<uint16_t*>(p)[i] = f32_to_f16(v); return;
    case DType::bf16: static_cast<uint16_t*>(p)[i] = f32_to_bf16(v); return;
    default: static_cast<float*>(p)[i] = v;
  }
}

}  // namespace

bool converts_floats(DType from, DType to) {
  const auto handled = [](DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; };
  return handled(from) && handled(to);
}

void convert_floats(const void* from, DType from_type, void* to, DType to_type, int64_t begin, int64_t end) {
  if (from_type == to_type) {
    const size_t size = dtype_size(from_type);
    std::memcpy(static_cast<char*>(to) + begin * size, static_cast<const char*>(from) + begin * size, (end - begin) * size);
    return;
  }
  int64_t i = begin;
  if (VectorLoop loop = vector_loop_for_this_cpu(from_type, to_type)) i = loop(from, to, i, end);
  for (; i < end; ++i) store_one(load_one(from, from_type, i), to, to_type, i);
}

}  // namespace tilefuse::runtime
