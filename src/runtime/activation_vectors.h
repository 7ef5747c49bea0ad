// A ClampActivation (ir/ops/fused_activation.h) applied to whole vectors, for the GEMM
// micro-kernels' store and the convolution epilogue: its fields broadcast once, then an FMA, a
// max, a min and (HardSwish) a multiply per vector. Compiled for AVX2 or AVX-512 whatever the
// build's target: use each only where vector_isa() is at least its ISA.
#pragma once

#include <immintrin.h>

#include "ir/ops/fused_activation.h"

namespace tilefuse::runtime {

// max(lo, g) and min(hi, g) return g when it is NaN, as ClampActivation's scalar form does.
struct Avx2Activation {
  __m256 scale, shift, lo, hi;
  bool times_input;
  __attribute__((target("avx2,fma"))) explicit Avx2Activation(const ClampActivation& a)
      : scale(_mm256_set1_ps(a.scale)), shift(_mm256_set1_ps(a.shift)), lo(_mm256_set1_ps(a.lo)),
        hi(_mm256_set1_ps(a.hi)), times_input(a.times_input) {}
  __attribute__((target("avx2,fma"))) __m256 operator()(__m256 x) const {
    const __m256 g = _mm256_min_ps(hi, _mm256_max_ps(lo, _mm256_fmadd_ps(x, scale, shift)));
    return times_input ? _mm256_mul_ps(x, g) : g;
  }
};

struct Avx512Activation {
  __m512 scale, shift, lo, hi;
  bool times_input;
  __attribute__((target("avx512f"))) explicit Avx512Activation(const ClampActivation& a)
      : scale(_mm512_set1_ps(a.scale)), shift(_mm512_set1_ps(a.shift)), lo(_mm512_set1_ps(a.lo)),
        hi(_mm512_set1_ps(a.hi)), times_input(a.times_input) {}
  __attribute__((target("avx512f"))) __m512 operator()(__m512 x) const {
    const __m512 g = _mm512_min_ps(hi, _mm512_max_ps(lo, _mm512_fmadd_ps(x, scale, shift)));
    return times_input ? _mm512_mul_ps(x, g) : g;
  }
};

}  // namespace tilefuse::runtime
