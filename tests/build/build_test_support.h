// Helpers for the build-layer tests: a private scratch directory (mkdtemp), scoped environment
// variables, and a compiler wrapper that counts real compilations.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include <gtest/gtest.h>

namespace tilefuse::testing {

// A fresh directory (mode 0700, from mkdtemp) removed with everything in it when the test ends.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tilefuse_build_test_XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Sets (or, with nullopt, unsets) an environment variable and restores the old value.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::optional<std::string>& value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    set(value);
  }
  ~ScopedEnv() { set(old_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  void set(const std::optional<std::string>& value) {
    if (value) ::setenv(name_.c_str(), value->c_str(), 1);
    else ::unsetenv(name_.c_str());
  }
  std::string name_;
  std::optional<std::string> old_;
};

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A TILEFUSE_CXX for tests: a script that appends one line to `log` per compilation (not for
// `--version`), "compile" and the arguments, then runs the system's c++. `delay` (a sleep(1) argument) holds each compilation
// open so that concurrent builders are sure to overlap.
inline std::string write_counting_compiler(const TempDir& dir, const std::string& log,
                                           const std::string& delay = "0") {
  const std::string script = dir.file("counting-c++");
  write_text(script,
             "#!/bin/sh\n"
             "case \"$1\" in --version|-E) ;; *) echo compile \"$*\" >> '" + log + "'; sleep " + delay + " ;; esac\n"
             "exec c++ \"$@\"\n");
  ::chmod(script.c_str(), 0700);
  return script;
}

inline size_t count_lines(const std::string& path) {
  std::string text = read_text(path);
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace tilefuse::testing
