// Test helper: the message of the UserError an action throws.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "ir/error.h"

namespace tilefuse::testing_support {

// Runs `action` and returns the message of the UserError it throws; records a test failure
// (and returns "") if it throws none.
template <typename F>
std::string user_error(F&& action) {
  try {
    action();
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a UserError";
  return "";
}

}  // namespace tilefuse::testing_support
