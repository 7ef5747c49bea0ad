// Whether a team's threads had their cores to themselves while something was measured.
//
// A measurement that is recorded for later processes (a kernel's TopN winner, a GEMM's blocking,
// the SuperKernel choice, the hardware calibration) is only as good as the moment it was taken
// in: while another process keeps one of two cores busy, a split over two workers waits for the
// slower one and a one-worker tiling wins, and a record of that choice made every later run of
// the model twice as slow. The kernel counts, per thread, the time it was runnable but waiting
// for a CPU (the second field of /proc/self/task/<tid>/schedstat): near zero while each worker
// has a core of its own, about half of the elapsed time when each shares its core with one busy
// thread.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/thread_team.h"

namespace tilefuse::runtime {

// The most the threads may have waited, as a share of the elapsed time, for what they measured
// to be trusted. On this project's 2-vCPU VM, back-to-back jobs of a team whose workers had a CPU
// each waited 2-6% of the time, jobs 100 us apart 13-15% (every wake-up of a vCPU counts); beside
// one busy process, or with both workers on one CPU, they waited 30-50%.
constexpr double kTrustedCpuWaitingShare = 0.25;

class CpuWaitMeter {
 public:
  // Starts counting for the calling thread (the team's worker 0 in the runs to come) and the
  // team's other workers.
  explicit CpuWaitMeter(const ThreadTeam& team);

  // The time the threads waited for a CPU since construction, summed over them, over the elapsed
  // time times their number. 0 where the kernel does not report it. 1 where the caller ran the
  // part of a worker it found asleep meanwhile: what was timed is then not the team's speed, and
  // the sleeping worker waited for nothing (a worker whose 2 ms of spinning ran out while it
  // waited for a CPU falls asleep).
  double waiting_share() const;

 private:
  const ThreadTeam& team_;
  int64_t parts_taken_over_;
  std::vector<std::string> paths_;
  std::vector<double> start_ns_;  // each thread's run delay at construction
  std::chrono::steady_clock::time_point start_;
};

// The team of a process that only measures (the tuner's child): its workers pinned to CPUs of
// their own (its threads are its own to pin) and their waits counted from construction.
class MeasuringTeam {
 public:
  explicit MeasuringTeam(int threads) : team_(threads), meter_((team_.pin_workers(), team_)) {}
  ThreadTeam& team() { return team_; }
  double waiting_share() const { return meter_.waiting_share(); }

 private:
  ThreadTeam team_;
  CpuWaitMeter meter_;
};

// The median time, in microseconds, of `samples` empty jobs on every worker of `team` (0 for a
// team of one): what handing work to the other workers and back costs at this moment, as
// back-to-back steps of an inference see it. The caller must have the team to itself.
double handoff_us(ThreadTeam& team, int samples = 101);

// The slowest handoff a measurement that compares splits over workers may be taken with and
// recorded. Awake workers on this project's 2-vCPU VM hand off in 0.1-0.3 us, or 1.1-1.3 us while
// the hypervisor keeps their vCPUs apart (the SuperKernel's record keeps the handoff for that:
// step_runner.cpp); in rarer phases, which no scheduler statistic shows (no run delay, no steal
// time), 45 us, for milliseconds at a time: every split then looks worthless.
constexpr double kTrustedHandoffUs = 10;

// Whether what was measured while the threads waited `waiting_share` of the time is trusted: at
// most kTrustedCpuWaitingShare, or anything under TILEFUSE_RECORD_BUSY_MEASUREMENTS=1 (the
// tests, which run beside each other, check what is recorded).
bool trusted_measurement(double waiting_share);

// trusted_measurement(), which decides whether what was measured may be recorded for later
// processes; if not, logs that `what` (a kernel's TopN winner, ...) is not recorded and will be
// measured again by the next process.
bool may_record(double waiting_share, std::string_view what);
// The same, for a measurement whose team's slower handoff, probed before and after it, took
// `handoff_us`: above kTrustedHandoffUs it is not recorded either (unless the environment says
// to record anyway).
bool may_record(double waiting_share, double handoff_us, std::string_view what);

}  // namespace tilefuse::runtime
