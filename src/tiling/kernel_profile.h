// The facts about one fused kernel that its tiling depends on, with every dim evaluated (static
// shapes, or the jit path's symbol hints): how many work units there are, how long a row is, how
// many bytes stream from memory per element, how much arithmetic each element costs.
#pragma once

#include <cstdint>
#include <string>

#include "fusion/fusion_plan.h"
#include "ir/shape.h"

namespace tilefuse::tiling {

struct KernelProfile {
  int64_t outer = 1;             // rows: the axes blocks divide among workers
  int64_t inner = 1;             // elements per row (the reduced axes, or the column axis)
  bool reduces = false;          // reduction kernel vs elementwise
  bool column_reduction = false;  // reduces, keeping the innermost axis (fusion/loop_nest.h)
  int64_t columns = 0;           // extent of the axis cut in column tiles; 0 for a row reduction
  int passes = 1;                // walks over a row (a reduction chain needs several)
  int64_t streamed_read_bytes = 0;  // inputs that differ per row: read from memory once
  int64_t resident_read_bytes = 0;  // broadcast inputs (gamma, a bias row): read from cache
  int64_t write_bytes = 0;          // outputs
  int64_t streamable_write_bytes = 0;  // full-size f32/f16/bf16 outputs (what non-temporal stores apply to)
  int64_t scratch_row_bytes = 0;    // per-worker scratch (row kernels carrying values between passes)
  double cycles_per_element = 0;    // vector arithmetic per domain element, in cycles per lane
  bool has_streamed_contiguous_input = false;  // something software prefetch can help
  bool walks_across_rows = false;  // loads strided along the vectorised axis (fusion/loop_nest.h)
  bool row_by_row = false;  // in a row chain: a block per row, stores that stay in cache (FusedKernel)

  int64_t elements() const { return outer * inner; }
  int64_t column_tiles(int64_t column_tile) const {
    return column_tile > 0 && columns > 0 ? (columns + column_tile - 1) / column_tile : 1;
  }
  std::string describe() const;
};

// Whether a kernel's vector stores of an output of this type can be non-temporal: the float
// types kernels compute in vectors (f16 and bf16 are narrowed in registers, tilefuse_half.h).
bool has_streamed_stores(DType dtype);

// `bindings` fixes every symbol of the kernel's shapes (empty for a static kernel).
KernelProfile profile_kernel(const fusion::FusedKernel& kernel, const SymbolBindings& bindings = {});

// Every symbol of the kernel's domain bound to `hint` (the jit path's planning size).
SymbolBindings symbol_hints(const fusion::FusedKernel& kernel, int64_t hint);

// Whether a kernel has no symbolic dim anywhere (domain and buffers): the static path applies.
bool is_static(const fusion::FusedKernel& kernel);

}  // namespace tilefuse::tiling
