// A private kernel cache directory (mkdtemp) for one test process, removed with everything in it
// at exit: property cases share it, so equal kernels compile once per process.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace tilefuse::property {

inline const std::string& temp_cache_dir() {
  struct Dir {
    std::string path;
    Dir() {
      std::string pattern = (std::filesystem::temp_directory_path() / "tilefuse_property_cache_XXXXXX").string();
      if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
      path = pattern;
    }
    ~Dir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static Dir dir;
  return dir.path;
}

}  // namespace tilefuse::property
