// The GEMM engine's AVX-512 pieces: a 12 x 32 micro-kernel (24 zmm accumulators) and packing
// through in-register 16 x 16 transposes.
#include "runtime/activation_vectors.h"
#include "runtime/sgemm_isa.h"

#include <immintrin.h>

#include <algorithm>

#include "runtime/bf16_pairs.h"

#include "runtime/lane_masks.h"
#include "runtime/prefetch.h"
#include "runtime/transpose_avx512.h"

#define TF_AVX512 __attribute__((target("avx512f,avx512vl,fma")))
// The passes of store_tile, inlined into it.
#define TF_AVX512_STEP __attribute__((always_inline, target("avx512f,avx512vl,fma")))
#define TF_AVX512_BF16 __attribute__((target("avx512f,avx512vl,avx512bw,fma,avx512bf16")))


// transpose16's shuffles, inlined into the packing below, pass GCC 12's "undefined" vector as
// their unused merge source, which -Wuninitialized reports; nothing here is read uninitialised.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace tilefuse::runtime::avx512 {

namespace {

// True where the tile's biases are the accumulators' starting values (start_tile) rather than
// added as it is stored: whenever alpha does not scale the product.
inline bool biases_first(const TileStore& store) { return store.alpha == 1.0f; }

// The accumulators' starting values: the biases where biases_first, else zeros. A shallow
// product (a 1x1 convolution over 16 channels: 16 depth steps a tile) spent as much on its
// store as on its FMAs; adding the biases there cost one more instruction a vector.
template <int R, int V>
TF_AVX512 inline __attribute__((always_inline)) void start_tile(__m512 (&acc)[V][R], int rows, int cols,
                                                                 const TileStore& store) {
  __m512 col_bias[V];
#pragma GCC unroll 2
  for (int v = 0; v < V; ++v) {
    col_bias[v] = store.col_bias != nullptr && biases_first(store)
                      ? _mm512_maskz_loadu_ps(lanes(cols - 16 * v), store.col_bias + 16 * v)
                      : _mm512_setzero_ps();
  }
  const bool row_bias = store.row_bias != nullptr && biases_first(store);
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) {
      // Rows past `rows` are computed, never stored: they start from the column biases alone.
      acc[v][r] = row_bias && r < rows ? _mm512_add_ps(col_bias[v], _mm512_set1_ps(store.row_bias[r])) : col_bias[v];
    }
  }
}

