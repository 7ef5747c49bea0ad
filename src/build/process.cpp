#include "build/process.h"

#include <fcntl.h>
#include <poll.h>
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

// Reads until end-of-file, or until `deadline`: then the child's process group is killed.
void read_all(int fd, pid_t pid, std::chrono::steady_clock::time_point deadline, std::chrono::milliseconds timeout,
              ProcessResult& result) {
  char buffer[1 << 14];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    const int ready = left.count() <= 0 ? 0 : ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      ::kill(-pid, SIGKILL);
      result.timed_out = true;
      result.timeout_seconds = std::chrono::duration<double>(timeout).count();
      return;
    }
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    // Keep draining beyond the cap so the child never blocks on a full pipe.
    size_t room = kMaxCapturedOutput - result.output.size();
    result.output.append(buffer, std::min(room, static_cast<size_t>(n)));
    if (static_cast<size_t>(n) > room) result.output_truncated = true;
  }
}

void wait_for(pid_t pid, const std::vector<std::string>& argv, ProcessResult& result) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno == EINTR) continue;
    // ECHILD: the host application set SIGCHLD to SIG_IGN, so the kernel reaped the child and
    // its status is gone. Unknown is not success.
    fail_user("cannot learn how '{}' ended: {} (is SIGCHLD ignored by the application?)", command_line_text(argv),
              std::strerror(errno));
  }
  result.signalled = WIFSIGNALED(status);
  result.signal = result.signalled ? WTERMSIG(status) : 0;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
}

}  // namespace

std::string ProcessResult::status_text() const {
  if (timed_out) return fmt::format("timed out after {:g} s", timeout_seconds);
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

ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
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
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);  // its own group, so a timeout kills what it started
  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(pipe.write_end);
  if (rc != 0) {
    ::close(pipe.read_end);
    fail_user("cannot run {}: {}", command_line_text(argv), std::strerror(rc));
  }
  ProcessResult result;
  read_all(pipe.read_end, pid, deadline, timeout, result);
  ::close(pipe.read_end);
  wait_for(pid, argv, result);
  return result;
}

}  // namespace tilefuse::build
