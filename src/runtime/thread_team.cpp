#include "runtime/thread_team.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <sched.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "ir/error.h"

namespace tilefuse::runtime {
namespace {

// A worker spins this long for the next job (yielding after kBusySpin): long enough to catch the
// next kernel of an inference and the next inference of a caller that runs one every few
// milliseconds, short enough that an idle team soon sleeps. Waking a sleeping worker took 150-250
// us on this project's 2-vCPU VM: with 50 us, a small model (concat_rows-small, three kernels)
// called every 2 ms took 0.18-0.25 ms at 2 threads against 0.087 at 1; with 2 ms, 0.047-0.053
// (ONNX Runtime: 0.12). Called every 10 ms it still pays the wake-up (0.20-0.35 ms; ONNX
// Runtime 0.25).
constexpr auto kWorkerSpin = std::chrono::milliseconds(2);
// The caller spins longer while its job is in flight: it has nothing else to do, and a futex wake-up
// (~50 us on virtual machines) would let the workers fall asleep before the next job is posted, so
// every later run would pay two wake-ups.
constexpr auto kCallerSpin = std::chrono::milliseconds(1);

// Pure busy-waiting only this long; after it the waiter yields between checks, because the thread
// it waits for may share its CPU (more runnable threads than cores) and would otherwise get no time.
constexpr auto kBusySpin = std::chrono::microseconds(20);

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// Waits until `word` differs from `old` and returns the new value: spins for `spin` (busy, then
// yielding), then sleeps in the kernel (std::atomic::wait is a futex on Linux), with `asleep`
// (where given) set meanwhile.
uint32_t wait_for_change(const std::atomic<uint32_t>& word, uint32_t old, std::chrono::microseconds spin,
                         std::atomic<bool>* asleep = nullptr) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      const uint32_t now = word.load(std::memory_order_acquire);
      if (now != old) return now;
      cpu_relax();
    }
    const auto waited = std::chrono::steady_clock::now() - start;
    if (waited >= spin) break;
    if (waited >= kBusySpin) std::this_thread::yield();
  }
  if (asleep != nullptr) asleep->store(true, std::memory_order_release);
  word.wait(old, std::memory_order_acquire);
  if (asleep != nullptr) asleep->store(false, std::memory_order_release);
  return word.load(std::memory_order_acquire);
}

// The team a thread is currently running a task for: a task calling run() on its own team would
// deadlock, so that is caught as the bug it is.
thread_local const ThreadTeam* t_active_team = nullptr;

thread_local int64_t t_barriers = 0;  // see barriers_on_this_thread()

// The team whose region the calling thread leads (as worker 0), and how many workers its run()
// calls use there (1: the caller alone; 0: all).
thread_local const ThreadTeam* t_region_team = nullptr;
thread_local int t_region_workers = 0;

class RegionScope {
 public:
  explicit RegionScope(const ThreadTeam* team)
      : previous_(std::exchange(t_region_team, team)), previous_workers_(t_region_workers) {}
  ~RegionScope() { t_region_team = previous_, t_region_workers = previous_workers_; }
  RegionScope(const RegionScope&) = delete;
  RegionScope& operator=(const RegionScope&) = delete;

 private:
  const ThreadTeam* previous_;
  int previous_workers_;
};

// Thrown by a region's waits once another worker has failed: it unwinds the worker's part of the
// region and is not an error of its own (the failure that caused it is reported).
struct RegionAborted {};

// Spins on `ready` with pauses, yielding after kBusySpin (the awaited worker may share this
// CPU); calls `check` between rounds (it throws to give up).
template <typename Ready, typename Check>
void spin_until(Ready ready, Check check) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return;
      cpu_relax();
    }
    check();
    if (std::chrono::steady_clock::now() - start >= kBusySpin) std::this_thread::yield();
  }
}

class ActiveTeamScope {
 public:
  explicit ActiveTeamScope(const ThreadTeam* team) : previous_(std::exchange(t_active_team, team)) {}
  ~ActiveTeamScope() { t_active_team = previous_; }
  ActiveTeamScope(const ActiveTeamScope&) = delete;
  ActiveTeamScope& operator=(const ActiveTeamScope&) = delete;

