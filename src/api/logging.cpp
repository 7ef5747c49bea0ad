#include "api/logging.h"

#include <cstdlib>
#include <string_view>
#include <utility>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "ir/error.h"

namespace tilefuse::api {
namespace {

// Our names (spdlog's own spellings differ between versions: "warning" vs "warn").
constexpr std::pair<std::string_view, spdlog::level::level_enum> kLevels[] = {
    {"trace", spdlog::level::trace}, {"debug", spdlog::level::debug}, {"info", spdlog::level::info},
    {"warn", spdlog::level::warn},   {"error", spdlog::level::err},   {"critical", spdlog::level::critical},
    {"off", spdlog::level::off},
};

spdlog::level::level_enum parse_level(const std::string& text, const std::string& source) {
  for (const auto& [name, level] : kLevels) {
    if (text == name) return level;
  }
  fail_user("{}: '{}' is not a log level (valid: trace, debug, info, warn, error, critical, off)", source, text);
}

}  // namespace

void configure_logging(const std::optional<std::string>& flag) {
  spdlog::level::level_enum level = spdlog::level::warn;
  if (flag) {
    level = parse_level(*flag, "--log-level");
  } else if (const char* env = std::getenv("TILEFUSE_LOG_LEVEL"); env != nullptr && *env != '\0') {
    level = parse_level(env, "TILEFUSE_LOG_LEVEL");
  }
  // Replacing the default logger once per process; later calls only change the level.
  if (spdlog::get("tilefuse") == nullptr) spdlog::set_default_logger(spdlog::stderr_color_mt("tilefuse"));
  spdlog::set_level(level);
}

}  // namespace tilefuse::api
