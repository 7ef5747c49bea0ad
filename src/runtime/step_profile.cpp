#include "runtime/step_profile.h"

#include <algorithm>
#include <thread>

namespace tilefuse::runtime {

void StepProfile::SpinLock::lock() {
  for (int spins = 0; held_.exchange(true, std::memory_order_acquire);) {
    while (held_.load(std::memory_order_relaxed)) {
      // The holder only appends to a vector: yield the CPU only if it seems to have lost its own.
      if (++spins > 4096) std::this_thread::yield();
    }
  }
}

StepProfile::StepProfile() : epoch_(Clock::now()) {}

void StepProfile::begin_run() {
  std::lock_guard lock(mutex_);
  ++runs_;
}

void StepProfile::record(int64_t step, int worker, Clock::time_point start, Clock::time_point end) {
  auto us = [this](Clock::time_point t) { return std::chrono::duration<double, std::micro>(t - epoch_).count(); };
  std::lock_guard lock(mutex_);
  intervals_.push_back({runs_ - 1, step, worker, us(start), us(end)});
}

void StepProfile::clear() {
  std::lock_guard lock(mutex_);
  intervals_.clear();
  runs_ = 0;
}

std::vector<StepInterval> StepProfile::intervals() const {
  std::lock_guard lock(mutex_);
  std::vector<StepInterval> out = intervals_;
  std::sort(out.begin(), out.end(), [](const StepInterval& a, const StepInterval& b) { return a.start_us < b.start_us; });
  return out;
}

}  // namespace tilefuse::runtime