// Stores the R x V accumulators of a tile as `store` says (the first `rows` rows and `cols`
// columns): alpha and the biases where start_tile did not start from them, C when
// accumulating, then on the last depth block the residual and the activation. Each step is a
// pass over the tile's registers with its test outside the unrolled code: tested vector by
// vector, the steps that do nothing took a shallow product (16 depth steps a tile) a third of
// its micro-kernel's time.
template <int R, int V>
TF_AVX512 inline __attribute__((always_inline)) void store_tile(const __m512 (&acc)[V][R], float* c, int64_t ldc,
                                                                 int rows, int cols, const TileStore& store) {
  __mmask16 mask[V];
  __m512 x[V][R];
#pragma GCC unroll 2
  for (int v = 0; v < V; ++v) mask[v] = lanes(cols - 16 * v);
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) x[v][r] = acc[v][r];
  }
  // Each pass over rows that are stored: it reads memory, or rows past them would read beyond.
  auto each_stored = [&](auto&& step) TF_AVX512_STEP {
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      if (r >= rows) break;
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) step(r, v);
    }
  };
  if (!biases_first(store)) {
    const __m512 alpha = _mm512_set1_ps(store.alpha);
    __m512 col_bias[V];
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) {
      col_bias[v] = store.col_bias != nullptr ? _mm512_maskz_loadu_ps(mask[v], store.col_bias + 16 * v) : _mm512_setzero_ps();
    }
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) x[v][r] = _mm512_fmadd_ps(x[v][r], alpha, col_bias[v]);
    }
    if (store.row_bias != nullptr) {
      each_stored([&](int r, int v) TF_AVX512_STEP { x[v][r] = _mm512_add_ps(x[v][r], _mm512_set1_ps(store.row_bias[r])); });
    }
  }
  if (store.accumulate) {
    each_stored([&](int r, int v) TF_AVX512_STEP { x[v][r] = _mm512_add_ps(x[v][r], _mm512_maskz_loadu_ps(mask[v], c + r * ldc + 16 * v)); });
  }
  if (store.residual != nullptr) {
    each_stored([&](int r, int v) TF_AVX512_STEP {
      x[v][r] = _mm512_add_ps(x[v][r], _mm512_maskz_loadu_ps(mask[v], store.residual + r * ldc + 16 * v));
    });
  }
  const FusedActivation* activation = store.activation;
  if (activation != nullptr && activation->form == FusedActivation::Form::clamp) {
    const Avx512Activation act(*activation);
    each_stored([&](int r, int v) TF_AVX512_STEP { x[v][r] = act.clamp(x[v][r]); });
  }
  if (activation == nullptr || activation->form == FusedActivation::Form::clamp) {
    each_stored([&](int r, int v) TF_AVX512_STEP { _mm512_mask_storeu_ps(c + r * ldc + 16 * v, mask[v], x[v][r]); });
    return;
  }
  // A curve: out of the unrolled code (activation_vectors.h), from the tile laid out whole in
  // L1. Read back from C, each load waited for a masked store, which does not forward.
  alignas(64) float tile[R * V * 16];
  each_stored([&](int r, int v) TF_AVX512_STEP { _mm512_store_ps(tile + (r * V + v) * 16, x[v][r]); });
  const int vectors = cols > 16 * (V - 1) ? V : V - 1;
  Avx512Activation(*activation).curve_rows(tile, V, c, ldc, rows, vectors, mask[vectors - 1]);
}

// The next call's C tile and the residual it adds (both lines of each row; the residual lies
// as far from this tile's as the next C tile from this one), before this one's depth loop: see
// Prefetch. A 1x1 convolution adding ResNet's residual read it cold from memory in the model,
// 12 rows of a few lines each per tile, too short for the hardware's prefetcher.
// (runtime/prefetch.h: a loop of _mm_prefetch alone may be deleted by the compiler.)
TF_AVX512 inline __attribute__((always_inline)) void fetch_next_c(const Prefetch& prefetch, const float* c,
                                                                  int64_t ldc, const float* residual) {
  for (int64_t r = 0; r < prefetch.next_c_rows; ++r) {
    const float* row = prefetch.next_c + r * ldc;
    prefetch_line(row);
    prefetch_line(row + 16);
    if (residual != nullptr) {
      const float* res = residual + (row - c);
      prefetch_line(res);
      prefetch_line(res + 16);
    }
  }
}

// The micro-kernel for tiles of at most R rows and V * 16 columns: the panels still hold kMR
// rows and kNR columns per depth step, but only the first R rows and V vectors are multiplied,
// so a tile of 4 rows (the last of 64 output channels) costs a third of a full one, and one of
// at most 16 columns (the last of a 14 x 14 image's 196 positions) half, instead of as much.
//
// An operand read in place is not a packed panel but the operand itself: B's depth step k, its
// `cols` columns, at b + k * ldb, read through masks (a 1x1 convolution's input planes); A's row
// r at a + r * lda, depth step k at [k] (attention's probabilities, used by a product 64 columns
// wide, which packing would copy for two tiles' use).
template <int R, int V, bool InPlaceB = false, bool InPlaceA = false>
TF_AVX512 inline __attribute__((always_inline)) void microkernel_tile_inline(int64_t kc, const float* a, const float* b,
                                                                              float* c, int64_t ldc, int rows, int cols,
                                                                              const TileStore& store, Prefetch prefetch,
                                                                              int64_t ldb = kNR, int64_t lda = 0) {
  // Fully unrolled over the tile's rows and vectors, so the V * R accumulators live in registers.
  __m512 acc[V][R];
  __mmask16 b_mask[V];
  const float* a_rows[R];  // InPlaceA: the rows past `rows` repeat the last (computed, not stored)
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) a_rows[r] = InPlaceA ? a + std::min(r, rows - 1) * lda : nullptr;
  start_tile<R, V>(acc, rows, cols, store);
