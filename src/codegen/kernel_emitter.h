// Emits the C++ source of one fused kernel: tile in, chained compute in registers and a
// per-worker scratch, tile out. What the code does is decided first (kernel_schedule.h); the
// emitter only prints that. See tilefuse_kernel.h for the helpers it uses and
// include/tilefuse/kernel_abi.h for the functions it exports.
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel_schedule.h"
#include "fusion/fusion_plan.h"
#include "tiling/kernel_tiling.h"

namespace tilefuse::codegen {

struct KernelSource {
  std::string name;
  std::string code;
  std::vector<const Value*> buffers;  // the `buffers` argument: kernel inputs, then outputs
  // Elements each buffer must hold: its value's, or for an output stored at a larger tensor's
  // strides (a part of a Concat: fusion/concat_in_place.h) up to the last one the kernel writes.
  std::vector<Dim> buffer_elements;
  std::vector<std::string> symbols;   // the `symbols` argument: values of these, in this order
};

// `stream_above_bytes` (jit kernels): a jit kernel whose tiling has non-temporal stores uses
// them only at run sizes whose outputs take more bytes than this (tiling::cache_budget_bytes), a
// choice made at launch like its block split; 0: wherever the tiling has them.
KernelSource emit_kernel(const fusion::FusedKernel& kernel, const KernelTiling& tiling, KernelVariant variant,
                         int64_t stream_above_bytes = 0);

}  // namespace tilefuse::codegen
