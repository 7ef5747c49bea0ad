#include "build/library_entry.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "build/hashing.h"
#include "build/private_directory.h"
#include "io/atomic_file.h"
#include "ir/error.h"

namespace tilefuse::build {
namespace {

// Same naming as io::write_file_atomically, so remove_leftovers() also finds its temporaries.
constexpr std::string_view kTemporaryMarker = ".tmp.";

std::string temporary_path_for(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return fmt::format("{}{}{}.{}", path, kTemporaryMarker, ::getpid(), counter++);
}

bool exists(const std::string& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0;
}

std::optional<nlohmann::json> read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  nlohmann::json value = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded() || !value.is_object()) return std::nullopt;
  return value;
}

// Empty if `library` matches what meta.json recorded, else the reason it does not.
std::string library_problem(const std::string& library, const nlohmann::json& meta) {
  struct stat info {};
  if (::lstat(library.c_str(), &info) != 0) return "kernel.so is missing";
  if (!S_ISREG(info.st_mode)) return "kernel.so is not a regular file";
  // Planted by someone else, or open to others' writes: never loaded, rebuilt as ours.
  if (info.st_uid != ::geteuid()) return fmt::format("kernel.so is owned by uid {}, not by the current user", info.st_uid);
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) return "kernel.so is writable by group or others";
  const nlohmann::json bytes = meta.value("library_bytes", nlohmann::json());
  const nlohmann::json sha256 = meta.value("library_sha256", nlohmann::json());
  if (!bytes.is_number_integer() || !sha256.is_string()) return "meta.json lacks the library's size or hash";
  if (bytes.get<int64_t>() != info.st_size) {
    return fmt::format("kernel.so has {} bytes, meta.json records {}", info.st_size, bytes.get<int64_t>());
  }
  if (sha256.get<std::string>() != sha256_file_hex(library)) return "kernel.so does not match its recorded sha256";
  return "";
}

// Temporaries of a build that was interrupted (crash, kill): no live build can own them, because
// the caller holds the entry's lock.
void remove_leftovers(const std::string& dir) {
  std::error_code error;
  for (const auto& file : std::filesystem::directory_iterator(dir, error)) {
    if (file.path().filename().string().find(kTemporaryMarker) != std::string::npos) {
      std::filesystem::remove(file.path(), error);
    }
  }
}

std::string compile_into_place(const Toolchain& toolchain, const std::string& source, const std::string& library) {
  const std::string temporary = temporary_path_for(library);
  try {
    compile_shared_library(toolchain, source, temporary);
  } catch (...) {
    std::remove(temporary.c_str());
    throw;
  }
  // Private whatever the umask: the loader refuses libraries that others could write.
  if (::chmod(temporary.c_str(), 0700) != 0) {
    int err = errno;
    std::remove(temporary.c_str());
    fail_user("cannot make '{}' private: {}", temporary, std::strerror(err));
  }
  // Hashed before the rename, so the hash is of exactly the bytes the compiler wrote.
  std::string sha256 = sha256_file_hex(temporary);
  if (std::rename(temporary.c_str(), library.c_str()) != 0) {
    int err = errno;
    std::remove(temporary.c_str());
    fail_user("cannot move the compiled library to '{}': {}", library, std::strerror(err));
  }
  return sha256;
}

}  // namespace

EntryCheck LibraryEntry::check(const nlohmann::json& record) const {
  if (!exists(meta_path()) && !exists(library_path())) return {EntryCheck::State::kMissing, ""};
  std::optional<nlohmann::json> meta = read_json(meta_path());
  if (!meta) return {EntryCheck::State::kInvalid, "meta.json is missing or not a JSON object"};
  for (const auto& [key, value] : record.items()) {
    if (!meta->contains(key) || (*meta)[key] != value) {
      return {EntryCheck::State::kInvalid, fmt::format("meta.json records a different '{}'", key)};
    }
  }
  std::string problem = library_problem(library_path(), *meta);
  if (!problem.empty()) return {EntryCheck::State::kInvalid, problem};
  return {EntryCheck::State::kValid, "", {library_path(), (*meta)["library_sha256"].get<std::string>()}};
}

LibraryFile LibraryEntry::build(const std::string& source, const Toolchain& toolchain, const nlohmann::json& record) const {
  make_directory(dir_);
  remove_leftovers(dir_);
  // Withdraw the old meta.json first: until the new one lands, the entry reads as incomplete.
  std::remove(meta_path().c_str());
  io::write_file_atomically(source_path(), source);
  std::string sha256 = compile_into_place(toolchain, source_path(), library_path());

  nlohmann::json meta = record;
  meta["library_bytes"] = std::filesystem::file_size(library_path());
  meta["library_sha256"] = sha256;
  io::write_file_atomically(meta_path(), meta.dump(2) + "\n");
  return {library_path(), sha256};
}

std::function<std::string(int fd)> sha256_matches(const std::string& expected_sha256, const std::string& path) {
  return [expected_sha256, path](int fd) -> std::string {
    if (sha256_fd_hex(fd, path) == expected_sha256) return "";
    return "its sha256 differs from the one the cache recorded when it was built";
  };
}

}  // namespace tilefuse::build
