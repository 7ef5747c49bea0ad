// Whether a run's steps go through one parallel region (the SuperKernel, superkernel_schedule.h)
// or one fork/join per step. `automatic` measures both on a shape's first run once its kernels
// are tuned and keeps the faster, recorded in the cache so later processes measure nothing.
#pragma once

#include <string_view>

namespace tilefuse::runtime {

enum class SuperKernelMode { automatic, on, off };

// "auto", "on" or "off"; anything else is a UserError naming `what` (the flag or variable).
SuperKernelMode parse_superkernel_mode(std::string_view text, std::string_view what);
const char* superkernel_mode_name(SuperKernelMode mode);
// TILEFUSE_SUPERKERNEL, or automatic when it is unset or empty.
SuperKernelMode superkernel_mode_from_environment();

}  // namespace tilefuse::runtime
