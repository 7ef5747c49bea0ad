// The on-disk kernel cache (layout in DESIGN.md):
//   $TILEFUSE_CACHE_DIR (default $XDG_CACHE_HOME/tilefuse, else ~/.cache/tilefuse)/<kernel_name>/<artifact_hash>/
//       kernel.cpp  kernel.so  meta.json  compile.lock
// Entries are content-addressed: artifact_hash covers the source, the toolchain identity and
// everything in `meta`. compile.lock (flock) is held while an entry is built, so of several
// processes or threads exactly one compiles and the others wait and reuse it. Every file is
// written atomically (temp + rename); meta.json is written last and records the library's size
// and hash, so a truncated or corrupted entry is detected and rebuilt.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "build/library_entry.h"
#include "build/toolchain.h"

namespace tilefuse::build {

struct CacheCounters {
  std::atomic<int64_t> compiles{0};    // compiler invocations
  std::atomic<int64_t> cache_hits{0};  // valid entries reused
  std::atomic<int64_t> rebuilds{0};    // corrupt or incomplete entries rebuilt
};

struct ArtifactRequest {
  std::string kernel_name;  // readable directory name, e.g. "fused_add_mul_sigmoid_3f2a9c1d"
  std::string source;       // the kernel's C++ source
  nlohmann::json meta;      // everything else that must enter the hash (codegen version, ISA, ...)
};

class ArtifactCache {
 public:
  // Creates the root if needed (mode 0700). Throws UserError if the root is not owned by the
  // current user or is group/other-writable: libraries are only loaded from a private cache.
  explicit ArtifactCache(std::string root);
  // $TILEFUSE_CACHE_DIR, else $XDG_CACHE_HOME/tilefuse (if absolute), else $HOME/.cache/tilefuse.
  static std::string default_root();

  const std::string& root() const { return root_; }
  std::string artifact_hash(const ArtifactRequest& request, const Toolchain& toolchain) const;
  std::string entry_dir(const ArtifactRequest& request, const Toolchain& toolchain) const;

  // Path of the entry's kernel.so: reused if valid (cache_hits), else compiled under
  // compile.lock (compiles; rebuilds too if an invalid entry was replaced).
  LibraryFile get_or_build(const ArtifactRequest& request, const Toolchain& toolchain, CacheCounters& counters) const;

 private:
  std::string root_;
};

}  // namespace tilefuse::build
