// The innermost pieces of tilefuse's own f32 GEMM (sgemm.h): a register-blocked micro-kernel
// and the routines that pack operands into the order it reads, for AVX-512 and for AVX2
// (sgemm_isa.h), chosen by vector_isa().
//
// The micro-kernel computes a kMR x kNR tile of C = A x B over a depth of kc from two packed
// micro-panels: A as kc steps of kMR row values (one broadcast each), B as kc steps of kNR
// contiguous column values (two 16-lane vectors). 12 x 32 holds 24 accumulators in registers
// (of 32), needs 2 vector loads and 12 broadcasts per 24 FMAs, and keeps a B micro-panel of
// kc x 32 floats in L1 while the A micro-panels stream from L2 (the BLIS SkylakeX shape,
// transposed to row-major).
//
// On AVX2 the same panels are computed as 6 x 16 sub-tiles (sgemm_avx2.cpp). Call these
// functions only when microkernel_supported() is true.
#pragma once

#include <algorithm>
#include <cstdint>

#include "ir/ops/fused_activation.h"

namespace tilefuse::runtime {

inline constexpr int kMR = 12;  // rows of a C tile (broadcasts from A)
inline constexpr int kNR = 32;  // columns of a C tile (two AVX-512 vectors from B)

// What happens to a C tile when the micro-kernel stores it: C = alpha * AB (+ C when accumulate)
// (+ row_bias[r]) (+ col_bias[c]). The bias pointers are already offset to the tile's first row
// and column; null for none.
// Then, on the last depth block, epilogue: + residual (a matrix laid out as C, offset to the
// tile, or null), then the activation (null: none).
struct TileStore {
  bool accumulate = false;
  float alpha = 1.0f;
  const float* row_bias = nullptr;
  const float* col_bias = nullptr;
  const float* residual = nullptr;
  const FusedActivation* activation = nullptr;
};

// True if this CPU runs a micro-kernel: vector_isa() is AVX2 or AVX-512.
bool microkernel_supported();

// Memory the micro-kernel brings into L2 while it computes, two cache lines a depth step: a
// part of the next B micro-panel when that comes from memory (weights packed ahead of time and
// read once per run), so the panel after this one does not start with a stall.
//
// And the C tile the next call stores, where the caller knows it, fetched before this call's
// depth loop (AVX-512). A product whose whole depth is one block writes each line of C once, and a tile's
// stores then wait on memory about as long as its FMAs take at a depth of 64 (attention's
// Q K^T); fetched a tile ahead, they do not (bench/README.md, "Attention products").
struct Prefetch {
  const char* from = nullptr;
  int64_t lines = 0;
  const float* next_c = nullptr;
  int64_t next_c_rows = 0;
};

// C[0..rows) x [0..cols) of a tile at `c` (row stride ldc), from packed micro-panels `a`
// (kc x kMR) and `b` (kc x kNR, 64-byte aligned). rows <= kMR and cols <= kNR: the tile's
// padding is computed but not stored.
void microkernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int rows, int cols,
                 const TileStore& store, Prefetch prefetch = {});

// A row of tiles: C rows [0, rows) x columns [0, cols) at `c`, kNR columns a tile, from one
// packed A micro-panel `a` and the B micro-panels b + p * panel_stride: each packed, or, with
// `b_in_place`, B's own columns, depth step k's at b + k * ldb, read through masks (a 1x1
// convolution's input planes, which packing would only copy; AVX-512 only). With `bf16`, both
// operands are panels of bf16 pairs (bf16_pairs.h: kc depth steps, (kc + 1) / 2 words per row
// or column, accumulated in f32; only where bf16_supported()). `store` is the first tile's; each
// next tile's column bias and residual lie kNR columns further. `first` is the first tile's
// prefetch; each tile fetches the next one's C, and the last fetches `after` (after_rows rows of
// it: the next row of tiles), as Prefetch describes. One call where the tiles are shallow: at
// 16 depth steps a tile, the calls' own work took a fifth of the product's time.
struct TileRow {
  const float* b = nullptr;
  int64_t panel_stride = 0, ldb = 0;
  bool b_in_place = false;
  bool bf16 = false;
  const float* after = nullptr;
  int after_rows = 0;
};
void microkernel_row(int64_t kc, const float* a, const TileRow& row, float* c, int64_t ldc, int rows, int64_t cols,
                     const TileStore& store, Prefetch first);