#pragma GCC unroll 2
  for (int v = 0; v < V; ++v) b_mask[v] = lanes(cols - 16 * v);
  fetch_next_c(prefetch, c, ldc, store.residual);
  for (int64_t k = 0; k < kc; ++k) {
    __m512 bv[V];
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) bv[v] = InPlaceB ? _mm512_maskz_loadu_ps(b_mask[v], b + 16 * v) : _mm512_load_ps(b + 16 * v);
    // The next A micro-panel steps in from L2 while this one is read from L1.
    if (!InPlaceA) _mm_prefetch(reinterpret_cast<const char*>(a + kMR * 8), _MM_HINT_T0);
    if (2 * k < prefetch.lines) {
      _mm_prefetch(prefetch.from + 128 * k, _MM_HINT_T1);
      _mm_prefetch(prefetch.from + 128 * k + 64, _MM_HINT_T1);
    }
    if (InPlaceB) {
      // The next tile's columns of this depth step. Read in place, B's depth steps are as many
      // streams as the depth (192-1024 in a 1x1 convolution), far more than the hardware's
      // prefetcher follows, and the first row panel met each of them cold: Inception-v3's 1x1
      // convolutions read their input from L3 at half the speed of the same layer alone.
      _mm_prefetch(reinterpret_cast<const char*>(b + kNR), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(b + kNR + 16), _MM_HINT_T0);
    }
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(InPlaceA ? a_rows[r][k] : a[r]);
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) acc[v][r] = _mm512_fmadd_ps(av, bv[v], acc[v][r]);
    }
    if (!InPlaceA) a += kMR;
    b += InPlaceB ? ldb : kNR;
  }
  store_tile<R, V>(acc, c, ldc, rows, cols, store);
}

// The same, called: one copy per shape, for the callers that dispatch tile by tile.
template <int R, int V, bool InPlaceB = false, bool InPlaceA = false>
TF_AVX512 void microkernel_tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int rows, int cols,
                                const TileStore& store, Prefetch prefetch, int64_t ldb = kNR, int64_t lda = 0) {
  microkernel_tile_inline<R, V, InPlaceB, InPlaceA>(kc, a, b, c, ldc, rows, cols, store, prefetch, ldb, lda);
}

// The same tile from panels of bf16 pairs (sgemm_microkernel.h): one dot instruction per pair of
// depth steps multiplies two bf16 products into each f32 lane, twice an FMA's work.
template <int R, int V>
TF_AVX512_BF16 inline __attribute__((always_inline)) void microkernel_tile_bf16_inline(int64_t kc, const float* a,
                                                                                        const float* b, float* c,
                                                                                        int64_t ldc, int rows, int cols,
                                                                                        const TileStore& store,
                                                                                        Prefetch prefetch) {
  __m512 acc[V][R];
  start_tile<R, V>(acc, rows, cols, store);
  const int32_t* words = reinterpret_cast<const int32_t*>(a);
  fetch_next_c(prefetch, c, ldc, store.residual);
  for (int64_t k = 0; k < (kc + 1) / 2; ++k) {
    __m512bh bv[V];
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) bv[v] = reinterpret_cast<__m512bh>(_mm512_load_si512(b + 16 * v));
    _mm_prefetch(reinterpret_cast<const char*>(words + kMR * 8), _MM_HINT_T0);
    if (2 * k < prefetch.lines) {
      _mm_prefetch(prefetch.from + 128 * k, _MM_HINT_T1);
      _mm_prefetch(prefetch.from + 128 * k + 64, _MM_HINT_T1);
    }
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      const __m512bh av = reinterpret_cast<__m512bh>(_mm512_set1_epi32(words[r]));
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) acc[v][r] = _mm512_dpbf16_ps(acc[v][r], av, bv[v]);
    }
    words += kMR;
    b += kNR;
  }
  store_tile<R, V>(acc, c, ldc, rows, cols, store);
}

