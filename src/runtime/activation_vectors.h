// A FusedActivation (ir/ops/fused_activation.h) applied to whole vectors, for the GEMM
// micro-kernels' store and the convolution epilogue: the clamp form's fields broadcast once, then
// an FMA, a max, a min and (HardSwish) a multiply per vector; GELU through a polynomial erf (no
// division, no exp, no branch: about 25 instructions a vector). Compiled for AVX2 or AVX-512
// whatever the build's target: use each only where vector_isa() is at least its ISA.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <iterator>

#include "ir/ops/fused_activation.h"

namespace tilefuse::runtime {

// erf's fit, the one generated kernels use (codegen/support/tilefuse_vector_math.h, <= 3 ulp):
// x + x P(x^2) below |x| = 1.25, Q(|x| - 2.625) above, 1 from 3.9195 on. Highest degree first.
inline constexpr float kErfSmall[] = {6.203354860e-05f, -7.426498923e-04f, 5.110062659e-03f, -2.680496685e-02f,
                                      1.128219590e-01f, -3.761247993e-01f, 1.283791363e-01f};
inline constexpr float kErfLarge[] = {-7.520457075e-06f, 7.904445738e-06f, 7.321613521e-05f, -1.896673348e-04f,
                                      3.750296673e-05f, 7.193413330e-04f, -2.249558456e-03f, 4.197936039e-03f,
                                      -5.413231440e-03f, 4.894915968e-03f, -3.013318405e-03f, 1.147584757e-03f,
                                      9.997946024e-01f};
inline constexpr float kInvSqrt2 = 0.70710678118654752440f;

// GELU on 8 lanes: 0.5 x (1 + erf(x / sqrt 2)).
__attribute__((target("avx2,fma"))) inline __m256 avx2_gelu(__m256 x) {
  const __m256 t = _mm256_mul_ps(x, _mm256_set1_ps(kInvSqrt2));
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 a = _mm256_andnot_ps(sign, t);
  __m256 p = _mm256_set1_ps(kErfSmall[0]);
  const __m256 z = _mm256_mul_ps(t, t);
  for (size_t i = 1; i < std::size(kErfSmall); ++i) p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(kErfSmall[i]));
  const __m256 small = _mm256_fmadd_ps(t, p, t);
  const __m256 u = _mm256_sub_ps(a, _mm256_set1_ps(2.625f));
  __m256 q = _mm256_set1_ps(kErfLarge[0]);
  for (size_t i = 1; i < std::size(kErfLarge); ++i) q = _mm256_fmadd_ps(q, u, _mm256_set1_ps(kErfLarge[i]));
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 saturated = _mm256_or_ps(_mm256_cmp_ps(q, one, _CMP_GT_OQ), _mm256_cmp_ps(a, _mm256_set1_ps(3.9195f), _CMP_GT_OQ));
  const __m256 large = _mm256_or_ps(_mm256_blendv_ps(q, one, saturated), _mm256_and_ps(sign, t));
  const __m256 erf = _mm256_blendv_ps(large, small, _mm256_cmp_ps(a, _mm256_set1_ps(1.25f), _CMP_LT_OQ));
  return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x), _mm256_add_ps(one, erf));
}

// The same on 16 lanes.
__attribute__((target("avx512f"))) inline __m512 avx512_gelu(__m512 x) {
  const __m512 t = _mm512_mul_ps(x, _mm512_set1_ps(kInvSqrt2));
  const __m512 a = _mm512_abs_ps(t);
  __m512 p = _mm512_set1_ps(kErfSmall[0]);
  const __m512 z = _mm512_mul_ps(t, t);
  for (size_t i = 1; i < std::size(kErfSmall); ++i) p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(kErfSmall[i]));
  const __m512 small = _mm512_fmadd_ps(t, p, t);
  const __m512 u = _mm512_sub_ps(a, _mm512_set1_ps(2.625f));
  __m512 q = _mm512_set1_ps(kErfLarge[0]);
  for (size_t i = 1; i < std::size(kErfLarge); ++i) q = _mm512_fmadd_ps(q, u, _mm512_set1_ps(kErfLarge[i]));
  const __m512 one = _mm512_set1_ps(1.0f);
  const __mmask16 saturated = _mm512_cmp_ps_mask(q, one, _CMP_GT_OQ) | _mm512_cmp_ps_mask(a, _mm512_set1_ps(3.9195f), _CMP_GT_OQ);
  // copysign(large, t): the magnitude's bits or t's sign bit.
  const __m512i sign_bit = _mm512_and_si512(_mm512_castps_si512(t), _mm512_set1_epi32(INT32_MIN));
  const __m512 large = _mm512_castsi512_ps(
      _mm512_or_si512(_mm512_castps_si512(_mm512_mask_blend_ps(saturated, q, one)), sign_bit));
  const __m512 erf = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, _mm512_set1_ps(1.25f), _CMP_LT_OQ), large, small);
  return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), x), _mm512_add_ps(one, erf));
}

// max(lo, g) and min(hi, g) return g when it is NaN, as FusedActivation's scalar form does.
struct Avx2Activation {
  __m256 scale, shift, lo, hi;
  bool times_input, gelu;
  __attribute__((target("avx2,fma"))) explicit Avx2Activation(const FusedActivation& a)
      : scale(_mm256_set1_ps(a.scale)), shift(_mm256_set1_ps(a.shift)), lo(_mm256_set1_ps(a.lo)),
        hi(_mm256_set1_ps(a.hi)), times_input(a.times_input), gelu(a.form == FusedActivation::Form::gelu) {}
  __attribute__((target("avx2,fma"))) __m256 operator()(__m256 x) const {
    if (gelu) return avx2_gelu(x);
    const __m256 g = _mm256_min_ps(hi, _mm256_max_ps(lo, _mm256_fmadd_ps(x, scale, shift)));
    return times_input ? _mm256_mul_ps(x, g) : g;
  }
};

struct Avx512Activation {
  __m512 scale, shift, lo, hi;
  bool times_input, gelu;
  __attribute__((target("avx512f"))) explicit Avx512Activation(const FusedActivation& a)
      : scale(_mm512_set1_ps(a.scale)), shift(_mm512_set1_ps(a.shift)), lo(_mm512_set1_ps(a.lo)),
        hi(_mm512_set1_ps(a.hi)), times_input(a.times_input), gelu(a.form == FusedActivation::Form::gelu) {}
  __attribute__((target("avx512f"))) __m512 operator()(__m512 x) const {
    if (gelu) return avx512_gelu(x);
    const __m512 g = _mm512_min_ps(hi, _mm512_max_ps(lo, _mm512_fmadd_ps(x, scale, shift)));
    return times_input ? _mm512_mul_ps(x, g) : g;
  }
};

}  // namespace tilefuse::runtime
