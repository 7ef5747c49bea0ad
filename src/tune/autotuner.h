// Profile-guided selection among a kernel's TopN candidates, on the real inputs.
//
// Measurement happens in a child process (fork), so a candidate that crashes or hangs costs only
// that child: it is excluded and the rest are measured again. In the child each candidate first
// runs once on clones of the inputs and is compared with the first candidate that ran (the cost
// model's choice): a candidate that disagrees is excluded. Then all survivors are timed in
// interleaved rounds (A B C A B C ...), so drifts of the machine hit every candidate alike, until
// every median is stable or the time budget is spent. The fastest median wins.
//
// The child reports on a pipe, one line per event; the parent logs, per candidate,
// "Timing = xx.xx us", and "Autotune completed <kernel>, best kernel index: <i>". If the child's
// timings do not match its candidates, the parent logs
// "Autotune <kernel_dir> parse profiling error, timing info count: N" and keeps the model's choice.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tilefuse::tune {

// One kernel's candidates as the tuner drives them. Implemented by the runtime; every method but
// count() is called only in the measuring child process.
class CandidateBench {
 public:
  virtual ~CandidateBench() = default;
  virtual int count() const = 0;
  // Clones the inputs and sets up what running needs (threads made here belong to the child).
  virtual void prepare() = 0;
  // One launch of candidate i on the clones.
  virtual void run(int candidate) = 0;
  // Keeps the outputs of the last run as the reference the others are compared with.
  virtual void keep_as_reference() = 0;
  // Compares the outputs of the last run with the reference: nullopt if they agree, else why not.
  virtual std::optional<std::string> differs_from_reference() = 0;
  // Of the time since prepare(), the share the measuring threads spent waiting for a CPU that
  // another process (or thread) held (runtime/cpu_wait.h); 0 if unknown.
  virtual double cpu_waiting_share() const { return 0; }
};

struct AutotuneOptions {
  double budget_ms = 300;     // timing rounds stop after this much time
  int min_rounds = 5;
  int max_rounds = 500;
  double stable_within = 0.01;  // medians moving less than this fraction between checks = stable
  double hang_seconds = 20;     // a child silent this long (or ten of its rounds, if longer) is killed
  // A candidate's first run (its check) may take this long before it counts as a hang: a slow
  // but correct candidate has not shown how long its runs take yet. Once it has, the hang
  // timeout is at least four of its runs.
  double first_run_seconds = 300;
};

struct CandidateResult {
  bool measured = false;
  double median_us = 0;
  double min_us = 0;
  std::string excluded;  // why it was not measured: wrong result, crash, timeout
};

struct AutotuneResult {
  int best = 0;                          // index into the candidates
  std::vector<CandidateResult> candidates;
  int rounds = 0;
  bool fell_back = false;                // the measurement failed: `best` is the model's choice
  // The measuring threads' cpu_waiting_share() over the timing: whether the timings were taken
  // with the cores to themselves, so that the winner may be recorded for other processes.
  double cpu_waiting_share = 0;
};

// `kernel` names the kernel in logs; `kernel_dir` is its cache entry (for the error message).
AutotuneResult autotune(const std::string& kernel, const std::string& kernel_dir, CandidateBench& bench,
                        const AutotuneOptions& options = {});

}  // namespace tilefuse::tune
