#include "io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "ir/error.h"

namespace tilefuse::io {
namespace {

// Unique within the process (counter) and across processes (pid), so concurrent writers of the
// same target never share a temporary file.
std::string temporary_path_for(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return fmt::format("{}.tmp.{}.{}", path, ::getpid(), counter++);
}

void write_all(int fd, std::span<const char> bytes, const std::string& path) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_user("cannot write '{}': {}", path, std::strerror(errno));
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
}

// The directory's entry for a renamed file is only durable once the directory is synced too.
void sync_directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail_user("cannot open directory '{}' to sync '{}': {}", dir, path, std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0 && err != EINVAL) fail_user("cannot sync directory '{}': {}", dir, std::strerror(err));
}

}  // namespace

void write_file_atomically(const std::string& path, std::span<const std::span<const char>> pieces) {
  const std::string tmp = temporary_path_for(path);
  // 0666 so the final file gets the user's umask like any other file they create.
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) fail_user("cannot create '{}': {}", path, std::strerror(errno));
  try {
    for (std::span<const char> piece : pieces) write_all(fd, piece, path);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  // Synced before the rename: after a crash the name holds either the old file or all of the new.
  if (::fsync(fd) != 0 && errno != EINVAL) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    fail_user("cannot sync '{}': {}", path, std::strerror(err));
  }
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail_user("cannot write '{}': {}", path, std::strerror(err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail_user("cannot write '{}': {}", path, std::strerror(err));
  }
  sync_directory_of(path);
}

void write_file_atomically(const std::string& path, std::string_view contents) {
  const std::span<const char> pieces[] = {{contents.data(), contents.size()}};
  write_file_atomically(path, pieces);
}

}  // namespace tilefuse::io
