// A FusedActivation (ir/ops/fused_activation.h) applied to whole vectors, for the GEMM
// micro-kernels' store and the convolution epilogue: the clamp form's fields broadcast once, then
// an FMA, a max, a min and (HardSwish) a multiply per vector; GELU through a rational erf (no
// exp, no branch: 19 instructions and a division a vector). Compiled for AVX2 or AVX-512
// whatever the build's target: use each only where vector_isa() is at least its ISA.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <iterator>

#include "ir/ops/fused_activation.h"

namespace tilefuse::runtime {

// erf as Eigen and XLA compute it in float: x P(x^2) / Q(x^2) on x clamped to [-4, 4] (erf
// rounds to +-1 beyond), within 3.3e-7 of erf everywhere. One division and 11 FMAs: about a
// third of the work of the two-polynomial erf generated kernels use (codegen/support/
// tilefuse_vector_math.h, <= 3 ulp), with which GELU in the GEMM's store cost as much as a
// separate pass over C (a third of the GEMM's time at ConvNeXt's depth of 96). Highest degree
// first. The scalar paths use std::erf: lanes and tails agree to 3.3e-7.
inline constexpr float kErfP[] = {-2.72614225801306e-10f, 2.77068142495902e-08f, -2.10102402082508e-06f,
                                  -5.69250639462346e-05f, -7.34990630326855e-04f, -2.95459980854025e-03f,
                                  -1.60960333262415e-02f};
inline constexpr float kErfQ[] = {-1.45660718464996e-05f, -2.13374055278905e-04f, -1.68282697438203e-03f,
                                  -7.37332916720468e-03f, -1.42647390514189e-02f};
inline constexpr float kInvSqrt2 = 0.70710678118654752440f;

// GELU on 8 lanes: 0.5 x (1 + erf(x / sqrt 2)). A NaN stays NaN (min and max return their
// second operand, x, when it is NaN).
__attribute__((target("avx2,fma"))) inline __m256 avx2_gelu(__m256 x) {
  const __m256 t = _mm256_max_ps(_mm256_set1_ps(-4.0f),
                                 _mm256_min_ps(_mm256_set1_ps(4.0f), _mm256_mul_ps(x, _mm256_set1_ps(kInvSqrt2))));
  const __m256 z = _mm256_mul_ps(t, t);
  __m256 p = _mm256_set1_ps(kErfP[0]), q = _mm256_set1_ps(kErfQ[0]);
  for (size_t i = 1; i < std::size(kErfP); ++i) p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(kErfP[i]));
  for (size_t i = 1; i < std::size(kErfQ); ++i) q = _mm256_fmadd_ps(q, z, _mm256_set1_ps(kErfQ[i]));
  const __m256 erf = _mm256_div_ps(_mm256_mul_ps(t, p), q);
  // (1 + erf) rounded first, as the unfused graph does: GELU(-1e30) is -0, not +0.
  return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x), _mm256_add_ps(_mm256_set1_ps(1.0f), erf));
}

// The same on 16 lanes.
__attribute__((target("avx512f"))) inline __m512 avx512_gelu(__m512 x) {
  // The zero-masked forms with every lane set: GCC 12 warns about the plain ones' undefined pass-through.
  const __mmask16 all = 0xffff;
  const __m512 t = _mm512_maskz_max_ps(
      all, _mm512_set1_ps(-4.0f), _mm512_maskz_min_ps(all, _mm512_set1_ps(4.0f), _mm512_mul_ps(x, _mm512_set1_ps(kInvSqrt2))));
  const __m512 z = _mm512_mul_ps(t, t);
  __m512 p = _mm512_set1_ps(kErfP[0]), q = _mm512_set1_ps(kErfQ[0]);
  for (size_t i = 1; i < std::size(kErfP); ++i) p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(kErfP[i]));
  for (size_t i = 1; i < std::size(kErfQ); ++i) q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(kErfQ[i]));
  const __m512 erf = _mm512_div_ps(_mm512_mul_ps(t, p), q);
  return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), x), _mm512_add_ps(_mm512_set1_ps(1.0f), erf));
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
    const __mmask16 all = 0xffff;  // see avx512_gelu
    const __m512 g = _mm512_maskz_min_ps(all, hi, _mm512_maskz_max_ps(all, lo, _mm512_fmadd_ps(x, scale, shift)));
    return times_input ? _mm512_mul_ps(x, g) : g;
  }
};

}  // namespace tilefuse::runtime
