// Emits the C++ source of one fused kernel: tile in, chained compute in registers and a
// per-worker scratch, tile out. See tilefuse_kernel.h for the helpers it uses and
// include/tilefuse/kernel_abi.h for the functions it exports.
#pragma once

#include <string>
#include <vector>

#include "fusion/fusion_plan.h"
#include "tiling/kernel_tiling.h"

namespace tilefuse::codegen {

using tiling::KernelTiling;

// Static: every tiling parameter is a constant of the source (one source per TopN candidate).
// Jit: the block split is computed at launch from the symbol values and the worker count; the
// column tile, store kind and prefetch distance come from `tiling` (planned at a hint size).
enum class KernelVariant { Static, Jit };

struct KernelSource {
  std::string name;
  std::string code;
  std::vector<const Value*> buffers;  // the `buffers` argument: kernel inputs, then outputs
  std::vector<std::string> symbols;   // the `symbols` argument: values of these, in this order
};

KernelSource emit_kernel(const fusion::FusedKernel& kernel, const KernelTiling& tiling, KernelVariant variant);

}  // namespace tilefuse::codegen