 private:
  const ThreadTeam* previous_;
};

}  // namespace

std::pair<int64_t, int64_t> worker_blocks(int64_t num_blocks, int workers, int worker) {
  const int64_t base = num_blocks / workers;
  const int64_t extra = num_blocks % workers;
  const int64_t first = worker * base + std::min<int64_t>(worker, extra);
  return {first, first + base + (worker < extra ? 1 : 0)};
}

struct ThreadTeam::State {
  // Per worker: the last job whose part of it was taken (by the worker, or by the caller while the
  // worker slept), and whether the worker sleeps in the kernel now. Apart, so that one worker's
  // writes do not move the other's line.
  struct alignas(64) Slot {
    std::atomic<uint32_t> taken{0};
    std::atomic<bool> asleep{false};
  };

  const ThreadTeam* team = nullptr;
  std::vector<std::thread> threads;            // workers 1 .. size-1
  std::vector<int> thread_ids;                 // their kernel thread ids, written before the constructor returns
  std::atomic<int> started{0};                 // workers that have written theirs
  std::unique_ptr<Slot[]> slots;               // one per worker (slot 0 unused)
  std::vector<std::exception_ptr> errors;      // one slot per part, so no lock is needed
  std::mutex run_mutex;                        // one run() at a time, from any thread
  // The job, written by the caller only while no part of the previous one is open, and published
  // by `generation` (its number). A helper reads it only after taking its part (take_part), so a
  // helper that comes late to a job whose parts were all done reads nothing of the next one.
  const BlockTask* task = nullptr;
  int64_t num_blocks = 0;
  int active_workers = 0;
  bool stealable = false;  // the caller may take the part of a sleeping helper
  bool stopping = false;
  alignas(64) std::atomic<uint32_t> generation{0};  // the current job's number
  alignas(64) std::atomic<uint32_t> parts_left{0};  // helpers' parts of the job not yet done
  std::atomic<int64_t> parts_taken_over{0};         // helpers' parts the caller ran, ever

  // A region: the job is region_task instead of task. Worker 0's run() calls inside it are
  // "inner jobs", published by inner_generation; every helper serves each one (in assist, or
  // after its part of the region while draining) and counts it done in inner_pending.
  const WorkerTask* region_task = nullptr;
  const BlockTask* inner_task = nullptr;
  int64_t inner_blocks = 0;
  int inner_active = 0;
  std::vector<uint32_t> inner_seen;                    // per worker: inner jobs served
  std::vector<std::exception_ptr> inner_errors;        // per worker, rethrown by worker 0's run()
  alignas(64) std::atomic<bool> region_aborted{false};  // a worker failed: waits unwind
  alignas(64) std::atomic<bool> leader_done{false};     // worker 0 has left its part: helpers may leave
  alignas(64) std::atomic<uint32_t> inner_generation{0};
  alignas(64) std::atomic<uint32_t> inner_pending{0};

  int size() const { return static_cast<int>(threads.size()) + 1; }

  // Takes part `part` of job `job` unless someone has (the helper itself, the caller, or the
  // caller's marking of a part without work): true for exactly one taker. Job numbers only grow
  // (modulo 2^32), so a part last taken for an earlier job is open.
  bool take_part(int part, uint32_t job) {
    std::atomic<uint32_t>& taken = slots[part].taken;
    uint32_t last = taken.load(std::memory_order_relaxed);
    while (static_cast<int32_t>(job - last) > 0) {
      if (taken.compare_exchange_weak(last, job, std::memory_order_acq_rel)) return true;
    }
    return false;
  }

  // Runs part `part` of the current job (a run's blocks, or a worker's part of a region),
  // capturing any exception.
  void work(int part) {
    if (region_task != nullptr) return work_in_region(part);
    const auto [first, end] = worker_blocks(num_blocks, active_workers, part);
    try {
      (*task)(part, first, end);
    } catch (...) {
      errors[part] = std::current_exception();
    }
  }

