// Writes a model package (runtime/model_package.h describes the files) from a compiled executor:
// the planned graph with its weights moved to a mapped file, every kernel as tuned, compiled
// once more into one library under names of its own, and the manifest that says what it all is.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "build/toolchain.h"
#include "driver/kernel_builder.h"
#include "fusion/fusion_plan.h"
#include "ir/graph.h"
#include "runtime/library_call.h"
#include "runtime/sgemm.h"

namespace tilefuse::driver {

// What a compiled executor hands over; everything outlives the write.
struct PackageContents {
  const Graph& graph;  // as planned (composites decomposed)
  const fusion::FusionPlan& plan;
  const std::vector<BuiltKernel>& kernels;                          // per step (empty for non-kernels)
  const std::vector<std::unique_ptr<runtime::LibraryCall>>& calls;  // per step (null for others)
  runtime::GemmBlocking default_blocking;                           // of the GEMMs that were not tuned
  const build::Toolchain& toolchain;                                // the support headers on its include path
  int device_threads = 1;
  bool fused = true;
  int compile_threads = 1;
  // Writes the package of step `step`'s If branch (then or else) to `path`: branches that
  // run as sub-models (runtime/branch_call.h) become packages inside this one.
  std::function<void(size_t step, bool then_branch, const std::string& path)> save_branch;
  runtime::Precision precision = runtime::Precision::f32;  // of the products (the packed weights' form)
};

// Writes the package to the directory `path`, replacing a package already there (never any
// other file: UserError). Built beside it and renamed into place, so a reader never sees half a
// package. A kernel still waiting for its TopN measurement goes in with its first candidate,
// unmeasured, and the log says so.
void write_package(const PackageContents& contents, const std::string& path);

}  // namespace tilefuse::driver
