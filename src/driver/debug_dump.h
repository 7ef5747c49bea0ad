// TILEFUSE_DEBUG_DIR: every generated artifact of a static kernel, for a person to read, rebuild
// and time by hand. Per kernel, under <debug dir>/<kernel name>/:
//   tiling.txt            the kernel's profile and each TopN candidate with the cost model's estimate
//   launch_map.cpp        the kernel -> tiling map launches use (kernel_key, tiling, block_dim)
//   <kernel_key>.cpp      each candidate's kernel source
//   bench_<kernel_key>.cpp  a standalone program that compiles with that source and times it alone
//   tuning.json           predicted and measured time per candidate, and the winner (after PGO)
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel_emitter.h"
#include "fusion/fusion_plan.h"
#include "tiling/kernel_tiling.h"
#include "tune/autotuner.h"

namespace tilefuse::driver {

void dump_tiling(const std::string& debug_dir, const fusion::FusedKernel& kernel,
                 const std::vector<tiling::TilingCandidate>& candidates);
void dump_candidate_source(const std::string& debug_dir, const std::string& kernel_name, const std::string& kernel_key,
                           const codegen::KernelSource& source, const std::string& include_dir);
void dump_tuning_result(const std::string& debug_dir, const std::string& kernel_name,
                        const std::vector<tiling::TilingCandidate>& candidates, const tune::AutotuneResult& result);

}  // namespace tilefuse::driver
