// The SuperKernel's per-model choice (runtime/superkernel_mode.h, `automatic`), kept in the cache
// beside the tuning records so that later processes measure nothing:
//   <cache root>/superkernel/<hash>/choice    the runner's text ("off", "on floor_ns=12000") / sha256=
// The hash covers what the runner's key describes: the team's size, the steps and their shapes.
// Two processes measuring at once each write a whole record (atomically); the last one stays.
#pragma once

#include <optional>
#include <string>

namespace tilefuse::driver {

// The recorded choice for `key`, if a valid record exists (a broken one is reported and ignored).
std::optional<std::string> read_superkernel_record(const std::string& cache_root, const std::string& key);
void write_superkernel_record(const std::string& cache_root, const std::string& key, const std::string& choice);

}  // namespace tilefuse::driver
