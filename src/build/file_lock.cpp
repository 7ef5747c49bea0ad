#include "build/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ir/error.h"

namespace tilefuse::build {

FileLock::FileLock(const std::string& path) {
  // O_CLOEXEC: a compiler spawned by another thread must not inherit (and so hold) the lock.
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) fail_user("cannot open lock file '{}': {}", path, std::strerror(errno));
  int rc;
  do {
    rc = ::flock(fd_, LOCK_EX);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    int err = errno;
    ::close(fd_);
    fail_user("cannot lock '{}': {}", path, std::strerror(err));
  }
}

// Closing the descriptor releases the lock.
FileLock::~FileLock() { ::close(fd_); }

}  // namespace tilefuse::build
