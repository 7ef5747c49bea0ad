// 8 x 8 transposes in AVX2 registers, for the routines that turn rows into lanes on AVX2 (the
// stems with maps in lanes, the depthwise convolution across channels): transpose_avx512.h's
// counterpart. Compiled for AVX2 whatever the build's target; call them only where the CPU has
// it. Always inlined and fully unrolled, so the 8 vectors stay in registers.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "runtime/lane_masks.h"

#define TF_AVX2_TRANSPOSE __attribute__((target("avx2,fma"), always_inline))

namespace tilefuse::runtime::avx2 {

// v[r] holds 8 consecutive values of row r; afterwards v[e] holds value e of every row.
TF_AVX2_TRANSPOSE inline void transpose8(__m256 v[8]) {
  __m256 t[8], u[8];
#pragma GCC unroll 4
  for (int i = 0; i < 8; i += 2) {  // 128-bit lane l of t[i]: rows i, i+1 at values 4l, 4l+1
    t[i] = _mm256_unpacklo_ps(v[i], v[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(v[i], v[i + 1]);
  }
#pragma GCC unroll 2
  for (int i = 0; i < 8; i += 4) {  // lane l of u[i + j]: rows i..i+3 at value 4l + j
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
  }
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {  // rows 0-3 and 4-7 of values j and j + 4
    v[j] = _mm256_permute2f128_ps(u[j], u[j + 4], 0x20);
    v[j + 4] = _mm256_permute2f128_ps(u[j], u[j + 4], 0x31);
  }
}

// Loads `count` rows of `depth` (<= 8) consecutive values, row r at src + r * stride, the rest
// zero, and transposes them: v[e] then holds every row's value e.
TF_AVX2_TRANSPOSE inline void load_transposed(const float* src, int64_t stride, int count, int depth, __m256 v[8]) {
  const __m256i m = lanes8(depth);
#pragma GCC unroll 8
  for (int r = 0; r < 8; ++r) {
    v[r] = r >= count ? _mm256_setzero_ps() : depth == 8 ? _mm256_loadu_ps(src + r * stride)
                                                         : _mm256_maskload_ps(src + r * stride, m);
  }
  transpose8(v);
}

}  // namespace tilefuse::runtime::avx2

#undef TF_AVX2_TRANSPOSE
