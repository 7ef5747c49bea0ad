#include "build/static_kernel_store.h"

#include <chrono>
#include <filesystem>

#include "build/hashing.h"
#include "build/library_entry.h"
#include "build/private_directory.h"
#include "io/atomic_file.h"
#include "ir/log.h"

namespace tilefuse::build {

StaticKernelStore::StaticKernelStore(const ArtifactCache& cache, ArtifactRequest kernel, const Toolchain& toolchain)
    : cache_(cache), kernel_(std::move(kernel)), toolchain_(toolchain), dir_(cache.entry_dir(kernel_, toolchain)) {
  make_directory(cache_.root() + "/" + kernel_.kernel_name);
  make_directory(dir_);
  make_directory(dir_ + "/static_kernel");
  const std::string meta = dir_ + "/meta.json";
  if (!std::filesystem::exists(meta)) {
    const nlohmann::json record = {{"kernel_name", kernel_.kernel_name},
                                   {"artifact_hash", cache.artifact_hash(kernel_, toolchain)},
                                   {"toolchain", toolchain.identity},
                                   {"source_sha256", sha256_hex(kernel_.source)},
                                   {"meta", kernel_.meta}};
    io::write_file_atomically(meta, record.dump(2) + "\n");
  }
}

std::unique_ptr<FileLock> StaticKernelStore::lock() const { return std::make_unique<FileLock>(dir_ + "/compile.lock"); }

LibraryFile StaticKernelStore::get_or_build(const std::string& kernel_key, const std::string& source,
                                            CacheCounters& counters) const {
  const std::string dir = candidate_dir(kernel_key);
  make_directory(dir);
  LibraryEntry entry(dir);
  const nlohmann::json record = {{"kernel_name", kernel_.kernel_name},
                                 {"kernel_key", kernel_key},
                                 {"toolchain", toolchain_.identity},
                                 {"source_sha256", sha256_hex(source)}};
  const EntryCheck check = entry.check(record);
  if (check.state == EntryCheck::State::kValid) {
    ++counters.cache_hits;
    return check.library;
  }
  if (check.state == EntryCheck::State::kInvalid) {
    ++counters.rebuilds;
    logger().warn("rebuilding static kernel {}: {}", dir, check.problem);
  }
  const auto start = std::chrono::steady_clock::now();
  ++counters.compiles;
  LibraryFile built = entry.build(source, toolchain_, record);
  logger().info("compiled {} candidate {} in {} ms", kernel_.kernel_name, kernel_key,
               std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count());
  return built;
}

}  // namespace tilefuse::build
