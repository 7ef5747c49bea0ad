#include "build/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "build/timeouts.h"
#include "ir/error.h"
#include "ir/log.h"

namespace tilefuse::build {
namespace {

constexpr auto kSayWaitingAfter = std::chrono::seconds(1);
constexpr auto kPollInterval = std::chrono::milliseconds(20);

// True once the lock is ours; false while another descriptor holds it.
bool try_lock(int fd, const std::string& path) {
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return true;
    if (errno == EWOULDBLOCK) return false;
    if (errno != EINTR) {
      const int err = errno;
      ::close(fd);
      fail_user("cannot lock '{}': {}", path, std::strerror(err));
    }
  }
}

}  // namespace

FileLock::FileLock(const std::string& path) {
  // O_CLOEXEC: a compiler spawned by another thread must not inherit (and so hold) the lock.
  // O_NOFOLLOW: a lock file is never a link planted to make us create or lock another file.
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd_ < 0) fail_user("cannot open lock file '{}': {}", path, std::strerror(errno));
  if (try_lock(fd_, path)) return;
  const auto timeout = lock_timeout();
  const auto start = std::chrono::steady_clock::now();
  bool said = false;
  while (!try_lock(fd_, path)) {
    const auto waited = std::chrono::steady_clock::now() - start;
    if (!said && waited >= kSayWaitingAfter) {
      logger().warn("waiting for {}: held by another tilefuse process", path);
      said = true;
    }
    if (waited >= timeout) {
      ::close(fd_);
      fail_user("gave up waiting for {} after {:g} s: held by another tilefuse process (raise TILEFUSE_LOCK_TIMEOUT, "
                "or end the process that holds it)", path, std::chrono::duration<double>(timeout).count());
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

// Closing the descriptor releases the lock.
FileLock::~FileLock() { ::close(fd_); }

}  // namespace tilefuse::build
