// Model packages (runtime/model_package.h) on the command line's side: compiling a model into
// one (`tilefuse compile`), running one (`tilefuse run model.tfx`), and `run --cpp-wrapper`
// (TILEFUSE_CPP_WRAPPER=1), which builds a package in the cache on the first run and runs
// through it from then on.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "api/runner.h"
#include "runtime/executable_impl.h"

namespace tilefuse::api {

// A directory holding a package manifest.
bool is_model_package(const std::string& path);

struct PackageBuild {
  double compile_ms = 0;  // planning and building the kernels
  double tune_ms = 0;     // the run on the tuning inputs, which measures the TopN candidates
  double write_ms = 0;    // the package: weights, sources, one more compile into one library
  std::map<std::string, int64_t> counters;  // the executor's (compiles, kernels_tuned, ...)
};

// Compiles `graph`, runs it once on `inputs` (every kernel with TopN candidates is measured on
// them) and writes the package to `path`.
PackageBuild build_package(const Graph& graph, const runtime::BoundInputs& inputs, Mode mode,
                           const ExecutionOptions& options, const std::string& path);

struct LoadedPackage {
  std::shared_ptr<Executable::Impl> executable;
  double load_ms = 0;
};
LoadedPackage load_package(const std::string& path, std::optional<int> threads);

// Runs a loaded package; compile_ms is its load time.
RunResult run_package(const LoadedPackage& package, const runtime::BoundInputs& inputs);

// The package for `graph` in `mode` with these options, from the cache, or built there first
// (tuned on `inputs`) when it is missing or unusable.
struct CachedPackage {
  LoadedPackage loaded;
  PackageBuild built;   // what building it did (nothing when it came from the cache)
  double build_ms = 0;  // 0: it came from the cache
};
CachedPackage cached_package(const Graph& graph, const runtime::BoundInputs& inputs, Mode mode,
                             const ExecutionOptions& options);

// cached_package(), run on `inputs`. compile_ms covers the build (if any) and the load.
RunResult run_with_cpp_wrapper(const Graph& graph, const runtime::BoundInputs& inputs, Mode mode,
                               const ExecutionOptions& options);

// TILEFUSE_CPP_WRAPPER: "1" on, "0" or unset off; anything else is a UserError.
bool cpp_wrapper_from_environment();

}  // namespace tilefuse::api
