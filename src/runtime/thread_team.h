// One persistent team of worker threads per process, sized by the device limit. Kernels never
// create threads: the team splits a kernel's blocks into contiguous, balanced ranges, one per
// worker, and the calling thread works as worker 0. Workers wait for work by spinning (yielding
// the CPU to anyone else who wants it) for 2 ms and then sleeping, so an idle team costs no CPU
// (unlike a spin-forever barrier) while a caller running inferences a few milliseconds apart
// finds them awake. A caller that finds a worker asleep wakes it but does not wait for it: it
// runs that worker's range itself once its own is done, unless the worker has started it.
//
// Two ways to use it: run() is one fork and one join per job; region() forks once for a whole
// sequence of jobs whose workers synchronise among themselves through counters (the SuperKernel,
// runtime/superkernel_schedule.h), and inside it run() called by worker 0 is served by the
// workers waiting in assist().
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace tilefuse::runtime {

// A non-owning reference to any callable of signature void(Args...). Unlike std::function it
// never allocates, so a kernel launch allocates nothing; the callable only has to outlive the
// call it is passed to.
template <typename... Args>
class TaskRef {
 public:
  template <typename F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, TaskRef>)
  TaskRef(F&& fn)  // NOLINT(google-explicit-constructor): lambdas convert where a task is expected
      : object_(const_cast<void*>(static_cast<const void*>(&fn))),
        call_([](void* object, Args... args) { (*static_cast<std::remove_reference_t<F>*>(object))(args...); }) {}

  void operator()(Args... args) const { call_(object_, args...); }

 private:
  void* object_;
  void (*call_)(void*, Args...);
};

// What a team runs: fn(worker, first_block, end_block).
using BlockTask = TaskRef<int, int64_t, int64_t>;
// What a region runs on every worker: fn(worker).
using WorkerTask = TaskRef<int>;

// Worker `worker` of `workers` gets blocks [first, end) of `num_blocks`: contiguous, sizes
// differing by at most one. run() splits jobs this way, and so does a region's caller.
std::pair<int64_t, int64_t> worker_blocks(int64_t num_blocks, int workers, int worker);

class ThreadTeam {
 public:
  explicit ThreadTeam(int threads);  // threads >= 1
  // The process's team of this size: every model of the same device limit shares it (the team
  // serialises concurrent runs), so a process never oversubscribes its cores with idle teams.
  static std::shared_ptr<ThreadTeam> shared(int threads);
  ~ThreadTeam();
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;

  int size() const;
  // Returns once the workers run on CPUs of their own, or after `limit`. A new team's threads can
  // start out on one CPU, and the kernel took up to 10 ms to move one on this project's 2-vCPU VM,
  // where the team's first jobs then ran ten times slower: whatever is measured in that window
  // (a tuning child's TopN candidates, the fork/join cost) finds splitting work worthless. Does
  // nothing where the process may use fewer CPUs than the team has workers.
  void spread_workers(std::chrono::milliseconds limit = std::chrono::milliseconds(50));
  // Pins worker i to the i-th CPU the process may use, the calling thread as worker 0: for a
  // process of its own that measures (the tuner's child), where no two workers may share a CPU
  // and whose threads are its own to pin. Does nothing where the process may use fewer CPUs than
  // the team has workers.
  void pin_workers();
  // The kernel's thread ids of workers 1 .. size-1 (worker 0 is whichever thread calls run()):
  // what runtime/cpu_wait.h reads the scheduler's accounting of.
  const std::vector<int>& helper_thread_ids() const;
  // Calls fn(worker, first_block, end_block) once per worker that has blocks, in parallel, on at
  // most `max_workers` workers (0: all; a kernel's block_dim); returns when all are done. The
  // range of a worker found asleep may be run by the calling thread after its own, with that
  // worker's index: `worker` names a range, not a thread. An exception in any worker is rethrown
  // here.
  void run(int64_t num_blocks, BlockTask fn, int max_workers = 0);

  // How many runs started from the calling thread have synchronised the team (a fork and a join;
  // a run that one worker does alone is not counted): what a model's run pays in barriers.
  static int64_t barriers_on_this_thread();

  // Whether a worker sleeps in the kernel now (it has had no job for 2 ms). A region needs every
  // worker, so a caller that finds one asleep does better with run(), where it takes over the
  // sleeper's range instead of waiting for its wake-up.
  bool helpers_asleep() const;
  // Wakes the workers that sleep and returns at once, for jobs the caller will post shortly.
  void wake_helpers();
  // How many ranges of jobs the callers have run for workers they found asleep, since the team
  // started: what was timed meanwhile is not the team's speed (runtime/cpu_wait.h).
  int64_t parts_taken_over() const;

  // ---- parallel regions ----

  // Calls fn(worker) on every worker at once and returns when all have returned: one fork and
  // one join (one barrier) for work whose workers synchronise among themselves with
  // wait_at_least. Inside it, run() may be called by worker 0 only; its jobs are served by the
  // other workers while they are in assist(), and every other worker must assist each job (a
  // region's caller has them all assist the same steps). An exception in any worker aborts the
  // region: every wait_at_least and assist in it returns by unwinding, and the first error is
  // rethrown here. With `workers` 1 (or a one-worker team) it just calls fn(0) on the caller,
  // and run() inside it runs every job there: no fork, no join, no barrier.
  void region(WorkerTask fn, int workers = 0);
  // True on worker 0 of a region of this team: run() there is served by the assisting workers.
  bool in_region() const;
  // In a region: how many workers worker 0's run() calls use from now on: 1 runs them on worker
  // 0 alone (the others are not assisting then), anything else every worker.
  void set_region_workers(int workers);
  // In a region: returns once counter >= target (release-incremented by whoever completes what
  // it counts), spinning and then yielding, never sleeping: a region is short and its workers stay hot.
  void wait_at_least(const std::atomic<int64_t>& counter, int64_t target) const;
  // In a region, on worker `worker` > 0: serves worker 0's run() calls until counter >= target.
  void assist(int worker, const std::atomic<int64_t>& counter, int64_t target);

 private:
  // run(), where `stealable` lets the caller run a sleeping worker's range; pinning and
  // spreading need each range run by its own worker.
  void run_job(int64_t num_blocks, BlockTask fn, int max_workers, bool stealable);

  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tilefuse::runtime
