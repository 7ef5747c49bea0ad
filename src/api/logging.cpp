#include "api/logging.h"

#include <cstdlib>

#include "ir/error.h"
#include "ir/log.h"

namespace tilefuse::api {
namespace {

spdlog::level::level_enum parse_level(const std::string& text, const std::string& source) {
  std::optional<spdlog::level::level_enum> level = log_level_named(text);
  if (!level) fail_user("{}: '{}' is not a log level (valid: trace, debug, info, warn, error, critical, off)", source, text);
  return *level;
}

}  // namespace

void configure_logging(const std::optional<std::string>& flag) {
  spdlog::level::level_enum level = spdlog::level::warn;
  if (flag) {
    level = parse_level(*flag, "--log-level");
  } else if (const char* env = std::getenv("TILEFUSE_LOG_LEVEL"); env != nullptr && *env != '\0') {
    level = parse_level(env, "TILEFUSE_LOG_LEVEL");
  }
  logger().set_level(level);
}

}  // namespace tilefuse::api
