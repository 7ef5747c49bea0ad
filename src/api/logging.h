// Logging set-up for the command line and API users: spdlog to stderr, so stdout stays clean for
// results (--json output can be piped).
#pragma once

#include <optional>
#include <string>

namespace tilefuse::api {

// Level from `flag` (the --log-level value) if given, else from TILEFUSE_LOG_LEVEL, else "warn".
// Levels: trace, debug, info, warn, error, critical, off. Throws UserError naming the flag or the
// variable for any other value.
void configure_logging(const std::optional<std::string>& flag);

}  // namespace tilefuse::api
