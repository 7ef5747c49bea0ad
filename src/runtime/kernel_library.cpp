#include "runtime/kernel_library.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "ir/error.h"

namespace tilefuse::runtime {
namespace {

[[noreturn]] void fail_init(const std::string& path, const std::string& why) {
  fail_user("kernel {} init failed: {}", path, why);
}

template <typename Fn>
Fn resolve(void* handle, const std::string& path, const char* symbol) {
  void* address = dlsym(handle, symbol);
  if (address == nullptr) fail_init(path, fmt::format("missing symbol {}", symbol));
  return reinterpret_cast<Fn>(address);
}

// The descriptor of `path`, checked: a regular file (not a symlink), ours, not writable by others.
int open_checked(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    fail_init(path, errno == ELOOP ? "it is a symbolic link (libraries are only loaded from regular files)"
                                   : fmt::format("cannot open it: {}", std::strerror(errno)));
  }
  struct stat info {};
  std::string problem;
  if (::fstat(fd, &info) != 0) {
    problem = fmt::format("cannot stat it: {}", std::strerror(errno));
  } else if (!S_ISREG(info.st_mode)) {
    problem = "it is not a regular file";
  } else if (info.st_uid != ::geteuid()) {
    problem = fmt::format("it is owned by uid {}, not by the current user (uid {})", info.st_uid, ::geteuid());
  } else if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    problem = fmt::format("it is writable by group or others (mode {:o})", info.st_mode & 07777);
  }
  if (!problem.empty()) {
    ::close(fd);
    fail_init(path, problem);
  }
  return fd;
}

// dlopen() of the checked descriptor. glibc hands back an already loaded object whose name
// matches, so the name must never have been used before: /proc/self/fd/N is reused with the
// descriptor number (and an object may outlive its dlclose). The library is opened through a
// symbolic link of a name unique to this load, next to the library (in the user's private
// cache), pointing at /proc/self/fd/N; the link is removed at once.
void* dlopen_descriptor(int fd, const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  const std::string target = fmt::format("/proc/self/fd/{}", fd);
  for (;;) {
    const std::string alias = fmt::format("{}.load.{}.{}", path, ::getpid(), counter++);
    if (::symlink(target.c_str(), alias.c_str()) != 0) {
      if (errno == EEXIST) continue;
      fail_init(path, fmt::format("cannot create the link to load it through: {}", std::strerror(errno)));
    }
    // RTLD_NOW: an unresolved symbol fails here, not in the middle of an inference.
    // RTLD_LOCAL: kernels all export the same ABI names, so none may leak into the global scope.
    void* handle = dlopen(alias.c_str(), RTLD_NOW | RTLD_LOCAL);
    ::unlink(alias.c_str());
    return handle;
  }
}

}  // namespace

std::shared_ptr<KernelLibrary> KernelLibrary::load(const std::string& path, const DescriptorCheck& check) {
  // Owned before anything can fail, so the destructor closes the handle on every error path.
  std::shared_ptr<KernelLibrary> library(new KernelLibrary());
  library->path_ = path;
  const int fd = open_checked(path);
  std::string refused;
  try {
    if (check) refused = check(fd);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (!refused.empty()) {
    ::close(fd);
    fail_init(path, refused);
  }
  library->handle_ = dlopen_descriptor(fd, path);
  ::close(fd);
  if (library->handle_ == nullptr) {
    const char* why = dlerror();
    fail_init(path, why != nullptr ? why : "dlopen failed");
  }
  const auto abi_version = resolve<tf_abi_version_fn>(library->handle_, path, TILEFUSE_SYMBOL_ABI_VERSION);
  library->num_blocks_ = resolve<tf_num_blocks_fn>(library->handle_, path, TILEFUSE_SYMBOL_NUM_BLOCKS);
  library->scratch_bytes_ = resolve<tf_scratch_bytes_fn>(library->handle_, path, TILEFUSE_SYMBOL_SCRATCH_BYTES);
  library->run_blocks_ = resolve<tf_run_blocks_fn>(library->handle_, path, TILEFUSE_SYMBOL_RUN_BLOCKS);
  if (const int version = abi_version(); version != TILEFUSE_KERNEL_ABI_VERSION) {
    fail_init(path, fmt::format("ABI version {}, but this runtime expects {}", version, TILEFUSE_KERNEL_ABI_VERSION));
  }
  return library;
}

std::shared_ptr<KernelLibrary> KernelLibrary::from_entry_points(std::shared_ptr<void> library,
                                                                const tf_package_kernel& kernel, std::string path) {
  std::shared_ptr<KernelLibrary> lib(new KernelLibrary());
  lib->shared_handle_ = std::move(library);
  lib->path_ = std::move(path);
  lib->num_blocks_ = kernel.num_blocks;
  lib->scratch_bytes_ = kernel.scratch_bytes;
  lib->run_blocks_ = kernel.run_blocks;
  if (!lib->num_blocks_ || !lib->scratch_bytes_ || !lib->run_blocks_) {
    fail_user("kernel {} init failed: an entry point is missing", lib->path_);
  }
  return lib;
}

KernelLibrary::~KernelLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

}  // namespace tilefuse::runtime
