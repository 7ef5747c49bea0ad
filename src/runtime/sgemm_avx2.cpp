// The GEMM engine's AVX2 pieces. AVX2 has 16 vector registers of 8 lanes, too few for the 12 x
// 32 tile the panels are laid out for (48 accumulators), so the micro-kernel covers the tile as
// up to four 6 x 16 sub-tiles (12 accumulators, two B vectors and a broadcast: 15 registers,
// the Haswell shape of BLIS and OpenBLAS). A sub-tile reads every other half of the B panel and
// of the A panel; both stay in L1 between the four passes.
#include <immintrin.h>

#include <algorithm>

#include "runtime/activation_vectors.h"
#include "runtime/lane_masks.h"
#include "runtime/prefetch.h"
#include "runtime/sgemm_isa.h"

#define TF_AVX2 __attribute__((target("avx2,fma")))

namespace tilefuse::runtime::avx2 {

namespace {

constexpr int kSubRows = 6;
constexpr int kSubCols = 16;

// Where a sub-tile lies in its tile, and how many of its rows and columns are stored.
struct SubTile {
  int row0, col0, rows, cols;
};

// Two vectors of a C row: whole, or masked at the tile's right edge. (AMD's masked stores are
// slow, so whole sub-tiles never use them.)
struct RowAccess {
  bool whole;
  __m256i lo, hi;
  TF_AVX2 __m256 load(const float* p, int half) const {
    if (whole) return _mm256_loadu_ps(p + 8 * half);
    return _mm256_maskload_ps(p + 8 * half, half == 0 ? lo : hi);
  }
  TF_AVX2 void store(float* p, int half, __m256 v) const {
    if (whole) return _mm256_storeu_ps(p + 8 * half, v);
    _mm256_maskstore_ps(p + 8 * half, half == 0 ? lo : hi, v);
  }
};

// How every sub-tile of a tile stores: the TileStore, and its activation in vectors, set up
// once per tile. `plain`: C = the sum (plus the row bias, plus the residual), clamped where the
// activation is a clamp: what a convolution or a projection with its bias and ReLU stores.
struct SubTileStore {
  const TileStore& store;
  Avx2Activation act;
  bool clamp, curve, plain;
  TF_AVX2 explicit SubTileStore(const TileStore& s)
      : store(s), act(s.activation != nullptr ? *s.activation : FusedActivation{}),
        clamp(s.activation != nullptr && act.is_clamp()), curve(s.activation != nullptr && !clamp),
        plain(s.alpha == 1.0f && s.col_bias == nullptr && !s.accumulate && !curve) {}
};

// The plain store of a whole-width sub-tile, straight from the accumulators: at a depth of 16
// (MobileNet's expansions) the general store below, with its masks, alpha and spilled
// accumulators, took as long as the products.
template <int R, int V>
TF_AVX2 inline __attribute__((always_inline)) void store_plain(const __m256 (&acc)[V][R], float* c, int64_t ldc,
                                                                 SubTile t, const SubTileStore& st) {
  const float* row_bias = st.store.row_bias;
  const float* residual = st.store.residual;
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    if (r >= t.rows) break;
    const int64_t offset = (t.row0 + r) * ldc + t.col0;
    const __m256 bias = row_bias != nullptr ? _mm256_broadcast_ss(row_bias + t.row0 + r) : _mm256_setzero_ps();
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) {
      __m256 out = row_bias != nullptr ? _mm256_add_ps(acc[v][r], bias) : acc[v][r];
      if (residual != nullptr) out = _mm256_add_ps(out, _mm256_loadu_ps(residual + offset + 8 * v));
      if (st.clamp) out = st.act.clamp(out);
      _mm256_storeu_ps(c + offset + 8 * v, out);
    }
  }
}

