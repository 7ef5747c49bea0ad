#include "runtime/kernel_library.h"

#include <dlfcn.h>

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

}  // namespace

std::shared_ptr<KernelLibrary> KernelLibrary::load(const std::string& path) {
  // Owned before anything can fail, so the destructor closes the handle on every error path.
  std::shared_ptr<KernelLibrary> library(new KernelLibrary());
  library->path_ = path;
  // RTLD_NOW: an unresolved symbol fails here, not in the middle of an inference.
  // RTLD_LOCAL: kernels all export the same ABI names, so none may leak into the global scope.
  library->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
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

KernelLibrary::~KernelLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

}  // namespace tilefuse::runtime
