// Error types shared by every layer. A UserError is the user's to fix (bad model, bad input,
// bad configuration) and maps to exit code 1; anything else that escapes is an internal error
// (exit code 2). Messages name the thing, the place and the rule that was broken.
#pragma once

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace tilefuse {

class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message) : std::runtime_error(message) {}
};

// A broken invariant inside tilefuse: a bug, never the user's fault.
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& message) : std::logic_error(message) {}
};

template <typename... Args>
[[noreturn]] void fail_user(fmt::format_string<Args...> format, Args&&... args) {
  throw UserError(fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void fail_internal(fmt::format_string<Args...> format, Args&&... args) {
  throw InternalError(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace tilefuse
