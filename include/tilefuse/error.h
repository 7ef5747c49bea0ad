// The errors tilefuse throws. A UserError is the caller's to fix (a bad model, an input of the
// wrong type, a bad option) and its message names the thing, the place and the rule; anything
// else that escapes (an InternalError above all) is a bug in tilefuse.
#pragma once

#include <stdexcept>
#include <string>

namespace tilefuse {

class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message) : std::runtime_error(message) {}
};

// A model that fused and unfused execution cannot run, but the reference interpreter can: one
// with a tensor whose shape depends on tensor data (NonZero, or a shape computed from data), as
// every buffer of a fused run is planned from the input shapes.
class NeedsReferenceMode : public UserError {
 public:
  using UserError::UserError;
};

// A broken invariant inside tilefuse: a bug, never the user's fault.
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& message) : std::logic_error(message) {}
};

}  // namespace tilefuse
