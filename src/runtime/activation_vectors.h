// A FusedActivation (ir/ops/fused_activation.h) applied to whole vectors, for the GEMM
// micro-kernels' store and the convolution epilogue: the clamp form's fields broadcast once, then
// an FMA, a max, a min and (HardSwish) a multiply per vector, each only where it changes a
// value; GELU through a rational erf (no exp, no branch: 19 instructions and a division a vector); GELU's tanh approximation, the
// sigmoid and SiLU as x / (1 + e^t), one exp and a division. Compiled for AVX2 or AVX-512
// whatever the build's target: use each only where vector_isa() is at least its ISA.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <iterator>
#include <limits>

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

// GELU's tanh approximation, 0.5 x (1 + tanh(u)) with u = sqrt(2 / pi) (x + 0.044715 x^3), is
// x / (1 + e^(-2u)) (0.5 (1 + tanh u) is the sigmoid of 2u): e^(-2u) = e^(x (kGeluTanhA + kGeluTanhB x^2)).
inline constexpr float kGeluTanhA = -1.59576912160573071176f;                   // -2 sqrt(2 / pi)
inline constexpr float kGeluTanhB = -1.59576912160573071176f * 0.044715f;
// e^t as Cephes' expf computes it: t = n ln 2 + r, |r| <= ln 2 / 2, e^r by a degree-5
// polynomial, within 2 ulp. t is clamped to [-87.3, 89] first: 2^n stays a normal float at the
// bottom (GELU needs only the limit there) and is inf at the top, so e^t overflows to inf as
// std::exp does (GELU(-inf) is then -inf / inf, NaN, as in the unfused graph).
inline constexpr float kExpP[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                  4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
inline constexpr float kExpLo = -87.3f, kExpHi = 89.0f, kLog2e = 1.44269504088896341f;
inline constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;

// e^t on 8 lanes; a NaN stays NaN (max and min return their second operand, t, for a NaN).
__attribute__((target("avx2,fma"))) inline __m256 avx2_exp(__m256 t) {
  t = _mm256_min_ps(_mm256_set1_ps(kExpHi), _mm256_max_ps(_mm256_set1_ps(kExpLo), t));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(t, _mm256_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), t));
  __m256 p = _mm256_set1_ps(kExpP[0]);
  for (size_t i = 1; i < std::size(kExpP); ++i) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpP[i]));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i two_n = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(two_n));
}

// y / (1 + e^t): GELU's tanh approximation (y = x, t = -2u), SiLU (y = x, t = -x), the sigmoid
// (y = 1, t = -x).
__attribute__((target("avx2,fma"))) inline __m256 avx2_over_one_plus_exp(__m256 y, __m256 t) {
  return _mm256_div_ps(y, _mm256_add_ps(_mm256_set1_ps(1.0f), avx2_exp(t)));
}

__attribute__((target("avx2,fma"))) inline __m256 avx2_gelu_tanh(__m256 x) {
  const __m256 minus_2u = _mm256_mul_ps(x, _mm256_fmadd_ps(_mm256_mul_ps(x, x), _mm256_set1_ps(kGeluTanhB), _mm256_set1_ps(kGeluTanhA)));
  return avx2_over_one_plus_exp(x, minus_2u);
}

// The same on 16 lanes.
__attribute__((target("avx512f"))) inline __m512 avx512_exp(__m512 t) {
  const __mmask16 all = 0xffff;  // see avx512_gelu
  t = _mm512_maskz_min_ps(all, _mm512_set1_ps(kExpHi), _mm512_maskz_max_ps(all, _mm512_set1_ps(kExpLo), t));
  const __m512 n = _mm512_maskz_roundscale_ps(all, _mm512_mul_ps(t, _mm512_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), t));
  __m512 p = _mm512_set1_ps(kExpP[0]);
  for (size_t i = 1; i < std::size(kExpP); ++i) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP[i]));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_maskz_scalef_ps(all, p, n);
}

__attribute__((target("avx512f"))) inline __m512 avx512_over_one_plus_exp(__m512 y, __m512 t) {
  return _mm512_div_ps(y, _mm512_add_ps(_mm512_set1_ps(1.0f), avx512_exp(t)));
}

__attribute__((target("avx512f"))) inline __m512 avx512_gelu_tanh(__m512 x) {
  const __m512 minus_2u = _mm512_mul_ps(x, _mm512_fmadd_ps(_mm512_mul_ps(x, x), _mm512_set1_ps(kGeluTanhB), _mm512_set1_ps(kGeluTanhA)));
  return avx512_over_one_plus_exp(x, minus_2u);
}

// Which steps of the clamp form do anything: ReLU is a max alone, where the full form is an
// FMA, a max and a min per vector (a third of a depthwise convolution's FMAs again).
struct ClampSteps {
  bool affine, lo, hi;
  explicit ClampSteps(const FusedActivation& a)
      : affine(a.scale != 1.0f || a.shift != 0.0f), lo(a.lo > -std::numeric_limits<float>::infinity()),
        hi(a.hi < std::numeric_limits<float>::infinity()) {}
};

