#include "tune/autotune_config.h"

#include <charconv>
#include <cstdlib>
#include <string_view>

#include "ir/error.h"
#include "ir/log.h"
#include "tiling/solver.h"

namespace tilefuse::tune {

namespace {

int checked(long long value) {
  if (value < 1) fail_user("TILEFUSE_AUTOTUNE_TOPN must be >= 1");
  if (value > tiling::kMaxTopN) {
    logger().warn("TILEFUSE_AUTOTUNE_TOPN={} is above the maximum of {}: capped at {}", value, tiling::kMaxTopN,
                 tiling::kMaxTopN);
    return tiling::kMaxTopN;
  }
  return static_cast<int>(value);
}

}  // namespace

int resolve_autotune_topn(std::optional<int> requested) {
  if (requested) return checked(*requested);
  const char* env = std::getenv("TILEFUSE_AUTOTUNE_TOPN");
  if (env == nullptr) return kDefaultTopN;
  std::string_view text(env);
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    fail_user("TILEFUSE_AUTOTUNE_TOPN must be a positive integer");
  }
  return checked(value);
}

}  // namespace tilefuse::tune
