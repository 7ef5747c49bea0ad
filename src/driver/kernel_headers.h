// The headers generated kernels include (codegen/support_headers.h), written under a root (a
// kernel cache, or the build tree's prebuilt copy) in a directory named by their fingerprint, with
// their precompiled form. Precompiling them is most of a cold start (2-3 s of xsimd), so the
// build precompiles them once (tools/prebuild_kernel_header.cpp) and a new cache copies that
// precompiled header when it was made by the same compiler with the same flags for the same CPU.
#pragma once

#include <string>

#include "build/toolchain.h"

namespace tilefuse::driver {

struct KernelHeaders {
  std::string dir;          // <root>/include/<fingerprint>: goes on the compiler's include path
  std::string fingerprint;  // of the headers' names and texts
};

// Writes the headers under `root` (once) and returns where.
KernelHeaders install_kernel_headers(const std::string& root);

// Makes sure `headers` has its precompiled header: present already, copied from the build's
// prebuilt one (same fingerprint and toolchain identity), or compiled now.
void precompile_kernel_headers(const KernelHeaders& headers, const build::Toolchain& toolchain);

// Where a prebuilt copy is, or "": the first of $TILEFUSE_PREBUILT_KERNEL_HEADERS, the folder
// installed beside the library this code is in, and the build tree's that holds one.
std::string prebuilt_kernel_headers_root();

}  // namespace tilefuse::driver
