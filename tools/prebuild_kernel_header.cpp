// Run by the build: writes the kernels' support headers under ROOT/include/<fingerprint>/ and
// precompiles them there for this machine's compiler (TILEFUSE_CXX) and CPU, recording the
// toolchain identity beside the .gch. A new kernel cache then copies that precompiled header
// instead of spending 2-3 s making its own (driver/kernel_headers.h).
//
//   prebuild_kernel_header ROOT
#include <cstdio>
#include <fstream>

#include "build/precompiled_header.h"
#include "build/toolchain.h"
#include "driver/kernel_headers.h"
#include "ir/error.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s ROOT\n", argv[0]);
    return 1;
  }
  try {
    using namespace tilefuse;
    build::Toolchain toolchain = build::Toolchain::from_environment();
    const driver::KernelHeaders headers = driver::install_kernel_headers(argv[1]);
    toolchain.include_dirs.push_back(headers.dir);
    const std::string header = headers.dir + "/tilefuse_kernel.h";
    build::ensure_precompiled_header(toolchain, header);
    std::ofstream(header + ".gch.identity") << toolchain.identity;
  } catch (const std::exception& e) {
    // Only a missed speed-up: kernels precompile their header themselves.
    std::fprintf(stderr, "prebuild_kernel_header: %s (kernel caches will precompile it themselves)\n", e.what());
  }
  return 0;
}
