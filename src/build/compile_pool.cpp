#include "build/compile_pool.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <exception>
#include <thread>

#include "build/progress_line.h"
#include "ir/error.h"

namespace tilefuse::build {
namespace {

void run_one(CompileJob& job, std::exception_ptr& error, ProgressLine& progress) {
  try {
    job.run();
  } catch (...) {
    error = std::current_exception();
  }
  progress.advance(job.label);
}

}  // namespace

int compile_threads_from_environment() {
  const char* value = std::getenv("TILEFUSE_COMPILE_THREADS");
  if (value == nullptr) return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const std::string_view text(value);
  int threads = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), threads);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || threads <= 0) {
    fail_user("TILEFUSE_COMPILE_THREADS must be a positive integer, got '{}'", text);
  }
  return threads;
}

void run_compile_jobs(std::vector<CompileJob> jobs, int threads) {
  if (threads <= 0) fail_internal("run_compile_jobs needs at least one thread, got {}", threads);
  ProgressLine progress("compiling kernels", jobs.size());
  // One slot per job: the error rethrown is the first by job order, whatever the thread count.
  std::vector<std::exception_ptr> errors(jobs.size());
  const size_t workers = std::min(jobs.size(), static_cast<size_t>(threads));
  if (workers <= 1) {
    for (size_t i = 0; i < jobs.size(); ++i) run_one(jobs[i], errors[i], progress);
  } else {
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i = next++; i < jobs.size(); i = next++) run_one(jobs[i], errors[i], progress);
    };
    std::vector<std::jthread> pool;
    for (size_t t = 0; t < workers; ++t) pool.emplace_back(work);
  }  // the jthreads join here
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

}  // namespace tilefuse::build
