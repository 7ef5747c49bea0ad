// 16 x 16 transposes in AVX-512 registers, for the routines that turn rows into lanes: the GEMM's
// packing (sgemm_avx512.cpp), the depthwise convolution across channels and the stems with maps
// in lanes. Compiled for AVX-512 whatever the build's target; call them only where the CPU has
// it. Always inlined and fully unrolled, so the 16 vectors stay in registers (as loops GCC kept
// them in memory). GCC 12's shuffle intrinsics pass an "undefined" vector as the unused merge
// source, which -Wuninitialized then reports in every caller; the callers silence it.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "runtime/lane_masks.h"

#define TF_AVX512_TRANSPOSE __attribute__((target("avx512f,avx512vl,fma"), always_inline))

namespace tilefuse::runtime::avx512 {

// v[r] holds 16 consecutive values of row r; afterwards v[e] holds value e of every row (a
// 16 x 16 transpose in registers: 64 shuffles for 256 values, where packing one value at a time
// costs a load and a store each).
TF_AVX512_TRANSPOSE inline void transpose16(__m512 v[16]) {
  __m512 t[16];
#pragma GCC unroll 8
  for (int i = 0; i < 16; i += 2) {  // 128-bit lane l of t[i]: rows i, i+1 at values 4l, 4l+1
    t[i] = _mm512_unpacklo_ps(v[i], v[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(v[i], v[i + 1]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 16; i += 4) {  // lane l of v[i + j]: rows i..i+3 at value 4l + j
    const __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 1]);
    const __m512d c = _mm512_castps_pd(t[i + 2]), d = _mm512_castps_pd(t[i + 3]);
    v[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    v[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    v[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    v[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {  // pairs of 128-bit lanes: values j, j+8 (0x88) and j+4, j+12 (0xdd)
    t[j] = _mm512_shuffle_f32x4(v[j], v[4 + j], 0x88);
    t[4 + j] = _mm512_shuffle_f32x4(v[j], v[4 + j], 0xdd);
    t[8 + j] = _mm512_shuffle_f32x4(v[8 + j], v[12 + j], 0x88);
    t[12 + j] = _mm512_shuffle_f32x4(v[8 + j], v[12 + j], 0xdd);
  }
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    v[j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88);
    v[8 + j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0xdd);
    v[4 + j] = _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0x88);
    v[12 + j] = _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0xdd);
  }
}

// Loads `count` rows of `depth` (<= 16) consecutive values, row r at src + r * stride, the rest
// zero, and transposes them: v[e] then holds every row's value e.
TF_AVX512_TRANSPOSE inline void load_transposed(const float* src, int64_t stride, int count, int depth, __m512 v[16]) {
  const __mmask16 m = lanes(depth);
#pragma GCC unroll 16
  for (int r = 0; r < 16; ++r) v[r] = r < count ? _mm512_maskz_loadu_ps(m, src + r * stride) : _mm512_setzero_ps();
  transpose16(v);
}

}  // namespace tilefuse::runtime::avx512

#undef TF_AVX512_TRANSPOSE