// Every other store: alpha, column bias, accumulating into C, a curve, and sub-tiles cut at the
// tile's right edge.
template <int R, int V>
TF_AVX2 __attribute__((noinline)) void store_general(const __m256 (&acc)[V][R], float* c, int64_t ldc, SubTile t,
                                                    const SubTileStore& st) {
  const TileStore& store = st.store;
  const RowAccess access{t.cols == 8 * V, lanes8(t.cols), lanes8(t.cols - 8)};
  const __m256 alpha = _mm256_set1_ps(store.alpha);
  __m256 bias[V];
#pragma GCC unroll 2
  for (int v = 0; v < V; ++v) {
    bias[v] = store.col_bias != nullptr ? access.load(store.col_bias + t.col0, v) : _mm256_setzero_ps();
  }
  // A curve goes over the sub-tile laid out in an aligned L1 buffer, in one call: called vector
  // by vector it cost a 1500 x 384 x 1536 product with GELU twice what a separate pass did.
  alignas(32) float tile[R * V * 8];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    if (r >= t.rows) break;
    float* row = c + (t.row0 + r) * ldc + t.col0;
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) {
      __m256 out = _mm256_fmadd_ps(acc[v][r], alpha, bias[v]);
      if (store.row_bias != nullptr) out = _mm256_add_ps(out, _mm256_set1_ps(store.row_bias[t.row0 + r]));
      if (store.accumulate) out = _mm256_add_ps(out, access.load(row, v));
      if (store.residual != nullptr) out = _mm256_add_ps(out, access.load(store.residual + (t.row0 + r) * ldc + t.col0, v));
      if (st.clamp) out = st.act.clamp(out);
      if (st.curve) {
        _mm256_store_ps(tile + (r * V + v) * 8, out);
      } else {
        access.store(row, v, out);
      }
    }
  }
  if (!st.curve) return;
  const int vectors = t.cols > 8 * (V - 1) ? V : V - 1;
  const __m256i masks[2] = {access.lo, access.hi};
  st.act.curve_rows(tile, V, c + t.row0 * ldc + t.col0, ldc, t.rows, vectors, access.whole, masks);
}

// R (<= 6) rows x 8V (V = 1 or 2) columns of the tile; fully unrolled over rows and vectors so
// that the V x R accumulators live in registers. V = 1 serves a half with at most 8 columns
// (the last panel of 7 x 7 = 49 output positions holds 17).
template <int R, int V>
TF_AVX2 void subtile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, SubTile t,
                     const SubTileStore& st, Prefetch prefetch) {
  __m256 acc[V][R];
#pragma GCC unroll 2
  for (int v = 0; v < V; ++v) {
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) acc[v][r] = _mm256_setzero_ps();
  }
  a += t.row0;
  b += t.col0;
  // One depth step: the products, and the prefetches asked for. A is fetched ahead by the first
  // column of sub-tiles only (the second reads what the first brought in); the next B panel, by
  // the steps of the first sub-tile that cover it.
  const auto step = [&](int64_t k, bool fetch_a, bool fetch_b) __attribute__((target("avx2,fma"), always_inline)) {
    __m256 bv[V];
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) bv[v] = _mm256_load_ps(b + 8 * v);
    if (fetch_a) _mm_prefetch(reinterpret_cast<const char*>(a + kMR * 8), _MM_HINT_T0);
    if (fetch_b) {
      _mm_prefetch(prefetch.from + 128 * k, _MM_HINT_T1);
      _mm_prefetch(prefetch.from + 128 * k + 64, _MM_HINT_T1);
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + r);
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) acc[v][r] = _mm256_fmadd_ps(av, bv[v], acc[v][r]);
    }
    a += kMR;
    b += kNR;
  };
  const int64_t fetching = std::min<int64_t>(kc, (prefetch.lines + 1) / 2);
  int64_t k = 0;
  for (; k < fetching; ++k) step(k, true, true);
  if (t.col0 == 0) {
    for (; k < kc; ++k) step(k, true, false);
  } else {
    for (; k < kc; ++k) step(k, false, false);
  }
  if (st.plain && t.cols == 8 * V) return store_plain<R, V>(acc, c, ldc, t, st);
  // A copy goes to memory for the out-of-line store: were `acc` itself passed, it would live in
  // memory through the depth loop.
  __m256 sums[V][R];
#pragma GCC unroll 2
  for (int v = 0; v < V; ++v) {
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) sums[v][r] = acc[v][r];
  }
  store_general<R, V>(sums, c, ldc, t, st);
}

// The sub-tile kernel for a sub-tile's row and column counts.
template <int V>
TF_AVX2 void subtile_rows(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, SubTile t,
                          const SubTileStore& st, Prefetch prefetch) {
  if (t.rows > 4) return subtile<6, V>(kc, a, b, c, ldc, t, st, prefetch);
  if (t.rows > 2) return subtile<4, V>(kc, a, b, c, ldc, t, st, prefetch);
  subtile<2, V>(kc, a, b, c, ldc, t, st, prefetch);
}

