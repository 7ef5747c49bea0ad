#include "tiling/solver.h"

#include <algorithm>

#include "ir/log.h"
#include "tiling/cost_model.h"
#include "tiling/tiling_space.h"

namespace tilefuse::tiling {

std::vector<TilingCandidate> top_candidates(const fusion::FusedKernel& kernel, const HardwareModel& hw,
                                            int device_limit, int n, const SymbolBindings& bindings) {
  const KernelProfile profile =
      profile_kernel(kernel, bindings.empty() ? symbol_hints(kernel, kJitPlanningSize) : bindings);
  const std::vector<KernelTiling> space = enumerate_tilings(profile, device_limit);
  std::vector<TilingCandidate> ranked;
  for (const KernelTiling& t : space) {
    CostEstimate e = estimate_cost(profile, t, hw);
    ranked.push_back({t, workspace_bytes(profile, t), e.total_us, std::move(e.explanation)});
  }
  // Stable on ties, so equal estimates keep the space's order (fewer blocks, smaller tiles first).
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const TilingCandidate& a, const TilingCandidate& b) { return a.predicted_us < b.predicted_us; });
  if (n > 0 && ranked.size() > static_cast<size_t>(n)) ranked.resize(static_cast<size_t>(n));
  logger().debug("tiling {}: {}; {} candidate(s) of {}", kernel.name, profile.describe(), ranked.size(), space.size());
  for (size_t i = 0; i < ranked.size(); ++i) {
    logger().debug("tiling {} candidate {}: {} predicted {:.2f} us: {}", kernel.name, i, ranked[i].tiling.repr(),
                  ranked[i].predicted_us, ranked[i].explanation);
  }
  return ranked;
}

}  // namespace tilefuse::tiling
