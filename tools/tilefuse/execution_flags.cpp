#include "execution_flags.h"

#include "tune/autotune_config.h"

namespace tilefuse::cli {

void add_execution_flags(CLI::App* sub, ExecutionFlags& flags) {
  sub->add_option("--threads", flags.threads, "Worker threads (device limit); default TILEFUSE_NUM_THREADS or all cores");
  sub->add_option("--compile-threads", flags.compile_threads,
                  "Parallel kernel compiles; default TILEFUSE_COMPILE_THREADS or all cores (1 = synchronous)");
  sub->add_option("--cache-dir", flags.cache_dir, "Kernel cache; default TILEFUSE_CACHE_DIR or /tmp/tilefuse_<user>");
  sub->add_option("--topn", flags.topn,
                  "Tiling candidates measured per static kernel on the first run (1-10); default TILEFUSE_AUTOTUNE_TOPN or 1");
  sub->add_option("--debug-dir", flags.debug_dir,
                  "Dump every generated artifact (tiling, candidate sources, standalone benchmarks) here; default "
                  "TILEFUSE_DEBUG_DIR");
}

api::ExecutionOptions execution_options(const ExecutionFlags& flags) {
  return {.threads = flags.threads,
          .compile_threads = flags.compile_threads,
          .autotune_topn = tune::resolve_autotune_topn(flags.topn),
          .cache_dir = flags.cache_dir,
          .debug_dir = flags.debug_dir};
}

}  // namespace tilefuse::cli
