// Runs an external program directly (posix_spawnp, no shell), so nothing in its arguments, such as
// a TILEFUSE_CXX value, is ever interpreted as shell syntax. Its stdout and stderr are captured.
#pragma once

#include <string>
#include <vector>

namespace tilefuse::build {

struct ProcessResult {
  int exit_code = 0;    // meaningful when !signalled
  int signal = 0;       // the signal that killed it, else 0
  bool signalled = false;
  std::string output;   // stdout and stderr interleaved, capped at kMaxCapturedOutput bytes
  bool output_truncated = false;

  bool succeeded() const { return !signalled && exit_code == 0; }
  // "exit code 1" or "killed by signal 9".
  std::string status_text() const;
};

inline constexpr size_t kMaxCapturedOutput = 1 << 20;

// Joins argv into one line, quoting arguments that contain spaces or quotes, for messages that
// the user can copy into a shell.
std::string command_line_text(const std::vector<std::string>& argv);

// Searches PATH for argv[0] like a shell would. Throws UserError "cannot run <command>: <reason>"
// if the program cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv);

}  // namespace tilefuse::build
