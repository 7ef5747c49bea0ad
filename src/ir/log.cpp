#include "ir/log.h"

#include <cstdlib>
#include <memory>
#include <utility>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace tilefuse {
namespace {

constexpr std::pair<std::string_view, spdlog::level::level_enum> kLevels[] = {
    {"trace", spdlog::level::trace}, {"debug", spdlog::level::debug}, {"info", spdlog::level::info},
    {"warn", spdlog::level::warn},   {"error", spdlog::level::err},   {"critical", spdlog::level::critical},
    {"off", spdlog::level::off},
};

std::shared_ptr<spdlog::logger> make_logger() {
  // A program may have registered a "tilefuse" logger of its own (to send our lines elsewhere):
  // then that one is used as it is.
  if (std::shared_ptr<spdlog::logger> registered = spdlog::get("tilefuse")) return registered;
  auto made = std::make_shared<spdlog::logger>("tilefuse", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  const char* env = std::getenv("TILEFUSE_LOG_LEVEL");
  // An unknown name is reported where it is validated (api::configure_logging); here it is warn.
  made->set_level(log_level_named(env == nullptr ? "warn" : env).value_or(spdlog::level::warn));
  spdlog::register_logger(made);
  return made;
}

}  // namespace

spdlog::logger& logger() {
  static const std::shared_ptr<spdlog::logger> instance = make_logger();
  return *instance;
}

std::optional<spdlog::level::level_enum> log_level_named(std::string_view name) {
  for (const auto& [known, level] : kLevels) {
    if (name == known) return level;
  }
  return std::nullopt;
}

}  // namespace tilefuse
