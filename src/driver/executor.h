// The executor runs a graph the fused (or unfused) way: it plans fusion, generates a C++ kernel
// per fused group, gets each compiled through the on-disk cache (in parallel; static kernels with
// their TopN tiling candidates, see kernel_builder.h), loads the libraries and prepares the
// library calls (packed weights). Running is runtime::StepRunner's (runtime/step_runner.h): step
// by step on the thread team, one context per concurrent run of a shape. The first run tunes
// the kernels that still have candidates to choose from, on that run's real data.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "build/artifact_cache.h"
#include "fusion/fusion_plan.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "runtime/device_limit.h"
#include "runtime/precision.h"
#include "driver/kernel_builder.h"
#include "runtime/step_profile.h"
#include "runtime/step_runner.h"
#include "tiling/hardware_model.h"

namespace tilefuse::driver {

struct ExecutorOptions {
  bool fuse = true;             // false: one generated kernel per op (the `unfused` baseline)
  runtime::DeviceLimit device;  // worker threads
  std::string cache_dir;        // empty: build::ArtifactCache::default_root()
  int compile_threads = 1;
  int autotune_topn = 1;                          // tiling candidates measured per static kernel (1: no measurement)
  std::optional<tiling::HardwareModel> hardware;  // empty: detected and calibrated (cached per machine)
  std::string debug_dir;                          // non-empty: dump every generated artifact there (TILEFUSE_DEBUG_DIR)
  runtime::StepProfile* profile = nullptr;        // non-null: every run records each step's time per worker there
  // Shapes (symbol bindings) whose arena and launch data are kept; the least recently run is
  // dropped beyond this, so a model fed ever new sequence lengths does not grow without end.
  size_t max_prepared_shapes = 16;
  // One parallel region per run, one fork/join per step, or the faster of the two as measured on
  // a shape's first tuned run (recorded in the cache: driver/superkernel_record.h).
  runtime::SuperKernelMode superkernel = runtime::SuperKernelMode::automatic;
  double superkernel_floor_ns = runtime::kDefaultParallelFloorNs;  // with `on` (runtime::RunOptions)
  // What MatMul and Gemm multiply in (runtime/precision.h); a package records it.
  runtime::Precision precision = runtime::Precision::f32;
};

struct ExecutorCounters : runtime::RunCounters {  // runs, prepared_shapes, evicted_shapes
  build::CacheCounters cache;
  TuningCounters tuning;
  std::atomic<int64_t> packed_weight_bytes{0};  // weights packed for the GEMM engine when prepared
  std::atomic<int64_t> jit_buckets{0};          // jit kernels specialised to a shape bucket (kept for good)
  // Wall milliseconds of building the executor, by phase: plan, support_headers (with the
  // precompiled header, once per cache), calibration (once per cache), kernels (compiles and cache
  // lookups), library_calls (weight packing, GEMM blocking tuning).
  std::map<std::string, double> compile_phases_ms;
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
  // with given shapes, nothing is allocated. An output tensor whose memory overlaps an input or
  // another output is replaced by a tensor of its own (never written in place).
  void run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>& outputs);
  std::vector<Tensor> run(const std::map<std::string, Tensor>& inputs);

  // Writes the executor's model as a package (driver/package_writer.h): run it first on
  // representative inputs, so that its kernels' TopN candidates are measured.
  void save_package(const std::string& path) const;

  const fusion::FusionPlan& plan() const;
  // Launches per inference: kernels, library calls and host ops (views are free).
  int64_t launches() const;
  // How the shape run last went through the SuperKernel (runtime/step_runner.h).
  runtime::SuperKernelReport superkernel_report() const;
  // The kernels this executor measured (on its first run), in plan order.
  std::vector<TuningSummary> tuning_summaries() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tilefuse::driver
