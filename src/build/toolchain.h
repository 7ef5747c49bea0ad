// The C++ toolchain that compiles generated kernels: the compiler command (TILEFUSE_CXX, default
// `c++`; may be a wrapper such as `ccache g++`), the flags, and an identity string (compiler
// version + flags) that enters every artifact hash, so a compiler upgrade never reuses stale
// libraries.
#pragma once

#include <string>
#include <vector>

namespace tilefuse::build {

struct Toolchain {
  std::vector<std::string> command;  // e.g. {"ccache", "g++"}
  std::vector<std::string> flags;    // optimisation, ISA (-march=native), -fPIC -shared, ...
  std::vector<std::string> include_dirs;
  std::string version;  // the first line of `<compiler> --version`
  // "g++ (Debian 12.2.0-14) 12.2.0 | -std=c++20 -O3 ...": the first line of `<compiler>
  // --version` and the flags. Neither the wrapper (ccache) nor the include directories enter it:
  // they do not change the generated code (header contents are covered by the codegen version
  // that callers put into the artifact's meta).
  std::string identity;
  // What -march=native resolves to on this machine: the compiler's predefined macros for it
  // (ISA features such as __AVX512F__, the CPU name), as a readable feature list plus a hash of
  // the whole set. Part of identity, so a cache copied to a CPU with other features is rebuilt
  // instead of loading instructions that CPU lacks.
  std::string target;

  // Reads TILEFUSE_CXX (split on whitespace, never given to a shell), runs `--version` and asks
  // the compiler what -march=native means here; throws UserError naming TILEFUSE_CXX and the
  // command if the compiler cannot be run.
  static Toolchain from_environment();

  // Sets `target` and recomputes `identity` (tests use it to stand in for another CPU).
  void set_target(std::string target_text);
};

// Compiles one C++ source file into a shared library. Throws UserError carrying the compiler's
// diagnostics (and the command line) on failure. Writes to `output_path` directly: callers
// compile into a temporary name and rename.
void compile_shared_library(const Toolchain& toolchain, const std::string& source_path,
                            const std::string& output_path);

// Compiles one C++ source file into a position-independent object with the same flags, plus
// `defines` (NAME=VALUE, passed as -D): a model package renames each kernel's entry points this
// way, so that all of them link into one library.
void compile_object(const Toolchain& toolchain, const std::string& source_path, const std::string& output_path,
                    const std::vector<std::string>& defines = {});

// Links objects into one shared library. Errors as compile_shared_library.
void link_shared_library(const Toolchain& toolchain, const std::vector<std::string>& objects,
                         const std::string& output_path);

}  // namespace tilefuse::build
