// A loaded generated kernel library (dlopen), its ABI checked against kernel_abi.h.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "tilefuse/kernel_abi.h"

namespace tilefuse::runtime {

// A check of a library's bytes through the descriptor that will be loaded: returns why the file
// is refused, or "" to accept it. The cache's is build::sha256_matches (the hash it recorded when
// it built the file); the runtime itself links no hashing library.
using DescriptorCheck = std::function<std::string(int fd)>;

class KernelLibrary {
 public:
  // Opens `path` once (O_NOFOLLOW: a planted symlink is refused), checks through that descriptor
  // that it is a regular file owned by this user and writable by nobody else, runs `check` (if
  // any) on the same descriptor, then dlopen()s that very descriptor (through a link to
  // /proc/self/fd/N of a name used once): the bytes checked are the bytes loaded, whatever
  // happens to the path meanwhile. Resolves the ABI symbols. Throws UserError "kernel <path> init
  // failed: <why>" if a check fails, the file cannot be loaded, a symbol is missing or the ABI
  // version differs.
  static std::shared_ptr<KernelLibrary> load(const std::string& path, const DescriptorCheck& check = nullptr);
  // One kernel of a library that holds several (a model package's): its entry points, with
  // `library` keeping the loaded library open. `path` names it in messages.
  static std::shared_ptr<KernelLibrary> from_entry_points(std::shared_ptr<void> library, const tf_package_kernel& kernel,
                                                          std::string path);
  ~KernelLibrary();
  KernelLibrary(const KernelLibrary&) = delete;
  KernelLibrary& operator=(const KernelLibrary&) = delete;

  int64_t num_blocks(const int64_t* symbols, int64_t workers) const { return num_blocks_(symbols, workers); }
  size_t scratch_bytes(const int64_t* symbols) const { return scratch_bytes_(symbols); }
  void run_blocks(void* const* buffers, const int64_t* symbols, int64_t workers, int64_t first, int64_t end,
                  void* scratch) const {
    run_blocks_(buffers, symbols, workers, first, end, scratch);
  }
  const std::string& path() const { return path_; }

 private:
  KernelLibrary() = default;
  void* handle_ = nullptr;            // dlclose()d with this object
  std::shared_ptr<void> shared_handle_;  // or shared with the other kernels of one library
  std::string path_;
  tf_num_blocks_fn num_blocks_ = nullptr;
  tf_scratch_bytes_fn scratch_bytes_ = nullptr;
  tf_run_blocks_fn run_blocks_ = nullptr;
};

}  // namespace tilefuse::runtime
