#include "runtime/sgemm_microkernel.h"

#include <immintrin.h>

#include <algorithm>

#define TF_AVX512 __attribute__((target("avx512f,avx512vl,fma")))

namespace tilefuse::runtime {

namespace {

// The lanes [0, n) of a 16-lane vector, n clamped to [0, 16].
TF_AVX512 __mmask16 lanes(int n) {
  return n >= 16 ? static_cast<__mmask16>(0xffff) : n <= 0 ? 0 : static_cast<__mmask16>((1u << n) - 1);
}

}  // namespace

bool microkernel_supported() {
  static const bool supported = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                                __builtin_cpu_supports("fma");
  return supported;
}

TF_AVX512 void microkernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int rows, int cols,
                           const TileStore& store) {
  // Fully unrolled over the tile's rows, so the 24 accumulators live in registers.
  __m512 lo[kMR], hi[kMR];
#pragma GCC unroll 12
  for (int r = 0; r < kMR; ++r) lo[r] = hi[r] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    const __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
    // The next A micro-panel steps in from L2 while this one is read from L1.
    _mm_prefetch(reinterpret_cast<const char*>(a + kMR * 8), _MM_HINT_T0);
#pragma GCC unroll 12
    for (int r = 0; r < kMR; ++r) {
      const __m512 av = _mm512_set1_ps(a[r]);
      lo[r] = _mm512_fmadd_ps(av, b0, lo[r]);
      hi[r] = _mm512_fmadd_ps(av, b1, hi[r]);
    }
    a += kMR;
    b += kNR;
  }
  const __mmask16 m_lo = lanes(cols), m_hi = lanes(cols - 16);
  const __m512 alpha = _mm512_set1_ps(store.alpha);
  __m512 bias_lo = _mm512_setzero_ps(), bias_hi = _mm512_setzero_ps();
  if (store.col_bias != nullptr) {
    bias_lo = _mm512_maskz_loadu_ps(m_lo, store.col_bias);
    bias_hi = _mm512_maskz_loadu_ps(m_hi, store.col_bias + 16);
  }
#pragma GCC unroll 12
  for (int r = 0; r < kMR; ++r) {
    if (r >= rows) break;
    float* row = c + r * ldc;
    __m512 v_lo = _mm512_fmadd_ps(lo[r], alpha, bias_lo), v_hi = _mm512_fmadd_ps(hi[r], alpha, bias_hi);
    if (store.row_bias != nullptr) {
      const __m512 rb = _mm512_set1_ps(store.row_bias[r]);
      v_lo = _mm512_add_ps(v_lo, rb);
      v_hi = _mm512_add_ps(v_hi, rb);
    }
    if (store.accumulate) {
      v_lo = _mm512_add_ps(v_lo, _mm512_maskz_loadu_ps(m_lo, row));
      v_hi = _mm512_add_ps(v_hi, _mm512_maskz_loadu_ps(m_hi, row + 16));
    }
    _mm512_mask_storeu_ps(row, m_lo, v_lo);
    _mm512_mask_storeu_ps(row + 16, m_hi, v_hi);
  }
}

TF_AVX512 void pack_a(const MatrixView& a, int64_t row0, int64_t rows, int64_t k0, int64_t kc, float* dst) {
  for (int64_t p = 0; p < rows; p += kMR, dst += kc * kMR) {
    const int n = static_cast<int>(std::min<int64_t>(kMR, rows - p));
    if (a.row_stride == 1) {
      // A transposed in memory: the panel's kMR values of one k are contiguous.
      const __mmask16 m = lanes(n);
      for (int64_t k = 0; k < kc; ++k) {
        _mm512_mask_storeu_ps(dst + k * kMR, lanes(kMR), _mm512_maskz_loadu_ps(m, a.at(row0 + p, k0 + k)));
      }
    } else if (n == kMR && a.col_stride == 1) {
      // Row-major: twelve sequential row streams, one value of each per k.
      const float* src[kMR];
      for (int r = 0; r < kMR; ++r) src[r] = a.at(row0 + p + r, k0);
      for (int64_t k = 0; k < kc; ++k) {
#pragma GCC unroll 12
        for (int r = 0; r < kMR; ++r) dst[k * kMR + r] = src[r][k];
      }
    } else {
      for (int64_t k = 0; k < kc; ++k) {
        for (int r = 0; r < kMR; ++r) dst[k * kMR + r] = r < n ? *a.at(row0 + p + r, k0 + k) : 0.0f;
      }
    }
  }
}

TF_AVX512 void pack_b(const MatrixView& b, int64_t k0, int64_t kc, int64_t col0, int64_t cols, float* dst) {
  for (int64_t p = 0; p < cols; p += kNR, dst += kc * kNR) {
    const int n = static_cast<int>(std::min<int64_t>(kNR, cols - p));
    if (b.col_stride == 1) {
      const __mmask16 m_lo = lanes(n), m_hi = lanes(n - 16);
      const float* src = b.at(k0, col0 + p);
      for (int64_t k = 0; k < kc; ++k, src += b.row_stride) {
        _mm512_store_ps(dst + k * kNR, _mm512_maskz_loadu_ps(m_lo, src));
        _mm512_store_ps(dst + k * kNR + 16, _mm512_maskz_loadu_ps(m_hi, src + 16));
      }
    } else {
      // B transposed in memory (a weight stored [N, K]): read each column as a sequential stream.
      for (int j = 0; j < kNR; ++j) {
        for (int64_t k = 0; k < kc; ++k) dst[k * kNR + j] = j < n ? *b.at(k0 + k, col0 + p + j) : 0.0f;
      }
    }
  }
}

}  // namespace tilefuse::runtime
