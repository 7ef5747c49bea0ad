#include "build/process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "ir/error.h"

extern char** environ;

namespace tilefuse::build {
namespace {

struct Pipe {
  int read_end = -1;
  int write_end = -1;
};

// O_CLOEXEC on both ends: a process spawned concurrently by another thread must not inherit our
// write end, or our read would not see end-of-file until that other process exits.
Pipe make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) fail_internal("pipe2 failed: {}", std::strerror(errno));
  return {fds[0], fds[1]};
}

void read_all(int fd, ProcessResult& result) {
  char buffer[1 << 14];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    // Keep draining beyond the cap so the child never blocks on a full pipe.
    size_t room = kMaxCapturedOutput - result.output.size();
    result.output.append(buffer, std::min(room, static_cast<size_t>(n)));
    if (static_cast<size_t>(n) > room) result.output_truncated = true;
  }
}

void wait_for(pid_t pid, ProcessResult& result) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) fail_internal("waitpid failed: {}", std::strerror(errno));
  }
  result.signalled = WIFSIGNALED(status);
  result.signal = result.signalled ? WTERMSIG(status) : 0;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
}

}  // namespace

std::string ProcessResult::status_text() const {
  if (signalled) return fmt::format("killed by signal {} ({})", signal, ::strsignal(signal));
  return fmt::format("exit code {}", exit_code);
}

std::string command_line_text(const std::vector<std::string>& argv) {
  std::string text;
  for (const std::string& arg : argv) {
    if (!text.empty()) text += ' ';
    bool plain = !arg.empty() && arg.find_first_of(" \t\n'\"\\$`") == std::string::npos;
    text += plain ? arg : "'" + arg + "'";
  }
  return text;
}

ProcessResult run_process(const std::vector<std::string>& argv) {
  if (argv.empty()) fail_internal("run_process needs a program");
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  Pipe pipe = make_pipe();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe.write_end, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe.write_end, STDERR_FILENO);
  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe.write_end);
  if (rc != 0) {
    ::close(pipe.read_end);
    fail_user("cannot run {}: {}", command_line_text(argv), std::strerror(rc));
  }
  ProcessResult result;
  read_all(pipe.read_end, result);
  ::close(pipe.read_end);
  wait_for(pid, result);
  return result;
}

}  // namespace tilefuse::build
