// Running a model on bound inputs in one of the execution modes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/input_binding.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "driver/executor.h"
#include "runtime/executable_impl.h"
#include "tilefuse/options.h"

namespace tilefuse::api {

using Mode = tilefuse::Mode;
inline constexpr Mode kAllModes[] = {Mode::reference, Mode::fused, Mode::unfused};

std::string_view mode_name(Mode mode);
// "reference, fused, unfused": for help texts and error messages.
std::string mode_choices();
// Throws UserError naming the text and the valid modes.
Mode parse_mode(std::string_view text);

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

// How fused/unfused modes compile and run; unset fields come from the environment
// (TILEFUSE_NUM_THREADS, TILEFUSE_COMPILE_THREADS, TILEFUSE_CACHE_DIR, TILEFUSE_AUTOTUNE_TOPN,
// TILEFUSE_DEBUG_DIR), read and validated once here.
struct ExecutionOptions {
  std::optional<int> threads;          // the device limit: worker threads
  std::optional<int> compile_threads;
  std::optional<int> autotune_topn;    // tiling candidates measured per static kernel
  std::string cache_dir;
  std::string debug_dir;
  runtime::StepProfile* profile = nullptr;  // non-null: fused/unfused runs record every step (the profiler)
  // Fused/unfused: run through the whole-model package (api/model_packaging.h), built in the
  // cache on the first run, instead of the executor; the results are the same.
  bool cpp_wrapper = false;
  runtime::SuperKernelMode superkernel = runtime::SuperKernelMode::automatic;
  runtime::Precision precision = runtime::Precision::f32;  // of MatMul and Gemm (runtime/precision.h)
};

struct RunResult {
  std::vector<NamedTensor> outputs;  // in the graph's output order
  double elapsed_ms = 0;             // execution only (with the first run's tuning, if any), not compiling
  double compile_ms = 0;             // planning, code generation, compiling or cache lookups
  std::map<std::string, double> compile_phases_ms;  // compile_ms by phase (driver::ExecutorCounters)
  // Events of the run by name (compiles, cache hits, ...); empty in reference mode.
  std::map<std::string, int64_t> counters;
  // The SuperKernel's choice and schedule (runs of the executor; a package's runs leave it empty).
  std::optional<runtime::SuperKernelReport> superkernel;
  // What MatMul and Gemm multiplied in: "f32", or "bf16" where it was asked for and the CPU has it.
  std::string precision = "f32";
};

// Every output is checked against the type the graph declares for it (with the input symbols
// bound); a disagreement is an InternalError.
RunResult run_model(const Graph& graph, const runtime::BoundInputs& inputs, Mode mode, const ExecutionOptions& options = {});

// Runs an executable on `inputs`, timed (elapsed_ms) and its outputs checked as run_model's are;
// counters are the executable's.
RunResult run_executable(Executable::Impl& executable, const runtime::BoundInputs& inputs);

// The executor's counters by name: compiles, cache_hits, ..., runs (RunResult::counters, --json).
std::map<std::string, int64_t> counter_values(const driver::ExecutorCounters& counters);

// The executor options a fused/unfused run uses, environment applied and validated.
driver::ExecutorOptions executor_options(Mode mode, const ExecutionOptions& options);

}  // namespace tilefuse::api
