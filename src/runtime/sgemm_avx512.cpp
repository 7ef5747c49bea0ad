// The GEMM engine's AVX-512 pieces: a 12 x 32 micro-kernel (24 zmm accumulators) and packing
// through in-register 16 x 16 transposes.
#include "runtime/activation_vectors.h"
#include "runtime/sgemm_isa.h"

#include <immintrin.h>

#include <algorithm>

#include "runtime/lane_masks.h"

#define TF_AVX512 __attribute__((target("avx512f,avx512vl,fma")))

namespace tilefuse::runtime::avx512 {

namespace {

// v[r] holds 16 consecutive values of row r; afterwards v[e] holds value e of every row (a
// 16 x 16 transpose in registers: 64 shuffles for 256 values, where packing one value at a time
// costs a load and a store each).
// (GCC 12's shuffle intrinsics pass an "undefined" vector as the unused merge source, which
// -Wuninitialized reports inside them; nothing here is read uninitialised.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
TF_AVX512 void transpose16(__m512 v[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {  // 128-bit lane l of t[i]: rows i, i+1 at values 4l, 4l+1
    t[i] = _mm512_unpacklo_ps(v[i], v[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(v[i], v[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {  // lane l of v[i + j]: rows i..i+3 at value 4l + j
    const __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 1]);
    const __m512d c = _mm512_castps_pd(t[i + 2]), d = _mm512_castps_pd(t[i + 3]);
    v[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    v[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    v[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    v[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  for (int j = 0; j < 4; ++j) {  // pairs of 128-bit lanes: values j, j+8 (0x88) and j+4, j+12 (0xdd)
    t[j] = _mm512_shuffle_f32x4(v[j], v[4 + j], 0x88);
    t[4 + j] = _mm512_shuffle_f32x4(v[j], v[4 + j], 0xdd);
    t[8 + j] = _mm512_shuffle_f32x4(v[8 + j], v[12 + j], 0x88);
    t[12 + j] = _mm512_shuffle_f32x4(v[8 + j], v[12 + j], 0xdd);
  }
  for (int j = 0; j < 4; ++j) {
    v[j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88);
    v[8 + j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0xdd);
    v[4 + j] = _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0x88);
    v[12 + j] = _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0xdd);
  }
}
#pragma GCC diagnostic pop

// Loads `count` rows of `depth` (<= 16) consecutive values, row r at src + r * stride, the rest
// zero, and transposes them: v[e] then holds every row's value e.
TF_AVX512 void load_transposed(const float* src, int64_t stride, int count, int depth, __m512 v[16]) {
  const __mmask16 m = lanes(depth);
#pragma GCC unroll 16
  for (int r = 0; r < 16; ++r) v[r] = r < count ? _mm512_maskz_loadu_ps(m, src + r * stride) : _mm512_setzero_ps();
  transpose16(v);
}

// The micro-kernel for tiles of at most R rows: the A panel still holds kMR values per depth
// step, but only the first R are multiplied, so a tile of 4 rows (the last of 64 output
// channels) costs a third of a full one instead of as much.
template <int R>
TF_AVX512 void microkernel_rows(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int rows, int cols,
                                const TileStore& store, Prefetch prefetch) {
  // Fully unrolled over the tile's rows, so the 2R accumulators live in registers.
  __m512 lo[R], hi[R];
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) lo[r] = hi[r] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    const __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
    // The next A micro-panel steps in from L2 while this one is read from L1.
    _mm_prefetch(reinterpret_cast<const char*>(a + kMR * 8), _MM_HINT_T0);
    if (2 * k < prefetch.lines) {
      _mm_prefetch(prefetch.from + 128 * k, _MM_HINT_T1);
      _mm_prefetch(prefetch.from + 128 * k + 64, _MM_HINT_T1);
    }
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(a[r]);
      lo[r] = _mm512_fmadd_ps(av, b0, lo[r]);
      hi[r] = _mm512_fmadd_ps(av, b1, hi[r]);
    }
    a += kMR;
    b += kNR;
  }
  const __mmask16 m_lo = lanes(cols), m_hi = lanes(cols - 16);
  const __m512 alpha = _mm512_set1_ps(store.alpha);
  const Avx512Activation act(store.activation != nullptr ? *store.activation : FusedActivation{});
  __m512 bias_lo = _mm512_setzero_ps(), bias_hi = _mm512_setzero_ps();
  if (store.col_bias != nullptr) {
    bias_lo = _mm512_maskz_loadu_ps(m_lo, store.col_bias);
    bias_hi = _mm512_maskz_loadu_ps(m_hi, store.col_bias + 16);
  }
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) {
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
    if (store.residual != nullptr) {
      v_lo = _mm512_add_ps(v_lo, _mm512_maskz_loadu_ps(m_lo, store.residual + r * ldc));
      v_hi = _mm512_add_ps(v_hi, _mm512_maskz_loadu_ps(m_hi, store.residual + r * ldc + 16));
    }
    if (store.activation != nullptr) v_lo = act(v_lo), v_hi = act(v_hi);
    _mm512_mask_storeu_ps(row, m_lo, v_lo);
    _mm512_mask_storeu_ps(row + 16, m_hi, v_hi);
  }
}

}  // namespace

TF_AVX512 void microkernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int rows, int cols,
                           const TileStore& store, Prefetch prefetch) {
  static_assert(kMR == 12, "the row tails below assume 12-row panels");
  if (rows > 8) return microkernel_rows<12>(kc, a, b, c, ldc, rows, cols, store, prefetch);
  if (rows > 4) return microkernel_rows<8>(kc, a, b, c, ldc, rows, cols, store, prefetch);
  microkernel_rows<4>(kc, a, b, c, ldc, rows, cols, store, prefetch);
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
    } else if (a.col_stride == 1) {
      // Row-major: 16 depth steps of the panel's rows at a time, transposed in registers.
      for (int64_t k = 0; k < kc; k += 16) {
        const int depth = static_cast<int>(std::min<int64_t>(16, kc - k));
        __m512 v[16];
        load_transposed(a.at(row0 + p, k0 + k), a.row_stride, n, depth, v);
#pragma GCC unroll 16
        for (int e = 0; e < 16; ++e) {
          if (e < depth) _mm512_mask_storeu_ps(dst + (k + e) * kMR, lanes(kMR), v[e]);
        }
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
    } else if (b.row_stride == 1) {
      // B transposed in memory (a weight stored [N, K], K^T in attention): each column's depth
      // values are contiguous; 16 columns x 16 depth steps at a time, transposed in registers.
      for (int half = 0; half < kNR / 16; ++half) {
        const int count = std::clamp(n - 16 * half, 0, 16);
        for (int64_t k = 0; k < kc; k += 16) {
          const int depth = static_cast<int>(std::min<int64_t>(16, kc - k));
          __m512 v[16];
          load_transposed(b.at(k0 + k, col0 + p + 16 * half), b.col_stride, count, depth, v);
#pragma GCC unroll 16
          for (int e = 0; e < 16; ++e) {
            if (e < depth) _mm512_store_ps(dst + (k + e) * kNR + 16 * half, v[e]);
          }
        }
      }
    } else {
      for (int j = 0; j < kNR; ++j) {
        for (int64_t k = 0; k < kc; ++k) dst[k * kNR + j] = j < n ? *b.at(k0 + k, col0 + p + j) : 0.0f;
      }
    }
  }
}

}  // namespace tilefuse::runtime::avx512
