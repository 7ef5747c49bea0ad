#include "driver/kernel_builder.h"

#include <algorithm>

#include "build/hashing.h"
#include "codegen/support_headers.h"
#include "driver/debug_dump.h"
#include "ir/log.h"
#include "tiling/cost_model.h"
#include "tiling/solver.h"
#include "tune/tuning_record.h"

namespace tilefuse::driver {

namespace {

// Elements per column tile of a jit elementwise kernel: 32 KiB of f32 per tensor.
constexpr int64_t kJitColumnTile = 8192;

std::string short_hash(const std::string& text) { return build::sha256_hex(text).substr(0, 8); }

nlohmann::json common_meta(const BuildContext& c, tiling::CompilePath path) {
  return {{"codegen_version", codegen::kCodegenVersion},
          {"support_headers", c.header_fingerprint},
          {"path", std::string(tiling::compile_path_name(path))}};
}

// What of a tiling a jit kernel bakes in: the column tile, the store kind and the prefetch
// distance; the block split is decided at launch.
tiling::KernelTiling as_jit(tiling::KernelTiling t) {
  t.units_per_block = 1, t.block_dim = 1;
  // A whole-row tile suits the planned size, but a flat elementwise row grows with the symbols
  // and would become one unit for one worker. (Row kernels ignore the column tile.)
  if (t.column_tile == 0) t.column_tile = kJitColumnTile;
  return t;
}

// A jit kernel planned with non-temporal stores uses them only where a run's outputs outgrow
// the caches: the generic kernel is planned at kJitPlanningSize, far larger than many runs (a
// batch of 8 over 8 MiB stored past an L3 that held it ran the next kernel from memory).
int64_t jit_stream_above_bytes(const BuildContext& c) { return tiling::cache_budget_bytes(c.hardware); }

// The jit path: one generic kernel for every shape and every device limit, planned at
// kJitPlanningSize for all of the machine's cores.
BuiltKernel build_jit(const fusion::FusedKernel& kernel, const BuildContext& c) {
  BuiltKernel out;
  out.path = tiling::CompilePath::Jit;
  const auto planned = tiling::top_candidates(kernel, c.hardware, c.hardware.cores, 1);
  out.jit_tiling = as_jit(planned.empty() ? tiling::KernelTiling{} : planned.front().tiling);
  out.source = codegen::emit_kernel(kernel, out.jit_tiling, codegen::KernelVariant::Jit, jit_stream_above_bytes(c));
  out.tiling_repr = "jit";
  build::ArtifactRequest request{kernel.name + "_" + short_hash(out.source.code), out.source.code,
                                 common_meta(c, out.path)};
  const build::LibraryFile file = c.cache.get_or_build(request, c.toolchain, c.cache_counters);
  out.library = runtime::KernelLibrary::load(file.path, build::sha256_matches(file.sha256, file.path));
  return out;
}

// The tuned entry of a kernel: its tiling-free identity plus the device limit, and for a jit
// kernel's bucket the bucket's key (each bucket has its own optimize_tiling).
std::unique_ptr<build::StaticKernelStore> tuned_store(const fusion::FusedKernel& kernel, const BuildContext& c,
                                                      const tiling::ShapeBucket* bucket) {
  const std::string identity = codegen::emit_kernel(kernel, tiling::KernelTiling{}, codegen::KernelVariant::Jit).code;
  nlohmann::json meta = common_meta(c, bucket ? tiling::CompilePath::Jit : tiling::CompilePath::StaticOne);
  meta["device_limit"] = c.device_limit;
  if (bucket) meta["shape_bucket"] = bucket->key;
  if (kernel.row_by_row) meta["row_by_row"] = true;  // its own tilings (tiling_space.h), so its own winner
  build::ArtifactRequest request{kernel.name + "_" + short_hash(identity), identity, meta};
  return std::make_unique<build::StaticKernelStore>(c.cache, std::move(request), c.toolchain);
}

std::shared_ptr<runtime::KernelLibrary> build_candidate(const fusion::FusedKernel& kernel,
                                                        const tiling::TilingCandidate& cand, tiling::CompilePath path,
                                                        const build::StaticKernelStore& store, const BuildContext& c,
                                                        codegen::KernelSource* source_out) {
  const auto variant = path == tiling::CompilePath::Jit ? codegen::KernelVariant::Jit : codegen::KernelVariant::Static;
  const int64_t stream_above = path == tiling::CompilePath::Jit ? jit_stream_above_bytes(c) : 0;
  codegen::KernelSource source = codegen::emit_kernel(kernel, cand.tiling, variant, stream_above);
  const std::string key = tune::kernel_key(cand);
  const build::LibraryFile file = store.get_or_build(key, source.code, c.cache_counters);
  if (!c.debug_dir.empty())
    dump_candidate_source(c.debug_dir, kernel.name, key, source, c.toolchain.include_dirs.back());
  if (source_out) *source_out = std::move(source);
  return runtime::KernelLibrary::load(file.path, build::sha256_matches(file.sha256, file.path));
}

// A jit bucket whose winner is what the generic kernel has baked in runs the generic library.
void use_winner(BuiltKernel& out, const fusion::FusedKernel& kernel, const tiling::TilingCandidate& winner,
                const BuildContext& c, const BuiltKernel* generic) {
  if (generic && winner.tiling == generic->jit_tiling) {
    out.library = generic->library;
    out.source = generic->source;
  } else {
    out.library = build_candidate(kernel, winner, out.path, *out.store, c, &out.source);
  }
  out.block_dim = launch_block_dim(out.path, winner.tiling);
  out.tiling_repr = winner.tiling.repr();
}

// The model's candidates: a static kernel's at its shapes; a jit bucket's at the bucket's sizes,
// as jit tilings, distinct (tilings that differ only in the block split are one jit kernel).
std::vector<tiling::TilingCandidate> candidates_for(const fusion::FusedKernel& kernel, const BuildContext& c,
                                                    int wanted, const tiling::ShapeBucket* bucket) {
  if (!bucket) return tiling::top_candidates(kernel, c.hardware, c.device_limit, wanted);
  std::vector<tiling::TilingCandidate> out;
  for (tiling::TilingCandidate cand : tiling::top_candidates(kernel, c.hardware, c.device_limit, 0, bucket->sizes)) {
    cand.tiling = as_jit(cand.tiling);
    const bool seen = std::any_of(out.begin(), out.end(), [&](const auto& o) { return o.tiling == cand.tiling; });
    if (!seen) out.push_back(std::move(cand));
    if (static_cast<int>(out.size()) == wanted) break;
  }
  return out;
}

// The TopN flow of a static kernel, or of a jit kernel's bucket (`generic` and `bucket` set).
BuiltKernel build_tuned(const fusion::FusedKernel& kernel, tiling::CompilePath path, const BuildContext& c,
                        const BuiltKernel* generic = nullptr, const tiling::ShapeBucket* bucket = nullptr) {
  BuiltKernel out;
  out.path = path;
  out.store = tuned_store(kernel, c, bucket);
  if (generic) out.jit_tiling = generic->jit_tiling;
  auto lock = out.store->lock();
  const bool measuring = c.topn > 1 && path != tiling::CompilePath::StaticOne;
  // A valid record is the whole answer: no candidates, no tiling computation, no measurement.
  const auto record = tune::read_tuning_record(out.store->optimize_tiling_path());
  if (record && (record->topn >= c.topn || !measuring)) {
    ++c.tuning_counters.records_reused;
    use_winner(out, kernel, record->winner, c, generic);
    return out;
  }
  out.candidates = candidates_for(kernel, c, measuring ? c.topn : 1, bucket);
  if (out.candidates.empty()) fail_user("kernel {} get topn failed: the tiling space is empty", kernel.name);
  if (!c.debug_dir.empty() && !bucket) dump_tiling(c.debug_dir, kernel, out.candidates);
  if (out.candidates.size() == 1) {  // nothing to choose between: the model's choice is final
    use_winner(out, kernel, out.candidates.front(), c, generic);
    tune::write_tuning_record(out.store->optimize_tiling_path(), {out.candidates.front(), c.topn});
    out.candidates.clear();
    return out;
  }
  for (const auto& cand : out.candidates) {
    out.candidate_libraries.push_back(build_candidate(kernel, cand, path, *out.store, c, &out.source));
  }
  return out;
}

}  // namespace

BuiltKernel build_kernel(const fusion::FusedKernel& kernel, const BuildContext& context) {
  const tiling::CompilePath path = tiling::decide_compile_path(kernel, context.topn);
  logger().debug("kernel {}: {} path", kernel.name, tiling::compile_path_name(path));
  if (path == tiling::CompilePath::Jit) return build_jit(kernel, context);
  return build_tuned(kernel, path, context);
}

BuiltKernel build_jit_bucket(const fusion::FusedKernel& kernel, const BuiltKernel& generic,
                             const tiling::ShapeBucket& bucket, const BuildContext& context) {
  logger().debug("kernel {}: jit bucket {}", kernel.name, bucket.key);
  return build_tuned(kernel, tiling::CompilePath::Jit, context, &generic, &bucket);
}

int launch_block_dim(tiling::CompilePath path, const tiling::KernelTiling& tiling) {
  return path == tiling::CompilePath::Jit ? 0 : static_cast<int>(tiling.block_dim);
}

}  // namespace tilefuse::driver
