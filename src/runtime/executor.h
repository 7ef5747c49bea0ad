// The executor runs a graph the fused (or unfused) way: it plans fusion, generates a C++ kernel
// per fused group, gets each compiled through the on-disk cache (in parallel), loads the
// libraries, and then runs the plan step by step: generated kernels on the thread team, MatMul/
// Gemm through the BLAS, views as aliases, anything else through the reference kernels.
// Intermediates live in one arena planned by liveness, prepared once per set of input shapes.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "build/artifact_cache.h"
#include "fusion/fusion_plan.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "runtime/device_limit.h"

namespace tilefuse::runtime {

struct ExecutorOptions {
  bool fuse = true;             // false: one generated kernel per op (the `unfused` baseline)
  DeviceLimit device;           // worker threads
  std::string cache_dir;        // empty: build::ArtifactCache::default_root()
  int compile_threads = 1;
};

struct ExecutorCounters {
  build::CacheCounters cache;
  std::atomic<int64_t> runs{0};
};

class Executor {
 public:
  // Takes its own copy of `graph` (composites are decomposed in it). Compiles every kernel
  // before returning. Throws UserError on a compile failure.
  Executor(const Graph& graph, const ExecutorOptions& options, ExecutorCounters& counters);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Runs with inputs by graph input name (already validated against the graph's types).
  // `outputs` are reused when their types already fit, else reallocated; after the first run
  // with given shapes, nothing is allocated.
  void run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>& outputs);
  std::vector<Tensor> run(const std::map<std::string, Tensor>& inputs);

  const fusion::FusionPlan& plan() const;
  // Launches per inference: kernels, library calls and host ops (views are free).
  int64_t launches() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tilefuse::runtime