// The tiles of microkernel_row with R rows, each inlined.
template <int R, bool InPlaceB>
TF_AVX512 void row_of_tiles(int64_t kc, const float* a, const TileRow& row, float* c, int64_t ldc, int rows,
                            int64_t cols, const TileStore& store, Prefetch first) {
  TileStore tile = store;
  for (int64_t j = 0; j < cols; j += kNR, next_in_row(tile)) {
    const float* b = row.b + j / kNR * row.panel_stride;
    const int n = static_cast<int>(std::min<int64_t>(kNR, cols - j));
    const Prefetch prefetch = row_prefetch(row, c, rows, j, cols, first);
    if (n > 16) {
      microkernel_tile_inline<R, 2, InPlaceB>(kc, a, b, c + j, ldc, rows, n, tile, prefetch, row.ldb);
    } else {
      microkernel_tile_inline<R, 1, InPlaceB>(kc, a, b, c + j, ldc, rows, n, tile, prefetch, row.ldb);
    }
  }
}

// The same from bf16 pairs. A copy, not one template over the tile's kernel: a template has one
// target for all its instantiations, and the f32 walk must not be compiled for avx512_bf16,
// which CPUs with AVX-512 may lack.
template <int R>
TF_AVX512_BF16 void row_of_tiles_bf16(int64_t kc, const float* a, const TileRow& row, float* c, int64_t ldc, int rows,
                                      int64_t cols, const TileStore& store, Prefetch first) {
  TileStore tile = store;
  for (int64_t j = 0; j < cols; j += kNR, next_in_row(tile)) {
    const float* b = row.b + j / kNR * row.panel_stride;
    const int n = static_cast<int>(std::min<int64_t>(kNR, cols - j));
    const Prefetch prefetch = row_prefetch(row, c, rows, j, cols, first);
    if (n > 16) {
      microkernel_tile_bf16_inline<R, 2>(kc, a, b, c + j, ldc, rows, n, tile, prefetch);
    } else {
      microkernel_tile_bf16_inline<R, 1>(kc, a, b, c + j, ldc, rows, n, tile, prefetch);
    }
  }
}

// The tiles of microkernel_column with V vectors of columns, each inlined: the full ones, then
// the last rounded up to 4, 8 or 12 rows.
template <int V>
TF_AVX512 void column_of_tiles(int64_t kc, const TileColumn& column, const float* b, float* c, int64_t ldc,
                               int64_t rows, int cols, const TileStore& store) {
  TileStore tile = store;
  const int64_t tiles = (rows + kMR - 1) / kMR;
  for (int64_t p = 0; p < tiles; ++p, next_in_column(tile, ldc)) {
    const float* a = column.a + p * column.panel_stride;
    float* at = c + p * kMR * ldc;
    const int m = static_cast<int>(std::min<int64_t>(kMR, rows - p * kMR));
    const Prefetch prefetch = column_share(column, p, tiles);
    if (m > 8) {
      microkernel_tile_inline<12, V>(kc, a, b, at, ldc, m, cols, tile, prefetch);
    } else if (m > 4) {
      microkernel_tile_inline<8, V>(kc, a, b, at, ldc, m, cols, tile, prefetch);
    } else {
      microkernel_tile_inline<4, V>(kc, a, b, at, ldc, m, cols, tile, prefetch);
    }
  }
}

// The same from bf16 pairs (a copy, as row_of_tiles_bf16 is).
template <int V>
TF_AVX512_BF16 void column_of_tiles_bf16(int64_t kc, const TileColumn& column, const float* b, float* c, int64_t ldc,
                                         int64_t rows, int cols, const TileStore& store) {
  TileStore tile = store;
  const int64_t tiles = (rows + kMR - 1) / kMR;
  for (int64_t p = 0; p < tiles; ++p, next_in_column(tile, ldc)) {
    const float* a = column.a + p * column.panel_stride;
    float* at = c + p * kMR * ldc;
    const int m = static_cast<int>(std::min<int64_t>(kMR, rows - p * kMR));
    const Prefetch prefetch = column_share(column, p, tiles);
    if (m > 8) {
      microkernel_tile_bf16_inline<12, V>(kc, a, b, at, ldc, m, cols, tile, prefetch);
    } else if (m > 4) {
      microkernel_tile_bf16_inline<8, V>(kc, a, b, at, ldc, m, cols, tile, prefetch);
    } else {
      microkernel_tile_bf16_inline<4, V>(kc, a, b, at, ldc, m, cols, tile, prefetch);
    }
  }
}