// The clamp form is a few instructions, always inlined: called out of line, every vector register
// is caller-saved, so a GEMM's store would spill its accumulators around each call (MobileNet's 1x1
// convolutions ran 1.8-2.5x slower that way). The curves (GELU, its tanh approximation, SiLU, the
// sigmoid) are out of line: inlined into every unrolled store they made the micro-kernels three
// times the code. A GEMM's store lays the tile out in an aligned L1 buffer and applies them over
// it in one call (curve_rows), inlined into that call's loop.
// max(lo, g) and min(hi, g) return g when it is NaN, as FusedActivation's scalar form does.
struct Avx2Activation {
  __m256 scale, shift, lo, hi;
  ClampSteps steps;
  bool times_input;
  FusedActivation::Form form;
  __attribute__((target("avx2,fma"))) explicit Avx2Activation(const FusedActivation& a)
      : scale(_mm256_set1_ps(a.scale)), shift(_mm256_set1_ps(a.shift)), lo(_mm256_set1_ps(a.lo)),
        hi(_mm256_set1_ps(a.hi)), steps(a), times_input(a.times_input), form(a.form) {}
  bool is_clamp() const { return form == FusedActivation::Form::clamp; }
  __attribute__((target("avx2,fma"), always_inline)) __m256 clamp(__m256 x) const {
    __m256 g = steps.affine ? _mm256_fmadd_ps(x, scale, shift) : x;
    if (steps.lo) g = _mm256_max_ps(lo, g);
    if (steps.hi) g = _mm256_min_ps(hi, g);
    return times_input ? _mm256_mul_ps(x, g) : g;
  }
  __attribute__((target("avx2,fma"), noinline)) __m256 curve(__m256 x) const { return curve_inlined(x); }
  __attribute__((target("avx2,fma"), always_inline)) __m256 operator()(__m256 x) const {
    return is_clamp() ? clamp(x) : curve(x);
  }
  // c = curve(src) over `rows` rows of `vectors` vectors each, as Avx512Activation::curve_rows;
  // a row's vectors are stored whole, or through `masks` (one per vector) where not `whole`.
  __attribute__((target("avx2,fma"), noinline)) void curve_rows(const float* src, int pitch, float* c, int64_t ld,
                                                                int rows, int vectors, bool whole,
                                                                const __m256i* masks) const {
    for (int r = 0; r < rows; ++r, c += ld, src += 8 * pitch) {
      for (int v = 0; v < vectors; ++v) {
        const __m256 y = curve_inlined(_mm256_load_ps(src + 8 * v));
        if (whole) {
          _mm256_storeu_ps(c + 8 * v, y);
        } else {
          _mm256_maskstore_ps(c + 8 * v, masks[v], y);
        }
      }
    }
  }

 private:
  __attribute__((target("avx2,fma"), always_inline)) __m256 curve_inlined(__m256 x) const {
    switch (form) {
      case FusedActivation::Form::gelu: return avx2_gelu(x);
      case FusedActivation::Form::gelu_tanh: return avx2_gelu_tanh(x);
      case FusedActivation::Form::silu: return avx2_over_one_plus_exp(x, _mm256_sub_ps(_mm256_setzero_ps(), x));
      case FusedActivation::Form::sigmoid:
        return avx2_over_one_plus_exp(_mm256_set1_ps(1.0f), _mm256_sub_ps(_mm256_setzero_ps(), x));
      case FusedActivation::Form::clamp: break;
    }
    return clamp(x);
  }
};

struct Avx512Activation {
  __m512 scale, shift, lo, hi;
  ClampSteps steps;
  bool times_input;
  FusedActivation::Form form;
  __attribute__((target("avx512f"))) explicit Avx512Activation(const FusedActivation& a)
      : scale(_mm512_set1_ps(a.scale)), shift(_mm512_set1_ps(a.shift)), lo(_mm512_set1_ps(a.lo)),
        hi(_mm512_set1_ps(a.hi)), steps(a), times_input(a.times_input), form(a.form) {}
  bool is_clamp() const { return form == FusedActivation::Form::clamp; }
  __attribute__((target("avx512f"), always_inline)) __m512 clamp(__m512 x) const {
    const __mmask16 all = 0xffff;  // see avx512_gelu
    __m512 g = steps.affine ? _mm512_fmadd_ps(x, scale, shift) : x;
    if (steps.lo) g = _mm512_maskz_max_ps(all, lo, g);
    if (steps.hi) g = _mm512_maskz_min_ps(all, hi, g);
    return times_input ? _mm512_mul_ps(x, g) : g;
  }
  __attribute__((target("avx512f"), noinline)) __m512 curve(__m512 x) const { return curve_inlined(x); }
  __attribute__((target("avx512f"), always_inline)) __m512 operator()(__m512 x) const {
    return is_clamp() ? clamp(x) : curve(x);
  }
  // c = curve(src) over `rows` rows of `vectors` vectors each (the last masked by `last_mask`);
  // src rows are `pitch` vectors apart (aligned), c rows `ld` floats: one call for a tile, the
  // curve inlined into its loop.
  __attribute__((target("avx512f"), noinline)) void curve_rows(const float* src, int pitch, float* c, int64_t ld, int rows,
                                                               int vectors, __mmask16 last_mask) const {
    for (int r = 0; r < rows; ++r, c += ld, src += 16 * pitch) {
      for (int v = 0; v < vectors; ++v) {
        _mm512_mask_storeu_ps(c + 16 * v, v + 1 < vectors ? __mmask16(0xffff) : last_mask,
                              curve_inlined(_mm512_load_ps(src + 16 * v)));
      }
    }
  }

 private:
  __attribute__((target("avx512f"), always_inline)) __m512 curve_inlined(__m512 x) const {
    switch (form) {
      case FusedActivation::Form::gelu: return avx512_gelu(x);
      case FusedActivation::Form::gelu_tanh: return avx512_gelu_tanh(x);
      case FusedActivation::Form::silu: return avx512_over_one_plus_exp(x, _mm512_sub_ps(_mm512_setzero_ps(), x));
      case FusedActivation::Form::sigmoid:
        return avx512_over_one_plus_exp(_mm512_set1_ps(1.0f), _mm512_sub_ps(_mm512_setzero_ps(), x));
      case FusedActivation::Form::clamp: break;
    }
    return clamp(x);
  }
};

}  // namespace tilefuse::runtime
