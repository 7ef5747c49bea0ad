#include "build/toolchain.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <chrono>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "build_test_support.h"
#include "ir/error.h"
#include "support/user_error.h"

namespace tilefuse::build {
namespace {

using ::testing::HasSubstr;

using testing_support::user_error;

TEST(Toolchain, DefaultsToCxxWithStrictMathFlags) {
  testing::ScopedEnv cxx("TILEFUSE_CXX", std::nullopt);
  Toolchain toolchain = Toolchain::from_environment();
  EXPECT_EQ(toolchain.command, std::vector<std::string>{"c++"});
  EXPECT_THAT(toolchain.flags, ::testing::IsSupersetOf({"-O3", "-march=native", "-fPIC", "-shared"}));
  EXPECT_THAT(toolchain.flags, ::testing::Not(::testing::Contains("-ffast-math")));
  EXPECT_THAT(toolchain.identity, HasSubstr("-march=native"));
}

TEST(Toolchain, CommandIsSplitIntoWordsWithoutAShell) {
  testing::ScopedEnv cxx("TILEFUSE_CXX", "env  c++");
  Toolchain toolchain = Toolchain::from_environment();
  EXPECT_EQ(toolchain.command, (std::vector<std::string>{"env", "c++"}));
}

TEST(Toolchain, ShellSyntaxInTheVariableIsNeverExecuted) {
  testing::TempDir dir;
  const std::string marker = dir.file("injected");
  testing::ScopedEnv cxx("TILEFUSE_CXX", "c++;touch " + marker);
  std::string message = user_error([] { Toolchain::from_environment(); });
  EXPECT_THAT(message, HasSubstr("TILEFUSE_CXX"));
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(Toolchain, UnrunnableCompilerIsUserErrorNamingVariableAndCommand) {
  testing::ScopedEnv cxx("TILEFUSE_CXX", "/nonexistent/bin/g++");
  std::string message = user_error([] { Toolchain::from_environment(); });
  EXPECT_THAT(message, HasSubstr("TILEFUSE_CXX"));
  EXPECT_THAT(message, HasSubstr("/nonexistent/bin/g++"));
}

TEST(Toolchain, CompilerThatFailsVersionIsUserError) {
  testing::ScopedEnv cxx("TILEFUSE_CXX", "false");
  EXPECT_THAT(user_error([] { Toolchain::from_environment(); }), HasSubstr("exit code 1"));
}

TEST(Toolchain, BlankVariableIsUserError) {
  testing::ScopedEnv cxx("TILEFUSE_CXX", "  ");
  EXPECT_THAT(user_error([] { Toolchain::from_environment(); }), HasSubstr("TILEFUSE_CXX is empty"));
}

TEST(Toolchain, CompiledLibraryLoadsAndRuns) {
  testing::TempDir dir;
  testing::write_text(dir.file("k.cpp"), "extern \"C\" int affine(int x) { return 3 * x + 4; }\n");
  compile_shared_library(Toolchain::from_environment(), dir.file("k.cpp"), dir.file("k.so"));

  void* handle = ::dlopen(dir.file("k.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << ::dlerror();
  auto affine = reinterpret_cast<int (*)(int)>(::dlsym(handle, "affine"));
  ASSERT_NE(affine, nullptr);
  EXPECT_EQ(affine(5), 19);
  ::dlclose(handle);
}

TEST(Toolchain, CompileErrorCarriesDiagnosticsAndCommand) {
  testing::TempDir dir;
  testing::write_text(dir.file("bad.cpp"), "int f() { return undeclared_thing; }\n");
  Toolchain toolchain = Toolchain::from_environment();
  std::string message =
      user_error([&] { compile_shared_library(toolchain, dir.file("bad.cpp"), dir.file("bad.so")); });
  EXPECT_THAT(message, HasSubstr("undeclared_thing"));  // the compiler's diagnostic
  EXPECT_THAT(message, HasSubstr("-march=native"));     // the command line
  EXPECT_THAT(message, HasSubstr("bad.cpp"));
  EXPECT_FALSE(std::filesystem::exists(dir.file("bad.so")));
}

// A compiler that hangs (here: a wrapper that sleeps, and the sleep it started) is killed with
// its process group after TILEFUSE_COMPILE_TIMEOUT, and the error names the source.
TEST(Toolchain, HangingCompileTimesOutNamingTheSource) {
  testing::TempDir dir;
  const std::string wrapper = dir.file("slow-c++");
  testing::write_text(wrapper, "#!/bin/sh\ncase \"$1\" in --version|-E) exec c++ \"$@\";; esac\nsleep 30\n");
  ::chmod(wrapper.c_str(), 0700);
  testing::write_text(dir.file("kernel_slow.cpp"), "int f() { return 1; }\n");
  testing::ScopedEnv cxx("TILEFUSE_CXX", wrapper);
  const Toolchain toolchain = Toolchain::from_environment();
  testing::ScopedEnv timeout("TILEFUSE_COMPILE_TIMEOUT", "0.5");
  const auto start = std::chrono::steady_clock::now();
  const std::string message =
      user_error([&] { compile_shared_library(toolchain, dir.file("kernel_slow.cpp"), dir.file("k.so")); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));  // killed, not waited for
  EXPECT_THAT(message, HasSubstr("kernel_slow.cpp"));
  EXPECT_THAT(message, HasSubstr("timed out after 0.5 s (TILEFUSE_COMPILE_TIMEOUT)"));
}

TEST(Toolchain, InvalidCompileTimeoutNamesTheVariable) {
  testing::TempDir dir;
  testing::write_text(dir.file("k.cpp"), "int f() { return 1; }\n");
  const Toolchain toolchain = Toolchain::from_environment();
  testing::ScopedEnv timeout("TILEFUSE_COMPILE_TIMEOUT", "-3");
  EXPECT_THAT(user_error([&] { compile_shared_library(toolchain, dir.file("k.cpp"), dir.file("k.so")); }),
              HasSubstr("TILEFUSE_COMPILE_TIMEOUT is '-3'"));
}

// The target enters the identity: what -march=native means on this machine.
TEST(Toolchain, IdentityNamesTheNativeTarget) {
  const Toolchain toolchain = Toolchain::from_environment();
  EXPECT_THAT(toolchain.target, HasSubstr("macros-sha256="));
  EXPECT_THAT(toolchain.identity, HasSubstr(toolchain.target));
#if defined(__AVX2__)
  EXPECT_THAT(toolchain.target, HasSubstr("AVX2"));
#endif
}

}  // namespace
}  // namespace tilefuse::build
