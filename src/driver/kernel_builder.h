// Builds the library each kernel step launches, by the path tiling::decide_compile_path picks:
//   jit          one generic kernel (block split at launch), shared by every device limit, and
//                per shape bucket (tiling/shape_bucket.h) a kernel of the same source with the
//                column tile, store kind and prefetch chosen at the bucket's sizes, by the cost
//                model (TopN == 1) or by measuring TopN candidates on the first run in the bucket;
//                its optimize_tiling is recorded under the bucket's key like a static kernel's;
//   static       a valid optimize_tiling: its winner's static kernel, nothing else, no tiling work;
//                TopN == 1: the cost model's best candidate, recorded in optimize_tiling unmeasured;
//                TopN > 1: every candidate its own static kernel, loaded and left for tune_kernel()
//                to measure on the first real inputs.
// A static kernel is one compile task (its candidates are built one after another under the
// entry's compile.lock); independent kernels are built in parallel by the caller.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "build/artifact_cache.h"
#include "build/static_kernel_store.h"
#include "codegen/kernel_emitter.h"
#include "driver/candidate_bench.h"
#include "runtime/kernel_library.h"
#include "runtime/step_runner.h"
#include "tiling/compile_path.h"
#include "tiling/hardware_model.h"
#include "tiling/shape_bucket.h"
#include "tune/autotuner.h"

namespace tilefuse::driver {

struct TuningCounters {
  std::atomic<int64_t> candidates_measured{0};  // candidates timed by PGO
  std::atomic<int64_t> kernels_tuned{0};        // kernels whose winner this process measured
  std::atomic<int64_t> records_reused{0};       // kernels whose optimize_tiling was already valid
  // Winners measured while other processes held the cores (runtime/cpu_wait.h): used by this
  // process, not recorded, so the next process measures them again.
  std::atomic<int64_t> records_withheld{0};
};

struct BuildContext {
  const build::ArtifactCache& cache;
  const build::Toolchain& toolchain;
  std::string header_fingerprint;  // of the support headers the kernels include
  const tiling::HardwareModel& hardware;
  int device_limit = 1;
  int topn = 1;
  std::string debug_dir;  // TILEFUSE_DEBUG_DIR; empty: no dumps
  build::CacheCounters& cache_counters;
  TuningCounters& tuning_counters;
};

// What tuning a kernel found: its candidates (model order) and their measurements.
struct TuningSummary {
  std::string kernel;
  std::vector<tiling::TilingCandidate> candidates;
  tune::AutotuneResult result;
};

// What runs (runtime::StepKernel: the library, null while TopN candidates await tuning; the
// candidates' libraries; block_dim, 0 for jit) and what it was built from.
struct BuiltKernel : runtime::StepKernel {
  codegen::KernelSource source;  // buffers and symbols (the same for every variant)
  tiling::CompilePath path = tiling::CompilePath::Jit;
  std::string tiling_repr;                          // of what runs ("jit": the generic kernel)
  tiling::KernelTiling jit_tiling;                  // jit: what the generic kernel has baked in
  // Static kernels: the cache entry; TopN before tuning: the candidates and their libraries.
  std::unique_ptr<build::StaticKernelStore> store;
  std::vector<tiling::TilingCandidate> candidates;
  std::optional<TuningSummary> tuning;  // set by tune_kernel when this process measured
};

// `kernel` is named structurally (no model-specific index). Thread-safe for distinct kernels.
BuiltKernel build_kernel(const fusion::FusedKernel& kernel, const BuildContext& context);

// The jit kernel `generic` (from build_kernel) specialised to `bucket`. Shares the generic
// library when the bucket's tiling is the one it has baked in; compiles nothing when the
// bucket's optimize_tiling names a winner. Thread-safe for distinct kernels or buckets.
BuiltKernel build_jit_bucket(const fusion::FusedKernel& kernel, const BuiltKernel& generic,
                             const tiling::ShapeBucket& bucket, const BuildContext& context);

// Workers a launch of a kernel of `path` with `tiling` uses: a jit kernel always runs on every
// worker (0), a static one on its tiling's block_dim.
int launch_block_dim(tiling::CompilePath path, const tiling::KernelTiling& tiling);

// Measures the candidates on `launch` (the kernel's buffers for the first real run), unless another
// process finished tuning meanwhile, records the winner in optimize_tiling and keeps only its
// library. Holds the entry's compile.lock throughout.
void tune_kernel(BuiltKernel& kernel, const KernelLaunch& launch, const BuildContext& context);

}  // namespace tilefuse::driver
