#include "build/timeouts.h"

#include <cstdlib>
#include <string>

#include "ir/error.h"

namespace tilefuse::build {
namespace {

std::chrono::milliseconds seconds_from_environment(const char* name, double default_seconds) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::chrono::milliseconds(static_cast<int64_t>(default_seconds * 1000));
  char* end = nullptr;
  const double seconds = std::strtod(value, &end);
  if (*value == '\0' || end == value || *end != '\0' || !(seconds > 0) || seconds > 1e7) {
    fail_user("{} is '{}': it must be a positive number of seconds (at most 10000000), e.g. 600", name, value);
  }
  return std::chrono::milliseconds(std::max<int64_t>(1, static_cast<int64_t>(seconds * 1000)));
}

}  // namespace

std::chrono::milliseconds lock_timeout() { return seconds_from_environment("TILEFUSE_LOCK_TIMEOUT", 600); }

std::chrono::milliseconds compile_timeout() { return seconds_from_environment("TILEFUSE_COMPILE_TIMEOUT", 300); }

}  // namespace tilefuse::build
