// A new kernel cache copies the build's precompiled header when the same compiler made it for the
// same CPU, and compiles its own otherwise.
#include <filesystem>

#include <gtest/gtest.h>

#include "build/build_test_support.h"
#include "driver/kernel_headers.h"

namespace tilefuse::driver {
namespace {

namespace fs = std::filesystem;
using tilefuse::testing::TempDir;

TEST(KernelHeaders, ANewCacheCopiesTheBuildsPrecompiledHeaderForTheSameToolchainOnly) {
  if (prebuilt_kernel_headers_root().empty() || !fs::exists(prebuilt_kernel_headers_root())) {
    GTEST_SKIP() << "this build has no prebuilt kernel headers";
  }
  TempDir tools;
  const std::string log = tools.file("compiles.log");
  tilefuse::testing::ScopedEnv cxx("TILEFUSE_CXX", tilefuse::testing::write_counting_compiler(tools, log));
  build::Toolchain toolchain = build::Toolchain::from_environment();

  TempDir same;
  const KernelHeaders copied = install_kernel_headers(same.path());
  toolchain.include_dirs = {copied.dir};
  precompile_kernel_headers(copied, toolchain);
  const fs::path prebuilt = fs::path(prebuilt_kernel_headers_root()) / "include" / copied.fingerprint / "tilefuse_kernel.h.gch";
  if (!fs::exists(prebuilt)) GTEST_SKIP() << "the compiler could not precompile the header at build time";
  EXPECT_EQ(fs::file_size(fs::path(copied.dir) / "tilefuse_kernel.h.gch"), fs::file_size(prebuilt));
  EXPECT_FALSE(fs::exists(log)) << "the compiler ran: " << tilefuse::testing::read_text(log);

  TempDir other;
  toolchain.set_target("a CPU with other features");  // another identity: the prebuilt one does not fit
  const KernelHeaders compiled = install_kernel_headers(other.path());
  toolchain.include_dirs = {compiled.dir};
  precompile_kernel_headers(compiled, toolchain);
  EXPECT_TRUE(fs::exists(fs::path(compiled.dir) / "tilefuse_kernel.h.gch"));
  EXPECT_NE(tilefuse::testing::read_text(log).find("c++-header"), std::string::npos);
}

}  // namespace
}  // namespace tilefuse::driver
