// Emits the C++ source of one fused kernel: tile in, chained compute in registers and a
// per-worker scratch, tile out. See tilefuse_kernel.h for the helpers it uses and
// include/tilefuse/kernel_abi.h for the functions it exports.
#pragma once

#include <string>
#include <vector>

#include "fusion/fusion_plan.h"

namespace tilefuse::codegen {

// The tiling parameters of a kernel, all in one place in the generated code.
struct KernelTiling {
  int64_t units_per_block = 1;  // work units (rows, or row x column tiles) per block
  int64_t column_tile = 0;      // elementwise kernels: elements per column tile; 0 = whole row
  bool stream_stores = false;   // full-size outputs bypass the caches (non-temporal stores)
  int64_t prefetch_ahead = 0;   // contiguous inputs are prefetched this many elements ahead; 0 = off

  // Canonical text, e.g. "upb=4;ct=8192;nt=1;pf=1024": identifies a tiling in caches and logs.
  std::string repr() const;
};

struct KernelSource {
  std::string name;
  std::string code;
  std::vector<const Value*> buffers;  // the `buffers` argument: kernel inputs, then outputs
  std::vector<std::string> symbols;   // the `symbols` argument: values of these, in this order
};

KernelSource emit_kernel(const fusion::FusedKernel& kernel, const KernelTiling& tiling);

// A reasonable tiling without measurement: enough blocks to balance `threads` workers, column
// tiles of a few tens of KiB so a tile's tensors stay in L1/L2, and non-temporal stores for
// outputs too large to stay in cache for their consumer.
KernelTiling default_tiling(const fusion::FusedKernel& kernel, int threads);

}  // namespace tilefuse::codegen