  void finish_part() {
    if (parts_left.fetch_sub(1, std::memory_order_acq_rel) == 1) parts_left.notify_one();
  }

  // A worker's part of a region. A failure aborts the region. A helper then serves worker 0's
  // inner jobs until worker 0 has left its part, so worker 0 never waits for a helper that left.
  void work_in_region(int worker) {
    try {
      (*region_task)(worker);
    } catch (const RegionAborted&) {
    } catch (...) {
      errors[worker] = std::current_exception();
      region_aborted.store(true, std::memory_order_release);
    }
    if (worker == 0) {
      leader_done.store(true, std::memory_order_release);
      return;
    }
    spin_until(
        [&] {
          serve_inner_job(worker);
          return leader_done.load(std::memory_order_acquire);
        },
        [] {});
  }

  // Serves worker 0's next inner job if one is posted: runs this worker's share of it.
  void serve_inner_job(int worker) {
    if (inner_generation.load(std::memory_order_acquire) == inner_seen[worker]) return;
    ++inner_seen[worker];
    if (worker < inner_active) {
      const auto [first, end] = worker_blocks(inner_blocks, inner_active, worker);
      try {
        (*inner_task)(worker, first, end);
      } catch (...) {
        inner_errors[worker] = std::current_exception();
      }
    }
    inner_pending.fetch_sub(1, std::memory_order_acq_rel);
  }

  // Worker 0's run() inside a region: every helper serves the job (in assist or draining).
  void run_inner(int64_t blocks, const BlockTask& fn, int workers) {
    inner_task = &fn;
    inner_blocks = blocks;
    inner_active = static_cast<int>(std::min<int64_t>(workers, blocks));
    inner_pending.store(static_cast<uint32_t>(threads.size()), std::memory_order_relaxed);
    inner_generation.fetch_add(1, std::memory_order_release);
    const auto [first, end] = worker_blocks(blocks, inner_active, 0);
    try {
      fn(0, first, end);
    } catch (...) {
      inner_errors[0] = std::current_exception();
    }
    spin_until([&] { return inner_pending.load(std::memory_order_acquire) == 0; }, [] {});
    for (std::exception_ptr& error : inner_errors) {
      if (error) std::rethrow_exception(std::exchange(error, nullptr));
    }
  }

  void check_not_aborted() const {
    if (region_aborted.load(std::memory_order_acquire)) throw RegionAborted{};
  }

  void worker_loop(int worker) {
    t_active_team = team;
    uint32_t seen = 0;
    for (;;) {
      seen = wait_for_change(generation, seen, kWorkerSpin, &slots[worker].asleep);
      // A later job may have replaced `seen` already; the next round sees it.
      if (!take_part(worker, seen)) continue;
      if (stopping) return;
      work(worker);
      finish_part();
    }
  }

  // Publishes the job written into the fields above: parts [active_workers, size) have no work
  // and count as taken. Wakes the helpers that sleep.
  uint32_t publish() {
    const uint32_t job = generation.load(std::memory_order_relaxed) + 1;
    for (int part = active_workers; part < size(); ++part) slots[part].taken.store(job, std::memory_order_relaxed);
    parts_left.store(static_cast<uint32_t>(active_workers - 1), std::memory_order_relaxed);
    generation.store(job, std::memory_order_release);
    generation.notify_all();
    return job;
  }

  // Publishes the job, runs part 0 on the caller, then (where the job allows) the parts of helpers
  // that were still asleep: waking one took 150-250 us on this project's VM, longer than a small
  // model's whole run. Returns once every part is done.
  void publish_and_wait() {
    const uint32_t job = publish();
    work(0);  // in a region, this also tells the helpers that worker 0 is done
    if (stealable) {
      for (int part = 1; part < active_workers; ++part) {
        if (slots[part].asleep.load(std::memory_order_acquire) && take_part(part, job)) {
          parts_taken_over.fetch_add(1, std::memory_order_relaxed);
          work(part);
          finish_part();
        }
      }
    }
    for (uint32_t left = parts_left.load(std::memory_order_acquire); left != 0;
         left = parts_left.load(std::memory_order_acquire)) {
      wait_for_change(parts_left, left, kCallerSpin);
    }
  }

