// The cache entry of a static-shape kernel (DESIGN.md, "On-disk cache"):
//   <root>/<kernel_name>/<artifact_hash>/
//       meta.json                      what went into artifact_hash (kernel IR, device limit, ...)
//       compile.lock                   held while candidates are built or tuned
//       static_kernel/<kernel_key>/    kernel.cpp, kernel.so, meta.json: one per TopN candidate
//       optimize_tiling                the measured winner (tune/tuning_record.h)
// The artifact hash covers the kernel's tiling-free source and the device limit, so two limits
// get two isolated entries; each candidate directory is a LibraryEntry (checked before reuse).
#pragma once

#include <memory>
#include <string>

#include "build/artifact_cache.h"
#include "build/file_lock.h"

namespace tilefuse::build {

class StaticKernelStore {
 public:
  // `kernel`: the kernel's identity (name, tiling-free source, meta with the device limit).
  StaticKernelStore(const ArtifactCache& cache, ArtifactRequest kernel, const Toolchain& toolchain);

  const std::string& dir() const { return dir_; }
  const std::string& kernel_name() const { return kernel_.kernel_name; }
  std::string optimize_tiling_path() const { return dir_ + "/optimize_tiling"; }
  std::string candidate_dir(const std::string& kernel_key) const { return dir_ + "/static_kernel/" + kernel_key; }

  // Blocks until this process holds the entry's compile.lock.
  std::unique_ptr<FileLock> lock() const;

  // kernel.so of one candidate: reused if its entry is valid, else (re)built from `source`.
  // The caller holds lock().
  LibraryFile get_or_build(const std::string& kernel_key, const std::string& source, CacheCounters& counters) const;

 private:
  const ArtifactCache& cache_;
  ArtifactRequest kernel_;
  const Toolchain& toolchain_;
  std::string dir_;
};

}  // namespace tilefuse::build
