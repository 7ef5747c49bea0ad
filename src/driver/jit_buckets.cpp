#include "driver/jit_buckets.h"

#include <algorithm>

#include "build/compile_pool.h"
#include "tiling/solver.h"

namespace tilefuse::driver {

namespace {

// The sizes the generic kernel was planned for, or smaller (where launch costs outweigh any
// tiling choice): a bucket there would compile a kernel for nothing.
bool within_planning_size(const std::vector<int64_t>& symbols) {
  return std::all_of(symbols.begin(), symbols.end(), [](int64_t v) { return v <= tiling::kJitPlanningSize; });
}

}  // namespace

JitBuckets::JitBuckets(const fusion::FusionPlan& plan, std::vector<BuiltKernel>& kernels,
                       const std::vector<std::string>& names)
    : plan_(plan), kernels_(kernels), names_(names), buckets_(plan.steps.size()) {}

std::vector<BuiltKernel*> JitBuckets::kernels_for(const std::vector<std::vector<int64_t>>& symbols,
                                                  const BuildContext& context, int compile_threads) {
  std::vector<BuiltKernel*> out(plan_.steps.size(), nullptr);
  std::vector<std::pair<size_t, tiling::ShapeBucket>> missing;
  for (size_t i = 0; i < plan_.steps.size(); ++i) {
    if (plan_.steps[i].kind != fusion::StepKind::Kernel) continue;
    if (kernels_[i].path != tiling::CompilePath::Jit || within_planning_size(symbols[i])) {
      out[i] = &kernels_[i];
      continue;
    }
    tiling::ShapeBucket bucket = tiling::shape_bucket(kernels_[i].source.symbols, symbols[i]);
    auto it = buckets_[i].find(bucket.key);
    if (it != buckets_[i].end()) {
      out[i] = &it->second;
    } else {
      missing.emplace_back(i, std::move(bucket));
    }
  }
  std::vector<BuiltKernel> built(missing.size());
  std::vector<build::CompileJob> jobs;
  for (size_t m = 0; m < missing.size(); ++m) {
    const size_t i = missing[m].first;
    const tiling::ShapeBucket& bucket = missing[m].second;
    fusion::FusedKernel named = plan_.steps[i].kernel;
    named.name = names_[i];
    jobs.push_back({named.name + " " + bucket.key, [this, &built, &context, m, i, &bucket, named] {
                      built[m] = build_jit_bucket(named, kernels_[i], bucket, context);
                    }});
  }
  build::run_compile_jobs(std::move(jobs), compile_threads);
  for (size_t m = 0; m < missing.size(); ++m) {
    const size_t i = missing[m].first;
    out[i] = &buckets_[i].emplace(missing[m].second.key, std::move(built[m])).first->second;
  }
  return out;
}

int64_t JitBuckets::size() const {
  int64_t n = 0;
  for (const auto& step : buckets_) n += static_cast<int64_t>(step.size());
  return n;
}

std::vector<TuningSummary> JitBuckets::tunings(size_t step) const {
  std::vector<TuningSummary> out;
  for (const auto& [key, kernel] : buckets_.at(step)) {
    if (kernel.tuning) out.push_back(*kernel.tuning);
  }
  return out;
}

}  // namespace tilefuse::driver
