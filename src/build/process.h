// Runs an external program directly (posix_spawnp, no shell), so nothing in its arguments, such as
// a TILEFUSE_CXX value, is ever interpreted as shell syntax. Its stdout and stderr are captured.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace tilefuse::build {

struct ProcessResult {
  int exit_code = 0;    // meaningful when !signalled
  int signal = 0;       // the signal that killed it, else 0
  bool signalled = false;
  std::string output;   // stdout and stderr interleaved, capped at kMaxCapturedOutput bytes
  bool output_truncated = false;
  bool timed_out = false;  // killed (with its process group) when the time limit ran out
  double timeout_seconds = 0;

  bool succeeded() const { return !signalled && !timed_out && exit_code == 0; }
  // "exit code 1", "killed by signal 9" or "timed out after 300 s".
  std::string status_text() const;
};

inline constexpr size_t kMaxCapturedOutput = 1 << 20;

// Joins argv into one line, quoting arguments that contain spaces or quotes, for messages that
// the user can copy into a shell.
std::string command_line_text(const std::vector<std::string>& argv);

// Searches PATH for argv[0] like a shell would. The program runs in a process group of its own;
// if it has not ended after `timeout`, the whole group (a compiler driver and the cc1plus, as
// and ld it started) is killed and the result says timed_out. Throws UserError "cannot run
// <command>: <reason>" if the program cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv,
                          std::chrono::milliseconds timeout = std::chrono::hours(24));

}  // namespace tilefuse::build
