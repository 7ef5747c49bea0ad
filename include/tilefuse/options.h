// How tilefuse compiles and runs a model.
#pragma once

#include <optional>
#include <string>

namespace tilefuse {

enum class Mode {
  reference,  // the op-by-op reference interpreter: slow, and the definition of a right answer
  fused,      // fused kernels, generated, compiled and cached
  unfused,    // one generated kernel per op: the baseline fusion is measured against
};

// How a model is compiled and run. Unset fields come from the TILEFUSE_* environment variables
// (TILEFUSE_NUM_THREADS, TILEFUSE_COMPILE_THREADS, TILEFUSE_AUTOTUNE_TOPN, TILEFUSE_CACHE_DIR,
// TILEFUSE_DEBUG_DIR, TILEFUSE_CPP_WRAPPER, TILEFUSE_SUPERKERNEL, TILEFUSE_PRECISION), else from
// the machine.
struct Options {
  Mode mode = Mode::fused;
  std::optional<int> threads;          // worker threads (the device limit); default: every core
  std::optional<int> compile_threads;  // compiler processes at once
  std::optional<int> autotune_topn;    // tiling candidates measured per static kernel (1: none)
  std::string cache_dir;               // compiled kernels and tuning records; default ~/.cache/tilefuse
  std::string debug_dir;               // non-empty: every generated artifact is written there
  // Run through a model package kept in the cache (Executable::save's format, with the whole
  // model in one library): built on the first run, from that run's inputs, and loaded by later
  // processes without compiling. Default: TILEFUSE_CPP_WRAPPER (0 or 1). Fused or unfused mode.
  std::optional<bool> cpp_wrapper;
  // SuperKernel: true runs every step of a run in one parallel region of the worker threads,
  // synchronised only where data demands it; false runs one fork/join per step. Default:
  // TILEFUSE_SUPERKERNEL (auto, on or off), else auto: both are measured on the first run of
  // each input shape and the faster is kept (recorded in the cache). Results are the same.
  std::optional<bool> superkernel;
  // What matrix products (MatMul, Gemm) multiply in: "f32" (exact to the model), or "bf16":
  // operands rounded to bf16 and summed in f32, twice as fast on CPUs with avx512_bf16 (elsewhere
  // f32, with a warning), within the bound the README states. Inputs, outputs and every other op
  // stay f32. Default: TILEFUSE_PRECISION, else "f32".
  std::string precision;
};

}  // namespace tilefuse
