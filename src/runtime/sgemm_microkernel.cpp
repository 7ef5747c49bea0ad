#include "runtime/sgemm_microkernel.h"

#include <algorithm>

#include "ir/error.h"
#include "runtime/cpu_isa.h"
#include "runtime/sgemm_isa.h"

namespace tilefuse::runtime {

bool microkernel_supported() { return vector_isa() != VectorIsa::scalar; }

void microkernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int rows, int cols,
                 const TileStore& store, Prefetch prefetch) {
  switch (vector_isa()) {
    case VectorIsa::avx512:
      return avx512::microkernel(kc, a, b, c, ldc, rows, cols, store, prefetch);
    case VectorIsa::avx2:
      return avx2::microkernel(kc, a, b, c, ldc, rows, cols, store, prefetch);
    case VectorIsa::scalar:
      break;
  }
  fail_internal("sgemm micro-kernel called on a CPU without AVX2");
}

void microkernel_row(int64_t kc, const float* a, const TileRow& row, float* c, int64_t ldc, int rows, int64_t cols,
                     const TileStore& store, Prefetch first) {
  if (row.bf16) {
    if (!bf16_supported()) fail_internal("bf16 micro-kernel called on a CPU without avx512_bf16");
    return avx512::microkernel_row_bf16(kc, a, row, c, ldc, rows, cols, store, first);
  }
  if (vector_isa() == VectorIsa::avx512) return avx512::microkernel_row(kc, a, row, c, ldc, rows, cols, store, first);
  if (row.b_in_place) fail_internal("the in-place micro-kernel called without AVX-512");
  // AVX2: tile by tile (its micro-kernel fetches no C).
  TileStore tile = store;
  for (int64_t j = 0; j < cols; j += kNR, next_in_row(tile)) {
    microkernel(kc, a, row.b + j / kNR * row.panel_stride, c + j, ldc, rows, static_cast<int>(std::min<int64_t>(kNR, cols - j)),
                tile, row_prefetch(row, c, rows, j, cols, first));
  }
}

void microkernel_column(int64_t kc, const TileColumn& column, const float* b, float* c, int64_t ldc, int64_t rows,
                        int cols, const TileStore& store) {
  if (column.bf16) {
    if (!bf16_supported()) fail_internal("bf16 micro-kernel called on a CPU without avx512_bf16");
    return avx512::microkernel_column_bf16(kc, column, b, c, ldc, rows, cols, store);
  }
  if (vector_isa() == VectorIsa::avx512) return avx512::microkernel_column(kc, column, b, c, ldc, rows, cols, store);
  // AVX2: tile by tile.
  TileStore tile = store;
  const int64_t tiles = (rows + kMR - 1) / kMR;
  for (int64_t p = 0; p < tiles; ++p, next_in_column(tile, ldc)) {
    microkernel(kc, column.a + p * column.panel_stride, b, c + p * kMR * ldc, ldc,
                static_cast<int>(std::min<int64_t>(kMR, rows - p * kMR)), cols, tile, column_share(column, p, tiles));
  }
}

void microkernel_a_in_place(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc, int rows,
                            int cols, const TileStore& store, Prefetch prefetch) {
  if (vector_isa() != VectorIsa::avx512) fail_internal("the in-place A micro-kernel called without AVX-512");
  avx512::microkernel_a_in_place(kc, a, lda, b, c, ldc, rows, cols, store, prefetch);
}

bool bf16_supported() {
  static const bool supported = vector_isa() == VectorIsa::avx512 && __builtin_cpu_supports("avx512bf16");
  return supported;
}

void pack_a_bf16(const MatrixView& a, int64_t row0, int64_t rows, int64_t k0, int64_t kc, float* dst) {
  if (!bf16_supported()) fail_internal("bf16 packing called on a CPU without avx512_bf16");
  avx512::pack_a_bf16(a, row0, rows, k0, kc, dst);
}

void b_panels_to_bf16(const float* panels, int64_t count, int64_t kc, float* dst) {
  if (!bf16_supported()) fail_internal("bf16 packing called on a CPU without avx512_bf16");
  avx512::b_panels_to_bf16(panels, count, kc, dst);
}

void pack_a(const MatrixView& a, int64_t row0, int64_t rows, int64_t k0, int64_t kc, float* dst) {
  if (vector_isa() == VectorIsa::avx512) return avx512::pack_a(a, row0, rows, k0, kc, dst);
  avx2::pack_a(a, row0, rows, k0, kc, dst);
}

void pack_b(const MatrixView& b, int64_t k0, int64_t kc, int64_t col0, int64_t cols, float* dst) {
  if (vector_isa() == VectorIsa::avx512) return avx512::pack_b(b, k0, kc, col0, cols, dst);
  avx2::pack_b(b, k0, kc, col0, cols, dst);
}

void panel_gemv(const float* panels, int width, int64_t depth, int64_t count, const float* x, float* y) {
  if (!microkernel_supported()) fail_internal("panel_gemv called on a CPU without AVX2");
  avx2::panel_gemv(panels, width, depth, count, x, y);
}

}  // namespace tilefuse::runtime
