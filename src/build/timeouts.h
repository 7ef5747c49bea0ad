// How long tilefuse waits for what another process or the compiler holds: TILEFUSE_LOCK_TIMEOUT
// (a cache entry's compile.lock, default 10 minutes) and TILEFUSE_COMPILE_TIMEOUT (one compiler
// run, default 5 minutes), each in seconds. A wedged peer or compiler becomes an error naming
// what was waited for, never a silent hang.
#pragma once

#include <chrono>

namespace tilefuse::build {

// Each reads its variable once per call; an invalid value (not a positive number of seconds)
// throws UserError naming the variable and the rule.
std::chrono::milliseconds lock_timeout();
std::chrono::milliseconds compile_timeout();

}  // namespace tilefuse::build
