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
// yielding), then sleeps in the kernel (std::atomic::wait is a futex on Linux).
uint32_t wait_for_change(const std::atomic<uint32_t>& word, uint32_t old, std::chrono::microseconds spin) {
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
  word.wait(old, std::memory_order_acquire);
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
  const ThreadTeam* team = nullptr;
  std::vector<std::thread> threads;            // workers 1 .. size-1
  std::vector<int> thread_ids;                 // their kernel thread ids, written before the constructor returns
  std::atomic<int> started{0};                 // workers that have written theirs
  std::vector<std::exception_ptr> errors;      // one slot per worker, so no lock is needed
  std::mutex run_mutex;                        // one run() at a time, from any thread
  // The job: written by run() only while every worker is idle, published by `generation`.
  const BlockTask* task = nullptr;
  int64_t num_blocks = 0;
  int active_workers = 0;
  bool stopping = false;
  alignas(64) std::atomic<uint32_t> generation{0};  // bumped once per job
  alignas(64) std::atomic<uint32_t> pending{0};     // helper workers still busy with the job

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

  // Runs this worker's share of the current job, capturing any exception.
  void work(int worker) {
    if (region_task != nullptr) return work_in_region(worker);
    if (worker >= active_workers) return;
    const auto [first, end] = worker_blocks(num_blocks, active_workers, worker);
    try {
      (*task)(worker, first, end);
    } catch (...) {
      errors[worker] = std::current_exception();
    }
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
      seen = wait_for_change(generation, seen, kWorkerSpin);
      if (stopping) return;
      work(worker);
      if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1) pending.notify_one();
    }
  }

  void publish_and_wait(bool stop) {
    stopping = stop;
    pending.store(static_cast<uint32_t>(threads.size()), std::memory_order_relaxed);
    generation.fetch_add(1, std::memory_order_release);
    generation.notify_all();
    if (stop) return;
    work(0);  // in a region, this also tells the helpers that worker 0 is done
    for (uint32_t left = pending.load(std::memory_order_acquire); left != 0;
         left = pending.load(std::memory_order_acquire)) {
      wait_for_change(pending, left, kCallerSpin);
    }
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
    state_->publish_and_wait(/*stop=*/true);
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
  run(size(), [&](int worker, int64_t, int64_t) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[static_cast<size_t>(worker)], &one);
    sched_setaffinity(0, sizeof one, &one);  // a refusal leaves the worker where it was: still correct
  });
}

void ThreadTeam::spread_workers(std::chrono::milliseconds limit) {
  cpu_set_t allowed;
  if (!cpus_for_each_worker(size(), allowed)) return;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::vector<int> cpus(static_cast<size_t>(size()));
  for (bool busy = false;; busy = true) {
    // While they share a CPU, every worker keeps busy a while, so that the kernel sees a CPU with
    // two runnable threads beside an idle one and moves one of them.
    run(size(), [&](int worker, int64_t, int64_t) {
      cpus[static_cast<size_t>(worker)] = sched_getcpu();
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(busy ? 200 : 0);
      while (std::chrono::steady_clock::now() < until) cpu_relax();
    });
    std::sort(cpus.begin(), cpus.end());
    if (std::adjacent_find(cpus.begin(), cpus.end()) == cpus.end() || std::chrono::steady_clock::now() > deadline) return;
  }
}

void ThreadTeam::run(int64_t num_blocks, BlockTask fn, int max_workers) {
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
  state.publish_and_wait(/*stop=*/false);
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
  state.publish_and_wait(/*stop=*/false);
  state.region_task = nullptr;
  state.rethrow_first_error();
}

bool ThreadTeam::in_region() const { return t_region_team == this; }

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
