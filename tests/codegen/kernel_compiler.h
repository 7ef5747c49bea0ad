// The command line that compiles a test probe the way generated kernels are compiled: the same
// compiler (TILEFUSE_CXX, default c++) and the flags of src/build/toolchain.cpp that decide code
// generation, with the source tree's headers on the include path.
#pragma once

#include <cstdlib>
#include <string>

namespace tf_test {

// `args`: the source, the output and any extra flags (-S, -fPIC -shared).
inline std::string kernel_compiler_command(const std::string& args) {
  const char* cxx = std::getenv("TILEFUSE_CXX");
  return std::string(cxx != nullptr ? cxx : "c++") +
         " -std=c++20 -O3 -march=native -fno-math-errno -I" TILEFUSE_SOURCE_DIR "/src -I" TILEFUSE_SOURCE_DIR
         "/include -I" TILEFUSE_SOURCE_DIR "/tests " + args;
}

}  // namespace tf_test
