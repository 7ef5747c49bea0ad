// Runs independent compile jobs in parallel on TILEFUSE_COMPILE_THREADS threads (default: the
// CPU count; 1 = synchronously on the calling thread, same results). Shows progress on a
// terminal ("compiling kernels 3/12") and rethrows the first job's error after all have ended.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace tilefuse::build {

struct CompileJob {
  std::string label;            // shown in progress and errors
  std::function<void()> run;    // does the work; may throw
};

// Reads and validates TILEFUSE_COMPILE_THREADS (UserError naming the variable and the rule).
int compile_threads_from_environment();

void run_compile_jobs(std::vector<CompileJob> jobs, int threads);

}  // namespace tilefuse::build