// A column of tiles: C rows [0, rows) x columns [0, cols) at `c` (cols <= kNR), kMR rows a
// tile, from the packed A micro-panels a + p * panel_stride and one packed B micro-panel `b`.
// `store` is the first tile's; each next tile's row bias and residual lie kMR rows further.
// Where `next_b` is set, each tile brings in a share of it (the B micro-panel after this one:
// `lines` cache lines in all), as Prefetch describes.
struct TileColumn {
  const float* a = nullptr;
  int64_t panel_stride = 0;
  const float* next_b = nullptr;
  int64_t lines = 0;
  bool bf16 = false;  // as TileRow's
};
void microkernel_column(int64_t kc, const TileColumn& column, const float* b, float* c, int64_t ldc, int64_t rows,
                        int cols, const TileStore& store);

// The bookkeeping of a row or column walk, shared by every ISA's: tile `j` of a row's prefetch
// (the first's is `first`; each fetches the C tile after it, the last the next row's, as
// TileRow::after says) and the next tile's store (its column bias and residual kNR columns
// further); the share of TileColumn::next_b that tile `p` of a column of `tiles` fetches, and
// the next tile's store down a column (its row bias and residual kMR rows further).
inline Prefetch row_prefetch(const TileRow& row, float* c, int rows, int64_t j, int64_t cols, const Prefetch& first) {
  Prefetch prefetch = j == 0 ? first : Prefetch{};
  if (j + kNR < cols) {
    prefetch.next_c = c + j + kNR, prefetch.next_c_rows = rows;
  } else {
    prefetch.next_c = row.after, prefetch.next_c_rows = row.after_rows;
  }
  return prefetch;
}
inline void next_in_row(TileStore& store) {
  if (store.col_bias != nullptr) store.col_bias += kNR;
  if (store.residual != nullptr) store.residual += kNR;
}
inline Prefetch column_share(const TileColumn& column, int64_t p, int64_t tiles) {
  if (column.next_b == nullptr) return {};
  const int64_t share = (column.lines + tiles - 1) / tiles;
  return {reinterpret_cast<const char*>(column.next_b) + 64 * p * share,
          std::max<int64_t>(0, std::min(share, column.lines - p * share))};
}
inline void next_in_column(TileStore& store, int64_t ldc) {
  if (store.row_bias != nullptr) store.row_bias += kMR;
  if (store.residual != nullptr) store.residual += kMR * ldc;
}

// The same tile with A read in place: row r at a + r * lda, its depth steps contiguous (a
// product a few B micro-panels wide, whose A packing would be copied for little use). AVX-512
// only: call it where vector_isa() is AVX-512.
void microkernel_a_in_place(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc, int rows,
                            int cols, const TileStore& store, Prefetch prefetch = {});
// bf16 products (bf16_pairs.h) run through microkernel_row and microkernel_column.
bool bf16_supported();  // AVX-512 in use (vector_isa()) and the CPU has avx512_bf16

// A strided matrix: element (i, j) at data[i * row_stride + j * col_stride]. A transposed
// operand is the same memory with the strides swapped.
struct MatrixView {
  const float* data = nullptr;
  int64_t row_stride = 0;
  int64_t col_stride = 1;
  const float* at(int64_t i, int64_t j) const { return data + i * row_stride + j * col_stride; }
};

// Packs rows [row0, row0 + rows) x depth [k0, k0 + kc) of A into micro-panels of kMR rows:
// panel p holds kc steps of kMR values, rows past `rows` are zero. `dst` has room for
// ceil(rows / kMR) * kc * kMR floats.
void pack_a(const MatrixView& a, int64_t row0, int64_t rows, int64_t k0, int64_t kc, float* dst);

// Packs depth [k0, k0 + kc) x columns [col0, col0 + cols) of B into micro-panels of kNR
// columns: panel p holds kc steps of kNR values, columns past `cols` are zero. `dst` is 64-byte
// aligned with room for ceil(cols / kNR) * kc * kNR floats.
void pack_b(const MatrixView& b, int64_t k0, int64_t kc, int64_t col0, int64_t cols, float* dst);

// pack_a's panels in bf16 pairs: (kc + 1) / 2 steps of kMR words per panel.
void pack_a_bf16(const MatrixView& a, int64_t row0, int64_t rows, int64_t k0, int64_t kc, float* dst);
// `count` of pack_b's f32 panels of depth kc (64-byte aligned) as B panels of bf16 pairs at dst
// (64-byte aligned): for a B packed during the run by another packer (a convolution's input).
void b_panels_to_bf16(const float* panels, int64_t count, int64_t kc, float* dst);

// A matrix-vector product read straight from `count` consecutive packed micro-panels of `width`
// (kMR: an A operand's, kNR: a B operand's) over `depth`, starting at `panels`:
// y[p * width + i] = sum over k of x[k] * panel p[k][i]. Every value read is used, where the
// micro-kernel would compute a whole tile for one row or column.
void panel_gemv(const float* panels, int width, int64_t depth, int64_t count, const float* x, float* y);

}  // namespace tilefuse::runtime
