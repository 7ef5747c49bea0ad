// One directory holding a compiled kernel: kernel.cpp, kernel.so and meta.json. meta.json is
// written last and records what the library was built from (`record`) plus its size and sha256,
// so an entry whose build was interrupted, or whose files were later truncated or corrupted, is
// recognised and never loaded. The artifact cache keeps one per artifact; the tuner keeps one per
// TopN candidate (static_kernel/<kernel_key>/).
//
// Not synchronised: callers hold the artifact's compile.lock while checking and building.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "build/toolchain.h"

namespace tilefuse::build {

// A library in the cache and the sha256 recorded for it: the loader hashes the descriptor it
// loads from and compares (runtime/kernel_library.h), so the bytes checked are the bytes run.
struct LibraryFile {
  std::string path;
  std::string sha256;
};

// The loader's check (runtime::DescriptorCheck) that a library's bytes, read through the
// descriptor about to be loaded, hash to `expected_sha256`.
std::function<std::string(int fd)> sha256_matches(const std::string& expected_sha256, const std::string& path);

struct EntryCheck {
  enum class State { kMissing, kValid, kInvalid };
  State state = State::kMissing;
  std::string problem;  // why an invalid entry was rejected, for the log
  LibraryFile library;  // when kValid
};

class LibraryEntry {
 public:
  explicit LibraryEntry(std::string dir) : dir_(std::move(dir)) {}

  const std::string& dir() const { return dir_; }
  std::string source_path() const { return dir_ + "/kernel.cpp"; }
  std::string library_path() const { return dir_ + "/kernel.so"; }
  std::string meta_path() const { return dir_ + "/meta.json"; }

  // kValid iff meta.json holds every field of `record` with the same value and kernel.so is a
  // regular file of the recorded size and sha256; kMissing if neither file exists.
  EntryCheck check(const nlohmann::json& record) const;

  // Writes kernel.cpp, compiles kernel.so, then writes meta.json (`record` + library_bytes +
  // library_sha256). Each file appears atomically; leftovers of an interrupted build are removed
  // first. Returns the library and its sha256. Throws UserError with the compiler's diagnostics if
  // compilation fails.
  LibraryFile build(const std::string& source, const Toolchain& toolchain, const nlohmann::json& record) const;

 private:
  std::string dir_;
};

}  // namespace tilefuse::build
