// Lane masks and masked-load addresses for the runtime's hand-written AVX-512 and AVX2 routines
// (the GEMM micro-kernels and their packing, the convolution's unfolding, Winograd's transforms,
// the depthwise convolution), which are compiled for their ISA whatever the build's target and
// run only where the CPU has it.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace tilefuse::runtime {

// The lanes [0, n) of a 16-lane vector, n clamped to [0, 16].
__attribute__((target("avx512f"))) inline __mmask16 lanes(int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xffff) : n <= 0 ? 0 : static_cast<__mmask16>((1u << n) - 1);
}

// The lanes k with lo <= k < hi of an 8-lane (AVX2) vector, as a maskload/maskstore mask.
__attribute__((target("avx2"))) inline __m256i lanes8_between(int64_t lo, int64_t hi) {
  const auto clamp = [](int64_t v) { return static_cast<int>(v < -1 ? -1 : v > 9 ? 9 : v); };
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(clamp(lo)), iota),
                             _mm256_cmpgt_epi32(_mm256_set1_epi32(clamp(hi)), iota));
}

// The lanes [0, n) of an 8-lane vector, n clamped to [0, 8].
__attribute__((target("avx2"))) inline __m256i lanes8(int64_t n) { return lanes8_between(0, n); }

// The address of x[offset], computed as an integer: a masked load may start before a row (in
// the padding) as long as the lanes it reads lie inside it, but pointer arithmetic that leaves
// the tensor is undefined in C++.
inline const float* address(const float* x, int64_t offset) {
  return reinterpret_cast<const float*>(reinterpret_cast<uintptr_t>(x) + offset * static_cast<int64_t>(sizeof(float)));
}

}  // namespace tilefuse::runtime
