#include "build/private_directory.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "ir/error.h"

namespace tilefuse::build {
namespace {

namespace fs = std::filesystem;

bool trusted_owner(uid_t uid) { return uid == ::geteuid() || uid == 0; }

struct stat lstat_or_fail(const fs::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) fail_user("cannot access '{}': {}", path.string(), std::strerror(errno));
  return info;
}

// Creates the missing directories of `path`, each with mode 0700.
void create_private_parents(const fs::path& path) {
  fs::path prefix;
  for (const fs::path& part : path) {
    prefix /= part;
    struct stat info {};
    if (::lstat(prefix.c_str(), &info) == 0) continue;
    make_directory(prefix.string());
  }
}

// Every directory above `root`, as written and as resolved, must be one that only the user or
// root can change, so that nobody can swap `root` for another directory after it was checked.
void check_ancestors(const fs::path& root) {
  fs::path prefix;
  for (const fs::path& part : root.parent_path()) {
    prefix /= part;
    const struct stat info = lstat_or_fail(prefix);
    if (S_ISLNK(info.st_mode) && !trusted_owner(info.st_uid)) {
      fail_user("cache directory '{}' lies under the symbolic link '{}', owned by uid {}: only links owned by the "
                "current user or root are followed", root.string(), prefix.string(), info.st_uid);
    }
  }
  std::error_code error;
  const fs::path resolved = fs::canonical(root.parent_path(), error);
  if (error) fail_user("cannot resolve '{}': {}", root.parent_path().string(), error.message());
  prefix.clear();
  for (const fs::path& part : resolved) {
    prefix /= part;
    const struct stat info = lstat_or_fail(prefix);
    const bool others_write = (info.st_mode & (S_IWGRP | S_IWOTH)) != 0;
    if (!trusted_owner(info.st_uid) || (others_write && (info.st_mode & S_ISVTX) == 0)) {
      fail_user("cache directory '{}' lies under '{}' (uid {}, mode {:o}), which another user can change: every "
                "directory above the cache must be owned by the current user or root and, if group or others "
                "may write to it, be sticky (like /tmp)",
                root.string(), prefix.string(), info.st_uid, info.st_mode & 07777);
    }
  }
}

// The root itself, checked through a descriptor opened without following a symlink.
void check_root(const fs::path& root) {
  const int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    struct stat info {};
    if (::lstat(root.c_str(), &info) == 0 && S_ISLNK(info.st_mode)) {
      fail_user("cache directory '{}' is a symbolic link (owned by uid {}): the cache root must be a real directory",
                root.string(), info.st_uid);
    }
    if (err == ENOTDIR) fail_user("cache directory '{}' is not a directory", root.string());
    fail_user("cannot open cache directory '{}': {}", root.string(), std::strerror(err));
  }
  struct stat info {};
  const int status = ::fstat(fd, &info);
  ::close(fd);
  if (status != 0) fail_user("cannot access '{}': {}", root.string(), std::strerror(errno));
  if (info.st_uid != ::geteuid()) {
    fail_user("cache directory '{}' must be owned by the current user (uid {}), but is owned by uid {}",
              root.string(), ::geteuid(), info.st_uid);
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    fail_user("cache directory '{}' must not be writable by group or others (mode {:o}); "
              "fix with: chmod go-w '{}'", root.string(), info.st_mode & 07777, root.string());
  }
}

}  // namespace

void make_directory(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    fail_user("cannot create directory '{}': {}", path, std::strerror(errno));
  }
}

void ensure_private_directory(const std::string& path) {
  fs::path root = fs::absolute(path).lexically_normal();
  if (!root.has_filename() && root.has_parent_path() && root != root.root_path()) root = root.parent_path();
  create_private_parents(root);
  check_ancestors(root);
  check_root(root);
}

}  // namespace tilefuse::build
