#include "api/runner.h"

#include "api/model_packaging.h"

#include <chrono>
#include <cstdlib>

#include "build/compile_pool.h"
#include "ir/error.h"
#include "reference/interpreter.h"
#include "runtime/cpu_isa.h"
#include "tune/autotune_config.h"

namespace tilefuse::api {
namespace {

// An output the executor produced must have the type the graph promised: anything else means a
// shape-inference or executor bug, and silently writing such a tensor would hide it.
void check_output_type(const Value& declared, const Tensor& actual, const SymbolBindings& symbols) {
  auto fail = [&](const std::string& detail) {
    fail_internal("output '{}': the graph declares {}, the run produced {} ({})", declared.name,
                  declared.type_string(), actual.summary(), detail);
  };
  if (actual.dtype() != declared.dtype) fail("dtype differs");
  if (actual.rank() != declared.rank()) fail("rank differs");
  for (size_t i = 0; i < declared.shape.size(); ++i) {
    // Dims with symbols no input fixes (sizes only known after running, e.g. from data) are
    // not checkable here.
    Dim dim = declared.shape[i].substitute(symbols);
    if (dim.is_const() && dim.value() != actual.shape()[i]) fail(fmt::format("dim {} should be {}", i, dim.value()));
  }
}

}  // namespace

std::string_view mode_name(Mode mode) {
  switch (mode) {
    case Mode::reference: return "reference";
    case Mode::fused: return "fused";
    case Mode::unfused: return "unfused";
  }
  fail_internal("mode_name: bad mode");
}

std::string mode_choices() {
  std::string out;
  for (Mode mode : kAllModes) out += (out.empty() ? "" : ", ") + std::string(mode_name(mode));
  return out;
}

Mode parse_mode(std::string_view text) {
  for (Mode mode : kAllModes) {
    if (mode_name(mode) == text) return mode;
  }
  fail_user("unknown mode '{}' (valid: {})", text, mode_choices());
}

std::map<std::string, int64_t> counter_values(const driver::ExecutorCounters& c) {
  return {{"compiles", c.cache.compiles.load()},
          {"cache_hits", c.cache.cache_hits.load()},
          {"rebuilds", c.cache.rebuilds.load()},
          {"candidates_measured", c.tuning.candidates_measured.load()},
          {"kernels_tuned", c.tuning.kernels_tuned.load()},
          {"tuning_records_reused", c.tuning.records_reused.load()},
          {"tuning_records_withheld", c.tuning.records_withheld.load()},
          {"packed_weight_bytes", c.packed_weight_bytes.load()},
          {"prepared_shapes", c.prepared_shapes.load()},
          {"jit_buckets", c.jit_buckets.load()},
          {"runs", c.runs.load()},
          {"barriers", c.barriers.load()},
          {"superkernel", c.superkernel.load()},
          {"region_waits", c.region_waits.load()}};
}

driver::ExecutorOptions executor_options(Mode mode, const ExecutionOptions& options) {
  driver::ExecutorOptions out;
  out.fuse = mode == Mode::fused;
  out.device = runtime::resolve_device_limit(options.threads);
  out.compile_threads = options.compile_threads ? *options.compile_threads : build::compile_threads_from_environment();
  if (out.compile_threads < 1) fail_user("--compile-threads must be a positive integer, got {}", out.compile_threads);
  out.cache_dir = options.cache_dir;
  out.autotune_topn = tune::resolve_autotune_topn(options.autotune_topn);
  out.debug_dir = options.debug_dir;
  out.profile = options.profile;
  out.superkernel = options.superkernel;
  out.precision = options.precision;
  if (const char* env = std::getenv("TILEFUSE_DEBUG_DIR"); out.debug_dir.empty() && env != nullptr) out.debug_dir = env;
  runtime::vector_isa();  // a bad TILEFUSE_MAX_CPU_ISA fails here, before any work, not at a first GEMM
  return out;
}

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

std::vector<Tensor> run_compiled(const Graph& graph, const runtime::BoundInputs& inputs, Mode mode,
                                 const ExecutionOptions& options, RunResult& result) {
  auto start = std::chrono::steady_clock::now();
  driver::ExecutorCounters counters;
  driver::Executor executor(graph, executor_options(mode, options), counters);
  result.compile_ms = ms_since(start);
  result.compile_phases_ms = counters.compile_phases_ms;
  start = std::chrono::steady_clock::now();
  std::vector<Tensor> tensors = executor.run(inputs.by_name());
  result.elapsed_ms = ms_since(start);
  result.counters = counter_values(counters);
  result.counters["launches"] = executor.launches();
  result.superkernel = executor.superkernel_report();
  result.precision = runtime::precision_name(runtime::effective_precision(options.precision));
  return tensors;
}

void check_outputs(const Graph& graph, std::vector<Tensor>& tensors, const runtime::BoundInputs& inputs,
                   RunResult& result) {
  const auto& outputs = graph.outputs();
  if (tensors.size() != outputs.size()) {
    fail_internal("the run produced {} outputs, the graph has {}", tensors.size(), outputs.size());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    check_output_type(*outputs[i], tensors[i], inputs.symbols);
    result.outputs.push_back({outputs[i]->name, std::move(tensors[i])});
  }
}

}  // namespace

RunResult run_executable(Executable::Impl& executable, const runtime::BoundInputs& inputs) {
  RunResult result;
  std::vector<Tensor> tensors;
  const auto start = std::chrono::steady_clock::now();
  executable.run(inputs.by_name(), tensors);
  result.elapsed_ms = ms_since(start);
  result.counters = executable.counters();
  result.counters["launches"] = executable.launches();
  check_outputs(executable.graph(), tensors, inputs, result);
  return result;
}

RunResult run_model(const Graph& graph, const runtime::BoundInputs& inputs, Mode mode, const ExecutionOptions& options) {
  if (mode != Mode::reference && options.cpp_wrapper) return run_with_cpp_wrapper(graph, inputs, mode, options);
  RunResult result;
  std::vector<Tensor> tensors;
  if (mode == Mode::reference) {
    const auto start = std::chrono::steady_clock::now();
    tensors = reference::run_graph(graph, inputs.by_name());
    result.elapsed_ms = ms_since(start);
  } else {
    tensors = run_compiled(graph, inputs, mode, options, result);
  }
  check_outputs(graph, tensors, inputs, result);
  return result;
}

}  // namespace tilefuse::api
