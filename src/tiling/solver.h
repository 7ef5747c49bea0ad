// Ranks a kernel's tiling space with the cost model and proposes the TopN candidates: distinct
// by tiling_repr, the model's best first. The same ranking gives the jit path its planning-size
// tiling and the exhaustive sweep of bench/tuning_quality.py its list.
#pragma once

#include <vector>

#include "fusion/fusion_plan.h"
#include "tiling/hardware_model.h"
#include "tiling/kernel_tiling.h"

namespace tilefuse::tiling {

constexpr int kMaxTopN = 10;

// Up to `n` candidates (n <= 0: the whole space), best predicted first. A static kernel is
// profiled at its shapes; a symbolic one at `bindings` (a jit kernel's shape bucket) or, without
// them, at symbol_hints(kernel, kJitPlanningSize).
std::vector<TilingCandidate> top_candidates(const fusion::FusedKernel& kernel, const HardwareModel& hw,
                                            int device_limit, int n, const SymbolBindings& bindings = {});

// Symbolic dims are planned as if they were this large.
constexpr int64_t kJitPlanningSize = 128;

}  // namespace tilefuse::tiling
