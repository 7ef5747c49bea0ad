// Predicts how long a kernel takes under a tiling on a machine. Per worker, the time of a work
// unit is the slowest of its three pipes (loads, compute, stores: they overlap on an
// out-of-order core), with memory bandwidth shared by the workers streaming at once; the kernel
// takes as long as its busiest worker (blocks are split into contiguous ranges, so a remainder of
// blocks is imbalance), plus per-unit, per-block and per-launch overheads.
#pragma once

#include <string>

#include "tiling/hardware_model.h"
#include "tiling/kernel_profile.h"
#include "tiling/kernel_tiling.h"

namespace tilefuse::tiling {

struct CostEstimate {
  double total_us = 0;
  double load_us = 0, compute_us = 0, store_us = 0;  // per busiest worker
  double overhead_us = 0;
  double imbalance = 1.0;      // busiest worker's units / the average
  std::string explanation;     // one line: every term above and where it came from
};

CostEstimate estimate_cost(const KernelProfile& profile, const KernelTiling& tiling, const HardwareModel& hw);

// Half of all L2s plus the usable L3: what a kernel's tensors can count on finding in cache. A
// kernel whose outputs are larger gains from non-temporal stores; a smaller one loses by them
// (its consumer must fetch the output from memory again).
int64_t cache_budget_bytes(const HardwareModel& hw);

}  // namespace tilefuse::tiling
