// The profiler's record of executor runs: for every plan step, what it is (name, kind, ops,
// bytes moved, floating-point work) and, per run and worker, when it ran. The executor fills it
// only when one is attached (ExecutorOptions::profile); otherwise nothing is timed or stored.
// api/profile_report.h turns it into a Chrome trace and a per-step table.
#pragma once

#include <chrono>
#include <cstdint>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

namespace tilefuse::runtime {

struct ProfiledStep {
  std::string name;  // the kernel's name or the node's
  std::string kind;  // kernel, library, host, view, copy
  std::string ops;   // "Add Relu": the ops it computes
  int64_t bytes = 0;  // compulsory traffic: inputs read once, outputs written once
  double flops = 0;   // floating-point operations (multiply-add counts 2); 0 when not counted
  std::vector<std::string> nodes;  // the graph's nodes it computes, by name (a layer-by-layer comparison groups them)
};

struct StepInterval {
  int64_t run = 0;
  int64_t step = 0;  // index into ProfiledStep list
  int worker = 0;
  double start_us = 0, end_us = 0;  // since the profile was created
};

class StepProfile {
 public:
  using Clock = std::chrono::steady_clock;
  StepProfile();

  // Set by the executor on the first profiled run; later runs of other shapes keep the first.
  std::vector<ProfiledStep> steps;

  // Opens run number runs(); intervals recorded until the next call belong to it.
  void begin_run();
  // Thread-safe: workers of one step record concurrently.
  void record(int64_t step, int worker, Clock::time_point start, Clock::time_point end);
  // Forgets the recorded runs (bench drops its warm-up runs); steps stay.
  void clear();

  int64_t runs() const { return runs_; }
  std::vector<StepInterval> intervals() const;

 private:
  // Held for a push_back: a spin lock, because a contended std::mutex sleeps in the kernel, and a
  // futex wake-up (~50 us on virtual machines) inside a microsecond step made profiled runs at 2
  // threads 10-20x slower than unprofiled ones.
  class SpinLock {
   public:
    void lock();
    void unlock() { held_.store(false, std::memory_order_release); }

   private:
    std::atomic<bool> held_{false};
  };

  Clock::time_point epoch_;
  mutable SpinLock mutex_;
  std::vector<StepInterval> intervals_;
  int64_t runs_ = 0;
};

}  // namespace tilefuse::runtime
