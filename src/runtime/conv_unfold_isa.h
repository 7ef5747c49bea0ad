// The implicit GEMM's packing (conv_unfold.h's pack_unfolded) for each instruction set: the
// geometry of a depth block is worked out once (conv_unfold.cpp), then the panels are filled
// by the ISA's loads. Each is compiled for its ISA whatever the build's target: call it only
// where vector_isa() is at least that ISA.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/conv_unfold.h"
#include "runtime/row_kernels.h"

namespace tilefuse::runtime {

// One row (c, i, j) of the unfolded matrix: its tap's input row offset (input row = oy *
// stride_h + dy), the offset of the input element that output position (0, 0) reads (which may
// lie outside the input: padding), and its tap column j, which selects the load masks.
struct UnfoldedRow {
  int64_t dy, offset, tap_column;
};

// Fills the panels of output positions [col0, col0 + cols) for the depth rows `rows`; `valid`
// holds, per tap column, the output columns whose input column lies inside the row.
namespace avx512 {
void pack_panels(const ConvShape& s, const float* x, std::span<const UnfoldedRow> rows,
                 std::span<const ColumnRange> valid, int64_t col0, int64_t cols, float* dst);
}  // namespace avx512

namespace avx2 {
void pack_panels(const ConvShape& s, const float* x, std::span<const UnfoldedRow> rows,
                 std::span<const ColumnRange> valid, int64_t col0, int64_t cols, float* dst);
}  // namespace avx2

}  // namespace tilefuse::runtime
