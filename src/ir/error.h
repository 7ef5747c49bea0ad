// Throwing the error types of include/tilefuse/error.h with a formatted message. A UserError maps
// to exit code 1; anything else that escapes is an internal error (exit code 2).
#pragma once

#include <string>

#include <fmt/format.h>

#include "tilefuse/error.h"

namespace tilefuse {

template <typename... Args>
[[noreturn]] void fail_user(fmt::format_string<Args...> format, Args&&... args) {
  throw UserError(fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void fail_internal(fmt::format_string<Args...> format, Args&&... args) {
  throw InternalError(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace tilefuse
