// tune_kernel(): the first-run half of the static TopN path (see kernel_builder.h).

#include "driver/debug_dump.h"
#include "driver/kernel_builder.h"
#include "ir/log.h"
#include "runtime/cpu_wait.h"
#include "tune/tuning_record.h"

namespace tilefuse::driver {

namespace {

// Adopts candidate `index` as the kernel's library and drops (unloads) the others.
void keep_only(BuiltKernel& k, size_t index) {
  k.library = k.candidate_libraries.at(index);
  k.block_dim = launch_block_dim(k.path, k.candidates.at(index).tiling);
  k.tiling_repr = k.candidates.at(index).tiling.repr();
  k.candidate_libraries.clear();
  k.candidates.clear();
}

// The candidate another process recorded, if it is one of ours (same model, same TopN ranking).
std::optional<size_t> recorded_candidate(const BuiltKernel& k, const tune::TuningRecord& record) {
  for (size_t i = 0; i < k.candidates.size(); ++i) {
    if (k.candidates[i].record() == record.winner.record()) return i;
  }
  return std::nullopt;
}

}  // namespace

void tune_kernel(BuiltKernel& k, const KernelLaunch& launch, const BuildContext& c) {
  auto lock = k.store->lock();
  if (auto record = tune::read_tuning_record(k.store->optimize_tiling_path()); record && record->topn >= c.topn) {
    if (auto index = recorded_candidate(k, *record)) {
      logger().info("kernel {}: tuned by another process meanwhile, using {}", k.store->kernel_name(),
                   record->winner.tiling.repr());
      ++c.tuning_counters.records_reused;
      keep_only(k, *index);
      return;
    }
  }
  std::vector<LaunchCandidate> candidates;
  for (size_t i = 0; i < k.candidates.size(); ++i) {
    candidates.push_back({k.candidate_libraries[i], launch_block_dim(k.path, k.candidates[i].tiling)});
  }
  LaunchCandidateBench bench(std::move(candidates), launch);
  logger().info("Autotune {}: measuring {} candidates", k.store->kernel_name(), k.candidates.size());
  const tune::AutotuneResult result = tune::autotune(k.store->kernel_name(), k.store->dir(), bench);
  for (const auto& r : result.candidates) c.tuning_counters.candidates_measured += r.measured ? 1 : 0;
  ++c.tuning_counters.kernels_tuned;
  const auto best = static_cast<size_t>(result.best);
  if (runtime::may_record(result.cpu_waiting_share, "kernel " + k.store->kernel_name() + "'s TopN winner")) {
    tune::write_tuning_record(k.store->optimize_tiling_path(), {k.candidates[best], c.topn});
  } else {
    ++c.tuning_counters.records_withheld;
  }
  if (!c.debug_dir.empty()) dump_tuning_result(c.debug_dir, k.store->kernel_name(), k.candidates, result);
  k.tuning = TuningSummary{k.store->kernel_name(), k.candidates, result};
  keep_only(k, best);
}

}  // namespace tilefuse::driver
