#include "execution_flags.h"

#include "api/model_packaging.h"
#include "ir/memory_budget.h"
#include "tune/autotune_config.h"

namespace tilefuse::cli {

void add_execution_flags(CLI::App* sub, ExecutionFlags& flags) {
  sub->add_option("--threads", flags.threads, "Worker threads (device limit); default TILEFUSE_NUM_THREADS or all cores");
  sub->add_option("--compile-threads", flags.compile_threads,
                  "Parallel kernel compiles; default TILEFUSE_COMPILE_THREADS or all cores (1 = synchronous)");
  sub->add_option("--cache-dir", flags.cache_dir, "Kernel cache; default TILEFUSE_CACHE_DIR, else $XDG_CACHE_HOME/tilefuse or ~/.cache/tilefuse");
  sub->add_option("--topn", flags.topn,
                  "Tiling candidates measured per static kernel on the first run (1-10); default TILEFUSE_AUTOTUNE_TOPN or 1");
  sub->add_option("--debug-dir", flags.debug_dir,
                  "Dump every generated artifact (tiling, candidate sources, standalone benchmarks) here; default "
                  "TILEFUSE_DEBUG_DIR");
  sub->add_option("--max-memory", flags.max_memory,
                  "Memory cap for the model's tensors, arena and outputs, e.g. 8G or 512MiB; default "
                  "TILEFUSE_MAX_MEMORY or the machine's physical memory");
  sub->add_flag("--cpp-wrapper", flags.cpp_wrapper,
                "Run through the whole-model package (built in the cache on the first run) instead of the "
                "interpreted executor; default TILEFUSE_CPP_WRAPPER=1");
  sub->add_option("--superkernel", flags.superkernel,
                  "on: every step of a run in one parallel region, synchronised only where data demands it; off: "
                  "one fork/join per step; auto: the faster, measured on the first run (recorded in the cache); "
                  "default TILEFUSE_SUPERKERNEL or auto")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  sub->add_option("--precision", flags.precision,
                  "f32: products exact to the model; bf16: MatMul, Gemm and engine convolutions multiply operands rounded to bf16 and sum "
                  "in f32 (twice as fast with avx512_bf16; the README states the error bound); default "
                  "TILEFUSE_PRECISION or f32");
}

api::ExecutionOptions execution_options(const ExecutionFlags& flags) {
  if (!flags.max_memory.empty()) {
    set_max_memory(parse_memory_size(flags.max_memory, "--max-memory"));
  } else {
    max_memory();  // validates TILEFUSE_MAX_MEMORY now, before any other work
  }
  return {.threads = flags.threads,
          .compile_threads = flags.compile_threads,
          .autotune_topn = tune::resolve_autotune_topn(flags.topn),
          .cache_dir = flags.cache_dir,
          .debug_dir = flags.debug_dir,
          .cpp_wrapper = flags.cpp_wrapper || api::cpp_wrapper_from_environment(),
          .superkernel = flags.superkernel.empty()
                             ? runtime::superkernel_mode_from_environment()
                             : runtime::parse_superkernel_mode(flags.superkernel, "--superkernel"),
          .precision = flags.precision.empty() ? runtime::precision_from_environment()
                                               : runtime::parse_precision(flags.precision, "--precision")};
}

}  // namespace tilefuse::cli
