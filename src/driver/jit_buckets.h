// A plan's jit kernels specialised per shape bucket (tiling/shape_bucket.h): which library a
// kernel step runs at given symbol values. A bucket's kernel is built on the bucket's first sight
// (all of a new shape's buckets in parallel, through build_jit_bucket) and kept for the
// executor's life; there are at most a few dozen buckets per kernel (powers of two). Sizes up to
// the planning size run the generic kernel, which was planned for them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fusion/fusion_plan.h"
#include "driver/kernel_builder.h"

namespace tilefuse::driver {

class JitBuckets {
 public:
  // `kernels`: per step of `plan`, the kernels as build_kernel made them (empty for other steps);
  // `names`: per step, the structural name a kernel is built under. Both outlive this object.
  JitBuckets(const fusion::FusionPlan& plan, std::vector<BuiltKernel>& kernels, const std::vector<std::string>& names);

  // Per step, the kernel that runs at `symbols` (per step, the values of its kernel's symbols);
  // null for steps that are not kernels. Builds the buckets not seen before.
  std::vector<BuiltKernel*> kernels_for(const std::vector<std::vector<int64_t>>& symbols, const BuildContext& context,
                                        int compile_threads);

  // Bucket kernels held, over all steps.
  int64_t size() const;

  // The tuning summaries of step `step`'s buckets, by bucket key.
  std::vector<TuningSummary> tunings(size_t step) const;

 private:
  const fusion::FusionPlan& plan_;
  std::vector<BuiltKernel>& kernels_;
  const std::vector<std::string>& names_;
  std::vector<std::map<std::string, BuiltKernel>> buckets_;  // per step, by bucket key
};

}  // namespace tilefuse::driver
