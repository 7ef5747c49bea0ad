// What one ThreadTeam::run costs beyond the work itself: the fixed price every kernel launch pays.
// "Warm" runs back to back (workers still spinning), as kernels of one inference do; "AfterIdle"
// waits past the spin first, so workers must be woken from the kernel (futex), as the first
// kernel of an inference after a pause is.
#include <chrono>
#include <thread>

#include <benchmark/benchmark.h>

#include "runtime/device_limit.h"
#include "runtime/thread_team.h"

namespace {

using tilefuse::runtime::ThreadTeam;

constexpr auto noop = [](int, int64_t, int64_t) {};

void BM_RunWarm(benchmark::State& state) {
  ThreadTeam team(static_cast<int>(state.range(0)));
  for (auto _ : state) team.run(team.size(), noop);
}

void BM_RunAfterIdle(benchmark::State& state) {
  ThreadTeam team(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    std::this_thread::sleep_for(std::chrono::microseconds(500));  // well past the 50 us spin
    const auto start = std::chrono::steady_clock::now();
    team.run(team.size(), noop);
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
}

void team_sizes(benchmark::internal::Benchmark* benchmark) {
  const int cores = tilefuse::runtime::hardware_cores();
  for (int threads = 1; threads < cores; threads *= 2) benchmark->Arg(threads);
  benchmark->Arg(cores);
}

}  // namespace

BENCHMARK(BM_RunWarm)->Apply(team_sizes)->UseRealTime();
BENCHMARK(BM_RunAfterIdle)->Apply(team_sizes)->UseManualTime()->Iterations(500);
BENCHMARK_MAIN();
