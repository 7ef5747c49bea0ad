// The GEMM engine's pieces for each instruction set, behind sgemm_microkernel.h's functions,
// which pick one by vector_isa(). Both sets read and write the same 12 x 32 panels, so an
// operand packed by one is read by the other. Each is compiled for its ISA whatever the
// build's target: call it only where vector_isa() is at least that ISA.
#pragma once

#include <cstdint>

#include "runtime/sgemm_microkernel.h"

namespace tilefuse::runtime {

namespace avx512 {
void microkernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int rows, int cols,
                 const TileStore& store, Prefetch prefetch);
void microkernel_a_in_place(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc, int rows,
                            int cols, const TileStore& store, Prefetch prefetch);
void microkernel_row(int64_t kc, const float* a, const TileRow& row, float* c, int64_t ldc, int rows, int64_t cols,
                     const TileStore& store, Prefetch first);
void microkernel_column(int64_t kc, const TileColumn& column, const float* b, float* c, int64_t ldc, int64_t rows,
                        int cols, const TileStore& store);
void pack_a(const MatrixView& a, int64_t row0, int64_t rows, int64_t k0, int64_t kc, float* dst);
void pack_b(const MatrixView& b, int64_t k0, int64_t kc, int64_t col0, int64_t cols, float* dst);
// The bf16 forms (sgemm_microkernel.h); they also need avx512_bf16.
void microkernel_row_bf16(int64_t kc, const float* a, const TileRow& row, float* c, int64_t ldc, int rows, int64_t cols,
                          const TileStore& store, Prefetch first);
void microkernel_column_bf16(int64_t kc, const TileColumn& column, const float* b, float* c, int64_t ldc, int64_t rows,
                             int cols, const TileStore& store);
void pack_a_bf16(const MatrixView& a, int64_t row0, int64_t rows, int64_t k0, int64_t kc, float* dst);
void b_panels_to_bf16(const float* panels, int64_t count, int64_t kc, float* dst);
}  // namespace avx512

namespace avx2 {
void microkernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int rows, int cols,
                 const TileStore& store, Prefetch prefetch);
void pack_a(const MatrixView& a, int64_t row0, int64_t rows, int64_t k0, int64_t kc, float* dst);
void pack_b(const MatrixView& b, int64_t k0, int64_t kc, int64_t col0, int64_t cols, float* dst);
// Also what AVX-512 machines run: a matrix-vector product is bound by memory, not by lanes.
void panel_gemv(const float* panels, int width, int64_t depth, int64_t count, const float* x, float* y);
}  // namespace avx2

}  // namespace tilefuse::runtime