// The next call's C tile and the residual it adds (both lines of each row), before this one's
// depth loop: see Prefetch. (runtime/prefetch.h: with _mm_prefetch, GCC 12 deleted this function's
// body; on AVX2 the fetch had never run.)
TF_AVX2 void fetch_next_c(const Prefetch& prefetch, const float* c, int64_t ldc, const float* residual) {
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

}  // namespace

TF_AVX2 void microkernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int rows, int cols,
                         const TileStore& store, Prefetch prefetch) {
  static_assert(kMR % kSubRows == 0 && kNR % kSubCols == 0, "sub-tiles must tile the panels");
  if (prefetch.next_c != nullptr) fetch_next_c(prefetch, c, ldc, store.residual);
  const SubTileStore st(store);
  for (int col0 = 0; col0 < cols; col0 += kSubCols) {
    for (int row0 = 0; row0 < rows; row0 += kSubRows) {
      const SubTile t{row0, col0, std::min(kSubRows, rows - row0), std::min(kSubCols, cols - col0)};
      // The next B panel is fetched once, during the first pass.
      const Prefetch p = row0 == 0 && col0 == 0 ? prefetch : Prefetch{};
      if (t.cols > 8) {
        subtile_rows<2>(kc, a, b, c, ldc, t, st, p);
      } else {
        subtile_rows<1>(kc, a, b, c, ldc, t, st, p);
      }
    }
  }
}

namespace {

// The products below keep independent sums per vector, each fed every few depth steps, so
// that 8 FMA chains are in flight (two pipes times a 4-cycle latency); the sums are added at
// the end.
constexpr int kSets = 4;

// y[0..32) = sum over k of x[k] * panel[k][0..32): a B operand's panel, four vectors a step,
// so two sets of sums (8 accumulators: with 16 they would not fit the 16 registers).
TF_AVX2 void b_panel_gemv(const float* panel, int64_t depth, const float* x, float* y) {
  constexpr int kBSets = 2;
  __m256 acc[kBSets][4];
  for (auto& set : acc) {
    for (__m256& a : set) a = _mm256_setzero_ps();
  }
  int64_t k = 0;
  for (; k + kBSets <= depth; k += kBSets) {
#pragma GCC unroll 2
    for (int s = 0; s < kBSets; ++s) {
      const __m256 xv = _mm256_broadcast_ss(x + k + s);
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v) acc[s][v] = _mm256_fmadd_ps(xv, _mm256_load_ps(panel + (k + s) * kNR + 8 * v), acc[s][v]);
    }
  }
  for (; k < depth; ++k) {
    const __m256 xv = _mm256_broadcast_ss(x + k);
    for (int v = 0; v < 4; ++v) acc[0][v] = _mm256_fmadd_ps(xv, _mm256_load_ps(panel + k * kNR + 8 * v), acc[0][v]);
  }
  for (int v = 0; v < 4; ++v) _mm256_storeu_ps(y + 8 * v, _mm256_add_ps(acc[0][v], acc[1][v]));
}

// y[0..12) = sum over k of x[k] * panel[k][0..12): an A operand's panel, one vector of 8 and
// one of 4 values a step, so four sets of sums.
TF_AVX2 void a_panel_gemv(const float* panel, int64_t depth, const float* x, float* y) {
  static_assert(kMR == 12, "an A panel is 8 + 4 values a depth step");
  __m256 lo[kSets];
  __m128 hi[kSets];
  for (int s = 0; s < kSets; ++s) lo[s] = _mm256_setzero_ps(), hi[s] = _mm_setzero_ps();
  int64_t k = 0;
  for (; k + kSets <= depth; k += kSets) {
#pragma GCC unroll 4
    for (int s = 0; s < kSets; ++s) {
      const float* row = panel + (k + s) * kMR;
      const __m256 xv = _mm256_broadcast_ss(x + k + s);
      lo[s] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(row), lo[s]);
      hi[s] = _mm_fmadd_ps(_mm256_castps256_ps128(xv), _mm_loadu_ps(row + 8), hi[s]);
    }
  }
  for (; k < depth; ++k) {
    const __m256 xv = _mm256_broadcast_ss(x + k);
    lo[0] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(panel + k * kMR), lo[0]);
    hi[0] = _mm_fmadd_ps(_mm256_castps256_ps128(xv), _mm_loadu_ps(panel + k * kMR + 8), hi[0]);
  }
  _mm256_storeu_ps(y, _mm256_add_ps(_mm256_add_ps(lo[0], lo[1]), _mm256_add_ps(lo[2], lo[3])));
  _mm_storeu_ps(y + 8, _mm_add_ps(_mm_add_ps(hi[0], hi[1]), _mm_add_ps(hi[2], hi[3])));
}

}  // namespace