  bool any_helper_asleep() const {
    for (int worker = 1; worker < size(); ++worker) {
      if (slots[worker].asleep.load(std::memory_order_acquire)) return true;
    }
    return false;
  }

  void rethrow_first_error() {
    for (std::exception_ptr& error : errors) {
      if (error) std::rethrow_exception(std::exchange(error, nullptr));
    }
  }
};

ThreadTeam::ThreadTeam(int threads) {
  if (threads < 1) fail_internal("a thread team needs at least one thread, got {}", threads);
  state_ = std::make_unique<State>();
  state_->team = this;
  state_->slots = std::make_unique<State::Slot[]>(static_cast<size_t>(threads));
  state_->errors.resize(threads);
  state_->inner_errors.resize(threads);
  state_->inner_seen.resize(threads);
  state_->threads.reserve(threads - 1);
  state_->thread_ids.resize(threads - 1);
  for (int worker = 1; worker < threads; ++worker) {
    state_->threads.emplace_back([state = state_.get(), worker] {
      state->thread_ids[worker - 1] = static_cast<int>(::gettid());
      state->started.fetch_add(1, std::memory_order_release);
      state->worker_loop(worker);
    });
  }
  while (state_->started.load(std::memory_order_acquire) < threads - 1) std::this_thread::yield();
}

ThreadTeam::~ThreadTeam() {
  {
    std::lock_guard lock(state_->run_mutex);
    state_->stopping = true;
    state_->active_workers = state_->size();
    state_->publish();
  }
  for (std::thread& thread : state_->threads) thread.join();
}

int ThreadTeam::size() const { return state_->size(); }

const std::vector<int>& ThreadTeam::helper_thread_ids() const { return state_->thread_ids; }

namespace {

// Whether the team has workers to keep apart and the process may use a CPU for each; `allowed`
// is then the CPUs it may use.
bool cpus_for_each_worker(int size, cpu_set_t& allowed) {
  return size >= 2 && sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) >= size;
}

}  // namespace

void ThreadTeam::pin_workers() {
  cpu_set_t allowed;
  if (!cpus_for_each_worker(size(), allowed)) return;
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE && static_cast<int>(cpus.size()) < size(); ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  }
  run_job(size(), [&](int worker, int64_t, int64_t) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[static_cast<size_t>(worker)], &one);
    sched_setaffinity(0, sizeof one, &one);  // a refusal leaves the worker where it was: still correct
  }, size(), /*stealable=*/false);
}

void ThreadTeam::spread_workers(std::chrono::milliseconds limit) {
  cpu_set_t allowed;
  if (!cpus_for_each_worker(size(), allowed)) return;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::vector<int> cpus(static_cast<size_t>(size()));
  for (bool busy = false;; busy = true) {
    // While they share a CPU, every worker keeps busy a while, so that the kernel sees a CPU with
    // two runnable threads beside an idle one and moves one of them.
    run_job(size(), [&](int worker, int64_t, int64_t) {
      cpus[static_cast<size_t>(worker)] = sched_getcpu();
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(busy ? 200 : 0);
      while (std::chrono::steady_clock::now() < until) cpu_relax();
    }, size(), /*stealable=*/false);
    std::sort(cpus.begin(), cpus.end());
    if (std::adjacent_find(cpus.begin(), cpus.end()) == cpus.end() || std::chrono::steady_clock::now() > deadline) return;
  }
}

void ThreadTeam::run(int64_t num_blocks, BlockTask fn, int max_workers) {
  run_job(num_blocks, fn, max_workers, /*stealable=*/true);
}