// The tile's rows rounded up to 4, 8 or 12, with V vectors of columns.
template <int V, bool InPlaceA = false>
TF_AVX512 void microkernel_columns(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int rows,
                                   int cols, const TileStore& store, Prefetch prefetch, int64_t lda = 0) {
  static_assert(kMR == 12, "the row tails below assume 12-row panels");
  if (rows > 8) return microkernel_tile<12, V, false, InPlaceA>(kc, a, b, c, ldc, rows, cols, store, prefetch, kNR, lda);
  if (rows > 4) return microkernel_tile<8, V, false, InPlaceA>(kc, a, b, c, ldc, rows, cols, store, prefetch, kNR, lda);
  microkernel_tile<4, V, false, InPlaceA>(kc, a, b, c, ldc, rows, cols, store, prefetch, kNR, lda);
}

// Two vectors rounded to bf16 and paired lane by lane: word i holds lo[i] in its low half and
// hi[i] in its high half.
TF_AVX512_BF16 inline __m512 interleave_pairs(__m512 lo, __m512 hi) {
  const __m512i order = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6, 21,
                                         5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  return _mm512_castsi512_ps(_mm512_permutexvar_epi16(order, (__m512i)_mm512_cvtne2ps_pbh(hi, lo)));
}

}  // namespace

TF_AVX512 void microkernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int rows, int cols,
                           const TileStore& store, Prefetch prefetch) {
  if (cols > 16) return microkernel_columns<2>(kc, a, b, c, ldc, rows, cols, store, prefetch);
  microkernel_columns<1>(kc, a, b, c, ldc, rows, cols, store, prefetch);
}

TF_AVX512 void microkernel_row(int64_t kc, const float* a, const TileRow& row, float* c, int64_t ldc, int rows,
                               int64_t cols, const TileStore& store, Prefetch first) {
  if (row.b_in_place) {
    if (rows > 8) return row_of_tiles<12, true>(kc, a, row, c, ldc, rows, cols, store, first);
    if (rows > 4) return row_of_tiles<8, true>(kc, a, row, c, ldc, rows, cols, store, first);
    return row_of_tiles<4, true>(kc, a, row, c, ldc, rows, cols, store, first);
  }
  if (rows > 8) return row_of_tiles<12, false>(kc, a, row, c, ldc, rows, cols, store, first);
  if (rows > 4) return row_of_tiles<8, false>(kc, a, row, c, ldc, rows, cols, store, first);
  row_of_tiles<4, false>(kc, a, row, c, ldc, rows, cols, store, first);
}

TF_AVX512 void microkernel_column(int64_t kc, const TileColumn& column, const float* b, float* c, int64_t ldc,
                                  int64_t rows, int cols, const TileStore& store) {
  if (cols > 16) return column_of_tiles<2>(kc, column, b, c, ldc, rows, cols, store);
  column_of_tiles<1>(kc, column, b, c, ldc, rows, cols, store);
}

TF_AVX512_BF16 void microkernel_row_bf16(int64_t kc, const float* a, const TileRow& row, float* c, int64_t ldc,
                                         int rows, int64_t cols, const TileStore& store, Prefetch first) {
  if (rows > 8) return row_of_tiles_bf16<12>(kc, a, row, c, ldc, rows, cols, store, first);
  if (rows > 4) return row_of_tiles_bf16<8>(kc, a, row, c, ldc, rows, cols, store, first);
  row_of_tiles_bf16<4>(kc, a, row, c, ldc, rows, cols, store, first);
}

