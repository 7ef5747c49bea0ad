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
  std::string identity;              // "g++ (Debian 12.2.0-14) 12.2.0 | -O3 -march=native ..."

  // Reads TILEFUSE_CXX once; throws UserError if the compiler cannot be run.
  static Toolchain from_environment();
};

// Compiles one C++ source file into a shared library. Throws UserError carrying the compiler's
// diagnostics (and the command line) on failure. Writes to `output_path` directly: callers
// compile into a temporary name and rename.
void compile_shared_library(const Toolchain& toolchain, const std::string& source_path,
                            const std::string& output_path);

}  // namespace tilefuse::build