void ThreadTeam::run_job(int64_t num_blocks, BlockTask fn, int max_workers, bool stealable) {
  if (num_blocks <= 0) return;
  const bool inner = t_region_team == this;
  if (t_active_team == this && !inner) fail_internal("ThreadTeam::run called from inside one of its own tasks");
  const int workers = max_workers > 0 ? std::min(max_workers, state_->size()) : state_->size();
  if (inner) {
    RegionScope job_scope(nullptr);  // run() from inside the job's tasks is the bug it is outside regions
    if (workers == 1 || t_region_workers == 1) {
      fn(0, 0, num_blocks);
    } else {  // the helpers are in the region, spinning: no wake-up, but still a fork and a join
      ++t_barriers;
      state_->run_inner(num_blocks, fn, workers);
    }
    return;
  }
  ActiveTeamScope scope(this);
  if (workers == 1) {  // one worker is just the caller: no synchronisation at all
    fn(0, 0, num_blocks);
    return;
  }
  // A job of fewer blocks than workers still goes through the team: the idle workers wake, see
  // nothing to do and go back to spinning. Jobs run on the caller alone let them fall asleep, and
  // the next job pays a futex wake-up (tens of microseconds on a VM): running tiny GPT-2's small
  // GEMMs on one worker made it 10-15x slower at 2 threads.
  ++t_barriers;
  std::lock_guard lock(state_->run_mutex);
  State& state = *state_;
  state.task = &fn;
  state.num_blocks = num_blocks;
  state.active_workers = static_cast<int>(std::min<int64_t>(workers, num_blocks));
  state.stealable = stealable;
  state.publish_and_wait();
  state.rethrow_first_error();
}

int64_t ThreadTeam::barriers_on_this_thread() { return t_barriers; }

void ThreadTeam::region(WorkerTask fn, int workers) {
  if (t_active_team == this) fail_internal("ThreadTeam::region called from inside one of this team's tasks");
  ActiveTeamScope scope(this);
  RegionScope region_scope(this);
  State& state = *state_;
  if (state.size() == 1 || workers == 1) {
    t_region_workers = 1;
    fn(0);
    return;
  }
  ++t_barriers;
  std::lock_guard lock(state.run_mutex);
  t_region_workers = 0;
  state.region_task = &fn;
  state.active_workers = state.size();
  state.region_aborted.store(false, std::memory_order_relaxed);
  state.leader_done.store(false, std::memory_order_relaxed);
  state.stealable = false;  // a region's parts wait for each other: each needs a worker of its own
  state.publish_and_wait();
  state.region_task = nullptr;
  state.rethrow_first_error();
}

bool ThreadTeam::in_region() const { return t_region_team == this; }

bool ThreadTeam::helpers_asleep() const { return state_->any_helper_asleep(); }

int64_t ThreadTeam::parts_taken_over() const { return state_->parts_taken_over.load(std::memory_order_relaxed); }

void ThreadTeam::wake_helpers() {
  if (t_active_team == this) fail_internal("ThreadTeam::wake_helpers called from inside one of this team's tasks");
  std::lock_guard lock(state_->run_mutex);
  State& state = *state_;
  state.task = nullptr;
  state.region_task = nullptr;
  state.active_workers = 1;  // a job with no part for any helper: it only wakes them
  state.stealable = false;
  state.publish();
}

void ThreadTeam::set_region_workers(int workers) {
  if (t_region_team != this) fail_internal("ThreadTeam::set_region_workers outside a region's worker 0");
  t_region_workers = workers;
}

void ThreadTeam::wait_at_least(const std::atomic<int64_t>& counter, int64_t target) const {
  spin_until([&] { return counter.load(std::memory_order_acquire) >= target; },
             [this] { state_->check_not_aborted(); });
}

void ThreadTeam::assist(int worker, const std::atomic<int64_t>& counter, int64_t target) {
  State& state = *state_;
  spin_until(
      [&] {
        state.serve_inner_job(worker);
        return counter.load(std::memory_order_acquire) >= target;
      },
      [&state] { state.check_not_aborted(); });
}

std::shared_ptr<ThreadTeam> ThreadTeam::shared(int threads) {
  static std::mutex mutex;
  static std::map<int, std::weak_ptr<ThreadTeam>> teams;
  std::lock_guard<std::mutex> lock(mutex);
  std::shared_ptr<ThreadTeam> team = teams[threads].lock();
  if (!team) {
    team = std::make_shared<ThreadTeam>(threads);
    teams[threads] = team;
  }
  return team;
}

}  // namespace tilefuse::runtime
