// A test probe: C++ source compiled as generated kernels are (kernel_compiler.h, with extra
// flags such as another -march) into a shared library in a temporary directory, and loaded with
// dlopen. symbol() is null where compiling or loading failed (the compiler's message is in the
// test's output). The directory goes with the probe.
#pragma once

#include <dlfcn.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "codegen/kernel_compiler.h"

namespace tf_test {

class ProbeLibrary {
 public:
  ProbeLibrary(const std::string& source_text, const std::string& extra_flags = "") {
    std::string dir_pattern = (std::filesystem::temp_directory_path() / "tilefuse_probe_XXXXXX").string();
    if (::mkdtemp(dir_pattern.data()) == nullptr) return;
    dir_ = dir_pattern;
    const std::string source = dir_ + "/probe.cpp", library = dir_ + "/probe.so";
    std::ofstream(source) << source_text;
    const std::string command = kernel_compiler_command("-fPIC -shared " + extra_flags + " " + source + " -o " + library);
    if (std::system(command.c_str()) != 0) return;
    handle_ = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  ~ProbeLibrary() {
    if (handle_ != nullptr) ::dlclose(handle_);
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }
  ProbeLibrary(const ProbeLibrary&) = delete;
  ProbeLibrary& operator=(const ProbeLibrary&) = delete;

  template <typename Fn> Fn symbol(const char* name) const {
    return handle_ == nullptr ? nullptr : reinterpret_cast<Fn>(::dlsym(handle_, name));
  }

 private:
  std::string dir_;
  void* handle_ = nullptr;
};

}  // namespace tf_test
