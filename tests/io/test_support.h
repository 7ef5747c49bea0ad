// Helpers shared by the io, api and cli tests: a scratch directory per test, raw file access and
// running Debian's python3 (which has numpy and onnx) to produce or check files independently of
// our own code.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

namespace tilefuse::testing {

// A fresh directory removed when the test ends.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string leaf = info ? std::string(info->test_suite_name()) + "." + info->name() : "scratch";
    // Parameterised tests are named "Prefix/Suite.Name/3": one level, so the whole tree goes.
    std::replace(leaf.begin(), leaf.end(), '/', '_');
    path_ = std::filesystem::temp_directory_path() /
            ("tilefuse_test_" + std::to_string(::getpid()) + "_" + leaf);
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs a Python script with /usr/bin/python3 (the interpreter with numpy and onnx); returns its
// exit status. The script is written to a file so no shell quoting gets in the way.
inline int run_python(const ScratchDir& dir, const std::string& script) {
  const std::string path = dir.file("script.py");
  write_bytes(path, script);
  return std::system(("/usr/bin/python3 " + path).c_str());
}

}  // namespace tilefuse::testing
