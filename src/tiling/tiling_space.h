// The tilings a kernel may use: every combination of the decision variables that satisfies the
// constraints (block_dim <= device limit, tiles aligned to whole vectors, at least one unit per
// block, non-temporal stores only where an output can stream, prefetch only where a contiguous
// input streams). Small on purpose (tens to a few hundred points): the solver ranks all of it,
// and bench/tuning_quality.py can still sweep it exhaustively.
#pragma once

#include <vector>

#include "tiling/kernel_profile.h"
#include "tiling/kernel_tiling.h"

namespace tilefuse::tiling {

std::vector<KernelTiling> enumerate_tilings(const KernelProfile& profile, int device_limit);

// Per-worker scratch the kernel needs under any tiling, and whether it fits the L2 budget.
int64_t workspace_bytes(const KernelProfile& profile, const KernelTiling& tiling);

}  // namespace tilefuse::tiling
