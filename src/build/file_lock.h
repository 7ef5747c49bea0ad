// An exclusive advisory lock on a file (flock), held for the object's lifetime. Each FileLock
// opens its own descriptor, so it excludes other threads of this process as well as other
// processes on the same host (flock does not work across the hosts of a network filesystem).
#pragma once

#include <string>

namespace tilefuse::build {

class FileLock {
 public:
  // Creates `path` (mode 0600) if needed and waits until the lock is acquired: after a second it
  // logs "waiting for <path>: held by another tilefuse process", after TILEFUSE_LOCK_TIMEOUT
  // (default 10 min) it gives up with a UserError. Throws UserError naming the file if it cannot
  // be opened or locked.
  explicit FileLock(const std::string& path);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace tilefuse::build