TF_AVX2 void panel_gemv(const float* panels, int width, int64_t depth, int64_t count, const float* x, float* y) {
  for (int64_t p = 0; p < count; ++p, panels += depth * width, y += width) {
    if (width == kNR) {
      b_panel_gemv(panels, depth, x, y);
    } else {
      a_panel_gemv(panels, depth, x, y);
    }
  }
}

namespace {

// dst[k * width + i] = src[i * stride + k] for i < count, 0 for count <= i < width (a multiple
// of 4), k < kc: `count` sequences, each contiguous in memory, become a panel's interleaved
// columns. 4 sequences x 8 depth steps at a time go through an in-register 4 x 8 transpose: 4
// loads and 8 stores where value by value would be 32 of each.
TF_AVX2 void interleave(const float* src, int64_t stride, int count, int width, int64_t kc, float* dst) {
  int64_t k = 0;
  for (; k + 8 <= kc; k += 8) {
    for (int g = 0; g < width; g += 4) {
      __m256 r[4];
#pragma GCC unroll 4
      for (int i = 0; i < 4; ++i) r[i] = g + i < count ? _mm256_loadu_ps(src + (g + i) * stride + k) : _mm256_setzero_ps();
      const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
      const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
      // u[j]: the 4 sequences' values at depth k + j (low 128 bits) and k + j + 4 (high).
      const __m256 u[4] = {_mm256_shuffle_ps(t0, t2, 0x44), _mm256_shuffle_ps(t0, t2, 0xee),
                           _mm256_shuffle_ps(t1, t3, 0x44), _mm256_shuffle_ps(t1, t3, 0xee)};
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        _mm_storeu_ps(dst + (k + j) * width + g, _mm256_castps256_ps128(u[j]));
        _mm_storeu_ps(dst + (k + j + 4) * width + g, _mm256_extractf128_ps(u[j], 1));
      }
    }
  }
  for (; k < kc; ++k) {
    for (int i = 0; i < width; ++i) dst[k * width + i] = i < count ? src[i * stride + k] : 0.0f;
  }
}

// dst[k * width + i] = src[k * stride + i] for i < count, 0 up to width: sequences that are
// already a panel's rows, copied.
void copy_rows(const float* src, int64_t stride, int count, int width, int64_t kc, float* dst) {
  for (int64_t k = 0; k < kc; ++k, src += stride) {
    std::copy(src, src + count, dst + k * width);
    std::fill(dst + k * width + count, dst + (k + 1) * width, 0.0f);
  }
}

}  // namespace

TF_AVX2 void pack_a(const MatrixView& a, int64_t row0, int64_t rows, int64_t k0, int64_t kc, float* dst) {
  for (int64_t p = 0; p < rows; p += kMR, dst += kc * kMR) {
    const int n = static_cast<int>(std::min<int64_t>(kMR, rows - p));
    const float* src = a.at(row0 + p, k0);
    if (a.row_stride == 1) {
      copy_rows(src, a.col_stride, n, kMR, kc, dst);  // A transposed in memory
    } else if (a.col_stride == 1) {
      interleave(src, a.row_stride, n, kMR, kc, dst);  // row-major: each row contiguous
    } else {
      for (int64_t k = 0; k < kc; ++k) {
        for (int r = 0; r < kMR; ++r) dst[k * kMR + r] = r < n ? *a.at(row0 + p + r, k0 + k) : 0.0f;
      }
    }
  }
}

TF_AVX2 void pack_b(const MatrixView& b, int64_t k0, int64_t kc, int64_t col0, int64_t cols, float* dst) {
  for (int64_t p = 0; p < cols; p += kNR, dst += kc * kNR) {
    const int n = static_cast<int>(std::min<int64_t>(kNR, cols - p));
    const float* src = b.at(k0, col0 + p);
    if (b.col_stride == 1) {
      copy_rows(src, b.row_stride, n, kNR, kc, dst);
    } else if (b.row_stride == 1) {
      // B transposed in memory (a weight stored [N, K], K^T in attention): each column contiguous.
      interleave(src, b.col_stride, n, kNR, kc, dst);
    } else {
      for (int64_t k = 0; k < kc; ++k) {
        for (int j = 0; j < kNR; ++j) dst[k * kNR + j] = j < n ? *b.at(k0 + k, col0 + p + j) : 0.0f;
      }
    }
  }
}

}  // namespace tilefuse::runtime::avx2
