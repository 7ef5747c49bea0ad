#include "build/private_directory.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "ir/error.h"

namespace tilefuse::build {

void make_directory(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    fail_user("cannot create directory '{}': {}", path, std::strerror(errno));
  }
}

void ensure_private_directory(const std::string& path) {
  std::error_code error;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), error);
  if (error) fail_user("cannot create directory '{}': {}", path, error.message());
  make_directory(path);

  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) fail_user("cannot access '{}': {}", path, std::strerror(errno));
  if (!S_ISDIR(info.st_mode)) fail_user("cache directory '{}' is not a directory", path);
  if (info.st_uid != ::geteuid()) {
    fail_user("cache directory '{}' must be owned by the current user (uid {}), but is owned by uid {}",
              path, ::geteuid(), info.st_uid);
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    fail_user("cache directory '{}' must not be writable by group or others (mode {:o}); "
              "fix with: chmod go-w '{}'", path, info.st_mode & 07777, path);
  }
}

}  // namespace tilefuse::build
