// tilefuse's own logger, named "tilefuse": everything tilefuse logs goes through it, to stderr,
// at the level TILEFUSE_LOG_LEVEL names (warn when unset) until api::configure_logging sets
// another. A program that embeds tilefuse keeps its own spdlog default logger untouched, and sees
// tilefuse's warnings and errors only, on stderr, unless it asks for more.
#pragma once

#include <optional>
#include <string_view>

#include <spdlog/logger.h>

namespace tilefuse {

spdlog::logger& logger();

// Our level names: trace, debug, info, warn, error, critical, off (spdlog's own spellings differ
// between versions); nullopt for any other text.
std::optional<spdlog::level::level_enum> log_level_named(std::string_view name);

}  // namespace tilefuse
