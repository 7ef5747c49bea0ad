#include "runtime/superkernel_mode.h"

#include <cstdlib>

#include "ir/error.h"

namespace tilefuse::runtime {

SuperKernelMode parse_superkernel_mode(std::string_view text, std::string_view what) {
  if (text == "auto") return SuperKernelMode::automatic;
  if (text == "on") return SuperKernelMode::on;
  if (text == "off") return SuperKernelMode::off;
  fail_user("{} must be auto, on or off, got '{}'", what, text);
}

const char* superkernel_mode_name(SuperKernelMode mode) {
  switch (mode) {
    case SuperKernelMode::automatic: return "auto";
    case SuperKernelMode::on: return "on";
    case SuperKernelMode::off: return "off";
  }
  fail_internal("superkernel_mode_name: bad mode");
}

SuperKernelMode superkernel_mode_from_environment() {
  const char* value = std::getenv("TILEFUSE_SUPERKERNEL");
  if (value == nullptr || *value == '\0') return SuperKernelMode::automatic;
  return parse_superkernel_mode(value, "TILEFUSE_SUPERKERNEL");
}

}  // namespace tilefuse::runtime
