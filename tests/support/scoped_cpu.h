// Test helpers for measurements that depend on the CPUs: the calling thread kept on one CPU
// (threads it creates meanwhile inherit that), every CPU kept busy, and an environment variable
// set or unset, each for a scope.
#pragma once

#include <sched.h>

#include <atomic>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace tilefuse::testing_support {

// Gives the calling thread back the CPUs it may use now at the end of the scope.
class SavedAffinity {
 public:
  SavedAffinity() { sched_getaffinity(0, sizeof saved_, &saved_); }
  ~SavedAffinity() { sched_setaffinity(0, sizeof saved_, &saved_); }
  SavedAffinity(const SavedAffinity&) = delete;
  SavedAffinity& operator=(const SavedAffinity&) = delete;

 private:
  cpu_set_t saved_;
};

// Keeps the calling thread, and every thread it starts meanwhile, on the CPU it runs on now.
class OneCpuScope : SavedAffinity {
 public:
  OneCpuScope() {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    sched_setaffinity(0, sizeof one, &one);
  }
};

// The CPUs the calling thread may use.
inline int allowed_cpus() {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

// Sets `name` to `value` (unsets it for nullopt) until the end of the scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) saved_ = old;
    value ? setenv(name, value->c_str(), 1) : unsetenv(name);
  }
  ~ScopedEnv() { saved_ ? setenv(name_, saved_->c_str(), 1) : unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> saved_;
};

// Another busy process, as the scheduler sees it: one spinning thread on each CPU the calling
// thread may use, until the end of the scope. Whatever runs meanwhile shares every CPU.
class BusyCpus {
 public:
  BusyCpus() {
    cpu_set_t allowed;
    sched_getaffinity(0, sizeof allowed, &allowed);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (!CPU_ISSET(cpu, &allowed)) continue;
      spinners_.emplace_back([this, cpu] {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        sched_setaffinity(0, sizeof one, &one);
        while (!stop_.load(std::memory_order_relaxed)) {
        }
      });
    }
  }
  ~BusyCpus() {
    stop_ = true;
    for (std::thread& t : spinners_) t.join();
  }
  BusyCpus(const BusyCpus&) = delete;
  BusyCpus& operator=(const BusyCpus&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> spinners_;
};

}  // namespace tilefuse::testing_support
