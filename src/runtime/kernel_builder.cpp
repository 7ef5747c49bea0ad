#include "runtime/kernel_builder.h"

#include <spdlog/spdlog.h>

#include "build/hashing.h"
#include "codegen/support_headers.h"
#include "runtime/debug_dump.h"
#include "tiling/solver.h"
#include "tune/tuning_record.h"

namespace tilefuse::runtime {

namespace {

// Elements per column tile of a jit elementwise kernel: 32 KiB of f32 per tensor.
constexpr int64_t kJitColumnTile = 8192;

std::string short_hash(const std::string& text) { return build::sha256_hex(text).substr(0, 8); }

nlohmann::json common_meta(const BuildContext& c, tiling::CompilePath path) {
  return {{"codegen_version", codegen::kCodegenVersion},
          {"support_headers", c.header_fingerprint},
          {"path", std::string(tiling::compile_path_name(path))}};
}

// The jit path: one generic kernel for every shape and every device limit. Only the column
// tile, the store kind and the prefetch distance are baked in (planned at kJitPlanningSize for
// all of the machine's cores); the block split is made at launch.
BuiltKernel build_jit(const fusion::FusedKernel& kernel, const BuildContext& c) {
  BuiltKernel out;
  out.path = tiling::CompilePath::Jit;
  const auto planned = tiling::top_candidates(kernel, c.hardware, c.hardware.cores, 1);
  tiling::KernelTiling t = planned.empty() ? tiling::KernelTiling{} : planned.front().tiling;
  t.units_per_block = 1, t.block_dim = 1;  // decided at launch
  // A whole-row tile suits the planning size, but a flat elementwise row grows with the symbols
  // and would become one unit for one worker. (Row kernels ignore the column tile.)
  if (t.column_tile == 0) t.column_tile = kJitColumnTile;
  out.source = codegen::emit_kernel(kernel, t, codegen::KernelVariant::Jit);
  out.tiling_repr = "jit";
  build::ArtifactRequest request{kernel.name + "_" + short_hash(out.source.code), out.source.code,
                                 common_meta(c, out.path)};
  const build::LibraryFile file = c.cache.get_or_build(request, c.toolchain, c.cache_counters);
  out.library = KernelLibrary::load(file.path, file.sha256);
  return out;
}

// The static entry of a kernel: its tiling-free identity plus the device limit.
std::unique_ptr<build::StaticKernelStore> static_store(const fusion::FusedKernel& kernel, const BuildContext& c) {
  const std::string identity = codegen::emit_kernel(kernel, tiling::KernelTiling{}, codegen::KernelVariant::Jit).code;
  nlohmann::json meta = common_meta(c, tiling::CompilePath::StaticOne);
  meta["device_limit"] = c.device_limit;
  build::ArtifactRequest request{kernel.name + "_" + short_hash(identity), identity, meta};
  return std::make_unique<build::StaticKernelStore>(c.cache, std::move(request), c.toolchain);
}

std::shared_ptr<KernelLibrary> build_candidate(const fusion::FusedKernel& kernel, const tiling::TilingCandidate& cand,
                                               const build::StaticKernelStore& store, const BuildContext& c,
                                               codegen::KernelSource* source_out) {
  codegen::KernelSource source = codegen::emit_kernel(kernel, cand.tiling, codegen::KernelVariant::Static);
  const std::string key = tune::kernel_key(cand);
  const build::LibraryFile file = store.get_or_build(key, source.code, c.cache_counters);
  if (!c.debug_dir.empty()) dump_candidate_source(c.debug_dir, kernel.name, key, source, c.toolchain.include_dirs.back());
  if (source_out) *source_out = std::move(source);
  return KernelLibrary::load(file.path, file.sha256);
}

void use_winner(BuiltKernel& out, const fusion::FusedKernel& kernel, const tiling::TilingCandidate& winner,
                const BuildContext& c) {
  out.library = build_candidate(kernel, winner, *out.store, c, &out.source);
  out.block_dim = static_cast<int>(winner.tiling.block_dim);
  out.tiling_repr = winner.tiling.repr();
}

BuiltKernel build_static(const fusion::FusedKernel& kernel, tiling::CompilePath path, const BuildContext& c) {
  BuiltKernel out;
  out.path = path;
  out.store = static_store(kernel, c);
  auto lock = out.store->lock();
  // A valid record is the whole answer: no candidates, no tiling computation, no measurement.
  const auto record = tune::read_tuning_record(out.store->optimize_tiling_path());
  if (record && (record->topn >= c.topn || path == tiling::CompilePath::StaticOne)) {
    ++c.tuning_counters.records_reused;
    use_winner(out, kernel, record->winner, c);
    return out;
  }
  const int wanted = path == tiling::CompilePath::StaticTopN ? c.topn : 1;
  out.candidates = tiling::top_candidates(kernel, c.hardware, c.device_limit, wanted);
  if (out.candidates.empty()) fail_user("kernel {} get topn failed: the tiling space is empty", kernel.name);
  if (!c.debug_dir.empty()) dump_tiling(c.debug_dir, kernel, out.candidates);
  if (out.candidates.size() == 1) {  // nothing to choose between: the model's choice is final
    use_winner(out, kernel, out.candidates.front(), c);
    tune::write_tuning_record(out.store->optimize_tiling_path(), {out.candidates.front(), c.topn});
    out.candidates.clear();
    return out;
  }
  for (const auto& cand : out.candidates) {
    out.candidate_libraries.push_back(build_candidate(kernel, cand, *out.store, c, &out.source));
  }
  return out;
}

}  // namespace

BuiltKernel build_kernel(const fusion::FusedKernel& kernel, const BuildContext& context) {
  const tiling::CompilePath path = tiling::decide_compile_path(kernel, context.topn);
  spdlog::debug("kernel {}: {} path", kernel.name, tiling::compile_path_name(path));
  if (path == tiling::CompilePath::Jit) return build_jit(kernel, context);
  return build_static(kernel, path, context);
}

}  // namespace tilefuse::runtime