TF_AVX512_BF16 void microkernel_column_bf16(int64_t kc, const TileColumn& column, const float* b, float* c,
                                            int64_t ldc, int64_t rows, int cols, const TileStore& store) {
  if (cols > 16) return column_of_tiles_bf16<2>(kc, column, b, c, ldc, rows, cols, store);
  column_of_tiles_bf16<1>(kc, column, b, c, ldc, rows, cols, store);
}

TF_AVX512 void microkernel_a_in_place(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc,
                                      int rows, int cols, const TileStore& store, Prefetch prefetch) {
  if (cols > 16) return microkernel_columns<2, true>(kc, a, b, c, ldc, rows, cols, store, prefetch, lda);
  microkernel_columns<1, true>(kc, a, b, c, ldc, rows, cols, store, prefetch, lda);
}

TF_AVX512_BF16 void b_panels_to_bf16(const float* panels, int64_t count, int64_t kc, float* dst) {
  const int64_t steps = (kc + 1) / 2;
  for (int64_t p = 0; p < count; ++p, panels += kc * kNR, dst += steps * kNR) {
    for (int64_t step = 0; step < steps; ++step) {
      const float* lo = panels + 2 * step * kNR;
      const bool odd = 2 * step + 1 == kc;  // the last step has no partner: zero
      for (int h = 0; h < 2; ++h) {
        const __m512 hi = odd ? _mm512_setzero_ps() : _mm512_load_ps(lo + kNR + 16 * h);
        _mm512_store_ps(dst + step * kNR + 16 * h, interleave_pairs(_mm512_load_ps(lo + 16 * h), hi));
      }
    }
  }
}

TF_AVX512_BF16 void pack_a_bf16(const MatrixView& a, int64_t row0, int64_t rows, int64_t k0, int64_t kc, float* dst) {
  const int64_t steps = (kc + 1) / 2;
  for (int64_t p = 0; p < rows; p += kMR, dst += steps * kMR) {
    const int n = static_cast<int>(std::min<int64_t>(kMR, rows - p));
    if (a.row_stride == 1) {
      // A transposed in memory (a convolution's positions as rows): a step's kMR rows are
      // contiguous at k and at k + 1; rounded together and interleaved into pairs.
      for (int64_t step = 0; step < steps; ++step) {
        const int64_t k = 2 * step;
        const __m512 lo = _mm512_maskz_loadu_ps(lanes(n), a.at(row0 + p, k0 + k));
        const __m512 hi = k + 1 < kc ? _mm512_maskz_loadu_ps(lanes(n), a.at(row0 + p, k0 + k + 1)) : _mm512_setzero_ps();
        _mm512_mask_storeu_ps(dst + step * kMR, lanes(kMR), interleave_pairs(lo, hi));
      }
      continue;
    }
    if (a.col_stride != 1) {
      pack_a_bf16_strided(a, row0 + p, n, k0, kc, dst);
      continue;
    }
    // Row-major: 32 depth steps of the panel's rows at a time, rounded to 16 pairs per row and
    // transposed in registers, so that each step's kMR pairs are contiguous.
    for (int64_t k = 0; k < kc; k += 32) {
      const int depth = static_cast<int>(std::min<int64_t>(32, kc - k));
      __m512 v[16];
#pragma GCC unroll 16
      for (int r = 0; r < 16; ++r) {
        if (r >= n) {
          v[r] = _mm512_setzero_ps();
          continue;
        }
        const float* src = a.at(row0 + p + r, k0 + k);
        const __m512 lo = _mm512_maskz_loadu_ps(lanes(depth), src);
        const __m512 hi = _mm512_maskz_loadu_ps(lanes(depth - 16), src + 16);
        v[r] = (__m512)_mm512_cvtne2ps_pbh(hi, lo);
      }
      transpose16(v);
      const int pairs = (depth + 1) / 2;
#pragma GCC unroll 16
      for (int e = 0; e < 16; ++e) {
        if (e < pairs) _mm512_mask_storeu_ps(dst + (k / 2 + e) * kMR, lanes(kMR), v[e]);
      }
    }
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
