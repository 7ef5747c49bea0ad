// TILEFUSE_AUTOTUNE_TOPN: how many tiling candidates a static kernel is measured with (1 = the
// cost model's choice, no measurement). Validated once at start-up, with exact messages:
//   not an integer  -> "TILEFUSE_AUTOTUNE_TOPN must be a positive integer"
//   below 1         -> "TILEFUSE_AUTOTUNE_TOPN must be >= 1"
//   above 10        -> a warning, capped at 10
#pragma once

#include <optional>

namespace tilefuse::tune {

constexpr int kDefaultTopN = 1;

// `requested` (a CLI flag or API field) overrides the environment; both go through one check.
int resolve_autotune_topn(std::optional<int> requested = std::nullopt);

}  // namespace tilefuse::tune
