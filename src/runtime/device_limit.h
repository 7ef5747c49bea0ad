// The device limit: how many worker threads (cores) this process may use. Read once at start-up
// from TILEFUSE_NUM_THREADS (or an API/CLI value), normalised (capped at the core count; unset =
// all cores) and passed explicitly to compile tasks and the runtime; workers never re-read it.
#pragma once

#include <optional>
#include <string>

namespace tilefuse::runtime {

struct DeviceLimit {
  int threads = 1;         // normalised worker count
  bool explicit_limit = false;  // set by the user (enters static cache keys)
};

int hardware_cores();
// `requested`: an API/CLI value overriding the environment. Throws UserError
// "TILEFUSE_NUM_THREADS must be a positive integer" on a bad value.
DeviceLimit resolve_device_limit(std::optional<int> requested = std::nullopt);

}  // namespace tilefuse::runtime
