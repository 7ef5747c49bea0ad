#include "build/artifact_cache.h"

#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "build/file_lock.h"
#include "build/hashing.h"
#include "build/library_entry.h"
#include "build/private_directory.h"
#include "ir/error.h"
#include "ir/log.h"

namespace tilefuse::build {
namespace {

// 96 bits: collisions are out of reach for any realistic number of kernels.
constexpr size_t kArtifactHashChars = 24;

bool is_safe_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

std::string home_directory() {
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] == '/') return home;
  const passwd* entry = ::getpwuid(::geteuid());
  if (entry != nullptr && entry->pw_dir != nullptr && entry->pw_dir[0] == '/') return entry->pw_dir;
  fail_user("no kernel cache directory: HOME is not set and uid {} has no home directory; set TILEFUSE_CACHE_DIR",
            ::geteuid());
}

// kernel_name becomes a directory name, so it must not be able to climb out of the root.
void require_valid_kernel_name(const std::string& name) {
  bool safe = !name.empty() && name[0] != '.';
  for (char c : name) safe = safe && is_safe_name_char(c);
  if (!safe) fail_internal("kernel name '{}' is not a safe directory name", name);
}

// Everything the entry was built from; stored in meta.json and compared on reuse.
nlohmann::json entry_record(const ArtifactRequest& request, const Toolchain& toolchain, const std::string& hash) {
  return {{"kernel_name", request.kernel_name},
          {"artifact_hash", hash},
          {"toolchain", toolchain.identity},
          {"source_sha256", sha256_hex(request.source)},
          {"meta", request.meta}};
}

int64_t milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

ArtifactCache::ArtifactCache(std::string root)
    : root_(std::filesystem::absolute(root).lexically_normal().string()) {
  if (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  ensure_private_directory(root_);
}

std::string ArtifactCache::default_root() {
  const char* value = std::getenv("TILEFUSE_CACHE_DIR");
  if (value != nullptr) {
    if (*value == '\0') fail_user("TILEFUSE_CACHE_DIR is empty: it must name the kernel cache directory");
    return value;
  }
  // Per user and not predictable by others (a fixed name under /tmp could be created first by
  // someone else): the XDG base directory convention.
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/tilefuse";
  return home_directory() + "/.cache/tilefuse";
}

std::string ArtifactCache::artifact_hash(const ArtifactRequest& request, const Toolchain& toolchain) const {
  // nlohmann::json keeps object keys sorted, so the dump is canonical.
  const nlohmann::json inputs = {
      {"source", request.source}, {"toolchain", toolchain.identity}, {"meta", request.meta}};
  return sha256_hex(inputs.dump()).substr(0, kArtifactHashChars);
}

std::string ArtifactCache::entry_dir(const ArtifactRequest& request, const Toolchain& toolchain) const {
  require_valid_kernel_name(request.kernel_name);
  return root_ + "/" + request.kernel_name + "/" + artifact_hash(request, toolchain);
}

LibraryFile ArtifactCache::get_or_build(const ArtifactRequest& request, const Toolchain& toolchain,
                                        CacheCounters& counters) const {
  const std::string dir = entry_dir(request, toolchain);
  make_directory(root_ + "/" + request.kernel_name);
  make_directory(dir);
  // Held while checking and building: of concurrent builders one compiles, the rest then reuse.
  FileLock lock(dir + "/compile.lock");
  LibraryEntry entry(dir);
  const nlohmann::json record = entry_record(request, toolchain, artifact_hash(request, toolchain));

  EntryCheck check = entry.check(record);
  if (check.state == EntryCheck::State::kValid) {
    ++counters.cache_hits;
    logger().debug("cache hit for {} ({})", request.kernel_name, dir);
    return check.library;
  }
  if (check.state == EntryCheck::State::kInvalid) {
    ++counters.rebuilds;
    logger().warn("rebuilding cache entry {}: {}", dir, check.problem);
  }
  const auto start = std::chrono::steady_clock::now();
  ++counters.compiles;
  LibraryFile built = entry.build(request.source, toolchain, record);
  logger().info("compiled {} in {} ms", request.kernel_name, milliseconds_since(start));
  return built;
}

}  // namespace tilefuse::build
