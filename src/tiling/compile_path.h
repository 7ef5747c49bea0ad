// The one decision every compile path (synchronous or parallel, executor or tools) takes per
// kernel: which of the three ways it is built.
//   Jit         some dim is symbolic: one generic kernel whose tiling is computed at launch.
//   StaticOne   static shapes, TopN == 1: the model's best tiling, baked in, no measurement.
//   StaticTopN  static shapes, TopN > 1: each candidate its own static kernel, measured (PGO).
#pragma once

#include <string_view>

#include "fusion/fusion_plan.h"

namespace tilefuse::tiling {

enum class CompilePath { Jit, StaticOne, StaticTopN };

CompilePath decide_compile_path(const fusion::FusedKernel& kernel, int topn);
std::string_view compile_path_name(CompilePath path);

}  // namespace tilefuse::tiling
